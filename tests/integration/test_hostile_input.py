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
import unicodedata

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
        ddup.next_slot()
        r = sh(f"exec {DDUP} -c {ddup.config} -v {redir}")
        assert r.rc == 0, r
    if not ddup.on_pg():
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
    if ddup.on_pg():
        # pg_dump's COPY lines: fields apart by tabs, \n and \t escaped.
        dump = ddup.state_dump()
        for line in dump.splitlines():
            for v in line.split("\t"):
                assert_printable(v)
        assert "certificate subject name" in dump
        return
    db = sqlite3.connect(ddup.state)
    try:
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        seen = 0
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                for v in row:
                    if isinstance(v, str):
                        assert_printable(v)
                        seen += "certificate subject name" in v
        assert seen >= 1, tables
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
    assert not ddup.state_made()


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


def display_width(text):
    """Columns a terminal gives text: 2 for East Asian wide and full
    width characters, 0 for combining marks, 1 for the rest."""
    return sum(0 if unicodedata.combining(c) else
               2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def test_status_columns_with_wide_names(ddup):
    """--status pads the endpoint column by display width, not bytes:
    with CJK characters, combining marks and an emoji in the names, the
    next column starts at the same display column on every row, the
    header's too; a name wider than the column widens it for all."""
    names = ["plain", "東京-1", "e\u0301cole-cafe\u0301", "\U0001F680-launch",
             "大阪府大阪市北区梅田一丁目-eu"]
    assert display_width(names[4]) > 20     # wider than the column
    ddup.write(conf([refused_url() for _ in names], names=names))
    for run in (False, True):
        if run:
            assert ddup.run().rc == 0
        r = ddup.run("--status")
        assert r.rc == 0, r
        lines = r.out.splitlines()
        rows = [next(x for x in lines if x.startswith("  ENDPOINT "))]
        rows += [next(x for x in lines if x.startswith("  " + n + " ")) for n in names]
        # Where PUB and IP start, in display columns: one place for all.
        for cols in ([display_width(x[:x.index(" PUB" if i == 0 else " no ")])
                      for i, x in enumerate(rows)],
                     [display_width(x[:x.index("IP" if i == 0 else "192.0.2.")])
                      for i, x in enumerate(rows)]):
            assert len(set(cols)) == 1, (cols, r.out)
        assert display_width(rows[0][:rows[0].index(" STATE")]) == 2 + display_width(names[4]), r


def test_run_longer_than_interval_is_warned_at_check(ddup):
    """maxParallel = 1, 40 checks of 5 s, interval 30 s: 200 s if all time
    out.  -n says so in one warning and exits 0; a plain run does not."""
    text = conf([refused_url() for _ in range(40)], top="interval = 30s\nmaxParallel = 1\n")
    ddup.write(text.replace(f"timeout = {3 * T:g}s", "timeout = 5s"))
    r = ddup.run("-n")
    assert r.rc == 0, r
    with open(ddup.config) as f:
        line = f.read().splitlines().index("maxParallel = 1") + 1
    want = (f"{ddup.config}:{line}: warning: a run can take 3m20s when every check "
            "times out (40 checks, maxParallel 1: 40 x timeout 5s), longer than "
            "interval (30s)")
    assert r.err.splitlines() == [want], r
    r = ddup.run("-q", "-n")
    assert r.rc == 0 and r.err == "", r


def test_two_configurations_on_one_state_file_are_warned_of(ddup, tmp_path):
    """A and B name one state file: each run drops the other's domains.
    The run that drops them says so, once, naming both files; a run of
    the same file again, or one that drops what its own file no longer
    has, says nothing."""
    ddup.state = str(tmp_path / "state" / "ddup.db")
    a = ddup.write(conf([refused_url()]))
    b = str(tmp_path / "b.ini")
    with open(b, "w") as f:
        f.write(f"state = {ddup.state}\n" + conf([refused_url()]).replace(
            f"[domain app.{ZONE}]", f"[domain web.{ZONE}]"))
    os.chmod(b, 0o600)

    def run(path):
        """The run's lines about the state file (checks fail, so it says
        more: endpoints down, DNS left alone)."""
        r = ddup.run("-c", path, config=False)
        assert r.rc == 0, r
        return "".join(x for x in r.err.splitlines(True) if "state " in x)

    def warning(old, new):
        return (f"ddup-check: warning: state {ddup.state} was last written by a "
                f"run of {old}: this run of {new} dropped what {new} does not "
                "configure (1 domain, 1 endpoint); give each configuration its "
                "own state file\n")

    assert run(a) == ""
    assert run(b) == warning(a, b)
    assert run(b) == ""
    assert run(a) == warning(b, a)
    assert run(a) == ""
    # One file that drops an endpoint of its own: nothing to say.
    ddup.write(conf([refused_url(), refused_url()]))
    assert run(a) == ""
    ddup.write(conf([refused_url()]))
    assert run(a) == ""
    assert ddup.state_rows("SELECT value FROM meta WHERE key = 'config'",
                           None) == [(a,)]
    # A file from before the record (NULL after the upgrade): no word.
    ddup.state_exec("UPDATE meta SET value = NULL WHERE key = 'config'", None)
    assert run(b) == ""
    assert ddup.state_rows("SELECT value FROM meta WHERE key = 'config'",
                           None) == [(b,)]


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

@pytest.mark.sqlite_file
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


# ---------------------------------------------------------------- the state file's place

@pytest.mark.sqlite_file
def test_state_file_with_a_wider_mode_is_made_private(ddup):
    os.makedirs(os.path.dirname(ddup.state), mode=0o700)
    old = os.umask(0)
    try:
        open(ddup.state, "w").close()
        os.chmod(ddup.state, 0o666)
        ddup.write(conf([refused_url()]))
        r = ddup.run()
        assert r.rc == 0, r
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(ddup.state).st_mode) == 0o600
    # A reader holds the WAL open, so its -wal and -shm stay; all three
    # are made wide by hand, and the next run makes them private again.
    db = sqlite3.connect(ddup.state)
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchall()
        sides = ("", "-wal", "-shm")
        for side in sides:
            os.chmod(ddup.state + side, 0o644)
        assert ddup.run().rc == 0
        for side in sides:
            assert stat.S_IMODE(os.stat(ddup.state + side).st_mode) == 0o600, side
    finally:
        db.close()


@pytest.mark.parametrize("side", ["", "-wal", "-shm", "-journal"])
@pytest.mark.sqlite_file
def test_state_file_that_is_a_symlink_is_refused(ddup, side):
    os.makedirs(os.path.dirname(ddup.state), mode=0o700)
    ddup.write(conf([refused_url()]))
    if side:
        assert ddup.run().rc == 0
    target = str(ddup.dir / "elsewhere")
    with open(target, "w") as f:
        f.write("precious\n")
    os.symlink(target, ddup.state + side)
    for args in ([], ["--status"], ["--dry-run"]):
        r = ddup.run(*args)
        assert r.rc == 4, r
        assert f"refused: {ddup.state}{side} is a symbolic link" in r.err, r
    with open(target) as f:
        assert f.read() == "precious\n"


@pytest.mark.parametrize("how", ["world-writable", "group-writable", "other-owner"])
@pytest.mark.sqlite_file
def test_state_folder_others_can_write_is_refused(ddup, how):
    folder = os.path.dirname(ddup.state)
    os.makedirs(folder, mode=0o700)
    ddup.write(conf([refused_url()]))
    assert ddup.run().rc == 0
    if how == "world-writable":
        os.chmod(folder, 0o1777)
        want = "can be written by other users (mode 777)"
    elif how == "group-writable":
        os.chmod(folder, 0o770)
        want = "can be written by other users (mode 770)"
    else:
        os.chown(folder, 65534, 65534)
        want = "belongs to another user (uid 65534)"
    for args in ([], ["--status"], ["--dry-run"]):
        r = ddup.run(*args)
        assert r.rc == 4, r
        assert f"refused: folder {folder} {want}" in r.err, r


@pytest.mark.sqlite_file
def test_state_folder_symlinked_to_a_root_folder_is_fine(ddup):
    real = ddup.dir / "otherdisk" / "ddup"
    os.makedirs(real, mode=0o700)
    os.chmod(ddup.dir / "otherdisk", 0o755)
    os.symlink(real, ddup.dir / "state")
    ddup.write(conf([refused_url()]))
    r = ddup.run()
    assert r.rc == 0, r
    assert os.path.exists(real / "ddup.db")
    assert ddup.status()["domains"][0]["endpoints"][0]["failures"] == 1


# ---------------------------------------------------------------- mounts

@pytest.fixture
def tmpfs(tmp_path):
    """factory: a small tmpfs mounted under tmp_path, unmounted after the
    test; the test is skipped where mounting is impossible."""
    mounts = []

    def make(size="1m"):
        d = tmp_path / f"mnt{len(mounts)}"
        d.mkdir(mode=0o700)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs",
                            str(d)], capture_output=True, text=True)
        if p.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs: {p.stderr.strip()}")
        mounts.append(d)
        return d

    yield make
    for d in mounts:
        subprocess.run(["umount", "-l", str(d)], check=True)


@pytest.mark.sqlite_file
def test_status_and_dry_run_on_a_read_only_state(ddup, tmpfs):
    disk = tmpfs()
    ddup.state = str(disk / "state" / "ddup.db")
    ddup.write(conf([refused_url()]))
    assert ddup.run().rc == 0
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    r = ddup.run("--status", "--json")
    assert r.rc == 0, r
    assert r.json()["domains"][0]["endpoints"][0]["failures"] == 1
    r = ddup.run("--dry-run", "--json")
    assert r.rc == 0, r
    assert r.json()["domains"][0]["endpoints"][0]["failures"] == 2
    assert ddup.run("--status").rc == 0
    r = ddup.run()
    assert r.rc == 4 and "Read-only file system" in r.err, r


def fill(path):
    """Writes path until the file system is full.  Unbuffered: a buffered
    file would raise ENOSPC again when closed, from what it still held."""
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    try:
        with open(path + "2", "wb", buffering=0) as f:
            while True:
                f.write(b"\0")
                f.flush()
    except OSError:
        pass


@pytest.mark.sqlite_file
def test_full_disk_exits_4_and_leaves_dns_alone(ddup, tmpfs, bind_server, http_server):
    from test_failover import NAME
    disk = tmpfs("1m")
    ddup.state = str(disk / "state" / "ddup.db")
    p, b = http_server(), http_server()
    from test_failover import write_config
    write_config(ddup, bind_server, [("primary", p, "192.0.2.1", 0),
                                     ("backup", b, "192.0.2.2", 10)], "attempts = 1\n")
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    serial = bind_server.serial()
    before = ddup.status()

    fill(str(disk / "filler"))
    p.set(status=500)           # DNS should move to the backup
    for _ in range(2):
        r = ddup.run()
        assert r.rc == 4, r
        assert "full" in r.err, r
        assert bind_server.serial() == serial
        assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    assert ddup.status()["lastRun"] == before["lastRun"]

    os.unlink(disk / "filler")
    os.unlink(str(disk / "filler") + "2")
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.query(NAME, "A") == ["192.0.2.2"]
    assert integrity(ddup.state) == "ok"
    st = ddup.status()
    assert st["domains"][0]["published"] == ["192.0.2.2"]
    r = ddup.run()
    assert (r.rc, r.err) == (0, ""), r
