#ifndef DDUP_CHECK_PROG_H
#define DDUP_CHECK_PROG_H

/*
 * Check programs (ddup.ini(5), CHECK TYPES): what the type of
 * check/prog.c makes of an endpoint's command before the program runs
 * and of its output after, pure functions in check/progout.c, apart so
 * that the unit tests and the fuzz target reach them.
 */

#include <stddef.h>

#include "check.h"

#define PROG_OUT_KEEP	4096	/* stdout kept; the rest read, thrown away */
#define PROG_LINE_MAX	200	/* bytes of the result line, at most */

/*
 * The words of r->command, split on white space, with {ip}, {host},
 * {name} and {domain} replaced in each (a value with spaces stays one
 * word); NULL-terminated, one malloc'd block (free() it).  NULL with err
 * set when there is no word, more than CHECK_ARGV_MAX, or the first is
 * not an absolute path.
 */
char	**prog_argv(const struct check_req *r, char *err, size_t errlen);

/*
 * The result line of a program's stdout out (len bytes, any bytes): its
 * first line up to any '|' (performance data), without the blanks around
 * it, cut at PROG_LINE_MAX bytes (not inside a UTF-8 character) and made
 * printable, into line (size bytes).  Returns its length; 0: none.
 */
size_t	 prog_line(const char *out, size_t len, char *line, size_t size);

/*
 * The result of a program that ended with wait status status, or was
 * killed at its timeout, and printed line (prog_line()): the
 * monitoring-plugins convention, into res's ok and reason.
 */
void	 prog_result(struct check_res *res, int status, int timed_out,
	    const char *line);

#endif
