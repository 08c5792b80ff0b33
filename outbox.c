/*
 * The notification outbox's part of a run's outcome: each event of
 * SPEC 10 as its JSON, with the [notify] sections that want it, stored
 * in the run's transaction before anything is sent (notify.c sends).
 */

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "decide.h"
#include "log.h"
#include "notify.h"
#include "outbox.h"
#include "outcome.h"

/* A set of the outcome as the event's list: addresses, then a CNAME. */
static const char **
set_list(const struct addrset *addrs, const char *cname, size_t *n)
{
	const char **v = xcalloc(addrs->n + 2, sizeof(*v));
	size_t i;

	for (i = 0; i < addrs->n; i++)
		v[i] = addrs->v[i].s;
	if (cname != NULL)
		v[i++] = cname;
	*n = i;
	return v;
}

/* The event JSON of ev; NULL (logged) when it cannot be built. */
static char *
event_body(const struct outcome_event *oe)
{
	const struct outcome_domain *d = oe->domain;
	const struct addrset *pset;
	const char **prev, **now, *pcname;
	struct event_ep *eps;
	struct event ev;
	char *body;
	size_t j;

	memset(&ev, 0, sizeof(ev));
	ev.type = oe->kind;
	ev.domain = d->cfg->name;
	ev.time = oe->time;
	ev.endpoint = oe->ep != NULL ? oe->ep->cfg->name : NULL;
	pset = outcome_previous(d, &pcname);
	prev = set_list(pset, pcname, &ev.nprevious);
	now = set_list(&d->published, d->published_cname, &ev.npublished);
	ev.previous = prev;
	ev.published = now;
	ev.has_previous_tier = d->has_tier_before;
	ev.previous_tier = d->tier_before.priority;
	ev.has_tier = d->has_tier;
	ev.tier = d->tier.priority;
	ev.error = oe->error;
	eps = xcalloc(d->neps + 1, sizeof(*eps));
	for (j = 0; j < d->neps; j++) {
		const struct outcome_ep *e = &d->eps[j];

		eps[j].name = e->cfg->name;
		eps[j].ip = endpoint_target(e->cfg);
		eps[j].priority = e->cfg->priority;
		eps[j].healthy = e->healthy;
		eps[j].state = ep_state_str(e->state);
		eps[j].last_result = e->check.done ? e->check.reason : NULL;
	}
	ev.eps = eps;
	ev.neps = d->neps;
	if ((body = event_json(&ev)) == NULL)
		logx(LOG_ERR, ev.domain, ev.endpoint, "cannot build the %s "
		    "event", event_type_str(ev.type));
	free(prev);
	free(now);
	free(eps);
	return body;
}

int
outbox_each(const struct outcome *o, const struct config *cfg,
    outbox_fn fn, void *arg)
{
	const char **names;
	char *body;
	size_t i, j, n;
	int rc = 0;

	names = xcalloc(cfg->nnotifiers + 1, sizeof(*names));
	/* Without a [notify] section no JSON is built at all. */
	for (i = 0; i < outcome_nevents(o) && cfg->nnotifiers > 0 && rc == 0;
	    i++) {
		const struct outcome_event *ev = outcome_event(o, i);

		for (n = 0, j = 0; j < cfg->nnotifiers; j++)
			if (notify_wants(&cfg->notifiers[j], ev->kind))
				names[n++] = cfg->notifiers[j].name;
		if ((body = event_body(ev)) == NULL)
			continue;
		rc = fn(arg, ev, body, names, n);
		free(body);
	}
	free((void *)names);
	return rc;
}
