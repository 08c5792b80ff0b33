"""HTTP(S) health endpoints on loopback for the integration tests.

`certs` (session): a test CA made with the openssl CLI, and server
certificates signed by it: "localhost" (with IP SANs 127.0.0.1 and ::1),
"other.test", an expired one, and a self-signed one.

`http_server` (function): a factory that starts real servers on an
ephemeral loopback port, each in a background thread, and stops them all
at teardown. A server's behaviour can be changed while it runs:

    srv = http_server()                       # http://127.0.0.1:PORT/health
    srv = http_server(tls=True, cert="other") # HTTPS with other.test's cert
    srv = http_server(family=6)               # http://[::1]:PORT/health
    srv.set(status=503, body="down", delay=0.5)
    srv.stop(); srv.start()                   # refuse connections, come back
    srv.requests[-1].method, .path, .host, .user_agent, .headers
"""

import os
import random
import socket
import socketserver
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

__all__ = ["certs", "http_server", "free_port", "has_ipv6", "Certs",
           "HttpServer", "Request", "raw_server", "RawServer"]


def _below_ephemeral():
    """Ports just below the kernel's ephemeral range.  bind() to port 0,
    as every server here does, never hands these out, so a port picked
    here (for nothing, to be refused; or for a server not started yet)
    is not given meanwhile to a server of another test, or of another
    run of the suite on the same machine."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    return range(max(1024, low - 12000), low)


def free_port(family=4, udp=False):
    """A loopback port nobody uses right now (TCP, and UDP when asked)."""
    af, host = (socket.AF_INET, "127.0.0.1") if family == 4 else (socket.AF_INET6, "::1")
    ports = _below_ephemeral()
    for _ in range(200):
        port = random.choice(ports)
        try:
            with socket.socket(af, socket.SOCK_STREAM) as t:
                t.bind((host, port))
                if udp:
                    with socket.socket(af, socket.SOCK_DGRAM) as u:
                        u.bind((host, port))
            return port
        except OSError:
            continue
    raise RuntimeError("no free loopback port")


def has_ipv6():
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


# ---------------------------------------------------------------- certificates

class Certs:
    """Paths of the test CA and the server certificates (PEM)."""

    def __init__(self, d):
        self.dir = d
        self.ca = os.path.join(d, "ca.pem")          # give as caFile
        self.ca_key = os.path.join(d, "ca.key")
        # name -> (cert, key); names are what http_server(cert=...) takes.
        self.pairs = {}

    def cert(self, name):
        return self.pairs[name][0]

    def key(self, name):
        return self.pairs[name][1]


def _openssl(*args, cwd):
    p = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)}: {p.stderr.strip()}")


_EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def _leaf(d, name, san, days=30, ca=True):
    """A server key and certificate; signed by the CA unless ca is False."""
    key, crt, csr, ext = (os.path.join(d, f"{name}.{x}") for x in ("key", "pem", "csr", "ext"))
    with open(ext, "w") as f:
        f.write(f"subjectAltName = {san}\n"
                "basicConstraints = critical, CA:FALSE\n"
                "keyUsage = critical, digitalSignature\n"
                "extendedKeyUsage = serverAuth\n")
    cn = san.split(",")[0].split(":", 1)[1]
    if ca:
        _openssl("req", "-new", *_EC, "-keyout", key, "-out", csr, "-subj", f"/CN={cn}", cwd=d)
        _openssl("x509", "-req", "-in", csr, "-CA", "ca.pem", "-CAkey", "ca.key",
                 "-set_serial", str(int.from_bytes(os.urandom(8), "big")),
                 "-days", str(days), "-extfile", ext, "-out", crt, cwd=d)
    else:
        _openssl("req", "-x509", *_EC, "-keyout", key, "-out", crt, "-days", str(days),
                 "-subj", f"/CN={cn}", "-addext", f"subjectAltName = {san}", cwd=d)
    return crt, key


@pytest.fixture(scope="session")
def certs(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("pki"))
    c = Certs(d)
    _openssl("req", "-x509", *_EC, "-keyout", "ca.key", "-out", "ca.pem", "-days", "30",
             "-subj", "/CN=ddup test CA",
             "-addext", "basicConstraints = critical, CA:TRUE",
             "-addext", "keyUsage = critical, keyCertSign, cRLSign", cwd=d)
    local = "DNS:localhost, IP:127.0.0.1, IP:::1"
    c.pairs["localhost"] = _leaf(d, "localhost", local)
    c.pairs["other"] = _leaf(d, "other", "DNS:other.test")
    # -days -1: valid from now until yesterday, i.e. already expired.
    c.pairs["expired"] = _leaf(d, "expired", local, days=-1)
    c.pairs["selfsigned"] = _leaf(d, "selfsigned", local, ca=False)
    return c


# ---------------------------------------------------------------- servers

class Request:
    """One request as the server received it."""

    def __init__(self, method, path, headers):
        self.method = method
        self.path = path
        self.headers = headers          # dict, names as sent
        low = {k.lower(): v for k, v in headers.items()}
        self.host = low.get("host")
        self.user_agent = low.get("user-agent")

    def __repr__(self):
        return f"<{self.method} {self.path} Host={self.host!r} UA={self.user_agent!r}>"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"       # the body ends when the connection does

    def setup(self):
        srv = self.server.owner
        if srv.tls_ctx is not None:
            # Handshake here, in the connection's thread, not in accept().
            self.request.settimeout(10)
            self.request = srv.tls_ctx.wrap_socket(self.request, server_side=True)
            srv.handshakes.append(self.request.session_reused)
        super().setup()

    def log_message(self, fmt, *args):
        pass

    def _answer(self):
        srv = self.server.owner
        b = srv.behaviour
        srv.requests.append(Request(self.command, self.path, dict(self.headers.items())))
        if b["delay"]:
            srv._stopping.wait(b["delay"])
        if b["reset"]:
            # SO_LINGER 0: close() sends RST instead of FIN.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.close_connection = True
            # The files hold the socket open; all three must go for the RST.
            self.rfile.close()
            self.wfile.close()
            self.connection.close()
            return
        body = b["body"]
        self.send_response(b["status"])
        self.send_header("Content-Type", "text/plain")
        for k, v in (b["headers"] or {}).items():
            self.send_header(k, v)
        if not b["endless"]:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command == "HEAD":
            return
        try:
            for i, piece in enumerate(b["pieces"]):
                if i > 0:
                    srv._stopping.wait(0.05)
                self.wfile.write(piece)
            chunk = b"x" * 16384
            # An endless body: stop when the client gives up (or at stop()).
            while b["endless"] and not srv._stopping.is_set():
                self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            pass

    do_GET = _answer
    do_HEAD = _answer
    do_POST = _answer


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def server_bind(self):
        # HTTPServer.server_bind() does a reverse lookup (getfqdn): skip it.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "localhost", self.server_address[1]

    def handle_error(self, request, client_address):
        pass    # clients that hang up or reject our certificate are the test


class _Server6(_Server):
    address_family = socket.AF_INET6


class HttpServer:
    """A loopback HTTP(S) server whose answers the test controls."""

    def __init__(self, family=4, tls=False, cert="localhost", certs=None, path="/health",
                 port=0, **behaviour):
        self.family = family
        self.addr = "127.0.0.1" if family == 4 else "::1"
        self.tls = tls
        self.tls_ctx = None
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(certs.cert(cert), certs.key(cert))
            self.tls_ctx = ctx
        self.path = path
        self.port = port
        self.requests = []
        self.handshakes = []            # TLS: whether each resumed a session
        self.behaviour = {"status": 200, "body": b"ok\n", "pieces": [b"ok\n"], "delay": 0,
                          "headers": None, "endless": False, "reset": False}
        self.set(**behaviour)
        self._srv = None
        self._thread = None
        self._stopping = threading.Event()

    @property
    def hostport(self):
        h = self.addr if self.family == 4 else f"[{self.addr}]"
        return f"{h}:{self.port}"

    @property
    def url(self):
        return f"{'https' if self.tls else 'http'}://{self.hostport}{self.path}"

    def url_for(self, host, path=None):
        """The URL with another host name (e.g. localhost), same port."""
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}{path or self.path}"

    def set(self, status=None, body=None, delay=None, headers=None, endless=None, reset=None):
        """Changes how the next requests are answered: body is str, bytes or
        a list of pieces; delay is in seconds before the answer; endless
        repeats "x" after the body until the client hangs up; reset sends
        a TCP RST instead of an answer."""
        b = dict(self.behaviour)
        if status is not None:
            b["status"] = int(status)
        if body is not None:
            # A list is sent piece by piece, 50ms apart, so that the client
            # sees each piece in a read of its own.
            pieces = body if isinstance(body, (list, tuple)) else [body]
            b["pieces"] = [p.encode() if isinstance(p, str) else bytes(p) for p in pieces]
            b["body"] = b"".join(b["pieces"])
        if delay is not None:
            b["delay"] = float(delay)
        if headers is not None:
            b["headers"] = dict(headers)
        if endless is not None:
            b["endless"] = bool(endless)
        if reset is not None:
            b["reset"] = bool(reset)
        self.behaviour = b      # one assignment: handlers see old or new, whole
        return self

    def start(self):
        """Listens (again) on self.port; the first start picks a free port."""
        if self._srv is not None:
            return self
        cls = _Server if self.family == 4 else _Server6
        self._stopping = threading.Event()
        srv = None
        for _ in range(50):
            try:
                srv = cls((self.addr, self.port), _Handler)
                break
            except OSError:
                if self.port == 0:
                    raise
                time.sleep(0.05)   # the old socket may still be closing
        if srv is None:
            raise RuntimeError(f"cannot listen on {self.hostport} again")
        srv.owner = self
        self.port = srv.server_address[1]
        self._srv = srv
        self._thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True, name=f"http-{self.port}")
        self._thread.start()
        return self

    def stop(self):
        """Stops listening: connections to the port are refused."""
        if self._srv is None:
            return self
        self._stopping.set()        # ends delays and endless bodies
        self._srv.shutdown()
        self._srv.server_close()
        self._thread.join(5)
        self._srv = None
        self._thread = None
        return self

    @property
    def running(self):
        return self._srv is not None

    def __repr__(self):
        return f"<HttpServer {self.url} {'up' if self.running else 'down'}>"


@pytest.fixture
def http_server(certs):
    """Factory: http_server(status=, body=, delay=, tls=, cert=, family=, path=, headers=,
    endless=, reset=) -> a started HttpServer; all are stopped at teardown."""
    servers = []

    def make(**kw):
        s = HttpServer(certs=certs, **kw)
        servers.append(s)
        return s.start()

    yield make
    for s in servers:
        s.stop()


# ---------------------------------------------------------------- hostile servers

class RawServer:
    """Loopback TCP servers that misbehave on purpose, all served by one
    asyncio loop in a background thread, however many sockets listen.

    behaviour, per connection, after reading the request head (except
    "silent" and "tls_stall", which read whatever comes and never answer,
    and "garbage", which answers the first bytes that come):
      "ok"                 HTTP/1.1 200 with Content-Length to every request,
                           connection kept open (keep-alive)
      "silent"             accept and never answer
      "tls_stall"          the same, for https:// URLs: the ClientHello
                           gets no answer
      "drip"               a valid 200 answer, one byte a second
      "drip_body"          status and headers at once, then the body one
                           byte a second
      "endless_body"       200 without Content-Length, then "x" forever
      "endless_headers"    a status line, then header lines forever
      "long_header"        a 200 whose one header line is 2 MiB long
      "garbage"            bytes that are neither HTTP nor TLS, then close
      "reset_after_headers" a 200 head announcing a long body, part of it,
                           then a TCP RST

    listen: count sockets on each address of addrs (ports chosen by the
    kernel); .urls lists one URL per socket (scheme https for tls_stall),
    .paths the request paths received, .conns the connections accepted.
    """

    def __init__(self, behaviour, count=1, addrs=("127.0.0.1",), path="/health"):
        import asyncio
        self._asyncio = asyncio
        self.behaviour = behaviour
        self.count = count
        self.addrs = list(addrs)
        self.path = path
        self.paths = []
        self.conns = 0
        self.sockets = []       # (addr, port)
        self._loop = None
        self._thread = None
        self._servers = []
        self._writers = set()

    @property
    def urls(self):
        scheme = "https" if self.behaviour == "tls_stall" else "http"
        return [f"{scheme}://{a}:{p}{self.path}" for a, p in self.sockets]

    @property
    def url(self):
        return self.urls[0]

    def start(self):
        asyncio = self._asyncio
        ready = threading.Event()
        errors = []

        def main():
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)

            async def listen():
                for a in self.addrs:
                    for _ in range(self.count):
                        srv = await asyncio.start_server(self._conn, a, 0, backlog=512)
                        self._servers.append(srv)
                        self.sockets.append((a, srv.sockets[0].getsockname()[1]))
            try:
                loop.run_until_complete(listen())
            except Exception as e:      # noqa: BLE001  (reported to start())
                errors.append(e)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=main, daemon=True, name="raw-server")
        self._thread.start()
        ready.wait(30)
        if errors:
            self.stop()
            raise errors[0]
        return self

    async def _head(self, reader):
        """The request head; its path is recorded."""
        data = b""
        while b"\r\n\r\n" not in data and len(data) < 65536:
            chunk = await reader.read(4096)
            if not chunk:
                break
            data += chunk
        line = data.split(b"\r\n", 1)[0].split()
        if len(line) >= 2:
            self.paths.append(line[1].decode(errors="replace"))
        return data

    async def _conn(self, reader, writer):
        asyncio = self._asyncio
        self.conns += 1
        self._writers.add(writer)
        b = self.behaviour
        try:
            if b in ("silent", "tls_stall"):
                while await reader.read(4096):
                    pass
                return
            if b == "garbage":
                # Whatever came (an HTTP request, a ClientHello) is answered.
                await reader.read(4096)
                writer.write(b"\x16\x03\x01\x00\xffSSH-2.0-nonsense\r\n\x00\x01\x02"
                             + bytes(range(256)) * 4)
                await writer.drain()
                return
            head = await self._head(reader)
            if b == "ok":
                # Keep-alive: every request on the connection is answered;
                # the client decides when the connection ends.
                while head.endswith(b"\r\n\r\n"):
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                 b"Content-Length: 3\r\n\r\nok\n")
                    await writer.drain()
                    head = await self._head(reader)
            elif b in ("drip", "drip_body"):
                head = b"HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n"
                body = b"ok, slowly, slowly\r\n"
                if b == "drip_body":
                    writer.write(head)
                    data = body
                else:
                    data = head + body
                for i in range(len(data)):
                    writer.write(data[i:i + 1])
                    await writer.drain()
                    await asyncio.sleep(1)
            elif b == "endless_body":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")
                chunk = b"x" * 16384
                while True:
                    writer.write(chunk)
                    await writer.drain()
            elif b == "endless_headers":
                writer.write(b"HTTP/1.1 200 OK\r\n")
                line = b"X-Filler: " + b"y" * 100 + b"\r\n"
                while True:
                    writer.write(line * 100)
                    await writer.drain()
            elif b == "long_header":
                # One header line of 2 MiB, far past libcurl's limit.
                writer.write(b"HTTP/1.1 200 OK\r\nX-Filler: " + b"y" * (2 << 20)
                             + b"\r\nContent-Length: 3\r\n\r\nok\n")
                await writer.drain()
            elif b == "reset_after_headers":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                             b"Content-Length: 100000\r\n\r\n" + b"x" * 1000)
                await writer.drain()
                await asyncio.sleep(0.3)
                sock = writer.get_extra_info("socket")
                # SO_LINGER 0: close() sends RST instead of FIN.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                b"\x01\x00\x00\x00\x00\x00\x00\x00")
                writer.transport.abort()
                return
            else:
                raise ValueError(f"unknown behaviour {b}")
        except (ConnectionError, OSError, asyncio.CancelledError):
            pass
        finally:
            self._writers.discard(writer)
            if not writer.transport.is_closing():
                writer.close()

    def stop(self):
        loop = self._loop
        if loop is None:
            return self

        async def shutdown():
            for s in self._servers:
                s.close()
            for w in list(self._writers):
                w.transport.abort()
            tasks = [t for t in self._asyncio.all_tasks() if t is not self._asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await self._asyncio.gather(*tasks, return_exceptions=True)
            loop.stop()
        if loop.is_running():
            self._asyncio.run_coroutine_threadsafe(shutdown(), loop)
        self._thread.join(10)
        self._loop = None
        return self

    def __repr__(self):
        return f"<RawServer {self.behaviour} x{len(self.sockets)}>"


@pytest.fixture
def raw_server():
    """Factory: raw_server(behaviour, count=1, addrs=("127.0.0.1",)) -> a
    started RawServer; all are stopped at teardown."""
    servers = []

    def make(behaviour, **kw):
        s = RawServer(behaviour, **kw)
        servers.append(s)
        return s.start()

    yield make
    for s in servers:
        s.stop()
