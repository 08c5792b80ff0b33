/*
 * Formatting of --status and --dry-run: a table for people and the JSON
 * document of ddup-check(8), STATUS JSON, for scripts, from a run's outcome.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "config.h"
#include "decide.h"
#include "log.h"
#include "outcome.h"
#include "state.h"
#include "status.h"
#include "util.h"
#include "vote.h"

void
report_from_outcome(struct report *rep, const struct outcome *o,
    long long interval_ms)
{
	const struct outcome_control *c = outcome_control(o);
	size_t	 i;

	memset(rep, 0, sizeof(*rep));
	rep->generated = now_ms();
	rep->last_run = outcome_last_run(o);
	rep->interval_ms = interval_ms;
	/* Sums that hold: a state file may carry any time. */
	rep->stale = rep->last_run != 0 && interval_ms > 0 &&
	    ms_add(rep->last_run, 3 * interval_ms) < rep->generated;
	rep->control_url = c->url;
	rep->control_since = c->since;
	rep->control_result = c->since != 0 ? c->result : NULL;
	rep->fleet = outcome_fleet(o)->shared ? outcome_fleet(o) : NULL;
	rep->ndomains = outcome_ndomains(o);
	rep->domains = xcalloc(rep->ndomains ? rep->ndomains : 1,
	    sizeof(*rep->domains));
	for (i = 0; i < rep->ndomains; i++) {
		const struct outcome_domain *od = outcome_domain(o, i);
		struct report_domain *rd = &rep->domains[i];

		rd->name = od->cfg->name;
		rd->provider = od->cfg->provider->name;
		rd->ttl = od->cfg->pol.ttl;
		rd->status = od->status;
		rd->eps = od->eps;
		rd->neps = od->neps;
		rd->has_tier = od->has_tier;
		rd->tier = od->tier.priority;
		rd->located = od->tier.located;
		rd->tier_rank = od->tier.rank;
		rd->tier_location = od->tier.location;
		rd->last_change = od->last_change;
		rd->last_error = od->last_error;
		rd->why = od->why;
		rd->fallback = od->fail_open == ALLDOWN_FALLBACK;
		rd->all_down = od->fail_open == ALLDOWN_ALL;
		rd->failover_since = od->failover_since;
		rd->failover_reason = od->failover_reason;
		rd->ttl_written = od->ttl_written;
		rd->waiting = od->waiting;
		rd->best_tier = od->best.priority;
		rd->best_location = od->best.location;
		rd->failback_requested = od->failback_requested;
		rd->attempts = od->cfg->pol.attempts;
		rd->timeout_ms = od->cfg->pol.timeout_ms;
		rd->recheck_ms = od->cfg->pol.recheck_ms;
		rd->recover_after = od->cfg->pol.recover_after;
		rd->cert_warn_ms = od->cfg->pol.cert_warn_ms;
		rd->round = rep->fleet != NULL ? &od->round : NULL;
		addrset_copy(&rd->published, &od->published);
		rd->published_cname = od->published_cname;
	}
}

/* A [notify] section's outbox from its counts. */
static void
report_notifiers(struct report *rep, const struct notify_cfg *nc,
    const struct st_notify_counts *counts, size_t n)
{
	size_t	 i;

	rep->nnotifiers = n;
	rep->notifiers = xcalloc(n + 1, sizeof(*rep->notifiers));
	for (i = 0; i < n; i++) {
		struct report_notify *rn = &rep->notifiers[i];

		rn->name = nc[i].name;
		rn->kind = nc[i].url != NULL ? "webhook" : "program";
		rn->pending = counts[i].pending;
		rn->given_up = counts[i].given_up;
		rn->oldest_pending = counts[i].oldest_pending;
		rn->last_error = counts[i].last_error[0] != '\0' ?
		    counts[i].last_error : NULL;
	}
}

int
report_print(FILE *f, const struct outcome *o, long long interval_ms,
    const struct notify_cfg *nc, const struct st_notify_counts *counts,
    size_t n, int json)
{
	struct report	 rep;
	int		 rc = 0;

	report_from_outcome(&rep, o, interval_ms);
	report_notifiers(&rep, nc, counts, n);
	if (json)
		rc = report_print_json(f, &rep);
	else
		report_print_text(f, &rep);
	report_free(&rep);
	/* A full disk or a closed pipe: say so, or the caller sees nothing. */
	errno = 0;
	if (fflush(f) == EOF || ferror(f)) {
		logx(LOG_ERR, NULL, NULL, "cannot write to standard output: %s",
		    strerror(errno != 0 ? errno : EIO));
		rc = -1;
	} else if (rc == -1)
		logx(LOG_ERR, NULL, NULL, "cannot write the JSON document");
	return rc;
}

void
report_free(struct report *rep)
{
	size_t i;

	for (i = 0; i < rep->ndomains; i++) {
		addrset_free(&rep->domains[i].published);
	}
	free(rep->domains);
	free(rep->notifiers);
}

static json_t *
json_time(long long ms)
{
	char buf[32];

	/* 0 is "none"; a time before 1970 is still a time. */
	if (ms == 0)
		return json_null();
	iso_time(ms, buf, sizeof(buf));
	return json_string(buf);
}

/* Text from servers, the configuration and the state file. */
static json_t *
json_text(const char *s)
{
	char	*copy;
	json_t	*j;

	if (s == NULL)
		return json_null();
	copy = xstrdup(s);
	text_printable(copy);		/* also valid UTF-8, as JSON needs */
	j = json_string(copy);
	free(copy);
	return j;
}

/* Seconds: an integer when whole, as most settings are. */
static json_t *
json_seconds(long long ms)
{
	return ms % 1000 == 0 ? json_integer(ms / 1000) :
	    json_real((double)ms / 1000);
}

/*
 * How long clients may be sent to a dead server: attempts checks an
 * interval apart, then caches hold the old records for ttl; a server
 * that stops answering costs each check its timeout on top.  With
 * several checkers (ddup-check(8), SEVERAL CHECKERS) the others' votes
 * come from the slot before: one interval more.
 */
static int
several(const struct report *r)
{
	return r->fleet != NULL && r->fleet->ncheckers > 1;
}

/*
 * With recheck (ddup.ini(5)), one checker confirms a failure within the
 * run: the run that first sees the server fail (up to an interval
 * after) removes it attempts - 1 repeats later, each recheck after the
 * check before, which costs its timeout too when the server hangs.  A
 * fleet's round counts one failure a slot: recheck does not hasten it.
 */
static int
rechecks(const struct report *r, const struct report_domain *d)
{
	return d->recheck_ms > 0 && !several(r);
}

/* recheck: from the first failed check to the last of its repeats. */
static long long
confirm_ms(const struct report_domain *d)
{
	return (d->attempts - 1) * (d->recheck_ms + d->timeout_ms);
}

static long long
failover_ms(const struct report *r, const struct report_domain *d, int slow)
{
	if (rechecks(r, d))
		return r->interval_ms + (d->attempts - 1) * d->recheck_ms +
		    d->ttl * 1000LL + (slow ? d->attempts * d->timeout_ms : 0);
	return r->interval_ms * (d->attempts + several(r)) +
	    d->ttl * 1000LL + (slow ? d->timeout_ms : 0);
}

static json_t *
failover_json(const struct report *r, const struct report_domain *d)
{
	json_t *o = json_object();

	json_object_set_new(o, "seconds", json_seconds(failover_ms(r, d, 0)));
	json_object_set_new(o, "secondsWhenTimingOut",
	    json_seconds(failover_ms(r, d, 1)));
	json_object_set_new(o, "interval", json_seconds(r->interval_ms));
	json_object_set_new(o, "attempts", json_integer(d->attempts));
	json_object_set_new(o, "ttl", json_integer(d->ttl));
	json_object_set_new(o, "timeout", json_seconds(d->timeout_ms));
	if (rechecks(r, d)) {
		json_object_set_new(o, "recheck", json_seconds(d->recheck_ms));
		json_object_set_new(o, "secondsAfterFailedCheck",
		    json_seconds(confirm_ms(d)));
	}
	if (several(r))
		json_object_set_new(o, "severalCheckers", json_true());
	return o;
}

static json_t *
endpoint_json(const struct outcome_ep *e, int fleet)
{
	json_t *o = json_object();

	json_object_set_new(o, "name", json_text(e->cfg->name));
	json_object_set_new(o, "url", json_text(e->cfg->url));
	json_object_set_new(o, "ip", json_text(outcome_ep_ip(e)));
	if (e->cfg->cname != NULL)
		json_object_set_new(o, "cname", json_text(e->cfg->cname));
	json_object_set_new(o, "priority", json_integer(e->cfg->priority));
	json_object_set_new(o, "location", json_text(e->cfg->location));
	json_object_set_new(o, "state", json_string(ep_state_str(e->state)));
	json_object_set_new(o, "drained", json_boolean(e->drained));
	json_object_set_new(o, "drainedUntil", e->drained ?
	    json_time(e->drained_until) : json_null());
	json_object_set_new(o, "healthy", json_boolean(e->healthy));
	json_object_set_new(o, "published", json_boolean(e->published));
	json_object_set_new(o, "failures", json_integer(e->failures));
	json_object_set_new(o, "passes", json_integer(e->passes));
	json_object_set_new(o, "lastCheck", json_time(e->last_check));
	json_object_set_new(o, "lastResult", json_text(e->last_result));
	json_object_set_new(o, "latencyMs", e->latency_ms >= 0 ?
	    json_integer(e->latency_ms) : json_null());
	/* Only checks that see a certificate have it (ddup-check(8)). */
	if (check_takes(e->cfg->url) & CHECK_TAKES_CERT)
		json_object_set_new(o, "certExpires",
		    json_time(e->cert_expires * 1000));
	if (fleet) {
		json_t *v = json_null();

		if (e->has_votes) {
			v = json_object();
			json_object_set_new(v, "pass",
			    json_integer(e->votes_pass));
			json_object_set_new(v, "fail",
			    json_integer(e->votes_fail));
			json_object_set_new(v, "verdict",
			    json_string(vote_verdict_str(e->verdict)));
		}
		json_object_set_new(o, "votes", v);
	}
	return o;
}

/* A domain's last round, null when none is known (ddup-check(8),
   SEVERAL CHECKERS). */
static json_t *
round_json(const struct outcome_round *rd)
{
	json_t *o;

	if (rd == NULL || !rd->has)
		return json_null();
	o = json_object();
	json_object_set_new(o, "slot", json_integer(rd->slot));
	json_object_set_new(o, "at", json_time(rd->at));
	json_object_set_new(o, "checker", json_text(rd->checker));
	json_object_set_new(o, "heard", json_integer(rd->heard));
	json_object_set_new(o, "void", json_boolean(rd->void_all));
	return o;
}

/* The fleet, each checker's last report, who is out of step
   (ddup-check(8), SEVERAL CHECKERS). */
static json_t *
fleet_json(const struct outcome_fleet *f)
{
	json_t	*o = json_object(), *a = json_array(), *out = json_array(), *c;
	size_t	 i;

	for (i = 0; i < f->ncheckers; i++) {
		const struct outcome_checker *k = &f->checkers[i];

		c = json_object();
		json_object_set_new(c, "name", json_text(k->name));
		json_object_set_new(c, "lastReport", json_time(k->at));
		json_object_set_new(c, "slot", k->at > 0 ?
		    json_integer(k->slot) : json_null());
		json_object_set_new(c, "inStep", k->at > 0 ?
		    json_boolean(k->in_step) : json_null());
		json_object_set_new(c, "passes", json_integer(k->passes));
		json_object_set_new(c, "failures", json_integer(k->failures));
		json_array_append_new(a, c);
		if (k->at > 0 && !k->in_step)
			json_array_append_new(out, json_text(k->name));
	}
	json_object_set_new(o, "quorum", json_integer(f->quorum));
	json_object_set_new(o, "slot", f->slot > 0 ? json_integer(f->slot) :
	    json_null());
	json_object_set_new(o, "checkers", a);
	json_object_set_new(o, "outOfStep", out);
	return o;
}

static json_t *
domain_json(const struct report *r, const struct report_domain *d)
{
	json_t	*o = json_object(), *pub = json_array(), *eps = json_array();
	size_t	 i;

	for (i = 0; i < d->published.n; i++)
		json_array_append_new(pub, json_string(d->published.v[i].s));
	if (d->published_cname != NULL)
		json_array_append_new(pub, json_text(d->published_cname));
	for (i = 0; i < d->neps; i++)
		json_array_append_new(eps, endpoint_json(&d->eps[i],
		    r->fleet != NULL));
	json_object_set_new(o, "name", json_text(d->name));
	json_object_set_new(o, "provider", json_text(d->provider));
	json_object_set_new(o, "ttl", json_integer(d->ttl));
	json_object_set_new(o, "status", json_string(dom_status_str(d->status)));
	json_object_set_new(o, "published", pub);
	json_object_set_new(o, "tier", d->fallback ? json_string("fallback") :
	    d->has_tier ? json_integer(d->tier) : json_null());
	json_object_set_new(o, "tierLocation", d->has_tier && d->located &&
	    d->tier_location != NULL ? json_text(d->tier_location) :
	    json_null());
	json_object_set_new(o, "betterTierWaiting", json_boolean(d->waiting));
	json_object_set_new(o, "waitingTier", d->waiting ?
	    json_integer(d->best_tier) : json_null());
	json_object_set_new(o, "waitingTierLocation", d->waiting &&
	    d->located && d->best_location != NULL ?
	    json_text(d->best_location) : json_null());
	json_object_set_new(o, "failbackRequested",
	    json_boolean(d->failback_requested));
	json_object_set_new(o, "lastChange", json_time(d->last_change));
	json_object_set_new(o, "lastError", json_text(d->last_error));
	json_object_set_new(o, "failover", failover_json(r, d));
	json_object_set_new(o, "failoverSince", json_time(d->failover_since));
	json_object_set_new(o, "failoverReason", json_text(
	    d->failover_reason));
	json_object_set_new(o, "degradedTtl", d->ttl_written != 0 &&
	    d->ttl_written != d->ttl ? json_integer(d->ttl_written) :
	    json_null());
	if (r->fleet != NULL)
		json_object_set_new(o, "round", round_json(d->round));
	json_object_set_new(o, "endpoints", eps);
	return o;
}

static json_t *
notifiers_json(const struct report *r)
{
	json_t	*a = json_array(), *o;
	size_t	 i;

	for (i = 0; i < r->nnotifiers; i++) {
		const struct report_notify *n = &r->notifiers[i];

		o = json_object();
		json_object_set_new(o, "name", json_text(n->name));
		json_object_set_new(o, "kind", json_string(n->kind));
		json_object_set_new(o, "pending", json_integer(n->pending));
		json_object_set_new(o, "givenUp", json_integer(n->given_up));
		json_object_set_new(o, "oldestPending",
		    json_time(n->oldest_pending));
		json_object_set_new(o, "lastError", json_text(n->last_error));
		json_array_append_new(a, o);
	}
	return a;
}

int
report_print_json(FILE *f, const struct report *r)
{
	json_t	*root, *doms;
	size_t	 i;
	int	 rc = -1;

	root = json_object();
	doms = json_array();
	if (root == NULL || doms == NULL)
		goto out;
	json_object_set_new(root, "generatedAt", json_time(r->generated));
	json_object_set_new(root, "lastRun", json_time(r->last_run));
	json_object_set_new(root, "interval", json_seconds(r->interval_ms));
	json_object_set_new(root, "stale", json_boolean(r->stale));
	json_object_set_new(root, "staleAfter", r->last_run != 0 ?
	    json_time(ms_add(r->last_run, 3 * r->interval_ms)) : json_null());
	if (r->control_url != NULL) {
		json_t *c = json_object();

		json_object_set_new(c, "url", json_text(r->control_url));
		json_object_set_new(c, "ok", json_boolean(r->control_since == 0));
		json_object_set_new(c, "failedSince",
		    json_time(r->control_since));
		json_object_set_new(c, "lastResult", r->control_since != 0 ?
		    json_text(r->control_result) : json_null());
		json_object_set_new(root, "controlUrl", c);
	} else
		json_object_set_new(root, "controlUrl", json_null());
	for (i = 0; i < r->ndomains; i++)
		json_array_append_new(doms, domain_json(r, &r->domains[i]));
	json_object_set(root, "domains", doms);
	json_object_set_new(root, "notifications", notifiers_json(r));
	if (r->fleet != NULL)
		json_object_set_new(root, "fleet", fleet_json(r->fleet));
	if (json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0)
		goto out;
	fputc('\n', f);
	rc = 0;
out:
	json_decref(doms);
	json_decref(root);
	return rc;
}

/*
 * The endpoint table's columns of text, each as wide as its widest cell
 * and at least as its header's usual width, so that a long name or a
 * time past the year 9999 pushes the columns after it, all rows alike.
 */
struct ep_cols {
	size_t	 name;
	size_t	 target;
	size_t	 when;
};

/* Cells are at most 255 bytes: enough for any name the configuration takes. */
#define CELL_MAX	256

static const char *
ep_name(const struct outcome_ep *e, char buf[CELL_MAX])
{
	return text_printable_copy(buf, CELL_MAX, e->cfg->name);
}

static const char *
ep_target(const struct outcome_ep *e, char buf[CELL_MAX])
{
	return text_printable_copy(buf, CELL_MAX, outcome_ep_ip(e) != NULL ? outcome_ep_ip(e) :
	    e->cfg->cname);
}

static const char *
ep_when(const struct outcome_ep *e, char buf[CELL_MAX])
{
	snprintf(buf, CELL_MAX, "never");
	if (e->last_check != 0)
		iso_time(e->last_check, buf, CELL_MAX);
	return buf;
}

static size_t
wider(size_t w, const char *s)
{
	size_t n = text_width(s);

	return n > w ? n : w;
}

static void
ep_cols(const struct report_domain *d, struct ep_cols *c)
{
	char	 buf[CELL_MAX];
	size_t	 j;

	c->name = 20;
	c->target = 15;
	c->when = 20;
	for (j = 0; j < d->neps; j++) {
		c->name = wider(c->name, ep_name(&d->eps[j], buf));
		c->target = wider(c->target, ep_target(&d->eps[j], buf));
		c->when = wider(c->when, ep_when(&d->eps[j], buf));
	}
}

/* s, then spaces up to width display columns (none when s is wider). */
static void
put_cell(FILE *f, const char *s, size_t width)
{
	size_t w;

	fputs(s, f);
	for (w = text_width(s); w < width; w++)
		fputc(' ', f);
}

static void
print_ep_header(FILE *f, const struct ep_cols *c)
{
	fputs("  ", f);
	put_cell(f, "ENDPOINT", c->name);
	fprintf(f, " %-11s %-3s %5s  ", "STATE", "PUB", "PRIO");
	put_cell(f, "IP", c->target);
	fprintf(f, " %4s %4s  ", "FAIL", "PASS");
	put_cell(f, "LAST CHECK", c->when);
	fprintf(f, " %8s  %s\n", "LATENCY", "RESULT");
}

static void
print_endpoint(FILE *f, const struct outcome_ep *e, const struct ep_cols *c)
{
	char	 buf[CELL_MAX], lat[32] = "-";

	if (e->latency_ms >= 0)
		snprintf(lat, sizeof(lat), "%ld ms", e->latency_ms);
	fputs("  ", f);
	put_cell(f, ep_name(e, buf), c->name);
	fprintf(f, " %-11s %-3s %5ld  ", ep_state_str(e->state),
	    e->published ? "yes" : "no", e->cfg->priority);
	put_cell(f, ep_target(e, buf), c->target);
	fprintf(f, " %4ld %4ld  ", e->failures, e->passes);
	put_cell(f, ep_when(e, buf), c->when);
	fprintf(f, " %8s  %s\n", lat, e->last_result != NULL ?
	    text_printable_copy(buf, sizeof(buf), e->last_result) : "-");
}

/* The addresses published, then the CNAME target; malloc'd. */
static char *
published_text(const struct report_domain *d)
{
	char	*a = addrset_join(&d->published), *s;
	size_t	 len;

	if (d->published_cname == NULL)
		return a;
	len = strlen(a) + strlen(d->published_cname) + 2;
	s = xmalloc(len);
	snprintf(s, len, "%s%s%s", a, a[0] != '\0' ? " " : "",
	    d->published_cname);
	free(a);
	return s;
}

/* One line per [notify] section: what waits, what was given up. */
static void
print_notifiers(FILE *f, const struct report *r)
{
	char	 when[32], t1[1024], t2[1024];
	size_t	 i;

	if (r->nnotifiers > 0)
		fprintf(f, "\n");
	for (i = 0; i < r->nnotifiers; i++) {
		const struct report_notify *n = &r->notifiers[i];

		fprintf(f, "notify %s (%s): ", text_printable_copy(t1,
		    sizeof(t1), n->name), n->kind);
		if (n->pending == 0)
			fprintf(f, "nothing pending");
		else {
			iso_time(n->oldest_pending, when, sizeof(when));
			fprintf(f, "%ld pending since %s", n->pending, when);
		}
		if (n->given_up > 0)
			fprintf(f, ", %ld given up", n->given_up);
		if (n->last_error != NULL)
			fprintf(f, "; last error: %s", text_printable_copy(t2,
			    sizeof(t2), n->last_error));
		fprintf(f, "\n");
	}
}

/* "1h2m3s", "3.5s", "0s": a duration as the configuration writes it. */
static void
fmt_duration(long long ms, char *buf, size_t len)
{
	long long s = ms / 1000, rest = ms % 1000;
	size_t off = 0;

	buf[0] = '\0';
	if (s >= 3600)
		off += (size_t)snprintf(buf + off, len - off, "%lldh", s / 3600);
	if (s % 3600 >= 60 && off < len)
		off += (size_t)snprintf(buf + off, len - off, "%lldm",
		    s % 3600 / 60);
	if (off < len && (s % 60 != 0 || rest != 0 || off == 0)) {
		if (rest != 0)
			snprintf(buf + off, len - off, "%lld.%03llds", s % 60,
			    rest);
		else
			snprintf(buf + off, len - off, "%llds", s % 60);
	}
}

/* In failover: since when and why; degradedTtl while it is written. */
static void
print_off_preferred(FILE *f, const struct report_domain *d)
{
	char when[32], why[ST_ERROR_MAX];

	if (d->failover_since != 0) {
		iso_time(d->failover_since, when, sizeof(when));
		fprintf(f, "  in failover since %s: %s\n", when,
		    d->failover_reason != NULL ? text_printable_copy(why,
		    sizeof(why), d->failover_reason) : "the preferred set "
		    "was left");
	}
	if (d->ttl_written != 0 && d->ttl_written != d->ttl)
		fprintf(f, "  degradedTtl %ld in force (ttl %ld once the "
		    "preferred set is back)\n", d->ttl_written, d->ttl);
}

static void
print_failover(FILE *f, const struct report *r, const struct report_domain *d)
{
	char fast[32], slow[32], iv[32], to[32], rc[32], after[32];

	fmt_duration(failover_ms(r, d, 0), fast, sizeof(fast));
	fmt_duration(failover_ms(r, d, 1), slow, sizeof(slow));
	fmt_duration(r->interval_ms, iv, sizeof(iv));
	fmt_duration(d->timeout_ms, to, sizeof(to));
	if (rechecks(r, d)) {
		fmt_duration(d->recheck_ms, rc, sizeof(rc));
		fmt_duration(confirm_ms(d), after, sizeof(after));
		fprintf(f, "  failover: %s (interval %s + recheck %s x "
		    "(attempts %ld - 1) + ttl %lds), %s when checks time out "
		    "(+ timeout %s x %ld); %s after the first failed check\n",
		    fast, iv, rc, d->attempts, d->ttl, slow, to, d->attempts,
		    after);
		return;
	}
	fprintf(f, "  failover: %s (interval %s x %sattempts %ld%s + ttl "
	    "%lds), %s when checks time out (+ timeout %s)\n", fast, iv,
	    several(r) ? "(" : "", d->attempts, several(r) ?
	    " + 1, several checkers)" : "", d->ttl, slow, to);
}

/* A domain's last round and its endpoints' votes (ddup-check(8),
   SEVERAL CHECKERS). */
static void
print_round(FILE *f, const struct report_domain *d)
{
	char	 t1[256];
	size_t	 j;

	if (d->round == NULL)
		return;
	if (!d->round->has) {
		fprintf(f, "  round: none yet\n");
		return;
	}
	fprintf(f, "  round: slot %lld by %s, %ld checkers heard%s\n",
	    d->round->slot, text_printable_copy(t1, sizeof(t1),
	    d->round->checker), d->round->heard, d->round->void_all ?
	    ", void: fewer than quorum, nothing counted, DNS left as it is" :
	    "");
	for (j = 0; j < d->neps; j++)
		if (d->eps[j].has_votes)
			fprintf(f, "  %s: votes %ld pass, %ld fail: %s\n",
			    text_printable_copy(t1, sizeof(t1),
			    d->eps[j].cfg->name), d->eps[j].votes_pass,
			    d->eps[j].votes_fail,
			    vote_verdict_str(d->eps[j].verdict));
}

/* Each checker's last report, and who is out of step (ddup-check(8),
   SEVERAL CHECKERS). */
static void
print_fleet(FILE *f, const struct outcome_fleet *fl)
{
	char	 t1[256], when[32];
	size_t	 i;

	fprintf(f, "\ncheckers (quorum %ld of %zu):\n", fl->quorum,
	    fl->ncheckers);
	for (i = 0; i < fl->ncheckers; i++) {
		const struct outcome_checker *k = &fl->checkers[i];

		fputs("  ", f);
		put_cell(f, text_printable_copy(t1, sizeof(t1), k->name), 20);
		if (k->at <= 0) {
			fprintf(f, " no report\n");
			continue;
		}
		iso_time(k->at, when, sizeof(when));
		fprintf(f, " last report %s (slot %lld), %ld pass, %ld "
		    "fail%s\n", when, k->slot, k->passes, k->failures,
		    k->in_step ? "" : ", OUT OF STEP: another configuration, "
		    "not counted");
	}
}

/*
 * No run of ddup-check happened before 2024: a time before that was
 * written by a clock that was not set (one that starts at 1970).
 */
#define CLOCK_SET_MS	1704067200000LL	/* 2024-01-01T00:00:00Z */

/*
 * How long before now t was, for people: "42s ago", "1h5m ago", "12 days
 * ago", or what is wrong with the clock rather than an absurd age.
 */
static void
age_text(long long t, long long now, char *buf, size_t len)
{
	char	 d[32];
	long long age;

	/* A second's grace: the clock of the last run and ours may differ. */
	if (t > ms_add(now, 1000)) {
		snprintf(buf, len, "in the future: has the clock moved back?");
		return;
	}
	if (t < CLOCK_SET_MS) {
		snprintf(buf, len, "before 2024: was the clock set?");
		return;
	}
	age = now > t ? now - t : 0;
	if (age < 2 * 86400000LL) {
		fmt_duration(age / 1000 * 1000, d, sizeof(d));
		snprintf(buf, len, "%s ago", d);
	} else
		snprintf(buf, len, "%lld days ago", age / 86400000LL);
}

/* ddup.ini(5), certWarn: a line for a certificate near its end. */
static void
print_cert(FILE *f, const struct report_domain *d, const struct outcome_ep *e,
    long long now)
{
	char	 when[32];
	long long left;

	if (d->cert_warn_ms <= 0 || e->cert_expires == 0 ||
	    (left = e->cert_expires * 1000 - now) >= d->cert_warn_ms)
		return;
	iso_time(e->cert_expires * 1000, when, sizeof(when));
	if (left <= 0)
		fprintf(f, "  %s: certificate expired %s\n", e->cfg->name, when);
	else
		fprintf(f, "  %s: certificate expires %s (in %lld days, "
		    "within certWarn)\n", e->cfg->name, when, left / 86400000LL);
}

void
report_print_text(FILE *f, const struct report *r)
{
	struct ep_cols cols;
	char	 when[32], t1[1024], t2[1024];
	size_t	 i, j;

	if (r->last_run != 0) {
		iso_time(r->last_run, when, sizeof(when));
		age_text(r->last_run, r->generated, t1, sizeof(t1));
		fprintf(f, "last run: %s (%s)\n", when, t1);
		if (r->stale)
			fprintf(f, "warning: the last run is older than three "
			    "intervals: is the scheduler running?\n");
	} else
		fprintf(f, "last run: never\n");
	if (r->control_url != NULL && r->control_since != 0) {
		iso_time(r->control_since, when, sizeof(when));
		fprintf(f, "warning: controlUrl %s has failed since %s (%s): "
		    "this checker's own network is blamed; no failure is "
		    "counted and DNS is not changed\n", r->control_url, when,
		    r->control_result != NULL ? r->control_result : "?");
	}

	for (i = 0; i < r->ndomains; i++) {
		const struct report_domain *d = &r->domains[i];
		char *pub = published_text(d);

		fprintf(f, "\n%s: %s (provider %s, ttl %ld)\n",
		    text_printable_copy(t1, sizeof(t1), d->name),
		    dom_status_str(d->status),
		    text_printable_copy(t2, sizeof(t2), d->provider), d->ttl);
		if (d->fallback)
			fprintf(f, "  published: %s (fallback: no endpoint is "
			    "healthy)\n", pub[0] ? pub : "nothing");
		else if (d->has_tier && d->all_down)
			fprintf(f, "  published: %s (tier %ld, every endpoint: "
			    "none is healthy)\n", pub[0] ? pub : "nothing",
			    d->tier);
		else if (d->has_tier && !d->located)
			fprintf(f, "  published: %s (tier %ld)\n",
			    pub[0] ? pub : "nothing", d->tier);
		else if (d->has_tier)
			fprintf(f, "  published: %s (tier %ld, %s%s)\n",
			    pub[0] ? pub : "nothing", d->tier,
			    d->tier_location != NULL ? "location " : "other "
			    "locations", d->tier_location != NULL ?
			    text_printable_copy(t1, sizeof(t1), d->tier_location) :
			    "");
		else
			fprintf(f, "  published: %s\n", pub[0] ? pub : "nothing");
		free(pub);
		print_off_preferred(f, d);
		print_failover(f, r, d);
		print_round(f, d);
		if (d->last_change != 0) {
			iso_time(d->last_change, when, sizeof(when));
			fprintf(f, "  last change: %s\n", when);
		}
		if (d->last_error != NULL)
			fprintf(f, "  last error: %s\n", text_printable_copy(t1,
			    sizeof(t1), d->last_error));
		if (d->waiting && d->located)
			fprintf(f, "  waiting: a better tier is healthy (tier "
			    "%ld, %s%s); manual failback: ddup-check "
			    "--failback %s\n", d->best_tier,
			    d->best_location != NULL ? "location " :
			    "other locations", d->best_location != NULL ?
			    text_printable_copy(t2, sizeof(t2), d->best_location) :
			    "", text_printable_copy(t1, sizeof(t1), d->name));
		else if (d->waiting)
			fprintf(f, "  waiting: a better choice is healthy (tier "
			    "%ld); manual failback: ddup-check --failback %s\n",
			    d->best_tier, text_printable_copy(t1, sizeof(t1),
			    d->name));
		if (d->failback_requested)
			fprintf(f, "  failback asked: the next run goes back to "
			    "the best healthy tier\n");
		if (d->why != NULL)
			fprintf(f, "  %s\n", text_printable_copy(t1, sizeof(t1),
			    d->why));
		ep_cols(d, &cols);
		print_ep_header(f, &cols);
		for (j = 0; j < d->neps; j++)
			print_endpoint(f, &d->eps[j], &cols);
		for (j = 0; j < d->neps; j++)
			print_cert(f, d, &d->eps[j], r->generated);
		for (j = 0; j < d->neps; j++) {
			const struct outcome_ep *e = &d->eps[j];

			if (!e->drained)
				continue;
			if (e->drained_until != 0) {
				iso_time(e->drained_until, when, sizeof(when));
				fprintf(f, "  %s: drained until %s\n", e->cfg->name,
				    when);
			} else
				fprintf(f, "  %s: drained until ddup-check "
				    "--undrain %s/%s\n", e->cfg->name, d->name,
				    e->cfg->name);
		}
	}
	if (r->fleet != NULL)
		print_fleet(f, r->fleet);
	print_notifiers(f, r);
}
