"""Stoplight Prism in front of a fake: every request and every answer
checked against the vendor's own OpenAPI document.

Prism, in proxy mode, forwards what conforms to the document and answers
what does not itself (422, 401, 404, 405) without reaching the fake; it
logs a violation for either direction.  A test fails on any violation it
did not mean to cause.

Prism takes a minute of CPU to start, so one runs per document and pytest
process; its upstream is a relay that forwards to the fake of the test at
hand (fakes from apifix.py are started per test, each on its own port):

    _example_session, example = prism_fixture("example_fake", SCHEMA, "example")

    def test_x(example):
        example.url                 # Prism, for the provider's baseUrl
        example.fake                # the fake itself (example.fake.url bypasses Prism)
        example.take_violations()   # the violations the test meant to cause
        example.records             # anything else: the fake's own

cloudflarefix.py uses Prism and the helpers here with its own session fake.
"""

import http.client
import os
import socket
import subprocess
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler

import pytest

from apifix import QuietServer
from procfix import die_with_parent

__all__ = ["Prism", "prism_bin", "violations", "prism_fixture", "READY_PROBE"]

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

# The readiness probe's path, which Prism refuses as outside the schema.
READY_PROBE = "/ddup-test-readiness-probe"


def prism_bin():
    """The Prism CLI that `make prism` installs (or $DDUP_PRISM)."""
    p = os.environ.get("DDUP_PRISM") or os.path.join(
        ROOT, "build", "prism", "node_modules", ".bin", "prism")
    return p if os.access(p, os.X_OK) else None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def violations(text):
    """Prism's log lines that report a request or answer breaking the schema."""
    return [line for line in text.splitlines()
            if ("✖" in line or "⚠" in line or "violation" in line.lower())
            and READY_PROBE not in line]


class Prism:
    """One Prism proxy process in front of upstream."""

    def __init__(self, schema, upstream, logpath):
        self.port = free_port()
        self.logpath = logpath
        self.log = open(logpath, "w")
        self.proc = subprocess.Popen(
            [prism_bin(), "proxy", "-h", "127.0.0.1", "-p", str(self.port), "--errors",
             "--cors", "false", schema, upstream],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            preexec_fn=die_with_parent)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("prism exited: " + self.text())
            # Ready when it answers HTTP, not when it accepts: under load
            # a first request right after the port opens got an empty
            # reply.  A path outside the schema is answered by Prism
            # itself (404), so the fake counts no call.
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                c.request("GET", READY_PROBE)
                c.getresponse().read()
                c.close()
                return
            except (OSError, http.client.HTTPException):
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("prism did not start: " + self.text())

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def text(self):
        with open(self.logpath, errors="replace") as f:
            return f.read()

    def settled(self):
        """The log once Prism has written what it had to say (it lags)."""
        last, since = None, time.monotonic()
        while time.monotonic() - since < 0.3:
            t = self.text()
            if t != last:
                last, since = t, time.monotonic()
            time.sleep(0.05)
        return last

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


# Hop-by-hop headers, which a relay does not pass on (RFC 9110, 7.6.1).
_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
        "proxy-connection", "content-length"}


class _RelayHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _handle(self):
        target = self.server.target
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n > 0 else None
        if target is None:
            self.send_error(502, "no fake behind the relay")
            return
        u = urllib.parse.urlsplit(target)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        try:
            c = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
            c.request(self.command, self.path, body=body, headers=headers)
            r = c.getresponse()
            out = r.read()
            c.close()
        except (OSError, http.client.HTTPException):
            # The fake hung up without an answer (a test's "hang"):
            # so does the relay.
            self.close_connection = True
            return
        self.send_response(r.status, r.reason)
        for k, v in r.getheaders():
            if k.lower() not in _HOP:
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(out)))
        # One request a connection: Prism reusing a kept-alive one just
        # as the relay closes it saw "socket hang up" (as with
        # cloudflarefix.py's server).
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        if out and self.command != "HEAD":
            self.wfile.write(out)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle


class _Session:
    """A relay and the Prism in front of it, for one document."""

    def __init__(self, schema, tmp):
        self.relay = QuietServer(("127.0.0.1", 0), _RelayHandler)
        self.relay.target = None
        self.thread = threading.Thread(target=self.relay.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        upstream = f"http://127.0.0.1:{self.relay.server_address[1]}"
        self.prism = Prism(schema, upstream, os.path.join(tmp, "prism.log"))

    def close(self):
        self.prism.stop()
        self.relay.shutdown()
        self.relay.server_close()


class Prismed:
    """What a test holds: the fake, and the Prism its baseUrl points at.
    Every other attribute is the fake's (read and set), so a test written
    against the bare fake runs unchanged behind Prism."""

    _OWN = ("fake", "prism", "url", "_mark")

    def __init__(self, sess, fake):
        object.__setattr__(self, "fake", fake)
        object.__setattr__(self, "prism", sess.prism)
        object.__setattr__(self, "url", sess.prism.url)
        sess.relay.target = fake.url
        # The last test's lines end here: its teardown let the log settle
        # (waiting again would cost every test 0.3 s).
        object.__setattr__(self, "_mark", len(self.prism.text()))

    def __getattr__(self, name):
        return getattr(self.fake, name)

    def __setattr__(self, name, value):
        if name in self._OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self.fake, name, value)

    def violations(self):
        return violations(self.prism.settled()[self._mark:])

    def take_violations(self):
        """The violations so far, which the test meant to cause."""
        text = self.prism.settled()
        bad = violations(text[self._mark:])
        self._mark = len(text)
        return bad


def prism_fixture(fake_name, schema, name, vendor=None):
    """A pytest fixture `name`: the fake of fixture fake_name behind a
    Prism that validates against schema; a test fails on a violation it
    did not take."""
    vendor = vendor or name
    session_name = f"_{name}_prism_session"

    @pytest.fixture(scope="session", name=session_name)
    def session(tmp_path_factory):
        if prism_bin() is None:
            pytest.fail("Prism missing: run `make prism` (npm installs it under build/prism)")
        s = _Session(schema, str(tmp_path_factory.mktemp(f"prism-{name}")))
        yield s
        s.close()

    @pytest.fixture(name=name)
    def fixture(request):
        sess = request.getfixturevalue(session_name)
        p = Prismed(sess, request.getfixturevalue(fake_name))
        yield p
        sess.relay.target = None
        bad = p.violations()
        assert not bad, (f"Prism found requests or answers that break {vendor}'s"
                         " published schema:\n" + "\n".join(bad))

    return session, fixture
