/*
 * The configuration file (SPEC section 3): the public entry points, the
 * problems found (printed sorted by line) and the finished struct config.
 * The text is read by config_read.c and checked by config_build.c; see
 * config_int.h.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "config_int.h"
#include "pguri.h"
#include "redact.h"
#include "util.h"

/*
 * Bytes in a configuration file: 100,000 endpoints take about 8 MiB;
 * the cap is only against a runaway file (a log written over it).
 */
#define CONFIG_MAX_MIB	64
#define CONFIG_MAX	((size_t)CONFIG_MAX_MIB * 1024 * 1024)

void
cfg_problem(struct ctx *x, int line, int warn, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* Binary junk in a file must not reach a terminal as is. */
	text_printable(buf);
	x->msgs = cfg_grow(x->msgs, x->nmsgs, &x->capmsgs, sizeof(*x->msgs));
	x->msgs[x->nmsgs].line = line;
	x->msgs[x->nmsgs].seq = x->nmsgs;
	x->msgs[x->nmsgs].warn = warn;
	x->msgs[x->nmsgs].text = xstrdup(buf);
	x->nmsgs++;
	if (!warn)
		x->nerr++;
}

/*
 * Doubling keeps a file of many small sections or problems linear.  The
 * counts are bounded by the size of the text (CONFIG_MAX), far from
 * overflowing cap * size.
 */
void *
cfg_grow(void *v, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return v;
	*cap = *cap == 0 ? 8 : *cap * 2;
	return xrealloc(v, *cap * size);
}

static size_t
name_hash(const char *s)
{
	size_t h = 2166136261u;

	unsigned char c;

	/* ASCII case only, as strcasecmp() in the C locale. */
	for (; (c = (unsigned char)*s) != '\0'; s++)
		h = (h ^ (c >= 'A' && c <= 'Z' ? c + 32u : c)) * 16777619u;
	return h;
}

/* The slot of name, or the free slot where it belongs. */
static size_t
name_slot(const struct nameset *ns, const char *name)
{
	size_t i;

	for (i = name_hash(name) & (ns->cap - 1); ns->name[i] != NULL;
	    i = (i + 1) & (ns->cap - 1))
		if (strcasecmp(ns->name[i], name) == 0)
			break;
	return i;
}

int
cfg_nameset_get(const struct nameset *ns, const char *name)
{
	size_t i;

	if (ns->cap == 0 || ns->name[i = name_slot(ns, name)] == NULL)
		return 0;
	return ns->val[i];
}

int
cfg_nameset_add(struct nameset *ns, const char *name, int val)
{
	struct nameset big;
	size_t i = 0;

	/* One hash and probe for the lookup and, mostly, the insert. */
	if (ns->cap != 0) {
		i = name_slot(ns, name);
		if (ns->name[i] != NULL)
			return ns->val[i];
	}
	/* At most half full, so that probes stay short. */
	if ((ns->n + 1) * 2 > ns->cap) {
		big.cap = ns->cap == 0 ? 16 : ns->cap * 2;
		big.n = 0;
		big.name = xcalloc(big.cap, sizeof(*big.name));
		big.val = xcalloc(big.cap, sizeof(*big.val));
		for (i = 0; i < ns->cap; i++)
			if (ns->name[i] != NULL)
				(void)cfg_nameset_add(&big, ns->name[i],
				    ns->val[i]);
		cfg_nameset_free(ns);
		*ns = big;
		i = name_slot(ns, name);
	}
	ns->name[i] = name;
	ns->val[i] = val;
	ns->n++;
	return 0;
}

void
cfg_nameset_init(struct nameset *ns, size_t n)
{
	size_t cap = 16;

	/* At most half full once the n names are in: never rebuilt. */
	while (cap < n * 2 && cap < ((size_t)1 << 30))
		cap *= 2;
	ns->cap = cap;
	ns->n = 0;
	ns->name = xcalloc(cap, sizeof(*ns->name));
	ns->val = xcalloc(cap, sizeof(*ns->val));
}

void
cfg_nameset_free(struct nameset *ns)
{
	free(ns->name);
	free(ns->val);
	memset(ns, 0, sizeof(*ns));
}

static int
msg_cmp(const void *a, const void *b)
{
	const struct msg *m = a, *n = b;

	if (m->line != n->line)
		return m->line < n->line ? -1 : 1;
	return m->seq < n->seq ? -1 : m->seq > n->seq;
}

static void
print_msgs(struct ctx *x, FILE *errs, int warnings)
{
	const struct msg *m;
	size_t i;

	if (x->nmsgs > 0)
		qsort(x->msgs, x->nmsgs, sizeof(*x->msgs), msg_cmp);
	for (i = 0; i < x->nmsgs; i++) {
		if (x->msgs[i].warn && !warnings)
			continue;
		m = &x->msgs[i];
		if (m->line > 0)
			fprintf(errs, "%s:%d: %s%s\n", x->path, m->line,
			    m->warn ? "warning: " : "", m->text);
		else
			fprintf(errs, "%s: %s%s\n", x->path,
			    m->warn ? "warning: " : "", m->text);
	}
}

/* config_parse(), and whether the text came from a file others can read. */
static struct config *
parse(const char *name, const char *buf, size_t len, FILE *errs,
    int warnings, int group_readable)
{
	struct ctx x;
	struct config *c = NULL;
	size_t i;

	memset(&x, 0, sizeof(x));
	x.path = name != NULL ? name : "(configuration)";
	/* Also keeps line numbers and counts far from overflowing. */
	if (len > CONFIG_MAX) {
		fprintf(errs, "%s: file too large (more than %d MiB)\n",
		    x.path, CONFIG_MAX_MIB);
		goto out;
	}
	x.group_readable = group_readable;
	x.in = buf != NULL ? buf : "";
	x.inlen = buf != NULL ? len : 0;
	x.c = xcalloc(1, sizeof(*x.c));
	x.c->path = xstrdup(x.path);

	cfg_read(&x);
	cfg_build(&x);
	print_msgs(&x, errs, warnings);
	if (x.nerr == 0) {
		c = x.c;
		x.c = NULL;
	}
out:
	config_free(x.c);
	cfg_read_free(&x);
	cfg_nameset_free(&x.provset);
	for (i = 0; i < x.nmsgs; i++)
		free(x.msgs[i].text);
	free(x.msgs);
	return c;
}

struct config *
config_parse(const char *name, const char *buf, size_t len, FILE *errs,
    int warnings)
{
	return parse(name, buf, len, errs, warnings, 0);
}

struct config *
config_load(const char *path, FILE *errs, int warnings)
{
	struct config *c = NULL;
	struct stat st;
	FILE *fp = NULL;
	char *buf = NULL;
	size_t n = 0, want;
	int fd = -1;

	/*
	 * Only a regular file is read: opening a FIFO waits for a writer,
	 * and a device could block for ever or act on an open.  Looked at
	 * before the open, which is non-blocking in case the file is
	 * swapped in between (fstat below then refuses it).
	 */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) &&
	    !S_ISDIR(st.st_mode)) {
		fprintf(errs, "%s: cannot read: not a regular file\n", path);
		goto out;
	}
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1 ||
	    (fp = fdopen(fd, "r")) == NULL) {
		fprintf(errs, "%s: cannot read: %s\n", path, strerror(errno));
		if (fd != -1)
			close(fd);
		goto out;
	}
	if (fstat(fileno(fp), &st) == -1) {
		fprintf(errs, "%s: cannot read: %s\n", path, strerror(errno));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		fprintf(errs, "%s: cannot read: %s\n", path, strerror(EISDIR));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(errs, "%s: cannot read: not a regular file\n", path);
		goto out;
	}
	/*
	 * A buffer of the file's size (a megabyte of heap for a small file
	 * would stay with the process), and one byte more: a byte read
	 * there means the file grew, and it is read on up to one byte more
	 * than allowed, which tells a file that is too large.
	 */
	want = st.st_size >= 0 && (size_t)st.st_size < CONFIG_MAX ?
	    (size_t)st.st_size + 1 : CONFIG_MAX + 1;
	buf = xmalloc(want);
	errno = 0;
	n = fread(buf, 1, want, fp);
	if (n == want && want <= CONFIG_MAX) {
		buf = xrealloc(buf, CONFIG_MAX + 1);
		n += fread(buf + n, 1, CONFIG_MAX + 1 - n, fp);
	}
	if (ferror(fp)) {
		fprintf(errs, "%s: cannot read: %s\n", path,
		    strerror(errno != 0 ? errno : EIO));
		goto out;
	}
	/* parse() refuses n > CONFIG_MAX. */
	c = parse(path, buf, n, errs, warnings,
	    (st.st_mode & (S_IRGRP | S_IROTH)) != 0);
out:
	if (fp != NULL)
		fclose(fp);
	free(buf);
	return c;
}

int
provider_cfg_line(const struct provider_cfg *pc, const char *key)
{
	size_t i;

	if (key != NULL)
		for (i = 0; i < pc->nkv; i++)
			if (strcasecmp(pc->kv[i].key, key) == 0)
				return pc->kv[i].line;
	return pc->line;
}

void
config_free(struct config *c)
{
	struct provider_cfg *pc;
	struct domain_cfg *d;
	size_t i, j;

	if (c == NULL)
		return;
	for (i = 0; i < c->nproviders; i++) {
		pc = &c->providers[i];
		for (j = 0; j < pc->nkv; j++) {
			free(pc->kv[j].key);
			if (pc->kv[j].secret)
				explicit_bzero(pc->kv[j].value,
				    strlen(pc->kv[j].value));
			free(pc->kv[j].value);
		}
		free(pc->kv);
		free(pc->name);
		free(pc->dir);
	}
	free(c->providers);
	for (i = 0; i < c->ndomains; i++) {
		d = &c->domains[i];
		for (j = 0; j < d->neps; j++) {
			/* An endpoint without a name is named by its url. */
			if (d->eps[j].name != d->eps[j].url)
				free(d->eps[j].name);
			free(d->eps[j].url);
			free(d->eps[j].host);
			free(d->eps[j].cname);
			free(d->eps[j].location);
		}
		free(d->eps);
		free(d->name);
		cfg_policy_free(&d->pol);
	}
	free(c->domains);
	for (i = 0; i < c->nnotifiers; i++)
		cfg_notify_free(&c->notifiers[i]);
	free(c->notifiers);
	cfg_policy_free(&c->defaults);
	free(c->path);
	free_secret(c->state);
	for (i = 0; i < c->ncheckers; i++)
		free(c->checkers[i]);
	free(c->checkers);
	free(c->checker);
	free(c->ca_file);
	free(c->control_url);
	free(c->status_html);
	free(c->metrics_file);
	free(c);
}

static void
add_password(void *arg, const char *pw)
{
	redactor_add(arg, pw);
}

struct redactor *
config_redactor(const struct config *c)
{
	struct redactor *r = redactor_create();
	const struct notify_cfg *n;
	const char *v;
	size_t i, j;

	for (i = 0; i < c->nproviders; i++)
		for (j = 0; j < c->providers[i].nkv; j++)
			if (c->providers[i].kv[j].secret)
				redactor_add(r, c->providers[i].kv[j].value);
	for (i = 0; i < c->nnotifiers; i++) {
		n = &c->notifiers[i];
		if (n->url_secret)
			redactor_add_url(r, n->url);
		for (j = 0; j < n->nheaders; j++) {
			/* "Name: value": the value is the secret. */
			if ((v = strchr(n->headers[j], ':')) == NULL)
				continue;
			redactor_add_header(r, v + 1 + strspn(v + 1, " \t"));
		}
	}
	if (c->state_pg)
		pguri_passwords(c->state, add_password, r);
	return r;
}

const char *
domain_rank_location(const struct domain_cfg *d, long rank)
{
	if (d->pol.location == NULL || rank < 0)
		return NULL;
	if (rank == 0)
		return d->pol.location;
	if ((size_t)rank <= d->pol.nfailover)
		return d->pol.failover[rank - 1];
	return NULL;
}

const char *
endpoint_target(const struct endpoint_cfg *e)
{
	return e->cname != NULL ? e->cname : e->ip.s;
}
