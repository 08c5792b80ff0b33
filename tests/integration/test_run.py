"""A run as cron sees it: exit codes, output, the lock, the state file,
change-only publication, provider outage, and a run killed midway."""

import fcntl
import json
import os
import resource
import signal
import sqlite3
import stat
import subprocess
import time

import pytest

from conftest import DDUP, TIME_SCALE
from test_failover import NAME, nsupdate, write_config


def two(ddup, bind, http_server, keys="attempts = 1\n"):
    p, b = http_server(), http_server()
    write_config(ddup, bind, [("primary", p, "192.0.2.1", 0),
                              ("backup", b, "192.0.2.2", 10)], keys)
    return p, b


def test_change_only_publication(ddup, bind_server, http_server):
    two(ddup, bind_server, http_server)
    r = ddup.run()
    assert r.rc == 0, r
    assert "DNS updated" in r.err and "192.0.2.1" in r.err
    assert r.out == ""
    serial = bind_server.serial()
    for _ in range(3):
        r = ddup.run()
        assert (r.rc, r.out, r.err) == (0, "", ""), r
    assert bind_server.serial() == serial


def test_first_run_reads_provider_and_writes_only_if_different(ddup, bind_server, http_server):
    nsupdate(bind_server, f"update add {NAME} 60 A 192.0.2.1")
    serial = bind_server.serial()
    two(ddup, bind_server, http_server)
    r = ddup.run()
    assert (r.rc, r.err) == (0, ""), r
    assert bind_server.serial() == serial
    assert ddup.status()["domains"][0]["published"] == ["192.0.2.1"]


def test_first_run_replaces_foreign_records(ddup, bind_server, http_server):
    nsupdate(bind_server, f"update add {NAME} 60 A 203.0.113.9")
    two(ddup, bind_server, http_server)
    assert ddup.run().rc == 0
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]


def test_ttl_change_is_published(ddup, bind_server, http_server):
    two(ddup, bind_server, http_server)
    assert ddup.run().rc == 0
    serial = bind_server.serial()
    text = open(ddup.config).read().replace("ttl = 60", "ttl = 300")
    open(ddup.config, "w").write(text)
    assert ddup.run().rc == 0
    assert bind_server.serial() != serial
    out = subprocess.run(["dig", "+noall", "+answer", "@127.0.0.1", "-p", str(bind_server.port),
                          NAME, "A"], capture_output=True, text=True).stdout
    assert "\t300\t" in out or " 300 " in out, out


def test_provider_outage_and_recovery(ddup, bind_server, http_server):
    p, _ = two(ddup, bind_server, http_server)
    assert ddup.run().rc == 0
    bind_server.stop()
    p.set(status=503)
    r = ddup.run()
    assert r.rc == 1, r
    assert "bind" in r.err and "error" in r.err
    st = ddup.status()["domains"][0]
    assert st["lastError"]
    assert st["published"] == ["192.0.2.1"]     # the stored set is unchanged
    bind_server.start()
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.query(NAME, "A") == ["192.0.2.2"]
    st = ddup.status()["domains"][0]
    assert st["lastError"] is None and st["published"] == ["192.0.2.2"]


def test_wrong_key_is_an_authentication_failure(ddup, bind_server, http_server):
    two(ddup, bind_server, http_server)
    secret = "d3Jvbmd3cm9uZ3dyb25nd3Jvbmd3cm9uZ3dyb25nMTI="
    text = open(ddup.config).read().replace(bind_server.key_secret, secret)
    open(ddup.config, "w").write(text)
    r = ddup.run()
    assert r.rc == 1
    assert "authentication" in r.err and "NOTAUTH" in r.err, r
    assert secret not in r.err + r.out
    assert bind_server.query(NAME, "A") == []


@pytest.mark.serial
@pytest.mark.sqlite_file
def test_lock_held_exits_3_at_once(ddup, bind_server, http_server):
    two(ddup, bind_server, http_server)
    assert ddup.run().rc == 0
    serial = bind_server.serial()
    with open(ddup.state, "r+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        t = time.monotonic()
        r = ddup.run()
        assert r.rc == 3, r
        assert time.monotonic() - t < 2 * TIME_SCALE
    assert bind_server.serial() == serial


@pytest.mark.sqlite_file
def test_state_file_modes(ddup, bind_server, http_server):
    two(ddup, bind_server, http_server)
    old = os.umask(0)
    try:
        assert ddup.run().rc == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(ddup.state).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(ddup.state)).st_mode) == 0o700
    for suffix in ("-wal", "-shm", "-journal"):
        if os.path.exists(ddup.state + suffix):
            assert stat.S_IMODE(os.stat(ddup.state + suffix).st_mode) == 0o600


def test_secret_never_written(ddup, bind_server, http_server):
    two(ddup, bind_server, http_server)
    outs = [ddup.run("-v"), ddup.run("--status"), ddup.run("--status", "--json"),
            ddup.run("--dry-run", "--json"), ddup.run("-n")]
    for r in outs:
        assert bind_server.key_secret not in r.out + r.err
    assert bind_server.key_secret not in ddup.state_dump()
    if not ddup.on_pg():
        for suffix in ("", "-wal"):
            if os.path.exists(ddup.state + suffix):
                assert bind_server.key_secret.encode() not in \
                    open(ddup.state + suffix, "rb").read()


def test_kill_9_then_correct_run(ddup, bind_server, http_server):
    p, b = two(ddup, bind_server, http_server)
    assert ddup.run().rc == 0
    p.set(status=503, delay=1.0)
    ddup.next_slot()
    proc = subprocess.Popen([DDUP, "-c", ddup.config], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    time.sleep(0.4)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    p.set(delay=0)
    if not ddup.on_pg():
        db = sqlite3.connect(ddup.state)
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        db.close()
    r = ddup.run()
    assert r.rc == 0, r
    assert bind_server.query(NAME, "A") == ["192.0.2.2"]


def test_status_before_first_run(ddup, bind_server, http_server):
    two(ddup, bind_server, http_server)
    r = ddup.run("--status", "--json")
    assert r.rc == 0, r
    doc = r.json()
    assert doc["lastRun"] is None
    d = doc["domains"][0]
    assert d["status"] == "unknown" and d["name"] == NAME
    assert [e["state"] for e in d["endpoints"]] == ["unknown", "unknown"]
    assert d["endpoints"][0]["lastCheck"] is None
    assert not ddup.state_made()
    r = ddup.run("--status")
    assert r.rc == 0 and "unknown" in r.out and "never" in r.out


def test_status_json_shape(ddup, bind_server, http_server):
    two(ddup, bind_server, http_server)
    assert ddup.run().rc == 0
    doc = ddup.status()
    # The fields of ddup-check(8), STATUS JSON (none renamed).
    assert set(doc) == {"generatedAt", "lastRun", "controlUrl", "domains",
                        "notifications", "interval", "stale", "staleAfter"} | \
        ({"fleet"} if ddup.on_pg() else set())      # several checkers'
    assert doc["notifications"] == []
    assert doc["controlUrl"] is None
    d = doc["domains"][0]
    assert set(d) == {"name", "provider", "ttl", "status", "published", "tier", "tierLocation",
                      "betterTierWaiting", "waitingTier", "waitingTierLocation",
                      "failbackRequested", "lastChange", "lastError", "failover",
                      "failoverSince", "failoverReason", "degradedTtl",
                      "endpoints"} | ({"round"} if ddup.on_pg() else set())
    assert (d["provider"], d["ttl"], d["tier"], d["tierLocation"]) == ("bind", 60, 0, None)
    assert (d["betterTierWaiting"], d["waitingTier"], d["failbackRequested"]) == \
        (False, None, False)
    assert (d["failoverSince"], d["failoverReason"], d["degradedTtl"]) == (None, None, None)
    assert d["lastChange"].endswith("Z")
    e = d["endpoints"][0]
    assert set(e) == {"name", "url", "ip", "priority", "location", "state", "drained",
                      "drainedUntil", "healthy", "published", "failures", "passes",
                      "lastCheck", "lastResult", "latencyMs"} | \
        ({"votes"} if ddup.on_pg() else set())
    assert (e["location"], e["drained"], e["drainedUntil"]) == (None, False, None)
    assert (e["name"], e["ip"], e["state"], e["healthy"], e["published"]) == \
        ("primary", "192.0.2.1", "active", True, True)
    assert e["lastResult"] == "ok" and isinstance(e["latencyMs"], int)
    assert d["endpoints"][1]["state"] == "standby"


def test_dry_run_writes_nothing(ddup, bind_server, http_server):
    two(ddup, bind_server, http_server)
    serial = bind_server.serial()
    r = ddup.run("--dry-run")
    assert r.rc == 0, r
    assert "would publish" in r.out and "192.0.2.1" in r.out
    assert not ddup.state_made()
    assert bind_server.serial() == serial
    r = ddup.run("--dry-run", "--json")
    doc = r.json()
    assert doc["domains"][0]["published"] == ["192.0.2.1"]
    assert doc["domains"][0]["endpoints"][0]["lastResult"] == "ok"


def test_check_config_touches_nothing(ddup, bind_server, http_server):
    two(ddup, bind_server, http_server)
    r = ddup.run("-n")
    assert r.rc == 0 and "OK" in r.out, r
    assert not ddup.state_made()


def big_config(path, state, ndomains, per):
    """ndomains domains of per endpoints each, on an exec provider; an
    interval long enough for 100,000 checks that all time out, so that -n
    has nothing to warn of."""
    out = [f"state = {state}", "interval = 1h", "", "[provider x]", "type = exec", "command = /bin/true", ""]
    for d in range(ndomains):
        out += [f"[domain d{d}.example.test]", "provider = x", ""]
        for e in range(per):
            n = e + 1
            out += [f"[endpoint e{e}]", f"url = http://127.0.0.1:1/d{d}/e{e}",
                    f"ip = 10.{n >> 16}.{(n >> 8) & 255}.{n & 255}", ""]
    with open(path, "w") as f:
        f.write("\n".join(out))
    os.chmod(path, 0o600)


@pytest.mark.serial
@pytest.mark.parametrize("ndomains,per", [(1000, 100), (1, 100000)])
def test_check_config_of_100000_endpoints(tmp_path, ndomains, per):
    """100,000 endpoints (about 7 MB; the cap was 1 MiB) are read and
    validated by -n, in 1,000 domains or in one, in CPU time far from
    quadratic: one domain of 100,000 took 35 s of CPU when each endpoint
    was compared with every one before it, and takes under a second."""
    path = str(tmp_path / "big.ini")
    state = str(tmp_path / "state" / "ddup.db")
    big_config(path, state, ndomains, per)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([DDUP, "-c", path, "-n"], capture_output=True, text=True,
                       timeout=120 * TIME_SCALE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    word = "domain" if ndomains == 1 else "domains"
    assert p.returncode == 0 and p.stderr == "", p
    assert p.stdout == f"{path}: configuration OK ({ndomains} {word})\n", p
    assert cpu < 5 * TIME_SCALE, cpu
    assert not os.path.exists(os.path.dirname(state))


def test_bad_config_exit_2_nothing_written(ddup, bind_server, http_server):
    two(ddup, bind_server, http_server)
    assert ddup.run().rc == 0
    serial = bind_server.serial()
    before = ddup.state_snapshot()
    text = open(ddup.config).read().replace("ip = 192.0.2.2", "ip = 192.0.2.300")
    text = text.replace("ttl = 60", "ttl = sixty")
    open(ddup.config, "w").write(text)
    r = ddup.run()
    assert r.rc == 2
    lines = r.err.strip().splitlines()
    assert len(lines) == 2 and all(ln.startswith(ddup.config + ":") for ln in lines), r
    assert ddup.state_snapshot() == before
    assert bind_server.serial() == serial


@pytest.mark.sqlite_file
def test_foreign_state_file_exit_4_untouched(ddup, bind_server, http_server):
    two(ddup, bind_server, http_server)
    os.makedirs(os.path.dirname(ddup.state), mode=0o700)
    db = sqlite3.connect(ddup.state)
    db.execute("CREATE TABLE invoices(id INTEGER PRIMARY KEY, total REAL)")
    db.commit()
    db.close()
    before = open(ddup.state, "rb").read()
    r = ddup.run()
    assert r.rc == 4, r
    assert ddup.state in r.err
    assert open(ddup.state, "rb").read() == before


def test_usage_errors(ddup, bind_server, http_server):
    two(ddup, bind_server, http_server)
    assert ddup.run("--json").rc == 2
    assert ddup.run("--bogus").rc == 2
    assert ddup.run("-v", "-q").rc == 2
    assert ddup.run("extra").rc == 2
    r = ddup.run("--version", config=False)
    assert r.rc == 0 and r.out.startswith("ddup-check ")
    r = ddup.run("-c", "/nonexistent/ddup.ini", config=False)
    assert r.rc == 2 and "/nonexistent/ddup.ini" in r.err


def test_config_from_environment(ddup, bind_server, http_server):
    two(ddup, bind_server, http_server)
    r = ddup.run("-n", config=False, env={"DDUP_CONFIG": ddup.config})
    assert r.rc == 0 and ddup.config in r.out


def test_quiet_verbose_and_json_logs(ddup, bind_server, http_server):
    p, _ = two(ddup, bind_server, http_server)
    r = ddup.run("-q")
    assert (r.rc, r.err) == (0, ""), r
    r = ddup.run("-v")
    assert r.rc == 0
    assert len([ln for ln in r.err.splitlines() if ": ok (" in ln]) == 2, r
    text = "logFormat = json\n" + open(ddup.config).read()
    open(ddup.config, "w").write(text)
    p.set(status=503)
    r = ddup.run()
    assert r.rc == 0
    events = [json.loads(ln) for ln in r.err.splitlines()]
    change = [e for e in events if e.get("event") == "dns_updated"]
    assert len(change) == 1, events
    assert change[0]["old"] == "192.0.2.1" and change[0]["new"] == "192.0.2.2"
    assert change[0]["tier"] == 10 and change[0]["domain"] == NAME
    assert any(e.get("endpoint") == "primary" and "HTTP 503" in e["msg"] for e in events)


def test_removed_endpoint_and_domain_dropped(ddup, bind_server, http_server):
    p, b = two(ddup, bind_server, http_server)
    assert ddup.run().rc == 0
    write_config(ddup, bind_server, [("primary", p, "192.0.2.1", 0)])
    assert ddup.run().rc == 0
    names = [r[0] for r in ddup.state_rows("SELECT name FROM endpoints",
                                           "SELECT name FROM ddup_endpoint")]
    history = ddup.state_rows(
        "SELECT checks, open FROM history WHERE endpoint = 'backup'",
        "SELECT checks, EXISTS (SELECT FROM ddup_endpoint e WHERE e.streak = s.id)::int"
        " FROM ddup_streak s WHERE endpoint = 'backup'")
    assert names == ["primary"]
    # Its streak ended with its last check.
    assert history == [(1, 0)]
