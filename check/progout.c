/*
 * A check program's words and its result (check/prog.h): no process
 * here, only text, so that every case can be tested and fuzzed.
 */

#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check/prog.h"
#include "check/type.h"
#include "util.h"

/* A placeholder and what it stands for in r. */
struct hole {
	const char	*name;		/* "{ip}" */
	size_t		 len;
	const char	*value;
};

/* Fills h[] for r: {host} is the ip without a host. */
static void
holes_of(const struct check_req *r, struct hole h[4])
{
	const char *ip = r->ip != NULL ? r->ip : "";

	h[0] = (struct hole){ "{ip}", 4, ip };
	h[1] = (struct hole){ "{host}", 6, r->host != NULL ? r->host : ip };
	h[2] = (struct hole){ "{name}", 6, r->name != NULL ? r->name : "" };
	h[3] = (struct hole){ "{domain}", 8,
	    r->domain != NULL ? r->domain : "" };
}

/*
 * The word w (len bytes) with the placeholders replaced, into dst when
 * not NULL; returns its length either way.
 */
static size_t
expand(const char *w, size_t len, const struct hole h[4], char *dst)
{
	size_t i = 0, out = 0, k, vlen;

	while (i < len) {
		for (k = 0; k < 4; k++)
			if (len - i >= h[k].len &&
			    memcmp(w + i, h[k].name, h[k].len) == 0)
				break;
		if (k == 4) {
			if (dst != NULL)
				dst[out] = w[i];
			out++;
			i++;
			continue;
		}
		vlen = strlen(h[k].value);
		if (dst != NULL)
			memcpy(dst + out, h[k].value, vlen);
		out += vlen;
		i += h[k].len;
	}
	return out;
}

char **
prog_argv(const struct check_req *r, char *err, size_t errlen)
{
	struct hole	 h[4];
	const char	*p, *w;
	char		**argv = NULL, *s;
	size_t		 n = 0, bytes = 0, len, i;

	holes_of(r, h);
	/* Once to measure, once to fill one block: pointers, then text. */
	p = r->command != NULL ? r->command : "";
	while ((w = word_next(&p, &len)) != NULL) {
		n++;
		bytes += expand(w, len, h, NULL) + 1;
	}
	if (n == 0) {
		snprintf(err, errlen, "no command");
		goto out;
	}
	if (n > CHECK_ARGV_MAX) {
		snprintf(err, errlen, "more than %d words in the command",
		    CHECK_ARGV_MAX);
		goto out;
	}
	argv = xmalloc((n + 1) * sizeof(*argv) + bytes);
	s = (char *)(argv + n + 1);
	p = r->command;
	for (i = 0; (w = word_next(&p, &len)) != NULL; i++) {
		argv[i] = s;
		s += expand(w, len, h, s);
		*s++ = '\0';
	}
	argv[n] = NULL;
	if (argv[0][0] != '/') {
		snprintf(err, errlen, "the command is not an absolute path");
		free(argv);
		argv = NULL;
	}
out:
	return argv;
}

static int
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

size_t
prog_line(const char *out, size_t len, char *line, size_t size)
{
	size_t	 start = 0, end = 0, max, n, back, i;

	if (size == 0)
		return 0;
	while (end < len && out[end] != '\n' && out[end] != '|')
		end++;
	while (start < end && is_blank(out[start]))
		start++;
	max = size - 1 < PROG_LINE_MAX ? size - 1 : PROG_LINE_MAX;
	n = end - start;
	if (n > max) {
		n = max;
		/* Not inside a character: back to its first byte (or 3). */
		for (back = 0; back < 3 && n > 0 &&
		    ((unsigned char)out[start + n] & 0xc0) == 0x80; back++)
			n--;
	}
	while (n > 0 && is_blank(out[start + n - 1]))
		n--;
	memcpy(line, out + start, n);
	for (i = 0; i < n; i++)
		if (line[i] == '\0')
			line[i] = '?';
	line[n] = '\0';
	text_printable(line);
	return n;
}

void
prog_result(struct check_res *res, int status, int timed_out,
    const char *line)
{
	int	 code;

	res->ok = 0;
	/* A line printed before the hang is no verdict. */
	if (timed_out)
		check_res_text(res, "timeout");
	else if (WIFEXITED(status) && (code = WEXITSTATUS(status)) <= 1) {
		res->ok = 1;
		if (code == 0 && line[0] != '\0')
			check_res_reason(res, "%s", line);
		else if (code == 0)
			check_res_text(res, "ok");
		else if (line[0] != '\0')
			check_res_reason(res, "warning: %s", line);
		else
			check_res_text(res, "warning");
	} else if (line[0] != '\0')
		check_res_reason(res, "%s", line);
	else if (WIFSIGNALED(status))
		check_res_reason(res, "killed by signal %d", WTERMSIG(status));
	else
		check_res_reason(res, "exit status %d", WEXITSTATUS(status));
}
