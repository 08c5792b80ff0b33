#ifndef DDUP_STATE_BACKEND_H
#define DDUP_STATE_BACKEND_H

/*
 * Private to state.c and the backends in state/ (and to the unit tests
 * and the benchmark that drive a backend directly): the table a backend
 * fills and the base every backend's open embeds.  The core uses
 * state.h.
 *
 * Each backend's open begins with the base, struct sqlite_state {
 * struct state base; ... } (state/sqlite.h), struct pg_state { struct
 * state base; ... } (state/pg.h), and turns a struct state back into its
 * own through one function that checks st->be is its own table
 * (sqlite_of(), pg_of()), in the file that defines that table: the
 * files below it take the backend's own type, so none of them uses the
 * table file.  state.c takes the tables, and no backend calls state.c.
 */

#include <stddef.h>

struct config;
struct outcome;
struct st_change;
struct st_counter;
struct st_delivery;
struct st_timeline;
struct st_notify_counts;
struct st_report_in;
struct st_round;
struct st_round_dom;
struct st_snapshot;
struct st_target;

/* What every open holds, whatever its backend. */
struct state {
	const struct state_backend *be;	/* the backend of this open */
	/*
	 * The last error, "STATE: what: cause": a backend's functions
	 * leave it here; state.c copies it into the caller's err.
	 */
	char		 err[768];
	/* Rows changed and pages written by the last commit; -1: not counted. */
	long long	 wrote_rows, wrote_pages;
};

/*
 * One kind of store behind state.h, one const entry each, designated
 * initialisers: state_sqlite (state/sqlite.c) for a path, state_pg
 * (state/pg.c) for a URI.  state_open_checker() takes the first of
 * state.c's table whose handles() accepts the `state` value; every later
 * call goes to the backend of the open.  load and save are the bulk read
 * and write of a run (state.h), the rest one transaction each.
 *
 * Errors: open and the calls with err write the error there; the others
 * return -1 with it in st->err, which state.c hands on (state.h's
 * convention is the first).  The reads of outputs (recent_changes,
 * timeline, counters, notify_counts, get_deliveries, put_delivery) take st NULL,
 * an empty state, and go to state_sqlite then.
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
	/* n endpoints in one transaction: all recorded or none. */
	int		(*request_drain)(struct state *st,
			    const struct st_target *t, size_t n, long long now,
			    long long until, char *err, size_t errlen);
	int		(*request_undrain)(struct state *st,
			    const struct st_target *t, size_t n, long long now,
			    char *err, size_t errlen);
	int		(*request_failback)(struct state *st,
			    const char *domain, long long now, char *err,
			    size_t errlen);
	/* What the run's outputs read, and the outbox's deliveries. */
	int		(*recent_changes)(struct state *st, size_t max,
			    struct st_change **out, size_t *n);
	int		(*counters)(struct state *st, struct st_counter **out,
			    size_t *n);
	int		(*timeline)(struct state *st, long long since,
			    struct st_timeline *out);
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
	 * A store that several checkers share (ddup-check(8), SEVERAL
	 * CHECKERS) decides in rounds: round_begin reports the run's
	 * results and takes the rounds of its slot, with the snapshot read
	 * under their locks; round_commit records them.  NULL for a store
	 * of one checker, whose every run is a round of its own (state.c
	 * then loads).
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

/*
 * state/common.c, what both backends use (and state.c: the frees of
 * state.h's types are there too).
 */
/* failovers.all_down as enum all_down (config.h), and back (NULL: keep). */
int	 st_fail_open_parse(const char *v);
const char *st_fail_open_str(int fail_open);
/* A stored domain error as struct st_domain keeps it: NULL for none. */
char	*st_error_dup(const char *v);
/* st->err, "no state file" for st NULL. */
const char *state_errmsg(const struct state *st);

#endif
