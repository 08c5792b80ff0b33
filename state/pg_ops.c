/*
 * The PostgreSQL backend's operations of one transaction each
 * (state/pg.h): the operator's requests (ddup-check(8), DESCRIPTION),
 * the reads of the run's outputs (DNS changes, counters, the outbox's
 * counts) and the outbox's deliveries (ddup.ini(5), NOTIFICATIONS).  Each is one statement, so one round
 * trip: a statement of a batch with no BEGIN is a transaction of its
 * own.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "state.h"
#include "state/pg.h"
#include "util.h"

#define PG_TS(p)	"to_timestamp(" p "::bigint / 1000.0)"
#define PG_TS0(p)	"CASE WHEN " p "::bigint = 0 THEN NULL ELSE " \
			PG_TS(p) " END"
#define PG_MS(c)	"(extract(epoch FROM " c ") * 1000)::bigint"

/*
 * Runs one statement; its answer (pgq_result(*q, 0)) or NULL with
 * st->err set, and err too when given.  *q is to be freed either way.
 */
static const PGresult *
one(struct pg_state *st, struct pgq **q, const char *what, const char *sql,
    int nparams, const char *const *params, char *err, size_t errlen)
{
	*q = pgq_new(st);
	pgq_add(*q, what, sql, nparams, params);
	if (pgq_run(*q) == -1) {
		if (err != NULL)
			snprintf(err, errlen, "%s", st->base.err);
		return NULL;
	}
	return pgq_result(*q, 0);
}

/* A write of one statement; 0, or -1 with err set. */
static int
write1(struct pg_state *st, const char *what, const char *sql, int nparams,
    const char *const *params, char *err, size_t errlen)
{
	struct pgq *q;
	int rc;

	rc = one(st, &q, what, sql, nparams, params, err, errlen) != NULL ?
	    0 : -1;
	pgq_free(q);
	return rc;
}

/* The domains and endpoints of t as two text arrays, t[i] in row i. */
static void
targets(const struct st_target *t, size_t n, struct pg_arr *dom,
    struct pg_arr *ep)
{
	size_t i;

	for (i = 0; i < n; i++) {
		pga_add(dom, t[i].domain);
		pga_add(ep, t[i].endpoint);
	}
}

int
pgd_request_drain(struct pg_state *st, const struct st_target *t, size_t n,
    long long now, long long until, char *err, size_t errlen)
{
	struct pg_arr dom = { 0 }, ep = { 0 };
	const char *p[4];
	char b[2][32];
	int rc;

	targets(t, n, &dom, &ep);
	p[0] = pga_text(&dom);
	p[1] = pga_text(&ep);
	p[2] = pg_lld(b[0], now);
	p[3] = pg_lld(b[1], until);
	/*
	 * One statement, so one transaction: all of them or none.  A file
	 * other than the checkers' may name an endpoint they do not: their
	 * next save looks for what is not theirs (state/pg_save.c).
	 */
	rc = write1(st, "cannot record the drain", PG_UNPRUNED "INSERT INTO"
	    " ddup_drain (domain, endpoint, since, until) SELECT DISTINCT d, e, "
	    PG_TS("$3") ", " PG_TS0("$4") " FROM unnest($1::text[],"
	    " $2::text[]) AS t(d, e) ON CONFLICT (domain, endpoint) DO UPDATE"
	    " SET since = excluded.since, until = excluded.until", 4, p, err,
	    errlen);
	pga_free(&dom);
	pga_free(&ep);
	return rc;
}

/*
 * The drains ended are logged as ended at now, the checker's clock, as
 * their since is (or at their own expiry, if that came first).
 */
int
pgd_request_undrain(struct pg_state *st, const struct st_target *t,
    size_t n, long long now, char *err, size_t errlen)
{
	struct pg_arr dom = { 0 }, ep = { 0 };
	const char *p[3];
	char b[32];
	int rc;

	targets(t, n, &dom, &ep);
	p[0] = pga_text(&dom);
	p[1] = pga_text(&ep);
	p[2] = pg_lld(b, now);
	rc = write1(st, "cannot record the undrain", "WITH gone AS (DELETE"
	    " FROM ddup_drain WHERE (domain, endpoint) IN (SELECT * FROM"
	    " unnest($1::text[], $2::text[])) RETURNING domain, endpoint,"
	    " since, until) INSERT INTO ddup_drain_log SELECT domain,"
	    " endpoint, since, least(coalesce(until, " PG_TS("$3") "), "
	    PG_TS("$3") ") FROM gone", 3, p, err, errlen);
	pga_free(&dom);
	pga_free(&ep);
	return rc;
}

int
pgd_request_failback(struct pg_state *st, const char *domain, long long now,
    char *err, size_t errlen)
{
	const char *p[2];
	char buf[32];

	p[0] = domain;
	p[1] = pg_lld(buf, now);
	return write1(st, "cannot record the failback", PG_UNPRUNED
	    "INSERT INTO ddup_failback (domain, time) VALUES ($1, " PG_TS("$2") ")"
	    " ON CONFLICT (domain) DO UPDATE SET time = excluded.time", 2, p,
	    err, errlen);
}

int
pgd_recent_changes(struct pg_state *st, size_t max, struct st_change **out,
    size_t *n)
{
	const PGresult *r;
	struct st_change *v, *c;
	struct pgq *q;
	const char *p[1];
	char buf[32];
	int i, rows, rc = -1;

	*out = NULL;
	*n = 0;
	if (max == 0)
		return 0;
	p[0] = pg_lld(buf, (long long)max);
	if ((r = one(st, &q, "cannot read the DNS changes", "SELECT "
	    PG_MS("time") ", domain, type, ttl, old, new, tier, ok, error"
	    " FROM ddup_change ORDER BY time DESC, id DESC LIMIT $1", 1, p,
	    NULL, 0)) == NULL)
		goto out;
	rows = PQntuples(r);
	v = xcalloc((size_t)rows + 1, sizeof(*v));
	for (i = 0; i < rows; i++) {
		c = &v[i];
		c->when = pg_getlld(r, i, 0);
		c->domain = xstrdup(pg_getstr(r, i, 1));
		c->type = xstrdup(pg_getstr(r, i, 2));
		c->ttl = (long)pg_getlld(r, i, 3);
		c->old_set = xstrdup(pg_getstr(r, i, 4));
		c->new_set = xstrdup(pg_getstr(r, i, 5));
		c->tier = PQgetisnull(r, i, 6) ? -1 : (long)pg_getlld(r, i, 6);
		c->ok = pg_getbool(r, i, 7);
		c->error = PQgetisnull(r, i, 8) ? NULL :
		    xstrdup(pg_getstr(r, i, 8));
	}
	*out = v;
	*n = (size_t)rows;
	rc = 0;
out:
	pgq_free(q);
	return rc;
}

/*
 * The last day's history in one statement, as the SQLite file's
 * (state/sqlite_history.c): a streak is open while its endpoint points
 * at it.
 */
int
pgd_timeline(struct pg_state *st, long long since, struct st_timeline *out)
{
	const PGresult *r;
	struct st_tl_seg *g;
	struct st_tl_mark *m;
	struct pgq *q;
	const char *p[1];
	char buf[32];
	int i, rows, rc = -1;

	memset(out, 0, sizeof(*out));
	p[0] = pg_lld(buf, since);
	if ((r = one(st, &q, "cannot read the last day's history", "WITH"
	    " w AS (SELECT " PG_TS("$1") " AS t0)"
	    " SELECT 0, domain, endpoint, " PG_MS("first") ", " PG_MS("last")
	    ", ok, EXISTS (SELECT 1 FROM ddup_endpoint e WHERE e.streak ="
	    " s.id), NULL::text, NULL::text FROM ddup_streak s, w"
	    " WHERE s.last >= w.t0"
	    " UNION ALL SELECT 1, domain, endpoint, " PG_MS("since") ", "
	    PG_MS("until") ", false, true, NULL, NULL FROM ddup_drain, w"
	    " WHERE until IS NULL OR until >= w.t0"
	    " UNION ALL SELECT 1, domain, endpoint, " PG_MS("since") ", "
	    PG_MS("until") ", false, false, NULL, NULL FROM ddup_drain_log, w"
	    " WHERE until >= w.t0"
	    " UNION ALL SELECT 2, domain, type, " PG_MS("time") ", NULL, ok,"
	    " false, old, new FROM ddup_change, w WHERE time >= w.t0"
	    " ORDER BY 1, 2, 3, 4", 1, p, NULL,
	    0)) == NULL)
		goto out;
	rows = PQntuples(r);
	out->segs = xcalloc((size_t)rows + 1, sizeof(*out->segs));
	out->marks = xcalloc((size_t)rows + 1, sizeof(*out->marks));
	for (i = 0; i < rows; i++) {
		if (pg_getlld(r, i, 0) == 2) {
			m = &out->marks[out->nmarks++];
			m->domain = xstrdup(pg_getstr(r, i, 1));
			m->type = xstrdup(pg_getstr(r, i, 2));
			m->when = pg_getlld(r, i, 3);
			m->ok = pg_getbool(r, i, 5);
			m->old_set = xstrdup(pg_getstr(r, i, 7));
			m->new_set = xstrdup(pg_getstr(r, i, 8));
			continue;
		}
		g = &out->segs[out->nsegs++];
		g->domain = xstrdup(pg_getstr(r, i, 1));
		g->endpoint = xstrdup(pg_getstr(r, i, 2));
		g->kind = pg_getlld(r, i, 0) == 1 ? ST_TL_DRAIN :
		    pg_getbool(r, i, 5) ? ST_TL_PASS : ST_TL_FAIL;
		g->from = pg_getlld(r, i, 3);
		g->to = PQgetisnull(r, i, 4) ? 0 : pg_getlld(r, i, 4);
		g->open = pg_getbool(r, i, 6);
	}
	rc = 0;
out:
	pgq_free(q);
	return rc;
}

int
pgd_counters(struct pg_state *st, struct st_counter **out, size_t *n)
{
	const PGresult *r;
	struct st_counter *v;
	struct pgq *q;
	int i, rows, rc = -1;

	*out = NULL;
	*n = 0;
	/* Byte order: state_counter() searches it. */
	if ((r = one(st, &q, "cannot read the counters", "SELECT domain,"
	    " endpoint, name, sum(value)::bigint FROM (SELECT domain, endpoint,"
	    " name, value FROM ddup_counter UNION ALL SELECT domain, endpoint,"
	    " CASE WHEN ok THEN 'checks_pass' ELSE 'checks_fail' END, checks"
	    " FROM ddup_streak) u GROUP BY domain, endpoint, name"
	    " ORDER BY domain COLLATE \"C\", endpoint COLLATE \"C\","
	    " name COLLATE \"C\"", 0, NULL, NULL, 0)) == NULL)
		goto out;
	rows = PQntuples(r);
	v = xcalloc((size_t)rows + 1, sizeof(*v));
	for (i = 0; i < rows; i++) {
		v[i].domain = xstrdup(pg_getstr(r, i, 0));
		v[i].endpoint = xstrdup(pg_getstr(r, i, 1));
		v[i].name = xstrdup(pg_getstr(r, i, 2));
		v[i].value = pg_getlld(r, i, 3);
	}
	*out = v;
	*n = (size_t)rows;
	rc = 0;
out:
	pgq_free(q);
	return rc;
}

int
pgd_notify_counts(struct pg_state *st, const char *notifier,
    struct st_notify_counts *out)
{
	const PGresult *r;
	struct pgq *q;
	const char *p[1];
	int rc = -1;

	memset(out, 0, sizeof(*out));
	p[0] = notifier;
	if ((r = one(st, &q, "cannot count deliveries", "SELECT"
	    " count(*) FILTER (WHERE given_up IS NULL),"
	    " count(*) FILTER (WHERE given_up IS NOT NULL),"
	    " " PG_MS("min(e.time) FILTER (WHERE given_up IS NULL)") ","
	    " (SELECT last_error FROM ddup_delivery WHERE notifier = $1 AND"
	    "  delivered IS NULL AND last_error IS NOT NULL"
	    "  ORDER BY coalesce(given_up, next_attempt) DESC NULLS LAST,"
	    "  event DESC LIMIT 1)"
	    " FROM ddup_delivery d JOIN ddup_event e ON e.id = d.event"
	    " WHERE d.notifier = $1 AND d.delivered IS NULL", 1, p, NULL,
	    0)) == NULL || PQntuples(r) != 1)
		goto out;
	out->pending = (long)pg_getlld(r, 0, 0);
	out->given_up = (long)pg_getlld(r, 0, 1);
	out->oldest_pending = pg_getlld(r, 0, 2);
	if (!PQgetisnull(r, 0, 3))
		text_printable_copy(out->last_error, sizeof(out->last_error),
		    pg_getstr(r, 0, 3));
	rc = 0;
out:
	pgq_free(q);
	return rc;
}

/*
 * Several checkers may take rounds in one slot, and each then delivers:
 * the first to ask for a notifier's deliveries holds them (a session
 * advisory lock, until its run ends); another gets none, so that no
 * event goes out twice.  They stay pending for the next run otherwise.
 */
int
pgd_get_deliveries(struct pg_state *st, const char *notifier,
    struct st_delivery **out, size_t *n)
{
	const PGresult *r;
	struct st_delivery *v;
	struct pgq *q;
	const char *p[1];
	int i, rows, rc = -1;

	*out = NULL;
	*n = 0;
	p[0] = notifier;
	q = pgq_new(st);
	pgq_add(q, "cannot hold the deliveries", "SELECT"
	    " pg_try_advisory_lock(hashtextextended('ddup-check deliveries '"
	    " || $1, 0))", 1, p);
	pgq_add(q, "cannot read deliveries", "SELECT d.event,"
	    " e.body, d.attempts, " PG_MS("d.next_attempt")
	    " FROM ddup_delivery d JOIN ddup_event e ON e.id = d.event"
	    " WHERE d.notifier = $1 AND d.delivered IS NULL AND"
	    " d.given_up IS NULL ORDER BY d.event", 1, p);
	if (pgq_run(q) == -1)
		goto out;
	rc = 0;
	if (!pg_getbool(pgq_result(q, 0), 0, 0))
		goto out;
	r = pgq_result(q, 1);
	rows = PQntuples(r);
	v = xcalloc((size_t)rows + 1, sizeof(*v));
	for (i = 0; i < rows; i++) {
		v[i].event = pg_getlld(r, i, 0);
		v[i].body = xstrdup(pg_getstr(r, i, 1));
		v[i].attempts = (long)pg_getlld(r, i, 2);
		v[i].next_attempt = pg_getlld(r, i, 3);
	}
	*out = v;
	*n = (size_t)rows;
out:
	pgq_free(q);
	return rc;
}

int
pgd_put_delivery(struct pg_state *st, const char *notifier,
    const struct st_delivery *d, long long now, int ok, int given_up,
    const char *error, char *err, size_t errlen)
{
	const char *p[8];
	char b[4][32];

	p[0] = notifier;
	p[1] = pg_lld(b[0], d->event);
	p[2] = pg_lld(b[1], d->attempts);
	p[3] = pg_lld(b[2], d->next_attempt);
	p[4] = pg_bool(ok);
	p[5] = pg_lld(b[3], now);
	p[6] = pg_bool(given_up);
	p[7] = error;
	return write1(st, "cannot record a delivery", "UPDATE ddup_delivery"
	    " SET attempts = $3, next_attempt = " PG_TS0("$4") ","
	    " delivered = CASE WHEN $5::boolean THEN " PG_TS("$6") " END,"
	    " given_up = CASE WHEN $7::boolean THEN " PG_TS("$6") " END,"
	    " last_error = coalesce($8, last_error)"
	    " WHERE notifier = $1 AND event = $2", 8, p, err, errlen);
}
