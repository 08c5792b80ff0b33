/*
 * Starting an operator's program and ending it with all it started
 * (proc.h): the exec provider, program notifiers (through proc_run(),
 * proc_run.c) and check programs (check/prog.c) share it.  The signals
 * around it and the reaping are proc_sig.c's.
 */

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"
#include "proc_int.h"
#include "util.h"

extern char **environ;

/* What the child says through its report pipe when it cannot go on. */
enum { FAIL_FDS, FAIL_DIR, FAIL_EXEC };

/* Async-signal-safe: the child's last words, then its end. */
static void
child_fail(int report, int stage)
{
	int msg[2] = { stage, errno };

	if (write(report, msg, sizeof(msg)) == -1)
		_exit(127);
	_exit(127);
}

/* fd onto to, kept across execve (dup2 onto itself would not clear it). */
static int
move_fd(int fd, int to)
{
	if (fd == to)
		return fcntl(to, F_SETFD, 0);
	return dup2(fd, to);
}

/*
 * The child's side: only async-signal-safe calls between fork and
 * execve (the parent may have threads: libcurl's resolver).  A failure
 * goes to the parent through report, closed on exec when it works.
 */
static void
child(const struct proc_spec *ps, char **envp, const int fds[3], int report)
{
	int i;

	(void)setpgid(0, 0);
	proc_child_signals();
	for (i = 0; i < 3; i++)
		if (move_fd(fds[i], i) == -1)
			child_fail(report, FAIL_FDS);
	if (ps->dir != NULL && chdir(ps->dir) == -1)
		child_fail(report, FAIL_DIR);
	/* execve does not write to argv or envp: the casts drop const. */
	execve(ps->path, (char *const *)ps->argv, envp);
	child_fail(report, FAIL_EXEC);
}

/* Whether environment entry ent has the name of one in extra. */
static int
env_replaced(const char *ent, char *const *extra)
{
	size_t i, n;

	for (i = 0; extra[i] != NULL; i++) {
		n = strcspn(extra[i], "=");
		if (strncmp(ent, extra[i], n) == 0 && ent[n] == '=')
			return 1;
	}
	return 0;
}

/* The run's environment with extra in it; the strings are not copied. */
static char **
env_make(char *const *extra)
{
	size_t n = 0, m = 0, k = 0, i;
	char **v;

	while (environ[n] != NULL)
		n++;
	while (extra[m] != NULL)
		m++;
	v = xcalloc(n + m + 1, sizeof(*v));
	for (i = 0; i < n; i++)
		if (!env_replaced(environ[i], extra))
			v[k++] = environ[i];
	for (i = 0; i < m; i++)
		v[k++] = extra[i];
	v[k] = NULL;
	return v;
}

/* A pipe, both ends closed on exec, the end of ours non-blocking. */
static int
make_pipe(int p[2], int ours)
{
	if (pipe(p) == -1)
		return -1;
	if (fcntl(p[0], F_SETFD, FD_CLOEXEC) == -1 ||
	    fcntl(p[1], F_SETFD, FD_CLOEXEC) == -1 ||
	    (ours >= 0 && fcntl(p[ours], F_SETFL, O_NONBLOCK) == -1)) {
		close(p[0]);
		close(p[1]);
		p[0] = p[1] = -1;
		return -1;
	}
	return 0;
}

/* Why the child could not go on (its report), as proc_start() returns. */
static int
child_failed(const struct proc_spec *ps, struct proc_child *c,
    const int msg[2], char *err, size_t errlen)
{
	proc_end(c);
	if (msg[0] == FAIL_FDS) {
		snprintf(err, errlen, "cannot set up its descriptors: %s",
		    strerror(msg[1]));
		return -2;
	}
	if (msg[0] == FAIL_DIR)
		snprintf(err, errlen, "cannot enter %s: %s", ps->dir,
		    strerror(msg[1]));
	else {
		c->exec_errno = msg[1];
		snprintf(err, errlen, "cannot execute: %s", strerror(msg[1]));
	}
	return -1;
}

int
proc_start(const struct proc_spec *ps, struct proc_child *c, char *err,
    size_t errlen)
{
	int inp[2] = { -1, -1 }, outp[2] = { -1, -1 }, errp[2] = { -1, -1 };
	int rep[2] = { -1, -1 }, msg[2], fds[3], rc = -2, i;
	char **envp = environ;
	sigset_t mask;
	ssize_t n;
	pid_t pid;

	memset(c, 0, sizeof(*c));
	c->pid = -1;
	c->in = c->out = c->err = c->slot = -1;
	c->path = ps->path;
	/* A status lost to someone else's waitpid() is no pass. */
	c->status = 255 << 8;
	if (ps->input == NULL) {
		if ((inp[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
			goto syserr;
	} else if (make_pipe(inp, 1) == -1)
		goto syserr;
	if (ps->err_null) {
		if ((errp[1] = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1)
			goto syserr;
	} else if (make_pipe(errp, 0) == -1)
		goto syserr;
	if (make_pipe(outp, 0) == -1 || make_pipe(rep, -1) == -1)
		goto syserr;
	if (ps->env != NULL)
		envp = env_make(ps->env);
	fds[0] = inp[0];
	fds[1] = outp[1];
	fds[2] = errp[1];
	if (proc_enter(c, &mask, err, errlen) == -1)
		goto out;
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "cannot fork: %s", strerror(errno));
		proc_forked(c, pid, &mask);
		goto out;
	}
	if (pid == 0)
		child(ps, envp, fds, rep[1]);
	/* Both sides set the group: whichever runs first, it exists. */
	(void)setpgid(pid, pid);
	proc_forked(c, pid, &mask);
	c->in = inp[1];
	c->out = outp[0];
	c->err = errp[0];
	inp[1] = outp[0] = errp[0] = -1;
	close(rep[1]);
	rep[1] = -1;
	/* End of file: execve worked.  The child is quick either way. */
	while ((n = read(rep[0], msg, sizeof(msg))) == -1 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(msg)) {
		rc = child_failed(ps, c, msg, err, errlen);
		goto out;
	}
	rc = 0;
	goto out;
syserr:
	snprintf(err, errlen, "cannot set up its pipes: %s", strerror(errno));
out:
	if (envp != environ)
		free(envp);
	for (i = 0; i < 2; i++) {
		if (inp[i] != -1)
			close(inp[i]);
		if (outp[i] != -1)
			close(outp[i]);
		if (errp[i] != -1)
			close(errp[i]);
		if (rep[i] != -1)
			close(rep[i]);
	}
	return rc;
}

static void
close_fd(int *fd)
{
	if (*fd != -1)
		close(*fd);
	*fd = -1;
}

void
proc_end(struct proc_child *c)
{
	if (c->pid <= 0)
		return;
	/* The whole group: the program and whatever it started. */
	(void)kill(-c->pid, SIGKILL);
	if (!c->exited) {
		(void)kill(c->pid, SIGKILL);
		while (waitpid(c->pid, &c->status, 0) == -1 && errno == EINTR)
			;
		c->exited = 1;
	}
	close_fd(&c->in);
	close_fd(&c->out);
	close_fd(&c->err);
	proc_leave(c);
	c->pid = -1;
}
