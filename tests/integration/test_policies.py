"""The policies of ddup.ini(5), POLICIES, run by run against a real BIND.

Locations and failoverLocations, publish = one, minHealthy, failback =
manual with --failback, --drain / --undrain and controlUrl.  Each
endpoint is a real HTTP server on loopback; each step sets which servers
answer 200, runs ddup-check once, checks its exit status, asks BIND with
dig what it serves, and reads --status --json.
"""

import sqlite3
import time

import pytest

from test_failover import NAME, provider_section

# The directory-sync failover example: six servers in this file order.
SIX = [("austin1", "austin", "192.0.2.11"), ("london1", "london", "192.0.2.21"),
       ("boston1", "boston", "192.0.2.31"), ("austin2", "austin", "192.0.2.12"),
       ("boston2", "boston", "192.0.2.32"), ("london2", "london", "192.0.2.22")]
IP = {name: ip for name, _, ip in SIX}


def write(ddup, bind, servers, top="", domain="", eps=SIX, locations=True, prio=None):
    text = "interval = 30s\nattempts = 1\n" + top + provider_section(bind)
    text += f"\n[domain {NAME}]\nprovider = bind\nttl = 60\n{domain}\n"
    for i, ((name, loc, ip), srv) in enumerate(zip(eps, servers)):
        text += f"\n[endpoint {name}]\nurl = {srv.url}\nip = {ip}\n"
        if locations:
            text += f"location = {loc}\n"
        if prio is not None:
            text += f"priority = {prio[i]}\n"
    ddup.write(text)


def step(ddup, bind, servers, up, want, states=None, waiting=None, rc=0):
    """up: one 1/0 per server; want: the endpoint names DNS must hold."""
    for srv, u in zip(servers, up):
        srv.set(status=200 if u == "1" else 503)
    r = ddup.run()
    assert r.rc == rc, r
    assert bind.query(NAME, "A") == sorted(IP[n] for n in want), (up, r)
    st = ddup.status()
    dom = st["domains"][0]
    if states is not None:
        assert " ".join(e["state"] for e in dom["endpoints"]) == states, (up, dom)
    if waiting is not None:
        assert dom["betterTierWaiting"] is waiting, (up, dom)
    return r, st


def play(ddup, bind, servers, steps):
    for s in steps:
        step(ddup, bind, servers, *s)


def test_six_publish_one_manual_failback(ddup, bind_server, http_server):
    """List order is the order of preference; the server in use stays until
    it fails; past the end of the list, the top is tried again."""
    s = [http_server() for _ in SIX]
    write(ddup, bind_server, s, domain="publish = one\nfailback = manual\n", locations=False)
    play(ddup, bind_server, s, [
        ("111111", ["austin1"], "active standby standby standby standby standby", False),
        ("011111", ["london1"], "down active standby standby standby standby", False),
        ("001111", ["boston1"], None, False),
        ("000111", ["austin2"], None, False),
        ("000011", ["boston2"], None, False),
        ("000001", ["london2"], "down down down down down active", False),
        # Everything is back: london2 stays in use, austin1 waits.
        ("111111", ["london2"], "standby standby standby standby standby active", True),
        ("111111", ["london2"], None, True),
        # london2 fails: past the end of the list, austin1.
        ("111110", ["austin1"], "active standby standby standby standby down", False),
    ])
    # --failback is recorded and acted on by the next run.
    step(ddup, bind_server, s, "011111", ["london1"])
    step(ddup, bind_server, s, "111111", ["london1"], waiting=True)
    r = ddup.run("--failback", NAME)
    assert r.rc == 0, r
    assert ddup.status()["domains"][0]["failbackRequested"] is True
    assert bind_server.query(NAME, "A") == [IP["london1"]]
    step(ddup, bind_server, s, "111111", ["austin1"], waiting=False)
    assert ddup.status()["domains"][0]["failbackRequested"] is False
    # Done once: the next failover stays again.
    step(ddup, bind_server, s, "011111", ["london1"])
    step(ddup, bind_server, s, "111111", ["london1"], waiting=True)


def test_six_publish_one_auto_failback(ddup, bind_server, http_server):
    s = [http_server() for _ in SIX]
    write(ddup, bind_server, s, domain="publish = one\n", locations=False)
    play(ddup, bind_server, s, [
        ("111111", ["austin1"]),
        ("011111", ["london1"]),
        ("001111", ["boston1"]),
        # austin1 returns as soon as it is healthy.
        ("101111", ["austin1"], None, False),
    ])


def test_six_location_austin(ddup, bind_server, http_server):
    """The checker in austin: austin1, austin2, then the rest in list order."""
    s = [http_server() for _ in SIX]
    write(ddup, bind_server, s, top="location = austin\npublish = one\n")
    play(ddup, bind_server, s, [
        ("111111", ["austin1"]),
        ("011111", ["austin2"]),
        ("011011", ["london1"]),
        ("001011", ["boston1"]),
        ("000011", ["boston2"]),
        ("000001", ["london2"]),
        ("000101", ["austin2"]),
        ("111111", ["austin1"]),
    ])
    dom = ddup.status()["domains"][0]
    assert dom["tier"] == 0 and dom["tierLocation"] == "austin"
    assert [e["location"] for e in dom["endpoints"]] == [loc for _, loc, _ in SIX]


def test_six_failover_boston(ddup, bind_server, http_server):
    """failoverLocations = boston: austin1, austin2, boston1, boston2, then
    london1, london2."""
    s = [http_server() for _ in SIX]
    write(ddup, bind_server, s, domain="location = austin\nfailoverLocations = boston\n"
          "publish = one\n")
    play(ddup, bind_server, s, [
        ("111111", ["austin1"]),
        ("011111", ["austin2"]),
        ("011011", ["boston1"]),
        ("010011", ["boston2"]),
        ("010001", ["london1"]),
        ("000001", ["london2"]),
        ("001001", ["boston1"]),
        ("111111", ["austin1"]),
    ])


def test_failover_boston_manual_failback(ddup, bind_server, http_server):
    """Failed over to boston, the domain stays there when austin is back;
    status names the tier that waits; --failback returns."""
    s = [http_server() for _ in SIX]
    write(ddup, bind_server, s, top="location = austin\nfailoverLocations = boston\n"
          "publish = one\nfailback = manual\n")
    step(ddup, bind_server, s, "111111", ["austin1"], None, False)
    step(ddup, bind_server, s, "011011", ["boston1"], None, False)
    r, st = step(ddup, bind_server, s, "111111", ["boston1"], None, True)
    dom = st["domains"][0]
    assert (dom["tierLocation"], dom["waitingTier"], dom["waitingTierLocation"]) == \
        ("boston", 0, "austin")
    r = ddup.run("--status")
    assert "waiting: a better tier is healthy (tier 0, location austin)" in r.out, r
    step(ddup, bind_server, s, "110111", ["boston2"], None, True)
    assert ddup.run("--failback", NAME).rc == 0
    step(ddup, bind_server, s, "111111", ["austin1"], None, False)


def test_failover_boston_publish_all(ddup, bind_server, http_server):
    """publish = all: a location's healthy servers together; the tier shows
    its location in status and in the log line."""
    s = [http_server() for _ in SIX]
    write(ddup, bind_server, s, domain="location = austin\nfailoverLocations = boston\n")
    step(ddup, bind_server, s, "111111", ["austin1", "austin2"])
    r, st = step(ddup, bind_server, s, "011011", ["boston1", "boston2"])
    assert "(tier 0, location boston)" in r.err, r
    dom = st["domains"][0]
    assert (dom["tier"], dom["tierLocation"]) == (0, "boston")
    r, st = step(ddup, bind_server, s, "010001", ["london1", "london2"])
    assert "(tier 0, other locations)" in r.err, r
    assert st["domains"][0]["tierLocation"] is None
    step(ddup, bind_server, s, "110010", ["austin1"])
    rows = ddup.state_rows("SELECT tier_rank, tier_location FROM changes ORDER BY id",
                           "SELECT tier_rank, tier_location FROM ddup_change ORDER BY id")
    assert rows == [(0, "austin"), (1, "boston"), (2, None), (0, "austin")]


def test_min_healthy(ddup, bind_server, http_server):
    eps = [("a1", "", "192.0.2.11"), ("a2", "", "192.0.2.12"),
           ("b1", "", "192.0.2.31"), ("b2", "", "192.0.2.32")]
    IP.update({n: ip for n, _, ip in eps})
    s = [http_server() for _ in eps]
    write(ddup, bind_server, s, domain="minHealthy = 2\n", eps=eps, locations=False,
          prio=[0, 0, 10, 10])
    play(ddup, bind_server, s, [
        ("1111", ["a1", "a2"], "active active standby standby"),
        # One left in tier 0: passed over for tier 10.
        ("0111", ["b1", "b2"], "down standby active active"),
        # No tier has two: the best with any.
        ("0101", ["a2"], "down active down standby"),
        ("1111", ["a1", "a2"]),
    ])


def test_manual_failback_tiers(ddup, bind_server, http_server):
    eps = [("main", "", "192.0.2.1"), ("spare1", "", "198.51.100.1"),
           ("spare2", "", "198.51.100.2")]
    IP.update({n: ip for n, _, ip in eps})
    s = [http_server() for _ in eps]
    write(ddup, bind_server, s, domain="failback = manual\n", eps=eps, locations=False,
          prio=[0, 10, 10])
    play(ddup, bind_server, s, [
        ("111", ["main"], None, False),
        ("011", ["spare1", "spare2"], None, False),
        ("111", ["spare1", "spare2"], "standby active active", True),
        ("101", ["spare2"], None, True),
    ])
    r = ddup.run("--status")
    assert "waiting: a better choice is healthy (tier 0)" in r.out, r
    assert f"ddup-check --failback {NAME}" in r.out
    dom = ddup.status()["domains"][0]
    assert dom["waitingTier"] == 0
    # The last spare fails: back to main.
    step(ddup, bind_server, s, "100", ["main"], None, False)


def test_drain(ddup, bind_server, http_server):
    eps = [("web1", "", "192.0.2.1"), ("web2", "", "192.0.2.2"),
           ("backup", "", "198.51.100.9")]
    IP.update({n: ip for n, _, ip in eps})
    s = [http_server() for _ in eps]
    write(ddup, bind_server, s, eps=eps, locations=False, prio=[0, 0, 10])
    step(ddup, bind_server, s, "111", ["web1", "web2"])
    serial = bind_server.serial()
    r = ddup.run("--drain", f"{NAME}/web1")
    assert r.rc == 0, r
    # Recorded only: DNS changes at the next run.
    assert bind_server.serial() == serial
    dom = ddup.status()["domains"][0]
    assert dom["endpoints"][0]["drained"] is True
    assert dom["endpoints"][0]["drainedUntil"] is None
    r, st = step(ddup, bind_server, s, "111", ["web2"], "drained active standby")
    assert "web1: active -> drained" in r.err, r
    ep = st["domains"][0]["endpoints"][0]
    assert ep["healthy"] is True and ep["published"] is False and ep["lastResult"] == "ok"
    assert st["domains"][0]["status"] == "warning"
    # Still checked: a failure shows in its counters (and is not news).
    r, st = step(ddup, bind_server, s, "011", ["web2"], "drained active standby")
    assert "web1" not in r.err, r
    assert st["domains"][0]["endpoints"][0]["failures"] == 1
    # Draining the last healthy ones: DNS keeps the last set
    # (ddup-check(8), FAILOVER RULES).
    assert ddup.run("--drain", f"{NAME}/web2").rc == 0
    step(ddup, bind_server, s, "111", ["backup"], "drained drained active")
    assert ddup.run("--drain", f"{NAME}/backup").rc == 0
    r, st = step(ddup, bind_server, s, "111", ["backup"], "drained drained drained")
    assert st["domains"][0]["status"] == "unhealthy"
    assert "no healthy endpoint" in r.err
    for n in ("web1", "web2", "backup"):
        assert ddup.run("--undrain", f"{NAME}/{n}").rc == 0
    step(ddup, bind_server, s, "111", ["web1", "web2"], "active active standby")
    r = ddup.run("--status")
    assert "drained" not in r.out


def test_drain_for_duration_runs_out(ddup, bind_server, http_server):
    eps = [("web1", "", "192.0.2.1"), ("web2", "", "192.0.2.2")]
    IP.update({n: ip for n, _, ip in eps})
    s = [http_server() for _ in eps]
    write(ddup, bind_server, s, eps=eps, locations=False)
    step(ddup, bind_server, s, "11", ["web1", "web2"])
    assert ddup.run("--drain", f"{NAME}/web1", "--for", "1h").rc == 0
    dom = ddup.status()["domains"][0]
    assert dom["endpoints"][0]["drainedUntil"].endswith("Z")
    step(ddup, bind_server, s, "11", ["web2"], "drained active")
    # The time runs out (moved back, as an hour would pass).
    ddup.state_exec("UPDATE drains SET until = '2000-01-01T00:00:00.000Z'",
                    "UPDATE ddup_drain SET until = '2000-01-01T00:00:00Z'")
    step(ddup, bind_server, s, "11", ["web1", "web2"], "active active")
    assert ddup.state_rows("SELECT count(*) FROM drains",
                           "SELECT count(*) FROM ddup_drain") == [(0,)]


def test_drain_for_at_most_ten_years(ddup, bind_server, http_server):
    """--for is capped as configuration durations are (3650d): above it
    one line, exit 2 and nothing recorded; 3650d itself is taken, with a
    date ten years on (no overflow into a year before Christ)."""
    s = [http_server()]
    write(ddup, bind_server, s, eps=[("web1", "", "192.0.2.1")], locations=False)
    for big in ("106751991167d", "3651d", "9223372036854775807ms", "315360000001"):
        r = ddup.run("--drain", f"{NAME}/web1", "--for", big)
        assert r.rc == 2, (big, r)
        assert r.err == f"ddup-check: --for {big}: at most 3650d\n", (big, r)
        assert not ddup.state_made(), big
    r = ddup.run("--drain", f"{NAME}/web1", "--for", "3650d")
    assert r.rc == 0, r
    until = ddup.status()["domains"][0]["endpoints"][0]["drainedUntil"]
    year = int(until.split("-")[0])
    assert time.gmtime().tm_year + 9 <= year <= time.gmtime().tm_year + 11, until
    assert f"drained until {until}" in r.err, r


def test_requests_unknown_names(ddup, bind_server, http_server):
    s = [http_server()]
    eps = [("web1", "", "192.0.2.1")]
    write(ddup, bind_server, s, eps=eps, locations=False)
    for args, msg in [
        (("--drain", "nope.example.test/web1"), "no domain 'nope.example.test'"),
        (("--drain", f"{NAME}/web9"), "no endpoint 'web9'"),
        (("--undrain", f"{NAME}/web9"), "no endpoint 'web9'"),
        (("--drain", NAME), "expected DOMAIN/ENDPOINT"),
        (("--failback", "nope.example.test"), "no domain 'nope.example.test'"),
        (("--drain", f"{NAME}/web1", "--for", "soon"), "expected a duration"),
        (("--undrain", f"{NAME}/web1", "--for", "1h"), "goes with --drain"),
        (("--drain", f"{NAME}/web1", "--status"), "go alone"),
    ]:
        r = ddup.run(*args)
        assert r.rc == 2, (args, r)
        assert msg in r.err, (args, r)
    # Nothing was created.
    assert not ddup.state_made()
    # A trailing dot and another case name the same domain.
    assert ddup.run("--drain", f"{NAME.upper()}./WEB1").rc == 0
    assert ddup.status()["domains"][0]["endpoints"][0]["drained"] is True


def test_control_url(ddup, bind_server, http_server):
    ctl = http_server()
    eps = [("main", "", "192.0.2.1"), ("backup", "", "198.51.100.1")]
    IP.update({n: ip for n, _, ip in eps})
    s = [http_server() for _ in eps]
    write(ddup, bind_server, s, top=f"controlUrl = {ctl.url}\n", eps=eps, locations=False,
          prio=[0, 10])
    step(ddup, bind_server, s, "11", ["main"])
    serial = bind_server.serial()
    # The checker's own network fails: every endpoint "fails" with it.
    ctl.set(status=503)
    for _ in range(3):
        r, st = step(ddup, bind_server, s, "00", ["main"], "active standby")
        assert r.err.count("\n") == 1 and "controlUrl" in r.err and "warning" in r.err, r
        assert bind_server.serial() == serial
        ep = st["domains"][0]["endpoints"][0]
        assert ep["failures"] == 0
        c = st["controlUrl"]
        assert c["ok"] is False and c["failedSince"].endswith("Z")
        assert c["lastResult"] == "HTTP 503"
    since = c["failedSince"]
    r = ddup.run("--status")
    assert f"controlUrl {ctl.url} has failed since {since[:19]}" in r.out, r
    # Passes still count (ddup.ini(5), POLICIES); a checker of a shared state whose
    # controlUrl fails takes no round at all (ddup.ini(5), SEVERAL CHECKERS).
    r, st = step(ddup, bind_server, s, "10", ["main"])
    assert st["controlUrl"]["failedSince"] == since
    assert st["domains"][0]["endpoints"][0]["passes"] == (1 if ddup.on_pg() else 2)
    # Back: failures count again, and the failover happens.
    ctl.set(status=200)
    r, st = step(ddup, bind_server, s, "01", ["backup"], "down active")
    assert st["controlUrl"] == {"url": ctl.url, "ok": True, "failedSince": None,
                                "lastResult": None}


# The SQLite file's streaks (history, current, uptime) of runs a failed controlUrl
# excuses; on a shared state such a checker takes no round at all (ddup.ini(5), SEVERAL CHECKERS:
# test_fleet.py, test_pg_state.py).
@pytest.mark.sqlite_file
def test_control_url_failing_adds_no_check_to_a_streak(ddup, bind_server, http_server):
    """Runs excused by a failed control URL are no checks of the endpoints
    whose checks failed: their open streaks end at their last counted check
    (count and time), and the next check begins a new one.  Passes still
    go on with their streaks."""
    ctl = http_server()
    eps = [("main", "", "192.0.2.1"), ("backup", "", "198.51.100.1")]
    IP.update({n: ip for n, _, ip in eps})
    s = [http_server() for _ in eps]
    write(ddup, bind_server, s, top=f"controlUrl = {ctl.url}\n", eps=eps, locations=False,
          prio=[0, 10])
    step(ddup, bind_server, s, "11", ["main"])
    step(ddup, bind_server, s, "11", ["main"])
    ctl.set(status=503)

    def hist(sql):
        db = sqlite3.connect(f"file:{ddup.state}?mode=ro", uri=True)
        try:
            return db.execute(sql).fetchall()
        finally:
            db.close()

    last = hist("SELECT value FROM meta WHERE key = 'last_run'")[0][0]
    for _ in range(3):
        _, st = step(ddup, bind_server, s, "01", ["main"])
        # --status keeps the last counted result.
        ep = st["domains"][0]["endpoints"][0]
        assert (ep["name"], ep["lastResult"], ep["failures"]) == ("main", "ok", 0), ep
    assert hist("SELECT endpoint, checks, last, open FROM history ORDER BY endpoint") == \
        [("backup", 5, hist("SELECT value FROM meta WHERE key = 'last_run'")[0][0], 1),
         ("main", 2, last, 0)]
    assert hist("SELECT endpoint, health, streak_checks, last_result FROM current"
                " ORDER BY endpoint") == [("backup", "ok", 5, "ok"), ("main", "ok", 2, "ok")]
    assert hist("SELECT endpoint, sum(checks), sum(passed) FROM uptime"
                " GROUP BY endpoint ORDER BY endpoint") == [("backup", 5, 5), ("main", 2, 2)]
    # Back: the next check of main begins a streak of its own.
    ctl.set(status=200)
    step(ddup, bind_server, s, "11", ["main"])
    assert hist("SELECT checks, open FROM history WHERE endpoint = 'main' ORDER BY id") == \
        [(2, 0), (1, 1)]
    assert hist("SELECT endpoint, sum(checks), sum(passed) FROM uptime"
                " GROUP BY endpoint ORDER BY endpoint") == [("backup", 6, 6), ("main", 3, 3)]
    _, st = step(ddup, bind_server, s, "11", ["main"])
    assert st["domains"][0]["endpoints"][0]["passes"] == 4


def test_control_url_stopped_on_first_run(ddup, bind_server, http_server):
    """A first run whose control URL fails touches nothing and counts no
    failure: one warning line, not "no healthy endpoint"."""
    ctl = http_server()
    ctl.stop()
    eps = [("main", "", "192.0.2.1")]
    s = [http_server()]
    s[0].set(status=503)
    write(ddup, bind_server, s, top=f"controlUrl = {ctl.url}\n", eps=eps, locations=False)
    r = ddup.run()
    assert r.rc == 0 and "connection refused" in r.err, r
    assert r.err.count("\n") == 1 and "no healthy endpoint" not in r.err, r
    assert bind_server.query(NAME, "A") == []
    dom = ddup.status()["domains"][0]
    assert dom["endpoints"][0]["state"] == "unknown" and dom["endpoints"][0]["failures"] == 0
    ctl.start()
    s[0].set(status=200)
    r = ddup.run()
    assert r.rc == 0 and "healthy endpoints again" not in r.err, r
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
