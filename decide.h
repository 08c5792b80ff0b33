#ifndef DDUP_DECIDE_H
#define DDUP_DECIDE_H

/*
 * The failover decision (ddup-check(8), FAILOVER RULES) as pure functions:
 * counters, the latest check result and the domain's policy in, new
 * counters, health, states and the set to publish out.  No I/O, no
 * clock, so it is tested with tables of cases.
 */

#include <stddef.h>

/*
 * A tier: the endpoints of one location rank and one priority.  The
 * rank is where the endpoint's location comes in the domain's order of
 * preference (0: its own location, then each failover location, then
 * the rest; 0 for all when the domain has no location).  Lower is
 * better, by rank first, then by priority.
 */
struct tier {
	long		 rank;
	long		 priority;
};

/* <0, 0 or >0 as a is better than, as good as or worse than b. */
int	 tier_cmp(struct tier a, struct tier b);

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
	long		 rank;		/* location rank, see struct tier */
	int		 drained;	/* the operator took it out of DNS */
	int		 has_state;	/* counters come from an earlier run */
	long		 failures;	/* consecutive, before this check */
	long		 passes;
	int		 removed;
	int		 published;	/* its address is in the set last written */
	int		 result;	/* enum check_result of this run */
	long		 failed_before;	/* recheck: failed checks of this run
					   before result, counted first */
	int		 last_ok;	/* with CR_NONE: did its latest check pass */
	int		 drained_before; /* for decide_before(): by a drain
					   already there at the last run */

	/* out */
	int		 counted;	/* this run's result moved the counters */
	long		 new_failures;
	long		 new_passes;
	int		 new_removed;
	int		 healthy;	/* FAILOVER RULES, drained or not */
	int		 publish;	/* in the set this run wants in DNS */
	int		 state;		/* enum ep_state, as it will be after the run */
	int		 state_before;	/* decide_before(): as the last run left it */
};

struct dec_domain {
	/* in */
	long		 attempts;
	long		 recover_after;
	long		 min_healthy;	/* a tier needs this many; 0 counts as 1 */
	int		 publish_one;	/* publish = one */
	int		 failback_manual; /* failback = manual */
	int		 failback_now;	/* --failback was asked: choose as auto */
	int		 has_current;	/* a tier was published before */
	struct tier	 current;	/* that tier */
	int		 control_failed; /* controlUrl failed: failures do not count */
	int		 void_round;	/* fewer checkers heard than quorum */
	int		 all_down;	/* enum all_down (config.h): allDown */

	/* out */
	int		 any_healthy;	/* some endpoint may be published */
	int		 has_tier;
	struct tier	 tier;		/* the tier to publish */
	int		 waiting;	/* manual failback keeps a worse choice */
	struct tier	 best;		/* with waiting: the tier auto would take */
	int		 status;	/* enum dom_status */
	/*
	 * allDown applied (nothing healthy, the run's checks count): with
	 * ALLDOWN_ALL the endpoints to publish are marked publish, with
	 * ALLDOWN_FALLBACK none is (the caller publishes the fallback
	 * addresses); ALLDOWN_KEEP: not applied.
	 */
	int		 fail_open;
	int		 degraded;	/* the set to publish is not the preferred one */
	size_t		 left;		/* with degraded: the first endpoint of the
					   preferred set not published, in file
					   order (n: none, the set grew) */
};

/*
 * Applies this run's results to the n endpoints of one domain (in file
 * order) and picks what to publish (FAILOVER RULES): tiers in order of rank,
 * then priority; the first with at least min_healthy endpoints that are
 * healthy and not drained, else the first with any; with manual
 * failback the current tier while it has that many.  Inside the tier
 * every such endpoint, or with publish_one the first in file order
 * (with manual failback, the one published now while it is healthy).
 * With nothing to publish no endpoint is marked publish, any_healthy is
 * 0, and unless allDown applies (fail_open) the caller must leave DNS
 * as it is (state then shows the endpoints that are still in DNS as
 * published and down).  allDown applies only when the run's checks
 * count: neither control_failed nor void_round.  degraded says whether
 * the set chosen differs from the preferred one: the set chosen with
 * every endpoint healthy and none drained (degradedTtl).
 */
void	 decide(struct dec_domain *d, struct dec_ep *eps, size_t n);

/*
 * How many times this run may repeat endpoint e's check after a failure
 * (ddup.ini(5), recheck), from its stored counters: while it is healthy
 * (published or standby, neither removed nor drained), as many as keep
 * its failures in a row below attempts; 0 for any other, and for all
 * when the controlUrl failed (no failure counts).
 */
long	 dec_repeats(const struct dec_domain *d, const struct dec_ep *e);

/*
 * States as shown after the run, once the caller knows which addresses
 * are in DNS: sets eps[i].state from the out counters and eps[i].published
 * (which the caller updates to the set now in DNS), and d->status.
 */
void	 decide_states(struct dec_domain *d, struct dec_ep *eps, size_t n);

/*
 * The states as the last run left them, to tell what changed: the
 * decision on the stored counters alone, drained only by drain_before.
 * Sets eps[i].state_before; d and the rest of eps are left as they are.
 */
void	 decide_before(const struct dec_domain *d, struct dec_ep *eps,
	    size_t n);

struct domain_policy;
struct endpoint_cfg;
struct st_domain;
struct st_ep_snap;

/*
 * The inputs as the state file holds them: a domain's policy and
 * published tier (failback_now: a --failback is asked), and one of its
 * endpoints (drained now, and drained_before by a drain that was there
 * at the last run), published when st's sets hold its address.
 */
void	 dec_domain_load(struct dec_domain *d, const struct domain_policy *pol,
	    const struct st_domain *st, int failback_now);
void	 dec_ep_load(struct dec_ep *e, const struct endpoint_cfg *cfg,
	    const struct st_ep_snap *se, const struct st_domain *st,
	    int drained, int drained_before);

const char	*ep_state_str(int s);
const char	*dom_status_str(int s);

#endif
