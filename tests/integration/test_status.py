"""--status (ddup-check(8), STATUS JSON) beyond its first shape: each domain's failover time
with the settings it comes from, and the warning when the last run is
older than three intervals, in text and JSON (and in --dry-run)."""

import calendar
import re
import time

from fleetfix import clock_shift_env
from test_failover import NAME, write_config

KEYS = "attempts = 3\ntimeout = 2500ms\n"


def two_servers(ddup, bind_server, http_server):
    p, b = http_server(), http_server()
    write_config(ddup, bind_server, [("primary", p, "192.0.2.1", 0),
                                     ("backup", b, "192.0.2.2", 10)], KEYS)


def test_failover_time(ddup, bind_server, http_server):
    """interval 30s x attempts 3 + ttl 60s = 2m30s; 2.5 s more per check
    that times out."""
    two_servers(ddup, bind_server, http_server)
    want = {"seconds": 150, "secondsWhenTimingOut": 152.5, "interval": 30,
            "attempts": 3, "ttl": 60, "timeout": 2.5}
    line = ("  failover: 2m30s (interval 30s x attempts 3 + ttl 60s), "
            "2m32.500s when checks time out (+ timeout 2.500s)")
    # Before the first run, after it, and in a dry run: the same figures.
    assert ddup.status()["domains"][0]["failover"] == want
    assert ddup.run().rc == 0
    doc = ddup.status()
    assert doc["domains"][0]["failover"] == want
    assert doc["interval"] == 30
    r = ddup.run("--status")
    assert r.rc == 0 and line in r.out.splitlines(), r
    r = ddup.run("--dry-run", "--json")
    assert r.rc == 0 and r.json()["domains"][0]["failover"] == want, r
    r = ddup.run("--dry-run")
    assert line in r.out.splitlines(), r


def test_stale_last_run(ddup, bind_server, http_server):
    """Fresh: no warning.  The last run set back 100 s with an interval
    of 30 s: the warning, and stale in JSON with the time it began."""
    two_servers(ddup, bind_server, http_server)
    doc = ddup.status()
    assert (doc["stale"], doc["staleAfter"]) == (False, None)
    assert ddup.run().rc == 0
    doc = ddup.status()
    assert doc["stale"] is False and doc["staleAfter"] > doc["lastRun"]
    r = ddup.run("--status")
    assert "older than three intervals" not in r.out, r

    then = int(time.time()) - 100
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(then))
    ddup.state_exec(f"UPDATE meta SET value = '{stamp}' WHERE key = 'last_run'",
                    f"UPDATE ddup_meta SET value = '{stamp}' WHERE key = 'last_run'")
    doc = ddup.status()
    assert doc["stale"] is True
    assert doc["lastRun"] == stamp.replace(".000Z", "Z")
    assert doc["staleAfter"] == time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                              time.gmtime(then + 90)), doc
    r = ddup.run("--status")
    assert r.rc == 0
    assert ("warning: the last run is older than three intervals: is the "
            "scheduler running?") in r.out.splitlines(), r
    # A run makes it fresh again.
    assert ddup.run().rc == 0
    assert ddup.status()["stale"] is False
    assert ddup.status()["domains"][0]["name"] == NAME


def clock_at(tmp_path, when):
    """The environment of a process whose clock says when (UTC text)."""
    t = calendar.timegm(time.strptime(when, "%Y-%m-%dT%H:%M:%S"))
    return clock_shift_env(str(tmp_path), t - time.time())


def year_10056(tmp_path):
    """10056-03-01 (Python's time cannot reach it: 2056-03-01 + 8000
    years, 20 cycles of 400 years of 146097 days each)."""
    t = calendar.timegm((2056, 3, 1, 12, 0, 0)) + 20 * 146097 * 86400
    return clock_shift_env(str(tmp_path), t - time.time())


def last_run_line(ddup, env=None):
    r = ddup.run("--status", env=env)
    assert r.rc == 0, r
    return r, r.out.splitlines()[0]


def test_last_run_clock_moved_back(ddup, bind_server, http_server, tmp_path):
    """A run now, --status with a clock back in 1973: the last run is in
    the future, said so, not a negative age."""
    two_servers(ddup, bind_server, http_server)
    assert ddup.run().rc == 0
    r, line = last_run_line(ddup, clock_at(tmp_path, "1973-06-01T00:00:00"))
    assert re.fullmatch(r"last run: 20\d\d-\S+Z \(in the future: has the clock "
                        r"moved back\?\)", line), r
    assert "older than three intervals" not in r.out, r
    doc = ddup.run("--status", "--json", env=clock_at(tmp_path, "1973-06-01T00:00:00")).json()
    assert doc["generatedAt"].startswith("1973-06-01T") and doc["stale"] is False, doc
    # And a fresh one reads as an age.
    r, line = last_run_line(ddup)
    assert re.fullmatch(r"last run: \S+Z \((\d+m)?\d+s ago\)", line), r


def test_last_run_clock_not_set(ddup, bind_server, http_server, tmp_path):
    """Runs with a clock in 1973 and in 1969 (before the epoch): their
    last run is shown, never as "never", and the age says the clock was
    not set rather than 1700000000s."""
    two_servers(ddup, bind_server, http_server)
    for when in ("1973-06-01T00:00:00", "1969-07-20T20:17:40"):
        env = clock_at(tmp_path, when)
        ddup.run(env=env)       # BIND refuses the update: TSIG's time
        doc = ddup.run("--status", "--json", env=env).json()
        assert doc["lastRun"] is not None and doc["lastRun"][:10] == when[:10], doc
        ep = doc["domains"][0]["endpoints"][0]
        assert ep["lastCheck"] is not None and ep["lastCheck"][:4] == when[:4], doc
        for e in (env, None):
            r, line = last_run_line(ddup, e)
            assert line == (f"last run: {doc['lastRun']} (before 2024: was the "
                            "clock set?)"), r
            assert " never " not in r.out, r


def test_last_run_five_digit_year(ddup, bind_server, http_server, tmp_path):
    """A clock in the year 10056: the state's times have five digits
    and are read back (not "never"), the age is an age and the columns
    after LAST CHECK stay under their headers."""
    two_servers(ddup, bind_server, http_server)
    env = year_10056(tmp_path)
    ddup.run(env=env)
    doc = ddup.run("--status", "--json", env=env).json()
    assert doc["lastRun"] is not None and doc["lastRun"].startswith("10056-03-01T"), doc
    assert doc["domains"][0]["endpoints"][0]["lastCheck"].startswith("10056-"), doc
    assert doc["staleAfter"] > doc["lastRun"] and doc["stale"] is False, doc
    r, line = last_run_line(ddup, env)
    assert re.fullmatch(r"last run: 10056-03-01T\S+Z \((\d+m)?\d+s ago\)", line), r
    rows = [x for x in r.out.splitlines() if x.startswith("  ") and
            x.split()[0] in ("ENDPOINT", "primary", "backup")]
    assert len(rows) == 3, r
    # LATENCY is right-aligned: where it ends, each row's "N ms" ends.
    assert len({x.index("LATENCY") + 7 if "LATENCY" in x else x.index(" ms") + 3
                for x in rows}) == 1, r
    # Now: the run of 10056 is in the future.
    r, line = last_run_line(ddup)
    assert line.endswith("(in the future: has the clock moved back?)"), r
