"""The bad day against the real BIND (ddup.ini(5), POLICIES: allDown,
fallback, degradedTtl): what each allDown publishes when nothing passes,
the way back as soon as something does, the TTL while off the preferred
set, and the runs that must change nothing (a failed controlUrl, a void
round of several checkers).  dig after every run.

Run on the SQLite file and, with DDUP_TEST_STATE=postgresql, on
PostgreSQL; the fleet test is PostgreSQL's own.
"""

import json
import subprocess

import pytest

from conftest import DDUP
from fleetfix import Fleet
from test_failover import NAME, provider_section

P1, P2, B = "192.0.2.1", "192.0.2.2", "192.0.2.3"
FB4, FB6 = "192.0.2.99", "2001:db8::99"


def answer(bind, rtype):
    """[(ttl, address)] that BIND serves for NAME, sorted."""
    p = subprocess.run(["dig", "+norec", "+noall", "+answer", "+time=2", "+tries=1",
                        "@127.0.0.1", "-p", str(bind.port), NAME, rtype],
                       capture_output=True, text=True, timeout=15, check=True)
    out = []
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) >= 5 and f[3] == rtype:
            out.append((int(f[1]), f[4]))
    return sorted(out, key=lambda t: t[1])


def write(ddup, bind, eps, keys, top=""):
    text = f"interval = 30s\nmetricsFile = {ddup.dir}/ddup.prom\n{top}" + provider_section(bind)
    if "attempts" not in keys:
        keys = "attempts = 1\n" + keys
    text += f"\n[domain {NAME}]\nprovider = bind\nttl = 60\n{keys}\n"
    for name, srv, ip, prio in eps:
        text += f"\n[endpoint {name}]\nurl = {srv.url}\nip = {ip}\npriority = {prio}\n"
    # The events are kept (table events) for a [notify] that wants them.
    text += "\n[notify ops]\ncommand = /bin/true\nevents = all_unhealthy\n"
    ddup.write(text)


def step(ddup, servers, up):
    for srv, u in zip(servers, up):
        srv.set(status=200 if u == "1" else 503)
    r = ddup.run()
    assert r.rc == 0, r
    return ddup.status()["domains"][0]


def states(d):
    return " ".join(e["state"] for e in d["endpoints"])


def failover_gauge(ddup):
    with open(ddup.dir / "ddup.prom") as f:
        for line in f:
            if line.startswith(f'ddup_domain_failover{{domain="{NAME}"}} '):
                return int(line.split()[1])
    raise AssertionError("no ddup_domain_failover series")


def events(ddup, kind):
    rows = ddup.state_rows(f"SELECT body FROM events WHERE event = '{kind}' ORDER BY id",
                           f"SELECT body FROM ddup_event WHERE event = '{kind}' ORDER BY id")
    return [json.loads(r[0]) for r in rows]


def test_fallback_run_by_run(ddup, bind_server, http_server):
    """Both servers fail: the fallback page's addresses, at degradedTtl, the
    domain unhealthy and in failover; a steady outage writes nothing; the
    first server back is published at once (still degraded: the other is
    missing), and with both back the domain's ttl returns."""
    a, b = http_server(), http_server()
    write(ddup, bind_server, [("web1", a, P1, 0), ("web2", b, P2, 0)],
          f"allDown = fallback\nfallback = {FB4}, {FB6}\ndegradedTtl = 10\n")

    d = step(ddup, [a, b], "11")
    assert answer(bind_server, "A") == [(60, P1), (60, P2)]
    assert answer(bind_server, "AAAA") == []
    assert d["status"] == "healthy" and d["tier"] == 0
    assert d["failoverSince"] is None and d["degradedTtl"] is None

    d = step(ddup, [a, b], "00")
    assert answer(bind_server, "A") == [(10, FB4)]
    assert answer(bind_server, "AAAA") == [(10, FB6)]
    assert d["status"] == "unhealthy" and d["tier"] == "fallback", d
    assert d["published"] == [FB4, FB6]
    assert states(d) == "down down"
    assert d["failoverSince"] is not None
    assert d["failoverReason"] == "web1: down (HTTP 503)"
    assert d["degradedTtl"] == 10
    assert failover_gauge(ddup) == 2
    ev = events(ddup, "all_unhealthy")
    assert len(ev) == 1 and ev[0]["published"] == [FB4, FB6], ev
    assert ev[0]["tier"] == "fallback", ev
    since = d["failoverSince"]
    text = ddup.run("--status").out
    assert "(fallback: no endpoint is healthy)" in text, text
    assert f"in failover since {since}: web1: down (HTTP 503)" in text, text
    assert "degradedTtl 10 in force" in text, text

    updates = bind_server.update_count()
    d = step(ddup, [a, b], "00")
    assert bind_server.update_count() == updates, "a steady outage wrote DNS"
    assert answer(bind_server, "A") == [(10, FB4)]
    assert d["failoverSince"] == since
    assert len(events(ddup, "all_unhealthy")) == 1

    d = step(ddup, [a, b], "10")
    assert answer(bind_server, "A") == [(10, P1)]
    assert answer(bind_server, "AAAA") == []
    assert d["status"] == "warning" and d["tier"] == 0
    assert d["failoverSince"] == since, "the failover goes on until the preferred set"
    assert failover_gauge(ddup) == 1

    d = step(ddup, [a, b], "11")
    assert answer(bind_server, "A") == [(60, P1), (60, P2)]
    assert answer(bind_server, "AAAA") == []
    assert d["status"] == "healthy"
    assert d["failoverSince"] is None and d["degradedTtl"] is None
    assert failover_gauge(ddup) == 0
    assert "in failover" not in ddup.run("--status").out
    assert ddup.state_rows("SELECT count(*) FROM failovers",
                           "SELECT count(*) FROM ddup_failover") == [(0,)]


def test_all_publishes_the_best_tier_not_drained(ddup, bind_server, http_server):
    """allDown = all: every endpoint of the best tier that is not drained,
    healthy or not; the endpoints stay down (in DNS by allDown alone, a
    failure does not make them failing), and the backup coming back takes
    over at once."""
    a, b, c = http_server(), http_server(), http_server()
    write(ddup, bind_server, [("web1", a, P1, 0), ("web2", b, P2, 0), ("backup", c, B, 10)],
          "allDown = all\n")
    step(ddup, [a, b, c], "111")
    assert answer(bind_server, "A") == [(60, P1), (60, P2)]
    r = ddup.run("--drain", f"{NAME}/web2")
    assert r.rc == 0, r

    d = step(ddup, [a, b, c], "000")
    assert [x for _, x in answer(bind_server, "A")] == [P1]
    assert d["status"] == "unhealthy" and d["tier"] == 0
    assert states(d) == "down drained down"
    ev = events(ddup, "all_unhealthy")
    assert len(ev) == 1 and ev[0]["published"] == [P1], ev

    d = step(ddup, [a, b, c], "000")
    assert states(d) == "down drained down", "published by allDown is not healthy"
    assert [x for _, x in answer(bind_server, "A")] == [P1]

    d = step(ddup, [a, b, c], "001")
    assert [x for _, x in answer(bind_server, "A")] == [B]
    assert d["status"] == "warning" and d["tier"] == 10
    assert states(d) == "down drained active"


def test_keep_leaves_dns_as_it_is(ddup, bind_server, http_server):
    """The default: nothing healthy, nothing written."""
    a = http_server()
    write(ddup, bind_server, [("web1", a, P1, 0)], f"fallback = {FB4}\n")
    step(ddup, [a], "1")
    updates = bind_server.update_count()
    d = step(ddup, [a], "0")
    assert bind_server.update_count() == updates
    assert [x for _, x in answer(bind_server, "A")] == [P1]
    assert d["status"] == "unhealthy" and d["tier"] == 0


def test_failed_control_url_publishes_no_fallback(ddup, bind_server, http_server):
    """The checker blames its own network: however the endpoints fail,
    allDown does not apply and DNS stays."""
    a, ctl = http_server(), http_server()
    write(ddup, bind_server, [("web1", a, P1, 0)],
          f"allDown = fallback\nfallback = {FB4}\n", top=f"controlUrl = {ctl.url}\n")
    step(ddup, [a], "1")
    ctl.set(status=503)
    d = step(ddup, [a], "0")
    assert [x for _, x in answer(bind_server, "A")] == [P1]
    assert d["tier"] == 0 and d["published"] == [P1]
    assert events(ddup, "all_unhealthy") == []
    ctl.set(status=200)
    d = step(ddup, [a], "0")
    assert [x for _, x in answer(bind_server, "A")] == [FB4]
    assert d["tier"] == "fallback"


def test_dry_run_says_what_fallback_would_publish(ddup, bind_server, http_server):
    a = http_server()
    write(ddup, bind_server, [("web1", a, P1, 0)], f"allDown = fallback\nfallback = {FB4}\n")
    step(ddup, [a], "1")
    a.set(status=503)
    r = ddup.run("--dry-run", "--json")
    assert r.rc == 0, r
    d = r.json()["domains"][0]
    assert d["tier"] == "fallback" and d["published"] == [FB4], d
    assert [x for _, x in answer(bind_server, "A")] == [P1], "a dry run wrote DNS"


@pytest.mark.parametrize("keys,words", [
    ("degradedTtl = 30\n", ["degradedTtl 30 is outside", "60..86400"]),
    ("degradedTtl = 120\n", ["degradedTtl 120 is not below ttl 120"]),
    ("allDown = fallback\n", ["allDown = fallback needs 'fallback' addresses"]),
    ("allDown = some\n", ["'allDown': expected keep, all or fallback, not 'some'"]),
    ("fallback = 192.0.2.9, www.example.com\n", ["'www.example.com' is not an IPv4"]),
    ("fallback = 192.0.2.9, 192.0.2.9\n", ["address 192.0.2.9 listed twice"]),
])
def test_bad_keys_refused_at_n(tmp_path, keys, words):
    """Each TTL within the provider's range (Cloudflare: 60..86400) and
    degradedTtl below ttl; the file and line named, exit 2."""
    path = tmp_path / "ddup.ini"
    path.write_text(f"state = {tmp_path}/state.db\n"
                    "[provider cf]\ntype = cloudflare\napiToken = t0ken\nzone = example.test\n"
                    f"[domain {NAME}]\nprovider = cf\nttl = 120\n{keys}"
                    "[endpoint web1]\nurl = http://127.0.0.1:1/\nip = 192.0.2.1\n")
    path.chmod(0o600)
    p = subprocess.run([DDUP, "-n", "-c", str(path)], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 2, p
    assert f"{path}:9:" in p.stderr, p.stderr
    for w in words:
        assert w in p.stderr, p.stderr
    assert not (tmp_path / "state.db").exists()


def test_void_round_publishes_no_fallback(tmp_path, pg_server, bind_server, http_server):
    """Three checkers, quorum 2: a round that hears one checker is void;
    whatever that one saw, allDown does not apply.  With two heard and
    both failing, the fallback goes out."""
    a = http_server()
    f = Fleet(tmp_path, pg_server, bind_server, [("web1", a, P1, 0)], attempts=1,
              domain_keys=f"allDown = fallback\nfallback = {FB4}\n")
    try:
        for _ in range(2):
            f.next_slot()
            f.round("ab")
        assert f.dns() == [P1]
        a.set(status=503)
        f.next_slot(3)          # the slot before is empty: a alone is heard
        f.round("a")
        d = f.status("a")["domains"][0]
        assert d["round"]["void"] is True and d["round"]["heard"] == 1, d
        assert f.dns() == [P1]
        assert d["tier"] == 0, d
        # The next slot's round hears a and b only from the one after.
        for _ in range(2):
            f.next_slot()
            f.round("ab")
        assert f.dns() == [FB4]
        assert f.status("a")["domains"][0]["tier"] == "fallback"
    finally:
        f.stop_all()


def test_all_from_the_first_run_stays_down(ddup, bind_server, http_server):
    """Nothing passes from the first run on, attempts = 3: allDown = all
    publishes both; at the next failure they are not counted as published
    and healthy (down, not failing), and the domain stays unhealthy."""
    a, b = http_server(status=503), http_server(status=503)
    write(ddup, bind_server, [("web1", a, P1, 0), ("web2", b, P2, 0)],
          "allDown = all\nattempts = 3\n")
    for _ in range(2):
        d = step(ddup, [a, b], "00")
        assert [x for _, x in answer(bind_server, "A")] == [P1, P2]
        assert d["status"] == "unhealthy", d
        assert states(d) == "down down", d
    d = step(ddup, [a, b], "10")
    assert [x for _, x in answer(bind_server, "A")] == [P1]
    assert d["status"] == "warning" and states(d) == "active down", d
