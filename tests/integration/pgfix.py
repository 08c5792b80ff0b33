"""PostgreSQL for the integration tests: a real server on loopback.

initdb, postgres and pg_ctl of Debian's postgresql package (the newest
under /usr/lib/postgresql/*/bin), run as the `postgres` user (the tests
run as root, which PostgreSQL refuses to run as) in a temporary folder of
its own under /tmp: pytest's folders are private to root, and the server
must reach its data.  It listens on a Unix socket in that folder and on
127.0.0.1 on a free port.  The postmaster is started by the test process
itself rather than through `pg_ctl start` (which would detach it), so
that it dies with pytest however pytest ends (procfix.py); `pg_ctl stop`
stops it.

One server per test session (per pytest-xdist worker: one test at a
time uses it), started at the first test that asks for `pg_server` and
stopped at the session's end (and at exit, should the session end
another way).  Each test gets the database `ddup` new, owned by the role
`ddup` (password PASSWORD over TCP; trusted over the socket, as peer
authentication would be), with no other connection to it, and its clock
back at the real time (CLOCK_SQL; advance() moves it).  A test may
stop and start the server (same ports, same data); one left stopped is
started again for the next test, and one that does not come back is
replaced.  Durability is off (fsync, synchronous_commit): a test never
loses its power, and the suite runs faster.
"""

import atexit
import glob
import json
import os
import pwd
import shutil
import subprocess
import tempfile
import time

import pytest

from httpfix import free_port
from procfix import die_with_parent

__all__ = ["pg_server", "PgServer", "_pg_shared", "PG_PASSWORD"]

PG_PASSWORD = "pg-Test-pass-7f3"
DB = "ddup"
ROLE = "ddup"

# The clock seam: the slots (ddup.ini(5), SEVERAL CHECKERS) follow the database's now(), and a
# test steps them without waiting.  ddup's SQL calls now() unqualified;
# for role ddup in this database the search_path puts ddup_test before
# pg_catalog, and there now() is pg_catalog.now() plus the offset of
# ddup_test.clock (one row, 0 at each reset).  public comes first: an
# unqualified CREATE goes to the path's first schema whatever the
# privileges (PostgreSQL does not skip one without CREATE), and ddup's
# tables belong in public.  ddup_test is postgres's: ddup may use it but
# neither create in it nor move the clock.  STABLE as pg_catalog.now()
# is: one value within a statement.
CLOCK_SCHEMA = "ddup_test"
CLOCK_SQL = f"""
CREATE SCHEMA {CLOCK_SCHEMA} AUTHORIZATION postgres;
REVOKE ALL ON SCHEMA {CLOCK_SCHEMA} FROM PUBLIC;
GRANT USAGE ON SCHEMA {CLOCK_SCHEMA} TO {ROLE};
CREATE TABLE {CLOCK_SCHEMA}.clock (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    shift interval NOT NULL);
INSERT INTO {CLOCK_SCHEMA}.clock (shift) VALUES (interval '0');
GRANT SELECT ON {CLOCK_SCHEMA}.clock TO {ROLE};
CREATE FUNCTION {CLOCK_SCHEMA}.now() RETURNS timestamptz
    LANGUAGE sql STABLE PARALLEL SAFE
    AS 'SELECT pg_catalog.now() + shift FROM {CLOCK_SCHEMA}.clock';
REVOKE ALL ON FUNCTION {CLOCK_SCHEMA}.now() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION {CLOCK_SCHEMA}.now() TO {ROLE};
ALTER ROLE {ROLE} IN DATABASE {DB} SET search_path = public, {CLOCK_SCHEMA}, pg_catalog;
"""

# The database as new without making it again: every other session of it
# ended (waiting for each to end, its advisory locks with it), public and
# the seam dropped, public as CREATE DATABASE makes it (PostgreSQL 15:
# owned by the database's owner, USAGE for everyone).  One transaction;
# a schema of a test's own fails it, and the database is made again.
EMPTY_SQL = f"""
SELECT count(pg_terminate_backend(pid, 30000)) FROM pg_stat_activity
    WHERE datname = '{DB}' AND pid <> pg_backend_pid();
DO $$ BEGIN
    IF EXISTS (SELECT FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%'
               AND nspname NOT IN ('information_schema', 'public', '{CLOCK_SCHEMA}')) THEN
        RAISE EXCEPTION 'a schema of a test''s own';
    END IF;
END $$;
DROP SCHEMA public, {CLOCK_SCHEMA} CASCADE;
CREATE SCHEMA public AUTHORIZATION pg_database_owner;
GRANT USAGE ON SCHEMA public TO PUBLIC;
"""


def _bindir():
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                  key=lambda d: int(d.split("/")[-2]) if d.split("/")[-2].isdigit() else 0)
    for d in reversed(dirs):
        if os.access(os.path.join(d, "pg_ctl"), os.X_OK):
            return d
    return None


class PgServer:
    """A PostgreSQL server in a folder of its own (see the module's comment)."""

    def __init__(self):
        self.bin = _bindir()
        self.pw = pwd.getpwnam("postgres")
        self.base = tempfile.mkdtemp(prefix="ddup-pg-")
        os.chown(self.base, self.pw.pw_uid, self.pw.pw_gid)
        self.data = os.path.join(self.base, "data")
        self.sock = self.base
        self.log = os.path.join(self.base, "server.log")
        self.port = free_port()
        self.proc = None
        self.started = False
        self.has_db = False
        atexit.register(self.destroy)

    def _as_postgres(self, cmd, timeout=60, check=True):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           user=self.pw.pw_uid, group=self.pw.pw_gid, extra_groups=[],
                           cwd=self.base, env={"PATH": "/usr/bin:/bin", "LC_ALL": "C",
                                               "HOME": self.base})
        if check and p.returncode != 0:
            raise RuntimeError(f"{cmd[0]} failed ({p.returncode}): {p.stdout}{p.stderr}\n"
                               f"{self.log_text()}")
        return p

    def log_text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def _init(self):
        self._as_postgres([os.path.join(self.bin, "initdb"), "-D", self.data, "-U", "postgres",
                           "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"], timeout=120)
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(f"\nlisten_addresses = '127.0.0.1'\nport = {self.port}\n"
                    f"unix_socket_directories = '{self.sock}'\n"
                    "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
                    "max_connections = 60\nshared_buffers = 16MB\n")
        with open(os.path.join(self.data, "pg_hba.conf"), "w") as f:
            f.write("local all all trust\n"
                    "host all postgres 127.0.0.1/32 trust\n"
                    "host all all 127.0.0.1/32 scram-sha-256\n")

    def start(self, timeout=60):
        if not os.path.isdir(self.data):
            self._init()
        logf = open(self.log, "ab")
        try:
            # user= switches before preexec_fn runs: the death signal
            # stays (a change of credentials after it would clear it).
            self.proc = subprocess.Popen(
                [os.path.join(self.bin, "postgres"), "-D", self.data], stdin=subprocess.DEVNULL,
                stdout=logf, stderr=subprocess.STDOUT, cwd=self.base, user=self.pw.pw_uid,
                group=self.pw.pw_gid, extra_groups=[], start_new_session=True,
                preexec_fn=die_with_parent, env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
        finally:
            logf.close()
        deadline = time.monotonic() + timeout
        while not self.running():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop(mode="immediate")
                raise RuntimeError(f"postgres did not start:\n{self.log_text()}")
            time.sleep(0.1)
        if not self.started:
            self.psql(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{PG_PASSWORD}'", db="postgres")
            self.started = True
            return self.reset()
        return self     # started again by a test: its data as it left them

    def running(self):
        if self.proc is None or self.proc.poll() is not None:
            return False
        p = subprocess.run([os.path.join(self.bin, "pg_isready"), "-q", "-h", self.sock,
                            "-p", str(self.port)], timeout=30)
        return p.returncode == 0

    def stop(self, mode="fast"):
        """Stops the server; mode "immediate" is a crash as far as it can tell."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self._as_postgres([os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", mode,
                               "-w", "-t", "60", "stop"], timeout=90, check=False)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self.proc = None

    def destroy(self):
        if self.base is None:
            return
        self.stop(mode="immediate")
        shutil.rmtree(self.base, ignore_errors=True)
        self.base = None

    def reset(self):
        """The database ddup as new, with the clock seam (CLOCK_SQL) at offset 0.

        Its schemas are emptied (EMPTY_SQL: a tenth of the time of dropping
        the database and making it again, on every test); the database is
        made again when that cannot be done, the first time or after a test
        made a schema of its own."""
        if self.has_db:
            try:
                self.psql(EMPTY_SQL + CLOCK_SQL)
                return self
            except RuntimeError:
                pass
        self.psql(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)", db="postgres")
        self.psql(f"CREATE DATABASE {DB} OWNER {ROLE}", db="postgres")
        self.psql(CLOCK_SQL)
        self.has_db = True
        return self

    def advance(self, seconds):
        """Moves the database's clock (now() for role ddup) forward by seconds."""
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        self.psql(f"UPDATE {CLOCK_SCHEMA}.clock SET shift = shift + {float(seconds)!r} "
                  "* interval '1 second'")

    def clock_offset(self):
        """How far the database's clock is ahead of the real one, in seconds."""
        rows = self.psql(f"SELECT extract(epoch FROM shift) FROM {CLOCK_SCHEMA}.clock")
        return float(rows[0][0])

    def psql(self, sql, db=DB, user="postgres"):
        """Rows of sql (one statement), as lists of text."""
        p = subprocess.run([os.path.join(self.bin, "psql"), "-X", "-q", "-A", "-t", "-F", "\t",
                            "-v", "ON_ERROR_STOP=1", "-h", self.sock, "-p", str(self.port),
                            "-U", user, "-d", db, "-c", sql],
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise RuntimeError(f"psql {sql!r}: {p.stderr}")
        return [line.split("\t") for line in p.stdout.splitlines() if line != ""]

    def rows(self, sql):
        """Rows of a query as tuples of Python values (None, bool, int, float, str)
        in its columns' order, through JSON so that no type is guessed (json, not
        jsonb, keeps two columns of the same name: read as pairs)."""
        out = self.psql(f"SELECT coalesce(json_agg(row_to_json(q)), '[]') FROM ({sql}) q")
        return [tuple(v for _, v in r) for r in json.loads(out[0][0], object_pairs_hook=list)]

    def uri(self, socket=False):
        """The state URI of role ddup: over TCP with its password, or over the socket."""
        if socket:
            return f"postgresql:///{DB}?host={self.sock}&port={self.port}&user={ROLE}"
        return f"postgresql://{ROLE}:{PG_PASSWORD}@127.0.0.1:{self.port}/{DB}"


class _SharedPg:
    """One server for the session, handed to one test at a time."""

    def __init__(self):
        self.srv = None

    def _fresh(self):
        srv = PgServer()
        try:
            srv.start()
        except BaseException:
            srv.destroy()
            raise
        self.srv = srv
        return srv

    def get(self):
        srv = self.srv
        if srv is None:
            return self._fresh()
        try:
            if not srv.running():
                srv.start()         # a test left it stopped
            return srv.reset()
        except (RuntimeError, OSError, subprocess.SubprocessError):
            srv.destroy()
            self.srv = None
            return self._fresh()

    def stop(self):
        if self.srv is not None:
            self.srv.destroy()
            self.srv = None


@pytest.fixture(scope="session")
def _pg_shared():
    shared = _SharedPg()
    yield shared
    shared.stop()


@pytest.fixture
def pg_server(_pg_shared):
    """PostgreSQL with the database ddup as new (see the module's comment)."""
    if _bindir() is None:
        pytest.skip("not installed: postgresql (initdb, pg_ctl)")
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("no postgres user (Debian's postgresql package makes it)")
    t0 = time.monotonic()
    srv = _pg_shared.get()
    srv.ready_s = time.monotonic() - t0
    return srv
