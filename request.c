/*
 * --drain, --undrain and --failback (ddup-check(8), DESCRIPTION): a
 * request recorded in the state file for the next run to act on.  A
 * drain's target is one endpoint, DOMAIN/ENDPOINT, or the endpoints a
 * pattern matches (either part with '*' and '?') or a location's
 * (location=NAME), matched against the configuration before the state
 * is opened: a target that matches nothing records nothing.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "log.h"
#include "request.h"
#include "run.h"
#include "state.h"
#include "util.h"

#define LOCATION_PREFIX	"location="

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

static int
has_wildcard(const char *s, size_t len)
{
	return memchr(s, '*', len) != NULL || memchr(s, '?', len) != NULL;
}

/* The bytes after a UTF-8 lead byte, so that '?' takes one character. */
static size_t
char_len(const char *s)
{
	size_t n = 1;

	while (((unsigned char)s[n] & 0xc0) == 0x80)
		n++;
	return n;
}

/*
 * Whether s matches the pattern p of plen bytes: '*' any run, '?' any
 * one character, the rest itself in any case (ASCII, as names are
 * compared elsewhere).  Only these two: '[' and '\' are an endpoint
 * name's own bytes here, not fnmatch(3)'s syntax.  Backtracking to the
 * last '*' only, so linear in practice.
 */
static int
glob_match(const char *p, size_t plen, const char *s)
{
	size_t	pi = 0, si = 0, star_p = 0, star_s = 0, slen = strlen(s);
	int	star = 0;

	while (si < slen) {
		if (pi < plen && p[pi] == '*') {
			star = 1;
			star_p = ++pi;
			star_s = si;
		} else if (pi < plen && p[pi] == '?') {
			pi++;
			si += char_len(s + si);
		} else if (pi < plen && strncasecmp(p + pi, s + si, 1) == 0) {
			pi++;
			si++;
		} else if (star) {
			pi = star_p;
			star_s += char_len(s + star_s);
			si = star_s;
		} else
			break;
	}
	while (si == slen && pi < plen && p[pi] == '*')
		pi++;
	return pi == plen && si == slen;
}

/*
 * Into t (room for every configured endpoint), the endpoints target
 * matches as a pattern or a location; their number.
 */
static size_t
match_pattern(const struct config *cfg, const char *target,
    struct st_target *t)
{
	const struct domain_cfg	*d;
	const char		*loc = NULL, *slash, *ep = NULL;
	size_t			 i, j, n = 0, dlen = 0;

	if (strncasecmp(target, LOCATION_PREFIX, strlen(LOCATION_PREFIX)) == 0)
		loc = target + strlen(LOCATION_PREFIX);
	else {
		slash = strchr(target, '/');
		dlen = (size_t)(slash - target);
		if (dlen > 1 && target[dlen - 1] == '.')
			dlen--;
		ep = slash + 1;
	}
	for (i = 0; i < cfg->ndomains; i++) {
		d = &cfg->domains[i];
		if (loc == NULL && !glob_match(target, dlen, d->name))
			continue;
		for (j = 0; j < d->neps; j++) {
			if (loc != NULL ? d->eps[j].location == NULL ||
			    strcasecmp(d->eps[j].location, loc) != 0 :
			    !glob_match(ep, strlen(ep), d->eps[j].name))
				continue;
			t[n].domain = d->name;
			t[n++].endpoint = d->eps[j].name;
		}
	}
	return n;
}

/*
 * Into t[0], the one endpoint DOMAIN/ENDPOINT names (slash its '/'), or
 * its domain alone for slash NULL (a failback); RUN_USAGE with the error
 * logged when there is none.
 */
static int
match_exact(const struct config *cfg, const char *target, const char *slash,
    struct st_target *t)
{
	const struct domain_cfg	*d;
	size_t			 i, dlen;
	int			 rc = RUN_USAGE;

	dlen = slash != NULL ? (size_t)(slash - target) : strlen(target);
	if ((d = find_domain(cfg, target, dlen)) == NULL) {
		logx(LOG_ERR, NULL, NULL, "no domain '%.*s' in %s", (int)dlen,
		    target, cfg->path);
		goto out;
	}
	t->domain = d->name;
	t->endpoint = NULL;
	for (i = 0; slash != NULL && i < d->neps; i++)
		if (strcasecmp(d->eps[i].name, slash + 1) == 0)
			t->endpoint = d->eps[i].name;
	if (slash != NULL && t->endpoint == NULL) {
		logx(LOG_ERR, d->name, NULL, "no endpoint '%s' in %s",
		    slash + 1, cfg->path);
		goto out;
	}
	rc = RUN_OK;
out:
	return rc;
}

/* Records the request for t[0..n) in one transaction. */
static int
record(const struct config *cfg, int what, const struct st_target *t,
    size_t n, long long now, long long until)
{
	struct state	*st = NULL;
	char		 err[512];
	int		 rc;

	rc = state_open_checker(cfg->state, cfg->checker, STATE_RW, &st, err,
	    sizeof(err));
	if (rc != STATE_OK) {
		logx(rc == STATE_LOCKED ? LOG_WARN : LOG_ERR, NULL, NULL, "%s",
		    err);
		goto out;
	}
	if (what == REQ_DRAIN)
		rc = state_request_drain(st, t, n, now, until, err,
		    sizeof(err));
	else if (what == REQ_UNDRAIN)
		rc = state_request_undrain(st, t, n, now, err, sizeof(err));
	else
		rc = state_request_failback(st, t->domain, now, err,
		    sizeof(err));
	state_close(st);
	if (rc == -1) {
		logx(LOG_ERR, n == 1 ? t->domain : NULL, NULL, "%s", err);
		rc = RUN_STATE;
		goto out;
	}
	rc = RUN_OK;
out:
	return rc;
}

/* What was recorded: the endpoints on stdout, the news on stderr. */
static void
report(int what, const char *target, int pattern, const struct st_target *t,
    size_t n, long long until)
{
	char	 when[32], *line;
	size_t	 i;

	for (i = 0; what != REQ_FAILBACK && i < n; i++) {
		line = xconcat(t[i].domain, "/", t[i].endpoint, "", "");
		text_printable(line);
		printf("%s\n", line);
		free(line);
	}
	fflush(stdout);
	if (until != 0)
		iso_time(until, when, sizeof(when));
	else
		snprintf(when, sizeof(when), "--undrain");
	if (pattern && what == REQ_DRAIN)
		logx(LOG_INFO, NULL, NULL, "%s: %zu endpoint%s drained until "
		    "%s, from the next run on", target, n, n == 1 ? "" : "s",
		    when);
	else if (pattern)
		logx(LOG_INFO, NULL, NULL, "%s: %zu endpoint%s undrained: "
		    "back at the next run when healthy", target, n,
		    n == 1 ? "" : "s");
	else if (what == REQ_DRAIN)
		logx(LOG_INFO, t->domain, t->endpoint, "drained until %s, "
		    "from the next run on", when);
	else if (what == REQ_UNDRAIN)
		logx(LOG_INFO, t->domain, t->endpoint, "undrained: back at "
		    "the next run when healthy");
	else
		logx(LOG_INFO, t->domain, NULL, "failback asked: the next run "
		    "goes back to the best healthy tier");
}

int
run_request(struct config *cfg, int what, const char *target,
    long long for_ms)
{
	struct st_target	*t;
	const char		*slash = NULL;
	long long		 now = now_ms(), until;
	size_t			 i, neps = 1, n = 1;
	int			 rc = RUN_USAGE, pattern = 0;

	for (i = 0; i < cfg->ndomains; i++)
		neps += cfg->domains[i].neps;
	t = xcalloc(neps, sizeof(*t));
	/* for_ms is at most DURATION_MAX_MS, but the clock may be anything. */
	until = for_ms > 0 ? ms_add(now, for_ms) : 0;
	if (what != REQ_FAILBACK && strncasecmp(target, LOCATION_PREFIX,
	    strlen(LOCATION_PREFIX)) == 0)
		pattern = 1;
	else if (what != REQ_FAILBACK) {
		/* DOMAIN/ENDPOINT: a domain name has no '/', an endpoint's may. */
		slash = strchr(target, '/');
		if (slash == NULL || slash[1] == '\0') {
			logx(LOG_ERR, NULL, NULL, "expected DOMAIN/ENDPOINT or "
			    LOCATION_PREFIX "NAME, not '%s'", target);
			goto out;
		}
		pattern = has_wildcard(target, strlen(target));
	}
	if (pattern && (n = match_pattern(cfg, target, t)) == 0) {
		logx(LOG_ERR, NULL, NULL, "no endpoint matches '%s' in %s",
		    target, cfg->path);
		goto out;
	}
	if (!pattern && (rc = match_exact(cfg, target, slash, t)) != RUN_OK)
		goto out;
	if ((rc = record(cfg, what, t, n, now, until)) != RUN_OK)
		goto out;
	report(what, target, pattern, t, n, until);
out:
	free(t);
	return rc;
}
