"""Providers that misbehave: ddup-check must fail cleanly and retry.

A real PowerDNS or BIND cannot be made to send a truncated answer, a
wrong message id or an HTML page on purpose, so each test puts a small
fake between ddup-check and the real server:

  PdnsFake  a loopback HTTP server shaped like the PowerDNS API; in mode
            "proxy" it forwards every request to the real pdns_server,
            in the other modes it answers badly itself.
  DnsFake   a loopback DNS server on UDP and TCP; in mode "proxy" it
            forwards every message to the real BIND, in the other modes
            it answers badly itself.

For every bad answer: exit 1, an error on stderr naming the provider
section and the cause, the stored published set unchanged, the real
server unchanged; then the fake turns healthy and the next run succeeds.
The real server, not the fake, is asked what DNS holds.
"""

import http.client
import json
import os
import random
import re
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import TIME_SCALE
from httpfix import free_port
from providertest import with_line
from test_digitalocean import section as digitalocean_section
from test_ovh import ovh_section

ZONE = "example.test"
NAME = "app.example.test"
TIMEOUT = 2          # provider timeout in these tests, seconds


# ---------------------------------------------------------------- PowerDNS fake


class PdnsFake:
    """An HTTP server in front of the real PowerDNS API.

    mode: "proxy", or a bad behaviour (see _Handler.bad); modes maps a
    method ("GET", "PATCH") to its own mode, else `mode` applies.
    """

    def __init__(self, real):
        self.real = real
        self.mode = "proxy"
        self.modes = {}
        self.requests = []
        self.request_headers = []       # one dict per request, in order
        self.stopping = threading.Event()
        fake = self

        class Handler(_PdnsHandler):
            pass
        Handler.fake = fake
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def mode_for(self, method):
        return self.modes.get(method, self.mode)

    def stop(self):
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()


# Mode "echo-KIND": error answers that quote the API key they were sent,
# as a careless API does: in its JSON error, cut by ddup at 160 bytes in
# the middle of the key, or in a plain text page.
ECHO_BODIES = {
    "json": lambda key: (422, "application/json", json.dumps(
        {"error": f"RRset {NAME}. IN A: not allowed for API key {key}"})),
    "cut": lambda key: (400, "application/json", json.dumps(
        {"error": "Bad Request: " + "x" * 120 + " X-API-Key: " + key})),
    "text": lambda key: (500, "text/plain", f"internal error, X-API-Key={key}\nbye\n"),
}


class _PdnsHandler(BaseHTTPRequestHandler):
    fake = None
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _send(self, status, body=b"", ctype="application/json", headers=()):
        self.send_response(status)
        if status not in (204, 304):
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if status not in (204, 304) and body:
            self.wfile.write(body)

    def _proxy(self, body):
        """Forwards to the real API; returns (status, headers, body)."""
        c = http.client.HTTPConnection("127.0.0.1", self.fake.real.api_port, timeout=10)
        try:
            hdrs = {k: v for k, v in self.headers.items()
                    if k.lower() in ("x-api-key", "content-type", "accept")}
            c.request(self.command, self.path, body=body or None, headers=hdrs)
            r = c.getresponse()
            return r.status, r.getheader("Content-Type") or "application/json", r.read()
        finally:
            c.close()

    def _handle(self):
        body = self._body()
        fake = self.fake
        mode = fake.mode_for(self.command)
        fake.requests.append((self.command, self.path, mode, body))
        fake.request_headers.append({k.lower(): v for k, v in self.headers.items()})
        if mode == "proxy":
            st, ctype, data = self._proxy(body)
            return self._send(st, data, ctype)
        return self.bad(mode, body)

    do_GET = do_PATCH = do_PUT = do_POST = do_DELETE = _handle

    def _real_zone(self, body):
        st, _, data = self._proxy(body)
        assert st == 200, (st, data)
        return json.loads(data)

    def bad(self, mode, body):
        if mode == "truncated":
            data = json.dumps(self._real_zone(body)).encode()
            return self._send(200, data[: len(data) // 2])
        if mode == "truncated-json":
            return self._send(200, b'{"rrsets": [{"name": "app.exa')
        if mode == "rrsets-object":
            doc = self._real_zone(body)
            doc["rrsets"] = {}
            return self._send(200, json.dumps(doc).encode())
        if mode == "ttl-string":
            doc = self._real_zone(body)
            for rs in doc["rrsets"]:
                rs["ttl"] = str(rs["ttl"])
            return self._send(200, json.dumps(doc).encode())
        if mode == "content-number":
            doc = self._real_zone(body)
            for rs in doc["rrsets"]:
                for rec in rs["records"]:
                    rec["content"] = 3221225985
            return self._send(200, json.dumps(doc).encode())
        if mode == "content-utf8":
            # Not an address, and 64 bytes of it end inside a character.
            doc = self._real_zone(body)
            for rs in doc["rrsets"]:
                for rec in rs["records"]:
                    rec["content"] = "a" + "\u00e9" * 40
            return self._send(200, json.dumps(doc).encode())
        if mode == "html":
            page = b"<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1></body></html>\n"
            return self._send(200, page, "text/html")
        if mode in ("500", "502", "503"):
            return self._send(int(mode), b"<html><body>upstream trouble</body></html>",
                              "text/html")
        if mode == "500-json":
            return self._send(500, b'{"error": "Backend error: database is locked"}')
        if mode == "429":
            return self._send(429, b'{"error": "slow down"}', headers=[("Retry-After", "120")])
        if mode == "hang":
            # Accepts, reads the request, never answers.
            self.fake.stopping.wait(120)
            self.close_connection = True
            return None
        if mode == "204":
            return self._send(204)
        if mode == "200-empty":
            return self._send(200, b"")
        if mode == "redirect":
            # To the real API: a client that followed it would succeed.
            return self._send(307, b"", headers=[
                ("Location", f"{self.fake.real.api_url}{self.path}")])
        if mode == "huge":
            # A declared length far above any sane zone document.
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(512 * 1024 * 1024))
            self.end_headers()
            try:
                self.wfile.write(b'{"rrsets": [' + b" " * (1 << 20))
            except OSError:
                pass
            self.close_connection = True
            return None
        if mode == "huge-chunked":
            # No length: an endless body, cut by ddup's cap.
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b" " * 65536
            try:
                self.wfile.write(b"%x\r\n" % 1 + b"[\r\n")
                for _ in range(16 * 8):      # 8 MiB, twice the cap
                    self.wfile.write(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")
            except OSError:
                pass
            self.close_connection = True
            return None
        if mode.startswith("echo-"):
            # An error that quotes the request's API key (see ECHO_BODIES).
            status, ctype, text = ECHO_BODIES[mode[5:]](self.headers.get("X-API-Key", ""))
            return self._send(status, text.encode(), ctype)
        if mode == "extra":
            # The real answer, plus records nobody asked for: another
            # name, another type, a disabled and a foreign address.
            doc = self._real_zone(body)
            doc["rrsets"].append({"name": "other." + ZONE + ".", "type": "A", "ttl": 60,
                                  "records": [{"content": "198.51.100.7", "disabled": False}]})
            doc["rrsets"].append({"name": NAME + ".", "type": "TXT", "ttl": 60,
                                  "records": [{"content": '"198.51.100.8"', "disabled": False}]})
            doc["rrsets"].append({"name": NAME + ".", "type": "A", "ttl": 60,
                                  "records": [{"content": "198.51.100.9", "disabled": False},
                                              {"content": "198.51.100.10", "disabled": True}]})
            return self._send(200, json.dumps(doc).encode())
        raise AssertionError("unknown mode " + mode)


@pytest.fixture
def pdns_fake(pdns_server):
    fake = PdnsFake(pdns_server)
    try:
        yield fake
    finally:
        fake.stop()


# ---------------------------------------------------------------- DNS fake


def _skip_name(msg, off):
    while True:
        n = msg[off]
        if n == 0:
            return off + 1
        if n & 0xC0 == 0xC0:
            return off + 2
        off += 1 + n


def _reply(req, rcode=0, id_delta=0, answers=b"", ancount=0):
    """A reply made here from the request: header, its first question
    (the zone section of an update), optional answer records."""
    rid = (struct.unpack(">H", req[:2])[0] + id_delta) & 0xFFFF
    opcode = (req[2] >> 3) & 0x0F
    flags = 0x8000 | (opcode << 11) | 0x0400 | rcode       # QR, AA
    qd = b""
    qdcount = struct.unpack(">H", req[4:6])[0]
    if qdcount:
        end = _skip_name(req, 12) + 4
        qd = req[12:end]
    return struct.pack(">HHHHHH", rid, flags, 1 if qd else 0, ancount, 0, 0) + qd + answers


def _a_rr(ip, owner=b"\xc0\x0c", rtype=1):
    rdata = socket.inet_aton(ip) if rtype == 1 else bytes([len(ip)]) + ip.encode()
    return owner + struct.pack(">HHIH", rtype, 1, 60, len(rdata)) + rdata


def _with_answers(msg, rrs):
    """msg with rrs appended to its answer section (before any other)."""
    qd, an, ns, ar = struct.unpack(">HHHH", msg[4:12])
    off = 12
    for _ in range(qd):
        off = _skip_name(msg, off) + 4
    for _ in range(an):
        off = _skip_name(msg, off) + 8
        off += 2 + struct.unpack(">H", msg[off:off + 2])[0]
    head = msg[:6] + struct.pack(">H", an + len(rrs)) + msg[8:12]
    return head + msg[12:off] + b"".join(rrs) + msg[off:]


class DnsFake:
    """A DNS server on one loopback port, UDP and TCP, in front of BIND."""

    def __init__(self, real):
        self.real = real
        self.mode = "proxy"
        self.seen = []                   # (transport, opcode, mode)
        self.stopping = threading.Event()
        for _ in range(50):
            port = free_port()
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                u.bind(("127.0.0.1", port))
                t.bind(("127.0.0.1", port))
                break
            except OSError:
                u.close()
                t.close()
        else:
            raise RuntimeError("no free port for the DNS fake")
        self.port = port
        self.udp, self.tcp = u, t
        t.listen(16)
        u.settimeout(0.2)
        t.settimeout(0.2)
        self.conns = []
        self.threads = [threading.Thread(target=self._udp_loop, daemon=True),
                        threading.Thread(target=self._tcp_loop, daemon=True)]
        for th in self.threads:
            th.start()

    def stop(self):
        self.stopping.set()
        for th in self.threads:
            th.join(5)
        for c in self.conns:
            c.close()
        self.udp.close()
        self.tcp.close()

    # What to send back for req; None: nothing.  proxy(req) asks BIND.
    def answer(self, req, proxy):
        mode = self.mode
        opcode = (req[2] >> 3) & 0x0F
        if mode == "proxy":
            return proxy(req)
        if mode == "garbage":
            rnd = random.Random(len(req))
            return bytes(rnd.randrange(256) for _ in range(48))
        if mode == "truncated":
            full = _reply(req)
            return full[: 12 + 3]        # header claims a question, 3 bytes of it
        if mode == "wrong-opcode":
            # Right id, but an answer to a query for an update and back.
            out = bytearray(_reply(req))
            out[2] ^= (5 << 3)
            return bytes(out)
        if mode == "wrong-id":
            return _reply(req, id_delta=1)
        if mode == "servfail":
            return _reply(req, rcode=2)
        if mode == "refused":
            return _reply(req, rcode=5)
        if mode == "hang":
            return None
        if mode == "close":
            return b""
        if mode == "short":
            return _reply(req)[:6]
        if mode == "extra":
            rrs = [_a_rr("198.51.100.9"), _a_rr("198.51.100.10"),
                   _a_rr("x", rtype=16)]
            if opcode == 5:
                # The real update is applied; its signed reply gains records.
                return _with_answers(proxy(req), rrs)
            return _with_answers(proxy(req), rrs)
        if mode == "drip":
            # A valid answer; over TCP it comes a byte a second
            # (_tcp_conn), over UDP it says "truncated, ask over TCP".
            out = bytearray(proxy(req))
            if proxy == self._proxy_udp:
                out[2] |= 0x02
            return bytes(out)
        if mode == "extra-local":
            # NOERROR from the fake alone, with records nobody asked for.
            rrs = [_a_rr("198.51.100.9"), _a_rr("198.51.100.10")]
            return _reply(req, answers=b"".join(rrs), ancount=len(rrs))
        raise AssertionError("unknown mode " + mode)

    def _proxy_udp(self, req):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(10)
        try:
            s.sendto(req, ("127.0.0.1", self.real.port))
            return s.recv(65535)
        finally:
            s.close()

    def _proxy_tcp(self, req):
        with socket.create_connection(("127.0.0.1", self.real.port), timeout=10) as s:
            s.sendall(struct.pack(">H", len(req)) + req)
            n = struct.unpack(">H", _recv_all(s, 2))[0]
            return _recv_all(s, n)

    def _udp_loop(self):
        while not self.stopping.is_set():
            try:
                req, peer = self.udp.recvfrom(65535)
            except socket.timeout:
                continue
            except OSError:
                return
            self.seen.append(("udp", (req[2] >> 3) & 0x0F, self.mode))
            try:
                out = self.answer(req, self._proxy_udp)
            except OSError:
                continue
            if out:
                self.udp.sendto(out, peer)

    def _tcp_loop(self):
        while not self.stopping.is_set():
            try:
                c, _ = self.tcp.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.conns.append(c)
            threading.Thread(target=self._tcp_conn, args=(c,), daemon=True).start()

    def _tcp_conn(self, c):
        c.settimeout(0.2)
        try:
            while not self.stopping.is_set():
                try:
                    n = struct.unpack(">H", _recv_all(c, 2, self.stopping))[0]
                    req = _recv_all(c, n, self.stopping)
                except (EOFError, OSError):
                    return
                self.seen.append(("tcp", (req[2] >> 3) & 0x0F, self.mode))
                out = self.answer(req, self._proxy_tcp)
                if out is None:
                    self.stopping.wait(120)      # hold the connection, silent
                    return
                if out == b"":
                    return                       # hang up without a word
                if self.mode == "drip":
                    for byte in struct.pack(">H", len(out)) + out:
                        if self.stopping.wait(1):
                            return
                        c.sendall(bytes([byte]))
                    continue
                if self.mode == "short":
                    # The length announces a full reply; a part comes.
                    c.sendall(struct.pack(">H", 100) + out)
                    return
                c.sendall(struct.pack(">H", len(out)) + out)
        finally:
            try:
                c.close()
            except OSError:
                pass


def _recv_all(s, n, stopping=None):
    buf = b""
    while len(buf) < n:
        try:
            b = s.recv(n - len(buf))
        except socket.timeout:
            if stopping is not None and stopping.is_set():
                raise EOFError
            if stopping is None:
                raise
            continue
        if not b:
            raise EOFError
        buf += b
    return buf


@pytest.fixture
def dns_fake(bind_server):
    fake = DnsFake(bind_server)
    try:
        yield fake
    finally:
        fake.stop()


# ---------------------------------------------------------------- helpers


def configure(ddup, provider, eps, keys=""):
    text = "interval = 30s\n" + provider
    text += f"\n[domain {NAME}]\nprovider = dns\nttl = 60\nattempts = 1\n{keys}\n"
    for ep, srv, ip in eps:
        text += f"\n[endpoint {ep}]\nurl = {srv.url}\nip = {ip}\n"
    ddup.write(text)


def pdns_section(fake):
    return f"""
[provider dns]
type = powerdns
baseUrl = {fake.url}
apiKey = {fake.real.api_key}
zone = {ZONE}
timeout = {TIMEOUT}s
"""


def bind_section(fake, protocol="tcp", signed=True):
    text = f"""
[provider dns]
type = rfc2136
server = 127.0.0.1:{fake.port}
zone = {ZONE}
protocol = {protocol}
timeout = {TIMEOUT}s
"""
    if signed:
        b = fake.real
        text += f"keyName = {b.key_name}\nkeyAlgorithm = {b.key_alg}\nkeySecret = {b.key_secret}\n"
    return text


def published(ddup):
    d = ddup.status()["domains"][0]
    return d["published"], d["lastError"]


def timed_run(ddup, *args):
    t = time.monotonic()
    r = ddup.run(*args)
    return r, time.monotonic() - t


def pdns_set(pdns, *ips):
    st, _ = pdns.api("PATCH", f"/api/v1/servers/localhost/zones/{ZONE}.", {"rrsets": [
        {"name": NAME + ".", "type": "A", "ttl": 60, "changetype": "REPLACE",
         "records": [{"content": ip, "disabled": False} for ip in ips]}]})
    assert st == 204


def assert_failed(r, *words):
    assert r.rc == 1, r
    assert r.out == "", r
    assert "provider dns" in r.err, r
    for w in words:
        assert w.lower() in r.err.lower(), (w, r)


# ---------------------------------------------------------------- PowerDNS

# mode, words expected in the error.  Reading (first run: GET).
PDNS_READ = [
    ("truncated", ["PowerDNS", "not JSON"]),
    ("rrsets-object", ["PowerDNS", "no rrsets array"]),
    ("ttl-string", ["PowerDNS", "ttl"]),
    ("content-number", ["PowerDNS", "content"]),
    ("html", ["PowerDNS", "not JSON"]),
    ("500", ["PowerDNS", "500"]),
    ("500-json", ["PowerDNS", "500", "database is locked"]),
    ("502", ["PowerDNS", "502"]),
    ("503", ["PowerDNS", "503"]),
    ("429", ["PowerDNS", "429", "retry after 120s"]),
    ("hang", ["PowerDNS", f"no answer within {TIMEOUT}s"]),
    ("204", ["PowerDNS", "not JSON"]),
    ("200-empty", ["PowerDNS", "not JSON"]),
    ("redirect", ["PowerDNS", "307", "not followed"]),
    ("huge", ["PowerDNS", "larger than"]),
    ("huge-chunked", ["PowerDNS", "larger than"]),
]

# Writing (a later run: PATCH).  A PATCH succeeds with 204 and nothing else.
PDNS_WRITE = [
    ("truncated-json", ["PowerDNS", "204"]),
    ("html", ["PowerDNS", "204"]),
    ("200-empty", ["PowerDNS", "204"]),
    ("500", ["PowerDNS", "500"]),
    ("502", ["PowerDNS", "502"]),
    ("503", ["PowerDNS", "503"]),
    ("429", ["PowerDNS", "429", "retry after 120s"]),
    ("hang", ["PowerDNS", f"no answer within {TIMEOUT}s"]),
    ("redirect", ["PowerDNS", "307", "not followed"]),
    ("huge", ["PowerDNS", "larger than"]),
    ("huge-chunked", ["PowerDNS", "larger than"]),
]


def cases(table):
    """Parameters of a table of (mode, words); "hang" bounds its wall
    time, so it runs in the serial pass."""
    return [pytest.param(m, w, id=m, marks=[pytest.mark.serial] if m == "hang" else [])
            for m, w in table]


@pytest.mark.parametrize("mode,words", cases(PDNS_READ))
def test_powerdns_bad_answer_to_read(ddup, pdns_server, pdns_fake, http_server, mode, words):
    # DNS holds a foreign set: the first run must read it before writing.
    pdns_set(pdns_server, "203.0.113.9")
    serial = pdns_server.serial()
    a = http_server()
    configure(ddup, pdns_section(pdns_fake), [("a", a, "192.0.2.1")])
    pdns_fake.mode = mode
    r, took = timed_run(ddup)
    assert_failed(r, *words)
    assert pdns_server.api_key not in r.err
    # Nothing was written: no PATCH went out, the real zone is as it was.
    assert [m for m, *_ in pdns_fake.requests] == ["GET"]
    assert pdns_server.query(NAME, "A") == ["203.0.113.9"]
    assert pdns_server.serial() == serial
    pub, err = published(ddup)
    assert pub == [] and err is not None and "PowerDNS" in err
    if mode == "hang":
        # One exchange, one timeout (generous upper bound for busy machines).
        assert TIMEOUT * 0.9 <= took < (TIMEOUT * 3 + 2) * TIME_SCALE, took
    # Healthy again: the next run reads, then writes.
    pdns_fake.mode = "proxy"
    r = ddup.run()
    assert r.rc == 0, r
    assert pdns_server.query(NAME, "A") == ["192.0.2.1"]
    assert published(ddup) == (["192.0.2.1"], None)


def test_powerdns_requests_as_the_http_layer_sends_them(ddup, pdns_server, pdns_fake, http_server):
    # http.c: User-Agent ddup/1.0, the key in its header only, a body
    # with its type; the URL never carries the key.
    configure(ddup, pdns_section(pdns_fake), [("a", http_server(), "192.0.2.1")])
    r = ddup.run()
    assert r.rc == 0, r
    assert [m for m, *_ in pdns_fake.requests] == ["GET", "PATCH"]
    for (method, path, _, body), h in zip(pdns_fake.requests, pdns_fake.request_headers):
        assert h.get("user-agent") == "ddup/1.0", h
        assert h.get("x-api-key") == pdns_server.api_key
        assert h.get("accept") == "application/json"
        assert pdns_server.api_key not in path
        if method == "PATCH":
            assert h.get("content-type") == "application/json"
            assert int(h["content-length"]) == len(body) > 0
        else:
            assert "content-type" not in h and not body


@pytest.mark.parametrize("mode,words", cases(PDNS_WRITE))
def test_powerdns_bad_answer_to_write(ddup, pdns_server, pdns_fake, http_server, mode, words):
    a, b = http_server(), http_server()
    configure(ddup, pdns_section(pdns_fake), [("a", a, "192.0.2.1"), ("b", b, "192.0.2.2")])
    assert ddup.run().rc == 0
    assert pdns_server.query(NAME, "A") == ["192.0.2.1", "192.0.2.2"]
    serial = pdns_server.serial()
    b.set(status=503)
    pdns_fake.modes = {"PATCH": mode}
    del pdns_fake.requests[:]
    r, took = timed_run(ddup)
    assert_failed(r, *words)
    assert [m for m, *_ in pdns_fake.requests] == ["PATCH"]
    assert pdns_server.query(NAME, "A") == ["192.0.2.1", "192.0.2.2"]
    assert pdns_server.serial() == serial
    pub, err = published(ddup)
    assert pub == ["192.0.2.1", "192.0.2.2"] and "PowerDNS" in err, (pub, err)
    if mode == "hang":
        assert TIMEOUT * 0.9 <= took < (TIMEOUT * 3 + 2) * TIME_SCALE, took
    pdns_fake.modes = {}
    r = ddup.run()
    assert r.rc == 0, r
    assert pdns_server.query(NAME, "A") == ["192.0.2.1"]
    assert published(ddup) == (["192.0.2.1"], None)


def test_powerdns_extra_records_in_answer_are_not_published(ddup, pdns_server, pdns_fake,
                                                              http_server):
    """A read answer full of records nobody asked for: ddup writes exactly
    its own set, and stores exactly that."""
    pdns_set(pdns_server, "192.0.2.1")
    a = http_server()
    configure(ddup, pdns_section(pdns_fake), [("a", a, "192.0.2.1")])
    pdns_fake.modes = {"GET": "extra"}
    r = ddup.run()
    assert r.rc == 0, r
    # The fake claimed 198.51.100.9 too: the set differed, so ddup wrote its own.
    patches = [json.loads(body) for m, _, _, body in pdns_fake.requests if m == "PATCH"]
    assert patches == [{"rrsets": [{"name": NAME + ".", "type": "A", "ttl": 60,
                                    "changetype": "REPLACE",
                                    "records": [{"content": "192.0.2.1", "disabled": False}]}]}]
    assert pdns_server.query(NAME, "A") == ["192.0.2.1"]
    assert pdns_server.query("other." + ZONE, "A") == []
    assert published(ddup) == (["192.0.2.1"], None)


def test_provider_message_is_bounded_with_its_length(ddup, pdns_server, pdns_fake,
                                                     http_server):
    """A provider message longer than ddup keeps (a long baseUrl, then the
    API's text) is cut once, marked with its length, alike in the log,
    --status and the state."""
    a = http_server()
    section = pdns_section(pdns_fake).replace(pdns_fake.url, pdns_fake.url + "/" + "p" * 160)
    configure(ddup, section, [("a", a, "192.0.2.1")])
    pdns_fake.mode = "echo-cut"         # 160 bytes of the API's own text
    r = ddup.run()
    assert r.rc == 1, r
    last = ddup.status()["domains"][0]["lastError"]
    head = "reading current records from provider dns: rejected as invalid: "
    assert last.startswith(head + "PowerDNS at "), last
    m = re.search(r"x\.\.\. \((\d+) bytes\)$", last)
    assert m and int(m.group(1)) > 400 and len(last) - len(head) == 400, last
    assert last in r.err, r
    assert last in ddup.state_dump()


def test_powerdns_hostile_answers_in_json_logs(ddup, pdns_server, pdns_fake, http_server):
    """Server text in an error stays one valid JSON log line."""
    a = http_server()
    configure(ddup, pdns_section(pdns_fake), [("a", a, "192.0.2.1")], keys="")
    text = open(ddup.config).read()
    with open(ddup.config, "w") as f:
        f.write("logFormat = json\n" + text)
    os.chmod(ddup.config, 0o600)
    pdns_set(pdns_server, "192.0.2.9")
    for mode in ("html", "500-json", "truncated", "429", "content-utf8"):
        pdns_fake.mode = mode
        r = ddup.run()
        assert r.rc == 1, r
        lines = [json.loads(ln) for ln in r.err.splitlines()]
        assert any(ln["level"] == "error" and "provider dns" in ln["msg"] for ln in lines), r
        st = ddup.status()["domains"][0]
        assert "PowerDNS" in st["lastError"], st


# ---------------------------------------------------------------- rfc2136

R2_MODES = [
    ("garbage", ["unreadable reply"]),
    ("truncated", ["unreadable reply"]),
    ("wrong-opcode", ["does not match"]),
    ("wrong-id", ["does not match"]),
    ("servfail", ["SERVFAIL"]),
    ("refused", ["REFUSED"]),
    ("hang", [f"no answer within {TIMEOUT}s"]),
]


def r2_cases():
    out = [pytest.param("tcp", "close", ["closed"], id="tcp-close"),
           pytest.param("tcp", "short", ["closed"], id="tcp-short")]
    for proto in ("tcp", "udp"):
        for mode, words in R2_MODES:
            marks = [pytest.mark.serial] if mode == "hang" else []
            out.append(pytest.param(proto, mode, words, id=f"{proto}-{mode}", marks=marks))
    return out


@pytest.mark.parametrize("proto,mode,words", r2_cases())
def test_rfc2136_bad_answer_to_read(ddup, bind_server, dns_fake, http_server, proto, mode, words):
    from test_providers import nsupdate
    nsupdate(bind_server, f"update add {NAME} 60 A 203.0.113.9")
    serial, updates = bind_server.serial(), bind_server.update_count()
    a = http_server()
    configure(ddup, bind_section(dns_fake, proto), [("a", a, "192.0.2.1")])
    dns_fake.mode = mode
    r, took = timed_run(ddup)
    assert_failed(r, f"127.0.0.1:{dns_fake.port}", *words)
    assert bind_server.key_secret not in r.err
    # Only the query was sent: no update reached anyone.
    assert [op for _, op, _ in dns_fake.seen] == [0]
    assert bind_server.query(NAME, "A") == ["203.0.113.9"]
    assert (bind_server.serial(), bind_server.update_count()) == (serial, updates)
    pub, err = published(ddup)
    assert pub == [] and err is not None
    if mode == "hang":
        assert TIMEOUT * 0.9 <= took < (TIMEOUT * 3 + 2) * TIME_SCALE, took
    dns_fake.mode = "proxy"
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    assert published(ddup) == (["192.0.2.1"], None)


@pytest.mark.parametrize("proto,mode,words", r2_cases() + [
    pytest.param("tcp", "extra", ["TSIG"], id="tcp-extra"),
    pytest.param("udp", "extra", ["TSIG"], id="udp-extra")])
def test_rfc2136_bad_answer_to_update(ddup, bind_server, dns_fake, http_server, proto, mode,
                                      words):
    a, b = http_server(), http_server()
    configure(ddup, bind_section(dns_fake, proto), [("a", a, "192.0.2.1"), ("b", b, "192.0.2.2")])
    assert ddup.run().rc == 0
    assert bind_server.query(NAME, "A") == ["192.0.2.1", "192.0.2.2"]
    serial, updates = bind_server.serial(), bind_server.update_count()
    b.set(status=503)
    dns_fake.mode = mode
    del dns_fake.seen[:]
    r, took = timed_run(ddup)
    assert_failed(r, f"127.0.0.1:{dns_fake.port}", *words)
    assert bind_server.key_secret not in r.err
    assert [op for _, op, _ in dns_fake.seen] == [5]
    if mode == "extra":
        # The update reached BIND and was applied; its reply was tampered
        # with, so ddup cannot trust it and keeps the stored set.  The
        # records added to the reply are nowhere.
        assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    else:
        assert bind_server.query(NAME, "A") == ["192.0.2.1", "192.0.2.2"]
        assert (bind_server.serial(), bind_server.update_count()) == (serial, updates)
    pub, err = published(ddup)
    assert pub == ["192.0.2.1", "192.0.2.2"] and err is not None, (pub, err)
    if mode == "hang":
        assert TIMEOUT * 0.9 <= took < (TIMEOUT * 3 + 2) * TIME_SCALE, took
    dns_fake.mode = "proxy"
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    assert "198.51.100" not in " ".join(bind_server.query(NAME, "A"))
    assert published(ddup) == (["192.0.2.1"], None)


@pytest.mark.serial
@pytest.mark.parametrize("proto", ["tcp", "udp"])
def test_rfc2136_timeout_is_a_deadline_not_an_idle_limit(ddup, bind_server, dns_fake,
                                                         http_server, proto):
    """A server that drips a valid answer over TCP, a byte a second (over
    UDP it first says "truncated": the retry over TCP gets what is left of
    the same deadline): the run ends about `timeout` later, not when the
    last byte comes, and the update fails as a timeout."""
    a = http_server()
    configure(ddup, bind_section(dns_fake, proto), [("a", a, "192.0.2.1")])
    dns_fake.mode = "drip"
    r, took = timed_run(ddup)
    assert_failed(r, f"127.0.0.1:{dns_fake.port}", "timeout", f"within {TIMEOUT}s")
    # The answer is some 60 bytes: 60 s before the fix.
    assert took < (TIMEOUT + 15) * TIME_SCALE, (took, r)
    assert [op for _, op, _ in dns_fake.seen] == ([0] if proto == "tcp" else [0, 0])
    assert published(ddup)[0] == []


@pytest.mark.parametrize("proto", ["tcp", "udp"])
def test_rfc2136_extra_records_in_query_answer(ddup, bind_server, dns_fake, http_server, proto):
    """The read answer claims addresses BIND does not hold, and records of
    other types: ddup writes exactly its set."""
    from test_providers import nsupdate
    nsupdate(bind_server, f"update add {NAME} 60 A 192.0.2.1")
    a = http_server()
    configure(ddup, bind_section(dns_fake, proto), [("a", a, "192.0.2.1")])
    dns_fake.mode = "extra"
    r = ddup.run()
    # The update's reply is tampered with too: exit 1, but BIND has the set.
    assert r.rc == 1, r
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    assert bind_server.query(NAME, "TXT") == []
    dns_fake.mode = "proxy"
    assert ddup.run().rc == 0
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    assert published(ddup) == (["192.0.2.1"], None)


def test_rfc2136_unsigned_reply_with_extra_records(ddup, bind_server, dns_fake, http_server):
    """Without TSIG a NOERROR reply cannot be checked; what ddup stores is
    still exactly the set it sent, never the records in the reply."""
    a = http_server()
    configure(ddup, bind_section(dns_fake, "tcp", signed=False), [("a", a, "192.0.2.1")])
    dns_fake.mode = "extra-local"
    r = ddup.run()
    # The fake's query answer holds 198.51.100.9/10: ddup sees a foreign
    # set and writes its own; the fake says NOERROR.
    assert r.rc == 0, r
    assert published(ddup) == (["192.0.2.1"], None)
    assert [op for _, op, _ in dns_fake.seen] == [0, 5]


def test_rfc2136_signed_but_unsigned_noerror_is_a_failure(ddup, bind_server, dns_fake,
                                                          http_server):
    """A NOERROR reply without the server's signature, to a signed update,
    is not a success."""
    a, b = http_server(), http_server()
    configure(ddup, bind_section(dns_fake), [("a", a, "192.0.2.1"), ("b", b, "192.0.2.2")])
    assert ddup.run().rc == 0
    b.set(status=503)
    dns_fake.mode = "extra-local"
    r = ddup.run()
    assert_failed(r, "TSIG")
    assert published(ddup)[0] == ["192.0.2.1", "192.0.2.2"]
    assert bind_server.query(NAME, "A") == ["192.0.2.1", "192.0.2.2"]


@pytest.mark.serial
def test_hanging_provider_costs_one_timeout_per_run(ddup, pdns_server, pdns_fake, http_server):
    """Several domains on one provider that never answers: the run must not
    spend the timeout once per domain."""
    a = http_server()
    text = "interval = 30s\n" + pdns_section(pdns_fake)
    for i in range(4):
        text += (f"\n[domain d{i}.{ZONE}]\nprovider = dns\nttl = 60\n"
                 f"\n[endpoint a]\nurl = {a.url}\nip = 192.0.2.{i + 1}\n")
    ddup.write(text)
    pdns_fake.mode = "hang"
    r, took = timed_run(ddup)
    assert r.rc == 1, r
    assert r.err.count("provider dns") == 4, r
    assert r.err.count("unreachable, not tried again in this run") == 3, r
    # One request went out and timed out once; the other domains did not
    # try.  Counted, not timed: a slow build or a busy machine changes the
    # wall time, not the count.
    assert [m for m, *_ in pdns_fake.requests] == ["GET"], pdns_fake.requests
    assert r.err.count(f"no answer within {TIMEOUT}s") == 1, r
    assert TIMEOUT * 0.9 <= took < (TIMEOUT * 2 + 2) * TIME_SCALE, took


# ---------------------------------------------------------------- the provider's timeout

# Retry-After values that overflow a wait in milliseconds (2^63 s, 1.8e16
# s) or ask for centuries; each is the next run's, whatever the status.
HUGE_RETRY_AFTER = ["9223372036854775808", "18000000000000000",
                    "Fri, 31 Dec 99999 23:59:59 GMT"]
# Generous: a busy machine, a sanitizer build.  A wait made would be years.
MARGIN = 10 * TIME_SCALE


def do_section(fake):
    return digitalocean_section(fake, extra=f"timeout = {TIMEOUT}s\n")


@pytest.mark.parametrize("status", [429, 503])
@pytest.mark.parametrize("retry_after", HUGE_RETRY_AFTER)
def test_huge_retry_after_is_not_waited(ddup, digitalocean, http_server, status, retry_after):
    a = http_server()
    configure(ddup, do_section(digitalocean), [("a", a, "192.0.2.1")])
    digitalocean.fail(status, times=100, retry_after=retry_after)
    # The second run meets the same answer: it does not hang either.
    for _ in range(2):
        r, took = timed_run(ddup)
        assert took < TIMEOUT + MARGIN, (took, r)
        assert_failed(r, "DigitalOcean", str(status),
                      "rate limited" if status == 429 else "temporary failure")
        if status == 429:
            assert "not waited" in r.err, r
        assert digitalocean.writes() == []
    assert digitalocean.get("A", "app") == []


@pytest.mark.parametrize("pages", [50])
def test_timeout_bounds_every_page_of_a_read(ddup, digitalocean, http_server, pages):
    # One record a page, each page answered after 1.5 s: a timeout per
    # request would let the read take 75 s.
    do = digitalocean
    do.max_per_page = 1
    for i in range(pages):
        do.add("A", "app", f"198.51.100.{i + 1}", ttl=60)
    do.slow(1.5, times=10 * pages, method="GET")
    a = http_server()
    configure(ddup, do_section(do), [("a", a, "192.0.2.1")])
    r, took = timed_run(ddup)
    assert took < TIMEOUT + MARGIN, (took, r)
    assert_failed(r, "DigitalOcean", f"no answer within {TIMEOUT}s")
    assert do.count("GET") <= 3, do.requests
    assert do.writes() == []
    assert len(do.get("A", "app")) == pages
    assert published(ddup)[0] == []


def test_request_after_the_deadline_is_not_sent(ddup, ovh_fake, http_server):
    # OVH reads each record by its id: 40 records at 0.6 s each pass the
    # 2 s timeout between two requests, and the next is not sent.
    ovh = ovh_fake
    for i in range(40):
        ovh.add("app", "A", f"198.51.100.{i + 1}", ttl=60)
    ovh.slow(0.6, times=1000, method="GET", path="/record/")
    a = http_server()
    configure(ddup, with_line(ovh_section(ovh), f"timeout = {TIMEOUT}s"), [("a", a, "192.0.2.1")])
    r, took = timed_run(ddup)
    assert took < TIMEOUT + MARGIN, (took, r)
    assert_failed(r, "OVH", f"{TIMEOUT}s")
    assert ovh.count("GET", "/record/") < 10, ovh.requests
    assert ovh.writes() == []
