#ifndef DDUP_RECHECK_H
#define DDUP_RECHECK_H

/*
 * recheck (ddup.ini(5); ddup-check(8), FAILOVER RULES): the repeats a
 * run allows each endpoint's check before it starts them, and what the
 * repeats left in a check's result.  The loop that makes them is
 * check.c's; the counting is decide.c's.
 */

#include <stddef.h>

struct check_res;
struct config;
struct state;

/*
 * The repeats each of the neps endpoints of cfg may have, in file
 * order, from the counters as st last stored them (a fleet's, in a
 * shared store), as dec_repeats() allows at now; NULL when no domain
 * has recheck, so that a run without it reads nothing more.  A state
 * that cannot be read gives no repeats (the run's own read says why).
 * To be freed.
 */
long	*recheck_repeats(const struct config *cfg, struct state *st,
	    long long now, size_t neps);

/* How many failed checks came before res, its repeat. */
long	 recheck_failed(const struct check_res *res);

/* -v: one line per check of an endpoint, its repeats numbered. */
void	 recheck_log(const char *domain, const char *name,
	    const struct check_res *res);

#endif
