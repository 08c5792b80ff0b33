/*
 * The SQLite backend's transactions and errors (state/sqlite.h), which
 * every file of it uses: the error state_errmsg() returns, the write
 * transaction of a run and the read transaction of a load.  A rollback
 * forgets the loaded rows, which may hold what it undid, so their
 * lifetime is here too.  The readers of a column that several files
 * share are here as well.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "state.h"
#include "state/sqlite.h"
#include "util.h"

void
st_set_err(struct sqlite_state *st, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	n = snprintf(st->base.err, sizeof(st->base.err), "%s: ", st->path);
	if (n < 0 || (size_t)n >= sizeof(st->base.err))
		return;
	va_start(ap, fmt);
	vsnprintf(st->base.err + n, sizeof(st->base.err) - n, fmt, ap);
	va_end(ap);
}

/* "FILE: what: sqlite's message". */
void
st_db_err(struct sqlite_state *st, sqlite3 *db, const char *what)
{
	st_set_err(st, "%s: %s", what, db != NULL ? sqlite3_errmsg(db) :
	    "out of memory");
}

char *
st_col_text(sqlite3_stmt *s, int i)
{
	const char *v = (const char *)sqlite3_column_text(s, i);

	return xstrdup(v != NULL ? v : "");
}

long long
st_col_ms(sqlite3_stmt *s, int i)
{
	const char *v = (const char *)sqlite3_column_text(s, i);
	long long ms;

	/* NULL for a NULL column (and for no memory to convert it). */
	if (v == NULL || parse_iso_time(v, &ms) == -1)
		return 0;
	return ms;
}

int
st_stmt(struct sqlite_state *st, const char *sql, sqlite3_stmt **s,
    const char *what)
{
	if (sqlite3_prepare_v2(st->db, sql, -1, s, NULL) != SQLITE_OK) {
		st_db_err(st, st->db, what);
		return -1;
	}
	return 0;
}

int
st_step_done(struct sqlite_state *st, sqlite3_stmt *s, int bound,
    const char *what)
{
	/* bound may be several codes or'ed: only "not OK" is meant. */
	if (bound != SQLITE_OK || sqlite3_step(s) != SQLITE_DONE) {
		st_db_err(st, st->db, what);
		return -1;
	}
	return 0;
}

/* Writes need a read-write open and an open transaction. */
int
st_need_tx(struct sqlite_state *st, const char *what)
{
	if (st == NULL)
		return -1;
	if (!st->rw) {
		st_set_err(st, "%s: state opened read-only", what);
		return -1;
	}
	if (!st->in_tx) {
		st_set_err(st, "%s: no transaction", what);
		return -1;
	}
	return 0;
}

void
st_row_free(struct st_row *r)
{
	if (r->own_reason)
		free(r->reason);
	free(r->name);
	memset(r, 0, sizeof(*r));
}

void
st_forget_rows(struct sqlite_state *st)
{
	size_t	 i;

	for (i = 0; st->rows != NULL && i < st->nrows; i++)
		st_row_free(&st->rows[i]);
	free(st->rows);
	st->rows = NULL;
	st->nrows = 0;
	st->inserted = 0;
}

/* Rows changed and pages written by this connection so far. */
static void
pages_written(struct sqlite_state *st, long long *rows, long long *pages)
{
	int	 cur = 0, hi = 0;

	*rows = sqlite3_total_changes64(st->db);
	/* Pages written to the WAL (or spilled), not the in-memory temp tables. */
	if (sqlite3_db_status(st->db, SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi,
	    0) != SQLITE_OK)
		cur = 0;
	*pages = cur;
}

int
state_begin(struct sqlite_state *st, char *err, size_t errlen)
{
	int	 rc = -1;

	if (st == NULL) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "no state file");
		return -1;
	}
	state_read_end(st);
	if (!st->rw || st->in_tx) {
		st_set_err(st, "cannot begin: %s", st->rw ?
		    "a transaction is open" : "state opened read-only");
		goto out;
	}
	/* IMMEDIATE: take the write lock now, not at the first write. */
	if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL)
	    != SQLITE_OK) {
		st_db_err(st, st->db, "cannot begin");
		goto out;
	}
	st->in_tx = 1;
	st->finished = 0;
	pages_written(st, &st->changes0, &st->pages0);
	rc = 0;
 out:
	if (rc == -1 && err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", st->base.err);
	return rc;
}

void
state_read_begin(struct sqlite_state *st)
{
	if (st == NULL || !st->rw || st->in_tx || st->in_read)
		return;
	/* Should it fail, each read simply runs in a transaction of its own. */
	if (sqlite3_exec(st->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK)
		st->in_read = 1;
}

void
state_read_end(struct sqlite_state *st)
{
	if (st == NULL || !st->in_read)
		return;
	if (!sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
	st->in_read = 0;
}

int
state_commit(struct sqlite_state *st, char *err, size_t errlen)
{
	int	 rc = -1;

	if (st_need_tx(st, "cannot commit") == -1)
		goto out;
	if (sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		st_db_err(st, st->db, "cannot commit");
		if (!sqlite3_get_autocommit(st->db))
			sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		st->in_tx = 0;
		st->finished = 0;
		st_forget_rows(st);
		goto out;
	}
	st->in_tx = 0;
	pages_written(st, &st->base.wrote_rows, &st->base.wrote_pages);
	st->base.wrote_rows -= st->changes0;
	st->base.wrote_pages -= st->pages0;
	if (st->finished) {
		st->runs = st->fin_runs;
		st->last_run = st->fin_last;
		memcpy(st->digest, st->fin_digest, sizeof(st->digest));
		st->finished = 0;
	}
	rc = 0;
 out:
	if (rc == -1 && st != NULL && err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", st->base.err);
	return rc;
}

void
state_rollback(struct sqlite_state *st)
{
	if (st == NULL || !st->in_tx)
		return;
	/* Fails only if SQLite already rolled back after an error. */
	if (!sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	st->in_tx = 0;
	/* The loaded rows may hold what was just undone. */
	st->finished = 0;
	st_forget_rows(st);
}
