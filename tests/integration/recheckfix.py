"""A health server for recheck (ddup.ini(5)): it counts the requests it
gets, with the time of each, and can fail the next k of them."""

import threading
import time

import pytest

from httpfix import HttpServer


class FlakyServer(HttpServer):
    """An HttpServer whose next `fails` answers are 503, whatever set()
    says; `times` holds the monotonic time of every request."""

    def __init__(self, **kw):
        self._lock = threading.Lock()
        self._fails = 0
        self.times = []
        super().__init__(**kw)

    # The handler reads behaviour once per request: count it there.
    @property
    def behaviour(self):
        with self._lock:
            b = self._b
            if getattr(self, "times", None) is not None and self._serving:
                self.times.append(time.monotonic())
                if self._fails > 0:
                    self._fails -= 1
                    b = dict(b, status=503)
            return b

    @behaviour.setter
    def behaviour(self, b):
        self._b = b

    _serving = False

    def set(self, **kw):
        self._serving = False       # set() reads behaviour: not a request
        try:
            return super().set(**kw)
        finally:
            self._serving = True

    def fail_next(self, k):
        with self._lock:
            self._fails = k
        return self

    def count(self):
        return len(self.times)


@pytest.fixture
def flaky_server(certs):
    """Factory: flaky_server(**HttpServer options) -> a started FlakyServer."""
    servers = []

    def make(**kw):
        s = FlakyServer(certs=certs, **kw)
        servers.append(s)
        return s.start()

    yield make
    for s in servers:
        s.stop()
