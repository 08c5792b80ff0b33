/*
 * Reads of a row per endpoint for the PostgreSQL backend (state/pg.h,
 * pg_queue_rows()): one execution of the query through a cursor, its
 * answer fetched PG_READ_CHUNK rows at a time, each part matched to the
 * configured endpoints and freed before the next is read.
 *
 * libpq holds an answer whole until it is parsed: at N = 10,000 the
 * snapshot's endpoints in one answer were 5.1 MB of the deciding run's
 * peak.  Statements of a few domains each instead ran the query's joins
 * once a statement (each hashing all the streaks, 20 ms apiece at N =
 * 10,000); a cursor runs them once.  The rows arrive in byte order of
 * (domain, endpoint), so one merge against the configured endpoints in
 * that order (struct pg_order, built once for a configuration) matches
 * them, whatever the parts' bounds.
 */

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "config.h"
#include "state/pg.h"
#include "util.h"

/* A domain, an endpoint, to be sorted by name. */
struct dom_ref {
	const struct domain_cfg		*d;
};
struct ep_ref {
	const struct endpoint_cfg	*e;
};

/* c's domains and endpoints in byte order of their names. */
struct pg_order {
	const struct config	*c;
	struct dom_ref		*doms;
	/* doms[i]'s endpoints: eps[start[i]] to eps[start[i + 1]]. */
	size_t			*start;
	struct ep_ref		*eps;
	/* By index in c->domains: the k of its first endpoint. */
	size_t			*first_k;
};

/* A read under way: where the merge stands, and the caller's fn. */
struct rows_read {
	const struct pg_order	*o;
	pg_row_fn		*fn;
	void			*ctx;	/* in this allocation, after it */
	size_t			 di, ei;
};

/* Every FETCH but the last: the last one's argument is the read. */
struct fetch_arg {
	struct rows_read	*rr;
};

static int
dom_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dom_ref *)a)->d->name,
	    ((const struct dom_ref *)b)->d->name);
}

static int
ep_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ep_ref *)a)->e->name,
	    ((const struct ep_ref *)b)->e->name);
}

void
pg_order_free(struct pg_order *o)
{
	if (o == NULL)
		return;
	free(o->doms);
	free(o->start);
	free(o->eps);
	free(o->first_k);
	free(o);
}

static struct pg_order *
order_new(const struct config *c)
{
	struct pg_order *o = xcalloc(1, sizeof(*o));
	size_t i, j, n = 0;

	o->c = c;
	o->doms = xcalloc(c->ndomains + 1, sizeof(*o->doms));
	o->start = xcalloc(c->ndomains + 1, sizeof(*o->start));
	o->first_k = xcalloc(c->ndomains + 1, sizeof(*o->first_k));
	for (i = 0; i < c->ndomains; n += c->domains[i++].neps) {
		o->doms[i].d = &c->domains[i];
		o->first_k[i] = n;
	}
	o->eps = xcalloc(n + 1, sizeof(*o->eps));
	qsort(o->doms, c->ndomains, sizeof(*o->doms), dom_cmp);
	for (i = 0, n = 0; i < c->ndomains; i++) {
		const struct domain_cfg *d = o->doms[i].d;

		o->start[i] = n;
		for (j = 0; j < d->neps; j++)
			o->eps[n + j].e = &d->eps[j];
		qsort(&o->eps[n], d->neps, sizeof(*o->eps), ep_cmp);
		n += d->neps;
	}
	o->start[c->ndomains] = n;
	return o;
}

/* The part r of the answer, merged with the configured endpoints. */
static void
rows_match(struct rows_read *rr, const PGresult *r)
{
	const struct pg_order *o = rr->o;
	const struct config *c = o->c;
	const struct domain_cfg *d;
	const struct endpoint_cfg *e;
	const char *dom, *name;
	int row;

	for (row = 0; row < PQntuples(r); row++) {
		dom = PQgetvalue(r, row, 0);
		name = PQgetvalue(r, row, 1);
		while (rr->di < c->ndomains &&
		    strcmp(o->doms[rr->di].d->name, dom) < 0)
			rr->ei = o->start[++rr->di];
		if (rr->di == c->ndomains ||
		    strcmp(o->doms[rr->di].d->name, dom) != 0)
			continue;	/* not configured */
		while (rr->ei < o->start[rr->di + 1] &&
		    strcmp(o->eps[rr->ei].e->name, name) < 0)
			rr->ei++;
		if (rr->ei == o->start[rr->di + 1] ||
		    strcmp(o->eps[rr->ei].e->name, name) != 0)
			continue;
		d = o->doms[rr->di].d;
		e = o->eps[rr->ei].e;
		rr->fn(r, row, o->first_k[d - c->domains] +
		    (size_t)(e - d->eps), e, rr->ctx);
	}
}

static void
fetch_sink(const PGresult *r, void *arg)
{
	rows_match(((struct fetch_arg *)arg)->rr, r);
}

static void
last_sink(const PGresult *r, void *arg)
{
	rows_match(arg, r);
}

size_t
pg_queue_rows(struct pg_state *st, struct pgq *q, const struct config *c,
    const char *what, const char *cursor, const char *sql, int nparams,
    const char *const *params, pg_row_fn *fn, const void *ctx,
    size_t ctxlen)
{
	struct rows_read *rr;
	struct fetch_arg *fa;
	char *s, buf[96];
	size_t off, i, n, nfetch, len, first = pgq_count(q);

	if (st->order == NULL || st->order->c != c) {
		pg_order_free(st->order);
		st->order = order_new(c);
	}
	/* The caller's context after the read, aligned for anything. */
	off = (sizeof(*rr) + _Alignof(max_align_t) - 1) /
	    _Alignof(max_align_t) * _Alignof(max_align_t);
	rr = xcalloc(1, off + ctxlen);
	rr->o = st->order;
	rr->fn = fn;
	rr->ctx = (char *)rr + off;
	memcpy(rr->ctx, ctx, ctxlen);
	n = st->order->start[c->ndomains];
	len = strlen(sql) + strlen(cursor) + 64;
	s = xmalloc(len);
	snprintf(s, len, "DECLARE %s NO SCROLL CURSOR FOR %s", cursor, sql);
	pgq_add(q, what, s, nparams, params);
	free(s);
	/*
	 * One FETCH for each PG_READ_CHUNK configured endpoints, then one
	 * for the rest: stored endpoints not configured any more, until
	 * the next save prunes them, make the answer longer than n.
	 */
	nfetch = n / PG_READ_CHUNK;
	snprintf(buf, sizeof(buf), "FETCH FORWARD %d FROM %s", PG_READ_CHUNK,
	    cursor);
	for (i = 0; i < nfetch; i++) {
		fa = xcalloc(1, sizeof(*fa));
		fa->rr = rr;
		pgq_add(q, what, buf, 0, NULL);
		pgq_sink(q, fetch_sink, fa);
	}
	snprintf(buf, sizeof(buf), "FETCH ALL FROM %s", cursor);
	pgq_add(q, what, buf, 0, NULL);
	pgq_sink(q, last_sink, rr);
	snprintf(buf, sizeof(buf), "CLOSE %s", cursor);
	pgq_add(q, what, buf, 0, NULL);
	return pgq_count(q) - first;
}
