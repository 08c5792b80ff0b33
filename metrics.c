/*
 * The metrics file (see metrics.h).  Every sample of one metric comes
 * together under its HELP and TYPE lines, as the format requires, so
 * the outcome is walked once per metric.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "decide.h"
#include "metrics.h"
#include "outcome.h"
#include "state.h"
#include "util.h"

/* Every value of the state and status labels, so each has a series. */
static const int ep_states[] = {
	EP_UNKNOWN, EP_ACTIVE, EP_STANDBY, EP_FAILING, EP_DOWN,
	EP_RECOVERING, EP_DRAINED,
};
static const int dom_statuses[] = {
	DOM_UNKNOWN, DOM_HEALTHY, DOM_WARNING, DOM_UNHEALTHY,
};

static void
family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/*
 * A label value: made printable (names come from the configuration),
 * then backslash, double quote and newline escaped as the format says.
 */
static void
label(FILE *f, const char *name, const char *value)
{
	char	 buf[512];
	const char *p;

	text_printable_copy(buf, sizeof(buf), value);
	fprintf(f, "%s=\"", name);
	for (p = buf; *p != '\0'; p++) {
		if (*p == '\\' || *p == '"')
			fputc('\\', f);
		if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* name{domain="D",endpoint="E"[,extra="V"]} (endpoint NULL: none). */
static void
series(FILE *f, const char *name, const char *domain, const char *endpoint,
    const char *extra, const char *value)
{
	fprintf(f, "%s{", name);
	label(f, "domain", domain);
	if (endpoint != NULL) {
		fputc(',', f);
		label(f, "endpoint", endpoint);
	}
	if (extra != NULL) {
		fputc(',', f);
		label(f, extra, value);
	}
	fputs("} ", f);
}

/* Milliseconds as seconds, exactly. */
static void
seconds(FILE *f, long long ms)
{
	fprintf(f, "%s%lld.%03lld\n", ms < 0 ? "-" : "", llabs(ms) / 1000,
	    llabs(ms) % 1000);
}

/* The per-endpoint gauges that are one value each. */
enum ep_gauge { G_UP, G_HEALTHY, G_PUBLISHED, G_LATENCY, G_CERT };

static const struct {
	const char	*name;
	const char	*help;
} ep_gauges[] = {
	[G_UP] = { "ddup_endpoint_up",
	    "Whether the endpoint's last check passed (1) or failed (0)." },
	[G_HEALTHY] = { "ddup_endpoint_healthy",
	    "Whether the endpoint is healthy: not removed, and in DNS or "
	    "its last check passed (drained or not)." },
	[G_PUBLISHED] = { "ddup_endpoint_published",
	    "Whether the endpoint's address or CNAME is in DNS." },
	[G_LATENCY] = { "ddup_endpoint_latency_seconds",
	    "How long the endpoint's last check took." },
	[G_CERT] = { "ddup_endpoint_cert_expiry_timestamp_seconds",
	    "When the endpoint's certificate expires, as its latest check "
	    "saw it (Unix time)." },
};

static void
endpoint_gauge(FILE *f, const struct outcome *o, enum ep_gauge g)
{
	size_t i, j;

	family(f, ep_gauges[g].name, "gauge", ep_gauges[g].help);
	for (i = 0; i < outcome_ndomains(o); i++) {
		const struct outcome_domain *d = outcome_domain(o, i);

		for (j = 0; j < d->neps; j++) {
			const struct outcome_ep *e = &d->eps[j];

			/* Never checked: no last check to speak of. */
			if ((g == G_UP || g == G_LATENCY) && e->last_check == 0)
				continue;
			if (g == G_LATENCY && e->latency_ms < 0)
				continue;
			if (g == G_CERT && e->cert_expires == 0)
				continue;
			series(f, ep_gauges[g].name, d->cfg->name, e->cfg->name,
			    NULL, NULL);
			if (g == G_LATENCY)
				seconds(f, e->latency_ms);
			else if (g == G_CERT)
				fprintf(f, "%lld\n", e->cert_expires);
			else
				fprintf(f, "%d\n", g == G_UP ? (e->check.done ?
				    e->check.ok : e->last_ok_before) :
				    g == G_HEALTHY ? e->healthy : e->published);
		}
	}
}

static void
endpoint_states(FILE *f, const struct outcome *o)
{
	size_t i, j, k;

	family(f, "ddup_endpoint_state", "gauge", "The endpoint's state "
	    "(1 for the one it is in): active, standby, failing, down, "
	    "recovering, drained or unknown.");
	for (i = 0; i < outcome_ndomains(o); i++) {
		const struct outcome_domain *d = outcome_domain(o, i);

		for (j = 0; j < d->neps; j++)
			for (k = 0; k < sizeof(ep_states) / sizeof(ep_states[0]);
			    k++) {
				series(f, "ddup_endpoint_state", d->cfg->name,
				    d->eps[j].cfg->name, "state",
				    ep_state_str(ep_states[k]));
				fprintf(f, "%d\n", d->eps[j].state ==
				    ep_states[k]);
			}
	}
}

static void
endpoint_checks(FILE *f, const struct outcome *o, const struct st_counter *c,
    size_t n)
{
	static const char *const res[][2] = {
		{ "pass", "checks_pass" }, { "fail", "checks_fail" },
	};
	size_t i, j, k;

	family(f, "ddup_endpoint_checks_total", "counter", "Checks of the "
	    "endpoint by result, across runs (a check excused by a failed "
	    "controlUrl is not counted).");
	for (i = 0; i < outcome_ndomains(o); i++) {
		const struct outcome_domain *d = outcome_domain(o, i);

		for (j = 0; j < d->neps; j++)
			for (k = 0; k < 2; k++) {
				series(f, "ddup_endpoint_checks_total",
				    d->cfg->name, d->eps[j].cfg->name,
				    "result", res[k][0]);
				fprintf(f, "%lld\n", state_counter(c, n,
				    d->cfg->name, d->eps[j].cfg->name,
				    res[k][1]));
			}
	}
}

static void
domain_metrics(FILE *f, const struct outcome *o, const struct st_counter *c,
    size_t n)
{
	static const char *const upd[][2] = {
		{ "success", "dns_ok" }, { "failure", "dns_failed" },
	};
	size_t i, k;

	family(f, "ddup_domain_published_addresses", "gauge", "How many "
	    "addresses DNS holds for the domain (a CNAME counts as one).");
	for (i = 0; i < outcome_ndomains(o); i++) {
		const struct outcome_domain *d = outcome_domain(o, i);

		series(f, "ddup_domain_published_addresses", d->cfg->name,
		    NULL, NULL, NULL);
		fprintf(f, "%zu\n", d->published.n +
		    (d->published_cname != NULL));
	}
	family(f, "ddup_domain_status", "gauge", "The domain's status (1 for "
	    "the one it is in): healthy, warning, unhealthy or unknown.");
	for (i = 0; i < outcome_ndomains(o); i++) {
		const struct outcome_domain *d = outcome_domain(o, i);

		for (k = 0; k < sizeof(dom_statuses) / sizeof(dom_statuses[0]);
		    k++) {
			series(f, "ddup_domain_status", d->cfg->name, NULL,
			    "status", dom_status_str(dom_statuses[k]));
			fprintf(f, "%d\n", d->status == dom_statuses[k]);
		}
	}
	family(f, "ddup_domain_tier", "gauge", "The priority of the tier DNS "
	    "holds (lower is preferred); absent before the first one.");
	for (i = 0; i < outcome_ndomains(o); i++) {
		const struct outcome_domain *d = outcome_domain(o, i);

		/* The fallback addresses are no tier's. */
		if (!d->has_tier || d->fail_open == ALLDOWN_FALLBACK)
			continue;
		series(f, "ddup_domain_tier", d->cfg->name, NULL, NULL, NULL);
		fprintf(f, "%ld\n", d->tier.priority);
	}
	family(f, "ddup_domain_failover", "gauge", "1 while the set DNS "
	    "holds is not the domain's preferred one (degradedTtl), 2 while "
	    "allDown published it.");
	for (i = 0; i < outcome_ndomains(o); i++) {
		const struct outcome_domain *d = outcome_domain(o, i);

		series(f, "ddup_domain_failover", d->cfg->name, NULL, NULL,
		    NULL);
		fprintf(f, "%d\n", d->fail_open != ALLDOWN_KEEP ? 2 :
		    d->failover_since != 0);
	}
	family(f, "ddup_dns_updates_total", "counter", "DNS updates of the "
	    "domain by outcome, across runs.");
	for (i = 0; i < outcome_ndomains(o); i++) {
		const struct outcome_domain *d = outcome_domain(o, i);

		for (k = 0; k < 2; k++) {
			series(f, "ddup_dns_updates_total", d->cfg->name, NULL,
			    "outcome", upd[k][0]);
			fprintf(f, "%lld\n", state_counter(c, n, d->cfg->name,
			    "", upd[k][1]));
		}
	}
}

static void
run_metrics(FILE *f, const struct outcome *o, const struct metrics_run *mr)
{
	family(f, "ddup_last_run_timestamp_seconds", "gauge",
	    "When the last run started, in seconds since the epoch.");
	fputs("ddup_last_run_timestamp_seconds ", f);
	seconds(f, outcome_time(o));
	family(f, "ddup_last_run_duration_seconds", "gauge",
	    "How long the last run took.");
	fputs("ddup_last_run_duration_seconds ", f);
	seconds(f, mr->duration_ms);
	family(f, "ddup_last_run_exit_status", "gauge", "The last run's exit "
	    "status: 0 fine, 1 a DNS update failed.");
	fprintf(f, "ddup_last_run_exit_status %d\n", mr->exit_status);
	family(f, "ddup_interval_seconds", "gauge", "The configured interval "
	    "between runs (a last run older than three is stale).");
	fputs("ddup_interval_seconds ", f);
	seconds(f, mr->interval_ms);
}

char *
metrics_render(const struct outcome *o, const struct st_counter *c,
    size_t n, const struct metrics_run *mr, size_t *len)
{
	char	*buf = NULL;
	FILE	*f;

	if ((f = open_memstream(&buf, len)) == NULL) {
		out_of_memory();
	}
	endpoint_gauge(f, o, G_UP);
	endpoint_gauge(f, o, G_HEALTHY);
	endpoint_gauge(f, o, G_PUBLISHED);
	endpoint_states(f, o);
	endpoint_gauge(f, o, G_LATENCY);
	endpoint_gauge(f, o, G_CERT);
	endpoint_checks(f, o, c, n);
	domain_metrics(f, o, c, n);
	run_metrics(f, o, mr);
	if (fclose(f) != 0) {
		out_of_memory();
	}
	return buf;
}

int
metrics_write(const char *path, const struct outcome *o,
    const struct st_counter *c, size_t n, const struct metrics_run *mr,
    char *err, size_t errlen)
{
	size_t	 len = 0;
	char	*text = metrics_render(o, c, n, mr, &len);
	int	 rc;

	/*
	 * node_exporter runs as a user of its own: the file and its folder
	 * are readable by all, as they hold no secret.
	 */
	rc = make_parent_dirs(path, 0755, err, errlen) == -1 ||
	    write_file_atomic(path, text, len, 0644, err, errlen) == -1 ?
	    -1 : 0;
	free(text);
	return rc;
}
