"""TCP and TLS listeners on loopback for the tcp:// and tls:// checks.

`stream_server` (function): a factory of real servers, each a listening
socket on an ephemeral loopback port served by a background thread (a
thread a connection), all stopped at teardown:

    srv = stream_server("banner")              # tcp://127.0.0.1:PORT
    srv = stream_server("echo", tls="localhost", family=6)
    srv.url, srv.tls_url, srv.conns[-1].got, srv.conns[-1].eof_at

What a server does with each connection (mode):
    close    accepts and closes at once
    banner   sends "220 mail ESMTP\\r\\n", then reads until the client closes
    split    the banner in two writes SPLIT_S apart, then reads until closed
    echo     reads a line; "PING" answers "+PONG\\r\\n", anything else
             "-ERR unknown\\r\\n", then closes
    hang     sends nothing, reads until the client closes
    reset    closes with a TCP reset (SO_LINGER 0) at once
    chatter  sends 5,000 bytes without the text, then holds the connection
    bye      sends "220 going away\\r\\n" and closes
tls names a certificate of httpfix's `certs` (the suite's test CA): the
connection is TLS first.
"""

import socket
import ssl
import struct
import threading
import time

import pytest

from conftest import TIME_SCALE

__all__ = ["stream_server", "StreamServer", "BANNER", "SPLIT_S"]

BANNER = b"220 mail ESMTP\r\n"
SPLIT_S = 0.5 * TIME_SCALE      # between the two writes of "split"


class Conn:
    """One connection as the server saw it."""

    def __init__(self):
        self.got = b""            # bytes the client sent
        self.eof_at = None        # time.monotonic() the client closed
        self.error = None         # a handshake the client refused, say


class StreamServer:
    def __init__(self, mode, certs=None, tls=None, family=4):
        self.mode = mode
        self.family = family
        af, host = (socket.AF_INET, "127.0.0.1") if family == 4 else (socket.AF_INET6, "::1")
        self.host = host if family == 4 else f"[{host}]"
        self.ctx = None
        if tls is not None:
            self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.ctx.load_cert_chain(certs.cert(tls), certs.key(tls))
        self.sock = socket.socket(af, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"{'tls' if self.ctx else 'tcp'}://{self.host}:{self.port}"

    def _accept(self):
        while not self.stopping.is_set():
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            conn = Conn()
            with self.lock:
                self.conns.append(conn)
            threading.Thread(target=self._serve, args=(c, conn), daemon=True).start()

    def _read_until_eof(self, c, conn):
        c.settimeout(0.2)
        while not self.stopping.is_set():
            try:
                d = c.recv(4096)
            except socket.timeout:
                continue
            except (OSError, ssl.SSLError):
                break
            if not d:
                break
            conn.got += d
        conn.eof_at = time.monotonic()

    def _serve(self, c, conn):
        try:
            if self.mode == "reset":
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                c.close()
                return
            if self.ctx is not None:
                c.settimeout(5)
                c = self.ctx.wrap_socket(c, server_side=True)
            if self.mode == "close":
                return
            if self.mode in ("banner", "bye"):
                c.sendall(BANNER if self.mode == "banner" else b"220 going away\r\n")
                if self.mode == "bye":
                    return
            elif self.mode == "split":
                c.sendall(BANNER[:6])
                time.sleep(SPLIT_S)
                c.sendall(BANNER[6:])
            elif self.mode == "echo":
                c.settimeout(5)
                line = b""
                while not line.endswith(b"\n"):
                    d = c.recv(100)
                    if not d:
                        break
                    line += d
                conn.got = line
                c.sendall(b"+PONG\r\n" if line.rstrip(b"\r\n") == b"PING" else b"-ERR unknown\r\n")
                return
            elif self.mode == "chatter":
                c.sendall(b"x" * 5000)
            self._read_until_eof(c, conn)
        except (OSError, ssl.SSLError) as e:
            conn.error = e
        finally:
            try:
                c.close()
            except OSError:
                pass

    def stop(self):
        self.stopping.set()
        try:
            self.sock.close()
        except OSError:
            pass
        self.thread.join(timeout=5)


@pytest.fixture
def stream_server(request):
    servers = []

    def make(mode, tls=None, family=4):
        certs = request.getfixturevalue("certs") if tls is not None else None
        s = StreamServer(mode, certs=certs, tls=tls, family=family)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.stop()
