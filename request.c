/*
 * --drain, --undrain and --failback (ddup-check(8), DESCRIPTION): a
 * request recorded in the state file for the next run to act on.
 */

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "log.h"
#include "request.h"
#include "run.h"
#include "state.h"
#include "util.h"

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
