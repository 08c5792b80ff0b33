/*
 * Check programs (check/prog.c, check/progout.c): the words of a command
 * with their placeholders, the result line of its output and the
 * mapping of how it ended, by tables; then real programs (/bin/sh)
 * through check_run(), the loop itself: exit statuses, a signal, a
 * hang, a child that keeps the pipe open, the environment, the folder.
 */

#include <sys/stat.h>
#include <sys/wait.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "check.h"
#include "check/prog.h"
#include "util.h"

/* Words joined by '|' for the tables, or the error. */
static void
argv_text(const struct check_req *r, char *buf, size_t len)
{
	char	**argv, err[128];
	size_t	 i, at = 0;

	buf[0] = '\0';
	if ((argv = prog_argv(r, err, sizeof(err))) == NULL) {
		snprintf(buf, len, "error: %s", err);
		return;
	}
	for (i = 0; argv[i] != NULL; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
		    i > 0 ? "|" : "", argv[i]);
	free(argv);
}

struct argv_case {
	const char	*command;
	const char	*host;		/* NULL: none */
	const char	*name;
	const char	*want;
};

static void
test_argv(void **state)
{
	static const struct argv_case cases[] = {
		{ "/bin/check -H {ip} -p 25", NULL, "a", "/bin/check|-H|"
		  "192.0.2.1|-p|25" },
		{ "/bin/c {host}", NULL, "a", "/bin/c|192.0.2.1" },
		{ "/bin/c {host}", "www.example.test", "a",
		  "/bin/c|www.example.test" },
		{ "/bin/c -u=https://{host}/{name}?d={domain}&ip={ip}{ip}",
		  "h.test", "e1", "/bin/c|-u=https://h.test/e1?d=app."
		  "example.test&ip=192.0.2.1192.0.2.1" },
		/* A value with spaces stays one word; none is expanded twice. */
		{ "/bin/sh -c {name}", NULL, "echo {ip}; exit 2",
		  "/bin/sh|-c|echo {ip}; exit 2" },
		{ "  /bin/c\t{nam}  {IP} {ip  ", NULL, "a",
		  "/bin/c|{nam}|{IP}|{ip" },
		{ "{name}/c", NULL, "", "/c" },
		{ "", NULL, "a", "error: no command" },
		{ " \t ", NULL, "a", "error: no command" },
		{ "bin/c {ip}", NULL, "a",
		  "error: the command is not an absolute path" },
		{ "{name}", NULL, "x", "error: the command is not an absolute "
		  "path" },
	};
	struct check_req r;
	char	 buf[512];
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&r, 0, sizeof(r));
		r.command = cases[i].command;
		r.ip = "192.0.2.1";
		r.host = cases[i].host;
		r.name = cases[i].name;
		r.domain = "app.example.test";
		argv_text(&r, buf, sizeof(buf));
		if (strcmp(buf, cases[i].want) != 0)
			fail_msg("%s: got '%s', want '%s'", cases[i].command,
			    buf, cases[i].want);
	}
}

static void
test_argv_limit(void **state)
{
	struct check_req r;
	char	 cmd[1024], buf[1024];
	size_t	 at, i;

	(void)state;
	memset(&r, 0, sizeof(r));
	at = (size_t)snprintf(cmd, sizeof(cmd), "/bin/c");
	for (i = 1; i < CHECK_ARGV_MAX; i++)
		at += (size_t)snprintf(cmd + at, sizeof(cmd) - at, " w");
	r.command = cmd;
	argv_text(&r, buf, sizeof(buf));
	assert_int_equal(strncmp(buf, "/bin/c|w|", 9), 0);
	snprintf(cmd + at, sizeof(cmd) - at, " one-too-many");
	argv_text(&r, buf, sizeof(buf));
	assert_string_equal(buf, "error: more than 64 words in the command");
}

struct line_case {
	const char	*out;
	size_t		 len;		/* 0: strlen */
	const char	*want;
};

static void
test_line(void **state)
{
	static const struct line_case cases[] = {
		{ "TCP OK - 0.001 second response time on 127.0.0.1 port 25|"
		  "time=0.000996s;;;0.000000;10.000000\n", 0,
		  "TCP OK - 0.001 second response time on 127.0.0.1 port 25" },
		{ "HTTP WARNING: HTTP/1.1 404 Not Found - 312 bytes | size=312B\n"
		  "second line\n", 0, "HTTP WARNING: HTTP/1.1 404 Not Found - "
		  "312 bytes" },
		{ "  \t spaced out \r\n", 0, "spaced out" },
		{ "", 0, "" },
		{ "\nsecond line only", 0, "" },
		{ "|perfdata only", 0, "" },
		{ "no newline at the end", 0, "no newline at the end" },
		{ "ctl\x01\x1b[31mred\x7f", 0, "ctl??[31mred?" },
		{ "nul\0byte\n", 9, "nul?byte" },
		{ "caf\xc3\xa9 ok", 0, "caf\xc3\xa9 ok" },
		{ "bad \xff\xfe utf8", 0, "bad ?? utf8" },
		{ "bidi \xe2\x80\xae trick", 0, "bidi ??? trick" },
	};
	char	 line[PROG_LINE_MAX + 1];
	size_t	 i, len, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		len = cases[i].len != 0 ? cases[i].len : strlen(cases[i].out);
		n = prog_line(cases[i].out, len, line, sizeof(line));
		if (strcmp(line, cases[i].want) != 0 || n != strlen(line))
			fail_msg("case %zu: got '%s' (%zu), want '%s'", i, line,
			    n, cases[i].want);
	}
}

/* Cut at 200 bytes, never inside a character, never ending in a blank. */
static void
test_line_cut(void **state)
{
	char	 out[600], line[PROG_LINE_MAX + 1], small[8];
	size_t	 i;

	(void)state;
	memset(out, 'x', sizeof(out));
	assert_int_equal(prog_line(out, sizeof(out), line, sizeof(line)),
	    PROG_LINE_MAX);
	/* "é" (2 bytes) from byte 199: the cut falls inside the first. */
	for (i = 199; i + 1 < sizeof(out); i += 2) {
		out[i] = '\xc3';
		out[i + 1] = '\xa9';
	}
	assert_int_equal(prog_line(out, sizeof(out), line, sizeof(line)), 199);
	assert_true(text_is_printable(line));
	memset(out, 'y', sizeof(out));
	memset(out + 190, ' ', 20);
	assert_int_equal(prog_line(out, sizeof(out), line, sizeof(line)), 190);
	/* A short buffer holds what fits, terminated. */
	assert_int_equal(prog_line("abcdefghij", 10, small, sizeof(small)), 7);
	assert_string_equal(small, "abcdefg");
}

struct result_case {
	int		 status;	/* W_EXITCODE() */
	int		 timed_out;
	const char	*line;
	int		 ok;
	const char	*want;
};

static void
test_result(void **state)
{
	static const struct result_case cases[] = {
		{ W_EXITCODE(0, 0), 0, "", 1, "ok" },
		{ W_EXITCODE(0, 0), 0, "TCP OK - 0.001 second", 1,
		  "TCP OK - 0.001 second" },
		{ W_EXITCODE(1, 0), 0, "", 1, "warning" },
		{ W_EXITCODE(1, 0), 0, "HTTP WARNING: slow", 1,
		  "warning: HTTP WARNING: slow" },
		{ W_EXITCODE(2, 0), 0, "CRITICAL - refused", 0,
		  "CRITICAL - refused" },
		{ W_EXITCODE(2, 0), 0, "", 0, "exit status 2" },
		{ W_EXITCODE(3, 0), 0, "UNKNOWN - bad args", 0,
		  "UNKNOWN - bad args" },
		{ W_EXITCODE(3, 0), 0, "", 0, "exit status 3" },
		{ W_EXITCODE(42, 0), 0, "", 0, "exit status 42" },
		{ W_EXITCODE(255, 0), 0, "", 0, "exit status 255" },
		{ W_EXITCODE(0, SIGSEGV), 0, "", 0, "killed by signal 11" },
		{ W_EXITCODE(0, SIGKILL), 0, "half a line", 0, "half a line" },
		{ W_EXITCODE(0, SIGKILL), 1, "", 0, "timeout" },
		{ W_EXITCODE(0, SIGKILL), 1, "still checking...", 0, "timeout" },
		{ W_EXITCODE(0, 0), 1, "OK", 0, "timeout" },
	};
	struct check_res res;
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		check_res_init(&res);
		prog_result(&res, cases[i].status, cases[i].timed_out,
		    cases[i].line);
		if (res.ok != cases[i].ok ||
		    strcmp(res.reason, cases[i].want) != 0)
			fail_msg("case %zu: got %d '%s', want %d '%s'", i,
			    res.ok, res.reason, cases[i].ok, cases[i].want);
		check_res_free(&res);
	}
}

/* A warning's line of 200 bytes is kept whole after "warning: ". */
static void
test_result_long(void **state)
{
	char	 line[PROG_LINE_MAX + 1];
	struct check_res res;

	(void)state;
	memset(line, 'w', PROG_LINE_MAX);
	line[PROG_LINE_MAX] = '\0';
	check_res_init(&res);
	prog_result(&res, W_EXITCODE(1, 0), 0, line);
	assert_int_equal(strlen(res.reason), 9 + PROG_LINE_MAX);
	assert_int_equal(strncmp(res.reason, "warning: www", 12), 0);
	check_res_free(&res);
}

/* ---------------------------------------------------------------- runs */

#define NRUN	8

struct runs {
	struct check_req req[NRUN];
	size_t		 n;
	size_t		 next;
};

static int
next_run(void *arg, struct check_req *req)
{
	struct runs *r = arg;

	if (r->next == r->n)
		return 0;
	*req = r->req[r->next++];
	return 1;
}

/* Runs `sh -c SCRIPT` per script (NULL ends), max_exec at once. */
static void
run_scripts(const char *const *scripts, struct check_res *res,
    long long timeout_ms, long max_exec)
{
	static struct runs r;
	struct check_limits lim = { 16, max_exec, NULL };
	char	 err[256];
	size_t	 i;

	memset(&r, 0, sizeof(r));
	for (i = 0; scripts[i] != NULL && i < NRUN; i++) {
		r.req[i].command = "/bin/sh -c {name} {host}";
		r.req[i].name = scripts[i];
		r.req[i].ip = "192.0.2.7";
		r.req[i].domain = "app.example.test";
		r.req[i].timeout_ms = timeout_ms;
		r.req[i].res = &res[i];
		check_res_init(&res[i]);
	}
	r.n = i;
	assert_int_equal(check_run(r.n, next_run, &r, &lim, err, sizeof(err)),
	    0);
}

static void
test_runs(void **state)
{
	static const char *const scripts[] = {
		"echo 'PROG OK - fine|t=1s'; echo more",
		"echo slow; exit 1",
		"echo 'CRITICAL - down'; exit 2",
		"exit 3",
		"kill -9 $$",
		"echo \"$DDUP_DOMAIN $DDUP_ENDPOINT $DDUP_IP $0 $(pwd)\"",
		"read x; echo \"read [$x] $?\"",
		NULL,
	};
	struct check_res res[NRUN];
	size_t	 i;

	(void)state;
	run_scripts(scripts, res, 5000, 16);
	assert_true(res[0].ok);
	assert_string_equal(res[0].reason, "PROG OK - fine");
	assert_true(res[1].ok);
	assert_string_equal(res[1].reason, "warning: slow");
	assert_false(res[2].ok);
	assert_string_equal(res[2].reason, "CRITICAL - down");
	assert_false(res[3].ok);
	assert_string_equal(res[3].reason, "exit status 3");
	assert_false(res[4].ok);
	assert_string_equal(res[4].reason, "killed by signal 9");
	assert_true(res[5].ok);
	/* $0 is the word after the script: {host}, the ip without one. */
	assert_string_equal(res[5].reason, "app.example.test "
	    "echo \"$DDUP_DOMAIN $DDUP_ENDPOINT $DDUP_IP $0 $(pwd)\" 192.0.2.7 "
	    "192.0.2.7 /");
	/* stdin is /dev/null: read meets its end at once. */
	assert_true(res[6].ok);
	assert_string_equal(res[6].reason, "read [] 1");
	for (i = 0; i < 7; i++) {
		assert_true(res[i].latency_ms >= 0 && res[i].latency_ms < 5000);
		check_res_free(&res[i]);
	}
}

/*
 * A hang is killed at the timeout, its child too; a child that keeps
 * stdout open after the program has exited holds nothing up.
 */
static void
test_hang_and_holder(void **state)
{
	static const char *const scripts[] = {
		"echo started; sleep 30 & sleep 30",
		"echo done; sleep 30 & exit 0",
		NULL,
	};
	struct check_res res[NRUN];
	long long t0 = mono_ms(), wall;

	(void)state;
	run_scripts(scripts, res, 400, 16);
	wall = mono_ms() - t0;
	assert_false(res[0].ok);
	assert_string_equal(res[0].reason, "timeout");
	assert_true(res[0].latency_ms >= 400 && res[0].latency_ms < 3000);
	assert_true(res[1].ok);
	assert_string_equal(res[1].reason, "done");
	assert_true(res[1].latency_ms < 300);
	assert_true(wall < 3000);
	/* Nothing left: every child of this process is gone and reaped. */
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	check_res_free(&res[0]);
	check_res_free(&res[1]);
}

/* A file of the test's own, with mode, holding text; its path in path. */
static void
make_file(char *path, size_t len, const char *name, mode_t mode)
{
	FILE	*f;

	snprintf(path, len, "/tmp/test_prog.%ld.%s", (long)getpid(), name);
	assert_non_null(f = fopen(path, "w"));
	fputs("not a program\n", f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static void
test_cannot_run(void **state)
{
	static struct runs r;
	struct check_limits lim = { 4, 4, NULL };
	struct check_res res[4];
	char	 err[256], plain[128], junk[128], want[300];
	size_t	 i;

	(void)state;
	make_file(plain, sizeof(plain), "plain", 0644);
	make_file(junk, sizeof(junk), "junk", 0755);
	memset(&r, 0, sizeof(r));
	r.req[0].command = "/nonexistent/check_x -H {ip}";
	r.req[1].command = plain;
	r.req[2].command = junk;
	r.req[3].command = "/bin/true";
	r.req[3].dir = "/nonexistent-folder";
	for (i = 0; i < 4; i++) {
		r.req[i].ip = "192.0.2.1";
		r.req[i].timeout_ms = 2000;
		r.req[i].res = &res[i];
		check_res_init(&res[i]);
	}
	r.n = 4;
	assert_int_equal(check_run(r.n, next_run, &r, &lim, err, sizeof(err)),
	    0);
	assert_false(res[0].ok);
	assert_string_equal(res[0].reason, "cannot run /nonexistent/check_x: "
	    "No such file or directory");
	/* root may execute any file with an x bit, never one without. */
	snprintf(want, sizeof(want), "cannot run %s: Permission denied", plain);
	assert_false(res[1].ok);
	assert_string_equal(res[1].reason, want);
	snprintf(want, sizeof(want), "cannot run %s: Exec format error", junk);
	assert_false(res[2].ok);
	assert_string_equal(res[2].reason, want);
	assert_false(res[3].ok);
	assert_string_equal(res[3].reason, "cannot run /bin/true: cannot "
	    "enter /nonexistent-folder: No such file or directory");
	for (i = 0; i < 4; i++)
		check_res_free(&res[i]);
	unlink(plain);
	unlink(junk);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_argv),
		cmocka_unit_test(test_argv_limit),
		cmocka_unit_test(test_line),
		cmocka_unit_test(test_line_cut),
		cmocka_unit_test(test_result),
		cmocka_unit_test(test_result_long),
		cmocka_unit_test(test_runs),
		cmocka_unit_test(test_hang_and_holder),
		cmocka_unit_test(test_cannot_run),
	};
	int	 rc;

	if (check_global_init() != 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	check_global_cleanup();
	return rc;
}
