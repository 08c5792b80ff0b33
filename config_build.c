/*
 * Checking the collected configuration and building struct config from
 * it: the keys at the top of the file (ddup.ini(5), TOP-LEVEL KEYS) with
 * the defaults of every domain, then the providers, notifiers and
 * domains (config_build_*.c), and a warning when a run can outlast
 * `interval`.  Every problem is recorded with cfg_problem() and the
 * checks go on, so that one run shows them all.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config_int.h"
#include "provider.h"
#include "util.h"

/* The keys of the top of the file s, and into h the defaults of every domain. */
static void
check_top(struct ctx *x, struct rsec *s, struct hc *h)
{
	struct config *c = x->c;
	const struct rkey *k;
	struct stat st;
	struct hc top;
	int fd, oserr;

	cfg_resolve_keys(x, s);
	c->interval_ms = 30 * 1000LL;
	c->max_parallel = 256;
	c->max_exec = 16;
	c->dir = cfg_dir(x);
	c->history_ms = 7LL * 86400 * 1000;
	if ((k = cfg_get(x, s, "interval")) != NULL)
		(void)cfg_get_duration(x, k, &c->interval_ms);
	if ((k = cfg_get(x, s, "history")) != NULL)
		(void)cfg_get_duration(x, k, &c->history_ms);
	if ((k = cfg_get(x, s, "maxParallel")) != NULL)
		cfg_get_long(x, k, 1, 2147483647, &c->max_parallel);
	if ((k = cfg_get(x, s, "maxExec")) != NULL)
		cfg_get_long(x, k, 1, 2147483647, &c->max_exec);
	cfg_build_state(x, s);
	if ((k = cfg_get(x, s, "logFormat")) != NULL) {
		if (strcasecmp(k->value, "json") == 0)
			c->log_json = 1;
		else if (strcasecmp(k->value, "text") != 0)
			cfg_problem(x, k->line, 0, "'logFormat': expected "
			    "text or json, not '%s'", k->value);
	}
	if ((k = cfg_get(x, s, "caFile")) != NULL) {
		/*
		 * Only a regular file is opened (a device or a FIFO could
		 * act on an open), and only to see that it can be read.
		 */
		fd = -1;
		oserr = 0;
		if (stat(k->value, &st) == -1)
			oserr = errno;
		else if (S_ISREG(st.st_mode)) {
			fd = open(k->value, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
			if (fd == -1)
				oserr = errno;
		}
		if (oserr != 0)
			cfg_problem(x, k->line, 0, "caFile %s: cannot read: %s",
			    k->value, strerror(oserr));
		else if (!S_ISREG(st.st_mode))
			cfg_problem(x, k->line, 0, "caFile %s: not a regular "
			    "file", k->value);
		else
			c->ca_file = xstrdup(k->value);
		if (fd != -1)
			close(fd);
	}

	if ((k = cfg_get(x, s, "statusHtml")) != NULL) {
		size_t len = strlen(k->value);

		/* The page goes beside a temporary file: a file, not a folder. */
		if (len == 0 || k->value[len - 1] == '/')
			cfg_problem(x, k->line, 0, "statusHtml: expected the "
			    "path of a file, not '%s'", k->value);
		else
			c->status_html = xstrdup(k->value);
	}

	if ((k = cfg_get(x, s, "metricsFile")) != NULL) {
		size_t len = strlen(k->value);

		/* Likewise: written beside a temporary file. */
		if (len == 0 || k->value[len - 1] == '/')
			cfg_problem(x, k->line, 0, "metricsFile: expected the "
			    "path of a file, not '%s'", k->value);
		else
			c->metrics_file = xstrdup(k->value);
	}

	if ((k = cfg_get(x, s, "controlUrl")) != NULL) {
		char err[256];

		if (cfg_url_has_userinfo(k->value))
			cfg_problem(x, k->line, 0, "controlUrl must not hold a "
			    "user name or password (messages show the url)");
		else if (cfg_url_ok(k->value, err, sizeof(err)))
			c->control_url = xstrdup(k->value);
		else
			cfg_problem(x, k->line, 0, "bad controlUrl '%s': %s",
			    k->value, err);
	}

	cfg_hc_defaults(h);
	cfg_parse_hc(x, s, h);
	cfg_check_policy(x, h, 0);
	/* Kept for what the top of the file checks itself (controlUrl). */
	cfg_hc_copy(&top, h);
	c->defaults = top.p;
}

/* "3m20s", "2.500s": a duration in a warning. */
static void
fmt_secs(long long ms, char *buf, size_t len)
{
	if (ms >= 60000 && ms % 1000 == 0)
		snprintf(buf, len, "%lldm%llds", ms / 60000, ms / 1000 % 60);
	else if (ms % 1000 == 0)
		snprintf(buf, len, "%llds", ms / 1000);
	else
		snprintf(buf, len, "%lld.%03llds", ms / 1000, ms % 1000);
}

/*
 * A run whose checks all time out takes ceil(checks / maxParallel)
 * rounds of the longest timeout, after the controlUrl's check, and then
 * the providers' own timeouts: when that is longer than interval, the
 * runs overlap (the next one finds the lock taken) and failover comes
 * later than --status says.  A warning, for -n: a slow but valid setup.
 * A domain whose timeout alone is not below interval was warned of.
 */
static void
check_run_length(struct ctx *x)
{
	const struct config *c = x->c;
	const struct rkey *k;
	long long tmo = 0, prov = 0, ctl, ms, worst;
	size_t i, n = 0, rounds;
	const char *v;
	char a[32], b[32], d[32], more[96] = "";
	int line = 0;

	for (i = 0; i < c->ndomains; i++) {
		n += c->domains[i].neps;
		if (c->domains[i].pol.timeout_ms > tmo)
			tmo = c->domains[i].pol.timeout_ms;
		v = provider_cfg_get(c->domains[i].provider, "timeout");
		if (v != NULL && parse_duration(v, &ms) == 0 && ms > prov &&
		    ms <= DURATION_MAX_MS)
			prov = ms;
	}
	if (n == 0 || c->max_parallel <= 0 || tmo >= c->interval_ms)
		return;
	rounds = (n + (size_t)c->max_parallel - 1) / (size_t)c->max_parallel;
	ctl = c->control_url != NULL ? c->defaults.timeout_ms : 0;
	/*
	 * Every duration is at most ten years and there are fewer checks
	 * than bytes in the file: no sum or product here can overflow.
	 */
	worst = ctl + (long long)rounds * tmo + prov;
	if (worst <= c->interval_ms)
		return;
	if (ctl > 0) {
		fmt_secs(ctl, a, sizeof(a));
		snprintf(more, sizeof(more), " + controlUrl %s", a);
	}
	if (prov > 0) {
		fmt_secs(prov, a, sizeof(a));
		snprintf(more + strlen(more), sizeof(more) - strlen(more),
		    " + provider %s", a);
	}
	if ((k = cfg_get(x, &x->secs[0], "maxParallel")) != NULL)
		line = k->line;
	fmt_secs(worst, a, sizeof(a));
	fmt_secs(tmo, b, sizeof(b));
	fmt_secs(c->interval_ms, d, sizeof(d));
	cfg_problem(x, line, 1, "a run can take %s when every check times out "
	    "(%zu checks, maxParallel %ld: %zu x timeout %s%s), longer than "
	    "interval (%s)", a, n, c->max_parallel, rounds, b, more, d);
}

void
cfg_build(struct ctx *x)
{
	struct hc defaults;

	check_top(x, &x->secs[0], &defaults);
	cfg_build_providers(x);
	cfg_build_notify(x);
	cfg_build_domains(x, &defaults);
	if (x->nerr == 0)
		check_run_length(x);
	cfg_policy_free(&defaults.p);
}
