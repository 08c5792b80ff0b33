/*
 * One run of ddup-check: load the state, check every endpoint, decide
 * per domain, publish where the set changed, save everything in one
 * transaction.  Also --status and --dry-run, which share the loading and
 * the report.
 */

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "config.h"
#include "dashboard.h"
#include "decide.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "outcome.h"
#include "provider.h"
#include "publish.h"
#include "run.h"
#include "save.h"
#include "state.h"
#include "status.h"
#include "util.h"
#include "vote.h"

/*
 * One endpoint during a run.  Of what is stored, decide() takes the
 * counters (in dep); a report also shows the last check, kept only when
 * there is a report to make (--status, --dry-run): ten thousand copies
 * of a stored row were a tenth of a run's memory.
 */
struct ep_run {
	const struct endpoint_cfg *cfg;
	struct check_res	 res;	/* this run's check, if dep's result says so */
	long long		 last_check;	/* stored, 0: never */
	long			 latency_ms;	/* stored */
	char			*last_result;	/* stored; NULL unless reporting */
	int			 before;/* state before the run */
	const struct st_drain	*drain;	/* NULL: not drained */
	int			 checked;	/* res holds this run's check */
	struct {
		long		 votes_pass, votes_fail;
		int		 has_votes;
		int		 verdict;
	}			 stored_votes;	/* the last round's, as stored */
	char			*vote_why;	/* the round's verdict, when the
						   fleet's is not this check's;
						   NULL: none (most runs) */
};

#define RUN_WHY_MAX	600	/* bytes of a dry run's explanation */

/* One domain during a run. */
struct dom_run {
	const struct domain_cfg	*cfg;
	struct st_domain	 st;
	struct dec_domain	 dec;
	struct ep_run		*eps;
	struct dec_ep		*dep;	/* parallel to eps, for decide() */
	struct publication	 pub;
	char			*why;	/* dry run: what would happen */
	int			 decides;	/* this run takes its round */
	struct vote_ep		*votes;	/* the round's tally; NULL: own checks */
	size_t			 heard;	/* checkers counted */
	int			 void_all;	/* fewer than quorum heard */
	char			**kept;	/* eps' strings the outcome points at,
					   once eps is gone (shed_eps()) */
	size_t			 nkept;
};

/* A provider section's provider, made when a domain first needs it. */
struct prov_slot {
	struct provider		*p;
	int			 unreachable;	/* did not answer in this run */
};

struct run {
	struct config		*cfg;
	struct state		*st;
	struct prov_slot	*provs;		/* parallel to cfg->providers */
	struct dom_run		*doms;
	size_t			 ndoms;
	struct st_requests	 req;		/* drains, failbacks, control URL */
	long long		 now;
	long long		 last_run;	/* of the last run, 0: none */
	int			 dry_run;
	int			 control_failed;	/* this run blames its network */
	struct check_res	 control;	/* the controlUrl's check */
	struct st_notify_counts	*counts;	/* --status: per [notify] */
	struct outcome		*out;		/* what the run found and did */
	long long		 started;	/* mono_ms() at its start */
	struct st_round		 round;		/* SPEC 11: the rounds taken */
	struct st_fleet		*fleet;		/* what the store knows of the fleet */
	struct outcome_checker	*checkers;	/* for the outcome */
};

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

/* The run's domains and endpoints as configured, before anything is read. */
static void
prepare(struct run *r)
{
	size_t	 i, j;

	r->ndoms = r->cfg->ndomains;
	r->doms = xcalloc(r->ndoms + 1, sizeof(*r->doms));
	for (i = 0; i < r->ndoms; i++) {
		r->doms[i].cfg = &r->cfg->domains[i];
		r->doms[i].eps = xcalloc(r->doms[i].cfg->neps + 1,
		    sizeof(*r->doms[i].eps));
		r->doms[i].dep = xcalloc(r->doms[i].cfg->neps + 1,
		    sizeof(*r->doms[i].dep));
		for (j = 0; j < r->doms[i].cfg->neps; j++)
			r->doms[i].eps[j].cfg = &r->doms[i].cfg->eps[j];
		r->doms[i].decides = 1;
	}
}

/*
 * Takes counters and published sets from a snapshot (state.h), which it
 * empties; the checks' results in eps[].res stay.
 */
static void
load(struct run *r, struct st_snapshot *snap)
{
	size_t	 i, j, k = 0;

	r->last_run = snap->last_run;
	/* The run takes over what the snapshot holds. */
	r->req = *snap->req;
	memset(snap->req, 0, sizeof(*snap->req));
	r->fleet = snap->fleet;
	snap->fleet = NULL;
	for (i = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];

		d->st = snap->doms[i];
		memset(&snap->doms[i], 0, sizeof(snap->doms[i]));
		d->dec.attempts = d->cfg->pol.attempts;
		d->dec.recover_after = d->cfg->pol.recover_after;
		d->dec.min_healthy = d->cfg->pol.min_healthy;
		d->dec.publish_one = d->cfg->pol.publish_one;
		d->dec.failback_manual = d->cfg->pol.failback_manual;
		d->dec.has_current = d->st.has_tier;
		d->dec.current.priority = d->st.tier;
		d->dec.current.rank = d->st.tier_rank >= 0 ? d->st.tier_rank :
		    0;
		d->dec.failback_now = state_has_failback(&r->req, d->cfg->name);
		for (j = 0; j < d->cfg->neps; j++) {
			struct ep_run *e = &d->eps[j];
			struct dec_ep *de = &d->dep[j];
			struct st_ep_snap *se = &snap->eps[k++];

			e->cfg = &d->cfg->eps[j];
			e->last_check = se->last_check;
			e->latency_ms = se->latency_ms;
			e->last_result = se->last_result;
			se->last_result = NULL;
			e->stored_votes.has_votes = se->has_votes;
			e->stored_votes.votes_pass = se->votes_pass;
			e->stored_votes.votes_fail = se->votes_fail;
			e->stored_votes.verdict = se->verdict;
			de->priority = e->cfg->priority;
			de->rank = e->cfg->rank;
			e->drain = state_find_drain(&r->req, d->cfg->name,
			    e->cfg->name);
			de->drained = e->drain != NULL;
			de->has_state = se->found;
			de->failures = se->failures;
			de->passes = se->passes;
			de->removed = se->removed;
			de->last_ok = se->last_ok;
			de->published = stored_has(&d->st, e->cfg);
			de->result = CR_NONE;
		}
	}
}

/* Reads the stored state (--status); st NULL means an empty state. */
static void
load_stored(struct run *r)
{
	struct st_snapshot snap;
	char err[768];

	/* What could be read is used all the same (and logged). */
	if (state_load(r->st, r->cfg, 1, now_ms(), &snap, err,
	    sizeof(err)) == -1)
		logx(LOG_ERR, NULL, NULL, "reading the state: %s", err);
	load(r, &snap);
	state_snapshot_free(r->cfg, &snap);
}

/*
 * The states as the last run left them, to log what changes: drained
 * only by a drain that was there then, so that a new one is logged.
 */
static void
states_before(struct dom_run *d, long long last_run)
{
	struct dec_ep		*tmp;
	struct dec_domain	 dd = d->dec;
	size_t			 j, n = d->cfg->neps;

	tmp = xcalloc(n, sizeof(*tmp));
	memcpy(tmp, d->dep, n * sizeof(*tmp));
	for (j = 0; j < n; j++)
		tmp[j].drained = d->eps[j].drain != NULL &&
		    d->eps[j].drain->since <= last_run;
	decide(&dd, tmp, n);
	for (j = 0; j < n; j++)
		d->eps[j].before = tmp[j].state;
	free(tmp);
}

/* check_run()'s request when there is one only: *arg, then none. */
static int
next_one(void *arg, struct check_req *req)
{
	struct check_req	**one = arg;

	if (*one == NULL)
		return 0;
	*req = **one;
	*one = NULL;
	return 1;
}

/*
 * The controlUrl, alone and before the endpoints, with the settings of
 * the top of the file.  When it fails the run blames its own network.
 */
static int
control_check(struct run *r)
{
	const struct domain_policy *p = &r->cfg->defaults;
	struct check_req	 req, *one;
	char			 err[256];
	size_t			 i;

	memset(&req, 0, sizeof(req));
	req.url = r->cfg->control_url;
	req.head = p->head;
	req.timeout_ms = p->timeout_ms;
	req.expect = &p->expect;
	req.expect_body = p->expect_body;
	req.res = &r->control;
	one = &req;
	check_res_init(&r->control);
	if (check_run(1, next_one, &one, 1, r->cfg->ca_file, err,
	    sizeof(err)) == -1) {
		logx(LOG_ERR, NULL, NULL, "health checks: %s", err);
		return -1;
	}
	if (r->control.ok)
		return 0;
	r->control_failed = 1;
	for (i = 0; i < r->ndoms; i++)
		r->doms[i].dec.control_failed = 1;
	logx(LOG_WARN, NULL, NULL, "controlUrl %s failed (%s): this checker's "
	    "own network is blamed: no failure counted, DNS not changed",
	    r->cfg->control_url, r->control.reason);
	return 0;
}

/* Where run_checks() is in the domains and their endpoints. */
struct check_iter {
	struct run	*r;
	size_t		 dom;
	size_t		 ep;
};

/* The next endpoint's check for check_run(); 0 when all have been. */
static int
next_check(void *arg, struct check_req *req)
{
	struct check_iter	*it = arg;
	struct dom_run		*d;
	const struct domain_cfg	*dc;

	while (it->dom < it->r->ndoms &&
	    it->ep >= it->r->doms[it->dom].cfg->neps) {
		it->dom++;
		it->ep = 0;
	}
	if (it->dom == it->r->ndoms)
		return 0;
	d = &it->r->doms[it->dom];
	dc = d->cfg;
	req->url = dc->eps[it->ep].url;
	req->host = dc->eps[it->ep].host;
	req->head = dc->pol.head;
	req->timeout_ms = dc->pol.timeout_ms;
	req->expect = &dc->pol.expect;
	req->expect_body = dc->pol.expect_body;
	req->res = &d->eps[it->ep].res;
	it->ep++;
	return 1;
}

static int
run_checks(struct run *r)
{
	struct check_iter	 it;
	size_t			 i, j, n = 0;
	char			 err[256];
	int			 rc = -1;

	for (i = 0; i < r->ndoms; i++) {
		n += r->doms[i].cfg->neps;
		for (j = 0; j < r->doms[i].cfg->neps; j++)
			check_res_init(&r->doms[i].eps[j].res);
	}
	it.r = r;
	it.dom = it.ep = 0;
	if (check_run(n, next_check, &it, r->cfg->max_parallel,
	    r->cfg->ca_file, err, sizeof(err)) == -1) {
		logx(LOG_ERR, NULL, NULL, "health checks: %s", err);
		goto out;
	}
	for (i = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];

		for (j = 0; j < d->cfg->neps; j++) {
			d->eps[j].checked = 1;
			logx(LOG_DEBUG, d->cfg->name, d->eps[j].cfg->name,
			    "%s (%ld ms)", d->eps[j].res.reason,
			    d->eps[j].res.latency_ms);
		}
	}
	rc = 0;
out:
	return rc;
}

/* The tier to publish, for the managed families. */
static void
build_want(struct run *r, struct dom_run *d)
{
	size_t j;

	publication_init(&d->pub, d->cfg, &d->st, r->dry_run ? NULL : r->st,
	    d->dec.tier);
	for (j = 0; j < d->cfg->neps; j++)
		if (d->dep[j].publish)
			publication_add(&d->pub, &d->cfg->eps[j]);
}

/*
 * Providers are made when a domain first needs one, once per section.  A
 * provider that did not answer at all is not asked again in this run:
 * with many domains on one dead server, a run would otherwise wait one
 * timeout per domain and overrun its interval.
 */
static void
publish_domain(struct run *r, struct dom_run *d)
{
	size_t	 i = (size_t)(d->cfg->provider - r->cfg->providers);
	char	 err[512] = "";

	if (r->provs[i].unreachable) {
		publish_failed(&d->pub, "provider %s: unreachable, not tried "
		    "again in this run", d->cfg->provider->name);
		d->pub.perr = PERR_NET;
		return;
	}
	if (r->provs[i].p == NULL)
		r->provs[i].p = provider_create(d->cfg->provider, err,
		    sizeof(err));
	if (r->provs[i].p == NULL) {
		publish_failed(&d->pub, "provider %s: %s",
		    d->cfg->provider->name, err);
		return;
	}
	publish(&d->pub, r->provs[i].p);
	if (d->pub.failed && d->pub.perr == PERR_NET)
		r->provs[i].unreachable = 1;
}

/* Marks which endpoints DNS holds after the run, then their states. */
static void
settle(struct run *r, struct dom_run *d)
{
	size_t	 j;

	if (d->pub.synced || (r->dry_run && d->dec.any_healthy &&
	    !r->control_failed))
		for (j = 0; j < d->cfg->neps; j++)
			d->dep[j].published = d->dep[j].publish;
	decide_states(&d->dec, d->dep, d->cfg->neps);
}

/* The stored tier as an outcome shows it. */
static struct log_tier
stored_tier(const struct dom_run *d)
{
	struct log_tier t;

	t.priority = d->st.tier;
	t.located = d->cfg->pol.location != NULL;
	t.rank = d->st.tier_rank;
	t.location = d->st.tier_location[0] != '\0' ? d->st.tier_location :
	    NULL;
	return t;
}

/* The sets held in DNS as the state file has them, for the outcome. */
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

/* One endpoint of the outcome, from this run's view of it. */
static void
fill_endpoint(struct run *r, const struct dom_run *d, size_t j,
    struct outcome_ep *oe)
{
	const struct ep_run *e = &d->eps[j];
	const struct dec_ep *de = &d->dep[j];

	oe->cfg = e->cfg;
	oe->drained = e->drain != NULL;
	oe->drained_until = e->drain != NULL ? e->drain->until : 0;
	oe->has_state = de->has_state;
	oe->state_before = e->before;
	oe->failures_before = de->failures;
	oe->passes_before = de->passes;
	oe->removed_before = de->removed;
	oe->last_ok_before = de->last_ok;
	oe->last_check_before = e->last_check;
	oe->last_result_before = e->last_result;
	oe->latency_before = e->latency_ms;
	if (e->checked) {
		oe->check.done = 1;
		oe->check.counted = de->counted;
		/* With a fleet, the round's verdict is the endpoint's result. */
		oe->check.ok = de->result != CR_NONE ? de->result == CR_PASS :
		    e->res.ok;
		oe->check.status = e->res.status;
		oe->check.latency_ms = e->res.latency_ms;
		oe->check.reason = e->vote_why != NULL ? e->vote_why :
		    e->res.reason;
	}
	if (d->votes != NULL) {
		oe->has_votes = 1;
		oe->votes_pass = (long)d->votes[j].npass;
		oe->votes_fail = (long)d->votes[j].nfail;
		oe->verdict = d->votes[j].verdict;
	} else if (e->stored_votes.has_votes) {
		oe->has_votes = 1;
		oe->votes_pass = e->stored_votes.votes_pass;
		oe->votes_fail = e->stored_votes.votes_fail;
		oe->verdict = e->stored_votes.verdict;
	}
	oe->state = de->state;
	oe->healthy = de->healthy;
	oe->published = de->published;
	oe->failures = de->new_failures;
	oe->passes = de->new_passes;
	oe->removed = de->new_removed;
	if (oe->check.done) {
		oe->last_check = r->now;
		oe->last_result = oe->check.reason;
		oe->latency_ms = oe->check.latency_ms;
	} else if (e->last_check != 0) {
		oe->last_check = e->last_check;
		oe->last_result = e->last_result;
		oe->latency_ms = e->latency_ms;
	} else
		oe->latency_ms = -1;
}

/* Domain i's round: this run's, or the last one the store holds. */
static void
fill_round(struct run *r, size_t i, struct outcome_domain *od)
{
	const struct dom_run *d = &r->doms[i];

	if (r->round.shared && d->decides && outcome_kind(r->out) !=
	    OUTCOME_STATUS) {
		od->round.has = 1;
		od->round.slot = r->round.slot;
		od->round.checker = r->cfg->checker;
		od->round.heard = (long)d->heard;
		od->round.void_all = d->void_all;
	} else if (r->fleet != NULL && r->fleet->rounds[i].slot > 0) {
		const struct st_last_round *lr = &r->fleet->rounds[i];

		od->round.has = 1;
		od->round.slot = lr->slot;
		od->round.at = lr->at;
		od->round.checker = lr->checker;
		od->round.heard = lr->heard;
		od->round.void_all = lr->void_all;
	}
}

/*
 * Domain i of the outcome, once its decision, publication and states
 * are known.  A dry run shows what DNS would hold and the stored last
 * change and error (it writes nothing); --status shows the stored state.
 */
static void
fill_domain(struct run *r, size_t i, int kind)
{
	struct dom_run		*d = &r->doms[i];
	struct outcome_domain	*od = outcome_fill(r->out, i, d->cfg);
	size_t			 j;

	od->found = d->st.found;
	od->was_unhealthy = d->st.unhealthy;
	od->has_tier_before = d->st.has_tier;
	od->tier_before = stored_tier(d);
	od->status = d->dec.status;
	od->any_healthy = d->dec.any_healthy;
	od->waiting = d->dec.waiting;
	od->best.priority = d->dec.best.priority;
	od->best.located = d->cfg->pol.location != NULL;
	od->best.rank = d->dec.best.rank;
	od->best.location = domain_rank_location(d->cfg, d->dec.best.rank);
	od->failback_now = d->dec.failback_now;
	od->failback_requested = kind == OUTCOME_STATUS &&
	    state_has_failback(&r->req, d->cfg->name);
	od->has_tier = od->has_tier_before;
	od->tier = od->tier_before;
	od->last_change = d->st.last_change;
	od->last_error = d->st.last_error;
	od->unhealthy = d->st.unhealthy;
	od->unsure = d->st.unsure;
	od->why = d->why != NULL && d->why[0] ? d->why : NULL;
	if (kind != OUTCOME_STATUS) {
		od->pub = &d->pub;
		od->has_want = d->dec.any_healthy;
		od->want = d->pub.tier;
		od->synced = d->pub.synced;
		od->changed = d->pub.wrote;
		od->failed = d->pub.failed;
		od->error = d->pub.failed ? d->pub.error : NULL;
	}
	if (kind == OUTCOME_RUN) {
		/* A void round (SPEC 11) learnt nothing of the endpoints. */
		if (!r->control_failed && !d->void_all)
			od->unhealthy = !d->dec.any_healthy;
		/* An update that failed may still have reached DNS. */
		if (d->pub.synced)
			od->unsure = 0;
		else if (d->pub.nchanges > 0)
			od->unsure = 1;
		if (d->pub.synced) {
			od->has_tier = 1;
			od->tier = d->pub.tier;
			od->last_error = NULL;
			if (d->pub.wrote)
				od->last_change = r->now;
		} else if (d->pub.failed)
			od->last_error = d->pub.error;
	} else if (kind == OUTCOME_DRY_RUN && d->dec.any_healthy) {
		od->has_tier = 1;
		od->tier = d->pub.tier;
	}
	for (j = 0; j < d->cfg->neps; j++) {
		struct outcome_ep *oe = &od->eps[j];

		fill_endpoint(r, d, j, oe);
		if (oe->published && oe->cfg->cname != NULL) {
			free(od->published_cname);
			od->published_cname = xstrdup(oe->cfg->cname);
		} else if (oe->published) {
			/* Sized once: the outcome is kept to the end. */
			if (od->published.cap == 0)
				addrset_reserve(&od->published, d->cfg->neps);
			addrset_add_addr(&od->published, &oe->cfg->ip);
		}
	}
	od->decided = d->decides;
	fill_round(r, i, od);
	/* DNS before: unchanged, or what the update replaced, or stored. */
	if (od->synced && !od->changed)
		od->unchanged_dns = 1;
	else if (kind != OUTCOME_STATUS && d->pub.nchanges > 0)
		sets_from_changes(&d->pub, &od->previous, &od->previous_cname);
	else
		sets_from_state(&d->st, &od->previous, &od->previous_cname);
}

/*
 * Once the outcome is filled it has all an endpoint record held but its
 * strings: those are kept, the records go (with ten thousand endpoints,
 * 1.4 MB that the save and the reports would otherwise hold on to).
 */
static void
shed_eps(struct dom_run *d)
{
	size_t	 j, n = 0;

	for (j = 0; j < d->cfg->neps; j++)
		n += (d->eps[j].res.text != NULL) +
		    (d->eps[j].last_result != NULL) +
		    (d->eps[j].vote_why != NULL);
	if (n > 0)
		d->kept = xcalloc(n, sizeof(*d->kept));
	for (j = 0; j < d->cfg->neps; j++) {
		if (d->eps[j].res.text != NULL)
			d->kept[d->nkept++] = d->eps[j].res.text;
		if (d->eps[j].last_result != NULL)
			d->kept[d->nkept++] = d->eps[j].last_result;
		if (d->eps[j].vote_why != NULL)
			d->kept[d->nkept++] = d->eps[j].vote_why;
	}
	free(d->eps);
	d->eps = NULL;
}

/* The controlUrl in the outcome: failing since when, and why. */
static void
fill_control(struct run *r, int kind)
{
	struct outcome_control *c = outcome_control_fill(r->out);

	c->url = r->cfg->control_url;
	if (kind != OUTCOME_STATUS) {
		c->failed = r->control_failed;
		c->result = r->control.reason;
		if (r->control_failed)
			c->since = r->req.control_since != 0 ?
			    r->req.control_since : r->now;
	} else if (r->req.control_since != 0) {
		c->since = r->req.control_since;
		c->result = r->req.control_result;
	}
}

/* One line per endpoint whose state changed, and per domain gone unhealthy. */
static void
log_transitions(const struct outcome *o, const struct outcome_domain *od)
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
	/* A run that blames its own network says so once, for all. */
	if (outcome_control(o)->failed || od->round.void_all)
		return;
	if (!od->any_healthy && !od->was_unhealthy)
		logx(LOG_ERR, od->cfg->name, NULL, "no healthy endpoint: DNS "
		    "left as it is");
	else if (od->any_healthy && od->was_unhealthy)
		logx(LOG_INFO, od->cfg->name, NULL, "healthy endpoints again");
}

/*
 * The outbox of each [notify] section, as the state file holds it; a
 * dry run sends nothing and shows none.  A file from before the outbox
 * (read-only opens do not upgrade) has nothing pending.
 */
static void
report_notifiers(struct run *r, struct report *rep)
{
	size_t	 i;

	rep->nnotifiers = r->cfg->nnotifiers;
	rep->notifiers = xcalloc(rep->nnotifiers + 1, sizeof(*rep->notifiers));
	r->counts = xcalloc(rep->nnotifiers + 1, sizeof(*r->counts));
	for (i = 0; i < rep->nnotifiers; i++) {
		const struct notify_cfg *n = &r->cfg->notifiers[i];
		struct report_notify *rn = &rep->notifiers[i];

		rn->name = n->name;
		rn->kind = n->url != NULL ? "webhook" : "program";
		if (state_notify_counts(r->st, n->name, &r->counts[i], NULL,
		    0) == -1)
			continue;
		rn->pending = r->counts[i].pending;
		rn->given_up = r->counts[i].given_up;
		rn->oldest_pending = r->counts[i].oldest_pending;
		rn->last_error = r->counts[i].last_error[0] != '\0' ?
		    r->counts[i].last_error : NULL;
	}
}

static int
print_report(struct run *r, int json)
{
	struct report	 rep;
	int		 rc = 0;

	report_from_outcome(&rep, r->out, r->cfg->interval_ms);
	if (outcome_kind(r->out) == OUTCOME_STATUS)
		report_notifiers(r, &rep);
	if (json)
		rc = report_print_json(stdout, &rep);
	else
		report_print_text(stdout, &rep);
	report_free(&rep);
	/* A full disk or a closed pipe: say so, or the caller sees nothing. */
	errno = 0;
	if (fflush(stdout) == EOF || ferror(stdout)) {
		logx(LOG_ERR, NULL, NULL, "cannot write to standard output: %s",
		    strerror(errno != 0 ? errno : EIO));
		rc = -1;
	} else if (rc == -1)
		logx(LOG_ERR, NULL, NULL, "cannot write the JSON document");
	return rc;
}

/*
 * statusHtml: the page of what this run left, with the last DNS changes,
 * once its state is committed.  A page that cannot be written is an
 * error in the log and -1: the run exits 1 (SPEC 2), DNS done first.
 */
static int
write_dashboard(struct run *r)
{
	struct report		 rep;
	struct report_change	*rc = NULL;
	struct st_change	*sc = NULL;
	size_t			 i, n = 0;
	char			 err[768];
	int			 ret = 0;

	if (r->cfg->status_html == NULL)
		return 0;
	report_from_outcome(&rep, r->out, r->cfg->interval_ms);
	if (state_recent_changes(r->st, DASH_CHANGES, &sc, &n, err,
	    sizeof(err)) == -1)
		logx(LOG_ERR, NULL, NULL, "statusHtml %s: %s",
		    r->cfg->status_html, err);
	rc = xcalloc(n > 0 ? n : 1, sizeof(*rc));
	for (i = 0; i < n; i++) {
		rc[i].when = sc[i].when;
		rc[i].domain = sc[i].domain;
		rc[i].type = sc[i].type;
		rc[i].old_set = sc[i].old_set;
		rc[i].new_set = sc[i].new_set;
		rc[i].tier = sc[i].tier;
		rc[i].ok = sc[i].ok;
		rc[i].error = sc[i].error;
	}
	rep.changes = rc;
	rep.nchanges = n;
	if (dashboard_write(r->cfg->status_html, &rep, err, sizeof(err)) == -1) {
		logx(LOG_ERR, NULL, NULL, "%s", err);
		ret = -1;
	}
	free(rc);
	state_changes_free(sc, n);
	report_free(&rep);
	return ret;
}

/*
 * metricsFile, once the state is committed: the counters read back
 * include this run's.  Like the dashboard, a file that cannot be
 * written is an error line and -1.
 */
static int
write_metrics(struct run *r, int rc)
{
	struct metrics_run	 mr;
	struct st_counter	*c = NULL;
	size_t			 n = 0;
	char			 err[768];
	int			 ret = 0;

	if (r->cfg->metrics_file == NULL)
		return 0;
	if (state_counters(r->st, &c, &n, err, sizeof(err)) == -1) {
		logx(LOG_ERR, NULL, NULL, "metricsFile %s: %s",
		    r->cfg->metrics_file, err);
		return -1;
	}
	mr.duration_ms = mono_ms() - r->started;
	mr.exit_status = rc;
	mr.interval_ms = r->cfg->interval_ms;
	if (metrics_write(r->cfg->metrics_file, r->out, c, n, &mr, err,
	    sizeof(err)) == -1) {
		logx(LOG_ERR, NULL, NULL, "metricsFile %s", err);
		ret = -1;
	}
	state_counters_free(c, n);
	return ret;
}

static void
free_run(struct run *r)
{
	size_t i, j;

	for (i = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];

		state_domain_free(&d->st);
		publication_free(&d->pub);
		for (j = 0; d->eps != NULL && j < d->cfg->neps; j++) {
			check_res_free(&d->eps[j].res);
			free(d->eps[j].last_result);
			free(d->eps[j].vote_why);
		}
		for (j = 0; j < d->nkept; j++)
			free(d->kept[j]);
		free(d->kept);
		free(d->why);
		free(d->votes);
		free(d->eps);
		free(d->dep);
	}
	outcome_free(r->out);
	free(r->doms);
	free(r->counts);
	check_res_free(&r->control);
	state_requests_free(&r->req);
	state_round_free(r->cfg, &r->round);
	free(r->checkers);
	state_fleet_free(r->fleet);
	if (r->provs != NULL)
		for (i = 0; i < r->cfg->nproviders; i++)
			provider_free(r->provs[i].p);
	free(r->provs);
	state_close(r->st);
}

/* The fleet as the outcome shows it (SPEC 11); nothing with one checker. */
static void
set_fleet(struct run *r)
{
	struct outcome_fleet f;
	const struct st_checker *c;
	size_t	 i, j, n;

	memset(&f, 0, sizeof(f));
	if (r->fleet == NULL && !r->round.shared)
		return;
	n = r->round.shared ? r->round.ncheckers : r->fleet->ncheckers;
	c = r->round.shared ? r->round.checkers : r->fleet->checkers;
	r->checkers = xcalloc(n + 1, sizeof(*r->checkers));
	for (i = 0; i < n; i++) {
		struct outcome_checker *oc = &r->checkers[i];

		oc->name = c[i].name;
		oc->at = c[i].at;
		oc->slot = c[i].slot;
		oc->in_step = c[i].in_step;
		for (j = 0; c[i].results != NULL && j < c[i].nresults; j++) {
			oc->passes += c[i].results[j] == VOTE_PASS;
			oc->failures += c[i].results[j] == VOTE_FAIL;
		}
	}
	f.shared = 1;
	f.quorum = r->cfg->quorum;
	f.slot = r->round.slot;
	f.checkers = r->checkers;
	f.ncheckers = n;
	outcome_set_fleet(r->out, &f);
}

/* --status: the stored state, no checks, no DNS. */
static int
do_status(struct run *r, int json)
{
	char	 err[512];
	size_t	 i;

	if (state_open_checker(r->cfg->state, r->cfg->checker, STATE_RO,
	    &r->st, err, sizeof(err)) != STATE_OK) {
		logx(LOG_ERR, NULL, NULL, "%s", err);
		return RUN_STATE;
	}
	prepare(r);
	load_stored(r);
	r->out = outcome_create(OUTCOME_STATUS, now_ms(), r->ndoms);
	outcome_set_last_run(r->out, r->last_run);
	set_fleet(r);
	for (i = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];

		/* What the last run chose; a --failback is shown as asked. */
		d->dec.failback_now = 0;
		decide(&d->dec, d->dep, d->cfg->neps);
		if (!d->st.found) {
			size_t j;

			for (j = 0; j < d->cfg->neps; j++)
				d->dep[j].state = EP_UNKNOWN;
			d->dec.status = DOM_UNKNOWN;
		}
		fill_domain(r, i, OUTCOME_STATUS);
	}
	fill_control(r, OUTCOME_STATUS);
	return print_report(r, json) == 0 ? 0 : RUN_FAILED;
}

/*
 * The run's report for the fleet (SPEC 11): one VOTE_* per endpoint in
 * the configuration's order.  A run whose controlUrl failed reports no
 * failure.
 */
static char *
report_results(const struct run *r, size_t *n)
{
	char	*v;
	size_t	 i, j, k = 0;

	*n = 0;
	for (i = 0; i < r->ndoms; i++)
		*n += r->doms[i].cfg->neps;
	v = xmalloc(*n + 1);
	for (i = 0; i < r->ndoms; i++)
		for (j = 0; j < r->doms[i].cfg->neps; j++)
			v[k++] = (char)(r->doms[i].eps[j].res.ok ? VOTE_PASS :
			    r->control_failed ? VOTE_NONE : VOTE_FAIL);
	v[k] = '\0';
	return v;
}

/*
 * Domain d's results: its own checks, or with a fleet the round's tally
 * of the window's reports (first: d's first endpoint in them).  A void
 * endpoint keeps its counters; a round with fewer checkers heard than
 * quorum changes nothing, DNS included.
 */
static void
set_results(struct run *r, struct dom_run *d, size_t first)
{
	struct vote_round vr;
	char	 why[96];
	size_t	 j, n = d->cfg->neps;

	if (!r->round.shared) {
		for (j = 0; j < n; j++)
			d->dep[j].result = d->eps[j].res.ok ? CR_PASS : CR_FAIL;
		return;
	}
	memset(&vr, 0, sizeof(vr));
	vr.slot = r->round.slot;
	vr.quorum = r->cfg->quorum;
	vr.ncheckers = r->cfg->ncheckers;
	vr.heard = xcalloc(vr.ncheckers + 1, sizeof(*vr.heard));
	d->votes = xcalloc(n + 1, sizeof(*d->votes));
	vote_tally(&vr, r->round.reports, r->round.nreports, first, n,
	    d->votes);
	d->heard = vr.nheard;
	d->void_all = vr.void_all;
	free(vr.heard);
	for (j = 0; j < n; j++) {
		const struct vote_ep *v = &d->votes[j];
		struct ep_run *e = &d->eps[j];

		d->dep[j].result = v->verdict == VERDICT_PASS ? CR_PASS :
		    v->verdict == VERDICT_FAIL ? CR_FAIL : CR_NONE;
		why[0] = '\0';
		if (v->verdict == VERDICT_VOID)
			snprintf(why, sizeof(why), "void round "
			    "(%zu pass, %zu fail, quorum %ld)", v->npass,
			    v->nfail, r->cfg->quorum);
		else if ((v->verdict == VERDICT_PASS) != e->res.ok)
			snprintf(why, sizeof(why), "%zu of %zu "
			    "checkers saw it %s (this one: %s)",
			    v->verdict == VERDICT_PASS ? v->npass : v->nfail,
			    d->heard, v->verdict == VERDICT_PASS ? "pass" :
			    "fail", e->res.reason);
		/* 96 bytes in every endpoint were a twentieth of a run's heap. */
		if (why[0] != '\0') {
			free(e->vote_why);
			e->vote_why = xstrdup(why);
		}
	}
	if (d->void_all)
		logx(LOG_WARN, d->cfg->name, NULL, "round void: %zu of %zu "
		    "checkers heard, quorum %ld: nothing counted, DNS left as "
		    "it is", d->heard, r->cfg->ncheckers, r->cfg->quorum);
}

/* Whether the run writes d's DNS: its round, something healthy, counted. */
static int
may_publish(const struct run *r, const struct dom_run *d)
{
	return d->decides && d->dec.any_healthy && !r->control_failed &&
	    !d->void_all;
}

/*
 * Records the rounds taken before any provider is called (SPEC 11):
 * the sets about to be written, with their domains unsure.  Nothing to
 * do with one checker, whose publish() marks the domain unsure itself.
 */
static int
commit_rounds(struct run *r)
{
	struct st_round_dom	*rd;
	char			 err[512];
	size_t			 i;
	int			 rc;

	rd = xcalloc(r->ndoms + 1, sizeof(*rd));
	for (i = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];

		rd[i].decides = d->decides;
		rd[i].heard = d->heard;
		rd[i].void_all = d->void_all;
		rd[i].votes = d->votes;
		rd[i].will_write = may_publish(r, d) &&
		    publication_may_write(&d->pub);
		rd[i].pending = rd[i].will_write ? publication_want_text(
		    &d->pub) : NULL;
	}
	rc = state_round_commit(r->st, r->cfg, &r->round, rd, err,
	    sizeof(err));
	if (rc == -1)
		logx(LOG_ERR, NULL, NULL, "%s", err);
	for (i = 0; i < r->ndoms; i++)
		free((char *)rd[i].pending);
	free(rd);
	return rc;
}

/* Whether the run took the round of some domain. */
static int
took_round(const struct run *r)
{
	size_t i;

	for (i = 0; i < r->ndoms; i++)
		if (r->doms[i].decides)
			return 1;
	return r->ndoms == 0;
}

/* A check run: real, or dry (nothing written, no provider called). */
static int
do_run(struct run *r, int dry_run, int json)
{
	struct st_report_in	 in;
	struct st_snapshot	 snap;
	char			 err[512], dberr[768];
	char			*results = NULL;
	size_t			 i, first;
	int			 rc, kind;

	r->dry_run = dry_run;
	r->started = mono_ms();
	rc = state_open_checker(r->cfg->state, r->cfg->checker,
	    dry_run ? STATE_RO : STATE_RW, &r->st,
	    err, sizeof(err));
	if (rc != STATE_OK) {
		if (rc == STATE_LOCKED)
			logx(LOG_WARN, NULL, NULL, "%s", err);
		else
			logx(LOG_ERR, NULL, NULL, "%s", err);
		return rc;
	}
	prepare(r);
	r->now = now_ms();
	if (r->cfg->control_url != NULL && control_check(r) == -1)
		return RUN_FAILED;
	if (run_checks(r) == -1)
		return RUN_FAILED;
	/*
	 * The transfers' memory (libcurl's connections and buffers, some
	 * MB with many endpoints) is free now but still resident, and the
	 * state and the outcome built next do not fit in its holes: give
	 * its pages back rather than add to them.
	 */
	malloc_trim(0);
	/* The report, the rounds and the snapshot read under their locks. */
	memset(&in, 0, sizeof(in));
	in.results = results = report_results(r, &in.nresults);
	in.control_failed = r->control_failed;
	in.dry_run = dry_run;
	rc = state_round_begin(r->st, r->cfg, &in, &snap, &r->round, dberr,
	    sizeof(dberr));
	free(results);
	if (rc == -1) {
		if (r->round.shared) {
			/* A shared store that cannot be read: change nothing. */
			logx(LOG_ERR, NULL, NULL, "%s", dberr);
			state_snapshot_free(r->cfg, &snap);
			return RUN_STATE;
		}
		/* What could be read is used all the same (and logged). */
		logx(LOG_ERR, NULL, NULL, "reading the state: %s", dberr);
	}
	load(r, &snap);
	state_snapshot_free(r->cfg, &snap);
	for (i = 0, first = 0; i < r->ndoms; first += r->doms[i].cfg->neps,
	    i++) {
		struct dom_run *d = &r->doms[i];

		d->decides = r->round.decides[i];
		states_before(d, r->last_run);
		/* Not this run's: shown as stored, its checks only reported. */
		if (d->decides)
			set_results(r, d, first);
		else
			for (size_t j = 0; j < d->cfg->neps; j++)
				d->eps[j].checked = 0;
	}
	r->provs = xcalloc(r->cfg->nproviders + 1, sizeof(r->provs[0]));
	kind = dry_run ? OUTCOME_DRY_RUN : OUTCOME_RUN;
	r->out = outcome_create(kind, r->now, r->ndoms);
	set_fleet(r);
	fill_control(r, kind);
	for (i = 0; i < r->ndoms; i++) {
		decide(&r->doms[i].dec, r->doms[i].dep, r->doms[i].cfg->neps);
		build_want(r, &r->doms[i]);
	}
	if (!dry_run && commit_rounds(r) == -1)
		return RUN_STATE;
	rc = 0;
	for (i = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];

		if (dry_run) {
			d->why = xmalloc(RUN_WHY_MAX);
			if (r->control_failed)
				snprintf(d->why, RUN_WHY_MAX, "the controlUrl "
				    "failed: DNS would be left as it is");
			else if (d->void_all)
				snprintf(d->why, RUN_WHY_MAX, "the round would "
				    "be void (%zu of %zu checkers heard, quorum "
				    "%ld): DNS would be left as it is", d->heard,
				    r->cfg->ncheckers, r->cfg->quorum);
			else
				publish_explain(&d->pub, d->dec.any_healthy,
				    d->why, RUN_WHY_MAX);
		} else if (may_publish(r, d))
			publish_domain(r, d);
		if (d->pub.failed)
			rc = RUN_FAILED;
		if (d->decides)
			settle(r, d);
		else
			decide_states(&d->dec, d->dep, d->cfg->neps);
		fill_domain(r, i, d->decides ? kind : OUTCOME_STATUS);
		/* The outcome has what the decision found: its inputs go now. */
		free(d->dep);
		d->dep = NULL;
		shed_eps(d);
		if (!dry_run && d->decides)
			log_transitions(r->out, outcome_domain(r->out, i));
	}
	outcome_seal(r->out);
	if (dry_run)
		return print_report(r, json) == 0 ? rc : RUN_FAILED;
	if (save_outcome(r->st, r->out, r->cfg) == -1)
		return RUN_STATE;
	if (write_dashboard(r) == -1)
		rc = RUN_FAILED;
	/*
	 * After the commit: what is sent is in the file already.  With a
	 * fleet, only a run that took a round delivers (SPEC 11).
	 */
	if (took_round(r))
		notify_deliver(r->cfg, r->st);
	/* Last: its duration is the whole run's, deliveries included. */
	if (write_metrics(r, rc) == -1)
		rc = RUN_FAILED;
	return rc;
}

int
run_status(struct config *cfg, int json)
{
	struct run	 r;
	int		 rc;

	memset(&r, 0, sizeof(r));
	r.cfg = cfg;
	rc = do_status(&r, json);
	free_run(&r);
	return rc;
}

int
run_once(struct config *cfg, int dry_run, int json)
{
	struct run	 r;
	int		 rc;

	memset(&r, 0, sizeof(r));
	r.cfg = cfg;
	rc = do_run(&r, dry_run, json);
	free_run(&r);
	return rc;
}

/* The domain named name (any case, a trailing dot allowed), or NULL. */
static const struct domain_cfg *
find_domain(const struct config *cfg, const char *name, size_t len)
{
	size_t i;

	if (len > 1 && name[len - 1] == '.')
		len--;
	for (i = 0; i < cfg->ndomains; i++)
		if (strlen(cfg->domains[i].name) == len &&
		    strncasecmp(cfg->domains[i].name, name, len) == 0)
			return &cfg->domains[i];
	return NULL;
}

int
run_request(struct config *cfg, int what, const char *target,
    long long for_ms)
{
	const struct domain_cfg	*d;
	const struct endpoint_cfg *e = NULL;
	struct state		*st = NULL;
	const char		*slash;
	char			 err[512], when[32];
	long long		 now = now_ms(), until;
	size_t			 i;
	int			 rc;

	/* for_ms is at most DURATION_MAX_MS, but the clock may be anything. */
	until = for_ms > 0 ? ms_add(now, for_ms) : 0;
	/* DOMAIN/ENDPOINT: a domain name has no '/', an endpoint's may. */
	slash = what == REQ_FAILBACK ? NULL : strchr(target, '/');
	if (what != REQ_FAILBACK && (slash == NULL || slash[1] == '\0')) {
		logx(LOG_ERR, NULL, NULL, "expected DOMAIN/ENDPOINT, not '%s'",
		    target);
		return RUN_USAGE;
	}
	d = find_domain(cfg, target, slash != NULL ? (size_t)(slash - target) :
	    strlen(target));
	if (d == NULL) {
		logx(LOG_ERR, NULL, NULL, "no domain '%.*s' in %s",
		    slash != NULL ? (int)(slash - target) : (int)strlen(target),
		    target, cfg->path);
		return RUN_USAGE;
	}
	for (i = 0; slash != NULL && i < d->neps; i++)
		if (strcasecmp(d->eps[i].name, slash + 1) == 0)
			e = &d->eps[i];
	if (slash != NULL && e == NULL) {
		logx(LOG_ERR, d->name, NULL, "no endpoint '%s' in %s",
		    slash + 1, cfg->path);
		return RUN_USAGE;
	}
	rc = state_open_checker(cfg->state, cfg->checker, STATE_RW, &st, err,
	    sizeof(err));
	if (rc != STATE_OK) {
		logx(rc == STATE_LOCKED ? LOG_WARN : LOG_ERR, NULL, NULL, "%s",
		    err);
		return rc;
	}
	if (what == REQ_DRAIN)
		rc = state_request_drain(st, d->name, e->name, now, until,
		    err, sizeof(err));
	else if (what == REQ_UNDRAIN)
		rc = state_request_undrain(st, d->name, e->name, err,
		    sizeof(err));
	else
		rc = state_request_failback(st, d->name, now, err, sizeof(err));
	state_close(st);
	if (rc == -1) {
		logx(LOG_ERR, d->name, NULL, "%s", err);
		return RUN_STATE;
	}
	if (what == REQ_DRAIN && until != 0) {
		iso_time(until, when, sizeof(when));
		logx(LOG_INFO, d->name, e->name, "drained until %s, from the "
		    "next run on", when);
	} else if (what == REQ_DRAIN)
		logx(LOG_INFO, d->name, e->name, "drained until --undrain, "
		    "from the next run on");
	else if (what == REQ_UNDRAIN)
		logx(LOG_INFO, d->name, e->name, "undrained: back at the next "
		    "run when healthy");
	else
		logx(LOG_INFO, d->name, NULL, "failback asked: the next run "
		    "goes back to the best healthy tier");
	return RUN_OK;
}
