"""A fake of deSEC's DNS API for the desec provider, written from deSEC's
documentation (https://desec.readthedocs.io/en/latest/dns/rrsets.html,
.../dns/domains.html, .../auth/tokens.html, .../rate-limits.html):

- `Authorization: Token <secret>`; none or a wrong one: 401 {"detail"}.
- /api/v1/domains/{name}/rrsets/ : GET (an array of RRsets, filters
  ?subname= and ?type=), POST (create; one or an array), PUT and PATCH
  (bulk, an array, all or nothing; "records": [] deletes; the apex is
  "subname": "", never "@").
- /api/v1/domains/{name}/rrsets/{subname}/{type}/ ("@" for the apex):
  GET (404 when there is no such RRset), PUT (every field: subname,
  type, ttl, records), PATCH, DELETE (204, also when there was none);
  PUT and PATCH of an RRset that does not exist: 404; "records": []
  deletes (204).
- A domain not in the account: 404 {"detail": "Not found."}.  A path
  without its final slash: 404 (Django's APPEND_SLASH cannot redirect a
  write).
- Validation errors: 400, {"field": ["message"]}, for bulk requests a
  list with one object per RRset ({} for a good one).  ttl from the
  domain's minimum_ttl (3600 unless lowered) to 86400; records of an A
  RRset IPv4 addresses, of AAAA IPv6 (stored canonical), no duplicate;
  type upper case; a body that is not JSON or not application/json: 400
  and 415.  A CNAME RRset holds one record, an absolute name (with its
  final dot); a CNAME beside any other RRset of the subname: 400
  {"non_field_errors": ["RRset with conflicting type present: ..."]}, a
  bulk request checked against the state it leaves (deletions first).
- Token policies: `write_allowed = False` refuses writes with 403
  {"detail": "You do not have permission to perform this action."}.
- 429 with Retry-After and {"detail": "Request was throttled. Expected
  available in N seconds."} (rate limits per domain for writes).

State: rrsets[(subname, type)] = {"ttl", "records"} of the one domain
`zone`; other RRsets (MX, TXT...) are kept as given.  history: after
each write, (subname, sorted types) of every subname it touched.
"""

import ipaddress
import re
import secrets
import urllib.parse

from apifix import ApiFake, fake_fixture

__all__ = ["DesecFake", "desec_fake"]

_FAMILY = {"A": 4, "AAAA": 6}
_FIELDS = ("subname", "type", "ttl", "records")
_HOST = re.compile(r"^([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)+$", re.I)
_CONFLICT = ("RRset with conflicting type present: {}. (No other RRsets are allowed "
             "alongside CNAME.)")


class _Invalid(Exception):
    def __init__(self, errors):
        super().__init__(errors)
        self.errors = errors


class DesecFake(ApiFake):
    name = "deSEC"

    def __init__(self, zone="example.test", minimum_ttl=3600):
        self.zone = zone
        self.minimum_ttl = minimum_ttl
        self.token = secrets.token_urlsafe(21)
        self.write_allowed = True
        self.rrsets = {}
        self.history = []
        super().__init__()

    # ------------------------------------------------------------ state

    def set_rrset(self, subname, rtype, records, ttl=3600):
        with self.lock:
            self.rrsets[(subname, rtype)] = {"ttl": ttl, "records": list(records)}

    def get(self, subname, rtype):
        """(ttl, sorted records), or None when there is no such RRset."""
        with self.lock:
            r = self.rrsets.get((subname, rtype))
            if r is None:
                return None
            key = ipaddress.ip_address if rtype in _FAMILY else str
            return r["ttl"], sorted(r["records"], key=key)

    def types_at(self, subname):
        return sorted(t for (s, t) in self.rrsets if s == subname)

    def _note(self, subs):
        for sub in sorted(set(subs)):
            self.history.append((sub, self.types_at(sub)))

    def error_doc(self, status):
        if status == 429:
            return {"detail": "Request was throttled. Expected available in 7 seconds."}
        if status == 400:
            return {"records": ["injected 400"]}
        return {"detail": f"injected {status}"}

    # ------------------------------------------------------------ routes

    def route(self, req):
        auth = req.header("Authorization")
        if auth is None:
            return 401, {}, {"detail": "Authentication credentials were not provided."}
        if auth != "Token " + self.token:
            return 401, {}, {"detail": "Invalid token."}
        parts = req.path.split("/")
        # "", api, v1, domains, NAME, rrsets, [SUBNAME, TYPE,] ""
        if parts[:4] != ["", "api", "v1", "domains"] or len(parts) < 7 or \
                parts[5] != "rrsets" or parts[-1] != "":
            return 404, {}, {"detail": "Not found."}
        if urllib.parse.unquote(parts[4]) != self.zone:
            return 404, {}, {"detail": "Not found."}
        if req.method != "GET" and not self.write_allowed:
            return 403, {}, {"detail": "You do not have permission to perform this action."}
        body = None
        if req.method in ("POST", "PUT", "PATCH"):
            body, bad = req.json_body()
            if bad == "media type":
                return 415, {}, {"detail": f'Unsupported media type "{req.media_type()}" '
                                 'in request.'}
            if bad is not None:
                return 400, {}, {"detail": "JSON parse error"}
        try:
            if len(parts) == 7:
                return self._collection(req, body)
            if len(parts) == 9:
                sub = urllib.parse.unquote(parts[6])
                return self._detail(req, "" if sub == "@" else sub,
                                    urllib.parse.unquote(parts[7]), body)
        except _Invalid as e:
            return 400, {}, e.errors
        return 404, {}, {"detail": "Not found."}

    def _doc(self, sub, rtype, r):
        return {"created": "2026-01-01T00:00:00.000000Z", "domain": self.zone,
                "subname": sub, "name": (f"{sub}." if sub else "") + self.zone + ".",
                "type": rtype, "records": r["records"], "ttl": r["ttl"],
                "touched": "2026-01-01T00:00:00.000000Z"}

    def _collection(self, req, body):
        if req.method == "GET":
            sub = req.query.get("subname", [None])[0]
            rtype = req.query.get("type", [None])[0]
            return 200, {}, [self._doc(s, t, r) for (s, t), r in self.rrsets.items()
                             if (sub is None or s == sub) and (rtype is None or t == rtype)]
        if req.method not in ("POST", "PUT", "PATCH"):
            return 405, {}, {"detail": f'Method "{req.method}" not allowed.'}
        if req.method == "POST" and isinstance(body, dict):
            body = [body]
        if not isinstance(body, list):
            raise _Invalid({"non_field_errors": ["Expected a list of items but got type "
                                                 f"\"{type(body).__name__}\"."]})
        changes = self._validate_bulk(req.method, body)
        for key, r in changes:
            if r is None:
                self.rrsets.pop(key, None)
            else:
                self.rrsets[key] = r
        self._note(k[0] for k, _ in changes)
        out = [self._doc(k[0], k[1], r) for k, r in changes if r is not None]
        return (201 if req.method == "POST" else 200), {}, out

    def _validate_bulk(self, method, body):
        errors, changes, seen = [], [], set()
        for item in body:
            err = {}
            if not isinstance(item, dict):
                errors.append({"non_field_errors": ["Invalid data. Expected a dictionary."]})
                continue
            sub = item.get("subname", "")
            rtype = item.get("type")
            if not isinstance(sub, str) or sub == "@":
                err["subname"] = ["This field must be a subname."]
            if not isinstance(rtype, str):
                err["type"] = ["This field is required."]
            key = (sub, rtype)
            if key in seen:
                err["non_field_errors"] = ["Same subname and type as in another RRset."]
            seen.add(key)
            cur = self.rrsets.get(key) if not err else None
            if method == "POST" and cur is not None:
                err["non_field_errors"] = ["Another RRset with the same subdomain and type "
                                           "exists for this domain."]
            need = ("ttl", "records") if method in ("POST", "PUT") or cur is None else ()
            if item.get("records") == [] and method != "POST":
                need = ()
            for f in need:
                if f not in item:
                    err[f] = ["This field is required."]
            r = None
            if not err:
                r = self._check_fields(item, rtype, cur, err)
            errors.append(err)
            changes.append((key, r))
        if not any(errors):
            self._exclusive(changes, errors)
        if any(errors):
            raise _Invalid(errors)
        return changes

    def _exclusive(self, changes, errors):
        """A CNAME alone at its subname in the state the request leaves."""
        after = {k: True for k in self.rrsets}
        for key, r in changes:
            if r is None:
                after.pop(key, None)
            else:
                after[key] = True
        for i, (key, r) in enumerate(changes):
            if r is None:
                continue
            others = [t for (s, t) in after if s == key[0] and (t == "CNAME") != (key[1] == "CNAME")]
            if others:
                errors[i] = {"non_field_errors": [_CONFLICT.format(", ".join(sorted(others)))]}

    def _check_fields(self, item, rtype, cur, err):
        """The RRset item makes (None: deleted), with problems put in err."""
        ttl = item.get("ttl", cur["ttl"] if cur else None)
        records = item.get("records", cur["records"] if cur else None)
        if records == []:
            return None
        if type(ttl) is not int:
            err["ttl"] = ["A valid integer is required."]
        elif ttl < self.minimum_ttl:
            err["ttl"] = [f"Ensure this value is greater than or equal to {self.minimum_ttl}."]
        elif ttl > 86400:
            err["ttl"] = ["Ensure this value is less than or equal to 86400."]
        if rtype != rtype.upper():
            err["type"] = ["The type must be uppercase."]
        if not isinstance(records, list) or not all(isinstance(x, str) for x in records):
            err["records"] = ["Expected a list of strings."]
            return None
        canon = []
        for x in records:
            fam = _FAMILY.get(rtype)
            if fam is not None:
                try:
                    a = ipaddress.ip_address(x)
                except ValueError:
                    a = None
                if a is None or a.version != fam:
                    err["records"] = [f"Record content for type {rtype} malformed: {x}"]
                    return None
                x = str(a)
            canon.append(x)
        if rtype == "CNAME" and len(canon) != 1:
            err["records"] = ["Ensure this field has no more than 1 elements."]
        elif rtype == "CNAME" and (not _HOST.match(canon[0]) or len(canon[0]) > 254):
            err["records"] = [f"Record content for type CNAME malformed: {canon[0]}"]
        if len(set(canon)) != len(canon):
            err["records"] = ["Duplicate record content: this is identical to another record "
                              "in the same RRset."]
        return None if err else {"ttl": ttl, "records": canon}

    def _detail(self, req, sub, rtype, body):
        key = (sub, rtype)
        cur = self.rrsets.get(key)
        if req.method == "DELETE":
            self.rrsets.pop(key, None)
            self._note([sub])
            return 204, {}, b""
        if cur is None:
            return 404, {}, {"detail": "Not found."}
        if req.method == "GET":
            return 200, {}, self._doc(sub, rtype, cur)
        if req.method not in ("PUT", "PATCH"):
            return 405, {}, {"detail": f'Method "{req.method}" not allowed.'}
        if not isinstance(body, dict):
            raise _Invalid({"non_field_errors": ["Invalid data. Expected a dictionary."]})
        err = {}
        if req.method == "PUT":
            for f in _FIELDS:
                if f not in body:
                    err[f] = ["This field is required."]
        for f, have in (("subname", sub), ("type", rtype)):
            if f in body and body[f] != have:
                err[f] = [f"Cannot modify {f} of an existing RRset."]
        r = None if err else self._check_fields(body, rtype, cur, err)
        if err:
            raise _Invalid(err)
        if r is None:
            del self.rrsets[key]
            self._note([sub])
            return 204, {}, b""
        others = [t for t in self.types_at(sub) if (t == "CNAME") != (rtype == "CNAME")]
        if others:
            raise _Invalid({"non_field_errors": [_CONFLICT.format(", ".join(others))]})
        self.rrsets[key] = r
        self._note([sub])
        return 200, {}, self._doc(sub, rtype, r)


desec_fake = fake_fixture(DesecFake, "desec_fake")
