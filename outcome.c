/*
 * The outcome of a run (see outcome.h): storage, iteration, and the
 * events of ddup.ini(5), NOTIFICATIONS, worked out from each domain's
 * before and after.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "decide.h"
#include "log.h"
#include "outcome.h"
#include "state.h"
#include "vote.h"

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
	struct outcome_checker	*checkers;	/* fleet.checkers, owned */
	char			**kept;		/* outcome_keep()'s */
	size_t			 nkept, capkept;
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
	size_t j;

	d->cfg = cfg;
	d->decided = 1;
	d->neps = cfg->neps;
	d->eps = xcalloc(cfg->neps ? cfg->neps : 1, sizeof(*d->eps));
	for (j = 0; j < cfg->neps; j++)
		d->eps[j].cfg = &cfg->eps[j];
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

void
outcome_ep_stored(struct outcome_ep *oe, const struct st_ep_snap *se,
    const struct st_drain *drain)
{
	oe->drained = drain != NULL;
	oe->drained_until = drain != NULL ? drain->until : 0;
	oe->has_state = se->found;
	oe->failures_before = se->failures;
	oe->passes_before = se->passes;
	oe->removed_before = se->removed;
	oe->last_ok_before = se->last_ok;
	oe->last_check_before = se->last_check;
	oe->last_result_before = se->last_result;
	oe->latency_before = se->latency_ms;
	oe->cert_expires_before = se->cert_expires;
	if (se->has_votes) {
		oe->has_votes = 1;
		oe->votes_pass = se->votes_pass;
		oe->votes_fail = se->votes_fail;
		oe->verdict = se->verdict;
	}
}

void
outcome_ep_settle(struct outcome_ep *oe, const struct dec_ep *de,
    const struct check_res *res, const struct vote_ep *v, long long now)
{
	if (oe->check.done) {
		oe->check.counted = de->counted;
		/* With a fleet, the round's verdict is the endpoint's result. */
		oe->check.ok = de->result != CR_NONE ? de->result == CR_PASS :
		    res->ok;
		oe->check.status = res->status;
		oe->check.latency_ms = res->latency_ms;
		if (oe->check.reason == NULL)
			oe->check.reason = res->reason;
		oe->check.cert_expires = res->cert_expires;
		/*
		 * The repeats counted are history; a fleet's round counts
		 * one result per slot, and keeps none of them.
		 */
		oe->check.before = de->failed_before > 0 ? res->before : NULL;
	}
	/* A check that saw none (refused, say) leaves the stored one. */
	oe->cert_expires = oe->check.cert_expires != 0 ?
	    oe->check.cert_expires : oe->cert_expires_before;
	if (v != NULL) {
		oe->has_votes = 1;
		oe->votes_pass = (long)v->npass;
		oe->votes_fail = (long)v->nfail;
		oe->verdict = v->verdict;
	}
	oe->state_before = de->state_before;
	oe->state = de->state;
	oe->healthy = de->healthy;
	oe->published = de->published;
	oe->failures = de->new_failures;
	oe->passes = de->new_passes;
	oe->removed = de->new_removed;
	if (oe->check.done) {
		oe->last_check = now;
		oe->last_result = oe->check.reason;
		oe->latency_ms = oe->check.latency_ms;
	} else if (oe->last_check_before != 0) {
		oe->last_check = oe->last_check_before;
		oe->last_result = oe->last_result_before;
		oe->latency_ms = oe->latency_before;
	} else
		oe->latency_ms = -1;
}

/* The stored tier as an outcome shows it. */
static struct log_tier
stored_tier(const struct domain_cfg *cfg, const struct st_domain *st)
{
	struct log_tier t;

	memset(&t, 0, sizeof(t));
	t.fallback = st->fail_open == ALLDOWN_FALLBACK;
	t.all_down = st->fail_open == ALLDOWN_ALL;
	t.priority = st->tier;
	t.located = cfg->pol.location != NULL;
	t.rank = st->tier_rank;
	t.location = st->tier_location[0] != '\0' ? st->tier_location : NULL;
	return t;
}

/* The sets held in DNS as the state file has them. */
static void
sets_from_state(const struct st_domain *st, struct addrset *addrs,
    char **cname)
{
	size_t i, k;

	for (k = 0; k < RR_NTYPES; k++) {
		if (!st->has_pub[k])
			continue;
		for (i = 0; i < st->pub[k].addrs.n; i++)
			addrset_add_addr(addrs, &st->pub[k].addrs.v[i]);
		if (st->pub[k].target != NULL && *cname == NULL)
			*cname = xstrdup(st->pub[k].target);
	}
}

/* The sets DNS held before an update was tried, from its changes. */
static void
sets_from_changes(const struct publication *p, struct addrset *addrs,
    char **cname)
{
	size_t k;

	for (k = 0; k < p->nchanges; k++) {
		if (p->changes[k].type == RR_CNAME) {
			if (p->changes[k].old[0] != '\0' && *cname == NULL)
				*cname = xstrdup(p->changes[k].old);
		} else {
			struct addrset one = { 0 };
			size_t i;

			if (addrset_parse(&one, p->changes[k].old) == 0)
				for (i = 0; i < one.n; i++)
					addrset_add_addr(addrs, &one.v[i]);
			addrset_free(&one);
		}
	}
}

/*
 * Why a domain left its preferred set: the first endpoint of that set
 * that the run does not publish, and its latest result.
 */
static char *
failover_why(const struct outcome_domain *od, size_t left)
{
	const struct outcome_ep *e;
	char	 buf[ST_ERROR_MAX];

	if (left >= od->neps)
		return NULL;
	e = &od->eps[left];
	if (e->drained)
		snprintf(buf, sizeof(buf), "%s: drained", e->cfg->name);
	else
		snprintf(buf, sizeof(buf), "%s: %s (%s)", e->cfg->name,
		    ep_state_str(e->state), e->last_result != NULL ?
		    e->last_result : "not checked");
	return xstrdup(buf);
}

/* degradedTtl, when the sets DNS holds were written with it; else 0. */
static long
stored_degraded_ttl(const struct domain_cfg *cfg, const struct st_domain *st)
{
	int k;

	for (k = 0; k < RR_NTYPES; k++)
		if (cfg->pol.degraded_ttl != 0 && st->has_pub[k] &&
		    !rrset_empty(&st->pub[k]) &&
		    st->pub[k].ttl == cfg->pol.degraded_ttl)
			return cfg->pol.degraded_ttl;
	return 0;
}

/*
 * The failover as DNS holds it after the run: what a run or a dry run
 * publishes (synced), else as stored.  It begins with the run that
 * leaves the preferred set, its reason then, and ends with the one
 * that publishes it again.
 */
static void
failover_settle(struct outcome_domain *od, int kind,
    const struct dec_domain *dec, const struct publication *pub,
    const struct st_domain *st, long long now, int learnt)
{
	int	 holds;

	od->fail_open = od->fail_open_before = st->fail_open;
	od->failover_since = od->failover_since_before = st->failover_since;
	od->failover_reason = st->failover_reason != NULL ?
	    xstrdup(st->failover_reason) : NULL;
	holds = kind == OUTCOME_RUN ? pub->synced :
	    kind == OUTCOME_DRY_RUN && learnt && od->has_want;
	if (!holds) {
		od->ttl_written = stored_degraded_ttl(od->cfg, st);
		return;
	}
	od->fail_open = dec->fail_open;
	od->ttl_written = pub->ttl;
	if (!dec->degraded) {
		od->failover_since = 0;
		free(od->failover_reason);
		od->failover_reason = NULL;
	} else if (od->failover_since == 0) {
		od->failover_since = now;
		free(od->failover_reason);
		od->failover_reason = failover_why(od, dec->left);
	}
}

/*
 * A dry run shows what DNS would hold and the stored last change and
 * error (it writes nothing); --status shows the stored state.
 */
void
outcome_domain_settle(struct outcome_domain *od, int kind,
    const struct dec_domain *dec, const struct publication *pub,
    const struct st_domain *st, long long now, int learnt, const char *why)
{
	const struct domain_cfg *cfg = od->cfg;
	size_t	 j;

	od->found = st->found;
	od->was_unhealthy = st->unhealthy;
	od->has_tier_before = st->has_tier;
	od->tier_before = stored_tier(cfg, st);
	od->status = dec->status;
	od->any_healthy = dec->any_healthy;
	od->waiting = dec->waiting;
	od->best.priority = dec->best.priority;
	od->best.located = cfg->pol.location != NULL;
	od->best.rank = dec->best.rank;
	od->best.location = domain_rank_location(cfg, dec->best.rank);
	od->failback_now = dec->failback_now;
	od->has_tier = od->has_tier_before;
	od->tier = od->tier_before;
	od->last_change = st->last_change;
	od->last_error = st->last_error;
	od->unhealthy = st->unhealthy;
	od->unsure = st->unsure;
	od->why = why != NULL && why[0] ? why : NULL;
	if (kind != OUTCOME_STATUS) {
		od->pub = pub;
		od->has_want = dec->any_healthy ||
		    dec->fail_open != ALLDOWN_KEEP;
		od->want = pub->tier;
		od->synced = pub->synced;
		od->changed = pub->wrote;
		od->failed = pub->failed;
		od->error = pub->failed ? pub->error : NULL;
	}
	if (kind == OUTCOME_RUN) {
		/* A void round (ddup-check(8), SEVERAL CHECKERS) learnt nothing. */
		if (learnt)
			od->unhealthy = !dec->any_healthy;
		/* An update that failed may still have reached DNS. */
		if (pub->synced)
			od->unsure = 0;
		else if (pub->nchanges > 0)
			od->unsure = 1;
		if (pub->synced) {
			od->has_tier = 1;
			od->tier = pub->tier;
			od->last_error = NULL;
			if (pub->wrote)
				od->last_change = now;
		} else if (pub->failed)
			od->last_error = pub->error;
	} else if (kind == OUTCOME_DRY_RUN && learnt && od->has_want) {
		od->has_tier = 1;
		od->tier = pub->tier;
	}
	failover_settle(od, kind, dec, pub, st, now, learnt);
	/* The fallback addresses are no endpoint's: published as a set. */
	if (od->fail_open == ALLDOWN_FALLBACK)
		for (j = 0; j < cfg->pol.fallback.n; j++)
			addrset_add_addr(&od->published,
			    &cfg->pol.fallback.v[j]);
	for (j = 0; j < od->neps; j++) {
		const struct outcome_ep *oe = &od->eps[j];

		if (oe->published && oe->cfg->cname != NULL) {
			free(od->published_cname);
			od->published_cname = xstrdup(oe->cfg->cname);
		} else if (oe->published) {
			/* Sized once: the outcome is kept to the end. */
			if (od->published.cap == 0)
				addrset_reserve(&od->published, od->neps);
			addrset_add_addr(&od->published, &oe->cfg->ip);
		}
	}
	/* DNS before: unchanged, or what the update replaced, or stored. */
	if (od->synced && !od->changed)
		od->unchanged_dns = 1;
	else if (kind != OUTCOME_STATUS && pub->nchanges > 0)
		sets_from_changes(pub, &od->previous, &od->previous_cname);
	else
		sets_from_state(st, &od->previous, &od->previous_cname);
}

const char *
outcome_keep(struct outcome *o, char *s)
{
	if (s == NULL)
		return NULL;
	if (o->nkept == o->capkept) {
		o->capkept = o->capkept > 0 ? 2 * o->capkept : 64;
		o->kept = xrealloc(o->kept, o->capkept * sizeof(*o->kept));
	}
	o->kept[o->nkept++] = s;
	return s;
}

void
outcome_keep_checks(struct outcome *o, struct check_res *b)
{
	struct check_res *next;

	/* Each a malloc()ed result with its own text: free() does. */
	for (; b != NULL; b = next) {
		next = b->before;
		outcome_keep(o, b->text);
		outcome_keep(o, (char *)(void *)b);
	}
}

void
outcome_ep_verdict(struct outcome *o, struct outcome_ep *oe,
    const struct vote_ep *v, const struct check_res *res, size_t heard,
    long quorum)
{
	char	 why[96];

	why[0] = '\0';
	if (v->verdict == VERDICT_VOID)
		snprintf(why, sizeof(why), "void round (%zu pass, %zu fail, "
		    "quorum %ld)", v->npass, v->nfail, quorum);
	else if ((v->verdict == VERDICT_PASS) != res->ok)
		snprintf(why, sizeof(why), "%zu of %zu checkers saw it %s "
		    "(this one: %s)", v->verdict == VERDICT_PASS ? v->npass :
		    v->nfail, heard, v->verdict == VERDICT_PASS ? "pass" :
		    "fail", res->reason);
	/* 96 bytes in every endpoint were a twentieth of a run's heap. */
	if (why[0] != '\0')
		oe->check.reason = outcome_keep(o, xstrdup(why));
}

void
outcome_round_set(struct outcome_domain *od, long long slot, long long at,
    const char *checker, long heard, int void_all)
{
	od->round.has = 1;
	od->round.slot = slot;
	od->round.at = at;
	od->round.checker = checker;
	od->round.heard = heard;
	od->round.void_all = void_all;
}

void
outcome_round_stored(struct outcome_domain *od, const struct st_last_round *lr)
{
	outcome_round_set(od, lr->slot, lr->at, lr->checker, lr->heard,
	    lr->void_all);
}

void
outcome_control_set(struct outcome *o, const char *url, int failed,
    long long since, const char *result)
{
	o->control.url = url;
	o->control.failed = failed;
	o->control.since = since;
	o->control.result = result;
}

void
outcome_fleet_from(struct outcome *o, long quorum, long long slot,
    const struct st_checker *c, size_t n)
{
	size_t	 i, j;

	free(o->checkers);
	o->checkers = xcalloc(n + 1, sizeof(*o->checkers));
	for (i = 0; i < n; i++) {
		struct outcome_checker *oc = &o->checkers[i];

		oc->name = c[i].name;
		oc->at = c[i].at;
		oc->slot = c[i].slot;
		oc->in_step = c[i].in_step;
		for (j = 0; c[i].results != NULL && j < c[i].nresults; j++) {
			oc->passes += c[i].results[j] == VOTE_PASS;
			oc->failures += c[i].results[j] == VOTE_FAIL;
		}
	}
	o->fleet.shared = 1;
	o->fleet.quorum = quorum;
	o->fleet.slot = slot;
	o->fleet.checkers = o->checkers;
	o->fleet.ncheckers = n;
}

void
outcome_log_transitions(const struct outcome *o,
    const struct outcome_domain *od)
{
	size_t	 j;

	for (j = 0; j < od->neps; j++) {
		const struct outcome_ep *e = &od->eps[j];

		if (e->state == e->state_before)
			continue;
		/* A first pass is not news; a first failure is. */
		if (e->state_before == EP_UNKNOWN && e->state != EP_DOWN)
			continue;
		logx(e->state == EP_DOWN ? LOG_WARN : LOG_INFO, od->cfg->name,
		    e->cfg->name, "%s -> %s: %s", ep_state_str(e->state_before),
		    ep_state_str(e->state), e->check.reason);
	}
	for (j = 0; j < od->neps; j++) {
		const struct outcome_ep *e = &od->eps[j];
		char when[40];

		if (!outcome_cert_entering(od, e, o->now))
			continue;
		iso_time(e->cert_expires * 1000, when, sizeof(when));
		logx(LOG_WARN, od->cfg->name, e->cfg->name, "certificate "
		    "expires %s, within certWarn", when);
	}
	/* A run that blames its own network says so once, for all. */
	if (o->control.failed || od->round.void_all)
		return;
	if (!od->any_healthy && !od->was_unhealthy && od->has_want)
		logx(LOG_ERR, od->cfg->name, NULL, "no healthy endpoint: "
		    "allDown = %s published", od->pub != NULL &&
		    od->pub->tier.fallback ? "fallback" : "all");
	else if (!od->any_healthy && !od->was_unhealthy)
		logx(LOG_ERR, od->cfg->name, NULL, "no healthy endpoint: DNS "
		    "left as it is");
	else if (od->any_healthy && od->was_unhealthy)
		logx(LOG_INFO, od->cfg->name, NULL, "healthy endpoints again");
}

int
outcome_cert_within(const struct outcome_domain *d, const struct outcome_ep *e,
    long long now)
{
	long long warn;

	if (e->cert_expires == 0)
		return 0;
	warn = d->cfg->pol.cert_warn_ms;
	return warn > 0 && e->cert_expires * 1000 - now < warn;
}

int
outcome_cert_entering(const struct outcome_domain *d,
    const struct outcome_ep *e, long long now)
{
	if (!e->check.done || e->check.cert_expires == 0 ||
	    !outcome_cert_within(d, e, now))
		return 0;
	/* Within already at the check before: said then. */
	return e->cert_expires_before == 0 || e->last_check_before == 0 ||
	    e->cert_expires_before * 1000 - e->last_check_before >=
	    d->cfg->pol.cert_warn_ms;
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
 * endpoint_down and endpoint_up follow the removed flag of
 * ddup-check(8), FAILOVER RULES, not the shown state: a published
 * endpoint's first failures only make it failing, and a standby one
 * that fails once has not been taken out of anything yet.  So every
 * endpoint_up answers an endpoint_down, and an endpoint's first check
 * (no stored state) is never news.  A removed endpoint may come back
 * while the controlUrl fails (passes count then): that is said, or no
 * endpoint_up would ever answer its down.
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
	for (j = 0; j < d->neps; j++)
		if (outcome_cert_entering(d, &d->eps[j], now))
			add_event(ev, n, EVT_CERT_EXPIRING, now, d, &d->eps[j],
			    NULL);
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
		free(o->doms[i].failover_reason);
		free(o->doms[i].eps);
	}
	free(o->doms);
	free(o->ev);
	free(o->checkers);
	for (i = 0; i < o->nkept; i++)
		free(o->kept[i]);
	free(o->kept);
	free(o);
}

const char *
outcome_ep_ip(const struct outcome_ep *e)
{
	return e->cfg->cname == NULL ? e->cfg->ip.s : NULL;
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
