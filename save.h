#ifndef DDUP_SAVE_H
#define DDUP_SAVE_H

/*
 * The state file's part of a run's outcome (outcome.h): counters and
 * streaks, the sets now in DNS, the domains' tiers and errors, the DNS
 * changes tried, the controlUrl, the events for the notification
 * outbox (outbox.h), all in one transaction.
 */

struct config;
struct outcome;
struct state;

/* Returns 0, or -1 (logged, rolled back). */
int	 save_outcome(struct state *st, const struct outcome *o,
	    const struct config *cfg);

#endif
