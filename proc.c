/*
 * Running an operator's program with a deadline (proc.h): the exec
 * provider and program notifiers share it.
 */

#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "proc.h"
#include "util.h"

extern char **environ;

#define PROC_LIVE_MAX	16	/* programs running at once */
#define PROC_REAP_MS	2000	/* at most this long to end what is left */

/*
 * The signals that stop a run.  While a program runs, ddup-check catches
 * them: it kills the program's group (SIGKILL, at once: a program given
 * time to end could still send its update, after the next run's), ends
 * what is left of it, then dies of the signal.  An ignored one (nohup)
 * stays ignored.
 */
static const int stop_sigs[] = { SIGTERM, SIGINT, SIGHUP };
#define NSTOP	(sizeof(stop_sigs) / sizeof(stop_sigs[0]))

/* The groups of the programs running, for the handler; 0: a free slot. */
static volatile sig_atomic_t live[PROC_LIVE_MAX];
static volatile sig_atomic_t stop_sig;

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
catch_stops(struct sigaction old[NSTOP], int caught[NSTOP], int on)
{
	struct sigaction sa;
	size_t i;

	for (i = 0; i < NSTOP; i++) {
		if (!on) {
			if (caught[i])
				(void)sigaction(stop_sigs[i], &old[i], NULL);
			continue;
		}
		caught[i] = 0;
		if (sigaction(stop_sigs[i], NULL, &old[i]) == -1 ||
		    old[i].sa_handler != SIG_DFL)
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

/* A stop signal came while the program ran, now ended: dies of it. */
static void
stop_now(const struct proc_spec *ps)
{
	struct sigaction sa;
	sigset_t set;
	int sig = stop_sig;

	logx(LOG_WARN, NULL, NULL, "stopped by signal %d (%s): program %s "
	    "killed", sig, strsignal(sig), ps->path);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	(void)sigaction(sig, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	(void)sigprocmask(SIG_UNBLOCK, &set, NULL);
	/* Default action, unblocked: raise() does not return. */
	(void)raise(sig);
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
 * Ends the group of the program (reaped already) and whatever it left:
 * the subreaper inherits each descendant when its parent ends, so they
 * are all its children in the end, and it has no others (libcurl,
 * SQLite and libpq start no process).  Bounded: a process stuck in the
 * kernel is left to init.
 */
static void
reap_all(pid_t pgid)
{
	long long until = mono_ms() + PROC_REAP_MS;
	pid_t r;

	for (;;) {
		(void)kill(-pgid, SIGKILL);
		while ((r = waitpid(-1, NULL, WNOHANG)) > 0)
			;
		if (r == -1 && errno == ECHILD)
			break;
		if (r == -1 && errno == EINTR)
			continue;
		if (mono_ms() >= until)
			break;
		/* Live children: the group's, dying, or others out of it. */
		kill_children();
		(void)poll(NULL, 0, 10);
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

/* Reads what fd has; 0 at end of file. */
static ssize_t
take(int fd, const struct proc_spec *ps, struct proc_result *o, int is_out)
{
	char buf[16384];
	ssize_t n;
	size_t room;

	if ((n = read(fd, buf, sizeof(buf))) <= 0)
		return n;
	if (is_out) {
		if ((size_t)n > ps->out_max - o->outlen) {
			o->out_over = 1;	/* drained, not kept */
			return n;
		}
		o->out = xrealloc(o->out, o->outlen + (size_t)n + 1);
		memcpy(o->out + o->outlen, buf, (size_t)n);
		o->outlen += (size_t)n;
		o->out[o->outlen] = '\0';
	} else {
		room = PROC_ERR_KEEP - o->errlen;
		if ((size_t)n < room)
			room = (size_t)n;
		memcpy(o->errbuf + o->errlen, buf, room);
		o->errlen += room;
		o->errbuf[o->errlen] = '\0';
	}
	return n;
}

/*
 * The child's side: only async-signal-safe calls between fork and
 * execve (the parent may have threads: libcurl's resolver).
 */
static void
child(const struct proc_spec *ps, const int caught[NSTOP], int in, int outw,
    int errw)
{
	static const char msg[] = "cannot execute the command\n";
	static const char dmsg[] = "cannot enter the configuration's folder\n";
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
	if (dup2(in, 0) == -1 || dup2(outw, 1) == -1 || dup2(errw, 2) == -1)
		_exit(126);
	/*
	 * The message is all the child can do about a failure; the (void)
	 * cast does not silence warn_unused_result under _FORTIFY_SOURCE
	 * (the Debian package's flags), the test does.
	 */
	if (ps->dir != NULL && chdir(ps->dir) == -1) {
		if (write(2, dmsg, sizeof(dmsg) - 1) == -1)
			_exit(126);
		_exit(126);
	}
	/* execve does not write to argv: the cast only drops const. */
	execve(ps->path, (char *const *)ps->argv, environ);
	if (write(2, msg, sizeof(msg) - 1) == -1)
		_exit(127);
	_exit(127);
}

static int
cloexec(int fd)
{
	return fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* Gives the program what is left of its input; closes the pipe when done. */
static void
feed(struct pollfd *pf, const struct proc_spec *ps, size_t *done)
{
	ssize_t n;

	n = write(pf->fd, ps->input + *done, ps->input_len - *done);
	if (n > 0)
		*done += (size_t)n;
	/* EPIPE: it closed its stdin without reading all; its business. */
	if ((n == -1 && errno != EAGAIN && errno != EINTR) ||
	    *done == ps->input_len) {
		close(pf->fd);
		pf->fd = -1;
	}
}

int
proc_run(const struct proc_spec *ps, struct proc_result *o, char *err,
    size_t errlen)
{
	struct pollfd pf[3];
	struct sigaction old[NSTOP];
	sigset_t mask;
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, inp[2] = { -1, -1 };
	int caught[NSTOP] = { 0 }, exited = 0, open_fds, i, rc = -1, wait_ms;
	int slot = -1;
	long long deadline;
	size_t fed = 0;
	pid_t pid = -1;
	ssize_t n;

	memset(o, 0, sizeof(*o));
	o->out = xstrdup("");
	/* The child could only say that execve failed, not why. */
	if (access(ps->path, X_OK) == -1) {
		snprintf(err, errlen, "cannot execute: %s", strerror(errno));
		goto out;
	}
	proc_init();
	rc = -2;
	if (ps->input == NULL) {
		if ((inp[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
			goto syserr;
	} else if (pipe(inp) == -1 || cloexec(inp[0]) == -1 ||
	    cloexec(inp[1]) == -1 || fcntl(inp[1], F_SETFL, O_NONBLOCK) == -1)
		goto syserr;
	if (pipe(outp) == -1 || pipe(errp) == -1 || cloexec(outp[0]) == -1 ||
	    cloexec(outp[1]) == -1 || cloexec(errp[0]) == -1 ||
	    cloexec(errp[1]) == -1)
		goto syserr;
	/* No stop between the fork and the group's entry in the table. */
	catch_stops(old, caught, 1);
	mask_stops(&mask);
	if ((pid = fork()) == -1) {
		(void)sigprocmask(SIG_SETMASK, &mask, NULL);
		snprintf(err, errlen, "cannot fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		child(ps, caught, inp[0], outp[1], errp[1]);
	/* Both sides set the group: whichever runs first, it exists. */
	(void)setpgid(pid, pid);
	slot = live_add(pid);
	(void)sigprocmask(SIG_SETMASK, &mask, NULL);
	close(outp[1]);
	close(errp[1]);
	close(inp[0]);
	outp[1] = errp[1] = inp[0] = -1;

	deadline = mono_ms() + ps->timeout_ms;
	pf[0].fd = outp[0];
	pf[1].fd = errp[0];
	pf[2].fd = inp[1];
	pf[0].events = pf[1].events = POLLIN;
	pf[2].events = POLLOUT;
	if (pf[2].fd != -1 && ps->input_len == 0) {
		close(pf[2].fd);
		pf[2].fd = -1;
	}
	for (;;) {
		if (!exited && waitpid(pid, &o->status, WNOHANG) == pid)
			exited = 1;
		/* Its stdin keeps nobody waiting once it has ended. */
		if (exited && pf[2].fd != -1) {
			close(pf[2].fd);
			pf[2].fd = -1;
		}
		open_fds = (pf[0].fd != -1) + (pf[1].fd != -1);
		if (exited && open_fds == 0)
			break;
		if (mono_ms() >= deadline || stop_sig != 0) {
			o->timed_out = !exited;
			break;
		}
		/*
		 * Ended, but something it started holds a pipe: take what
		 * is there now, and stop.  Otherwise wake up now and then
		 * to see whether it ended.
		 */
		wait_ms = exited ? 0 : (int)(deadline - mono_ms());
		if (wait_ms > 50)
			wait_ms = 50;
		if (open_fds == 0 && pf[2].fd == -1) {
			(void)poll(NULL, 0, wait_ms);
			continue;
		}
		/* poll() passes over the entries whose fd is -1. */
		if ((n = poll(pf, 3, wait_ms)) == -1 && errno != EINTR) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			o->timed_out = !exited;
			break;
		}
		if (n <= 0) {
			if (exited)
				break;
			continue;
		}
		for (i = 0; i < 2; i++)
			if (pf[i].fd != -1 && (pf[i].revents &
			    (POLLIN | POLLHUP | POLLERR)) != 0 &&
			    take(pf[i].fd, ps, o, i == 0) <= 0) {
				close(pf[i].fd);
				pf[i].fd = -1;
			}
		if (pf[2].fd != -1 && (pf[2].revents &
		    (POLLOUT | POLLHUP | POLLERR)) != 0)
			feed(&pf[2], ps, &fed);
	}
	outp[0] = pf[0].fd;
	errp[0] = pf[1].fd;
	inp[1] = pf[2].fd;
	/* The whole group: the program and whatever it started. */
	(void)kill(-pid, SIGKILL);
	if (!exited) {
		(void)kill(pid, SIGKILL);
		while (waitpid(pid, &o->status, 0) == -1 && errno == EINTR)
			;
	}
	reap_all(pid);
	if (slot != -1)
		live[slot] = 0;
	rc = 0;
	goto out;
syserr:
	snprintf(err, errlen, "cannot set up its pipes: %s", strerror(errno));
out:
	catch_stops(old, caught, 0);
	if (stop_sig != 0)
		stop_now(ps);
	for (i = 0; i < 2; i++) {
		if (outp[i] != -1)
			close(outp[i]);
		if (errp[i] != -1)
			close(errp[i]);
		if (inp[i] != -1)
			close(inp[i]);
	}
	return rc;
}

void
proc_result_free(struct proc_result *o)
{
	free(o->out);
	o->out = NULL;
}

void
proc_first_line(const struct proc_result *o, char *out, size_t outlen)
{
	size_t i;

	for (i = 0; i < o->errlen && i < PROC_ERR_LINE && i + 1 < outlen;
	    i++) {
		if (o->errbuf[i] == '\n' || o->errbuf[i] == '\r')
			break;
		out[i] = o->errbuf[i];
		if (out[i] == '\0')
			out[i] = '?';
	}
	out[i] = '\0';
	text_printable(out);
}
