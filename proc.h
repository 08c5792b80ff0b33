#ifndef DDUP_PROC_H
#define DDUP_PROC_H

/*
 * Running an operator's program: the exec provider (ddup.ini(5),
 * type = exec) and program notifiers (ddup.ini(5), NOTIFICATIONS).  The
 * program is started with execve (never a shell: arguments reach it as
 * they are, whatever characters they hold), with the run's environment,
 * as the leader of a process group of its own: past the timeout the
 * whole group is killed, so nothing it started is left running; so is
 * whatever it left behind when it ends, in the group or not (setsid):
 * ddup-check is the subreaper of what it starts.  stdin is /dev/null, or
 * a pipe that is given `input` and then closed.  SIGTERM, SIGINT or
 * SIGHUP while it runs kills it the same way, then ddup-check dies of
 * the signal.
 */

#include <stddef.h>

#define PROC_ERR_KEEP	4096	/* stderr bytes kept: its first line */
#define PROC_ERR_LINE	200	/* a message is cut here (ddup.ini(5),
				   type = exec) */

struct proc_spec {
	const char		 *path;		/* absolute: execve'd as it is */
	const char *const	 *argv;		/* argv[0] first, NULL-terminated */
	const char		 *dir;		/* the folder it runs in */
	const char		 *input;	/* stdin; NULL: /dev/null */
	size_t			  input_len;
	long long		  timeout_ms;	/* then the group is killed */
	size_t			  out_max;	/* stdout kept; past it drained */
};

struct proc_result {
	int		 status;	/* from waitpid */
	int		 timed_out;
	char		*out;		/* stdout, NUL-terminated */
	size_t		 outlen;
	int		 out_over;	/* stdout passed out_max */
	char		 errbuf[PROC_ERR_KEEP + 1];
	size_t		 errlen;
};

/*
 * Runs the program to its end or to the timeout; o is always
 * initialised and must be freed with proc_result_free().  It could not
 * be started: -1 when the command cannot be executed (a permanent
 * failure), -2 when the system refused a pipe or a process (temporary);
 * err says why.  0 otherwise, whatever the program did.
 */
int	 proc_run(const struct proc_spec *ps, struct proc_result *o,
	    char *err, size_t errlen);
void	 proc_result_free(struct proc_result *o);

/*
 * The first line of its stderr, printable and cut at PROC_ERR_LINE
 * bytes, or "" when there is none.
 */
void	 proc_first_line(const struct proc_result *o, char *out,
	    size_t outlen);

#endif
