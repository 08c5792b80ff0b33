/*
 * The endpoints of a PostgreSQL save (state/pg.h, pgd_save_endpoints()):
 * their rows and streaks, in three statements for each PG_EP_CHUNK of
 * them (columns of arrays through unnest()) and one more per recheck
 * repeat, all in the save's one batch.
 *
 * The rules are the SQLite backend's (state/sqlite_data.c): a check
 * extends the open streak when ip, url, result, status and reason are
 * the same, else begins a new one; a check the run did not count (its
 * controlUrl failed, or the round was void) leaves the counters as they
 * were and ends the open streak, so the next check begins a new one.
 * As the SQLite file derives a steady endpoint's counters from its runs,
 * schema 8 derives them from its domain's saves (ddup_tick, counted by
 * state/pg_save.c after these statements): a check that goes on as the
 * last one did writes no row.  Nor is it sent: the round's snapshot
 * read each endpoint's row (struct pg_ep_row), so goes_on() tells such
 * a check here, and only a streak whose latency it moves is written,
 * by id.  A steady save of N endpoints so sends a few dozen of them,
 * not N rows of twelve columns that the server would only compare and
 * drop (at N = 10,000, 0.9 MB and some 40 ms of the server's time).
 */

#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "check.h"
#include "config.h"
#include "outcome.h"
#include "state/pg.h"
#include "util.h"

#define PG_TS(p)	"to_timestamp(" p "::bigint / 1000.0)"

/*
 * Endpoints a statement takes at most: the columns of all N at once
 * would be held three times over at N = 10,000 (our arrays, the batch's
 * copy, libpq's output buffer of the whole message), some 5 MB; in
 * statements of this many, each endpoint is still one row among
 * thousands and the batch one round trip.
 */
#define PG_EP_CHUNK	2048

/*
 * Endpoints whose check counted and that goes_on() could not leave
 * out: their rows and streaks in one go.  A check that goes on with
 * the open streak, counters as the view derives them, still writes no
 * row (same), should the snapshot have had no row for it: the endpoint
 * and its streak are as of an earlier save, and this save's tick
 * (written last) counts it.  The mean latency is a sample, as the
 * SQLite file's: the
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
 * Checks that go on with the open streak (goes_on()) but move its
 * latency: a range widened, or the save's sample of the mean.  Only
 * the streak's row, by id; the endpoint's stays as of an earlier save.
 */
static const char sql_streak_lat[] =
	"UPDATE ddup_streak_base s SET"
	" latency_min = least(s.latency_min, u.lat),"
	" latency_max = greatest(s.latency_max, u.lat),"
	" latency_mean = CASE WHEN u.sample"
	"  THEN s.latency_mean + (u.lat - s.latency_mean)"
	"  / (s.latency_samples + 1) ELSE s.latency_mean END,"
	" latency_samples = s.latency_samples"
	"  + CASE WHEN u.sample THEN 1 ELSE 0 END"
	" FROM unnest($1::bigint[], $2::bigint[], $3::bool[])"
	"  AS u(id, lat, sample) WHERE s.id = u.id";

/*
 * Endpoints whose check did not count: the counters as they were, the
 * open streak ended (the endpoint's last result stays its row's, its
 * latency the streak's mean, as it was shown).  The ended streaks are
 * joined, not looked up per endpoint: a subquery over the CTE's rows
 * was a scan of them for each, 200 ms for 2,048 endpoints.
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
	"  RETURNING e.domain, e.name, round(s.latency_mean)::integer AS lat)"
	" UPDATE ddup_endpoint_base e SET priority = u.priority,"
	" failures = u.failures, passes = u.passes, removed = u.removed,"
	" streak = NULL, last_check = " PG_TS("$1") ","
	" latency_ms = coalesce(f.lat, e.latency_ms),"
	" upto = coalesce(t.saves, 0) + 1"
	" FROM u LEFT JOIN f ON f.domain = u.domain AND f.name = u.name"
	" LEFT JOIN ddup_tick t ON t.domain = u.domain"
	" WHERE e.domain = u.domain AND e.name = u.name";

/* Columns of the endpoints' two statements. */
enum { C_DOMAIN, C_NAME, C_IP, C_URL, C_PRIO, C_FAIL, C_PASS, C_REMOVED,
	C_OK, C_STATUS, C_REASON, C_LAT, C_MAX };
enum { U_DOMAIN, U_NAME, U_PRIO, U_FAIL, U_PASS, U_REMOVED, U_MAX };
enum { R_DOMAIN, R_NAME, R_IP, R_STATUS, R_REASON, R_LAT, R_MAX };
enum { G_ID, G_LAT, G_SAMPLE, G_MAX };

/* The k-th failed checks before the last (recheck), of every endpoint. */
struct rep_cols {
	struct pg_arr	 c[R_MAX];
};

struct ep_cols {
	struct pg_arr	 c[C_MAX];	/* counted */
	struct pg_arr	 u[U_MAX];	/* not counted */
	struct pg_arr	 g[G_MAX];	/* going on, the latency moved */
	size_t		 sent;		/* endpoints in the arrays */
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

/*
 * The check goes on as the last one did (r, the snapshot's row: same
 * priority, removed, result, status and reason, the counters one save
 * on, no recheck of this run before it): it sends no row, as
 * sql_counted would write none for it, unless its latency moves the
 * streak's.  Returns 1 when it needs nothing more than that.
 */
static int
goes_on(struct ep_cols *a, const struct pg_state *st,
    const struct pg_ep_row *r, const struct outcome_ep *e,
    const char *reason)
{
	const struct outcome_check *k = &e->check;
	long lat = k->latency_ms;

	if (r == NULL || !r->open || k->before != NULL || !e->has_state ||
	    r->priority != e->cfg->priority ||
	    e->removed != e->removed_before || k->ok != e->last_ok_before ||
	    r->status != k->status || strcmp(st->reasons + r->reason,
	    reason) != 0 ||
	    e->failures != e->failures_before + (k->ok ? 0 : 1) ||
	    e->passes != e->passes_before + (k->ok ? 1 : 0))
		return 0;
	if (lat < r->lat_min || lat > r->lat_max || r->sample) {
		pga_lld(&a->g[G_ID], r->streak);
		pga_lld(&a->g[G_LAT], lat);
		pga_add(&a->g[G_SAMPLE], pg_bool(r->sample));
		a->sent++;
	}
	return 1;
}

static void
add_endpoint(struct ep_cols *a, const struct pg_state *st,
    const struct pg_ep_row *r, const struct outcome_domain *od,
    const struct outcome_ep *e)
{
	const struct endpoint_cfg *cfg = e->cfg;
	char reason[160];

	/* A failure the run blames on its own network is not the endpoint's. */
	if (!e->check.counted && e->check.done) {
		if (!e->has_state)
			return;
		a->sent++;
		pga_add(&a->u[U_DOMAIN], od->cfg->name);
		pga_add(&a->u[U_NAME], cfg->name);
		pga_lld(&a->u[U_PRIO], cfg->priority);
		pga_lld(&a->u[U_FAIL], e->failures_before);
		pga_lld(&a->u[U_PASS], e->passes_before);
		pga_add(&a->u[U_REMOVED], pg_bool(e->removed_before));
		return;
	}
	text_printable_copy(reason, sizeof(reason), e->check.reason);
	if (goes_on(a, st, r, e, reason))
		return;
	add_repeats(a, od, e);
	a->sent++;
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
	if (a->g[G_ID].n > 0) {
		for (i = 0; i < G_MAX; i++)
			p[i] = pga_text(&a->g[i]);
		pgq_add(q, "cannot save the streaks", sql_streak_lat, G_MAX,
		    p);
	}
	for (i = 0; i < C_MAX; i++)
		pga_free(&a->c[i]);
	for (i = 0; i < U_MAX; i++)
		pga_free(&a->u[i]);
	for (i = 0; i < G_MAX; i++)
		pga_free(&a->g[i]);
}

void
pgd_save_endpoints(struct pg_state *st, struct pgq *q,
    const struct config *c, const struct outcome *o,
    const unsigned char *decided)
{
	const struct pg_ep_row *rows = st->rows_cfg == c ? st->rows : NULL;
	struct ep_cols a;
	size_t i, j, k = 0, n;

	memset(&a, 0, sizeof(a));
	for (i = 0; i < outcome_ndomains(o); i++, k += n) {
		const struct outcome_domain *od = outcome_domain(o, i);

		n = od->neps;
		for (j = 0; decided[i] && j < n; j++) {
			add_endpoint(&a, st, rows != NULL ? &rows[k + j] : NULL,
			    od, &od->eps[j]);
			if (a.c[C_DOMAIN].n + a.u[U_DOMAIN].n + a.g[G_ID].n >=
			    PG_EP_CHUNK)
				queue_endpoints(q, &a, outcome_time(o));
		}
	}
	queue_endpoints(q, &a, outcome_time(o));
	st->sent_eps += (long long)a.sent;
}
