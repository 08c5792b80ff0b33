"""A fake of bunny.net's DNS API, for the bunny provider, written from
bunny.net's API reference (https://docs.bunny.net/reference/: DNS Zone:
List DNS Zones, Get DNS Zone, Add DNS Record, Update DNS Record, Delete
DNS Record):

- every call carries the account's API key in an `AccessKey` header; a
  missing or wrong one answers 401;
- GET /dnszone?search=&page=&perPage= answers {"Items": [{"Id", "Domain",
  ...}], "CurrentPage", "TotalItems", "HasMoreItems"}, paged;
- GET /dnszone/{id} answers the zone {"Id", "Domain", "Records": [{"Id",
  "Type", "Name", "Value", "Ttl", ...}]}, Type an integer (0 A, 1 AAAA,
  2 CNAME, 3 TXT, 4 MX, 5 Redirect, 6 Flatten, 7 PullZone, 8 SRV, 9 CAA,
  10 PTR, 11 Script, 12 NS), Name relative ("" at the apex); an unknown
  zone 404;
- PUT /dnszone/{id}/records {"Type", "Name", "Value", "Ttl", ...} answers
  201 with the record; POST /dnszone/{id}/records/{recordId} updates it
  (204); DELETE /dnszone/{id}/records/{recordId} 204; an unknown record
  404;
- a bad type, a TTL out of range, a value not of the type's family, a
  CNAME beside another record of the name (or a record beside a CNAME),
  a body that is not a JSON object: 400 {"ErrorKey", "Field", "Message"};
  a body of another media type than application/json 415.

`history` keeps, after every write, how many records the name "app"
holds per type, so a test can assert it never held a CNAME beside
addresses.  State: records[id] = {"Type" (int), "Name", "Value", "Ttl"}.
"""

import ipaddress
import secrets

from apifix import ApiFake, fake_fixture

__all__ = ["BunnyFake", "bunny", "bunny_direct", "BN_TYPES"]

BN_TYPES = {"A": 0, "AAAA": 1, "CNAME": 2, "TXT": 3, "MX": 4, "RDR": 5, "FLATTEN": 6,
            "PZ": 7, "SRV": 8, "CAA": 9, "PTR": 10, "SCR": 11, "NS": 12}
TTL_MIN, TTL_MAX = 15, 2147483647
FIELDS = {"Id", "Type", "Name", "Value", "Ttl", "Weight", "Priority", "Flags", "Tag",
          "Port", "PullZoneId", "ScriptId", "Accelerated", "MonitorType", "Disabled",
          "Comment"}


def _err(status, key, field, message):
    return status, {}, {"ErrorKey": key, "Field": field, "Message": message}


class BunnyFake(ApiFake):
    name = "bunny.net"

    def __init__(self, zone="example.test"):
        self.zone = zone
        self.zone_id = 48213
        self.apikey = secrets.token_hex(16) + "-" + secrets.token_hex(8)
        self.others = [f"other{i}.test" for i in range(3)]
        self.per_page_max = 1000
        self.records = {}
        self.history = []
        self._next_id = 9001
        super().__init__()

    # ------------------------------------------------------------ state

    def add(self, rtype, name, value, ttl=300):
        with self.lock:
            rid = self._next_id
            self._next_id += 1
            self.records[rid] = {"Type": BN_TYPES[rtype], "Name": name, "Value": value,
                                 "Ttl": ttl}
            return rid

    def get(self, rtype, name):
        """Sorted (value, ttl) of the name's records of rtype."""
        with self.lock:
            return sorted((r["Value"], r["Ttl"]) for r in self.records.values()
                          if r["Type"] == BN_TYPES[rtype] and r["Name"] == name)

    def count_of(self, rtype, name):
        return sum(1 for r in self.records.values()
                   if r["Type"] == BN_TYPES[rtype] and r["Name"] == name)

    def error_doc(self, status):
        return {"ErrorKey": "injected", "Field": "", "Message": f"injected {status}"}

    # ------------------------------------------------------------ routes

    def route(self, req):
        if req.header("AccessKey") != self.apikey:
            return 401, {}, {"Message": "Authorization has been denied for this request."}
        parts = req.path.split("/")[1:]
        if parts[0] != "dnszone":
            return _err(404, "notfound", "", "Not found.")
        if len(parts) == 1 and req.method == "GET":
            return self._search(req)
        if not parts[1].isdigit() or int(parts[1]) != self.zone_id:
            return _err(404, "dnszone.not_found", "Id", "The DNS Zone could not be found.")
        rest = parts[2:]
        if not rest and req.method == "GET":
            return self._zone()
        if rest == ["records"] and req.method == "PUT":
            out = self._put(None, req)
        elif len(rest) == 2 and rest[0] == "records" and req.method in ("POST", "DELETE"):
            if not rest[1].isdigit() or int(rest[1]) not in self.records:
                return _err(404, "dnsrecord.not_found", "Id",
                            "The DNS record could not be found.")
            out = self._put(int(rest[1]), req) if req.method == "POST" else \
                self._delete(int(rest[1]))
        else:
            return _err(405, "method", "", "The requested resource does not support it.")
        if out[0] < 300:
            self.history.append({t: self.count_of(t, "app") for t in ("A", "AAAA", "CNAME")})
        return out

    def _search(self, req):
        q = {k: v[-1] for k, v in req.query.items()}
        try:
            page = int(q.get("page", "1"))
            per = int(q.get("perPage", "1000"))
        except ValueError:
            return _err(400, "validation", "page", "page and perPage are numbers.")
        if page < 1 or not 5 <= per <= self.per_page_max:
            return _err(400, "validation", "perPage", "perPage is 5 to 1000.")
        zones = [(self.zone_id + 1 + i, d) for i, d in enumerate(self.others)]
        zones.insert(len(zones) // 2, (self.zone_id, self.zone))
        s = q.get("search", "")
        zones = [z for z in zones if s in z[1]]
        items = [{"Id": i, "Domain": d, "Records": []}
                 for i, d in zones[(page - 1) * per:page * per]]
        return 200, {}, {"Items": items, "CurrentPage": page, "TotalItems": len(zones),
                         "HasMoreItems": page * per < len(zones)}

    def _zone(self):
        recs = [dict(r, Id=rid, Weight=100, Priority=0, Port=0, Disabled=False)
                for rid, r in sorted(self.records.items())]
        return 200, {}, {"Id": self.zone_id, "Domain": self.zone, "Records": recs,
                         "DateModified": "2026-12-03T07:00:00Z"}

    def _valid(self, r, rid):
        if not isinstance(r["Type"], int) or isinstance(r["Type"], bool) or \
                r["Type"] not in BN_TYPES.values():
            return "Type", "The record type is not valid."
        if not isinstance(r["Name"], str) or r["Name"].endswith(".") or \
                r["Name"].endswith(self.zone):
            return "Name", "The name is relative to the zone."
        if not isinstance(r["Value"], str) or r["Value"] == "":
            return "Value", "The value is required."
        if not isinstance(r["Ttl"], int) or not TTL_MIN <= r["Ttl"] <= TTL_MAX:
            return "Ttl", f"The TTL must be between {TTL_MIN} and {TTL_MAX}."
        if r["Type"] in (0, 1):
            try:
                a = ipaddress.ip_address(r["Value"])
            except ValueError:
                return "Value", "The value is not a valid IP address."
            if a.version != (4 if r["Type"] == 0 else 6):
                return "Value", "The value is not a valid IP address."
        others = [o for oid, o in self.records.items() if oid != rid and
                  o["Name"] == r["Name"]]
        if r["Type"] == 2 and others or any(o["Type"] == 2 for o in others):
            return "Type", "A CNAME record cannot coexist with other records of the name."
        return None

    def _put(self, rid, req):
        doc, bad = req.json_body()
        if bad == "media type":
            return _err(415, "media_type", "", "The request's media type is not supported.")
        if not isinstance(doc, dict):
            return _err(400, "validation", "", "The request body is not valid JSON.")
        unknown = set(doc) - FIELDS
        if unknown:
            return _err(400, "validation", sorted(unknown)[0], "Unknown field.")
        old = self.records.get(rid, {}) if rid is not None else {}
        new = {k: doc.get(k, old.get(k)) for k in ("Type", "Name", "Value", "Ttl")}
        if new["Name"] is None:
            new["Name"] = ""
        if new["Ttl"] is None:
            new["Ttl"] = 300
        why = self._valid(new, rid)
        if why:
            return _err(400, "validation", why[0], why[1])
        new["Name"] = new["Name"].lower()
        if rid is None:
            rid = self._next_id
            self._next_id += 1
            self.records[rid] = new
            return 201, {}, dict(new, Id=rid)
        self.records[rid] = new
        return 204, {}, None

    def _delete(self, rid):
        del self.records[rid]
        return 204, {}, None


bunny = fake_fixture(BunnyFake, "bunny")
# The same, for a test file whose bunny is the fake behind Prism.
bunny_direct = fake_fixture(BunnyFake, "bunny_direct")
