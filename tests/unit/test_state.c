/*
 * The state (state.h) and its SQLite backend's rows (state/sqlite.h):
 * round trips through a real SQLite file in a temporary folder, the run
 * lock (also against 20 runs at once), readers during runs, files that
 * are not ours (left byte for byte), modes, the end-of-run cleanup, and
 * crashes.
 *
 * DDUP_TEST_KEEP=DIR keeps a populated state file at DIR/state.db for a
 * look with the sqlite3 CLI.
 */

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "config.h"
#include "state.h"
#include "state/sqlite.h"
#include "util.h"

/* The schema (state/sqlite_schema.c): its migrations and version. */
extern const char *const state_migrations[];
extern const int state_schema_version;

#define T0	1764498356123LL		/* 2025-11-30T10:25:56.123Z */
#define DAY	(24LL * 3600 * 1000)

struct fx {
	char	 dir[64];
	char	 path[128];
};

static void
rm_tree(const char *dir)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 sb;
	char		 p[512];

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
			rm_tree(p);
		else
			unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

static int
setup(void **ctx)
{
	struct fx	*f;

	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/ddup-state-XXXXXX");
	if (mkdtemp(f->dir) == NULL) {
		free(f);
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%s/state.db", f->dir);
	*ctx = f;
	return 0;
}

static int
teardown(void **ctx)
{
	struct fx	*f = *ctx;

	rm_tree(f->dir);
	free(f);
	return 0;
}

/* The whole file, or NULL if missing; *len its size. */
static unsigned char *
slurp(const char *path, size_t *len)
{
	FILE		*fp;
	unsigned char	*buf = NULL;
	long		 n;

	*len = 0;
	if ((fp = fopen(path, "rb")) == NULL)
		return NULL;
	if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 &&
	    fseek(fp, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf != NULL && fread(buf, 1, (size_t)n, fp) == (size_t)n)
			*len = (size_t)n;
	}
	fclose(fp);
	return buf;
}

static void
write_file(const char *path, const void *data, size_t len)
{
	FILE	*fp;

	fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
}

static void
raw_exec(const char *path, const char *sql)
{
	sqlite3	*db = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* One integer from sql, on a connection of its own. */
static long long
raw_int(const char *path, const char *sql)
{
	sqlite3		*db = NULL;
	sqlite3_stmt	*s = NULL;
	long long	 v;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY,
	    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

/*
 * Time bounds are for a normal build on a busy machine; under valgrind
 * (which preloads its own libraries) everything runs 20 to 50 times
 * slower, so the bounds stretch.  DDUP_TEST_TIME_SCALE overrides.
 */
static long long
bound_ms(long long ms)
{
	const char	*v;
	long		 k = 1;

	if ((v = getenv("DDUP_TEST_TIME_SCALE")) != NULL)
		k = strtol(v, NULL, 10);
	else if ((v = getenv("LD_PRELOAD")) != NULL &&
	    strstr(v, "vgpreload") != NULL)
		k = 30;
	return ms * (k > 0 ? k : 1);
}

static struct state *
open_ok(const char *path, int mode)
{
	struct state	*st = NULL;
	char		 err[512] = "";
	int		 rc;

	rc = state_open_checker(path, NULL, mode, &st, err, sizeof(err));
	if (rc != STATE_OK)
		fail_msg("state_open %s: %d %s", path, rc, err);
	assert_non_null(st);
	return st;
}

static void
begin(struct state *st)
{
	char	 err[512] = "";

	if (state_begin(sqlite_of(st), err, sizeof(err)) != 0)
		fail_msg("state_begin: %s", err);
}

static void
commit(struct state *st)
{
	char	 err[512] = "";

	if (state_commit(sqlite_of(st), err, sizeof(err)) != 0)
		fail_msg("state_commit: %s", err);
}

/* One endpoint after a check at when with this status and reason. */
static void
put_check(struct state *st, const char *dom, const char *name,
    const char *ip, long failures, long long when, long status,
    const char *reason, long latency)
{
	struct st_endpoint	 e;

	memset(&e, 0, sizeof(e));
	e.failures = failures;
	e.passes = failures == 0 ? 3 : 0;
	e.removed = failures >= 3;
	e.last_check = when;
	e.last_ok = failures == 0;
	e.last_status = status;
	e.latency_ms = latency;
	snprintf(e.last_result, sizeof(e.last_result), "%s", reason);
	assert_int_equal(state_put_endpoint(sqlite_of(st), dom, name, ip,
	    "https://x.example/health", 10, &e), 0);
}

/* A passing check of an endpoint that passed passes - 1 times before. */
static void
put_passing(struct state *st, const char *dom, const char *name,
    const char *ip, long passes, long long when)
{
	struct st_endpoint	 e;

	memset(&e, 0, sizeof(e));
	e.passes = passes;
	e.last_check = when;
	e.last_ok = 1;
	e.last_status = 200;
	e.latency_ms = 42;
	snprintf(e.last_result, sizeof(e.last_result), "ok");
	assert_int_equal(state_put_endpoint(sqlite_of(st), dom, name, ip,
	    "https://x.example/health", 10, &e), 0);
}

static void
put_ep(struct state *st, const char *dom, const char *name, const char *ip,
    long failures)
{
	put_check(st, dom, name, ip, failures, T0, failures == 0 ? 200 : 503,
	    failures == 0 ? "ok" : "HTTP 503", 42);
}

/* The configuration populate() writes for. */
static struct endpoint_cfg pop_eps[] = { { .name = "web1" }, { .name = "web2" } };
static struct domain_cfg pop_doms[] = {
	{ .name = "www.example.org", .eps = pop_eps, .neps = 2, .has4 = 1,
	  .has6 = 1 },
};
static struct config pop_cfg = {
	.history_ms = 30 * DAY,
	.domains = pop_doms,
	.ndomains = 1,
};

static void
finish(struct state *st, long long when, const struct config *c)
{
	assert_int_equal(state_finish_run(sqlite_of(st), when, c), 0);
}

static void
put_pub(struct state *st, const char *dom, enum rrtype type,
    const char *list)
{
	struct rrset	 set;

	memset(&set, 0, sizeof(set));
	set.type = type;
	assert_int_equal(rrset_parse(&set, list), 0);
	set.ttl = 300;
	assert_int_equal(state_put_published(sqlite_of(st), dom, type, &set),
	    0);
	rrset_clear(&set);
}

/* Fills a state file the way three runs do. */
static void
populate(const char *path)
{
	struct state	*st;
	struct st_domain d;

	st = open_ok(path, STATE_RW);
	begin(st);
	put_check(st, "www.example.org", "web2", "2001:db8::2", 1,
	    T0 - 3 * DAY, 0, "timeout", 5000);
	finish(st, T0 - 3 * DAY, &pop_cfg);
	commit(st);
	begin(st);
	put_check(st, "www.example.org", "web2", "2001:db8::2", 2,
	    T0 - DAY, 0, "connection refused", 12);
	finish(st, T0 - DAY, &pop_cfg);
	commit(st);
	begin(st);
	put_ep(st, "www.example.org", "web1", "192.0.2.1", 0);
	put_ep(st, "www.example.org", "web2", "2001:db8::2", 2);
	memset(&d, 0, sizeof(d));
	d.has_tier = 1;
	d.tier = 10;
	d.tier_rank = 1;
	snprintf(d.tier_location, sizeof(d.tier_location), "boston");
	d.last_change = T0 - 60000;
	assert_int_equal(state_put_domain(sqlite_of(st), "www.example.org",
	    "ns1", 300, &d), 0);
	put_pub(st, "www.example.org", RR_A, "192.0.2.9 192.0.2.1");
	put_pub(st, "www.example.org", RR_AAAA, "");
	assert_int_equal(state_add_change(sqlite_of(st), T0 - 60000,
	    "www.example.org",
	    RR_A, 300, "", "192.0.2.1 192.0.2.9", 10, 1, "boston", 1, NULL), 0);
	assert_int_equal(state_add_change(sqlite_of(st), T0 - 60000,
	    "www.example.org",
	    RR_AAAA, 300, "2001:db8::2", "", 10, 1, "boston", 0,
	    "ns1: REFUSED"), 0);
	finish(st, T0, &pop_cfg);
	commit(st);
	state_close(st);
}

static void
check_populated(struct state *st)
{
	struct st_endpoint	 e;
	struct st_domain	 d;

	assert_int_equal(state_get_endpoint(sqlite_of(st), "www.example.org",
	    "web1",
	    "192.0.2.1", "https://x.example/health", &e), 0);
	assert_true(e.found);
	assert_int_equal(e.failures, 0);
	assert_int_equal(e.passes, 3);
	assert_int_equal(e.removed, 0);
	assert_true(e.last_check == T0);
	assert_int_equal(e.last_ok, 1);
	assert_int_equal(e.last_status, 200);
	assert_int_equal(e.latency_ms, 42);
	assert_string_equal(e.last_result, "ok");

	assert_int_equal(state_get_endpoint(sqlite_of(st), "www.example.org",
	    "web2",
	    "2001:db8::2", "https://x.example/health", &e), 0);
	assert_true(e.found);
	assert_int_equal(e.failures, 2);
	assert_int_equal(e.passes, 0);
	assert_int_equal(e.last_ok, 0);
	assert_int_equal(e.last_status, 503);
	assert_string_equal(e.last_result, "HTTP 503");

	assert_int_equal(state_get_domain(sqlite_of(st), "www.example.org", &d),
	    0);
	assert_true(d.found);
	assert_true(d.has_tier);
	assert_int_equal(d.tier, 10);
	assert_int_equal(d.tier_rank, 1);
	assert_string_equal(d.tier_location, "boston");
	assert_true(d.last_change == T0 - 60000);
	assert_null(d.last_error);
	assert_int_equal(d.unhealthy, 0);
	assert_true(d.has_pub[0]);
	assert_int_equal(d.pub[0].ttl, 300);
	assert_int_equal(d.pub[0].addrs.n, 2);
	assert_string_equal(d.pub[0].addrs.v[0].s, "192.0.2.1");
	assert_string_equal(d.pub[0].addrs.v[1].s, "192.0.2.9");
	assert_true(d.has_pub[1]);		/* emptied, but managed */
	assert_int_equal(d.pub[1].addrs.n, 0);
	state_domain_free(&d);

	assert_int_equal(state_get_domain(sqlite_of(st), "other.example.org",
	    &d), 0);
	assert_false(d.found);
	assert_false(d.has_pub[0]);
	assert_false(d.has_pub[1]);
	state_domain_free(&d);
}

static void
test_roundtrip(void **ctx)
{
	struct fx	*f = *ctx;
	struct state	*st;
	struct st_domain d;
	char		 error[] = "ns1: timed out", longer[600];

	populate(f->path);
	st = open_ok(f->path, STATE_RW);
	check_populated(st);
	assert_true(state_last_run(sqlite_of(st)) == T0);

	/* Overwrites, and fields that mean "none". */
	begin(st);
	memset(&d, 0, sizeof(d));
	d.unhealthy = 1;
	d.last_error = error;
	assert_int_equal(state_put_domain(sqlite_of(st), "www.example.org",
	    "ns2", 60, &d), 0);
	assert_int_equal(state_put_published(sqlite_of(st), "www.example.org",
	    RR_AAAA,
	    NULL), 0);
	commit(st);
	state_close(st);

	st = open_ok(f->path, STATE_RO);
	assert_int_equal(state_get_domain(sqlite_of(st), "www.example.org", &d),
	    0);
	assert_true(d.found);
	assert_false(d.has_tier);
	assert_true(d.last_change == 0);
	assert_string_equal(d.last_error, "ns1: timed out");
	assert_int_equal(d.unhealthy, 1);
	assert_true(d.has_pub[0]);
	assert_false(d.has_pub[1]);
	state_domain_free(&d);
	state_close(st);

	/* A longer stored error is read cut to 511 bytes, as always. */
	st = open_ok(f->path, STATE_RW);
	begin(st);
	memset(&d, 0, sizeof(d));
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	d.last_error = longer;
	assert_int_equal(state_put_domain(sqlite_of(st), "www.example.org",
	    "ns2", 60, &d), 0);
	commit(st);
	assert_int_equal(state_get_domain(sqlite_of(st), "www.example.org", &d),
	    0);
	assert_non_null(d.last_error);
	assert_int_equal(strlen(d.last_error), 511);
	state_domain_free(&d);
	assert_null(d.last_error);
	state_close(st);

	assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
	    state_schema_version);
	assert_int_equal(raw_int(f->path,
	    "SELECT count(*) FROM pragma_integrity_check"
	    " WHERE integrity_check = 'ok'"), 1);
	/* Three streaks of web2, closed but the last; one of web1. */
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM streaks"
	    " WHERE first = '2025-11-30T10:25:56.123Z' AND last IS NULL"), 2);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM streaks"
	    " WHERE endpoint = 'web2' AND last IS NOT NULL"), 2);
	assert_int_equal(raw_int(f->path, "SELECT checks FROM history"
	    " WHERE reason = 'connection refused'"), 1);
}

static void
test_redefined(void **ctx)
{
	struct fx		*f = *ctx;
	struct state		*st;
	struct st_endpoint	 e;

	populate(f->path);
	st = open_ok(f->path, STATE_RO);
	assert_int_equal(state_get_endpoint(sqlite_of(st), "www.example.org",
	    "web1",
	    "192.0.2.77", "https://x.example/health", &e), 0);
	assert_false(e.found);
	assert_int_equal(e.failures, 0);
	assert_int_equal(state_get_endpoint(sqlite_of(st), "www.example.org",
	    "web1",
	    "192.0.2.1", "https://y.example/health", &e), 0);
	assert_false(e.found);
	assert_int_equal(state_get_endpoint(sqlite_of(st), "www.example.org",
	    "nope",
	    "192.0.2.1", "https://x.example/health", &e), 0);
	assert_false(e.found);
	assert_int_equal(state_get_endpoint(sqlite_of(st), "www.example.org",
	    "web1",
	    "192.0.2.1", "https://x.example/health", &e), 0);
	assert_true(e.found);
	state_close(st);
}

static void
test_lock(void **ctx)
{
	struct fx	*f = *ctx;
	struct state		*a, *b = NULL;
	struct st_endpoint	 e;
	char			 err[512] = "";

	a = open_ok(f->path, STATE_RW);
	/* flock locks belong to the open file description: this conflicts. */
	assert_int_equal(state_open_checker(f->path, NULL, STATE_RW, &b, err,
	    sizeof(err)),
	    STATE_LOCKED);
	assert_null(b);
	assert_non_null(strstr(err, f->path));
	assert_non_null(strstr(err, "locked"));

	/*
	 * Readers need no lock, and see the state as it was committed when
	 * they opened, for as long as they are open.
	 */
	begin(a);
	put_ep(a, "d.example", "e", "192.0.2.3", 0);
	b = open_ok(f->path, STATE_RO);
	commit(a);
	assert_int_equal(state_get_endpoint(sqlite_of(b), "d.example", "e",
	    "192.0.2.3",
	    "https://x.example/health", &e), 0);
	assert_false(e.found);
	state_close(b);
	b = open_ok(f->path, STATE_RO);
	assert_int_equal(state_get_endpoint(sqlite_of(b), "d.example", "e",
	    "192.0.2.3",
	    "https://x.example/health", &e), 0);
	assert_true(e.found);
	/* A run can go on (and checkpoint) while a reader is open. */
	begin(a);
	put_ep(a, "d.example", "e", "192.0.2.3", 1);
	commit(a);
	/* Reader first: closing a's lock descriptor drops b's POSIX locks. */
	state_close(b);
	state_close(a);

	a = open_ok(f->path, STATE_RW);
	state_close(a);
}

/* A file that is not ours: refused, and left byte for byte. */
static void
refused(const char *path, const char *want)
{
	struct state	*st = NULL;
	unsigned char	*before, *after;
	size_t		 nb, na;
	char		 err[512] = "";
	int		 mode;

	before = slurp(path, &nb);
	assert_non_null(before);
	for (mode = STATE_RW; mode <= STATE_RO; mode++) {
		err[0] = '\0';
		assert_int_equal(state_open_checker(path, NULL, mode, &st, err,
		    sizeof(err)), STATE_BAD);
		assert_null(st);
		assert_non_null(strstr(err, path));
		if (strstr(err, want) == NULL)
			fail_msg("\"%s\" lacks \"%s\"", err, want);
		after = slurp(path, &na);
		assert_non_null(after);
		assert_int_equal(na, nb);
		assert_memory_equal(after, before, nb);
		free(after);
	}
	free(before);
}

static void
test_junk(void **ctx)
{
	struct fx	*f = *ctx;
	char		 junk[5000];
	size_t		 i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 7 + 3);
	write_file(f->path, junk, sizeof(junk));
	refused(f->path, "not a ddup state file");
	/* Too short to be a database. */
	write_file(f->path, "hello\n", 6);
	refused(f->path, "not a ddup state file");
}


/*
 * A file of schema 1 with a domain on a tier: upgraded in place, its
 * rows kept, the tier without a location, and the new columns usable.
 */
static void
test_migrate_from_1(void **ctx)
{
	struct fx	*f = *ctx;
	struct state	*st;
	struct st_domain d;
	char		 sql[512];

	raw_exec(f->path, state_migrations[0]);
	snprintf(sql, sizeof(sql), "INSERT INTO domains (name, provider, ttl,"
	    " tier, unhealthy) VALUES ('www.example.org', 'ns1', 60, 10, 0);"
	    " INSERT INTO changes (time, domain, type, ttl, old, new, tier,"
	    " ok) VALUES ('2025-11-30T10:25:56.123Z', 'www.example.org', 'A',"
	    " 60, '', '192.0.2.1', 10, 1);"
	    " PRAGMA user_version = 1; PRAGMA application_id = %d",
	    0x64647570);
	raw_exec(f->path, sql);

	st = open_ok(f->path, STATE_RW);
	assert_int_equal(state_get_domain(sqlite_of(st), "www.example.org", &d),
	    0);
	assert_true(d.found && d.has_tier);
	assert_int_equal(d.tier, 10);
	assert_int_equal(d.tier_rank, -1);
	assert_string_equal(d.tier_location, "");
	begin(st);
	d.tier_rank = 2;
	snprintf(d.tier_location, sizeof(d.tier_location), "london");
	assert_int_equal(state_put_domain(sqlite_of(st), "www.example.org",
	    "ns1", 60, &d), 0);
	assert_int_equal(state_add_change(sqlite_of(st), T0, "www.example.org",
	    RR_A, 60,
	    "192.0.2.1", "192.0.2.2", 0, 2, "london", 1, NULL), 0);
	commit(st);
	state_domain_free(&d);
	state_close(st);

	assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
	    state_schema_version);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM changes"), 2);
	assert_int_equal(raw_int(f->path, "SELECT tier_rank FROM domains"), 2);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM changes"
	    " WHERE tier_location = 'london' AND tier_rank = 2"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM changes"
	    " WHERE tier_rank IS NULL AND tier = 10"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM drains"), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM failbacks"), 0);
}

static const struct st_target WEB1 = { "www.example.org", "web1" };
static const struct st_target WEB2 = { "www.example.org", "web2" };
static const struct st_target GONE1 = { "gone.example.org", "web1" };

/* --drain, --undrain, --failback and the controlUrl (ddup-check(8)). */
static void
test_requests(void **ctx)
{
	struct fx		*f = *ctx;
	struct state		*st;
	struct st_requests	 r;
	struct st_domain	 d;
	const struct st_drain	*dr;
	char			 err[512] = "";
	struct endpoint_cfg	 eps[] = { { .name = "web1" }, { .name = "web2" } };
	struct domain_cfg	 doms[] = {
		{ .name = "www.example.org", .eps = eps, .neps = 2 },
	};
	struct config		 c = { .history_ms = DAY, .domains = doms,
		.ndomains = 1 };

	/* No file: nothing asked. */
	assert_int_equal(state_get_requests(NULL, T0, &r), 0);
	assert_int_equal(r.ndrains + r.nfailbacks, 0);

	st = open_ok(f->path, STATE_RW);
	assert_int_equal(state_request_drain(st, &WEB1, 1, T0, 0,
	    err, sizeof(err)), 0);
	assert_int_equal(state_request_drain(st, &WEB2, 1, T0,
	    T0 + 3600 * 1000, err, sizeof(err)), 0);
	assert_int_equal(state_request_drain(st, &GONE1, 1, T0, 0,
	    err, sizeof(err)), 0);
	assert_int_equal(state_request_failback(st, "www.example.org", T0,
	    err, sizeof(err)), 0);
	assert_int_equal(state_request_failback(st, "gone.example.org", T0,
	    err, sizeof(err)), 0);
	/* Asked twice is asked once. */
	assert_int_equal(state_request_failback(st, "www.example.org", T0 + 1,
	    err, sizeof(err)), 0);

	assert_int_equal(state_get_requests(sqlite_of(st), T0 + 1000, &r), 0);
	assert_int_equal(r.ndrains, 3);
	assert_int_equal(r.nfailbacks, 2);
	dr = state_find_drain(&r, "www.example.org", "web1");
	assert_non_null(dr);
	assert_true(dr->since == T0 && dr->until == 0);
	dr = state_find_drain(&r, "www.example.org", "web2");
	assert_non_null(dr);
	assert_true(dr->until == T0 + 3600 * 1000);
	assert_null(state_find_drain(&r, "www.example.org", "web3"));
	assert_true(state_has_failback(&r, "www.example.org"));
	assert_false(state_has_failback(&r, "other.example.org"));
	assert_true(r.control_since == 0);
	state_requests_free(&r);

	/* An hour later web2's drain has run out. */
	assert_int_equal(state_get_requests(sqlite_of(st), T0 + 3600 * 1000,
	    &r), 0);
	assert_int_equal(r.ndrains, 2);
	assert_null(state_find_drain(&r, "www.example.org", "web2"));
	state_requests_free(&r);

	/* A run: failback done, control URL failing, requests pruned. */
	begin(st);
	put_ep(st, "www.example.org", "web1", "192.0.2.1", 0);
	put_ep(st, "www.example.org", "web2", "192.0.2.2", 0);
	memset(&d, 0, sizeof(d));
	assert_int_equal(state_put_domain(sqlite_of(st), "www.example.org",
	    "ns1", 60, &d), 0);
	assert_int_equal(state_clear_failback(sqlite_of(st), "www.example.org"),
	    0);
	assert_int_equal(state_put_control(sqlite_of(st), T0 + 5000,
	    "HTTP 503"), 0);
	assert_int_equal(state_finish_run(sqlite_of(st), T0 + 3600 * 1000, &c),
	    0);
	assert_int_equal(state_prune_requests(sqlite_of(st), T0 + 3600 * 1000),
	    0);
	commit(st);
	assert_int_equal(state_get_requests(sqlite_of(st), T0, &r), 0);
	assert_int_equal(r.ndrains, 1);
	assert_non_null(state_find_drain(&r, "www.example.org", "web1"));
	assert_int_equal(r.nfailbacks, 0);
	assert_true(r.control_since == T0 + 5000);
	assert_string_equal(r.control_result, "HTTP 503");
	state_requests_free(&r);

	/* The next run, the configuration unchanged: the drain stays. */
	begin(st);
	assert_int_equal(state_finish_run(sqlite_of(st), T0 + 3700 * 1000, &c),
	    0);
	assert_int_equal(state_prune_requests(sqlite_of(st), T0 + 3700 * 1000),
	    0);
	commit(st);
	assert_int_equal(state_get_requests(sqlite_of(st), T0, &r), 0);
	assert_int_equal(r.ndrains, 1);
	state_requests_free(&r);

	assert_int_equal(state_request_undrain(st, &WEB1, 1, T0,
	    err, sizeof(err)), 0);
	begin(st);
	assert_int_equal(state_put_control(sqlite_of(st), 0, NULL), 0);
	commit(st);
	assert_int_equal(state_get_requests(sqlite_of(st), T0, &r), 0);
	assert_int_equal(r.ndrains, 0);
	assert_true(r.control_since == 0);
	state_requests_free(&r);
	state_close(st);

	/* Requests need a read-write open. */
	st = open_ok(f->path, STATE_RO);
	assert_int_equal(state_request_failback(st, "www.example.org", T0,
	    err, sizeof(err)), -1);
	assert_non_null(strstr(err, "read-only"));
	state_close(st);
}

static void
test_foreign(void **ctx)
{
	struct fx	*f = *ctx;

	raw_exec(f->path, "CREATE TABLE mail(id INTEGER PRIMARY KEY, body);"
	    " INSERT INTO mail(body) VALUES ('hello')");
	refused(f->path, "not a ddup state file");
	/* Even one with our table names and a schema version. */
	unlink(f->path);
	raw_exec(f->path, "CREATE TABLE endpoints(x); PRAGMA user_version=1");
	refused(f->path, "not a ddup state file");
	/* And one that uses WAL itself. */
	unlink(f->path);
	raw_exec(f->path, "PRAGMA journal_mode=WAL; CREATE TABLE t(x);"
	    " INSERT INTO t VALUES (1)");
	refused(f->path, "not a ddup state file");
}

static void
test_future(void **ctx)
{
	struct fx	*f = *ctx;
	char		 want[256];

	populate(f->path);
	raw_exec(f->path, "PRAGMA user_version = 99");
	snprintf(want, sizeof(want), "%s: state file schema version 99 is"
	    " newer than this ddup-check (%d)", f->path, state_schema_version);
	refused(f->path, want);
}

/*
 * Migration 3 (typed records), from a file of schema 2 as a run of the
 * previous ddup-check left it: the published sets and the changes (tier
 * columns included) stay, and a CNAME, proxied, can then be stored and
 * read back.
 */
static void
test_migrate_typed_records(void **ctx)
{
	struct fx	*f = *ctx;
	struct state	*st;
	struct st_domain d;
	struct rrset	 cn;
	char		 sql[256];

	raw_exec(f->path, state_migrations[0]);
	raw_exec(f->path, state_migrations[1]);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = 2;"
	    " PRAGMA application_id = %d", 0x64647570);
	raw_exec(f->path, sql);
	raw_exec(f->path, "INSERT INTO domains (name, provider, ttl, tier,"
	    " unhealthy) VALUES ('www.example.org', 'ns1', 300, 0, 0);"
	    "INSERT INTO published VALUES"
	    " ('www.example.org', 'A', 300, '192.0.2.1 192.0.2.9'),"
	    " ('www.example.org', 'AAAA', 300, '');"
	    "INSERT INTO changes (time, domain, type, ttl, old, new, tier, ok,"
	    " tier_rank, tier_location) VALUES ('2026-01-01T00:00:00.000Z',"
	    " 'www.example.org', 'A', 300, '', '192.0.2.1 192.0.2.9', 0, 1,"
	    " 1, 'london')");

	st = open_ok(f->path, STATE_RW);
	assert_int_equal(state_get_domain(sqlite_of(st), "www.example.org", &d),
	    0);
	assert_true(d.has_pub[RR_A] && d.has_pub[RR_AAAA]);
	assert_false(d.has_pub[RR_CNAME]);
	assert_int_equal(d.pub[RR_A].type, RR_A);
	assert_int_equal(d.pub[RR_A].ttl, 300);
	assert_int_equal(d.pub[RR_A].addrs.n, 2);
	assert_false(d.pub[RR_A].proxied);
	assert_int_equal(d.pub[RR_AAAA].addrs.n, 0);
	state_domain_free(&d);

	begin(st);
	memset(&cn, 0, sizeof(cn));
	cn.type = RR_CNAME;
	assert_int_equal(rrset_parse(&cn, "lb.example.net"), 0);
	cn.ttl = 1;
	cn.proxied = 1;
	assert_int_equal(state_put_published(sqlite_of(st), "www.example.org",
	    RR_CNAME,
	    &cn), 0);
	/* A set of one type is not stored as another. */
	assert_int_equal(state_put_published(sqlite_of(st), "www.example.org",
	    RR_A,
	    &cn), -1);
	assert_int_equal(state_add_change(sqlite_of(st), T0, "www.example.org",
	    RR_CNAME,
	    1, "", "lb.example.net", 0, -1, NULL, 1, NULL), 0);
	commit(st);
	rrset_clear(&cn);
	state_close(st);

	st = open_ok(f->path, STATE_RO);
	assert_int_equal(state_get_domain(sqlite_of(st), "www.example.org", &d),
	    0);
	assert_true(d.has_pub[RR_CNAME]);
	assert_string_equal(d.pub[RR_CNAME].target, "lb.example.net");
	assert_int_equal(d.pub[RR_CNAME].ttl, 1);
	assert_true(d.pub[RR_CNAME].proxied);
	assert_int_equal(d.pub[RR_A].addrs.n, 2);
	state_domain_free(&d);
	state_close(st);

	assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
	    state_schema_version);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM changes"), 2);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM changes"
	    " WHERE type = 'A' AND new = '192.0.2.1 192.0.2.9'"
	    " AND tier_rank = 1 AND tier_location = 'london'"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM changes"
	    " WHERE type = 'CNAME' AND new = 'lb.example.net'"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_master"
	    " WHERE name = 'changes_time'"), 1);
	assert_int_equal(raw_int(f->path,
	    "SELECT count(*) FROM pragma_integrity_check"
	    " WHERE integrity_check = 'ok'"), 1);
}

/*
 * The notification outbox (schema 7) on a file the previous ddup-check
 * left (schema 6): events stored in the run's transaction, deliveries
 * per section oldest first, attempts recorded one by one, counts for
 * --status, a removed section's events given up, the undelivered view.
 */
static void
test_outbox(void **ctx)
{
	static const char *const both[] = { "ops", "pager" };
	struct fx	*f = *ctx;
	struct state	*st;
	struct st_delivery *v;
	struct st_notify_counts nc;
	char		 sql[256], err[512];
	size_t		 n, i;

	for (i = 0; i < 6; i++)
		raw_exec(f->path, state_migrations[i]);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = 6;"
	    " PRAGMA application_id = %d", 0x64647570);
	raw_exec(f->path, sql);
	raw_exec(f->path, "INSERT INTO domains (name, provider, ttl, tier,"
	    " unhealthy) VALUES ('www.example.org', 'ns1', 300, 0, 0)");

	st = open_ok(f->path, STATE_RW);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
	    state_schema_version);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM domains"), 1);
	begin(st);
	assert_int_equal(state_add_event(sqlite_of(st), T0, "www.example.org",
	    "dns_updated", NULL, "{\"event\":\"dns_updated\"}", both, 2), 0);
	assert_int_equal(state_add_event(sqlite_of(st), T0, "www.example.org",
	    "endpoint_down", "web1", "{\"event\":\"endpoint_down\"}", both,
	    1), 0);
	/* Nobody wants it: not stored. */
	assert_int_equal(state_add_event(sqlite_of(st), T0, "www.example.org",
	    "endpoint_up", "web1", "{}", both, 0), 0);
	commit(st);
	/* Outside a transaction, nothing is stored. */
	assert_int_equal(state_add_event(sqlite_of(st), T0, "x", "dns_updated",
	    NULL,
	    "{}", both, 1), -1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM events"), 2);

	assert_int_equal(state_get_deliveries(st, "ops", &v, &n, NULL, 0), 0);
	assert_int_equal(n, 2);
	assert_true(v[0].event < v[1].event);
	assert_string_equal(v[0].body, "{\"event\":\"dns_updated\"}");
	assert_int_equal(v[0].attempts, 0);
	assert_int_equal(v[0].next_attempt, 0);
	/* The first fails: attempt 1, due again later. */
	v[0].attempts = 1;
	v[0].next_attempt = T0 + 15000;
	assert_int_equal(state_put_delivery(st, "ops", &v[0], T0 + 1, 0, 0,
	    "notify 'ops' at http://127.0.0.1:9/: 503", err, sizeof(err)), 0);
	assert_int_equal(state_notify_counts(st, "ops", &nc, NULL, 0), 0);
	assert_int_equal(nc.pending, 2);
	assert_int_equal(nc.given_up, 0);
	assert_int_equal(nc.oldest_pending, T0);
	assert_string_equal(nc.last_error,
	    "notify 'ops' at http://127.0.0.1:9/: 503");
	state_deliveries_free(v, n);

	assert_int_equal(state_get_deliveries(st, "ops", &v, &n, NULL, 0), 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].attempts, 1);
	assert_int_equal(v[0].next_attempt, T0 + 15000);
	/* Given up, then the next delivered. */
	v[0].attempts = 2;
	v[0].next_attempt = 0;
	assert_int_equal(state_put_delivery(st, "ops", &v[0], T0 + 2, 0, 1,
	    "gone", err, sizeof(err)), 0);
	assert_int_equal(state_put_delivery(st, "ops", &v[1], T0 + 3, 1, 0,
	    NULL, err, sizeof(err)), 0);
	state_deliveries_free(v, n);
	assert_int_equal(state_get_deliveries(st, "ops", &v, &n, NULL, 0), 0);
	assert_int_equal(n, 0);
	state_deliveries_free(v, n);
	assert_int_equal(state_notify_counts(st, "ops", &nc, NULL, 0), 0);
	assert_int_equal(nc.pending, 0);
	assert_int_equal(nc.given_up, 1);
	assert_int_equal(nc.oldest_pending, 0);
	assert_string_equal(nc.last_error, "gone");

	/* pager is no longer configured: its event is given up. */
	begin(st);
	assert_int_equal(state_prune_events(sqlite_of(st), T0 + 4, 86400000,
	    both, 1), 0);
	commit(st);
	assert_int_equal(state_notify_counts(st, "pager", &nc, NULL, 0), 0);
	assert_int_equal(nc.pending, 0);
	assert_int_equal(nc.given_up, 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM undelivered"),
	    2);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM undelivered"
	    " WHERE notifier = 'pager' AND given_up IS NOT NULL AND last_error"
	    " LIKE 'no [notify] section%'"), 1);
	/* Older than history and done with: gone. */
	begin(st);
	assert_int_equal(state_prune_events(sqlite_of(st), T0 + 2 * 86400000LL,
	    86400000,
	    both, 2), 0);
	commit(st);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM events"), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM deliveries"),
	    0);
	state_close(st);
}

static void
test_modes(void **ctx)
{
	struct fx	*f = *ctx;
	struct state	*st;
	struct stat	 sb;
	char		 sub[160], path[200], side[220];
	mode_t		 old;

	snprintf(sub, sizeof(sub), "%s/lib", f->dir);
	snprintf(path, sizeof(path), "%s/ddup.db", sub);
	old = umask(0);
	st = open_ok(path, STATE_RW);
	assert_int_equal(umask(0), 0);		/* given back */
	begin(st);
	put_ep(st, "d.example", "e", "192.0.2.3", 0);
	commit(st);
	assert_int_equal(stat(sub, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0700);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	snprintf(side, sizeof(side), "%s-wal", path);
	assert_int_equal(stat(side, &sb), 0);	/* WAL while open */
	assert_int_equal(sb.st_mode & 07777, 0600);
	snprintf(side, sizeof(side), "%s-shm", path);
	assert_int_equal(stat(side, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	assert_int_equal(raw_int(path, "SELECT count(*) FROM"
	    " pragma_journal_mode WHERE journal_mode = 'wal'"), 1);
	state_close(st);
	umask(old);
}

static void
test_missing_parents(void **ctx)
{
	struct fx	*f = *ctx;
	struct state	*st = NULL;
	struct stat	 sb;
	char		 path[200], err[512] = "";

	/* Every missing level is created, each private. */
	snprintf(path, sizeof(path), "%s/a/b/c/ddup.db", f->dir);
	assert_int_equal(state_open_checker(path, NULL, STATE_RW, &st, err,
	    sizeof(err)),
	    STATE_OK);
	assert_non_null(st);
	state_close(st);
	snprintf(path, sizeof(path), "%s/a", f->dir);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0700);
	snprintf(path, sizeof(path), "%s/a/b", f->dir);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0700);
	snprintf(path, sizeof(path), "%s/a/b/c", f->dir);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0700);
	/* A file where a folder should be is reported, naming it. */
	snprintf(path, sizeof(path), "%s/a/b/c/ddup.db/x/ddup.db", f->dir);
	assert_int_equal(state_open_checker(path, NULL, STATE_RW, &st, err,
	    sizeof(err)),
	    STATE_BAD);
	assert_null(st);
	assert_non_null(strstr(err, "ddup.db/x"));
}

static void
test_ro_missing(void **ctx)
{
	struct fx		*f = *ctx;
	struct state		*st = (struct state *)1;
	struct st_endpoint	 e;
	struct st_domain	 d;
	struct stat		 sb;
	char			 path[200], err[512] = "";

	assert_int_equal(state_open_checker(f->path, NULL, STATE_RO, &st, err,
	    sizeof(err)),
	    STATE_OK);
	assert_null(st);
	assert_int_equal(stat(f->path, &sb), -1);
	snprintf(path, sizeof(path), "%s/sub/ddup.db", f->dir);
	assert_int_equal(state_open_checker(path, NULL, STATE_RO, &st, err,
	    sizeof(err)),
	    STATE_OK);
	assert_null(st);
	snprintf(path, sizeof(path), "%s/sub", f->dir);
	assert_int_equal(stat(path, &sb), -1);

	/* NULL reads as an empty state. */
	assert_int_equal(state_get_endpoint(NULL, "d", "e", "192.0.2.1", "u",
	    &e), 0);
	assert_false(e.found);
	assert_int_equal(state_get_domain(NULL, "d", &d), 0);
	assert_false(d.found);
	state_domain_free(&d);
	assert_true(state_last_run(NULL) == 0);
	state_close(NULL);

	/* A zero-size file (a run stopped before writing) is empty too. */
	write_file(f->path, "", 0);
	assert_int_equal(state_open_checker(f->path, NULL, STATE_RO, &st, err,
	    sizeof(err)),
	    STATE_OK);
	assert_null(st);
	st = open_ok(f->path, STATE_RW);
	state_close(st);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
	    state_schema_version);
}

/*
 * state_load(): the snapshot of a run, one read of everything, equal to
 * what the row functions read; with results the last result too; an
 * unknown domain and endpoint as not found; no file as an empty state.
 */
static void
test_load(void **ctx)
{
	struct fx		*f = *ctx;
	struct state		*st;
	struct st_snapshot	 snap;
	struct endpoint_cfg	 eps[] = {
		{ .name = "web1", .url = "https://x.example/health" },
		{ .name = "web2", .url = "https://x.example/health" },
	};
	struct endpoint_cfg	 other[] = {
		{ .name = "web9", .url = "https://x.example/health" },
	};
	struct domain_cfg	 doms[] = {
		{ .name = "www.example.org", .eps = eps, .neps = 2 },
		{ .name = "other.example.org", .eps = other, .neps = 1 },
	};
	struct config		 c = { .domains = doms, .ndomains = 2 };
	int			 results;

	assert_int_equal(addr_parse("192.0.2.1", &eps[0].ip), 0);
	assert_int_equal(addr_parse("2001:db8::2", &eps[1].ip), 0);
	assert_int_equal(addr_parse("192.0.2.99", &other[0].ip), 0);
	populate(f->path);
	for (results = 0; results <= 1; results++) {
		st = open_ok(f->path, results ? STATE_RO : STATE_RW);
		assert_int_equal(state_load(st, &c, results, T0, &snap, NULL,
		    0), 0);
		assert_true(snap.last_run == T0);
		assert_true(snap.doms[0].found);
		assert_int_equal(snap.doms[0].tier, 10);
		assert_string_equal(snap.doms[0].tier_location, "boston");
		assert_int_equal(snap.doms[0].pub[0].addrs.n, 2);
		assert_false(snap.doms[1].found);
		assert_true(snap.eps[0].found);
		assert_int_equal(snap.eps[0].passes, 3);
		assert_true(snap.eps[0].last_check == T0);
		assert_int_equal(snap.eps[0].latency_ms, 42);
		assert_true(snap.eps[1].found);
		assert_int_equal(snap.eps[1].failures, 2);
		assert_int_equal(snap.eps[1].last_ok, 0);
		assert_false(snap.eps[2].found);
		if (results) {
			assert_string_equal(snap.eps[0].last_result, "ok");
			assert_string_equal(snap.eps[1].last_result,
			    "HTTP 503");
		} else
			assert_null(snap.eps[0].last_result);
		assert_null(snap.eps[2].last_result);
		assert_int_equal(snap.req->ndrains, 0);
		state_snapshot_free(&c, &snap);
		assert_null(snap.doms);
		state_close(st);
	}
	/* No state at all. */
	assert_int_equal(state_load(NULL, &c, 1, T0, &snap, NULL, 0), 0);
	assert_true(snap.last_run == 0);
	assert_false(snap.doms[0].found);
	assert_false(snap.eps[1].found);
	state_snapshot_free(&c, &snap);
}

/*
 * A PostgreSQL state that cannot be reached: STATE_BAD, the URI shown
 * without its password (loopback, a port nothing listens on).
 */
static void
test_pg_unreachable(void **ctx)
{
	struct state	*st;
	char		 err[512];
	const char	*want = "state postgresql://u:***@127.0.0.1:1/d: cannot "
	    "connect: ";

	(void)ctx;
	assert_int_equal(state_open_checker("postgresql://u:s3cret@127.0.0.1:1"
	    "/d", "a", STATE_RW, &st, err, sizeof(err)), STATE_BAD);
	assert_null(st);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("%s", err);
	assert_null(strstr(err, "s3cret"));
	assert_null(strchr(err, '\n'));
}

static void
test_finish_run(void **ctx)
{
	struct fx		*f = *ctx;
	struct state		*st;
	struct st_endpoint	 e;
	struct st_domain	 d;
	struct endpoint_cfg	 eps[] = { { .name = "web1" } };
	struct domain_cfg	 doms[] = {
		{ .name = "www.example.org", .eps = eps, .neps = 1,
		  .has4 = 1 },
		{ .name = "new.example.org" },
	};
	const char		*keep;
	char			 cmd[600];
	struct config		 c = {
		.history_ms = 2 * DAY,
		.domains = doms,
		.ndomains = 2,
	};

	struct endpoint_cfg	 gone_eps[] = { { .name = "web1" } };
	struct domain_cfg	 then[] = {
		pop_doms[0],
		{ .name = "gone.example.org", .eps = gone_eps, .neps = 1,
		  .has4 = 1 },
	};
	struct config		 c_then = {
		.history_ms = 30 * DAY, .domains = then, .ndomains = 2,
	};

	populate(f->path);
	st = open_ok(f->path, STATE_RW);
	begin(st);
	put_passing(st, "www.example.org", "web1", "192.0.2.1", 4, T0 + 500);
	put_ep(st, "www.example.org", "web2", "2001:db8::2", 2);
	put_check(st, "gone.example.org", "web1", "192.0.2.5", 0, T0 + 500,
	    200, "ok", 7);
	put_pub(st, "gone.example.org", RR_A, "192.0.2.5");
	memset(&d, 0, sizeof(d));
	assert_int_equal(state_put_domain(sqlite_of(st), "gone.example.org",
	    "ns1", 300, &d), 0);
	assert_int_equal(state_add_change(sqlite_of(st), T0 - 400 * DAY,
	    "gone.example.org", RR_A, 300, "", "192.0.2.5", -1, -1, NULL, 1,
	    NULL), 0);
	finish(st, T0 + 500, &c_then);
	commit(st);
	/* The cut is exact to the millisecond. */
	raw_exec(f->path, "INSERT INTO streaks (domain, endpoint, ip, first,"
	    " last, checks, run, ok, reason, latency_min, latency_mean,"
	    " latency_max, latency_samples) VALUES"
	    " ('www.example.org', 'web1', '192.0.2.1', '2025-11-28T10:25:57.122Z',"
	    " '2025-11-28T10:25:57.122Z', 1, 0, 1, 'edge-old', 1, 1, 1, 1),"
	    " ('www.example.org', 'web1', '192.0.2.1', '2025-11-28T10:25:57.123Z',"
	    " '2025-11-28T10:25:57.123Z', 1, 0, 1, 'edge-kept', 1, 1, 1, 1)");
	begin(st);
	put_passing(st, "www.example.org", "web1", "192.0.2.1", 5, T0 + 1000);
	finish(st, T0 + 1000, &c);
	commit(st);
	state_close(st);

	st = open_ok(f->path, STATE_RO);
	assert_true(state_last_run(sqlite_of(st)) == T0 + 1000);
	assert_int_equal(state_get_endpoint(sqlite_of(st), "www.example.org",
	    "web1",
	    "192.0.2.1", "https://x.example/health", &e), 0);
	assert_true(e.found);
	assert_int_equal(state_get_endpoint(sqlite_of(st), "www.example.org",
	    "web2",
	    "2001:db8::2", "https://x.example/health", &e), 0);
	assert_false(e.found);
	assert_int_equal(state_get_endpoint(sqlite_of(st), "gone.example.org",
	    "web1",
	    "192.0.2.5", "https://x.example/health", &e), 0);
	assert_false(e.found);
	assert_int_equal(state_get_domain(sqlite_of(st), "gone.example.org",
	    &d), 0);
	assert_false(d.found);
	assert_false(d.has_pub[0]);
	state_domain_free(&d);
	/* AAAA is no longer managed: only the A set stays. */
	assert_int_equal(state_get_domain(sqlite_of(st), "www.example.org", &d),
	    0);
	assert_true(d.found);
	assert_true(d.has_pub[0]);
	assert_false(d.has_pub[1]);
	state_domain_free(&d);
	state_close(st);

	/*
	 * History stays (also of web2 and of the endpoint gone, whose
	 * streak ends at its last check), except what is too old.
	 */
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM streaks"), 5);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM streaks"
	    " WHERE reason = 'edge-kept'"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM streaks"
	    " WHERE endpoint = 'web2'"), 2);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM streaks"
	    " WHERE reason = 'timeout'"), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM history"
	    " WHERE domain = 'gone.example.org' AND NOT open AND checks = 1"
	    " AND last = '2025-11-30T10:25:56.623Z'"), 1);
	/* web1 passed in three runs: its counter follows without a write. */
	assert_int_equal(raw_int(f->path, "SELECT passes FROM current"
	    " WHERE endpoint = 'web1'"), 5);
	assert_int_equal(raw_int(f->path, "SELECT streak_checks FROM current"
	    " WHERE endpoint = 'web1'"), 3);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM changes"), 2);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM changes"
	    " WHERE domain = 'gone.example.org'"), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM domains"), 1);

	keep = getenv("DDUP_TEST_KEEP");
	if (keep != NULL) {
		snprintf(cmd, sizeof(cmd), "cp %s %s/state.db", f->path, keep);
		assert_int_equal(system(cmd), 0);
	}
}

/* An update under way is on disk before it is sent, and cleared by a save. */
static void
test_unsure(void **ctx)
{
	struct fx		*f = *ctx;
	struct state		*st;
	struct st_domain	 d;
	char			 err[256];

	st = open_ok(f->path, STATE_RW);
	/* Refused inside the run's transaction: it must commit alone. */
	begin(st);
	assert_int_equal(state_mark_unsure(st, "d.example", "p", 60, err,
	    sizeof(err)), -1);
	state_rollback(sqlite_of(st));
	assert_int_equal(state_mark_unsure(st, "d.example", "p", 60, err,
	    sizeof(err)), 0);
	state_close(st);	/* as a killed run would leave it */

	st = open_ok(f->path, STATE_RW);
	assert_int_equal(state_get_domain(sqlite_of(st), "d.example", &d), 0);
	assert_true(d.found);
	assert_true(d.unsure);
	assert_false(d.has_tier);
	d.unsure = 0;
	begin(st);
	assert_int_equal(state_put_domain(sqlite_of(st), "d.example", "p", 60,
	    &d), 0);
	commit(st);
	state_domain_free(&d);
	assert_int_equal(state_get_domain(sqlite_of(st), "d.example", &d), 0);
	assert_false(d.unsure);
	state_domain_free(&d);
	state_close(st);
}

static void
test_rollback(void **ctx)
{
	struct fx		*f = *ctx;
	struct state		*st;
	struct st_endpoint	 e;
	struct st_domain	 d;

	st = open_ok(f->path, STATE_RW);
	begin(st);
	put_ep(st, "d.example", "e", "192.0.2.3", 0);
	put_pub(st, "d.example", RR_A, "192.0.2.3");
	state_rollback(sqlite_of(st));
	assert_int_equal(state_get_endpoint(sqlite_of(st), "d.example", "e",
	    "192.0.2.3",
	    "https://x.example/health", &e), 0);
	assert_false(e.found);
	/* A transaction left open at close is rolled back too. */
	begin(st);
	put_ep(st, "d.example", "e", "192.0.2.3", 0);
	state_close(st);

	st = open_ok(f->path, STATE_RO);
	assert_int_equal(state_get_endpoint(sqlite_of(st), "d.example", "e",
	    "192.0.2.3",
	    "https://x.example/health", &e), 0);
	assert_false(e.found);
	assert_int_equal(state_get_domain(sqlite_of(st), "d.example", &d), 0);
	assert_false(d.has_pub[0]);
	state_domain_free(&d);
	state_close(st);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM streaks"), 0);
}

static void
test_needs_tx(void **ctx)
{
	struct fx		*f = *ctx;
	struct state		*st;
	struct st_endpoint	 e;
	char			 err[512] = "";

	memset(&e, 0, sizeof(e));
	st = open_ok(f->path, STATE_RW);
	assert_int_equal(state_put_endpoint(sqlite_of(st), "d", "e",
	    "192.0.2.1", "u", 1,
	    &e), -1);
	assert_non_null(strstr(state_errmsg(st), "no transaction"));
	assert_int_equal(state_commit(sqlite_of(st), err, sizeof(err)), -1);
	state_close(st);

	st = open_ok(f->path, STATE_RO);
	assert_int_equal(state_begin(sqlite_of(st), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "read-only"));
	assert_int_equal(state_put_endpoint(sqlite_of(st), "d", "e",
	    "192.0.2.1", "u", 1,
	    &e), -1);
	assert_non_null(strstr(state_errmsg(st), "read-only"));
	state_close(st);
}

/* A run killed before or after its commit (no state_close at all). */
static void
test_crash(void **ctx)
{
	struct fx		*f = *ctx;
	struct state		*st;
	struct st_endpoint	 e;
	pid_t			 pid;
	int			 status, commit_it;

	for (commit_it = 0; commit_it <= 1; commit_it++) {
		pid = fork();
		assert_true(pid != -1);
		if (pid == 0) {
			/* No cmocka asserts here: they belong to the parent. */
			memset(&e, 0, sizeof(e));
			if (state_open_checker(f->path, NULL, STATE_RW, &st,
			    NULL, 0) != 0 ||
			    state_begin(sqlite_of(st), NULL, 0) != 0 ||
			    state_put_endpoint(sqlite_of(st), "d.example",
			    commit_it ? "kept" : "lost", "192.0.2.3",
			    "https://x.example/health", 1, &e) != 0 ||
			    (commit_it && state_commit(sqlite_of(st), NULL,
			    0) != 0))
				_exit(1);
			kill(getpid(), SIGKILL);
			_exit(1);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	}
	st = open_ok(f->path, STATE_RW);
	assert_int_equal(state_get_endpoint(sqlite_of(st), "d.example", "kept",
	    "192.0.2.3", "https://x.example/health", &e), 0);
	assert_true(e.found);
	assert_int_equal(state_get_endpoint(sqlite_of(st), "d.example", "lost",
	    "192.0.2.3", "https://x.example/health", &e), 0);
	assert_false(e.found);
	state_close(st);
	assert_int_equal(raw_int(f->path,
	    "SELECT count(*) FROM pragma_integrity_check"
	    " WHERE integrity_check = 'ok'"), 1);
}

/*
 * A first run killed while SQLite switched the new file to WAL leaves a
 * rollback journal that a read-only connection cannot roll back.  Made
 * here the same way: a transaction on an empty file that spills pages
 * to it, then SIGKILL.
 */
static void
make_hot_journal(const char *path, int was_empty)
{
	sqlite3		*db;
	pid_t		 pid;
	int		 status, i;

	if (!was_empty)
		raw_exec(path, "CREATE TABLE mail(id INTEGER PRIMARY KEY,"
		    " body); INSERT INTO mail(body) VALUES ('hello')");
	else
		write_file(path, "", 0);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		if (sqlite3_open(path, &db) != SQLITE_OK ||
		    sqlite3_exec(db, "PRAGMA cache_size = 1; BEGIN;"
		    " CREATE TABLE t(x)", NULL, NULL, NULL) != SQLITE_OK)
			_exit(1);
		for (i = 0; i < 500; i++)
			if (sqlite3_exec(db, "INSERT INTO t VALUES"
			    " (printf('%.500c', 'x'))", NULL, NULL, NULL)
			    != SQLITE_OK)
				_exit(1);
		kill(getpid(), SIGKILL);
		_exit(1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

static void
test_hot_journal(void **ctx)
{
	struct fx	*f = *ctx;
	struct state	*st = (struct state *)1;
	struct stat	 sb;
	char		 jpath[160], err[512] = "";

	snprintf(jpath, sizeof(jpath), "%s-journal", f->path);
	make_hot_journal(f->path, 1);
	assert_int_equal(stat(jpath, &sb), 0);
	assert_int_equal(stat(f->path, &sb), 0);
	assert_true(sb.st_size > 0);

	/* Read-only: the state before that first run, which is none. */
	assert_int_equal(state_open_checker(f->path, NULL, STATE_RO, &st, err,
	    sizeof(err)),
	    STATE_OK);
	assert_null(st);
	/* A run rolls it back and sets the file up. */
	populate(f->path);
	assert_int_equal(stat(jpath, &sb), -1);
	st = open_ok(f->path, STATE_RO);
	check_populated(st);
	state_close(st);
	assert_int_equal(raw_int(f->path,
	    "SELECT count(*) FROM pragma_integrity_check"
	    " WHERE integrity_check = 'ok'"), 1);

	/* Another program's unfinished transaction: not ours to undo. */
	unlink(f->path);
	make_hot_journal(f->path, 0);
	assert_int_equal(stat(jpath, &sb), 0);
	refused(f->path, "-journal holds an unfinished transaction");
	assert_int_equal(stat(jpath, &sb), 0);
}

/* Reads end to end, for a child that must not use cmocka. */
static int
read_all(int fd, void *buf, size_t len)
{
	unsigned char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		n = read(fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Blocks until every writer of fd has closed it. */
static void
wait_eof(int fd)
{
	char	 c;

	while (read(fd, &c, 1) > 0 || errno == EINTR)
		;
}

/*
 * --status and --dry-run open read-only while a run (another process)
 * holds its write transaction: no SQLITE_BUSY, the last committed state,
 * well within the busy timeout.
 */
static void
test_ro_during_run(void **ctx)
{
	struct fx		*f = *ctx;
	struct state		*st;
	struct st_endpoint	 e;
	int			 ready[2], go[2], status;
	long long		 t;
	pid_t			 pid;
	char			 c = 'r';

	populate(f->path);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		memset(&e, 0, sizeof(e));
		e.failures = 5;
		if (state_open_checker(f->path, NULL, STATE_RW, &st, NULL,
		    0) != STATE_OK ||
		    state_begin(sqlite_of(st), NULL, 0) != 0 ||
		    state_put_endpoint(sqlite_of(st), "www.example.org", "web1",
		    "192.0.2.1", "https://x.example/health", 10, &e) != 0 ||
		    write(ready[1], &c, 1) != 1)
			_exit(1);
		wait_eof(go[0]);
		if (state_commit(sqlite_of(st), NULL, 0) != 0)
			_exit(1);
		state_close(st);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	assert_int_equal(read_all(ready[0], &c, 1), 0);

	t = mono_ms();
	st = open_ok(f->path, STATE_RO);
	check_populated(st);
	state_close(st);
	t = mono_ms() - t;
	/* Milliseconds really; a wait for the lock would take 5 s. */
	if (t > bound_ms(2500))
		fail_msg("read-only open during a run took %lld ms", t);

	close(go[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(ready[0]);
	st = open_ok(f->path, STATE_RO);
	assert_int_equal(state_get_endpoint(sqlite_of(st), "www.example.org",
	    "web1",
	    "192.0.2.1", "https://x.example/health", &e), 0);
	assert_true(e.found);
	assert_int_equal(e.failures, 5);
	state_close(st);
}

/*
 * Readers while runs come and go, each with its whole open, commit and
 * close (which checkpoints and removes the WAL): every read works and
 * sees a committed run, never an older one than the read before.
 */
static void
test_ro_while_runs(void **ctx)
{
	struct fx		*f = *ctx;
	struct state		*st;
	struct st_endpoint	 e;
	char			 err[512];
	long			 last = -1;
	int			 status, i, reads = 0, done = 0;
	pid_t			 pid;

	populate(f->path);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		for (i = 1; i <= 60; i++) {
			memset(&e, 0, sizeof(e));
			e.failures = i;
			if (state_open_checker(f->path, NULL, STATE_RW, &st,
			    NULL, 0)
			    != STATE_OK || state_begin(sqlite_of(st), NULL,
			    0) != 0 ||
			    state_put_endpoint(sqlite_of(st), "www.example.org",
			    "web1",
			    "192.0.2.1", "https://x.example/health", 10, &e)
			    != 0 || state_commit(sqlite_of(st), NULL, 0) != 0)
				_exit(1);
			state_close(st);
		}
		_exit(0);
	}
	while (!done) {
		done = waitpid(pid, &status, WNOHANG) == pid;
		st = NULL;
		err[0] = '\0';
		if (state_open_checker(f->path, NULL, STATE_RO, &st, err,
		    sizeof(err))
		    != STATE_OK)
			fail_msg("read-only open %d: %s", reads, err);
		assert_non_null(st);
		if (state_get_endpoint(sqlite_of(st), "www.example.org", "web1",
		    "192.0.2.1", "https://x.example/health", &e) != 0)
			fail_msg("read %d: %s", reads, state_errmsg(st));
		state_close(st);
		assert_true(e.found);
		assert_true(e.failures >= last);
		last = e.failures;
		reads++;
	}
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(last, 60);
	assert_true(reads > 1);
}

struct race_result {
	int		 rc;
	int		 busy;		/* "database is locked" in the error */
	long long	 ms;
};

/*
 * 20 runs start at the same moment (released together by closing a
 * pipe): one gets the state, the others STATE_LOCKED at once, without
 * touching SQLite (no "database is locked").  The winner keeps the lock
 * until every loser has answered.  First on a new file, then on an
 * existing one.
 */
static void
test_concurrent_runs(void **ctx)
{
	struct fx		*f = *ctx;
	struct race_result	 r;
	struct state		*st;
	enum { NRUNS = 20 };
	pid_t			 pids[NRUNS];
	char			 err[512];
	int			 go[2], res[2], rel[2], round, i, n_ok,
				 n_locked, status;

	for (round = 0; round < 2; round++) {
		assert_int_equal(pipe(go), 0);
		assert_int_equal(pipe(res), 0);
		assert_int_equal(pipe(rel), 0);
		for (i = 0; i < NRUNS; i++) {
			pids[i] = fork();
			assert_true(pids[i] != -1);
			if (pids[i] != 0)
				continue;
			close(go[1]);
			close(res[0]);
			close(rel[1]);
			wait_eof(go[0]);
			st = NULL;
			err[0] = '\0';
			r.ms = mono_ms();
			r.rc = state_open_checker(f->path, NULL, STATE_RW, &st,
			    err,
			    sizeof(err));
			r.ms = mono_ms() - r.ms;
			r.busy = strstr(err, "database is locked") != NULL ||
			    (r.rc == STATE_LOCKED &&
			    strstr(err, "locked by another") == NULL);
			if (write(res[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
				_exit(1);
			wait_eof(rel[0]);
			state_close(st);
			_exit(0);
		}
		close(go[0]);
		close(res[1]);
		close(rel[0]);
		close(go[1]);		/* all start now */

		n_ok = n_locked = 0;
		for (i = 0; i < NRUNS; i++) {
			assert_int_equal(read_all(res[0], &r, sizeof(r)), 0);
			assert_false(r.busy);
			if (r.rc == STATE_OK) {
				n_ok++;
			} else {
				assert_int_equal(r.rc, STATE_LOCKED);
				n_locked++;
				if (r.ms >= bound_ms(1000))
					fail_msg("a second run took %lld ms"
					    " to give up", r.ms);
			}
		}
		close(rel[1]);		/* the winner may close now */
		close(res[0]);
		for (i = 0; i < NRUNS; i++) {
			assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
			assert_true(WIFEXITED(status) &&
			    WEXITSTATUS(status) == 0);
		}
		assert_int_equal(n_ok, 1);
		assert_int_equal(n_locked, NRUNS - 1);
		if (round == 0)
			assert_int_equal(raw_int(f->path,
			    "PRAGMA user_version"), state_schema_version);
		else
			populate(f->path);	/* and the lock was let go */
	}
}

/*
 * 10,000 endpoints: the first run writes a row and a streak each, in
 * one transaction; a steady run writes its meta rows and the latency
 * samples of one streak in 16, in blocks that share pages; a run where
 * 100 endpoints change writes 300 rows more (close, open, endpoint).
 */
static void
test_many_checks(void **ctx)
{
	struct fx		*f = *ctx;
	struct state		*st;
	struct st_endpoint	 e;
	struct endpoint_cfg	*eps;
	struct domain_cfg	 dom = { .name = "d.example", .has4 = 1 };
	struct config		 c = { .history_ms = 30 * DAY, .ndomains = 1 };
	long long		 t, rows, pages;
	int			 i, run;
	char			(*names)[16];

	eps = calloc(10000, sizeof(*eps));
	names = calloc(10000, sizeof(*names));
	assert_non_null(eps);
	assert_non_null(names);
	for (i = 0; i < 10000; i++) {
		snprintf(names[i], sizeof(names[i]), "ep%d", i);
		eps[i].name = names[i];
	}
	dom.eps = eps;
	dom.neps = 10000;
	c.domains = &dom;
	st = open_ok(f->path, STATE_RW);
	for (run = 0; run < 3; run++) {
		t = mono_ms();
		begin(st);
		for (i = 0; i < 10000; i++) {
			int flap = run == 2 && i % 100 == 0;

			assert_int_equal(state_get_endpoint(sqlite_of(st),
			    "d.example",
			    names[i], "192.0.2.1", "u", &e), 0);
			e.failures = flap ? 1 : 0;
			e.passes = flap ? 0 : run + 1;
			e.last_check = T0 + run * 30000;
			e.last_ok = !flap;
			e.last_status = flap ? 503 : 200;
			e.latency_ms = 1 + i % 2;
			snprintf(e.last_result, sizeof(e.last_result), "%s",
			    flap ? "HTTP 503" : "ok");
			assert_int_equal(state_put_endpoint(sqlite_of(st),
			    "d.example",
			    names[i], "192.0.2.1", "u", 1, &e), 0);
		}
		finish(st, T0 + run * 30000, &c);
		commit(st);
		t = mono_ms() - t;
		state_last_writes(st, &rows, &pages);
		print_message("run %d: %lld rows changed, %lld pages, %lld ms\n",
		    run, rows, pages, t);
		if (run == 0)
			assert_true(rows >= 20000);
		else if (run == 1)
			assert_true(rows <= 2 + 10000 / 16 + 64 && pages <= 40);
		else
			assert_true(rows >= 300 && rows <= 302 + 10000 / 16 + 64 &&
			    pages <= 400);
		if (t > bound_ms(5000))
			fail_msg("10000 checks took %lld ms", t);
	}
	assert_int_equal(state_get_endpoint(sqlite_of(st), "d.example", "ep1",
	    "192.0.2.1", "u", &e), 0);
	assert_int_equal(e.passes, 3);
	state_close(st);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM streaks"),
	    10100);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM streaks"
	    " WHERE last IS NOT NULL AND checks = 2"), 100);
	free(eps);
	free(names);
}

/* The dashboard's last changes: newest first, at most max, every field. */
static void
test_recent_changes(void **ctx)
{
	struct fx	*f = *ctx;
	struct state	*st;
	struct st_change *c;
	size_t		 n, i;
	char		 set[32];

	st = open_ok(f->path, STATE_RW);
	assert_int_equal(state_recent_changes(st, 20, &c, &n, NULL, 0), 0);
	assert_int_equal(n, 0);
	state_changes_free(c, n);
	begin(st);
	for (i = 0; i < 25; i++) {
		snprintf(set, sizeof(set), "192.0.2.%zu", i + 1);
		assert_int_equal(state_add_change(sqlite_of(st),
		    T0 + (long long)i * 1000,
		    "www.example.org", RR_A, 60, i == 0 ? "" : "192.0.2.99",
		    set, (long)i, -1, NULL, i != 24, i == 24 ? "ns1: REFUSED" :
		    NULL), 0);
	}
	/* Two in the same millisecond: the one added last is the newer. */
	assert_int_equal(state_add_change(sqlite_of(st), T0 + 24000,
	    "www.example.org",
	    RR_AAAA, 60, "", "2001:db8::1", -1, -1, NULL, 1, NULL), 0);
	commit(st);
	assert_int_equal(state_recent_changes(st, 20, &c, &n, NULL, 0), 0);
	assert_int_equal(n, 20);
	assert_true(c[0].when == T0 + 24000);
	assert_string_equal(c[0].type, "AAAA");
	assert_string_equal(c[0].old_set, "");
	assert_int_equal(c[0].tier, -1);
	assert_true(c[0].ok);
	assert_null(c[0].error);
	assert_string_equal(c[1].type, "A");
	assert_string_equal(c[1].new_set, "192.0.2.25");
	assert_false(c[1].ok);
	assert_string_equal(c[1].error, "ns1: REFUSED");
	assert_int_equal(c[1].tier, 24);
	assert_int_equal(c[1].ttl, 60);
	assert_string_equal(c[19].new_set, "192.0.2.7");
	assert_true(c[19].when == T0 + 6000);
	state_changes_free(c, n);
	state_close(st);
	/* A missing file reads as no change. */
	assert_int_equal(state_recent_changes(NULL, 20, &c, &n, NULL, 0), 0);
	assert_int_equal(n, 0);
	assert_null(c);
}

/*
 * Migration 7 from a file of version 6: the counters start with the
 * checks history holds, keep a pruned streak's checks, and count DNS
 * updates as told.
 */
static void
test_counters(void **ctx)
{
	struct fx		*f = *ctx;
	struct state		*st;
	struct st_counter	*c;
	size_t			 n;
	int			 i;
	char			 sql[1024];

	for (i = 0; i < 6; i++)
		raw_exec(f->path, state_migrations[i]);
	snprintf(sql, sizeof(sql), "REPLACE INTO meta VALUES ('runs', '10'),"
	    " ('last_run', '2025-11-30T10:25:56.123Z');"
	    /* A closed streak of 4 passes, then an open one of failures
	       from run 8 on (3 checks by run 10). */
	    " INSERT INTO streaks VALUES (1, 'www.example.org', 'web1',"
	    "  '192.0.2.1', '2025-11-30T10:00:00.000Z',"
	    "  '2025-11-30T10:03:00.000Z', 4, 4, 1, 200, 'ok', 1, 1.0, 1, 1),"
	    " (2, 'www.example.org', 'web1', '192.0.2.1',"
	    "  '2025-11-30T10:04:00.000Z', NULL, NULL, 8, 0, 503, 'HTTP 503',"
	    "  1, 1.0, 1, 1);"
	    " PRAGMA user_version = 6; PRAGMA application_id = %d",
	    0x64647570);
	raw_exec(f->path, sql);

	st = open_ok(f->path, STATE_RW);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
	    state_schema_version);
	assert_int_equal(state_counters(st, &c, &n, NULL, 0), 0);
	assert_int_equal(n, 2);
	assert_int_equal(state_counter(c, n, "www.example.org", "web1",
	    "checks_pass"), 4);
	assert_int_equal(state_counter(c, n, "www.example.org", "web1",
	    "checks_fail"), 3);
	assert_int_equal(state_counter(c, n, "www.example.org", "web2",
	    "checks_fail"), 0);
	state_counters_free(c, n);

	/* Counting needs a transaction; two updates, one failure. */
	assert_int_equal(state_count(sqlite_of(st), "www.example.org", "",
	    "dns_ok", 1),
	    -1);
	begin(st);
	assert_int_equal(state_count(sqlite_of(st), "www.example.org", "",
	    "dns_ok", 1), 0);
	assert_int_equal(state_count(sqlite_of(st), "www.example.org", "",
	    "dns_ok", 1), 0);
	assert_int_equal(state_count(sqlite_of(st), "www.example.org", "",
	    "dns_failed", 1), 0);
	commit(st);
	state_close(st);

	/* Both streaks pruned: their checks stay counted. */
	raw_exec(f->path, "DELETE FROM streaks");
	st = open_ok(f->path, STATE_RO);
	assert_int_equal(state_counters(st, &c, &n, NULL, 0), 0);
	assert_int_equal(n, 4);
	assert_int_equal(state_counter(c, n, "www.example.org", "web1",
	    "checks_pass"), 4);
	assert_int_equal(state_counter(c, n, "www.example.org", "web1",
	    "checks_fail"), 3);
	assert_int_equal(state_counter(c, n, "www.example.org", "",
	    "dns_ok"), 2);
	assert_int_equal(state_counter(c, n, "www.example.org", "",
	    "dns_failed"), 1);
	state_counters_free(c, n);
	state_close(st);
	assert_int_equal(state_counters(NULL, &c, &n, NULL, 0), 0);
	assert_int_equal(n, 0);
	assert_int_equal(state_counter(NULL, 0, "a", "", "dns_ok"), 0);
}

/*
 * Migration 9's views, from a file of version 8.  current, before it, showed a cname endpoint as
 * not published while DNS held its CNAME; uptime_24h and flapping read
 * the day before the last run.
 */
static void
test_views(void **ctx)
{
	struct fx	*f = *ctx;
	struct state	*st;
	char		 sql[2048];
	int		 i;

	for (i = 0; i < 8; i++)
		raw_exec(f->path, state_migrations[i]);
	snprintf(sql, sizeof(sql), "REPLACE INTO meta VALUES ('runs', '10'),"
	    " ('last_run', '2025-11-30T12:00:00.000Z');"
	    " INSERT INTO endpoints VALUES ('www.example.org', 'cdn',"
	    "  'alias.example.net', 'http://192.0.2.7/', 0, 0, 1, 10, 0, 1),"
	    " ('www.example.org', 'web', '192.0.2.1', 'http://192.0.2.1/', 10,"
	    "  0, 1, 10, 0, 2);"
	    " INSERT INTO streaks VALUES (1, 'www.example.org', 'cdn',"
	    "  'alias.example.net', '2025-11-30T11:00:00.000Z', NULL, NULL, 1,"
	    "  1, 200, 'ok', 1, 1.0, 1, 1),"
	    " (2, 'www.example.org', 'web', '192.0.2.1',"
	    "  '2025-11-30T11:00:00.000Z', NULL, NULL, 10, 1, 200, 'ok', 1, 1.0,"
	    "  1, 1);"
	    " INSERT INTO published VALUES ('www.example.org', 'CNAME', 60,"
	    "  'Alias.example.net', 0), ('www.example.org', 'A', 60, '', 0);"
	    " PRAGMA user_version = 8; PRAGMA application_id = %d",
	    0x64647570);
	raw_exec(f->path, sql);
	assert_int_equal(raw_int(f->path, "SELECT published FROM current"
	    " WHERE endpoint = 'cdn'"), 0);		/* the old view's bug */
	st = open_ok(f->path, STATE_RW);
	state_close(st);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
	    state_schema_version);
	assert_int_equal(raw_int(f->path, "SELECT published FROM current"
	    " WHERE endpoint = 'cdn'"), 1);
	assert_int_equal(raw_int(f->path, "SELECT published FROM current"
	    " WHERE endpoint = 'web'"), 0);
	assert_int_equal(raw_int(f->path, "SELECT passes FROM current"
	    " WHERE endpoint = 'web'"), 1);

	/*
	 * web, one check an hour: 20 passes ending 26 h before the last
	 * run (outside the day), then 6 checks from 02:00 alternating
	 * fail/pass (5 flips, 3 passed), then 6 passes up to the last run.
	 * Its first streak of the day, across nothing, and a reason change
	 * among failures, which is no flip.
	 */
	raw_exec(f->path, "DELETE FROM streaks WHERE endpoint = 'web';"
	    " UPDATE meta SET value = '2025-11-30T12:00:00.000Z'"
	    "  WHERE key = 'last_run';"
	    " INSERT INTO streaks (domain, endpoint, ip, first, last, checks,"
	    "  run, ok, status, reason, latency_min, latency_mean, latency_max,"
	    "  latency_samples) VALUES"
	    " ('www.example.org', 'web', '192.0.2.1', '2025-11-28T14:00:00.000Z',"
	    "  '2025-11-29T09:00:00.000Z', 20, 1, 1, 200, 'ok', 1, 1, 1, 1),"
	    " ('www.example.org', 'web', '192.0.2.1', '2025-11-30T01:00:00.000Z',"
	    "  '2025-11-30T01:00:00.000Z', 1, 1, 0, 503, 'HTTP 503', 1, 1, 1, 1),"
	    " ('www.example.org', 'web', '192.0.2.1', '2025-11-30T02:00:00.000Z',"
	    "  '2025-11-30T02:00:00.000Z', 1, 1, 0, NULL, 'timeout', 1, 1, 1, 1),"
	    " ('www.example.org', 'web', '192.0.2.1', '2025-11-30T03:00:00.000Z',"
	    "  '2025-11-30T03:00:00.000Z', 1, 1, 1, 200, 'ok', 1, 1, 1, 1),"
	    " ('www.example.org', 'web', '192.0.2.1', '2025-11-30T04:00:00.000Z',"
	    "  '2025-11-30T04:00:00.000Z', 1, 1, 0, 503, 'HTTP 503', 1, 1, 1, 1),"
	    " ('www.example.org', 'web', '192.0.2.1', '2025-11-30T05:00:00.000Z',"
	    "  '2025-11-30T05:00:00.000Z', 1, 1, 1, 200, 'ok', 1, 1, 1, 1),"
	    " ('www.example.org', 'web', '192.0.2.1', '2025-11-30T06:00:00.000Z',"
	    "  '2025-11-30T06:00:00.000Z', 1, 1, 0, 503, 'HTTP 503', 1, 1, 1, 1),"
	    " ('www.example.org', 'web', '192.0.2.1', '2025-11-30T07:00:00.000Z',"
	    "  '2025-11-30T12:00:00.000Z', 6, 1, 1, 200, 'ok', 1, 1, 1, 1);");
	/* Flips in the day: 01 p->f, 03 f->p, 04, 05, 06, 07: 6; not 02. */
	assert_int_equal(raw_int(f->path, "SELECT flips FROM flapping"
	    " WHERE endpoint = 'web'"), 6);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM flapping"), 1);
	/* The day: 12 checks from 01:00 on, 8 passed; none of the old. */
	assert_int_equal(raw_int(f->path, "SELECT checks FROM uptime_24h"
	    " WHERE endpoint = 'web'"), 12);
	assert_int_equal(raw_int(f->path, "SELECT passed FROM uptime_24h"
	    " WHERE endpoint = 'web'"), 8);
	/* cdn: its open streak, an hour long, all of it in the day. */
	assert_int_equal(raw_int(f->path, "SELECT checks FROM uptime_24h"
	    " WHERE endpoint = 'cdn'"), 10);
	assert_int_equal(raw_int(f->path, "SELECT uptime_pct = 100.0 FROM"
	    " uptime_24h WHERE endpoint = 'cdn'"), 1);
	/* A streak across the start of the day is shared: 20 checks over
	   the 10 hours from 02:00 the day before, 2 of them in the day. */
	raw_exec(f->path, "UPDATE streaks SET first = '2025-11-29T02:00:00.000Z',"
	    " last = '2025-11-29T12:00:00.000Z' WHERE checks = 20");
	assert_int_equal(raw_int(f->path, "SELECT checks FROM uptime_24h"
	    " WHERE endpoint = 'web'"), 12);
	raw_exec(f->path, "UPDATE streaks SET last = '2025-11-29T14:00:00.000Z'"
	    " WHERE checks = 20");
	/* 20 checks over 12 h, the last 2 h in the day: 3.33 of them. */
	assert_int_equal(raw_int(f->path, "SELECT checks FROM uptime_24h"
	    " WHERE endpoint = 'web'"), 15);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_redefined, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unsure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_junk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_views, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_from_1, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_future, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_typed_records,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_outbox, setup, teardown),
		cmocka_unit_test_setup_teardown(test_modes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_parents, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_ro_missing, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_load, setup, teardown),
		cmocka_unit_test(test_pg_unreachable),
		cmocka_unit_test_setup_teardown(test_finish_run, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_rollback, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_needs_tx, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hot_journal, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_ro_during_run, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_ro_while_runs, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_runs, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_many_checks, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_recent_changes, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
