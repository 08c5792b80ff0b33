"""Shared fixtures for the integration tests.

The tests run the built ddup-check (path in $DDUP_CHECK) against real
servers on loopback: HTTP(S) health endpoints (httpfix.py) and BIND /
PowerDNS (dnsfix.py), PostgreSQL (pgfix.py), and fakes of APIs that cannot run here (azurefix.py,
ovhfix.py, route53fix.py). Every server a test starts is stopped by it.
"""

import json
import os
import re
import sqlite3
import subprocess
import textwrap
import time

import pytest

from httpfix import *  # noqa: F401,F403  (fixtures)
from dnsfix import *  # noqa: F401,F403  (fixtures)
from cloudflarefix import *  # noqa: F401,F403  (fixtures)
from azurefix import *  # noqa: F401,F403  (fixtures)
from ovhfix import *  # noqa: F401,F403  (fixtures)
from pgfix import *  # noqa: F401,F403  (fixtures)
from hetznerfix import *  # noqa: F401,F403  (fixtures)
from digitaloceanfix import *  # noqa: F401,F403  (fixtures)
from hookfix import *  # noqa: F401,F403  (fixtures)
from route53fix import *  # noqa: F401,F403  (fixtures)
from zonefilefix import *  # noqa: F401,F403  (fixtures)
from porkbunfix import *  # noqa: F401,F403  (fixtures)
from bunnyfix import *  # noqa: F401,F403  (fixtures)
from webhookfix import *  # noqa: F401,F403  (fixtures)

# The state backend of the `ddup` fixture: "sqlite" (the default: a file
# in the test's folder) or "postgresql" (a fresh database per test from
# pg_server, with one checker, `solo`).  make integration-pg runs the
# suite the second way.
STATE_BACKEND = os.environ.get("DDUP_TEST_STATE", "sqlite")
if STATE_BACKEND not in ("sqlite", "postgresql"):
    raise RuntimeError(f"DDUP_TEST_STATE={STATE_BACKEND}: expected sqlite or postgresql")
ON_PG = STATE_BACKEND == "postgresql"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "serial: bounds its own wall time or needs the machine to itself; "
        "make integration runs these one at a time after the others (tests/pytest-passes)")
    config.addinivalue_line(
        "markers", "sqlite_file: about the SQLite state file itself (opens it with sqlite3, "
        "checks its mode, locks or pages, damages it); skipped with DDUP_TEST_STATE=postgresql")


def pytest_collection_modifyitems(config, items):
    """With PostgreSQL: the tests about the SQLite file skipped; those that use no state
    at all (neither the ddup fixture nor pg_server) left out, as they ran with SQLite."""
    if not ON_PG:
        return
    skip = pytest.mark.skip(reason="about the SQLite state file (DDUP_TEST_STATE=postgresql)")
    kept, stateless = [], []
    for item in items:
        names = getattr(item, "fixturenames", ())
        if "ddup" not in names and "pg_server" not in names:
            stateless.append(item)
            continue
        if item.get_closest_marker("sqlite_file"):
            item.add_marker(skip)
        kept.append(item)
    if stateless:
        config.hook.pytest_deselected(items=stateless)
        items[:] = kept


# Wall-time bounds in tests are multiplied by this: the valgrind pass of
# make check runs every ddup-check many times slower.
TIME_SCALE = float(os.environ.get("DDUP_TIME_SCALE", "1"))

DDUP = os.environ.get("DDUP_CHECK", os.path.join(os.path.dirname(__file__), "..", "..", "ddup-check"))


class Result:
    def __init__(self, proc):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def json(self):
        return json.loads(self.out)

    def __repr__(self):
        return f"<rc={self.rc} out={self.out!r} err={self.err!r}>"


# Runs that never write the state: with PostgreSQL every other run first
# moves the database's clock a day on, so that each run takes a round of
# a slot of its own, as each run is a round of its own with SQLite.
READ_ONLY_ARGS = {"-n", "--check-config", "--dry-run", "--status", "-h", "--help", "--version"}


def _writes_state(args):
    for a in args:
        if a in READ_ONLY_ARGS:
            return False
        if a.startswith("-") and not a.startswith("--") and ("n" in a or "h" in a):
            return False            # -nv, -vh...
    return True


class Ddup:
    """Writes a configuration into a temporary folder and runs ddup-check on it.

    state is the SQLite path (a test may set another); with pg (a
    PgServer, DDUP_TEST_STATE=postgresql) write() puts the server's URI
    and a fleet of one instead, and a test that reads state was meant
    for the file: pytest_runtest_teardown says so."""

    def __init__(self, tmp_path, pg=None):
        self.dir = tmp_path
        self.config = str(tmp_path / "ddup.ini")
        self._state = str(tmp_path / "state" / "ddup.db")
        self.pg = pg
        self.pg_prefix = None         # the state and fleet lines write() put for pg
        self.path_read = False        # the test read state
        self.own_path = False         # the test set state

    @property
    def state(self):
        self.path_read = True
        return self._state

    @state.setter
    def state(self, path):
        """A SQLite path of the test's own: write() puts it, whatever the backend."""
        self._state = path
        self.own_path = True

    def write(self, text, state=True):
        text = textwrap.dedent(text).lstrip()
        if state and self.pg is not None and not self.own_path:
            top = re.split(r"^\s*\[", text, maxsplit=1, flags=re.M)[0]
            fleet = "" if re.search(r"^\s*(checkers|checker|quorum)\s*=", top, re.M) else \
                "checkers = solo\nchecker = solo\n"
            self.pg_prefix = f"state = {self.pg.uri()}\n{fleet}"
            text = self.pg_prefix + text
        elif state:
            text = f"state = {self._state}\n" + text
        with open(self.config, "w") as f:
            f.write(text)
        os.chmod(self.config, 0o600)     # it holds secrets, as a real one would
        return self.config

    def on_pg(self):
        """Whether the configuration holds the state line write() put for pg and a fleet
        of one, solo (a test that writes its own state or fleet keeps its own clock)."""
        if self.pg_prefix is None:
            return False
        try:
            with open(self.config) as f:
                lines = set(f.read().splitlines())
        except OSError:
            return False
        return {f"state = {self.pg.uri()}", "checkers = solo", "checker = solo"} <= lines

    def state_made(self):
        """Whether any of the state exists: with SQLite its folder (made with the file),
        with PostgreSQL a table of ddup's."""
        if self.on_pg():
            return self.pg.psql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") \
                != [["0"]]
        return os.path.exists(os.path.dirname(self._state))

    def state_rows(self, sqlite, pg):
        """Rows of a query of the state: sqlite on the SQLite file, pg in PostgreSQL
        (its tables are named otherwise); the values as each library gives them
        (a PostgreSQL boolean is True or False, SQLite's 1 or 0: equal in Python)."""
        if self.on_pg():
            return self.pg.rows(pg)
        con = sqlite3.connect(f"file:{self._state}?mode=ro", uri=True)
        try:
            return con.execute(sqlite).fetchall()
        finally:
            con.close()

    def state_exec(self, sqlite, pg):
        """Changes the state behind ddup's back (a test's setting of a scene): sqlite on
        the SQLite file, pg in PostgreSQL."""
        if self.on_pg():
            self.pg.psql(pg)
            return
        con = sqlite3.connect(self._state)
        try:
            with con:
                con.execute(sqlite)
        finally:
            con.close()

    def state_dump(self):
        """Every row of the state as text, to look for what it must or must not hold:
        sqlite3's dump of the file, or pg_dump's of ddup's tables."""
        if self.on_pg():
            return self.state_snapshot().decode("utf-8", "replace")
        con = sqlite3.connect(f"file:{self._state}?mode=ro", uri=True)
        try:
            return "\n".join(con.iterdump())
        finally:
            con.close()

    def state_snapshot(self):
        """Everything the state holds, to compare before and after a run: the SQLite
        file's bytes, or the rows of ddup's tables in PostgreSQL."""
        if self.on_pg():
            p = subprocess.run([os.path.join(self.pg.bin, "pg_dump"), "--data-only",
                                "--schema=public", "-h", self.pg.sock, "-p", str(self.pg.port),
                                "-U", "postgres", "-d", "ddup"],
                               capture_output=True, timeout=60, check=True)
            # Without the \restrict lines: their key is new at each dump.
            return b"\n".join(ln for ln in p.stdout.split(b"\n")
                              if not ln.startswith((b"\\restrict ", b"\\unrestrict ")))
        with open(self._state, "rb") as f:
            return f.read()

    def without_state(self):
        """The configuration without the state line write() put first (and, on pg, the
        fleet), for a test that puts a state of its own."""
        with open(self.config) as f:
            text = f.read()
        for prefix in (self.pg_prefix, f"state = {self._state}\n"):
            if prefix is not None and text.startswith(prefix):
                return text[len(prefix):]
        raise AssertionError(f"{self.config} does not begin with the state line write() puts")

    def after_kill(self, timeout=30):
        """On pg, waits until the server has seen a killed run's connection close (its
        session, and the checker's lock with it, ends a moment after the kill): the
        next run, a minute later in real life, would exit 3 on the lock."""
        if not self.on_pg():
            return
        deadline = time.monotonic() + timeout * TIME_SCALE
        while self.pg.psql("SELECT count(*) FROM pg_stat_activity WHERE datname = 'ddup'"
                           " AND usename = 'ddup'") != [["0"]]:
            assert time.monotonic() < deadline, "a killed run's session did not end"
            time.sleep(0.05)

    def next_slot(self):
        """On pg (on_pg()), moves the database's clock a day on (see READ_ONLY_ARGS);
        for a test that starts ddup-check itself rather than through run()."""
        if self.on_pg():
            self.pg.advance(86400)

    def run(self, *args, env=None, timeout=60, config=True):
        timeout *= TIME_SCALE
        cmd = [DDUP]
        if config:
            cmd += ["-c", self.config]
        cmd += list(args)
        e = dict(os.environ)
        if env:
            e.update(env)
        if config and _writes_state(args):
            self.next_slot()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=timeout)
        return Result(proc)

    def status(self):
        r = self.run("--status", "--json")
        assert r.rc == 0, r
        return r.json()


@pytest.fixture
def ddup(request, tmp_path):
    d = Ddup(tmp_path, request.getfixturevalue("pg_server") if ON_PG else None)
    yield d
    if d.path_read and d.on_pg():
        pytest.fail("the test reads the SQLite path of ddup while its state is PostgreSQL: "
                    "mark it sqlite_file, or write its own state line", pytrace=False)
