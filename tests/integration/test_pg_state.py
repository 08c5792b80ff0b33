"""The rows of a PostgreSQL state (ddup-check(8), STATE FILE;
ddup.ini(5), SEVERAL CHECKERS): what a run keeps there
is what it keeps in the SQLite file, read back with psql.

Each test runs a fleet of one (checker solo) on pgfix.py's server, with
the database's clock moved a slot on before each run (conftest.Ddup).
The tests of the SQLite file's rows (marked sqlite_file) are the models.
"""

import os
import re
import subprocess
import time

import pytest

from conftest import Ddup
from procfix import die_with_parent
from test_failover import NAME, provider_section, write_config


@pytest.fixture
def pgd(tmp_path, pg_server):
    return Ddup(tmp_path, pg_server)


def two(pgd, bind, http_server, keys=""):
    p, b = http_server(), http_server()
    write_config(pgd, bind, [("primary", p, "192.0.2.1", 0), ("backup", b, "192.0.2.2", 10)],
                 keys)
    return p, b


def streaks(pg, endpoint):
    return pg.psql("SELECT checks, ok, coalesce(status::text, '-'), reason, last >= first"
                   f" FROM ddup_streak WHERE endpoint = '{endpoint}' ORDER BY id")


def endpoint_row(pg, name):
    return pg.psql("SELECT failures, passes, removed, streak IS NOT NULL, last_result"
                   f" FROM ddup_endpoint WHERE name = '{name}'")


def test_streaks_of_equal_results(pgd, bind_server, http_server, pg_server):
    p, b = two(pgd, bind_server, http_server, "attempts = 3\n")
    for _ in range(3):
        assert pgd.run().rc == 0
    assert streaks(pg_server, "primary") == [["3", "t", "200", "ok", "t"]]
    assert pg_server.psql("SELECT count(*) FROM ddup_streak") == [["2"]]
    # A failure begins a streak; the same failure goes on with it; another
    # status code begins one more.  A failed check is never merged into a pass.
    p.set(status=503)
    pgd.run()
    pgd.run()
    p.set(status=500)
    pgd.run()
    assert streaks(pg_server, "primary") == [["3", "t", "200", "ok", "t"],
                                             ["2", "f", "503", "HTTP 503", "t"],
                                             ["1", "f", "500", "HTTP 500", "t"]]
    assert endpoint_row(pg_server, "primary") == [["3", "0", "t", "t", "HTTP 500"]]
    assert streaks(pg_server, "backup") == [["6", "t", "200", "ok", "t"]]
    assert bind_server.query(NAME, "A") == ["192.0.2.2"]
    st = pgd.status()["domains"][0]["endpoints"]
    assert [(e["state"], e["failures"], e["passes"]) for e in st] == \
        [("down", 3, 0), ("active", 0, 6)]
    # Latency: min <= mean <= max over the streak's checks.
    rows = pg_server.psql("SELECT latency_min <= latency_mean AND latency_mean <= latency_max"
                          " FROM ddup_streak")
    assert rows and all(r == ["t"] for r in rows)


def test_void_rounds_keep_counters_and_end_the_streak(pgd, bind_server, http_server,
                                                      pg_server):
    p, b = two(pgd, bind_server, http_server)
    with open(pgd.config) as f:
        base = f.read().replace("checkers = solo\nchecker = solo\n", "")

    def fleet(quorum):
        with open(pgd.config, "w") as f:
            f.write(f"checkers = a, b, c\nchecker = a\nquorum = {quorum}\n" + base)

    def run():
        pg_server.advance(86400)        # a fleet of its own keeps its own clock
        r = pgd.run()
        assert r.rc == 0, r

    fleet(1)
    run()
    run()
    assert endpoint_row(pg_server, "primary") == [["0", "2", "f", "t", "ok"]]
    fleet(2)                    # a alone is heard: every round is void
    p.set(status=503)
    run()
    run()
    assert endpoint_row(pg_server, "primary") == [["0", "2", "f", "f", "ok"]]
    assert streaks(pg_server, "primary") == [["2", "t", "200", "ok", "t"]]
    fleet(1)
    p.set(status=200)
    run()
    assert endpoint_row(pg_server, "primary") == [["0", "3", "f", "t", "ok"]]
    assert streaks(pg_server, "primary") == [["2", "t", "200", "ok", "t"],
                                             ["1", "t", "200", "ok", "t"]]


def test_what_is_no_longer_configured_is_dropped(pgd, bind_server, http_server, pg_server):
    p, b = two(pgd, bind_server, http_server)
    assert pgd.run().rc == 0
    assert pgd.run("--drain", f"{NAME}/backup").rc == 0
    write_config(pgd, bind_server, [("primary", p, "192.0.2.1", 0)])
    assert pgd.run().rc == 0
    assert pg_server.psql("SELECT name FROM ddup_endpoint") == [["primary"]]
    assert pg_server.psql("SELECT endpoint FROM ddup_vote") == [["primary"]]
    assert pg_server.psql("SELECT count(*) FROM ddup_drain") == [["0"]]
    # History stays.
    assert pg_server.psql("SELECT endpoint FROM ddup_streak ORDER BY id") == \
        [["primary"], ["backup"]]
    other = "other.example.test"
    text = open(pgd.config).read().replace(f"[domain {NAME}]", f"[domain {other}]")
    with open(pgd.config, "w") as f:
        f.write(text)
    assert pgd.run().rc == 0
    for table, col in (("ddup_domain", "name"), ("ddup_published", "domain"),
                       ("ddup_round", "domain"), ("ddup_endpoint", "domain"),
                       ("ddup_vote", "domain")):
        assert pg_server.psql(f"SELECT DISTINCT {col} FROM {table}") == [[other]], table
    assert pg_server.psql("SELECT count(*) FROM ddup_change WHERE domain = "
                          f"'{NAME}'") == [["1"]]


def at_slot(pg, want, interval_s=30):
    """Moves the database's clock so that the next run, a day on, is halfway
    through slot want of every 100 (state/pg_save.c, PRUNE_EVERY).  A day
    is 2,880 slots of 30 s, so the runs after it are in slots want + 80,
    want + 60, ... of every 100."""
    t = float(pg.psql("SELECT extract(epoch FROM pg_catalog.now() + shift)"
                      " FROM ddup_test.clock")[0][0]) + 86400
    pg.advance(((want + 0.5 - t / interval_s) % 100) * interval_s)


def test_what_is_gone_is_looked_for_when_the_names_change(pgd, bind_server, http_server,
                                                          pg_server):
    """A save looks for rows no longer configured, sending every configured
    name, only when the names changed since it last did (ddup_meta's
    'pruned'), after a request from a file of other names, and in one
    slot of every 100."""
    p, b = two(pgd, bind_server, http_server)
    at_slot(pg_server, 50)              # no run below is in slot 0 of 100

    def stray():
        return pg_server.psql("SELECT count(*) FROM ddup_vote WHERE endpoint = 'stray'")[0][0]

    def pruned():
        return pg_server.psql("SELECT value FROM ddup_meta WHERE key = 'pruned'")

    assert pgd.run().rc == 0
    first = pruned()
    assert re.fullmatch("[0-9a-f]{64}", first[0][0]), first
    pg_server.psql("INSERT INTO ddup_vote (domain, endpoint, slot, npass, nfail, verdict)"
                   f" VALUES ('{NAME}', 'stray', 1, 1, 0, 1)")
    assert pgd.run().rc == 0
    assert stray() == "1"               # the same names: not looked for
    assert pruned() == first
    # A drain by a file that names the endpoint too.
    write_config(pgd, bind_server, [("primary", p, "192.0.2.1", 0),
                                    ("backup", b, "192.0.2.2", 10),
                                    ("stray", b, "192.0.2.3", 10)])
    assert pgd.run("--drain", f"{NAME}/stray").rc == 0
    assert pruned() == []
    write_config(pgd, bind_server, [("primary", p, "192.0.2.1", 0),
                                    ("backup", b, "192.0.2.2", 10)])
    assert pgd.run().rc == 0
    assert stray() == "0"
    assert pg_server.psql("SELECT count(*) FROM ddup_drain") == [["0"]]
    assert pruned() == first
    # In slot 0 of every 100, whatever the names.
    pg_server.psql("INSERT INTO ddup_vote (domain, endpoint, slot, npass, nfail, verdict)"
                   f" VALUES ('{NAME}', 'stray', 1, 1, 0, 1)")
    at_slot(pg_server, 0)
    assert pgd.run().rc == 0
    assert stray() == "0"
    assert pgd.status()["domains"][0]["endpoints"][0]["state"] == "active"


def test_counters_outlive_history(pgd, bind_server, http_server, pg_server):
    """history = 1s: streaks that ended go, their checks into the counters;
    an open streak stays whatever its age."""
    p, b = two(pgd, bind_server, http_server, "attempts = 1\n")
    text = open(pgd.config).read().replace("interval = 30s\n", "interval = 30s\nhistory = 1s\n")
    with open(pgd.config, "w") as f:
        f.write(text)
    pgd.run()
    pgd.run()
    p.set(status=503)
    pgd.run()
    time.sleep(1.5)
    pgd.run()
    assert streaks(pg_server, "primary") == [["2", "f", "503", "HTTP 503", "t"]]
    assert streaks(pg_server, "backup") == [["4", "t", "200", "ok", "t"]]
    assert pg_server.psql("SELECT endpoint, name, value FROM ddup_counter WHERE endpoint <> ''"
                          " ORDER BY 1, 2") == [["primary", "checks_pass", "2"]]
    assert pg_server.psql("SELECT name, value FROM ddup_counter WHERE endpoint = ''") == \
        [["dns_ok", "2"]]


def test_drain_runs_out_and_control_url_per_checker(pgd, bind_server, http_server, pg_server):
    p, b = two(pgd, bind_server, http_server)
    ctl = http_server(status=503)
    text = open(pgd.config).read().replace("interval = 30s\n",
                                           f"interval = 30s\ncontrolUrl = {ctl.url}\n")
    with open(pgd.config, "w") as f:
        f.write(text)
    assert pgd.run("--drain", f"{NAME}/primary", "--for", "1h").rc == 0
    assert pg_server.psql("SELECT endpoint, until > since FROM ddup_drain") == [["primary", "t"]]
    pgd.run()
    assert pg_server.psql("SELECT checker, result FROM ddup_control") == [["solo", "HTTP 503"]]
    assert pgd.status()["controlUrl"]["lastResult"] == "HTTP 503"
    ctl.set(status=200)
    pgd.run()
    assert pg_server.psql("SELECT count(*) FROM ddup_control") == [["0"]]
    assert bind_server.query(NAME, "A") == ["192.0.2.2"]
    pg_server.psql("UPDATE ddup_drain SET until = '2000-01-01'")     # as an hour would pass
    pgd.run()
    assert pg_server.psql("SELECT count(*) FROM ddup_drain") == [["0"]]
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]


def round_trips(pgd):
    r = pgd.run("-v")
    assert r.rc == 0, r
    m = re.search(r"postgresql: (\d+) round trips", r.err)
    assert m, r
    return int(m.group(1))


@pytest.mark.parametrize("n, ndomains", [(3, 1), (300, 1), (2100, 1), (2100, 3)])
def test_round_trips_do_not_grow_with_endpoints(pgd, bind_server, http_server, pg_server, n,
                                                ndomains):
    """A steady run costs the same round trips with 3 endpoints as with 300, and with
    2,100, more than a save's statement or a part of a read takes (PG_EP_CHUNK,
    PG_READ_CHUNK, 2,048): every endpoint's counters are still read and saved, in the
    same batches.  With three domains of 700 the bound between the two parts falls
    inside the third: each endpoint's counters are still its own."""
    srv, last = http_server(), http_server()
    text = "interval = 30s\n" + provider_section(bind_server)
    per = n // ndomains
    for i in range(n):
        if i % per == 0:
            # A generous timeout: 2,100 checks of two test servers on a loaded
            # machine must all be answered, or the counters asserted below move.
            text += (f"\n[domain d{i // per}.{NAME}]\nprovider = bind\nttl = 60\n"
                     "attempts = 3\ntimeout = 20s\n")
        url = (last if i >= n - per else srv).url
        text += (f"\n[endpoint e{i}]\nurl = {url}?{i}\nip = 192.0.{2 + i // 250}."
                 f"{1 + i % 250}\npriority = {i}\n")
    pgd.write(text)
    assert pgd.run().rc == 0
    steady = [round_trips(pgd) for _ in range(2)]
    assert steady[0] == steady[1] and steady[0] <= 8, steady
    rows = pg_server.psql("SELECT count(*), sum(passes) FROM ddup_endpoint")
    assert rows == [[str(n), str(3 * n)]]
    assert pg_server.psql("SELECT count(*) FROM ddup_streak") == [[str(n)]]
    # The last domain fails twice: its second failure counts from its own row.
    last.set(status=503)
    for _ in range(2):
        assert pgd.run().rc == 0
    st = pgd.status()["domains"]
    assert [len(d["endpoints"]) for d in st] == [per] * ndomains
    got = {e["name"]: (e["failures"], e["passes"]) for d in st for e in d["endpoints"]}
    assert got == {f"e{i}": (2, 0) if i >= n - per else (0, 5) for i in range(n)}


def test_deliveries_held_by_one_run_of_the_fleet(pgd, bind_server, http_server, pg_server,
                                                 receiver):
    """Two checkers that take rounds in one slot both deliver: the first to ask holds a
    notifier's deliveries until its run ends, the other sends none of them."""
    two(pgd, bind_server, http_server)
    hook = receiver().up()
    with open(pgd.config, "a") as f:
        f.write(f"\n[notify ops]\nurl = {hook.url}\nevents = dns_updated\n")
    # A session holding them, as another checker's run delivering would.
    holder = subprocess.Popen(
        ["psql", "-X", "-q", "-A", "-t", pg_server.uri(socket=True)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, preexec_fn=die_with_parent)
    try:
        holder.stdin.write("SELECT pg_advisory_lock(hashtextextended("
                           "'ddup-check deliveries ops', 0));\nSELECT 'held';\n")
        holder.stdin.flush()
        while holder.stdout.readline().strip() != "held":
            pass
        r = pgd.run()
        assert r.rc == 0, r
        assert bind_server.query(NAME, "A") == ["192.0.2.1"]
        assert hook.events() == []
        assert pg_server.psql("SELECT e.event, d.attempts, d.delivered IS NULL FROM"
                              " ddup_delivery d JOIN ddup_event e ON e.id = d.event") == \
            [["dns_updated", "0", "t"]]
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    r = pgd.run()
    assert r.rc == 0, r
    assert [e["event"] for e in hook.events()] == ["dns_updated"]
    assert pg_server.psql("SELECT delivered IS NOT NULL FROM ddup_delivery") == [["t"]]


# What differs between the backends by design: times, and the fleet's own fields.
UNCOMPARED = {"fleet", "round", "votes", "failover", "lastRun", "lastCheck", "lastChange",
              "latencyMs", "since", "time", "generatedAt", "staleAfter", "failedSince",
              "oldestPending", "failoverSince"}
TIMED = re.compile(r"^(ddup_[a-z_]*(seconds|duration)[a-z_]*|ddup_state_[a-z_]+)(\{[^}]*\})? .*$",
                   re.M)


def comparable(o, name):
    if isinstance(o, dict):
        return {k: comparable(v, name) for k, v in o.items() if k not in UNCOMPARED}
    if isinstance(o, list):
        return [comparable(v, name) for v in o]
    return o.replace(name, "DOMAIN") if isinstance(o, str) else o


def story(d, bind, servers, name):
    """A failover, a recovery, all down, a drain and an undrain; what each run leaves."""
    text = f"interval = 30s\nmetricsFile = {d.dir / 'm.prom'}\n" + provider_section(bind)
    text += f"\n[domain {name}]\nprovider = bind\nttl = 60\nrecoverAfter = 2\n"
    for (ep, ip, prio), srv in zip((("primary", "192.0.2.1", 0), ("backup", "192.0.2.2", 10)),
                                   servers):
        text += f"\n[endpoint {ep}]\nurl = {srv.url}\nip = {ip}\npriority = {prio}\n"
    d.write(text)
    seen = []
    for i, up in enumerate(("11", "01", "01", "00", "10", "11", "11", "11", "11", "11", "00")):
        if i == 8:
            assert d.run("--drain", f"{name}/primary").rc == 0
        if i == 10:
            assert d.run("--undrain", f"{name}/primary").rc == 0
        for srv, u in zip(servers, up):
            srv.set(status=200 if u == "1" else 503)
        r = d.run()
        with open(d.dir / "m.prom") as f:
            metrics = TIMED.sub("", f.read()).replace(name, "DOMAIN")
        seen.append((i, r.rc, bind.query(name, "A"), comparable(d.status(), name), metrics))
    return seen


def test_keeps_what_sqlite_keeps(tmp_path, bind_server, http_server, pg_server):
    """The same runs on a SQLite file and on PostgreSQL (a fleet of one): the same DNS,
    --status --json and metrics after each, apart from times and the fleet's fields."""
    servers = [http_server(), http_server()]
    (tmp_path / "s").mkdir()
    (tmp_path / "p").mkdir()
    on_sqlite = story(Ddup(tmp_path / "s"), bind_server, servers, "one.example.test")
    on_pg = story(Ddup(tmp_path / "p", pg_server), bind_server, servers, "two.example.test")
    for a, b in zip(on_sqlite, on_pg):
        assert a == b
    assert len(on_pg) == 11


def test_views_answer_the_operators_questions(pgd, bind_server, http_server, pg_server,
                                              receiver):
    p, b = two(pgd, bind_server, http_server, "attempts = 1\n")
    with open(pgd.config, "a") as f:
        f.write(f"\n[notify ops]\nurl = {receiver().url}\n")   # nobody listens
    pgd.run()
    p.set(status=503)
    pgd.run()
    assert bind_server.query(NAME, "A") == ["192.0.2.2"]
    assert pg_server.psql("SELECT endpoint, health, published, failures, passes, status,"
                          " last_result, streak_checks FROM ddup_current ORDER BY priority") == \
        [["primary", "removed", "f", "1", "0", "503", "HTTP 503", "1"],
         ["backup", "ok", "t", "0", "2", "200", "ok", "2"]]
    assert pg_server.psql("SELECT type, old, new, result FROM ddup_last_changes") == \
        [["A", "192.0.2.1", "192.0.2.2", "ok"], ["A", "", "192.0.2.1", "ok"]]
    assert pg_server.psql("SELECT endpoint, checks, status, reason, open FROM ddup_failures") == \
        [["primary", "1", "503", "HTTP 503", "t"]]
    assert pg_server.psql("SELECT endpoint, checks, passed, uptime_pct FROM ddup_uptime_24h"
                          " ORDER BY endpoint") == \
        [["backup", "2", "2", "100.000"], ["primary", "2", "1", "50.000"]]
    assert pg_server.psql("SELECT event, notifier, last_error IS NOT NULL"
                          " FROM ddup_undelivered") == \
        [["dns_updated", "ops", "t"], ["dns_updated", "ops", "f"]]


# Version 7 from this version's schema: ddup_endpoint and ddup_streak tables again,
# their rows as version 7 kept them (each counter and streak written by every check),
# no ddup_tick, version 3's views over the tables.
AS_VERSION_7 = """DO $$
DECLARE cur text := pg_get_viewdef('ddup_current');
  fai text := pg_get_viewdef('ddup_failures');
  upt text := pg_get_viewdef('ddup_uptime_24h');
BEGIN
  CREATE TEMP TABLE e7 AS SELECT domain, name, ip, url, priority, failures, passes,
    removed, last_check, last_ok, last_status, latency_ms, last_result, streak
    FROM ddup_endpoint;
  CREATE TEMP TABLE s7 AS SELECT id, domain, endpoint, ip, first, last, checks, ok,
    status, reason, latency_min, latency_mean, latency_max FROM ddup_streak;
  DROP VIEW ddup_current, ddup_failures, ddup_uptime_24h, ddup_endpoint, ddup_streak;
  ALTER TABLE ddup_endpoint_base DROP COLUMN upto;
  DELETE FROM ddup_endpoint_base;
  INSERT INTO ddup_endpoint_base SELECT * FROM e7;
  ALTER TABLE ddup_endpoint_base RENAME TO ddup_endpoint;
  ALTER TABLE ddup_streak_base DROP COLUMN upto, DROP COLUMN latency_samples;
  DELETE FROM ddup_streak_base;
  INSERT INTO ddup_streak_base SELECT * FROM s7;
  ALTER TABLE ddup_streak_base RENAME TO ddup_streak;
  DROP TABLE ddup_tick, e7, s7;
  EXECUTE 'CREATE VIEW ddup_current AS ' || cur;
  EXECUTE 'CREATE VIEW ddup_failures AS ' || fai;
  EXECUTE 'CREATE VIEW ddup_uptime_24h AS ' || upt;
  UPDATE ddup_meta SET value = '7' WHERE key = 'schema_version';
END $$"""


def test_schema_upgraded_from_version_7(pgd, bind_server, http_server, pg_server):
    """Version 7's rows, up to date after every check: the upgrade keeps their counters
    and streaks, and the checks after it go on counting from them."""
    p, _ = two(pgd, bind_server, http_server, "attempts = 3\n")
    for _ in range(2):
        assert pgd.run().rc == 0
    pg_server.psql(AS_VERSION_7, user="ddup")
    assert pg_server.psql("SELECT name, passes FROM ddup_endpoint ORDER BY name") == \
        [["backup", "2"], ["primary", "2"]]
    assert pg_server.psql("SELECT count(*) FROM pg_tables WHERE tablename = 'ddup_tick'") == \
        [["0"]]
    assert pgd.run().rc == 0
    assert pg_server.psql("SELECT value FROM ddup_meta WHERE key = 'schema_version'") == \
        [["8"]]
    assert endpoint_row(pg_server, "primary") == [["0", "3", "f", "t", "ok"]]
    assert streaks(pg_server, "primary") == [["3", "t", "200", "ok", "t"]]
    p.set(status=503)
    assert pgd.run().rc == 0
    assert pgd.run().rc == 0
    assert streaks(pg_server, "primary") == [["3", "t", "200", "ok", "t"],
                                             ["2", "f", "503", "HTTP 503", "t"]]
    assert endpoint_row(pg_server, "primary") == [["2", "0", "f", "t", "HTTP 503"]]
    assert streaks(pg_server, "backup") == [["5", "t", "200", "ok", "t"]]
    assert pg_server.psql("SELECT endpoint, health, passes, streak_checks FROM ddup_current"
                          " ORDER BY priority") == [["primary", "failing", "0", "2"],
                                                    ["backup", "ok", "5", "5"]]


def test_a_steady_run_rewrites_no_endpoint(pgd, bind_server, http_server, pg_server):
    """A run whose checks go on as the last ones did writes no endpoint, vote or streak
    row (its latency range made wide enough and no mean sampled in that save): the
    views count its checks from the domain's saves, its time the last check's."""
    two(pgd, bind_server, http_server)
    for _ in range(3):
        assert pgd.run().rc == 0
    pg_server.psql("UPDATE ddup_streak_base SET latency_min = 0, latency_max = 1000000")
    rows = ("SELECT 'endpoint', ctid::text, xmin::text FROM ddup_endpoint_base UNION ALL"
            " SELECT 'streak', ctid::text, xmin::text FROM ddup_streak_base UNION ALL"
            " SELECT 'vote', ctid::text, xmin::text FROM ddup_vote ORDER BY 1, 2")
    before = pg_server.psql(rows)
    assert [r[0] for r in before] == ["endpoint"] * 2 + ["streak"] * 2 + ["vote"] * 2
    assert pgd.run().rc == 0
    assert pg_server.psql(rows) == before
    assert pg_server.psql("SELECT name, passes, last_check = (SELECT value::timestamptz"
                          " FROM ddup_meta WHERE key = 'last_run') FROM ddup_endpoint"
                          " ORDER BY name") == [["backup", "4", "t"], ["primary", "4", "t"]]
    assert pg_server.psql("SELECT endpoint, checks FROM ddup_streak ORDER BY endpoint") == \
        [["backup", "4"], ["primary", "4"]]
    assert pgd.status()["domains"][0]["endpoints"][0]["passes"] == 4


def sent(pgd):
    """A run with -v: the endpoint rows its save sent."""
    r = pgd.run("-v")
    assert r.rc == 0, r
    m = re.search(r"postgresql: \d+ round trips after connecting, (\d+) endpoint rows sent",
                  r.err)
    assert m, r
    return int(m.group(1))


def test_a_check_that_goes_on_is_counted_not_sent(pgd, bind_server, http_server, pg_server):
    """A check that goes on as the last one did is not sent at all (the snapshot says
    so), unless its latency widens the streak's range or the save samples the mean
    (one save in 16 a streak): then only the streak's latency is."""
    p, b = two(pgd, bind_server, http_server)
    for _ in range(3):
        assert pgd.run().rc == 0
    pg_server.psql("UPDATE ddup_streak_base SET latency_min = 0, latency_max = 1000000")
    assert sent(pgd) == 0
    # A range no check can fall in: the primary's next check widens it.
    pg_server.psql("UPDATE ddup_streak_base SET latency_min = -1, latency_max = -1"
                   " WHERE endpoint = 'primary'")
    assert sent(pgd) == 1
    assert pg_server.psql("SELECT latency_min, latency_max >= 0 FROM ddup_streak_base"
                          " WHERE endpoint = 'primary'") == [["-1", "t"]]
    pg_server.psql("UPDATE ddup_streak_base SET latency_max = 1000000")
    samples = "SELECT endpoint, latency_samples FROM ddup_streak_base ORDER BY endpoint"
    before = pg_server.psql(samples)
    # Streaks 1 and 2 sample at save 16 (the tick's count, staggered by id / 64).
    saves = int(pg_server.psql("SELECT saves FROM ddup_tick")[0][0])
    counts = [sent(pgd) for _ in range(16 - saves)]
    assert counts == [0] * (15 - saves) + [2]
    assert pg_server.psql(samples) == [[e, str(int(n) + 1)] for e, n in before]
    assert pg_server.psql("SELECT endpoint, checks FROM ddup_streak ORDER BY endpoint") == \
        [["backup", "16"], ["primary", "16"]]
    assert pg_server.psql("SELECT name, passes, failures FROM ddup_endpoint ORDER BY name") \
        == [["backup", "16", "0"], ["primary", "16", "0"]]
    # A failure is a change: sent in full, and the views count from it.
    p.set(status=503)
    assert sent(pgd) == 1
    assert endpoint_row(pg_server, "primary") == [["1", "0", "f", "t", "HTTP 503"]]


def test_schema_upgraded_from_version_2(pgd, bind_server, http_server, pg_server):
    """Version 2 with its rows (a run of this version, its views and the certificates
    table taken away): the next run adds them and keeps the rows."""
    two(pgd, bind_server, http_server)
    assert pgd.run().rc == 0
    pg_server.psql(AS_VERSION_7, user="ddup")
    for view in ("current", "last_changes", "failures", "uptime_24h", "undelivered"):
        pg_server.psql(f"DROP VIEW ddup_{view}", user="ddup")
    pg_server.psql("DROP TABLE ddup_cert", user="ddup")     # version 4's
    for table in ("ddup_failover", "ddup_drain_log"):       # version 5's
        pg_server.psql(f"DROP TABLE {table}", user="ddup")
    pg_server.psql("DROP FUNCTION ddup_drain_ended() CASCADE", user="ddup")
    pg_server.psql("UPDATE ddup_meta SET value = '2' WHERE key = 'schema_version'", user="ddup")
    assert pgd.run().rc == 0
    assert pg_server.psql("SELECT value FROM ddup_meta WHERE key = 'schema_version'") == \
        [["8"]]
    assert pg_server.psql("SELECT endpoint, health, passes FROM ddup_current"
                          " ORDER BY priority") == [["primary", "ok", "2"],
                                                    ["backup", "ok", "2"]]


def test_a_failed_statement_rolls_the_save_back(pgd, bind_server, http_server, pg_server):
    """The last statement of the outcome's batch refused: the run says which and why
    (the URI without its password), exits 4, and nothing of the batch stays."""
    two(pgd, bind_server, http_server)
    assert pgd.run().rc == 0
    before = pg_server.psql("SELECT name, passes, streak FROM ddup_endpoint ORDER BY name")
    pg_server.psql("CREATE FUNCTION ddup_refuse() RETURNS trigger LANGUAGE plpgsql AS"
                   " $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$")
    pg_server.psql("CREATE TRIGGER refuse BEFORE UPDATE ON ddup_meta FOR EACH ROW"
                   " EXECUTE FUNCTION ddup_refuse()")
    r = pgd.run()
    assert r.rc == 4, r
    assert "ddup:***@127.0.0.1" in r.err and "cannot record the run: ERROR:  refused by the " \
        "test" in r.err, r
    assert pg_server.psql("SELECT name, passes, streak FROM ddup_endpoint ORDER BY name") == \
        before
    assert pg_server.psql("SELECT sum(checks) FROM ddup_streak") == [["2"]]
    pg_server.psql("DROP TRIGGER refuse ON ddup_meta")
    pg_server.psql("DROP FUNCTION ddup_refuse()")
    assert pgd.run().rc == 0
    assert pg_server.psql("SELECT name, passes FROM ddup_endpoint ORDER BY name") == \
        [["backup", "2"], ["primary", "2"]]


def test_ended_drains_are_pruned_with_history(pgd, bind_server, http_server, pg_server):
    """history = 1s: a drain that ran out is logged when a run drops it, and a run
    past `history` drops the log row, as it does ended streaks."""
    two(pgd, bind_server, http_server)
    text = open(pgd.config).read().replace("interval = 30s\n", "interval = 30s\nhistory = 1s\n")
    with open(pgd.config, "w") as f:
        f.write(text)
    assert pgd.run("--drain", f"{NAME}/backup", "--for", "1s").rc == 0
    time.sleep(1.2)
    assert pgd.run().rc == 0
    assert pg_server.psql("SELECT endpoint, since < until FROM ddup_drain_log") == \
        [["backup", "t"]]
    time.sleep(1.5)
    assert pgd.run().rc == 0
    assert pg_server.psql("SELECT count(*) FROM ddup_drain_log") == [["0"]]


def test_gssapi_encryption_only_when_asked_for(pgd, bind_server, http_server, pg_server):
    """ddup-check connects with gssencmode=disable unless the URI (or PGGSSENCMODE)
    asks for GSSAPI encryption: the URI's value wins, and a server without GSSAPI then
    refuses the run, which changes nothing."""
    two(pgd, bind_server, http_server)
    assert pgd.run().rc == 0
    text = open(pgd.config).read()
    uri = pg_server.uri()
    with open(pgd.config, "w") as f:
        f.write(text.replace(f"state = {uri}\n", f"state = {uri}?gssencmode=require\n"))
    r = pgd.run()
    assert r.rc == 4, r
    assert "GSSAPI" in r.err and "cannot connect" in r.err, r.err
    assert pg_server.psql("SELECT passes FROM ddup_endpoint ORDER BY name") == [["1"], ["1"]]


def test_commits_that_need_not_wait_for_the_disk(pgd, bind_server, http_server, pg_server):
    """A report's commit, and a round's that sends no update, do not wait for the WAL to
    reach the disk (what a crash may lose there is a checker missing from a slot, or a
    steady round taken again); a round that marks a domain unsure before the provider is
    called does, as every save does (its own SET is never sent)."""
    two(pgd, bind_server, http_server)
    pg_server.psql("ALTER DATABASE ddup SET log_statement = 'all'", db="postgres")

    def no_wait():
        start = os.path.getsize(pg_server.log)
        assert pgd.run().rc == 0
        with open(pg_server.log, errors="replace") as f:
            f.seek(start)
            text = f.read()
        assert "INSERT INTO ddup_report" in text, text[-2000:]
        return text.count("SET LOCAL synchronous_commit = off")

    assert no_wait() == 1               # the first run publishes: the round waits
    assert bind_server.query(NAME, "A") == ["192.0.2.1"]
    assert no_wait() == 2               # steady: the report and the round
    assert pg_server.psql("SELECT count(*) FROM ddup_report") != [["0"]]
