#ifndef DDUP_OUTBOX_H
#define DDUP_OUTBOX_H

/*
 * A run's events (outcome.h) as the notification outbox stores them
 * (ddup.ini(5), NOTIFICATIONS): each event's JSON, with the [notify]
 * sections that want it.  The state's backends store them inside the
 * run's transaction, before any delivery (notify.h).
 */

#include <stddef.h>

struct config;
struct notify_cfg;
struct outcome;
struct outcome_event;

/* One endpoint as an event shows it. */
struct event_ep {
	const char	*name;
	const char	*ip;		/* its address, or its CNAME target */
	long		 priority;
	int		 healthy;
	const char	*state;		/* "active", "down", ... */
	const char	*last_result;	/* NULL: never checked */
	long long	 cert_expires;	/* Unix seconds, 0: not known */
};

/* One event, as the run saw it. */
struct event {
	int		 type;		/* enum event_type (config.h) */
	const char	*domain;
	long long	 time;		/* ms */
	const char	*endpoint;	/* endpoint_down/up, cert_expiring: which */
	const char *const *published;	/* in DNS after the run */
	size_t		 npublished;
	const char *const *previous;	/* in DNS before it */
	size_t		 nprevious;
	int		 has_tier;
	long		 tier;		/* priority published after the run */
	int		 has_previous_tier;
	long		 previous_tier;
	int		 fallback;	/* "tier": "fallback" (allDown) */
	int		 previous_fallback;
	const struct event_ep *eps;
	size_t		 neps;
	const char	*error;		/* dns_update_failed: why; else NULL */
};

/*
 * The event JSON of ddup.ini(5), NOTIFICATIONS (one line, malloc'd):
 * event, domain, time, published, previous, tier, previousTier,
 * endpoints, error, and endpoint for endpoint_down, endpoint_up and cert_expiring.  Every text is made
 * printable first.  NULL only when jansson cannot build it.
 */
char		*event_json(const struct event *ev);

/* Whether section n wants events of type (enum event_type). */
int		 outbox_wants(const struct notify_cfg *n, int type);

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
