#ifndef DDUP_OUTBOX_H
#define DDUP_OUTBOX_H

/*
 * A run's events (outcome.h) into the notification outbox of the state
 * file, inside the run's transaction, before any delivery (SPEC 10).
 */

#include <stddef.h>

struct config;
struct outcome;
struct outcome_event;

/*
 * Calls fn for each event of o that some [notify] section wants, with
 * its JSON and the names of those sections (n of them), in the
 * outcome's order; stops at the first fn that does not return 0 and
 * returns what it returned.  Both backends store their outbox from it.
 */
typedef int	(*outbox_fn)(void *arg, const struct outcome_event *ev,
		    const char *body, const char *const *names, size_t n);
int	 outbox_each(const struct outcome *o, const struct config *cfg,
	    outbox_fn fn, void *arg);

#endif
