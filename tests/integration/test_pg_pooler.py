"""A fleet through PgBouncer in session mode, as the README allows.

Debian's PgBouncer (1.18) between the checkers and pgfix.py's server,
`pool_mode = session`: a client keeps its server connection until it
disconnects, so the checker's session lock still keeps two runs of one
checker apart, and the limits a run sets on its session (lock_timeout
and the others, by a query: this PgBouncer refuses a startup packet's
`options`) hold.  PgBouncer runs as the postgres user (it refuses root),
on loopback, and is stopped by the test.
"""

import os
import pwd
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import TIME_SCALE
from fleetfix import Fleet, wait_for
from httpfix import free_port
from pgfix import PG_PASSWORD
from pgnetfix import Current
from procfix import die_with_parent
from test_fleet import B, P, eps, pair, settle, run_while_locked  # noqa: F401 (fixtures)

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
pytestmark = pytest.mark.skipif(not os.access(PGBOUNCER, os.X_OK),
                                reason="not installed: pgbouncer")


@pytest.fixture
def bouncer(pg_server):
    pw = pwd.getpwnam("postgres")
    base = tempfile.mkdtemp(prefix="ddup-bouncer-")
    os.chown(base, pw.pw_uid, pw.pw_gid)
    port = free_port()
    ini, users = os.path.join(base, "pgbouncer.ini"), os.path.join(base, "users.txt")
    with open(users, "w") as f:
        f.write(f'"ddup" "{PG_PASSWORD}"\n')
    with open(ini, "w") as f:
        f.write(f"[databases]\nddup = host=127.0.0.1 port={pg_server.port} dbname=ddup\n"
                f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\n"
                f"unix_socket_dir =\nauth_type = plain\nauth_file = {users}\n"
                "pool_mode = session\n"
                f"logfile = {base}/pgbouncer.log\npidfile = {base}/pgbouncer.pid\n")
    for p in (ini, users):
        os.chown(p, pw.pw_uid, pw.pw_gid)
        os.chmod(p, 0o600)
    proc = subprocess.Popen([PGBOUNCER, ini], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            user=pw.pw_uid, group=pw.pw_gid, extra_groups=[], cwd=base,
                            preexec_fn=die_with_parent)
    try:
        deadline = time.monotonic() + 20
        while subprocess.run([os.path.join(pg_server.bin, "pg_isready"), "-q", "-h",
                              "127.0.0.1", "-p", str(port)], timeout=30).returncode != 0:
            assert proc.poll() is None and time.monotonic() < deadline, \
                open(os.path.join(base, "pgbouncer.log")).read()
            time.sleep(0.1)
        yield f"postgresql://ddup:{PG_PASSWORD}@127.0.0.1:{port}/ddup"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
        shutil.rmtree(base, ignore_errors=True)


def test_fleet_through_pgbouncer_in_session_mode(tmp_path, pg_server, bind_server, pair,
                                                 bouncer):
    f = Fleet(tmp_path, Current(pg_server, bouncer), bind_server, eps(pair), attempts=1,
              socket=())
    settle(f)
    # A lock held on the server: the run waits its 5 s lock_timeout, then exits 4.
    pair[0].set(status=503)
    f.next_slot()
    f.round()
    f.next_slot()
    r, took = run_while_locked(f, pg_server, "a")
    assert r.rc == 4, r
    assert "canceling statement due to lock timeout" in r.err and PG_PASSWORD not in r.err, r
    assert 4.5 <= took <= 5 + 3 * TIME_SCALE, took
    assert f.dns() == [P]
    # The session lock holds through the pooler: while b's run checks, a
    # second run of b exits 3.
    n = len(pair[0].requests)
    pair[0].set(delay=2)
    first = f.start("b")
    wait_for("b's check of the primary", lambda: len(pair[0].requests) > n)
    r = f.run("b")
    assert r.rc == 3, r
    assert "another run of this checker holds its lock" in r.err, r
    pair[0].set(delay=0)
    r = f.finish(first)
    assert r.rc == 0, r
    assert f.dns() == [B]
