"""History as streaks (ddup-check(8), STATE FILE): the file grows with events, not runs; the
views of the README; the upgrade of a file of schema 1, of 3 (the one before streaks), 4 and 5."""

import os
import re
import sqlite3
import subprocess
import time

import pytest

from conftest import DDUP
from test_failover import NAME, nsupdate, write_config

# The file's tables, views and migrations: SQLite only.
pytestmark = pytest.mark.sqlite_file

# Schema 1 as it shipped (state/sqlite_schema.c, migration 1), to build old files.
V1_SCHEMA = """
CREATE TABLE endpoints (
  domain TEXT NOT NULL,
  name TEXT NOT NULL,
  ip TEXT NOT NULL,
  url TEXT NOT NULL,
  priority INTEGER NOT NULL,
  failures INTEGER NOT NULL,  -- consecutive failed checks
  passes INTEGER NOT NULL,    -- consecutive passed checks
  removed INTEGER NOT NULL,   -- 1: out of DNS until it recovers
  last_check TEXT,            -- UTC; NULL: never checked
  last_ok INTEGER,
  last_status INTEGER,        -- HTTP status; NULL: no answer
  last_result TEXT,           -- 'ok', 'HTTP 503', 'timeout', ...
  latency_ms INTEGER,
  PRIMARY KEY (domain, name)
) STRICT;
CREATE TABLE domains (
  name TEXT PRIMARY KEY NOT NULL,
  provider TEXT NOT NULL,
  ttl INTEGER NOT NULL,
  tier INTEGER,               -- priority published; NULL: none
  last_change TEXT,           -- UTC of the last successful update
  last_error TEXT,            -- NULL: the last update worked
  unhealthy INTEGER NOT NULL, -- 1: no healthy endpoint last run
  unsure INTEGER NOT NULL DEFAULT 0 -- 1: an update was sent, its
                              -- outcome not recorded: read DNS again
) STRICT;
CREATE TABLE published (      -- what DNS holds, as last written
  domain TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('A', 'AAAA')),
  ttl INTEGER NOT NULL,
  addresses TEXT NOT NULL,    -- space-separated; '': emptied
  PRIMARY KEY (domain, type)
) STRICT;
CREATE TABLE checks (         -- history, kept for `history`
  id INTEGER PRIMARY KEY,
  time TEXT NOT NULL,         -- UTC
  domain TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  ip TEXT NOT NULL,
  ok INTEGER NOT NULL,
  status INTEGER,             -- HTTP status; NULL: no answer
  latency_ms INTEGER,
  reason TEXT
) STRICT;
CREATE INDEX checks_time ON checks (time);
CREATE INDEX checks_failed ON checks (domain, endpoint, time) WHERE ok = 0;
CREATE TABLE changes (        -- DNS update attempts, kept a year
  id INTEGER PRIMARY KEY,
  time TEXT NOT NULL,         -- UTC
  domain TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('A', 'AAAA')),
  ttl INTEGER NOT NULL,
  old TEXT NOT NULL,          -- space-separated addresses
  new TEXT NOT NULL,
  tier INTEGER,
  ok INTEGER NOT NULL,
  error TEXT
) STRICT;
CREATE INDEX changes_time ON changes (time);
CREATE TABLE meta (           -- last_run: UTC of the last run
  key TEXT PRIMARY KEY NOT NULL,
  value TEXT
) STRICT;
"""
# Migration 2 as it shipped: the tier's location.
V2_MIGRATION = """
ALTER TABLE domains ADD COLUMN tier_rank INTEGER;
ALTER TABLE domains ADD COLUMN tier_location TEXT;
ALTER TABLE changes ADD COLUMN tier_rank INTEGER;
ALTER TABLE changes ADD COLUMN tier_location TEXT;
"""
# Migration 3 as it shipped: typed records.
V3_MIGRATION = """
CREATE TABLE published_3 (    -- what DNS holds, as last written
  domain TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('A', 'AAAA', 'CNAME')),
  ttl INTEGER NOT NULL,
  addresses TEXT NOT NULL,    -- space-separated; '': emptied;
                              -- CNAME: the target host name
  proxied INTEGER NOT NULL DEFAULT 0, -- 1: through Cloudflare's proxy
  PRIMARY KEY (domain, type)
) STRICT;
INSERT INTO published_3 (domain, type, ttl, addresses)
  SELECT domain, type, ttl, addresses FROM published;
DROP TABLE published;
ALTER TABLE published_3 RENAME TO published;
CREATE TABLE changes_3 (      -- DNS update attempts, kept a year
  id INTEGER PRIMARY KEY,
  time TEXT NOT NULL,         -- UTC
  domain TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('A', 'AAAA', 'CNAME')),
  ttl INTEGER NOT NULL,
  old TEXT NOT NULL,          -- space-separated addresses, or a target
  new TEXT NOT NULL,
  tier INTEGER,
  ok INTEGER NOT NULL,
  error TEXT,
  tier_rank INTEGER,
  tier_location TEXT
) STRICT;
INSERT INTO changes_3 SELECT id, time, domain, type, ttl, old, new,
  tier, ok, error, tier_rank, tier_location FROM changes;
DROP TABLE changes;
ALTER TABLE changes_3 RENAME TO changes;
CREATE INDEX changes_time ON changes (time);
"""

# Migration 4 as it shipped: checks as streaks.
V4_MIGRATION = """
CREATE TABLE streaks (        -- history, kept for `history`
  id INTEGER PRIMARY KEY,
  domain TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  ip TEXT NOT NULL,
  first TEXT NOT NULL,        -- UTC of its first check
  last TEXT,                  -- UTC of its last; NULL: open (view history)
  checks INTEGER,             -- NULL: open (view history)
  run INTEGER NOT NULL,       -- number of the run of its first check
  ok INTEGER NOT NULL,
  status INTEGER,             -- HTTP status; NULL: no answer
  reason TEXT NOT NULL,       -- 'ok', 'HTTP 503', 'timeout', ...
  latency_min INTEGER NOT NULL,  -- ms
  latency_mean REAL NOT NULL,    -- ms, within 2 ms or 10%
  latency_max INTEGER NOT NULL
) STRICT;
CREATE INDEX streaks_endpoint ON streaks (domain, endpoint, first);
CREATE INDEX streaks_last ON streaks (last) WHERE last IS NOT NULL;
INSERT INTO meta (key, value) SELECT 'runs',  CAST(count(DISTINCT time) AS TEXT) FROM checks;
INSERT INTO streaks (domain, endpoint, ip, first, last, checks, run,  ok, status, reason, latency_min, latency_mean, latency_max) SELECT domain, endpoint, ip, min(time), max(time), count(*), 0, ok,  status, coalesce(reason, ''), coalesce(min(latency_ms), 0),  coalesce(avg(latency_ms), 0), coalesce(max(latency_ms), 0) FROM (SELECT *, sum(brk) OVER (PARTITION BY domain, endpoint  ORDER BY time, id) AS grp  FROM (SELECT *, (lag(ok) OVER w IS NOT ok OR lag(status) OVER w IS   NOT status OR lag(reason) OVER w IS NOT reason OR lag(ip) OVER w   IS NOT ip) AS brk FROM checks   WINDOW w AS (PARTITION BY domain, endpoint ORDER BY time, id))) GROUP BY domain, endpoint, grp ORDER BY min(time), domain, endpoint;
CREATE TABLE endpoints2 (
  domain TEXT NOT NULL,
  name TEXT NOT NULL,
  ip TEXT NOT NULL,
  url TEXT NOT NULL,
  priority INTEGER NOT NULL,
  failures INTEGER NOT NULL,  -- consecutive failed checks ...
  passes INTEGER NOT NULL,    -- ... and passed, as of run `counted`
  counted INTEGER NOT NULL,   -- (view current adds the runs since)
  removed INTEGER NOT NULL,   -- 1: out of DNS until it recovers
  streak INTEGER,             -- its open streak; NULL: none
  PRIMARY KEY (domain, name)
) STRICT;
INSERT INTO endpoints2 SELECT e.domain, e.name, e.ip, e.url,  e.priority, e.failures, e.passes,  (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'runs'),  e.removed, (SELECT s.id FROM streaks s WHERE s.domain = e.domain   AND s.endpoint = e.name AND s.ip = e.ip AND s.last = e.last_check   AND s.ok = e.last_ok ORDER BY s.id DESC LIMIT 1) FROM endpoints e;
DROP TABLE endpoints;
ALTER TABLE endpoints2 RENAME TO endpoints;
UPDATE streaks SET run = (SELECT CAST(value AS INTEGER) FROM meta  WHERE key = 'runs') - checks + 1, last = NULL, checks = NULL WHERE id IN (SELECT streak FROM endpoints);
DROP TABLE checks;
CREATE VIEW history AS    -- streaks, the open ones up to the last run
SELECT s.id, s.domain, s.endpoint, s.ip, s.first,
  coalesce(s.last, m.last_run) AS last,
  coalesce(s.checks, m.runs - s.run + 1) AS checks,
  s.ok, s.status, s.reason, s.latency_min,
  CAST(round(s.latency_mean) AS INTEGER) AS latency_mean, s.latency_max,
  s.last IS NULL AS open
FROM streaks s, (SELECT
  max(CASE key WHEN 'last_run' THEN value END) AS last_run,
  max(CASE key WHEN 'runs' THEN CAST(value AS INTEGER) END) AS runs
  FROM meta) m;
CREATE VIEW current AS    -- every endpoint as of the last run
SELECT e.domain, e.name AS endpoint, e.ip, e.priority,
  CASE WHEN h.id IS NULL THEN 'unknown' WHEN e.removed THEN 'removed'
       WHEN h.ok THEN 'ok' ELSE 'failing' END AS health,
  (' ' || p.addresses || ' ') LIKE ('% ' || e.ip || ' %') AS published,
  e.failures + CASE WHEN h.ok = 0 THEN max(m.runs - e.counted, 0)
    ELSE 0 END AS failures,
  e.passes + CASE WHEN h.ok = 1 THEN max(m.runs - e.counted, 0)
    ELSE 0 END AS passes,
  h.last AS last_check, h.status, h.reason AS last_result,
  h.first AS since, h.checks AS streak_checks, h.latency_mean
FROM endpoints e
JOIN (SELECT coalesce(max(CAST(value AS INTEGER)), 0) AS runs
  FROM meta WHERE key = 'runs') m
LEFT JOIN history h ON h.id = e.streak
LEFT JOIN published p ON p.domain = e.domain
  AND p.type = CASE WHEN instr(e.ip, ':') THEN 'AAAA' ELSE 'A' END;
CREATE VIEW dns AS        -- what DNS holds per domain
SELECT d.name AS domain, d.provider, d.tier, d.unhealthy, p.type, p.ttl,
  p.addresses, d.last_change, d.last_error
FROM domains d LEFT JOIN published p ON p.domain = d.name;
CREATE VIEW last_changes AS   -- DNS update attempts, newest first
SELECT time, domain, type, old, new, tier,
  CASE WHEN ok THEN 'ok' ELSE 'FAILED: ' || error END AS result
FROM changes ORDER BY time DESC, id DESC;
CREATE VIEW failures AS   -- failed streaks, newest first
SELECT domain, endpoint, ip, first, last, checks, status, reason,
  latency_mean, open FROM history WHERE ok = 0
ORDER BY first DESC, id DESC;
CREATE VIEW uptime AS     -- per endpoint and UTC day
WITH RECURSIVE days(id, day) AS (
  SELECT id, date(first) FROM history
  UNION ALL
  SELECT days.id, date(days.day, '+1 day') FROM days
  JOIN streaks s ON s.id = days.id
  WHERE date(days.day, '+1 day') <= date(coalesce(s.last,
    (SELECT value FROM meta WHERE key = 'last_run')))),
share(domain, endpoint, day, ok, n) AS (
  SELECT h.domain, h.endpoint, days.day, h.ok,
    CASE WHEN julianday(h.last) <= julianday(h.first) THEN h.checks
    ELSE h.checks * (min(julianday(h.last), julianday(days.day, '+1 day'))
      - max(julianday(h.first), julianday(days.day)))
      / (julianday(h.last) - julianday(h.first)) END
  FROM days JOIN history h ON h.id = days.id)
SELECT domain, endpoint, day, CAST(round(sum(n)) AS INTEGER) AS checks,
  CAST(round(sum(n * ok)) AS INTEGER) AS passed,
  round(100 * sum(n * ok) / sum(n), 3) AS uptime_pct
FROM share GROUP BY domain, endpoint, day;
"""

# Migration 5 as it shipped: drains and failbacks.
V5_MIGRATION = """
CREATE TABLE drains (         -- ddup-check --drain: out of DNS
  domain TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  since TEXT NOT NULL,        -- UTC
  until TEXT,                 -- UTC; NULL: until --undrain
  PRIMARY KEY (domain, endpoint)
) STRICT;
CREATE TABLE failbacks (      -- ddup-check --failback, not yet done
  domain TEXT PRIMARY KEY NOT NULL,
  time TEXT NOT NULL          -- UTC of the request
) STRICT;
"""


def q(path, sql, *args):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def writes(r):
    """Rows changed and pages written, from the -v line of the save."""
    m = re.search(r"state saved: (\d+) rows changed, (\d+) pages written", r.err)
    assert m, r
    return int(m.group(1)), int(m.group(2))


def two(ddup, bind, http_server):
    p, b = http_server(), http_server()
    write_config(ddup, bind, [("primary", p, "192.0.2.1", 0),
                              ("backup", b, "192.0.2.2", 10)], "attempts = 2\n")
    return p, b


def test_steady_runs_add_no_row(ddup, bind_server, http_server):
    p, _ = two(ddup, bind_server, http_server)
    assert ddup.run().rc == 0
    for _ in range(4):
        r = ddup.run("-v")
        assert r.rc == 0, r
        # The run's time and number, at most a latency per endpoint
        # (loopback answers in 0-1 ms, a busy machine may be slower).
        assert writes(r)[0] <= 4, r
    # The endpoint rows were written by the first run only.
    assert q(ddup.state, "SELECT counted FROM endpoints") == [(1,), (1,)]
    assert q(ddup.state, "SELECT count(*) FROM streaks") == [(2,)]
    assert q(ddup.state, "SELECT endpoint, checks, open FROM history ORDER BY endpoint") == \
        [("backup", 5, 1), ("primary", 5, 1)]
    assert q(ddup.state, "SELECT endpoint, health, failures, passes, streak_checks"
             " FROM current ORDER BY endpoint") == \
        [("backup", "ok", 0, 5, 5), ("primary", "ok", 0, 5, 5)]
    st = ddup.status()["domains"][0]["endpoints"]
    assert [(e["name"], e["passes"]) for e in st] == [("primary", 5), ("backup", 5)]

    # A failure ends the streak; a failed check is never merged into a pass.
    p.set(status=503)
    assert ddup.run().rc == 0
    assert ddup.run().rc == 0           # second failure: failover
    p.set(status=200)
    assert ddup.run().rc == 0
    rows = q(ddup.state, "SELECT ok, status, reason, checks, open FROM history"
             " WHERE endpoint = 'primary' ORDER BY first")
    assert rows == [(1, 200, "ok", 5, 0), (0, 503, "HTTP 503", 2, 0), (1, 200, "ok", 1, 1)]
    assert q(ddup.state, "SELECT endpoint, checks, status FROM failures") == \
        [("primary", 2, 503)]
    assert q(ddup.state, "SELECT endpoint, checks, passed FROM uptime ORDER BY endpoint") == \
        [("backup", 8, 8), ("primary", 8, 6)]
    assert q(ddup.state, "SELECT uptime_pct FROM uptime WHERE endpoint = 'primary'") == [(75.0,)]
    # Failed over, then back (recoverAfter = 1).
    assert q(ddup.state, "SELECT domain, old, new, result FROM last_changes LIMIT 2") == \
        [(NAME, "192.0.2.2", "192.0.2.1", "ok"), (NAME, "192.0.2.1", "192.0.2.2", "ok")]
    assert q(ddup.state, "SELECT domain, type, addresses FROM dns") == [(NAME, "A", "192.0.2.1")]
    assert q(ddup.state, "SELECT health, published, failures, passes FROM current"
             " WHERE endpoint = 'primary'") == [("ok", 1, 0, 1)]
    assert q(ddup.state, "PRAGMA integrity_check") == [("ok",)]


def test_status_and_reason_changes_begin_a_streak(ddup, bind_server, http_server):
    p, _ = two(ddup, bind_server, http_server)
    p.set(status=503)
    assert ddup.run().rc == 0
    p.set(status=502)
    assert ddup.run().rc == 0
    assert ddup.run().rc == 0
    assert q(ddup.state, "SELECT status, checks FROM history WHERE endpoint = 'primary'"
             " ORDER BY first") == [(503, 1), (502, 2)]
    # The counter runs on across both streaks of failures.
    assert q(ddup.state, "SELECT failures FROM current WHERE endpoint = 'primary'") == [(3,)]


def old_file(path, version, primary_url, backup_url):
    """A state file as schema 1, 3, 4 or 5 left it: 3 runs, the primary failed in
    the second, the backup passed throughout; DNS holds the primary."""
    db = sqlite3.connect(path)
    db.executescript(V1_SCHEMA)
    if version >= 2:
        db.executescript(V2_MIGRATION)
    if version >= 3:
        db.executescript(V3_MIGRATION)
    t = ["2026-11-30T10:00:00.000Z", "2026-11-30T10:00:30.000Z", "2026-11-30T10:01:00.000Z"]
    checks = [(t[0], "primary", "192.0.2.1", 1, 200, 5, "ok"),
              (t[0], "backup", "192.0.2.2", 1, 200, 6, "ok"),
              (t[1], "primary", "192.0.2.1", 0, 503, 7, "HTTP 503"),
              (t[1], "backup", "192.0.2.2", 1, 200, 8, "ok"),
              (t[2], "primary", "192.0.2.1", 1, 200, 9, "ok"),
              (t[2], "backup", "192.0.2.2", 1, 200, 10, "ok")]
    db.executemany("INSERT INTO checks (time, domain, endpoint, ip, ok, status, latency_ms,"
                   " reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [(c[0], NAME) + c[1:] for c in checks])
    db.executemany("INSERT INTO endpoints VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, 200, 'ok', ?)",
                   [(NAME, "primary", "192.0.2.1", primary_url, 0, 0, 1, t[2], 1, 9),
                    (NAME, "backup", "192.0.2.2", backup_url, 10, 0, 3, t[2], 1, 10)])
    db.execute("INSERT INTO domains (name, provider, ttl, tier, last_change, last_error,"
               " unhealthy, unsure) VALUES (?, 'bind', 60, 0, ?, NULL, 0, 0)", (NAME, t[0]))
    db.execute("INSERT INTO published (domain, type, ttl, addresses)"
               " VALUES (?, 'A', 60, '192.0.2.1')", (NAME,))
    db.execute("INSERT INTO changes (time, domain, type, ttl, old, new, tier, ok)"
               " VALUES (?, ?, 'A', 60, '', '192.0.2.1', 0, 1)", (t[0], NAME))
    db.execute("INSERT INTO meta VALUES ('last_run', ?)", (t[2],))
    db.execute("PRAGMA application_id = 1684305264")   # "ddup"
    if version >= 4:
        db.executescript(V4_MIGRATION)
    if version >= 5:
        db.executescript(V5_MIGRATION)
    db.execute(f"PRAGMA user_version = {version}")
    db.commit()
    db.close()


@pytest.mark.parametrize("version", [1, 3, 4, 5])
def test_migration_of_checks_to_streaks(ddup, bind_server, http_server, version):
    p, b = two(ddup, bind_server, http_server)
    nsupdate(bind_server, f"update add {NAME} 60 A 192.0.2.1")
    os.makedirs(os.path.dirname(ddup.state), mode=0o700, exist_ok=True)
    old_file(ddup.state, version, p.url, b.url)
    serial = bind_server.serial()

    r = ddup.run("--status", "--json")
    assert r.rc == 4 and "older" in r.err, r       # read-only: not upgraded
    r = ddup.run()
    assert (r.rc, r.err) == (0, ""), r
    assert bind_server.serial() == serial           # the stored set was right
    # Upgraded through 6 (the sampled latency mean) and whatever comes after it.
    assert q(ddup.state, "PRAGMA user_version")[0][0] >= 6
    assert q(ddup.state, "PRAGMA integrity_check") == [("ok",)]
    assert q(ddup.state, "SELECT name FROM sqlite_master WHERE name = 'checks'") == []
    # Every check before the upgrade (3 runs) is in its streak's latency mean.
    assert q(ddup.state, "SELECT count(*) FROM streaks WHERE latency_samples !="
             " coalesce(checks, 3 - run + 1)") == [(0,)]
    # The checks became streaks; the last of each went on with this run.
    rows = q(ddup.state, "SELECT endpoint, ok, status, reason, first, last, checks, open,"
             " latency_min, latency_max FROM history ORDER BY endpoint, first")
    assert rows[0][:4] == ("backup", 1, 200, "ok")
    assert rows[0][4] == "2026-11-30T10:00:00.000Z" and rows[0][6:8] == (4, 1)
    assert rows[0][8] <= 6 and rows[0][9] >= 10
    assert [x[:4] + x[4:8] for x in rows[1:]] == [
        ("primary", 1, 200, "ok", "2026-11-30T10:00:00.000Z", "2026-11-30T10:00:00.000Z", 1, 0),
        ("primary", 0, 503, "HTTP 503", "2026-11-30T10:00:30.000Z",
         "2026-11-30T10:00:30.000Z", 1, 0),
        ("primary", 1, 200, "ok", "2026-11-30T10:01:00.000Z", rows[3][5], 2, 1)]
    assert rows[3][5] > "2026-11-30T10:01:00.000Z"
    # The counters went on from schema 1's.
    assert q(ddup.state, "SELECT endpoint, failures, passes FROM current ORDER BY endpoint") == \
        [("backup", 0, 4), ("primary", 0, 2)]
    st = {e["name"]: e for e in ddup.status()["domains"][0]["endpoints"]}
    assert st["backup"]["passes"] == 4 and st["primary"]["state"] == "active"
    assert q(ddup.state, "SELECT count(*) FROM changes") == [(1,)]
    # And the next run is steady.
    r = ddup.run("-v")
    assert r.rc == 0 and writes(r)[0] <= 4, r
    # Not even the first run after the upgrade rewrote the endpoint rows.
    assert q(ddup.state, "SELECT counted FROM endpoints") == [(3,), (3,)]
    assert q(ddup.state, "SELECT sum(checks) FROM history") == [(10,)]


def test_ended_drains_are_logged_and_pruned_with_history(tmp_path):
    """Each drain that ends (--undrain, a new --drain over it) leaves one row in
    drain_log; a run drops the rows older than `history`, as it does streaks."""
    db = tmp_path / "state.db"
    cfg = tmp_path / "ddup.ini"
    cfg.write_text("state = %s\nhistory = 1s\n[provider p]\ntype = exec\n"
                   "command = /bin/true\n[domain app.example.com]\nprovider = p\n"
                   "[endpoint a]\nurl = http://127.0.0.1:9/\nip = 127.0.0.1\n" % db)

    def ddup(*args):
        r = subprocess.run([DDUP, "-c", str(cfg), *args], capture_output=True,
                           text=True, timeout=30)
        assert r.returncode == 0, r.stderr

    def log():
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
        rows = con.execute("SELECT endpoint, since < until FROM drain_log").fetchall()
        con.close()
        return rows

    ddup("--drain", "app.example.com/a", "--for", "1h")
    ddup("--drain", "app.example.com/a")
    ddup("--undrain", "app.example.com/a")
    assert log() == [("a", 1), ("a", 1)]
    ddup()
    assert len(log()) == 2
    time.sleep(1.5)
    ddup()
    assert log() == []
