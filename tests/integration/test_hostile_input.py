"""Hostile input and a hostile environment, run against the built binary.

A run started with descriptors closed, text from a server that tries to
forge a log line, credentials and junk in the configuration, a
configuration that is a FIFO or a device, stdout on a full device, a
state folder several levels deep, state files that are symlinks or sit
in folders others can write, a read-only state, a full disk, and a core
dump that must not carry secrets.  Each test failed before its fix.
"""

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import tempfile
import time

import pytest

from conftest import DDUP, TIME_SCALE, Result

ZONE = "example.test"
SECRET = "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI="
T = TIME_SCALE


def conf(urls, top="", names=None):
    """A configuration with one domain on a provider nobody answers for
    (port 9): checks that fail leave DNS alone, so no server is needed."""
    lines = [top, "[provider dns]", "type = rfc2136", "server = 127.0.0.1:9",
             f"zone = {ZONE}", "keyName = ddns-key", f"keySecret = {SECRET}",
             "", f"[domain app.{ZONE}]", "provider = dns",
             f"timeout = {3 * T:g}s"]
    for i, u in enumerate(urls):
        name = names[i] if names else f"e{i}"
        lines += ["", f"[endpoint {name}]", f"url = {u}", f"ip = 192.0.2.{i + 1}"]
    return "\n".join(lines) + "\n"


def refused_url():
    """A loopback URL nothing listens on: the check fails at once."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/health"


def sh(cmd, timeout=60):
    p = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True,
                       timeout=timeout * T)
    return Result(p)


def integrity(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        db.close()


# ---------------------------------------------------------------- descriptors 0-2

@pytest.mark.parametrize("redir", ["<&-", ">&-", "2>&-"])
def test_closed_std_descriptor_leaves_state_intact(ddup, redir):
    """With stderr closed, the state file's lock took descriptor 2 and the
    log lines went into the SQLite file: every later run exited 4."""
    ddup.write(conf([refused_url()]))
    for _ in range(2):
        r = sh(f"exec {DDUP} -c {ddup.config} -v {redir}")
        assert r.rc == 0, r
    assert integrity(ddup.state) == "ok"
    r = ddup.run("-v")
    assert r.rc == 0, r
    assert "unusable" not in r.err and "not a ddup state file" not in r.err, r
    st = ddup.status()
    assert st["domains"][0]["endpoints"][0]["failures"] == 3


@pytest.mark.parametrize("fd", [0, 1, 2])
def test_closed_std_descriptor_is_dev_null(ddup, raw_server, fd):
    """While a run waits for a check, descriptors 0-2 are /dev/null."""
    srv = raw_server("silent")
    ddup.write(conf(srv.urls))
    redir = {0: "<&-", 1: ">&-", 2: "2>&-"}[fd]
    p = subprocess.Popen(["sh", "-c", f"exec {DDUP} -c {ddup.config} --dry-run {redir}"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20 * T
        while srv.conns == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert srv.conns == 1
        assert os.readlink(f"/proc/{p.pid}/fd/{fd}") == "/dev/null"
    finally:
        p.communicate(timeout=60 * T)


def test_status_with_closed_stdout_is_not_an_error(ddup):
    ddup.write(conf([refused_url()]))
    assert ddup.run().rc == 0
    r = sh(f"exec {DDUP} -c {ddup.config} --status >&-")
    assert (r.rc, r.err) == (0, ""), r


# ---------------------------------------------------------------- text from outside

@pytest.fixture
def forged_cert(certs, tmp_path):
    """A certificate signed by the test CA, without subjectAltName, whose
    subject name holds a newline and ANSI escapes: libcurl quotes it in
    its error ("certificate subject name '...' does not match")."""
    cn = "x\n\x1b[31mddup-check: app.example.test: DNS updated \u202e"
    d = str(tmp_path)
    key, csr, crt, ext = (os.path.join(d, f"forged.{x}") for x in ("key", "csr", "pem", "ext"))
    with open(ext, "w") as f:
        f.write("basicConstraints = critical, CA:FALSE\n"
                "keyUsage = critical, digitalSignature\n"
                "extendedKeyUsage = serverAuth\n")
    subprocess.run(["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", csr,
                    "-utf8", "-subj", f"/CN={cn}"], check=True, capture_output=True)
    subprocess.run(["openssl", "x509", "-req", "-in", csr, "-CA", certs.ca, "-CAkey",
                    certs.ca_key, "-set_serial", "7", "-days", "2", "-extfile", ext,
                    "-out", crt], check=True, capture_output=True)
    certs.pairs["forged"] = (crt, key)
    yield "forged"
    del certs.pairs["forged"]


def assert_printable(text):
    for ch in text:
        assert ch in "\n" or (ord(ch) >= 0x20 and ord(ch) != 0x7f and not 0x80 <= ord(ch) <= 0x9f
                              and ch not in "\u2028\u2029\u202a\u202b\u202c\u202d\u202e"), \
            f"{ch!r} in {text!r}"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_certificate_subject_cannot_forge_a_line(ddup, http_server, certs, forged_cert, fmt):
    srv = http_server(tls=True, cert=forged_cert)
    ddup.write(conf([srv.url_for("localhost")], top=f"caFile = {certs.ca}\nlogFormat = {fmt}"))
    r = ddup.run("-v")
    assert r.rc == 0, r
    assert "certificate subject name" in r.err, r
    lines = r.err.splitlines()
    for line in lines:
        assert_printable(line)
        assert not line.startswith("ddup-check: app.example.test: DNS updated"), r
        if fmt == "json":
            json.loads(line)
    # The same reason in --status (text and JSON) and in the state file.
    st = ddup.status()
    reason = st["domains"][0]["endpoints"][0]["lastResult"]
    assert "certificate subject name 'x?" in reason, reason
    assert_printable(reason)
    r = ddup.run("--status")
    assert r.rc == 0 and "certificate subject name 'x?" in r.out, r
    for line in r.out.splitlines():
        assert_printable(line)
    db = sqlite3.connect(ddup.state)
    try:
        for table in ("endpoints", "checks"):
            cols = [c[1] for c in db.execute(f"PRAGMA table_info({table})")]
            for row in db.execute(f"SELECT * FROM {table}"):
                for v in row:
                    if isinstance(v, str):
                        assert_printable(v)
    finally:
        db.close()


# ---------------------------------------------------------------- configuration

def test_url_with_password_is_refused(ddup):
    ddup.write(conf(["http://admin:hunter2@127.0.0.1:9/health"]))
    for args in (["-n"], [], ["--status", "--json"], ["--dry-run", "--json"]):
        r = ddup.run(*args)
        assert r.rc == 2, r
        assert "url must not hold a user name or password" in r.err, r
        assert "hunter2" not in r.out + r.err, r
    assert not os.path.exists(ddup.state)


@pytest.mark.parametrize("name", [b"bad\xc3", b"esc\x1b[2J", b"cr\rname"])
def test_endpoint_name_with_junk_is_a_configuration_error(ddup, name):
    """Such a name cut --status --json off mid-string (exit 1, no message)."""
    text = f"state = {ddup.state}\n" + conf([refused_url()])
    text = text.replace("[endpoint e0]", "[endpoint e0]\nname = NAME")
    with open(ddup.config, "wb") as f:
        f.write(text.encode().replace(b"NAME", name))
    for args in (["--status", "--json"], ["--dry-run", "--json"], ["-n"]):
        r = ddup.run(*args)
        assert r.rc == 2, r
        assert f"{ddup.config}:" in r.err and "endpoint name" in r.err, r
        assert "a control character or invalid UTF-8" in r.err, r


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_configuration_must_be_a_regular_file(ddup, kind):
    if kind == "fifo":
        path = str(ddup.dir / "fifo.ini")
        os.mkfifo(path)
    else:
        path = "/dev/zero"
    for args in (["-n"], [], ["--status"]):
        r = subprocess.run([DDUP, "-c", path, *args], capture_output=True, text=True,
                           timeout=20 * T)
        assert r.returncode == 2, r
        assert r.stderr == f"{path}: cannot read: not a regular file\n", r


def test_interval_at_the_top_is_refused(ddup):
    ddup.write(conf([refused_url()], top="interval = 106751991167d"))
    r = ddup.run("-n")
    assert r.rc == 2 and "'interval': at most 3650d" in r.err, r
    ddup.write(conf([refused_url()], top="interval = 3650d\ntimeout = 1s"))
    assert ddup.run().rc == 0
    r = ddup.run("--status")
    assert r.rc == 0 and "older than three intervals" not in r.out, r


# ---------------------------------------------------------------- stdout

@pytest.mark.parametrize("args", [["-n"], ["--status"], ["--status", "--json"],
                                  ["--dry-run"], ["--dry-run", "--json"], ["--version"]])
def test_write_to_full_stdout_is_an_error(ddup, args):
    ddup.write(conf([refused_url()]))
    with open("/dev/full", "w") as full:
        p = subprocess.run([DDUP, "-c", ddup.config, *args], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=60 * T)
    assert p.returncode == 1, p
    assert "cannot write to standard output: No space left on device" in p.stderr, p


# ---------------------------------------------------------------- state folder

def test_state_folders_are_all_created_private(ddup):
    ddup.state = str(ddup.dir / "a" / "b" / "c" / "ddup.db")
    ddup.write(conf([refused_url()]))
    old = os.umask(0o022)
    try:
        assert ddup.run().rc == 0
    finally:
        os.umask(old)
    for d in ("a", "a/b", "a/b/c"):
        assert stat.S_IMODE(os.stat(ddup.dir / d).st_mode) == 0o700, d
    assert stat.S_IMODE(os.stat(ddup.state).st_mode) == 0o600


# ---------------------------------------------------------------- core dumps

def test_not_dumpable_after_reading_secrets(raw_server):
    """/proc/PID belongs to root while a process is not dumpable: run as
    nobody, it shows whether the secrets could end in a core dump."""
    srv = raw_server("silent")
    d = tempfile.mkdtemp(prefix="ddup-dump-")
    try:
        os.chmod(d, 0o755)
        cfgpath = os.path.join(d, "ddup.ini")
        with open(cfgpath, "w") as f:
            f.write(f"state = {d}/state/ddup.db\n"
                    + conf(srv.urls))
        os.chmod(cfgpath, 0o600)
        os.chown(cfgpath, 65534, 65534)
        p = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                              DDUP, "-c", cfgpath, "--dry-run"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 20 * T
            while srv.conns == 0 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert srv.conns == 1
            with open(f"/proc/{p.pid}/status") as f:
                uids = [line for line in f if line.startswith("Uid:")][0].split()
            assert uids[1] == "65534", uids
            assert os.stat(f"/proc/{p.pid}/environ").st_uid == 0
        finally:
            out, err = p.communicate(timeout=60 * T)
        assert p.returncode == 0, err
    finally:
        shutil.rmtree(d)
