/*
 * Starting an operator's program and ending it with all it started
 * (proc.h): the exec provider, program notifiers (through proc_run(),
 * proc_run.c) and check programs (check/prog.c) share it.
 */

#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<sys/pidfd.h>)
#include <sys/pidfd.h>
#define PROC_HAVE_PIDFD	1
#endif
#endif

#include "log.h"
#include "proc.h"
#include "util.h"

extern char **environ;

/*
 * Programs running at once: maxExec check programs at most, or one
 * program of a provider or notifier.  More are refused (a temporary
 * failure) rather than run out of reach of the stop handler.
 */
#define PROC_LIVE_MAX	1024
#define PROC_REAP_MS	2000	/* at most this long to end what is left */

/*
 * The signals that stop a run.  While a program runs, ddup-check catches
 * them: it kills the group of every program running (SIGKILL, at once: a
 * program given time to end could still send its update, after the next
 * run's), ends what is left of them, then dies of the signal.  An
 * ignored one (nohup) stays ignored.
 */
static const int stop_sigs[] = { SIGTERM, SIGINT, SIGHUP };
#define NSTOP	(sizeof(stop_sigs) / sizeof(stop_sigs[0]))

/* The groups of the programs running, for the handler; 0: a free slot. */
static volatile sig_atomic_t live[PROC_LIVE_MAX];
static volatile sig_atomic_t stop_sig;
/* Programs started and not yet ended; the handlers are ours while > 0. */
static size_t nrunning;
static struct sigaction old_sa[NSTOP];
static int caught[NSTOP];

/* Async-signal-safe: from the handler and from exit(). */
static void
kill_live(void)
{
	size_t i;
	pid_t g;

	for (i = 0; i < PROC_LIVE_MAX; i++)
		if ((g = (pid_t)live[i]) > 0) {
			(void)kill(-g, SIGKILL);
			(void)kill(g, SIGKILL);
		}
}

static void
on_stop(int sig)
{
	int saved = errno;

	stop_sig = sig;
	kill_live();
	errno = saved;
}

/*
 * Once per process: ddup-check becomes the subreaper of what it starts,
 * so that a process a program left behind, even in a session of its own
 * (setsid), becomes its child when its parent ends, and can be ended
 * (reap_all()); and an exit() while a program runs (out of memory) kills
 * its group.
 */
static void
proc_init(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	(void)atexit(kill_live);
}

/* Catches the stop signals (on) or puts back what was there (!on). */
static void
catch_stops(int on)
{
	struct sigaction sa;
	size_t i;

	for (i = 0; i < NSTOP; i++) {
		if (!on) {
			if (caught[i])
				(void)sigaction(stop_sigs[i], &old_sa[i], NULL);
			caught[i] = 0;
			continue;
		}
		caught[i] = 0;
		if (sigaction(stop_sigs[i], NULL, &old_sa[i]) == -1 ||
		    old_sa[i].sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_stop;
		sigemptyset(&sa.sa_mask);
		caught[i] = sigaction(stop_sigs[i], &sa, NULL) == 0;
	}
}

/* Blocks the stop signals; old gets the mask to put back. */
static void
mask_stops(sigset_t *old)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < NSTOP; i++)
		sigaddset(&set, stop_sigs[i]);
	(void)sigprocmask(SIG_BLOCK, &set, old);
}

/* A stop signal came while programs ran, all ended now: dies of it. */
static void
stop_now(const char *path)
{
	struct sigaction sa;
	sigset_t set;
	int sig = stop_sig;

	logx(LOG_WARN, NULL, NULL, "stopped by signal %d (%s): program %s "
	    "killed", sig, strsignal(sig), path);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	(void)sigaction(sig, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	(void)sigprocmask(SIG_UNBLOCK, &set, NULL);
	/* Default action, unblocked: raise() does not return. */
	(void)raise(sig);
}

int
proc_stopping(void)
{
	return stop_sig != 0;
}

/* Kills every live child of ddup-check, and the group of each. */
static void
kill_children(void)
{
	char path[300], buf[512], *p, *e;
	struct dirent *de;
	DIR *d;
	pid_t self = getpid(), mine = getpgrp();
	long pid, ppid, pgrp;
	ssize_t n;
	int fd;

	if ((d = opendir("/proc")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* PID (COMM) STATE PPID PGRP ...; COMM may hold anything. */
		if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ' ||
		    p[2] == '\0' || p[3] != ' ')
			continue;
		ppid = strtol(p + 4, &e, 10);
		pgrp = strtol(e, NULL, 10);
		if (ppid != (long)self)
			continue;
		pid = strtol(de->d_name, NULL, 10);
		/* Never ddup-check's own group, which a child may join. */
		if (pgrp > 1 && pgrp != (long)mine)
			(void)kill(-(pid_t)pgrp, SIGKILL);
		(void)kill((pid_t)pid, SIGKILL);
	}
	closedir(d);
}

/*
 * Ends the group of a program (reaped already) and, with all (the last
 * program running), whatever its programs left: the subreaper inherits
 * each descendant when its parent ends, so they are all its children in
 * the end, and it has no others (libcurl, SQLite and libpq start no
 * process).  Without all, only the group's members are reaped, never
 * another program still running.  Bounded: a process stuck in the
 * kernel is left to init.
 */
static void
reap(pid_t pgid, int all)
{
	long long until = mono_ms() + PROC_REAP_MS;
	pid_t r;

	for (;;) {
		(void)kill(-pgid, SIGKILL);
		while ((r = waitpid(all ? -1 : -pgid, NULL, WNOHANG)) > 0)
			;
		if (r == -1 && errno == ECHILD)
			break;
		if (r == -1 && errno == EINTR)
			continue;
		if (mono_ms() >= until)
			break;
		/* Live children: the group's, dying, or others out of it. */
		if (all)
			kill_children();
		(void)poll(NULL, 0, all ? 10 : 1);
	}
}

/* Records the group of pid for the handler: its slot, or -1 (full). */
static int
live_add(pid_t pid)
{
	int i;

	for (i = 0; i < PROC_LIVE_MAX; i++)
		if (live[i] == 0) {
			live[i] = pid;
			return i;
		}
	return -1;
}

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
	struct sigaction sa;
	sigset_t none;
	size_t i;

	(void)setpgid(0, 0);
	/* ddup-check ignores SIGPIPE; the program gets the default. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	(void)sigaction(SIGPIPE, &sa, NULL);
	/* Not ddup-check's handler before execve: it has its own group. */
	for (i = 0; i < NSTOP; i++)
		if (caught[i])
			(void)sigaction(stop_sigs[i], &sa, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	for (i = 0; i < 3; i++)
		if (move_fd(fds[i], (int)i) == -1)
			child_fail(report, FAIL_FDS);
	if (ps->dir != NULL && chdir(ps->dir) == -1)
		child_fail(report, FAIL_DIR);
	/* execve does not write to argv or envp: the casts drop const. */
	execve(ps->path, (char *const *)ps->argv, envp);
	child_fail(report, FAIL_EXEC);
}

/* Whether environment entry ent has the name of one in extra. */
static int
env_replaced(const char *ent, const char *const *extra)
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
env_make(const char *const *extra)
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
		v[k++] = (char *)(uintptr_t)extra[i];
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
	c->in = c->out = c->err = c->pidfd = c->slot = -1;
	c->path = ps->path;
	/* A status lost to someone else's waitpid() is no pass. */
	c->status = 255 << 8;
	proc_init();
	if (nrunning >= PROC_LIVE_MAX) {
		snprintf(err, errlen, "%d programs are running already",
		    PROC_LIVE_MAX);
		goto out;
	}
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
	/* No stop between the fork and the group's entry in the table. */
	if (nrunning++ == 0)
		catch_stops(1);
	mask_stops(&mask);
	if ((pid = fork()) == -1) {
		(void)sigprocmask(SIG_SETMASK, &mask, NULL);
		if (--nrunning == 0)
			catch_stops(0);
		snprintf(err, errlen, "cannot fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		child(ps, envp, fds, rep[1]);
	/* Both sides set the group: whichever runs first, it exists. */
	(void)setpgid(pid, pid);
	c->slot = live_add(pid);
	c->pid = pid;
	(void)sigprocmask(SIG_SETMASK, &mask, NULL);
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
#ifdef PROC_HAVE_PIDFD
	c->pidfd = pidfd_open(pid, 0);
#endif
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

int
proc_exited(struct proc_child *c)
{
	pid_t r;

	if (c->exited || c->pid <= 0)
		return 1;
	while ((r = waitpid(c->pid, &c->status, WNOHANG)) == -1 &&
	    errno == EINTR)
		;
	/* ECHILD: reaped by someone else, its status lost; ended still. */
	if (r == c->pid || r == -1)
		c->exited = 1;
	return c->exited;
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
	reap(c->pid, nrunning == 1);
	close_fd(&c->in);
	close_fd(&c->out);
	close_fd(&c->err);
	close_fd(&c->pidfd);
	if (c->slot != -1)
		live[c->slot] = 0;
	c->slot = -1;
	c->pid = -1;
	if (--nrunning > 0)
		return;
	catch_stops(0);
	if (stop_sig != 0)
		stop_now(c->path);
}
