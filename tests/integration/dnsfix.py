"""DNS servers for the integration tests: BIND 9 and PowerDNS on loopback.

A real server on free ports, in a folder of its own, started once per
test session (per pytest-xdist worker: one test at a time uses it) and
stopped at the session's end.  Each test that asks for `bind_server` or
`pdns_server` gets it with the zone as new: example.test holding only
its SOA, NS and ns1 records, update_count() at 0; the serial goes on
from where the last test left it, so tests compare serials, never
expect a number.  A test may stop and start the server again (same
ports, same data) to test provider outages; one left stopped is started
again for the next test, and one that does not come back is replaced.
They run as the current user (root in CI: named then keeps root without
-u, pdns_server without setuid/setgid).
"""

import base64
import ipaddress
import json
import os
import secrets
import shutil
import signal
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from procfix import die_with_parent

from httpfix import free_port

__all__ = ["bind_server", "pdns_server", "BindServer", "PdnsServer",
           "_bind_shared", "_pdns_shared"]    # the last two: fixtures behind the first two

ZONE = "example.test"


def _free_port(udp=True):
    """A loopback port free for TCP (and UDP when asked), at this moment."""
    return free_port(udp=udp)


def _sort_addrs(lines):
    out = []
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            out.append(ipaddress.ip_address(line))
        except ValueError:
            continue
    out.sort(key=lambda a: (a.version, a))
    return [str(a) for a in out]


def dig(port, name, rtype, tcp=False):
    """Answer lines of `dig +short` against 127.0.0.1:port."""
    cmd = ["dig", "+short", "+norec", "+time=2", "+tries=1", "@127.0.0.1", "-p", str(port),
           name, rtype]
    if tcp:
        cmd.insert(1, "+tcp")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=15)
    if p.returncode != 0:
        raise RuntimeError(f"dig {name} {rtype} @127.0.0.1 -p {port} failed: {p.stdout}{p.stderr}")
    return [line for line in p.stdout.splitlines() if line and not line.startswith(";")]


class _Server:
    """What BIND and PowerDNS have in common: a process, ports, a log."""

    def __init__(self, d, what):
        self.dir = str(d)
        self.what = what
        self.proc = None
        self.port = None
        self.log = os.path.join(self.dir, what + ".log")
        self.log_mark = 0

    def _spawn(self, cmd):
        logf = open(self.log, "ab")
        self.log_mark = logf.tell()
        try:
            self.proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, cwd=self.dir,
                                         start_new_session=True,
                                         preexec_fn=die_with_parent)
        finally:
            logf.close()

    def _wait_ready(self, extra=None, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.what} exited with {self.proc.returncode}:\n{self.log_text()}")
            try:
                if dig(self.port, ZONE, "SOA") and (extra is None or extra()):
                    return
            except (RuntimeError, subprocess.TimeoutExpired):
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{self.what} did not answer within {timeout}s:\n{self.log_text()}")

    def log_text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def stop(self):
        """Stops the server (SIGTERM, then SIGKILL) and waits for it."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def query(self, name, rtype="A"):
        """The sorted addresses the server gives for name/type."""
        return _sort_addrs(dig(self.port, name, rtype))

    def serial(self):
        lines = dig(self.port, ZONE, "SOA")
        if not lines:
            raise RuntimeError(f"{self.what}: no SOA for {ZONE}")
        return int(lines[0].split()[2])


NAMED_CONF = """\
include "{dir}/keys.conf";
options {{
    directory "{dir}";
    pid-file "{dir}/named.pid";
    session-keyfile "{dir}/session.key";
    managed-keys-directory "{dir}";
    listen-on port {port} {{ 127.0.0.1; }};
    listen-on-v6 {{ none; }};
    recursion no;
    dnssec-validation no;
    notify no;
    allow-transfer {{ 127.0.0.1; }};
}};
controls {{ }};
statistics-channels {{ inet 127.0.0.1 port {stats_port} allow {{ 127.0.0.1; }}; }};
zone "{zone}" {{
    type primary;
    file "{zone}.db";
    update-policy {{
{grants}    }};
}};
"""

ZONE_FILE = """\
$TTL 60
@   IN SOA ns1.{zone}. hostmaster.{zone}. 1 3600 600 86400 60
@   IN NS  ns1.{zone}.
ns1 IN A   127.0.0.1
"""


class BindServer(_Server):
    """named (BIND 9) serving example.test, updatable with TSIG keys.

    The default key (key_name, key_secret, key_alg) is hmac-sha256;
    keys maps every algorithm in ALGS to (name, secret), all allowed to
    change anything in the zone.
    """

    ALGS = ("hmac-sha256", "hmac-sha512", "hmac-sha1")

    def __init__(self, d):
        super().__init__(d, "named")
        self.zone = ZONE
        self.keys = {}
        for alg in self.ALGS:
            name = "ddns-" + alg.replace("hmac-", "")
            size = 64 if alg == "hmac-sha512" else 32
            self.keys[alg] = (name, base64.b64encode(secrets.token_bytes(size)).decode())
        self.key_alg = "hmac-sha256"
        self.key_name, self.key_secret = self.keys[self.key_alg]
        self.stats_port = None
        self.updates_base = 0

    def _configure(self):
        with open(os.path.join(self.dir, "keys.conf"), "w") as f:
            for alg, (name, sec) in self.keys.items():
                f.write(f'key "{name}" {{ algorithm {alg}; secret "{sec}"; }};\n')
        grants = "".join(f"        grant {name} zonesub ANY;\n" for name, _ in self.keys.values())
        with open(os.path.join(self.dir, "named.conf"), "w") as f:
            f.write(NAMED_CONF.format(dir=self.dir, port=self.port, stats_port=self.stats_port,
                                      zone=self.zone, grants=grants))
        db = os.path.join(self.dir, self.zone + ".db")
        if not os.path.exists(db):
            with open(db, "w") as f:
                f.write(ZONE_FILE.format(zone=self.zone))
        conf = os.path.join(self.dir, "named.conf")
        p = subprocess.run(["named-checkconf", conf], capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("named-checkconf: " + p.stdout + p.stderr)

    def start(self):
        """Starts named; on the same ports and data when started before."""
        first = self.port is None
        for attempt in range(5):
            if first:
                self.port = _free_port()
                self.stats_port = _free_port(udp=False)
            self._configure()
            self.updates_base = 0       # a new process counts from 0
            # -g: foreground, log to stderr; no -u: keep the current
            # user (root in CI, which named accepts).
            self._spawn(["named", "-g", "-4", "-n", "1", "-c", os.path.join(self.dir, "named.conf")])
            try:
                self._wait_ready()
                # named keeps running when a port was taken meanwhile;
                # then the answers could come from someone else's server.
                with open(self.log, errors="replace") as f:
                    f.seek(self.log_mark)
                    fresh = f.read()
                if "address in use" in fresh:
                    raise RuntimeError(f"named: a port was taken:\n{self.log_text()}")
                return self
            except RuntimeError:
                self.stop()
                if not first or attempt == 4:
                    raise
        return self

    def _updates_done(self):
        url = f"http://127.0.0.1:{self.stats_port}/json/v1/server"
        with urllib.request.urlopen(url, timeout=5) as r:
            data = json.load(r)
        return int(data.get("nsstats", {}).get("UpdateDone", 0))

    def update_count(self):
        """Dynamic updates the server accepted since it started or was
        last reset (statistics channel)."""
        return self._updates_done() - self.updates_base

    def reset(self):
        """The zone as new: every name but the apex and ns1 deleted, the
        apex back to SOA and NS, ns1 to its A record, in one dynamic
        update (the serial goes up by one); update_count() counts from 0
        again."""
        p = subprocess.run(["dig", "+noall", "+answer", "+time=5", "+tries=1", "@127.0.0.1",
                            "-p", str(self.port), self.zone, "AXFR"],
                           capture_output=True, text=True, timeout=20)
        if p.returncode != 0 or "SOA" not in p.stdout:
            raise RuntimeError(f"named: AXFR of {self.zone}: {p.stdout}{p.stderr}")
        apex, ns1 = self.zone + ".", f"ns1.{self.zone}."
        lines = []
        for rr in p.stdout.splitlines():
            f = rr.split()
            if len(f) < 5:
                continue
            name, rtype, data = f[0].lower(), f[3].upper(), " ".join(f[4:])
            if name == apex and rtype == "SOA":
                continue
            if name == apex and rtype == "NS" and data.lower() == ns1:
                continue
            if name == ns1 and rtype == "A" and data == "127.0.0.1":
                continue
            lines.append(f"update delete {name} {rtype} {data}")
        if lines:
            script = (f"server 127.0.0.1 {self.port}\nzone {self.zone}\n" + "\n".join(lines)
                      + "\nsend\n")
            p = subprocess.run(["nsupdate", "-y",
                                f"{self.key_alg}:{self.key_name}:{self.key_secret}"],
                               input=script, capture_output=True, text=True, timeout=30)
            if p.returncode != 0:
                raise RuntimeError(f"named: resetting {self.zone}: {p.stdout}{p.stderr}")
        self.updates_base = self._updates_done()
        return self


class PdnsServer(_Server):
    """pdns_server (gsqlite3) serving example.test, with its HTTP API."""

    def __init__(self, d):
        super().__init__(d, "pdns")
        self.zone = ZONE
        self.api_key = "k-" + secrets.token_hex(16)
        self.api_port = None
        self.db = os.path.join(self.dir, "pdns.sqlite3")

    @property
    def dns_port(self):
        return self.port

    @property
    def api_url(self):
        return f"http://127.0.0.1:{self.api_port}"

    def _configure(self):
        if not os.path.exists(self.db):
            schema = "/usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql"
            with open(schema) as f, sqlite3.connect(self.db) as con:
                con.executescript(f.read())
        conf = {
            "launch": "gsqlite3",
            "gsqlite3-database": self.db,
            "local-address": "127.0.0.1",
            "local-port": self.port,
            "socket-dir": self.dir,
            "daemon": "no",
            "guardian": "no",
            "disable-syslog": "yes",
            "loglevel": "5",
            "security-poll-suffix": "",
            "webserver": "yes",
            "webserver-address": "127.0.0.1",
            "webserver-port": self.api_port,
            "webserver-allow-from": "127.0.0.1/32",
            "api": "yes",
            "api-key": self.api_key,
            # No caches: the tests read back right after each change.
            "cache-ttl": "0",
            "negquery-cache-ttl": "0",
            "query-cache-ttl": "0",
            "consistent-backends": "yes",
            # RFC 2136 from loopback, unsigned, for the rfc2136 provider's
            # tests against a second server (test_cname_rfc2136.py).
            "dnsupdate": "yes",
            "allow-dnsupdate-from": "127.0.0.0/8",
        }
        with open(os.path.join(self.dir, "pdns.conf"), "w") as f:
            for k, v in conf.items():
                f.write(f"{k}={v}\n")

    def api(self, method, path, body=None):
        """One API call; returns (status, parsed JSON or text)."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.api_url + path, data=data, method=method,
                                     headers={"X-API-Key": self.api_key,
                                              "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                raw = r.read()
                status = r.status
        except urllib.error.HTTPError as e:
            raw = e.read()
            status = e.code
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw.decode(errors="replace")

    def _api_ready(self):
        try:
            st, _ = self.api("GET", "/api/v1/servers/localhost")
            return st == 200
        except OSError:
            return False

    def _create_zone(self):
        st, body = self.api("GET", f"/api/v1/servers/localhost/zones?zone={self.zone}.")
        if st == 200 and body:
            return
        z = {
            "name": self.zone + ".",
            "kind": "Native",
            "nameservers": [],
            "soa_edit_api": "INCREASE",
            "rrsets": [
                {"name": self.zone + ".", "type": "SOA", "ttl": 60, "records": [
                    {"content": f"ns1.{self.zone}. hostmaster.{self.zone}. 1 3600 600 86400 60",
                     "disabled": False}]},
                {"name": self.zone + ".", "type": "NS", "ttl": 60, "records": [
                    {"content": f"ns1.{self.zone}.", "disabled": False}]},
                {"name": f"ns1.{self.zone}.", "type": "A", "ttl": 60, "records": [
                    {"content": "127.0.0.1", "disabled": False}]},
            ],
        }
        st, body = self.api("POST", "/api/v1/servers/localhost/zones", z)
        if st != 201:
            raise RuntimeError(f"pdns: creating {self.zone}: {st} {body}")

    def reset(self):
        """Every zone deleted, example.test made again as new."""
        st, zones = self.api("GET", "/api/v1/servers/localhost/zones")
        if st != 200:
            raise RuntimeError(f"pdns: listing zones: {st} {zones}")
        for z in zones:
            st, body = self.api("DELETE", f"/api/v1/servers/localhost/zones/{z['id']}")
            if st != 204:
                raise RuntimeError(f"pdns: deleting {z['name']}: {st} {body}")
        self._create_zone()
        self._wait_ready()
        return self

    def start(self):
        """Starts pdns_server; on the same ports and data when started before."""
        first = self.port is None
        for attempt in range(5):
            if first:
                self.port = _free_port()
                self.api_port = _free_port(udp=False)
            self._configure()
            self._spawn(["pdns_server", "--config-dir=" + self.dir])
            try:
                deadline = time.monotonic() + 20
                while not self._api_ready():
                    if self.proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"pdns API did not start:\n{self.log_text()}")
                    time.sleep(0.1)
                self._create_zone()
                self._wait_ready()
                return self
            except RuntimeError:
                self.stop()
                if not first or attempt == 4:
                    raise
        return self


def _need(*progs):
    missing = [p for p in progs if shutil.which(p) is None]
    if missing:
        pytest.skip("not installed: " + ", ".join(missing))


class _Shared:
    """One server of a kind for the session, handed to one test at a time."""

    def __init__(self, cls, factory, what):
        self.cls = cls
        self.factory = factory
        self.what = what
        self.srv = None

    def _fresh(self):
        srv = self.cls(self.factory.mktemp(self.what))
        try:
            srv.start()
        except BaseException:
            srv.stop()
            raise
        self.srv = srv
        return srv

    def get(self):
        """The server, running, its zone as new."""
        srv = self.srv
        if srv is None:
            return self._fresh()
        try:
            if not srv.running():
                srv.start()         # a test left it stopped
            return srv.reset()
        except (RuntimeError, OSError, subprocess.SubprocessError):
            # Did not come back, or cannot be reset: another one.
            srv.stop()
            self.srv = None
            return self._fresh()

    def stop(self):
        if self.srv is not None:
            self.srv.stop()
            self.srv = None


@pytest.fixture(scope="session")
def _bind_shared(tmp_path_factory):
    shared = _Shared(BindServer, tmp_path_factory, "bind")
    yield shared
    shared.stop()


@pytest.fixture(scope="session")
def _pdns_shared(tmp_path_factory):
    shared = _Shared(PdnsServer, tmp_path_factory, "pdns")
    yield shared
    shared.stop()


@pytest.fixture
def bind_server(_bind_shared):
    """BIND serving example.test as new (see the module's comment)."""
    _need("named", "named-checkconf", "dig", "nsupdate")
    return _bind_shared.get()


@pytest.fixture
def pdns_server(_pdns_shared):
    """PowerDNS serving example.test as new (see the module's comment)."""
    _need("pdns_server", "dig")
    return _pdns_shared.get()
