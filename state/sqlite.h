#ifndef DDUP_STATE_SQLITE_H
#define DDUP_STATE_SQLITE_H

/*
 * Private to the SQLite backend, state/sqlite*.c (and to
 * tests/unit/test_state.c and bench/state_drive.c, which drive its rows
 * directly): the state file of ddup-check(8), STATE FILE.  Everyone else
 * uses state.h.
 *
 * The backend in layers, each using only those below it:
 * state/sqlite.c, its table (state_sqlite), the run's load and save and
 * sqlite_of(); state/sqlite_open.c, opening (the run lock, files that
 * are not ours, migrations, connection settings) and closing; the rows,
 * state/sqlite_data.c (endpoints, streaks, domains, published sets,
 * meta), state/sqlite_drain.c (the requests), state/sqlite_notify.c (the
 * outbox), state/sqlite_history.c, state/sqlite_counters.c, with the
 * schema in state/sqlite_schema.c; and state/sqlite_tx.c, transactions
 * and errors.
 */

#include <stddef.h>

#include <sqlite3.h>

#include "rrset.h"
#include "state/backend.h"

/* The prepared statements of an open; their SQL is in state/sqlite_data.c. */
enum {
	S_LOAD_EP,
	S_GET_EP,
	S_GET_DOM,
	S_GET_PUB,
	S_GET_META,
	S_PUT_EP,
	S_PUT_DOM,
	S_PUT_FAILOVER,
	S_DEL_FAILOVER,
	S_DROP_FAILOVERS,
	S_PUT_PUB,
	S_DEL_PUB,
	S_OPEN_STREAK,
	S_CLOSE_STREAK,
	S_STREAK_LATENCY,
	S_STREAK_MINMAX,
	S_ADD_REPEATS,
	S_ADD_CHANGE,
	S_PUT_META,
	S_CFG_CLEAR_DOM,
	S_CFG_CLEAR_EP,
	S_CFG_DOM,
	S_CFG_EP,
	S_CLOSE_GONE,
	S_DROP_EP,
	S_DROP_DOM,
	S_DROP_PUB,
	S_DROP_CERT,
	S_PRUNE_STREAKS,
	S_PRUNE_DRAINS,
	S_PRUNE_CHANGES,
	S_MARK_UNSURE,
	S_MAX
};

/* Statements from S_PUT_EP on write, and exist only in read-write opens. */
#define S_FIRST_RW	S_PUT_EP

/*
 * The endpoint rows with their open streaks, read in one SELECT when
 * first needed and kept in (domain, name) order for bsearch(), so that
 * a run writes only the rows that stop following from what is stored.
 */
struct st_row {
	/* In one allocation from name; domain may be the row before's,
	   url may be name (row_from()). */
	char		*domain, *name, *ip, *url;
	char		*reason;	/* in it too, unless own_reason */
	long		 priority, failures, passes;
	long long	 counted;	/* run of failures/passes */
	long long	 streak;	/* id of its last streak, 0: none */
	long long	 srun;		/* run of its first check */
	long		 status;
	long		 lat_min, lat_max;
	double		 lat_mean;
	long long	 lat_n;		/* checks in lat_mean */
	/* The ints together: one row per stored endpoint is kept. */
	int		 own_reason;
	int		 removed;
	int		 closed;	/* it ended at its last check: a run
					   since did not count this endpoint */
	int		 ok;
	int		 stale;		/* rewritten with another ip or url */
};

struct st_change;
struct st_counter;
struct st_delivery;
struct st_notify_counts;
struct st_requests;
struct st_domain;
struct st_ep_snap;
struct config;

/* A SQLite open: struct state first (state/backend.h). */
struct sqlite_state {
	struct state	 base;
	sqlite3		*db;
	sqlite3_stmt	*stmt[S_MAX];
	char		*path;
	int		 lockfd;	/* flock holder (read-write), else -1 */
	int		 rw;
	int		 in_tx;
	int		 in_read;	/* state_read_begin() opened a read transaction */

	/* meta, read at open: completed runs, the last one's time (ms). */
	long long	 runs;
	long long	 last_run;
	char		 digest[24];	/* of the configured endpoint set */
	char		 config[4096];	/* the configuration of the last run, or "" */
	int		 finished;	/* state_finish_run() in this transaction */
	long long	 fin_runs, fin_last;
	char		 fin_digest[24];

	struct st_row	*rows;		/* NULL: not loaded */
	size_t		 nrows;
	size_t		 rows_hint;	/* rows expected: the configured
					   endpoints; 0: not known */
	int		 inserted;	/* rows added since the load */

	/* What the last committed transaction wrote, from these counts. */
	long long	 changes0, pages0;
};

/*
 * st as the SQLite open it is (NULL stays NULL); aborts with a message
 * when st is another backend's, a bug.  state/sqlite.c.
 */
struct sqlite_state *sqlite_of(struct state *st);

/*
 * The open and what the table's entries call (state/sqlite_open.c,
 * state/sqlite_data.c, state/sqlite_drain.c, state/sqlite_history.c,
 * state/sqlite_counters.c, state/sqlite_notify.c).  The open does not
 * set base.be: state/sqlite.c does, which holds the table.  Errors as
 * the backend table's (state/backend.h).
 */
int	 st_sqlite_open(const char *path, int mode, struct sqlite_state **out,
	    char *err, size_t errlen);
void	 st_sqlite_close(struct sqlite_state *st);
int	 st_sqlite_mark_unsure(struct sqlite_state *st, const char *domain,
	    const char *provider, long ttl, char *err, size_t errlen);
int	 st_sqlite_request_drain(struct sqlite_state *st,
	    const struct st_target *t, size_t n, long long now,
	    long long until, char *err, size_t errlen);
int	 st_sqlite_request_undrain(struct sqlite_state *st,
	    const struct st_target *t, size_t n, long long now, char *err,
	    size_t errlen);
int	 st_sqlite_request_failback(struct sqlite_state *st,
	    const char *domain, long long now, char *err, size_t errlen);
int	 st_sqlite_recent_changes(struct sqlite_state *st, size_t max,
	    struct st_change **out, size_t *n);
int	 st_sqlite_timeline(struct sqlite_state *st, long long since,
	    struct st_timeline *out);
int	 st_sqlite_counters(struct sqlite_state *st, struct st_counter **out,
	    size_t *n);
int	 st_sqlite_notify_counts(struct sqlite_state *st, const char *notifier,
	    struct st_notify_counts *out);
int	 st_sqlite_get_deliveries(struct sqlite_state *st,
	    const char *notifier, struct st_delivery **out, size_t *n);
int	 st_sqlite_put_delivery(struct sqlite_state *st, const char *notifier,
	    const struct st_delivery *d, long long now, int ok, int given_up,
	    const char *error, char *err, size_t errlen);

/*
 * The rows, from which state/sqlite.c builds its load and save.  Errors
 * go to st->base.err (the unit tests read it with state_errmsg()).
 */

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
	/* put: recheck's failed checks before this one, earliest first */
	const struct st_endpoint *before;
	size_t		 nbefore;
	int		 uncounted;	/* put,
	    with last_check 0: this run's check
					   did not count (its controlUrl failed) */
};


/*
 * Reads.  A row whose ip or url differ from the ones given counts as not
 * found (the endpoint was redefined).  st may be NULL (empty state).
 */
int	 state_get_endpoint(struct sqlite_state *st, const char *domain,
	    const char *name, const char *ip, const char *url,
	    struct st_endpoint *out);
int	 state_get_domain(struct sqlite_state *st, const char *domain,
	    struct st_domain *out);
/*
 * Reads between these two share one read transaction instead of one
 * each: ten thousand endpoint lookups cost a third as much.  Nothing to
 * do for a read-only open (it holds one snapshot anyway) or st NULL.
 */
void	 state_read_begin(struct sqlite_state *st);
void	 state_read_end(struct sqlite_state *st);
/* ms of the last completed run, 0: none. */
long long state_last_run(struct sqlite_state *st);


/* Writes, between state_begin() and state_commit() / state_rollback(). */
int	 state_begin(struct sqlite_state *st, char *err, size_t errlen);
int	 state_commit(struct sqlite_state *st, char *err, size_t errlen);
void	 state_rollback(struct sqlite_state *st);

/*
 * Records an endpoint after this run's check (e->last_check is its time,
 * last_ok, last_status, last_result and latency_ms its result): the check
 * goes into the endpoint's open streak, or ends it and begins a new one
 * if the result, status or reason differ.  The endpoint row is written
 * only when it stops following from what is stored: a steady endpoint
 * costs no write, except when its latency leaves the streak's range, and
 * in one run in 16, when it goes into the streak's mean (a sample; min
 * and max are exact).  A run must put every configured endpoint, with a
 * check or as uncounted (a drained endpoint is still checked,
 * ddup-check(8), --drain): one left out would be read next run as having
 * had its streak's result once more.
 */
int	 state_put_endpoint(struct sqlite_state *st, const char *domain,
	    const char *name, const char *ip, const char *url, long priority,
	    const struct st_endpoint *e);
/* The domain row; d->pub and has_pub are ignored (see state_put_published). */
int	 state_put_domain(struct sqlite_state *st, const char *domain,
	    const char *provider, long ttl, const struct st_domain *d);
/*
 * The domain's row in failovers: since (ms), why (NULL: not known) and
 * fail_open (enum all_down); since 0 drops it.
 */
int	 state_put_failover(struct sqlite_state *st, const char *domain,
	    long long since, const char *reason, int fail_open);
/* set NULL drops the row of type (the type is no longer managed). */
int	 state_put_published(struct sqlite_state *st, const char *domain,
	    enum rrtype type, const struct rrset *set);

/*
 * One DNS change attempt to history; error NULL on success.  tier < 0:
 * none; rank < 0: the domain has no location; location NULL: none.
 */
int	 state_add_change(struct sqlite_state *st, long long when,
	    const char *domain, enum rrtype type, long ttl, const char *old_set,
	    const char *new_set,
	    long tier, long rank, const char *location, int ok,
	    const char *error);
/*
 * Ends a run: records its time and number, drops domains and endpoints
 * that are no longer configured (history stays; skipped when the set of
 * configured endpoints is the one of the last run), prunes streaks whose
 * last check is older than history_ms and changes older than a year.
 */
int	 state_finish_run(struct sqlite_state *st, long long now,
	    const struct config *c);



/* Reads them as of now (st NULL: none); -1 on a database error. */
int	 state_get_requests(struct sqlite_state *st, long long now,
	    struct st_requests *out);

/*
 * Writes of a run, between state_begin() and state_commit(): a failback
 * done; the controlUrl failing since `since` (0: it passed); and, after
 * state_finish_run(), dropping the drains whose time ran out and the
 * requests for what the state no longer holds (state_finish_run() drops
 * what is no longer configured).
 */
int	 state_clear_failback(struct sqlite_state *st, const char *domain);
int	 state_put_control(struct sqlite_state *st, long long since,
	    const char *result);
int	 state_prune_requests(struct sqlite_state *st, long long now);



/*
 * The notification outbox (ddup.ini(5), NOTIFICATIONS;
 * state/sqlite_notify.c).  A run stores its events, each with a delivery
 * for each of the n [notify] sections that want it, between state_begin()
 * and state_commit(), so they are in the file before anything is sent;
 * state_prune_events() there too marks the deliveries of sections no
 * longer configured as given up and drops what is done and older than
 * keep_ms.
 */
int	 state_add_event(struct sqlite_state *st, long long when,
	    const char *domain,
	    const char *event, const char *endpoint, const char *body,
	    const char *const *notifiers, size_t n);
int	 state_prune_events(struct sqlite_state *st, long long now,
	    long long keep_ms, const char *const *notifiers, size_t n);

/*
 * The certificates (state/sqlite_certs.c): each configured endpoint's
 * stored expiry into eps (per endpoint of c, in order, as st_snapshot's);
 * and one endpoint's, written when it changed (between state_begin() and
 * state_commit()).  state_finish_run() drops those of endpoints no
 * longer configured.
 */
int	 state_get_certs(struct sqlite_state *st, const struct config *c,
	    struct st_ep_snap *eps);
int	 state_put_cert(struct sqlite_state *st, const char *domain,
	    const char *endpoint, long long expires);

/* Adds add to one counter; between state_begin() and state_commit(). */
int	 state_count(struct sqlite_state *st, const char *domain,
	    const char *endpoint, const char *name, long long add);

/* state/sqlite_schema.c */
extern const char *const state_migrations[];
extern const int	 state_schema_version;
extern const char	 state_temp_schema[];

/* state/sqlite_tx.c: the error state_errmsg() returns, "FILE: ..." */
void	 st_set_err(struct sqlite_state *st, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* "FILE: what: sqlite's message". */
void	 st_db_err(struct sqlite_state *st, sqlite3 *db, const char *what);
/* Writes need a read-write open and an open transaction. */
int	 st_need_tx(struct sqlite_state *st, const char *what);
/* sql prepared into *s; -1 with "what: sqlite's message". */
int	 st_stmt(struct sqlite_state *st, const char *sql, sqlite3_stmt **s,
	    const char *what);
/*
 * Steps s, a statement that returns no rows, when its bindings went well
 * (bound SQLITE_OK); -1 with "what: sqlite's message" otherwise.
 */
int	 st_step_done(struct sqlite_state *st, sqlite3_stmt *s, int bound,
	    const char *what);
/* Column i of a row as text, malloc'd: "" for NULL. */
char	*st_col_text(sqlite3_stmt *s, int i);
/* Column i of a row, an ISO-8601 time, in ms since the epoch: 0 for NULL. */
long long st_col_ms(sqlite3_stmt *s, int i);
/* Forgets the loaded rows (after a rollback, and at close). */
void	 st_forget_rows(struct sqlite_state *st);
void	 st_row_free(struct st_row *r);

/* state/sqlite_data.c: prepares the statements the open's mode needs. */
int	 st_prepare(struct sqlite_state *st);
/* Reads runs, last_run and the digest from meta. */
int	 st_read_meta(struct sqlite_state *st);

#endif
