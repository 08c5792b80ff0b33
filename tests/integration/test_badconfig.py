"""Broken configuration files through the built ddup-check.

Every file of the table must give exit 2 and a message naming the file
and, where the problem has one, its line; and must leave alone what a
previous good run left: the state file (byte for byte, with its -wal)
and DNS (the SOA serial and update count of a real BIND).

One BIND and one health endpoint serve the whole module; a good run at
the start leaves a state file, and each case compares against it.
"""

import hashlib
import os
import random
import shutil
import stat
import subprocess

import pytest

from conftest import DDUP
from dnsfix import BindServer, _need
from httpfix import HttpServer

ZONE = "example.test"
NAME = "app.example.test"


class World:
    """A good configuration, its state file after one run, and BIND."""

    def __init__(self, d, bind, http):
        self.dir = d
        self.bind = bind
        self.http = http
        self.state = os.path.join(d, "state", "ddup.db")
        self.good = self.lines()

    def lines(self):
        b = self.bind
        return [
            f"state = {self.state}",                       # 1
            "interval = 30s",                              # 2
            "",                                            # 3
            "[provider dns]",                              # 4
            "type = rfc2136",                              # 5
            f"server = 127.0.0.1:{b.port}",                # 6
            f"zone = {ZONE}",                              # 7
            f"keyName = {b.key_name}",                     # 8
            f"keyAlgorithm = {b.key_alg}",                 # 9
            f"keySecret = {b.key_secret}",                 # 10
            "timeout = 3s",                                # 11
            "",                                            # 12
            f"[domain {NAME}]",                            # 13
            "provider = dns",                              # 14
            "ttl = 60",                                    # 15
            "attempts = 1",                                # 16
            "",                                            # 17
            "[endpoint a]",                                # 18
            f"url = {self.http.url}",                      # 19
            "ip = 192.0.2.1",                              # 20
            "priority = 0",                                # 21
        ]

    def snapshot(self):
        """Digests of the state files and what BIND holds."""
        files = {}
        for suffix in ("", "-wal", "-shm", "-journal"):
            p = self.state + suffix
            if os.path.exists(p):
                with open(p, "rb") as f:
                    files[suffix] = hashlib.sha256(f.read()).hexdigest()
        return files, self.bind.serial(), self.bind.update_count(), self.bind.query(NAME, "A")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    _need("named", "named-checkconf", "dig")
    d = tmp_path_factory.mktemp("badconfig")
    bd = d / "bind"
    bd.mkdir()
    bind = BindServer(bd)
    http = HttpServer()
    try:
        bind.start()
        http.start()
        w = World(str(d), bind, http)
        path = os.path.join(w.dir, "good.ini")
        with open(path, "w") as f:
            f.write("\n".join(w.good) + "\n")
        os.chmod(path, 0o600)
        p = subprocess.run([DDUP, "-c", path], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p
        assert bind.query(NAME, "A") == ["192.0.2.1"]
        yield w
    finally:
        http.stop()
        bind.stop()


# ---------------------------------------------------------------- the table
#
# Each case: id -> (make, line, words).  make(world) returns the file's
# content (str or bytes); line is the line the message must name (None:
# the problem has no line); words must all appear in the message.

def repl(n, text):
    """The good file with line n (1-based) replaced by text (may be several lines)."""
    def make(w):
        ls = list(w.good)
        ls[n - 1] = text
        return "\n".join(ls) + "\n"
    return make


def after(n, text):
    """The good file with text inserted after line n."""
    def make(w):
        ls = list(w.good)
        ls.insert(n, text)
        return "\n".join(ls) + "\n"
    return make


def drop(n):
    def make(w):
        ls = list(w.good)
        del ls[n - 1]
        return "\n".join(ls) + "\n"
    return make


def append(text):
    def make(w):
        return "\n".join(w.good) + "\n" + text + "\n"
    return make


def raw(data):
    return lambda w: data


def junk(w):
    rnd = random.Random(1234)
    return bytes(rnd.randrange(256) for _ in range(4096))


PAD = "; " + "x" * 60 + "\n"
TEN_MB_LINES = (10 * 1024 * 1024) // len(PAD)


def ten_mb(w):
    # A valid file padded with 10 MB of comments, then one bad line.
    return "\n".join(w.good) + "\n" + PAD * TEN_MB_LINES + "bogus line without equals\n"


def over_cap(w):
    # The same, padded past the cap of 64 MiB.
    n = (64 * 1024 * 1024) // len(PAD) + 1
    return "\n".join(w.good) + "\n" + PAD * n + "bogus line without equals\n"


def huge_line(w):
    ls = list(w.good)
    ls[18] = "url = http://127.0.0.1:1/" + "a" * (1024 * 1024)
    return "\n".join(ls) + "\n"


CASES = {
    # --- syntax
    "empty-file": (raw(""), None, []),
    "only-comments": (raw("; nothing here\n# nor here\n"), None, []),
    "unclosed-section": (repl(13, f"[domain {NAME}"), 13, []),
    "line-without-equals": (after(15, "ttl 60"), 16, []),
    "repeated-key": (after(15, "ttl = 90"), 16, ["ttl"]),
    "indented-key": (after(15, "   attempts = 3"), 16, []),
    "line-over-199": (repl(19, "url = http://127.0.0.1:1/" + "a" * 200), 19, []),
    "line-of-100KB": (repl(19, "url = http://127.0.0.1:1/" + "a" * 100000), 19, []),
    "line-of-1MB": (huge_line, 19, []),
    "binary-junk": (junk, None, []),
    "nul-in-value": (raw(None), 15, []),                 # filled in below
    "nul-at-start": (raw(None), 1, []),                  # filled in below
    # Read whole, the bad line named; above 64 MiB the file is refused
    # whole, before any line is read.
    "ten-MB-file": (ten_mb, 21 + TEN_MB_LINES + 1, []),       # the good file has 21 lines
    "file-over-64MiB": (over_cap, None, ["too large (more than 64 MiB)"]),
    # --- sections
    "unknown-section-kind": (after(17, "[server x]"), 18, ["server"]),
    "endpoint-before-domain": (lambda w: "\n".join(w.good[:3] + ["[endpoint early]",
                                                                 "url = http://127.0.0.1:1/",
                                                                 "ip = 192.0.2.9"] + w.good[3:]) + "\n",
                               4, ["endpoint"]),
    "domain-without-name": (repl(13, "[domain]"), 13, ["domain"]),
    "domain-without-endpoint": (append("[domain b.example.test]\nprovider = dns"), 22, ["endpoint"]),
    "duplicate-domain": (append(f"[domain {NAME}]\nprovider = dns\n[endpoint z]\n"
                                "url = http://127.0.0.1:1/\nip = 192.0.2.7"), 22, [NAME]),
    # --- unknown keys
    "unknown-top-key": (after(2, "intervall = 30s"), 3, ["intervall"]),
    "unknown-provider-key": (after(11, "retries = 3"), 12, ["retries"]),
    "unknown-domain-key": (after(16, "ttll = 60"), 17, ["ttll"]),
    "unknown-endpoint-key": (append("weight = 5"), 22, ["weight"]),
    # --- missing keys
    "missing-url": (drop(19), 18, ["url"]),
    "missing-ip": (drop(20), 18, ["ip"]),
    "missing-provider": (drop(14), 13, ["provider"]),
    "provider-missing-zone": (drop(7), 4, ["zone"]),
    "provider-missing-server": (drop(6), 4, ["server"]),
    "provider-without-type": (drop(5), 4, ["type"]),
    # --- bad values
    "bad-ip-octet": (repl(20, "ip = 192.0.2.300"), 20, ["192.0.2.300"]),
    "ip-is-a-name": (repl(20, "ip = www.example.com"), 20, ["www.example.com"]),
    "bad-url-scheme": (repl(19, "url = ftp://127.0.0.1/health"), 19, ["ftp"]),
    "bad-url-empty-host": (repl(19, "url = http://"), 19, ["url"]),
    "bad-url-ipv6": (repl(19, "url = http://[::1/health"), 19, ["url"]),
    "bad-duration": (after(16, "timeout = fast"), 17, ["fast"]),
    "bad-interval": (repl(2, "interval = -5s"), 2, ["interval"]),
    "bad-status": (after(16, "expectStatus = 2xxx"), 17, ["2xxx"]),
    "status-out-of-range": (after(16, "expectStatus = 600"), 17, ["600"]),
    "bad-method": (after(16, "method = POST"), 17, ["POST"]),
    "ttl-zero": (repl(15, "ttl = 0"), 15, ["ttl"]),
    "ttl-not-a-number": (repl(15, "ttl = sixty"), 15, ["ttl"]),
    "ttl-huge": (repl(15, "ttl = 99999999999999999999999"), 15, ["ttl"]),
    "attempts-zero": (repl(16, "attempts = 0"), 16, ["attempts"]),
    "recoverAfter-negative": (after(16, "recoverAfter = -1"), 17, ["recoverAfter"]),
    "maxParallel-zero": (after(2, "maxParallel = 0"), 3, ["maxParallel"]),
    "maxParallel-huge": (after(2, "maxParallel = 1e99"), 3, ["maxParallel"]),
    "priority-negative": (repl(21, "priority = -1"), 21, ["priority"]),
    "priority-huge": (repl(21, "priority = 123456789012345678901234567890"), 21, ["priority"]),
    "logFormat-xml": (after(2, "logFormat = xml"), 3, ["xml"]),
    "empty-state-path": (repl(1, "state ="), 1, ["state"]),
    # ddup.ini(5), SEVERAL CHECKERS: comma-separated, a name of letters, digits, '-', '_', '.'.
    "checkers-blank-in-name": (after(2, "checkers = alpha-1, two words\nchecker = alpha-1"), 3,
                               ["'checkers'", "'two words'", "commas"]),
    "checkers-blank-separated": (after(2, "checkers = a b\nchecker = a"), 3,
                                 ["'checkers'", "'a b'"]),
    "checker-blank-in-name": (after(2, "checkers = a, b\nchecker = a b"), 4,
                              ["'checker'", "'a b'"]),
    # --- cross-checks
    "same-ip-twice": (append("[endpoint b]\nurl = http://127.0.0.1:1/\nip = 192.0.2.1"), 24,
                      ["192.0.2.1"]),
    "same-name-twice": (append("[endpoint a]\nurl = http://127.0.0.1:1/\nip = 192.0.2.2"), 22,
                        ["a"]),
    # Named at the domain's provider key, the link that does not hold.
    "domain-outside-zone": (repl(13, "[domain app.example.org]"), 14, ["example.org"]),
    "unknown-provider": (repl(14, "provider = nowhere"), 14, ["nowhere"]),
    "unknown-provider-type": (repl(5, "type = carrier-pigeon"), 5, ["carrier-pigeon"]),
    # --- provider values and secrets
    "keySecret-not-base64": (repl(10, "keySecret = not*base64"), 10, ["base64"]),
    "keySecret-env-missing": (repl(10, "keySecret = !env DDUP_TEST_NO_SUCH_VARIABLE"), 10,
                              ["DDUP_TEST_NO_SUCH_VARIABLE"]),
    "keySecret-file-missing": (repl(10, "keySecret = !file /nonexistent/ddup/secret"), 10,
                               ["/nonexistent/ddup/secret"]),
    "keyAlgorithm-md5": (repl(9, "keyAlgorithm = hmac-md5"), 9, ["hmac-md5"]),
    "server-bad-port": (repl(6, "server = 127.0.0.1:99999"), 6, ["server"]),
}


# The keys of the checks beyond HTTP's first ones (ddup.ini(5), DOMAINS,
# ENDPOINTS, TOP-LEVEL KEYS).
def _command_then(*extra):
    """The good file with a check program for url, then extra lines."""
    def make(w):
        ls = list(w.good)
        ls[18] = "command = /bin/true {ip}"
        return "\n".join(ls + list(extra)) + "\n"
    return make


CASES.update({
    "maxExec-zero": (after(2, "maxExec = 0"), 3, ["maxExec"]),
    "maxExec-word": (after(2, "maxExec = lots"), 3, ["maxExec", "lots"]),
    "header-no-colon": (after(16, "header = NoColon"), 17, ["header", "Name: value"]),
    "header-bad-name": (after(16, "header = Bad Name: x"), 17, ["header"]),
    "header-top-bad": (after(2, "header = x"), 3, ["header"]),
    "header-control-char": (after(16, "header = X-A: a\x01b"), 17, ["X-A", "control"]),
    "header-env-missing": (after(16, "header = !env DDUP_TEST_NO_SUCH_HEADER"), 17,
                           ["DDUP_TEST_NO_SUCH_HEADER"]),
    "header-second-bad": (after(16, "header = X-A: 1\nheader = X-B"), 18, ["header"]),
    "userAgent-control-char": (after(16, "userAgent = a\x01b"), 17, ["userAgent", "one line"]),
    "maxLatency-zero": (after(16, "maxLatency = 0"), 17, ["maxLatency"]),
    "maxLatency-word": (after(16, "maxLatency = fast"), 17, ["maxLatency", "fast"]),
    "recheck-word": (after(16, "recheck = soon"), 17, ["recheck", "soon"]),
    "recheck-negative": (after(2, "recheck = -1s"), 3, ["recheck"]),
    "certWarn-word": (after(16, "certWarn = never"), 17, ["certWarn", "never"]),
    "url-and-command": (append("command = /bin/true"), 18, ["url", "command"]),
    "command-relative": (repl(19, "command = check_tcp -H {ip}"), 19, ["absolute"]),
    "command-unknown-placeholder": (repl(19, "command = /bin/check -H {ip} -p {port}"), 19,
                                    ["{port}", "placeholder"]),
    "command-too-many-words": (repl(19, "command = /bin/x" + " a" * 65), 19, ["64"]),
    "send-on-http": (append("send = PING\\r\\n"), 22, ["send", "tcp://"]),
    "expect-on-http": (append("expect = +PONG"), 22, ["expect", "tcp://"]),
    "send-on-command": (_command_then("send = x"), 22, ["send", "tcp://"]),
    "expect-on-command": (_command_then("expect = x"), 22, ["expect", "tcp://"]),
    "url-unknown-scheme": (repl(19, "url = gopher://127.0.0.1/"), 19, ["gopher"]),
    "url-tcp-without-port": (repl(19, "url = tcp://127.0.0.1"), 19, ["tcp://127.0.0.1"]),
})


def _nul_in_value(w):
    ls = list(w.good)
    ls[14] = "ttl = 6\x000"
    return ("\n".join(ls) + "\n").encode()


def _nul_at_start(w):
    return b"\x00" + ("\n".join(w.good) + "\n").encode()


CASES["nul-in-value"] = (_nul_in_value, 15, [])
CASES["nul-at-start"] = (_nul_at_start, 1, [])


def run(args, timeout=120, **kw):
    p = subprocess.run([DDUP] + args, capture_output=True, timeout=timeout, **kw)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def check_refused(world, path, line, words, **kw):
    """Both a run and -n: exit 2, the file (and line) named, nothing touched."""
    before = world.snapshot()
    for args in (["-c", path], ["-c", path, "-n"], ["-c", path, "--dry-run"]):
        rc, out, err = run(args, **kw)
        assert rc == 2, (args, rc, out, err)
        assert path in err, (args, err)
        if line is not None:
            assert f"{path}:{line}:" in err, (args, line, err)
        for w in words:
            assert w in err, (args, w, err)
        # One message per problem, not a flood: a broken 10 MB file
        # must not print a line per line.
        assert len(err) < 20000, (args, len(err))
        assert out == "" or args[-1] == "-n", (args, out)
    assert world.snapshot() == before


@pytest.mark.parametrize("case", sorted(CASES))
def test_broken_file(world, tmp_path, case):
    make, line, words = CASES[case]
    data = make(world)
    path = str(tmp_path / "broken.ini")
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8", "surrogateescape"))
    os.chmod(path, 0o600)
    check_refused(world, path, line, words)


def test_table_is_big_enough():
    # Plus the missing file, the directory and the unreadable file below.
    assert len(CASES) + 3 >= 40


def test_missing_file(world, tmp_path):
    path = str(tmp_path / "no-such.ini")
    check_refused(world, path, None, [])


def test_directory(world, tmp_path):
    path = str(tmp_path / "a-folder.ini")
    os.mkdir(path)
    check_refused(world, path, None, [])


def test_unreadable_file(world, tmp_path):
    """Mode 000.  Root reads any file, so as root the run is made as the
    unprivileged user nobody instead (who also cannot read it)."""
    d = tmp_path / "cfg"
    d.mkdir()
    path = str(d / "ddup.ini")
    with open(path, "w") as f:
        f.write("\n".join(world.good) + "\n")
    os.chmod(path, 0)
    kw = {}
    if os.geteuid() == 0:
        os.chmod(str(tmp_path), 0o755)
        os.chmod(str(d), 0o755)
        kw = {"user": 65534, "group": 65534}
        # nobody must be able to reach the binary; else this tests nothing.
        p = subprocess.run([DDUP, "--version"], capture_output=True, **kw)
        if p.returncode != 0:
            pytest.skip("the binary is not reachable for user nobody")
    check_refused(world, path, None, ["ermission"], **kw)


def test_header_secret_not_in_messages(world, tmp_path):
    """A header from !env that is not one line is refused without a word
    of it (ddup.ini(5), DOMAINS: header)."""
    path = str(tmp_path / "broken.ini")
    with open(path, "w") as f:
        f.write(after(16, "header = !env DDUP_TEST_HEADER")(world))
    os.chmod(path, 0o600)
    env = dict(os.environ, DDUP_TEST_HEADER="X-Token: s3cr3t-v4lue\nX-Other: x")
    check_refused(world, path, 17, ["header", "one line"], env=env)
    rc, out, err = run(["-c", path, "-n"], env=env)
    assert "s3cr3t" not in err + out and "X-Token" not in err + out


def tcp_taken(d):
    """Whether this build has a check type for tcp:// urls."""
    path = str(d / "tcp.ini")
    with open(path, "w") as f:
        f.write("[provider p]\ntype = exec\ncommand = /bin/true\n"
                "[domain a.example.test]\nprovider = p\n"
                "[endpoint]\nurl = tcp://127.0.0.1:25\nip = 192.0.2.1\n")
    return run(["-n", "-c", path])[0] == 0


def test_send_bad_escape(world, tmp_path):
    """A bad escape in `send` names its line (the tcp:// type takes send)."""
    if not tcp_taken(tmp_path):
        pytest.skip("no tcp:// check type in this build")
    make = repl(19, "url = tcp://127.0.0.1:1")
    path = str(tmp_path / "broken.ini")
    with open(path, "w") as f:
        f.write(make(world) + "send = EHLO\\q\n")
    os.chmod(path, 0o600)
    check_refused(world, path, 22, ["send", "bad escape"])


def test_env_config_broken(world, tmp_path):
    """$DDUP_CONFIG naming a broken file is the same as -c."""
    path = str(tmp_path / "broken.ini")
    with open(path, "w") as f:
        f.write(after(15, "ttl = 90")(world))
    before = world.snapshot()
    env = dict(os.environ, DDUP_CONFIG=path)
    rc, out, err = run([], env=env)
    assert rc == 2 and f"{path}:16:" in err, (rc, err)
    assert world.snapshot() == before
