#ifndef DDUP_RUN_H
#define DDUP_RUN_H

/*
 * The work of one ddup-check invocation after the command line and the
 * configuration are read.  Each returns an exit status of ddup-check(8),
 * EXIT STATUS.
 */

struct config;

#define RUN_OK		0
#define RUN_FAILED	1	/* a DNS update (or a read of current records) failed,
				   or statusHtml or metricsFile not written */
#define RUN_USAGE	2	/* bad command line: an unknown domain or endpoint */
#define RUN_LOCKED	3	/* another run holds the state file */
#define RUN_STATE	4	/* the state file is unusable */
#define RUN_NOMEM	5	/* out of memory: the run stopped where it was */

/* --status: the state as of the last run, as text or JSON. */
int	 run_status(struct config *cfg, int json);
/* A run, or with dry_run a run that writes nothing and calls no provider. */
int	 run_once(struct config *cfg, int dry_run, int json);

#endif
