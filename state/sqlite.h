#ifndef DDUP_STATE_INT_H
#define DDUP_STATE_INT_H

/*
 * Private to the state module: included by state.c (opening, locking,
 * migrations, transactions, closing), state/sqlite_data.c (the rows) and
 * state/sqlite_schema.c (the schema), and by nothing else.  Everyone else uses
 * state.h.
 */

#include <stddef.h>

#include <sqlite3.h>

/* The prepared statements of an open; their SQL is in state/sqlite_data.c. */
enum {
	S_LOAD_EP,
	S_GET_EP,
	S_GET_DOM,
	S_GET_PUB,
	S_GET_META,
	S_PUT_EP,
	S_PUT_DOM,
	S_PUT_PUB,
	S_DEL_PUB,
	S_OPEN_STREAK,
	S_CLOSE_STREAK,
	S_STREAK_LATENCY,
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
	S_PRUNE_STREAKS,
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

struct config;
struct outcome;
struct state;
struct st_change;
struct st_counter;
struct st_delivery;
struct st_notify_counts;
struct st_report_in;
struct st_round;
struct st_round_dom;
struct st_snapshot;
struct pg_state;

/*
 * One kind of store behind state.h, one const entry each, designated
 * initialisers: state_sqlite (state/sqlite.c) for a path.  state_open()
 * takes the first of state.c's table whose handles() accepts the `state`
 * value; every later call goes to the backend of the open.  load and
 * save are the bulk read and write of a run (state.h), the rest one
 * transaction each.
 */
struct state_backend {
	const char	*name;
	int		(*handles)(const char *where);
	int		(*open)(const char *where, const char *checker, int mode,
			    struct state **out, char *err, size_t errlen);
	void		(*close)(struct state *st);
	int		(*load)(struct state *st, const struct config *c,
			    int results, long long now, struct st_snapshot *out);
	int		(*save)(struct state *st, const struct config *c,
			    const struct outcome *o, char *err, size_t errlen);
	int		(*mark_unsure)(struct state *st, const char *domain,
			    const char *provider, long ttl, char *err,
			    size_t errlen);
	int		(*request_drain)(struct state *st, const char *domain,
			    const char *endpoint, long long now,
			    long long until, char *err, size_t errlen);
	int		(*request_undrain)(struct state *st,
			    const char *domain, const char *endpoint,
			    char *err, size_t errlen);
	int		(*request_failback)(struct state *st,
			    const char *domain, long long now, char *err,
			    size_t errlen);
	/* What the run's outputs read, and the outbox's deliveries. */
	int		(*recent_changes)(struct state *st, size_t max,
			    struct st_change **out, size_t *n);
	int		(*counters)(struct state *st, struct st_counter **out,
			    size_t *n);
	int		(*notify_counts)(struct state *st,
			    const char *notifier, struct st_notify_counts *out);
	int		(*get_deliveries)(struct state *st,
			    const char *notifier, struct st_delivery **out,
			    size_t *n);
	int		(*put_delivery)(struct state *st, const char *notifier,
			    const struct st_delivery *d, long long now, int ok,
			    int given_up, const char *error, char *err,
			    size_t errlen);
	/*
	 * A store that several checkers share (SPEC 11) decides in rounds:
	 * round_begin reports the run's results and takes the rounds of
	 * its slot, with the snapshot read under their locks;
	 * round_commit records them.  NULL for a store of one checker,
	 * whose every run is a round of its own (state.c then loads).
	 */
	int		(*round_begin)(struct state *st, const struct config *c,
			    const struct st_report_in *in,
			    struct st_snapshot *out, struct st_round *rd);
	int		(*round_commit)(struct state *st,
			    const struct config *c, const struct st_round *rd,
			    const struct st_round_dom *doms, char *err,
			    size_t errlen);
};

extern const struct state_backend state_sqlite;
extern const struct state_backend state_pg;

struct state {
	const struct state_backend *be;	/* the backend of this open */
	struct pg_state	*pg;		/* PostgreSQL's own (state/pg.h) */
	sqlite3		*db;
	sqlite3_stmt	*stmt[S_MAX];
	char		*path;
	int		 lockfd;	/* flock holder (read-write), else -1 */
	int		 rw;
	int		 in_tx;
	int		 in_read;	/* state_read_begin() opened a read transaction */
	char		 err[768];	/* last error, for state_errmsg() */

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

	/* What the last committed transaction wrote. */
	long long	 changes0, pages0, wrote_rows, wrote_pages;
};

/*
 * The SQLite backend's entry points (state.c, state/sqlite_data.c,
 * state/sqlite_drain.c), through state_sqlite.
 */
int	 st_sqlite_open(const char *path, const char *checker, int mode,
	    struct state **out, char *err, size_t errlen);
void	 st_sqlite_close(struct state *st);
int	 st_sqlite_mark_unsure(struct state *st, const char *domain,
	    const char *provider, long ttl, char *err, size_t errlen);
int	 st_sqlite_request_drain(struct state *st, const char *domain,
	    const char *endpoint, long long now, long long until, char *err,
	    size_t errlen);
int	 st_sqlite_request_undrain(struct state *st, const char *domain,
	    const char *endpoint, char *err, size_t errlen);
int	 st_sqlite_request_failback(struct state *st, const char *domain,
	    long long now, char *err, size_t errlen);
int	 st_sqlite_recent_changes(struct state *st, size_t max,
	    struct st_change **out, size_t *n);
int	 st_sqlite_counters(struct state *st, struct st_counter **out,
	    size_t *n);
int	 st_sqlite_notify_counts(struct state *st, const char *notifier,
	    struct st_notify_counts *out);
int	 st_sqlite_get_deliveries(struct state *st, const char *notifier,
	    struct st_delivery **out, size_t *n);
int	 st_sqlite_put_delivery(struct state *st, const char *notifier,
	    const struct st_delivery *d, long long now, int ok, int given_up,
	    const char *error, char *err, size_t errlen);

/* state/sqlite_schema.c */
extern const char *const state_migrations[];
extern const int	 state_schema_version;
extern const char	 state_temp_schema[];

/* state.c: the error state_errmsg() returns, "FILE: ..." */
void	 st_set_err(struct state *st, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* "FILE: what: sqlite's message". */
void	 st_db_err(struct state *st, sqlite3 *db, const char *what);
/* Writes need a read-write open and an open transaction. */
int	 st_need_tx(struct state *st, const char *what);

/* state/sqlite_data.c: prepares the statements the open's mode needs. */
int	 st_prepare(struct state *st);
/* Reads runs, last_run and the digest from meta. */
int	 st_read_meta(struct state *st);
/* A stored domain error as struct st_domain keeps it: NULL for none. */
char	*st_error_dup(const char *v);
/* Forgets the loaded rows (after a rollback, and at close). */
void	 st_forget_rows(struct state *st);

#endif
