"""A fake of the Hetzner Cloud API's DNS part for the hetzner provider,
written from Hetzner's reference (https://docs.hetzner.cloud/reference/cloud,
sections Zones, Zone RRSets, Zone RRSet Actions, Errors):

- every request carries `Authorization: Bearer TOKEN`: else 401
  {"error": {"code": "unauthorized", ...}}; a read-only token may only
  GET (403 token_readonly);
- GET /v1/zones/{id_or_name}/rrsets?name=N&type=T[&type=T2]... lists
  RRSets ({"rrsets": [{"id": "N/T", "name", "type", "ttl" (null: the
  zone's default), "labels", "protection", "records": [{"value",
  "comment"}], "zone"}], "meta": {"pagination": ...}}); per_page at most
  100;
- POST /v1/zones/{z}/rrsets {"name", "type", "ttl"?, "records",
  "labels"?} creates one (201 {"rrset", "action"}; 409 uniqueness_error
  when it exists);
- DELETE /v1/zones/{z}/rrsets/{name}/{type} (201 {"action"});
- POST .../{name}/{type}/actions/set_records {"records"} replaces the
  records of an existing RRSet, change_ttl {"ttl"} its TTL (201
  {"action"});
- GET /v1/zones/actions/{id} (200 {"action"});
- names are lower case, relative to the zone, "@" at the apex, never
  ending with a dot or the zone's name; records must not be empty and
  must be distinct; TTL 60..2147483647; a zone in secondary mode answers
  422 incorrect_zone_mode; an unknown zone or RRSet 404 not_found; a
  body that is not JSON 400 json_error, a wrong field 400 invalid_input.
- CNAME: one record, whose value is a host name in zone file syntax
  (absolute with its final dot, else relative to the zone: the fake keeps
  it as written); a CNAME at a name that holds other RRSets, or another
  RRSet at a name with a CNAME, is refused (400 invalid_input), and so is
  a CNAME at the apex (which holds SOA and NS). No call changes an
  RRSet's type.

Actions: `action_polls` (default 0) is how many polls of an action answer
"running" before it ends; `action_error` makes the next actions end in
"error" (the change is then not applied). `unfiltered` makes a list
answer every RRSet of the zone in one page, whatever name, type and page
the client asks for (an API that does not filter, or a big answer).
State: records[(name, type)] = {"ttl", "values"}; `states` lists, after
each change applied, the name and the sorted types it then holds.
"""

import ipaddress
import secrets
import urllib.parse

from apifix import ApiFake, fake_fixture

__all__ = ["HetznerFake", "hetzner"]

TYPES = ("A", "AAAA", "CAA", "CNAME", "DS", "HINFO", "HTTPS", "MX", "NS", "PTR", "RP",
         "SOA", "SRV", "SVCB", "TLSA", "TXT")


def _err(status, code, message, details=None):
    return status, {}, {"error": {"code": code, "message": message, "details": details or {}}}


def _host_ok(v):
    """A host name in zone file syntax: labels of letters, digits, '-' and
    '_', an optional final dot."""
    h = v[:-1] if v.endswith(".") else v
    return 0 < len(h) <= 253 and all(
        0 < len(lab) <= 63 and all(c.isascii() and (c.isalnum() or c in "-_") for c in lab)
        for lab in h.split("."))


class HetznerFake(ApiFake):
    name = "Hetzner"

    def __init__(self, zone="example.test", token=None):
        self.zone = zone
        self.zone_id = 4711
        self.mode = "primary"
        self.token = token or "hz" + secrets.token_urlsafe(40)
        self.readonly = False
        self.records = {}
        self.actions = {}           # id -> {"polls": n left, "error": bool or its message}
        self.action_polls = 0
        self.action_error = False
        self.unfiltered = False
        self._next_action = 100
        self.states = []
        super().__init__()

    # ------------------------------------------------------------ state

    def set_records(self, rtype, name, values, ttl=3600):
        with self.lock:
            self.records[(name, rtype)] = {"ttl": ttl, "values": list(values)}

    def get(self, rtype, name):
        """(ttl, sorted values) or None."""
        with self.lock:
            r = self.records.get((name, rtype))
            if r is None:
                return None
            if rtype == "CNAME":
                return r["ttl"], list(r["values"])
            return r["ttl"], sorted(r["values"], key=ipaddress.ip_address)

    def types_of(self, name):
        with self.lock:
            return sorted(t for (n, t) in self.records if n == name)

    def is_write(self, req):
        return req.method != "GET"

    def error_doc(self, status):
        codes = {401: "unauthorized", 403: "forbidden", 404: "not_found",
                 409: "conflict", 422: "incorrect_zone_mode", 423: "locked",
                 429: "rate_limit_exceeded", 500: "server_error", 502: "bad_gateway",
                 503: "unavailable"}
        return {"error": {"code": codes.get(status, "invalid_input"),
                          "message": f"injected {status}", "details": {}}}

    # ------------------------------------------------------------ routes

    def route(self, req):
        auth = req.header("Authorization")
        if auth is None or auth != "Bearer " + self.token:
            return _err(401, "unauthorized", "unable to authenticate")
        if req.method != "GET" and self.readonly:
            return _err(403, "token_readonly", "The token is only allowed to perform GET "
                        "requests")
        parts = [urllib.parse.unquote(p) for p in req.path.split("/")[1:]]
        if parts[:1] != ["v1"] or len(parts) < 3 or parts[1] != "zones":
            return _err(404, "not_found", f"no route {req.path}")
        if len(parts) == 4 and parts[2] == "actions" and req.method == "GET":
            return self._action_get(parts[3])
        zone = parts[2]
        if zone not in (self.zone, str(self.zone_id)):
            return _err(404, "not_found", "zone not found")
        if len(parts) < 4 or parts[3] != "rrsets":
            return _err(404, "not_found", f"no route {req.path}")
        if self.mode != "primary":
            return _err(422, "incorrect_zone_mode", "This operation is not supported for "
                        "this Zone's mode.")
        rest = parts[4:]
        if rest == [] and req.method == "GET":
            return self._list(req)
        if rest == [] and req.method == "POST":
            return self._create(req)
        if len(rest) >= 2:
            name, rtype = rest[0], rest[1]
            bad = self._bad_name(name) or (None if rtype in TYPES else
                                           f"type {rtype} is not allowed")
            if bad:
                return _err(400, "invalid_input", bad)
            if rest[2:] == [] and req.method == "DELETE":
                return self._change(name, rtype, "delete_rrset", None, delete=True)
            if rest[2:3] == ["actions"] and len(rest) == 4 and req.method == "POST":
                return self._rrset_action(req, name, rtype, rest[3])
        return _err(404, "not_found", f"no route {req.method} {req.path}")

    def _bad_name(self, name):
        if name == "" or name != name.lower() or name.endswith("."):
            return f"name '{name}' must be lower case and not end with a dot"
        if name != "@" and (name == self.zone or name.endswith("." + self.zone)):
            return f"name '{name}' must not end with the zone name"
        return None

    def _body(self, req, allowed, required):
        doc, why = req.json_body()
        if why is not None:
            return None, _err(400, "json_error", "Content-Type must be application/json"
                              if why == "media type" else "invalid JSON")
        if not isinstance(doc, dict):
            return None, _err(400, "invalid_input", "body must be an object")
        extra, missing = set(doc) - set(allowed), set(required) - set(doc)
        if extra or missing:
            return None, _err(400, "invalid_input", "invalid input",
                              {"fields": [{"name": f, "messages": ["is not allowed" if f
                                                                   in extra else
                                                                   "is missing"]}
                                          for f in sorted(extra | missing)]})
        return doc, None

    def _values(self, recs, rtype):
        if not isinstance(recs, list) or not recs:
            return None, "records must not be empty"
        out = []
        for r in recs:
            if not isinstance(r, dict) or "value" not in r or set(r) - {"value", "comment"} \
                    or not isinstance(r["value"], str):
                return None, "each record is {\"value\", \"comment\"?}"
            if rtype in ("A", "AAAA"):
                try:
                    a = ipaddress.ip_address(r["value"])
                except ValueError:
                    return None, f"'{r['value']}' is not a valid address"
                if a.version != (4 if rtype == "A" else 6) or str(a) != r["value"]:
                    return None, f"'{r['value']}' is not a valid {rtype} value"
            if rtype == "CNAME" and not _host_ok(r["value"]):
                return None, f"'{r['value']}' is not a valid CNAME value"
            out.append(r["value"])
        if rtype == "CNAME" and len(out) != 1:
            return None, "a CNAME RRSet holds exactly one record"
        if len(set(out)) != len(out):
            return None, "records must only contain distinct values"
        return out, None

    @staticmethod
    def _ttl_bad(ttl):
        return ttl is not None and (type(ttl) is not int or not 60 <= ttl <= 2147483647)

    def _doc(self, name, rtype, r):
        return {"id": f"{name}/{rtype}", "name": name, "type": rtype, "ttl": r["ttl"],
                "labels": {}, "protection": {"change": False}, "zone": self.zone_id,
                "records": [{"value": v, "comment": ""} for v in r["values"]]}

    def _list(self, req):
        q = req.query
        if set(q) - {"name", "type", "page", "per_page", "sort", "label_selector"}:
            return _err(400, "invalid_input", "unknown query parameter")
        for k in ("page", "per_page"):
            if k in q and (len(q[k]) != 1 or not q[k][0].isdigit() or int(q[k][0]) < 1):
                return _err(400, "invalid_input", f"{k} must be a positive integer")
        if "per_page" in q and int(q["per_page"][0]) > 100:
            return _err(400, "invalid_input", "per_page must be at most 100")
        if any(t not in TYPES for t in q.get("type", [])):
            return _err(400, "invalid_input", "type is not allowed")
        names = q.get("name")
        if names is not None and (len(names) != 1 or self._bad_name(names[0])):
            return _err(400, "invalid_input", "invalid name")
        if self.unfiltered:
            out = [self._doc(n, t, r) for (n, t), r in sorted(self.records.items())]
            return 200, {}, {"rrsets": out, "meta": {"pagination": {
                "page": 1, "per_page": len(out), "previous_page": None, "next_page": None,
                "last_page": 1, "total_entries": len(out)}}}
        out = [self._doc(n, t, r) for (n, t), r in sorted(self.records.items())
               if (names is None or n == names[0]) and ("type" not in q or t in q["type"])]
        per = int(q.get("per_page", ["25"])[0])
        page = int(q.get("page", ["1"])[0])
        chunk = out[(page - 1) * per:page * per]
        last = max(1, (len(out) + per - 1) // per)
        return 200, {}, {"rrsets": chunk, "meta": {"pagination": {
            "page": page, "per_page": per, "previous_page": page - 1 if page > 1 else None,
            "next_page": page + 1 if page < last else None, "last_page": last,
            "total_entries": len(out)}}}

    def _create(self, req):
        doc, bad = self._body(req, ("name", "type", "ttl", "records", "labels"),
                              ("name", "type", "records"))
        if bad:
            return bad
        name, rtype = doc["name"], doc["type"]
        if not isinstance(name, str) or self._bad_name(name):
            return _err(400, "invalid_input", f"invalid name {name!r}")
        if rtype not in TYPES:
            return _err(400, "invalid_input", "type is not allowed")
        if self._ttl_bad(doc.get("ttl")):
            return _err(400, "invalid_input", "ttl must be in between 60 and 2147483647")
        values, why = self._values(doc["records"], rtype)
        if why:
            return _err(400, "invalid_input", why)
        if (name, rtype) in self.records:
            return _err(409, "uniqueness_error", "RRSet already exists")
        others = [t for (n, t) in self.records if n == name]
        if (rtype == "CNAME" and (others or name == "@")) or "CNAME" in others:
            return _err(400, "invalid_input", "a CNAME can not coexist with other "
                        "records of the same name")
        new = {"ttl": doc.get("ttl"), "values": values}
        st, h, out = self._change(name, rtype, "create_rrset", new)
        if st == 201:
            out["rrset"] = self._doc(name, rtype, new)
        return st, h, out

    def _rrset_action(self, req, name, rtype, what):
        cur = self.records.get((name, rtype))
        if what == "set_records":
            doc, bad = self._body(req, ("records",), ("records",))
            if bad:
                return bad
            values, why = self._values(doc["records"], rtype)
            if why:
                return _err(400, "invalid_input", why)
            if cur is None:
                return _err(404, "not_found", "rrset not found")
            return self._change(name, rtype, "set_rrset_records",
                                {"ttl": cur["ttl"], "values": values})
        if what == "change_ttl":
            doc, bad = self._body(req, ("ttl",), ("ttl",))
            if bad:
                return bad
            if self._ttl_bad(doc["ttl"]):
                return _err(400, "invalid_input", "ttl must be in between 60 and 2147483647")
            if cur is None:
                return _err(404, "not_found", "rrset not found")
            return self._change(name, rtype, "change_rrset_ttl",
                                {"ttl": doc["ttl"], "values": cur["values"]})
        return _err(404, "not_found", f"no action {what}")

    def _change(self, name, rtype, command, new, delete=False):
        """Applies a change (unless its action is to fail) and answers its action."""
        if delete and (name, rtype) not in self.records:
            return _err(404, "not_found", "rrset not found")
        aid = self._next_action
        self._next_action += 1
        act = {"id": aid, "command": command, "polls": self.action_polls,
               "error": self.action_error}
        self.actions[aid] = act
        if not act["error"]:
            if delete:
                del self.records[(name, rtype)]
            else:
                self.records[(name, rtype)] = new
            self.states.append((name, sorted(t for (n, t) in self.records if n == name)))
        return 201, {}, {"action": self._action_doc(act)}

    def _action_doc(self, act):
        running = act["polls"] > 0
        status = "running" if running else ("error" if act["error"] else "success")
        return {"id": act["id"], "command": act["command"], "status": status,
                "progress": 0 if running else 100, "started": "2026-01-01T00:00:00+00:00",
                "finished": None if running else "2026-01-01T00:00:01+00:00",
                "resources": [{"id": self.zone_id, "type": "zone"}],
                "error": {"code": "action_failed", "message": act["error"]
                          if isinstance(act["error"], str) else "the change could not be "
                          "applied"} if status == "error" else None}

    def _action_get(self, aid):
        act = self.actions.get(int(aid)) if aid.isdigit() else None
        if act is None:
            return _err(404, "not_found", "action not found")
        if act["polls"] > 0:
            act["polls"] -= 1
        return 200, {}, {"action": self._action_doc(act)}


hetzner = fake_fixture(HetznerFake, "hetzner")
