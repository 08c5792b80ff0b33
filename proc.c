/*
 * Running an operator's program with a deadline (proc.h): the exec
 * provider and program notifiers share it.
 */

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"
#include "util.h"

extern char **environ;

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
child(const struct proc_spec *ps, int in, int outw, int errw)
{
	static const char msg[] = "cannot execute the command\n";
	static const char dmsg[] = "cannot enter the configuration's folder\n";
	struct sigaction sa;
	sigset_t none;

	(void)setpgid(0, 0);
	/* ddup-check ignores SIGPIPE; the program gets the default. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	(void)sigaction(SIGPIPE, &sa, NULL);
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
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, inp[2] = { -1, -1 };
	int exited = 0, open_fds, i, rc = -1, wait_ms;
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
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "cannot fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		child(ps, inp[0], outp[1], errp[1]);
	/* Both sides set the group: whichever runs first, it exists. */
	(void)setpgid(pid, pid);
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
		if (mono_ms() >= deadline) {
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
	rc = 0;
	goto out;
syserr:
	snprintf(err, errlen, "cannot set up its pipes: %s", strerror(errno));
out:
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
