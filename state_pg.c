/*
 * The PostgreSQL backend (state_int.h), for a `state` that is a
 * postgresql:// or postgres:// URI (SPEC 11).  This version goes as far
 * as the parts every run needs first: it connects (connect_timeout 5 s
 * unless the URI sets it), creates or upgrades its schema under an
 * advisory lock so that checkers starting together do not race, and
 * takes the session advisory lock of the checker, so that a second run
 * of the same checker exits 3.  The rounds of several checkers are not
 * built yet: every open then refuses with a clear error, before any
 * check, so that nothing is changed anywhere.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "pguri.h"
#include "state.h"
#include "state_int.h"
#include "state_pg_int.h"
#include "util.h"

/* Keys of the advisory locks, as text hashed by the server. */
#define PG_LOCK_SCHEMA	"ddup-check schema"
#define PG_LOCK_CHECKER	"ddup-check checker "

static int
pg_handles(const char *where)
{
	return pguri_is(where);
}

/* One statement without parameters; 0, or -1 with err set. */
static int
pg_exec(PGconn *c, const char *sql, const char *where, const char *what,
    char *err, size_t errlen)
{
	PGresult *r = PQexec(c, sql);
	int st = PQresultStatus(r), rc = 0;

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
pg_value(PGconn *c, const char *sql, const char *where, const char *what,
    char *err, size_t errlen)
{
	PGresult *r = PQexec(c, sql);
	char *v = NULL;

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
 * The schema as this version needs it, made or upgraded in one
 * transaction under the schema's advisory lock; a newer one is refused.
 */
static int
pg_migrate(PGconn *c, const char *where, char *err, size_t errlen)
{
	char sql[128], what[96], *v = NULL;
	long lver;
	int ver = 0, i, rc = -1;

	if (pg_exec(c, "BEGIN; SELECT pg_advisory_xact_lock("
	    "hashtextextended('" PG_LOCK_SCHEMA "', 0))", where,
	    "cannot lock the schema", err, errlen) == -1)
		goto out;
	if ((v = pg_value(c, "SELECT to_regclass('ddup_meta') IS NOT NULL",
	    where, "cannot read the schema", err, errlen)) == NULL)
		goto out;
	if (strcmp(v, "t") == 0) {
		free(v);
		if ((v = pg_value(c, "SELECT value FROM ddup_meta WHERE key ="
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
		if (pg_exec(c, pg_migrations[i], where, "cannot upgrade the "
		    "schema", err, errlen) == -1)
			goto out;
	snprintf(sql, sizeof(sql), "UPDATE ddup_meta SET value = '%d' WHERE "
	    "key = 'schema_version'; COMMIT", pg_schema_version);
	if (pg_exec(c, sql, where, "cannot upgrade the schema", err,
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
pg_lock_checker(PGconn *c, const char *checker, const char *where,
    char *err, size_t errlen)
{
	const char *params[1];
	char *key;
	PGresult *r;
	int rc;

	key = xmalloc(strlen(PG_LOCK_CHECKER) + strlen(checker) + 1);
	sprintf(key, "%s%s", PG_LOCK_CHECKER, checker);
	params[0] = key;
	r = PQexecParams(c, "SELECT pg_try_advisory_lock(hashtextextended($1,"
	    " 0))", 1, NULL, params, NULL, NULL, 0);
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

static int
pg_open(const char *where, const char *checker, int mode, struct state **out,
    char *err, size_t errlen)
{
	/* The URI's own connect_timeout comes later and wins. */
	const char *const kw[] = { "connect_timeout", "application_name",
	    "dbname", NULL };
	const char *const val[] = { "5", "ddup-check", where, NULL };
	PGconn *c;
	char what[320];
	int rc = STATE_BAD, locked;

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
		if ((locked = pg_lock_checker(c, checker, where, err,
		    errlen)) == -1)
			goto out;
		if (locked == 0) {
			snprintf(what, sizeof(what), "checker %s: another run "
			    "of this checker holds its lock", checker);
			pg_format_err(err, errlen, where, what, NULL);
			rc = STATE_LOCKED;
			goto out;
		}
		if (pg_migrate(c, where, err, errlen) == -1)
			goto out;
	}
	pg_format_err(err, errlen, where, "this version of ddup-check reaches "
	    "PostgreSQL but does not run on it yet (the rounds of several "
	    "checkers, SPEC 11, are not built): nothing was checked or "
	    "changed", NULL);
out:
	/* The session's locks go with it. */
	PQfinish(c);
	return rc;
}

/* Never called: no open of this backend succeeds yet. */
static void
pg_close(struct state *st)
{
	free(st);
}

const struct state_backend state_pg = {
	.name = "postgresql",
	.handles = pg_handles,
	.open = pg_open,
	.close = pg_close,
};
