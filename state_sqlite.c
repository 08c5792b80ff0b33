/*
 * The SQLite backend (state_int.h): the state file of SPEC 6.  Its load
 * is built from the row functions of state_data.c and state_policy.c,
 * in one read transaction: in process, a row costs no round trip.
 */

#include <stdio.h>
#include <string.h>

#include "config.h"
#include "pguri.h"
#include "state.h"
#include "state_int.h"
#include "util.h"

/* Every path; a URI is some other backend's. */
static int
sqlite_handles(const char *where)
{
	return !pguri_is(where);
}

static int
sqlite_load(struct state *st, const struct config *c, int results,
    long long now, struct st_snapshot *out)
{
	struct st_endpoint se;
	size_t i, j, k = 0;
	int rc = 0;

	state_read_begin(st);
	out->last_run = state_last_run(st);
	if (state_get_requests(st, now, out->req) == -1)
		rc = -1;
	for (i = 0; i < c->ndomains; i++) {
		const struct domain_cfg *d = &c->domains[i];

		if (state_get_domain(st, d->name, &out->doms[i]) == -1)
			rc = -1;
		for (j = 0; j < d->neps; j++, k++) {
			const struct endpoint_cfg *e = &d->eps[j];
			struct st_ep_snap *o = &out->eps[k];

			if (state_get_endpoint(st, d->name, e->name,
			    endpoint_target(e), e->url, &se) == -1)
				rc = -1;
			o->found = se.found;
			o->failures = se.failures;
			o->passes = se.passes;
			o->removed = se.removed;
			o->last_ok = se.last_ok;
			if (se.found && se.last_check > 0) {
				o->last_check = se.last_check;
				o->latency_ms = se.latency_ms;
				if (results)
					o->last_result = xstrdup(
					    se.last_result);
			}
		}
	}
	state_read_end(st);
	return rc;
}

const struct state_backend state_sqlite = {
	.name = "sqlite",
	.handles = sqlite_handles,
	.open = st_sqlite_open,
	.close = st_sqlite_close,
	.load = sqlite_load,
	.mark_unsure = st_sqlite_mark_unsure,
	.request_drain = st_sqlite_request_drain,
	.request_undrain = st_sqlite_request_undrain,
	.request_failback = st_sqlite_request_failback,
};
