#ifndef DDUP_STATUS_H
#define DDUP_STATUS_H

/*
 * What --status and --dry-run print (ddup-check(8), STATUS JSON): a table for
 * people, or one JSON document.  A report is filled from an outcome
 * (outcome.h: of a dry run, or of the stored state for --status), then
 * formatted.
 */

#include <stdio.h>

#include "util.h"

struct outcome_ep;
struct outcome_round;
struct outcome_fleet;
struct st_change;

struct report_domain {
	const char	*name;
	const char	*provider;
	long		 ttl;
	int		 status;	/* enum dom_status */
	struct addrset	 published;	/* both families */
	const char	*published_cname; /* the CNAME target published, or NULL */
	int		 has_tier;
	long		 tier;		/* the tier's priority */
	int		 located;	/* the domain prefers a location */
	long		 tier_rank;	/* with located: the tier's location rank */
	const char	*tier_location;	/* with located: its name, NULL: the others */
	int		 waiting;	/* manual failback keeps a worse choice */
	long		 best_tier;	/* with waiting: the tier auto would take */
	const char	*best_location;	/* likewise, its location */
	int		 failback_requested; /* --failback, for the next run */
	long long	 last_change;	/* 0: never */
	const char	*last_error;	/* NULL: none */
	const char	*why;		/* dry run: what would happen, else NULL */
	int		 fallback;	/* allDown published the fallback addresses */
	int		 all_down;	/* allDown = all published every endpoint */
	long long	 failover_since; /* off the preferred set since (ms), 0: not */
	const char	*failover_reason; /* why, NULL: not known */
	long		 ttl_written;	/* degradedTtl in force; 0: ttl */
	long		 attempts;	/* for the streak shown while failing */
	long long	 timeout_ms;	/* a check's; with attempts, the failover time */
	long long	 recheck_ms;	/* 0: off; else failures confirmed in the run */
	long		 recover_after;	/* likewise while recovering */
	long long	 cert_warn_ms;	/* certWarn, 0: off */
	const struct outcome_round *round; /* its last round (SEVERAL CHECKERS) */
	const struct outcome_ep *eps;	/* the outcome's, file order */
	size_t		 neps;
};

/* A [notify] section's outbox (ddup.ini(5), NOTIFICATIONS). */
struct report_notify {
	const char	*name;
	const char	*kind;		/* "webhook" or "program" */
	long		 pending;	/* not delivered yet, still tried */
	long		 given_up;	/* attempts spent (kept for `history`) */
	long long	 oldest_pending; /* ms of its event, 0: none */
	const char	*last_error;	/* of an undelivered one; NULL: none */
};

struct report {
	long long	 generated;	/* ms */
	long long	 last_run;	/* 0: never */
	long long	 interval_ms;	/* for the "scheduler stopped" warning */
	const char	*control_url;	/* NULL: none configured */
	long long	 control_since;	/* it has failed since (ms); 0: it passes */
	const char	*control_result; /* with control_since: why */
	int		 stale;		/* the last run is older than three intervals */
	struct report_domain *domains;
	size_t		 ndomains;
	/*
	 * Notifications (ddup.ini(5), NOTIFICATIONS) waiting for delivery
	 * and given up go here, from the state file's outbox: text after the domains,
	 * JSON "notifications" at the top.
	 */
	const struct st_change *changes;	/* the dashboard's: newest first,
						   as state_recent_changes()
						   gives them; may be NULL */
	size_t		 nchanges;
	struct report_notify *notifiers;
	size_t		 nnotifiers;
	const struct outcome_fleet *fleet; /* SEVERAL CHECKERS; NULL: one */
};

struct outcome;
struct notify_cfg;
struct st_notify_counts;

/*
 * --status or --dry-run on f: o's report, with the outboxes of the n
 * [notify] sections nc (their counts from the state file; n 0: none
 * shown).  Returns 0, or -1 when f failed or JSON could not be built
 * (logged).
 */
int	 report_print(FILE *f, const struct outcome *o, long long interval_ms,
	    const struct notify_cfg *nc, const struct st_notify_counts *counts,
	    size_t n, int json);
/* rep borrows o's strings: free it (report_free) before o. */
void	 report_from_outcome(struct report *rep, const struct outcome *o,
	    long long interval_ms);
void	 report_free(struct report *rep);
void	 report_print_text(FILE *f, const struct report *r);
/* Returns 0, -1 if JSON could not be built. */
int	 report_print_json(FILE *f, const struct report *r);

#endif
