#ifndef DDUP_STATE_H
#define DDUP_STATE_H

/*
 * The state: counters per endpoint, the set last published per domain
 * and type, history of checks (as streaks of equal results) and of DNS
 * changes, the operator's requests, the notification outbox
 * (ddup-check(8), STATE FILE; ddup.ini(5), NOTIFICATIONS).  This is what
 * the core calls: one interface with a backend per kind of store behind
 * it (state/backend.h), SQLite, the default, for a path, and PostgreSQL
 * for a URI, shared by the checkers of a fleet (ddup-check(8), SEVERAL
 * CHECKERS).  A read-write open excludes every other run (of the same
 * checker, in a shared store) until state_close().
 *
 * A run reads what it needs in one go, state_load() or
 * state_round_begin(), and writes what it learnt in one go, state_save()
 * of its outcome, so that a store across a network costs a few round
 * trips per run, however many endpoints there are.  The rows a backend
 * builds these from are its own (state/sqlite.h, state/pg.h).
 *
 * Errors, one convention: a call that can fail returns -1 (or, for the
 * open, a STATE_* code) and writes what failed, with context ("STATE:
 * what: cause"), into the caller's err of errlen bytes; err may be NULL
 * when the caller does not want it.  st NULL is an empty state for the
 * reads (nothing found, nothing to deliver).
 */

#include <stddef.h>

#include "rrset.h"
#include "util.h"

struct state;
struct config;

/* Results of state_open_checker(): exit codes of ddup-check(8), EXIT STATUS. */
#define STATE_OK	0
#define STATE_LOCKED	3	/* another run holds the lock */
#define STATE_BAD	4	/* cannot open, create or upgrade */

#define STATE_RW	0	/* create if missing, lock, migrate */
#define STATE_RO	1	/* read only, no lock; a missing file is not an error */

/*
 * Opens path (a file, or a URI for PostgreSQL) for checker (config.h;
 * NULL: none), whose runs exclude each other where several checkers
 * share the state: a read-write open while another run (of the same
 * checker) holds the lock is STATE_LOCKED.  With STATE_RO and no file,
 * *out is set to NULL and STATE_OK returned: callers treat that as an
 * empty state.  On error err names the file and the cause.  A file that
 * is not a ddup state file is left exactly as it was.
 */
int	 state_open_checker(const char *path, const char *checker, int mode,
	    struct state **out, char *err, size_t errlen);
void	 state_close(struct state *st);

/* What one domain row holds. */
#define ST_ERROR_MAX	512

struct st_domain {
	int		 found;
	int		 has_tier;
	long		 tier;		/* its priority */
	long		 tier_rank;	/* its location rank, -1: no location */
	char		 tier_location[64];	/* "" for none or the others */
	long long	 last_change;	/* ms of the last successful DNS change, 0: none */
	/* NULL when none; allocated (a run holds every domain's row):
	   at most ST_ERROR_MAX - 1 bytes, as stored. */
	char		*last_error;
	int		 unhealthy;	/* last run found no healthy endpoint */
	int		 unsure;	/* an update was sent whose outcome was
					   not recorded: pub may not be in DNS */
	/* Off its preferred set (table failovers): since when (ms, 0:
	   not), why (NULL: not known; allocated, at most ST_ERROR_MAX - 1
	   bytes), and whether allDown published the set (enum all_down). */
	long long	 failover_since;
	char		*failover_reason;
	int		 fail_open;
	int		 has_pub[RR_NTYPES];	/* by enum rrtype: a set was written */
	struct rrset	 pub[RR_NTYPES];	/* pub[t].type == t */
};

/* One endpoint as the last run left it (a part of struct st_snapshot). */
struct st_ep_snap {
	int		 found;		/* 0: no row (or its ip/url changed) */
	long		 failures;
	long		 passes;
	int		 removed;
	long long	 last_check;	/* ms since epoch, 0: never */
	int		 last_ok;
	long		 latency_ms;	/* the streak's mean */
	char		*last_result;	/* NULL unless asked for */
	/* When its certificate expires, as last seen (Unix seconds, 0: none;
	   kept apart from the counters, found or not). */
	long long	 cert_expires;
	/* A fleet's last round's votes (has_votes 0: none recorded). */
	int		 has_votes;
	long		 votes_pass;
	long		 votes_fail;
	int		 verdict;	/* enum vote_verdict */
};

struct st_drain;
struct st_fleet;
struct st_requests;

/* Everything a run reads of the state, as of the last run. */
struct st_snapshot {
	long long	 last_run;	/* ms, 0: none */
	struct st_domain *doms;		/* per configured domain, in order */
	struct st_ep_snap *eps;		/* per configured endpoint, domain after
					   domain, each domain's in file order */
	struct st_requests *req;	/* drains, failbacks, the controlUrl */
	struct st_fleet	*fleet;		/* a fleet's; NULL: a store of one checker */
};

/* What a shared store knows of the fleet and of each domain's last round. */
struct st_last_round {
	long long	 slot;		/* 0: none yet */
	long long	 at;		/* ms, database clock */
	char		 checker[64];	/* who took it */
	long		 heard;		/* checkers counted */
	int		 void_all;
};

struct st_fleet {
	struct st_checker *checkers;	/* per checker of the configuration */
	size_t		 ncheckers;
	struct st_last_round *rounds;	/* per configured domain */
};

/*
 * Reads the snapshot of c's domains and endpoints (results: with each
 * endpoint's last result) and the requests in force at now.  -1 on a
 * read error, with what could be read in *out all the same; *out is
 * always to be freed with state_snapshot_free().
 */
int	 state_load(struct state *st, const struct config *c, int results,
	    long long now, struct st_snapshot *out, char *err, size_t errlen);
void	 state_snapshot_free(const struct config *c, struct st_snapshot *s);
/* A snapshot's fleet, once taken over from it (NULL: nothing). */
void	 state_fleet_free(struct st_fleet *f);

/*
 * Several checkers sharing one store decide in rounds (ddup-check(8),
 * SEVERAL CHECKERS).  A run hands its results to state_round_begin()
 * in place of state_load(): with a store of one checker (SQLite) that
 * is a load, and every domain is decided by the run alone with its
 * own results; with a shared store the run records its report, takes
 * the round of each domain whose slot no other run has taken, and
 * gets the snapshot read under the rounds' locks with the reports of
 * the window, for the vote (vote.h).  After deciding,
 * state_round_commit() records the rounds taken (and the sets about
 * to be written, with their domains unsure) before any provider is
 * called; state_save() then records the outcome of the domains still
 * the run's.
 */
struct st_report_in {
	const char	*results;	/* VOTE_* per endpoint of the configuration */
	size_t		 nresults;
	int		 control_failed; /* its controlUrl failed: it takes no round */
	int		 dry_run;	/* write nothing; results count as its report */
};

/* One checker of the fleet as the store last heard from it. */
struct st_checker {
	const char	*name;		/* the configuration's */
	long long	 at;		/* ms of its latest report (database clock), 0: none */
	long long	 slot;		/* of that report */
	int		 in_step;	/* its digest is this run's */
	char		*results;	/* VOTE_* per endpoint; NULL: none */
	size_t		 nresults;
};

struct vote_report;

struct st_round {
	int		 shared;	/* a fleet decides by vote (else: this run alone) */
	long long	 slot;		/* the database's slot now; with shared only */
	unsigned char	*decides;	/* per domain: this run takes its round */
	struct vote_report *reports;	/* the window's, latest first per checker */
	size_t		 nreports;
	struct st_checker *checkers;	/* per checker of the fleet (config order) */
	size_t		 ncheckers;
};

/* What the run decided of one domain whose round it took. */
struct st_round_dom {
	int		 decides;	/* as in st_round */
	size_t		 heard;		/* checkers counted */
	int		 void_all;	/* fewer than quorum: nothing counted */
	int		 will_write;	/* an update may go out: mark it unsure */
	const char	*pending;	/* the set about to be written, as text */
	const struct vote_ep *votes;	/* per endpoint of the domain */
};

/*
 * -1 when the store cannot be used (with rd->shared the run then changes
 * nothing); *out and *rd are to be freed with state_snapshot_free() and
 * state_round_free() either way.
 */
int	 state_round_begin(struct state *st, const struct config *c,
	    const struct st_report_in *in, struct st_snapshot *out,
	    struct st_round *rd, char *err, size_t errlen);
/* doms: per domain of c; -1 when nothing was recorded. */
int	 state_round_commit(struct state *st, const struct config *c,
	    const struct st_round *rd, const struct st_round_dom *doms,
	    char *err, size_t errlen);
void	 state_round_free(const struct config *c, struct st_round *rd);

struct outcome;

/*
 * Writes everything a run learnt, its outcome (outcome.h), all or
 * nothing, and ends the run: records its time, drops what is no longer
 * configured, prunes what is too old.  -1 when nothing was written.
 */
int	 state_save(struct state *st, const struct config *c,
	    const struct outcome *o, char *err, size_t errlen);

/*
 * Records, in a transaction of its own committed at once, that an update
 * of domain is about to be sent.  Until a later run saves the domain with
 * unsure = 0, the stored sets are not trusted and the provider is read
 * again: a run killed between the update and its commit cannot leave DNS
 * on a set the state file does not know.
 */
int	 state_mark_unsure(struct state *st, const char *domain,
	    const char *provider, long ttl, char *err, size_t errlen);
/*
 * Rows changed and database pages written by the last save; -1: not
 * counted (a store across a network).
 */
void	 state_last_writes(struct state *st, long long *rows,
	    long long *pages);
/* Frees the address sets and the error of a st_domain. */
void	 state_domain_free(struct st_domain *d);

/*
 * What the operator asked for (ddup-check(8), DESCRIPTION: --drain,
 * --undrain, --failback) and the state of the checker's own network.
 * The requests are written each in a transaction of its own, a drain or
 * undrain of n endpoints too (a pattern's matches: all or none); times
 * are ms since the epoch, until 0 for "until --undrain", now the
 * checker's clock (an undrain logs the drain it ends as ended then).
 */
struct st_target {
	const char	*domain;
	const char	*endpoint;
};
int	 state_request_drain(struct state *st, const struct st_target *t,
	    size_t n, long long now, long long until, char *err,
	    size_t errlen);
int	 state_request_undrain(struct state *st, const struct st_target *t,
	    size_t n, long long now, char *err, size_t errlen);
int	 state_request_failback(struct state *st, const char *domain,
	    long long now, char *err, size_t errlen);

struct st_drain {
	char		*domain;
	char		*endpoint;
	long long	 since;
	long long	 until;		/* 0: until --undrain */
};

struct st_requests {
	struct st_drain	*drains;	/* those still in force */
	size_t		 ndrains;
	char		**failbacks;	/* domains asked to fail back */
	size_t		 nfailbacks;
	long long	 control_since;	/* the controlUrl has failed since; 0: it passed */
	char		 control_result[160];	/* its failure */
};

/* Of a snapshot's requests (struct st_snapshot). */
void	 state_requests_free(struct st_requests *r);
const struct st_drain *state_find_drain(const struct st_requests *r,
	    const char *domain, const char *endpoint);
int	 state_has_failback(const struct st_requests *r, const char *domain);

/* One DNS change attempt from history. */
struct st_change {
	long long	 when;		/* ms, 0: unreadable */
	char		*domain;
	char		*type;		/* "A", "AAAA" or "CNAME" */
	long		 ttl;
	char		*old_set;	/* space-separated; "" for none */
	char		*new_set;
	long		 tier;		/* -1: none */
	int		 ok;
	char		*error;		/* NULL: none */
};

/*
 * The last max DNS change attempts, newest first, into a malloc'd *out
 * of *n entries (none for st NULL); -1 on a database error.
 */
int	 state_recent_changes(struct state *st, size_t max,
	    struct st_change **out, size_t *n, char *err, size_t errlen);
void	 state_changes_free(struct st_change *v, size_t n);

/*
 * The history of the last day, as the dashboard draws it (ddup-check(8),
 * statusHtml): every check streak, drain and DNS change attempt that
 * reaches from since (ms) onwards, read in one statement.  Void time
 * (no counted check) is what no streak covers: the reader works it out.
 */
#define ST_TL_PASS	0	/* a streak of passed checks */
#define ST_TL_FAIL	1	/* of failed ones */
#define ST_TL_DRAIN	2	/* a drain, in force or ended */

struct st_tl_seg {
	char		*domain;
	char		*endpoint;
	int		 kind;		/* ST_TL_* */
	int		 open;		/* goes on: the open streak, a drain
					   in force */
	long long	 from;		/* ms: first check, drained since */
	long long	 to;		/* ms: last check, drained until;
					   0: until --undrain */
};

struct st_tl_mark {
	char		*domain;
	char		*type;		/* "A", "AAAA" or "CNAME" */
	long long	 when;		/* ms */
	int		 ok;
	char		*old_set;	/* as struct st_change's */
	char		*new_set;
};

struct st_timeline {
	struct st_tl_seg *segs;		/* by domain, endpoint, then from */
	size_t		 nsegs;
	struct st_tl_mark *marks;	/* by domain, then time */
	size_t		 nmarks;
};

/* Into *out (empty for st NULL; to be freed either way); -1 on error. */
int	 state_timeline(struct state *st, long long since,
	    struct st_timeline *out, char *err, size_t errlen);
void	 state_timeline_free(struct st_timeline *t);

/*
 * The notification outbox (ddup.ini(5), NOTIFICATIONS): a run's save
 * stores its events, each with a delivery for each [notify] section that
 * wants it, before anything is sent; notify.c delivers them.  A delivery
 * still to make:
 */
struct st_delivery {
	long long	 event;		/* its id: the order of delivery */
	char		*body;		/* the event JSON */
	long		 attempts;	/* made so far */
	long long	 next_attempt;	/* ms, not before; 0: at once */
};

/* Those of notifier neither delivered nor given up, oldest first. */
int	 state_get_deliveries(struct state *st, const char *notifier,
	    struct st_delivery **out, size_t *n, char *err, size_t errlen);
void	 state_deliveries_free(struct st_delivery *d, size_t n);
/*
 * An attempt's outcome, in a transaction of its own: d->attempts and
 * d->next_attempt as they are now, and whether it was delivered or is
 * given up; error (no secret) kept for the operator.
 */
int	 state_put_delivery(struct state *st, const char *notifier,
	    const struct st_delivery *d, long long now, int ok, int given_up,
	    const char *error, char *err, size_t errlen);

/* What --status shows of one [notify] section. */
struct st_notify_counts {
	long		 pending;
	long		 given_up;	/* kept as long as `history` */
	long long	 oldest_pending; /* ms of its event, 0: none */
	char		 last_error[512]; /* of an undelivered one; "" if none */
};
int	 state_notify_counts(struct state *st, const char *notifier,
	    struct st_notify_counts *out, char *err, size_t errlen);

/*
 * Counters that only grow, for metricsFile (ddup.ini(5), TOP-LEVEL
 * KEYS): checks by result per endpoint (those of history, plus those of
 * streaks pruned since the counters began), DNS updates by outcome per
 * domain (endpoint "").  Names: checks_pass, checks_fail, dns_ok,
 * dns_failed.
 */
struct st_counter {
	char		*domain;
	char		*endpoint;
	char		*name;
	long long	 value;
};

/*
 * Every counter, sorted by domain, endpoint and name (byte order), into a
 * malloc'd *out of *n (none for st NULL); -1 on a database error.
 */
int	 state_counters(struct state *st, struct st_counter **out, size_t *n,
	    char *err, size_t errlen);
/* The counter of that name in v, or 0 when there is none. */
long long state_counter(const struct st_counter *v, size_t n,
	    const char *domain, const char *endpoint, const char *name);
void	 state_counters_free(struct st_counter *v, size_t n);

#endif
