"""recheck (ddup.ini(5), ddup-check(8) HEALTH CHECKS): a failing healthy
endpoint is checked again within the run, against real HTTP servers on
loopback and a real BIND.

Each server counts the requests it gets (recheckfix.FlakyServer), so the
tests see exactly the repeats the rules allow: 1 + attempts - 1 -
failures so far for a healthy endpoint, none for a removed one."""

import sqlite3
import time

import pytest

from conftest import ON_PG, TIME_SCALE
from recheckfix import flaky_server  # noqa: F401  (fixture)
from test_failover import NAME, provider_section

PRIMARY, BACKUP = "192.0.2.1", "192.0.2.2"


def write(ddup, bind, p, b, keys="attempts = 3\nrecheck = 1s\n"):
    ddup.write("interval = 30s\n" + provider_section(bind) + f"""
[domain {NAME}]
provider = bind
ttl = 60
timeout = 2s
{keys}
[endpoint primary]
url = {p.url}
ip = {PRIMARY}
priority = 0

[endpoint backup]
url = {b.url}
ip = {BACKUP}
priority = 10
""")


def run_ok(ddup):
    r = ddup.run("-v")
    assert r.rc == 0, r
    return r


def states(ddup):
    return " ".join(e["state"] for e in ddup.status()["domains"][0]["endpoints"])


def history(ddup, endpoint):
    """(ok, checks) of each streak of endpoint, oldest first, from the
    state (the SQLite file's view history, or PostgreSQL's streaks)."""
    if ON_PG:
        rows = ddup.pg.psql("SELECT ok::int, checks FROM ddup_streak"
                            f" WHERE endpoint = '{endpoint}' ORDER BY first, id")
        return [(int(ok), int(n)) for ok, n in rows]
    db = sqlite3.connect(f"file:{ddup.state}?mode=ro", uri=True)
    try:
        return db.execute("SELECT ok, checks FROM history WHERE endpoint = ?"
                          " ORDER BY first, id", (endpoint,)).fetchall()
    finally:
        db.close()


def test_dead_primary_leaves_dns_in_its_first_failing_run(ddup, bind_server, flaky_server):
    p, b = flaky_server(), flaky_server()
    write(ddup, bind_server, p, b)
    run_ok(ddup)
    assert bind_server.query(NAME, "A") == [PRIMARY]
    assert (p.count(), b.count()) == (1, 1)

    p.set(status=503)
    t0 = time.monotonic()
    r = run_ok(ddup)
    took = time.monotonic() - t0
    # 1 + attempts - 1 - 0 failures so far: three checks, a second apart.
    assert p.count() == 1 + 3, p.times
    assert b.count() == 2
    gaps = [y - x for x, y in zip(p.times[1:], p.times[2:])]
    assert all(0.9 <= g < 0.9 + TIME_SCALE for g in gaps), gaps
    assert took >= 2.0
    assert bind_server.query(NAME, "A") == [BACKUP], r
    assert states(ddup) == "down active"
    # -v: one line per check, the repeats numbered.
    lines = [ln for ln in r.err.splitlines() if "primary: HTTP 503 (" in ln]
    assert len(lines) == 3, r.err
    assert "repeat 1" in lines[1] and "repeat 2" in lines[2], lines

    # Removed: no repeat, recovery is not hastened.
    run_ok(ddup)
    assert p.count() == 5
    p.set(status=200)
    run_ok(ddup)
    assert p.count() == 6
    assert bind_server.query(NAME, "A") == [PRIMARY]
    # The failed streak counts its repeats: 3 checks, then 1 more.
    assert history(ddup, "primary") == [(1, 1), (0, 4), (1, 1)]
    assert history(ddup, "backup") == [(1, 4)]


def test_blip_costs_one_request_and_no_removal(ddup, bind_server, flaky_server):
    p, b = flaky_server(), flaky_server()
    write(ddup, bind_server, p, b)
    run_ok(ddup)
    p.fail_next(1)
    r = run_ok(ddup)
    assert p.count() == 3 and b.count() == 2
    assert bind_server.query(NAME, "A") == [PRIMARY], r
    st = ddup.status()["domains"][0]["endpoints"][0]
    assert (st["state"], st["failures"], st["passes"]) == ("active", 0, 1)
    run_ok(ddup)
    assert p.count() == 4
    # A failure then a pass in one run: two streaks, never merged.
    assert history(ddup, "primary") == [(1, 1), (0, 1), (1, 2)]


def test_repeats_left_follow_failures_so_far(ddup, bind_server, flaky_server):
    """A failure counted before recheck was on leaves one repeat of two."""
    p, b = flaky_server(), flaky_server()
    write(ddup, bind_server, p, b, "attempts = 3\n")
    run_ok(ddup)
    p.set(status=503)
    run_ok(ddup)
    assert p.count() == 2
    assert states(ddup) == "failing standby"
    write(ddup, bind_server, p, b)
    run_ok(ddup)
    assert p.count() == 2 + 2
    assert bind_server.query(NAME, "A") == [BACKUP]
    assert states(ddup) == "down active"


def test_backup_failing_is_confirmed_too(ddup, bind_server, flaky_server):
    """A standby is healthy: its failure is confirmed, DNS untouched."""
    p, b = flaky_server(), flaky_server()
    write(ddup, bind_server, p, b)
    run_ok(ddup)
    b.set(status=503)
    run_ok(ddup)
    assert (p.count(), b.count()) == (2, 4)
    assert states(ddup) == "active down"
    assert bind_server.query(NAME, "A") == [PRIMARY]


def test_other_endpoints_are_not_held_up(ddup, bind_server, flaky_server):
    p, b = flaky_server(), flaky_server()
    write(ddup, bind_server, p, b)
    run_ok(ddup)
    p.set(delay=2.5)                 # hangs past timeout: each check 2 s
    t0 = time.monotonic()
    run_ok(ddup)
    took = time.monotonic() - t0
    # timeout + 2 x (recheck + timeout): about 8 s for the primary ...
    assert took >= 7.5
    assert p.count() == 4
    # ... while the backup was asked beside its first check, long before
    # its first repeat (timeout + recheck later), and answered fast.
    first, repeat = p.times[-3], p.times[-2]
    assert repeat - first >= 2.9
    assert abs(b.times[-1] - first) < 1.0 * TIME_SCALE
    st = ddup.status()["domains"][0]["endpoints"]
    assert st[1]["latencyMs"] < 1000
    assert st[0]["lastResult"] == "timeout"
    assert bind_server.query(NAME, "A") == [BACKUP]


def test_status_gives_the_failover_time(ddup, bind_server, flaky_server):
    p, b = flaky_server(), flaky_server()
    write(ddup, bind_server, p, b)
    run_ok(ddup)
    f = ddup.status()["domains"][0]["failover"]
    # interval 30 + recheck 1 x (3 - 1) + ttl 60; + 3 timeouts of 2 s.
    assert f["recheck"] == 1
    assert f["seconds"] == 92
    assert f["secondsWhenTimingOut"] == 98
    assert f["secondsAfterFailedCheck"] == 6
    r = ddup.run("--status")
    assert r.rc == 0, r
    assert "recheck 1s" in r.out and "6s after the first failed check" in r.out, r.out
    # Without recheck: interval x attempts, as before.
    write(ddup, bind_server, p, b, "attempts = 3\n")
    f = ddup.status()["domains"][0]["failover"]
    assert "recheck" not in f and f["seconds"] == 150


@pytest.mark.parametrize("keys", ["attempts = 3\n", "attempts = 3\nrecheck = 0\n",
                                  "attempts = 3\nrecheck = 1s\n"])
def test_no_recheck_no_repeat(ddup, bind_server, flaky_server, keys):
    """Without recheck (or with 0, off) one request per run, as before;
    a first check of an endpoint never seen gets no repeat either."""
    p, b = flaky_server(status=503), flaky_server()
    write(ddup, bind_server, p, b, keys)
    run_ok(ddup)
    assert p.count() == 1
    assert bind_server.query(NAME, "A") == [BACKUP]


# ---------------------------------------------------------------- several checkers

@pytest.fixture
def fleet3(tmp_path, pg_server, bind_server, flaky_server):
    """Checkers a, b and c on one PostgreSQL (fleetfix.py), attempts 3 and
    recheck 1s, over a flaky primary and backup."""
    from fleetfix import Fleet
    p, b = flaky_server(), flaky_server()
    f = Fleet(tmp_path, pg_server, bind_server,
              [("primary", p, PRIMARY, 0), ("backup", b, BACKUP, 10)],
              attempts=3, domain_keys="recheck = 1s\n")
    yield f, p, b
    f.stop_all()


def fleet_settle(f):
    for _ in range(2):
        f.next_slot()
        f.round()
    assert f.dns() == [PRIMARY]


def test_fleet_counts_one_failure_a_slot(fleet3):
    """Each checker repeats as the fleet's stored counters allow, but a
    round counts one failure a slot: failover is not hastened."""
    f, p, _ = fleet3
    fleet_settle(f)
    p.set(status=503)
    seen, made = [], []
    for _ in range(4):
        n = p.count()
        f.next_slot()
        f.round()
        seen.append(f.dns())
        made.append(p.count() - n)
    # Slot 1: a's failure is outvoted by the passes of the slot before
    # (failures stay 0: three checks each).  Then each round counts one
    # failure, and the next checker reads it before its checks.
    assert seen == [[PRIMARY], [PRIMARY], [PRIMARY], [BACKUP]], seen
    assert made == [9, 3 + 2 + 2, 2 + 1 + 1, 1 + 1 + 1], made


def test_fleet_report_holds_the_result_after_repeats(fleet3):
    f, p, _ = fleet3
    fleet_settle(f)
    p.fail_next(1)
    n = p.count()
    f.next_slot()
    f.round("a")
    assert p.count() - n == 2
    st = f.status("a")
    a = [c for c in st["fleet"]["checkers"] if c["name"] == "a"][0]
    assert (a["passes"], a["failures"]) == (2, 0), a
    e = st["domains"][0]["endpoints"][0]
    assert (e["state"], e["failures"]) == ("active", 0), e
