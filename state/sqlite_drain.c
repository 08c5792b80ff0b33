/*
 * What the operator asked for (ddup-check(8), DESCRIPTION: --drain,
 * --undrain, --failback) and the checker's own network (controlUrl):
 * drains, failback requests and the state of the controlUrl, in the state
 * file.  These are few rows, read once per run, so each call prepares its
 * statement; times are written by SQLite in the format of the other
 * tables (ISO-8601 UTC with milliseconds).
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

/*
 * One statement with up to four parameters: ?1 and ?2 text, ?3 and ?4
 * integers (?4 NULL when 0); those the statement does not have are not
 * bound.  -1 with st->err set.
 */
static int
exec1(struct sqlite_state *st, const char *sql, const char *what,
    const char *t1, const char *t2, long long n3, long long n4)
{
	sqlite3_stmt	*s = NULL;
	int		 rc = -1, b = 0, np;

	if (st_stmt(st, sql, &s, what) == -1)
		goto out;
	np = sqlite3_bind_parameter_count(s);
	if (np >= 1 && t1 != NULL)
		b |= sqlite3_bind_text(s, 1, t1, -1, SQLITE_TRANSIENT);
	if (np >= 2 && t2 != NULL)
		b |= sqlite3_bind_text(s, 2, t2, -1, SQLITE_TRANSIENT);
	if (np >= 3)
		b |= sqlite3_bind_int64(s, 3, n3);
	if (np >= 4 && n4 != 0)
		b |= sqlite3_bind_int64(s, 4, n4);
	if (st_step_done(st, s, b, what) == -1)
		goto out;
	rc = 0;
out:
	sqlite3_finalize(s);
	return rc;
}

/*
 * A request: the same statement for each of t (?1 its domain, ?2 its
 * endpoint), in one transaction, so all of them or none.
 */
static int
request(struct sqlite_state *st, const char *sql, const char *what,
    const struct st_target *t, size_t n, long long n3, long long n4,
    char *err, size_t errlen)
{
	size_t	i;
	int	rc = -1;

	if (state_begin(st, err, errlen) == -1)
		goto out;
	for (i = 0; i < n; i++)
		if (exec1(st, sql, what, t[i].domain, t[i].endpoint, n3,
		    n4) == -1) {
			snprintf(err, errlen, "%s", st->base.err);
			state_rollback(st);
			goto out;
		}
	rc = state_commit(st, err, errlen);
out:
	return rc;
}

int
st_sqlite_request_drain(struct sqlite_state *st, const struct st_target *t,
    size_t n, long long now, long long until, char *err, size_t errlen)
{
	return request(st, "INSERT INTO drains (domain, endpoint, since,"
	    " until) VALUES (?1, ?2, " SQL_TIME("?3") ", CASE WHEN ?4 IS NULL"
	    " THEN NULL ELSE " SQL_TIME("?4") " END)"
	    " ON CONFLICT (domain, endpoint) DO UPDATE SET"
	    " since = excluded.since, until = excluded.until", "drain",
	    t, n, now, until, err, errlen);
}

/*
 * The trigger drains_ended logs the drain as ended at SQLite's 'now',
 * the same clock as the checker's now here.
 */
int
st_sqlite_request_undrain(struct sqlite_state *st, const struct st_target *t,
    size_t n, long long now, char *err, size_t errlen)
{
	(void)now;
	return request(st, "DELETE FROM drains WHERE domain = ?1 AND"
	    " endpoint = ?2", "undrain", t, n, 0, 0, err, errlen);
}

int
st_sqlite_request_failback(struct sqlite_state *st, const char *domain,
    long long now, char *err, size_t errlen)
{
	struct st_target t = { domain, NULL };

	return request(st, "INSERT INTO failbacks (domain, time)"
	    " VALUES (?1, " SQL_TIME("?3") ") ON CONFLICT (domain) DO UPDATE"
	    " SET time = excluded.time", "failback", &t, 1, now, 0,
	    err, errlen);
}

static int
get_drains(struct sqlite_state *st, long long now, struct st_requests *out)
{
	sqlite3_stmt	*s = NULL;
	struct st_drain	*d;
	size_t		 cap = 0;
	int		 rc = -1, step;

	if (sqlite3_prepare_v2(st->db, "SELECT domain, endpoint, since, until"
	    " FROM drains ORDER BY domain, endpoint", -1, &s, NULL) !=
	    SQLITE_OK)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		long long until = st_col_ms(s, 3);

		/* Back by itself when the time runs out. */
		if (until != 0 && until <= now)
			continue;
		if (out->ndrains == cap) {
			cap = cap ? cap * 2 : 8;
			out->drains = xrealloc(out->drains,
			    cap * sizeof(*out->drains));
		}
		d = &out->drains[out->ndrains++];
		d->domain = st_col_text(s, 0);
		d->endpoint = st_col_text(s, 1);
		d->since = st_col_ms(s, 2);
		d->until = until;
	}
	if (step == SQLITE_DONE)
		rc = 0;
out:
	if (rc == -1)
		st_db_err(st, st->db, "drains");
	sqlite3_finalize(s);
	return rc;
}

static int
get_failbacks(struct sqlite_state *st, struct st_requests *out)
{
	sqlite3_stmt	*s = NULL;
	size_t		 cap = 0;
	int		 rc = -1, step;

	if (sqlite3_prepare_v2(st->db, "SELECT domain FROM failbacks"
	    " ORDER BY domain", -1, &s, NULL) != SQLITE_OK)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		if (out->nfailbacks == cap) {
			cap = cap ? cap * 2 : 8;
			out->failbacks = xrealloc(out->failbacks,
			    cap * sizeof(*out->failbacks));
		}
		out->failbacks[out->nfailbacks++] = st_col_text(s, 0);
	}
	if (step == SQLITE_DONE)
		rc = 0;
out:
	if (rc == -1)
		st_db_err(st, st->db, "failbacks");
	sqlite3_finalize(s);
	return rc;
}

static int
get_control(struct sqlite_state *st, struct st_requests *out)
{
	sqlite3_stmt	*s = NULL;
	const char	*v;
	int		 rc = -1, step;

	if (sqlite3_prepare_v2(st->db, "SELECT key, value FROM meta WHERE key"
	    " IN ('control_failed_since', 'control_result')", -1, &s, NULL) !=
	    SQLITE_OK)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		v = (const char *)sqlite3_column_text(s, 0);
		if (v != NULL && strcmp(v, "control_failed_since") == 0)
			out->control_since = st_col_ms(s, 1);
		else if ((v = (const char *)sqlite3_column_text(s, 1)) != NULL)
			snprintf(out->control_result,
			    sizeof(out->control_result), "%s", v);
	}
	if (step == SQLITE_DONE)
		rc = 0;
out:
	if (rc == -1)
		st_db_err(st, st->db, "control URL");
	sqlite3_finalize(s);
	return rc;
}

int
state_get_requests(struct sqlite_state *st, long long now,
    struct st_requests *out)
{
	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return 0;
	if (get_drains(st, now, out) == -1 || get_failbacks(st, out) == -1 ||
	    get_control(st, out) == -1) {
		state_requests_free(out);
		return -1;
	}
	return 0;
}

int
state_clear_failback(struct sqlite_state *st, const char *domain)
{
	if (st_need_tx(st, "failback") == -1)
		return -1;
	return exec1(st, "DELETE FROM failbacks WHERE domain = ?1",
	    "failback", domain, NULL, 0, 0);
}

int
state_put_control(struct sqlite_state *st, long long since, const char *result)
{
	if (st_need_tx(st, "control URL") == -1)
		return -1;
	if (since == 0)
		return exec1(st, "DELETE FROM meta WHERE key IN"
		    " ('control_failed_since', 'control_result')",
		    "control URL", NULL, NULL, 0, 0);
	if (exec1(st, "INSERT INTO meta (key, value) VALUES"
	    " ('control_failed_since', " SQL_TIME("?3") ") ON CONFLICT (key)"
	    " DO UPDATE SET value = excluded.value", "control URL", NULL, NULL,
	    since, 0) == -1)
		return -1;
	return exec1(st, "INSERT INTO meta (key, value) VALUES"
	    " ('control_result', ?1) ON CONFLICT (key) DO UPDATE SET"
	    " value = excluded.value", "control URL",
	    result, NULL, 0, 0);
}

int
state_prune_requests(struct sqlite_state *st, long long now)
{
	if (st_need_tx(st, "drains") == -1)
		return -1;
	/* state_finish_run() has dropped what is no longer configured. */
	if (exec1(st, "DELETE FROM drains WHERE (until IS NOT NULL AND"
	    " until <= " SQL_TIME("?3") ") OR NOT EXISTS (SELECT 1 FROM"
	    " endpoints e WHERE e.domain = drains.domain AND"
	    " e.name = drains.endpoint)", "drains", NULL, NULL, now, 0) == -1)
		return -1;
	return exec1(st, "DELETE FROM failbacks WHERE domain NOT IN (SELECT"
	    " name FROM domains)", "failbacks", NULL, NULL, 0, 0);
}
