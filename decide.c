/*
 * The failover decision of SPEC section 5.  Pure: no I/O, no clock, no
 * allocation, so tests/unit/test_decide.c can replay every documented
 * example as a table of runs.
 */

#include <stddef.h>

#include "decide.h"

/* Counters after this run's check (or as stored, without a check). */
static void
apply_check(const struct dec_domain *d, struct dec_ep *e)
{
	long	 f = 0, p = 0;
	int	 removed = 0, latest_ok = 0;

	if (e->has_state) {
		f = e->failures;
		p = e->passes;
		removed = e->removed;
	}
	switch (e->result) {
	case CR_PASS:
		p++;
		f = 0;
		if (removed && p >= d->recover_after)
			removed = 0;
		latest_ok = 1;
		break;
	case CR_FAIL:
		f++;
		p = 0;
		if (f >= d->attempts)
			removed = 1;
		break;
	default:
		latest_ok = e->has_state && e->last_ok;
		break;
	}
	e->new_failures = f;
	e->new_passes = p;
	e->new_removed = removed;
	/*
	 * A published endpoint keeps its place through attempts - 1
	 * failures; one outside DNS needs a passing latest check.  With no
	 * stored state nothing counts as published (SPEC: a first failing
	 * check means not healthy).
	 */
	e->healthy = !removed && ((e->has_state && e->published) || latest_ok);
}

void
decide(struct dec_domain *d, struct dec_ep *eps, size_t n)
{
	size_t	 i;

	d->any_healthy = 0;
	d->has_tier = 0;
	d->tier = 0;
	for (i = 0; i < n; i++) {
		apply_check(d, &eps[i]);
		if (!eps[i].healthy)
			continue;
		if (!d->any_healthy || eps[i].priority < d->tier)
			d->tier = eps[i].priority;
		d->any_healthy = 1;
		d->has_tier = 1;
	}
	for (i = 0; i < n; i++)
		eps[i].publish = eps[i].healthy && eps[i].priority == d->tier;
	decide_states(d, eps, n);
}

static int
ep_state(const struct dec_ep *e)
{
	if (!e->has_state && e->result == CR_NONE)
		return EP_UNKNOWN;
	if (e->new_removed)
		return e->new_passes > 0 ? EP_RECOVERING : EP_DOWN;
	if (!e->healthy)
		return EP_DOWN;
	if (!e->published)
		return EP_STANDBY;
	return e->new_failures > 0 ? EP_FAILING : EP_ACTIVE;
}

void
decide_states(struct dec_domain *d, struct dec_ep *eps, size_t n)
{
	size_t	 i;
	int	 known = 0, all_fine = 1, healthy = 0;

	for (i = 0; i < n; i++) {
		eps[i].state = ep_state(&eps[i]);
		if (eps[i].state != EP_UNKNOWN)
			known = 1;
		if (eps[i].healthy)
			healthy = 1;
		if (eps[i].state != EP_ACTIVE && eps[i].state != EP_STANDBY)
			all_fine = 0;
	}
	if (!known)
		d->status = DOM_UNKNOWN;
	else if (!healthy)
		d->status = DOM_UNHEALTHY;
	else if (all_fine)
		d->status = DOM_HEALTHY;
	else
		d->status = DOM_WARNING;
}

const char *
ep_state_str(int s)
{
	static const char *const names[] = {
		"unknown", "active", "standby", "failing", "down",
		"recovering", "drained"
	};

	if (s < 0 || s > EP_DRAINED)
		return "unknown";
	return names[s];
}

const char *
dom_status_str(int s)
{
	static const char *const names[] = {
		"unknown", "healthy", "warning", "unhealthy"
	};

	if (s < 0 || s > DOM_UNHEALTHY)
		return "unknown";
	return names[s];
}
