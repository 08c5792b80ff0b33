#ifndef DDUP_PROC_H
#define DDUP_PROC_H

/*
 * Running an operator's program: the exec provider (ddup.ini(5),
 * type = exec), program notifiers (ddup.ini(5), NOTIFICATIONS) and check
 * programs (check/prog.c).  The program is started with execve (never a
 * shell: arguments reach it as they are, whatever characters they hold),
 * with the run's environment, as the leader of a process group of its
 * own: past the timeout the whole group is killed, so nothing it started
 * is left running; so is whatever it left behind when it ends, in the
 * group or not (setsid): ddup-check is the subreaper of what it starts,
 * and when the last program running has ended, it ends every child it
 * has left.  stdin is /dev/null, or a pipe that is given `input` and
 * then closed.  SIGTERM, SIGINT or SIGHUP while a program runs kills
 * every program running the same way; once they are ended, ddup-check
 * dies of the signal.
 *
 * Two ways in: proc_run() runs one program to its end (blocking);
 * proc_start(), proc_exited(), proc_wait_fd() and proc_end() let a loop
 * run several at once (the check loop), waiting on their pipes and on a
 * descriptor that SIGCHLD makes readable.
 */

#include <sys/types.h>

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
	/*
	 * "NAME=value" strings added to the run's environment (one of the
	 * same name is replaced), NULL-terminated; NULL: none.
	 */
	char *const		 *env;
	int			  err_null;	/* stderr to /dev/null, no pipe */
};

/* A program started by proc_start(), until proc_end(). */
struct proc_child {
	pid_t		 pid;		/* it, and its group; -1: none */
	int		 in;		/* the pipe to its stdin (input), -1 */
	int		 out;		/* its stdout, non-blocking */
	int		 err;		/* its stderr; -1 with err_null */
	int		 exited;	/* reaped: status is its */
	int		 status;	/* from waitpid */
	int		 exec_errno;	/* why it could not be executed, or 0 */
	const char	*path;		/* the caller's, for a message */
	int		 slot;		/* in the table of programs running */
	int		 seen;		/* SIGCHLDs counted at its last look */
};

/*
 * Starts the program; the caller closes none of c's descriptors (the
 * ends of the pipes are non-blocking) and ends it with proc_end().  -1 when it
 * cannot be executed (a permanent failure: missing, not executable, its
 * folder missing; c->exec_errno says why execve failed), -2 when the
 * system refused a pipe or a process (temporary); err says why, and
 * there is nothing to end.
 */
int	 proc_start(const struct proc_spec *ps, struct proc_child *c,
	    char *err, size_t errlen);
/* Whether it has ended, reaping it if so (never waits): 1 or 0. */
int	 proc_exited(struct proc_child *c);
/*
 * The descriptor to wait on, beside c's pipes, for its end: readable
 * once a child of ddup-check may have ended (SIGCHLD: one descriptor for
 * every program, and cleared here).  *at_once: one may have ended since
 * c's last proc_exited(), which is then to be asked without waiting.
 * -1 when there is none (no descriptor was left): ask now and then.
 */
int	 proc_wait_fd(struct proc_child *c, int *at_once);
/*
 * Kills its group (SIGKILL), reaps it and what the group held, and
 * closes c's descriptors; c->status is then how it ended.  The last
 * program running also ends whatever its programs left outside their
 * groups, then dies of a stop signal that came meanwhile.
 */
void	 proc_end(struct proc_child *c);
/* Whether a stop signal came while programs ran (proc_end() dies of it). */
int	 proc_stopping(void);

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
