/*
 * The rows of the state file: the prepared statements, the reads, the
 * writes of a run and the end-of-run cleanup.
 *
 * Times are stored as ISO-8601 UTC text with milliseconds
 * ("2026-11-30T10:25:56.123Z"): readable in the sqlite3 CLI, and in
 * that fixed width text order is time order, so the time indexes work.
 * NULL stands for "never" or "none" wherever the header uses 0 or "".
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "config.h"
#include "log.h"
#include "state.h"
#include "state/sqlite.h"
#include "util.h"

#define CHANGES_KEEP_MS	(365LL * 24 * 3600 * 1000)
#define LAT_SAMPLE	16	/* a streak's mean: one run in this many */
#define LAT_BLOCK	64	/* streak rows sampled in the same run */

static const char *const stmt_sql[S_MAX] = {
	[S_LOAD_EP] = "SELECT e.domain, e.name, e.ip, e.url, e.priority,"
	    " e.failures, e.passes, e.counted, e.removed, e.streak, s.run, s.ok,"
	    " s.status, s.reason, s.latency_min, s.latency_mean, s.latency_max,"
	    " s.latency_samples, s.last IS NOT NULL"
	    " FROM endpoints e LEFT JOIN streaks s ON s.id = e.streak"
	    " ORDER BY e.domain, e.name",
	[S_GET_EP] = "SELECT e.domain, e.name, e.ip, e.url, e.priority,"
	    " e.failures, e.passes, e.counted, e.removed, e.streak, s.run, s.ok,"
	    " s.status, s.reason, s.latency_min, s.latency_mean, s.latency_max,"
	    " s.latency_samples, s.last IS NOT NULL"
	    " FROM endpoints e LEFT JOIN streaks s ON s.id = e.streak"
	    " WHERE e.domain = ?1 AND e.name = ?2",
	[S_GET_DOM] = "SELECT d.tier, d.last_change, d.last_error, d.unhealthy,"
	    " d.unsure, d.tier_rank, d.tier_location, f.since, f.reason,"
	    " f.all_down FROM domains d LEFT JOIN failovers f"
	    " ON f.domain = d.name WHERE d.name = ?1",
	/* Written when a failover begins, ends or allDown takes it over. */
	[S_PUT_FAILOVER] = "INSERT INTO failovers (domain, since, reason,"
	    " all_down) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (domain)"
	    " DO UPDATE SET all_down = excluded.all_down",
	[S_DEL_FAILOVER] = "DELETE FROM failovers WHERE domain = ?1",
	[S_DROP_FAILOVERS] = "DELETE FROM failovers WHERE domain NOT IN"
	    " (SELECT name FROM temp.cfg_domains)",
	[S_GET_PUB] = "SELECT type, ttl, addresses, proxied FROM published"
	    " WHERE domain = ?1",
	[S_GET_META] = "SELECT value FROM meta WHERE key = ?1",
	[S_PUT_EP] = "INSERT INTO endpoints (domain, name, ip, url, priority,"
	    " failures, passes, counted, removed, streak)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
	    " ON CONFLICT (domain, name) DO UPDATE SET ip = excluded.ip,"
	    " url = excluded.url, priority = excluded.priority,"
	    " failures = excluded.failures, passes = excluded.passes,"
	    " counted = excluded.counted, removed = excluded.removed,"
	    " streak = excluded.streak",
	[S_PUT_DOM] = "INSERT INTO domains (name, provider, ttl, tier,"
	    " last_change, last_error, unhealthy, unsure, tier_rank,"
	    " tier_location)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
	    " ON CONFLICT (name) DO UPDATE SET provider = excluded.provider,"
	    " ttl = excluded.ttl, tier = excluded.tier,"
	    " tier_rank = excluded.tier_rank,"
	    " tier_location = excluded.tier_location,"
	    " last_change = excluded.last_change,"
	    " last_error = excluded.last_error, unhealthy = excluded.unhealthy,"
	    " unsure = excluded.unsure"
	    /* An unchanged row is not rewritten: no page to write. */
	    " WHERE provider IS NOT excluded.provider OR ttl IS NOT excluded.ttl"
	    " OR tier IS NOT excluded.tier"
	    " OR tier_rank IS NOT excluded.tier_rank"
	    " OR tier_location IS NOT excluded.tier_location"
	    " OR last_change IS NOT excluded.last_change"
	    " OR last_error IS NOT excluded.last_error"
	    " OR unhealthy IS NOT excluded.unhealthy"
	    " OR unsure IS NOT excluded.unsure",
	[S_PUT_PUB] = "INSERT INTO published (domain, type, ttl, addresses,"
	    " proxied) VALUES (?1, ?2, ?3, ?4, ?5)"
	    " ON CONFLICT (domain, type) DO UPDATE SET ttl = excluded.ttl,"
	    " addresses = excluded.addresses, proxied = excluded.proxied"
	    " WHERE ttl IS NOT excluded.ttl OR addresses IS NOT excluded.addresses"
	    " OR proxied IS NOT excluded.proxied",
	[S_DEL_PUB] = "DELETE FROM published WHERE domain = ?1 AND type = ?2",
	[S_OPEN_STREAK] = "INSERT INTO streaks (domain, endpoint, ip, first,"
	    " run, ok, status, reason, latency_min, latency_mean, latency_max,"
	    " latency_samples)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, ?9, 1)",
	[S_CLOSE_STREAK] = "UPDATE streaks SET last = ?2, checks = ?3 - run + 1"
	    " + coalesce((SELECT x.checks FROM streak_repeats x"
	    " WHERE x.streak = ?1), 0) WHERE id = ?1 AND last IS NULL",
	[S_STREAK_MINMAX] = "UPDATE streaks SET latency_min = min(latency_min,"
	    " ?2), latency_max = max(latency_max, ?2) WHERE id = ?1",
	[S_ADD_REPEATS] = "INSERT INTO streak_repeats (streak, checks)"
	    " VALUES (?1, ?2) ON CONFLICT (streak)"
	    " DO UPDATE SET checks = checks + excluded.checks",
	[S_STREAK_LATENCY] = "UPDATE streaks SET latency_min = ?2,"
	    " latency_mean = ?3, latency_max = ?4, latency_samples = ?5"
	    " WHERE id = ?1",
	[S_ADD_CHANGE] = "INSERT INTO changes (time, domain, type, ttl, old,"
	    " new, tier, ok, error, tier_rank, tier_location)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	[S_PUT_META] = "INSERT INTO meta (key, value) VALUES (?1, ?2)"
	    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
	[S_CFG_CLEAR_DOM] = "DELETE FROM temp.cfg_domains",
	[S_CFG_CLEAR_EP] = "DELETE FROM temp.cfg_endpoints",
	[S_CFG_DOM] = "INSERT OR IGNORE INTO temp.cfg_domains (name, has4, has6,"
	    " hascname) VALUES (?1, ?2, ?3, ?4)",
	[S_CFG_EP] = "INSERT OR IGNORE INTO temp.cfg_endpoints (domain, name)"
	    " VALUES (?1, ?2)",
	/* The open streaks of endpoints about to be dropped end at the last run. */
	[S_CLOSE_GONE] = "UPDATE streaks SET last = ?1, checks = ?2 - run + 1"
	    " + coalesce((SELECT x.checks FROM streak_repeats x"
	    " WHERE x.streak = streaks.id), 0) WHERE last IS NULL AND id IN (SELECT streak FROM endpoints"
	    " WHERE NOT EXISTS (SELECT 1 FROM temp.cfg_endpoints c"
	    " WHERE c.domain = endpoints.domain AND c.name = endpoints.name))",
	[S_DROP_EP] = "DELETE FROM endpoints WHERE NOT EXISTS (SELECT 1"
	    " FROM temp.cfg_endpoints c"
	    " WHERE c.domain = endpoints.domain AND c.name = endpoints.name)",
	[S_DROP_DOM] = "DELETE FROM domains WHERE name NOT IN"
	    " (SELECT name FROM temp.cfg_domains)",
	/* Also the types a domain no longer manages. */
	[S_DROP_PUB] = "DELETE FROM published WHERE NOT EXISTS (SELECT 1"
	    " FROM temp.cfg_domains c WHERE c.name = published.domain"
	    " AND ((published.type = 'A' AND c.has4)"
	    " OR (published.type = 'AAAA' AND c.has6)"
	    " OR (published.type = 'CNAME' AND c.hascname)))",
	[S_DROP_CERT] = "DELETE FROM certs WHERE NOT EXISTS (SELECT 1"
	    " FROM temp.cfg_endpoints c"
	    " WHERE c.domain = certs.domain AND c.name = certs.endpoint)",
	[S_PRUNE_STREAKS] = "DELETE FROM streaks WHERE last < ?1",
	[S_PRUNE_DRAINS] = "DELETE FROM drain_log WHERE until < ?1",
	[S_PRUNE_CHANGES] = "DELETE FROM changes WHERE time < ?1",
	[S_MARK_UNSURE] = "INSERT INTO domains (name, provider, ttl, unhealthy,"
	    " unsure) VALUES (?1, ?2, ?3, 0, 1)"
	    " ON CONFLICT (name) DO UPDATE SET unsure = 1",
};

static void
fmt_ms(long long ms, char *buf, size_t len)
{
	struct tm	 tm;
	time_t		 t;
	long long	 sec, frac;

	sec = ms / 1000;
	frac = ms % 1000;
	if (frac < 0) {
		frac += 1000;
		sec--;
	}
	t = (time_t)sec;
	if (gmtime_r(&t, &tm) == NULL)
		memset(&tm, 0, sizeof(tm));
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (int)frac);
}

/* The inverse of fmt_ms() (util.h's parser); 0 for NULL or junk. */
static long long
parse_ms(const char *s)
{
	long long ms;

	if (s == NULL || parse_iso_time(s, &ms) == -1)
		return 0;
	return ms;
}

/*
 * A kept statement after its use: reset, and its bindings cleared, so
 * that it holds no caller's string and the next use starts clean.
 */
static void
stmt_release(sqlite3_stmt *s)
{
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

/*
 * Not copied: every caller's string outlives the statement's step, and
 * run_stmt() and the readers clear the bindings after it (stmt_release()).
 */
static int
bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v == NULL)
		return sqlite3_bind_null(s, i);
	return sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
}

/* A time, NULL for 0 ("never"). */
static int
bind_time(sqlite3_stmt *s, int i, long long ms)
{
	/* A run stamps every row with one time: format it once. */
	static long long last_ms;
	static char	 buf[80];	/* the compiler counts int ranges */

	if (ms == 0)
		return sqlite3_bind_null(s, i);
	if (ms != last_ms) {
		fmt_ms(ms, buf, sizeof(buf));
		last_ms = ms;
	}
	return sqlite3_bind_text(s, i, buf, -1, SQLITE_TRANSIENT);
}

/* Runs a statement that returns no rows, then makes it ready for reuse. */
static int
run_stmt(struct sqlite_state *st, sqlite3_stmt *s, int bind_rc,
    const char *what)
{
	int	 rc;

	rc = st_step_done(st, s, bind_rc, what);
	stmt_release(s);
	return rc;
}

int
st_prepare(struct sqlite_state *st)
{
	int	 i, n;

	n = st->rw ? S_MAX : S_FIRST_RW;
	for (i = 0; i < n; i++) {
		if (sqlite3_prepare_v3(st->db, stmt_sql[i], -1,
		    SQLITE_PREPARE_PERSISTENT, &st->stmt[i], NULL)
		    != SQLITE_OK) {
			st_db_err(st, st->db, "cannot prepare");
			return -1;
		}
	}
	return 0;
}

/*
 * Builds a row from the current result of S_LOAD_EP or S_GET_EP.  Its
 * strings are in one allocation that starts with the name; the domain
 * is prev's when prev (the row before, in order) has the same one, and
 * the URL is the name's when they are the same, as they are for every
 * endpoint without a `name`: the rows are kept to the end of a run.
 */
static void
row_from(sqlite3_stmt *s, struct st_row *r, const struct st_row *prev)
{
	const char	*col[5];
	size_t		 len[5], total = 0, k;
	char		*p;
	/* name, ip, url, reason, domain */
	static const int idx[5] = { 1, 2, 3, 13, 0 };

	memset(r, 0, sizeof(*r));
	for (k = 0; k < 5; k++) {
		col[k] = (const char *)sqlite3_column_text(s, idx[k]);
		if (col[k] == NULL)
			col[k] = "";
		len[k] = strlen(col[k]) + 1;
	}
	if (strcmp(col[2], col[0]) == 0)
		len[2] = 0;
	if (prev != NULL && strcmp(col[4], prev->domain) == 0) {
		len[4] = 0;
		r->domain = prev->domain;
	}
	for (k = 0; k < 5; k++)
		total += len[k];
	p = xmalloc(total);
	r->name = p;
	r->url = p;
	for (k = 0; k < 5; k++) {
		if (len[k] == 0)
			continue;
		memcpy(p, col[k], len[k]);
		if (k == 1)
			r->ip = p;
		else if (k == 2)
			r->url = p;
		else if (k == 3)
			r->reason = p;
		else if (k == 4)
			r->domain = p;
		p += len[k];
	}
	r->priority = sqlite3_column_int64(s, 4);
	r->failures = sqlite3_column_int64(s, 5);
	r->passes = sqlite3_column_int64(s, 6);
	r->counted = sqlite3_column_int64(s, 7);
	r->removed = sqlite3_column_int(s, 8);
	/* A streak id that points nowhere counts as none. */
	if (sqlite3_column_type(s, 10) != SQLITE_NULL) {
		r->streak = sqlite3_column_int64(s, 9);
		r->srun = sqlite3_column_int64(s, 10);
		r->ok = sqlite3_column_int(s, 11);
		r->status = sqlite3_column_int64(s, 12);
		r->lat_min = sqlite3_column_int64(s, 14);
		r->lat_mean = sqlite3_column_double(s, 15);
		r->lat_max = sqlite3_column_int64(s, 16);
		r->lat_n = sqlite3_column_int64(s, 17);
		r->closed = sqlite3_column_int(s, 18);
	}
}

/* Every endpoint row, in one SELECT. */
static int
load_rows(struct sqlite_state *st)
{
	sqlite3_stmt	*s = st->stmt[S_LOAD_EP];
	size_t		 cap = 64;
	int		 step, rc = -1;

	/*
	 * As many as expected at once: doubling from 64 went through an
	 * array of 16,384 rows for 10,000, the run's peak of memory.
	 */
	if (st->rows_hint > cap)
		cap = st->rows_hint;
	st_forget_rows(st);
	st->rows = xcalloc(cap, sizeof(*st->rows));
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		if (st->nrows == cap) {
			cap *= 2;
			st->rows = xrealloc(st->rows, cap * sizeof(*st->rows));
		}
		row_from(s, &st->rows[st->nrows], st->nrows > 0 ?
		    &st->rows[st->nrows - 1] : NULL);
		st->nrows++;
	}
	if (step != SQLITE_DONE) {
		st_db_err(st, st->db, "endpoints");
		st_forget_rows(st);
		goto out;
	}
	/* Kept to the end of the run: not with up to half of it unused. */
	if (st->nrows > 0 && st->nrows < cap)
		st->rows = xrealloc(st->rows, st->nrows * sizeof(*st->rows));
	rc = 0;
 out:
	sqlite3_reset(s);
	return rc;
}

static int
row_cmp(const char *domain, const char *name, const struct st_row *r)
{
	int	 c = strcmp(domain, r->domain);

	return c != 0 ? c : strcmp(name, r->name);
}

/*
 * The stored row of an endpoint: from the loaded rows, or, for one added
 * since they were loaded, from the file into *tmp (st_row_free() it).
 * Returns NULL with *err 0 when there is none, with *err 1 on error.
 */
static struct st_row *
find_row(struct sqlite_state *st, const char *domain, const char *name,
    struct st_row *tmp, int *err)
{
	sqlite3_stmt	*s;
	struct st_row	*r = NULL;
	size_t		 lo = 0, hi, mid;
	int		 c, step;

	*err = 0;
	memset(tmp, 0, sizeof(*tmp));
	if (st->rows == NULL && load_rows(st) == -1) {
		*err = 1;
		return NULL;
	}
	hi = st->nrows;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = row_cmp(domain, name, &st->rows[mid]);
		if (c == 0 && !st->rows[mid].stale)
			return &st->rows[mid];
		if (c == 0)
			break;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (!st->inserted)
		return NULL;
	s = st->stmt[S_GET_EP];
	if (bind_text(s, 1, domain) != SQLITE_OK ||
	    bind_text(s, 2, name) != SQLITE_OK) {
		st_db_err(st, st->db, "endpoint");
		*err = 1;
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_ROW) {
		row_from(s, tmp, NULL);
		r = tmp;
	} else if (step != SQLITE_DONE) {
		st_set_err(st, "endpoint %s/%s: %s", domain, name,
		    sqlite3_errmsg(st->db));
		*err = 1;
	}
 out:
	stmt_release(s);
	return r;
}

/*
 * Runs since the counters were written, each with the result of the
 * open streak: the counter of that result grew by one per run.
 */
static void
derive_counters(const struct sqlite_state *st, const struct st_row *r,
    long *failures, long *passes)
{
	long long since = st->runs - r->counted;

	*failures = r->failures;
	*passes = r->passes;
	if (r->streak == 0 || r->closed || since <= 0)
		return;
	if (r->ok)
		*passes += (long)since;
	else
		*failures += (long)since;
}

int
state_get_endpoint(struct sqlite_state *st, const char *domain,
    const char *name,
    const char *ip, const char *url, struct st_endpoint *out)
{
	struct st_row	 tmp, *r;
	size_t		 len;
	int		 err;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return 0;
	r = find_row(st, domain, name, &tmp, &err);
	if (r == NULL)
		return err ? -1 : 0;
	/* Another address or URL: the counters belong to something else. */
	if ((ip != NULL && strcmp(r->ip, ip) != 0) ||
	    (url != NULL && strcmp(r->url, url) != 0))
		goto out;
	out->found = 1;
	derive_counters(st, r, &out->failures, &out->passes);
	out->removed = r->removed;
	/* Every stored endpoint was checked by the last run. */
	out->last_check = st->last_run;
	if (r->streak != 0) {
		out->last_ok = r->ok;
		out->last_status = r->status;
		out->latency_ms = (long)(r->lat_mean + 0.5);
		/* As snprintf() would cut it, without its parsing a format
		   once a row (a tenth of the load's own work). */
		len = strnlen(r->reason, sizeof(out->last_result) - 1);
		memcpy(out->last_result, r->reason, len);
		out->last_result[len] = '\0';
	}
 out:
	st_row_free(&tmp);
	return 0;
}

/* Fills d->pub from the published rows of domain. */
static int
get_published(struct sqlite_state *st, const char *domain, struct st_domain *d)
{
	sqlite3_stmt	*s = st->stmt[S_GET_PUB];
	const char	*type, *list;
	enum rrtype	 t;
	int		 rc = -1, step;

	if (bind_text(s, 1, domain) != SQLITE_OK) {
		st_db_err(st, st->db, "published");
		goto out;
	}
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		type = (const char *)sqlite3_column_text(s, 0);
		list = (const char *)sqlite3_column_text(s, 2);
		if (rrtype_parse(type, &t) == -1) {
			st_set_err(st, "published %s: bad type \"%s\"", domain,
			    type != NULL ? type : "");
			goto out;
		}
		d->pub[t].type = t;
		if (rrset_parse(&d->pub[t], list != NULL ? list : "") == -1) {
			st_set_err(st, "published %s %s: bad record list \"%s\"",
			    domain, rrtype_str(t), list);
			goto out;
		}
		d->has_pub[t] = 1;
		d->pub[t].ttl = sqlite3_column_int64(s, 1);
		d->pub[t].proxied = sqlite3_column_int(s, 3) != 0;
	}
	if (step != SQLITE_DONE) {
		st_set_err(st, "published %s: %s", domain,
		    sqlite3_errmsg(st->db));
		goto out;
	}
	rc = 0;
 out:
	stmt_release(s);
	return rc;
}

int
state_get_domain(struct sqlite_state *st, const char *domain,
    struct st_domain *out)
{
	sqlite3_stmt	*s;
	const char	*v;
	int		 rc = -1, step, t;

	memset(out, 0, sizeof(*out));
	for (t = 0; t < RR_NTYPES; t++)
		out->pub[t].type = (enum rrtype)t;
	if (st == NULL)
		return 0;
	s = st->stmt[S_GET_DOM];
	if (bind_text(s, 1, domain) != SQLITE_OK) {
		st_db_err(st, st->db, "domain");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_ROW) {
		out->found = 1;
		out->has_tier = sqlite3_column_type(s, 0) != SQLITE_NULL;
		out->tier = sqlite3_column_int64(s, 0);
		out->last_change = st_col_ms(s, 1);
		v = (const char *)sqlite3_column_text(s, 2);
		out->last_error = st_error_dup(v);
		out->unhealthy = sqlite3_column_int(s, 3);
		out->unsure = sqlite3_column_int(s, 4);
		out->tier_rank = sqlite3_column_type(s, 5) != SQLITE_NULL ?
		    (long)sqlite3_column_int64(s, 5) : -1;
		v = (const char *)sqlite3_column_text(s, 6);
		snprintf(out->tier_location, sizeof(out->tier_location), "%s",
		    v != NULL ? v : "");
		out->failover_since = st_col_ms(s, 7);
		out->failover_reason = st_error_dup(
		    (const char *)sqlite3_column_text(s, 8));
		out->fail_open = st_fail_open_parse(
		    (const char *)sqlite3_column_text(s, 9));
	} else if (step != SQLITE_DONE) {
		st_set_err(st, "domain %s: %s", domain, sqlite3_errmsg(st->db));
		goto out;
	}
	sqlite3_reset(s);
	if (get_published(st, domain, out) == -1)
		goto out;
	rc = 0;
 out:
	stmt_release(s);
	if (rc == -1)
		state_domain_free(out);
	return rc;
}

long long
state_last_run(struct sqlite_state *st)
{
	return st != NULL ? st->last_run : 0;
}

/* Ends streak id at run number run, of time when (its last check). */
static int
close_streak_at(struct sqlite_state *st, long long id, long long when,
    long long run)
{
	sqlite3_stmt	*s = st->stmt[S_CLOSE_STREAK];
	int		 b = 0;

	b |= sqlite3_bind_int64(s, 1, id);
	b |= bind_time(s, 2, when);
	b |= sqlite3_bind_int64(s, 3, run);
	return run_stmt(st, s, b, "check history");
}

/* Ends streak id at the last run. */
static int
close_streak(struct sqlite_state *st, long long id)
{
	return close_streak_at(st, id, st->last_run, st->runs);
}

/* Begins a streak with this check; *id is its row. */
static int
open_streak(struct sqlite_state *st, const char *domain, const char *name,
    const char *ip, const struct st_endpoint *e, long long *id)
{
	sqlite3_stmt	*s = st->stmt[S_OPEN_STREAK];
	int		 b = 0;

	b |= bind_text(s, 1, domain);
	b |= bind_text(s, 2, name);
	b |= bind_text(s, 3, ip);
	b |= bind_time(s, 4, e->last_check);
	b |= sqlite3_bind_int64(s, 5, st->runs + 1);
	b |= sqlite3_bind_int(s, 6, e->last_ok != 0);
	if (e->last_status != 0)
		b |= sqlite3_bind_int64(s, 7, e->last_status);
	b |= bind_text(s, 8, e->last_result);
	b |= sqlite3_bind_int64(s, 9, e->latency_ms);
	if (run_stmt(st, s, b, "check history") == -1)
		return -1;
	*id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

/*
 * This check's latency into the open streak r.  min and max take every
 * check; the mean a sample: the streak's first check, then its check
 * in one run in LAT_SAMPLE, staggered by blocks of LAT_BLOCK streak
 * rows so that a run's samples share pages.  The sample does not depend
 * on the latency, so its mean is an unbiased estimate, and a steady run
 * writes about one open streak in LAT_SAMPLE however much latencies
 * jitter.
 */
static int
streak_latency(struct sqlite_state *st, struct st_row *r, long x)
{
	sqlite3_stmt	*s = st->stmt[S_STREAK_LATENCY];
	int		 b = 0, sample;

	sample = (st->runs + 1 + r->streak / LAT_BLOCK) % LAT_SAMPLE == 0;
	if (!sample && x >= r->lat_min && x <= r->lat_max)
		return 0;
	if (sample) {
		r->lat_n++;
		r->lat_mean += ((double)x - r->lat_mean) / (double)r->lat_n;
	}
	if (x < r->lat_min)
		r->lat_min = x;
	if (x > r->lat_max)
		r->lat_max = x;
	b |= sqlite3_bind_int64(s, 1, r->streak);
	b |= sqlite3_bind_int64(s, 2, r->lat_min);
	b |= sqlite3_bind_double(s, 3, r->lat_mean);
	b |= sqlite3_bind_int64(s, 4, r->lat_max);
	b |= sqlite3_bind_int64(s, 5, r->lat_n);
	return run_stmt(st, s, b, "check history");
}

/* Widens streak id's latency range to take x. */
static int
streak_minmax(struct sqlite_state *st, long long id, long x)
{
	sqlite3_stmt	*s = st->stmt[S_STREAK_MINMAX];
	int		 b = 0;

	b |= sqlite3_bind_int64(s, 1, id);
	b |= sqlite3_bind_int64(s, 2, x);
	return run_stmt(st, s, b, "check history");
}

/* Adds n checks beyond one a run to open streak id (recheck). */
static int
add_repeats(struct sqlite_state *st, long long id, long n)
{
	sqlite3_stmt	*s = st->stmt[S_ADD_REPEATS];
	int		 b = 0;

	if (n <= 0)
		return 0;
	b |= sqlite3_bind_int64(s, 1, id);
	b |= sqlite3_bind_int64(s, 2, n);
	return run_stmt(st, s, b, "check history");
}

/* The open streak while a run's checks go into it. */
struct cur_streak {
	long long	 id;		/* 0: none */
	int		 ok;
	long		 status;
	const char	*reason;
	int		 in_run;	/* this run's checks in it */
	long		 extra;		/* of them, beyond the first */
};

/* Whether check x goes on with streak c. */
static int
cur_same(const struct cur_streak *c, const struct st_endpoint *x)
{
	return c->id != 0 && c->ok == (x->last_ok != 0) &&
	    c->status == x->last_status && strcmp(c->reason, x->last_result) == 0;
}

/*
 * This run's checks of an endpoint into its streaks: recheck's failed
 * ones first (e->before), then e.  Each goes on with the open streak
 * when its result, status and reason are the same, else ends it and
 * begins another; a failure and a pass are never one streak.  An open
 * streak counts one check a run; the run's further checks in it are
 * kept in streak_repeats.  *streak and *srun are the open streak after.
 */
static int
put_checks(struct sqlite_state *st, const char *domain, const char *name,
    const char *ip, const char *url, struct st_row *r,
    const struct st_endpoint *e, long long *streak, long long *srun)
{
	struct cur_streak c;
	const struct st_endpoint *x;
	size_t		 i;
	int		 rc;

	memset(&c, 0, sizeof(c));
	if (r != NULL && r->streak != 0 && !r->closed &&
	    strcmp(r->ip, ip) == 0 && strcmp(r->url, url) == 0) {
		c.id = r->streak;
		c.ok = r->ok;
		c.status = r->status;
		c.reason = r->reason;
	}
	for (i = 0; i <= e->nbefore; i++) {
		x = i < e->nbefore ? &e->before[i] : e;
		if (cur_same(&c, x)) {
			/* The stored streak's first check of the run: one a run. */
			if (c.in_run++ == 0)
				rc = streak_latency(st, r, x->latency_ms);
			else {
				c.extra++;
				rc = streak_minmax(st, c.id, x->latency_ms);
			}
			if (rc == -1)
				return -1;
			continue;
		}
		if (c.id != 0 && (add_repeats(st, c.id, c.extra) == -1 ||
		    (c.in_run > 0 ? close_streak_at(st, c.id, e->last_check,
		    st->runs + 1) : close_streak(st, c.id)) == -1))
			return -1;
		if (open_streak(st, domain, name, ip, x, &c.id) == -1)
			return -1;
		*srun = st->runs + 1;
		c.ok = x->last_ok != 0;
		c.status = x->last_status;
		c.reason = x->last_result;
		c.in_run = 1;
		c.extra = 0;
	}
	*streak = c.id;
	return add_repeats(st, c.id, c.extra);
}

/* Keeps a loaded row in step with what was written. */
static void
row_update(struct st_row *r, const struct st_endpoint *e, long priority,
    long long counted, long long streak, long long srun)
{
	r->priority = priority;
	r->failures = e->failures;
	r->passes = e->passes;
	r->counted = counted;
	r->removed = e->removed != 0;
	if (streak == r->streak)
		return;
	r->streak = streak;
	r->srun = srun;
	r->closed = 0;
	r->ok = e->last_ok != 0;
	r->status = e->last_status;
	r->lat_min = r->lat_max = e->latency_ms;
	r->lat_mean = (double)e->latency_ms;
	r->lat_n = 1;
	if (r->own_reason)
		free(r->reason);
	r->reason = xstrdup(e->last_result);
	r->own_reason = 1;
}

int
state_put_endpoint(struct sqlite_state *st, const char *domain,
    const char *name,
    const char *ip, const char *url, long priority,
    const struct st_endpoint *e)
{
	sqlite3_stmt	*s;
	struct st_row	 tmp, *r;
	long long	 streak = 0, srun = 0, counted;
	long		 f, p;
	int		 b = 0, err, rc = -1, checked, write;

	if (st == NULL || st_need_tx(st, "endpoint") == -1)
		return -1;
	counted = st->runs;
	r = find_row(st, domain, name, &tmp, &err);
	if (err)
		return -1;
	checked = e->last_check != 0;
	if (r != NULL) {
		streak = r->streak;
		srun = r->srun;
	}
	write = r == NULL || r->priority != priority ||
	    strcmp(r->ip, ip) != 0 || strcmp(r->url, url) != 0 ||
	    r->removed != (e->removed != 0);
	if (checked) {
		counted = st->runs + 1;
		if (put_checks(st, domain, name, ip, url, r, e, &streak,
		    &srun) == -1)
			goto out;
		if (r == NULL || streak != r->streak)
			write = 1;
	}
	/* Unwritten, the counters would read as these next run. */
	if (!write) {
		derive_counters(st, r, &f, &p);
		if (checked && r->streak != 0) {
			if (r->ok)
				p++;
			else
				f++;
		}
		write = f != e->failures || p != e->passes;
		if (!checked)
			counted = st->runs;
	}
	/*
	 * A check this run did not count: the counters stay as they are,
	 * as of this run, so that it does not add to them as a run of the
	 * open streak's result.  The open streak ends at its last check
	 * (the last run), or this run would count in it too; the endpoint
	 * keeps pointing at it, so its last result stays the streak's, and
	 * its next check begins a new one.
	 */
	if (e->uncounted && !checked && r != NULL) {
		if (r->streak != 0 && !r->closed) {
			if (close_streak(st, r->streak) == -1)
				goto out;
			r->closed = 1;
		}
		write = 1;
		counted = st->runs + 1;
	}
	if (!write) {
		rc = 0;
		goto out;
	}
	s = st->stmt[S_PUT_EP];
	b |= bind_text(s, 1, domain);
	b |= bind_text(s, 2, name);
	b |= bind_text(s, 3, ip);
	b |= bind_text(s, 4, url);
	b |= sqlite3_bind_int64(s, 5, priority);
	b |= sqlite3_bind_int64(s, 6, e->failures);
	b |= sqlite3_bind_int64(s, 7, e->passes);
	b |= sqlite3_bind_int64(s, 8, counted);
	b |= sqlite3_bind_int(s, 9, e->removed != 0);
	if (streak != 0)
		b |= sqlite3_bind_int64(s, 10, streak);
	if (run_stmt(st, s, b, "endpoint") == -1)
		goto out;
	if (r == NULL || r == &tmp)
		st->inserted = 1;
	if (r != NULL && r != &tmp && (strcmp(r->ip, ip) != 0 ||
	    strcmp(r->url, url) != 0))
		r->stale = 1;	/* read from the file if needed again */
	else if (r != NULL && r != &tmp)
		row_update(r, e, priority, counted, streak, srun);
	rc = 0;
 out:
	st_row_free(&tmp);
	return rc;
}

int
state_put_domain(struct sqlite_state *st, const char *domain,
    const char *provider,
    long ttl, const struct st_domain *d)
{
	sqlite3_stmt	*s;
	int		 b = 0;

	if (st_need_tx(st, "domain") == -1)
		return -1;
	s = st->stmt[S_PUT_DOM];
	b |= bind_text(s, 1, domain);
	b |= bind_text(s, 2, provider);
	b |= sqlite3_bind_int64(s, 3, ttl);
	if (d->has_tier)
		b |= sqlite3_bind_int64(s, 4, d->tier);
	b |= bind_time(s, 5, d->last_change);
	if (d->last_error != NULL && d->last_error[0] != '\0')
		b |= bind_text(s, 6, d->last_error);
	b |= sqlite3_bind_int(s, 7, d->unhealthy != 0);
	b |= sqlite3_bind_int(s, 8, d->unsure != 0);
	if (d->has_tier && d->tier_rank >= 0)
		b |= sqlite3_bind_int64(s, 9, d->tier_rank);
	if (d->has_tier && d->tier_location[0] != '\0')
		b |= bind_text(s, 10, d->tier_location);
	return run_stmt(st, s, b, "domain");
}

int
state_put_failover(struct sqlite_state *st, const char *domain,
    long long since, const char *reason, int fail_open)
{
	sqlite3_stmt	*s;
	char		 why[ST_ERROR_MAX];
	const char	*how = st_fail_open_str(fail_open);
	int		 b = 0;

	if (st_need_tx(st, "failover") == -1)
		return -1;
	if (since == 0) {
		s = st->stmt[S_DEL_FAILOVER];
		b |= bind_text(s, 1, domain);
		return run_stmt(st, s, b, "failover");
	}
	s = st->stmt[S_PUT_FAILOVER];
	b |= bind_text(s, 1, domain);
	b |= bind_time(s, 2, since);
	if (reason != NULL)
		b |= bind_text(s, 3, text_printable_copy(why, sizeof(why),
		    reason));
	if (how != NULL)
		b |= bind_text(s, 4, how);
	return run_stmt(st, s, b, "failover");
}

int
st_sqlite_mark_unsure(struct sqlite_state *st, const char *domain,
    const char *provider,
    long ttl, char *err, size_t errlen)
{
	sqlite3_stmt	*s;
	int		 b = 0;

	if (state_begin(st, err, errlen) == -1)
		return -1;
	s = st->stmt[S_MARK_UNSURE];
	b |= bind_text(s, 1, domain);
	b |= bind_text(s, 2, provider);
	b |= sqlite3_bind_int64(s, 3, ttl);
	if (run_stmt(st, s, b, "domain") == -1) {
		state_rollback(st);
		snprintf(err, errlen, "%s", st->base.err);
		return -1;
	}
	return state_commit(st, err, errlen);
}

int
state_put_published(struct sqlite_state *st, const char *domain,
    enum rrtype type,
    const struct rrset *set)
{
	sqlite3_stmt	*s;
	char		*list = NULL;
	int		 b = 0, rc;

	if (st_need_tx(st, "published") == -1)
		return -1;
	if (set != NULL && set->type != type) {
		st_set_err(st, "published %s: a %s set given as %s", domain,
		    rrtype_str(set->type), rrtype_str(type));
		return -1;
	}
	if (set == NULL) {
		s = st->stmt[S_DEL_PUB];
		b |= bind_text(s, 1, domain);
		b |= bind_text(s, 2, rrtype_str(type));
		return run_stmt(st, s, b, "published");
	}
	list = rrset_join(set);
	s = st->stmt[S_PUT_PUB];
	b |= bind_text(s, 1, domain);
	b |= bind_text(s, 2, rrtype_str(type));
	b |= sqlite3_bind_int64(s, 3, set->ttl);
	b |= bind_text(s, 4, list);
	b |= sqlite3_bind_int(s, 5, set->proxied != 0);
	rc = run_stmt(st, s, b, "published");
	free(list);
	return rc;
}

int
state_add_change(struct sqlite_state *st, long long when, const char *domain,
    enum rrtype type, long ttl, const char *old_set, const char *new_set,
    long tier, long rank, const char *location, int ok, const char *error)
{
	sqlite3_stmt	*s;
	int		 b = 0;

	if (st_need_tx(st, "change history") == -1)
		return -1;
	s = st->stmt[S_ADD_CHANGE];
	b |= bind_time(s, 1, when);
	b |= bind_text(s, 2, domain);
	b |= bind_text(s, 3, rrtype_str(type));
	b |= sqlite3_bind_int64(s, 4, ttl);
	b |= bind_text(s, 5, old_set != NULL ? old_set : "");
	b |= bind_text(s, 6, new_set != NULL ? new_set : "");
	if (tier >= 0)
		b |= sqlite3_bind_int64(s, 7, tier);
	b |= sqlite3_bind_int(s, 8, ok != 0);
	b |= bind_text(s, 9, error);
	if (tier >= 0 && rank >= 0)
		b |= sqlite3_bind_int64(s, 10, rank);
	if (tier >= 0)
		b |= bind_text(s, 11, location);
	return run_stmt(st, s, b, "change history");
}

/* Fills the temporary tables with what the configuration holds. */
static int
load_config(struct sqlite_state *st, const struct config *c)
{
	const struct domain_cfg	*d;
	sqlite3_stmt		*s;
	size_t			 i, j;
	int			 b;

	if (run_stmt(st, st->stmt[S_CFG_CLEAR_DOM], 0, "finish run") == -1 ||
	    run_stmt(st, st->stmt[S_CFG_CLEAR_EP], 0, "finish run") == -1)
		return -1;
	for (i = 0; i < c->ndomains; i++) {
		d = &c->domains[i];
		s = st->stmt[S_CFG_DOM];
		b = bind_text(s, 1, d->name);
		b |= sqlite3_bind_int(s, 2, d->has4 != 0);
		b |= sqlite3_bind_int(s, 3, d->has6 != 0);
		b |= sqlite3_bind_int(s, 4, d->hascname != 0);
		if (run_stmt(st, s, b, "finish run") == -1)
			return -1;
		for (j = 0; j < d->neps; j++) {
			s = st->stmt[S_CFG_EP];
			b = bind_text(s, 1, d->name);
			b |= bind_text(s, 2, d->eps[j].name);
			if (run_stmt(st, s, b, "finish run") == -1)
				return -1;
		}
	}
	return 0;
}

static unsigned long long
fnv(unsigned long long h, int byte)
{
	return (h ^ (unsigned char)byte) * 1099511628211ULL;
}

/*
 * The set of configured domains, their managed types and endpoint
 * names, as a 64-bit FNV-1a hash: what the end-of-run cleanup depends
 * on.  Names hold no NUL, so the NUL after each keeps them apart.
 */
static void
config_digest(const struct config *c, char *buf, size_t len)
{
	unsigned long long	 h = 14695981039346656037ULL;
	const char		*p;
	size_t			 i, j;

	for (i = 0; i < c->ndomains; i++) {
		const struct domain_cfg *d = &c->domains[i];

		for (p = d->name; *p != '\0'; p++)
			h = fnv(h, *p);
		h = fnv(h, '\0');
		h = fnv(h, d->has4 ? '4' : '-');
		h = fnv(h, d->has6 ? '6' : '-');
		for (j = 0; j < d->neps; j++) {
			for (p = d->eps[j].name; *p != '\0'; p++)
				h = fnv(h, *p);
			h = fnv(h, '\0');
		}
		h = fnv(h, '\n');
	}
	snprintf(buf, len, "%016llx", h);
}

static int
put_meta(struct sqlite_state *st, const char *key, const char *value)
{
	sqlite3_stmt	*s = st->stmt[S_PUT_META];
	int		 b = 0;

	b |= bind_text(s, 1, key);
	b |= bind_text(s, 2, value);
	return run_stmt(st, s, b, "finish run");
}

static int
get_meta(struct sqlite_state *st, const char *key, char *buf, size_t len)
{
	sqlite3_stmt	*s = st->stmt[S_GET_META];
	const char	*v;
	int		 step, rc = -1;

	buf[0] = '\0';
	if (bind_text(s, 1, key) != SQLITE_OK) {
		st_db_err(st, st->db, "meta");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_ROW) {
		v = (const char *)sqlite3_column_text(s, 0);
		snprintf(buf, len, "%s", v != NULL ? v : "");
	} else if (step != SQLITE_DONE) {
		st_db_err(st, st->db, "meta");
		goto out;
	}
	rc = 0;
 out:
	stmt_release(s);
	return rc;
}

int
st_read_meta(struct sqlite_state *st)
{
	char	 buf[80], *end;

	if (get_meta(st, "runs", buf, sizeof(buf)) == -1)
		return -1;
	st->runs = strtoll(buf, &end, 10);
	if (end == buf || *end != '\0' || st->runs < 0)
		st->runs = 0;
	if (get_meta(st, "last_run", buf, sizeof(buf)) == -1)
		return -1;
	st->last_run = parse_ms(buf[0] != '\0' ? buf : NULL);
	if (get_meta(st, "config", st->config, sizeof(st->config)) == -1)
		return -1;
	return get_meta(st, "endpoints_digest", st->digest, sizeof(st->digest));
}

/*
 * Two configurations on one state file drop each other's domains at
 * every run: the run that drops rows a run of another file wrote says
 * so.  The file is recorded as its absolute path (meta's 'config'); ""
 * before version 10 of the schema, or for a text without a file.
 */
static int
note_config(struct sqlite_state *st, const struct config *c, int dropped_dom,
    int dropped_ep)
{
	char	 path[4096];

	if (c->path == NULL || realpath(c->path, path) == NULL ||
	    strlen(path) >= sizeof(st->config))
		return 0;
	if (st->config[0] != '\0' && strcmp(st->config, path) != 0 &&
	    dropped_dom + dropped_ep > 0)
		logx(LOG_WARN, NULL, NULL, "state %s was last written by a run "
		    "of %s: this run of %s dropped what %s does not configure "
		    "(%d domain%s, %d endpoint%s); give each configuration its "
		    "own state file", st->path, st->config, path, path,
		    dropped_dom, dropped_dom == 1 ? "" : "s", dropped_ep,
		    dropped_ep == 1 ? "" : "s");
	if (strcmp(st->config, path) == 0)
		return 0;
	return put_meta(st, "config", path);
}

int
state_finish_run(struct sqlite_state *st, long long now, const struct config *c)
{
	static const int drops[] = { S_DROP_EP, S_DROP_DOM, S_DROP_PUB,
	    S_DROP_CERT, S_DROP_FAILOVERS };
	sqlite3_stmt	*s;
	long long	 cut;
	char		 runs[32], when[80];
	int		 b = 0, i, dropped[2] = { 0, 0 };

	if (st_need_tx(st, "finish run") == -1 || c == NULL)
		return -1;
	st->finished = 1;
	st->fin_runs = st->runs + 1;
	st->fin_last = now;
	snprintf(runs, sizeof(runs), "%lld", st->fin_runs);
	fmt_ms(now, when, sizeof(when));
	if (put_meta(st, "last_run", when) == -1 ||
	    put_meta(st, "runs", runs) == -1)
		return -1;

	/* The same endpoints as last run: nothing to drop. */
	config_digest(c, st->fin_digest, sizeof(st->fin_digest));
	if (strcmp(st->fin_digest, st->digest) != 0) {
		if (load_config(st, c) == -1)
			return -1;
		s = st->stmt[S_CLOSE_GONE];
		b = bind_time(s, 1, st->last_run);
		b |= sqlite3_bind_int64(s, 2, st->runs);
		if (run_stmt(st, s, b, "finish run") == -1)
			return -1;
		for (i = 0; i < (int)(sizeof(drops) / sizeof(drops[0])); i++) {
			if (run_stmt(st, st->stmt[drops[i]], 0, "finish run")
			    == -1)
				return -1;
			if (i < 2)
				dropped[i] = sqlite3_changes(st->db);
		}
		if (put_meta(st, "endpoints_digest", st->fin_digest) == -1)
			return -1;
	}
	if (note_config(st, c, dropped[1], dropped[0]) == -1)
		return -1;

	/* Before the epoch means "keep everything". */
	cut = now - c->history_ms;
	s = st->stmt[S_PRUNE_STREAKS];
	b = cut > 0 ? bind_time(s, 1, cut) : bind_text(s, 1, "");
	if (run_stmt(st, s, b, "pruning check history") == -1)
		return -1;
	/* Ended drains are history of the same kind: kept as long. */
	s = st->stmt[S_PRUNE_DRAINS];
	b = cut > 0 ? bind_time(s, 1, cut) : bind_text(s, 1, "");
	if (run_stmt(st, s, b, "pruning drain history") == -1)
		return -1;
	cut = now - CHANGES_KEEP_MS;
	s = st->stmt[S_PRUNE_CHANGES];
	b = cut > 0 ? bind_time(s, 1, cut) : bind_text(s, 1, "");
	return run_stmt(st, s, b, "pruning change history");
}
