/*
 * Check programs (ddup.ini(5), CHECK TYPES): an endpoint's `command` run
 * as its check, in the monitoring-plugins convention, so that Debian's
 * monitoring-plugins work as they are.  The program joins the one loop
 * of check.c through two descriptors, its stdout (a non-blocking pipe)
 * and one that SIGCHLD makes readable (proc_wait_fd()), and a deadline:
 * nothing here waits.  It is started by proc.c, as the exec
 * provider's programs are: its own process group, which is killed at the
 * deadline and once the program has exited (something it left holding
 * the pipe does not hold the check), and ddup-check as the subreaper of
 * what it leaves.  Its stderr goes to /dev/null: the convention puts the
 * verdict on stdout, and a plugin's complaints there would only be
 * noise.  At most maxExec run at once (CHECK_TAKES_EXEC, check.c).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "check.h"
#include "check/prog.h"
#include "check/type.h"
#include "proc.h"
#include "util.h"

/*
 * Bytes read from its stdout in one turn of the loop, at most: a program
 * that writes without end shares the loop with the other checks.
 */
#define PROG_READ_TURN	((size_t)256 * 1024)
/* Without proc_wait_fd()'s descriptor, it is looked at so often. */
#define PROG_POLL_MS	20

/* A slot's program: one check at a time, from start to its result. */
struct prog {
	struct check_req r;
	struct proc_child c;		/* c.pid -1: none running */
	char		**argv;		/* prog_argv()'s */
	char		*env[4];	/* DDUP_DOMAIN, DDUP_ENDPOINT, DDUP_IP */
	char		 out[PROG_OUT_KEEP];
	size_t		 outlen;
	long long	 started;	/* mono_ms() */
	long long	 deadline;
};

static char *
env_word(const char *name, const char *value)
{
	size_t	 len = strlen(name) + strlen(value != NULL ? value : "") + 2;
	char	*s = xmalloc(len);

	snprintf(s, len, "%s=%s", name, value != NULL ? value : "");
	return s;
}

/* What a check kept; the slot is idle after. */
static void
prog_clear(struct prog *p)
{
	size_t	 i;

	free(p->argv);
	p->argv = NULL;
	for (i = 0; p->env[i] != NULL; i++) {
		free(p->env[i]);
		p->env[i] = NULL;
	}
	p->outlen = 0;
}

static int
prog_start(void *st, CURLM *cm, void *tag, const struct check_req *r,
    const char *ca_file)
{
	struct prog	*p = st;
	struct check_res *res = r->res;
	struct proc_spec ps;
	char		 err[256];

	(void)cm;
	(void)tag;
	(void)ca_file;
	p->r = *r;
	res->latency_ms = 0;
	if ((p->argv = prog_argv(r, err, sizeof(err))) == NULL) {
		check_res_reason(res, "%s", err);
		return -1;
	}
	p->env[0] = env_word("DDUP_DOMAIN", r->domain);
	p->env[1] = env_word("DDUP_ENDPOINT", r->name);
	p->env[2] = env_word("DDUP_IP", r->ip);
	p->env[3] = NULL;
	ps = (struct proc_spec){
		.path = p->argv[0],
		.argv = (const char *const *)p->argv,
		.dir = r->dir != NULL ? r->dir : "/",
		.input = NULL,
		.timeout_ms = r->timeout_ms,
		.env = p->env,
		.err_null = 1,
	};
	if (proc_start(&ps, &p->c, err, sizeof(err)) != 0) {
		if (p->c.exec_errno != 0)
			check_res_reason(res, "cannot run %s: %s", p->argv[0],
			    strerror(p->c.exec_errno));
		else
			check_res_reason(res, "cannot run %s: %s", p->argv[0],
			    err);
		prog_clear(p);
		return -1;
	}
	p->started = mono_ms();
	p->deadline = p->started + (r->timeout_ms > 0 ? r->timeout_ms : 1);
	return 0;
}

/* Reads what its stdout has now, at most max bytes; keeps the start. */
static void
prog_read(struct prog *p, size_t max)
{
	char	 buf[16384];
	ssize_t	 n;
	size_t	 keep, got = 0;

	while (p->c.out != -1 && got < max) {
		n = read(p->c.out, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close(p->c.out);
			p->c.out = -1;
			return;
		}
		keep = PROG_OUT_KEEP - p->outlen;
		if ((size_t)n < keep)
			keep = (size_t)n;
		memcpy(p->out + p->outlen, buf, keep);
		p->outlen += keep;
		got += (size_t)n;
	}
}

/* The check is over: the group is ended and the result made. */
static void
prog_finish(struct prog *p, int timed_out, long long now)
{
	struct check_res *res = p->r.res;
	char		 line[PROG_LINE_MAX + 1];

	proc_end(&p->c);
	prog_line(p->out, p->outlen, line, sizeof(line));
	prog_result(res, p->c.status, timed_out, line);
	res->latency_ms = (long)(now - p->started);
	prog_clear(p);
}

static size_t
prog_wait(void *st, struct curl_waitfd *fds, long long *deadline)
{
	struct prog	*p = st;
	long long	 soon;
	size_t		 n = 0;
	int		 fd, at_once;

	if (p->c.out != -1) {
		fds[n].fd = p->c.out;
		fds[n++].events = CURL_WAIT_POLLIN;
	}
	*deadline = p->deadline;
	if ((fd = proc_wait_fd(&p->c, &at_once)) != -1) {
		fds[n].fd = fd;
		fds[n++].events = CURL_WAIT_POLLIN;
	}
	/* It may have ended since ready() looked: at once, then. */
	soon = mono_ms() + (at_once ? 0 : fd == -1 ? PROG_POLL_MS : 0);
	if ((at_once || fd == -1) && soon < *deadline)
		*deadline = soon;
	return n;
}

/*
 * After each wait, whatever woke it: reading is cheap when there is
 * nothing, and libcurl passes on no POLLHUP, the end of the pipe.
 */
static int
prog_ready(void *st, CURLM *cm, const struct curl_waitfd *fds, size_t nfds,
    long long now)
{
	struct prog	*p = st;

	(void)cm;
	(void)fds;
	(void)nfds;
	prog_read(p, PROG_READ_TURN);
	if (proc_exited(&p->c)) {
		/* What is in the pipe now; whoever still holds it is killed. */
		prog_read(p, PROG_READ_TURN);
		prog_finish(p, 0, mono_ms());
		return 1;
	}
	if (now >= p->deadline) {
		prog_finish(p, 1, now);
		return 1;
	}
	return 0;
}

static void *
prog_new(void)
{
	struct prog	*p = xcalloc(1, sizeof(*p));

	p->c.pid = -1;
	return p;
}

/* A program still running is killed with its group. */
static void
prog_free(void *st, CURLM *cm)
{
	struct prog	*p = st;

	(void)cm;
	proc_end(&p->c);
	prog_clear(p);
	free(p);
}

static const char *const prog_schemes[] = { NULL };

const struct check_type check_prog = {
	.name = "program",
	.schemes = prog_schemes,
	.takes = CHECK_TAKES_EXEC,
	.slot_new = prog_new,
	.slot_free = prog_free,
	.start = prog_start,
	.wait = prog_wait,
	.ready = prog_ready,
};
