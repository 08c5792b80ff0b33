"""--status (SPEC 8) beyond its first shape: each domain's failover time
with the settings it comes from, and the warning when the last run is
older than three intervals, in text and JSON (and in --dry-run)."""

import time

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
