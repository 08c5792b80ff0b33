/*
 * The outcome of a run (see outcome.h): storage, iteration, and the
 * events of SPEC 10 worked out from each domain's before and after.
 */

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "outcome.h"

struct outcome {
	int			 kind;
	long long		 now;
	long long		 last_run;
	struct outcome_control	 control;
	struct outcome_fleet	 fleet;
	struct outcome_domain	*doms;
	size_t			 ndoms;
	struct outcome_event	*ev;
	size_t			 nev;
	int			 sealed;
};

struct outcome *
outcome_create(int kind, long long now, size_t ndomains)
{
	struct outcome *o = xcalloc(1, sizeof(*o));

	o->kind = kind;
	o->now = now;
	o->ndoms = ndomains;
	o->doms = xcalloc(ndomains ? ndomains : 1, sizeof(*o->doms));
	return o;
}

struct outcome_domain *
outcome_fill(struct outcome *o, size_t i, const struct domain_cfg *cfg)
{
	struct outcome_domain *d = &o->doms[i];

	d->cfg = cfg;
	d->decided = 1;
	d->neps = cfg->neps;
	d->eps = xcalloc(cfg->neps ? cfg->neps : 1, sizeof(*d->eps));
	return d;
}

const struct addrset *
outcome_previous(const struct outcome_domain *d, const char **cname)
{
	if (d->unchanged_dns) {
		*cname = d->published_cname;
		return &d->published;
	}
	*cname = d->previous_cname;
	return &d->previous;
}

struct outcome_control *
outcome_control_fill(struct outcome *o)
{
	return &o->control;
}

void
outcome_set_fleet(struct outcome *o, const struct outcome_fleet *f)
{
	o->fleet = *f;
}

const struct outcome_fleet *
outcome_fleet(const struct outcome *o)
{
	return &o->fleet;
}

void
outcome_set_last_run(struct outcome *o, long long ms)
{
	o->last_run = ms;
}

static void
add_event(struct outcome_event **ev, size_t *n, int kind, long long now,
    const struct outcome_domain *d, const struct outcome_ep *ep,
    const char *error)
{
	*ev = xrealloc(*ev, (*n + 1) * sizeof(**ev));
	(*ev)[*n] = (struct outcome_event){ .kind = kind, .time = now,
	    .domain = d, .ep = ep, .error = error };
	(*n)++;
}

/*
 * endpoint_down and endpoint_up follow the removed flag of SPEC 5, not
 * the shown state: a published endpoint's first failures only make it
 * failing, and a standby one that fails once has not been taken out of
 * anything yet.  So every endpoint_up answers an endpoint_down, and an
 * endpoint's first check (no stored state) is never news.  A removed
 * endpoint may come back while the controlUrl fails (passes count
 * then): that is said, or no endpoint_up would ever answer its down.
 */
void
outcome_domain_events(const struct outcome_domain *d, long long now,
    int control_failed, struct outcome_event **ev, size_t *n)
{
	size_t j;

	if (d->changed)
		add_event(ev, n, EVT_DNS_UPDATED, now, d, NULL, NULL);
	else if (d->failed)
		add_event(ev, n, EVT_DNS_UPDATE_FAILED, now, d, NULL, d->error);
	/* Once per loss: a domain already unhealthy says nothing more. */
	if (!control_failed && !d->any_healthy && !d->was_unhealthy)
		add_event(ev, n, EVT_ALL_UNHEALTHY, now, d, NULL, NULL);
	for (j = 0; j < d->neps; j++) {
		const struct outcome_ep *e = &d->eps[j];

		if (!e->check.counted || !e->has_state)
			continue;
		if (e->removed && !e->removed_before)
			add_event(ev, n, EVT_ENDPOINT_DOWN, now, d, e, NULL);
		else if (!e->removed && e->removed_before)
			add_event(ev, n, EVT_ENDPOINT_UP, now, d, e, NULL);
	}
}

void
outcome_seal(struct outcome *o)
{
	size_t i;

	if (o->sealed || o->kind == OUTCOME_STATUS)
		return;
	o->sealed = 1;
	for (i = 0; i < o->ndoms; i++)
		if (o->doms[i].cfg != NULL && o->doms[i].decided)
			outcome_domain_events(&o->doms[i], o->now,
			    o->control.failed || o->doms[i].round.void_all,
			    &o->ev, &o->nev);
}

void
outcome_free(struct outcome *o)
{
	size_t i;

	if (o == NULL)
		return;
	for (i = 0; i < o->ndoms; i++) {
		addrset_free(&o->doms[i].previous);
		addrset_free(&o->doms[i].published);
		free(o->doms[i].previous_cname);
		free(o->doms[i].published_cname);
		free(o->doms[i].eps);
	}
	free(o->doms);
	free(o->ev);
	free(o);
}

int
outcome_kind(const struct outcome *o)
{
	return o->kind;
}

long long
outcome_time(const struct outcome *o)
{
	return o->now;
}

long long
outcome_last_run(const struct outcome *o)
{
	return o->kind == OUTCOME_STATUS ? o->last_run : o->now;
}

const struct outcome_control *
outcome_control(const struct outcome *o)
{
	return &o->control;
}

size_t
outcome_ndomains(const struct outcome *o)
{
	return o->ndoms;
}

const struct outcome_domain *
outcome_domain(const struct outcome *o, size_t i)
{
	return i < o->ndoms ? &o->doms[i] : NULL;
}

size_t
outcome_nevents(const struct outcome *o)
{
	return o->nev;
}

const struct outcome_event *
outcome_event(const struct outcome *o, size_t i)
{
	return i < o->nev ? &o->ev[i] : NULL;
}
