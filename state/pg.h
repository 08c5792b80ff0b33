#ifndef DDUP_STATE_PG_H
#define DDUP_STATE_PG_H

/*
 * Private to the PostgreSQL backend, state/pg*.c: state/pg.c (its
 * table, state_pg; connecting, the schema, the checker's lock, reports
 * and rounds of ddup-check(8), SEVERAL CHECKERS), state/pg_q.c
 * (batches), state/pg_data.c (reading the rows: counters, streaks,
 * published sets, requests), state/pg_save.c (writing them, with
 * history, the outbox and the metrics counters; the endpoints in
 * state/pg_save_ep.c), state/pg_ops.c (the
 * operations of one transaction each) and state/pg_schema.c.  Everyone
 * else uses state.h.
 *
 * A run costs a few round trips, not a few per endpoint: statements go
 * out together in a batch (libpq's pipeline mode) and their results come
 * back together.  The data functions therefore mostly append to a batch
 * that state/pg.c runs inside the transaction it owns (the round's, the
 * outcome's), rather than talking to the server themselves.
 */

#include <stddef.h>

#include <libpq-fe.h>

#include "config.h"
#include "state/backend.h"

struct outcome;
struct pg_order;
struct st_snapshot;

/* A PostgreSQL open: struct state first (state/backend.h). */
/* An endpoint's stored vote, read under the round's lock (has 0: none). */
struct pg_vote {
	long		 npass, nfail;
	int		 verdict;
	int		 has;
};

/*
 * An endpoint's row as the round's snapshot read it (state/pg_data.c),
 * for the save to tell a check that goes on as the last one did, which
 * sends nothing, from one that changes the row (state/pg_save_ep.c).
 * It stays true until the save: only the run holding a domain's round
 * writes the domain's endpoints, and the save writes only those whose
 * round is still its own.
 */
struct pg_ep_row {
	long long	 streak;	/* the open streak's id */
	int		 priority;
	int		 status;	/* the last check's, 0: none */
	int		 lat_min, lat_max;	/* the open streak's range */
	unsigned int	 reason;	/* the last result, at reasons + reason */
	/* A stored row whose open streak says what the row says. */
	unsigned char	 open;
	/* The save after the snapshot takes a latency sample of it. */
	unsigned char	 sample;
};

struct pg_state {
	struct state	 base;
	PGconn		*conn;
	char		*where;		/* the URI, for errors (shown redacted) */
	char		*checker;	/* this host's name in the fleet; NULL: read only */
	int		 rw;
	long long	 round_trips;	/* waits for the server, for the benchmark */
	long long	 sent_eps;	/* endpoints whose rows the saves sent */
	long long	 runs, last_run;	/* meta, as last read */
	/* config_names_digest() of the last prune ("": none, or unknown). */
	char		 pruned[CONFIG_DIGEST_LEN];

	/* The round this run took (state/pg.c), per domain of the config. */
	const struct config *cfg;	/* of the round */
	long long	 slot;		/* of the database's clock, -1: none yet */
	size_t		 ndomains;
	unsigned char	*decided;	/* this run took the domain's round */
	unsigned char	*marked;	/* recorded unsure in the round's commit */
	struct pg_vote	*votes;		/* per endpoint of cfg, as the round read them */

	/* Per endpoint of rows_cfg, as the last snapshot read them. */
	const struct config *rows_cfg;
	struct pg_ep_row *rows;
	char		*reasons;	/* the rows' last results, each NUL-ended */
	size_t		 reasons_len, reasons_cap;
	size_t		 ep_reads;	/* statements of the last snapshot's read */
	struct pg_order	*order;		/* of pg_queue_rows(), state/pg_read.c */
};

/*
 * st as the PostgreSQL open it is; aborts with a message when st is
 * another backend's, a bug.  state/pg.c, which holds the table: the
 * files below it take struct pg_state.
 */
struct pg_state	*pg_of(struct state *st);

/*
 * A batch: statements sent in one go, each with text parameters (NULL:
 * SQL NULL, copied when added and freed once sent), results kept in
 * order until freed.
 */
struct pgq;

struct pgq	*pgq_new(struct pg_state *st);
void		 pgq_free(struct pgq *q);
/* what names the statement in an error ("cannot save the endpoints"). */
void		 pgq_add(struct pgq *q, const char *what, const char *sql,
		    int nparams, const char *const *params);
size_t		 pgq_count(const struct pgq *q);
/*
 * Sends every statement added since the last run and waits for all the
 * answers: one round trip.  0, or -1 with st->base.err set to "state
 * URI: what: the server's message" (the first statement that failed;
 * those after it in the batch are not run).  A transaction the batch
 * left open and failed is rolled back.
 */
int		 pgq_run(struct pgq *q);
/* The answer to statement i (0: the first added), NULL if not run. */
PGresult	*pgq_result(const struct pgq *q, size_t i);
/* Statement i ran (its answer may have gone to a sink). */
int		 pgq_ok(const struct pgq *q, size_t i);
/*
 * The answer to the statement added last goes to fn(answer, arg) as it
 * arrives, and is freed at once (pgq_result() of it is NULL): a batch
 * holds one large answer at a time, not all of them until its end.
 * arg, from malloc(), is freed with the batch.
 */
typedef void	 pgq_sink_fn(const PGresult *r, void *arg);
void		 pgq_sink(struct pgq *q, pgq_sink_fn *fn, void *arg);
/* The row of (k0, k1) in r sorted by them in byte order, -1 if none. */
int		 pg_row_find(const PGresult *r, const char *k0,
		    const char *k1);

/* Numbers and booleans as parameters: into buf, which is returned. */
const char	*pg_lld(char buf[32], long long v);
const char	*pg_bool(int v);
/* Cell (row, col) of r as a number / boolean / string ("" for NULL). */
long long	 pg_getlld(const PGresult *r, int row, int col);
int		 pg_getbool(const PGresult *r, int row, int col);
const char	*pg_getstr(const PGresult *r, int row, int col);

/*
 * A text array parameter ("{...}"), for statements that take a column
 * of values through unnest() or = ANY(): one statement whatever N is.
 * Zeroed to begin; pga_add(a, NULL) adds an SQL NULL.
 */
struct pg_arr {
	char		*s;
	size_t		 len, cap, n;
};

void		 pga_add(struct pg_arr *a, const char *v);
void		 pga_lld(struct pg_arr *a, long long v);
/* The array as text, valid until the next add or pga_free(). */
const char	*pga_text(struct pg_arr *a);
void		 pga_free(struct pg_arr *a);

/*
 * Reads of every endpoint's row come in parts of this many rows: libpq
 * holds an answer whole until it is parsed, 5 MB for the snapshot's
 * endpoints at N = 10,000 in one.
 */
#define PG_READ_CHUNK	2048

/*
 * state/pg_read.c: sql, a query whose rows come in byte order of their
 * first two columns (domain, endpoint), run once through a cursor of
 * that name and fetched PG_READ_CHUNK rows at a time, inside the
 * caller's transaction; for each row that is c's endpoint e, k-th in
 * config order (as st_snapshot's eps), fn(r, row, k, e, ctx) as its
 * part arrives, each part freed before the next is read.  ctx (ctxlen
 * bytes) is copied.  Returns the number of statements added.
 */
typedef void	 pg_row_fn(const PGresult *r, int row, size_t k,
		    const struct endpoint_cfg *e, void *ctx);
size_t		 pg_queue_rows(struct pg_state *st, struct pgq *q,
		    const struct config *c, const char *what,
		    const char *cursor, const char *sql, int nparams,
		    const char *const *params, pg_row_fn *fn, const void *ctx,
		    size_t ctxlen);
void		 pg_order_free(struct pg_order *o);

/*
 * "state URI: what[: message]" into st->base.err, the URI without its
 * password.
 */
void		 pg_set_err(struct pg_state *st, const char *what,
		    const char *msg);
/*
 * The same into err, for where there is no struct state yet (the open):
 * the message's first line only, without what pguri_redact_msg() hides,
 * made printable.
 */
void		 pg_format_err(char *err, size_t errlen, const char *where,
		    const char *what, const char *msg);

/*
 * state/pg_data.c: the rows of the state, as the SQLite backend keeps
 * them (state.h says what each holds), in the tables of migration 2
 * (state/pg_schema.c).
 *
 * pgd_load_queue() appends the reads of a snapshot of c to q and
 * returns the index of its first statement; pgq_run() fills out's
 * endpoints (and st's rows) as their rows arrive, and pgd_load_parse()
 * the rest from the other results (as state_load() would), -1 with
 * st->base.err on a malformed answer.
 */
size_t		 pgd_load_queue(struct pg_state *st, struct pgq *q,
		    const struct config *c, int results, long long now,
		    struct st_snapshot *out);
int		 pgd_load_parse(struct pg_state *st, const struct pgq *q,
		    size_t first, const struct config *c,
		    struct st_snapshot *out);
/*
 * Appends the writes of what the run learnt of the domains it decided
 * (decided[i] for c->domains[i]; the others belong to another run of
 * the fleet and are not touched): endpoints and their streaks, domain
 * rows, published sets, DNS change history, metrics counters, the
 * events of those domains with their deliveries (outbox.c's rule), the
 * controlUrl of this checker, the run's time, and the pruning of what
 * is no longer configured or too old.  The caller wraps them in its
 * transaction.
 */
void		 pgd_save_queue(struct pg_state *st, struct pgq *q,
		    const struct config *c, const struct outcome *o,
		    const unsigned char *decided);
/*
 * state/pg_save_ep.c: the part of pgd_save_queue() that writes the
 * decided domains' endpoints and their streaks, before the saves of
 * those domains are counted (state/pg_save.c, last in the batch).
 */
void		 pgd_save_endpoints(struct pg_state *st, struct pgq *q,
		    const struct config *c, const struct outcome *o,
		    const unsigned char *decided);
/*
 * SQL: the SET list that writes down the open streak s as it ended at
 * its domain's last save, sv saves at sd (a ddup_tick row's columns):
 * its checks and last as the view ddup_streak shows them (schema 8).
 */
#define PG_FREEZE(s, sv, sd) \
	"checks = " s ".checks + coalesce(" sv " - " s ".upto, 0)," \
	" last = CASE WHEN " sv " > " s ".upto THEN " sd " ELSE " s ".last" \
	" END, upto = NULL"
/*
 * SQL: the head of a statement that writes under a name of its own
 * file, not a round's: the next save prunes in full (state/pg_save.c).
 */
#define PG_UNPRUNED \
	"WITH unpruned AS (DELETE FROM ddup_meta WHERE key = 'pruned') "
/*
 * SQL: the transaction's commit returns before its WAL reaches the
 * disk (and any synchronous standby): for what a crash may lose.
 */
#define PG_NO_FLUSH_WAIT "SET LOCAL synchronous_commit = off"
/* Appends "the domain is unsure: an update is about to go out". */
void		 pgd_mark_unsure_queue(struct pgq *q, const char *domain,
		    const char *provider, long ttl);

/* The table's operations of one transaction each (state/backend.h). */
int		 pgd_request_drain(struct pg_state *st,
		    const struct st_target *t, size_t n, long long now,
		    long long until, char *err, size_t errlen);
int		 pgd_request_undrain(struct pg_state *st,
		    const struct st_target *t, size_t n, long long now,
		    char *err, size_t errlen);
int		 pgd_request_failback(struct pg_state *st, const char *domain,
		    long long now, char *err, size_t errlen);

struct st_change;
struct st_counter;
struct st_delivery;
struct st_notify_counts;
struct st_timeline;

int		 pgd_recent_changes(struct pg_state *st, size_t max,
		    struct st_change **out, size_t *n);
int		 pgd_timeline(struct pg_state *st, long long since,
		    struct st_timeline *out);
int		 pgd_counters(struct pg_state *st, struct st_counter **out,
		    size_t *n);
int		 pgd_notify_counts(struct pg_state *st, const char *notifier,
		    struct st_notify_counts *out);
int		 pgd_get_deliveries(struct pg_state *st, const char *notifier,
		    struct st_delivery **out, size_t *n);
int		 pgd_put_delivery(struct pg_state *st, const char *notifier,
		    const struct st_delivery *d, long long now, int ok,
		    int given_up, const char *error, char *err, size_t errlen);

/* state/pg_schema.c: pg_migrations[i] makes version i + 1. */
extern const char *const pg_migrations[];
extern const int	 pg_schema_version;

#endif
