"""Three checkers on one real PostgreSQL (ddup.ini(5), SEVERAL CHECKERS), through the built binary.

Checkers a, b and c share a configuration (fleetfix.py: a file each,
differing only in `checker`), the state in pgfix.py's PostgreSQL, and a
domain with a primary (priority 0) and a backup (priority 10) served by
real HTTP servers, published in the real BIND of dnsfix.py.  Each step
moves the database's clock into the next slot and runs checkers in a
given order; the first run in a slot takes the round, whose window is
the current and the previous slot.  So when a checker decides, its own
report is fresh and the others' are from the slot before.
"""

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from conftest import TIME_SCALE
from fleetfix import BindExec, Fleet, LockHolder, clock_shift_env, wait_for
from pgfix import PG_PASSWORD
from test_crash import kill_reports, killable_env

P, B = "192.0.2.1", "192.0.2.2"


@pytest.fixture
def fleet(tmp_path, pg_server, bind_server):
    made = []

    def make(eps, **kw):
        f = Fleet(tmp_path, pg_server, bind_server, eps, **kw)
        made.append(f)
        return f

    yield make
    for f in made:
        f.stop_all()


@pytest.fixture
def prov(tmp_path, bind_server):
    """The exec provider of fleetfix.py on BIND; nothing left blocked after."""
    p = BindExec(str(tmp_path / "prov"), bind_server)
    yield p
    p.cleanup()


@pytest.fixture
def pair(http_server):
    """The primary and the backup."""
    return http_server(), http_server()


def eps(pair):
    return [("primary", pair[0], P, 0), ("backup", pair[1], B, 10)]


def settle(f, want=(P,)):
    """Two slots of every checker: the first round hears one checker (a
    majority is needed), the second publishes.  Returns the second slot."""
    for _ in range(2):
        slot = f.next_slot()
        f.round()
    assert f.dns() == sorted(want)
    return slot


# ---------------------------------------------------------------- status JSON
# What --status --json says of the fleet (ddup-check(8), STATUS JSON: one checker's shape plus
# each checker's last report, who is out of step, each endpoint's votes
# in the last round), read in one place.

def checker(st, name):
    for c in st["fleet"]["checkers"]:
        if c["name"] == name:
            return c
    raise AssertionError(f"no checker {name} in {st['fleet']}")


def endpoint(st, name):
    for e in st["domains"][0]["endpoints"]:
        if e["name"] == name:
            return e
    raise AssertionError(f"no endpoint {name}")


def report(c):
    """(passes, failures) in checker c's last report."""
    return c["passes"], c["failures"]


def votes(e):
    v = e["votes"]
    return v["pass"], v["fail"], v["verdict"]


def last_round(st):
    return st["domains"][0]["round"]


# ---------------------------------------------------------------- cut off

@pytest.mark.parametrize("lo", ["lo", "down"])
def test_cut_off_checker_changes_nothing(fleet, pair, bind_server, lo):
    f = fleet(eps(pair))
    settle(f)
    serial, updates = bind_server.serial(), bind_server.update_count()
    seen = [len(s.requests) for s in pair]
    # c first in two of the slots: it takes those rounds, and is outvoted.
    for order in ("cab", "abc", "cba", "bca"):
        f.next_slot()
        f.round(order, netns={"c": lo})
        assert f.dns() == [P], order
    assert (bind_server.serial(), bind_server.update_count()) == (serial, updates)
    # Its checks never reached the servers; a's and b's did, 4 slots each.
    assert [len(s.requests) - n for s, n in zip(pair, seen)] == [8, 8]
    st = f.status("a")
    d = st["domains"][0]
    assert d["status"] == "healthy" and d["published"] == [P], d
    for name in ("primary", "backup"):
        e = endpoint(st, name)
        assert e["failures"] == 0, e
        assert votes(e) == (2, 1, "pass"), e
    assert [e["state"] for e in d["endpoints"]] == ["active", "standby"]
    # Its reports show the failures; the others' do not.
    assert report(checker(st, "c")) == (0, 2)
    for name in "ab":
        assert report(checker(st, name)) == (2, 0), name
    assert all(checker(st, n)["inStep"] for n in "abc")
    assert st["fleet"]["outOfStep"] == []
    # c's own status, from inside its namespace, says the same.
    inside = f.status("c", netns=lo)
    assert report(checker(inside, "c")) == (0, 2)


def test_cut_off_checker_with_a_control_url_takes_no_round(fleet, pair, http_server):
    """controlUrl is a host key: c alone has one, and stays in step.  Cut
    off, it fails, so c reports no failure and leaves the round to the
    next run of the slot (ddup.ini(5), SEVERAL CHECKERS)."""
    f = fleet(eps(pair))
    control = http_server()
    with open(f.config("c")) as fh:
        text = fh.read()
    with open(f.config("c"), "w") as fh:
        fh.write(f"controlUrl = {control.url}\n" + text)
    settle(f)
    for order in ("cab", "cba"):
        slot = f.next_slot()
        f.round(order, netns={"c": "lo"})
        st = f.status("a")
        rd = last_round(st)
        assert rd["checker"] == order[1] and rd["slot"] == slot, (order, rd)
        assert rd["heard"] == 3 and rd["void"] is False, rd
        for name in ("primary", "backup"):
            # c's report counts no endpoint: two passes, no failure.
            assert votes(endpoint(st, name)) == (2, 0, "pass"), name
    assert report(checker(st, "c")) == (0, 0)
    assert checker(st, "c")["inStep"] is True
    assert f.dns() == [P]
    assert len(control.requests) == 2      # c's runs while settling only


def test_failover_with_a_checker_cut_off(fleet, pair):
    """Two checkers that see the servers are a majority: a real failure is
    failed over whatever the cut-off one says.  The cut-off one cannot
    reach the provider either: the round it takes to fail over is lost,
    and the next round's decider writes DNS (ddup.ini(5), SEVERAL CHECKERS)."""
    f = fleet(eps(pair), attempts=2)
    settle(f)
    pair[0].stop()
    for order in ("cab", "abc"):
        f.next_slot()
        f.round(order, netns={"c": "lo"})
        assert f.dns() == [P], order
    # c decides the primary's second failing round and cannot write.
    f.next_slot()
    r = f.run("c", netns="lo")
    assert r.rc == 1, r
    assert "app.example.test: provider bind: unreachable" in r.err, r
    f.round("ab")
    assert f.dns() == [P]
    assert "unreachable" in f.status("a")["domains"][0]["lastError"]
    f.next_slot()
    f.round("abc", netns={"c": "lo"})
    assert f.dns() == [B]
    assert f.status("a")["domains"][0]["lastError"] is None
    pair[0].start()
    seen = []
    for order in ("abc", "bca", "cab", "abc"):
        f.next_slot()
        f.round(order, netns={"c": "lo"})
        seen.append(f.dns())
    # Back once a and b agree, though c never sees it pass.
    assert seen == [[B], [P], [P], [P]], seen


def test_two_checkers_cut_off_fail_everything_and_dns_stays(fleet, pair, bind_server):
    """A split with the majority on the wrong side: a and b cannot reach
    the servers, so by two votes of three every endpoint fails.  With no
    healthy endpoint DNS is not touched (ddup-check(8), FAILOVER RULES): the domain is unhealthy
    and DNS keeps what it had; once they see the servers again it is
    healthy, still without a write."""
    f = fleet(eps(pair), socket=("a", "b", "c"))
    settle(f)
    serial, updates = bind_server.serial(), bind_server.update_count()
    cut = {"a": "lo", "b": "lo"}
    for order in ("cab", "abc", "bca"):
        f.next_slot()
        f.round(order, netns=cut)
    st = f.status("c")
    d = st["domains"][0]
    assert d["status"] == "unhealthy" and d["published"] == [P], d
    assert [e["state"] for e in d["endpoints"]] == ["down", "down"], d
    assert votes(endpoint(st, "primary")) == (1, 2, "fail")
    assert f.dns() == [P]
    for _ in range(2):
        f.next_slot()
        f.round("cab")
    d = f.status("c")["domains"][0]
    assert d["status"] == "healthy" and d["published"] == [P], d
    assert (bind_server.serial(), bind_server.update_count()) == (serial, updates)
    assert f.dns() == [P]


def test_the_checkers_own_clocks_do_not_matter(fleet, pair, tmp_path):
    """b's clock four minutes ahead, c's three and a half behind (within
    the five minutes TSIG allows, as a DNS update must be signed): four
    slots of a minute either way.  The slots are the database's, so their
    reports fall in the slot they are made in and count, and a real
    failure is failed over on time."""
    f = fleet(eps(pair), attempts=2)
    skew = {"b": clock_shift_env(str(tmp_path), 240), "c": clock_shift_env(str(tmp_path), -210)}
    ahead = subprocess.run([sys.executable, "-c", "import time; print(time.time())"],
                           capture_output=True, text=True, env=dict(os.environ, **skew["b"]),
                           check=True)
    assert float(ahead.stdout) - time.time() > 200, "the shim does not move the clock"
    for _ in range(2):
        f.next_slot()
        f.round(env=skew)
    assert f.dns() == [P]
    pair[0].stop()
    seen = []
    for order in ("bca", "cab", "bca"):
        slot = f.next_slot()
        f.round(order, env=skew)
        seen.append(f.dns())
        st = f.status("a")
        assert [checker(st, n)["slot"] for n in "abc"] == [slot] * 3, st["fleet"]
        rd = last_round(st)
        assert (rd["checker"], rd["slot"], rd["heard"]) == (order[0], slot, 3), rd
    assert seen == [[P], [P], [B]], seen


# ---------------------------------------------------------------- failover

def test_stopped_server_failed_over_by_the_majority_and_back(fleet, pair):
    f = fleet(eps(pair), attempts=2)
    settle(f)
    pair[0].stop()
    seen = []
    for _ in range(3):      # attempts + 1 slots
        f.next_slot()
        f.round()
        seen.append(f.dns())
    # The first slot's round heard only its decider's failure (the others'
    # reports are from before); then two failing rounds remove it.
    assert seen == [[P], [P], [B]], seen
    st = f.status("b")
    e = endpoint(st, "primary")
    assert (e["state"], e["lastResult"]) == ("down", "connection refused"), e
    assert votes(e) == (0, 3, "fail")
    fo = st["domains"][0]["failover"]
    assert fo["seconds"] == 60 * (2 + 1) + 60, fo      # interval x (attempts + 1) + ttl
    pair[0].start()
    seen = []
    for _ in range(2):
        f.next_slot()
        f.round()
        seen.append(f.dns())
    # The decider's pass is outvoted by the others' failures of the slot
    # before: recovery takes one interval more than with one checker.
    assert seen == [[B], [P]], seen
    assert [e["state"] for e in f.status("c")["domains"][0]["endpoints"]] == \
        ["active", "standby"]


NOTIFY = """#!/bin/sh
cat >> "$0.events"
echo >> "$0.events"
"""


def test_events_recorded_and_delivered_once_per_change(fleet, pair, tmp_path):
    """Only the deciding run records a domain's events and delivers them:
    three checkers, one event per change (ddup.ini(5), SEVERAL CHECKERS)."""
    prog = str(tmp_path / "notify")
    with open(prog, "w") as fh:
        fh.write(NOTIFY)
    os.chmod(prog, 0o700)
    f = fleet(eps(pair), attempts=1,
              keys=f"\n[notify log]\ncommand = {prog}\n"
                   "events = dns_updated, endpoint_down, endpoint_up\n")
    settle(f)

    def events():
        try:
            with open(prog + ".events") as fh:
                return [json.loads(line) for line in fh if line.strip()]
        except FileNotFoundError:
            return []

    first = len(events())           # the first publication's
    pair[0].stop()
    for order in ("abc", "bca", "cab"):
        f.next_slot()
        f.round(order)
    assert f.dns() == [B]
    pair[0].start()
    for order in ("bca", "cab", "abc"):
        f.next_slot()
        f.round(order)
    assert f.dns() == [P]
    got = events()[first:]
    assert [(e["event"], e.get("endpoint")) for e in got if e["event"] != "dns_updated"] == \
        [("endpoint_down", "primary"), ("endpoint_up", "primary")], got
    assert [e["published"] for e in got if e["event"] == "dns_updated"] == [[B], [P]], got
    assert len({e["id"] for e in got}) == len(got) == 4, got


# ---------------------------------------------------------------- the decider killed

MOMENTS = ["before_report", "after_report", "provider_call", "provider_call_no_write",
           "before_outcome"]


def lock_tables(pg, but=()):
    """SQL that holds every table of ddup's but those named, so that a run
    blocks at its first read or write of one of them."""
    tables = [t for (t,) in pg.psql("SELECT tablename FROM pg_tables WHERE schemaname = "
                                    "'public' ORDER BY 1") if t not in but]
    return "BEGIN; LOCK TABLE " + ", ".join(f'public."{t}"' for t in tables) + \
        " IN ACCESS EXCLUSIVE MODE;"


def run_while_locked(f, pg, name, but=()):
    """Checker name's run while another session holds ddup's tables (but
    those named): (its result, how long it took)."""
    holder = LockHolder(pg, lock_tables(pg, but=but))
    try:
        t = time.monotonic()
        r = f.run(name)
        return r, time.monotonic() - t
    finally:
        holder.release()


@pytest.mark.parametrize("moment", MOMENTS)
def test_decider_killed(fleet, pair, prov, pg_server, tmp_path, moment):
    """The primary fails for every checker; a takes the round that fails
    it over and is killed at moment.  The primary is then healthy again
    for everyone, so the next round that may change DNS wants the
    opposite of the killed one: DNS must end on the primary."""
    f = fleet(eps(pair), attempts=1, provider=prov.section())
    settle(f)
    base = len(prov.done())
    reports = str(tmp_path / "reports")
    os.mkdir(reports)
    env = killable_env(reports)
    pair[0].set(status=503)
    f.next_slot()
    f.round()           # a outvoted by the slot before; b and c report the failure
    assert f.dns() == [P]
    f.next_slot()
    holder = None
    try:
        if moment == "before_report":
            pair[0].set(delay=60)           # a's check hangs: no report yet
            n = len(pair[0].requests)
            run = f.start("a", env=env)
            wait_for("a's check of the primary", lambda: len(pair[0].requests) > n)
        elif moment == "after_report":
            # The open reads ddup_meta and its report goes in; the round waits.
            holder = LockHolder(pg_server,
                                lock_tables(pg_server, but=("ddup_meta", "ddup_report")))
            run = f.start("a", env=env)
            wait_for("a waiting to take the round", f.waiting_on_lock)
        elif moment.startswith("provider_call"):
            prov.arm("before")
            run = f.start("a", env=env)
            wait_for("a's provider call", lambda: prov.reached("before"))
        else:
            prov.arm("after")
            run = f.start("a", env=env)
            wait_for("a's provider call done", lambda: prov.reached("after"))
            holder = LockHolder(pg_server, lock_tables(pg_server))
            prov.release("after")
            wait_for("a waiting to record the outcome", f.waiting_on_lock)
        f.kill(run)
    finally:
        if holder is not None:
            holder.release()
    pair[0].set(status=200, delay=0)
    if moment == "provider_call":
        prov.release("before")              # the update lands after its run died
    elif moment == "provider_call_no_write":
        prov.kill_blocked("before")
    killed_wrote = moment in ("provider_call", "before_outcome")
    assert f.dns() == ([B] if killed_wrote else [P])
    assert prov.done()[base:] == ([B] if killed_wrote else [])

    if moment in ("before_report", "after_report"):
        # A report goes in on its own, before the round: a killed run
        # waiting for the round leaves its report.
        a = checker(f.status("b"), "a")
        if moment == "after_report":
            assert a["slot"] == f.slot() and report(a) == (1, 1), a
        else:
            assert a["slot"] == f.slot() - 1, a
        # The killed run took no round: b takes this slot's.  Its votes
        # are its own pass and a's and c's failures: the primary goes.
        r = f.run("b")
        assert r.rc == 0, r
        assert f.dns() == [B]
        rd = last_round(f.status("a"))
        assert rd["checker"] == "b" and rd["slot"] == f.slot(), rd
        f.round("c")
        f.next_slot()
        f.round("abc")      # every vote a pass: the primary is back
    else:
        # The killed run used the slot: b and c only report.
        done = len(prov.done())
        f.round("bc")
        assert f.dns() == ([B] if killed_wrote else [P])
        assert len(prov.done()) == done
        rd = last_round(f.status("b"))
        assert rd["checker"] == "a" and rd["slot"] == f.slot(), rd
        # The next round trusts no stored set: it reads DNS back.
        f.next_slot()
        calls = len(prov.calls())
        f.round("abc")
        new = prov.calls()[calls:]
        assert new[0][0] == "read", new
        # Written only where DNS is not what it wants.
        assert len(prov.done()) == done + (1 if killed_wrote else 0)
    assert f.dns() == [P]
    st = f.status("c")
    assert st["domains"][0]["published"] == [P]
    assert st["domains"][0]["lastError"] is None
    assert kill_reports(reports) == []
    # Settled: a further slot changes nothing.
    done = len(prov.done())
    f.next_slot()
    f.round()
    assert len(prov.done()) == done and f.dns() == [P]


def test_deciders_killed_at_random_moments(fleet, pair, bind_server, tmp_path):
    """Deciders killed with SIGKILL after a random delay, with the health
    changed at random between kills: whatever each kill interrupted, two
    slots in which every checker sees the same health leave DNS on what
    that health wants (attempts and recoverAfter 1: the second slot's
    round hears three checkers agree)."""
    seed = int(os.environ.get("DDUP_CRASH_SEED", "0")) or random.SystemRandom().randrange(1, 2**31)
    kills_wanted = int(os.environ.get("DDUP_FLEET_KILLS", "10" if TIME_SCALE == 1 else "4"))
    print(f"\nfleet crash test: DDUP_CRASH_SEED={seed}")
    rng = random.Random(seed)
    reports = str(tmp_path / "reports")
    os.mkdir(reports)
    env = killable_env(reports)
    f = fleet(eps(pair), attempts=1)
    settle(f)
    t0 = time.monotonic()
    f.next_slot()
    f.round()
    typical = (time.monotonic() - t0) / 3
    kills = 0
    while kills < kills_wanted:
        # Health for the killed run, then for the two slots after it.
        pair[0].set(status=200 if rng.random() < 0.5 else 503)
        f.next_slot()
        decider = rng.choice("abc")
        run = f.start(decider, env=env)
        time.sleep(rng.uniform(0, 1.5 * typical))
        if run.poll() is None:
            run.kill()
        run.communicate(timeout=60)
        if run.returncode == -signal.SIGKILL:
            kills += 1
        else:
            assert run.returncode == 0, f"seed {seed}: a run exited {run.returncode}"
        # The others of the slot; some of them killed too.
        for n in "abc".replace(decider, ""):
            if rng.random() < 0.2:
                other = f.start(n, env=env)
                time.sleep(rng.uniform(0, 1.5 * typical))
                if other.poll() is None:
                    other.kill()
                other.communicate(timeout=60)
                assert other.returncode in (0, -signal.SIGKILL), f"seed {seed}"
            else:
                r = f.run(n)
                assert r.rc == 0, f"seed {seed}: {r}"
        up = rng.random() < 0.5
        pair[0].set(status=200 if up else 503)
        for _ in range(2):
            f.next_slot()
            f.round("".join(rng.sample("abc", 3)))
        want = [P] if up else [B]
        assert f.dns() == want, f"seed {seed}, kill {kills}: DNS {f.dns()}, wanted {want}"
        d = f.status("a")["domains"][0]
        assert d["published"] == want and d["lastError"] is None, f"seed {seed}: {d}"
        assert kill_reports(reports) == [], f"seed {seed}"


# ---------------------------------------------------------------- the database down

def test_database_down_every_checker_exits_4_then_recovers(fleet, pair, bind_server,
                                                            pg_server):
    f = fleet(eps(pair), attempts=1)
    settle(f)
    serial, updates = bind_server.serial(), bind_server.update_count()
    pair[0].stop()
    pg_server.stop()
    for n in "abc":
        r = f.run(n)
        assert r.rc == 4, (n, r)
        assert "cannot connect" in r.err and PG_PASSWORD not in r.err, (n, r)
    r = f.run("c", netns="lo")
    assert r.rc == 4, r
    assert f.dns() == [P]
    assert (bind_server.serial(), bind_server.update_count()) == (serial, updates)
    pg_server.start()
    # The database's clock kept its place; the runs go on from their state.
    f.next_slot()
    f.round()           # the decider's failure alone: outvoted by the slot before
    assert f.dns() == [P]
    f.next_slot()
    f.round()
    assert f.dns() == [B]
    e = endpoint(f.status("a"), "primary")
    assert votes(e) == (0, 3, "fail")


def test_database_lost_during_the_provider_call(fleet, pair, prov, pg_server):
    """PostgreSQL goes while the decider's update is out: the update lands,
    its outcome cannot be recorded; once the database is back, the next
    round reads DNS back and puts it right."""
    f = fleet(eps(pair), attempts=1, provider=prov.section())
    settle(f)
    pair[0].set(status=503)
    f.next_slot()
    f.round()
    f.next_slot()
    prov.arm("before")
    run = f.start("a")
    wait_for("a's provider call", lambda: prov.reached("before"))
    pg_server.stop()
    prov.release("before")
    r = f.finish(run)
    assert r.rc == 4, r
    assert "state postgresql://ddup:***@" in r.err and PG_PASSWORD not in r.err, r
    assert f.dns() == [B]
    for n in "bc":
        assert f.run(n).rc == 4
    pg_server.start()
    pair[0].set(status=200)
    f.round("bc")           # the slot is a's: they only report
    assert f.dns() == [B]
    f.next_slot()
    calls = len(prov.calls())
    f.round()
    assert prov.calls()[calls][0] == "read"
    assert f.dns() == [P]
    assert f.status("b")["domains"][0]["published"] == [P]


# ---------------------------------------------------------------- one checker twice

def test_second_run_of_a_checker_exits_3_while_the_first_runs(fleet, pair, prov):
    """Two real runs of b (test_checkers.py holds b's lock from psql)."""
    f = fleet(eps(pair), attempts=1, provider=prov.section())
    settle(f)
    pair[0].set(status=503)
    f.next_slot()
    f.round("cab")
    f.next_slot()
    prov.arm("before")
    first = f.start("b")
    wait_for("b's provider call", lambda: prov.reached("before"))
    r = f.run("b")
    assert r.rc == 3, r
    assert "checker b: another run of this checker holds its lock" in r.err
    for n in "ac":      # the others are not held up
        r = f.run(n)
        assert r.rc == 0, (n, r)
    prov.release("before")
    r = f.finish(first)
    assert r.rc == 0, r
    assert f.dns() == [B]
    assert f.run("b").rc == 0


# ---------------------------------------------------------------- out of step

def test_checker_with_another_configuration_is_not_counted(fleet, pair, bind_server):
    f = fleet(eps(pair), attempts=1)
    settle(f)
    f.write("c", attempts=3)
    serial = bind_server.serial()
    pair[0].stop()
    # Only a and the out-of-step c run: were c counted, two failures
    # would fail the primary over.
    for _ in range(3):
        f.next_slot()
        f.round("ac")
        assert f.dns() == [P]
    assert bind_server.serial() == serial
    st = f.status("a")
    assert checker(st, "c")["inStep"] is False
    assert checker(st, "a")["inStep"] is True
    assert st["fleet"]["outOfStep"] == ["c"]
    e = endpoint(st, "primary")
    assert votes(e) == (0, 1, "void"), e
    assert last_round(st)["void"] is True
    text = f.status_text("a")
    out = [ln for ln in text.splitlines() if "OUT OF STEP" in ln]
    assert len(out) == 1 and out[0].split()[0] == "c", text
    # To c, with the new configuration, a and b (silent since the
    # settling slots) are the ones out of step: those without it.
    assert f.status("c")["fleet"]["outOfStep"] == ["a", "b"]
    # Back in step, it counts again: the primary goes.
    f.write("c")
    f.next_slot()
    f.round("ac")
    f.next_slot()
    f.round("ac")
    assert f.dns() == [B]


# ---------------------------------------------------------------- a lone survivor

def test_lone_survivor_fails_nothing(fleet, pair, bind_server):
    f = fleet(eps(pair), attempts=1)
    settle(f)
    serial = bind_server.serial()
    pair[0].stop()
    for _ in range(4):
        f.next_slot()
        f.round("a")
    assert f.dns() == [P] and bind_server.serial() == serial
    st = f.status("a")
    rd = last_round(st)
    assert rd["void"] is True and rd["heard"] == 1, rd
    e = endpoint(st, "primary")
    assert e["failures"] == 0 and votes(e)[2] == "void", e
    assert "void" in f.status_text("a")
    # Its failures reached its report all the same.
    assert report(checker(st, "a")) == (1, 1)


def test_status_keeps_a_silent_checkers_last_report(fleet, pair):
    f = fleet(eps(pair), attempts=1)
    last = settle(f)
    for _ in range(3):
        f.next_slot()
        f.round("a")
    st = f.status("a")
    # b and c are shown as last heard, in the slot they were last heard in.
    for n in "bc":
        c = checker(st, n)
        assert c["slot"] == last and c["lastReport"] and report(c) == (2, 0), c
    text = f.status_text("a")
    assert "no report" not in text, text


# ---------------------------------------------------------------- status and dry run

def test_status_json_shows_reports_and_votes(fleet, pair):
    f = fleet(eps(pair), attempts=2)
    settle(f)
    pair[1].set(status=503)
    f.next_slot()
    f.round("abc")
    f.next_slot()
    f.round("bac")
    st = f.status("c")
    assert [c["name"] for c in st["fleet"]["checkers"]] == ["a", "b", "c"]
    assert st["fleet"]["quorum"] == 2 and st["fleet"]["outOfStep"] == []
    slot = f.slot()
    for n in "abc":
        c = checker(st, n)
        assert c["inStep"] is True and c["lastReport"] and c["slot"] == slot, c
        assert report(c) == (1, 1), c
    rd = last_round(st)
    assert rd["checker"] == "b" and rd["heard"] == 3 and rd["void"] is False, rd
    assert votes(endpoint(st, "primary")) == (3, 0, "pass")
    assert votes(endpoint(st, "backup")) == (0, 3, "fail")
    # Outvoted in the first slot, failed in the second: one failure of 2.
    assert endpoint(st, "backup")["failures"] == 1
    assert st["domains"][0]["published"] == [P]


def test_dry_run_shows_the_round_now_and_writes_nothing(fleet, pair, bind_server):
    f = fleet(eps(pair), attempts=1)
    settle(f)
    pair[0].stop()
    f.next_slot()
    f.round("bc")           # b decides, outvoted by the slot before; c reports
    f.next_slot()
    before = f.tables()
    serial, updates = bind_server.serial(), bind_server.update_count()
    r = f.run("a", "--dry-run", "--json")
    assert r.rc == 0, r
    d = r.json()["domains"][0]
    # a's failure now and b's and c's of the slot before: the primary goes.
    assert d["published"] == [B], d
    assert votes(endpoint(r.json(), "primary")) == (0, 3, "fail")
    r = f.run("a", "--dry-run")
    assert r.rc == 0 and B in r.out, r
    assert f.tables() == before
    assert (bind_server.serial(), bind_server.update_count()) == (serial, updates)
    assert f.dns() == [P]
    # The round is still there to take: a's real run takes it.
    f.round("a")
    assert f.dns() == [B]
