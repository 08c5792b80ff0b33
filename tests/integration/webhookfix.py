"""A fake of an external-dns webhook provider (the webhook provider of
ddup), written from external-dns's webhook protocol: its OpenAPI
document (tests/integration/webhook/webhook.yaml), its tutorial
(docs/tutorials/webhook-provider.md) and the Go server that runs any
in-tree provider as a webhook (provider/webhook/api/httpapi.go, with the
in-memory provider's ApplyChanges):

- GET / answers the domain filter {"include": [...], "exclude": [...]}
  (endpoint.DomainFilter's JSON) with Content-Type
  application/external.dns.webhook+json;version=1;
- GET /records answers every endpoint of the zone, [{"dnsName",
  "recordType", "recordTTL", "targets", ...}] (Go writes none as null:
  `null_when_empty`);
- POST /records takes {"create", "updateOld", "updateNew", "delete"}: a
  body of another media type 415, one that does not decode as those
  lists of endpoints (a field of the wrong JSON type) 400, both with a
  text/plain message; then, as the in-memory provider does, the whole
  batch is validated (a create of an endpoint that exists, an update or
  delete of one that does not or not as listed, the same endpoint twice,
  updateOld and updateNew not paired) and applied in the order create,
  updateNew, delete; a batch refused there, or one that would leave a
  CNAME beside another record of a name, answers 500 without a body, as
  the Go server does for a provider's error; success is 204.

An endpoint is known by (dnsName, recordType, setIdentifier).  Every
request is counted (apifix.py); `history` holds, after every POST
applied, the types the name app.example.test holds.
"""

import json
import os

from apifix import ApiFake, fake_fixture
from prismfix import prism_fixture

__all__ = ["WebhookFake", "webhook_fake", "webhook", "_webhook_prism_session", "MEDIA", "WH_SCHEMA"]

MEDIA = "application/external.dns.webhook+json;version=1"
WH_SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "webhook",
                         "webhook.yaml")
WATCHED = "app.example.test"
LISTS = ("create", "updateOld", "updateNew", "delete")


def key(ep):
    return (ep["dnsName"].lower().rstrip("."), ep["recordType"], ep.get("setIdentifier", ""))


def _text(status, msg):
    return status, {"Content-Type": "text/plain; charset=utf-8"}, msg + "\n"


class _Bad(Exception):
    pass


def _endpoint(ep):
    """An endpoint as Go's decoder takes it: fields of the right JSON type."""
    if not isinstance(ep, dict):
        raise _Bad("endpoint is not an object")
    for f in ("dnsName", "recordType", "setIdentifier"):
        if f in ep and not isinstance(ep[f], str):
            raise _Bad(f"{f} is not a string")
    if "recordTTL" in ep and (not isinstance(ep["recordTTL"], int)
                              or isinstance(ep["recordTTL"], bool)):
        raise _Bad("recordTTL is not an integer")
    t = ep.get("targets")
    if t is not None and (not isinstance(t, list) or not all(isinstance(x, str) for x in t)):
        raise _Bad("targets is not a list of strings")
    if not ep.get("dnsName") or not ep.get("recordType"):
        raise _Bad("endpoint without dnsName or recordType")
    return ep


class WebhookFake(ApiFake):
    name = "webhook"

    def __init__(self):
        self.filter = {"include": ["example.test"]}
        self.records = []
        self.history = []
        self.null_when_empty = False
        super().__init__()

    # ------------------------------------------------------------ helpers

    def add(self, name, rtype, targets, ttl=300, **extra):
        ep = {"dnsName": name, "recordType": rtype, "targets": list(targets)}
        if ttl is not None:
            ep["recordTTL"] = ttl
        ep.update(extra)
        self.records.append(ep)
        return ep

    def get(self, name, rtype):
        """(sorted targets, ttl) of the endpoint, or None."""
        for ep in self.records:
            if key(ep)[:2] == (name, rtype):
                return sorted(ep.get("targets") or []), ep.get("recordTTL", 0)
        return None

    def types(self, name=WATCHED):
        return sorted(ep["recordType"] for ep in self.records if key(ep)[0] == name)

    def posts(self):
        return [r for r in self.requests if r.method == "POST"]

    def is_write(self, req):
        return req.path == "/records"

    def error_doc(self, status):
        # The Go server answers a provider's error with the status alone.
        return ""

    # ------------------------------------------------------------- routes

    def route(self, req):
        if req.method == "GET" and req.path == "/":
            return 200, {"Content-Type": MEDIA}, json.dumps(self.filter)
        if req.path == "/records" and req.method == "GET":
            out = self.records if self.records or not self.null_when_empty else None
            return 200, {"Content-Type": MEDIA}, json.dumps(out)
        if req.path == "/records" and req.method == "POST":
            return self.apply(req)
        return _text(404, "404 page not found")

    def apply(self, req):
        ct = (req.header("Content-Type") or "").replace(" ", "").lower()
        if ct != MEDIA:
            return _text(415, f"unsupported media type {ct!r}")
        try:
            ch = json.loads(req.body.decode("utf-8"))
            if not isinstance(ch, dict):
                raise _Bad("changes are not an object")
            lists = {}
            for k in LISTS:
                v = ch.get(k)
                if v is not None and not isinstance(v, list):
                    raise _Bad(f"{k} is not a list")
                lists[k] = [_endpoint(e) for e in v or []]
        except (UnicodeDecodeError, ValueError, _Bad) as e:
            return _text(400, f"failed to decode changes: {e}")
        cur = {key(e): e for e in self.records}
        seen = set()
        try:
            for e in lists["create"]:
                if key(e) in cur:
                    raise _Bad("record already exists")
                self._once(seen, e)
            if len(lists["updateOld"]) != len(lists["updateNew"]):
                raise _Bad("updateOld and updateNew differ in length")
            for old, new in zip(lists["updateOld"], lists["updateNew"]):
                if key(old) != key(new) or cur.get(key(old)) != old:
                    raise _Bad("update of a record not as listed")
                self._once(seen, new)
            for e in lists["delete"]:
                if cur.get(key(e)) != e:
                    raise _Bad("delete of a record not as listed")
                self._once(seen, e)
        except _Bad:
            return 500, {}, ""
        for e in lists["create"] + lists["updateNew"]:
            cur[key(e)] = e
        for e in lists["delete"]:
            del cur[key(e)]
        names = {}
        for k in cur:
            names.setdefault(k[0], []).append(k[1])
        if any("CNAME" in t and len(t) > 1 for t in names.values()):
            return 500, {}, ""
        self.records = list(cur.values())
        self.history.append(self.types())
        return 204, {}, None

    @staticmethod
    def _once(seen, e):
        if key(e) in seen:
            raise _Bad("record twice in one batch")
        seen.add(key(e))


webhook_fake = fake_fixture(WebhookFake, "webhook_fake")
_webhook_prism_session, webhook = prism_fixture("webhook_fake", WH_SCHEMA, "webhook",
                                                vendor="external-dns")
