/*
 * The rows of the PostgreSQL backend (state/pg.h): the snapshot a
 * round reads and the record a run saves, in the tables of schema 2
 * (state/pg_schema.c), as the SQLite backend keeps them (state.h).
 *
 * Both go out as a batch of the caller's: the snapshot is a handful of
 * SELECTs and one cursor over the endpoints and their votes, fetched
 * PG_READ_CHUNK rows at a time and matched to the configuration as
 * each part arrives (state/pg_read.c); the save is a statement per
 * decided domain and a handful for the endpoints whose checks changed
 * something (columns of arrays through unnest()),
 * so a run costs the same few round trips at N = 10 as at N = 10,000.
 *
 * A steady endpoint's counters are derived from its domain's saves
 * (ddup_tick), as the view ddup_endpoint of schema 8 derives them and
 * as the SQLite file derives them from its runs: a round's domain may
 * be decided by any checker of the fleet, so the count is the domain's.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "config.h"
#include "state.h"
#include "state/pg.h"
#include "util.h"

/* ms since the epoch, a parameter, as timestamptz; and back. */
#define PG_TS(p)	"to_timestamp(" p "::bigint / 1000.0)"
#define PG_MS(c)	"(extract(epoch FROM " c ") * 1000)::bigint"


/* The snapshot's statements, in the order pgd_load_queue() adds them. */
enum {
	L_META,
	L_DOMAINS,
	L_PUBLISHED,
	L_DRAINS,
	L_FAILBACKS,
	L_CONTROL,
	L_CERTS,
	L_ENDPOINTS,	/* last: pg_queue_rows()'s statements */
	L_MAX
};

/* Rows come in byte order, as strcmp() and the matching below expect. */
static const char *const load_sql[L_MAX] = {
	[L_META] = "SELECT (SELECT value FROM ddup_meta WHERE key = 'runs'),"
	    " (SELECT " PG_MS("value::timestamptz") " FROM ddup_meta"
	    " WHERE key = 'last_run'),"
	    " (SELECT value FROM ddup_meta WHERE key = 'pruned')",
	[L_DOMAINS] = "SELECT d.name, d.tier, d.tier_rank, d.tier_location, "
	    PG_MS("d.last_change") ", d.last_error, d.unhealthy, d.unsure, "
	    PG_MS("f.since") ", f.reason, f.all_down"
	    " FROM ddup_domain d LEFT JOIN ddup_failover f ON f.domain = d.name"
	    " WHERE d.name = ANY ($1::text[])"
	    " ORDER BY d.name COLLATE \"C\"",
	[L_PUBLISHED] = "SELECT domain, type, ttl, addresses, proxied"
	    " FROM ddup_published WHERE domain = ANY ($1::text[])"
	    " ORDER BY domain COLLATE \"C\", type COLLATE \"C\"",
	/*
	 * Each endpoint's row with its counters as the view ddup_endpoint
	 * derives them (schema 8), read from the tables themselves (the
	 * view's join of ddup_tick, and a second read for the votes, cost
	 * a query apiece), with its last votes, and with what the save
	 * needs to tell a check that goes on (struct pg_ep_row): the open
	 * streak as stored, and whether the next save samples its latency
	 * (one save in 16, state/pg_save_ep.c).  A vote may come without
	 * an endpoint row (a round whose save failed).
	 */
	[L_ENDPOINTS] = "SELECT coalesce(e.domain, v.domain),"
	    " coalesce(e.name, v.endpoint), e.ip, e.url,"
	    " e.failures + CASE WHEN e.streak IS NOT NULL AND NOT e.last_ok"
	    " THEN coalesce(t.saves - e.upto, 0) ELSE 0 END,"
	    " e.passes + CASE WHEN e.streak IS NOT NULL AND e.last_ok"
	    " THEN coalesce(t.saves - e.upto, 0) ELSE 0 END,"
	    " e.removed, " PG_MS("CASE WHEN e.streak IS NOT NULL"
	    " AND t.saves > e.upto THEN t.saved ELSE e.last_check END") ","
	    " e.last_ok, coalesce(round(s.latency_mean)::integer, e.latency_ms),"
	    " e.last_result, e.priority, coalesce(e.last_status, 0),"
	    " s.latency_min, s.latency_max, s.id,"
	    " (s.upto IS NOT NULL AND s.ip = e.ip AND s.ok = e.last_ok"
	    " AND s.status IS NOT DISTINCT FROM e.last_status"
	    " AND s.reason = e.last_result) IS TRUE,"
	    " (coalesce(t.saves, 0) + 1 + s.id / 64) % 16 = 0,"
	    " v.npass, v.nfail, v.verdict"
	    " FROM (SELECT * FROM ddup_endpoint_base"
	    " WHERE domain = ANY ($1::text[])) e"
	    " LEFT JOIN ddup_streak_base s ON s.id = e.streak"
	    " LEFT JOIN ddup_tick t ON t.domain = e.domain"
	    " FULL JOIN (SELECT * FROM ddup_vote"
	    " WHERE domain = ANY ($1::text[])) v"
	    " ON v.domain = e.domain AND v.endpoint = e.name"
	    " ORDER BY coalesce(e.domain, v.domain) COLLATE \"C\","
	    " coalesce(e.name, v.endpoint) COLLATE \"C\"",
	/* Those in force: one whose time ran out is back by itself. */
	[L_DRAINS] = "SELECT domain, endpoint, " PG_MS("since") ", "
	    PG_MS("until") " FROM ddup_drain WHERE until IS NULL OR until > "
	    PG_TS("$1") " ORDER BY domain COLLATE \"C\","
	    " endpoint COLLATE \"C\"",
	[L_FAILBACKS] = "SELECT domain FROM ddup_failback"
	    " ORDER BY domain COLLATE \"C\"",
	[L_CONTROL] = "SELECT " PG_MS("since") ", result FROM ddup_control"
	    " WHERE checker = $1",
	[L_CERTS] = "SELECT domain, endpoint, expires FROM ddup_cert"
	    " WHERE domain = ANY ($1::text[])"
	    " ORDER BY domain COLLATE \"C\", endpoint COLLATE \"C\"",
};

/*
 * The first row of r (in byte order of columns 0 and 1) not before
 * (k0, k1); k1 NULL: by column 0 alone.
 */
static int
row_lower(const PGresult *r, const char *k0, const char *k1)
{
	int lo = 0, hi = PQntuples(r), mid, c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(PQgetvalue(r, mid, 0), k0);
		if (c == 0 && k1 != NULL)
			c = strcmp(PQgetvalue(r, mid, 1), k1);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
pg_row_find(const PGresult *r, const char *k0, const char *k1)
{
	int i = row_lower(r, k0, k1);

	if (i >= PQntuples(r) || strcmp(PQgetvalue(r, i, 0), k0) != 0 ||
	    (k1 != NULL && strcmp(PQgetvalue(r, i, 1), k1) != 0))
		return -1;
	return i;
}

static void
parse_domain(const PGresult *dr, const PGresult *pr, const char *name,
    struct st_domain *d, struct pg_state *st, int *rc)
{
	char what[320];
	enum rrtype t;
	int i;

	for (i = 0; i < RR_NTYPES; i++)
		d->pub[i].type = (enum rrtype)i;
	if ((i = pg_row_find(dr, name, NULL)) >= 0) {
		d->found = 1;
		d->has_tier = !PQgetisnull(dr, i, 1);
		d->tier = (long)pg_getlld(dr, i, 1);
		d->tier_rank = PQgetisnull(dr, i, 2) ? -1 :
		    (long)pg_getlld(dr, i, 2);
		snprintf(d->tier_location, sizeof(d->tier_location), "%s",
		    pg_getstr(dr, i, 3));
		d->last_change = pg_getlld(dr, i, 4);
		d->last_error = st_error_dup(pg_getstr(dr, i, 5));
		d->unhealthy = pg_getbool(dr, i, 6);
		d->unsure = pg_getbool(dr, i, 7);
		d->failover_since = pg_getlld(dr, i, 8);
		d->failover_reason = PQgetisnull(dr, i, 9) ? NULL :
		    st_error_dup(pg_getstr(dr, i, 9));
		d->fail_open = st_fail_open_parse(PQgetisnull(dr, i, 10) ?
		    NULL : pg_getstr(dr, i, 10));
	}
	for (i = row_lower(pr, name, NULL); i < PQntuples(pr) &&
	    strcmp(PQgetvalue(pr, i, 0), name) == 0; i++) {
		if (rrtype_parse(PQgetvalue(pr, i, 1), &t) == -1 ||
		    rrset_parse(&d->pub[t], PQgetvalue(pr, i, 3)) == -1) {
			snprintf(what, sizeof(what), "published %s: a bad "
			    "record set", name);
			pg_set_err(st, what, NULL);
			*rc = -1;
			continue;
		}
		d->has_pub[t] = 1;
		d->pub[t].ttl = (long)pg_getlld(pr, i, 2);
		d->pub[t].proxied = pg_getbool(pr, i, 4);
	}
}

/*
 * The offset of s among st's reasons: most are "ok", so one the same
 * as the last added is not added again.
 */
static unsigned int
add_reason(struct pg_state *st, const char *s, unsigned int *last)
{
	size_t n = strlen(s) + 1;

	if (st->reasons_len > 0 && strcmp(st->reasons + *last, s) == 0)
		return *last;
	if (st->reasons_len + n > st->reasons_cap) {
		st->reasons_cap = (st->reasons_len + n) * 2;
		st->reasons = xrealloc(st->reasons, st->reasons_cap);
	}
	memcpy(st->reasons + st->reasons_len, s, n);
	*last = (unsigned int)st->reasons_len;
	st->reasons_len += n;
	return *last;
}

/* Row r of er as the save compares it with a check (struct pg_ep_row). */
static void
parse_row(struct pg_state *st, const PGresult *er, int r,
    struct pg_ep_row *row, unsigned int *last)
{
	if (PQgetisnull(er, r, 15) || !pg_getbool(er, r, 16))
		return;
	row->open = 1;
	row->streak = pg_getlld(er, r, 15);
	row->priority = (int)pg_getlld(er, r, 11);
	row->status = (int)pg_getlld(er, r, 12);
	row->lat_min = (int)pg_getlld(er, r, 13);
	row->lat_max = (int)pg_getlld(er, r, 14);
	row->sample = (unsigned char)pg_getbool(er, r, 17);
	row->reason = add_reason(st, pg_getstr(er, r, 10), last);
}

/* What endpoint_row() fills in, as each part of the answer arrives. */
struct ep_ctx {
	struct pg_state		*st;
	int			 results;
	struct st_snapshot	*out;
	unsigned int		 last;	/* of add_reason() */
};

/*
 * pg_row_fn: row r of er, endpoint k's (e): its last votes (the
 * fleet's, whoever counted them), and its counters if its address and
 * URL are the configured ones, else they are someone else's.
 */
static void
endpoint_row(const PGresult *er, int r, size_t k,
    const struct endpoint_cfg *e, void *arg)
{
	struct ep_ctx *a = arg;
	struct st_ep_snap *o = &a->out->eps[k];

	if (!PQgetisnull(er, r, 18)) {
		o->has_votes = 1;
		o->votes_pass = (long)pg_getlld(er, r, 18);
		o->votes_fail = (long)pg_getlld(er, r, 19);
		o->verdict = (int)pg_getlld(er, r, 20);
	}
	if (PQgetisnull(er, r, 2) ||
	    strcmp(PQgetvalue(er, r, 2), endpoint_target(e)) != 0 ||
	    strcmp(PQgetvalue(er, r, 3), endpoint_check(e)) != 0)
		return;
	o->found = 1;
	o->failures = (long)pg_getlld(er, r, 4);
	o->passes = (long)pg_getlld(er, r, 5);
	o->removed = pg_getbool(er, r, 6);
	o->last_ok = pg_getbool(er, r, 8);
	if ((o->last_check = pg_getlld(er, r, 7)) != 0) {
		o->latency_ms = (long)pg_getlld(er, r, 9);
		if (a->results)
			o->last_result = xstrdup(pg_getstr(er, r, 10));
	}
	parse_row(a->st, er, r, &a->st->rows[k], &a->last);
}

size_t
pgd_load_queue(struct pg_state *st, struct pgq *q, const struct config *c,
    int results, long long now, struct st_snapshot *out)
{
	struct ep_ctx ctx;
	struct pg_arr names;
	const char *p[1];
	char buf[32];
	size_t first = pgq_count(q), i, n;

	memset(&names, 0, sizeof(names));
	for (i = 0, n = 0; i < c->ndomains; n += c->domains[i++].neps)
		pga_add(&names, c->domains[i].name);
	pg_order_free(st->order);	/* c's, built by the first read */
	st->order = NULL;
	free(st->rows);
	st->rows = xcalloc(n + 1, sizeof(*st->rows));
	st->rows_cfg = c;
	st->reasons_len = 0;
	pgq_add(q, "cannot read the runs", load_sql[L_META], 0, NULL);
	p[0] = pga_text(&names);
	pgq_add(q, "cannot read the domains", load_sql[L_DOMAINS], 1, p);
	pgq_add(q, "cannot read the published sets", load_sql[L_PUBLISHED], 1,
	    p);
	p[0] = pg_lld(buf, now);
	pgq_add(q, "cannot read the drains", load_sql[L_DRAINS], 1, p);
	pgq_add(q, "cannot read the failbacks", load_sql[L_FAILBACKS], 0,
	    NULL);
	p[0] = c->checker != NULL ? c->checker : "";
	pgq_add(q, "cannot read the controlUrl's state", load_sql[L_CONTROL],
	    1, p);
	p[0] = pga_text(&names);
	pgq_add(q, "cannot read the certificates", load_sql[L_CERTS], 1, p);
	memset(&ctx, 0, sizeof(ctx));
	ctx.st = st;
	ctx.results = results;
	ctx.out = out;
	st->ep_reads = pg_queue_rows(st, q, c, "cannot read the endpoints",
	    "ddup_endpoints", load_sql[L_ENDPOINTS], 1, p, endpoint_row, &ctx,
	    sizeof(ctx));
	pga_free(&names);
	return first;
}

/* Each endpoint's certificate, found or not (its counters may be gone). */
static void
parse_certs(const PGresult *cr, const struct config *c,
    struct st_snapshot *out)
{
	size_t i, j, k = 0;
	int r;

	for (i = 0; i < c->ndomains; i++)
		for (j = 0; j < c->domains[i].neps; j++, k++)
			if ((r = pg_row_find(cr, c->domains[i].name,
			    c->domains[i].eps[j].name)) >= 0)
				out->eps[k].cert_expires = pg_getlld(cr, r, 2);
}

static void
parse_requests(const PGresult *dr, const PGresult *fr, const PGresult *cr,
    struct st_requests *req)
{
	int i, n;

	n = PQntuples(dr);
	req->drains = xcalloc((size_t)n + 1, sizeof(*req->drains));
	for (i = 0; i < n; i++) {
		struct st_drain *d = &req->drains[req->ndrains++];

		d->domain = xstrdup(pg_getstr(dr, i, 0));
		d->endpoint = xstrdup(pg_getstr(dr, i, 1));
		d->since = pg_getlld(dr, i, 2);
		d->until = pg_getlld(dr, i, 3);
	}
	n = PQntuples(fr);
	req->failbacks = xcalloc((size_t)n + 1, sizeof(*req->failbacks));
	for (i = 0; i < n; i++)
		req->failbacks[req->nfailbacks++] = xstrdup(pg_getstr(fr, i,
		    0));
	if (PQntuples(cr) == 1) {
		req->control_since = pg_getlld(cr, 0, 0);
		snprintf(req->control_result, sizeof(req->control_result),
		    "%s", pg_getstr(cr, 0, 1));
	}
}

int
pgd_load_parse(struct pg_state *st, const struct pgq *q, size_t first,
    const struct config *c, struct st_snapshot *out)
{
	const PGresult *r[L_ENDPOINTS];
	size_t i;
	int rc = 0;

	/* The endpoints' answers went to endpoint_row(). */
	for (i = 0; i < L_ENDPOINTS + st->ep_reads; i++)
		if (!pgq_ok(q, first + i))
			goto bad;
	for (i = 0; i < L_ENDPOINTS; i++)
		if ((r[i] = pgq_result(q, first + i)) == NULL ||
		    PQresultStatus(r[i]) != PGRES_TUPLES_OK)
			goto bad;
	if (PQntuples(r[L_META]) == 1) {
		st->runs = pg_getlld(r[L_META], 0, 0);
		st->last_run = pg_getlld(r[L_META], 0, 1);
		snprintf(st->pruned, sizeof(st->pruned), "%s",
		    pg_getstr(r[L_META], 0, 2));
	}
	out->last_run = st->last_run;
	for (i = 0; i < c->ndomains; i++)
		parse_domain(r[L_DOMAINS], r[L_PUBLISHED], c->domains[i].name,
		    &out->doms[i], st, &rc);
	parse_certs(r[L_CERTS], c, out);
	parse_requests(r[L_DRAINS], r[L_FAILBACKS], r[L_CONTROL], out->req);
	return rc;
bad:
	pg_set_err(st, "cannot read the state", "no answer");
	return -1;
}

void
pgd_mark_unsure_queue(struct pgq *q, const char *domain,
    const char *provider, long ttl)
{
	const char *p[3];
	char buf[32];

	p[0] = domain;
	p[1] = provider;
	p[2] = pg_lld(buf, ttl);
	pgq_add(q, "cannot mark the domain unsure", "INSERT INTO ddup_domain"
	    " (name, provider, ttl, unhealthy, unsure)"
	    " VALUES ($1, $2, $3, false, true)"
	    " ON CONFLICT (name) DO UPDATE SET unsure = true", 3, p);
}
