/*
 * The PostgreSQL backend's schema (state_pg_int.h), by version:
 * pg_migrations[i] makes version i + 1 and runs in the transaction of
 * the upgrade, under the schema's advisory lock (state_pg.c).  A
 * migration on main is never edited: a change is a new one.
 *
 * Tables live in the role's first schema (public): no name is ever
 * qualified, and no column's default calls now(), because the tests
 * replace now() through the search_path.
 */

#include "state_pg_int.h"

const char *const pg_migrations[] = {
	"CREATE TABLE ddup_meta (key text PRIMARY KEY, value text NOT NULL);"
	"INSERT INTO ddup_meta VALUES ('schema_version', '1')",
};

const int pg_schema_version =
    (int)(sizeof(pg_migrations) / sizeof(pg_migrations[0]));
