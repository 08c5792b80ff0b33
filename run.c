/*
 * One run of ddup-check (ddup-check(8), DESCRIPTION), and --status and
 * --dry-run, which share its loading and its report.  do_run() is the
 * whole run, one call a phase; the phases follow it in that order.
 */

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
#include "recheck.h"
#include "run.h"
#include "save.h"
#include "state.h"
#include "status.h"
#include "util.h"
#include "vote.h"

struct run;

static int	 open_state(struct run *r);
static void	 prepare(struct run *r);
static int	 check_all(struct run *r);
static int	 take_round(struct run *r);
static void	 decide_all(struct run *r);
static int	 commit_rounds(struct run *r);
static int	 publish_all(struct run *r);
static int	 print_report(struct run *r, int json);
static int	 write_dashboard(struct run *r);
static int	 save(struct run *r);
static void	 deliver(struct run *r);
static int	 write_metrics(struct run *r, int rc);
static void	 load_stored(struct run *r);
static void	 decide_stored(struct run *r);

/* A check run: real, or dry (nothing written, no provider called). */
static int
do_run(struct run *r, int dry_run, int json)
{
	int	 rc;

	if ((rc = open_state(r)) != STATE_OK)
		return rc;
	prepare(r);
	if (check_all(r) == -1)		/* the controlUrl, then every endpoint */
		return RUN_FAILED;
	if ((rc = take_round(r)) != RUN_OK)	/* the stored state, the votes */
		return rc;
	decide_all(r);
	/* Before any provider call: the sets about to be written. */
	if (!dry_run && commit_rounds(r) == -1)
		return RUN_STATE;
	rc = publish_all(r);		/* DNS changed, the outcome complete */
	if (dry_run)
		return print_report(r, json) == 0 ? rc : RUN_FAILED;
	if (save(r) == -1)		/* one transaction */
		return RUN_STATE;
	if (write_dashboard(r) == -1)
		rc = RUN_FAILED;
	deliver(r);			/* the notifications saved */
	/* Last: its duration is the whole run's, deliveries included. */
	if (write_metrics(r, rc) == -1)
		rc = RUN_FAILED;
	return rc;
}

/* --status: the stored state, no checks, no DNS. */
static int
do_status(struct run *r, int json)
{
	if (open_state(r) != STATE_OK)
		return RUN_STATE;
	prepare(r);
	load_stored(r);
	decide_stored(r);
	return print_report(r, json) == 0 ? 0 : RUN_FAILED;
}

/* One domain during a run. */
struct dom_run {
	const struct domain_cfg	*cfg;
	struct st_domain	 st;
	struct dec_domain	 dec;
	struct check_res	*res;	/* its part of the run's res */
	struct dec_ep		*dep;	/* likewise, for decide() */
	struct outcome_domain	*od;	/* what the run found of it */
	struct publication	 pub;
	char			*why;	/* dry run: what would happen */
	int			 decides;	/* this run takes its round */
	struct vote_ep		*votes;	/* the round's tally; NULL: own checks */
	size_t			 heard;	/* checkers counted */
	int			 void_all;	/* fewer than quorum heard */
};

#define RUN_WHY_MAX	600	/* bytes of a dry run's explanation */

/* A provider section's provider, made when a domain first needs it. */
struct prov_slot {
	struct provider		*p;
	int			 unreachable;	/* did not answer in this run */
};

struct run {
	struct config		*cfg;
	int			 kind;		/* enum outcome_kind */
	struct state		*st;
	struct prov_slot	*provs;		/* parallel to cfg->providers */
	struct dom_run		*doms;
	size_t			 ndoms;
	struct check_res	*res;		/* this run's checks, every endpoint
						   in file order */
	size_t			 neps;
	struct st_requests	 req;		/* drains, failbacks, control URL */
	long long		 now;
	long long		 last_run;	/* of the last run, 0: none */
	int			 control_failed;	/* this run blames its network */
	struct check_res	 control;	/* the controlUrl's check */
	struct st_notify_counts	*counts;	/* --status: per [notify] */
	struct outcome		*out;		/* what the run found and did */
	long long		 started;	/* mono_ms() at its start */
	struct st_round		 round;		/* the rounds taken */
	struct st_fleet		*fleet;		/* what the store knows of the fleet */
};

/* --status reads; a dry run reads, locked against none. */
static int
open_state(struct run *r)
{
	char	 err[512];
	int	 rc;

	r->started = mono_ms();
	rc = state_open_checker(r->cfg->state, r->cfg->checker,
	    r->kind == OUTCOME_RUN ? STATE_RW : STATE_RO, &r->st, err,
	    sizeof(err));
	if (rc != STATE_OK)
		logx(rc == STATE_LOCKED && r->kind != OUTCOME_STATUS ?
		    LOG_WARN : LOG_ERR, NULL, NULL, "%s", err);
	return rc == STATE_OK || r->kind != OUTCOME_STATUS ? rc : RUN_STATE;
}

/* The run's domains and endpoints as configured, before anything is read. */
static void
prepare(struct run *r)
{
	size_t	 i, n;

	r->now = now_ms();
	r->ndoms = r->cfg->ndomains;
	r->doms = xcalloc(r->ndoms + 1, sizeof(*r->doms));
	for (i = 0; i < r->ndoms; i++)
		r->neps += r->cfg->domains[i].neps;
	r->res = xcalloc(r->neps + 1, sizeof(*r->res));
	for (i = 0, n = 0; i < r->ndoms; n += r->doms[i].cfg->neps, i++) {
		r->doms[i].cfg = &r->cfg->domains[i];
		r->doms[i].res = &r->res[n];
		r->doms[i].dep = xcalloc(r->doms[i].cfg->neps + 1,
		    sizeof(*r->doms[i].dep));
		r->doms[i].decides = 1;
	}
}

/*
 * The controlUrl, alone and before the endpoints; when it fails the run
 * blames its own network.  Then every endpoint, all in parallel.
 */
static int
check_all(struct run *r)
{
	size_t	 i, j;
	char	 err[256];
	long	*rep;
	int	 rc;

	if (r->cfg->control_url != NULL) {
		if (check_control(r->cfg, &r->control, err, sizeof(err)) == -1)
			goto fail;
		r->control_failed = !r->control.ok;
		for (i = 0; i < r->ndoms; i++)
			r->doms[i].dec.control_failed = r->control_failed;
		if (r->control_failed)
			logx(LOG_WARN, NULL, NULL, "controlUrl %s failed (%s): "
			    "this checker's own network is blamed: no failure "
			    "counted, DNS not changed", r->cfg->control_url,
			    r->control.reason);
	}
	rep = r->control_failed ? NULL : recheck_repeats(r->cfg, r->st,
	    r->now, r->neps);
	rc = check_endpoints(r->cfg, r->res, rep, err, sizeof(err));
	free(rep);
	if (rc == -1)
		goto fail;
	for (i = 0; i < r->ndoms; i++)
		for (j = 0; j < r->doms[i].cfg->neps; j++)
			recheck_log(r->doms[i].cfg->name,
			    r->doms[i].cfg->eps[j].name, &r->doms[i].res[j]);
	/*
	 * The transfers' memory (libcurl's connections and buffers, some
	 * MB with many endpoints) is free now but still resident, and the
	 * state and the outcome built next do not fit in its holes: give
	 * its pages back rather than add to them.
	 */
	malloc_trim(0);
	return 0;
fail:
	logx(LOG_ERR, NULL, NULL, "health checks: %s", err);
	return -1;
}

/*
 * The run's report for the fleet (ddup-check(8), SEVERAL CHECKERS): one
 * VOTE_* per endpoint in the configuration's order.  A run whose
 * controlUrl failed reports no failure.
 */
static char *
report_results(const struct run *r, size_t *n)
{
	char	*v;
	size_t	 i;

	*n = r->neps;
	v = xmalloc(*n + 1);
	for (i = 0; i < r->neps; i++)
		v[i] = (char)(r->res[i].ok ? VOTE_PASS : r->control_failed ?
		    VOTE_NONE : VOTE_FAIL);
	v[i] = '\0';
	return v;
}

/*
 * Takes counters and published sets from a snapshot (state.h), which it
 * empties, into the decision's inputs and the outcome.
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
	r->out = outcome_create(r->kind, r->now, r->ndoms);
	for (i = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];

		d->od = outcome_fill(r->out, i, d->cfg);
		d->st = snap->doms[i];
		memset(&snap->doms[i], 0, sizeof(snap->doms[i]));
		dec_domain_load(&d->dec, &d->cfg->pol, &d->st,
		    state_has_failback(&r->req, d->cfg->name));
		for (j = 0; j < d->cfg->neps; j++) {
			const struct endpoint_cfg *e = &d->cfg->eps[j];
			const struct st_drain *drain;
			struct st_ep_snap *se = &snap->eps[k++];

			drain = state_find_drain(&r->req, d->cfg->name, e->name);
			outcome_ep_stored(&d->od->eps[j], se, drain);
			outcome_keep(r->out, se->last_result);
			se->last_result = NULL;
			/* A new drain is news: the last run's states had none. */
			dec_ep_load(&d->dep[j], e, se, &d->st, drain != NULL,
			    drain != NULL && drain->since <= r->last_run);
		}
	}
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
	size_t	 j, n = d->cfg->neps;

	/*
	 * One checker counts every check, its repeats included; a fleet's
	 * round counts one result per slot, each checker's after its
	 * repeats (ddup-check(8), SEVERAL CHECKERS).
	 */
	if (!r->round.shared) {
		for (j = 0; j < n; j++) {
			d->dep[j].result = d->res[j].ok ? CR_PASS : CR_FAIL;
			d->dep[j].failed_before = recheck_failed(&d->res[j]);
		}
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
	d->dec.void_round = vr.void_all;
	free(vr.heard);
	for (j = 0; j < n; j++) {
		const struct vote_ep *v = &d->votes[j];

		d->dep[j].result = v->verdict == VERDICT_PASS ? CR_PASS :
		    v->verdict == VERDICT_FAIL ? CR_FAIL : CR_NONE;
		/* A fleet of one is one checker: its repeats count. */
		if (r->cfg->ncheckers == 1 && d->dep[j].result != CR_NONE &&
		    (d->dep[j].result == CR_PASS) == (d->res[j].ok != 0))
			d->dep[j].failed_before = recheck_failed(&d->res[j]);
		outcome_ep_verdict(r->out, &d->od->eps[j], v, &d->res[j],
		    d->heard, r->cfg->quorum);
	}
	if (d->void_all)
		logx(LOG_WARN, d->cfg->name, NULL, "round void: %zu of %zu "
		    "checkers heard, quorum %ld: nothing counted, DNS left as "
		    "it is", d->heard, r->cfg->ncheckers, r->cfg->quorum);
}

/* The report, the rounds and the snapshot, read under their locks. */
static int
take_round(struct run *r)
{
	struct st_report_in	 in;
	struct st_snapshot	 snap;
	char			*results, err[768];
	size_t			 i, j, first;
	int			 rc;

	memset(&in, 0, sizeof(in));
	in.results = results = report_results(r, &in.nresults);
	in.control_failed = r->control_failed;
	in.dry_run = r->kind == OUTCOME_DRY_RUN;
	rc = state_round_begin(r->st, r->cfg, &in, &snap, &r->round, err,
	    sizeof(err));
	free(results);
	if (rc == -1) {
		if (r->round.shared) {
			/* A shared store that cannot be read: change nothing. */
			logx(LOG_ERR, NULL, NULL, "%s", err);
			state_snapshot_free(r->cfg, &snap);
			return RUN_STATE;
		}
		/* What could be read is used all the same (and logged). */
		logx(LOG_ERR, NULL, NULL, "reading the state: %s", err);
	}
	load(r, &snap);
	state_snapshot_free(r->cfg, &snap);
	for (i = 0, first = 0; i < r->ndoms; first += r->doms[i].cfg->neps,
	    i++) {
		struct dom_run *d = &r->doms[i];

		d->decides = r->round.decides[i];
		decide_before(&d->dec, d->dep, d->cfg->neps);
		/* Not this run's: shown as stored, its checks only reported. */
		for (j = 0; j < d->cfg->neps; j++)
			d->od->eps[j].check.done = d->decides;
		if (d->decides)
			set_results(r, d, first);
	}
	return RUN_OK;
}

/* The fleet as the outcome shows it; nothing with one checker. */
static void
record_fleet(struct run *r)
{
	if (r->round.shared)
		outcome_fleet_from(r->out, r->cfg->quorum, r->round.slot,
		    r->round.checkers, r->round.ncheckers);
	else if (r->fleet != NULL)
		outcome_fleet_from(r->out, r->cfg->quorum, r->round.slot,
		    r->fleet->checkers, r->fleet->ncheckers);
}

/* The controlUrl in the outcome: failing since when, and why. */
static void
record_control(struct run *r)
{
	const char *url = r->cfg->control_url;

	if (r->kind == OUTCOME_STATUS)
		outcome_control_set(r->out, url, 0, r->req.control_since,
		    r->req.control_since != 0 ? r->req.control_result : NULL);
	else
		outcome_control_set(r->out, url, r->control_failed,
		    !r->control_failed ? 0 : r->req.control_since != 0 ?
		    r->req.control_since : r->now, r->control.reason);
}

/*
 * The sets d's decision publishes: its endpoints marked publish, or
 * allDown's fallback addresses; degradedTtl while they are not the
 * preferred ones.
 */
static void
want_sets(struct run *r, struct dom_run *d)
{
	const struct domain_policy *pol = &d->cfg->pol;
	size_t j;

	publication_init(&d->pub, d->cfg, &d->st,
	    r->kind == OUTCOME_DRY_RUN ? NULL : r->st, d->dec.tier);
	for (j = 0; j < d->cfg->neps; j++)
		if (d->dep[j].publish)
			publication_add(&d->pub, &d->cfg->eps[j]);
	if (d->dec.fail_open == ALLDOWN_FALLBACK)
		publication_add_fallback(&d->pub, &pol->fallback);
	d->pub.tier.all_down = d->dec.fail_open == ALLDOWN_ALL;
	if (d->dec.degraded && pol->degraded_ttl != 0)
		publication_degrade(&d->pub, pol->degraded_ttl);
}

/* Each domain's decision, and the sets it would publish. */
static void
decide_all(struct run *r)
{
	size_t	 i;

	r->provs = xcalloc(r->cfg->nproviders + 1, sizeof(r->provs[0]));
	record_fleet(r);
	record_control(r);
	for (i = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];

		decide(&d->dec, d->dep, d->cfg->neps);
		want_sets(r, d);
	}
}

/* Something to publish: an endpoint healthy, or allDown applied. */
static int
has_sets(const struct dom_run *d)
{
	return d->dec.any_healthy || d->dec.fail_open != ALLDOWN_KEEP;
}

/* Whether the run writes d's DNS: its round, something to write, counted. */
static int
may_publish(const struct run *r, const struct dom_run *d)
{
	return d->decides && has_sets(d) && !r->control_failed &&
	    !d->void_all;
}

/*
 * Records the rounds taken before any provider is called: the sets
 * about to be written, with their domains unsure.  Nothing to do with
 * one checker, whose publish() marks the domain unsure itself.
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

/* A dry run's text: what a run would do to d's DNS, and why. */
static void
explain(struct run *r, struct dom_run *d)
{
	d->why = xmalloc(RUN_WHY_MAX);
	if (r->control_failed)
		snprintf(d->why, RUN_WHY_MAX, "the controlUrl failed: DNS "
		    "would be left as it is");
	else if (d->void_all)
		snprintf(d->why, RUN_WHY_MAX, "the round would be void (%zu "
		    "of %zu checkers heard, quorum %ld): DNS would be left as "
		    "it is", d->heard, r->cfg->ncheckers, r->cfg->quorum);
	else
		publish_explain(&d->pub, has_sets(d), d->why, RUN_WHY_MAX);
}

/*
 * Domain i in the outcome, once its decision, publication and states
 * are known; then its endpoint records go (the outcome has all they
 * held, and with ten thousand endpoints they are a megabyte that the
 * save and the reports would otherwise hold on to).
 */
static void
record_domain(struct run *r, size_t i, int kind)
{
	struct dom_run		*d = &r->doms[i];
	struct outcome_domain	*od = d->od;
	size_t			 j;

	for (j = 0; j < d->cfg->neps; j++)
		outcome_ep_settle(&od->eps[j], &d->dep[j], &d->res[j],
		    d->votes != NULL ? &d->votes[j] : NULL, r->now);
	outcome_domain_settle(od, kind, &d->dec, &d->pub, &d->st, r->now,
	    !r->control_failed && !d->void_all, d->why);
	od->failback_requested = kind == OUTCOME_STATUS &&
	    state_has_failback(&r->req, d->cfg->name);
	od->decided = d->decides;
	if (r->round.shared && d->decides && r->kind != OUTCOME_STATUS)
		outcome_round_set(od, r->round.slot, 0, r->cfg->checker,
		    (long)d->heard, d->void_all);
	else if (r->fleet != NULL && r->fleet->rounds[i].slot > 0)
		outcome_round_stored(od, &r->fleet->rounds[i]);
	free(d->dep);
	d->dep = NULL;
}

/*
 * Each domain's DNS: written where the run may (a dry run only says
 * what it would do), then the states the result leaves.  RUN_FAILED
 * when an update failed.
 */
static int
publish_all(struct run *r)
{
	size_t	 i, j;
	int	 rc = RUN_OK;

	for (i = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];

		if (r->kind == OUTCOME_DRY_RUN)
			explain(r, d);
		else if (may_publish(r, d))
			publish_domain(r, d);
		if (d->pub.failed)
			rc = RUN_FAILED;
		/* What DNS holds after the run, then the states. */
		if (d->decides && (d->pub.synced || (r->kind ==
		    OUTCOME_DRY_RUN && has_sets(d) && !r->control_failed &&
		    !d->void_all)))
			for (j = 0; j < d->cfg->neps; j++)
				d->dep[j].published = d->dep[j].publish;
		decide_states(&d->dec, d->dep, d->cfg->neps);
		record_domain(r, i, d->decides ? r->kind : OUTCOME_STATUS);
		if (r->kind == OUTCOME_RUN && d->decides)
			outcome_log_transitions(r->out, d->od);
	}
	/* The outcome holds the checks now: only their texts stay. */
	for (i = 0; i < r->neps; i++) {
		outcome_keep(r->out, r->res[i].text);
		outcome_keep_checks(r->out, r->res[i].before);
	}
	free(r->res);
	r->res = NULL;
	outcome_seal(r->out);
	return rc;
}

/*
 * The report on standard output; with --status, the outbox of each
 * [notify] section as the state file holds it (a file from before the
 * outbox, which a read-only open does not upgrade, has nothing pending).
 */
static int
print_report(struct run *r, int json)
{
	size_t	 i, n = r->kind == OUTCOME_STATUS ? r->cfg->nnotifiers : 0;

	r->counts = xcalloc(n + 1, sizeof(*r->counts));
	for (i = 0; i < n; i++)
		if (state_notify_counts(r->st, r->cfg->notifiers[i].name,
		    &r->counts[i], NULL, 0) == -1)
			memset(&r->counts[i], 0, sizeof(r->counts[i]));
	return report_print(stdout, r->out, r->cfg->interval_ms,
	    r->cfg->notifiers, r->counts, n, json);
}

/* The outcome in the state file. */
static int
save(struct run *r)
{
	return save_outcome(r->st, r->out, r->cfg);
}

/*
 * After the commit: what is sent is in the file already.  With a
 * fleet, only a run that took the round of some domain delivers
 * (ddup-check(8), SEVERAL CHECKERS).
 */
static void
deliver(struct run *r)
{
	size_t	 i;
	int	 took = r->ndoms == 0;

	for (i = 0; i < r->ndoms; i++)
		took |= r->doms[i].decides;
	if (took)
		notify_deliver(r->cfg, r->st);
}

/*
 * statusHtml: the page of what this run left, with the last DNS changes,
 * once its state is committed.  A page that cannot be written is an
 * error in the log and -1: the run exits 1 (ddup-check(8), EXIT STATUS),
 * DNS done first.
 */
static int
write_dashboard(struct run *r)
{
	struct st_change	*sc = NULL;
	size_t			 n = 0;
	char			 err[768];
	int			 ret = 0;

	if (r->cfg->status_html == NULL)
		return 0;
	if (state_recent_changes(r->st, DASH_CHANGES, &sc, &n, err,
	    sizeof(err)) == -1)
		logx(LOG_ERR, NULL, NULL, "statusHtml %s: %s",
		    r->cfg->status_html, err);
	if (dashboard_write_outcome(r->cfg->status_html, r->out, r->st,
	    r->cfg->interval_ms, sc, n, err, sizeof(err)) == -1) {
		logx(LOG_ERR, NULL, NULL, "%s", err);
		ret = -1;
	}
	state_changes_free(sc, n);
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

/* Reads the stored state (--status); st NULL means an empty state. */
static void
load_stored(struct run *r)
{
	struct st_snapshot snap;
	char err[768];

	/* What could be read is used all the same (and logged). */
	if (state_load(r->st, r->cfg, 1, r->now, &snap, err,
	    sizeof(err)) == -1)
		logx(LOG_ERR, NULL, NULL, "reading the state: %s", err);
	load(r, &snap);
	state_snapshot_free(r->cfg, &snap);
	outcome_set_last_run(r->out, r->last_run);
	record_fleet(r);
}

/* What the last run chose; a --failback is shown as asked. */
static void
decide_stored(struct run *r)
{
	size_t	 i, j;

	for (i = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];

		d->dec.failback_now = 0;
		decide(&d->dec, d->dep, d->cfg->neps);
		if (!d->st.found) {
			for (j = 0; j < d->cfg->neps; j++)
				d->dep[j].state = EP_UNKNOWN;
			d->dec.status = DOM_UNKNOWN;
		}
		record_domain(r, i, OUTCOME_STATUS);
	}
	record_control(r);
}

static void
free_run(struct run *r)
{
	size_t i;

	for (i = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];

		state_domain_free(&d->st);
		publication_free(&d->pub);
		free(d->why);
		free(d->votes);
		free(d->dep);
	}
	for (i = 0; r->res != NULL && i < r->neps; i++)
		check_res_free(&r->res[i]);
	free(r->res);
	outcome_free(r->out);
	free(r->doms);
	free(r->counts);
	check_res_free(&r->control);
	state_requests_free(&r->req);
	state_round_free(r->cfg, &r->round);
	state_fleet_free(r->fleet);
	if (r->provs != NULL)
		for (i = 0; i < r->cfg->nproviders; i++)
			provider_free(r->provs[i].p);
	free(r->provs);
	state_close(r->st);
}

int
run_status(struct config *cfg, int json)
{
	struct run	 r;
	int		 rc;

	memset(&r, 0, sizeof(r));
	r.cfg = cfg;
	r.kind = OUTCOME_STATUS;
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
	r.kind = dry_run ? OUTCOME_DRY_RUN : OUTCOME_RUN;
	rc = do_run(&r, dry_run, json);
	free_run(&r);
	return rc;
}
