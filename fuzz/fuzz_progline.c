/*
 * A check program's words and output (check/prog.h): prog_argv() with
 * the input as the command, prog_line() with it as the program's
 * stdout, and prog_result() on that line, the wait status and the
 * timeout taken from the input's length.  Invariants: the words are the
 * command's, none blank, no placeholder left, the first absolute; the
 * line is at most PROG_LINE_MAX bytes, one printable line without '|'
 * or blanks at its ends, made of the first line's bytes (or '?'); the
 * result passes exactly for exit 0 and 1 within the timeout, and its
 * reason is printable.
 */

#include <sys/wait.h>

#include "check.h"
#include "check/prog.h"
#include "fuzz.h"
#include "util.h"

static void
fuzz_argv(const char *cmd)
{
	struct check_req r;
	char	**argv, err[128];
	size_t	 i;

	memset(&r, 0, sizeof(r));
	r.command = cmd;
	r.ip = "192.0.2.1";
	r.host = (strlen(cmd) % 2) ? "www.example.test" : NULL;
	r.name = "e 1";
	r.domain = "app.example.test";
	err[0] = '\0';
	if ((argv = prog_argv(&r, err, sizeof(err))) == NULL) {
		fuzz_check(err[0] != '\0', "argv: no reason", cmd);
		return;
	}
	fuzz_check(argv[0][0] == '/', "argv: not absolute", cmd);
	for (i = 0; argv[i] != NULL; i++) {
		fuzz_check(argv[i][0] != '\0', "argv: empty word", cmd);
		fuzz_check(strchr(argv[i], '\t') == NULL &&
		    (strchr(argv[i], ' ') == NULL || strstr(argv[i], "e 1") !=
		    NULL), "argv: a blank not from {name}", cmd);
		fuzz_check(strstr(argv[i], "{ip}") == NULL &&
		    strstr(argv[i], "{host}") == NULL &&
		    strstr(argv[i], "{name}") == NULL &&
		    strstr(argv[i], "{domain}") == NULL,
		    "argv: a placeholder left", cmd);
	}
	fuzz_check(i >= 1 && i <= CHECK_ARGV_MAX, "argv: word count", cmd);
	free(argv);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int statuses[] = { W_EXITCODE(0, 0), W_EXITCODE(1, 0),
	    W_EXITCODE(2, 0), W_EXITCODE(3, 0), W_EXITCODE(77, 0),
	    W_EXITCODE(0, SIGKILL), W_EXITCODE(0, SIGSEGV) };
	const char *out = (const char *)data;
	char	 line[PROG_LINE_MAX + 1], *s;
	struct check_res res;
	size_t	 n, i, first = 0;
	int	 status, timed_out, code;

	s = fuzz_cstr(data, size);
	fuzz_argv(s);
	free(s);

	n = prog_line(out, size, line, sizeof(line));
	fuzz_check(n == strlen(line) && n <= PROG_LINE_MAX, "line: length",
	    line);
	fuzz_check(fuzz_printable(line), "line: not printable", line);
	fuzz_check(strchr(line, '|') == NULL, "line: performance data", line);
	fuzz_check(n == 0 || (line[0] != ' ' && line[0] != '\t' &&
	    line[n - 1] != ' ' && line[n - 1] != '\t'), "line: blanks at an "
	    "end", line);
	/* Its bytes are the first line's, in order, from its first non-blank. */
	while (first < size && (out[first] == ' ' || out[first] == '\t' ||
	    out[first] == '\r' || out[first] == '\v' || out[first] == '\f'))
		first++;
	for (i = 0; i < n; i++)
		fuzz_check(first + i < size && out[first + i] != '\n' &&
		    (line[i] == out[first + i] || line[i] == '?'),
		    "line: not the first line's bytes", line);

	status = statuses[size % (sizeof(statuses) / sizeof(statuses[0]))];
	timed_out = size % 11 == 0;
	check_res_init(&res);
	prog_result(&res, status, timed_out, line);
	code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	fuzz_check(res.ok == (!timed_out && (code == 0 || code == 1)),
	    "result: pass or fail", res.reason);
	fuzz_check(res.reason != NULL && res.reason[0] != '\0' &&
	    fuzz_printable(res.reason), "result: reason", res.reason);
	check_res_free(&res);
	return 0;
}
