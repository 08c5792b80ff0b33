#ifndef DDUP_OUTCOME_H
#define DDUP_OUTCOME_H

/*
 * What one run found and did, computed once: each domain's endpoint
 * states, the set now in DNS, the tier, the change made or failed, the
 * error, and the events of ddup.ini(5), NOTIFICATIONS.  Saving, logs,
 * --status, --dry-run and every file written after a run (dashboard,
 * metrics, the notification outbox) read this one result instead of
 * each working it out again from the run's internals.
 *
 * run.c makes it (outcome_create, outcome_fill, outcome_seal); every
 * other module only reads it through the const pointers below, in file
 * order.  Strings and configuration pointers are borrowed from the
 * configuration and the run, or handed to it (outcome_keep): an outcome
 * lives no longer than the run that made it.  Text from servers and
 * the state file (reasons, errors, locations) is not yet made
 * printable: each output does that.
 */

#include <stddef.h>

#include "log.h"
#include "publish.h"
#include "util.h"

struct domain_cfg;
struct endpoint_cfg;

/* What made the outcome. */
enum outcome_kind {
	OUTCOME_RUN = 0,	/* a run: checks done, DNS changed where needed */
	OUTCOME_DRY_RUN,	/* checks done, nothing written: what a run would leave */
	OUTCOME_STATUS		/* --status: the stored state, no check */
};

/* This run's check of one endpoint. */
struct outcome_check {
	int		 done;		/* 0: not checked (--status) */
	int		 counted;	/* moved the counters (not excused by a failed controlUrl) */
	int		 ok;
	long		 status;	/* HTTP status, 0: none */
	long		 latency_ms;
	const char	*reason;	/* "ok", "HTTP 503", "timeout"... */
	long long	 cert_expires;	/* Unix seconds, 0: no certificate seen */
	/*
	 * recheck: the failed checks of this run before this one, latest
	 * first (check.h), each counted like it; NULL: none.
	 */
	const struct check_res *before;
};

struct outcome_ep {
	const struct endpoint_cfg *cfg;	/* name, url, ip or cname, priority, location */
	long long	 drained_until;	/* ms, 0: until --undrain */
	/* Ints in pairs: a run keeps one of these per endpoint. */
	int		 drained;

	/* As the last run left it. */
	int		 has_state;	/* counters came from an earlier run */
	int		 state_before;	/* enum ep_state */
	int		 removed_before;
	int		 last_ok_before;
	long		 failures_before;
	long		 passes_before;
	long long	 last_check_before; /* ms, 0: never */
	const char	*last_result_before; /* NULL: never, or not loaded */
	long		 latency_before;
	long long	 cert_expires_before; /* Unix seconds, 0: none stored */

	struct outcome_check check;

	/* After the run (ddup-check(8), FAILOVER RULES). */
	int		 state;		/* enum ep_state */
	int		 healthy;
	int		 published;	/* in the set DNS holds after the run */
	int		 removed;
	long		 failures;
	long		 passes;

	/* The latest check known: this run's if any, else the stored one. */
	long long	 last_check;	/* ms, 0: never */
	const char	*last_result;	/* NULL: never */
	long		 latency_ms;	/* <0: none */
	long long	 cert_expires;	/* Unix seconds, 0: none known */

	/* The votes of the round, this run's or the last one stored
	   (ddup-check(8), SEVERAL CHECKERS). */
	int		 has_votes;
	int		 verdict;	/* enum vote_verdict */
	long		 votes_pass;
	long		 votes_fail;
};

/* A domain's round, this run's or the last one stored
   (ddup-check(8), SEVERAL CHECKERS). */
struct outcome_round {
	int		 has;		/* 0: none known */
	long long	 slot;
	long long	 at;		/* ms, database clock; 0: not known */
	const char	*checker;	/* who took it */
	long		 heard;		/* checkers counted */
	int		 void_all;	/* fewer than quorum: nothing counted */
};

struct outcome_domain {
	const struct domain_cfg	*cfg;	/* name, provider, ttl, policy */

	/* As the last run left it. */
	int		 found;		/* the state file knows the domain */
	int		 was_unhealthy;	/* the last run found no healthy endpoint */
	int		 has_tier_before;
	struct log_tier	 tier_before;
	/*
	 * DNS before the run, both families, and its CNAME target (NULL:
	 * none); empty when unchanged_dns says it is published and
	 * published_cname: read them with outcome_previous().
	 */
	struct addrset	 previous;
	char		*previous_cname;
	int		 unchanged_dns;

	/* This run's decision. */
	int		 status;	/* enum dom_status, after the run */
	int		 any_healthy;	/* something could be published */
	int		 has_want;	/* a tier was chosen */
	struct log_tier	 want;		/* that tier */
	int		 waiting;	/* manual failback keeps a worse tier */
	struct log_tier	 best;		/* with waiting: the tier auto would take */
	int		 failback_now;	/* a --failback is acted on in this run */
	int		 failback_requested; /* --status: one waits for the next run */

	/* What DNS holds after the run, and what happened to it. */
	int		 has_tier;
	struct log_tier	 tier;		/* the tier in DNS */
	struct addrset	 published;	/* both families, IPv4 first */
	char		*published_cname; /* NULL: none */
	const struct publication *pub;	/* the sets sent, the changes tried; NULL: --status */
	int		 synced;	/* DNS holds the chosen sets */
	int		 changed;	/* this run changed DNS */
	int		 failed;	/* reading or changing DNS failed */
	const char	*error;		/* with failed: why */
	int		 unhealthy;	/* no healthy endpoint (kept as it was
					   when the run blames its network) */
	int		 unsure;	/* an update went out that the state
					   file cannot vouch for */
	/*
	 * Off the preferred set (ddup.ini(5), POLICIES: degradedTtl), as
	 * DNS holds it after the run, and as the state had it: since when
	 * (ms, 0: not), why (NULL: not known; allocated), and whether
	 * allDown chose the set (enum all_down).
	 */
	int		 fail_open;
	int		 fail_open_before;
	long long	 failover_since;
	long long	 failover_since_before;
	char		*failover_reason;
	long		 ttl_written;	/* degradedTtl in force: the sets' TTL;
					   0: the domain's ttl */
	long long	 last_change;	/* ms of the last successful change, 0: never */
	const char	*last_error;	/* NULL: none */
	const char	*why;		/* dry run: what would happen; else NULL */
	int		 decided;	/* this run took its round (SEVERAL CHECKERS
					   in ddup-check(8); always
					   with one checker): 0 shows it as stored,
					   with no event */
	struct outcome_round round;

	struct outcome_ep *eps;		/* the domain's endpoints, file order */
	size_t		 neps;
};

struct outcome_event {
	int		 kind;		/* enum event_type (config.h), of
					   ddup.ini(5), NOTIFICATIONS */
	long long	 time;		/* ms: the run's */
	const struct outcome_domain *domain; /* published, previous, tiers, endpoints */
	const struct outcome_ep *ep;	/* endpoint_*: the endpoint; else NULL */
	const char	*error;		/* dns_update_failed: the provider's
					   error; else NULL */
};

/* The controlUrl after the run. */
struct outcome_control {
	const char	*url;		/* NULL: none configured */
	int		 failed;	/* the run blames its own network */
	long long	 since;		/* it has failed since (ms); 0: it passes */
	const char	*result;	/* with since: why */
};

/* One checker of the fleet as the store last heard from it
   (ddup-check(8), SEVERAL CHECKERS). */
struct outcome_checker {
	const char	*name;
	long long	 at;		/* ms of its latest report, 0: none */
	long long	 slot;
	int		 in_step;	/* its configuration's digest is this run's */
	long		 passes;	/* in that report */
	long		 failures;
};

struct outcome_fleet {
	int		 shared;	/* 0: one checker, every run decides */
	long		 quorum;
	long long	 slot;		/* the database's, at this run */
	const struct outcome_checker *checkers;	/* the fleet, config order */
	size_t		 ncheckers;
};

struct outcome;
struct check_res;
struct dec_domain;
struct dec_ep;
struct st_checker;
struct st_domain;
struct st_drain;
struct st_ep_snap;
struct st_last_round;
struct vote_ep;

/* Making one (run.c). */
struct outcome	*outcome_create(int kind, long long now, size_t ndomains);
/*
 * Domain i (in file order), zeroed, with room for cfg's endpoints (each
 * with its cfg set), for the maker to fill.  previous and published are
 * empty sets to add to.
 */
struct outcome_domain *outcome_fill(struct outcome *o, size_t i,
	    const struct domain_cfg *cfg);
struct outcome_control *outcome_control_fill(struct outcome *o);

/*
 * The maker records each phase of the run as it ends, from the structs
 * of that phase (all borrowed, as above).  An endpoint as the last run
 * left it (se's last_result borrowed; drain NULL: not drained):
 */
void		 outcome_ep_stored(struct outcome_ep *oe,
		    const struct st_ep_snap *se, const struct st_drain *drain);
/*
 * After the decision: its counters and states (de), this run's check
 * (res, with check.done; a check.reason already set is the round's
 * verdict and stays), the round's votes (v; NULL: the stored ones stay).
 */
void		 outcome_ep_settle(struct outcome_ep *oe,
		    const struct dec_ep *de, const struct check_res *res,
		    const struct vote_ep *v, long long now);
/*
 * A domain once its endpoints are settled: kind is the domain's
 * (OUTCOME_STATUS shows it as stored), pub NULL with OUTCOME_STATUS,
 * learnt 0 when the run learnt nothing of the endpoints (a failed
 * controlUrl, a void round), why the dry run's text ("" or NULL: none).
 */
void		 outcome_domain_settle(struct outcome_domain *od, int kind,
		    const struct dec_domain *dec, const struct publication *pub,
		    const struct st_domain *st, long long now, int learnt,
		    const char *why);
/* Hands s (may be NULL) to the outcome, freed with it; returns s. */
const char	*outcome_keep(struct outcome *o, char *s);
/* Likewise a check's earlier results, res->before (check.h). */
void		 outcome_keep_checks(struct outcome *o, struct check_res *b);
/*
 * ddup-check(8), SEVERAL CHECKERS: the round's verdict v on an endpoint
 * as its reason, when it is not what this check (res) saw; the tally
 * heard checkers under quorum.
 */
void		 outcome_ep_verdict(struct outcome *o, struct outcome_ep *oe,
		    const struct vote_ep *v, const struct check_res *res,
		    size_t heard, long quorum);
/* A domain's round, this run's or a stored one (ddup-check(8), SEVERAL
   CHECKERS). */
void		 outcome_round_set(struct outcome_domain *od, long long slot,
		    long long at, const char *checker, long heard, int void_all);
void		 outcome_round_stored(struct outcome_domain *od,
		    const struct st_last_round *lr);
/* The controlUrl: failing since when (0: it passes), and why. */
void		 outcome_control_set(struct outcome *o, const char *url,
		    int failed, long long since, const char *result);
/*
 * The fleet from the store's view of its n checkers (names borrowed):
 * each one's latest report counted in passes and failures.
 */
void		 outcome_fleet_from(struct outcome *o, long quorum,
		    long long slot, const struct st_checker *c, size_t n);
/*
 * One log line per endpoint of d whose state changed, and one for the
 * domain when it lost or regained its healthy endpoints.
 */
void		 outcome_log_transitions(const struct outcome *o,
		    const struct outcome_domain *d);
/* What DNS held before the run: d's previous, or with unchanged_dns its
   published (not copied: a run holds every domain's outcome). */
const struct addrset *outcome_previous(const struct outcome_domain *d,
	    const char **cname);
/*
 * ddup.ini(5), certWarn: whether e's latest certificate known expires
 * within its domain's certWarn of now (ms); and whether this run's check
 * brought it there: the one warning and cert_expiring event, raised when
 * the stored certificate was not yet within certWarn as of the check
 * before (or none was stored), so that a certificate warns once, and its
 * successor once again when it too comes near its end.
 */
int		 outcome_cert_within(const struct outcome_domain *d,
		    const struct outcome_ep *e, long long now);
int		 outcome_cert_entering(const struct outcome_domain *d,
		    const struct outcome_ep *e, long long now);
/* Stores the time of the last completed run (for --status). */
void		 outcome_set_last_run(struct outcome *o, long long ms);
/* Works out the events from the filled domains; call once, after all. */
void		 outcome_seal(struct outcome *o);
void		 outcome_free(struct outcome *o);

/* Reading one. */
/* The address e publishes; NULL for a CNAME endpoint. */
const char	*outcome_ep_ip(const struct outcome_ep *e);
int		 outcome_kind(const struct outcome *o);
long long	 outcome_time(const struct outcome *o);	/* the run's now, ms */
long long	 outcome_last_run(const struct outcome *o); /* 0: never */
const struct outcome_control *outcome_control(const struct outcome *o);
const struct outcome_fleet *outcome_fleet(const struct outcome *o);
size_t		 outcome_ndomains(const struct outcome *o);
const struct outcome_domain *outcome_domain(const struct outcome *o,
	    size_t i);
/* In order: per domain in file order its DNS change, all_unhealthy,
   then its endpoints' events in file order. */
size_t		 outcome_nevents(const struct outcome *o);
const struct outcome_event *outcome_event(const struct outcome *o, size_t i);

/*
 * The events of one domain, pure (no I/O, no clock): appends to *ev
 * (of *n, growing) what d's before and after values say happened.
 * control_failed: the run blames its own network, so no domain lost its
 * endpoints.  outcome_seal() calls it for each domain; the unit tests
 * drive it with tables.
 */
void		 outcome_domain_events(const struct outcome_domain *d,
	    long long now, int control_failed, struct outcome_event **ev,
	    size_t *n);

#endif
