"""The common part of the fakes of provider APIs that cannot run here
(azurefix.py, ovhfix.py): a loopback HTTP server in a thread, every
request kept and counted by method, and failures the test asks for.

A fake's subclass implements route(req) -> (status, headers, body) and
keeps the records as state; the base answers what the test injected
before the route sees the request:

    fake.fail(429, retry_after=7)             # the next request
    fake.fail(503, times=2, method="PUT")     # the next two PUTs
    fake.fail(401, path="/record")            # the next one whose path holds it
    fake.fail(503, method="POST", after=1)    # the second POST
    fake.hang(method="GET", seconds=5)        # no answer for a while
    fake.slow(1.5, times=50, method="GET")    # the right answer, late
    fake.fail(400, body=lambda req: ...)      # an answer made from the request

    fake.count("PUT"), fake.writes(), fake.requests[-1].path

A fake module then needs only its routes and its fixture:

    example_fake = fake_fixture(ExampleFake, "example_fake")
"""

import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

__all__ = ["ApiFake", "ApiRequest", "QuietServer", "WRITE_METHODS", "fake_fixture"]

WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")


class ApiRequest:
    """One request as the fake received it."""

    def __init__(self, method, target, headers, body):
        self.method = method
        self.target = target            # path and query, as sent
        u = urllib.parse.urlsplit(target)
        self.path = u.path
        self.query = urllib.parse.parse_qs(u.query, keep_blank_values=True)
        self.headers = headers          # dict, names lower case
        self.body = body                # bytes

    def header(self, name):
        return self.headers.get(name.lower())

    def json(self):
        return json.loads(self.body.decode("utf-8"))

    def media_type(self):
        """The Content-Type without parameters, lower case ("" none)."""
        return (self.header("Content-Type") or "").split(";")[0].strip().lower()

    def json_body(self):
        """(document, None); (None, "media type") when the Content-Type is
        not application/json; (None, "json") when the body is no JSON."""
        if self.media_type() != "application/json":
            return None, "media type"
        try:
            return self.json(), None
        except (UnicodeDecodeError, ValueError):
            return None, "json"

    def __repr__(self):
        return f"<{self.method} {self.target}>"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _handle(self):
        fake = self.server.fake
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n > 0 else b""
        req = ApiRequest(self.command, self.path,
                         {k.lower(): v for k, v in self.headers.items()}, body)
        with fake.lock:
            fake.requests.append(req)
            injected = fake._take_failure(req)
        if injected is not None and injected.get("hang"):
            fake._stopping.wait(injected["hang"])
            self.close_connection = True
            return
        if injected is not None and injected.get("slow"):
            fake._stopping.wait(injected["slow"])
            injected = None
        if injected is not None:
            status, headers, out = fake.failure_answer(req, injected)
        else:
            with fake.lock:
                status, headers, out = fake.route(req)
        if isinstance(out, (dict, list, int)) or out is None and status != 204:
            out = json.dumps(out).encode()
            headers = {"Content-Type": "application/json; charset=utf-8", **(headers or {})}
        elif isinstance(out, str):
            out = out.encode()
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(out or b"")))
        self.end_headers()
        if out:
            self.wfile.write(out)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle


class QuietServer(ThreadingHTTPServer):
    """A loopback server in threads that keeps quiet about clients that
    hang up (a fake's, and prismfix.py's relay)."""

    daemon_threads = True

    def handle_error(self, request, client_address):
        pass


class ApiFake:
    """Base of a stateful API fake on 127.0.0.1; started at once."""

    name = "API"

    def __init__(self):
        self.lock = threading.RLock()
        self.requests = []
        self._failures = []
        self._stopping = threading.Event()
        self._srv = QuietServer(("127.0.0.1", 0), _Handler)
        self._srv.fake = self
        self.port = self._srv.server_address[1]
        self._thread = threading.Thread(target=self._srv.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def stop(self):
        self._stopping.set()
        self._srv.shutdown()
        self._srv.server_close()
        self._thread.join(5)

    # ---------------------------------------------------------- counting

    def count(self, method=None, path=None):
        with self.lock:
            return sum(1 for r in self.requests
                       if (method is None or r.method == method)
                       and (path is None or path in r.path))

    def writes(self):
        """Calls that change records (subclasses leave out their logins)."""
        with self.lock:
            return [r for r in self.requests if r.method in WRITE_METHODS and self.is_write(r)]

    def is_write(self, req):
        return True

    def reset_log(self):
        with self.lock:
            del self.requests[:]

    # ---------------------------------------------------------- failures

    def fail(self, status, times=1, method=None, path=None, retry_after=None, body=None,
             after=0):
        """The next `times` requests that match, once `after` more have
        passed, answer status (with the API's own error document unless
        body is given)."""
        with self.lock:
            self._failures.append({"status": status, "times": times, "method": method,
                                   "path": path, "retry_after": retry_after, "body": body,
                                   "after": after})

    def hang(self, seconds, times=1, method=None, path=None):
        with self.lock:
            self._failures.append({"hang": seconds, "times": times, "method": method,
                                   "path": path, "after": 0})

    def slow(self, seconds, times=1, method=None, path=None):
        """The next `times` requests that match get their right answer
        after `seconds`."""
        with self.lock:
            self._failures.append({"slow": seconds, "times": times, "method": method,
                                   "path": path, "after": 0})

    def _take_failure(self, req):
        for f in self._failures:
            if f["times"] <= 0:
                continue
            if f["method"] is not None and f["method"] != req.method:
                continue
            if f["path"] is not None and f["path"] not in req.path:
                continue
            if f["after"] > 0:
                f["after"] -= 1
                continue
            f["times"] -= 1
            return f
        return None

    def failure_answer(self, req, f):
        headers = {}
        if f["retry_after"] is not None:
            headers["Retry-After"] = str(f["retry_after"])
        body = f["body"] if f["body"] is not None else self.error_doc(f["status"])
        if callable(body):
            body = body(req)            # an answer made from the request (echoes)
        return f["status"], headers, body

    def error_doc(self, status):
        return {"message": f"error {status}"}

    def route(self, req):
        raise NotImplementedError


def fake_fixture(cls, name, **kwargs):
    """A pytest fixture `name` that starts cls(**kwargs) and stops it."""
    @pytest.fixture(name=name)
    def fixture():
        fake = cls(**kwargs)
        try:
            yield fake
        finally:
            fake.stop()
    return fixture
