"""A fake of Porkbun's API v3, DNS part, for the porkbun provider, written
from Porkbun's documentation (https://porkbun.com/api/json/v3/documentation:
Authentication, Errors, DNS Create Record, Edit Record by Domain and ID,
Delete Record by Domain and ID, Retrieve Records by Domain, Subdomain and
Type):

- every call is a POST with a JSON body that carries "apikey" and
  "secretapikey"; a missing or wrong key answers 400 {"status": "ERROR",
  "message": "Invalid API key. (002)"}; a domain without API access
  (`api_access = False`) 400 "Domain is not opted in to API access.";
- POST /dns/retrieveByNameType/{domain}/{type}[/{subdomain}] answers
  {"status": "SUCCESS", "records": [{"id", "name" (fully qualified),
  "type", "content", "ttl", "prio", "notes"}]}, every number a string;
- POST /dns/create/{domain} {"name" (relative, "" at the apex), "type",
  "content", "ttl"?, "prio"?, "notes"?} answers {"status": "SUCCESS",
  "id": N}; POST /dns/edit/{domain}/{id} takes the same fields (a new
  type too); POST /dns/delete/{domain}/{id};
- ttl at least 600 (the API's minimum and default); a type outside the
  documented list, an address that is not one of the type's, a CNAME
  beside another record of the name (or a record beside a CNAME), a
  body that is not a JSON object, an unknown domain or record id: 400
  {"status": "ERROR", "message": ...}.

`history` keeps, after every write, how many records the name "app"
holds per type, so a test can assert the name never went empty nor held
a CNAME beside addresses.  State: records[id] = {"name" (relative),
"type", "content", "ttl"}.
"""

import ipaddress
import secrets
import urllib.parse

from apifix import ApiFake, fake_fixture

__all__ = ["PorkbunFake", "porkbun"]

TYPES = ("A", "MX", "CNAME", "ALIAS", "TXT", "NS", "AAAA", "SRV", "TLSA", "CAA", "HTTPS",
         "SVCB")
FIELDS = {"apikey", "secretapikey", "name", "type", "content", "ttl", "prio", "notes"}


def _err(message):
    return 400, {}, {"status": "ERROR", "message": message}


class PorkbunFake(ApiFake):
    name = "Porkbun"

    def __init__(self, zone="example.test"):
        self.zone = zone
        self.apikey = "pk1_" + secrets.token_hex(32)
        self.secret = "sk1_" + secrets.token_hex(32)
        self.api_access = True
        self.records = {}
        self.history = []
        self._next_id = 106926652
        super().__init__()

    # ------------------------------------------------------------ state

    def add(self, rtype, name, content, ttl=600):
        with self.lock:
            rid = self._next_id
            self._next_id += 1
            self.records[rid] = {"type": rtype, "name": name, "content": content,
                                 "ttl": ttl}
            return rid

    def get(self, rtype, name):
        """Sorted (content, ttl) of the name's records of rtype."""
        with self.lock:
            return sorted((r["content"], r["ttl"]) for r in self.records.values()
                          if r["type"] == rtype and r["name"] == name)

    def count_of(self, rtype, name):
        return sum(1 for r in self.records.values() if r["type"] == rtype and r["name"] == name)

    def is_write(self, req):
        return not req.path.startswith("/dns/retrieve")

    def error_doc(self, status):
        return {"status": "ERROR", "message": f"injected {status}"}

    # ------------------------------------------------------------ routes

    def route(self, req):
        if req.method != "POST":
            return 405, {}, {"status": "ERROR", "message": "POST only"}
        try:
            doc = req.json()
        except (UnicodeDecodeError, ValueError):
            doc = None
        if not isinstance(doc, dict):
            return _err("Invalid JSON.")
        if doc.get("apikey") != self.apikey or doc.get("secretapikey") != self.secret:
            return _err("Invalid API key. (002)")
        parts = [urllib.parse.unquote(p) for p in req.path.split("/")[1:]]
        if len(parts) < 3 or parts[0] != "dns":
            return _err("Invalid command.")
        if parts[2] != self.zone:
            return _err("Invalid domain.")
        if not self.api_access:
            return _err("Domain is not opted in to API access.")
        bad = set(doc) - FIELDS
        if bad:
            return _err(f"Unknown fields {sorted(bad)}.")
        op, rest = parts[1], parts[3:]
        if op == "retrieveByNameType" and len(rest) in (1, 2):
            return self._retrieve(rest[0], rest[1] if len(rest) == 2 else "")
        if op == "create" and not rest:
            out = self._put(None, doc)
        elif op in ("edit", "delete") and len(rest) == 1:
            if not rest[0].isdigit() or int(rest[0]) not in self.records:
                return _err("Invalid record ID.")
            out = self._put(int(rest[0]), doc) if op == "edit" else \
                self._delete(int(rest[0]))
        else:
            return _err("Invalid command.")
        if out[2].get("status") == "SUCCESS":
            self.history.append({t: self.count_of(t, "app") for t in ("A", "AAAA", "CNAME")})
        return out

    def _fqdn(self, rel):
        return self.zone if rel == "" else f"{rel}.{self.zone}"

    def _retrieve(self, rtype, sub):
        if rtype not in TYPES:
            return _err("Invalid type.")
        out = [{"id": str(rid), "name": self._fqdn(r["name"]), "type": r["type"],
                "content": r["content"], "ttl": str(r["ttl"]), "prio": "0", "notes": ""}
               for rid, r in sorted(self.records.items())
               if r["type"] == rtype and r["name"] == sub.lower()]
        return 200, {}, {"status": "SUCCESS", "records": out}

    def _valid(self, r, rid):
        if r["type"] not in TYPES:
            return "Invalid type."
        if not isinstance(r["name"], str) or r["name"].endswith(".") or \
                r["name"].endswith(self.zone):
            return "Invalid name: the subdomain, without the domain."
        if not isinstance(r["content"], str) or r["content"] == "":
            return "Invalid content."
        try:
            ttl = int(r["ttl"])
        except (TypeError, ValueError):
            return "Invalid TTL."
        if ttl < 600:
            return "TTL must be at least 600."
        if r["type"] in ("A", "AAAA"):
            try:
                a = ipaddress.ip_address(r["content"])
            except ValueError:
                return "Invalid IP address."
            if a.version != (4 if r["type"] == "A" else 6):
                return "Invalid IP address."
        others = [o for oid, o in self.records.items() if oid != rid and o["name"] == r["name"]]
        if r["type"] == "CNAME" and others or any(o["type"] == "CNAME" for o in others):
            return "A CNAME record cannot coexist with other records of the name."
        return None

    def _put(self, rid, doc):
        if "type" not in doc or "content" not in doc:
            return _err("type and content are required.")
        new = {"type": doc["type"], "name": doc.get("name", "").lower(),
               "content": doc["content"], "ttl": doc.get("ttl", "600")}
        why = self._valid(new, rid)
        if why:
            return _err(why)
        new["ttl"] = int(new["ttl"])
        if rid is None:
            rid = self.add(new["type"], new["name"], new["content"], new["ttl"])
            return 200, {}, {"status": "SUCCESS", "id": rid}
        self.records[rid] = new
        return 200, {}, {"status": "SUCCESS"}

    def _delete(self, rid):
        del self.records[rid]
        return 200, {}, {"status": "SUCCESS"}


porkbun = fake_fixture(PorkbunFake, "porkbun")
