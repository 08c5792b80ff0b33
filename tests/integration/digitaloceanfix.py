"""A fake of DigitalOcean's API v2 domain records for the digitalocean
provider, written from DigitalOcean's reference
(https://docs.digitalocean.com/reference/api/digitalocean/, Domain
Records, and its introduction: errors, links and pagination, rate limit):

- every request carries `Authorization: Bearer TOKEN`: else 401
  {"id": "Unauthorized", "message": "Unable to authenticate you"}; a
  read-only token may only GET (403 {"id": "Forbidden", ...});
- GET /v2/domains/{domain}/records?name=FQDN&type=T&per_page=N&page=P
  ({"domain_records": [{"id", "type", "name" (relative, "@" at the
  apex), "data", "priority", "port", "ttl", "weight", "flags", "tag"}],
  "links": {"pages": {"first", "prev", "next", "last"}}, "meta":
  {"total"}}); name must be fully qualified, per_page 1..200 (default
  20), links only where they make sense;
- POST /v2/domains/{domain}/records {"type", "name", "data", "ttl", ...}
  answers 201 {"domain_record"}; PATCH .../records/{id} changes the
  fields given (200 {"domain_record"}); DELETE .../records/{id} answers
  204, or 404 when there is no such record; PUT .../records/{id} is
  PATCH's twin; both require the record's type in the body (the OpenAPI
  document's domain_record), which no update changes;
- an unknown domain answers 404 {"id": "not_found", "message": "The
  resource you were accessing could not be found."}; a record that is
  not valid 422 {"id": "unprocessable_entity", ...}; 429 {"id":
  "too_many_requests", "message": "API Rate limit exceeded."}.
- CNAME: its data a host name with the final dot DigitalOcean requires
  (422 "Data needs to end with a dot (.)"), or "@" (the zone); listed
  without the dot (the client reads either form); refused at the apex,
  at a name that holds other records, and any record at a name with a
  CNAME (422).  No update changes a record's type (422).

`max_per_page` (default 200) caps pages below what the client asks, so a
test can see paging with few records.  Two knobs make the API misbehave
as a big zone can: `page_size` (None: per_page) is how many records a
page holds whatever the client asks, and `unfiltered` lists every record
of the zone whatever name and type the client asks for.  `add_many`
fills a zone fast.  `history` keeps, after every
write, the number of records the name `app` holds per type (A, AAAA,
CNAME), so a test can assert that a name never went empty, or never held
a CNAME beside addresses.  State: records[id] = {"type",
"name", "data", "ttl"}.

The fixture `digitalocean` is the fake behind Stoplight Prism, which
checks every request and answer against DigitalOcean's own OpenAPI
document (digitalocean/README.md) and fails the test on a violation it
did not take (prismfix.py); `digitalocean_fake` is the bare fake, for an
API that does not answer or answers what the document forbids.
"""

import ipaddress
import secrets
import urllib.parse

import os

from apifix import ApiFake, fake_fixture
from prismfix import prism_fixture

__all__ = ["DigitalOceanFake", "digitalocean", "digitalocean_fake",
           "_digitalocean_prism_session", "DO_SCHEMA"]

# DigitalOcean's own OpenAPI document, trimmed (digitalocean/README.md).
DO_SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "digitalocean",
                         "digitalocean-domains-openapi.json")

NULLS = ("priority", "port", "weight", "flags", "tag")


def _err(status, eid, message):
    return status, {}, {"id": eid, "message": message,
                        "request_id": "4d9d8375-3c56-4925-a3e7-eb137fed17e9"}


def _host_ok(h):
    return 0 < len(h) <= 253 and all(
        0 < len(lab) <= 63 and all(c.isascii() and (c.isalnum() or c in "-_") for c in lab)
        for lab in h.split("."))


def _stored(r):
    """The data as listed: a CNAME's without its final dot."""
    d = r["data"]
    return d[:-1] if r["type"] == "CNAME" and d.endswith(".") else d


class DigitalOceanFake(ApiFake):
    name = "DigitalOcean"

    def __init__(self, zone="example.test", token=None):
        self.zone = zone
        self.token = token or "dop_v1_" + secrets.token_hex(32)
        self.readonly = False
        self.records = {}
        self.max_per_page = 200
        self.page_size = None
        self.unfiltered = False
        self.history = []
        self._next_id = 3352890
        super().__init__()

    # ------------------------------------------------------------ state

    def add(self, rtype, name, data, ttl=1800):
        with self.lock:
            rid = self._next_id
            self._next_id += 1
            self.records[rid] = {"type": rtype, "name": name, "data": data, "ttl": ttl}
            return rid

    def add_many(self, recs):
        """recs: (type, name, data, ttl) tuples; their ids, in order."""
        with self.lock:
            first = self._next_id
            for i, (rtype, name, data, ttl) in enumerate(recs):
                self.records[first + i] = {"type": rtype, "name": name, "data": data,
                                           "ttl": ttl}
            self._next_id = first + len(recs)
            return list(range(first, self._next_id))

    def get(self, rtype, name):
        """Sorted (data, ttl) of the name's records of rtype."""
        with self.lock:
            return sorted(((r["data"], r["ttl"]) for r in self.records.values()
                           if r["type"] == rtype and r["name"] == name),
                          key=lambda x: x[0] if rtype == "CNAME" else
                          ipaddress.ip_address(x[0]))

    def count_of(self, rtype, name):
        return sum(1 for r in self.records.values() if r["type"] == rtype and r["name"] == name)

    def is_write(self, req):
        return req.method != "GET"

    def error_doc(self, status):
        ids = {401: "Unauthorized", 403: "Forbidden", 404: "not_found",
               422: "unprocessable_entity", 429: "too_many_requests",
               500: "server_error", 503: "service_unavailable"}
        msgs = {429: "API Rate limit exceeded."}
        return {"id": ids.get(status, "bad_request"),
                "message": msgs.get(status, f"injected {status}")}

    # ------------------------------------------------------------ routes

    def route(self, req):
        if req.header("Authorization") != "Bearer " + self.token:
            return _err(401, "Unauthorized", "Unable to authenticate you")
        if req.method != "GET" and self.readonly:
            return _err(403, "Forbidden", "You are not authorized to perform this "
                        "operation")
        parts = [urllib.parse.unquote(p) for p in req.path.split("/")[1:]]
        if parts[:2] != ["v2", "domains"] or len(parts) < 4 or parts[3] != "records":
            return _err(404, "not_found", "The resource you were accessing could not be "
                        "found.")
        if parts[2] != self.zone:
            return _err(404, "not_found", "The resource you were accessing could not be "
                        "found.")
        if len(parts) == 4 and req.method == "GET":
            return self._list(req)
        if len(parts) == 4 and req.method == "POST":
            out = self._create(req)
        elif len(parts) == 5 and req.method in ("PATCH", "PUT", "DELETE"):
            if not parts[4].isdigit() or int(parts[4]) not in self.records:
                return _err(404, "not_found", "The resource you were accessing could not "
                            "be found.")
            out = self._delete(int(parts[4])) if req.method == "DELETE" else \
                self._patch(req, int(parts[4]))
        else:
            return _err(405, "method_not_allowed", f"{req.method} is not allowed here")
        if out[0] < 300:
            self.history.append({t: self.count_of(t, "app") for t in ("A", "AAAA", "CNAME")})
        return out

    def _doc(self, rid):
        r = self.records[rid]
        return dict({"id": rid, "type": r["type"], "name": r["name"], "data": r["data"],
                     "ttl": r["ttl"]}, **{k: None for k in NULLS})

    def _rel(self, fqdn):
        if fqdn == self.zone:
            return "@"
        if fqdn.endswith("." + self.zone):
            return fqdn[:-len(self.zone) - 1]
        return None

    def _list(self, req):
        q = req.query
        if set(q) - {"name", "type", "per_page", "page"} or any(len(v) != 1
                                                                for v in q.values()):
            return _err(400, "bad_request", "unknown or repeated query parameter")
        for k in ("per_page", "page"):
            if k in q and (not q[k][0].isdigit() or int(q[k][0]) < 1):
                return _err(400, "bad_request", f"{k} must be a positive integer")
        per = int(q.get("per_page", ["20"])[0])
        if per > 200:
            return _err(400, "bad_request", "per_page must be at most 200")
        per = min(per, self.max_per_page) if self.page_size is None else self.page_size
        page = int(q.get("page", ["1"])[0])
        rel = None
        if "name" in q and not self.unfiltered:
            rel = self._rel(q["name"][0])
            if rel is None:
                # Not fully qualified in the zone: nothing matches.
                rel = "\0"
        out = [rid for rid, r in sorted(self.records.items())
               if (rel is None or r["name"] == rel) and ("type" not in q or self.unfiltered or
                                                         r["type"] == q["type"][0])]
        last = max(1, (len(out) + per - 1) // per)
        doc = {"domain_records": [self._doc(rid) for rid in out[(page - 1) * per:page * per]],
               "meta": {"total": len(out)}}
        base = f"{self.url}{req.path}"

        def link(p):
            qq = {k: v[0] for k, v in q.items()}
            qq["page"] = str(p)
            return base + "?" + urllib.parse.urlencode(qq)
        pages = {}
        if page > 1:
            pages.update(first=link(1), prev=link(page - 1))
        if page < last:
            pages.update(next=link(page + 1), last=link(last))
        if pages:
            doc["links"] = {"pages": pages}
        return 200, {}, doc

    def _body(self, req):
        doc, why = req.json_body()
        if why is not None:
            return None, _err(400, "bad_request", "Content-Type must be application/json"
                              if why == "media type" else "unparseable JSON")
        if not isinstance(doc, dict):
            return None, _err(400, "bad_request", "body must be an object")
        bad = set(doc) - {"type", "name", "data", "ttl", *NULLS}
        if bad:
            return None, _err(422, "unprocessable_entity", f"unknown attributes {sorted(bad)}")
        if any(doc.get(k) is not None for k in NULLS):
            return None, _err(422, "unprocessable_entity", "priority, port, weight, flags "
                              "and tag do not apply to A, AAAA and CNAME records")
        return doc, None

    def _valid(self, r, rid=None):
        if r["type"] not in ("A", "AAAA", "CNAME"):
            return f"type {r['type']!r} is not handled here"
        if not isinstance(r["name"], str) or r["name"] == "" or r["name"].endswith(".") \
                or r["name"] != "@" and r["name"].endswith(self.zone):
            return "Name is invalid (a relative name, or @)"
        if type(r["ttl"]) is not int or r["ttl"] < 30:
            return "TTL must be at least 30"
        others = [o["type"] for i, o in self.records.items()
                  if o["name"] == r["name"] and i != rid]
        if "CNAME" in others or (r["type"] == "CNAME" and others):
            return "CNAME records cannot share a name with other records"
        if r["type"] == "CNAME":
            if r["name"] == "@":
                return "CNAME records cannot be created at the apex"
            d = r["data"]
            if not isinstance(d, str) or d != "@" and not d.endswith("."):
                return "Data needs to end with a dot (.)"
            if d != "@" and not _host_ok(d[:-1]):
                return "Data is not a valid hostname"
            return None
        try:
            a = ipaddress.ip_address(r["data"])
        except (ValueError, TypeError):
            return "IP address did not match address type"
        if a.version != (4 if r["type"] == "A" else 6) or str(a) != r["data"]:
            return "IP address did not match address type"
        return None

    def _create(self, req):
        doc, bad = self._body(req)
        if bad:
            return bad
        missing = {"type", "name", "data"} - set(doc)
        if missing:
            return _err(422, "unprocessable_entity", f"missing {sorted(missing)}")
        new = {"type": doc["type"], "name": doc["name"], "data": doc["data"],
               "ttl": doc.get("ttl", 1800)}
        why = self._valid(new)
        if why:
            return _err(422, "unprocessable_entity", why)
        rid = self.add(new["type"], new["name"], _stored(new), new["ttl"])
        return 201, {}, {"domain_record": self._doc(rid)}

    def _patch(self, req, rid):
        doc, bad = self._body(req)
        if bad:
            return bad
        cur = self.records[rid]
        if "type" not in doc:
            return _err(422, "unprocessable_entity", "type is required")
        if doc["type"] != cur["type"]:
            return _err(422, "unprocessable_entity", "type cannot be changed")
        new = dict(cur, **{k: v for k, v in doc.items() if k not in NULLS})
        if "data" not in doc and cur["type"] == "CNAME" and cur["data"] != "@":
            new["data"] = cur["data"] + "."      # as it was written
        why = self._valid(new, rid)
        if why:
            return _err(422, "unprocessable_entity", why)
        new["data"] = _stored(new)
        self.records[rid] = new
        return 200, {}, {"domain_record": self._doc(rid)}

    def _delete(self, rid):
        del self.records[rid]
        return 204, {}, b""


digitalocean_fake = fake_fixture(DigitalOceanFake, "digitalocean_fake")
# The fake behind Prism, validating every request and answer against
# DigitalOcean's document: what the tests use.
_digitalocean_prism_session, digitalocean = prism_fixture(
    "digitalocean_fake", DO_SCHEMA, "digitalocean", vendor="DigitalOcean")
