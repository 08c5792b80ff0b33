/*
 * The schema of the state file, as data: the migrations that build it
 * and the temporary tables of a read-write connection.
 */

#include "state_int.h"

/*
 * Schema migrations: state_migrations[i] takes the file from user_version i to
 * i + 1.  Never edit one that has shipped; append a new one.
 */
const char *const state_migrations[] = {
	/*
	 * 1: the first schema.  The newlines and comments are kept by
	 * SQLite and shown by the CLI's .schema, for operators.
	 */
	"CREATE TABLE endpoints (\n"
	"  domain TEXT NOT NULL,\n"
	"  name TEXT NOT NULL,\n"
	"  ip TEXT NOT NULL,\n"
	"  url TEXT NOT NULL,\n"
	"  priority INTEGER NOT NULL,\n"
	"  failures INTEGER NOT NULL,  -- consecutive failed checks\n"
	"  passes INTEGER NOT NULL,    -- consecutive passed checks\n"
	"  removed INTEGER NOT NULL,   -- 1: out of DNS until it recovers\n"
	"  last_check TEXT,            -- UTC; NULL: never checked\n"
	"  last_ok INTEGER,\n"
	"  last_status INTEGER,        -- HTTP status; NULL: no answer\n"
	"  last_result TEXT,           -- 'ok', 'HTTP 503', 'timeout', ...\n"
	"  latency_ms INTEGER,\n"
	"  PRIMARY KEY (domain, name)\n"
	") STRICT;\n"
	"CREATE TABLE domains (\n"
	"  name TEXT PRIMARY KEY NOT NULL,\n"
	"  provider TEXT NOT NULL,\n"
	"  ttl INTEGER NOT NULL,\n"
	"  tier INTEGER,               -- priority published; NULL: none\n"
	"  last_change TEXT,           -- UTC of the last successful update\n"
	"  last_error TEXT,            -- NULL: the last update worked\n"
	"  unhealthy INTEGER NOT NULL, -- 1: no healthy endpoint last run\n"
	"  unsure INTEGER NOT NULL DEFAULT 0 -- 1: an update was sent, its\n"
	"                              -- outcome not recorded: read DNS again\n"
	") STRICT;\n"
	"CREATE TABLE published (      -- what DNS holds, as last written\n"
	"  domain TEXT NOT NULL,\n"
	"  type TEXT NOT NULL CHECK (type IN ('A', 'AAAA')),\n"
	"  ttl INTEGER NOT NULL,\n"
	"  addresses TEXT NOT NULL,    -- space-separated; '': emptied\n"
	"  PRIMARY KEY (domain, type)\n"
	") STRICT;\n"
	"CREATE TABLE checks (         -- history, kept for `history`\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  time TEXT NOT NULL,         -- UTC\n"
	"  domain TEXT NOT NULL,\n"
	"  endpoint TEXT NOT NULL,\n"
	"  ip TEXT NOT NULL,\n"
	"  ok INTEGER NOT NULL,\n"
	"  status INTEGER,             -- HTTP status; NULL: no answer\n"
	"  latency_ms INTEGER,\n"
	"  reason TEXT\n"
	") STRICT;\n"
	"CREATE INDEX checks_time ON checks (time);\n"
	/*
	 * Failures only: a run adds one row per endpoint, and an index on
	 * (domain, endpoint) for every row would dirty one page per
	 * endpoint per run; failed checks are few and what operators look
	 * up by endpoint ("WHERE ... AND ok = 0").
	 */
	"CREATE INDEX checks_failed ON checks (domain, endpoint, time)"
	" WHERE ok = 0;\n"
	"CREATE TABLE changes (        -- DNS update attempts, kept a year\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  time TEXT NOT NULL,         -- UTC\n"
	"  domain TEXT NOT NULL,\n"
	"  type TEXT NOT NULL CHECK (type IN ('A', 'AAAA')),\n"
	"  ttl INTEGER NOT NULL,\n"
	"  old TEXT NOT NULL,          -- space-separated addresses\n"
	"  new TEXT NOT NULL,\n"
	"  tier INTEGER,\n"
	"  ok INTEGER NOT NULL,\n"
	"  error TEXT\n"
	") STRICT;\n"
	"CREATE INDEX changes_time ON changes (time);\n"
	"CREATE TABLE meta (           -- last_run: UTC of the last run\n"
	"  key TEXT PRIMARY KEY NOT NULL,\n"
	"  value TEXT\n"
	") STRICT;\n",
	/*
	 * 2: a tier is a location rank and a priority (SPEC 9); tier
	 * stays the priority.  tier_rank: 0 the domain's own location,
	 * then its failover locations in order, then the others;
	 * tier_location: that location's name, NULL for the others.  Both
	 * NULL for a domain without a location.
	 */
	"ALTER TABLE domains ADD COLUMN tier_rank INTEGER;\n"
	"ALTER TABLE domains ADD COLUMN tier_location TEXT;\n"
	"ALTER TABLE changes ADD COLUMN tier_rank INTEGER;\n"
	"ALTER TABLE changes ADD COLUMN tier_location TEXT;\n",
	/*
	 * 3: typed records.  A published set and a change may be a CNAME,
	 * and a record may be proxied (Cloudflare).  SQLite cannot change
	 * a CHECK constraint in place: both tables are built anew and
	 * filled from the old ones.  The column keeps its name, addresses,
	 * for the operators' queries; a CNAME's holds its target.
	 */
	"CREATE TABLE published_3 (    -- what DNS holds, as last written\n"
	"  domain TEXT NOT NULL,\n"
	"  type TEXT NOT NULL CHECK (type IN ('A', 'AAAA', 'CNAME')),\n"
	"  ttl INTEGER NOT NULL,\n"
	"  addresses TEXT NOT NULL,    -- space-separated; '': emptied;\n"
	"                              -- CNAME: the target host name\n"
	"  proxied INTEGER NOT NULL DEFAULT 0, -- 1: through Cloudflare's proxy\n"
	"  PRIMARY KEY (domain, type)\n"
	") STRICT;\n"
	"INSERT INTO published_3 (domain, type, ttl, addresses)\n"
	"  SELECT domain, type, ttl, addresses FROM published;\n"
	"DROP TABLE published;\n"
	"ALTER TABLE published_3 RENAME TO published;\n"
	"CREATE TABLE changes_3 (      -- DNS update attempts, kept a year\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  time TEXT NOT NULL,         -- UTC\n"
	"  domain TEXT NOT NULL,\n"
	"  type TEXT NOT NULL CHECK (type IN ('A', 'AAAA', 'CNAME')),\n"
	"  ttl INTEGER NOT NULL,\n"
	"  old TEXT NOT NULL,          -- space-separated addresses, or a target\n"
	"  new TEXT NOT NULL,\n"
	"  tier INTEGER,\n"
	"  ok INTEGER NOT NULL,\n"
	"  error TEXT,\n"
	"  tier_rank INTEGER,\n"
	"  tier_location TEXT\n"
	") STRICT;\n"
	"INSERT INTO changes_3 SELECT id, time, domain, type, ttl, old, new,\n"
	"  tier, ok, error, tier_rank, tier_location FROM changes;\n"
	"DROP TABLE changes;\n"
	"ALTER TABLE changes_3 RENAME TO changes;\n"
	"CREATE INDEX changes_time ON changes (time);\n",
};

const int state_schema_version =
    (int)(sizeof(state_migrations) / sizeof(state_migrations[0]));

/*
 * What state_finish_run() keeps, as temporary tables of this connection
 * (in memory), so the deletes are single statements however big the
 * configuration.
 */
const char state_temp_schema[] =
	"CREATE TEMP TABLE cfg_domains ("
	"  name TEXT PRIMARY KEY NOT NULL, has4 INTEGER, has6 INTEGER);"
	"CREATE TEMP TABLE cfg_endpoints ("
	"  domain TEXT NOT NULL, name TEXT NOT NULL,"
	"  PRIMARY KEY (domain, name));";
