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
#include "state.h"
#include "state_int.h"
#include "util.h"

#define CHANGES_KEEP_MS	(365LL * 24 * 3600 * 1000)

static const char *const stmt_sql[S_MAX] = {
	[S_GET_EP] = "SELECT ip, url, failures, passes, removed, last_check,"
	    " last_ok, last_status, latency_ms, last_result"
	    " FROM endpoints WHERE domain = ?1 AND name = ?2",
	[S_GET_DOM] = "SELECT tier, last_change, last_error, unhealthy, unsure,"
	    " tier_rank, tier_location FROM domains WHERE name = ?1",
	[S_GET_PUB] = "SELECT type, ttl, addresses, proxied FROM published"
	    " WHERE domain = ?1",
	[S_GET_META] = "SELECT value FROM meta WHERE key = ?1",
	[S_PUT_EP] = "INSERT INTO endpoints (domain, name, ip, url, priority,"
	    " failures, passes, removed, last_check, last_ok, last_status,"
	    " last_result, latency_ms)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
	    " ON CONFLICT (domain, name) DO UPDATE SET ip = excluded.ip,"
	    " url = excluded.url, priority = excluded.priority,"
	    " failures = excluded.failures, passes = excluded.passes,"
	    " removed = excluded.removed, last_check = excluded.last_check,"
	    " last_ok = excluded.last_ok, last_status = excluded.last_status,"
	    " last_result = excluded.last_result,"
	    " latency_ms = excluded.latency_ms",
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
	    " unsure = excluded.unsure",
	[S_PUT_PUB] = "INSERT INTO published (domain, type, ttl, addresses,"
	    " proxied) VALUES (?1, ?2, ?3, ?4, ?5)"
	    " ON CONFLICT (domain, type) DO UPDATE SET ttl = excluded.ttl,"
	    " addresses = excluded.addresses, proxied = excluded.proxied",
	[S_DEL_PUB] = "DELETE FROM published WHERE domain = ?1 AND type = ?2",
	[S_ADD_CHECK] = "INSERT INTO checks (time, domain, endpoint, ip, ok,"
	    " status, latency_ms, reason)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[S_ADD_CHANGE] = "INSERT INTO changes (time, domain, type, ttl, old,"
	    " new, tier, ok, error, tier_rank, tier_location)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	[S_PUT_META] = "INSERT INTO meta (key, value) VALUES (?1, ?2)"
	    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
	[S_CFG_CLEAR_DOM] = "DELETE FROM temp.cfg_domains",
	[S_CFG_CLEAR_EP] = "DELETE FROM temp.cfg_endpoints",
	[S_CFG_DOM] = "INSERT OR IGNORE INTO temp.cfg_domains (name, has4, has6)"
	    " VALUES (?1, ?2, ?3)",
	[S_CFG_EP] = "INSERT OR IGNORE INTO temp.cfg_endpoints (domain, name)"
	    " VALUES (?1, ?2)",
	[S_DROP_EP] = "DELETE FROM endpoints WHERE NOT EXISTS (SELECT 1"
	    " FROM temp.cfg_endpoints c"
	    " WHERE c.domain = endpoints.domain AND c.name = endpoints.name)",
	[S_DROP_DOM] = "DELETE FROM domains WHERE name NOT IN"
	    " (SELECT name FROM temp.cfg_domains)",
	/* Also the types a domain no longer manages. */
	[S_DROP_PUB] = "DELETE FROM published WHERE NOT EXISTS (SELECT 1"
	    " FROM temp.cfg_domains c WHERE c.name = published.domain"
	    " AND ((published.type = 'A' AND c.has4)"
	    " OR (published.type = 'AAAA' AND c.has6)))",
	[S_PRUNE_CHECKS] = "DELETE FROM checks WHERE time < ?1",
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

static int
bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v == NULL)
		return sqlite3_bind_null(s, i);
	return sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
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
run_stmt(struct state *st, sqlite3_stmt *s, int bind_rc, const char *what)
{
	int	 rc = -1;

	/* bind_rc may be several codes or'ed: only "not OK" is meant. */
	if (bind_rc != SQLITE_OK) {
		st_db_err(st, st->db, what);
		goto out;
	}
	if (sqlite3_step(s) != SQLITE_DONE) {
		st_db_err(st, st->db, what);
		goto out;
	}
	rc = 0;
 out:
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc;
}

int
st_prepare(struct state *st)
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

int
state_get_endpoint(struct state *st, const char *domain, const char *name,
    const char *ip, const char *url, struct st_endpoint *out)
{
	sqlite3_stmt	*s;
	const char	*v;
	int		 rc = -1, step;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return 0;
	s = st->stmt[S_GET_EP];
	if (bind_text(s, 1, domain) != SQLITE_OK ||
	    bind_text(s, 2, name) != SQLITE_OK) {
		st_db_err(st, st->db, "endpoint");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		rc = 0;
		goto out;
	}
	if (step != SQLITE_ROW) {
		st_set_err(st, "endpoint %s/%s: %s", domain, name,
		    sqlite3_errmsg(st->db));
		goto out;
	}
	rc = 0;
	/* Another address or URL: the counters belong to something else. */
	v = (const char *)sqlite3_column_text(s, 0);
	if (ip != NULL && (v == NULL || strcmp(v, ip) != 0))
		goto out;
	v = (const char *)sqlite3_column_text(s, 1);
	if (url != NULL && (v == NULL || strcmp(v, url) != 0))
		goto out;
	out->found = 1;
	out->failures = sqlite3_column_int64(s, 2);
	out->passes = sqlite3_column_int64(s, 3);
	out->removed = sqlite3_column_int(s, 4);
	out->last_check = parse_ms((const char *)sqlite3_column_text(s, 5));
	out->last_ok = sqlite3_column_int(s, 6);
	out->last_status = sqlite3_column_int64(s, 7);
	out->latency_ms = sqlite3_column_int64(s, 8);
	v = (const char *)sqlite3_column_text(s, 9);
	snprintf(out->last_result, sizeof(out->last_result), "%s",
	    v != NULL ? v : "");
 out:
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc;
}

/* Fills d->pub from the published rows of domain. */
static int
get_published(struct state *st, const char *domain, struct st_domain *d)
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
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc;
}

int
state_get_domain(struct state *st, const char *domain, struct st_domain *out)
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
		out->last_change =
		    parse_ms((const char *)sqlite3_column_text(s, 1));
		v = (const char *)sqlite3_column_text(s, 2);
		snprintf(out->last_error, sizeof(out->last_error), "%s",
		    v != NULL ? v : "");
		out->unhealthy = sqlite3_column_int(s, 3);
		out->unsure = sqlite3_column_int(s, 4);
		out->tier_rank = sqlite3_column_type(s, 5) != SQLITE_NULL ?
		    (long)sqlite3_column_int64(s, 5) : -1;
		v = (const char *)sqlite3_column_text(s, 6);
		snprintf(out->tier_location, sizeof(out->tier_location), "%s",
		    v != NULL ? v : "");
	} else if (step != SQLITE_DONE) {
		st_set_err(st, "domain %s: %s", domain, sqlite3_errmsg(st->db));
		goto out;
	}
	sqlite3_reset(s);
	if (get_published(st, domain, out) == -1)
		goto out;
	rc = 0;
 out:
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc == -1)
		state_domain_free(out);
	return rc;
}

void
state_domain_free(struct st_domain *d)
{
	int t;

	for (t = 0; t < RR_NTYPES; t++) {
		rrset_clear(&d->pub[t]);
		d->has_pub[t] = 0;
	}
}

long long
state_last_run(struct state *st)
{
	sqlite3_stmt	*s;
	long long	 ms = 0;
	int		 step;

	if (st == NULL)
		return 0;
	s = st->stmt[S_GET_META];
	if (bind_text(s, 1, "last_run") != SQLITE_OK) {
		st_db_err(st, st->db, "last run");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_ROW)
		ms = parse_ms((const char *)sqlite3_column_text(s, 0));
	else if (step != SQLITE_DONE)
		st_db_err(st, st->db, "last run");
 out:
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return ms;
}

int
state_put_endpoint(struct state *st, const char *domain, const char *name,
    const char *ip, const char *url, long priority,
    const struct st_endpoint *e)
{
	sqlite3_stmt	*s;
	int		 b = 0, checked;

	if (st_need_tx(st, "endpoint") == -1)
		return -1;
	s = st->stmt[S_PUT_EP];
	checked = e->last_check != 0;
	b |= bind_text(s, 1, domain);
	b |= bind_text(s, 2, name);
	b |= bind_text(s, 3, ip);
	b |= bind_text(s, 4, url);
	b |= sqlite3_bind_int64(s, 5, priority);
	b |= sqlite3_bind_int64(s, 6, e->failures);
	b |= sqlite3_bind_int64(s, 7, e->passes);
	b |= sqlite3_bind_int(s, 8, e->removed != 0);
	b |= bind_time(s, 9, e->last_check);
	if (checked) {
		b |= sqlite3_bind_int(s, 10, e->last_ok != 0);
		if (e->last_status != 0)
			b |= sqlite3_bind_int64(s, 11, e->last_status);
		b |= bind_text(s, 12, e->last_result);
		b |= sqlite3_bind_int64(s, 13, e->latency_ms);
	}
	return run_stmt(st, s, b, "endpoint");
}

int
state_put_domain(struct state *st, const char *domain, const char *provider,
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
	if (d->last_error[0] != '\0')
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
state_mark_unsure(struct state *st, const char *domain, const char *provider,
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
		snprintf(err, errlen, "%s", st->err);
		return -1;
	}
	return state_commit(st, err, errlen);
}

int
state_put_published(struct state *st, const char *domain, enum rrtype type,
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
state_add_check(struct state *st, long long when, const char *domain,
    const char *endpoint, const char *ip, int ok, long status,
    long latency_ms, const char *reason)
{
	sqlite3_stmt	*s;
	int		 b = 0;

	if (st_need_tx(st, "check history") == -1)
		return -1;
	s = st->stmt[S_ADD_CHECK];
	b |= bind_time(s, 1, when);
	b |= bind_text(s, 2, domain);
	b |= bind_text(s, 3, endpoint);
	b |= bind_text(s, 4, ip);
	b |= sqlite3_bind_int(s, 5, ok != 0);
	if (status != 0)
		b |= sqlite3_bind_int64(s, 6, status);
	b |= sqlite3_bind_int64(s, 7, latency_ms);
	b |= bind_text(s, 8, reason);
	return run_stmt(st, s, b, "check history");
}

int
state_add_change(struct state *st, long long when, const char *domain,
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
load_config(struct state *st, const struct config *c)
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

int
state_finish_run(struct state *st, long long now, const struct config *c)
{
	static const int drops[] = { S_DROP_EP, S_DROP_DOM, S_DROP_PUB };
	sqlite3_stmt	*s;
	long long	 cut;
	int		 b = 0, i;

	if (st_need_tx(st, "finish run") == -1 || c == NULL)
		return -1;
	s = st->stmt[S_PUT_META];
	b |= bind_text(s, 1, "last_run");
	b |= bind_time(s, 2, now);
	if (run_stmt(st, s, b, "finish run") == -1)
		return -1;

	if (load_config(st, c) == -1)
		return -1;
	for (i = 0; i < (int)(sizeof(drops) / sizeof(drops[0])); i++)
		if (run_stmt(st, st->stmt[drops[i]], 0, "finish run") == -1)
			return -1;

	/* Before the epoch means "keep everything". */
	cut = now - c->history_ms;
	s = st->stmt[S_PRUNE_CHECKS];
	b = cut > 0 ? bind_time(s, 1, cut) : bind_text(s, 1, "");
	if (run_stmt(st, s, b, "pruning check history") == -1)
		return -1;
	cut = now - CHANGES_KEEP_MS;
	s = st->stmt[S_PRUNE_CHANGES];
	b = cut > 0 ? bind_time(s, 1, cut) : bind_text(s, 1, "");
	return run_stmt(st, s, b, "pruning change history");
}
