/*
 * Reads of the state file's history for reports: the last DNS change
 * attempts, newest first (the dashboard shows them).
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
