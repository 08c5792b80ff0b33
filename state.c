/*
 * The state's interface (state.h): what the core calls, dispatched to
 * the backend of the open through its table (state/backend.h).  This
 * file takes the tables; no backend calls it.  Every call that can fail
 * hands the backend's error to the caller's err (state.h's first
 * comment).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "pguri.h"
#include "state.h"
#include "state/backend.h"
#include "util.h"

/* rc of a backend's call, with its error into err when it failed (-1). */
static int
handed(const struct state *st, int rc, char *err, size_t errlen)
{
	if (rc == -1 && err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", state_errmsg(st));
	return rc;
}

/* The backends, tried in order by state_open_checker(). */
static const struct state_backend *const backends[] = {
	&state_pg,
	&state_sqlite,
};

int
state_open_checker(const char *path, const char *checker, int mode,
    struct state **out, char *err, size_t errlen)
{
	char	*shown;
	size_t	 i;

	*out = NULL;
	for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (backends[i]->handles(path))
			return backends[i]->open(path, checker, mode, out, err,
			    errlen);
	/* SQLite takes every path: kept for a table without it. */
	shown = pguri_redact(path);
	snprintf(err, errlen, "state %s: no backend for it", shown);
	free(shown);
	return STATE_BAD;
}

void
state_close(struct state *st)
{
	if (st != NULL)
		st->be->close(st);
}

/* An empty state: every domain and endpoint not found, no request. */
static void
snapshot_empty(const struct config *c, struct st_snapshot *out)
{
	size_t i, n = 0;

	for (i = 0; i < c->ndomains; i++)
		n += c->domains[i].neps;
	memset(out, 0, sizeof(*out));
	out->doms = xcalloc(c->ndomains + 1, sizeof(*out->doms));
	out->eps = xcalloc(n + 1, sizeof(*out->eps));
	out->req = xcalloc(1, sizeof(*out->req));
}

int
state_load(struct state *st, const struct config *c, int results,
    long long now, struct st_snapshot *out, char *err, size_t errlen)
{
	snapshot_empty(c, out);
	if (st == NULL)
		return 0;
	return handed(st, st->be->load(st, c, results, now, out), err,
	    errlen);
}

void
state_fleet_free(struct st_fleet *f)
{
	size_t i;

	if (f == NULL)
		return;
	for (i = 0; i < f->ncheckers; i++)
		free(f->checkers[i].results);
	free(f->checkers);
	free(f->rounds);
	free(f);
}

void
state_snapshot_free(const struct config *c, struct st_snapshot *s)
{
	size_t i, n = 0;

	for (i = 0; s->doms != NULL && i < c->ndomains; i++) {
		state_domain_free(&s->doms[i]);
		n += c->domains[i].neps;
	}
	for (i = 0; s->eps != NULL && i < n; i++)
		free(s->eps[i].last_result);
	if (s->req != NULL)
		state_requests_free(s->req);
	state_fleet_free(s->fleet);
	free(s->doms);
	free(s->eps);
	free(s->req);
	memset(s, 0, sizeof(*s));
}

int
state_round_begin(struct state *st, const struct config *c,
    const struct st_report_in *in, struct st_snapshot *out,
    struct st_round *rd, char *err, size_t errlen)
{
	memset(rd, 0, sizeof(*rd));
	rd->decides = xcalloc(c->ndomains + 1, 1);
	if (st == NULL || st->be->round_begin == NULL) {
		/* One checker: every run takes every round, with its results. */
		memset(rd->decides, 1, c->ndomains);
		return state_load(st, c, in->dry_run, now_ms(), out, err,
		    errlen);
	}
	snapshot_empty(c, out);
	return handed(st, st->be->round_begin(st, c, in, out, rd), err,
	    errlen);
}

int
state_round_commit(struct state *st, const struct config *c,
    const struct st_round *rd, const struct st_round_dom *doms, char *err,
    size_t errlen)
{
	if (st == NULL || st->be->round_commit == NULL)
		return 0;
	return st->be->round_commit(st, c, rd, doms, err, errlen);
}

void
state_round_free(const struct config *c, struct st_round *rd)
{
	size_t i;

	(void)c;
	for (i = 0; i < rd->ncheckers; i++)
		free(rd->checkers[i].results);
	free(rd->checkers);
	free(rd->reports);
	free(rd->decides);
	memset(rd, 0, sizeof(*rd));
}

int
state_save(struct state *st, const struct config *c, const struct outcome *o,
    char *err, size_t errlen)
{
	return st->be->save(st, c, o, err, errlen);
}

int
state_mark_unsure(struct state *st, const char *domain, const char *provider,
    long ttl, char *err, size_t errlen)
{
	return st->be->mark_unsure(st, domain, provider, ttl, err, errlen);
}

int
state_request_drain(struct state *st, const struct st_target *t, size_t n,
    long long now, long long until, char *err, size_t errlen)
{
	return st->be->request_drain(st, t, n, now, until, err, errlen);
}

int
state_request_undrain(struct state *st, const struct st_target *t, size_t n,
    long long now, char *err, size_t errlen)
{
	return st->be->request_undrain(st, t, n, now, err, errlen);
}

int
state_request_failback(struct state *st, const char *domain, long long now,
    char *err, size_t errlen)
{
	return st->be->request_failback(st, domain, now, err, errlen);
}

/* The reads of outputs and the outbox: st NULL is an empty SQLite state. */
static const struct state_backend *
backend_of(const struct state *st)
{
	return st != NULL ? st->be : &state_sqlite;
}

int
state_recent_changes(struct state *st, size_t max, struct st_change **out,
    size_t *n, char *err, size_t errlen)
{
	return handed(st, backend_of(st)->recent_changes(st, max, out, n), err,
	    errlen);
}

int
state_timeline(struct state *st, long long since, struct st_timeline *out,
    char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	return handed(st, backend_of(st)->timeline(st, since, out), err,
	    errlen);
}

int
state_counters(struct state *st, struct st_counter **out, size_t *n,
    char *err, size_t errlen)
{
	return handed(st, backend_of(st)->counters(st, out, n), err, errlen);
}

int
state_notify_counts(struct state *st, const char *notifier,
    struct st_notify_counts *out, char *err, size_t errlen)
{
	return handed(st, backend_of(st)->notify_counts(st, notifier, out),
	    err, errlen);
}

int
state_get_deliveries(struct state *st, const char *notifier,
    struct st_delivery **out, size_t *n, char *err, size_t errlen)
{
	return handed(st, backend_of(st)->get_deliveries(st, notifier, out,
	    n), err, errlen);
}

int
state_put_delivery(struct state *st, const char *notifier,
    const struct st_delivery *d, long long now, int ok, int given_up,
    const char *error, char *err, size_t errlen)
{
	return backend_of(st)->put_delivery(st, notifier, d, now, ok,
	    given_up, error, err, errlen);
}

void
state_last_writes(struct state *st, long long *rows, long long *pages)
{
	*rows = st != NULL ? st->wrote_rows : 0;
	*pages = st != NULL ? st->wrote_pages : 0;
}
