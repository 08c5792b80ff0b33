/*
 * The exec provider (ddup.ini(5), type = exec): an operator's own program
 * reads and replaces the records.
 *
 *	COMMAND [ARGS...] read NAME TYPE
 *	COMMAND [ARGS...] replace NAME TYPE TTL [ADDRESS...]
 *
 * The program is started with execve (never a shell: arguments reach it
 * as they are, whatever characters they hold), stdin from /dev/null, the
 * run's environment, in the configuration file's folder, as the leader
 * of a process group of its own (proc.h): past `timeout` the whole group
 * is killed, so nothing it started is left running; so is whatever it
 * left behind when it ends.  Exit 0 is success, 75 (EX_TEMPFAIL) a temporary
 * failure, anything else a permanent one; the message is the first line
 * of its stderr.
 */

#include <sys/types.h>
#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "proc.h"
#include "provider.h"
#include "util.h"

#define EX_DEFAULT_TIMEOUT	"10s"
#define EX_OUT_MAX		((size_t)1024 * 1024)	/* read's stdout */
#define EX_TEMPFAIL		75	/* sysexits.h EX_TEMPFAIL */
#define EX_HOST_MAX		255	/* a CNAME's target, read back */

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
	size_t len;

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
	/*
	 * Words as ddup.ini(5), type = exec, has them: split on white
	 * space, no quoting.
	 */
	v = provider_cfg_get(pc, "args");
	p = v != NULL ? v : "";
	while ((start = word_next(&p, &len)) != NULL) {
		ep->args = xrealloc(ep->args, (ep->nargs + 1) *
		    sizeof(*ep->args));
		ep->args[ep->nargs] = xmalloc(len + 1);
		memcpy(ep->args[ep->nargs], start, len);
		ep->args[ep->nargs][len] = '\0';
		ep->nargs++;
	}
	return ep;
}

/* Runs argv (proc_run()) with stdin from /dev/null. */
static int
run_prog(const struct execp *ep, const char *const argv[],
    struct proc_result *o, char *err, size_t errlen)
{
	struct proc_spec ps = {
		.path = ep->command,
		.argv = argv,
		.dir = ep->dir,
		.input = NULL,
		.timeout_ms = ep->timeout_ms,
		.out_max = EX_OUT_MAX,
	};

	return proc_run(&ps, o, err, errlen);
}

/* Classifies how the program ended; err gets the message. */
static enum perr
judge(const struct execp *ep, const struct proc_result *o, const char *what,
    char *err, size_t errlen)
{
	char line[PROC_ERR_LINE + 1], why[64];
	enum perr e;

	proc_first_line(o, line, sizeof(line));
	if (o->timed_out) {
		format_duration(ep->timeout_ms, why, sizeof(why));
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
 * too; a NUL byte nowhere.  The set's TTL is the lowest.  0, or -1 with
 * the reason in err (set emptied).
 */
/*
 * A CNAME read back: one host name, printable, not an address; kept
 * lower case and without its trailing dot, as rrset.h holds it.
 */
static int
read_target(struct rrset *set, char *word)
{
	size_t len = strlen(word), i;

	if (set->target != NULL)
		return -1;		/* a name holds one CNAME */
	if (len > 1 && word[len - 1] == '.')
		word[--len] = '\0';
	/* Labels of one byte or more: no leading, doubled or second dot. */
	if (word[0] == '.' || word[len - 1] == '.' || strstr(word, "..") !=
	    NULL)
		return -1;
	for (i = 0; i < len; i++) {
		if (word[i] <= ' ' || word[i] > '~')
			return -1;
		if (word[i] >= 'A' && word[i] <= 'Z')
			word[i] = (char)(word[i] - 'A' + 'a');
	}
	return rrset_parse(set, word);
}

static int
parse_read(const char *buf, size_t len, struct rrset *set, char *err,
    size_t errlen)
{
	char word[EX_HOST_MAX + 1], shown[65];
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
		/* A NUL ends the word: the line then does not end there. */
		for (w = q; q < eol && *q != ' ' && *q != '\t' && *q != '\r' &&
		    *q != '\0'; q++)
			;
		if (q == w || (size_t)(q - w) >= sizeof(word))
			goto bad;
		memcpy(word, w, (size_t)(q - w));
		word[q - w] = '\0';
		while (q < eol && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q != eol)
			goto bad;
		if (set->type == RR_CNAME) {
			if (read_target(set, word) == -1)
				goto bad;
			set->ttl = (long)ttl;
			if (eol == end)
				break;
			continue;
		}
		if (addr_parse(word, &a) == -1 ||
		    rrtype_of_family(a.family) != set->type)
			goto bad;
		if (rrset_read_add(set, &a, err, errlen) == -1) {
			rrset_clear(set);
			return -1;
		}
		if (set->addrs.n == 1 || ttl < set->ttl)
			set->ttl = (long)ttl;
		if (eol == end)
			break;
	}
	rrset_read_end(set);
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
	    set->type == RR_CNAME ? "HOST" : "IPv4-ADDRESS", shown);
	rrset_clear(set);
	return rv;
}

/* argv: COMMAND ARGS... then the n words given; NULL-terminated. */
static const char **
make_argv(const struct execp *ep, const char *const *words, size_t n,
    const struct rrset *set)
{
	const char **argv;
	size_t i, k = 0;

	argv = xcalloc(1 + ep->nargs + n + (set != NULL ? set->addrs.n : 0) +
	    2, sizeof(*argv));
	argv[k++] = ep->command;
	for (i = 0; i < ep->nargs; i++)
		argv[k++] = ep->args[i];
	for (i = 0; i < n; i++)
		argv[k++] = words[i];
	if (set != NULL)
		for (i = 0; i < set->addrs.n; i++)
			argv[k++] = set->addrs.v[i].s;
	if (set != NULL && set->target != NULL)
		argv[k++] = set->target;
	argv[k] = NULL;
	return argv;
}

static enum perr
exec_read(void *priv, const char *fqdn, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	struct execp *ep = priv;
	struct proc_result o;
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
		proc_result_free(&o);
		free((void *)argv);
	}
	if (rv != PERR_OK)
		for (i = 0; i < nsets; i++)
			rrset_clear(&sets[i]);
	return rv;
}

/* Whether sets[i] is on the side that leaves the name: see exec_replace(). */
static int
goes_first(const struct rrset *sets, size_t nsets, size_t i)
{
	size_t j;
	int cname = 0;

	for (j = 0; j < nsets; j++)
		if (sets[j].type == RR_CNAME && !rrset_empty(&sets[j]))
			cname = 1;
	return cname ? sets[i].type != RR_CNAME : sets[i].type == RR_CNAME;
}

static enum perr
exec_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct execp *ep = priv;
	struct proc_result o;
	const char *words[4];
	const char **argv;
	char what[32], ttl[24], why[256];
	size_t i, k;
	int started;
	enum perr rv = PERR_OK;

	/*
	 * One call per type, A before AAAA, but between a CNAME and
	 * addresses the side being emptied first (a name cannot hold a
	 * CNAME beside addresses); the first failure ends the update.
	 */
	for (k = 0; k < 2 * nsets && rv == PERR_OK; k++) {
		i = k < nsets ? k : k - nsets;
		if ((k < nsets) != goes_first(sets, nsets, i))
			continue;
		snprintf(ttl, sizeof(ttl), "%ld", sets[i].ttl);
		words[0] = "replace";
		words[1] = fqdn;
		words[2] = rrtype_str(sets[i].type);
		words[3] = ttl;
		snprintf(what, sizeof(what), "replace %s", words[2]);
		argv = make_argv(ep, words, 4, &sets[i]);
		if ((started = run_prog(ep, argv, &o, why, sizeof(why))) !=
		    0) {
			snprintf(err, errlen, "program %s (%s): %s",
			    ep->command, what, why);
			rv = started == -1 ? PERR_INVALID : PERR_TEMP;
		} else
			rv = judge(ep, &o, what, err, errlen);
		proc_result_free(&o);
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
	/* One program run per type: not atomic. */
	.caps = PCAP_CNAME,
	.ttl_min = 0,
	.ttl_max = 2147483647,
	.zone_key = NULL,
	.check = exec_check,
	.create = exec_create,
	.read = exec_read,
	.replace = exec_replace,
	.free = exec_free,
};
