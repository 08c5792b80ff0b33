/*
 * The SQLite backend (state/sqlite.h): the state file of ddup-check(8),
 * STATE FILE.  Its table, state_sqlite, and the one downcast to its own
 * open, sqlite_of(): the files below take struct sqlite_state, so that
 * none of them uses this one.  Its load and save are built from the row
 * functions of state/sqlite_data.c, state/sqlite_drain.c and
 * state/sqlite_notify.c, in one read transaction and one write
 * transaction: in process, a row costs no round trip.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "outbox.h"
#include "outcome.h"
#include "pguri.h"
#include "publish.h"
#include "state.h"
#include "state/backend.h"
#include "state/sqlite.h"
#include "util.h"

struct sqlite_state *
sqlite_of(struct state *st)
{
	if (st == NULL)
		return NULL;
	if (st->be != &state_sqlite) {
		fprintf(stderr, "ddup-check: BUG: a %s state given to the "
		    "SQLite backend\n", st->be != NULL ? st->be->name : "(none)");
		abort();
	}
	return (struct sqlite_state *)st;
}

/* Every path; a URI is some other backend's. */
static int
sqlite_handles(const char *where)
{
	return !pguri_is(where);
}

static int
sqlite_open(const char *where, const char *checker, int mode,
    struct state **out, char *err, size_t errlen)
{
	struct sqlite_state *st = NULL;
	int rc;

	(void)checker;		/* one file, one checker: its lock is the file's */
	rc = st_sqlite_open(where, mode, &st, err, errlen);
	*out = NULL;
	if (st != NULL) {
		st->base.be = &state_sqlite;
		*out = &st->base;
	}
	return rc;
}

static void
sqlite_close(struct state *st)
{
	st_sqlite_close(sqlite_of(st));
}

static int
sqlite_load(struct state *base, const struct config *c, int results,
    long long now, struct st_snapshot *out)
{
	struct sqlite_state *st = sqlite_of(base);
	struct st_endpoint se;
	size_t i, j, k = 0;
	int rc = 0;

	/* The rows are read at once: so many are expected. */
	st->rows_hint = 0;
	for (i = 0; i < c->ndomains; i++)
		st->rows_hint += c->domains[i].neps;
	state_read_begin(st);
	out->last_run = state_last_run(st);
	if (state_get_requests(st, now, out->req) == -1)
		rc = -1;
	for (i = 0; i < c->ndomains; i++) {
		const struct domain_cfg *d = &c->domains[i];

		if (state_get_domain(st, d->name, &out->doms[i]) == -1)
			rc = -1;
		for (j = 0; j < d->neps; j++, k++) {
			const struct endpoint_cfg *e = &d->eps[j];
			struct st_ep_snap *o = &out->eps[k];

			if (state_get_endpoint(st, d->name, e->name,
			    endpoint_target(e), endpoint_check(e), &se) == -1)
				rc = -1;
			o->found = se.found;
			o->failures = se.failures;
			o->passes = se.passes;
			o->removed = se.removed;
			o->last_ok = se.last_ok;
			if (se.found && se.last_check != 0) {
				o->last_check = se.last_check;
				o->latency_ms = se.latency_ms;
				if (results)
					o->last_result = xstrdup(
					    se.last_result);
			}
		}
	}
	if (state_get_certs(st, c, out->eps) == -1)
		rc = -1;
	state_read_end(st);
	return rc;
}

/*
 * recheck's failed checks before c, earliest first, as rows of the run
 * at now; NULL and *n 0 when there were none.
 */
static struct st_endpoint *
checks_before(const struct outcome_check *c, long long now, size_t *n)
{
	const struct check_res	*b;
	struct st_endpoint	*v;
	size_t			 i;

	*n = 0;
	for (b = c->before; b != NULL; b = b->before)
		(*n)++;
	if (*n == 0)
		return NULL;
	v = xcalloc(*n, sizeof(*v));
	for (b = c->before, i = *n; b != NULL; b = b->before) {
		struct st_endpoint *x = &v[--i];

		x->found = 1;
		x->last_check = now;
		x->last_ok = b->ok;
		x->last_status = b->status;
		x->latency_ms = b->latency_ms;
		text_printable_copy(x->last_result, sizeof(x->last_result),
		    b->reason);
	}
	return v;
}

/* One endpoint's row after the run; -1 on a database error. */
static int
save_endpoint(struct sqlite_state *st, long long now,
    const struct outcome_domain *od,
    const struct outcome_ep *e)
{
	struct st_endpoint se, *before;
	int		 rc;

	memset(&se, 0, sizeof(se));
	se.found = 1;
	/*
	 * A failure blamed on the checker's network is not the endpoint's:
	 * its counters stay as they were and its history gets no failed
	 * check.
	 */
	if (!e->check.counted && e->check.done) {
		if (!e->has_state)
			return 0;
		se.failures = e->failures_before;
		se.passes = e->passes_before;
		se.removed = e->removed_before;
		se.last_ok = e->last_ok_before;
		se.latency_ms = e->latency_before;
		se.uncounted = 1;
		/* Its address or CNAME target, as every run stores it. */
		return state_put_endpoint(st, od->cfg->name, e->cfg->name,
		    endpoint_target(e->cfg), endpoint_check(e->cfg),
		    e->cfg->priority, &se);
	}
	se.failures = e->failures;
	se.passes = e->passes;
	se.removed = e->removed;
	se.last_check = now;
	se.last_ok = e->check.ok;
	se.last_status = e->check.status;
	se.latency_ms = e->check.latency_ms;
	text_printable_copy(se.last_result, sizeof(se.last_result),
	    e->check.reason);
	se.before = before = checks_before(&e->check, now, &se.nbefore);
	rc = state_put_endpoint(st, od->cfg->name, e->cfg->name,
	    endpoint_target(e->cfg), endpoint_check(e->cfg), e->cfg->priority,
	    &se);
	free(before);
	return rc;
}

/*
 * Whether the published row of type k holds want already, as the file
 * stores it (the same TTL, flag and record text): the upsert would
 * change nothing, and cost as much as the rest of the domain's save.
 */
static int
pub_stored(const struct st_domain *st, int k, const struct rrset *want)
{
	const struct rrset *had;

	if (st == NULL || !st->has_pub[k])
		return 0;
	had = &st->pub[k];
	if (had->type != want->type ||
	    had->ttl != want->ttl ||
	    (had->proxied != 0) != (want->proxied != 0))
		return 0;
	if (want->type == RR_CNAME)
		return strcmp(had->target != NULL ? had->target : "",
		    want->target != NULL ? want->target : "") == 0;
	return addrset_equal(&had->addrs, &want->addrs);
}

/* One domain's rows after the run; -1 on a database error. */
static int
save_domain(struct sqlite_state *st, long long now,
    const struct outcome_domain *od)
{
	const struct publication *p = od->pub;
	struct st_domain sd;
	char		 error[ST_ERROR_MAX];
	size_t		 j, k;

	for (j = 0; j < od->neps; j++) {
		const struct outcome_ep *e = &od->eps[j];

		if (save_endpoint(st, now, od, e) == -1)
			return -1;
		/* Only a change is written: most runs see the same one. */
		if (e->cert_expires != e->cert_expires_before &&
		    e->cert_expires != 0 && state_put_cert(st, od->cfg->name,
		    e->cfg->name, e->cert_expires) == -1)
			return -1;
	}
	memset(&sd, 0, sizeof(sd));
	sd.found = 1;
	/* The fallback addresses are no tier's (failovers says so). */
	sd.has_tier = od->has_tier && !od->tier.fallback;
	sd.tier = od->tier.priority;
	sd.tier_rank = od->tier.located ? od->tier.rank : -1;
	snprintf(sd.tier_location, sizeof(sd.tier_location), "%s",
	    od->tier.location != NULL ? od->tier.location : "");
	sd.last_change = od->last_change;
	if (od->last_error != NULL) {
		text_printable_copy(error, sizeof(error), od->last_error);
		sd.last_error = error;
	}
	sd.unhealthy = od->unhealthy;
	sd.unsure = od->unsure;
	if (od->synced)
		for (k = 0; k < RR_NTYPES; k++)
			if (p->managed[k] &&
			    !pub_stored(p->st, (int)k, &p->want[k]) &&
			    state_put_published(st, od->cfg->name,
			    p->want[k].type, &p->want[k]) == -1)
				return -1;
	if (state_put_domain(st, od->cfg->name, od->cfg->provider->name,
	    od->cfg->pol.ttl, &sd) == -1)
		return -1;
	/* Written as it begins or ends: a steady run writes nothing. */
	if ((od->failover_since != od->failover_since_before ||
	    od->fail_open != od->fail_open_before) &&
	    state_put_failover(st, od->cfg->name, od->failover_since,
	    od->failover_reason, od->fail_open) == -1)
		return -1;
	/* For metricsFile: a counter that only grows, written on events. */
	if ((od->changed || od->failed) && state_count(st, od->cfg->name, "",
	    od->changed ? "dns_ok" : "dns_failed", 1) == -1)
		return -1;
	/* Done once DNS holds the best tier. */
	if (od->failback_now && od->synced &&
	    state_clear_failback(st, od->cfg->name) == -1)
		return -1;
	for (k = 0; k < p->nchanges; k++)
		if (state_add_change(st, now, od->cfg->name,
		    p->changes[k].type, od->cfg->pol.ttl, p->changes[k].old,
		    p->changes[k].new, p->tier.priority, p->tier.located ?
		    p->tier.rank : -1, p->tier.location, !p->failed,
		    p->failed ? p->error : NULL) == -1)
			return -1;
	return 0;
}

/* One event into the outbox, with a delivery for each of names. */
static int
add_event(void *arg, const struct outcome_event *ev, const char *body,
    const char *const *names, size_t n)
{
	return state_add_event(arg, ev->time, ev->domain->cfg->name,
	    event_type_str(ev->kind), ev->ep != NULL ? ev->ep->cfg->name :
	    NULL, body, names, n);
}

/*
 * The run's events into the outbox (ddup.ini(5), NOTIFICATIONS), and
 * what is delivered and old enough out of it; 0, or -1 on a database
 * error (the caller rolls back).
 */
static int
save_outbox(struct sqlite_state *st, const struct outcome *o,
    const struct config *cfg)
{
	const char **names;
	size_t j;
	int rc;

	rc = outbox_each(o, cfg, add_event, st);
	names = xcalloc(cfg->nnotifiers + 1, sizeof(*names));
	for (j = 0; j < cfg->nnotifiers; j++)
		names[j] = cfg->notifiers[j].name;
	if (rc == 0)
		rc = state_prune_events(st, outcome_time(o), cfg->history_ms,
		    names, cfg->nnotifiers);
	free((void *)names);
	return rc;
}

/* Everything the run learnt, in one transaction. */
static int
sqlite_save(struct state *base, const struct config *cfg,
    const struct outcome *o, char *err, size_t errlen)
{
	struct sqlite_state *st = sqlite_of(base);
	const struct outcome_control *c = outcome_control(o);
	long long	 now = outcome_time(o);
	size_t		 i;

	if (state_begin(st, err, errlen) == -1)
		return -1;
	for (i = 0; i < outcome_ndomains(o); i++)
		if (save_domain(st, now, outcome_domain(o, i)) == -1)
			goto dberr;
	if (c->url != NULL && state_put_control(st, c->since, c->result)
	    == -1)
		goto dberr;
	/* Before anything is sent: none is lost to a run killed then. */
	if (save_outbox(st, o, cfg) == -1)
		goto dberr;
	if (state_finish_run(st, now, cfg) == -1 ||
	    state_prune_requests(st, now) == -1)
		goto dberr;
	return state_commit(st, err, errlen);
dberr:
	snprintf(err, errlen, "%s", st->base.err);
	state_rollback(st);
	return -1;
}

/* The table's entries: each turns st into the SQLite open it is. */
static int
sqlite_mark_unsure(struct state *st, const char *domain,
    const char *provider, long ttl, char *err, size_t errlen)
{
	return st_sqlite_mark_unsure(sqlite_of(st), domain, provider, ttl, err,
	    errlen);
}

static int
sqlite_request_drain(struct state *st, const struct st_target *t, size_t n,
    long long now, long long until, char *err, size_t errlen)
{
	return st_sqlite_request_drain(sqlite_of(st), t, n, now, until, err,
	    errlen);
}

static int
sqlite_request_undrain(struct state *st, const struct st_target *t, size_t n,
    long long now, char *err, size_t errlen)
{
	return st_sqlite_request_undrain(sqlite_of(st), t, n, now, err,
	    errlen);
}

static int
sqlite_request_failback(struct state *st, const char *domain, long long now,
    char *err, size_t errlen)
{
	return st_sqlite_request_failback(sqlite_of(st), domain, now, err,
	    errlen);
}

static int
sqlite_recent_changes(struct state *st, size_t max, struct st_change **out,
    size_t *n)
{
	return st_sqlite_recent_changes(sqlite_of(st), max, out, n);
}

static int
sqlite_timeline(struct state *st, long long since, struct st_timeline *out)
{
	return st_sqlite_timeline(sqlite_of(st), since, out);
}

static int
sqlite_counters(struct state *st, struct st_counter **out, size_t *n)
{
	return st_sqlite_counters(sqlite_of(st), out, n);
}

static int
sqlite_notify_counts(struct state *st, const char *notifier,
    struct st_notify_counts *out)
{
	return st_sqlite_notify_counts(sqlite_of(st), notifier, out);
}

static int
sqlite_get_deliveries(struct state *st, const char *notifier,
    struct st_delivery **out, size_t *n)
{
	return st_sqlite_get_deliveries(sqlite_of(st), notifier, out, n);
}

static int
sqlite_put_delivery(struct state *st, const char *notifier,
    const struct st_delivery *d, long long now, int ok, int given_up,
    const char *error, char *err, size_t errlen)
{
	return st_sqlite_put_delivery(sqlite_of(st), notifier, d, now, ok,
	    given_up, error, err, errlen);
}

const struct state_backend state_sqlite = {
	.name = "sqlite",
	.handles = sqlite_handles,
	.open = sqlite_open,
	.close = sqlite_close,
	.load = sqlite_load,
	.save = sqlite_save,
	.mark_unsure = sqlite_mark_unsure,
	.request_drain = sqlite_request_drain,
	.request_undrain = sqlite_request_undrain,
	.request_failback = sqlite_request_failback,
	.recent_changes = sqlite_recent_changes,
	.timeline = sqlite_timeline,
	.counters = sqlite_counters,
	.notify_counts = sqlite_notify_counts,
	.get_deliveries = sqlite_get_deliveries,
	.put_delivery = sqlite_put_delivery,
};
