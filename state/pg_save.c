/*
 * What a run on PostgreSQL saves (state/pg.h, pgd_save_queue()):
 * the statements of the domains it decided, appended to the caller's
 * batch inside the caller's transaction.  The endpoints go in a few
 * statements whatever their number (state/pg_save_ep.c); each domain
 * costs a statement or a few, and its saves are counted last
 * (ddup_tick, from which schema 8's views derive the counters).
 *
 * The rules are the SQLite backend's (state/sqlite.c, state/sqlite_data.c):
 * what is no longer configured is dropped (history stays, an open
 * streak written down as it ended); streaks older than `history` go,
 * their checks added to the counters; changes go after a year.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "config.h"
#include "outbox.h"
#include "outcome.h"
#include "publish.h"
#include "state.h"
#include "state/pg.h"
#include "util.h"

#define PG_TS(p)	"to_timestamp(" p "::bigint / 1000.0)"
/* 0 ("never") as NULL. */
#define PG_TS0(p)	"CASE WHEN " p "::bigint = 0 THEN NULL ELSE " \
			PG_TS(p) " END"

#define CHANGES_KEEP_MS	(365LL * 24 * 3600 * 1000)

/*
 * What is no longer configured is looked for when the configured names
 * changed since the last such prune (ddup_meta's 'pruned', their
 * config_names_digest()), and in a slot of every PRUNE_EVERY all the
 * same: a row may have come another way (a run of another file, a
 * request, a hand).  Each look sends every configured name, some
 * 0.5 MB and 40 ms of the server's at N = 10,000, for what is nearly
 * always nothing.
 */
#define PRUNE_EVERY	100

/* The decided domains' saves: last, each endpoint's check counted in. */
/*
 * An UPDATE of the rows there rather than an upsert, which locks a row
 * before it writes it (a WAL record more); the domains' locks keep out
 * another insert.
 */
static const char sql_tick[] =
	"WITH u AS (UPDATE ddup_tick t SET saves = t.saves + 1,"
	" saved = " PG_TS("$1") " FROM unnest($2::text[]) AS d(name)"
	" WHERE t.domain = d.name RETURNING t.domain)"
	" INSERT INTO ddup_tick (domain, saves, saved)"
	" SELECT name, 1, " PG_TS("$1") " FROM unnest($2::text[]) AS d(name)"
	" WHERE name NOT IN (SELECT domain FROM u)";

/*
 * The decided domains' rows, $1..$10 columns of arrays (last_change 0:
 * NULL).  Those there are updated where they changed, by an UPDATE: an
 * upsert would lock each row it leaves as it is, a WAL record each; the
 * INSERT takes the others (its upsert only for one another session
 * added since).
 */
static const char sql_domain[] =
	"WITH v AS (SELECT name, provider, ttl, tier, tier_rank,"
	"  tier_location, CASE WHEN lc = 0 THEN NULL ELSE " PG_TS("lc")
	"  END AS last_change, last_error, unhealthy, unsure"
	"  FROM unnest($1::text[], $2::text[], $3::int[], $4::int[],"
	"  $5::int[], $6::text[], $7::bigint[], $8::text[], $9::bool[],"
	"  $10::bool[]) AS t(name, provider, ttl, tier, tier_rank,"
	"  tier_location, lc, last_error, unhealthy, unsure)),"
	" u AS (UPDATE ddup_domain d SET provider = v.provider, ttl = v.ttl,"
	"  tier = v.tier, tier_rank = v.tier_rank,"
	"  tier_location = v.tier_location, last_change = v.last_change,"
	"  last_error = v.last_error, unhealthy = v.unhealthy,"
	"  unsure = v.unsure FROM v WHERE d.name = v.name"
	"  AND (d.provider, d.ttl, d.tier, d.tier_rank, d.tier_location,"
	"  d.last_change, d.last_error, d.unhealthy, d.unsure)"
	"  IS DISTINCT FROM (v.provider, v.ttl, v.tier, v.tier_rank,"
	"  v.tier_location, v.last_change, v.last_error, v.unhealthy,"
	"  v.unsure))"
	" INSERT INTO ddup_domain AS d (name, provider, ttl, tier, tier_rank,"
	" tier_location, last_change, last_error, unhealthy, unsure)"
	" SELECT * FROM v WHERE NOT EXISTS (SELECT 1 FROM ddup_domain x"
	"  WHERE x.name = v.name)"
	" ON CONFLICT (name) DO UPDATE SET provider = excluded.provider,"
	" ttl = excluded.ttl, tier = excluded.tier,"
	" tier_rank = excluded.tier_rank,"
	" tier_location = excluded.tier_location,"
	" last_change = excluded.last_change, last_error = excluded.last_error,"
	" unhealthy = excluded.unhealthy, unsure = excluded.unsure";

static const char sql_failover[] =
	"INSERT INTO ddup_failover (domain, since, reason, all_down)"
	" VALUES ($1, " PG_TS("$2") ", $3, $4) ON CONFLICT (domain)"
	" DO UPDATE SET all_down = excluded.all_down";

/* The published sets, as the domains' rows: $1..$5 columns of arrays. */
static const char sql_published[] =
	"WITH v AS (SELECT * FROM unnest($1::text[], $2::text[], $3::int[],"
	"  $4::text[], $5::bool[]) AS t(domain, type, ttl, addresses,"
	"  proxied)),"
	" u AS (UPDATE ddup_published p SET ttl = v.ttl,"
	"  addresses = v.addresses, proxied = v.proxied FROM v"
	"  WHERE p.domain = v.domain AND p.type = v.type"
	"  AND (p.ttl, p.addresses, p.proxied) IS DISTINCT FROM"
	"  (v.ttl, v.addresses, v.proxied))"
	" INSERT INTO ddup_published AS p (domain, type, ttl, addresses,"
	" proxied) SELECT * FROM v WHERE NOT EXISTS (SELECT 1 FROM"
	"  ddup_published x WHERE x.domain = v.domain AND x.type = v.type)"
	" ON CONFLICT (domain, type) DO UPDATE SET ttl = excluded.ttl,"
	" addresses = excluded.addresses, proxied = excluded.proxied";

static const char sql_change[] =
	"INSERT INTO ddup_change (time, domain, type, ttl, old, new, tier,"
	" tier_rank, tier_location, ok, error)"
	" VALUES (" PG_TS("$1") ", $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

static const char sql_count[] =
	"INSERT INTO ddup_counter (domain, endpoint, name, value)"
	" VALUES ($1, '', $2, 1) ON CONFLICT (domain, endpoint, name)"
	" DO UPDATE SET value = ddup_counter.value + excluded.value";

static const char sql_event[] =
	"WITH e AS (INSERT INTO ddup_event (time, domain, event, endpoint,"
	" body) VALUES (" PG_TS("$1") ", $2, $3, $4, $5) RETURNING id)"
	" INSERT INTO ddup_delivery (event, notifier, attempts)"
	" SELECT e.id, n, 0 FROM e, unnest($6::text[]) AS n";

/* The prunes, with $1 and $2 the configured domains and endpoint names. */
static const char *const sql_gone[] = {
	/* Before this save's tick: the open streak ends at the last. */
	"WITH g AS (DELETE FROM ddup_endpoint_base e WHERE NOT EXISTS"
	" (SELECT 1 FROM unnest($1::text[], $2::text[]) AS c(domain, name)"
	" WHERE c.domain = e.domain AND c.name = e.name)"
	" RETURNING e.domain, e.streak)"
	" UPDATE ddup_streak_base s SET " PG_FREEZE("s", "t.saves", "t.saved")
	" FROM g LEFT JOIN ddup_tick t ON t.domain = g.domain"
	" WHERE s.id = g.streak AND s.upto IS NOT NULL",
	"DELETE FROM ddup_vote v WHERE NOT EXISTS (SELECT 1 FROM"
	" unnest($1::text[], $2::text[]) AS c(domain, name)"
	" WHERE c.domain = v.domain AND c.name = v.endpoint)",
	"DELETE FROM ddup_cert x WHERE NOT EXISTS (SELECT 1 FROM"
	" unnest($1::text[], $2::text[]) AS c(domain, name)"
	" WHERE c.domain = x.domain AND c.name = x.endpoint)",
};

/* The certificates whose expiry changed (few runs have any). */
static const char sql_certs[] =
	"INSERT INTO ddup_cert (domain, endpoint, expires)"
	" SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])"
	" ON CONFLICT (domain, endpoint) DO UPDATE SET expires = excluded.expires";

/* And with $1 the configured domains (and $2..$4 their managed types). */
static const struct {
	const char	*sql;
	int		 nparams;
} sql_gone_dom[] = {
	{ "DELETE FROM ddup_domain WHERE name <> ALL ($1::text[])", 1 },
	{ "DELETE FROM ddup_round WHERE domain <> ALL ($1::text[])", 1 },
	{ "DELETE FROM ddup_tick WHERE domain <> ALL ($1::text[])", 1 },
	{ "DELETE FROM ddup_failback WHERE domain <> ALL ($1::text[])", 1 },
	{ "DELETE FROM ddup_failover WHERE domain <> ALL ($1::text[])", 1 },
	{ "DELETE FROM ddup_published p WHERE NOT EXISTS (SELECT 1 FROM"
	  " unnest($1::text[], $2::bool[], $3::bool[], $4::bool[])"
	  " AS c(name, has4, has6, hascname) WHERE c.name = p.domain"
	  " AND ((p.type = 'A' AND c.has4) OR (p.type = 'AAAA' AND c.has6)"
	  " OR (p.type = 'CNAME' AND c.hascname)))", 4 },
};

/*
 * The drains of the endpoints no longer configured ($1, $2) and those
 * whose time ran out by $3, the run's clock: logged as ended at their
 * own expiry, or at $3 (the database's now() is not the checker's).
 * Without the names, those whose time ran out ($1) alone.
 */
#define SQL_DRAINS_GONE(now, cond) \
	"WITH gone AS (DELETE FROM ddup_drain d WHERE (d.until IS NOT NULL" \
	" AND d.until <= " PG_TS(now) ")" cond \
	" RETURNING domain, endpoint, since, until)" \
	" INSERT INTO ddup_drain_log SELECT domain, endpoint, since," \
	" least(coalesce(until, " PG_TS(now) "), " PG_TS(now) ") FROM gone"
static const char sql_drains_gone[] = SQL_DRAINS_GONE("$3", " OR NOT EXISTS"
	" (SELECT 1 FROM unnest($1::text[], $2::text[]) AS c(domain, name)"
	" WHERE c.domain = d.domain AND c.name = d.endpoint)");
static const char sql_drains_ended[] = SQL_DRAINS_GONE("$1", "");

static const char sql_pruned[] =
	"INSERT INTO ddup_meta (key, value) VALUES ('pruned', $1)"
	" ON CONFLICT (key) DO UPDATE SET value = excluded.value";

/* Streaks older than `history` ($1), unless open, into the counters. */
static const char sql_prune_streaks[] =
	"WITH gone AS (DELETE FROM ddup_streak_base s WHERE s.last < "
	PG_TS("$1") " AND s.upto IS NULL AND NOT EXISTS (SELECT 1 FROM"
	" ddup_endpoint_base e WHERE e.streak = s.id)"
	" RETURNING domain, endpoint, ok, checks)"
	" INSERT INTO ddup_counter (domain, endpoint, name, value)"
	" SELECT domain, endpoint, CASE WHEN ok THEN 'checks_pass'"
	" ELSE 'checks_fail' END, sum(checks) FROM gone GROUP BY 1, 2, 3"
	" ON CONFLICT (domain, endpoint, name)"
	" DO UPDATE SET value = ddup_counter.value + excluded.value";

/* The outbox, as state_prune_events(): $1 now, $2 the [notify] names. */
static const char sql_orphan_deliveries[] =
	"UPDATE ddup_delivery SET given_up = " PG_TS("$1") ","
	" last_error = 'no [notify] section of this name any more'"
	" WHERE delivered IS NULL AND given_up IS NULL"
	" AND notifier <> ALL ($2::text[])";
static const char sql_prune_deliveries[] =
	"DELETE FROM ddup_delivery WHERE (delivered IS NOT NULL"
	" OR given_up IS NOT NULL) AND event IN (SELECT id FROM ddup_event"
	" WHERE time < " PG_TS("$1") ")";
static const char sql_prune_events[] =
	"DELETE FROM ddup_event e WHERE NOT EXISTS (SELECT 1 FROM"
	" ddup_delivery d WHERE d.event = e.id)";

/* The run's number and time, ISO-8601 UTC as in the SQLite file. */
static const char sql_meta[] =
	"INSERT INTO ddup_meta (key, value) VALUES ('runs', '1'),"
	" ('last_run', to_char(" PG_TS("$1") " AT TIME ZONE 'UTC',"
	" 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'))"
	" ON CONFLICT (key) DO UPDATE SET value = CASE WHEN"
	" excluded.key = 'runs' THEN (ddup_meta.value::bigint + 1)::text"
	" ELSE excluded.value END";

static void
queue_certs(struct pgq *q, const struct outcome *o,
    const unsigned char *decided)
{
	struct pg_arr a[3];
	const char *p[3];
	size_t i, j;

	memset(a, 0, sizeof(a));
	for (i = 0; i < outcome_ndomains(o); i++) {
		const struct outcome_domain *od = outcome_domain(o, i);

		for (j = 0; decided[i] && j < od->neps; j++) {
			const struct outcome_ep *e = &od->eps[j];

			if (e->cert_expires == e->cert_expires_before ||
			    e->cert_expires == 0)
				continue;
			pga_add(&a[0], od->cfg->name);
			pga_add(&a[1], e->cfg->name);
			pga_lld(&a[2], e->cert_expires);
		}
	}
	if (a[0].n > 0) {
		for (i = 0; i < 3; i++)
			p[i] = pga_text(&a[i]);
		pgq_add(q, "cannot save the certificates", sql_certs, 3, p);
	}
	for (i = 0; i < 3; i++)
		pga_free(&a[i]);
}

/* The domains' rows and published sets, columns of arrays. */
enum { D_NAME, D_PROVIDER, D_TTL, D_TIER, D_RANK, D_LOCATION, D_CHANGE,
	D_ERROR, D_UNHEALTHY, D_UNSURE, D_MAX };
enum { P_DOMAIN, P_TYPE, P_TTL, P_ADDRESSES, P_PROXIED, P_MAX };

struct dom_cols {
	struct pg_arr	 d[D_MAX];
	struct pg_arr	 p[P_MAX];
};

static void
add_domain_row(struct dom_cols *a, const struct outcome_domain *od)
{
	char err[512];
	/* The fallback addresses are no tier's (ddup_failover says so). */
	int has_tier = od->has_tier && !od->tier.fallback;

	pga_add(&a->d[D_NAME], od->cfg->name);
	pga_add(&a->d[D_PROVIDER], od->cfg->provider->name);
	pga_lld(&a->d[D_TTL], od->cfg->pol.ttl);
	if (has_tier)
		pga_lld(&a->d[D_TIER], od->tier.priority);
	else
		pga_add(&a->d[D_TIER], NULL);
	if (has_tier && od->tier.located && od->tier.rank >= 0)
		pga_lld(&a->d[D_RANK], od->tier.rank);
	else
		pga_add(&a->d[D_RANK], NULL);
	pga_add(&a->d[D_LOCATION], has_tier && od->tier.location != NULL &&
	    od->tier.location[0] != '\0' ? od->tier.location : NULL);
	pga_lld(&a->d[D_CHANGE], od->last_change);
	err[0] = '\0';
	if (od->last_error != NULL)
		text_printable_copy(err, sizeof(err), od->last_error);
	pga_add(&a->d[D_ERROR], err[0] != '\0' ? err : NULL);
	pga_add(&a->d[D_UNHEALTHY], pg_bool(od->unhealthy));
	pga_add(&a->d[D_UNSURE], pg_bool(od->unsure));
}

static void
queue_domain_cols(struct pgq *q, struct dom_cols *a)
{
	const char *p[D_MAX];
	int i;

	if (a->d[D_NAME].n > 0) {
		for (i = 0; i < D_MAX; i++)
			p[i] = pga_text(&a->d[i]);
		pgq_add(q, "cannot save the domains", sql_domain, D_MAX, p);
	}
	if (a->p[P_DOMAIN].n > 0) {
		for (i = 0; i < P_MAX; i++)
			p[i] = pga_text(&a->p[i]);
		pgq_add(q, "cannot save the published sets", sql_published,
		    P_MAX, p);
	}
	for (i = 0; i < D_MAX; i++)
		pga_free(&a->d[i]);
	for (i = 0; i < P_MAX; i++)
		pga_free(&a->p[i]);
}

static void
queue_failover(struct pgq *q, const struct outcome_domain *od)
{
	const char *p[4];
	char b[32], why[ST_ERROR_MAX];

	p[0] = od->cfg->name;
	if (od->failover_since == 0) {
		pgq_add(q, "cannot save the failover", "DELETE FROM"
		    " ddup_failover WHERE domain = $1", 1, p);
		return;
	}
	p[1] = pg_lld(b, od->failover_since);
	p[2] = od->failover_reason != NULL ? text_printable_copy(why,
	    sizeof(why), od->failover_reason) : NULL;
	p[3] = st_fail_open_str(od->fail_open);
	pgq_add(q, "cannot save the failover", sql_failover, 4, p);
}

static void
queue_domain(struct pgq *q, struct dom_cols *a, long long now,
    const struct outcome_domain *od)
{
	const struct publication *p = od->pub;
	const char *v[11];
	char b[5][32], *list;
	size_t k;

	add_domain_row(a, od);
	/* Written as it begins or ends: a steady run writes nothing. */
	if (od->failover_since != od->failover_since_before ||
	    od->fail_open != od->fail_open_before)
		queue_failover(q, od);
	if (p != NULL && od->synced)
		for (k = 0; k < RR_NTYPES; k++) {
			if (!p->managed[k])
				continue;
			list = rrset_join(&p->want[k]);
			pga_add(&a->p[P_DOMAIN], od->cfg->name);
			pga_add(&a->p[P_TYPE], rrtype_str(p->want[k].type));
			pga_lld(&a->p[P_TTL], p->want[k].ttl);
			pga_add(&a->p[P_ADDRESSES], list);
			pga_add(&a->p[P_PROXIED], pg_bool(p->want[k].proxied));
			free(list);
		}
	/* For metricsFile: a counter that only grows, written on events. */
	if (od->changed || od->failed) {
		v[0] = od->cfg->name;
		v[1] = od->changed ? "dns_ok" : "dns_failed";
		pgq_add(q, "cannot count", sql_count, 2, v);
	}
	/* Done once DNS holds the best tier. */
	if (od->failback_now && od->synced) {
		v[0] = od->cfg->name;
		pgq_add(q, "cannot clear the failback", "DELETE FROM"
		    " ddup_failback WHERE domain = $1", 1, v);
	}
	for (k = 0; p != NULL && k < p->nchanges; k++) {
		v[0] = pg_lld(b[0], now);
		v[1] = od->cfg->name;
		v[2] = rrtype_str(p->changes[k].type);
		v[3] = pg_lld(b[1], od->cfg->pol.ttl);
		v[4] = p->changes[k].old != NULL ? p->changes[k].old : "";
		v[5] = p->changes[k].new != NULL ? p->changes[k].new : "";
		v[6] = p->tier.priority >= 0 ? pg_lld(b[2],
		    p->tier.priority) : NULL;
		v[7] = p->tier.priority >= 0 && p->tier.located &&
		    p->tier.rank >= 0 ? pg_lld(b[3], p->tier.rank) : NULL;
		v[8] = p->tier.priority >= 0 ? p->tier.location : NULL;
		v[9] = pg_bool(!p->failed);
		v[10] = p->failed ? p->error : NULL;
		pgq_add(q, "cannot save the change history", sql_change, 11,
		    v);
	}
}

/* The events of the decided domains (outbox.c builds them). */
struct event_arg {
	struct pgq			*q;
	const struct outcome		*o;
	const unsigned char		*decided;
};

static int
queue_event(void *arg, const struct outcome_event *ev, const char *body,
    const char *const *names, size_t n)
{
	struct event_arg *a = arg;
	struct pg_arr to;
	const char *p[6];
	char buf[32];
	size_t i;

	for (i = 0; i < outcome_ndomains(a->o); i++)
		if (outcome_domain(a->o, i) == ev->domain)
			break;
	if (i == outcome_ndomains(a->o) || !a->decided[i] || n == 0)
		return 0;
	memset(&to, 0, sizeof(to));
	for (i = 0; i < n; i++)
		pga_add(&to, names[i]);
	p[0] = pg_lld(buf, ev->time);
	p[1] = ev->domain->cfg->name;
	p[2] = event_type_str(ev->kind);
	p[3] = ev->ep != NULL ? ev->ep->cfg->name : NULL;
	p[4] = body;
	p[5] = pga_text(&to);
	pgq_add(a->q, "cannot store an event", sql_event, 6, p);
	pga_free(&to);
	return 0;
}

/* Drops what is no longer configured, and records names as pruned to. */
static void
queue_gone(struct pgq *q, const struct config *c, long long now,
    const char *names)
{
	struct pg_arr dom, ep_dom, ep_name, has[3];
	const char *p[4];
	char buf[32];
	size_t i, j;

	memset(&dom, 0, sizeof(dom));
	memset(&ep_dom, 0, sizeof(ep_dom));
	memset(&ep_name, 0, sizeof(ep_name));
	memset(has, 0, sizeof(has));
	for (i = 0; i < c->ndomains; i++) {
		const struct domain_cfg *d = &c->domains[i];

		pga_add(&dom, d->name);
		pga_add(&has[0], pg_bool(d->has4));
		pga_add(&has[1], pg_bool(d->has6));
		pga_add(&has[2], pg_bool(d->hascname));
		for (j = 0; j < d->neps; j++) {
			pga_add(&ep_dom, d->name);
			pga_add(&ep_name, d->eps[j].name);
		}
	}
	p[0] = pga_text(&ep_dom);
	p[1] = pga_text(&ep_name);
	for (i = 0; i < sizeof(sql_gone) / sizeof(sql_gone[0]); i++)
		pgq_add(q, "cannot drop what is no longer configured",
		    sql_gone[i], 2, p);
	p[2] = pg_lld(buf, now);
	pgq_add(q, "cannot prune the drains", sql_drains_gone, 3, p);
	p[0] = pga_text(&dom);
	for (i = 0; i < 3; i++)
		p[i + 1] = pga_text(&has[i]);
	for (i = 0; i < sizeof(sql_gone_dom) / sizeof(sql_gone_dom[0]); i++)
		pgq_add(q, "cannot drop what is no longer configured",
		    sql_gone_dom[i].sql, sql_gone_dom[i].nparams, p);
	if (names[0] != '\0')
		pgq_add(q, "cannot record the prune", sql_pruned, 1, &names);
	pga_free(&dom);
	pga_free(&ep_dom);
	pga_free(&ep_name);
	for (i = 0; i < 3; i++)
		pga_free(&has[i]);
}

/* Drops what is no longer configured (PRUNE_EVERY), and what is too old. */
static void
queue_prune(const struct pg_state *st, struct pgq *q, const struct config *c,
    long long now)
{
	struct pg_arr notif;
	const char *p[2];
	char buf[32], names[CONFIG_DIGEST_LEN];
	size_t i;

	config_names_digest(c, names);
	if (names[0] == '\0' || strcmp(names, st->pruned) != 0 ||
	    st->slot % PRUNE_EVERY == 0)
		queue_gone(q, c, now, names);
	else {
		p[0] = pg_lld(buf, now);
		pgq_add(q, "cannot prune the drains", sql_drains_ended, 1, p);
	}
	memset(&notif, 0, sizeof(notif));
	/* Before the epoch means "keep everything". */
	if (now - c->history_ms > 0) {
		p[0] = pg_lld(buf, now - c->history_ms);
		pgq_add(q, "cannot prune the check history",
		    sql_prune_streaks, 1, p);
		/* Ended drains are history of the same kind: kept as long. */
		pgq_add(q, "cannot prune the drain history", "DELETE FROM"
		    " ddup_drain_log WHERE until < " PG_TS("$1"), 1, p);
	}
	if (now - CHANGES_KEEP_MS > 0) {
		p[0] = pg_lld(buf, now - CHANGES_KEEP_MS);
		pgq_add(q, "cannot prune the change history", "DELETE FROM"
		    " ddup_change WHERE time < " PG_TS("$1"), 1, p);
	}
	for (i = 0; i < c->nnotifiers; i++)
		pga_add(&notif, c->notifiers[i].name);
	p[0] = pg_lld(buf, now);
	p[1] = pga_text(&notif);
	pgq_add(q, "cannot prune events", sql_orphan_deliveries, 2, p);
	p[0] = pg_lld(buf, now - c->history_ms);
	pgq_add(q, "cannot prune events", sql_prune_deliveries, 1, p);
	pgq_add(q, "cannot prune events", sql_prune_events, 0, NULL);
	pga_free(&notif);
}

static void
queue_control(struct pg_state *st, struct pgq *q, const struct config *c,
    const struct outcome *o)
{
	const struct outcome_control *ctl = outcome_control(o);
	const char *p[3], *checker;
	char buf[32], result[160];

	checker = st->checker != NULL ? st->checker : c->checker;
	if (ctl->url == NULL || checker == NULL)
		return;
	p[0] = checker;
	if (ctl->since == 0) {
		pgq_add(q, "cannot save the controlUrl's state", "DELETE FROM"
		    " ddup_control WHERE checker = $1", 1, p);
		return;
	}
	text_printable_copy(result, sizeof(result), ctl->result != NULL ?
	    ctl->result : "");
	p[1] = pg_lld(buf, ctl->since);
	p[2] = result;
	pgq_add(q, "cannot save the controlUrl's state", "INSERT INTO"
	    " ddup_control (checker, since, result) VALUES ($1, " PG_TS("$2")
	    ", $3) ON CONFLICT (checker) DO UPDATE SET since = excluded.since,"
	    " result = excluded.result", 3, p);
}

void
pgd_save_queue(struct pg_state *st, struct pgq *q, const struct config *c,
    const struct outcome *o, const unsigned char *decided)
{
	struct event_arg ea;
	struct dom_cols dc;
	struct pg_arr dom;
	const char *p[2];
	char buf[32];
	long long now = outcome_time(o);
	size_t i, n = outcome_ndomains(o);
	int any = 0;

	memset(&dom, 0, sizeof(dom));
	for (i = 0; i < n; i++) {
		const struct outcome_domain *od = outcome_domain(o, i);

		if (!decided[i])
			continue;
		any = 1;
		pga_add(&dom, od->cfg->name);
	}
	pgd_save_endpoints(st, q, c, o, decided);
	queue_certs(q, o, decided);
	memset(&dc, 0, sizeof(dc));
	for (i = 0; i < n; i++)
		if (decided[i])
			queue_domain(q, &dc, now, outcome_domain(o, i));
	queue_domain_cols(q, &dc);
	/* Before anything is sent: none is lost to a run killed then. */
	ea.q = q;
	ea.o = o;
	ea.decided = decided;
	(void)outbox_each(o, c, queue_event, &ea);
	/*
	 * A run that decided nothing leaves the pruning to one that did:
	 * the checkers of a slot would otherwise all queue on its rows.
	 */
	if (any)
		queue_prune(st, q, c, now);
	queue_control(st, q, c, o);
	/* Last: the rows every run writes are held the shortest. */
	p[0] = pg_lld(buf, now);
	if (any) {
		p[1] = pga_text(&dom);
		pgq_add(q, "cannot count the saves", sql_tick, 2, p);
	}
	pgq_add(q, "cannot record the run", sql_meta, 1, p);
	pga_free(&dom);
}
