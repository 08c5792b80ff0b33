"""A fake of Gandi LiveDNS (API v5) for the gandi provider, written from
Gandi's documentation (https://api.gandi.net/docs/livedns/,
https://api.gandi.net/docs/reference/ for authentication, errors and
rate limits):

- `Authorization: Bearer <personal access token>` (the deprecated
  `Apikey` scheme is refused here as for a token-only organisation);
  none or a wrong one: 401; a token without the permission on the
  domain: 403.  Errors {"code", "message", "object", "cause"}; a
  request that fails validation 400 with "errors": [{"location",
  "name", "description"}].
- /v5/livedns/domains/{fqdn}: GET, the domain ({"fqdn",
  "domain_href", "domain_records_href", ...}); 404 when LiveDNS does not
  serve it.
- /v5/livedns/domains/{fqdn}/records/{name}: GET, an array of the
  name's RRsets ({"rrset_name", "rrset_type", "rrset_ttl",
  "rrset_values", "rrset_href"}); 404 when the name has none.  PUT
  {"items": [{"rrset_type", "rrset_values", "rrset_ttl"}, ...]}
  replaces every record of the name at once (201); DELETE removes them
  all (204; 404 when there were none).
- /v5/livedns/domains/{fqdn}/records/{name}/{type}: GET (404 when
  absent), PUT {"rrset_values": [...], "rrset_ttl": N} (creates or
  replaces: 201 {"message": "DNS Record Created"}), DELETE (204; 404
  when absent).  rrset_ttl from 300 to 2592000; values of an A RRset
  IPv4 addresses, of AAAA IPv6; no other field; the apex is "@".
- A CNAME RRset holds one value, a host name: with a final dot
  absolute, without one relative to the zone (kept as given).  A CNAME
  beside any other record of the name is refused, checked against the
  state the request leaves: 400 with "errors" (the status is not in
  the documentation; a validation error is assumed).
- 429 with Retry-After (the API's rate limit), 5xx.

State: records[(name, type)] = {"ttl", "values"}.  history: after each
write, (name, sorted types) of the name written.
"""

import ipaddress
import re
import secrets
import urllib.parse

from apifix import ApiFake, fake_fixture

__all__ = ["GandiFake", "gandi_fake"]

_FAMILY = {"A": 4, "AAAA": 6}
_TYPES = ("A", "AAAA", "CNAME", "MX", "TXT", "NS", "SRV", "CAA")
_HOST = re.compile(r"^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?"
                   r"(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$", re.I)
_CONFLICT = "A CNAME record cannot coexist with other records at the same name."
_CAUSE = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
          405: "Method Not Allowed", 415: "Unsupported Media Type",
          429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable"}


def _err(status, message, obj="HTTPError", errors=None):
    doc = {"code": status, "message": message, "object": obj,
           "cause": _CAUSE.get(status, "Error")}
    if errors is not None:
        doc["errors"] = errors
    return status, {}, doc


def _invalid(field, desc):
    return _err(400, "Validation error", "HTTPBadRequest",
                [{"location": "body", "name": field, "description": desc}])


class GandiFake(ApiFake):
    name = "Gandi"

    def __init__(self, zone="example.test"):
        self.zone = zone
        self.token = "pat_" + secrets.token_hex(16)
        self.can_write = True
        self.records = {}
        self.history = []
        super().__init__()

    # ------------------------------------------------------------ state

    def set_records(self, name, rtype, values, ttl=10800):
        with self.lock:
            self.records[(name, rtype)] = {"ttl": ttl, "values": list(values)}

    def get(self, name, rtype):
        """(ttl, sorted values), or None when there is no such RRset."""
        with self.lock:
            r = self.records.get((name, rtype))
            if r is None:
                return None
            key = ipaddress.ip_address if rtype in _FAMILY else str
            return r["ttl"], sorted(r["values"], key=key)

    def types_at(self, name):
        return sorted(t for (n, t) in self.records if n == name)

    def _note(self, name):
        self.history.append((name, self.types_at(name)))

    def error_doc(self, status):
        if status == 400:
            return {"code": 400, "message": "Validation error", "object": "HTTPBadRequest",
                    "cause": "Bad Request", "errors": [{"location": "body",
                                                        "name": "rrset_values",
                                                        "description": "injected 400"}]}
        return {"code": status, "message": f"injected {status}", "object": "HTTPError",
                "cause": _CAUSE.get(status, "Error")}

    # ------------------------------------------------------------ routes

    def route(self, req):
        auth = req.header("Authorization")
        if auth is None or not auth.startswith("Bearer ") or auth[7:] != self.token:
            return _err(401, "The server could not verify that you authorized to access the "
                        "document you requested. Either you supplied the wrong credentials "
                        "(e.g., bad api key), or your access token has expired",
                        "HTTPUnauthorized")
        parts = [urllib.parse.unquote(p) for p in req.path.split("/")]
        # "", v5, livedns, domains, FQDN [, records, NAME [, TYPE]]
        if parts[:4] != ["", "v5", "livedns", "domains"] or len(parts) not in (5, 7, 8) or \
                (len(parts) > 5 and parts[5] != "records"):
            return _err(404, "The resource could not be found.", "HTTPNotFound")
        if parts[4] != self.zone:
            return _err(404, f"Domain {parts[4]} not found in LiveDNS.", "HTTPNotFound")
        if req.method != "GET" and not self.can_write:
            return _err(403, "Access was denied to this resource.", "HTTPForbidden")
        if len(parts) == 5:
            if req.method != "GET":
                return _err(405, "The method is not allowed for the requested URL.")
            href = f"{self.url}/v5/livedns/domains/{self.zone}"
            return 200, {}, {"fqdn": self.zone, "automatic_snapshots": True,
                             "domain_href": href, "domain_records_href": href + "/records",
                             "domain_keys_href": href + "/keys"}
        name = parts[6]
        if name == "" or name != name.lower() or name.endswith(".") or name.endswith(self.zone):
            return _err(400, "Validation error", "HTTPBadRequest",
                        [{"location": "path", "name": "rrset_name",
                          "description": f"'{name}' is not a relative name"}])
        if len(parts) == 7:
            return self._name(req, name)
        return self._rrset(req, name, parts[7])

    def _name(self, req, name):
        out = [self._doc(n, t, r) for (n, t), r in self.records.items() if n == name]
        if req.method == "GET":
            if not out:
                return _err(404, "Can't find the DNS record.", "dns-record")
            return 200, {}, out
        if req.method == "DELETE":
            if not out:
                return _err(404, "Can't find the DNS record.", "dns-record")
            for k in [k for k in self.records if k[0] == name]:
                del self.records[k]
            self._note(name)
            return 204, {}, b""
        if req.method != "PUT":
            return _err(405, "The method is not allowed for the requested URL.")
        doc, bad = req.json_body()
        if bad is not None:
            return self._bad_body(req, bad)
        if not isinstance(doc, dict) or set(doc) - {"items"} or \
                not isinstance(doc.get("items"), list):
            return _invalid("items", "Must be an object with a list of items.")
        new = {}
        for it in doc["items"]:
            if not isinstance(it, dict):
                return _invalid("items", "Must be a list of objects.")
            extra = set(it) - {"rrset_type", "rrset_values", "rrset_ttl"}
            if extra:
                return _invalid(sorted(extra)[0], "Unknown field.")
            rtype = it.get("rrset_type")
            if not isinstance(rtype, str) or (name, rtype) in new:
                return _invalid("rrset_type", "Each item needs a type of its own.")
            r = self._check(rtype, it)
            if not isinstance(r, dict):
                return r
            new[(name, rtype)] = r
        if "CNAME" in {t for _, t in new} and len(new) > 1:
            return _invalid("rrset_type", _CONFLICT)
        for k in [k for k in self.records if k[0] == name]:
            del self.records[k]
        self.records.update(new)
        self._note(name)
        return 201, {}, {"message": "DNS Record Created"}

    @staticmethod
    def _bad_body(req, bad):
        if bad == "media type":
            return _err(415, f"Content-Type {req.media_type()!r} is not supported.")
        return _err(400, "Invalid JSON body", "HTTPBadRequest")

    def _check(self, rtype, doc):
        """The RRset {"ttl", "values"} doc makes, or the error answer."""
        if rtype not in _TYPES:
            return _invalid("rrset_type", f"'{rtype}' is not a valid choice.")
        ttl = doc.get("rrset_ttl", 10800)
        if type(ttl) is not int or not 300 <= ttl <= 2592000:
            return _invalid("rrset_ttl", "Must be between 300 and 2592000.")
        vals = doc.get("rrset_values")
        if not isinstance(vals, list) or not vals or \
                not all(isinstance(v, str) for v in vals):
            return _invalid("rrset_values", "Must be a non-empty list of strings.")
        if rtype == "CNAME" and (len(vals) != 1 or not _HOST.match(vals[0])):
            return _invalid("rrset_values", "A CNAME holds one host name.")
        canon = []
        for v in vals:
            fam = _FAMILY.get(rtype)
            if fam is not None:
                try:
                    a = ipaddress.ip_address(v)
                except ValueError:
                    a = None
                if a is None or a.version != fam:
                    return _invalid("rrset_values", f"'{v}' is not a valid {rtype} value.")
                v = str(a)
            canon.append(v)
        if len(set(canon)) != len(canon):
            return _invalid("rrset_values", "Duplicate values.")
        return {"ttl": ttl, "values": canon}

    def _doc(self, name, rtype, r):
        return {"rrset_name": name, "rrset_type": rtype, "rrset_ttl": r["ttl"],
                "rrset_values": r["values"],
                "rrset_href": f"{self.url}/v5/livedns/domains/{self.zone}/records/{name}/{rtype}"}

    def _rrset(self, req, name, rtype):
        key = (name, rtype)
        cur = self.records.get(key)
        if req.method == "GET":
            if cur is None:
                return _err(404, "Can't find the DNS record.", "dns-record")
            return 200, {}, self._doc(name, rtype, cur)
        if req.method == "DELETE":
            if cur is None:
                return _err(404, "Can't find the DNS record.", "dns-record")
            del self.records[key]
            self._note(name)
            return 204, {}, b""
        if req.method != "PUT":
            return _err(405, "The method is not allowed for the requested URL.")
        doc, bad = req.json_body()
        if bad is not None:
            return self._bad_body(req, bad)
        if not isinstance(doc, dict):
            return _invalid("body", "must be an object")
        extra = set(doc) - {"rrset_values", "rrset_ttl"}
        if extra:
            return _invalid(sorted(extra)[0], "Unknown field.")
        r = self._check(rtype, doc)
        if not isinstance(r, dict):
            return r
        if any((t == "CNAME") != (rtype == "CNAME") for t in self.types_at(name)):
            return _invalid("rrset_type", _CONFLICT)
        self.records[key] = r
        self._note(name)
        return 201, {}, {"message": "DNS Record Created"}


gandi_fake = fake_fixture(GandiFake, "gandi_fake")
