/*
 * Running an operator's program to its end, with a deadline (proc.h):
 * the exec provider and program notifiers.  It is started and ended by
 * proc.c; here it is given its input and heard out.
 */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"
#include "util.h"

/* Reads what fd has; 0 once it is at its end (or broken), else 1. */
static int
take(int fd, const struct proc_spec *ps, struct proc_result *o, int is_out)
{
	char buf[16384];
	ssize_t n;
	size_t room;

	if ((n = read(fd, buf, sizeof(buf))) == -1)
		return errno == EAGAIN || errno == EINTR;
	if (n == 0)
		return 0;
	if (is_out) {
		if ((size_t)n > ps->out_max - o->outlen) {
			o->out_over = 1;	/* drained, not kept */
			return 1;
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
	return 1;
}

/* Gives the program what is left of its input; closes the pipe when done. */
static void
feed(int *fd, const struct proc_spec *ps, size_t *done)
{
	ssize_t n;

	n = write(*fd, ps->input + *done, ps->input_len - *done);
	if (n > 0)
		*done += (size_t)n;
	/* EPIPE: it closed its stdin without reading all; its business. */
	if ((n == -1 && errno != EAGAIN && errno != EINTR) ||
	    *done == ps->input_len) {
		close(*fd);
		*fd = -1;
	}
}

static void
close_fd(int *fd)
{
	if (*fd != -1)
		close(*fd);
	*fd = -1;
}

int
proc_run(const struct proc_spec *ps, struct proc_result *o, char *err,
    size_t errlen)
{
	struct proc_child c;
	struct pollfd pf[4];
	int *fd[3];
	int rc, i, n, wait_ms, at_once;
	long long deadline;
	size_t fed = 0;

	memset(o, 0, sizeof(*o));
	o->out = xstrdup("");
	if ((rc = proc_start(ps, &c, err, errlen)) != 0)
		return rc;
	fd[0] = &c.out;
	fd[1] = &c.err;
	fd[2] = &c.in;
	deadline = mono_ms() + ps->timeout_ms;
	if (ps->input_len == 0)
		close_fd(&c.in);
	for (;;) {
		(void)proc_exited(&c);
		/* Its stdin keeps nobody waiting once it has ended. */
		if (c.exited)
			close_fd(&c.in);
		if (c.exited && c.out == -1 && c.err == -1)
			break;
		if (mono_ms() >= deadline || proc_stopping()) {
			o->timed_out = !c.exited;
			break;
		}
		/*
		 * Ended, but something it started holds a pipe: take what
		 * is there now, and stop.  Otherwise wait for its end, or
		 * without the SIGCHLD pipe wake up now and then to see.
		 */
		pf[3].fd = c.exited ? -1 : proc_wait_fd(&c, &at_once);
		pf[3].events = POLLIN;
		wait_ms = c.exited || at_once ? 0 : (int)(deadline - mono_ms());
		if (pf[3].fd == -1 && wait_ms > 50)
			wait_ms = 50;
		for (i = 0; i < 3; i++) {
			pf[i].fd = *fd[i];
			pf[i].events = i == 2 ? POLLOUT : POLLIN;
			pf[i].revents = 0;
		}
		/* poll() passes over the entries whose fd is -1. */
		if ((n = poll(pf, 4, wait_ms)) == -1 && errno != EINTR) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			o->timed_out = !c.exited;
			break;
		}
		if (n <= 0 && c.exited)
			break;
		for (i = 0; i < 2 && n > 0; i++)
			if (pf[i].fd != -1 && (pf[i].revents &
			    (POLLIN | POLLHUP | POLLERR)) != 0 &&
			    !take(pf[i].fd, ps, o, i == 0))
				close_fd(fd[i]);
		if (n > 0 && c.in != -1 && (pf[2].revents &
		    (POLLOUT | POLLHUP | POLLERR)) != 0)
			feed(&c.in, ps, &fed);
	}
	proc_end(&c);
	o->status = c.status;
	return 0;
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
