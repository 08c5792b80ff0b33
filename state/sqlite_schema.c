/*
 * The schema of the state file, as data: the migrations that build it
 * and the temporary tables of a read-write connection.
 */

#include "state/sqlite.h"

/*
 * Schema migrations: state_migrations[i] takes the file from user_version i to
 * i + 1.  Never edit one that has shipped; append a new one.
 */
const char *const state_migrations[] = {
	/*
	 * 1: the first schema.  The newlines and comments are kept by
	 * SQLite and shown by the CLI's .schema, for operators.
	 */
	"CREATE TABLE endpoints (\n"
	"  domain TEXT NOT NULL,\n"
	"  name TEXT NOT NULL,\n"
	"  ip TEXT NOT NULL,\n"
	"  url TEXT NOT NULL,\n"
	"  priority INTEGER NOT NULL,\n"
	"  failures INTEGER NOT NULL,  -- consecutive failed checks\n"
	"  passes INTEGER NOT NULL,    -- consecutive passed checks\n"
	"  removed INTEGER NOT NULL,   -- 1: out of DNS until it recovers\n"
	"  last_check TEXT,            -- UTC; NULL: never checked\n"
	"  last_ok INTEGER,\n"
	"  last_status INTEGER,        -- HTTP status; NULL: no answer\n"
	"  last_result TEXT,           -- 'ok', 'HTTP 503', 'timeout', ...\n"
	"  latency_ms INTEGER,\n"
	"  PRIMARY KEY (domain, name)\n"
	") STRICT;\n"
	"CREATE TABLE domains (\n"
	"  name TEXT PRIMARY KEY NOT NULL,\n"
	"  provider TEXT NOT NULL,\n"
	"  ttl INTEGER NOT NULL,\n"
	"  tier INTEGER,               -- priority published; NULL: none\n"
	"  last_change TEXT,           -- UTC of the last successful update\n"
	"  last_error TEXT,            -- NULL: the last update worked\n"
	"  unhealthy INTEGER NOT NULL, -- 1: no healthy endpoint last run\n"
	"  unsure INTEGER NOT NULL DEFAULT 0 -- 1: an update was sent, its\n"
	"                              -- outcome not recorded: read DNS again\n"
	") STRICT;\n"
	"CREATE TABLE published (      -- what DNS holds, as last written\n"
	"  domain TEXT NOT NULL,\n"
	"  type TEXT NOT NULL CHECK (type IN ('A', 'AAAA')),\n"
	"  ttl INTEGER NOT NULL,\n"
	"  addresses TEXT NOT NULL,    -- space-separated; '': emptied\n"
	"  PRIMARY KEY (domain, type)\n"
	") STRICT;\n"
	"CREATE TABLE checks (         -- history, kept for `history`\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  time TEXT NOT NULL,         -- UTC\n"
	"  domain TEXT NOT NULL,\n"
	"  endpoint TEXT NOT NULL,\n"
	"  ip TEXT NOT NULL,\n"
	"  ok INTEGER NOT NULL,\n"
	"  status INTEGER,             -- HTTP status; NULL: no answer\n"
	"  latency_ms INTEGER,\n"
	"  reason TEXT\n"
	") STRICT;\n"
	"CREATE INDEX checks_time ON checks (time);\n"
	/*
	 * Failures only: a run adds one row per endpoint, and an index on
	 * (domain, endpoint) for every row would dirty one page per
	 * endpoint per run; failed checks are few and what operators look
	 * up by endpoint ("WHERE ... AND ok = 0").
	 */
	"CREATE INDEX checks_failed ON checks (domain, endpoint, time)"
	" WHERE ok = 0;\n"
	"CREATE TABLE changes (        -- DNS update attempts, kept a year\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  time TEXT NOT NULL,         -- UTC\n"
	"  domain TEXT NOT NULL,\n"
	"  type TEXT NOT NULL CHECK (type IN ('A', 'AAAA')),\n"
	"  ttl INTEGER NOT NULL,\n"
	"  old TEXT NOT NULL,          -- space-separated addresses\n"
	"  new TEXT NOT NULL,\n"
	"  tier INTEGER,\n"
	"  ok INTEGER NOT NULL,\n"
	"  error TEXT\n"
	") STRICT;\n"
	"CREATE INDEX changes_time ON changes (time);\n"
	"CREATE TABLE meta (           -- last_run: UTC of the last run\n"
	"  key TEXT PRIMARY KEY NOT NULL,\n"
	"  value TEXT\n"
	") STRICT;\n",
	/*
	 * 2: a tier is a location rank and a priority (ddup.ini(5),
	 * POLICIES: location, failoverLocations); tier stays the
	 * priority.  tier_rank: 0 the domain's own location, then its
	 * failover locations in order, then the others; tier_location:
	 * that location's name, NULL for the others.  Both NULL for a
	 * domain without a location.
	 */
	"ALTER TABLE domains ADD COLUMN tier_rank INTEGER;\n"
	"ALTER TABLE domains ADD COLUMN tier_location TEXT;\n"
	"ALTER TABLE changes ADD COLUMN tier_rank INTEGER;\n"
	"ALTER TABLE changes ADD COLUMN tier_location TEXT;\n",
	/*
	 * 3: typed records.  A published set and a change may be a CNAME,
	 * and a record may be proxied (Cloudflare).  SQLite cannot change
	 * a CHECK constraint in place: both tables are built anew and
	 * filled from the old ones.  The column keeps its name, addresses,
	 * for the operators' queries; a CNAME's holds its target.
	 */
	"CREATE TABLE published_3 (    -- what DNS holds, as last written\n"
	"  domain TEXT NOT NULL,\n"
	"  type TEXT NOT NULL CHECK (type IN ('A', 'AAAA', 'CNAME')),\n"
	"  ttl INTEGER NOT NULL,\n"
	"  addresses TEXT NOT NULL,    -- space-separated; '': emptied;\n"
	"                              -- CNAME: the target host name\n"
	"  proxied INTEGER NOT NULL DEFAULT 0, -- 1: through Cloudflare's proxy\n"
	"  PRIMARY KEY (domain, type)\n"
	") STRICT;\n"
	"INSERT INTO published_3 (domain, type, ttl, addresses)\n"
	"  SELECT domain, type, ttl, addresses FROM published;\n"
	"DROP TABLE published;\n"
	"ALTER TABLE published_3 RENAME TO published;\n"
	"CREATE TABLE changes_3 (      -- DNS update attempts, kept a year\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  time TEXT NOT NULL,         -- UTC\n"
	"  domain TEXT NOT NULL,\n"
	"  type TEXT NOT NULL CHECK (type IN ('A', 'AAAA', 'CNAME')),\n"
	"  ttl INTEGER NOT NULL,\n"
	"  old TEXT NOT NULL,          -- space-separated addresses, or a target\n"
	"  new TEXT NOT NULL,\n"
	"  tier INTEGER,\n"
	"  ok INTEGER NOT NULL,\n"
	"  error TEXT,\n"
	"  tier_rank INTEGER,\n"
	"  tier_location TEXT\n"
	") STRICT;\n"
	"INSERT INTO changes_3 SELECT id, time, domain, type, ttl, old, new,\n"
	"  tier, ok, error, tier_rank, tier_location FROM changes;\n"
	"DROP TABLE changes;\n"
	"ALTER TABLE changes_3 RENAME TO changes;\n"
	"CREATE INDEX changes_time ON changes (time);\n",
	/*
	 * 4: history as streaks of equal results (ddup-check(8), STATE
	 * FILE), so a steady state adds no row.  A run writes the
	 * counters of an endpoint only when they stop following from its
	 * streak: failures and passes are as of run `counted`, and every
	 * run since then had the result of the endpoint's open streak.
	 * The checks rows become streaks; the latest one of each
	 * endpoint, if it holds the endpoint's last check, stays open and
	 * goes on.
	 */
	"CREATE TABLE streaks (        -- history, kept for `history`\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  domain TEXT NOT NULL,\n"
	"  endpoint TEXT NOT NULL,\n"
	"  ip TEXT NOT NULL,\n"
	"  first TEXT NOT NULL,        -- UTC of its first check\n"
	"  last TEXT,                  -- UTC of its last; NULL: open (view history)\n"
	"  checks INTEGER,             -- NULL: open (view history)\n"
	"  run INTEGER NOT NULL,       -- number of the run of its first check\n"
	"  ok INTEGER NOT NULL,\n"
	"  status INTEGER,             -- HTTP status; NULL: no answer\n"
	"  reason TEXT NOT NULL,       -- 'ok', 'HTTP 503', 'timeout', ...\n"
	"  latency_min INTEGER NOT NULL,  -- ms\n"
	"  latency_mean REAL NOT NULL,    -- ms, within 2 ms or 10%\n"
	"  latency_max INTEGER NOT NULL\n"
	") STRICT;\n"
	"CREATE INDEX streaks_endpoint ON streaks (domain, endpoint, first);\n"
	"CREATE INDEX streaks_last ON streaks (last) WHERE last IS NOT NULL;\n"
	"INSERT INTO meta (key, value) SELECT 'runs',"
	"  CAST(count(DISTINCT time) AS TEXT) FROM checks;\n"
	/* Gaps and islands: a streak ends where ok, status, reason or ip change. */
	"INSERT INTO streaks (domain, endpoint, ip, first, last, checks, run,"
	"  ok, status, reason, latency_min, latency_mean, latency_max)"
	" SELECT domain, endpoint, ip, min(time), max(time), count(*), 0, ok,"
	"  status, coalesce(reason, ''), coalesce(min(latency_ms), 0),"
	"  coalesce(avg(latency_ms), 0), coalesce(max(latency_ms), 0)"
	" FROM (SELECT *, sum(brk) OVER (PARTITION BY domain, endpoint"
	"  ORDER BY time, id) AS grp"
	"  FROM (SELECT *, (lag(ok) OVER w IS NOT ok OR lag(status) OVER w IS"
	"   NOT status OR lag(reason) OVER w IS NOT reason OR lag(ip) OVER w"
	"   IS NOT ip) AS brk FROM checks"
	"   WINDOW w AS (PARTITION BY domain, endpoint ORDER BY time, id)))"
	" GROUP BY domain, endpoint, grp ORDER BY min(time), domain, endpoint;\n"
	"CREATE TABLE endpoints2 (\n"
	"  domain TEXT NOT NULL,\n"
	"  name TEXT NOT NULL,\n"
	"  ip TEXT NOT NULL,\n"
	"  url TEXT NOT NULL,\n"
	"  priority INTEGER NOT NULL,\n"
	"  failures INTEGER NOT NULL,  -- consecutive failed checks ...\n"
	"  passes INTEGER NOT NULL,    -- ... and passed, as of run `counted`\n"
	"  counted INTEGER NOT NULL,   -- (view current adds the runs since)\n"
	"  removed INTEGER NOT NULL,   -- 1: out of DNS until it recovers\n"
	"  streak INTEGER,             -- its open streak; NULL: none\n"
	"  PRIMARY KEY (domain, name)\n"
	") STRICT;\n"
	"INSERT INTO endpoints2 SELECT e.domain, e.name, e.ip, e.url,"
	"  e.priority, e.failures, e.passes,"
	"  (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'runs'),"
	"  e.removed, (SELECT s.id FROM streaks s WHERE s.domain = e.domain"
	"   AND s.endpoint = e.name AND s.ip = e.ip AND s.last = e.last_check"
	"   AND s.ok = e.last_ok ORDER BY s.id DESC LIMIT 1)"
	" FROM endpoints e;\n"
	"DROP TABLE endpoints;\n"
	"ALTER TABLE endpoints2 RENAME TO endpoints;\n"
	"UPDATE streaks SET run = (SELECT CAST(value AS INTEGER) FROM meta"
	"  WHERE key = 'runs') - checks + 1, last = NULL, checks = NULL"
	" WHERE id IN (SELECT streak FROM endpoints);\n"
	"DROP TABLE checks;\n"
	/* The views of the README's queries. */
	"CREATE VIEW history AS    -- streaks, the open ones up to the last run\n"
	"SELECT s.id, s.domain, s.endpoint, s.ip, s.first,\n"
	"  coalesce(s.last, m.last_run) AS last,\n"
	"  coalesce(s.checks, m.runs - s.run + 1) AS checks,\n"
	"  s.ok, s.status, s.reason, s.latency_min,\n"
	"  CAST(round(s.latency_mean) AS INTEGER) AS latency_mean, s.latency_max,\n"
	"  s.last IS NULL AS open\n"
	"FROM streaks s, (SELECT\n"
	"  max(CASE key WHEN 'last_run' THEN value END) AS last_run,\n"
	"  max(CASE key WHEN 'runs' THEN CAST(value AS INTEGER) END) AS runs\n"
	"  FROM meta) m;\n"
	"CREATE VIEW current AS    -- every endpoint as of the last run\n"
	"SELECT e.domain, e.name AS endpoint, e.ip, e.priority,\n"
	"  CASE WHEN h.id IS NULL THEN 'unknown' WHEN e.removed THEN 'removed'\n"
	"       WHEN h.ok THEN 'ok' ELSE 'failing' END AS health,\n"
	"  (' ' || p.addresses || ' ') LIKE ('% ' || e.ip || ' %') AS published,\n"
	"  e.failures + CASE WHEN h.ok = 0 THEN max(m.runs - e.counted, 0)\n"
	"    ELSE 0 END AS failures,\n"
	"  e.passes + CASE WHEN h.ok = 1 THEN max(m.runs - e.counted, 0)\n"
	"    ELSE 0 END AS passes,\n"
	"  h.last AS last_check, h.status, h.reason AS last_result,\n"
	"  h.first AS since, h.checks AS streak_checks, h.latency_mean\n"
	"FROM endpoints e\n"
	"JOIN (SELECT coalesce(max(CAST(value AS INTEGER)), 0) AS runs\n"
	"  FROM meta WHERE key = 'runs') m\n"
	"LEFT JOIN history h ON h.id = e.streak\n"
	"LEFT JOIN published p ON p.domain = e.domain\n"
	"  AND p.type = CASE WHEN instr(e.ip, ':') THEN 'AAAA' ELSE 'A' END;\n"
	"CREATE VIEW dns AS        -- what DNS holds per domain\n"
	"SELECT d.name AS domain, d.provider, d.tier, d.unhealthy, p.type, p.ttl,\n"
	"  p.addresses, d.last_change, d.last_error\n"
	"FROM domains d LEFT JOIN published p ON p.domain = d.name;\n"
	"CREATE VIEW last_changes AS   -- DNS update attempts, newest first\n"
	"SELECT time, domain, type, old, new, tier,\n"
	"  CASE WHEN ok THEN 'ok' ELSE 'FAILED: ' || error END AS result\n"
	"FROM changes ORDER BY time DESC, id DESC;\n"
	"CREATE VIEW failures AS   -- failed streaks, newest first\n"
	"SELECT domain, endpoint, ip, first, last, checks, status, reason,\n"
	"  latency_mean, open FROM history WHERE ok = 0\n"
	"ORDER BY first DESC, id DESC;\n"
	/*
	 * A streak's checks counted per UTC day: one that spans midnight is
	 * shared in proportion to its time on each side (checks come at a
	 * steady interval).
	 */
	"CREATE VIEW uptime AS     -- per endpoint and UTC day\n"
	"WITH RECURSIVE days(id, day) AS (\n"
	"  SELECT id, date(first) FROM history\n"
	"  UNION ALL\n"
	"  SELECT days.id, date(days.day, '+1 day') FROM days\n"
	"  JOIN streaks s ON s.id = days.id\n"
	"  WHERE date(days.day, '+1 day') <= date(coalesce(s.last,\n"
	"    (SELECT value FROM meta WHERE key = 'last_run')))),\n"
	"share(domain, endpoint, day, ok, n) AS (\n"
	"  SELECT h.domain, h.endpoint, days.day, h.ok,\n"
	"    CASE WHEN julianday(h.last) <= julianday(h.first) THEN h.checks\n"
	"    ELSE h.checks * (min(julianday(h.last), julianday(days.day, '+1 day'))\n"
	"      - max(julianday(h.first), julianday(days.day)))\n"
	"      / (julianday(h.last) - julianday(h.first)) END\n"
	"  FROM days JOIN history h ON h.id = days.id)\n"
	"SELECT domain, endpoint, day, CAST(round(sum(n)) AS INTEGER) AS checks,\n"
	"  CAST(round(sum(n * ok)) AS INTEGER) AS passed,\n"
	"  round(100 * sum(n * ok) / sum(n), 3) AS uptime_pct\n"
	"FROM share GROUP BY domain, endpoint, day;\n",
	/*
	 * 5: what the operator asked for (ddup-check(8), --drain,
	 * --undrain, --failback), acted on by the next run.  The state of
	 * the controlUrl is kept in meta (control_failed_since,
	 * control_result).
	 */
	"CREATE TABLE drains (         -- ddup-check --drain: out of DNS\n"
	"  domain TEXT NOT NULL,\n"
	"  endpoint TEXT NOT NULL,\n"
	"  since TEXT NOT NULL,        -- UTC\n"
	"  until TEXT,                 -- UTC; NULL: until --undrain\n"
	"  PRIMARY KEY (domain, endpoint)\n"
	") STRICT;\n"
	"CREATE TABLE failbacks (      -- ddup-check --failback, not yet done\n"
	"  domain TEXT PRIMARY KEY NOT NULL,\n"
	"  time TEXT NOT NULL          -- UTC of the request\n"
	") STRICT;\n",
	/*
	 * 6: a streak's mean latency is that of a sample of its checks, so
	 * a steady run writes about one streak in 16 whatever the jitter
	 * (a mean held within 2 ms or 10% was rewritten nearly every run
	 * once latencies vary by more).  min and max stay exact.  The
	 * views name streaks, and stay as they are across the rename.
	 */
	"CREATE TABLE streaks_5 (      -- history, kept for `history`\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  domain TEXT NOT NULL,\n"
	"  endpoint TEXT NOT NULL,\n"
	"  ip TEXT NOT NULL,\n"
	"  first TEXT NOT NULL,        -- UTC of its first check\n"
	"  last TEXT,                  -- UTC of its last; NULL: open (view history)\n"
	"  checks INTEGER,             -- NULL: open (view history)\n"
	"  run INTEGER NOT NULL,       -- number of the run of its first check\n"
	"  ok INTEGER NOT NULL,\n"
	"  status INTEGER,             -- HTTP status; NULL: no answer\n"
	"  reason TEXT NOT NULL,       -- 'ok', 'HTTP 503', 'timeout', ...\n"
	"  latency_min INTEGER NOT NULL,  -- ms, of every check\n"
	"  latency_mean REAL NOT NULL,    -- ms, of latency_samples checks: the\n"
	"                                 -- first, then one run in 16\n"
	"  latency_max INTEGER NOT NULL,  -- ms, of every check\n"
	"  latency_samples INTEGER NOT NULL\n"
	") STRICT;\n"
	"INSERT INTO streaks_5 SELECT s.*, coalesce(s.checks,"
	"  (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'runs')"
	"  - s.run + 1) FROM streaks s;\n"
	"DROP TABLE streaks;\n"
	"PRAGMA legacy_alter_table = ON;\n"
	"ALTER TABLE streaks_5 RENAME TO streaks;\n"
	"PRAGMA legacy_alter_table = OFF;\n"
	"CREATE INDEX streaks_endpoint ON streaks (domain, endpoint, first);\n"
	"CREATE INDEX streaks_last ON streaks (last) WHERE last IS NOT NULL;\n",
	/*
	 * 7: the notification outbox (ddup.ini(5), NOTIFICATIONS).  An
	 * event is written in the transaction of the run that saw it,
	 * with one delivery per [notify] section that wants it, before
	 * anything is sent; each attempt's outcome is written once it is
	 * known.  No secret is kept: the body is the event JSON, the
	 * error names the notifier's url or program, never a header.
	 */
	"CREATE TABLE events (         -- what happened, as sent\n"
	"  id INTEGER PRIMARY KEY,     -- the order they are delivered in\n"
	"  time TEXT NOT NULL,         -- UTC\n"
	"  domain TEXT NOT NULL,\n"
	"  event TEXT NOT NULL,        -- 'dns_updated', 'endpoint_down', ...\n"
	"  endpoint TEXT,              -- endpoint_down and endpoint_up: which\n"
	"  body TEXT NOT NULL          -- the event JSON\n"
	") STRICT;\n"
	"CREATE TABLE deliveries (     -- one per event and [notify] wanting it\n"
	"  event INTEGER NOT NULL,     -- events.id\n"
	"  notifier TEXT NOT NULL,     -- the [notify] section's name\n"
	"  attempts INTEGER NOT NULL DEFAULT 0,  -- made so far\n"
	"  next_attempt TEXT,          -- UTC; NULL: at the next run\n"
	"  delivered TEXT,             -- UTC; NULL: not yet\n"
	"  given_up TEXT,              -- UTC: attempts spent, not delivered\n"
	"  last_error TEXT,            -- of the last failed attempt\n"
	"  PRIMARY KEY (notifier, event)\n"
	") STRICT;\n"
	"CREATE INDEX deliveries_event ON deliveries (event);\n"
	"CREATE VIEW undelivered AS    -- pending and given up, oldest first\n"
	"SELECT e.id, e.time, e.domain, e.event, e.endpoint, d.notifier,\n"
	"  d.attempts, d.next_attempt, d.given_up, d.last_error\n"
	"FROM deliveries d JOIN events e ON e.id = d.event\n"
	"WHERE d.delivered IS NULL ORDER BY e.id, d.notifier;\n",
	/*
	 * 8: counters that only grow, for metricsFile.  Checks are counted
	 * by the streaks already (a steady run writes nothing): what a
	 * streak held is added here when it is pruned, so that history
	 * plus this table is every check since the counters began.  DNS
	 * updates are counted here as they happen (endpoint '').
	 */
	"CREATE TABLE counters (       -- + view history: totals since this table\n"
	"  domain TEXT NOT NULL,\n"
	"  endpoint TEXT NOT NULL,     -- '' for a domain's counter\n"
	"  name TEXT NOT NULL,         -- checks_pass, checks_fail, dns_ok, dns_failed\n"
	"  value INTEGER NOT NULL,\n"
	"  PRIMARY KEY (domain, endpoint, name)\n"
	") STRICT;\n"
	"CREATE TRIGGER streaks_pruned BEFORE DELETE ON streaks BEGIN\n"
	"  INSERT INTO counters (domain, endpoint, name, value)\n"
	"  VALUES (old.domain, old.endpoint,\n"
	"    CASE WHEN old.ok THEN 'checks_pass' ELSE 'checks_fail' END,\n"
	"    coalesce(old.checks, (SELECT CAST(value AS INTEGER) FROM meta\n"
	"      WHERE key = 'runs') - old.run + 1))\n"
	"  ON CONFLICT (domain, endpoint, name)\n"
	"  DO UPDATE SET value = value + excluded.value;\n"
	"END;\n",
	/*
	 * 9: views for the common questions (README).  current showed a
	 * cname endpoint as not published even while DNS held its CNAME:
	 * it matched only A and AAAA sets.  A day is the 24 hours before
	 * the last run, not a UTC day (view uptime has those); a streak
	 * across its start is shared in proportion, as in uptime.
	 */
	"DROP VIEW current;\n"
	"CREATE VIEW current AS    -- every endpoint as of the last run\n"
	"SELECT e.domain, e.name AS endpoint, e.ip, e.priority,\n"
	"  CASE WHEN h.id IS NULL THEN 'unknown' WHEN e.removed THEN 'removed'\n"
	"       WHEN h.ok THEN 'ok' ELSE 'failing' END AS health,\n"
	"  (' ' || p.addresses || ' ') LIKE ('% ' || e.ip || ' %') AS published,\n"
	"  e.failures + CASE WHEN h.ok = 0 THEN max(m.runs - e.counted, 0)\n"
	"    ELSE 0 END AS failures,\n"
	"  e.passes + CASE WHEN h.ok = 1 THEN max(m.runs - e.counted, 0)\n"
	"    ELSE 0 END AS passes,\n"
	"  h.last AS last_check, h.status, h.reason AS last_result,\n"
	"  h.first AS since, h.checks AS streak_checks, h.latency_mean\n"
	"FROM endpoints e\n"
	"JOIN (SELECT coalesce(max(CAST(value AS INTEGER)), 0) AS runs\n"
	"  FROM meta WHERE key = 'runs') m\n"
	"LEFT JOIN history h ON h.id = e.streak\n"
	"LEFT JOIN published p ON p.domain = e.domain\n"
	"  AND p.type = CASE WHEN instr(e.ip, ':') THEN 'AAAA'\n"
	"    WHEN e.ip GLOB '*[^0-9.]*' THEN 'CNAME' ELSE 'A' END;\n"
	"CREATE VIEW uptime_24h AS -- per endpoint, the day before the last run\n"
	"WITH m(now) AS (SELECT julianday(value) FROM meta WHERE key = 'last_run'),\n"
	"share(domain, endpoint, ok, n) AS (\n"
	"  SELECT h.domain, h.endpoint, h.ok,\n"
	"    CASE WHEN julianday(h.last) <= julianday(h.first) THEN h.checks\n"
	"    ELSE h.checks * (min(julianday(h.last), m.now)\n"
	"      - max(julianday(h.first), m.now - 1))\n"
	"      / (julianday(h.last) - julianday(h.first)) END\n"
	"  FROM history h, m WHERE julianday(h.last) >= m.now - 1)\n"
	"SELECT domain, endpoint, CAST(round(sum(n)) AS INTEGER) AS checks,\n"
	"  CAST(round(sum(n * ok)) AS INTEGER) AS passed,\n"
	"  round(100 * sum(n * ok) / sum(n), 3) AS uptime_pct\n"
	"FROM share GROUP BY domain, endpoint;\n"
	/* A change of reason alone (HTTP 503, then timeout) is no flip. */
	"CREATE VIEW flapping AS   -- 4+ flips between pass and fail in a day\n"
	"WITH m(now) AS (SELECT julianday(value) FROM meta WHERE key = 'last_run'),\n"
	"t AS (SELECT domain, endpoint, first, ok, lag(ok) OVER (\n"
	"  PARTITION BY domain, endpoint ORDER BY first, id) AS prev FROM streaks)\n"
	"SELECT t.domain, t.endpoint, count(*) AS flips, max(t.first) AS last_flip\n"
	"FROM t, m WHERE t.prev IS NOT NULL AND t.prev != t.ok\n"
	"  AND julianday(t.first) >= m.now - 1\n"
	"GROUP BY t.domain, t.endpoint HAVING count(*) >= 4\n"
	"ORDER BY flips DESC, t.domain, t.endpoint;\n",
	/*
	 * 10: meta's config is the absolute path of the configuration
	 * whose run last wrote the file, so that a run of another one, which
	 * drops the domains and endpoints it does not configure, says so.
	 * NULL until a run of this version.
	 */
	"INSERT INTO meta (key, value)\n"
	"  VALUES ('config', NULL)\n"
	"  ON CONFLICT (key) DO NOTHING;\n",
	/*
	 * 11: certificates (ddup.ini(5), certWarn): when an endpoint's
	 * certificate expires, as its latest check saw it, for the checks
	 * that see one.  A table of its own, written when the expiry
	 * changes, so that the endpoints rows every run writes stay as
	 * small as they were.
	 */
	"CREATE TABLE certs (           -- the latest certificate seen\n"
	"  domain TEXT NOT NULL,\n"
	"  endpoint TEXT NOT NULL,\n"
	"  expires INTEGER NOT NULL,    -- Unix seconds\n"
	"  PRIMARY KEY (domain, endpoint)\n"
	");\n",
	/*
	 * 12: recheck (ddup.ini(5)) makes more than one check of an
	 * endpoint in a run.  An open streak's checks are counted from run
	 * numbers; the checks beyond one a run are kept here, a row only
	 * for an open streak that had repeats, so that the streaks rows
	 * and a steady run's writes stay as small as they were.  A streak
	 * that ends has its whole count in streaks.checks.
	 */
	"CREATE TABLE streak_repeats (  -- open streaks' checks beyond one a run\n"
	"  streak INTEGER PRIMARY KEY,  -- streaks.id\n"
	"  checks INTEGER NOT NULL\n"
	") STRICT;\n"
	"CREATE TRIGGER streak_repeats_ended AFTER UPDATE OF last ON streaks\n"
	"  WHEN new.last IS NOT NULL BEGIN\n"
	"  DELETE FROM streak_repeats WHERE streak = new.id;\n"
	"END;\n"
	"DROP VIEW history;\n"
	"CREATE VIEW history AS    -- streaks, the open ones up to the last run\n"
	"SELECT s.id, s.domain, s.endpoint, s.ip, s.first,\n"
	"  coalesce(s.last, m.last_run) AS last,\n"
	"  coalesce(s.checks, m.runs - s.run + 1 + coalesce(x.checks, 0))\n"
	"    AS checks,\n"
	"  s.ok, s.status, s.reason, s.latency_min,\n"
	"  CAST(round(s.latency_mean) AS INTEGER) AS latency_mean, s.latency_max,\n"
	"  s.last IS NULL AS open\n"
	"FROM streaks s LEFT JOIN streak_repeats x ON x.streak = s.id, (SELECT\n"
	"  max(CASE key WHEN 'last_run' THEN value END) AS last_run,\n"
	"  max(CASE key WHEN 'runs' THEN CAST(value AS INTEGER) END) AS runs\n"
	"  FROM meta) m;\n",
	/*
	 * 13: the bad day (ddup.ini(5), POLICIES: allDown, degradedTtl).
	 * A domain whose published set is not its preferred one has a row
	 * in failovers, since when and why (the first failure of the tier
	 * it left), written when that begins or ends, so a steady run
	 * writes nothing.  drain_log keeps the drains that ended, for the
	 * dashboard's day; the triggers fill it, whichever way a drain
	 * goes (--undrain, its time out, a new --drain over it).
	 */
	"CREATE TABLE failovers (       -- domains off their preferred set\n"
	"  domain TEXT PRIMARY KEY NOT NULL,\n"
	"  since TEXT NOT NULL,         -- UTC: the preferred set was left\n"
	"  reason TEXT                  -- the first failure of the tier left\n"
	") STRICT;\n"
	"CREATE TABLE drain_log (       -- drains that ended, kept as history\n"
	"  domain TEXT NOT NULL,\n"
	"  endpoint TEXT NOT NULL,\n"
	"  since TEXT NOT NULL,         -- UTC\n"
	"  until TEXT NOT NULL          -- UTC: undrained or run out\n"
	") STRICT;\n"
	"CREATE INDEX drain_log_until ON drain_log (until);\n"
	"CREATE TRIGGER drains_ended AFTER DELETE ON drains BEGIN\n"
	"  INSERT INTO drain_log VALUES (old.domain, old.endpoint, old.since,\n"
	"    CASE WHEN old.until IS NOT NULL AND old.until <\n"
	"      strftime('%Y-%m-%dT%H:%M:%fZ', 'now') THEN old.until\n"
	"    ELSE strftime('%Y-%m-%dT%H:%M:%fZ', 'now') END);\n"
	"END;\n"
	"CREATE TRIGGER drains_renewed AFTER UPDATE OF since ON drains\n"
	"  WHEN new.since <> old.since BEGIN\n"
	"  INSERT INTO drain_log VALUES (old.domain, old.endpoint, old.since,\n"
	"    CASE WHEN old.until IS NOT NULL AND old.until < new.since\n"
	"    THEN old.until ELSE new.since END);\n"
	"END;\n",
	/*
	 * 14: a failover published by allDown says so ('all' or
	 * 'fallback'; NULL: by the rules of FAILOVER RULES), for --status
	 * and for the next run, which must not count an endpoint in DNS
	 * only because nothing passed as published and healthy.
	 */
	/* (Three pieces: clang takes two for a missing comma.) */
	"ALTER TABLE failovers\n"
	"  ADD COLUMN all_down TEXT\n"
	"  CHECK (all_down IN ('all', 'fallback'));\n",
};

const int state_schema_version =
    (int)(sizeof(state_migrations) / sizeof(state_migrations[0]));

/*
 * What state_finish_run() keeps, as temporary tables of this connection
 * (in memory), so the deletes are single statements however big the
 * configuration.
 */
const char state_temp_schema[] =
	"CREATE TEMP TABLE cfg_domains ("
	"  name TEXT PRIMARY KEY NOT NULL, has4 INTEGER, has6 INTEGER,"
	"  hascname INTEGER);"
	"CREATE TEMP TABLE cfg_endpoints ("
	"  domain TEXT NOT NULL, name TEXT NOT NULL,"
	"  PRIMARY KEY (domain, name));";
