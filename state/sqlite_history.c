/*
 * Reads of the state file's history for reports: the last DNS change
 * attempts, newest first, and the last day's streaks, drains and
 * changes (the dashboard shows both).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "state.h"
#include "state/sqlite.h"
#include "util.h"

/* A column's text, copied; "" for NULL. */
int
st_sqlite_recent_changes(struct sqlite_state *st, size_t max,
    struct st_change **out,
    size_t *n)
{
	sqlite3_stmt	*s = NULL;
	struct st_change *v = NULL, *c;
	size_t		 len = 0;
	int		 step, rc = -1;

	*out = NULL;
	*n = 0;
	if (st == NULL || max == 0)
		return 0;
	/* Once a run: not worth a prepared statement of every open. */
	if (sqlite3_prepare_v2(st->db, "SELECT time, domain, type, ttl, old,"
	    " new, tier, ok, error FROM changes ORDER BY time DESC, id DESC"
	    " LIMIT ?1", -1, &s, NULL) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 1, (sqlite3_int64)max) != SQLITE_OK) {
		st_db_err(st, st->db, "reading DNS changes");
		goto out;
	}
	v = xcalloc(max, sizeof(*v));
	while ((step = sqlite3_step(s)) == SQLITE_ROW && len < max) {
		c = &v[len++];
		c->when = st_col_ms(s, 0);
		c->domain = st_col_text(s, 1);
		c->type = st_col_text(s, 2);
		c->ttl = (long)sqlite3_column_int64(s, 3);
		c->old_set = st_col_text(s, 4);
		c->new_set = st_col_text(s, 5);
		c->tier = sqlite3_column_type(s, 6) != SQLITE_NULL ?
		    (long)sqlite3_column_int64(s, 6) : -1;
		c->ok = sqlite3_column_int(s, 7);
		c->error = sqlite3_column_type(s, 8) != SQLITE_NULL ?
		    st_col_text(s, 8) : NULL;
	}
	if (step != SQLITE_ROW && step != SQLITE_DONE) {
		st_db_err(st, st->db, "reading DNS changes");
		goto out;
	}
	*out = v;
	*n = len;
	v = NULL;
	len = 0;
	rc = 0;
out:
	state_changes_free(v, len);
	sqlite3_finalize(s);
	return rc;
}

/*
 * One statement over the views and tables of history: the streaks of
 * view history (the open ones up to the last run), the drains in force
 * and those of drain_log, the changes.  The times are text of one
 * format, so since is made that text and compared as such.
 */
static const char sql_timeline[] =
    "WITH w(t0) AS (SELECT strftime('%Y-%m-%dT%H:%M:%fZ',"
    " ?1 / 1000.0, 'unixepoch'))"
    " SELECT 0, domain, endpoint, first, last, ok, open, NULL, NULL"
    " FROM history, w WHERE last >= w.t0"
    " UNION ALL SELECT 1, domain, endpoint, since, until, 0, 1, NULL, NULL"
    " FROM drains, w WHERE until IS NULL OR until >= w.t0"
    " UNION ALL SELECT 1, domain, endpoint, since, until, 0, 0, NULL, NULL"
    " FROM drain_log, w WHERE until >= w.t0"
    " UNION ALL SELECT 2, domain, type, time, NULL, ok, 0, old, new"
    " FROM changes, w WHERE time >= w.t0"
    " ORDER BY 1, 2, 3, 4";

/* Appends the row of s to t; its kind in column 0. */
static void
timeline_row(sqlite3_stmt *s, struct st_timeline *t, size_t *segcap,
    size_t *markcap)
{
	struct st_tl_seg	*g;
	struct st_tl_mark	*m;

	if (sqlite3_column_int(s, 0) == 2) {
		if (t->nmarks == *markcap) {
			*markcap = *markcap * 2 + 16;
			t->marks = xrealloc(t->marks, *markcap *
			    sizeof(*t->marks));
		}
		m = &t->marks[t->nmarks++];
		m->domain = st_col_text(s, 1);
		m->type = st_col_text(s, 2);
		m->when = st_col_ms(s, 3);
		m->ok = sqlite3_column_int(s, 5);
		m->old_set = st_col_text(s, 7);
		m->new_set = st_col_text(s, 8);
		return;
	}
	if (t->nsegs == *segcap) {
		*segcap = *segcap * 2 + 16;
		t->segs = xrealloc(t->segs, *segcap * sizeof(*t->segs));
	}
	g = &t->segs[t->nsegs++];
	g->domain = st_col_text(s, 1);
	g->endpoint = st_col_text(s, 2);
	if (sqlite3_column_int(s, 0) == 1)
		g->kind = ST_TL_DRAIN;
	else
		g->kind = sqlite3_column_int(s, 5) ? ST_TL_PASS : ST_TL_FAIL;
	g->from = st_col_ms(s, 3);
	g->to = st_col_ms(s, 4);
	g->open = sqlite3_column_int(s, 6);
}

int
st_sqlite_timeline(struct sqlite_state *st, long long since,
    struct st_timeline *out)
{
	sqlite3_stmt	*s = NULL;
	size_t		 segcap = 0, markcap = 0;
	int		 step, rc = -1;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return 0;
	if (sqlite3_prepare_v2(st->db, sql_timeline, -1, &s, NULL) !=
	    SQLITE_OK || sqlite3_bind_int64(s, 1, (sqlite3_int64)since) !=
	    SQLITE_OK) {
		st_db_err(st, st->db, "reading the last day's history");
		goto out;
	}
	while ((step = sqlite3_step(s)) == SQLITE_ROW)
		timeline_row(s, out, &segcap, &markcap);
	if (step != SQLITE_DONE) {
		st_db_err(st, st->db, "reading the last day's history");
		goto out;
	}
	rc = 0;
out:
	if (rc == -1)
		state_timeline_free(out);
	sqlite3_finalize(s);
	return rc;
}
