/*
 * Counters that only grow, for metricsFile (see state.h).  Checks are
 * not written once a run: the streaks count them already, and the
 * trigger of migration 7 keeps what a pruned streak held.
 */

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "state.h"
#include "state/sqlite.h"
#include "util.h"

int
state_count(struct sqlite_state *st, const char *domain, const char *endpoint,
    const char *name, long long add)
{
	sqlite3_stmt	*s = NULL;
	int		 rc = -1;

	if (st_need_tx(st, "counting") == -1)
		return -1;
	/* Only when DNS is changed or fails: no prepared statement kept. */
	if (sqlite3_prepare_v2(st->db, "INSERT INTO counters (domain,"
	    " endpoint, name, value) VALUES (?1, ?2, ?3, ?4)"
	    " ON CONFLICT (domain, endpoint, name)"
	    " DO UPDATE SET value = value + excluded.value", -1, &s, NULL)
	    != SQLITE_OK ||
	    sqlite3_bind_text(s, 1, domain, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(s, 2, endpoint, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(s, 3, name, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 4, add) != SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_DONE) {
		st_db_err(st, st->db, "counting");
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(s);
	return rc;
}

int
st_sqlite_counters(struct sqlite_state *st, struct st_counter **out, size_t *n)
{
	sqlite3_stmt	*s = NULL;
	struct st_counter *v = NULL;
	size_t		 len = 0, cap = 0;
	int		 step, rc = -1;

	*out = NULL;
	*n = 0;
	if (st == NULL)
		return 0;
	if (st_stmt(st, "SELECT domain, endpoint, name,"
	    " sum(value) FROM (SELECT domain, endpoint, name, value"
	    " FROM counters UNION ALL SELECT domain, endpoint, CASE WHEN ok"
	    " THEN 'checks_pass' ELSE 'checks_fail' END, checks FROM history)"
	    " GROUP BY domain, endpoint, name"
	    " ORDER BY domain, endpoint, name", &s, "reading counters") == -1)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? 2 * cap : 64;
			v = xrealloc(v, cap * sizeof(*v));
		}
		v[len].domain = st_col_text(s, 0);
		v[len].endpoint = st_col_text(s, 1);
		v[len].name = st_col_text(s, 2);
		v[len].value = sqlite3_column_int64(s, 3);
		len++;
	}
	if (step != SQLITE_DONE) {
		st_db_err(st, st->db, "reading counters");
		goto out;
	}
	*out = v;
	*n = len;
	v = NULL;
	len = 0;
	rc = 0;
out:
	state_counters_free(v, len);
	sqlite3_finalize(s);
	return rc;
}

