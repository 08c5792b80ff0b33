/*
 * The exec provider (SPEC 3.2.1): an operator's own program reads and
 * replaces the records.
 *
 *	COMMAND [ARGS...] read NAME TYPE
 *	COMMAND [ARGS...] replace NAME TYPE TTL [ADDRESS...]
 *
 * The program is started with execve (never a shell: arguments reach it
 * as they are, whatever characters they hold), stdin from /dev/null, the
 * run's environment, in the configuration file's folder, as the leader
 * of a process group of its own: past `timeout` the whole group is
 * killed, so nothing it started is left running; so is whatever it left
 * behind when it ends.  Exit 0 is success, 75 (EX_TEMPFAIL) a temporary
 * failure, anything else a permanent one; the message is the first line
 * of its stderr.
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

#include "config.h"
#include "provider.h"
#include "util.h"

extern char **environ;

#define EX_DEFAULT_TIMEOUT	"10s"
#define EX_OUT_MAX		((size_t)1024 * 1024)	/* read's stdout */
#define EX_ERR_KEEP		4096	/* stderr bytes kept: its first line */
#define EX_ERR_LINE		200	/* SPEC: the message is cut here */
#define EX_TEMPFAIL		75	/* sysexits.h EX_TEMPFAIL */

static const struct provider_key exec_keys[] = {
	{ "command", PK_REQUIRED },
	{ "args", 0 },
	{ "timeout", 0 },
	{ NULL, 0 }
};

struct execp {
	char		 *command;
	char		**args;		/* `args`, split on white space */
	size_t		  nargs;
	char		 *dir;		/* the configuration file's folder */
	long long	  timeout_ms;
};

/* What one run of the program gave. */
struct outcome {
	int		 status;	/* from waitpid */
	int		 timed_out;
	char		*out;		/* stdout, NUL-terminated */
	size_t		 outlen;
	int		 out_over;	/* stdout passed EX_OUT_MAX */
	char		 errbuf[EX_ERR_KEEP + 1];
	size_t		 errlen;
};

static int
exec_check(const struct provider_cfg *pc, const char **key, char *err,
    size_t errlen)
{
	const char *v;

	*key = "command";
	v = provider_cfg_get(pc, "command");
	if (v[0] != '/') {
		snprintf(err, errlen, "command: \"%s\" is not an absolute "
		    "path", v);
		return -1;
	}
	if (provider_check_timeout(pc, key, err, errlen) == -1)
		return -1;
	*key = NULL;
	return 0;
}

static void
execp_free(struct execp *ep)
{
	size_t i;

	if (ep == NULL)
		return;
	for (i = 0; i < ep->nargs; i++)
		free(ep->args[i]);
	free(ep->args);
	free(ep->command);
	free(ep->dir);
	free(ep);
}

static void *
exec_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct execp *ep;
	const char *v, *p, *start;

	ep = xcalloc(1, sizeof(*ep));
	ep->command = xstrdup(provider_cfg_get(pc, "command"));
	ep->dir = xstrdup(pc->dir != NULL ? pc->dir : ".");
	v = provider_cfg_get(pc, "timeout");
	if (parse_duration(v != NULL ? v : EX_DEFAULT_TIMEOUT,
	    &ep->timeout_ms) == -1 || ep->timeout_ms <= 0) {
		snprintf(err, errlen, "timeout: not a positive duration");
		execp_free(ep);
		return NULL;
	}
	/* Words as the SPEC says: split on white space, no quoting. */
	v = provider_cfg_get(pc, "args");
	for (p = v != NULL ? v : ""; *p != '\0';) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		start = p;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
		ep->args = xrealloc(ep->args, (ep->nargs + 1) *
		    sizeof(*ep->args));
		ep->args[ep->nargs] = xmalloc((size_t)(p - start) + 1);
		memcpy(ep->args[ep->nargs], start, (size_t)(p - start));
		ep->args[ep->nargs][p - start] = '\0';
		ep->nargs++;
	}
	return ep;
}

/* Reads what fd has; 0 at end of file. */
static ssize_t
take(int fd, struct outcome *o, int is_out)
{
	char buf[16384];
	ssize_t n;
	size_t room;

	if ((n = read(fd, buf, sizeof(buf))) <= 0)
		return n;
	if (is_out) {
		if ((size_t)n > EX_OUT_MAX - o->outlen) {
			o->out_over = 1;	/* drained, not kept */
			return n;
		}
		o->out = xrealloc(o->out, o->outlen + (size_t)n + 1);
		memcpy(o->out + o->outlen, buf, (size_t)n);
		o->outlen += (size_t)n;
		o->out[o->outlen] = '\0';
	} else {
		room = EX_ERR_KEEP - o->errlen;
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
child(const struct execp *ep, const char *const argv[], int devnull, int outw,
    int errw)
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
	if (dup2(devnull, 0) == -1 || dup2(outw, 1) == -1 ||
	    dup2(errw, 2) == -1)
		_exit(126);
	/*
	 * The message is all the child can do about a failure; the (void)
	 * cast does not silence warn_unused_result under _FORTIFY_SOURCE
	 * (the Debian package's flags), the test does.
	 */
	if (chdir(ep->dir) == -1) {
		if (write(2, dmsg, sizeof(dmsg) - 1) == -1)
			_exit(126);
		_exit(126);
	}
	/* execve does not write to argv: the cast only drops const. */
	execve(ep->command, (char *const *)argv, environ);
	if (write(2, msg, sizeof(msg) - 1) == -1)
		_exit(127);
	_exit(127);
}

/*
 * Runs argv to its end or to the timeout.  It could not be started: -1
 * when the command cannot be executed (permanent), -2 when the system
 * refused a pipe or a process (temporary); err says why.
 */
static int
run_prog(const struct execp *ep, const char *const argv[], struct outcome *o,
    char *err, size_t errlen)
{
	struct pollfd pf[2];
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, devnull = -1;
	int exited = 0, open_fds, i, rc = -1, wait_ms;
	long long deadline;
	pid_t pid = -1;
	ssize_t n;

	memset(o, 0, sizeof(*o));
	o->out = xstrdup("");
	/* The child could only say that execve failed, not why. */
	if (access(ep->command, X_OK) == -1) {
		snprintf(err, errlen, "cannot execute: %s", strerror(errno));
		goto out;
	}
	if ((devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1 ||
	    pipe(outp) == -1 || pipe(errp) == -1 ||
	    fcntl(outp[0], F_SETFD, FD_CLOEXEC) == -1 ||
	    fcntl(outp[1], F_SETFD, FD_CLOEXEC) == -1 ||
	    fcntl(errp[0], F_SETFD, FD_CLOEXEC) == -1 ||
	    fcntl(errp[1], F_SETFD, FD_CLOEXEC) == -1) {
		snprintf(err, errlen, "cannot set up its pipes: %s",
		    strerror(errno));
		rc = -2;
		goto out;
	}
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "cannot fork: %s", strerror(errno));
		rc = -2;
		goto out;
	}
	if (pid == 0)
		child(ep, argv, devnull, outp[1], errp[1]);
	/* Both sides set the group: whichever runs first, it exists. */
	(void)setpgid(pid, pid);
	close(outp[1]);
	close(errp[1]);
	outp[1] = errp[1] = -1;

	deadline = mono_ms() + ep->timeout_ms;
	pf[0].fd = outp[0];
	pf[1].fd = errp[0];
	pf[0].events = pf[1].events = POLLIN;
	for (;;) {
		if (!exited && waitpid(pid, &o->status, WNOHANG) == pid)
			exited = 1;
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
		if (open_fds == 0) {
			(void)poll(NULL, 0, wait_ms);
			continue;
		}
		if ((n = poll(pf, 2, wait_ms)) == -1 && errno != EINTR) {
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
			    take(pf[i].fd, o, i == 0) <= 0) {
				close(pf[i].fd);
				pf[i].fd = -1;
			}
	}
	outp[0] = pf[0].fd;
	errp[0] = pf[1].fd;
	/* The whole group: the program and whatever it started. */
	(void)kill(-pid, SIGKILL);
	if (!exited) {
		(void)kill(pid, SIGKILL);
		while (waitpid(pid, &o->status, 0) == -1 && errno == EINTR)
			;
	}
	rc = 0;
out:
	for (i = 0; i < 2; i++) {
		if (outp[i] != -1)
			close(outp[i]);
		if (errp[i] != -1)
			close(errp[i]);
	}
	if (devnull != -1)
		close(devnull);
	return rc;
}

/*
 * The first line of stderr, printable and cut at EX_ERR_LINE bytes, or
 * "" when there is none.
 */
static void
first_line(const struct outcome *o, char *out, size_t outlen)
{
	size_t i;

	for (i = 0; i < o->errlen && i < EX_ERR_LINE && i + 1 < outlen; i++) {
		if (o->errbuf[i] == '\n' || o->errbuf[i] == '\r')
			break;
		out[i] = o->errbuf[i];
		if (out[i] == '\0')
			out[i] = '?';
	}
	out[i] = '\0';
	text_printable(out);
}

/* Classifies how the program ended; err gets the message. */
static enum perr
judge(const struct execp *ep, const struct outcome *o, const char *what,
    char *err, size_t errlen)
{
	char line[EX_ERR_LINE + 1], why[64];
	enum perr e;

	first_line(o, line, sizeof(line));
	if (o->timed_out) {
		if (ep->timeout_ms % 1000 == 0)
			snprintf(why, sizeof(why), "%llds", ep->timeout_ms /
			    1000);
		else
			snprintf(why, sizeof(why), "%lldms", ep->timeout_ms);
		snprintf(err, errlen, "program %s (%s): still running after "
		    "timeout %s: killed", ep->command, what, why);
		/* Like an API that does not answer: not asked again this run. */
		return PERR_NET;
	}
	if (WIFEXITED(o->status) && WEXITSTATUS(o->status) == 0)
		return PERR_OK;
	if (WIFEXITED(o->status)) {
		snprintf(why, sizeof(why), "exit status %d",
		    WEXITSTATUS(o->status));
		e = WEXITSTATUS(o->status) == EX_TEMPFAIL ? PERR_TEMP :
		    PERR_INVALID;
	} else {
		snprintf(why, sizeof(why), "killed by signal %d",
		    WIFSIGNALED(o->status) ? WTERMSIG(o->status) : 0);
		e = PERR_TEMP;
	}
	snprintf(err, errlen, "program %s (%s): %s", ep->command, what,
	    line[0] != '\0' ? line : why);
	return e;
}

/*
 * The output of `read`: one "TTL ADDRESS" line per record, nothing when
 * there are none.  TTL is a non-negative decimal, the address one of
 * set->type; blanks around the two are allowed, a CR before the newline
 * too.  The set's TTL is the lowest.  0, or -1 with the reason in err
 * (set emptied).
 */
static int
parse_read(const char *buf, size_t len, struct rrset *set, char *err,
    size_t errlen)
{
	char word[ADDR_STRLEN + 1], shown[65];
	const char *p = buf, *end = buf + len, *eol, *q, *w;
	struct addr a;
	long long ttl;
	size_t lineno = 0, i;
	int rv = -1;

	rrset_clear(set);
	for (; p < end; p = eol + 1) {
		lineno++;
		if ((eol = memchr(p, '\n', (size_t)(end - p))) == NULL)
			eol = end;
		q = p;
		while (q < eol && (*q == ' ' || *q == '\t'))
			q++;
		for (ttl = 0, w = q; q < eol && *q >= '0' && *q <= '9'; q++)
			if ((ttl = ttl * 10 + (*q - '0')) > 2147483647)
				goto bad;
		if (q == w || q == eol || (*q != ' ' && *q != '\t'))
			goto bad;
		while (q < eol && (*q == ' ' || *q == '\t'))
			q++;
		for (w = q; q < eol && *q != ' ' && *q != '\t' && *q != '\r';
		    q++)
			;
		if (q == w || (size_t)(q - w) >= sizeof(word))
			goto bad;
		memcpy(word, w, (size_t)(q - w));
		word[q - w] = '\0';
		while (q < eol && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q != eol || addr_parse(word, &a) == -1 ||
		    rrtype_of_family(a.family) != set->type)
			goto bad;
		addrset_add_addr(&set->addrs, &a);
		if (set->addrs.n == 1 || ttl < set->ttl)
			set->ttl = (long)ttl;
		if (eol == end)
			break;
	}
	return 0;
bad:
	for (i = 0; p + i < eol && i + 1 < sizeof(shown); i++) {
		shown[i] = p[i];
		if (shown[i] == '\0')
			shown[i] = '?';
	}
	shown[i] = '\0';
	text_printable(shown);
	snprintf(err, errlen, "line %zu of its output is not \"TTL %s\": "
	    "\"%s\"", lineno, set->type == RR_AAAA ? "IPv6-ADDRESS" :
	    "IPv4-ADDRESS", shown);
	rrset_clear(set);
	return rv;
}

/* argv: COMMAND ARGS... then the n words given; NULL-terminated. */
static const char **
make_argv(const struct execp *ep, const char *const *words, size_t n,
    const struct addrset *addrs)
{
	const char **argv;
	size_t i, k = 0;

	argv = xcalloc(1 + ep->nargs + n + (addrs != NULL ? addrs->n : 0) +
	    1, sizeof(*argv));
	argv[k++] = ep->command;
	for (i = 0; i < ep->nargs; i++)
		argv[k++] = ep->args[i];
	for (i = 0; i < n; i++)
		argv[k++] = words[i];
	if (addrs != NULL)
		for (i = 0; i < addrs->n; i++)
			argv[k++] = addrs->v[i].s;
	argv[k] = NULL;
	return argv;
}

static enum perr
exec_read(void *priv, const char *fqdn, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	struct execp *ep = priv;
	struct outcome o;
	const char *words[3];
	const char **argv;
	char what[32], why[256];
	size_t i;
	int started;
	enum perr rv = PERR_OK;

	for (i = 0; i < nsets; i++)
		rrset_clear(&sets[i]);
	/* One call per type, A first (the caller asks in that order). */
	for (i = 0; i < nsets && rv == PERR_OK; i++) {
		words[0] = "read";
		words[1] = fqdn;
		words[2] = rrtype_str(sets[i].type);
		snprintf(what, sizeof(what), "read %s", words[2]);
		argv = make_argv(ep, words, 3, NULL);
		if ((started = run_prog(ep, argv, &o, why, sizeof(why))) !=
		    0) {
			snprintf(err, errlen, "program %s (%s): %s",
			    ep->command, what, why);
			rv = started == -1 ? PERR_INVALID : PERR_TEMP;
		} else if ((rv = judge(ep, &o, what, err, errlen)) ==
		    PERR_OK) {
			if (o.out_over) {
				snprintf(err, errlen, "program %s (%s): output "
				    "larger than %zu bytes", ep->command, what,
				    EX_OUT_MAX);
				rv = PERR_INVALID;
			} else if (parse_read(o.out, o.outlen, &sets[i], why,
			    sizeof(why)) == -1) {
				snprintf(err, errlen, "program %s (%s): %s",
				    ep->command, what, why);
				rv = PERR_INVALID;
			}
		}
		free(o.out);
		free((void *)argv);
	}
	if (rv != PERR_OK)
		for (i = 0; i < nsets; i++)
			rrset_clear(&sets[i]);
	return rv;
}

static enum perr
exec_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct execp *ep = priv;
	struct outcome o;
	const char *words[4];
	const char **argv;
	char what[32], ttl[24], why[256];
	size_t i;
	int started;
	enum perr rv = PERR_OK;

	/* One call per type, A first; the first failure ends the update. */
	for (i = 0; i < nsets && rv == PERR_OK; i++) {
		if (sets[i].type == RR_CNAME) {
			snprintf(err, errlen, "program %s: no CNAME",
			    ep->command);
			return PERR_INVALID;
		}
		snprintf(ttl, sizeof(ttl), "%ld", sets[i].ttl);
		words[0] = "replace";
		words[1] = fqdn;
		words[2] = rrtype_str(sets[i].type);
		words[3] = ttl;
		snprintf(what, sizeof(what), "replace %s", words[2]);
		argv = make_argv(ep, words, 4, &sets[i].addrs);
		if ((started = run_prog(ep, argv, &o, why, sizeof(why))) !=
		    0) {
			snprintf(err, errlen, "program %s (%s): %s",
			    ep->command, what, why);
			rv = started == -1 ? PERR_INVALID : PERR_TEMP;
		} else
			rv = judge(ep, &o, what, err, errlen);
		free(o.out);
		free((void *)argv);
	}
	return rv;
}

static void
exec_free(void *priv)
{
	execp_free(priv);
}

const struct provider_ops exec_ops = {
	.type = "exec",
	.keys = exec_keys,
	/* One program run per type: not atomic, no CNAME. */
	.caps = 0,
	.ttl_min = 0,
	.ttl_max = 2147483647,
	.zone_key = NULL,
	.check = exec_check,
	.create = exec_create,
	.read = exec_read,
	.replace = exec_replace,
	.free = exec_free,
};
