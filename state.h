#ifndef DDUP_STATE_H
#define DDUP_STATE_H

/*
 * The state (SPEC sections 6 and 11): counters per endpoint, the set
 * last published per domain and type, history of checks (as streaks of
 * equal results) and of DNS changes.  A read-write open holds an exclusive lock on the file until
 * state_close(), so runs never overlap.  Everything a run writes goes into
 * one transaction: state_begin() ... state_commit().
 */

#include <stddef.h>

#include "rrset.h"
#include "util.h"

struct state;
struct config;

/*
 * The state is one interface with a backend per kind of store, one
 * const entry each (state/sqlite.h): SQLite, the default, for a path, and
 * PostgreSQL for a URI, shared by the checkers of a fleet (SPEC 11).  A
 * run reads what it needs in one go, state_load(), and writes what it
 * learnt in one go, state_save() of its outcome, so that a store across
 * a network costs a few round trips per run, however many endpoints
 * there are.  state_open(), state_close(), state_load(), state_save(),
 * state_mark_unsure() and the requests (state_request_*) go to the
 * open's backend; the row functions further down are the SQLite
 * backend's own, from which it builds its load and save (the unit tests
 * drive them directly).
 */

/* Results of state_open(); the values are the exit codes of SPEC 2. */
#define STATE_OK	0
#define STATE_LOCKED	3	/* another run holds the lock */
#define STATE_BAD	4	/* cannot open, create or upgrade */

#define STATE_RW	0	/* create if missing, lock, migrate */
#define STATE_RO	1	/* read only, no lock; a missing file is not an error */

/*
 * Opens path.  With STATE_RO and no file, *out is set to NULL and
 * STATE_OK returned: callers treat that as an empty state.  On error err
 * names the file and the cause.  A file that is not a ddup state file is
 * left exactly as it was.
 */
int	 state_open(const char *path, int mode, struct state **out, char *err,
	    size_t errlen);
/*
 * The same for checker (config.h; NULL: none), whose runs exclude each
 * other where several checkers share the state (SPEC 11): a read-write
 * open while another run of the same checker holds its lock is
 * STATE_LOCKED.
 */
int	 state_open_checker(const char *path, const char *checker, int mode,
	    struct state **out, char *err, size_t errlen);
void	 state_close(struct state *st);

/*
 * What is stored of one endpoint: its counters (as of the last run,
 * derived from its streak) and its open streak of equal results.
 */
struct st_endpoint {
	int		 found;		/* 0: no row (or its ip/url changed) */
	long		 failures;
	long		 passes;
	int		 removed;
	long long	 last_check;	/* ms since epoch, 0: never */
	int		 last_ok;
	long		 last_status;	/* HTTP status, 0: none */
	long		 latency_ms;	/* read: the streak's mean; put: this check's */
	char		 last_result[160];
	int		 uncounted;	/* put, with last_check 0: this run's check
					   did not count (its controlUrl failed) */
};

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
	/* SPEC 11: the last round's votes (has_votes 0: none recorded). */
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
	struct st_fleet	*fleet;		/* SPEC 11; NULL: a store of one checker */
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
 * endpoint's last result) and the requests in force at now.  st NULL is
 * an empty state.  -1 on a read error, with what could be read in *out
 * all the same and the error in state_errmsg(); *out is always to be
 * freed with state_snapshot_free().
 */
int	 state_load(struct state *st, const struct config *c, int results,
	    long long now, struct st_snapshot *out);
void	 state_snapshot_free(const struct config *c, struct st_snapshot *s);
/* A snapshot's fleet, once taken over from it (NULL: nothing). */
void	 state_fleet_free(struct st_fleet *f);

/*
 * SPEC 11: several checkers sharing one store decide in rounds.  A run
 * hands its results to state_round_begin() in place of state_load():
 * with a store of one checker (SQLite) that is a load, and every domain
 * is decided by the run alone with its own results; with a shared store
 * the run records its report, takes the round of each domain whose slot
 * no other run has taken, and gets the snapshot read under the rounds'
 * locks with the reports of the window, for the vote (vote.h).  After
 * deciding, state_round_commit() records the rounds taken (and the sets
 * about to be written, with their domains unsure) before any provider is
 * called; state_save() then records the outcome of the domains still the
 * run's.
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
 * -1 with state_errmsg() set when the store cannot be used (the run then
 * changes nothing); *out and *rd are to be freed with
 * state_snapshot_free() and state_round_free() either way.
 */
int	 state_round_begin(struct state *st, const struct config *c,
	    const struct st_report_in *in, struct st_snapshot *out,
	    struct st_round *rd);
/* doms: per domain of c; -1 with err set when nothing was recorded. */
int	 state_round_commit(struct state *st, const struct config *c,
	    const struct st_round *rd, const struct st_round_dom *doms,
	    char *err, size_t errlen);
void	 state_round_free(const struct config *c, struct st_round *rd);

struct outcome;

/*
 * Writes everything a run learnt, its outcome (outcome.h), all or
 * nothing, and ends the run (what state_finish_run() and
 * state_prune_requests() do).  -1 with err set when nothing was
 * written.
 */
int	 state_save(struct state *st, const struct config *c,
	    const struct outcome *o, char *err, size_t errlen);

/*
 * Reads.  A row whose ip or url differ from the ones given counts as not
 * found (the endpoint was redefined).  st may be NULL (empty state).
 * state_domain_free() frees the address sets of a st_domain.
 */
int	 state_get_endpoint(struct state *st, const char *domain,
	    const char *name, const char *ip, const char *url,
	    struct st_endpoint *out);
int	 state_get_domain(struct state *st, const char *domain,
	    struct st_domain *out);
void	 state_domain_free(struct st_domain *d);
/*
 * Reads between these two share one read transaction instead of one
 * each: ten thousand endpoint lookups cost a third as much.  Nothing to
 * do for a read-only open (it holds one snapshot anyway) or st NULL.
 */
void	 state_read_begin(struct state *st);
void	 state_read_end(struct state *st);
/* ms of the last completed run, 0: none. */
long long state_last_run(struct state *st);

/* Writes, between state_begin() and state_commit() / state_rollback(). */
int	 state_begin(struct state *st, char *err, size_t errlen);
int	 state_commit(struct state *st, char *err, size_t errlen);
void	 state_rollback(struct state *st);

/*
 * Records an endpoint after this run's check (e->last_check is its time,
 * last_ok, last_status, last_result and latency_ms its result): the
 * check goes into the endpoint's open streak, or ends it and begins a
 * new one if the result, status or reason differ.  The endpoint row is
 * written only when it stops following from what is stored: a steady
 * endpoint costs no write, except when its latency leaves the streak's
 * range, and in one run in 16, when it goes into the streak's mean (a
 * sample; min and max are exact).  A run must put every configured
 * endpoint, with a check or as uncounted (SPEC 9: a drained endpoint
 * is still checked): one left out would be read next run as having had
 * its streak's result once more.
 */
int	 state_put_endpoint(struct state *st, const char *domain,
	    const char *name, const char *ip, const char *url, long priority,
	    const struct st_endpoint *e);
/* The domain row; d->pub and has_pub are ignored (see state_put_published). */
int	 state_put_domain(struct state *st, const char *domain,
	    const char *provider, long ttl, const struct st_domain *d);
/* set NULL drops the row of type (the type is no longer managed). */
int	 state_put_published(struct state *st, const char *domain,
	    enum rrtype type, const struct rrset *set);
/*
 * Records, in a transaction of its own committed at once, that an update
 * of domain is about to be sent.  Until a later run saves the domain with
 * unsure = 0, the stored sets are not trusted and the provider is read
 * again: a run killed between the update and its commit cannot leave DNS
 * on a set the state file does not know.  Call outside state_begin().
 */
int	 state_mark_unsure(struct state *st, const char *domain,
	    const char *provider, long ttl, char *err, size_t errlen);
/*
 * One DNS change attempt to history; error NULL on success.  tier < 0:
 * none; rank < 0: the domain has no location; location NULL: none.
 */
int	 state_add_change(struct state *st, long long when, const char *domain,
	    enum rrtype type, long ttl, const char *old_set, const char *new_set,
	    long tier, long rank, const char *location, int ok,
	    const char *error);
/*
 * Ends a run: records its time and number, drops domains and endpoints
 * that are no longer configured (history stays; skipped when the set of
 * configured endpoints is the one of the last run), prunes streaks whose
 * last check is older than history_ms and changes older than a year.
 */
int	 state_finish_run(struct state *st, long long now,
	    const struct config *c);

/* Rows changed and database pages written by the last commit; -1: not counted. */
void	 state_last_writes(struct state *st, long long *rows,
	    long long *pages);

/*
 * What the operator asked for (SPEC 9) and the state of the checker's
 * own network (state/sqlite_drain.c).  The requests are written by
 * --drain, --undrain and --failback, each in a transaction of its own
 * (call outside state_begin()); times are ms since the epoch, until 0
 * for "until --undrain".
 */
int	 state_request_drain(struct state *st, const char *domain,
	    const char *endpoint, long long now, long long until, char *err,
	    size_t errlen);
int	 state_request_undrain(struct state *st, const char *domain,
	    const char *endpoint, char *err, size_t errlen);
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

/* Reads them as of now (st NULL: none); -1 on a database error. */
int	 state_get_requests(struct state *st, long long now,
	    struct st_requests *out);
void	 state_requests_free(struct st_requests *r);
const struct st_drain *state_find_drain(const struct st_requests *r,
	    const char *domain, const char *endpoint);
int	 state_has_failback(const struct st_requests *r, const char *domain);
/*
 * Writes of a run, between state_begin() and state_commit(): a failback
 * done; the controlUrl failing since `since` (0: it passed); and, after
 * state_finish_run(), dropping the drains whose time ran out and the
 * requests for what the state no longer holds (state_finish_run() drops
 * what is no longer configured).
 */
int	 state_clear_failback(struct state *st, const char *domain);
int	 state_put_control(struct state *st, long long since,
	    const char *result);
int	 state_prune_requests(struct state *st, long long now);

/* One DNS change attempt from history (state/sqlite_history.c). */
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
	    struct st_change **out, size_t *n);
void	 state_changes_free(struct st_change *v, size_t n);

/*
 * The notification outbox (SPEC 10, state/sqlite_notify.c).  A run stores its
 * events, each with a delivery for each of the n [notify] sections that
 * want it, between state_begin() and state_commit(), so they are in the
 * file before anything is sent; state_prune_events() there too marks
 * the deliveries of sections no longer configured as given up and drops
 * what is done and older than keep_ms.
 */
int	 state_add_event(struct state *st, long long when, const char *domain,
	    const char *event, const char *endpoint, const char *body,
	    const char *const *notifiers, size_t n);
int	 state_prune_events(struct state *st, long long now, long long keep_ms,
	    const char *const *notifiers, size_t n);

/* A delivery still to make. */
struct st_delivery {
	long long	 event;		/* its id: the order of delivery */
	char		*body;		/* the event JSON */
	long		 attempts;	/* made so far */
	long long	 next_attempt;	/* ms, not before; 0: at once */
};

/* Those of notifier neither delivered nor given up, oldest first. */
int	 state_get_deliveries(struct state *st, const char *notifier,
	    struct st_delivery **out, size_t *n);
void	 state_deliveries_free(struct st_delivery *d, size_t n);
/*
 * An attempt's outcome, in a transaction of its own (call outside
 * state_begin()): d->attempts and d->next_attempt as they are now, and
 * whether it was delivered or is given up; error (no secret) kept for
 * the operator.
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
	    struct st_notify_counts *out);

/*
 * Counters that only grow, for metricsFile (state/sqlite_counters.c): checks
 * by result per endpoint (those of history, plus those of streaks
 * pruned since the counters began), DNS updates by outcome per domain
 * (endpoint "").  Names: checks_pass, checks_fail, dns_ok, dns_failed.
 */
struct st_counter {
	char		*domain;
	char		*endpoint;
	char		*name;
	long long	 value;
};

/* Adds add to one counter; between state_begin() and state_commit(). */
int	 state_count(struct state *st, const char *domain,
	    const char *endpoint, const char *name, long long add);
/*
 * Every counter, sorted by domain, endpoint and name (byte order), into a
 * malloc'd *out of *n (none for st NULL); -1 on a database error.
 */
int	 state_counters(struct state *st, struct st_counter **out, size_t *n);
/* The counter of that name in v, or 0 when there is none. */
long long state_counter(const struct st_counter *v, size_t n,
	    const char *domain, const char *endpoint, const char *name);
void	 state_counters_free(struct st_counter *v, size_t n);

/* The last sqlite3 error message, for context in the caller's error. */
const char *state_errmsg(struct state *st);

#endif
