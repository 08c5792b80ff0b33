/*
 * The notification outbox in the state file (ddup.ini(5), NOTIFICATIONS):
 * events, and one delivery per event and [notify] section, with its
 * attempts.  A run adds its events in its own transaction; each delivery
 * attempt is then recorded in a transaction of its own, as soon as its
 * outcome is known, so a run killed at any moment loses nothing and
 * repeats at most the one delivery it was making.  Few rows per run: each
 * call prepares its statement.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "state.h"
#include "state/sqlite.h"
#include "util.h"

/* ms since the epoch as the state file's time text. */
#define SQL_TIME(n)	"strftime('%Y-%m-%dT%H:%M:%fZ', " n " / 1000.0, " \
			"'unixepoch')"

int
state_add_event(struct sqlite_state *st, long long when, const char *domain,
    const char *event, const char *endpoint, const char *body,
    const char *const *notifiers, size_t n)
{
	sqlite3_stmt *s = NULL;
	long long id;
	size_t i;
	int b = 0, rc = -1;

	if (st_need_tx(st, "cannot store an event") == -1 || n == 0)
		return n == 0 ? 0 : -1;
	if (st_stmt(st, "INSERT INTO events (time, domain, event, endpoint,"
	    " body) VALUES (" SQL_TIME("?1") ", ?2, ?3, ?4, ?5)", &s,
	    "cannot store an event") == -1)
		goto out;
	b |= sqlite3_bind_int64(s, 1, when);
	b |= sqlite3_bind_text(s, 2, domain, -1, SQLITE_STATIC);
	b |= sqlite3_bind_text(s, 3, event, -1, SQLITE_STATIC);
	if (endpoint != NULL)
		b |= sqlite3_bind_text(s, 4, endpoint, -1, SQLITE_STATIC);
	b |= sqlite3_bind_text(s, 5, body, -1, SQLITE_STATIC);
	if (st_step_done(st, s, b, "cannot store an event") == -1)
		goto out;
	id = sqlite3_last_insert_rowid(st->db);
	sqlite3_finalize(s);
	s = NULL;
	if (st_stmt(st, "INSERT INTO deliveries (event, notifier) VALUES"
	    " (?1, ?2)", &s, "cannot store a delivery") == -1)
		goto out;
	for (i = 0; i < n; i++) {
		sqlite3_reset(s);
		b = sqlite3_bind_int64(s, 1, id);
		b |= sqlite3_bind_text(s, 2, notifiers[i], -1, SQLITE_STATIC);
		if (st_step_done(st, s, b, "cannot store a delivery") == -1)
			goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(s);
	return rc;
}

int
state_prune_events(struct sqlite_state *st, long long now, long long keep_ms,
    const char *const *notifiers, size_t n)
{
	sqlite3_stmt *s = NULL, *u = NULL;
	const char *name;
	size_t i;
	int rc = -1, step, b;

	if (st_need_tx(st, "cannot prune events") == -1)
		return -1;
	/* A section gone from the configuration has nowhere to deliver. */
	if (st_stmt(st, "SELECT DISTINCT notifier FROM deliveries WHERE"
	    " delivered IS NULL AND given_up IS NULL", &s,
	    "cannot prune events") == -1 ||
	    st_stmt(st, "UPDATE deliveries SET given_up = " SQL_TIME("?2") ","
	    " last_error = 'no [notify] section of this name any more'"
	    " WHERE notifier = ?1 AND delivered IS NULL AND given_up IS NULL",
	    &u, "cannot prune events") == -1)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		name = (const char *)sqlite3_column_text(s, 0);
		for (i = 0; i < n; i++)
			if (name != NULL && strcmp(name, notifiers[i]) == 0)
				break;
		if (i < n)
			continue;
		sqlite3_reset(u);
		b = sqlite3_bind_text(u, 1, name, -1, SQLITE_TRANSIENT);
		b |= sqlite3_bind_int64(u, 2, now);
		if (st_step_done(st, u, b, "cannot prune events") == -1)
			goto out;
	}
	if (step != SQLITE_DONE) {
		st_db_err(st, st->db, "cannot prune events");
		goto out;
	}
	sqlite3_finalize(s);
	s = NULL;
	/* Done with, and older than history: gone, as streaks are. */
	if (st_stmt(st, "DELETE FROM deliveries WHERE (delivered IS NOT NULL"
	    " OR given_up IS NOT NULL) AND event IN (SELECT id FROM events"
	    " WHERE time < " SQL_TIME("?1") ")", &s,
	    "cannot prune events") == -1)
		goto out;
	if (st_step_done(st, s, sqlite3_bind_int64(s, 1, now - keep_ms),
	    "cannot prune events") == -1)
		goto out;
	sqlite3_finalize(s);
	s = NULL;
	if (st_stmt(st, "DELETE FROM events WHERE NOT EXISTS (SELECT 1 FROM"
	    " deliveries WHERE event = events.id)", &s,
	    "cannot prune events") == -1 ||
	    st_step_done(st, s, SQLITE_OK, "cannot prune events") == -1)
		goto out;
	rc = 0;
out:
	sqlite3_finalize(s);
	sqlite3_finalize(u);
	return rc;
}

int
st_sqlite_get_deliveries(struct sqlite_state *st, const char *notifier,
    struct st_delivery **out, size_t *nout)
{
	sqlite3_stmt *s = NULL;
	struct st_delivery *v = NULL, *d;
	size_t n = 0, cap = 0;
	int rc = -1, step;

	*out = NULL;
	*nout = 0;
	if (st == NULL)
		return 0;
	if (st_stmt(st, "SELECT d.event, e.body, d.attempts, d.next_attempt"
	    " FROM deliveries d JOIN events e ON e.id = d.event"
	    " WHERE d.notifier = ?1 AND d.delivered IS NULL AND"
	    " d.given_up IS NULL ORDER BY d.event", &s,
	    "cannot read deliveries") == -1)
		goto out;
	if (sqlite3_bind_text(s, 1, notifier, -1, SQLITE_STATIC) !=
	    SQLITE_OK) {
		st_db_err(st, st->db, "cannot read deliveries");
		goto out;
	}
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap == 0 ? 8 : cap * 2;
			v = xrealloc(v, cap * sizeof(*v));
		}
		d = &v[n++];
		d->event = sqlite3_column_int64(s, 0);
		d->body = st_col_text(s, 1);
		d->attempts = (long)sqlite3_column_int64(s, 2);
		d->next_attempt = st_col_ms(s, 3);
	}
	if (step != SQLITE_DONE) {
		st_db_err(st, st->db, "cannot read deliveries");
		goto out;
	}
	*out = v;
	*nout = n;
	v = NULL;
	n = 0;
	rc = 0;
out:
	state_deliveries_free(v, n);
	sqlite3_finalize(s);
	return rc;
}

int
st_sqlite_put_delivery(struct sqlite_state *st, const char *notifier,
    const struct st_delivery *d, long long now, int ok, int given_up,
    const char *error, char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	int b = 0;

	if (state_begin(st, err, errlen) == -1)
		return -1;
	if (st_stmt(st, "UPDATE deliveries SET attempts = ?3,"
	    " next_attempt = CASE WHEN ?4 IS NULL THEN NULL ELSE "
	    SQL_TIME("?4") " END,"
	    " delivered = CASE WHEN ?5 THEN " SQL_TIME("?6") " END,"
	    " given_up = CASE WHEN ?7 THEN " SQL_TIME("?6") " END,"
	    " last_error = coalesce(?8, last_error)"
	    " WHERE notifier = ?1 AND event = ?2", &s,
	    "cannot record a delivery") == -1)
		goto fail;
	b |= sqlite3_bind_text(s, 1, notifier, -1, SQLITE_STATIC);
	b |= sqlite3_bind_int64(s, 2, d->event);
	b |= sqlite3_bind_int64(s, 3, d->attempts);
	if (d->next_attempt != 0)
		b |= sqlite3_bind_int64(s, 4, d->next_attempt);
	b |= sqlite3_bind_int(s, 5, ok != 0);
	b |= sqlite3_bind_int64(s, 6, now);
	b |= sqlite3_bind_int(s, 7, given_up != 0);
	if (error != NULL)
		b |= sqlite3_bind_text(s, 8, error, -1, SQLITE_STATIC);
	if (st_step_done(st, s, b, "cannot record a delivery") == -1)
		goto fail;
	sqlite3_finalize(s);
	return state_commit(st, err, errlen);
fail:
	snprintf(err, errlen, "%s", st->base.err);
	sqlite3_finalize(s);
	state_rollback(st);
	return -1;
}

int
st_sqlite_notify_counts(struct sqlite_state *st, const char *notifier,
    struct st_notify_counts *out)
{
	sqlite3_stmt *s = NULL;
	const char *e;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return 0;
	if (st_stmt(st, "SELECT count(*) FILTER (WHERE given_up IS NULL),"
	    " count(*) FILTER (WHERE given_up IS NOT NULL),"
	    " min(e.time) FILTER (WHERE given_up IS NULL),"
	    " (SELECT last_error FROM deliveries WHERE notifier = ?1 AND"
	    "  delivered IS NULL AND last_error IS NOT NULL"
	    "  ORDER BY coalesce(given_up, next_attempt) DESC, event DESC"
	    "  LIMIT 1)"
	    " FROM deliveries d JOIN events e ON e.id = d.event"
	    " WHERE d.notifier = ?1 AND d.delivered IS NULL", &s,
	    "cannot count deliveries") == -1)
		goto out;
	if (sqlite3_bind_text(s, 1, notifier, -1, SQLITE_STATIC) !=
	    SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
		st_db_err(st, st->db, "cannot count deliveries");
		goto out;
	}
	out->pending = (long)sqlite3_column_int64(s, 0);
	out->given_up = (long)sqlite3_column_int64(s, 1);
	out->oldest_pending = st_col_ms(s, 2);
	if ((e = (const char *)sqlite3_column_text(s, 3)) != NULL)
		text_printable_copy(out->last_error, sizeof(out->last_error),
		    e);
	rc = 0;
out:
	sqlite3_finalize(s);
	return rc;
}
