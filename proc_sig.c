/*
 * What stands around the programs of proc.c while they run (proc.h): the
 * stop signals, SIGCHLD's self-pipe, the table of programs running that
 * the stop handler kills, and the reaping of what they leave.  proc.c
 * starts and ends each program through proc_int.h.
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
#include "proc_int.h"
#include "util.h"

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

/*
 * A child's end, for a loop that waits on descriptors: SIGCHLD counts it
 * and makes chld_pipe readable (the self-pipe trick).  Not pidfd_open(2):
 * valgrind 3.19 does not know it (its warning would fail the suite's
 * valgrind pass) nor do older kernels and some container filters, and
 * one descriptor for all programs is as good, each being looked at
 * (waitpid, WNOHANG) when it is readable.
 */
static int chld_pipe[2] = { -1, -1 };
static volatile sig_atomic_t chld_count;
static struct sigaction old_chld;

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
on_chld(int sig)
{
	int saved = errno;
	ssize_t n;

	(void)sig;
	chld_count++;
	/* Full (EAGAIN): it is readable already, which is all it says. */
	if (chld_pipe[1] != -1) {
		n = write(chld_pipe[1], "", 1);
		(void)n;
	}
	errno = saved;
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

/*
 * The self-pipe, made once, before SIGCHLD is caught; without one (out
 * of descriptors) a loop looks at its programs now and then instead.
 */
static void
chld_open(void)
{
	int p[2], i;

	if (chld_pipe[0] != -1 || pipe(p) == -1)
		return;
	for (i = 0; i < 2; i++)
		if (fcntl(p[i], F_SETFD, FD_CLOEXEC) == -1 ||
		    fcntl(p[i], F_SETFL, O_NONBLOCK) == -1) {
			close(p[0]);
			close(p[1]);
			return;
		}
	chld_pipe[1] = p[1];
	chld_pipe[0] = p[0];
}

/* SIGCHLD to on_chld() while programs run (on), or as it was (!on). */
static void
watch_children(int on)
{
	struct sigaction sa;

	if (!on) {
		(void)sigaction(SIGCHLD, &old_chld, NULL);
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGCHLD, &sa, &old_chld);
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

int
proc_exited(struct proc_child *c)
{
	pid_t r;

	if (c->exited || c->pid <= 0)
		return 1;
	/* Before the look: a SIGCHLD after it is one it did not see. */
	c->seen = chld_count;
	while ((r = waitpid(c->pid, &c->status, WNOHANG)) == -1 &&
	    errno == EINTR)
		;
	/* ECHILD: reaped by someone else, its status lost; ended still. */
	if (r == c->pid || r == -1)
		c->exited = 1;
	return c->exited;
}

int
proc_wait_fd(struct proc_child *c, int *at_once)
{
	char buf[64];

	while (chld_pipe[0] != -1 && read(chld_pipe[0], buf, sizeof(buf)) > 0)
		;
	*at_once = !c->exited && chld_count != c->seen;
	return chld_pipe[0];
}

int
proc_enter(struct proc_child *c, sigset_t *old, char *err, size_t errlen)
{
	proc_init();
	/* No stop between the fork and the group's entry in the table. */
	mask_stops(old);
	/*
	 * A stop came: the programs running are being ended, and the last
	 * one's end dies of it; none starts meanwhile, out of its reach.
	 */
	if (stop_sig != 0 || nrunning >= PROC_LIVE_MAX) {
		(void)sigprocmask(SIG_SETMASK, old, NULL);
		if (stop_sig != 0)
			snprintf(err, errlen, "stopping (signal %d)",
			    (int)stop_sig);
		else
			snprintf(err, errlen, "%d programs are running already",
			    PROC_LIVE_MAX);
		return -1;
	}
	if (nrunning++ == 0) {
		chld_open();
		catch_stops(1);
		watch_children(1);
	}
	/* Before the fork: its SIGCHLD may come before fork() returns. */
	c->seen = chld_count;
	return 0;
}

/* The last program has ended: the signals as they were. */
static void
leave_last(void)
{
	watch_children(0);
	catch_stops(0);
}

void
proc_forked(struct proc_child *c, pid_t pid, const sigset_t *old)
{
	if (pid != -1) {
		c->slot = live_add(pid);
		c->pid = pid;
	} else if (--nrunning == 0)
		leave_last();
	(void)sigprocmask(SIG_SETMASK, old, NULL);
}

void
proc_child_signals(void)
{
	struct sigaction sa;
	sigset_t none;
	size_t i;

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
}

void
proc_leave(struct proc_child *c)
{
	reap(c->pid, nrunning == 1);
	if (c->slot != -1)
		live[c->slot] = 0;
	c->slot = -1;
	if (--nrunning > 0)
		return;
	leave_last();
	if (stop_sig != 0)
		stop_now(c->path);
}
