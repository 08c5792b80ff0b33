/*
 * The failover decision of ddup-check(8), FAILOVER RULES.  Pure: no I/O, no
 * clock, no allocation, so tests/unit/test_decide.c can replay every
 * documented example as a table of runs.
 */

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "decide.h"
#include "rrset.h"
#include "state.h"
#include "util.h"

/*
 * One check into the counters f, p and removed; known: the endpoint
 * has counters (stored, or from an earlier check of this run).
 */
static void
count_check(const struct dec_domain *d, int result, int known, long *f,
    long *p, int *removed)
{
	/* The state file is outside data: a counter at its top stays. */
	if (result == CR_PASS) {
		if (*p < LONG_MAX)
			(*p)++;
		*f = 0;
		if (*removed && *p >= d->recover_after)
			*removed = 0;
		return;
	}
	if (*f < LONG_MAX)
		(*f)++;
	*p = 0;
	/*
	 * The first check of an endpoint without state makes it not
	 * healthy but never removed, whatever attempts is, so that its
	 * next pass publishes it (FAILOVER RULES).
	 */
	if (*f >= d->attempts && known)
		*removed = 1;
}

/*
 * Counters after this run's checks (or as stored, without a check):
 * its failed repeats first, in order, then its result.
 */
static void
apply_check(const struct dec_domain *d, struct dec_ep *e)
{
	long	 f = 0, p = 0, k;
	int	 removed = 0, latest_ok = 0, known = e->has_state;

	if (e->has_state) {
		f = e->failures;
		p = e->passes;
		removed = e->removed;
	}
	/*
	 * A failed controlUrl blames the checker's own network: failures
	 * of this run are not the endpoints' (passes still are).
	 */
	e->counted = e->result == CR_PASS ||
	    (e->result == CR_FAIL && !d->control_failed);
	if (e->counted && !d->control_failed)
		for (k = 0; k < e->failed_before; k++) {
			count_check(d, CR_FAIL, known, &f, &p, &removed);
			known = 1;
		}
	if (e->counted) {
		count_check(d, e->result, known, &f, &p, &removed);
		latest_ok = e->result == CR_PASS;
	} else
		latest_ok = e->has_state && e->last_ok;
	e->new_failures = f;
	e->new_passes = p;
	e->new_removed = removed;
	/*
	 * A published endpoint keeps its place through attempts - 1
	 * failures; one outside DNS needs a passing latest check.  With no
	 * stored state nothing counts as published (FAILOVER RULES: a first failing
	 * check means not healthy).
	 */
	e->healthy = !removed && ((e->has_state && e->published) || latest_ok);
}

long
dec_repeats(const struct dec_domain *d, const struct dec_ep *e)
{
	long	 left;

	if (d->control_failed || !e->has_state || e->removed || e->drained ||
	    !(e->published || e->last_ok))
		return 0;
	left = d->attempts - 1 - e->failures;
	return left > 0 ? left : 0;
}

int
tier_cmp(struct tier a, struct tier b)
{
	if (a.rank != b.rank)
		return a.rank < b.rank ? -1 : 1;
	if (a.priority != b.priority)
		return a.priority < b.priority ? -1 : 1;
	return 0;
}

static struct tier
ep_tier(const struct dec_ep *e)
{
	struct tier t = { e->rank, e->priority };

	return t;
}

/*
 * May be published: healthy and not drained.  With all, every endpoint
 * may: the choice as it would be with all healthy and none drained,
 * the preferred one (degradedTtl).
 */
static int
usable(const struct dec_ep *e, int all)
{
	return all || (e->healthy && !e->drained);
}

static size_t
tier_count(const struct dec_ep *eps, size_t n, struct tier t, int all)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += usable(&eps[i], all) &&
		    tier_cmp(ep_tier(&eps[i]), t) == 0;
	return c;
}

/* The best tier with a usable endpoint that is worse than *after (NULL: any). */
static int
next_tier(const struct dec_ep *eps, size_t n, const struct tier *after,
    int all, struct tier *out)
{
	struct tier	 t, best = { 0, 0 };
	size_t		 i;
	int		 found = 0;

	for (i = 0; i < n; i++) {
		if (!usable(&eps[i], all))
			continue;
		t = ep_tier(&eps[i]);
		if (after != NULL && tier_cmp(t, *after) <= 0)
			continue;
		if (!found || tier_cmp(t, best) < 0)
			best = t;
		found = 1;
	}
	*out = best;
	return found;
}

/*
 * The tier automatic failback takes: the first with min usable
 * endpoints, else the first with any.  *enough says which.  Tiers are
 * walked best first, so this costs one pass per tier passed over.
 */
static int
auto_tier(const struct dec_ep *eps, size_t n, size_t min, int all,
    struct tier *out, int *enough)
{
	struct tier	 t, first = { 0, 0 };
	int		 ok, have = 0;

	*enough = 0;
	for (ok = next_tier(eps, n, NULL, all, &t); ok;
	    ok = next_tier(eps, n, &t, all, &t)) {
		if (!have)
			first = t;
		have = 1;
		if (tier_count(eps, n, t, all) >= min) {
			*out = t;
			*enough = 1;
			return 1;
		}
	}
	*out = first;
	return have;
}

/* With publish one: the endpoint of tier t to publish; keep: the one in DNS. */
static size_t
pick_one(const struct dec_ep *eps, size_t n, struct tier t, int keep, int all)
{
	size_t i, first = n;

	for (i = 0; i < n; i++) {
		if (!usable(&eps[i], all) || tier_cmp(ep_tier(&eps[i]), t) != 0)
			continue;
		if (keep && eps[i].published)
			return i;
		if (first == n)
			first = i;
	}
	return first;
}

/*
 * allDown = all: every endpoint of the best tier that is not drained,
 * healthy or not; with publish one only the first of it in file order
 * (an operator who publishes one server at a time, a primary database
 * say, does not get two because the checks fail).  0: every endpoint
 * is drained, nothing to publish.
 */
static int
fail_open_all(struct dec_domain *d, struct dec_ep *eps, size_t n)
{
	struct tier	 best = { 0, 0 };
	size_t		 i;
	int		 found = 0, marked = 0;

	for (i = 0; i < n; i++)
		if (!eps[i].drained && (!found ||
		    tier_cmp(ep_tier(&eps[i]), best) < 0)) {
			best = ep_tier(&eps[i]);
			found = 1;
		}
	for (i = 0; found && i < n; i++)
		if (!eps[i].drained && tier_cmp(ep_tier(&eps[i]), best) == 0 &&
		    !(d->publish_one && marked))
			eps[i].publish = marked = 1;
	if (found) {
		d->has_tier = 1;
		d->tier = best;
	}
	return found;
}

/* allDown, when nothing is healthy and the run's checks count. */
static void
apply_all_down(struct dec_domain *d, struct dec_ep *eps, size_t n)
{
	d->fail_open = ALLDOWN_KEEP;
	if (d->any_healthy || d->control_failed || d->void_round)
		return;
	if (d->all_down == ALLDOWN_ALL && fail_open_all(d, eps, n))
		d->fail_open = ALLDOWN_ALL;
	else if (d->all_down == ALLDOWN_FALLBACK)
		d->fail_open = ALLDOWN_FALLBACK;
}

/*
 * Whether the set chosen is not the preferred one: the one chosen with
 * every endpoint healthy and none drained, by automatic failback; and
 * the first endpoint of that set left out.  A set published by allDown
 * is never preferred, even when allDown = all publishes the addresses
 * the preferred set has: they are there because nothing passes, and
 * clients should ask again soon.
 */
static void
set_degraded(struct dec_domain *d, const struct dec_ep *eps, size_t n,
    size_t min)
{
	struct tier	 pref;
	size_t		 i, pick = n;
	int		 enough, in;

	d->degraded = !d->any_healthy;
	d->left = n;
	if (!auto_tier(eps, n, min, 1, &pref, &enough))
		return;			/* no endpoint at all */
	if (d->publish_one)
		pick = pick_one(eps, n, pref, 0, 1);
	for (i = 0; i < n; i++) {
		in = tier_cmp(ep_tier(&eps[i]), pref) == 0 &&
		    (!d->publish_one || i == pick);
		if (in == (eps[i].publish != 0) && d->any_healthy)
			continue;
		d->degraded = 1;
		if (in && d->left == n)
			d->left = i;
	}
}

void
decide(struct dec_domain *d, struct dec_ep *eps, size_t n)
{
	struct tier	 best;
	size_t		 i, min, pick = n, best_pick = n, cur;
	int		 manual, enough;

	min = d->min_healthy > 1 ? (size_t)d->min_healthy : 1;
	manual = d->failback_manual && !d->failback_now;
	d->any_healthy = 0;
	d->has_tier = 0;
	d->waiting = 0;
	d->fail_open = ALLDOWN_KEEP;
	d->degraded = 0;
	d->left = n;
	memset(&d->tier, 0, sizeof(d->tier));
	memset(&d->best, 0, sizeof(d->best));
	for (i = 0; i < n; i++)
		apply_check(d, &eps[i]);
	for (i = 0; i < n; i++)
		eps[i].publish = 0;
	if (auto_tier(eps, n, min, 0, &best, &enough)) {
		d->any_healthy = 1;
		d->has_tier = 1;
		d->tier = best;
		/*
		 * Manual failback stays on the current tier while it would
		 * do: as many usable endpoints as minHealthy asks, or any
		 * when no tier has that many.
		 */
		if (manual && d->has_current &&
		    (cur = tier_count(eps, n, d->current, 0)) > 0 &&
		    (cur >= min || !enough))
			d->tier = d->current;
		if (d->publish_one) {
			pick = pick_one(eps, n, d->tier, manual, 0);
			best_pick = pick_one(eps, n, best, 0, 0);
		}
		d->waiting = tier_cmp(d->tier, best) != 0 || pick != best_pick;
		d->best = best;
	}
	for (i = 0; i < n; i++)
		eps[i].publish = d->has_tier && usable(&eps[i], 0) &&
		    tier_cmp(ep_tier(&eps[i]), d->tier) == 0 &&
		    (!d->publish_one || i == pick);
	apply_all_down(d, eps, n);
	set_degraded(d, eps, n, min);
	decide_states(d, eps, n);
}

static int
ep_state(const struct dec_ep *e)
{
	if (!e->has_state && !e->counted)
		return EP_UNKNOWN;
	if (e->drained)
		return EP_DRAINED;
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
		if (usable(&eps[i], 0))
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

void
decide_before(const struct dec_domain *d, struct dec_ep *eps, size_t n)
{
	struct dec_ep		*tmp;
	struct dec_domain	 dd = *d;
	size_t			 j;

	tmp = xcalloc(n + 1, sizeof(*tmp));
	memcpy(tmp, eps, n * sizeof(*tmp));
	for (j = 0; j < n; j++)
		tmp[j].drained = eps[j].drained_before;
	decide(&dd, tmp, n);
	for (j = 0; j < n; j++)
		eps[j].state_before = tmp[j].state;
	free(tmp);
}

void
dec_domain_load(struct dec_domain *d, const struct domain_policy *pol,
    const struct st_domain *st, int failback_now)
{
	d->attempts = pol->attempts;
	d->recover_after = pol->recover_after;
	d->min_healthy = pol->min_healthy;
	d->publish_one = pol->publish_one;
	d->failback_manual = pol->failback_manual;
	d->has_current = st->has_tier;
	d->current.priority = st->tier;
	d->current.rank = st->tier_rank >= 0 ? st->tier_rank : 0;
	d->failback_now = failback_now;
	d->all_down = pol->all_down;
}

/* Whether the set last published holds e's address or CNAME. */
static int
stored_has(const struct st_domain *st, const struct endpoint_cfg *e)
{
	if (e->cname != NULL)
		return st->has_pub[RR_CNAME] && st->pub[RR_CNAME].target !=
		    NULL && strcasecmp(st->pub[RR_CNAME].target, e->cname) == 0;
	return st->has_pub[rrtype_of_family(e->ip.family)] &&
	    addrset_contains(&st->pub[rrtype_of_family(e->ip.family)].addrs,
	    e->ip.s);
}

void
dec_ep_load(struct dec_ep *e, const struct endpoint_cfg *cfg,
    const struct st_ep_snap *se, const struct st_domain *st, int drained,
    int drained_before)
{
	e->priority = cfg->priority;
	e->rank = cfg->rank;
	e->drained = drained;
	e->drained_before = drained_before;
	e->has_state = se->found;
	e->failures = se->failures;
	e->passes = se->passes;
	e->removed = se->removed;
	e->last_ok = se->last_ok;
	/*
	 * An endpoint that allDown put in DNS is not published as healthy:
	 * it keeps its place there only until something passes, and its
	 * next failure must not count as its first in DNS.
	 */
	e->published = st->fail_open == ALLDOWN_KEEP && stored_has(st, cfg);
	e->result = CR_NONE;
	e->failed_before = 0;
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
