"""A stateful fake of Cloudflare's DNS records API (v4), behind Stoplight Prism.

Cloudflare cannot run here, so the tests talk to a fake of the part of its
API that the cloudflare provider uses, written from Cloudflare's own
documentation: its OpenAPI description (cloudflare/cloudflare-dns-openapi.json,
a subset of cloudflare/api-schemas) and the documented batch endpoint.
Stoplight Prism, in proxy mode, stands in front of it and checks every
request and every answer against that schema: a request that breaks it
never reaches the fake and is answered 422 (or 401/405) by Prism, and each
such violation is a test failure (the `cloudflare` fixture looks at Prism's
log after each test).

What the fake does, as Cloudflare documents it:
  GET    /zones?name=N                         zone lookup by name
  GET    /zones/Z/dns_records?name=&type=&page=&per_page=   list, paginated
  POST   /zones/Z/dns_records                  create
  PUT    /zones/Z/dns_records/ID               overwrite (omitted fields revert)
  PATCH  /zones/Z/dns_records/ID               change the given fields
  DELETE /zones/Z/dns_records/ID
  POST   /zones/Z/dns_records/batch            deletes, patches, puts, posts,
                                               in that order, all or nothing
What it rejects, as Cloudflare does: a token other than the configured one
(403, code 10000), a TTL other than 1 or 60..86400 (400, 1004 with 9021 in
error_chain), an address of the wrong family, a name outside the zone, an
identical record (81058), a CNAME beside any A/AAAA/CNAME of the same name
(81053) or an address beside a CNAME (81054), an unknown record (81044).
Proxied records get TTL 1 (automatic), as Cloudflare gives them.

Two Prism instances share the fake: `batch` uses the schema with the batch
operation added from its documentation (so batch bodies are checked too);
`nobatch` uses Cloudflare's file as it is, where Prism answers the batch
path 405 like an API without it.

Tests drive it through the `cloudflare` fixture:

    cf = cloudflare()                  # zone example.test, token cf.token
    cf.base_url                        # Prism, for baseUrl
    cf.add("app.example.test", "A", "192.0.2.1", comment="keep")
    cf.records("app.example.test")     # [dict], sorted by type, content
    cf.resolving("app.example.test")   # its types after each write
    cf.count("POST"), cf.writes()      # calls that reached the fake
    cf.fail_next(400, 1004, "DNS Validation Error")
    cf.ratelimit(2, retry_after=1)     # the next two calls answer 429
"""

import copy
import ipaddress
import json
import os
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from prismfix import Prism, prism_bin, violations

__all__ = ["cloudflare", "_cf_session", "CloudflareFake", "prism_bin", "SCHEMA"]

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "cloudflare", "cloudflare-dns-openapi.json")
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
ZONE = "example.test"
TOKEN = "cf-test-token-0123456789abcdef"
TYPES = ("A", "AAAA", "CNAME")    # the types ddup manages
SERVED = TYPES + ("TXT",)           # and one it must leave alone


def _now():
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())


class CfError(Exception):
    """An answer with success false."""

    def __init__(self, status, code, message, chain=None):
        super().__init__(message)
        self.status = status
        self.errors = [{"code": code, "message": message}]
        if chain:
            self.errors[0]["error_chain"] = [{"code": c, "message": m} for c, m in chain]


def _in_zone(name, zone):
    return name == zone or name.endswith("." + zone)


class CloudflareFake:
    """The API's state and its rules; HTTP is in _Handler."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self, token=TOKEN, zone=ZONE):
        with self.lock:
            self.token = token
            self.zones = {}             # id -> name
            self.recs = {}              # id -> record (zone_id inside)
            self.calls = []             # (method, path, body) that reached the fake
            self.timeline = []          # every record, after each write that worked
            self.injected = []          # pending answers: dict(status, errors, headers, match)
            self.batch = True
            self.max_per_page = 5000000
            self.seq = 0
        self.zone_id = self.add_zone(zone)
        self.zone = zone

    # ------------------------------------------------------------ test side

    def add_zone(self, name):
        zid = uuid.uuid4().hex
        with self.lock:
            self.zones[zid] = name
        return zid

    def add(self, name, rtype, content, ttl=60, proxied=False, comment=None, zone_id=None):
        """A record put in place behind ddup's back (its id is returned)."""
        rec = {"type": rtype, "name": name, "content": content, "ttl": ttl, "proxied": proxied}
        if comment is not None:
            rec["comment"] = comment
        with self.lock:
            return self._create(zone_id or self.zone_id, rec)["id"]

    def records(self, name=None, zone_id=None):
        zid = zone_id or self.zone_id
        with self.lock:
            out = [copy.deepcopy(r) for r in self.recs.values()
                   if r["zone_id"] == zid and (name is None or r["name"] == name)]
        return sorted(out, key=lambda r: (r["type"], r["content"]))

    def contents(self, name, rtype=None):
        return sorted(r["content"] for r in self.records(name)
                      if rtype is None or r["type"] == rtype)

    def resolving(self, name):
        """What name held after each write: a list of sets of types."""
        return [{t for n, t, _ in snap if n == name} for snap in self.timeline]

    def count(self, method=None, path=None):
        with self.lock:
            return sum(1 for m, p, _ in self.calls
                       if (method is None or m == method) and (path is None or path in p))

    def writes(self):
        return sum(self.count(m) for m in ("POST", "PUT", "PATCH", "DELETE"))

    def fail_next(self, status, code, message, times=1, method=None, path=None,
                  headers=None, chain=None):
        """The next matching calls answer success false with this error."""
        err = CfError(status, code, message, chain)
        with self.lock:
            for _ in range(times):
                self.injected.append({"status": status, "errors": err.errors,
                                      "headers": headers or {}, "method": method,
                                      "path": path})

    def ratelimit(self, times, retry_after=1):
        self.fail_next(429, 10100, "More than 1200 requests per 300 seconds reached. "
                       "Please wait and consider throttling your request speed",
                       times=times, headers={"Retry-After": str(retry_after)})

    # ------------------------------------------------------------ the rules

    def _check(self, zid, rec, self_id=None):
        """Cloudflare's validation of a record about to be stored."""
        zone = self.zones[zid]
        name, rtype, content = rec["name"].lower().rstrip("."), rec["type"], rec["content"]
        rec["name"] = name
        if rtype not in SERVED:
            raise CfError(400, 1004, f"DNS Validation Error: type {rtype} not served by this fake")
        if not _in_zone(name, zone):
            raise CfError(400, 1004, "DNS Validation Error",
                          [(9005, "Content for {} record is invalid. Name is not in zone."
                            .format(rtype))])
        try:
            if rtype == "A":
                ok = isinstance(ipaddress.ip_address(content), ipaddress.IPv4Address)
            elif rtype == "AAAA":
                ok = isinstance(ipaddress.ip_address(content), ipaddress.IPv6Address)
                rec["content"] = content = str(ipaddress.ip_address(content))
            elif rtype == "CNAME":
                ok = bool(content) and content.rstrip(".").lower() != name
            else:
                ok = bool(content)
        except ValueError:
            ok = False
        if not ok:
            raise CfError(400, 9005, f"Content for {rtype} record is invalid.")
        ttl = rec.get("ttl", 1)
        if not isinstance(ttl, int) or not (ttl == 1 or 60 <= ttl <= 86400):
            raise CfError(400, 1004, "DNS Validation Error",
                          [(9021, "TTL must be between 60 and 86400 seconds, or 1 for Automatic.")])
        if rec.get("proxied"):
            rec["ttl"] = 1
        for r in self.recs.values():
            if r["zone_id"] != zid or r["name"] != name or r["id"] == self_id:
                continue
            if r["type"] == rtype and r["content"] == rec["content"]:
                raise CfError(400, 81058, "An identical record already exists.")
            if rtype == "CNAME" and r["type"] in TYPES:
                raise CfError(400, 81053, "An A, AAAA, or CNAME record with that host already exists.")
            if r["type"] == "CNAME" and rtype in ("A", "AAAA"):
                raise CfError(400, 81054, "A CNAME record with that host already exists.")

    def _create(self, zid, body):
        rec = {k: body[k] for k in ("type", "name", "content", "ttl", "proxied", "comment", "tags")
               if k in body}
        rec.setdefault("ttl", 1)
        rec.setdefault("proxied", False)
        self._check(zid, rec)
        self.seq += 1
        now = _now()
        rec.update(id=uuid.uuid4().hex, zone_id=zid, zone_name=self.zones[zid],
                   proxiable=rec["type"] in TYPES, created_on=now, modified_on=now,
                   meta={"source": "primary"}, tags=rec.get("tags", []))
        self.recs[rec["id"]] = rec
        return rec

    def _get(self, zid, rid):
        r = self.recs.get(rid)
        if r is None or r["zone_id"] != zid:
            raise CfError(404, 81044, "Record does not exist.")
        return r

    def _put(self, zid, rid, body):
        old = self._get(zid, rid)
        # An overwrite: what the body leaves out reverts to its default.
        rec = {k: body[k] for k in ("type", "name", "content", "ttl", "proxied", "comment", "tags")
               if k in body}
        rec.setdefault("ttl", 1)
        rec.setdefault("proxied", False)
        self._check(zid, rec, self_id=rid)
        new = {k: v for k, v in old.items() if k in ("id", "zone_id", "zone_name", "created_on",
                                                     "meta", "proxiable")}
        new.update(rec, modified_on=_now(), tags=rec.get("tags", []))
        self.recs[rid] = new
        return new

    def _patch(self, zid, rid, body):
        old = self._get(zid, rid)
        rec = {k: v for k, v in old.items()
               if k in ("type", "name", "content", "ttl", "proxied", "comment", "tags")}
        rec.update({k: body[k] for k in ("type", "name", "content", "ttl", "proxied", "comment",
                                          "tags") if k in body})
        self._check(zid, rec, self_id=rid)
        new = dict(old)
        new.update(rec, modified_on=_now())
        self.recs[rid] = new
        return new

    def _delete(self, zid, rid):
        r = self._get(zid, rid)
        del self.recs[rid]
        return r

    def _batch(self, zid, body):
        """Documented order, one transaction: on any error nothing changes."""
        if not self.batch:
            raise CfError(404, 7000, "No route for that URI")
        saved = copy.deepcopy(self.recs)
        out = {"deletes": [], "patches": [], "puts": [], "posts": []}
        try:
            for d in body.get("deletes", []):
                out["deletes"].append(self._delete(zid, d["id"]))
            for p in body.get("patches", []):
                out["patches"].append(self._patch(zid, p["id"], p))
            for p in body.get("puts", []):
                out["puts"].append(self._put(zid, p["id"], p))
            for p in body.get("posts", []):
                out["posts"].append(self._create(zid, p))
        except CfError:
            self.recs = saved
            raise
        return out

    # ------------------------------------------------------------ HTTP side

    def handle(self, method, target, headers, raw):
        """(status, headers, body) of one request."""
        u = urlsplit(target)
        q = {k: v[-1] for k, v in parse_qs(u.query).items()}
        parts = [p for p in u.path.split("/") if p]
        with self.lock:
            body = None
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
            self.calls.append((method, target, body))
            for i, inj in enumerate(self.injected):
                if (inj["method"] in (None, method)) and (inj["path"] is None or inj["path"] in target):
                    del self.injected[i]
                    return inj["status"], inj["headers"], _failure(inj["errors"])
            if headers.get("authorization") != "Bearer " + self.token:
                return 403, {}, _failure([{"code": 10000, "message": "Authentication error"}])
            try:
                res = self._route(method, parts, q, body, raw)
            except CfError as e:
                return e.status, {}, _failure(e.errors)
            if method != "GET":
                self.timeline.append(sorted((r["name"], r["type"], r["content"])
                                            for r in self.recs.values()))
            return 200, {}, res

    def _route(self, method, parts, q, body, raw):
        if parts == ["zones"] and method == "GET":
            zs = [_zone(zid, n) for zid, n in sorted(self.zones.items())
                  if "name" not in q or n == q["name"].lower()]
            return _page(zs, q, 50)
        if len(parts) < 3 or parts[0] != "zones" or parts[2] != "dns_records":
            raise CfError(404, 7003, "No route for the URI")
        zid = parts[1]
        if zid not in self.zones:
            raise CfError(404, 7003, "Could not route to /zones/{}/dns_records, perhaps your "
                          "object identifier is invalid?".format(zid))
        if raw and body is None:
            raise CfError(400, 9207, "Request body is invalid.")
        if len(parts) == 3:
            if method == "GET":
                rs = [self._public(r) for r in sorted(self.recs.values(), key=lambda r: r["created_on"] + r["id"])
                      if r["zone_id"] == zid
                      and ("name" not in q or r["name"] == q["name"].lower().rstrip("."))
                      and ("type" not in q or r["type"] == q["type"])]
                return _page(rs, q, self.max_per_page)
            if method == "POST":
                return _ok(self._public(self._create(zid, body)))
        elif len(parts) == 4 and parts[3] == "batch" and method == "POST":
            res = self._batch(zid, body)
            return _ok({k: [self._public(r) for r in v] for k, v in res.items()})
        elif len(parts) == 4:
            rid = parts[3]
            if method == "GET":
                return _ok(self._public(self._get(zid, rid)))
            if method == "PUT":
                return _ok(self._public(self._put(zid, rid, body)))
            if method == "PATCH":
                return _ok(self._public(self._patch(zid, rid, body)))
            if method == "DELETE":
                self._delete(zid, rid)
                return _ok({"id": rid})
        raise CfError(405, 10405, "Method not allowed")

    @staticmethod
    def _public(r):
        return {k: v for k, v in r.items() if k != "zone_id"}


def _ok(result):
    return {"success": True, "errors": [], "messages": [], "result": result}


def _failure(errors):
    return {"success": False, "errors": errors, "messages": [], "result": None}


def _page(items, q, max_per_page):
    try:
        page = max(1, int(q.get("page", 1)))
        per = max(1, int(q.get("per_page", 100)))
    except ValueError:
        raise CfError(400, 1004, "Invalid page or per_page")
    per = min(per, max_per_page)
    total_pages = max(1, (len(items) + per - 1) // per)
    chunk = items[(page - 1) * per:page * per]
    r = _ok(chunk)
    r["result_info"] = {"page": page, "per_page": per, "count": len(chunk),
                        "total_count": len(items), "total_pages": total_pages}
    return r


def _zone(zid, name):
    t = "2024-01-01T00:00:00.000000Z"
    return {"id": zid, "name": name, "status": "active", "paused": False, "type": "full",
            "development_mode": 0, "owner": {"id": "1" * 32, "type": "user", "name": "ddup tests"},
            "account": {"id": "0" * 32, "name": "ddup tests"},
            "meta": {"step": 4, "page_rule_quota": 3, "phishing_detected": False},
            "name_servers": ["ns1.example.net", "ns2.example.net"],
            "original_name_servers": None, "original_registrar": None,
            "original_dnshost": None, "created_on": t, "modified_on": t, "activated_on": t,
            "permissions": ["#dns_records:edit"]}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _any(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        hdrs = {k.lower(): v for k, v in self.headers.items()}
        status, extra, body = self.server.fake.handle(self.command, self.path, hdrs, raw)
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        # One request a connection: Prism reusing a kept-alive one just
        # as it closes would see "socket hang up".
        self.send_header("Connection", "close")
        self.close_connection = True
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def server_bind(self):
        self.socket.bind(self.server_address)
        self.server_address = self.socket.getsockname()
        self.server_name, self.server_port = "localhost", self.server_address[1]

    def handle_error(self, request, client_address):
        pass


def served_schema(dst, batch):
    """The schema Prism checks against: Cloudflare's, with two mends.

    Its error answers are keyed "4xx", which OpenAPI spells "4XX" (Prism
    would not check them at all), and their schema is the failure envelope
    alone (the file's allOf of a success and a failure can match no answer).
    With batch, the batch operation is added from its documentation.
    """
    with open(SCHEMA) as f:
        doc = json.load(f)
    s = "#/components/schemas/"
    failure = {"description": "failure", "content": {"application/json": {"schema": {
        "$ref": s + "dns-records_api-response-common-failure"}}}}
    for path, ops in doc["paths"].items():
        for op in ops.values():
            rs = op.get("responses", {})
            if "4xx" in rs:
                del rs["4xx"]
                rs["4XX"] = failure
    if batch:
        doc["paths"]["/zones/{zone_id}/dns_records/batch"] = _batch_op(s, failure)
    with open(dst, "w") as f:
        json.dump(doc, f)
    return dst


def _batch_op(s, failure):
    idref = {"$ref": s + "dns-records_identifier"}

    def with_id(ref):
        return {"allOf": [{"$ref": s + ref}, {"properties": {"id": idref}, "required": ["id"]}]}

    single = {"allOf": [{"$ref": s + "dns-records_api-response-common"},
                        {"properties": {"result": {
                            "type": "object",
                            "properties": {k: {"type": "array",
                                               "items": {"$ref": s + "dns-records_dns-record"}}
                                           for k in ("deletes", "patches", "puts", "posts")}}}}]}
    return {"post": {
        "operationId": "dns-records-for-a-zone-batch-dns-records",
        "summary": "Batch DNS Records",
        "description": "Deletes, patches, puts and posts, executed in that order in a single "
                       "database transaction (developers.cloudflare.com, DNS records batch).",
        "parameters": [{"in": "path", "name": "zone_id", "required": True,
                        "schema": {"$ref": s + "dns-records_identifier"}}],
        "security": [{"api_token": []}, {"api_email": [], "api_key": []}],
        "requestBody": {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "additionalProperties": False,
            "properties": {
                "deletes": {"type": "array", "items": {
                    "type": "object", "properties": {"id": idref}, "required": ["id"],
                    "additionalProperties": False}},
                "patches": {"type": "array", "items": with_id("dns-records_dns-record-patch")},
                "puts": {"type": "array", "items": with_id("dns-records_dns-record-request")},
                "posts": {"type": "array", "items": {"$ref": s + "dns-records_dns-record-request"}},
            }}}}},
        "responses": {
            "200": {"description": "Batch DNS Records response",
                    "content": {"application/json": {"schema": single}}},
            "4XX": failure},
    }}


class _Session:
    def __init__(self, tmp):
        self.fake = CloudflareFake()
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.fake = self.fake
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.upstream = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.tmp = tmp
        self.prisms = {}

    def prism(self, batch):
        key = "batch" if batch else "nobatch"
        if key not in self.prisms:
            schema = served_schema(os.path.join(self.tmp, f"cf-{key}.json"), batch)
            self.prisms[key] = Prism(schema, self.upstream, os.path.join(self.tmp, f"prism-{key}.log"))
        return self.prisms[key]

    def close(self):
        for p in self.prisms.values():
            p.stop()
        self.server.shutdown()
        self.server.server_close()


class Cloudflare:
    """What a test holds: the fake, and the Prism its baseUrl points at."""

    def __init__(self, sess, batch):
        self.fake = sess.fake
        self.prism = sess.prism(batch)
        self.base_url = f"http://127.0.0.1:{self.prism.port}"
        self.direct_url = sess.upstream          # the fake without Prism
        self.token = self.fake.token
        self.zone = self.fake.zone
        self.zone_id = self.fake.zone_id
        self.fake.batch = batch
        self._mark = len(self.prism.text())     # the last test's teardown let it settle

    def __getattr__(self, name):
        return getattr(self.fake, name)

    def page_size(self, n):
        """The fake gives at most n records a page, whatever is asked."""
        self.fake.max_per_page = n

    def prism_log(self):
        return self.prism.settled()[self._mark:]

    def violations(self):
        return violations(self.prism_log())

    def take_violations(self):
        """The violations so far, which the test meant to cause."""
        text = self.prism.settled()
        bad = violations(text[self._mark:])
        self._mark = len(text)
        return bad


@pytest.fixture(scope="session")
def _cf_session(tmp_path_factory):
    if prism_bin() is None:
        pytest.fail("Prism missing: run `make prism` (npm installs it under build/prism)")
    s = _Session(str(tmp_path_factory.mktemp("cloudflare")))
    yield s
    s.close()


@pytest.fixture
def cloudflare(_cf_session):
    """cloudflare(batch=True): the fake reset, behind a validating Prism."""
    made = []

    def make(batch=True):
        _cf_session.fake.reset()
        cf = Cloudflare(_cf_session, batch)
        made.append(cf)
        return cf

    yield make
    for cf in made:
        bad = cf.violations()
        assert not bad, "Prism found requests or answers that break Cloudflare's schema:\n" + \
            "\n".join(bad)
