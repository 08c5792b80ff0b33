"""Check programs for the integration tests (ddup.ini(5), CHECK TYPES).

`programs` (function): a factory of shell scripts in the test's own
folder, each a check program the test writes:

    p = programs("echo 'OK - fine'; exit 0")    # p.path, p.dir
    p.pids()                                     # pids it wrote to p.dir/pids

`tcp_listener` (function): a factory of loopback TCP listeners that
accept and close each connection, for check_tcp; stopped at teardown.

`pid_gone(pid)`: whether a process has ended (a zombie has).
"""

import os
import socket
import stat
import threading
import time

import pytest

__all__ = ["programs", "tcp_listener", "pid_gone", "Program", "TcpListener"]


class Program:
    """A /bin/sh script at DIR/NAME; what it writes to $HERE goes beside it."""

    def __init__(self, folder, body, name):
        os.makedirs(folder, exist_ok=True)
        self.dir = str(folder)
        self.path = os.path.join(self.dir, name)
        with open(self.path, "w") as f:
            f.write("#!/bin/sh\nHERE=%s\n%s\n" % (self.dir, body))
        os.chmod(self.path, stat.S_IRWXU)

    def read(self, name):
        try:
            with open(os.path.join(self.dir, name)) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def pids(self):
        """The pids the script wrote, one a line, to $HERE/pids."""
        return [int(x) for x in self.read("pids").split()]


@pytest.fixture
def programs(tmp_path):
    count = [0]

    def make(body, name=None):
        count[0] += 1
        n = name or "check%d" % count[0]
        return Program(tmp_path / ("prog-" + n), body, n)

    return make


def pid_gone(pid):
    """Whether pid has ended: no such process, or only its zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return True
    return state in ("Z", "X")


class TcpListener:
    """Accepts on addr:PORT and closes each connection at once."""

    def __init__(self, addr="127.0.0.1"):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((addr, 0))
        self.sock.listen(16)
        self.addr = addr
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        self.sock.settimeout(0.05)
        while not self._stop.is_set():
            try:
                c, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.accepted += 1
            c.close()

    def wait_accepted(self, n=1, timeout=10):
        """The count once it reaches n, or at the timeout: the kernel
        completes a handshake before this thread's accept() counts it,
        which on a loaded machine can be after the client has gone."""
        deadline = time.monotonic() + timeout
        while self.accepted < n and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.accepted

    def stop(self):
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


@pytest.fixture
def tcp_listener():
    made = []

    def make(addr="127.0.0.1"):
        t = TcpListener(addr)
        made.append(t)
        return t

    yield make
    for t in made:
        t.stop()
