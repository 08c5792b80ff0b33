/*
 * What a run on PostgreSQL saves (state/pg.h, pgd_save_queue()):
 * the statements of the domains it decided, appended to the caller's
 * batch inside the caller's transaction.  The endpoints go in two
 * statements whatever their number (columns of arrays through
 * unnest()); each domain costs a statement or a few.
 *
 * The rules are the SQLite backend's (state/sqlite.c, state/sqlite_data.c):
 * an endpoint's check extends its open streak when ip, url, result,
 * status and reason are the same, else begins a new one; a check the
 * run did not count (its controlUrl failed, or the round was void)
 * leaves the counters as they were and ends the open streak, so the
 * next check begins a new one; what is no longer configured is
 * dropped (history stays); streaks older than `history` go, their
 * checks added to the counters; changes go after a year.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "check.h"
#include "config.h"
#include "outbox.h"
#include "outcome.h"
#include "publish.h"
#include "state.h"
#include "state/pg.h"
#include "util.h"

#define PG_TS(p)	"to_timestamp(" p "::bigint / 1000.0)"
/* 0 ("never") as NULL. */
#define PG_TS0(p)	"CASE WHEN " p "::bigint = 0 THEN NULL ELSE " \
			PG_TS(p) " END"

#define CHANGES_KEEP_MS	(365LL * 24 * 3600 * 1000)

/*
 * An open streak s ended as of the domain's last save (t, its
 * ddup_tick row): its checks and last as the view ddup_streak shows
 * them (state/pg_schema.c, version 8), written down.
 */
#define PG_FREEZE(s, sv, sd) \
	"checks = " s ".checks + coalesce(" sv " - " s ".upto, 0)," \
	" last = CASE WHEN " sv " > " s ".upto THEN " sd " ELSE " s ".last" \
	" END, upto = NULL"

/*
 * Endpoints whose check counted: their rows and streaks in one go.  A
 * check that goes on with the open streak, counters as the view
 * derives them, writes no row (same): the endpoint and its streak are
 * as of an earlier save, and this save's tick (written last) counts
 * it.  The mean latency is a sample, as the SQLite file's: the
 * streak's first check, then one save in LAT_SAMPLE (16), staggered by
 * blocks of 64 streak ids so that a save's samples share pages; the
 * range takes every check, written only when it widens.
 */
static const char sql_counted[] =
	"WITH i AS (SELECT * FROM unnest($2::text[], $3::text[], $4::text[],"
	"  $5::text[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bool[],"
	"  $10::bool[], $11::bigint[], $12::text[], $13::bigint[])"
	"  AS t(domain, name, ip, url, priority, failures, passes, removed,"
	"  ok, status, reason, lat)),"
	" j AS (SELECT i.*, e.streak AS cur, coalesce(t.saves, 0) AS sv,"
	"  t.saved AS sd, CASE WHEN s.upto IS NOT NULL AND e.ip = i.ip"
	"  AND e.url = i.url AND s.ip = i.ip AND s.ok = i.ok"
	"  AND s.status IS NOT DISTINCT FROM i.status AND s.reason = i.reason"
	"  THEN s.id END AS old,"
	"  e.priority AS e_prio, e.removed AS e_removed, e.last_ok AS e_ok,"
	"  e.last_status AS e_status, e.last_result AS e_result,"
	"  e.failures AS e_fail, e.passes AS e_pass, e.upto AS e_upto"
	"  FROM i LEFT JOIN ddup_endpoint_base e"
	"  ON e.domain = i.domain AND e.name = i.name"
	"  LEFT JOIN ddup_streak_base s ON s.id = e.streak"
	"  LEFT JOIN ddup_tick t ON t.domain = i.domain),"
	" c AS (SELECT j.*, (old IS NOT NULL AND e_prio = priority"
	"  AND e_removed = removed AND e_ok = ok"
	"  AND e_status IS NOT DISTINCT FROM status AND e_result = reason"
	"  AND failures = e_fail + CASE WHEN e_ok THEN 0"
	"   ELSE sv + 1 - e_upto END"
	"  AND passes = e_pass + CASE WHEN e_ok THEN sv + 1 - e_upto"
	"   ELSE 0 END) IS TRUE AS same FROM j),"
	" x AS (UPDATE ddup_streak_base s"
	"  SET latency_min = least(s.latency_min, c.lat),"
	"  latency_max = greatest(s.latency_max, c.lat),"
	"  latency_mean = CASE WHEN (c.sv + 1 + s.id / 64) % 16 = 0"
	"   THEN s.latency_mean + (c.lat - s.latency_mean)"
	"   / (s.latency_samples + 1) ELSE s.latency_mean END,"
	"  latency_samples = s.latency_samples"
	"   + CASE WHEN (c.sv + 1 + s.id / 64) % 16 = 0 THEN 1 ELSE 0 END"
	"  FROM c WHERE s.id = c.old AND (c.lat < s.latency_min"
	"  OR c.lat > s.latency_max OR (c.sv + 1 + s.id / 64) % 16 = 0)),"
	" f AS (UPDATE ddup_streak_base s SET " PG_FREEZE("s", "c.sv", "c.sd")
	"  FROM c WHERE s.id = c.cur AND c.old IS NULL"
	"  AND s.upto IS NOT NULL),"
	" n AS (INSERT INTO ddup_streak_base (domain, endpoint, ip, first,"
	"  last, checks, ok, status, reason, latency_min, latency_mean,"
	"  latency_max, latency_samples, upto)"
	"  SELECT domain, name, ip, " PG_TS("$1") ", " PG_TS("$1") ", 1, ok,"
	"  status, reason, lat, lat, lat, 1, sv + 1 FROM c WHERE old IS NULL"
	"  RETURNING id, domain, endpoint)"
	" INSERT INTO ddup_endpoint_base (domain, name, ip, url, priority,"
	"  failures, passes, removed, last_check, last_ok, last_status,"
	"  latency_ms, last_result, streak, upto)"
	" SELECT c.domain, c.name, c.ip, c.url, c.priority, c.failures,"
	"  c.passes, c.removed, " PG_TS("$1") ", c.ok, c.status, c.lat,"
	"  c.reason, coalesce(c.old, n.id), c.sv + 1"
	" FROM c LEFT JOIN n ON n.domain = c.domain AND n.endpoint = c.name"
	" WHERE NOT c.same"
	" ON CONFLICT (domain, name) DO UPDATE SET ip = excluded.ip,"
	"  url = excluded.url, priority = excluded.priority,"
	"  failures = excluded.failures, passes = excluded.passes,"
	"  removed = excluded.removed, last_check = excluded.last_check,"
	"  last_ok = excluded.last_ok, last_status = excluded.last_status,"
	"  latency_ms = excluded.latency_ms,"
	"  last_result = excluded.last_result, streak = excluded.streak,"
	"  upto = excluded.upto";

/*
 * recheck: one of this run's failed checks before the last, the k-th
 * of each endpoint that had k, all in one go and before sql_counted:
 * it extends the open streak or begins another, which the endpoint
 * then points at (it has a row: only a stored endpoint is repeated).
 * Either is written as of the last save (upto), so that this save's
 * tick counts the check of sql_counted that goes on with it.
 */
static const char sql_repeat[] =
	"WITH i AS (SELECT * FROM unnest($2::text[], $3::text[], $4::text[],"
	"  $5::bigint[], $6::text[], $7::bigint[])"
	"  AS t(domain, name, ip, status, reason, lat)),"
	" c AS (SELECT i.*, e.streak AS cur, e.name IS NOT NULL AS stored,"
	"  coalesce(t.saves, 0) AS sv, t.saved AS sd,"
	"  CASE WHEN s.upto IS NOT NULL AND e.ip = i.ip AND s.ip = i.ip"
	"  AND NOT s.ok AND s.status IS NOT DISTINCT FROM i.status"
	"  AND s.reason = i.reason THEN s.id END AS old"
	"  FROM i LEFT JOIN ddup_endpoint_base e"
	"  ON e.domain = i.domain AND e.name = i.name"
	"  LEFT JOIN ddup_streak_base s ON s.id = e.streak"
	"  LEFT JOIN ddup_tick t ON t.domain = i.domain),"
	" x AS (UPDATE ddup_streak_base s SET last = " PG_TS("$1") ","
	"  checks = s.checks + (c.sv - s.upto) + 1, upto = c.sv,"
	"  latency_min = least(s.latency_min, c.lat),"
	"  latency_max = greatest(s.latency_max, c.lat),"
	"  latency_mean = s.latency_mean + (c.lat - s.latency_mean)"
	"  / (s.latency_samples + 1),"
	"  latency_samples = s.latency_samples + 1"
	"  FROM c WHERE s.id = c.old),"
	" f AS (UPDATE ddup_streak_base s SET " PG_FREEZE("s", "c.sv", "c.sd")
	"  FROM c WHERE s.id = c.cur AND c.old IS NULL"
	"  AND s.upto IS NOT NULL),"
	" n AS (INSERT INTO ddup_streak_base (domain, endpoint, ip, first,"
	"  last, checks, ok, status, reason, latency_min, latency_mean,"
	"  latency_max, latency_samples, upto)"
	"  SELECT domain, name, ip, " PG_TS("$1") ", " PG_TS("$1") ", 1, false,"
	"  status, reason, lat, lat, lat, 1, CASE WHEN stored THEN sv END"
	"  FROM c WHERE old IS NULL"
	"  RETURNING id, domain, endpoint)"
	" UPDATE ddup_endpoint_base e SET streak = n.id FROM n"
	" WHERE e.domain = n.domain AND e.name = n.endpoint";

/*
 * Endpoints whose check did not count: the counters as they were, the
 * open streak ended (the endpoint's last result stays its row's, its
 * latency the streak's mean, as it was shown).
 */
static const char sql_uncounted[] =
	"WITH u AS (SELECT * FROM unnest($2::text[], $3::text[],"
	"  $4::bigint[], $5::bigint[], $6::bigint[], $7::bool[])"
	"  AS u(domain, name, priority, failures, passes, removed)),"
	" f AS (UPDATE ddup_streak_base s SET "
	PG_FREEZE("s", "t.saves", "t.saved")
	"  FROM u JOIN ddup_endpoint_base e"
	"  ON e.domain = u.domain AND e.name = u.name"
	"  LEFT JOIN ddup_tick t ON t.domain = u.domain"
	"  WHERE s.id = e.streak AND s.upto IS NOT NULL"
	"  RETURNING s.id, round(s.latency_mean)::integer AS lat)"
	" UPDATE ddup_endpoint_base e SET priority = u.priority,"
	" failures = u.failures, passes = u.passes, removed = u.removed,"
	" streak = NULL, last_check = " PG_TS("$1") ","
	" latency_ms = coalesce((SELECT f.lat FROM f WHERE f.id = e.streak),"
	"  e.latency_ms),"
	" upto = coalesce((SELECT t.saves FROM ddup_tick t"
	"  WHERE t.domain = u.domain), 0) + 1"
	" FROM u WHERE e.domain = u.domain AND e.name = u.name";

/* The decided domains' saves: last, each endpoint's check counted in. */
static const char sql_tick[] =
	"INSERT INTO ddup_tick (domain, saves, saved)"
	" SELECT d, 1, " PG_TS("$1") " FROM unnest($2::text[]) AS d"
	" ON CONFLICT (domain) DO UPDATE SET saves = ddup_tick.saves + 1,"
	" saved = excluded.saved";

static const char sql_domain[] =
	"INSERT INTO ddup_domain AS d (name, provider, ttl, tier, tier_rank,"
	" tier_location, last_change, last_error, unhealthy, unsure)"
	" VALUES ($1, $2, $3, $4, $5, $6, " PG_TS0("$7") ", $8, $9, $10)"
	" ON CONFLICT (name) DO UPDATE SET provider = excluded.provider,"
	" ttl = excluded.ttl, tier = excluded.tier,"
	" tier_rank = excluded.tier_rank,"
	" tier_location = excluded.tier_location,"
	" last_change = excluded.last_change, last_error = excluded.last_error,"
	" unhealthy = excluded.unhealthy, unsure = excluded.unsure"
	/* An unchanged row is not rewritten. */
	" WHERE (d.provider, d.ttl, d.tier, d.tier_rank, d.tier_location,"
	" d.last_change, d.last_error, d.unhealthy, d.unsure) IS DISTINCT FROM"
	" (excluded.provider, excluded.ttl, excluded.tier, excluded.tier_rank,"
	" excluded.tier_location, excluded.last_change, excluded.last_error,"
	" excluded.unhealthy, excluded.unsure)";

static const char sql_failover[] =
	"INSERT INTO ddup_failover (domain, since, reason, all_down)"
	" VALUES ($1, " PG_TS("$2") ", $3, $4) ON CONFLICT (domain)"
	" DO UPDATE SET all_down = excluded.all_down";

static const char sql_published[] =
	"INSERT INTO ddup_published AS p (domain, type, ttl, addresses,"
	" proxied) VALUES ($1, $2, $3, $4, $5)"
	" ON CONFLICT (domain, type) DO UPDATE SET ttl = excluded.ttl,"
	" addresses = excluded.addresses, proxied = excluded.proxied"
	" WHERE (p.ttl, p.addresses, p.proxied) IS DISTINCT FROM"
	" (excluded.ttl, excluded.addresses, excluded.proxied)";

static const char sql_change[] =
	"INSERT INTO ddup_change (time, domain, type, ttl, old, new, tier,"
	" tier_rank, tier_location, ok, error)"
	" VALUES (" PG_TS("$1") ", $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

static const char sql_count[] =
	"INSERT INTO ddup_counter (domain, endpoint, name, value)"
	" VALUES ($1, '', $2, 1) ON CONFLICT (domain, endpoint, name)"
	" DO UPDATE SET value = ddup_counter.value + excluded.value";

static const char sql_event[] =
	"WITH e AS (INSERT INTO ddup_event (time, domain, event, endpoint,"
	" body) VALUES (" PG_TS("$1") ", $2, $3, $4, $5) RETURNING id)"
	" INSERT INTO ddup_delivery (event, notifier, attempts)"
	" SELECT e.id, n, 0 FROM e, unnest($6::text[]) AS n";

/* The prunes, with $1 and $2 the configured domains and endpoint names. */
static const char *const sql_gone[] = {
	/* Before this save's tick: the open streak ends at the last. */
	"WITH g AS (DELETE FROM ddup_endpoint_base e WHERE NOT EXISTS"
	" (SELECT 1 FROM unnest($1::text[], $2::text[]) AS c(domain, name)"
	" WHERE c.domain = e.domain AND c.name = e.name)"
	" RETURNING e.domain, e.streak)"
	" UPDATE ddup_streak_base s SET " PG_FREEZE("s", "t.saves", "t.saved")
	" FROM g LEFT JOIN ddup_tick t ON t.domain = g.domain"
	" WHERE s.id = g.streak AND s.upto IS NOT NULL",
	"DELETE FROM ddup_vote v WHERE NOT EXISTS (SELECT 1 FROM"
	" unnest($1::text[], $2::text[]) AS c(domain, name)"
	" WHERE c.domain = v.domain AND c.name = v.endpoint)",
	"DELETE FROM ddup_cert x WHERE NOT EXISTS (SELECT 1 FROM"
	" unnest($1::text[], $2::text[]) AS c(domain, name)"
	" WHERE c.domain = x.domain AND c.name = x.endpoint)",
};

/* The certificates whose expiry changed (few runs have any). */
static const char sql_certs[] =
	"INSERT INTO ddup_cert (domain, endpoint, expires)"
	" SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])"
	" ON CONFLICT (domain, endpoint) DO UPDATE SET expires = excluded.expires";

/* And with $1 the configured domains (and $2..$4 their managed types). */
static const struct {
	const char	*sql;
	int		 nparams;
} sql_gone_dom[] = {
	{ "DELETE FROM ddup_domain WHERE name <> ALL ($1::text[])", 1 },
	{ "DELETE FROM ddup_round WHERE domain <> ALL ($1::text[])", 1 },
	{ "DELETE FROM ddup_tick WHERE domain <> ALL ($1::text[])", 1 },
	{ "DELETE FROM ddup_failback WHERE domain <> ALL ($1::text[])", 1 },
	{ "DELETE FROM ddup_failover WHERE domain <> ALL ($1::text[])", 1 },
	{ "DELETE FROM ddup_published p WHERE NOT EXISTS (SELECT 1 FROM"
	  " unnest($1::text[], $2::bool[], $3::bool[], $4::bool[])"
	  " AS c(name, has4, has6, hascname) WHERE c.name = p.domain"
	  " AND ((p.type = 'A' AND c.has4) OR (p.type = 'AAAA' AND c.has6)"
	  " OR (p.type = 'CNAME' AND c.hascname)))", 4 },
};

/*
 * The drains of the endpoints no longer configured ($1, $2) and those
 * whose time ran out by $3, the run's clock: logged as ended at their
 * own expiry, or at $3 (the database's now() is not the checker's).
 */
static const char sql_drains_gone[] =
	"WITH gone AS (DELETE FROM ddup_drain d WHERE (d.until IS NOT NULL"
	" AND d.until <= " PG_TS("$3") ") OR NOT EXISTS (SELECT 1 FROM"
	" unnest($1::text[], $2::text[]) AS c(domain, name)"
	" WHERE c.domain = d.domain AND c.name = d.endpoint)"
	" RETURNING domain, endpoint, since, until)"
	" INSERT INTO ddup_drain_log SELECT domain, endpoint, since,"
	" least(coalesce(until, " PG_TS("$3") "), " PG_TS("$3") ") FROM gone";

/* Streaks older than `history` ($1), unless open, into the counters. */
static const char sql_prune_streaks[] =
	"WITH gone AS (DELETE FROM ddup_streak_base s WHERE s.last < "
	PG_TS("$1") " AND s.upto IS NULL AND NOT EXISTS (SELECT 1 FROM"
	" ddup_endpoint_base e WHERE e.streak = s.id)"
	" RETURNING domain, endpoint, ok, checks)"
	" INSERT INTO ddup_counter (domain, endpoint, name, value)"
	" SELECT domain, endpoint, CASE WHEN ok THEN 'checks_pass'"
	" ELSE 'checks_fail' END, sum(checks) FROM gone GROUP BY 1, 2, 3"
	" ON CONFLICT (domain, endpoint, name)"
	" DO UPDATE SET value = ddup_counter.value + excluded.value";

/* The outbox, as state_prune_events(): $1 now, $2 the [notify] names. */
static const char sql_orphan_deliveries[] =
	"UPDATE ddup_delivery SET given_up = " PG_TS("$1") ","
	" last_error = 'no [notify] section of this name any more'"
	" WHERE delivered IS NULL AND given_up IS NULL"
	" AND notifier <> ALL ($2::text[])";
static const char sql_prune_deliveries[] =
	"DELETE FROM ddup_delivery WHERE (delivered IS NOT NULL"
	" OR given_up IS NOT NULL) AND event IN (SELECT id FROM ddup_event"
	" WHERE time < " PG_TS("$1") ")";
static const char sql_prune_events[] =
	"DELETE FROM ddup_event e WHERE NOT EXISTS (SELECT 1 FROM"
	" ddup_delivery d WHERE d.event = e.id)";

/* The run's number and time, ISO-8601 UTC as in the SQLite file. */
static const char sql_meta[] =
	"INSERT INTO ddup_meta (key, value) VALUES ('runs', '1'),"
	" ('last_run', to_char(" PG_TS("$1") " AT TIME ZONE 'UTC',"
	" 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'))"
	" ON CONFLICT (key) DO UPDATE SET value = CASE WHEN"
	" excluded.key = 'runs' THEN (ddup_meta.value::bigint + 1)::text"
	" ELSE excluded.value END";

/* Columns of the endpoints' two statements. */
enum { C_DOMAIN, C_NAME, C_IP, C_URL, C_PRIO, C_FAIL, C_PASS, C_REMOVED,
	C_OK, C_STATUS, C_REASON, C_LAT, C_MAX };
enum { U_DOMAIN, U_NAME, U_PRIO, U_FAIL, U_PASS, U_REMOVED, U_MAX };
enum { R_DOMAIN, R_NAME, R_IP, R_STATUS, R_REASON, R_LAT, R_MAX };

/* The k-th failed checks before the last (recheck), of every endpoint. */
struct rep_cols {
	struct pg_arr	 c[R_MAX];
};

struct ep_cols {
	struct pg_arr	 c[C_MAX];	/* counted */
	struct pg_arr	 u[U_MAX];	/* not counted */
	struct rep_cols	*r;		/* r[k]: each endpoint's k-th */
	size_t		 nr;
};

/* e's failed checks before its last, earliest first, into a->r. */
static void
add_repeats(struct ep_cols *a, const struct outcome_domain *od,
    const struct outcome_ep *e)
{
	const struct check_res	*b;
	struct pg_arr		*c;
	size_t			 n = 0, k;
	char			 reason[160];

	for (b = e->check.before; b != NULL; b = b->before)
		n++;
	if (n > a->nr) {
		a->r = xrealloc(a->r, n * sizeof(*a->r));
		memset(&a->r[a->nr], 0, (n - a->nr) * sizeof(*a->r));
		a->nr = n;
	}
	for (b = e->check.before, k = n; b != NULL; b = b->before) {
		c = a->r[--k].c;
		text_printable_copy(reason, sizeof(reason), b->reason);
		pga_add(&c[R_DOMAIN], od->cfg->name);
		pga_add(&c[R_NAME], e->cfg->name);
		pga_add(&c[R_IP], endpoint_target(e->cfg));
		if (b->status != 0)
			pga_lld(&c[R_STATUS], b->status);
		else
			pga_add(&c[R_STATUS], NULL);
		pga_add(&c[R_REASON], reason);
		pga_lld(&c[R_LAT], b->latency_ms);
	}
}

static void
add_endpoint(struct ep_cols *a, const struct outcome_domain *od,
    const struct outcome_ep *e)
{
	const struct endpoint_cfg *cfg = e->cfg;
	char reason[160];

	/* A failure the run blames on its own network is not the endpoint's. */
	if (!e->check.counted && e->check.done) {
		if (!e->has_state)
			return;
		pga_add(&a->u[U_DOMAIN], od->cfg->name);
		pga_add(&a->u[U_NAME], cfg->name);
		pga_lld(&a->u[U_PRIO], cfg->priority);
		pga_lld(&a->u[U_FAIL], e->failures_before);
		pga_lld(&a->u[U_PASS], e->passes_before);
		pga_add(&a->u[U_REMOVED], pg_bool(e->removed_before));
		return;
	}
	add_repeats(a, od, e);
	text_printable_copy(reason, sizeof(reason), e->check.reason);
	pga_add(&a->c[C_DOMAIN], od->cfg->name);
	pga_add(&a->c[C_NAME], cfg->name);
	pga_add(&a->c[C_IP], endpoint_target(cfg));
	pga_add(&a->c[C_URL], endpoint_check(cfg));
	pga_lld(&a->c[C_PRIO], cfg->priority);
	pga_lld(&a->c[C_FAIL], e->failures);
	pga_lld(&a->c[C_PASS], e->passes);
	pga_add(&a->c[C_REMOVED], pg_bool(e->removed));
	pga_add(&a->c[C_OK], pg_bool(e->check.ok));
	if (e->check.status != 0)
		pga_lld(&a->c[C_STATUS], e->check.status);
	else
		pga_add(&a->c[C_STATUS], NULL);
	pga_add(&a->c[C_REASON], reason);
	pga_lld(&a->c[C_LAT], e->check.latency_ms);
}

static void
queue_certs(struct pgq *q, const struct outcome *o,
    const unsigned char *decided)
{
	struct pg_arr a[3];
	const char *p[3];
	size_t i, j;

	memset(a, 0, sizeof(a));
	for (i = 0; i < outcome_ndomains(o); i++) {
		const struct outcome_domain *od = outcome_domain(o, i);

		for (j = 0; decided[i] && j < od->neps; j++) {
			const struct outcome_ep *e = &od->eps[j];

			if (e->cert_expires == e->cert_expires_before ||
			    e->cert_expires == 0)
				continue;
			pga_add(&a[0], od->cfg->name);
			pga_add(&a[1], e->cfg->name);
			pga_lld(&a[2], e->cert_expires);
		}
	}
	if (a[0].n > 0) {
		for (i = 0; i < 3; i++)
			p[i] = pga_text(&a[i]);
		pgq_add(q, "cannot save the certificates", sql_certs, 3, p);
	}
	for (i = 0; i < 3; i++)
		pga_free(&a[i]);
}

static void
queue_endpoints(struct pgq *q, struct ep_cols *a, long long now)
{
	const char *p[C_MAX + 1];
	char buf[32];
	size_t k;
	int i;

	p[0] = pg_lld(buf, now);
	for (k = 0; k < a->nr; k++) {
		for (i = 0; i < R_MAX; i++)
			p[i + 1] = pga_text(&a->r[k].c[i]);
		pgq_add(q, "cannot save the endpoints", sql_repeat, R_MAX + 1,
		    p);
		for (i = 0; i < R_MAX; i++)
			pga_free(&a->r[k].c[i]);
	}
	free(a->r);
	a->r = NULL;
	a->nr = 0;
	if (a->c[C_DOMAIN].n > 0) {
		for (i = 0; i < C_MAX; i++)
			p[i + 1] = pga_text(&a->c[i]);
		pgq_add(q, "cannot save the endpoints", sql_counted, C_MAX + 1,
		    p);
	}
	if (a->u[U_DOMAIN].n > 0) {
		for (i = 0; i < U_MAX; i++)
			p[i + 1] = pga_text(&a->u[i]);
		pgq_add(q, "cannot save the endpoints", sql_uncounted,
		    U_MAX + 1, p);
	}
	for (i = 0; i < C_MAX; i++)
		pga_free(&a->c[i]);
	for (i = 0; i < U_MAX; i++)
		pga_free(&a->u[i]);
}

static void
queue_domain_row(struct pgq *q, const struct outcome_domain *od)
{
	const char *p[10];
	char b[4][32], err[512];
	/* The fallback addresses are no tier's (ddup_failover says so). */
	int has_tier = od->has_tier && !od->tier.fallback;

	p[0] = od->cfg->name;
	p[1] = od->cfg->provider->name;
	p[2] = pg_lld(b[0], od->cfg->pol.ttl);
	p[3] = has_tier ? pg_lld(b[1], od->tier.priority) : NULL;
	p[4] = has_tier && od->tier.located && od->tier.rank >= 0 ?
	    pg_lld(b[2], od->tier.rank) : NULL;
	p[5] = has_tier && od->tier.location != NULL &&
	    od->tier.location[0] != '\0' ? od->tier.location : NULL;
	p[6] = pg_lld(b[3], od->last_change);
	p[7] = NULL;
	if (od->last_error != NULL) {
		text_printable_copy(err, sizeof(err), od->last_error);
		if (err[0] != '\0')
			p[7] = err;
	}
	p[8] = pg_bool(od->unhealthy);
	p[9] = pg_bool(od->unsure);
	pgq_add(q, "cannot save the domain", sql_domain, 10, p);
}

static void
queue_failover(struct pgq *q, const struct outcome_domain *od)
{
	const char *p[4];
	char b[32], why[ST_ERROR_MAX];

	p[0] = od->cfg->name;
	if (od->failover_since == 0) {
		pgq_add(q, "cannot save the failover", "DELETE FROM"
		    " ddup_failover WHERE domain = $1", 1, p);
		return;
	}
	p[1] = pg_lld(b, od->failover_since);
	p[2] = od->failover_reason != NULL ? text_printable_copy(why,
	    sizeof(why), od->failover_reason) : NULL;
	p[3] = st_fail_open_str(od->fail_open);
	pgq_add(q, "cannot save the failover", sql_failover, 4, p);
}

static void
queue_domain(struct pgq *q, long long now, const struct outcome_domain *od)
{
	const struct publication *p = od->pub;
	const char *v[11];
	char b[5][32], *list;
	size_t k;

	queue_domain_row(q, od);
	/* Written as it begins or ends: a steady run writes nothing. */
	if (od->failover_since != od->failover_since_before ||
	    od->fail_open != od->fail_open_before)
		queue_failover(q, od);
	if (p != NULL && od->synced)
		for (k = 0; k < RR_NTYPES; k++) {
			if (!p->managed[k])
				continue;
			list = rrset_join(&p->want[k]);
			v[0] = od->cfg->name;
			v[1] = rrtype_str(p->want[k].type);
			v[2] = pg_lld(b[0], p->want[k].ttl);
			v[3] = list;
			v[4] = pg_bool(p->want[k].proxied);
			pgq_add(q, "cannot save the published set",
			    sql_published, 5, v);
			free(list);
		}
	/* For metricsFile: a counter that only grows, written on events. */
	if (od->changed || od->failed) {
		v[0] = od->cfg->name;
		v[1] = od->changed ? "dns_ok" : "dns_failed";
		pgq_add(q, "cannot count", sql_count, 2, v);
	}
	/* Done once DNS holds the best tier. */
	if (od->failback_now && od->synced) {
		v[0] = od->cfg->name;
		pgq_add(q, "cannot clear the failback", "DELETE FROM"
		    " ddup_failback WHERE domain = $1", 1, v);
	}
	for (k = 0; p != NULL && k < p->nchanges; k++) {
		v[0] = pg_lld(b[0], now);
		v[1] = od->cfg->name;
		v[2] = rrtype_str(p->changes[k].type);
		v[3] = pg_lld(b[1], od->cfg->pol.ttl);
		v[4] = p->changes[k].old != NULL ? p->changes[k].old : "";
		v[5] = p->changes[k].new != NULL ? p->changes[k].new : "";
		v[6] = p->tier.priority >= 0 ? pg_lld(b[2],
		    p->tier.priority) : NULL;
		v[7] = p->tier.priority >= 0 && p->tier.located &&
		    p->tier.rank >= 0 ? pg_lld(b[3], p->tier.rank) : NULL;
		v[8] = p->tier.priority >= 0 ? p->tier.location : NULL;
		v[9] = pg_bool(!p->failed);
		v[10] = p->failed ? p->error : NULL;
		pgq_add(q, "cannot save the change history", sql_change, 11,
		    v);
	}
}

/* The events of the decided domains (outbox.c builds them). */
struct event_arg {
	struct pgq			*q;
	const struct outcome		*o;
	const unsigned char		*decided;
};

static int
queue_event(void *arg, const struct outcome_event *ev, const char *body,
    const char *const *names, size_t n)
{
	struct event_arg *a = arg;
	struct pg_arr to;
	const char *p[6];
	char buf[32];
	size_t i;

	for (i = 0; i < outcome_ndomains(a->o); i++)
		if (outcome_domain(a->o, i) == ev->domain)
			break;
	if (i == outcome_ndomains(a->o) || !a->decided[i] || n == 0)
		return 0;
	memset(&to, 0, sizeof(to));
	for (i = 0; i < n; i++)
		pga_add(&to, names[i]);
	p[0] = pg_lld(buf, ev->time);
	p[1] = ev->domain->cfg->name;
	p[2] = event_type_str(ev->kind);
	p[3] = ev->ep != NULL ? ev->ep->cfg->name : NULL;
	p[4] = body;
	p[5] = pga_text(&to);
	pgq_add(a->q, "cannot store an event", sql_event, 6, p);
	pga_free(&to);
	return 0;
}

/* Drops what is no longer configured, and what is too old. */
static void
queue_prune(struct pgq *q, const struct config *c, long long now)
{
	struct pg_arr dom, ep_dom, ep_name, has[3], notif;
	const char *p[4];
	char buf[32];
	size_t i, j;

	memset(&dom, 0, sizeof(dom));
	memset(&ep_dom, 0, sizeof(ep_dom));
	memset(&ep_name, 0, sizeof(ep_name));
	memset(has, 0, sizeof(has));
	memset(&notif, 0, sizeof(notif));
	for (i = 0; i < c->ndomains; i++) {
		const struct domain_cfg *d = &c->domains[i];

		pga_add(&dom, d->name);
		pga_add(&has[0], pg_bool(d->has4));
		pga_add(&has[1], pg_bool(d->has6));
		pga_add(&has[2], pg_bool(d->hascname));
		for (j = 0; j < d->neps; j++) {
			pga_add(&ep_dom, d->name);
			pga_add(&ep_name, d->eps[j].name);
		}
	}
	p[0] = pga_text(&ep_dom);
	p[1] = pga_text(&ep_name);
	for (i = 0; i < sizeof(sql_gone) / sizeof(sql_gone[0]); i++)
		pgq_add(q, "cannot drop what is no longer configured",
		    sql_gone[i], 2, p);
	p[2] = pg_lld(buf, now);
	pgq_add(q, "cannot prune the drains", sql_drains_gone, 3, p);
	p[0] = pga_text(&dom);
	for (i = 0; i < 3; i++)
		p[i + 1] = pga_text(&has[i]);
	for (i = 0; i < sizeof(sql_gone_dom) / sizeof(sql_gone_dom[0]); i++)
		pgq_add(q, "cannot drop what is no longer configured",
		    sql_gone_dom[i].sql, sql_gone_dom[i].nparams, p);
	/* Before the epoch means "keep everything". */
	if (now - c->history_ms > 0) {
		p[0] = pg_lld(buf, now - c->history_ms);
		pgq_add(q, "cannot prune the check history",
		    sql_prune_streaks, 1, p);
		/* Ended drains are history of the same kind: kept as long. */
		pgq_add(q, "cannot prune the drain history", "DELETE FROM"
		    " ddup_drain_log WHERE until < " PG_TS("$1"), 1, p);
	}
	if (now - CHANGES_KEEP_MS > 0) {
		p[0] = pg_lld(buf, now - CHANGES_KEEP_MS);
		pgq_add(q, "cannot prune the change history", "DELETE FROM"
		    " ddup_change WHERE time < " PG_TS("$1"), 1, p);
	}
	for (i = 0; i < c->nnotifiers; i++)
		pga_add(&notif, c->notifiers[i].name);
	p[0] = pg_lld(buf, now);
	p[1] = pga_text(&notif);
	pgq_add(q, "cannot prune events", sql_orphan_deliveries, 2, p);
	p[0] = pg_lld(buf, now - c->history_ms);
	pgq_add(q, "cannot prune events", sql_prune_deliveries, 1, p);
	pgq_add(q, "cannot prune events", sql_prune_events, 0, NULL);
	pga_free(&dom);
	pga_free(&ep_dom);
	pga_free(&ep_name);
	for (i = 0; i < 3; i++)
		pga_free(&has[i]);
	pga_free(&notif);
}

static void
queue_control(struct pg_state *st, struct pgq *q, const struct config *c,
    const struct outcome *o)
{
	const struct outcome_control *ctl = outcome_control(o);
	const char *p[3], *checker;
	char buf[32], result[160];

	checker = st->checker != NULL ? st->checker : c->checker;
	if (ctl->url == NULL || checker == NULL)
		return;
	p[0] = checker;
	if (ctl->since == 0) {
		pgq_add(q, "cannot save the controlUrl's state", "DELETE FROM"
		    " ddup_control WHERE checker = $1", 1, p);
		return;
	}
	text_printable_copy(result, sizeof(result), ctl->result != NULL ?
	    ctl->result : "");
	p[1] = pg_lld(buf, ctl->since);
	p[2] = result;
	pgq_add(q, "cannot save the controlUrl's state", "INSERT INTO"
	    " ddup_control (checker, since, result) VALUES ($1, " PG_TS("$2")
	    ", $3) ON CONFLICT (checker) DO UPDATE SET since = excluded.since,"
	    " result = excluded.result", 3, p);
}

void
pgd_save_queue(struct pg_state *st, struct pgq *q, const struct config *c,
    const struct outcome *o, const unsigned char *decided)
{
	struct event_arg ea;
	struct ep_cols a;
	struct pg_arr dom;
	const char *p[2];
	char buf[32];
	long long now = outcome_time(o);
	size_t i, j, n = outcome_ndomains(o);
	int any = 0;

	memset(&a, 0, sizeof(a));
	memset(&dom, 0, sizeof(dom));
	for (i = 0; i < n; i++) {
		const struct outcome_domain *od = outcome_domain(o, i);

		if (!decided[i])
			continue;
		any = 1;
		pga_add(&dom, od->cfg->name);
		for (j = 0; j < od->neps; j++)
			add_endpoint(&a, od, &od->eps[j]);
	}
	queue_endpoints(q, &a, now);
	queue_certs(q, o, decided);
	for (i = 0; i < n; i++)
		if (decided[i])
			queue_domain(q, now, outcome_domain(o, i));
	/* Before anything is sent: none is lost to a run killed then. */
	ea.q = q;
	ea.o = o;
	ea.decided = decided;
	(void)outbox_each(o, c, queue_event, &ea);
	/*
	 * A run that decided nothing leaves the pruning to one that did:
	 * the checkers of a slot would otherwise all queue on its rows.
	 */
	if (any)
		queue_prune(q, c, now);
	queue_control(st, q, c, o);
	/* Last: the rows every run writes are held the shortest. */
	p[0] = pg_lld(buf, now);
	if (any) {
		p[1] = pga_text(&dom);
		pgq_add(q, "cannot count the saves", sql_tick, 2, p);
	}
	pgq_add(q, "cannot record the run", sql_meta, 1, p);
	pga_free(&dom);
}
