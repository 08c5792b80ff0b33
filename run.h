#ifndef DDUP_RUN_H
#define DDUP_RUN_H

/*
 * The work of one ddup-check invocation after the command line and the
 * configuration are read.  Each returns the exit status of SPEC 2.
 */

struct config;

#define RUN_OK		0
#define RUN_FAILED	1	/* a DNS update (or a read of current records) failed */
#define RUN_USAGE	2	/* bad command line: an unknown domain or endpoint */
#define RUN_LOCKED	3	/* another run holds the state file */
#define RUN_STATE	4	/* the state file is unusable */
#define RUN_NOMEM	5	/* out of memory: the run stopped where it was */

/* --status: the state as of the last run, as text or JSON. */
int	 run_status(struct config *cfg, int json);
/* A run, or with dry_run a run that writes nothing and calls no provider. */
int	 run_once(struct config *cfg, int dry_run, int json);

/* Requests recorded in the state file for the next run (SPEC 9). */
#define REQ_DRAIN	1	/* target DOMAIN/ENDPOINT, for for_ms (0: until undrained) */
#define REQ_UNDRAIN	2	/* target DOMAIN/ENDPOINT */
#define REQ_FAILBACK	3	/* target DOMAIN */
int	 run_request(struct config *cfg, int what, const char *target,
	    long long for_ms);

#endif
