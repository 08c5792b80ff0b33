"""Runs started at the same moment on one state (ddup-check(8), EXIT STATUS and
STATE FILE; ddup.ini(5), SEVERAL CHECKERS).

Twenty ddup-check runs start together against a real BIND; one health
endpoint answers slowly, so the run that takes the lock holds it for a
couple of seconds.  Exactly that one run works; every other one exits 3
at once, without waiting for the lock and without SQLite's "database is
locked" showing anywhere.  Readers (--status) started among them neither
block nor fail.  On a PostgreSQL state (make integration-pg) the twenty
are runs of one checker: its session lock, and on a fresh database the
schema made once.
"""

import json
import os
import sqlite3
import subprocess
import threading
import time

import pytest

from conftest import DDUP, TIME_SCALE
from test_failover import NAME, write_config

# Twenty processes at once, each bounded in time: alone, after the others.
pytestmark = pytest.mark.serial

# A sanitizer build needs about 0.1s of CPU to start and end even a run
# refused at once; twenty of them share two cores with other tests.
with open(DDUP, "rb") as _f:
    SANITIZED = b"__asan_init" in _f.read()
# Under valgrind (DDUP_TIME_SCALE > 1) a process costs seconds of CPU:
# fewer of them, in slow motion; the plain and sanitizer passes run 20.
VALGRIND = TIME_SCALE > 1
RUNS = 6 if VALGRIND else 20
# Runs and --status readers started together in the readers' test.
MIXED = (2, 4) if VALGRIND else (5, 10)
# The slow endpoint: how long the holder keeps the lock, at least.
DELAY = 3.0 * TIME_SCALE if VALGRIND else 8.0 if SANITIZED else 3.0
# How soon a refused run (or --status) must end after it was let go:
# well before the holder lets the lock go, which waiting for it would
# take (each must also end before the holder does, which no load can
# make true by chance).
PROMPT = DELAY - 2 if VALGRIND or SANITIZED else DELAY - 1


def blocked_on_fifo(pid):
    """Is the process waiting in open() for a writer of a FIFO?"""
    try:
        with open(f"/proc/{pid}/wchan") as f:
            return f.read().strip() in ("wait_for_partner", "fifo_open")
    except OSError:
        return False


def start_together(ddup, argvs, timeout=120):
    """Starts one ddup-check per argument list and lets them all go at
    the same moment.  Each is first a shell waiting to read a FIFO of its
    own, which then execs ddup-check (same process): starting twenty
    processes (and a sanitizer's start-up) on a busy machine takes
    seconds, so they are first left waiting at that open(), then every
    FIFO gets a line at once.  (The configuration itself cannot be the
    FIFO: ddup-check reads only a regular file.)  Returns
    [(rc, stdout, stderr, seconds from the release to the exit, end)] in
    order; end is the time.monotonic() of the exit."""
    procs, fifos = [], []
    for i, extra in enumerate(argvs):
        fifo = str(ddup.dir / f"gate{i}")
        os.mkfifo(fifo, 0o600)
        fifos.append(fifo)
        cmd = 'read go < "$1"; shift; exec "$@"'
        procs.append(subprocess.Popen(["sh", "-c", cmd, "sh", fifo, DDUP, "-c", ddup.config]
                                      + list(extra), stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    out = [None] * len(procs)
    released = [None] * len(procs)

    def wait(i):
        o, e = procs[i].communicate(timeout=timeout)
        out[i] = (procs[i].returncode, o, e, time.monotonic())

    threads = [threading.Thread(target=wait, args=(i,)) for i in range(len(procs))]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 60
    while not all(blocked_on_fifo(p.pid) for p in procs) and time.monotonic() < deadline:
        time.sleep(0.02)
    for i, fifo in enumerate(fifos):
        released[i] = time.monotonic()
        with open(fifo, "w") as f:
            f.write("go\n")
    for t in threads:
        t.join()
    for fifo in fifos:
        os.unlink(fifo)
    return [(rc, o, e, end - released[i], end) for i, (rc, o, e, end) in enumerate(out)]


def assert_intact(ddup):
    """The SQLite file passes integrity_check (PostgreSQL keeps its own)."""
    if ddup.on_pg():
        return
    db = sqlite3.connect(ddup.state)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        db.close()


def counts(ddup):
    """(checks recorded, DNS changes recorded)."""
    (checks,), = ddup.state_rows("SELECT coalesce(sum(checks), 0) FROM history",
                                 "SELECT coalesce(sum(checks), 0) FROM ddup_streak")
    (changes,), = ddup.state_rows("SELECT count(*) FROM changes",
                                  "SELECT count(*) FROM ddup_change")
    return checks, changes


def assert_refused(ddup, err):
    """A run refused because another holds the lock, saying which state."""
    if ddup.on_pg():
        assert "checker solo: another run of this checker holds its lock" in err, err
        assert "ddup:***@127.0.0.1" in err, err
    else:
        assert "another ddup-check" in err, err
        assert ddup.state in err, err


def assert_no_busy(results):
    for rc, out, err, _, _ in results:
        text = (out + err).lower()
        assert "locked" not in text or "another ddup-check" in text, (rc, out, err)
        assert "database is locked" not in text, (rc, out, err)
        assert "busy" not in text, (rc, out, err)


def servers(ddup, bind, http_server):
    slow = http_server(delay=DELAY)
    backup = http_server()
    write_config(ddup, bind, [("primary", slow, "192.0.2.1", 0),
                              ("backup", backup, "192.0.2.2", 10)],
                 f"timeout = {int(DELAY) + 10}s\nattempts = 1\n")
    return slow, backup


def race(ddup, bind, slow, fresh):
    serial = bind.serial()
    ddup.next_slot()
    results = start_together(ddup, [[]] * RUNS)
    rcs = sorted(r[0] for r in results)
    assert rcs == [0] + [3] * (RUNS - 1), results
    holder = next(r for r in results if r[0] == 0)
    losers = [r for r in results if r[0] == 3]
    secs = sorted(r[3] for r in losers)
    print(f"{'fresh' if fresh else 'existing'} state file: holder {holder[3]:.2f}s, "
          f"{len(losers)} refused runs: median {secs[len(secs) // 2]:.2f}s, "
          f"slowest {secs[-1]:.2f}s")
    # The holder waited for the slow endpoint; the others did not wait
    # for the lock: each ended while the holder still ran, and soon.
    assert holder[3] >= DELAY * 0.9, holder
    for rc, out, err, secs, end in losers:
        assert end < holder[4], "a refused run ended after the holder: it waited for the lock"
        assert secs < PROMPT, f"a refused run took {secs:.2f}s"
        assert out == "", out
        assert_refused(ddup, err)
    assert_no_busy(results)
    assert_intact(ddup)
    return holder, serial


def test_20_runs_on_a_fresh_state_file(ddup, bind_server, http_server):
    slow, _ = servers(ddup, bind_server, http_server)
    holder, serial = race(ddup, bind_server, slow, fresh=True)
    # The one run did the work: one check per endpoint, one DNS change.
    assert "DNS updated" in holder[2], holder
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    assert bind_server.serial() == serial + 1
    assert counts(ddup) == (2, 1)
    assert len(slow.requests) == 1


def test_20_runs_on_an_existing_state_file(ddup, bind_server, http_server):
    slow, backup = servers(ddup, bind_server, http_server)
    slow.set(delay=0)
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    checks0, changes0 = counts(ddup)
    # The primary goes down, slowly: the holder fails over.
    slow.set(status=503, delay=DELAY)
    requests0 = len(slow.requests)
    holder, serial = race(ddup, bind_server, slow, fresh=False)
    assert "DNS updated" in holder[2] and "192.0.2.2" in holder[2], holder
    assert bind_server.query(NAME, "A") == ["192.0.2.2"]
    assert bind_server.serial() == serial + 1
    assert counts(ddup) == (checks0 + 2, changes0 + 1)
    assert len(slow.requests) == requests0 + 1
    assert len(backup.requests) == 2


@pytest.mark.parametrize("fresh", [False, True], ids=["existing", "fresh"])
def test_status_readers_during_a_run(ddup, bind_server, http_server, fresh):
    """--status while a run holds the lock and writes (on a fresh state
    file: while the run creates it): it reads the last completed run, at
    once, whatever moment it lands on."""
    slow, _ = servers(ddup, bind_server, http_server)
    before = []
    if not fresh:
        slow.set(delay=0)
        assert ddup.run().rc == 0
        before = ["192.0.2.1"]
    slow.set(status=503, delay=DELAY)
    nruns, nreaders = MIXED
    ddup.next_slot()
    results = start_together(ddup, [[]] * nruns + [["--status", "--json"]] * nreaders)
    runs, readers = results[:nruns], results[nruns:]
    assert sorted(r[0] for r in runs) == [0] + [3] * (nruns - 1), runs
    holder = next(r for r in runs if r[0] == 0)
    for rc, out, err, secs, end in readers:
        assert rc == 0, (rc, out, err)
        assert end < holder[4], "--status ended after the run: it waited for it"
        assert secs < PROMPT, f"--status took {secs:.2f}s"
        assert json.loads(out)["domains"][0]["published"] == before, out
    assert_no_busy(results)
    assert_intact(ddup)
    assert bind_server.query(NAME, "A") == ["192.0.2.2"]


@pytest.mark.sqlite_file
@pytest.mark.skipif(SANITIZED or VALGRIND, reason="a race of timing: thousands of"
                    " processes, which only the plain build starts fast enough")
def test_status_readers_while_the_schema_is_made(ddup, bind_server, http_server):
    """--status on a state file whose schema another connection commits
    while it looks at it: it sees the file empty or whole, never the
    tables of the new schema beside the version of the empty file ("not
    a ddup state file").  A run makes the schema in one transaction;
    here Python replays that transaction, made of the real schema of a
    file a run created, on a fresh empty file 200 times, with six
    readers started around each commit.  Before the reader looked in
    one read transaction, about one reader in 150 failed."""
    slow, _ = servers(ddup, bind_server, http_server)
    slow.set(delay=0)
    assert ddup.run().rc == 0
    src = sqlite3.connect(ddup.state)
    schema = [sql for (sql,) in src.execute(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL"
        " AND name NOT LIKE 'sqlite_%' ORDER BY rowid")]
    (version,), = src.execute("PRAGMA user_version").fetchall()
    (app,), = src.execute("PRAGMA application_id").fetchall()
    src.close()
    assert version > 0 and len(schema) > 5, (version, schema)
    path = str(ddup.dir / "race.db")
    with open(ddup.config) as f:
        text = f.read().replace(ddup.state, path)
    assert path in text
    config = str(ddup.dir / "race.ini")
    with open(config, "w") as f:
        f.write(text)
    failed = []
    for i in range(200):
        for suffix in ("", "-wal", "-shm", "-journal"):
            if os.path.exists(path + suffix):
                os.unlink(path + suffix)
        open(path, "w").close()

        def make(delay=0.002 * (i % 5)):
            time.sleep(delay)
            db = sqlite3.connect(path, isolation_level=None)
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("BEGIN IMMEDIATE")
            for sql in schema:
                db.execute(sql)
            db.execute(f"PRAGMA user_version = {version}")
            db.execute(f"PRAGMA application_id = {app}")
            db.execute("COMMIT")
            db.close()
        maker = threading.Thread(target=make)
        maker.start()
        readers = [subprocess.Popen([DDUP, "-c", config, "--status", "--json"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True) for _ in range(6)]
        for p in readers:
            out, err = p.communicate(timeout=60)
            if p.returncode != 0 or json.loads(out)["lastRun"] is not None:
                failed.append((p.returncode, err))
        maker.join()
    assert failed == []
