#ifndef DDUP_DECIDE_H
#define DDUP_DECIDE_H

/*
 * The failover decision (SPEC section 5) as pure functions: counters and
 * the latest check result in, new counters, health, states and the set to
 * publish out.  No I/O, so it is tested with tables of cases.
 */

#include <stddef.h>

enum ep_state {
	EP_UNKNOWN = 0,		/* never checked */
	EP_ACTIVE,		/* healthy, published, no failure */
	EP_STANDBY,		/* healthy, not published */
	EP_FAILING,		/* healthy, published, 1..attempts-1 failures */
	EP_DOWN,		/* removed, or not published and latest check failed */
	EP_RECOVERING,		/* removed, 1..recoverAfter-1 passes */
	EP_DRAINED		/* taken out by the operator */
};

enum dom_status {
	DOM_UNKNOWN = 0,	/* never run */
	DOM_HEALTHY,		/* every endpoint active or standby */
	DOM_WARNING,		/* something healthy published, something not right */
	DOM_UNHEALTHY		/* no healthy endpoint */
};

enum check_result {
	CR_NONE = 0,		/* not checked (status from stored state) */
	CR_PASS,
	CR_FAIL
};

struct dec_ep {
	/* in */
	long		 priority;
	int		 has_state;	/* counters come from an earlier run */
	long		 failures;	/* consecutive, before this check */
	long		 passes;
	int		 removed;
	int		 published;	/* its address is in the set last written */
	int		 result;	/* enum check_result of this run */
	int		 last_ok;	/* with CR_NONE: did its latest check pass */

	/* out */
	long		 new_failures;
	long		 new_passes;
	int		 new_removed;
	int		 healthy;
	int		 publish;	/* in the set this run wants in DNS */
	int		 state;		/* enum ep_state, as it will be after the run */
};

struct dec_domain {
	/* in */
	long		 attempts;
	long		 recover_after;

	/* out */
	int		 any_healthy;
	int		 has_tier;
	long		 tier;		/* priority of the published tier */
	int		 status;	/* enum dom_status */
};

/*
 * Applies this run's results to the n endpoints of one domain and picks
 * what to publish: the healthy endpoints of the lowest priority.  With no
 * healthy endpoint nothing is marked publish, any_healthy is 0, and the
 * caller must leave DNS as it is (state then shows the endpoints that
 * are still in DNS as published and down).
 */
void	 decide(struct dec_domain *d, struct dec_ep *eps, size_t n);

/*
 * States as shown after the run, once the caller knows which addresses
 * are in DNS: sets eps[i].state from the out counters and eps[i].published
 * (which the caller updates to the set now in DNS), and d->status.
 */
void	 decide_states(struct dec_domain *d, struct dec_ep *eps, size_t n);

const char	*ep_state_str(int s);
const char	*dom_status_str(int s);

#endif
