/*
 * The state file (SPEC section 6) in SQLite.
 *
 * Times are stored as ISO-8601 UTC text with milliseconds
 * ("2026-11-30T10:25:56.123Z"): readable in the sqlite3 CLI, and in
 * that fixed width text order is time order, so the time indexes work.
 * NULL stands for "never" or "none" wherever the header uses 0 or "".
 *
 * A file that is not ours must be left byte for byte as it was, so it
 * is first looked at through a separate read-only connection, and only
 * then opened for writing (WAL, migrations).
 */

#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "config.h"
#include "state.h"
#include "util.h"

#define APP_ID		0x64647570	/* "ddup", in PRAGMA application_id */
#define BUSY_MS		5000
#define CHANGES_KEEP_MS	(365LL * 24 * 3600 * 1000)

/*
 * Schema migrations: migrations[i] takes the file from user_version i to
 * i + 1.  Never edit one that has shipped; append a new one.
 */
static const char *const migrations[] = {
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
	"  unhealthy INTEGER NOT NULL  -- 1: no healthy endpoint last run\n"
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
	"CREATE INDEX checks_endpoint ON checks (domain, endpoint, time);\n"
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
};

#define SCHEMA_VERSION	((int)(sizeof(migrations) / sizeof(migrations[0])))

/*
 * What state_finish_run() keeps, as temporary tables of this connection
 * (in memory), so the deletes are single statements however big the
 * configuration.
 */
static const char temp_schema[] =
	"CREATE TEMP TABLE cfg_domains ("
	"  name TEXT PRIMARY KEY NOT NULL, has4 INTEGER, has6 INTEGER);"
	"CREATE TEMP TABLE cfg_endpoints ("
	"  domain TEXT NOT NULL, name TEXT NOT NULL,"
	"  PRIMARY KEY (domain, name));";

enum {
	S_GET_EP,
	S_GET_DOM,
	S_GET_PUB,
	S_GET_META,
	S_PUT_EP,
	S_PUT_DOM,
	S_PUT_PUB,
	S_DEL_PUB,
	S_ADD_CHECK,
	S_ADD_CHANGE,
	S_PUT_META,
	S_CFG_CLEAR_DOM,
	S_CFG_CLEAR_EP,
	S_CFG_DOM,
	S_CFG_EP,
	S_DROP_EP,
	S_DROP_DOM,
	S_DROP_PUB,
	S_PRUNE_CHECKS,
	S_PRUNE_CHANGES,
	S_MAX
};

/* Statements from S_PUT_EP on write, and exist only in read-write opens. */
#define S_FIRST_RW	S_PUT_EP

static const char *const stmt_sql[S_MAX] = {
	[S_GET_EP] = "SELECT ip, url, failures, passes, removed, last_check,"
	    " last_ok, last_status, latency_ms, last_result"
	    " FROM endpoints WHERE domain = ?1 AND name = ?2",
	[S_GET_DOM] = "SELECT tier, last_change, last_error, unhealthy"
	    " FROM domains WHERE name = ?1",
	[S_GET_PUB] = "SELECT type, ttl, addresses FROM published"
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
	    " last_change, last_error, unhealthy)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
	    " ON CONFLICT (name) DO UPDATE SET provider = excluded.provider,"
	    " ttl = excluded.ttl, tier = excluded.tier,"
	    " last_change = excluded.last_change,"
	    " last_error = excluded.last_error, unhealthy = excluded.unhealthy",
	[S_PUT_PUB] = "INSERT INTO published (domain, type, ttl, addresses)"
	    " VALUES (?1, ?2, ?3, ?4)"
	    " ON CONFLICT (domain, type) DO UPDATE SET ttl = excluded.ttl,"
	    " addresses = excluded.addresses",
	[S_DEL_PUB] = "DELETE FROM published WHERE domain = ?1 AND type = ?2",
	[S_ADD_CHECK] = "INSERT INTO checks (time, domain, endpoint, ip, ok,"
	    " status, latency_ms, reason)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[S_ADD_CHANGE] = "INSERT INTO changes (time, domain, type, ttl, old,"
	    " new, tier, ok, error)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
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
};

struct state {
	sqlite3		*db;
	sqlite3_stmt	*stmt[S_MAX];
	char		*path;
	int		 lockfd;	/* flock holder (read-write), else -1 */
	int		 rw;
	int		 in_tx;
	char		 err[768];	/* last error, for state_errmsg() */
};

static void
set_err(struct state *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
set_err(struct state *st, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	n = snprintf(st->err, sizeof(st->err), "%s: ", st->path);
	if (n < 0 || (size_t)n >= sizeof(st->err))
		return;
	va_start(ap, fmt);
	vsnprintf(st->err + n, sizeof(st->err) - n, fmt, ap);
	va_end(ap);
}

/* "FILE: what: sqlite's message". */
static void
db_err(struct state *st, sqlite3 *db, const char *what)
{
	set_err(st, "%s: %s", what, db != NULL ? sqlite3_errmsg(db) :
	    "out of memory");
}

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

/* The inverse of fmt_ms(); also takes whole seconds.  0 on junk. */
static long long
parse_ms(const char *s)
{
	struct tm	 tm;
	int		 n = 0, ms = 0, digits = 0;
	time_t		 t;

	if (s == NULL)
		return 0;
	memset(&tm, 0, sizeof(tm));
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
	    &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6)
		return 0;
	s += n;
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, digits++)
			if (digits < 3)
				ms = ms * 10 + (*s - '0');
		for (; digits < 3; digits++)
			ms *= 10;
	}
	if (strcmp(s, "Z") != 0)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	t = timegm(&tm);
	return (long long)t * 1000 + ms;
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
	char	 buf[80];	/* the compiler counts int ranges */

	if (ms == 0)
		return sqlite3_bind_null(s, i);
	fmt_ms(ms, buf, sizeof(buf));
	return sqlite3_bind_text(s, i, buf, -1, SQLITE_TRANSIENT);
}

/* Runs a statement that returns no rows, then makes it ready for reuse. */
static int
run_stmt(struct state *st, sqlite3_stmt *s, int bind_rc, const char *what)
{
	int	 rc = -1;

	/* bind_rc may be several codes or'ed: only "not OK" is meant. */
	if (bind_rc != SQLITE_OK) {
		db_err(st, st->db, what);
		goto out;
	}
	if (sqlite3_step(s) != SQLITE_DONE) {
		db_err(st, st->db, what);
		goto out;
	}
	rc = 0;
 out:
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc;
}

/* Writes need a read-write open and an open transaction. */
static int
need_tx(struct state *st, const char *what)
{
	if (st == NULL)
		return -1;
	if (!st->rw) {
		set_err(st, "%s: state opened read-only", what);
		return -1;
	}
	if (!st->in_tx) {
		set_err(st, "%s: no transaction", what);
		return -1;
	}
	return 0;
}

static const char *
family_type(int family)
{
	return family == 6 ? "AAAA" : "A";
}

/* Creates the folder of path if missing (only that one, mode 0700). */
static int
make_parent(struct state *st)
{
	struct stat	 sb;
	char		*dir, *slash;
	int		 rc = -1;

	dir = xstrdup(st->path);
	slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir) {
		rc = 0;		/* the current folder or "/" */
		goto out;
	}
	*slash = '\0';
	if (stat(dir, &sb) == 0 || errno != ENOENT) {
		rc = 0;		/* open() reports anything else */
		goto out;
	}
	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		set_err(st, "cannot create folder %s: %s", dir,
		    strerror(errno));
		goto out;
	}
	rc = 0;
 out:
	free(dir);
	return rc;
}

/*
 * Opens the lock file descriptor and takes the run lock.  flock() locks
 * are separate from SQLite's POSIX locks, so they do not interfere (on a
 * local file system: NFS emulates flock() with POSIX locks, and SQLite
 * over NFS is unsafe anyway).
 */
static int
take_lock(struct state *st)
{
	struct stat	 sb;

	st->lockfd = open(st->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (st->lockfd == -1) {
		set_err(st, "cannot open: %s", strerror(errno));
		return STATE_BAD;
	}
	if (fstat(st->lockfd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		set_err(st, "not a regular file");
		return STATE_BAD;
	}
	if (flock(st->lockfd, LOCK_EX | LOCK_NB) == -1) {
		if (errno == EWOULDBLOCK) {
			set_err(st, "locked by another ddup-check run");
			return STATE_LOCKED;
		}
		set_err(st, "cannot lock: %s", strerror(errno));
		return STATE_BAD;
	}
	return STATE_OK;
}

/*
 * Looks at the file through a read-only connection, which writes
 * nothing, not even a checkpoint when it closes.  Ours carries our
 * application_id; a file without it is ours to set up only if it has no
 * schema at all (new or zero size).  Returns the schema version (0:
 * empty) or -1.
 */
static int
probe(struct state *st, sqlite3 *db)
{
	sqlite3_stmt	*s = NULL;
	long long	 ver, app, nobj;
	int		 rc = -1;

	if (sqlite3_prepare_v2(db, "SELECT"
	    " (SELECT user_version FROM pragma_user_version),"
	    " (SELECT application_id FROM pragma_application_id),"
	    " (SELECT count(*) FROM sqlite_master)", -1, &s, NULL)
	    != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
		if ((sqlite3_errcode(db) & 0xff) == SQLITE_NOTADB)
			set_err(st, "not a ddup state file: %s",
			    sqlite3_errmsg(db));
		else
			db_err(st, db, "cannot read");
		goto out;
	}
	ver = sqlite3_column_int64(s, 0);
	app = sqlite3_column_int64(s, 1);
	nobj = sqlite3_column_int64(s, 2);
	if (app != APP_ID && (app != 0 || ver != 0 || nobj != 0)) {
		set_err(st, "not a ddup state file (it holds another"
		    " application's data)");
		goto out;
	}
	if (ver > SCHEMA_VERSION) {
		set_err(st, "state file schema version %lld is newer than"
		    " this ddup-check (%d)", ver, SCHEMA_VERSION);
		goto out;
	}
	if (ver == 0 && nobj != 0) {
		set_err(st, "not a ddup state file (tables without a schema"
		    " version)");
		goto out;
	}
	rc = (int)ver;
 out:
	sqlite3_finalize(s);
	return rc;
}

/* Brings the schema to SCHEMA_VERSION in one transaction. */
static int
migrate(struct state *st)
{
	sqlite3_stmt	*s = NULL;
	char		 sql[128];
	int		 ver, i, rc = -1, in_tx = 0;

	if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL)
	    != SQLITE_OK) {
		db_err(st, st->db, "cannot start the schema upgrade");
		goto out;
	}
	in_tx = 1;
	/* Read again under the write lock. */
	if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s, NULL)
	    != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
		db_err(st, st->db, "cannot read the schema version");
		goto out;
	}
	ver = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);	/* COMMIT needs no statement running */
	s = NULL;
	if (ver > SCHEMA_VERSION) {
		set_err(st, "state file schema version %d is newer than"
		    " this ddup-check (%d)", ver, SCHEMA_VERSION);
		goto out;
	}
	if (ver == SCHEMA_VERSION) {
		rc = 0;
		goto out;
	}
	for (i = ver; i < SCHEMA_VERSION; i++) {
		if (sqlite3_exec(st->db, migrations[i], NULL, NULL, NULL)
		    != SQLITE_OK) {
			set_err(st, "schema upgrade to version %d: %s", i + 1,
			    sqlite3_errmsg(st->db));
			goto out;
		}
	}
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d;"
	    " PRAGMA application_id = %d", SCHEMA_VERSION, APP_ID);
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		db_err(st, st->db, "schema upgrade");
		goto out;
	}
	in_tx = 0;
	rc = 0;
 out:
	sqlite3_finalize(s);
	if (in_tx)
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/*
 * Settings of the read-write connection.  WAL with synchronous=FULL: a
 * run commits once, so one fsync of the WAL per run costs nothing, and
 * the commit is durable when the run reports success; WAL also lets
 * --status read while a run is writing.
 */
static int
setup_rw(struct state *st)
{
	sqlite3_stmt	*s = NULL;
	int		 rc = -1;

	if (sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1, &s,
	    NULL) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
		db_err(st, st->db, "cannot set WAL mode");
		goto out;
	}
	if (sqlite3_stricmp((const char *)sqlite3_column_text(s, 0),
	    "wal") != 0) {
		set_err(st, "cannot set WAL mode (journal mode stays %s)",
		    sqlite3_column_text(s, 0));
		goto out;
	}
	sqlite3_finalize(s);
	s = NULL;
	if (sqlite3_exec(st->db, "PRAGMA synchronous = FULL;"
	    " PRAGMA temp_store = MEMORY", NULL, NULL, NULL) != SQLITE_OK) {
		db_err(st, st->db, "cannot set up");
		goto out;
	}
	if (migrate(st) == -1)
		goto out;
	if (sqlite3_exec(st->db, temp_schema, NULL, NULL, NULL)
	    != SQLITE_OK) {
		db_err(st, st->db, "cannot set up");
		goto out;
	}
	rc = 0;
 out:
	sqlite3_finalize(s);
	return rc;
}

static int
prepare_all(struct state *st)
{
	int	 i, n;

	n = st->rw ? S_MAX : S_FIRST_RW;
	for (i = 0; i < n; i++) {
		if (sqlite3_prepare_v3(st->db, stmt_sql[i], -1,
		    SQLITE_PREPARE_PERSISTENT, &st->stmt[i], NULL)
		    != SQLITE_OK) {
			db_err(st, st->db, "cannot prepare");
			return -1;
		}
	}
	return 0;
}

/* Opens st->db with flags; the path is never taken as a URI. */
static int
open_db(struct state *st, const char *dbpath, int flags)
{
	if (sqlite3_open_v2(dbpath, &st->db, flags, NULL) != SQLITE_OK) {
		db_err(st, st->db, "cannot open");
		return -1;
	}
	sqlite3_extended_result_codes(st->db, 1);
	/* Only --status readers and a crashed run's recovery can block us. */
	sqlite3_busy_timeout(st->db, BUSY_MS);
	return 0;
}

int
state_open(const char *path, int mode, struct state **out, char *err,
    size_t errlen)
{
	struct state	*st;
	struct stat	 sb;
	char		*dbpath = NULL;
	mode_t		 oldmask = 0;
	int		 rc = STATE_BAD, masked = 0, ver;

	*out = NULL;
	st = xcalloc(1, sizeof(*st));
	st->lockfd = -1;
	st->rw = mode == STATE_RW;
	st->path = xstrdup(path);
	/* Some builds read "file:..." as a URI; "./file:..." is a path. */
	dbpath = xmalloc(strlen(path) + 3);
	snprintf(dbpath, strlen(path) + 3, "%s%s",
	    strncmp(path, "file:", 5) == 0 ? "./" : "", path);

	if (!st->rw) {
		if (stat(path, &sb) == -1) {
			if (errno == ENOENT) {
				rc = STATE_OK;	/* no file: empty state */
				goto out;
			}
		} else if (!S_ISREG(sb.st_mode)) {
			set_err(st, "not a regular file");
			goto out;
		}
	} else {
		/*
		 * Private whatever the umask: SQLite creates its -wal and
		 * -shm files with the mode of the database file.
		 */
		oldmask = umask(077);
		masked = 1;
		if (make_parent(st) == -1)
			goto out;
		if ((rc = take_lock(st)) != STATE_OK)
			goto out;
		rc = STATE_BAD;
	}

	if (open_db(st, dbpath, SQLITE_OPEN_READONLY) == -1)
		goto out;
	if ((ver = probe(st, st->db)) == -1)
		goto out;

	if (!st->rw) {
		if (ver == 0) {
			rc = STATE_OK;	/* created, never written: empty */
			goto out;
		}
		if (ver < SCHEMA_VERSION) {
			set_err(st, "state file schema version %d is older than"
			    " this ddup-check (%d); the next run upgrades it",
			    ver, SCHEMA_VERSION);
			goto out;
		}
		/*
		 * One read transaction for the whole open, so what is read
		 * is one run's state even while another run commits.
		 */
		if (sqlite3_exec(st->db, "BEGIN; SELECT count(*) FROM meta",
		    NULL, NULL, NULL) != SQLITE_OK) {
			db_err(st, st->db, "cannot read");
			goto out;
		}
		if (prepare_all(st) == -1)
			goto out;
	} else {
		sqlite3_close(st->db);
		st->db = NULL;
		if (open_db(st, dbpath, SQLITE_OPEN_READWRITE) == -1 ||
		    setup_rw(st) == -1 || prepare_all(st) == -1)
			goto out;
	}
	*out = st;
	st = NULL;
	rc = STATE_OK;
 out:
	if (masked)
		umask(oldmask);
	if (st != NULL && rc != STATE_OK && err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", st->err);
	state_close(st);
	free(dbpath);
	return rc;
}

void
state_close(struct state *st)
{
	int	 i;

	if (st == NULL)
		return;
	if (st->in_tx)
		state_rollback(st);
	for (i = 0; i < S_MAX; i++)
		sqlite3_finalize(st->stmt[i]);
	/* Ends the read transaction of a read-only open. */
	if (st->db != NULL && !sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(st->db);
	/* Last: closing any descriptor of the file drops SQLite's locks. */
	if (st->lockfd != -1)
		close(st->lockfd);
	free(st->path);
	free(st);
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
		db_err(st, st->db, "endpoint");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		rc = 0;
		goto out;
	}
	if (step != SQLITE_ROW) {
		set_err(st, "endpoint %s/%s: %s", domain, name,
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
	int		 rc = -1, step, i;

	if (bind_text(s, 1, domain) != SQLITE_OK) {
		db_err(st, st->db, "published");
		goto out;
	}
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		type = (const char *)sqlite3_column_text(s, 0);
		list = (const char *)sqlite3_column_text(s, 2);
		i = type != NULL && strcmp(type, "AAAA") == 0;
		addrset_free(&d->pub[i].addrs);
		if (addrset_parse(&d->pub[i].addrs,
		    list != NULL ? list : "") == -1) {
			set_err(st, "published %s %s: bad address list \"%s\"",
			    domain, family_type(i ? 6 : 4), list);
			goto out;
		}
		d->has_pub[i] = 1;
		d->pub[i].ttl = sqlite3_column_int64(s, 1);
	}
	if (step != SQLITE_DONE) {
		set_err(st, "published %s: %s", domain,
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
	int		 rc = -1, step;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return 0;
	s = st->stmt[S_GET_DOM];
	if (bind_text(s, 1, domain) != SQLITE_OK) {
		db_err(st, st->db, "domain");
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
	} else if (step != SQLITE_DONE) {
		set_err(st, "domain %s: %s", domain, sqlite3_errmsg(st->db));
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
	addrset_free(&d->pub[0].addrs);
	addrset_free(&d->pub[1].addrs);
	d->has_pub[0] = d->has_pub[1] = 0;
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
		db_err(st, st->db, "last run");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_ROW)
		ms = parse_ms((const char *)sqlite3_column_text(s, 0));
	else if (step != SQLITE_DONE)
		db_err(st, st->db, "last run");
 out:
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return ms;
}

int
state_begin(struct state *st, char *err, size_t errlen)
{
	int	 rc = -1;

	if (st == NULL) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "no state file");
		return -1;
	}
	if (!st->rw || st->in_tx) {
		set_err(st, "cannot begin: %s", st->rw ?
		    "a transaction is open" : "state opened read-only");
		goto out;
	}
	/* IMMEDIATE: take the write lock now, not at the first write. */
	if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL)
	    != SQLITE_OK) {
		db_err(st, st->db, "cannot begin");
		goto out;
	}
	st->in_tx = 1;
	rc = 0;
 out:
	if (rc == -1 && err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", st->err);
	return rc;
}

int
state_commit(struct state *st, char *err, size_t errlen)
{
	int	 rc = -1;

	if (need_tx(st, "cannot commit") == -1)
		goto out;
	if (sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		db_err(st, st->db, "cannot commit");
		if (!sqlite3_get_autocommit(st->db))
			sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		st->in_tx = 0;
		goto out;
	}
	st->in_tx = 0;
	rc = 0;
 out:
	if (rc == -1 && st != NULL && err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", st->err);
	return rc;
}

void
state_rollback(struct state *st)
{
	if (st == NULL || !st->in_tx)
		return;
	/* Fails only if SQLite already rolled back after an error. */
	if (!sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	st->in_tx = 0;
}

int
state_put_endpoint(struct state *st, const char *domain, const char *name,
    const char *ip, const char *url, long priority,
    const struct st_endpoint *e)
{
	sqlite3_stmt	*s;
	int		 b = 0, checked;

	if (need_tx(st, "endpoint") == -1)
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

	if (need_tx(st, "domain") == -1)
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
	return run_stmt(st, s, b, "domain");
}

int
state_put_published(struct state *st, const char *domain, int family,
    long ttl, const struct addrset *set)
{
	sqlite3_stmt	*s;
	char		*list = NULL;
	int		 b = 0, rc;

	if (need_tx(st, "published") == -1)
		return -1;
	if (family != 4 && family != 6) {
		set_err(st, "published %s: bad family %d", domain, family);
		return -1;
	}
	if (set == NULL) {
		s = st->stmt[S_DEL_PUB];
		b |= bind_text(s, 1, domain);
		b |= bind_text(s, 2, family_type(family));
		return run_stmt(st, s, b, "published");
	}
	list = addrset_join(set);
	s = st->stmt[S_PUT_PUB];
	b |= bind_text(s, 1, domain);
	b |= bind_text(s, 2, family_type(family));
	b |= sqlite3_bind_int64(s, 3, ttl);
	b |= bind_text(s, 4, list);
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

	if (need_tx(st, "check history") == -1)
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
    int family, long ttl, const char *old_set, const char *new_set,
    long tier, int ok, const char *error)
{
	sqlite3_stmt	*s;
	int		 b = 0;

	if (need_tx(st, "change history") == -1)
		return -1;
	s = st->stmt[S_ADD_CHANGE];
	b |= bind_time(s, 1, when);
	b |= bind_text(s, 2, domain);
	b |= bind_text(s, 3, family_type(family));
	b |= sqlite3_bind_int64(s, 4, ttl);
	b |= bind_text(s, 5, old_set != NULL ? old_set : "");
	b |= bind_text(s, 6, new_set != NULL ? new_set : "");
	if (tier >= 0)
		b |= sqlite3_bind_int64(s, 7, tier);
	b |= sqlite3_bind_int(s, 8, ok != 0);
	b |= bind_text(s, 9, error);
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

	if (need_tx(st, "finish run") == -1 || c == NULL)
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

const char *
state_errmsg(struct state *st)
{
	if (st == NULL)
		return "no state file";
	return st->err;
}
