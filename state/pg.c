/*
 * The PostgreSQL backend (state/pg.h), for a `state` that is a
 * postgresql:// or postgres:// URI (ddup-check(8), SEVERAL CHECKERS):
 * its table, state_pg, and the one downcast to its own open, pg_of();
 * connecting (connect_timeout
 * 5 s and TCP's timeouts unless the URI sets them; the server's side
 * lock_timeout, statement_timeout and keepalives where nothing set
 * them), the checker's session advisory lock (a
 * second run of the same checker exits 3), the schema (made or upgraded
 * under an advisory lock, so that checkers starting together do not
 * race), and the rounds: the report, the round's transaction under the
 * domains' transaction-scoped advisory locks, and the outcome's.  The
 * rows themselves are state/pg_data.c's.
 *
 * The slot is always the database's: floor(now() in ms / interval), for
 * reports as for rounds, so the checkers' own clocks do not matter.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "config.h"
#include "log.h"
#include "pguri.h"
#include "state.h"
#include "state/backend.h"
#include "state/pg.h"
#include "util.h"
#include "vote.h"

/* Keys of the advisory locks, as text hashed by the server. */
#define PG_LOCK_SCHEMA	"ddup-check schema"
#define PG_LOCK_CHECKER	"ddup-check checker "
#define PG_LOCK_ROUND	"ddup-check round "

/*
 * ddup's limits for the server's side of a session, each set only where
 * nothing set it (neither the server's file, the database, the role nor
 * the URI's options): a lock is waited for 5 s (as SQLite's busy
 * timeout), a statement runs 30 s at most, and the server probes a
 * silent client as the client probes it (after a partition that drops
 * packets it would otherwise keep the lost run's session, and with it
 * the checker's lock, for the system's two hours of keepalive).  A
 * parameter this server lacks is skipped.  Set by a query, not in the
 * startup packet's options, which PgBouncer refuses.
 */
#define PG_LIMITS	"(SELECT count(set_config(s.name, d.v, false)) " \
	"FROM pg_settings AS s JOIN (VALUES ('lock_timeout', '5s'), " \
	"('statement_timeout', '30s'), ('tcp_keepalives_idle', '10'), " \
	"('tcp_keepalives_interval', '5'), ('tcp_keepalives_count', '3'), " \
	"('tcp_user_timeout', '15000')) AS d(n, v) ON s.name = d.n WHERE " \
	"s.source = 'default')"

/* The database's slot now, and its time in ms; $1 the interval in ms. */
#define PG_SLOT_NOW	"floor(extract(epoch FROM now()) * 1000 / $1)::bigint"

/*
 * The domains' round locks ($1 a text array), taken in one order by
 * every checker, so that two never wait for each other.
 */
#define PG_LOCK_DOMAINS	"SELECT d, pg_advisory_xact_lock(hashtextextended(" \
	"'" PG_LOCK_ROUND "' || d, 0)) FROM (SELECT d FROM " \
	"unnest($1::text[]) AS d ORDER BY d) AS s"

struct pg_state *
pg_of(struct state *st)
{
	if (st->be != &state_pg) {
		fprintf(stderr, "ddup-check: BUG: a %s state given to the "
		    "PostgreSQL backend\n", st->be != NULL ? st->be->name :
		    "(none)");
		abort();
	}
	return (struct pg_state *)st;
}

static int
pg_handles(const char *where)
{
	return pguri_is(where);
}

/*
 * One statement without parameters; 0, or -1 with err set.  *rt counts
 * the round trips of an open, before its struct state exists.
 */
static int
pg_exec(PGconn *c, long long *rt, const char *sql, const char *where,
    const char *what, char *err, size_t errlen)
{
	PGresult *r = PQexec(c, sql);
	int st = PQresultStatus(r), rc = 0;

	(*rt)++;
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		pg_format_err(err, errlen, where, what,
		    PQresultErrorMessage(r));
		rc = -1;
	}
	PQclear(r);
	return rc;
}

/* The first value of a one-row answer to sql; NULL with err set. */
static char *
pg_value(PGconn *c, long long *rt, const char *sql, const char *where,
    const char *what, char *err, size_t errlen)
{
	PGresult *r = PQexec(c, sql);
	char *v = NULL;

	(*rt)++;
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
	    PQnfields(r) == 1)
		v = xstrdup(PQgetvalue(r, 0, 0));
	else
		pg_format_err(err, errlen, where, what,
		    PQresultErrorMessage(r));
	PQclear(r);
	return v;
}

/*
 * The schema's version, in one round trip outside a transaction: 0 when
 * there is no schema yet, -1 with err on an error.
 */
static long
pg_version(PGconn *c, long long *rt, const char *where, char *err,
    size_t errlen)
{
	PGresult	*r;
	const char	*state;
	long		 ver = -1;

	r = PQexec(c, "SELECT value FROM ddup_meta WHERE key = "
	    "'schema_version'");
	(*rt)++;
	state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
		if (parse_long(PQgetvalue(r, 0, 0), 0, 1000000, &ver) == -1) {
			pg_format_err(err, errlen, where, "the schema version "
			    "is not a number", NULL);
			ver = -1;
		}
	} else if (state != NULL && strcmp(state, "42P01") == 0)
		ver = 0;		/* undefined_table: none yet */
	else
		pg_format_err(err, errlen, where, "cannot read the schema "
		    "version", PQresultErrorMessage(r));
	PQclear(r);
	return ver;
}

/*
 * The schema as this version needs it: read first, and when it must be
 * made or upgraded, that is done in one transaction under the schema's
 * advisory lock; a newer one is refused.
 */
static int
pg_migrate(PGconn *c, long long *rt, const char *where, char *err,
    size_t errlen)
{
	char sql[128], what[96], *v = NULL;
	long lver;
	int ver = 0, i, rc = -1;

	if ((lver = pg_version(c, rt, where, err, errlen)) == -1)
		return -1;
	if (lver == pg_schema_version)
		return 0;
	if (pg_exec(c, rt, "BEGIN; SELECT pg_advisory_xact_lock("
	    "hashtextextended('" PG_LOCK_SCHEMA "', 0))", where,
	    "cannot lock the schema", err, errlen) == -1)
		goto out;
	if ((v = pg_value(c, rt, "SELECT to_regclass('ddup_meta') IS NOT "
	    "NULL", where, "cannot read the schema", err, errlen)) == NULL)
		goto out;
	if (strcmp(v, "t") == 0) {
		free(v);
		if ((v = pg_value(c, rt, "SELECT value FROM ddup_meta WHERE key ="
		    " 'schema_version'", where, "cannot read the schema "
		    "version", err, errlen)) == NULL)
			goto out;
		if (parse_long(v, 0, 1000000, &lver) == -1) {
			pg_format_err(err, errlen, where, "the schema "
			    "version is not a number", NULL);
			goto out;
		}
		ver = (int)lver;
	}
	if (ver > pg_schema_version || ver < 0) {
		snprintf(what, sizeof(what), "schema version %d is not one "
		    "this ddup-check knows (%d or older)", ver,
		    pg_schema_version);
		pg_format_err(err, errlen, where, what, NULL);
		goto out;
	}
	for (i = ver; i < pg_schema_version; i++)
		if (pg_exec(c, rt, pg_migrations[i], where, "cannot upgrade the "
		    "schema", err, errlen) == -1)
			goto out;
	snprintf(sql, sizeof(sql), "UPDATE ddup_meta SET value = '%d' WHERE "
	    "key = 'schema_version'; COMMIT", pg_schema_version);
	if (pg_exec(c, rt, sql, where, "cannot upgrade the schema", err,
	    errlen) == -1)
		goto out;
	rc = 0;
out:
	free(v);
	if (rc == -1)
		PQclear(PQexec(c, "ROLLBACK"));
	return rc;
}

/* The checker's session lock: 1 taken, 0 held by another run, -1 error. */
static int
pg_lock_checker(PGconn *c, long long *rt, const char *checker,
    const char *where, char *err, size_t errlen)
{
	const char *params[1];
	char *key;
	PGresult *r;
	int rc;

	key = xmalloc(strlen(PG_LOCK_CHECKER) + strlen(checker) + 1);
	sprintf(key, "%s%s", PG_LOCK_CHECKER, checker);
	params[0] = key;
	/* The session's limits in the same round trip: it never waits. */
	r = PQexecParams(c, "SELECT pg_try_advisory_lock(hashtextextended($1,"
	    " 0)), " PG_LIMITS, 1, NULL, params, NULL, NULL, 0);
	(*rt)++;
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
		pg_format_err(err, errlen, where, "cannot take the "
		    "checker's lock", PQresultErrorMessage(r));
		rc = -1;
	} else
		rc = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	PQclear(r);
	free(key);
	return rc;
}

/*
 * A read-only open's check of the schema: 1 as this version needs it, 0
 * none yet (nothing was ever written: an empty state), -1 with err.
 */
static int
pg_schema_ready(PGconn *c, long long *rt, const char *where, char *err,
    size_t errlen)
{
	char	 what[160];
	long	 ver;

	if ((ver = pg_version(c, rt, where, err, errlen)) <= 0)
		return (int)ver;
	if (ver != pg_schema_version) {
		snprintf(what, sizeof(what), "schema version %ld, this "
		    "ddup-check's is %d: a run (not --status or --dry-run) "
		    "upgrades an older one", ver, pg_schema_version);
		pg_format_err(err, errlen, where, what, NULL);
		return -1;
	}
	return 1;
}

/* The names of c's domains (mask NULL: all), as a text array literal. */
static char *
pg_domains(const struct config *c, const unsigned char *mask)
{
	struct pg_arr	 a = { 0 };
	char		*s;
	size_t		 i;

	for (i = 0; i < c->ndomains; i++)
		if (mask == NULL || mask[i])
			pga_add(&a, c->domains[i].name);
	s = xstrdup(pga_text(&a));
	pga_free(&a);
	return s;
}

/* Index of the domain or checker named s in c, or (size_t)-1. */
static size_t
pg_domain_index(const struct config *c, const char *s)
{
	size_t i;

	for (i = 0; i < c->ndomains; i++)
		if (strcmp(c->domains[i].name, s) == 0)
			return i;
	return (size_t)-1;
}

static size_t
pg_checker_index(const struct config *c, const char *s)
{
	size_t i;

	for (i = 0; i < c->ncheckers; i++)
		if (strcmp(c->checkers[i], s) == 0)
			return i;
	return (size_t)-1;
}

/*
 * Appends the reads of the fleet: each checker's latest report (a
 * checker's latest is in the window exactly when any of its reports
 * is, slots only growing) and each domain's last round (each
 * endpoint's last votes come with its row, state/pg_data.c).  Returns
 * the index of the first.
 */
static size_t
pg_fleet_queue(struct pgq *q, const char *doms)
{
	const char		*p[1];
	size_t			 first = pgq_count(q);

	pgq_add(q, "cannot read the reports", "SELECT DISTINCT ON (checker) "
	    "checker, seq, slot, digest, results, floor(extract(epoch FROM "
	    "at) * 1000)::bigint FROM ddup_report ORDER BY checker, seq DESC",
	    0, NULL);
	p[0] = doms;
	/* Rows in byte order, as pg_row_find() expects. */
	pgq_add(q, "cannot read the rounds", "SELECT domain, slot, floor("
	    "extract(epoch FROM at) * 1000)::bigint, checker, heard, void_all "
	    "FROM ddup_round WHERE domain = ANY($1::text[]) ORDER BY domain "
	    "COLLATE \"C\"", 1, p);
	return first;
}

/* The latest reports (the first of pg_fleet_queue()'s answers) into f. */
static void
pg_fleet_checkers(const PGresult *r, const struct config *c,
    const char *digest, struct st_checker *v)
{
	int	 i;
	size_t	 k;

	for (k = 0; k < c->ncheckers; k++)
		v[k].name = c->checkers[k];
	for (i = 0; r != NULL && i < PQntuples(r); i++) {
		if ((k = pg_checker_index(c, pg_getstr(r, i, 0))) ==
		    (size_t)-1)
			continue;	/* not of this fleet */
		v[k].slot = pg_getlld(r, i, 2);
		v[k].in_step = digest != NULL &&
		    strcmp(pg_getstr(r, i, 3), digest) == 0;
		free(v[k].results);
		v[k].results = xstrdup(pg_getstr(r, i, 4));
		v[k].nresults = strlen(v[k].results);
		v[k].at = pg_getlld(r, i, 5);
	}
}

/* The fleet of the snapshot: checkers and rounds into out. */
static void
pg_fleet_parse(const struct pgq *q, size_t first, const struct config *c,
    const char *digest, struct st_snapshot *out)
{
	const PGresult	*r;
	struct st_fleet	*f;
	size_t		 i;
	int		 row;

	f = xcalloc(1, sizeof(*f));
	f->ncheckers = c->ncheckers;
	f->checkers = xcalloc(c->ncheckers + 1, sizeof(*f->checkers));
	f->rounds = xcalloc(c->ndomains + 1, sizeof(*f->rounds));
	pg_fleet_checkers(pgq_result(q, first), c, digest, f->checkers);
	r = pgq_result(q, first + 1);
	for (i = 0; r != NULL && i < c->ndomains; i++) {
		struct st_last_round *lr = &f->rounds[i];

		if ((row = pg_row_find(r, c->domains[i].name, NULL)) < 0)
			continue;
		lr->slot = pg_getlld(r, row, 1);
		lr->at = pg_getlld(r, row, 2);
		snprintf(lr->checker, sizeof(lr->checker), "%s",
		    pg_getstr(r, row, 3));
		lr->heard = (long)pg_getlld(r, row, 4);
		lr->void_all = pg_getbool(r, row, 5);
	}
	out->fleet = f;
}

/* --status: the stored state and what is known of the fleet. */
static int
pg_load(struct state *st, const struct config *c, int results,
    long long now, struct st_snapshot *out)
{
	struct pg_state	*pg = pg_of(st);
	struct pgq	*q = pgq_new(pg);
	char		 digest[CONFIG_DIGEST_LEN], *doms = pg_domains(c, NULL);
	size_t		 first, fleet;
	int		 rc = -1;

	pgq_add(q, "cannot begin", "BEGIN ISOLATION LEVEL REPEATABLE READ "
	    "READ ONLY", 0, NULL);
	first = pgd_load_queue(pg, q, c, results, now, out);
	fleet = pg_fleet_queue(q, doms);
	pgq_add(q, "cannot end", "COMMIT", 0, NULL);
	if (pgq_run(q) == -1)
		goto out;
	if (pgd_load_parse(pg, q, first, c, out) == -1)
		goto out;
	config_decision_digest(c, digest);
	pg_fleet_parse(q, fleet, c, digest, out);
	rc = 0;
out:
	free(doms);
	pgq_free(q);
	return rc;
}

/*
 * The votes the round read, for its commit to leave those unchanged
 * alone without sending them: the round's transaction holds its
 * domains' locks from before that read to the commit, and only a
 * run holding them writes a domain's votes.
 */
static void
pg_keep_votes(struct pg_state *pg, const struct config *c,
    const struct st_snapshot *snap)
{
	size_t	 i, n = 0;

	for (i = 0; i < c->ndomains; i++)
		n += c->domains[i].neps;
	free(pg->votes);
	pg->votes = xcalloc(n + 1, sizeof(*pg->votes));
	for (i = 0; i < n; i++) {
		const struct st_ep_snap *e = &snap->eps[i];

		pg->votes[i].has = e->has_votes;
		pg->votes[i].npass = e->votes_pass;
		pg->votes[i].nfail = e->votes_fail;
		pg->votes[i].verdict = e->verdict;
	}
}

/* The vote as stored: nothing to send. */
static int
pg_vote_same(const struct pg_vote *s, const struct vote_ep *v)
{
	return s->has && s->npass == (long)v->npass &&
	    s->nfail == (long)v->nfail && s->verdict == v->verdict;
}

/*
 * The window's reports for the vote, from the checkers' latest; a dry
 * run's own results count as this checker's report of this slot.
 */
static void
pg_window(const struct config *c, const struct st_report_in *in,
    struct st_round *rd)
{
	size_t	 k, n = 0, me = pg_checker_index(c, c->checker);

	rd->reports = xcalloc(c->ncheckers + 1, sizeof(*rd->reports));
	for (k = 0; k < rd->ncheckers; k++) {
		struct st_checker *ck = &rd->checkers[k];

		if (in->dry_run && k == me) {
			free(ck->results);
			ck->results = xstrdup(in->results);
			ck->nresults = in->nresults;
			ck->slot = rd->slot;
			ck->in_step = 1;
		}
		if (ck->results == NULL)
			continue;
		rd->reports[n].checker = k;
		rd->reports[n].slot = ck->slot;
		rd->reports[n].seq = 1;
		rd->reports[n].in_step = ck->in_step;
		rd->reports[n].results = ck->results;
		rd->reports[n].nresults = ck->nresults;
		n++;
	}
	rd->nreports = n;
}

/*
 * The run's report, then the round's transaction up to its decision: the
 * domains' locks, which of them another run took in this slot, the
 * snapshot and the fleet, in one batch.  The transaction stays open for
 * pg_round_commit().  A dry run writes and locks nothing.
 */
static int
pg_round_begin(struct state *st, const struct config *c,
    const struct st_report_in *in, struct st_snapshot *out,
    struct st_round *rd)
{
	struct pg_state	*pg = pg_of(st);
	struct pgq	*q = pgq_new(pg);
	const PGresult	*r;
	const char	*p[5];
	char		 ival[32], *doms = pg_domains(c, NULL);
	char		 digest[CONFIG_DIGEST_LEN];
	size_t		 first, fleet, slotq, i;
	int		 rc = -1, takes;

	rd->shared = 1;
	free(pg->votes);
	pg->votes = NULL;	/* until this round's are read */
	takes = !in->dry_run && !in->control_failed;
	pg_lld(ival, c->interval_ms);
	/* Only a fleet compares digests: a SQLite run never computes one. */
	config_decision_digest(c, digest);
	if (!in->dry_run) {
		p[0] = ival;
		p[1] = pg->checker;
		p[2] = digest;
		p[3] = in->results;
		/*
		 * Its commit does not wait for the WAL to reach the disk:
		 * a report a crash loses is a checker missing from the
		 * slot, which the quorum already allows for, and a later
		 * commit that waits (the round's, a save's) takes it along.
		 */
		pgq_add(q, "cannot record the report", "BEGIN", 0, NULL);
		pgq_add(q, "cannot record the report", PG_NO_FLUSH_WAIT, 0,
		    NULL);
		pgq_add(q, "cannot record the report", "INSERT INTO ddup_report "
		    "(checker, at, slot, digest, results) VALUES ($2, now(), "
		    PG_SLOT_NOW ", $3, $4)", 4, p);
		pgq_add(q, "cannot record the report", "COMMIT", 0, NULL);
		/*
		 * On its own: in one batch with the BEGIN below it would be
		 * part of the round's transaction, unseen by a round that
		 * holds a lock this one waits for, and lost with a run
		 * killed while it waits.
		 */
		if (pgq_run(q) == -1)
			goto out;
	}
	pgq_add(q, "cannot begin the round", in->dry_run ? "BEGIN "
	    "ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN", 0, NULL);
	p[0] = ival;
	slotq = pgq_count(q);
	pgq_add(q, "cannot read the database's clock", "SELECT " PG_SLOT_NOW,
	    1, p);
	p[0] = doms;
	if (takes)
		pgq_add(q, "cannot lock the rounds", PG_LOCK_DOMAINS, 1, p);
	/* Its read of the rounds, after the locks, says which are taken. */
	first = pgd_load_queue(pg, q, c, in->dry_run, now_ms(), out);
	fleet = pg_fleet_queue(q, doms);
	if (pgq_run(q) == -1)
		goto out;
	r = pgq_result(q, slotq);
	rd->slot = pg->slot = pg_getlld(r, 0, 0);
	if (pgd_load_parse(pg, q, first, c, out) == -1)
		goto out;
	pg_fleet_parse(q, fleet, c, digest, out);
	/* The round's view of the fleet: the same reports as the status's. */
	rd->ncheckers = c->ncheckers;
	rd->checkers = xcalloc(c->ncheckers + 1, sizeof(*rd->checkers));
	pg_fleet_checkers(pgq_result(q, fleet), c, digest, rd->checkers);
	pg_window(c, in, rd);
	for (i = 0; i < c->ndomains; i++)
		rd->decides[i] = (unsigned char)(takes || in->dry_run);
	for (i = 0; takes && i < c->ndomains; i++)
		if (out->fleet->rounds[i].slot >= rd->slot)
			rd->decides[i] = 0;	/* another run's, this slot */
	pg->cfg = c;
	pg->ndomains = c->ndomains;
	free(pg->decided);
	free(pg->marked);
	pg->decided = xcalloc(c->ndomains + 1, 1);
	pg->marked = xcalloc(c->ndomains + 1, 1);
	pg_keep_votes(pg, c, out);
	rc = 0;
out:
	free(doms);
	pgq_free(q);
	return rc;
}

/*
 * Ends the round's transaction: each round taken, with its votes and,
 * where an update may go out, the set about to be written and the domain
 * unsure; reports of the fleet older than the window are dropped.
 */
static int
pg_round_commit(struct state *st, const struct config *c,
    const struct st_round *rd, const struct st_round_dom *doms, char *err,
    size_t errlen)
{
	struct pg_state	*pg = pg_of(st);
	struct pgq	*q = pgq_new(pg);
	const char	*p[7];
	struct pg_arr	 vd = { 0 }, ve = { 0 }, vp = { 0 }, vf = { 0 },
			 vv = { 0 }, rn = { 0 }, rh = { 0 }, rv = { 0 },
			 rp = { 0 };
	char		 slot[32];
	size_t		 i, j, k;
	int		 rc = -1, any_unsure = 0;

	pg_lld(slot, rd->slot);
	for (i = 0, k = 0; i < c->ndomains; k += c->domains[i++].neps) {
		const struct domain_cfg *d = &c->domains[i];

		if (!doms[i].decides)
			continue;
		pga_add(&rn, d->name);
		pga_lld(&rh, (long long)doms[i].heard);
		pga_add(&rv, pg_bool(doms[i].void_all));
		pga_add(&rp, doms[i].pending);
		for (j = 0; doms[i].votes != NULL && j < d->neps; j++) {
			if (pg->votes != NULL && pg_vote_same(&pg->votes[k + j],
			    &doms[i].votes[j]))
				continue;
			pga_add(&vd, d->name);
			pga_add(&ve, d->eps[j].name);
			pga_lld(&vp, (long long)doms[i].votes[j].npass);
			pga_lld(&vf, (long long)doms[i].votes[j].nfail);
			pga_lld(&vv, doms[i].votes[j].verdict);
		}
		if (doms[i].will_write) {
			pgd_mark_unsure_queue(q, d->name, d->provider->name,
			    d->pol.ttl);
			pg->marked[i] = 1;
			any_unsure = 1;
		}
		pg->decided[i] = 1;
	}
	/*
	 * The rounds in one statement: an UPDATE of the rows there, not an
	 * upsert, which would lock each row before writing it (a WAL record
	 * more a domain); the domains' locks keep out another insert.
	 */
	if (rn.n > 0) {
		p[0] = pga_text(&rn);
		p[1] = slot;
		p[2] = pg->checker;
		p[3] = pga_text(&rh);
		p[4] = pga_text(&rv);
		p[5] = pga_text(&rp);
		pgq_add(q, "cannot record the round", "WITH t AS (SELECT * FROM "
		    "unnest($1::text[], $4::int[], $5::bool[], $6::text[]) AS "
		    "t(d, h, v, p)), u AS (UPDATE ddup_round r SET slot = "
		    "$2::bigint, at = now(), checker = $3::text, heard = t.h, "
		    "void_all = t.v, pending = t.p FROM t WHERE r.domain = t.d "
		    "RETURNING r.domain) INSERT INTO ddup_round (domain, slot, "
		    "at, checker, heard, void_all, pending) SELECT d, $2::bigint, "
		    "now(), $3::text, h, v, p FROM t WHERE d NOT IN (SELECT "
		    "domain FROM u)", 6, p);
	}
	/*
	 * The round's votes that differ from those it read, in one
	 * statement whatever N is; the server compares them again with the
	 * stored ones (a row's slot is that of its last change), so a
	 * steady round sends and writes none.
	 */
	if (vd.n > 0) {
		p[0] = pga_text(&vd);
		p[1] = pga_text(&ve);
		p[2] = slot;
		p[3] = pga_text(&vp);
		p[4] = pga_text(&vf);
		p[5] = pga_text(&vv);
		pgq_add(q, "cannot record the votes", "INSERT INTO ddup_vote "
		    "(domain, endpoint, slot, npass, nfail, verdict) SELECT d, "
		    "e, $3, np, nf, v FROM unnest($1::text[], $2::text[], "
		    "$4::int[], $5::int[], $6::int[]) AS t(d, e, np, nf, v) "
		    "LEFT JOIN ddup_vote o ON o.domain = t.d AND o.endpoint = "
		    "t.e WHERE o.domain IS NULL OR (o.npass, o.nfail, "
		    "o.verdict) IS DISTINCT FROM (t.np, t.nf, t.v) ON "
		    "CONFLICT (domain, endpoint) DO UPDATE SET slot = "
		    "excluded.slot, npass = excluded.npass, nfail = "
		    "excluded.nfail, verdict = excluded.verdict", 6, p);
	}
	/*
	 * A round that sends no update does not wait for the WAL either:
	 * lost to a crash, the slot's round is taken again, and decided
	 * the same from the same reports.  One that marks a domain unsure
	 * does wait, since the provider is called next.
	 */
	if (!any_unsure)
		pgq_add(q, "cannot commit the round", PG_NO_FLUSH_WAIT, 0,
		    NULL);
	p[0] = slot;
	/* Each checker's latest stays, for --status: when was it heard. */
	pgq_add(q, "cannot drop old reports", "DELETE FROM ddup_report AS r "
	    "WHERE slot < $1::bigint - 2 AND seq < (SELECT max(seq) FROM "
	    "ddup_report AS l WHERE l.checker = r.checker)", 1, p);
	pgq_add(q, "cannot commit the round", "COMMIT", 0, NULL);
	if (pgq_run(q) == -1) {
		snprintf(err, errlen, "%s", pg->base.err);
		memset(pg->decided, 0, pg->ndomains);
		goto out;
	}
	rc = 0;
out:
	pga_free(&vd);
	pga_free(&ve);
	pga_free(&vp);
	pga_free(&vf);
	pga_free(&vv);
	pga_free(&rn);
	pga_free(&rh);
	pga_free(&rv);
	pga_free(&rp);
	pgq_free(q);
	return rc;
}

/*
 * The outcome's transaction: the domains' locks again, and only those
 * whose round is still this run's are written (a run slower than an
 * interval may have seen the next slot's round taken by another).
 */
static int
pg_save(struct state *st, const struct config *c, const struct outcome *o,
    char *err, size_t errlen)
{
	struct pg_state	*pg = pg_of(st);
	struct pgq	*q = pgq_new(pg);
	unsigned char	*mine;
	const PGresult	*r;
	const char	*p[3];
	char		 slot[32], *doms;
	size_t		 i, sel;
	int		 rc = -1, row;

	mine = xcalloc(c->ndomains + 1, 1);
	doms = pg_domains(c, pg->decided);
	pgq_add(q, "cannot begin", "BEGIN", 0, NULL);
	p[0] = doms;
	pgq_add(q, "cannot lock the rounds", PG_LOCK_DOMAINS, 1, p);
	p[1] = pg_lld(slot, pg->slot);
	p[2] = pg->checker;
	sel = pgq_count(q);
	pgq_add(q, "cannot read the rounds", "SELECT domain FROM ddup_round "
	    "WHERE domain = ANY($1::text[]) AND slot = $2 AND checker = $3",
	    3, p);
	if (pgq_run(q) == -1)
		goto out;
	r = pgq_result(q, sel);
	for (row = 0; r != NULL && row < PQntuples(r); row++)
		if ((i = pg_domain_index(c, pg_getstr(r, row, 0))) !=
		    (size_t)-1 && pg->decided != NULL && pg->decided[i])
			mine[i] = 1;
	pgd_save_queue(pg, q, c, o, mine);
	pgq_add(q, "cannot commit the run", "COMMIT", 0, NULL);
	if (pgq_run(q) == -1)
		goto out;
	rc = 0;
out:
	if (rc == -1)
		snprintf(err, errlen, "%s", pg->base.err);
	free(mine);
	free(doms);
	pgq_free(q);
	return rc;
}

/*
 * publish()'s mark before an update goes out: done in the round's commit
 * for the domains it expected to change; any other in a statement of
 * its own.
 */
static int
pg_mark_unsure(struct state *st, const char *domain, const char *provider,
    long ttl, char *err, size_t errlen)
{
	struct pg_state	*pg = pg_of(st);
	struct pgq	*q;
	size_t		 i = pg->cfg != NULL ? pg_domain_index(pg->cfg, domain) :
			    (size_t)-1;
	int		 rc = 0;

	if (i != (size_t)-1 && pg->marked != NULL && pg->marked[i])
		return 0;
	q = pgq_new(pg);
	pgd_mark_unsure_queue(q, domain, provider, ttl);
	if (pgq_run(q) == -1) {
		snprintf(err, errlen, "%s", pg->base.err);
		rc = -1;
	}
	pgq_free(q);
	return rc;
}

static int
pg_open(const char *where, const char *checker, int mode, struct state **out,
    char *err, size_t errlen)
{
	/*
	 * The URI's own settings come later and win.  A database that
	 * vanishes without a reset (a silent partition) must cost a run
	 * seconds, not TCP's minutes: unacknowledged data gives up after
	 * 15 s, an idle wait is probed after 10 s.  The server's side gets
	 * PG_LIMITS.  GSSAPI encryption is tried only when asked for (the
	 * URI's gssencmode, or PGGSSENCMODE): libpq's default looks for
	 * Kerberos credentials first, which costs a checker that has none
	 * 0.4 MB resident and a few ms of CPU on every run.
	 */
	const char *const kw[] = { "connect_timeout", "application_name",
	    "tcp_user_timeout", "keepalives_idle", "keepalives_interval",
	    "keepalives_count", "gssencmode", "dbname", NULL };
	const char *const val[] = { "5", "ddup-check", "15000", "10", "5",
	    "3", getenv("PGGSSENCMODE") != NULL ? "" : "disable", where,
	    NULL };
	struct pg_state	*pg;
	PGconn		*c;
	char		 what[320];
	long long	 rt = 0;
	int		 rc = STATE_BAD, locked, ready;

	*out = NULL;
	c = PQconnectdbParams(kw, val, 1);
	if (c == NULL || PQstatus(c) != CONNECTION_OK) {
		pg_format_err(err, errlen, where, "cannot connect",
		    c != NULL ? PQerrorMessage(c) : "out of memory");
		goto out;
	}
	if (mode == STATE_RW) {
		if (checker == NULL) {
			pg_format_err(err, errlen, where, "no checker", NULL);
			goto out;
		}
		if ((locked = pg_lock_checker(c, &rt, checker, where, err,
		    errlen)) == -1)
			goto out;
		if (locked == 0) {
			snprintf(what, sizeof(what), "checker %s: another run "
			    "of this checker holds its lock", checker);
			pg_format_err(err, errlen, where, what, NULL);
			rc = STATE_LOCKED;
			goto out;
		}
		if (pg_migrate(c, &rt, where, err, errlen) == -1)
			goto out;
	} else if (pg_exec(c, &rt, "SELECT " PG_LIMITS, where, "cannot set "
	    "the session's limits", err, errlen) == -1)
		goto out;
	else if ((ready = pg_schema_ready(c, &rt, where, err, errlen)) !=
	    1) {
		rc = ready == 0 ? STATE_OK : STATE_BAD;
		goto out;
	}
	pg = xcalloc(1, sizeof(*pg));
	pg->base.be = &state_pg;
	pg->base.wrote_rows = pg->base.wrote_pages = -1; /* not counted here */
	pg->conn = c;
	pg->where = xstrdup(where);
	pg->checker = xstrdup(checker != NULL ? checker : "");
	pg->rw = mode == STATE_RW;
	pg->slot = -1;
	/* Those of the lock and the schema; connecting is not counted. */
	pg->round_trips = rt;
	c = NULL;
	*out = &pg->base;
	rc = STATE_OK;
out:
	/* The session's locks go with it. */
	if (c != NULL)
		PQfinish(c);
	return rc;
}

static void
pg_close(struct state *st)
{
	struct pg_state *pg = pg_of(st);

	logx(LOG_DEBUG, NULL, NULL, "postgresql: %lld round trips after "
	    "connecting, %lld endpoint rows sent", pg->round_trips,
	    pg->sent_eps);
	PQfinish(pg->conn);
	free(pg->where);
	free(pg->checker);
	free(pg->decided);
	free(pg->marked);
	free(pg->votes);
	free(pg->rows);
	free(pg->reasons);
	pg_order_free(pg->order);
	free(pg);
}

/* The table's entries of state/pg_ops.c: each turns st into its open. */
static int
pg_request_drain(struct state *st, const struct st_target *t, size_t n,
    long long now, long long until, char *err, size_t errlen)
{
	return pgd_request_drain(pg_of(st), t, n, now, until, err, errlen);
}

static int
pg_request_undrain(struct state *st, const struct st_target *t, size_t n,
    long long now, char *err, size_t errlen)
{
	return pgd_request_undrain(pg_of(st), t, n, now, err, errlen);
}

static int
pg_request_failback(struct state *st, const char *domain, long long now,
    char *err, size_t errlen)
{
	return pgd_request_failback(pg_of(st), domain, now, err, errlen);
}

static int
pg_recent_changes(struct state *st, size_t max, struct st_change **out,
    size_t *n)
{
	return pgd_recent_changes(pg_of(st), max, out, n);
}

static int
pg_timeline(struct state *st, long long since, struct st_timeline *out)
{
	return pgd_timeline(pg_of(st), since, out);
}

static int
pg_counters(struct state *st, struct st_counter **out, size_t *n)
{
	return pgd_counters(pg_of(st), out, n);
}

static int
pg_notify_counts(struct state *st, const char *notifier,
    struct st_notify_counts *out)
{
	return pgd_notify_counts(pg_of(st), notifier, out);
}

static int
pg_get_deliveries(struct state *st, const char *notifier,
    struct st_delivery **out, size_t *n)
{
	return pgd_get_deliveries(pg_of(st), notifier, out, n);
}

static int
pg_put_delivery(struct state *st, const char *notifier,
    const struct st_delivery *d, long long now, int ok, int given_up,
    const char *error, char *err, size_t errlen)
{
	return pgd_put_delivery(pg_of(st), notifier, d, now, ok, given_up,
	    error, err, errlen);
}

const struct state_backend state_pg = {
	.name = "postgresql",
	.handles = pg_handles,
	.open = pg_open,
	.close = pg_close,
	.load = pg_load,
	.save = pg_save,
	.mark_unsure = pg_mark_unsure,
	.request_drain = pg_request_drain,
	.request_undrain = pg_request_undrain,
	.request_failback = pg_request_failback,
	.recent_changes = pg_recent_changes,
	.timeline = pg_timeline,
	.counters = pg_counters,
	.notify_counts = pg_notify_counts,
	.get_deliveries = pg_get_deliveries,
	.put_delivery = pg_put_delivery,
	.round_begin = pg_round_begin,
	.round_commit = pg_round_commit,
};
