"""A fake of the OVHcloud API for the ovh provider, written from OVH's
documentation ("First steps with the OVHcloud APIs", the /domain/zone
reference at https://eu.api.ovh.com/console/):

- GET /1.0/auth/time: the server's time, a bare JSON integer; needs no
  credentials.
- every other call is signed: X-Ovh-Application (application key),
  X-Ovh-Consumer (consumer key), X-Ovh-Timestamp (the server's time,
  which the client learns from /auth/time), X-Ovh-Signature = "$1$" +
  hex SHA-1 of AS+"+"+CK+"+"+METHOD+"+"+full URL+"+"+body+"+"+timestamp.
  Errors as OVH gives them: 400 INVALID_SIGNATURE "Invalid signature",
  400 QUERY_TIME_OUT "Query out of time", 403 INVALID_KEY, 401
  NOT_CREDENTIAL "You must login first", 403 INVALID_CREDENTIAL "This
  credential does not exist", 403 NOT_GRANTED_CALL "This call has not
  been granted" (a consumer key without the access rule).
- GET /domain/zone/{zone}/record?fieldType=&subDomain= -> [ids];
  GET .../record/{id} -> {"id", "zone", "subDomain", "fieldType",
  "target", "ttl"}; POST .../record {"fieldType", "subDomain",
  "target", "ttl"} -> the record; PUT .../record/{id} {"subDomain"?,
  "target"?, "ttl"?} -> null; DELETE .../record/{id} -> null;
  POST /domain/zone/{zone}/refresh -> null (changes reach the name
  servers only then). 404 {"class": "Client::NotFound", "message":
  "This service does not exist"} for an unknown zone.
- CNAME: the target a host name, absolute with a final dot or else
  relative to the zone, as in a zone file (how OVH's manager and
  dnscontrol's OVH provider read it). A CNAME beside any other record of
  its name is refused, both when it is created (as OVH's manager checks:
  "a CNAME record is not allowed to coexist with other records on the
  same sub-domain") and when the zone is refreshed; the wording of the
  fake's 400 is its own (OVH's exact text is not documented).

The fake's clock runs `skew` seconds off the machine's (1234 s by
default), so a client that signs with its own clock instead of the
server's is refused.  `records` (id -> record) is what the API holds;
`served` is what the name servers hold: it moves at each refresh, and
`served_history` keeps each refresh's.
"""

import hashlib
import ipaddress
import itertools
import re
import secrets
import time

from apifix import ApiFake, fake_fixture

__all__ = ["OvhFake", "ovh_fake", "ovh_direct", "OVH_RULES"]

# The access rules the README tells an operator to request for a zone.
OVH_RULES = [("GET", "/domain/zone/{zone}/record"), ("GET", "/domain/zone/{zone}/record/*"),
             ("POST", "/domain/zone/{zone}/record"), ("PUT", "/domain/zone/{zone}/record/*"),
             ("DELETE", "/domain/zone/{zone}/record/*"), ("POST", "/domain/zone/{zone}/refresh")]

_TYPES = {"A": 4, "AAAA": 6, "CNAME": None}
_HOST = re.compile(r"(?=.{1,254}$)([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)*"
                   r"[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.?$")
_WINDOW = 60        # seconds a signed call may be off the server's time


def _err(status, code, message):
    text = {400: "400 Bad Request", 401: "401 Unauthorized", 403: "403 Forbidden"}[status]
    return status, {}, {"errorCode": code, "httpCode": text, "message": message}


def _client(status, cls, message):
    return status, {}, {"class": f"Client::{cls}", "message": message}


def _rule_matches(pattern, path):
    """OVH's rules: a "*" stands for any text (sub-paths too)."""
    if pattern.endswith("*"):
        return path.startswith(pattern[:-1])
    return path == pattern


class OvhFake(ApiFake):
    name = "OVH"

    def __init__(self, zone="example.test", skew=1234):
        self.zone = zone
        self.skew = skew
        self.app_key = "ak" + secrets.token_hex(8)
        self.app_secret = "as" + secrets.token_hex(16)
        self.consumer_key = "ck" + secrets.token_hex(16)
        self.rules = [(m, p.format(zone=zone)) for m, p in OVH_RULES]
        self.records = {}
        self.served = {}
        self.served_history = []
        self.refreshes = 0
        self._ids = itertools.count(5000000001)
        # Behind a proxy (prismfix.py) the client signs the proxy's URL,
        # and the document's paths start after /1.0.
        self.prefix = "/1.0"
        self.public = None
        super().__init__()

    @property
    def base(self):
        return (self.public or self.url) + self.prefix

    def now(self):
        return int(time.time()) + self.skew

    # ------------------------------------------------------------ state

    def add(self, sub, ftype, target, ttl=0):
        """A record put in place (and served) as another tool would have."""
        with self.lock:
            rid = next(self._ids)
            self.records[rid] = {"id": rid, "zone": self.zone, "subDomain": sub,
                                 "fieldType": ftype, "target": target, "ttl": ttl}
            self.served = {k: dict(v) for k, v in self.records.items()}
            return rid

    def _pick(self, recs, sub, ftype):
        def key(t):
            return (ipaddress.ip_address(t[1]) if ftype in ("A", "AAAA") else t[1], t[0])
        return sorted(((r["ttl"], r["target"]) for r in recs.values()
                       if r["subDomain"] == sub and r["fieldType"] == ftype), key=key)

    @staticmethod
    def types_of(recs, sub):
        """{fieldType: count} of the name's records in recs (a snapshot)."""
        out = {}
        for r in recs.values():
            if r["subDomain"] == sub:
                out[r["fieldType"]] = out.get(r["fieldType"], 0) + 1
        return out

    def _cname_clash(self, recs):
        """A name that holds a CNAME beside another record, or None."""
        for sub in {r["subDomain"] for r in recs.values()}:
            t = self.types_of(recs, sub)
            if "CNAME" in t and sum(t.values()) > 1:
                return sub
        return None

    def get(self, sub, ftype):
        """[(ttl, target)] the API holds for the name and type."""
        with self.lock:
            return self._pick(self.records, sub, ftype)

    def serving(self, sub, ftype):
        """[(ttl, target)] the name servers hold (as of the last refresh)."""
        with self.lock:
            return self._pick(self.served, sub, ftype)

    def is_write(self, req):
        return True

    def error_doc(self, status):
        if status in (400, 401, 403):
            return _err(status, "INJECTED", f"injected {status}")[2]
        return {"class": "Server::InternalServerError" if status >= 500 else "Client::Other",
                "message": f"injected {status}"}

    # ------------------------------------------------------------ routes

    def route(self, req):
        if not req.path.startswith(self.prefix + "/"):
            return _client(404, "NotFound", "no such API")
        path = req.path[len(self.prefix):]
        if path == "/auth/time" and req.method == "GET":
            return 200, {}, self.now()
        bad = self._authenticate(req)
        if bad is not None:
            return bad
        if not any(m == req.method and _rule_matches(p, path) for m, p in self.rules):
            return _err(403, "NOT_GRANTED_CALL", "This call has not been granted")
        return self._zone(req, path)

    def _authenticate(self, req):
        ak = req.header("X-Ovh-Application")
        if ak is None or ak != self.app_key:
            return _err(403, "INVALID_KEY", "Invalid application key")
        ck = req.header("X-Ovh-Consumer")
        if ck is None:
            return _err(401, "NOT_CREDENTIAL", "You must login first")
        if ck != self.consumer_key:
            return _err(403, "INVALID_CREDENTIAL", "This credential does not exist")
        ts = req.header("X-Ovh-Timestamp")
        if ts is None or not ts.isdigit():
            return _err(400, "INVALID_SIGNATURE", "Invalid signature")
        if abs(int(ts) - self.now()) > _WINDOW:
            return _err(400, "QUERY_TIME_OUT", "Query out of time")
        url = f"{self.public or 'http://' + req.header('Host')}{req.target}"
        try:
            body = req.body.decode("utf-8")
        except UnicodeDecodeError:
            return _err(400, "INVALID_SIGNATURE", "Invalid signature")
        want = "$1$" + hashlib.sha1("+".join([self.app_secret, self.consumer_key, req.method,
                                              url, body, ts]).encode()).hexdigest()
        if req.header("X-Ovh-Signature") != want:
            return _err(400, "INVALID_SIGNATURE", "Invalid signature")
        return None

    def _zone(self, req, path):
        parts = path.split("/")
        # ["", "domain", "zone", ZONE, "record"|"refresh", ID?]
        if len(parts) < 5 or parts[1:3] != ["domain", "zone"]:
            return _client(404, "NotFound", "no such API")
        if parts[3] != self.zone:
            return _client(404, "NotFound", "This service does not exist")
        if parts[4] == "refresh" and len(parts) == 5 and req.method == "POST":
            if req.body:
                return _client(400, "BadRequest", "refresh takes no body")
            clash = self._cname_clash(self.records)
            if clash is not None:
                return _client(400, "BadRequest", f"Invalid zone: the CNAME of "
                               f"'{clash}' is not alone on its sub-domain")
            self.refreshes += 1
            self.served = {k: dict(v) for k, v in self.records.items()}
            self.served_history.append({k: dict(v) for k, v in self.served.items()})
            return 200, {}, None
        if parts[4] != "record":
            return _client(404, "NotFound", "no such API")
        if len(parts) == 5:
            if req.method == "GET":
                return self._list(req)
            if req.method == "POST":
                return self._create(req)
        elif len(parts) == 6 and parts[5].isdigit():
            rid = int(parts[5])
            if rid not in self.records:
                return _client(404, "NotFound", f"The requested object (id = {rid}) does not "
                               "exist")
            if req.method == "GET":
                return 200, {}, self.records[rid]
            if req.method == "DELETE":
                del self.records[rid]
                return 200, {}, None
            if req.method == "PUT":
                return self._update(req, rid)
        return _client(405, "MethodNotAllowed", f"{req.method} {path}")

    def _list(self, req):
        if set(req.query) - {"fieldType", "subDomain"} or \
                any(len(v) != 1 for v in req.query.values()):
            return _client(400, "BadRequest", "Invalid query parameters")
        ftype = req.query.get("fieldType", [None])[0]
        sub = req.query.get("subDomain", [None])[0]
        if ftype is not None and ftype not in ("A", "AAAA", "CNAME", "MX", "TXT", "NS", "SRV"):
            return _client(400, "BadRequest", f"Invalid value for fieldType: {ftype}")
        return 200, {}, sorted(r["id"] for r in self.records.values()
                               if (ftype is None or r["fieldType"] == ftype)
                               and (sub is None or r["subDomain"] == sub))

    def _body(self, req, allowed, required):
        doc, bad = req.json_body()
        if bad == "media type":
            return None, _client(400, "BadRequest", "Content-Type must be application/json")
        if bad is not None:
            return None, _client(400, "BadRequest", "Invalid JSON body")
        if not isinstance(doc, dict):
            return None, _client(400, "BadRequest", "The body must be an object")
        extra = set(doc) - allowed
        missing = required - set(doc)
        if extra or missing:
            return None, _client(400, "BadRequest", f"Invalid parameters: extra "
                                 f"{sorted(extra)}, missing {sorted(missing)}")
        if "ttl" in doc and (type(doc["ttl"]) is not int or doc["ttl"] < 0):
            return None, _client(400, "BadRequest", "ttl must be a non-negative integer")
        if "subDomain" in doc and (not isinstance(doc["subDomain"], str) or
                                   doc["subDomain"].endswith(".")):
            return None, _client(400, "BadRequest", "Invalid subDomain")
        return doc, None

    def _check_target(self, ftype, target):
        if not isinstance(target, str):
            return _client(400, "BadRequest", "target must be a string")
        if ftype == "CNAME":
            if not _HOST.match(target):
                return _client(400, "BadRequest", f"Invalid CNAME target: {target}")
            return None
        try:
            a = ipaddress.ip_address(target)
        except ValueError:
            return _client(400, "BadRequest", f"Invalid IP address: {target}")
        if a.version != _TYPES[ftype] or str(a) != target:
            return _client(400, "BadRequest", f"Invalid {ftype} target: {target}")
        return None

    def _create(self, req):
        doc, bad = self._body(req, {"fieldType", "subDomain", "target", "ttl"},
                              {"fieldType", "target"})
        if bad is not None:
            return bad
        if doc["fieldType"] not in _TYPES:
            return _client(400, "BadRequest", f"fieldType {doc['fieldType']} not handled here")
        bad = self._check_target(doc["fieldType"], doc["target"])
        if bad is not None:
            return bad
        rid = next(self._ids)
        rec = {"id": rid, "zone": self.zone, "subDomain": doc.get("subDomain", ""),
               "fieldType": doc["fieldType"], "target": doc["target"], "ttl": doc.get("ttl", 0)}
        after = dict(self.records)
        after[rid] = rec
        if self._cname_clash(after) is not None:
            return _client(400, "BadRequest", "A CNAME record is not allowed to coexist "
                           f"with other records on the sub-domain '{rec['subDomain']}'")
        self.records[rid] = rec
        return 200, {}, rec

    def _update(self, req, rid):
        doc, bad = self._body(req, {"subDomain", "target", "ttl"}, set())
        if bad is not None:
            return bad
        rec = self.records[rid]
        if "target" in doc:
            bad = self._check_target(rec["fieldType"], doc["target"])
            if bad is not None:
                return bad
        rec.update(doc)
        return 200, {}, None


ovh_fake = fake_fixture(OvhFake, "ovh_fake")
# The same, for a test file whose ovh_fake is the fake behind Prism.
ovh_direct = fake_fixture(OvhFake, "ovh_direct")
