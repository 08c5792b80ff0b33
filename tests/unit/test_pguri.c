/*
 * pguri.c: a PostgreSQL state told from a path, and shown without its
 * password, wherever libpq would find one.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pguri.h"

static const struct {
	const char	*uri;
	const char	*shown;
} redact[] = {
	{ "postgresql://db.example/ddup", "postgresql://db.example/ddup" },
	{ "postgresql://ddup@db.example/ddup", "postgresql://ddup@db.example/ddup" },
	{ "postgresql://ddup:s3cret@db.example:5433/ddup",
	  "postgresql://ddup:***@db.example:5433/ddup" },
	{ "postgres://ddup:s3cret@db.example/ddup",
	  "postgres://ddup:***@db.example/ddup" },
	{ "postgresql://ddup:@db.example/ddup",
	  "postgresql://ddup:***@db.example/ddup" },
	/* '@' and '/' in a password, percent-encoded or not. */
	{ "postgresql://ddup:p%40ss@db.example/ddup",
	  "postgresql://ddup:***@db.example/ddup" },
	{ "postgresql://ddup:p@ss/w@db.example/ddup",
	  "postgresql://ddup:***@db.example/ddup" },
	{ "postgresql://ddup@db.example/ddup?password=s3cret",
	  "postgresql://ddup@db.example/ddup?password=***" },
	{ "postgresql://db.example/ddup?sslmode=require&password=s3cret&"
	  "application_name=ddup",
	  "postgresql://db.example/ddup?sslmode=require&password=***&"
	  "application_name=ddup" },
	{ "postgresql:///ddup?host=/run/postgresql&pass%77ord=s3cret",
	  "postgresql:///ddup?host=/run/postgresql&pass%77ord=***" },
	{ "postgresql://h/d?PASSWORD=s3cret", "postgresql://h/d?PASSWORD=***" },
	{ "postgresql://h/d?sslpassword=s3cret&password=t&password=u",
	  "postgresql://h/d?sslpassword=***&password=***&password=***" },
	{ "postgresql://u:a@h1,h2:5433/d?password=x&",
	  "postgresql://u:***@h1,h2:5433/d?password=***&" },
	/* Several hosts (libpq tries them in order), in either form. */
	{ "postgresql://u:s3cret@db1:5432,db2:5433/d?target_session_attrs="
	  "read-write", "postgresql://u:***@db1:5432,db2:5433/d?"
	  "target_session_attrs=read-write" },
	{ "postgresql://u@/d?host=db1,db2&port=5432,5433&password=s3cret&"
	  "target_session_attrs=read-write", "postgresql://u@/d?host=db1,db2&"
	  "port=5432,5433&password=***&target_session_attrs=read-write" },
	{ "postgresql://h/d?passwordx=1&xpassword=2",
	  "postgresql://h/d?passwordx=1&xpassword=2" },
	{ "postgresql://h/d?password", "postgresql://h/d?password" },
	{ "postgresql://h/d?=x&&", "postgresql://h/d?=x&&" },
	{ "postgresql://", "postgresql://" },
	/* A second '?' (refused by libpq) does not hide a password. */
	{ "postgresql://h/d?a=1?password=s3cret&b?sslpassword=x",
	  "postgresql://h/d?a=1?password=***&b?sslpassword=***" },
	{ "postgresql://u:a@b?c/d?password=s3cret",
	  "postgresql://u:***@b?c/d?password=***" },
	/* A '?' in a password: libpq reads on to the '@'. */
	{ "postgresql://u:pa?ss@h/d", "postgresql://u:***@h/d" },
	{ "postgresql://u:pa?s?s@h/d?password=x",
	  "postgresql://u:***@h/d?password=***" },
	{ "postgresql://u@h/d?user=a@b&password=x",
	  "postgresql://u@h/d?user=a@b&password=***" },
	{ "/var/lib/ddup/ddup.db", "/var/lib/ddup/ddup.db" },
};

static void
test_redact(void **state)
{
	char *got;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(redact) / sizeof(redact[0]); i++) {
		got = pguri_redact(redact[i].uri);
		if (strcmp(got, redact[i].shown) != 0)
			fail_msg("%s: got %s, wanted %s", redact[i].uri, got,
			    redact[i].shown);
		free(got);
	}
}

/* libpq's messages about a URI, as ddup-check shows them. */
static const struct {
	const char	*uri;
	const char	*msg;
	const char	*shown;
} msgs[] = {
	/* An unescaped '@': libpq takes the rest for the host name. */
	{ "postgresql://ddup:p@ss@127.0.0.1/ddup",
	  "could not translate host name \"ss@127.0.0.1\" to address: Name "
	  "or service not known",
	  "could not translate host name \"***@127.0.0.1\" to address: Name "
	  "or service not known" },
	/* An unescaped '/': the user becomes the host, the rest a port. */
	{ "postgresql://u:5433/x%2Fy@h/d",
	  "connection to server at \"u\" (127.0.0.1), port 5433 failed: "
	  "database \"x/y@h/d\"",
	  "connection to server at \"u\" (127.0.0.1), port *** failed: "
	  "database \"***@h/d\"" },
	{ "postgresql://u:s3cret@h/d", "no s3cret, s3cre or 3cret",
	  "no ***, s3cre or 3cret" },
	/* Percent-decoded, as libpq reads it, and as written. */
	{ "postgresql://u:a%41b@c@h/d", "aAb a%41b c", "*** *** ***" },
	{ "postgresql://h/d?password=one,two&sslpassword=thr:ee",
	  "hosts one and two, thr:ee, ee", "hosts *** and ***, ***, ***" },
	/* No password: the message as it was. */
	{ "postgresql://ddup@h/d?sslmode=require", "ddup at h: d",
	  "ddup at h: d" },
	{ "postgresql://u:@h/d", "u:@h", "u:@h" },
	{ "/var/lib/ddup/ddup.db", "ddup.db", "ddup.db" },
};

static void
test_redact_msg(void **state)
{
	char *got;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
		got = pguri_redact_msg(msgs[i].uri, msgs[i].msg);
		if (strcmp(got, msgs[i].shown) != 0)
			fail_msg("%s: %s: got %s, wanted %s", msgs[i].uri,
			    msgs[i].msg, got, msgs[i].shown);
		free(got);
	}
}

/* libpq's messages as one line: each host's failure, not its hints. */
static const struct {
	const char	*msg;
	size_t		 len;
	const char	*line;
} lines[] = {
	{ "connection to server at \"h1\" (127.0.0.1), port 5432 failed: "
	  "Connection refused\n\tIs the server running on that host and "
	  "accepting TCP/IP connections?\nconnection to server at \"h2\" "
	  "(127.0.0.1), port 5433 failed: session is read-only\n", 512,
	  "connection to server at \"h1\" (127.0.0.1), port 5432 failed: "
	  "Connection refused; connection to server at \"h2\" (127.0.0.1), "
	  "port 5433 failed: session is read-only" },
	/* A server's error: its first line only (DETAIL, HINT left out). */
	{ "ERROR:  permission denied for table ddup_round\nDETAIL:  x\n", 512,
	  "ERROR:  permission denied for table ddup_round" },
	{ "", 512, "" },
	{ "\n\nconnection to server at \"h\" failed: timeout expired", 512,
	  "; connection to server at \"h\" failed: timeout expired" },
	/* Cut at len, the second host's line too. */
	{ "abcdef\nconnection to server at x", 5, "abcd" },
	{ "ab\nconnection to server at x", 12, "ab; connect" },
};

static void
test_msg_line(void **state)
{
	char line[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		memset(line, 'X', sizeof(line));
		pguri_msg_line(lines[i].msg, line, lines[i].len);
		if (strcmp(line, lines[i].line) != 0)
			fail_msg("%s: got %s, wanted %s", lines[i].msg, line,
			    lines[i].line);
	}
}

static void
test_is_conninfo(void **state)
{
	static const char *const yes[] = {
		"host=127.0.0.1 password=secret dbname=ddup",
		"dbname = ddup", "  user=ddup", "HOST=db",
		"/srv/ddup host=db", "sslmode=require",
		"x=1 port=5432",
	};
	static const char *const no[] = {
		"/var/lib/ddup/ddup.db", "ddup.db", "state/ddup.db",
		"/srv/host=db/ddup.db", "/srv/colour=1 x.db", "state-host=1.db",
		"hosts=db", "host", "=host=", "",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!pguri_is_conninfo(yes[i]))
			fail_msg("%s: not taken for a connection string",
			    yes[i]);
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (pguri_is_conninfo(no[i]))
			fail_msg("%s: taken for a connection string", no[i]);
}

static void
test_is(void **state)
{
	(void)state;
	assert_true(pguri_is("postgresql://h/d"));
	assert_true(pguri_is("postgres://h/d"));
	assert_true(pguri_is("PostgreSQL://h/d"));
	assert_false(pguri_is("postgresql:/h/d"));
	assert_false(pguri_is("/var/lib/ddup/ddup.db"));
	assert_false(pguri_is("postgresql.db"));
	assert_false(pguri_is(""));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_redact),
		cmocka_unit_test(test_redact_msg),
		cmocka_unit_test(test_msg_line),
		cmocka_unit_test(test_is_conninfo),
		cmocka_unit_test(test_is),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
