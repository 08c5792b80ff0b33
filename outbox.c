/*
 * The notification outbox's part of a run's outcome: each event of
 * ddup.ini(5), NOTIFICATIONS as its JSON, with the [notify] sections that
 * want it, for the state's backend to store in the run's transaction
 * before anything is sent (notify.c sends).  It calls no state: the
 * backends call it.
 */

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config.h"
#include "decide.h"
#include "log.h"
#include "outbox.h"
#include "outcome.h"
#include "util.h"

/* A text, printable, or null. */
static json_t *
text(const char *s)
{
	char *copy;
	json_t *j;

	if (s == NULL)
		return json_null();
	copy = xstrdup(s);
	text_printable(copy);
	j = json_string(copy);
	free(copy);
	return j != NULL ? j : json_null();
}

static json_t *
texts(const char *const *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, text(v[i]));
	return a;
}

char *
event_json(const struct event *ev)
{
	json_t *o, *eps, *e;
	char when[32], *s;
	size_t i;

	o = json_object();
	json_object_set_new(o, "event", json_string(event_type_str(ev->type)));
	json_object_set_new(o, "domain", text(ev->domain));
	iso_time(ev->time, when, sizeof(when));
	json_object_set_new(o, "time", json_string(when));
	if (ev->endpoint != NULL)
		json_object_set_new(o, "endpoint", text(ev->endpoint));
	json_object_set_new(o, "published", texts(ev->published,
	    ev->npublished));
	json_object_set_new(o, "previous", texts(ev->previous,
	    ev->nprevious));
	json_object_set_new(o, "tier", ev->fallback ? json_string("fallback") :
	    ev->has_tier ? json_integer(ev->tier) : json_null());
	json_object_set_new(o, "previousTier", ev->previous_fallback ?
	    json_string("fallback") : ev->has_previous_tier ?
	    json_integer(ev->previous_tier) : json_null());
	eps = json_array();
	for (i = 0; i < ev->neps; i++) {
		e = json_object();
		json_object_set_new(e, "name", text(ev->eps[i].name));
		json_object_set_new(e, "ip", text(ev->eps[i].ip));
		json_object_set_new(e, "priority",
		    json_integer(ev->eps[i].priority));
		json_object_set_new(e, "healthy",
		    json_boolean(ev->eps[i].healthy));
		json_object_set_new(e, "state", text(ev->eps[i].state));
		json_object_set_new(e, "lastResult",
		    text(ev->eps[i].last_result));
		if (ev->eps[i].cert_expires != 0) {
			iso_time(ev->eps[i].cert_expires * 1000, when,
			    sizeof(when));
			json_object_set_new(e, "certExpires",
			    json_string(when));
		}
		json_array_append_new(eps, e);
	}
	json_object_set_new(o, "endpoints", eps);
	json_object_set_new(o, "error", text(ev->error));
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return s;
}

int
outbox_wants(const struct notify_cfg *n, int type)
{
	return type >= 0 && type < EVT_COUNT && (n->events & (1u << type)) != 0;
}


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
	ev.fallback = d->fail_open == ALLDOWN_FALLBACK;
	ev.previous_fallback = d->fail_open_before == ALLDOWN_FALLBACK;
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
		eps[j].cert_expires = e->cert_expires;
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
			if (outbox_wants(&cfg->notifiers[j], ev->kind))
				names[n++] = cfg->notifiers[j].name;
		if ((body = event_body(ev)) == NULL)
			continue;
		rc = fn(arg, ev, body, names, n);
		free(body);
	}
	free((void *)names);
	return rc;
}
