/*
 * The configuration file (ddup.ini(5)): the public entry points, which
 * read the text (config_read.c), build struct config from it
 * (config_build.c) and print the problems found (config_problem.c);
 * and what callers ask of the finished configuration.  The layers
 * below are described in config_int.h.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
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

/* config_parse(), and whether the text came from a file others can read. */
static struct config *
parse(const char *name, const char *buf, size_t len, FILE *errs,
    int warnings, int group_readable)
{
	struct ctx x;
	struct config *c = NULL;

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
	cfg_problems_print(&x, errs, warnings);
	if (x.nerr == 0) {
		c = x.c;
		x.c = NULL;
	}
out:
	config_free(x.c);
	cfg_read_free(&x);
	cfg_nameset_free(&x.provset);
	cfg_problems_free(&x);
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
			free(d->eps[j].command);
			free(d->eps[j].send);
			free(d->eps[j].expect_text);
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
	free(c->dir);
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

/* The values of the checks' `header` lines, each a secret. */
static void
add_headers(struct redactor *r, const struct domain_policy *p)
{
	const char *v;
	size_t i;

	for (i = 0; i < p->nheaders; i++)
		if ((v = strchr(p->headers[i], ':')) != NULL)
			redactor_add_header(r, v + 1 + strspn(v + 1, " \t"));
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
	add_headers(r, &c->defaults);
	for (i = 0; i < c->ndomains; i++)
		add_headers(r, &c->domains[i].pol);
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

const char *
endpoint_check(const struct endpoint_cfg *e)
{
	return e->url != NULL ? e->url : e->command;
}
