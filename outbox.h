#ifndef DDUP_OUTBOX_H
#define DDUP_OUTBOX_H

/*
 * A run's events (outcome.h) into the notification outbox of the state
 * file, inside the run's transaction, before any delivery (SPEC 10).
 */

struct config;
struct outcome;
struct state;

/* 0, or -1 on a database error (the caller rolls back). */
int	 outbox_save(struct state *st, const struct outcome *o,
	    const struct config *cfg);

#endif
