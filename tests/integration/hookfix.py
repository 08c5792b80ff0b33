"""A webhook receiver on loopback for the notification tests: it can be
up (answers every request with a status, headers and body the test sets,
recording method, path, headers and body), down (nothing listens: connections are refused)
or hung (the port accepts connections, as the kernel does for a listening
socket, and never answers). Every receiver a test makes is stopped by it.
"""

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from httpfix import free_port


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _take(self):
        owner = self.server.owner
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n) if n else b""
        with owner.lock:
            owner.requests.append({"method": self.command, "path": self.path,
                                   "headers": dict(self.headers.items()), "body": body})
            status = owner.status
            delay = owner.delay
            headers = owner.headers
            # An answer that quotes the request, as a careless receiver's
            # error page does (its headers, its path).
            answer = (f"{self.command} {self.path} " + " ".join(
                f"{k}: {v}" for k, v in self.headers.items())).encode() if owner.echo else owner.body
        if delay:
            owner.stopping.wait(delay)
        try:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
        except OSError:
            pass        # the client gave up waiting: what a late answer meets

    do_POST = do_PUT = do_PATCH = _take


class Receiver:
    def __init__(self):
        self.port = free_port()
        self.status = 200
        self.delay = 0
        self.headers = {}
        self.body = b"ok\n"
        self.echo = False
        self.requests = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self._srv = None
        self._thread = None
        self._hung = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/hook"

    def up(self, status=200, delay=0, headers=None, body=b"ok\n"):
        self.down()
        self.status = status
        self.delay = delay
        self.headers = dict(headers or {})
        self.body = body
        self.stopping = threading.Event()
        srv = ThreadingHTTPServer(("127.0.0.1", self.port), _Handler)
        srv.daemon_threads = True
        srv.owner = self
        self._srv = srv
        self._thread = threading.Thread(target=srv.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def hang(self):
        """Connections complete (the kernel's backlog) and nothing answers."""
        self.down()
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(64)
        self._hung = s
        return self

    def down(self):
        self.stopping.set()
        if self._srv is not None:
            self._srv.shutdown()
            self._srv.server_close()
            self._thread.join(5)
            self._srv = self._thread = None
        if self._hung is not None:
            self._hung.close()
            self._hung = None
        return self

    def events(self):
        """The JSON bodies received, in order of arrival."""
        with self.lock:
            return [json.loads(r["body"]) for r in self.requests]

    def distinct(self):
        """events() without a repeated id (a receiver drops those)."""
        seen, out = set(), []
        for e in self.events():
            if e["id"] not in seen:
                seen.add(e["id"])
                out.append(e)
        return out


@pytest.fixture
def receiver():
    """Factory: receiver() -> a Receiver, down until .up(); all stopped at teardown."""
    made = []

    def make():
        r = Receiver()
        made.append(r)
        return r

    yield make
    for r in made:
        r.down()
