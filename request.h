#ifndef DDUP_REQUEST_H
#define DDUP_REQUEST_H

/*
 * Requests recorded in the state file for the next run (ddup-check(8),
 * DESCRIPTION: --drain, --undrain, --failback).
 */

struct config;

#define REQ_DRAIN	1	/* target DOMAIN/ENDPOINT, for for_ms (0: until
				   undrained) */
#define REQ_UNDRAIN	2	/* target DOMAIN/ENDPOINT */
#define REQ_FAILBACK	3	/* target DOMAIN */

/* Records one; returns an exit status of ddup-check(8), EXIT STATUS. */
int	 run_request(struct config *cfg, int what, const char *target,
	    long long for_ms);

#endif
