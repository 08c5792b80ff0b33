/*
 * recheck (recheck.h): which endpoints a run may check again within
 * itself, and the repeats' results.
 */

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "decide.h"
#include "log.h"
#include "recheck.h"
#include "state.h"
#include "util.h"

/* Whether some domain confirms failures within the run. */
static int
any_recheck(const struct config *cfg)
{
	size_t	 i;

	for (i = 0; i < cfg->ndomains; i++)
		if (cfg->domains[i].pol.recheck_ms > 0)
			return 1;
	return 0;
}

/*
 * A light read before the checks, only when some domain has recheck:
 * counters, published sets and drains (no results), the decision's
 * inputs as the run itself loads them after its checks.
 */
long *
recheck_repeats(const struct config *cfg, struct state *st, long long now,
    size_t neps)
{
	struct st_snapshot	 snap;
	struct dec_domain	 dd;
	struct dec_ep		 de;
	long			*rep;
	size_t			 i, j, k = 0;

	if (!any_recheck(cfg))
		return NULL;
	rep = xcalloc(neps + 1, sizeof(*rep));
	if (state_load(st, cfg, 0, now, &snap, NULL, 0) == -1)
		goto out;
	for (i = 0; i < cfg->ndomains; i++) {
		const struct domain_cfg *dc = &cfg->domains[i];

		memset(&dd, 0, sizeof(dd));
		dec_domain_load(&dd, &dc->pol, &snap.doms[i], 0);
		for (j = 0; j < dc->neps && k < neps; j++, k++) {
			if (dc->pol.recheck_ms <= 0)
				continue;
			memset(&de, 0, sizeof(de));
			dec_ep_load(&de, &dc->eps[j], &snap.eps[k],
			    &snap.doms[i], state_find_drain(snap.req, dc->name,
			    dc->eps[j].name) != NULL, 0);
			rep[k] = dec_repeats(&dd, &de);
		}
	}
out:
	state_snapshot_free(cfg, &snap);
	return rep;
}

long
recheck_failed(const struct check_res *res)
{
	const struct check_res	*b;
	long			 n = 0;

	for (b = res->before; b != NULL; b = b->before)
		n++;
	return n;
}

/* Check nth of the run (0: the first); res->before has the ones before. */
static void
log_nth(const char *domain, const char *name, const struct check_res *res,
    long nth)
{
	if (res->before != NULL)
		log_nth(domain, name, res->before, nth - 1);
	if (nth == 0)
		logx(LOG_DEBUG, domain, name, "%s (%ld ms)", res->reason,
		    res->latency_ms);
	else
		logx(LOG_DEBUG, domain, name, "%s (%ld ms, repeat %ld)",
		    res->reason, res->latency_ms, nth);
}

void
recheck_log(const char *domain, const char *name, const struct check_res *res)
{
	log_nth(domain, name, res, recheck_failed(res));
}
