/*
 * The PostgreSQL backend's schema (state/pg.h), by version:
 * pg_migrations[i] makes version i + 1 and runs in the transaction of
 * the upgrade, under the schema's advisory lock (state/pg.c).  A
 * migration on main is never edited: a change is a new one.
 *
 * Tables live in the role's first schema (public): no name is ever
 * qualified, and no column's default calls now(), because the tests
 * replace now() through the search_path.
 */

#include "state/pg.h"

const char *const pg_migrations[] = {
	"CREATE TABLE ddup_meta (key text PRIMARY KEY, value text NOT NULL);"
	"INSERT INTO ddup_meta VALUES ('schema_version', '1')",
	/*
	 * 2: the state of ddup-check(8), STATE FILE (what the SQLite file
	 * holds) and the rounds of SEVERAL CHECKERS.  Times are
	 * timestamptz, written from the run's clock as SQLite's are; a
	 * round's slot is the database's.  A streak's last and checks are
	 * kept up to date by every check (a row per check would be the
	 * SQLite file's history without its streaks);
	 * ddup_endpoint.streak is the open one, NULL once a run did not
	 * count the endpoint (its next check begins a new streak).  meta
	 * keeps runs and last_run.
	 */
	"CREATE TABLE ddup_domain ("
	"  name text PRIMARY KEY,"
	"  provider text NOT NULL,"
	"  ttl integer NOT NULL,"
	"  tier integer,"			/* priority published; NULL: none */
	"  tier_rank integer,"			/* NULL: no location */
	"  tier_location text,"			/* NULL: none, or the others */
	"  last_change timestamptz,"		/* of the last successful update */
	"  last_error text,"			/* NULL: the last update worked */
	"  unhealthy boolean NOT NULL,"
	"  unsure boolean NOT NULL);"		/* an update went out unrecorded */
	"CREATE TABLE ddup_published ("		/* what DNS holds, as last written */
	"  domain text NOT NULL,"
	"  type text NOT NULL CHECK (type IN ('A', 'AAAA', 'CNAME')),"
	"  ttl integer NOT NULL,"
	"  addresses text NOT NULL,"		/* space-separated; CNAME: target */
	"  proxied boolean NOT NULL,"
	"  PRIMARY KEY (domain, type));"
	"CREATE TABLE ddup_streak ("		/* history, kept for `history` */
	"  id bigserial PRIMARY KEY,"
	"  domain text NOT NULL,"
	"  endpoint text NOT NULL,"
	"  ip text NOT NULL,"
	"  first timestamptz NOT NULL,"
	"  last timestamptz NOT NULL,"
	"  checks integer NOT NULL,"
	"  ok boolean NOT NULL,"
	"  status integer,"			/* HTTP status; NULL: no answer */
	"  reason text NOT NULL,"
	"  latency_min integer NOT NULL,"
	"  latency_mean double precision NOT NULL,"
	"  latency_max integer NOT NULL);"
	"CREATE INDEX ddup_streak_endpoint ON ddup_streak"
	"  (domain, endpoint, first);"
	"CREATE INDEX ddup_streak_last ON ddup_streak (last);"
	"CREATE TABLE ddup_endpoint ("
	"  domain text NOT NULL,"
	"  name text NOT NULL,"
	"  ip text NOT NULL,"			/* address or CNAME target */
	"  url text NOT NULL,"
	"  priority integer NOT NULL,"
	"  failures integer NOT NULL,"		/* consecutive failed rounds */
	"  passes integer NOT NULL,"		/* consecutive passed rounds */
	"  removed boolean NOT NULL,"
	"  last_check timestamptz,"		/* NULL: never checked */
	"  last_ok boolean,"
	"  last_status integer,"
	"  latency_ms integer,"
	"  last_result text,"
	"  streak bigint,"			/* its open streak; NULL: none */
	"  PRIMARY KEY (domain, name));"
	"CREATE INDEX ddup_endpoint_streak ON ddup_endpoint (streak);"
	"CREATE TABLE ddup_change ("		/* DNS update attempts, a year */
	"  id bigserial PRIMARY KEY,"
	"  time timestamptz NOT NULL,"
	"  domain text NOT NULL,"
	"  type text NOT NULL CHECK (type IN ('A', 'AAAA', 'CNAME')),"
	"  ttl integer NOT NULL,"
	"  old text NOT NULL,"
	"  new text NOT NULL,"
	"  tier integer,"
	"  tier_rank integer,"
	"  tier_location text,"
	"  ok boolean NOT NULL,"
	"  error text);"
	"CREATE INDEX ddup_change_time ON ddup_change (time);"
	"CREATE TABLE ddup_drain ("		/* --drain: out of DNS */
	"  domain text NOT NULL,"
	"  endpoint text NOT NULL,"
	"  since timestamptz NOT NULL,"
	"  until timestamptz,"			/* NULL: until --undrain */
	"  PRIMARY KEY (domain, endpoint));"
	"CREATE TABLE ddup_failback ("		/* --failback, not yet done */
	"  domain text PRIMARY KEY,"
	"  time timestamptz NOT NULL);"
	"CREATE TABLE ddup_control ("		/* a failing controlUrl, per host */
	"  checker text PRIMARY KEY,"
	"  since timestamptz NOT NULL,"
	"  result text NOT NULL);"
	"CREATE TABLE ddup_event ("		/* the outbox, ddup.ini(5) */
	"  id bigserial PRIMARY KEY,"		/* the order of delivery */
	"  time timestamptz NOT NULL,"
	"  domain text NOT NULL,"
	"  event text NOT NULL,"
	"  endpoint text,"
	"  body text NOT NULL);"
	"CREATE INDEX ddup_event_time ON ddup_event (time);"
	"CREATE TABLE ddup_delivery ("
	"  event bigint NOT NULL REFERENCES ddup_event (id) ON DELETE CASCADE,"
	"  notifier text NOT NULL,"
	"  attempts integer NOT NULL,"
	"  next_attempt timestamptz,"		/* NULL: at the next run */
	"  delivered timestamptz,"
	"  given_up timestamptz,"
	"  last_error text,"
	"  PRIMARY KEY (notifier, event));"
	"CREATE INDEX ddup_delivery_event ON ddup_delivery (event);"
	"CREATE TABLE ddup_counter ("		/* + the streaks: totals */
	"  domain text NOT NULL,"
	"  endpoint text NOT NULL,"		/* '' for a domain's */
	"  name text NOT NULL,"
	"  value bigint NOT NULL,"
	"  PRIMARY KEY (domain, endpoint, name));"
	"CREATE TABLE ddup_report (seq bigserial PRIMARY KEY, checker text NOT"
	"  NULL, at timestamptz NOT NULL, slot bigint NOT NULL, digest text NOT"
	"  NULL, results text NOT NULL);"
	"CREATE INDEX ddup_report_checker ON ddup_report (checker, seq);"
	"CREATE TABLE ddup_round (domain text PRIMARY KEY, slot bigint NOT NULL,"
	"  at timestamptz NOT NULL, checker text NOT NULL, heard integer NOT"
	"  NULL, void_all boolean NOT NULL, pending text);"
	"CREATE TABLE ddup_vote (domain text NOT NULL, endpoint text NOT NULL,"
	"  slot bigint NOT NULL, npass integer NOT NULL, nfail integer NOT NULL,"
	"  verdict integer NOT NULL, PRIMARY KEY (domain, endpoint))",
	/*
	 * 3: views for the operator's questions, as the SQLite file has
	 * them (README): every endpoint now, the last DNS changes, failed
	 * streaks, uptime over the day before the last run (a streak across
	 * its start shared in proportion) and undelivered notifications.
	 */
	"CREATE VIEW ddup_current AS"
	" SELECT e.domain, e.name AS endpoint, e.ip, e.priority,"
	"  CASE WHEN e.last_check IS NULL THEN 'unknown'"
	"   WHEN e.removed THEN 'removed' WHEN e.last_ok THEN 'ok'"
	"   ELSE 'failing' END AS health,"
	"  coalesce(position(' ' || e.ip || ' ' IN ' ' || p.addresses || ' ')"
	"   > 0, false) AS published,"
	"  e.failures, e.passes, e.last_check, e.last_status AS status,"
	"  e.last_result, s.first AS since, s.checks AS streak_checks,"
	"  round(s.latency_mean)::integer AS latency_mean"
	" FROM ddup_endpoint e LEFT JOIN ddup_streak s ON s.id = e.streak"
	" LEFT JOIN ddup_published p ON p.domain = e.domain"
	"  AND p.type = CASE WHEN e.ip LIKE '%:%' THEN 'AAAA'"
	"   WHEN e.ip ~ '[^0-9.]' THEN 'CNAME' ELSE 'A' END;"
	"CREATE VIEW ddup_last_changes AS"
	" SELECT time, domain, type, old, new, tier,"
	"  CASE WHEN ok THEN 'ok' ELSE 'FAILED: ' || error END AS result"
	" FROM ddup_change ORDER BY time DESC, id DESC;"
	"CREATE VIEW ddup_failures AS"
	" SELECT s.domain, s.endpoint, s.ip, s.first, s.last, s.checks,"
	"  s.status, s.reason, round(s.latency_mean)::integer AS latency_mean,"
	"  EXISTS (SELECT 1 FROM ddup_endpoint e WHERE e.streak = s.id) AS open"
	" FROM ddup_streak s WHERE NOT s.ok ORDER BY s.first DESC, s.id DESC;"
	"CREATE VIEW ddup_uptime_24h AS"
	" WITH m AS (SELECT value::timestamptz AS now FROM ddup_meta"
	"  WHERE key = 'last_run'),"
	" share AS (SELECT s.domain, s.endpoint, s.ok,"
	"  CASE WHEN s.last <= s.first THEN s.checks::float8"
	"  ELSE s.checks * extract(epoch FROM least(s.last, m.now)"
	"   - greatest(s.first, m.now - interval '1 day'))::float8"
	"   / extract(epoch FROM s.last - s.first)::float8 END AS n"
	"  FROM ddup_streak s, m WHERE s.last >= m.now - interval '1 day')"
	" SELECT domain, endpoint, round(sum(n))::bigint AS checks,"
	"  round(coalesce(sum(n) FILTER (WHERE ok), 0))::bigint AS passed,"
	"  round((100 * coalesce(sum(n) FILTER (WHERE ok), 0)"
	"   / nullif(sum(n), 0))::numeric, 3) AS uptime_pct"
	" FROM share GROUP BY domain, endpoint;"
	"CREATE VIEW ddup_undelivered AS"
	" SELECT e.id, e.time, e.domain, e.event, e.endpoint, d.notifier,"
	"  d.attempts, d.next_attempt, d.given_up, d.last_error"
	" FROM ddup_delivery d JOIN ddup_event e ON e.id = d.event"
	" WHERE d.delivered IS NULL ORDER BY e.id, d.notifier",
	/*
	 * 4: certificates, as the SQLite file's version 11: when an
	 * endpoint's certificate expires (Unix seconds), as its latest
	 * check saw it, written when that changes.
	 */
	"CREATE TABLE ddup_cert (domain text NOT NULL, endpoint text NOT NULL,"
	"  expires bigint NOT NULL, PRIMARY KEY (domain, endpoint))",
	/*
	 * 5: the bad day, as the SQLite file's version 13: a domain off
	 * its preferred set, since when and why; the drains that ended,
	 * filled by a trigger for the dashboard's day.
	 */
	"CREATE TABLE ddup_failover (domain text PRIMARY KEY,"
	"  since timestamptz NOT NULL,"		/* the preferred set was left */
	"  reason text);"			/* the first failure of the tier left */
	"CREATE TABLE ddup_drain_log (domain text NOT NULL,"
	"  endpoint text NOT NULL, since timestamptz NOT NULL,"
	"  until timestamptz NOT NULL);"
	"CREATE INDEX ddup_drain_log_until ON ddup_drain_log (until);"
	"CREATE FUNCTION ddup_drain_ended() RETURNS trigger LANGUAGE plpgsql"
	"  AS $$ BEGIN"
	"  IF TG_OP = 'DELETE' THEN"
	"    INSERT INTO ddup_drain_log VALUES (OLD.domain, OLD.endpoint,"
	"      OLD.since, least(coalesce(OLD.until, now()), now()));"
	"  ELSIF NEW.since <> OLD.since THEN"
	"    INSERT INTO ddup_drain_log VALUES (OLD.domain, OLD.endpoint,"
	"      OLD.since, least(coalesce(OLD.until, NEW.since), NEW.since));"
	"  END IF;"
	"  RETURN NULL; END $$;"
	"CREATE TRIGGER ddup_drain_ended AFTER DELETE OR UPDATE ON ddup_drain"
	"  FOR EACH ROW EXECUTE FUNCTION ddup_drain_ended()",
	/* 6: as the SQLite file's version 14, allDown's failovers. */
	"ALTER TABLE ddup_failover ADD COLUMN all_down text"
	"  CHECK (all_down IN ('all', 'fallback'))",
	/*
	 * 7: a drain's end is the checker's clock, as its since is, not
	 * the database's now(): the statements that delete drains log
	 * them (state/pg_ops.c, state/pg_save.c), and the trigger is left
	 * with a --drain over a drain, whose end is the new since.
	 */
	"DROP TRIGGER ddup_drain_ended ON ddup_drain;"
	"CREATE OR REPLACE FUNCTION ddup_drain_ended() RETURNS trigger"
	"  LANGUAGE plpgsql AS $$ BEGIN"
	"  IF NEW.since <> OLD.since THEN"
	"    INSERT INTO ddup_drain_log VALUES (OLD.domain, OLD.endpoint,"
	"      OLD.since, least(coalesce(OLD.until, NEW.since), NEW.since));"
	"  END IF;"
	"  RETURN NULL; END $$;"
	"CREATE TRIGGER ddup_drain_ended AFTER UPDATE ON ddup_drain"
	"  FOR EACH ROW EXECUTE FUNCTION ddup_drain_ended()",
	/*
	 * 8: a steady round writes what changed, not every endpoint, as
	 * the SQLite file does.  ddup_tick counts each domain's saved
	 * rounds (saves, the latest at saved); an endpoint's row and its
	 * open streak hold their counters as of save upto, and a save
	 * whose check goes on as the last one did writes neither: the
	 * views ddup_endpoint and ddup_streak, named and shaped as the
	 * tables of version 2 were, add the saves since (an open streak's
	 * upto is NULL once it ends).  A streak's mean latency is a sample
	 * (latency_samples checks of it, state/pg_save.c).
	 */
	"ALTER TABLE ddup_endpoint RENAME TO ddup_endpoint_base;"
	"ALTER TABLE ddup_endpoint_base ADD COLUMN upto bigint NOT NULL"
	"  DEFAULT 0;"
	"ALTER TABLE ddup_streak RENAME TO ddup_streak_base;"
	"ALTER TABLE ddup_streak_base ADD COLUMN upto bigint,"
	"  ADD COLUMN latency_samples integer NOT NULL DEFAULT 1;"
	"UPDATE ddup_streak_base SET latency_samples = checks;"
	/* No tick yet: the open streaks and their endpoints as stored. */
	"UPDATE ddup_streak_base s SET upto = 0 WHERE EXISTS (SELECT 1"
	"  FROM ddup_endpoint_base e WHERE e.streak = s.id);"
	"CREATE TABLE ddup_tick (domain text PRIMARY KEY,"
	"  saves bigint NOT NULL, saved timestamptz NOT NULL)"
	"  WITH (fillfactor = 20);"
	/*
	 * Room in a page for the new version of a row rewritten in place
	 * (a heap-only update: no index entry, a small WAL record): the
	 * rounds and ticks every save, a streak whose range widens.
	 */
	"ALTER TABLE ddup_round SET (fillfactor = 20);"
	"ALTER TABLE ddup_streak_base SET (fillfactor = 70);"
	"CREATE VIEW ddup_endpoint AS"
	" SELECT e.domain, e.name, e.ip, e.url, e.priority,"
	"  (e.failures + CASE WHEN e.streak IS NOT NULL AND NOT e.last_ok"
	"   THEN coalesce(t.saves - e.upto, 0) ELSE 0 END)::integer"
	"   AS failures,"
	"  (e.passes + CASE WHEN e.streak IS NOT NULL AND e.last_ok"
	"   THEN coalesce(t.saves - e.upto, 0) ELSE 0 END)::integer AS passes,"
	"  e.removed,"
	"  CASE WHEN e.streak IS NOT NULL AND t.saves > e.upto THEN t.saved"
	"   ELSE e.last_check END AS last_check,"
	"  e.last_ok, e.last_status, e.latency_ms, e.last_result, e.streak"
	" FROM ddup_endpoint_base e LEFT JOIN ddup_tick t"
	"  ON t.domain = e.domain;"
	"CREATE VIEW ddup_streak AS"
	" SELECT s.id, s.domain, s.endpoint, s.ip, s.first,"
	"  CASE WHEN t.saves > s.upto THEN t.saved ELSE s.last END AS last,"
	"  (s.checks + coalesce(t.saves - s.upto, 0))::integer AS checks,"
	"  s.ok, s.status, s.reason, s.latency_min, s.latency_mean,"
	"  s.latency_max"
	" FROM ddup_streak_base s LEFT JOIN ddup_tick t"
	"  ON s.upto IS NOT NULL AND t.domain = s.domain;"
	/* Version 3's views, now over the two above. */
	"CREATE OR REPLACE VIEW ddup_current AS"
	" SELECT e.domain, e.name AS endpoint, e.ip, e.priority,"
	"  CASE WHEN e.last_check IS NULL THEN 'unknown'"
	"   WHEN e.removed THEN 'removed' WHEN e.last_ok THEN 'ok'"
	"   ELSE 'failing' END AS health,"
	"  coalesce(position(' ' || e.ip || ' ' IN ' ' || p.addresses || ' ')"
	"   > 0, false) AS published,"
	"  e.failures, e.passes, e.last_check, e.last_status AS status,"
	"  e.last_result, s.first AS since, s.checks AS streak_checks,"
	"  round(s.latency_mean)::integer AS latency_mean"
	" FROM ddup_endpoint e LEFT JOIN ddup_streak s ON s.id = e.streak"
	" LEFT JOIN ddup_published p ON p.domain = e.domain"
	"  AND p.type = CASE WHEN e.ip LIKE '%:%' THEN 'AAAA'"
	"   WHEN e.ip ~ '[^0-9.]' THEN 'CNAME' ELSE 'A' END;"
	"CREATE OR REPLACE VIEW ddup_failures AS"
	" SELECT s.domain, s.endpoint, s.ip, s.first, s.last, s.checks,"
	"  s.status, s.reason, round(s.latency_mean)::integer AS latency_mean,"
	"  EXISTS (SELECT 1 FROM ddup_endpoint e WHERE e.streak = s.id) AS open"
	" FROM ddup_streak s WHERE NOT s.ok ORDER BY s.first DESC, s.id DESC;"
	"CREATE OR REPLACE VIEW ddup_uptime_24h AS"
	" WITH m AS (SELECT value::timestamptz AS now FROM ddup_meta"
	"  WHERE key = 'last_run'),"
	" share AS (SELECT s.domain, s.endpoint, s.ok,"
	"  CASE WHEN s.last <= s.first THEN s.checks::float8"
	"  ELSE s.checks * extract(epoch FROM least(s.last, m.now)"
	"   - greatest(s.first, m.now - interval '1 day'))::float8"
	"   / extract(epoch FROM s.last - s.first)::float8 END AS n"
	"  FROM ddup_streak s, m WHERE s.last >= m.now - interval '1 day')"
	" SELECT domain, endpoint, round(sum(n))::bigint AS checks,"
	"  round(coalesce(sum(n) FILTER (WHERE ok), 0))::bigint AS passed,"
	"  round((100 * coalesce(sum(n) FILTER (WHERE ok), 0)"
	"   / nullif(sum(n), 0))::numeric, 3) AS uptime_pct"
	" FROM share GROUP BY domain, endpoint",
};

const int pg_schema_version =
    (int)(sizeof(pg_migrations) / sizeof(pg_migrations[0]));
