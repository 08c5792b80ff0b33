/*
 * ddup-check: one run of ddup.  Reads the configuration, checks every
 * endpoint once (all in parallel), applies the failover rules to the
 * counters kept in the state file, changes DNS only where the set to
 * publish differs from the set last published, saves the state in one
 * transaction and exits.  See SPEC.md for the contract.
 */

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "decide.h"
#include "log.h"
#include "provider.h"
#include "state.h"
#include "status.h"
#include "util.h"

#define DDUP_VERSION	"0.1.0"
#define DEFAULT_CONFIG	"/etc/ddup/ddup.ini"

#define EXIT_UPDATE	1	/* a DNS update failed */
#define EXIT_USAGE	2	/* bad command line or configuration */

/* One endpoint during a run. */
struct ep_run {
	const struct endpoint_cfg *cfg;
	struct st_endpoint	 st;	/* as stored before the run */
	struct check_res	 res;	/* this run's check */
	int			 checked;
	int			 before;/* state before the run */
};

/* One DNS change attempt of a domain, kept until the state is written. */
struct change {
	int		 family;
	char		*old;
	char		*new;
};

/* One domain during a run. */
struct dom_run {
	const struct domain_cfg	*cfg;
	struct st_domain	 st;
	struct dec_domain	 dec;
	struct ep_run		*eps;
	struct dec_ep		*dep;		/* parallel to eps, for decide() */
	struct rrset		 want[2];	/* [0] A, [1] AAAA */
	int			 synced;	/* DNS holds want (written or found) */
	int			 wrote;		/* this run changed DNS */
	int			 failed;	/* the provider call failed */
	char			 error[512];
	char			 why[600];	/* dry run: what would happen */
	struct change		 changes[2];
	size_t			 nchanges;
};

struct run {
	struct config		*cfg;
	struct state		*st;
	struct provider		**provs;	/* parallel to cfg->providers */
	struct dom_run		*doms;
	size_t			 ndoms;
	long long		 now;
	int			 dry_run;
};

static int
fam_index(int family)
{
	return family == 6 ? 1 : 0;
}

static int
managed(const struct domain_cfg *d, int i)
{
	return i == 0 ? d->has4 : d->has6;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: ddup-check [-c FILE] [-n] [--dry-run] [--status] "
	    "[--json] [-v] [-q] [--version] [--help]\n");
}

static void
help(void)
{
	usage(stdout);
	printf("\n"
	    "  -c, --config FILE    configuration (else $DDUP_CONFIG, else "
	    DEFAULT_CONFIG ")\n"
	    "  -n, --check-config   validate the configuration and exit\n"
	    "      --dry-run        check and show what would be published; "
	    "write nothing\n"
	    "      --status         show the state as of the last run\n"
	    "      --json           with --status or --dry-run: JSON output\n"
	    "  -v, --verbose        one line per check\n"
	    "  -q, --quiet          errors only\n"
	    "      --version        print the version\n"
	    "\nexit status: 0 done, 1 a DNS update failed, 2 bad command line "
	    "or configuration,\n3 another run holds the lock, 4 the state "
	    "file is unusable\n");
}

/* Loads counters and published sets; st NULL means an empty state. */
static void
load(struct run *r)
{
	size_t	 i, j;

	r->ndoms = r->cfg->ndomains;
	r->doms = xcalloc(r->ndoms, sizeof(*r->doms));
	for (i = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];

		d->cfg = &r->cfg->domains[i];
		state_get_domain(r->st, d->cfg->name, &d->st);
		d->dec.attempts = d->cfg->attempts;
		d->dec.recover_after = d->cfg->recover_after;
		d->eps = xcalloc(d->cfg->neps, sizeof(*d->eps));
		d->dep = xcalloc(d->cfg->neps, sizeof(*d->dep));
		for (j = 0; j < d->cfg->neps; j++) {
			struct ep_run *e = &d->eps[j];
			struct dec_ep *de = &d->dep[j];
			int k = fam_index(d->cfg->eps[j].ip.family);

			e->cfg = &d->cfg->eps[j];
			state_get_endpoint(r->st, d->cfg->name, e->cfg->name,
			    e->cfg->ip.s, e->cfg->url, &e->st);
			de->priority = e->cfg->priority;
			de->has_state = e->st.found;
			de->failures = e->st.failures;
			de->passes = e->st.passes;
			de->removed = e->st.removed;
			de->last_ok = e->st.last_ok;
			de->published = d->st.has_pub[k] &&
			    addrset_contains(&d->st.pub[k].addrs, e->cfg->ip.s);
			de->result = CR_NONE;
		}
	}
}

/* The states as the last run left them, to log what changes. */
static void
states_before(struct dom_run *d)
{
	struct dec_ep		*tmp;
	struct dec_domain	 dd = d->dec;
	size_t			 j, n = d->cfg->neps;

	tmp = xcalloc(n, sizeof(*tmp));
	memcpy(tmp, d->dep, n * sizeof(*tmp));
	decide(&dd, tmp, n);
	for (j = 0; j < n; j++)
		d->eps[j].before = tmp[j].state;
	free(tmp);
}

static int
run_checks(struct run *r)
{
	struct check_req	*reqs;
	struct check_res	*res;
	size_t			 i, j, n = 0, k = 0;
	char			 err[256];
	int			 rc = -1;

	for (i = 0; i < r->ndoms; i++)
		n += r->doms[i].cfg->neps;
	reqs = xcalloc(n ? n : 1, sizeof(*reqs));
	res = xcalloc(n ? n : 1, sizeof(*res));
	for (i = 0; i < r->ndoms; i++) {
		const struct domain_cfg *dc = r->doms[i].cfg;

		for (j = 0; j < dc->neps; j++, k++) {
			reqs[k].url = dc->eps[j].url;
			reqs[k].host = dc->eps[j].host;
			reqs[k].head = dc->head;
			reqs[k].timeout_ms = dc->timeout_ms;
			reqs[k].expect = &dc->expect;
			reqs[k].expect_body = dc->expect_body;
		}
	}
	if (check_run(reqs, res, n, r->cfg->max_parallel, r->cfg->ca_file,
	    err, sizeof(err)) == -1) {
		logx(LOG_ERR, NULL, NULL, "health checks: %s", err);
		goto out;
	}
	for (i = 0, k = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];

		for (j = 0; j < d->cfg->neps; j++, k++) {
			d->eps[j].res = res[k];
			d->eps[j].checked = 1;
			d->dep[j].result = res[k].ok ? CR_PASS : CR_FAIL;
			logx(LOG_DEBUG, d->cfg->name, d->eps[j].cfg->name,
			    "%s (%ld ms)", res[k].reason, res[k].latency_ms);
		}
	}
	rc = 0;
out:
	free(reqs);
	free(res);
	return rc;
}

/* The sets this run wants in DNS, for the managed families. */
static void
build_want(struct dom_run *d)
{
	size_t	 j;
	int	 i;

	for (i = 0; i < 2; i++) {
		d->want[i].family = i == 0 ? 4 : 6;
		d->want[i].ttl = d->cfg->ttl;
	}
	for (j = 0; j < d->cfg->neps; j++)
		if (d->dep[j].publish)
			addrset_add_addr(&d->want[fam_index(
			    d->eps[j].cfg->ip.family)].addrs, &d->eps[j].cfg->ip);
}

/* Equal as DNS sees it: an empty RRset has no TTL to compare. */
static int
rrset_same(const struct rrset *a, long bttl, const struct addrset *b)
{
	if (!addrset_equal(&a->addrs, b))
		return 0;
	return a->addrs.n == 0 || a->ttl == bttl;
}

/* Both families in one list, for logs and status. */
static char *
join_both(const struct addrset *a, const struct addrset *b)
{
	struct addrset	 all = { 0 };
	char		*s;
	size_t		 i;

	for (i = 0; a != NULL && i < a->n; i++)
		addrset_add_addr(&all, &a->v[i]);
	for (i = 0; b != NULL && i < b->n; i++)
		addrset_add_addr(&all, &b->v[i]);
	s = addrset_join(&all);
	addrset_free(&all);
	return s;
}

static struct provider *
provider_of(struct run *r, const struct domain_cfg *dc, char *err,
    size_t errlen)
{
	size_t i = (size_t)(dc->provider - r->cfg->providers);

	if (r->provs[i] == NULL)
		r->provs[i] = provider_create(dc->provider, err, errlen);
	return r->provs[i];
}

/*
 * Brings DNS to d->want where it differs from what was last published
 * (or, on the domain's first run, from what the provider holds now).
 */
static void
sync_domain(struct run *r, struct dom_run *d)
{
	struct rrset	 cur[2], sets[2];
	struct provider	*p;
	const char	*pname = d->cfg->provider->name;
	char		 err[512] = "";
	char		*old = NULL, *new = NULL;
	size_t		 nread = 0, nsets = 0;
	enum perr	 pe;
	int		 i, differs = 0;

	memset(cur, 0, sizeof(cur));
	for (i = 0; i < 2; i++) {
		cur[i].family = i == 0 ? 4 : 6;
		if (!managed(d->cfg, i))
			continue;
		if (d->st.has_pub[i]) {
			cur[i].ttl = d->st.pub[i].ttl;
			addrset_copy(&cur[i].addrs, &d->st.pub[i].addrs);
		} else
			nread++;
	}
	p = provider_of(r, d->cfg, err, sizeof(err));
	if (p == NULL) {
		snprintf(d->error, sizeof(d->error), "provider %s: %s", pname,
		    err);
		goto failed;
	}
	if (nread > 0) {
		struct rrset rd[2];
		size_t k = 0;

		memset(rd, 0, sizeof(rd));
		for (i = 0; i < 2; i++)
			if (managed(d->cfg, i) && !d->st.has_pub[i])
				rd[k++].family = cur[i].family;
		pe = provider_read(p, d->cfg->name, rd, k, err, sizeof(err));
		if (pe != PERR_OK) {
			snprintf(d->error, sizeof(d->error),
			    "reading current records from provider %s: %s: %s",
			    pname, perr_str(pe), err);
			for (i = 0; i < (int)k; i++)
				addrset_free(&rd[i].addrs);
			goto failed;
		}
		for (i = 0; i < (int)k; i++) {
			int x = fam_index(rd[i].family);

			cur[x].ttl = rd[i].ttl;
			addrset_copy(&cur[x].addrs, &rd[i].addrs);
			addrset_free(&rd[i].addrs);
		}
	}
	for (i = 0; i < 2; i++) {
		if (!managed(d->cfg, i))
			continue;
		sets[nsets++] = d->want[i];
		if (!rrset_same(&d->want[i], cur[i].ttl, &cur[i].addrs))
			differs = 1;
	}
	old = join_both(&cur[0].addrs, &cur[1].addrs);
	new = join_both(&d->want[0].addrs, &d->want[1].addrs);
	if (!differs) {
		if (nread > 0)
			logx(LOG_DEBUG, d->cfg->name, NULL,
			    "DNS already holds [%s]", new);
		d->synced = 1;
		goto out;
	}
	pe = provider_replace(p, d->cfg->name, sets, nsets, err, sizeof(err));
	for (i = 0; i < 2; i++) {
		if (!managed(d->cfg, i))
			continue;
		d->changes[d->nchanges].family = cur[i].family;
		d->changes[d->nchanges].old = addrset_join(&cur[i].addrs);
		d->changes[d->nchanges].new = addrset_join(&d->want[i].addrs);
		d->nchanges++;
	}
	if (pe != PERR_OK) {
		snprintf(d->error, sizeof(d->error), "provider %s: %s: %s",
		    pname, perr_str(pe), err);
		log_change(LOG_ERR, "dns_update_failed", d->cfg->name, old,
		    new, d->dec.tier, d->error);
		d->failed = 1;
		goto out;
	}
	log_change(LOG_INFO, "dns_updated", d->cfg->name, old, new,
	    d->dec.tier, "DNS updated");
	d->synced = 1;
	d->wrote = 1;
	goto out;
failed:
	logx(LOG_ERR, d->cfg->name, NULL, "%s", d->error);
	d->failed = 1;
out:
	for (i = 0; i < 2; i++)
		addrset_free(&cur[i].addrs);
	free(old);
	free(new);
}

/* Explains, without calling the provider, what a real run would do. */
static void
explain(struct dom_run *d)
{
	char	*old, *new;
	int	 i, first = 0, differs = 0;

	for (i = 0; i < 2; i++) {
		if (!managed(d->cfg, i))
			continue;
		if (!d->st.has_pub[i])
			first = 1;
		else if (!rrset_same(&d->want[i], d->st.pub[i].ttl,
		    &d->st.pub[i].addrs))
			differs = 1;
	}
	old = join_both(d->st.has_pub[0] ? &d->st.pub[0].addrs : NULL,
	    d->st.has_pub[1] ? &d->st.pub[1].addrs : NULL);
	new = join_both(&d->want[0].addrs, &d->want[1].addrs);
	if (!d->dec.any_healthy)
		snprintf(d->why, sizeof(d->why), "no healthy endpoint: DNS "
		    "would be left as it is [%s]", old);
	else if (first)
		snprintf(d->why, sizeof(d->why), "would publish [%s] (tier %ld): "
		    "first run for this domain, so the provider's records would "
		    "be read and written only if they differ", new, d->dec.tier);
	else if (differs)
		snprintf(d->why, sizeof(d->why), "would change DNS: [%s] -> [%s] "
		    "(tier %ld)", old, new, d->dec.tier);
	else
		snprintf(d->why, sizeof(d->why), "no change: DNS holds [%s] "
		    "(tier %ld)", old, d->dec.tier);
	free(old);
	free(new);
}

/* Marks which endpoints DNS holds after the run, then their states. */
static void
settle(struct run *r, struct dom_run *d)
{
	size_t	 j;

	if (d->synced || (r->dry_run && d->dec.any_healthy))
		for (j = 0; j < d->cfg->neps; j++)
			d->dep[j].published = d->dep[j].publish;
	decide_states(&d->dec, d->dep, d->cfg->neps);
}

/* One line per endpoint whose state changed, and per domain gone unhealthy. */
static void
log_transitions(struct dom_run *d)
{
	size_t	 j;

	for (j = 0; j < d->cfg->neps; j++) {
		struct ep_run *e = &d->eps[j];
		int now = d->dep[j].state;

		if (now == e->before)
			continue;
		/* A first pass is not news; a first failure is. */
		if (e->before == EP_UNKNOWN && now != EP_DOWN)
			continue;
		logx(now == EP_DOWN ? LOG_WARN : LOG_INFO, d->cfg->name,
		    e->cfg->name, "%s -> %s: %s", ep_state_str(e->before),
		    ep_state_str(now), e->res.reason);
	}
	if (!d->dec.any_healthy && !d->st.unhealthy)
		logx(LOG_ERR, d->cfg->name, NULL, "no healthy endpoint: DNS "
		    "left as it is");
	else if (d->dec.any_healthy && d->st.unhealthy)
		logx(LOG_INFO, d->cfg->name, NULL, "healthy endpoints again");
}

/* Everything the run learnt, in one transaction. */
static int
save(struct run *r)
{
	char	 err[512];
	size_t	 i, j, k;

	if (state_begin(r->st, err, sizeof(err)) == -1)
		goto fail;
	for (i = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];
		struct st_domain sd = d->st;

		for (j = 0; j < d->cfg->neps; j++) {
			struct ep_run *e = &d->eps[j];
			struct st_endpoint se;

			memset(&se, 0, sizeof(se));
			se.found = 1;
			se.failures = d->dep[j].new_failures;
			se.passes = d->dep[j].new_passes;
			se.removed = d->dep[j].new_removed;
			se.last_check = r->now;
			se.last_ok = e->res.ok;
			se.last_status = e->res.status;
			se.latency_ms = e->res.latency_ms;
			snprintf(se.last_result, sizeof(se.last_result), "%s",
			    e->res.reason);
			if (state_put_endpoint(r->st, d->cfg->name,
			    e->cfg->name, e->cfg->ip.s, e->cfg->url,
			    e->cfg->priority, &se) == -1 ||
			    state_add_check(r->st, r->now, d->cfg->name,
			    e->cfg->name, e->cfg->ip.s, e->res.ok,
			    e->res.status, e->res.latency_ms,
			    e->res.reason) == -1)
				goto dberr;
		}
		sd.unhealthy = !d->dec.any_healthy;
		if (d->synced) {
			sd.has_tier = 1;
			sd.tier = d->dec.tier;
			sd.last_error[0] = '\0';
			if (d->wrote)
				sd.last_change = r->now;
			for (k = 0; k < 2; k++)
				if (managed(d->cfg, (int)k) &&
				    state_put_published(r->st, d->cfg->name,
				    d->want[k].family, d->want[k].ttl,
				    &d->want[k].addrs) == -1)
					goto dberr;
		} else if (d->failed)
			snprintf(sd.last_error, sizeof(sd.last_error), "%s",
			    d->error);
		if (state_put_domain(r->st, d->cfg->name,
		    d->cfg->provider->name, d->cfg->ttl, &sd) == -1)
			goto dberr;
		for (k = 0; k < d->nchanges; k++)
			if (state_add_change(r->st, r->now, d->cfg->name,
			    d->changes[k].family, d->cfg->ttl, d->changes[k].old,
			    d->changes[k].new, d->dec.has_tier ? d->dec.tier : -1,
			    !d->failed, d->failed ? d->error : NULL) == -1)
				goto dberr;
	}
	if (state_finish_run(r->st, r->now, r->cfg) == -1)
		goto dberr;
	if (state_commit(r->st, err, sizeof(err)) == -1)
		goto fail;
	return 0;
dberr:
	snprintf(err, sizeof(err), "%s", state_errmsg(r->st));
	state_rollback(r->st);
fail:
	logx(LOG_ERR, NULL, NULL, "saving state: %s", err);
	return -1;
}

/* Fills a report from a run (dry run) or from the stored state. */
static void
build_report(struct run *r, struct report *rep, int from_run)
{
	size_t	 i, j;

	rep->generated = now_ms();
	rep->last_run = from_run ? r->now : state_last_run(r->st);
	rep->interval_ms = r->cfg->interval_ms;
	rep->ndomains = r->ndoms;
	rep->domains = xcalloc(r->ndoms ? r->ndoms : 1, sizeof(*rep->domains));
	for (i = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];
		struct report_domain *rd = &rep->domains[i];

		rd->name = d->cfg->name;
		rd->provider = d->cfg->provider->name;
		rd->ttl = d->cfg->ttl;
		rd->status = d->dec.status;
		rd->eps = xcalloc(d->cfg->neps, sizeof(*rd->eps));
		rd->neps = d->cfg->neps;
		rd->has_tier = d->st.has_tier;
		rd->tier = d->st.tier;
		rd->last_change = d->st.last_change;
		rd->last_error = d->st.last_error[0] ? d->st.last_error : NULL;
		rd->why = d->why[0] ? d->why : NULL;
		if (from_run && d->dec.any_healthy) {
			rd->has_tier = 1;
			rd->tier = d->dec.tier;
		}
		for (j = 0; j < d->cfg->neps; j++) {
			struct report_ep *re = &rd->eps[j];
			struct ep_run *e = &d->eps[j];

			re->name = e->cfg->name;
			re->url = e->cfg->url;
			re->ip = e->cfg->ip.s;
			re->priority = e->cfg->priority;
			re->state = d->dep[j].state;
			re->healthy = d->dep[j].healthy;
			re->published = d->dep[j].published;
			re->failures = d->dep[j].new_failures;
			re->passes = d->dep[j].new_passes;
			if (re->published)
				addrset_add_addr(&rd->published, &e->cfg->ip);
			if (e->checked) {
				re->last_check = r->now;
				re->last_result = e->res.reason;
				re->latency_ms = e->res.latency_ms;
			} else if (e->st.found && e->st.last_check > 0) {
				re->last_check = e->st.last_check;
				re->last_result = e->st.last_result;
				re->latency_ms = e->st.latency_ms;
			} else
				re->latency_ms = -1;
		}
	}
}

static void
free_report(struct report *rep)
{
	size_t i;

	for (i = 0; i < rep->ndomains; i++) {
		free(rep->domains[i].eps);
		addrset_free(&rep->domains[i].published);
	}
	free(rep->domains);
}

static int
print_report(struct run *r, int from_run, int json)
{
	struct report	 rep;
	int		 rc = 0;

	memset(&rep, 0, sizeof(rep));
	build_report(r, &rep, from_run);
	if (json)
		rc = report_print_json(stdout, &rep);
	else
		report_print_text(stdout, &rep);
	free_report(&rep);
	if (fflush(stdout) == EOF)
		rc = -1;
	return rc;
}

static void
free_run(struct run *r)
{
	size_t i, j;

	for (i = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];

		state_domain_free(&d->st);
		addrset_free(&d->want[0].addrs);
		addrset_free(&d->want[1].addrs);
		for (j = 0; j < d->nchanges; j++) {
			free(d->changes[j].old);
			free(d->changes[j].new);
		}
		free(d->eps);
		free(d->dep);
	}
	free(r->doms);
	if (r->provs != NULL)
		for (i = 0; i < r->cfg->nproviders; i++)
			provider_free(r->provs[i]);
	free(r->provs);
	state_close(r->st);
}

/* --status: the stored state, no checks, no DNS. */
static int
do_status(struct run *r, int json)
{
	char	 err[512];
	size_t	 i;

	if (state_open(r->cfg->state, STATE_RO, &r->st, err, sizeof(err)) !=
	    STATE_OK) {
		logx(LOG_ERR, NULL, NULL, "%s", err);
		return STATE_BAD;
	}
	load(r);
	for (i = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];

		decide(&d->dec, d->dep, d->cfg->neps);
		if (!d->st.found) {
			size_t j;

			for (j = 0; j < d->cfg->neps; j++)
				d->dep[j].state = EP_UNKNOWN;
			d->dec.status = DOM_UNKNOWN;
		}
	}
	return print_report(r, 0, json) == 0 ? 0 : EXIT_UPDATE;
}

/* A check run: real, or dry (nothing written, no provider called). */
static int
do_run(struct run *r, int dry_run, int json)
{
	char	 err[512];
	size_t	 i;
	int	 rc;

	r->dry_run = dry_run;
	rc = state_open(r->cfg->state, dry_run ? STATE_RO : STATE_RW, &r->st,
	    err, sizeof(err));
	if (rc != STATE_OK) {
		if (rc == STATE_LOCKED)
			logx(LOG_WARN, NULL, NULL, "%s", err);
		else
			logx(LOG_ERR, NULL, NULL, "%s", err);
		return rc;
	}
	load(r);
	for (i = 0; i < r->ndoms; i++)
		states_before(&r->doms[i]);
	r->now = now_ms();
	if (run_checks(r) == -1)
		return EXIT_UPDATE;
	r->provs = xcalloc(r->cfg->nproviders ? r->cfg->nproviders : 1,
	    sizeof(*r->provs));
	rc = 0;
	for (i = 0; i < r->ndoms; i++) {
		struct dom_run *d = &r->doms[i];

		decide(&d->dec, d->dep, d->cfg->neps);
		build_want(d);
		if (dry_run)
			explain(d);
		else if (d->dec.any_healthy)
			sync_domain(r, d);
		if (d->failed)
			rc = EXIT_UPDATE;
		settle(r, d);
		if (!dry_run)
			log_transitions(d);
	}
	if (dry_run)
		return print_report(r, 1, json) == 0 ? rc : EXIT_UPDATE;
	if (save(r) == -1)
		return STATE_BAD;
	return rc;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "config",	required_argument, NULL, 'c' },
		{ "check-config", no_argument,	NULL, 'n' },
		{ "dry-run",	no_argument,	NULL, 'D' },
		{ "status",	no_argument,	NULL, 'S' },
		{ "json",	no_argument,	NULL, 'J' },
		{ "verbose",	no_argument,	NULL, 'v' },
		{ "quiet",	no_argument,	NULL, 'q' },
		{ "version",	no_argument,	NULL, 'V' },
		{ "help",	no_argument,	NULL, 'h' },
		{ NULL,		0,		NULL, 0 }
	};
	struct run	 r;
	const char	*path = NULL;
	int		 ch, check_only = 0, dry_run = 0, status = 0, json = 0;
	int		 verbose = 0, quiet = 0, rc;

	memset(&r, 0, sizeof(r));
	while ((ch = getopt_long(argc, argv, "c:nvqh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			path = optarg;
			break;
		case 'n':
			check_only = 1;
			break;
		case 'D':
			dry_run = 1;
			break;
		case 'S':
			status = 1;
			break;
		case 'J':
			json = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'V':
			printf("ddup-check %s\n", DDUP_VERSION);
			return 0;
		case 'h':
			help();
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ddup-check: unexpected argument: %s\n",
		    argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (check_only + dry_run + status > 1 || (json && !dry_run && !status) ||
	    (verbose && quiet)) {
		fprintf(stderr, "ddup-check: use at most one of -n, --dry-run "
		    "and --status; --json goes with --status or --dry-run; "
		    "-v and -q exclude each other\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (path == NULL)
		path = getenv("DDUP_CONFIG");
	if (path == NULL || *path == '\0')
		path = DEFAULT_CONFIG;

	/* A health check or provider write must not kill us with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	log_init(0, quiet ? LOG_ERR : verbose ? LOG_DEBUG : LOG_INFO);
	/*
	 * Configuration warnings are for a person (-n, --dry-run, --status,
	 * -v); a plain run from cron stays silent unless something happens.
	 */
	r.cfg = config_load(path, stderr, !quiet &&
	    (check_only || dry_run || status || verbose));
	if (r.cfg == NULL)
		return EXIT_USAGE;
	log_init(r.cfg->log_json, quiet ? LOG_ERR : verbose ? LOG_DEBUG :
	    LOG_INFO);
	if (check_only) {
		if (!quiet)
			printf("%s: configuration OK (%zu domains)\n", path,
			    r.cfg->ndomains);
		config_free(r.cfg);
		return 0;
	}
	if (check_global_init() == -1) {
		logx(LOG_ERR, NULL, NULL, "cannot initialise libcurl");
		config_free(r.cfg);
		return EXIT_UPDATE;
	}
	if (status)
		rc = do_status(&r, json);
	else
		rc = do_run(&r, dry_run, json);
	free_run(&r);
	check_global_cleanup();
	config_free(r.cfg);
	return rc;
}
