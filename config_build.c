/*
 * Checking the collected configuration and building struct config from
 * it: the keys each section may hold, typed values, health-check
 * settings inherited from the top of the file, providers with their
 * secrets, domains and their endpoints.  Every problem is recorded with
 * cfg_problem() and the checks go on, so that one run shows them all.
 */

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>
#include <libpq-fe.h>

#include "config_int.h"
#include "pguri.h"
#include "provider.h"
#include "util.h"

#define SECRET_MAX	65536		/* bytes read from a !file secret */

/*
 * Names and urls are shown in every output (logs, status, JSON): they
 * must print as they are written, so that the operator's name is the
 * one shown and JSON output is valid.
 */
int
cfg_text_ok(const char *s)
{
	return text_is_printable(s);
}

static char	*secret_text(struct ctx *, const struct rkey *, const char *,
		    int, int *);

#define STATE_DEFAULT	"/var/lib/ddup/ddup.db"
#define CHECKER_MAX	253		/* bytes in a checker's name: a host name */

/*
 * A PostgreSQL URI that libpq cannot read is a configuration error, found
 * by -n without connecting.  libpq's message quotes parts of the URI,
 * which may hold the password: what it quotes is left out.
 */
static void
check_pg_uri(struct ctx *x, const struct rkey *k, const char *uri)
{
	PQconninfoOption *opts;
	const char *p;
	char *msg = NULL, *shown;
	size_t n = 0;
	int quoted = 0;

	if ((opts = PQconninfoParse(uri, &msg)) != NULL) {
		PQconninfoFree(opts);
		return;
	}
	if (msg == NULL) {
		cfg_problem(x, k->line, 0, "'state': libpq cannot read the URI "
		    "(out of memory)");
		return;
	}
	/* Each quoted part becomes "...": at most 5 bytes for its 2. */
	shown = xmalloc(strlen(msg) * 3 + 1);
	for (p = msg; *p != '\0'; p++) {
		if (*p == '"') {
			quoted = !quoted;
			if (quoted) {
				memcpy(shown + n, "\"...\"", 5);
				n += 5;
			}
		} else if (!quoted && *p != '\n')
			shown[n++] = *p;
	}
	shown[n] = '\0';
	cfg_problem(x, k->line, 0, "'state': not a PostgreSQL URI that libpq "
	    "can read: %s", shown);
	free(shown);
	PQfreemem(msg);
}

/*
 * `state` (SPEC 3.1 and 11): a path, or a PostgreSQL URI.  It is a
 * secret, as the URI may hold a password; that one is never shown.
 */
static void
check_state(struct ctx *x, const struct rsec *s)
{
	struct config *c = x->c;
	const struct rkey *k;
	char *v, *shown;
	int literal;

	if ((k = cfg_get(x, s, "state")) == NULL) {
		if (!cfg_has_key(s, "state"))
			c->state = xstrdup(STATE_DEFAULT);
		return;
	}
	if ((v = secret_text(x, k, "state", 1, &literal)) == NULL)
		return;
	c->state = v;
	/*
	 * Not a SQLite file named after a connection string, password and
	 * all; the value is not quoted, for that password.
	 */
	if (!pguri_is(v) && pguri_is_conninfo(v))
		cfg_problem(x, k->line, 0, "'state': looks like a libpq "
		    "keyword/value connection string; write a postgresql:// "
		    "URI");
	if (!pguri_is(v))
		return;
	c->state_pg = 1;
	check_pg_uri(x, k, v);
	shown = pguri_redact(v);
	if (literal && x->group_readable && strcmp(shown, v) != 0)
		cfg_problem(x, k->line, 1, "'state': the URI's password is "
		    "written in a file that group or others can read; use "
		    "!env or !file, or make the file private");
	free(shown);
}

/* A checker's name: as a location's (SPEC 11), and no longer than a host's. */
static int
checker_name_ok(const char *s)
{
	return cfg_location_ok(s) && strlen(s) <= CHECKER_MAX;
}

/* The fleet's spelling of name, or NULL when it is not one of checkers. */
static char *
fleet_member(const struct config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->ncheckers; i++)
		if (strcasecmp(c->checkers[i], name) == 0)
			return c->checkers[i];
	return NULL;
}

/*
 * `checkers`: names separated by commas (SPEC 11), blanks around each
 * allowed, each once.  A blank inside a name is refused rather than
 * read as a separator: "a b" may be a typo for one name as well as two.
 */
static void
check_checkers(struct ctx *x, const struct rkey *k)
{
	struct config *c = x->c;
	char *copy, *rest, *w, *end;
	int nerr = x->nerr;

	copy = rest = xstrdup(k->value);
	c->checkers = xcalloc(strlen(copy) / 2 + 1, sizeof(*c->checkers));
	while ((w = strsep(&rest, ",")) != NULL) {
		w += strspn(w, " \t");
		for (end = w + strlen(w); end > w && (end[-1] == ' ' ||
		    end[-1] == '\t'); end--)
			;
		*end = '\0';
		if (*w == '\0')
			continue;
		if (strpbrk(w, " \t") != NULL)
			cfg_problem(x, k->line, 0, "'checkers': bad checker "
			    "name '%s' (the names are separated by commas, "
			    "not blanks)", w);
		else if (!checker_name_ok(w))
			cfg_problem(x, k->line, 0, "'checkers': bad checker "
			    "name '%s' (letters, digits, '-', '_' and '.', at "
			    "most %d)", w, CHECKER_MAX);
		else if (fleet_member(c, w) != NULL)
			cfg_problem(x, k->line, 0, "'checkers': '%s' listed "
			    "twice", w);
		else
			c->checkers[c->ncheckers++] = xstrdup(w);
	}
	if (x->nerr == nerr && c->ncheckers == 0)
		cfg_problem(x, k->line, 0, "'checkers' names no checker");
	free(copy);
}

/*
 * `checker`, this host's name (the host name by default), as the fleet
 * spells it; line: that of `checkers`.
 */
static void
check_checker(struct ctx *x, const struct rsec *s, int line)
{
	struct config *c = x->c;
	const struct rkey *k;
	const char *name;
	char host[CHECKER_MAX + 2], *m;

	if ((k = cfg_get(x, s, "checker")) != NULL) {
		if (!checker_name_ok(k->value)) {
			cfg_problem(x, k->line, 0, "'checker': bad checker "
			    "name '%s' (letters, digits, '-', '_' and '.', at "
			    "most %d)", k->value, CHECKER_MAX);
			return;
		}
		name = k->value;
	} else if (cfg_has_key(s, "checker") || c->ncheckers == 0)
		return;
	else {
		if (gethostname(host, sizeof(host)) == -1)
			host[0] = '\0';
		host[sizeof(host) - 1] = '\0';
		if (!checker_name_ok(host)) {
			cfg_problem(x, line, 0, "this host's name '%s' cannot "
			    "be the default of 'checker' (letters, digits, "
			    "'-', '_' and '.'): set 'checker'", host);
			return;
		}
		name = host;
	}
	if (c->ncheckers == 0) {
		c->checker = xstrdup(name);
		return;
	}
	if ((m = fleet_member(c, name)) != NULL)
		c->checker = xstrdup(m);
	else if (k != NULL)
		cfg_problem(x, k->line, 0, "'checker': '%s' is not one of "
		    "'checkers' (line %d)", name, line);
	else
		cfg_problem(x, line, 0, "this host's name '%s' (the default "
		    "of 'checker') is not one of 'checkers': add it, or set "
		    "'checker'", name);
}

/*
 * The fleet of SPEC 11: checkers, checker and quorum.  Required with a
 * PostgreSQL state; with a SQLite one validated all the same (a file
 * ready to move to PostgreSQL), and not used.
 */
static void
check_fleet(struct ctx *x, const struct rsec *s)
{
	struct config *c = x->c;
	const struct rkey *k;
	long q, max;
	size_t n;
	int line = 0;

	if ((k = cfg_get(x, s, "checkers")) != NULL) {
		line = k->line;
		check_checkers(x, k);
	} else if (!cfg_has_key(s, "checkers") && c->state_pg)
		cfg_problem(x, (k = cfg_get(x, s, "state")) != NULL ? k->line :
		    0, 0, "a PostgreSQL state needs 'checkers': the names of "
		    "every checker of this configuration, comma-separated");
	check_checker(x, s, line);
	n = c->ncheckers;
	c->quorum = (long)(n / 2 + 1);
	if ((k = cfg_get(x, s, "quorum")) == NULL ||
	    strcasecmp(k->value, "majority") == 0)
		return;
	max = n > 0 ? (long)n : 2147483647L;
	if (parse_long(k->value, 1, max, &q) == -1) {
		if (n > 0)
			cfg_problem(x, k->line, 0, "'quorum': expected majority "
			    "or a number from 1 to %zu (the number of "
			    "checkers), not '%s'", n, k->value);
		else
			cfg_problem(x, k->line, 0, "'quorum': expected majority "
			    "or a number from 1, not '%s'", k->value);
		return;
	}
	c->quorum = q;
	if (n > 0 && (size_t)q <= n / 2)
		cfg_problem(x, k->line, 1, "'quorum' %ld of %zu checkers is not "
		    "a majority: checkers that cannot reach the servers can "
		    "fail endpoints that the others see pass (failures win)",
		    q, n);
}

/*
 * HEAD with expectBody can never pass.  Reported at the later of the two
 * keys, the one that made the pair; after is the line of the section
 * header, so that a pair made at the top of the file is reported there
 * once and not again by each domain that inherits it.
 */
static void
check_head_body(struct ctx *x, const struct hc *h, int after)
{
	int line;

	int mline = cfg_hc_line(h, "method"), bline = cfg_hc_line(h,
	    "expectBody");

	if (!h->p.head || h->p.expect_body == NULL)
		return;
	line = mline > bline ? mline : bline;
	if (line > after)
		cfg_problem(x, line, 0, "expectBody needs method GET (a HEAD "
		    "answer has no body)");
}

/*
 * failoverLocations needs a location to fall back from, and may not
 * name it (SPEC 9).  Reported, as the pair above, at the later of the
 * two keys when it comes after `after`.
 */
static void
check_locations(struct ctx *x, const struct hc *h, int after)
{
	int	 lline = cfg_hc_line(h, "location");
	int	 fline = cfg_hc_line(h, "failoverLocations");
	int	 line = lline > fline ? lline : fline;
	size_t	 i;

	if (h->p.nfailover == 0 || line <= after)
		return;
	if (h->p.location == NULL) {
		cfg_problem(x, fline, 0, "failoverLocations needs a location "
		    "(the one whose endpoints are preferred)");
		return;
	}
	for (i = 0; i < h->p.nfailover; i++)
		if (strcasecmp(h->p.failover[i], h->p.location) == 0)
			cfg_problem(x, line, 0, "failoverLocations lists '%s', "
			    "the domain's own location", h->p.failover[i]);
}

static void
check_top(struct ctx *x, struct rsec *s, struct hc *h)
{
	struct config *c = x->c;
	const struct rkey *k;
	struct stat st;
	struct hc top;
	int fd, oserr;

	cfg_resolve_keys(x, s);
	c->interval_ms = 30 * 1000LL;
	c->max_parallel = 256;
	c->history_ms = 7LL * 86400 * 1000;
	if ((k = cfg_get(x, s, "interval")) != NULL)
		(void)cfg_get_duration(x, k, &c->interval_ms);
	if ((k = cfg_get(x, s, "history")) != NULL)
		(void)cfg_get_duration(x, k, &c->history_ms);
	if ((k = cfg_get(x, s, "maxParallel")) != NULL)
		cfg_get_long(x, k, 1, 2147483647, &c->max_parallel);
	check_state(x, s);
	check_fleet(x, s);
	if ((k = cfg_get(x, s, "logFormat")) != NULL) {
		if (strcasecmp(k->value, "json") == 0)
			c->log_json = 1;
		else if (strcasecmp(k->value, "text") != 0)
			cfg_problem(x, k->line, 0, "'logFormat': expected "
			    "text or json, not '%s'", k->value);
	}
	if ((k = cfg_get(x, s, "caFile")) != NULL) {
		/*
		 * Only a regular file is opened (a device or a FIFO could
		 * act on an open), and only to see that it can be read.
		 */
		fd = -1;
		oserr = 0;
		if (stat(k->value, &st) == -1)
			oserr = errno;
		else if (S_ISREG(st.st_mode)) {
			fd = open(k->value, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
			if (fd == -1)
				oserr = errno;
		}
		if (oserr != 0)
			cfg_problem(x, k->line, 0, "caFile %s: cannot read: %s",
			    k->value, strerror(oserr));
		else if (!S_ISREG(st.st_mode))
			cfg_problem(x, k->line, 0, "caFile %s: not a regular "
			    "file", k->value);
		else
			c->ca_file = xstrdup(k->value);
		if (fd != -1)
			close(fd);
	}

	if ((k = cfg_get(x, s, "statusHtml")) != NULL) {
		size_t len = strlen(k->value);

		/* The page goes beside a temporary file: a file, not a folder. */
		if (len == 0 || k->value[len - 1] == '/')
			cfg_problem(x, k->line, 0, "statusHtml: expected the "
			    "path of a file, not '%s'", k->value);
		else
			c->status_html = xstrdup(k->value);
	}

	if ((k = cfg_get(x, s, "metricsFile")) != NULL) {
		size_t len = strlen(k->value);

		/* Likewise: written beside a temporary file. */
		if (len == 0 || k->value[len - 1] == '/')
			cfg_problem(x, k->line, 0, "metricsFile: expected the "
			    "path of a file, not '%s'", k->value);
		else
			c->metrics_file = xstrdup(k->value);
	}

	if ((k = cfg_get(x, s, "controlUrl")) != NULL) {
		char err[256];

		if (cfg_url_has_userinfo(k->value))
			cfg_problem(x, k->line, 0, "controlUrl must not hold a "
			    "user name or password (messages show the url)");
		else if (cfg_url_ok(k->value, err, sizeof(err)))
			c->control_url = xstrdup(k->value);
		else
			cfg_problem(x, k->line, 0, "bad controlUrl '%s': %s",
			    k->value, err);
	}

	cfg_hc_defaults(h);
	cfg_parse_hc(x, s, h);
	check_head_body(x, h, 0);
	check_locations(x, h, 0);
	/* Kept for what the top of the file checks itself (controlUrl). */
	cfg_hc_copy(&top, h);
	c->defaults = top.p;
}

/* Reads the file of a !file secret; NULL after reporting a problem. */
static char *
read_secret_file(struct ctx *x, const struct rkey *k, const char *canon,
    const char *file)
{
	char *path = NULL, *buf = NULL, *ret = NULL;
	const char *slash;
	size_t n = 0;
	FILE *fp = NULL;
	struct stat st;
	int len, fd;

	/* Relative to the configuration, not to wherever cron runs us. */
	slash = strrchr(x->path, '/');
	if (*file != '/' && slash != NULL) {
		len = (int)(slash - x->path);
		path = xmalloc((size_t)len + strlen(file) + 2);
		sprintf(path, "%.*s/%s", len, x->path, file);
	} else
		path = xstrdup(file);
	/* As for caFile: nothing but a regular file is opened. */
	if (stat(path, &st) == -1) {
		cfg_problem(x, k->line, 0, "'%s': !file %s: cannot read: %s",
		    canon, path, strerror(errno));
		goto out;
	}
	if (S_ISREG(st.st_mode)) {
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd != -1)
			fp = fdopen(fd, "r");
		if (fp == NULL) {
			cfg_problem(x, k->line, 0, "'%s': !file %s: cannot "
			    "read: %s", canon, path, strerror(errno));
			if (fd != -1)
				close(fd);
			goto out;
		}
	}
	/* fstat as well: it may have been replaced in between. */
	if (fp == NULL || fstat(fileno(fp), &st) == -1 ||
	    !S_ISREG(st.st_mode)) {
		cfg_problem(x, k->line, 0, "'%s': !file %s: not a regular "
		    "file", canon, path);
		goto out;
	}
	buf = xmalloc(SECRET_MAX + 1);
	n = fread(buf, 1, SECRET_MAX + 1, fp);
	if (ferror(fp)) {
		cfg_problem(x, k->line, 0, "'%s': !file %s: cannot read: %s",
		    canon, path, strerror(errno));
		goto out;
	}
	if (n > SECRET_MAX) {
		cfg_problem(x, k->line, 0, "'%s': !file %s: larger than %d "
		    "bytes", canon, path, SECRET_MAX);
		goto out;
	}
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	buf[n] = '\0';
	if (memchr(buf, '\0', n) != NULL)
		cfg_problem(x, k->line, 0, "'%s': !file %s: holds a NUL byte",
		    canon, path);
	else if (n == 0)
		cfg_problem(x, k->line, 0, "'%s': !file %s: is empty", canon,
		    path);
	else {
		ret = buf;
		buf = NULL;
	}
out:
	if (fp != NULL)
		fclose(fp);
	if (buf != NULL)
		explicit_bzero(buf, SECRET_MAX + 1);
	free(buf);
	free(path);
	return ret;
}

/* "!env NAME" / "!file PATH" prefix: the argument, else NULL. */
static const char *
directive(const char *v, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(v, word, n) != 0 ||
	    (v[n] != '\0' && !isspace((unsigned char)v[n])))
		return NULL;
	for (v += n; isspace((unsigned char)*v); v++)
		;
	return v;
}

/*
 * The value of key k, canonically canon, with !env and !file resolved
 * (secret 0: refused); *literal tells a value written in the file.
 * NULL after a problem.
 */
static char *
secret_text(struct ctx *x, const struct rkey *k, const char *canon,
    int secret, int *literal)
{
	const char *env, *file, *v;

	*literal = 0;
	env = directive(k->value, "!env");
	file = directive(k->value, "!file");
	if ((env != NULL || file != NULL) && !secret) {
		cfg_problem(x, k->line, 0, "'%s' is not a secret: !env and "
		    "!file work only for secrets", canon);
		return NULL;
	}
	if (env != NULL) {
		if (*env == '\0') {
			cfg_problem(x, k->line, 0, "'%s': !env needs a "
			    "variable name", canon);
			return NULL;
		}
		if ((v = getenv(env)) == NULL || *v == '\0') {
			cfg_problem(x, k->line, 0, "'%s': environment "
			    "variable %s is %s", canon, env,
			    v == NULL ? "not set" : "empty");
			return NULL;
		}
		return xstrdup(v);
	}
	if (file != NULL) {
		if (*file == '\0') {
			cfg_problem(x, k->line, 0, "'%s': !file needs a path",
			    canon);
			return NULL;
		}
		return read_secret_file(x, k, canon, file);
	}
	if (*k->value == '\0') {
		cfg_problem(x, k->line, 0, "'%s' has no value", canon);
		return NULL;
	}
	*literal = 1;
	return xstrdup(k->value);
}

/* The value of a provider key, secrets resolved; NULL after a problem. */
static char *
provider_value(struct ctx *x, const struct provider_cfg *pc,
    const struct rkey *k, const char *canon, int secret)
{
	char *v;
	int literal;

	if ((v = secret_text(x, k, canon, secret, &literal)) == NULL)
		return NULL;
	if (secret && literal && x->group_readable)
		cfg_problem(x, k->line, 1, "provider '%s': secret '%s' is "
		    "written in a file that group or others can read; use "
		    "!env or !file, or make the file private", pc->name, canon);
	return v;
}

/*
 * The value of key k (canon), secrets resolved; NULL after a problem.
 * owner names the section in the warning about a literal secret, as
 * "provider 'x'"; warn 0 earns no such warning.
 */
char *
cfg_value(struct ctx *x, const char *owner, const struct rkey *k,
    const char *canon, int secret, int warn)
{
	char *v;
	int literal;

	if ((v = secret_text(x, k, canon, secret, &literal)) == NULL)
		return NULL;
	if (secret && warn && literal && x->group_readable)
		cfg_problem(x, k->line, 1, "%s: secret '%s' is written in a "
		    "file that group or others can read; use !env or !file, "
		    "or make the file private", owner, canon);
	return v;
}

char *
cfg_dir(const struct ctx *x)
{
	const char *slash;
	char *dir;

	if ((slash = strrchr(x->path, '/')) == NULL)
		return xstrdup(".");
	if (slash == x->path)
		return xstrdup("/");
	dir = xmalloc((size_t)(slash - x->path) + 1);
	memcpy(dir, x->path, (size_t)(slash - x->path));
	dir[slash - x->path] = '\0';
	return dir;
}

static void
build_provider(struct ctx *x, const struct rsec *s, struct provider_cfg *pc)
{
	const struct provider_key *pk;
	const struct rkey *k, *type = NULL;
	const char *key, *w;
	char err[512], *v;
	size_t i;
	int nerr = x->nerr;

	pc->name = xstrdup(s->name);
	pc->line = s->line;
	/* Where an exec provider's program runs (SPEC 3.2.1). */
	pc->dir = cfg_dir(x);
	if (!cfg_text_ok(pc->name))
		cfg_problem(x, s->line, 0, "provider name '%s': a control "
		    "character or invalid UTF-8", pc->name);
	for (i = 0; i < s->nkeys; i++)
		if (strcasecmp(s->keys[i].key, "type") == 0)
			type = &s->keys[i];
	if (type == NULL) {
		cfg_problem(x, s->line, 0, "provider '%s': missing 'type' "
		    "(one of: %s)", pc->name, provider_types());
		return;
	}
	if ((pc->ops = provider_lookup(type->value)) == NULL) {
		cfg_problem(x, type->line, 0, "provider '%s': unknown type "
		    "'%s' (known: %s)", pc->name, type->value,
		    provider_types());
		return;
	}
	pc->kv = xcalloc(s->nkeys, sizeof(*pc->kv));
	for (i = 0; i < s->nkeys; i++) {
		k = &s->keys[i];
		if (k == type)
			continue;
		for (pk = pc->ops->keys; pk->name != NULL; pk++)
			if (strcasecmp(pk->name, k->key) == 0)
				break;
		if (pk->name == NULL) {
			cfg_problem(x, k->line, 0, "provider '%s': unknown "
			    "key '%s' for type %s", pc->name, k->key,
			    pc->ops->type);
			continue;
		}
		v = provider_value(x, pc, k, pk->name,
		    (pk->flags & PK_SECRET) != 0);
		if (v == NULL)
			continue;
		pc->kv[pc->nkv].key = xstrdup(pk->name);
		pc->kv[pc->nkv].value = v;
		pc->kv[pc->nkv].line = k->line;
		pc->kv[pc->nkv].secret = (pk->flags & PK_SECRET) != 0;
		pc->nkv++;
	}
	for (pk = pc->ops->keys; pk->name != NULL; pk++) {
		if ((pk->flags & PK_REQUIRED) == 0)
			continue;
		for (i = 0; i < s->nkeys; i++)
			if (strcasecmp(pk->name, s->keys[i].key) == 0)
				break;
		if (i == s->nkeys)
			cfg_problem(x, s->line, 0, "provider '%s': missing "
			    "'%s'", pc->name, pk->name);
	}
	if (x->nerr != nerr)
		return;
	key = NULL;
	err[0] = '\0';
	if (pc->ops->check(pc, &key, err, sizeof(err)) == -1)
		cfg_problem(x, provider_cfg_line(pc, key), 0, "provider '%s': "
		    "%s", pc->name, err[0] != '\0' ? err : "invalid settings");
	if (pc->ops->warning != NULL && (w = pc->ops->warning(pc)) != NULL)
		cfg_problem(x, s->line, 1, "provider '%s': %s", pc->name, w);
}

/* Lower-cases s in place and drops one trailing dot; 0 if not a DNS name. */
static int
dns_name(char *s, int trailing_dot)
{
	size_t len = strlen(s), label = 0;
	char *p;

	if (trailing_dot && len > 1 && s[len - 1] == '.')
		s[--len] = '\0';
	if (len == 0 || len > 253)
		return 0;
	for (p = s;; p++) {
		if (*p == '.' || *p == '\0') {
			if (label == 0 || label > 63)
				return 0;
			if (*p == '\0')
				return 1;
			label = 0;
			continue;
		}
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= '0' && *p <= '9') &&
		    *p != '-' && *p != '_')
			return 0;
		label++;
	}
}

/*
 * `host` is sent as Host header and TLS server name while libcurl
 * connects to the address of the url: a port, scheme or brackets here
 * would end up in the wrong place.
 */
static int
bare_host(const char *s)
{
	size_t len = strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._");

	return len > 0 && len <= 253 && s[len] == '\0';
}

/*
 * Whether url (http:// or https://) has a user name or password before
 * its host.  Read from the text, not from libcurl, so that a url that is
 * bad in other ways is caught too: the problem line quotes a bad url.
 */
int
cfg_url_has_userinfo(const char *v)
{
	const char *auth = strstr(v, "://");
	size_t n;

	if (auth == NULL)
		return 0;
	auth += 3;
	n = strcspn(auth, "/?#");
	return memchr(auth, '@', n) != NULL;
}

int
cfg_url_ok(const char *v, char *err, size_t len)
{
	CURLU *u;
	CURLUcode rc;
	char *host = NULL;
	int ok = 0;

	if (strncasecmp(v, "http://", 7) != 0 &&
	    strncasecmp(v, "https://", 8) != 0) {
		snprintf(err, len, "must start with http:// or https://");
		return 0;
	}
	/* The common case, without a parse that costs 100 times as much. */
	if (url_plain(v))
		return 1;
	if ((u = curl_url()) == NULL) {
		snprintf(err, len, "out of memory");
		return 0;
	}
	if ((rc = curl_url_set(u, CURLUPART_URL, v, 0)) != CURLUE_OK)
		snprintf(err, len, "%s", curl_url_strerror(rc));
	else if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    *host == '\0')
		snprintf(err, len, "no host");
	else
		ok = 1;
	curl_free(host);
	curl_url_cleanup(u);
	return ok;
}

/* Where loc comes in p's order of preference (struct endpoint_cfg). */
static long
location_rank(const struct domain_policy *p, const char *loc)
{
	size_t i;

	if (p->location == NULL)
		return 0;
	if (loc != NULL && strcasecmp(loc, p->location) == 0)
		return 0;
	for (i = 0; loc != NULL && i < p->nfailover; i++)
		if (strcasecmp(loc, p->failover[i]) == 0)
			return (long)i + 1;
	return (long)p->nfailover + 1;
}

/* The provider's name and type, for messages; NULL when it is unknown. */
static const struct provider_ops *
domain_ops(const struct domain_cfg *d)
{
	return d->provider != NULL ? d->provider->ops : NULL;
}

/* `cname`: instead of ip, only on a provider that can publish one. */
static void
build_cname(struct ctx *x, const struct rsec *s, const struct domain_cfg *d,
    struct endpoint_cfg *e, int *line)
{
	const struct provider_ops *ops = domain_ops(d);
	const struct rkey *k;
	char *t;

	if ((k = cfg_get(x, s, "cname")) == NULL)
		return;
	*line = k->line;
	if (cfg_has_key(s, "ip")) {
		cfg_problem(x, k->line, 0, "an endpoint has 'ip' or 'cname', "
		    "not both");
		return;
	}
	if (ops != NULL && (ops->caps & PCAP_CNAME) == 0) {
		cfg_problem(x, k->line, 0, "cname: provider '%s' (%s) cannot "
		    "publish a CNAME", d->provider->name, ops->type);
		return;
	}
	t = xstrdup(k->value);
	if (!dns_name(t, 1) || strchr(t, '.') == NULL) {
		cfg_problem(x, k->line, 0, "bad cname '%s': not a host name",
		    k->value);
		free(t);
	} else if (d->name != NULL && strcmp(t, d->name) == 0) {
		cfg_problem(x, k->line, 0, "cname %s is the domain itself", t);
		free(t);
	} else
		e->cname = t;
}

/* `proxied`: the endpoint's, else its provider's, where it has one. */
static void
build_proxied(struct ctx *x, const struct rsec *s, const struct domain_cfg *d,
    struct endpoint_cfg *e)
{
	const struct provider_ops *ops = domain_ops(d);
	const struct rkey *k;
	const char *v;

	if (ops != NULL && (ops->caps & PCAP_PROXIED) != 0 &&
	    (v = provider_cfg_get(d->provider, "proxied")) != NULL)
		(void)parse_bool(v, &e->proxied);	/* checked by the provider */
	if ((k = cfg_get(x, s, "proxied")) == NULL)
		return;
	if (ops != NULL && (ops->caps & PCAP_PROXIED) == 0)
		cfg_problem(x, k->line, 0, "proxied: provider '%s' (%s) has no "
		    "proxied records", d->provider->name, ops->type);
	else if (parse_bool(k->value, &e->proxied) == -1)
		cfg_problem(x, k->line, 0, "proxied: '%s' is not true or false",
		    k->value);
}

/* Endpoint s of domain d; ips and names: those of d so far, their lines. */
static void
build_endpoint(struct ctx *x, struct rsec *s, struct domain_cfg *d,
    struct nameset *ips, struct nameset *names)
{
	struct endpoint_cfg *e = &d->eps[d->neps];
	const struct rkey *k;
	char err[256], *host;
	int ipline, nameline, first;

	cfg_resolve_keys(x, s);
	e->line = s->line;
	ipline = nameline = s->line;
	if ((k = cfg_get(x, s, "url")) != NULL) {
		/*
		 * Logs, status and the state file show the url: refused
		 * as baseUrl is, and not quoted.
		 */
		if (cfg_url_has_userinfo(k->value))
			cfg_problem(x, k->line, 0, "url must not hold a user "
			    "name or password (logs and status show the url)");
		else if (!cfg_text_ok(k->value))
			cfg_problem(x, k->line, 0, "bad url '%s': a control "
			    "character or invalid UTF-8", k->value);
		else if (cfg_url_ok(k->value, err, sizeof(err)))
			e->url = xstrdup(k->value);
		else
			cfg_problem(x, k->line, 0, "bad url '%s': %s", k->value,
			    err);
	} else if (!cfg_has_key(s, "url"))
		cfg_problem(x, s->line, 0, "[endpoint] has no 'url'");
	if ((k = cfg_get(x, s, "ip")) != NULL) {
		ipline = k->line;
		if (addr_parse(k->value, &e->ip) == -1)
			cfg_problem(x, k->line, 0, "bad IP address '%s'",
			    k->value);
	}
	build_cname(x, s, d, e, &ipline);
	if (!cfg_has_key(s, "ip") && !cfg_has_key(s, "cname"))
		cfg_problem(x, s->line, 0, "[endpoint] has no 'ip'");
	build_proxied(x, s, d, e);
	if ((k = cfg_get(x, s, "host")) != NULL && !bare_host(k->value))
		cfg_problem(x, k->line, 0, "host must be a host name without "
		    "port");
	else if (k != NULL) {
		host = xstrdup(k->value);
		if (dns_name(host, 0))
			e->host = host;
		else {
			cfg_problem(x, k->line, 0, "bad host name '%s'",
			    k->value);
			free(host);
		}
	}
	if ((k = cfg_get(x, s, "priority")) != NULL)
		cfg_get_long(x, k, 0, 2147483647, &e->priority);
	if ((k = cfg_get(x, s, "location")) != NULL) {
		if (cfg_location_ok(k->value))
			e->location = xstrdup(k->value);
		else
			cfg_problem(x, k->line, 0, "bad location '%s' (letters, "
			    "digits, '-', '_' and '.')", k->value);
	}
	e->rank = location_rank(&d->pol, e->location);
	if ((k = cfg_get(x, s, "name")) != NULL) {
		e->name = xstrdup(k->value);
		nameline = k->line;
	} else if (s->name != NULL)
		e->name = xstrdup(s->name);
	else if (e->url != NULL)
		e->name = e->url;	/* one string: see config_free() */
	if (e->name != NULL && !cfg_text_ok(e->name))
		cfg_problem(x, nameline, 0, "endpoint name '%s': a control "
		    "character or invalid UTF-8", e->name);

	/* Canonical text: one address, one spelling. */
	if (e->ip.family != 0 &&
	    (first = cfg_nameset_add(ips, e->ip.s, e->line)) != 0)
		cfg_problem(x, ipline, 0, "ip %s is also the ip of the "
		    "endpoint at line %d", e->ip.s, first);
	if (e->cname != NULL &&
	    (first = cfg_nameset_add(ips, e->cname, e->line)) != 0)
		cfg_problem(x, ipline, 0, "cname %s is also the cname of the "
		    "endpoint at line %d", e->cname, first);
	if (e->name != NULL &&
	    (first = cfg_nameset_add(names, e->name, e->line)) != 0)
		cfg_problem(x, nameline, 0, "endpoint name '%s' is also the "
		    "name of the endpoint at line %d", e->name, first);
	if (e->ip.family == 4)
		d->has4 = 1;
	else if (e->ip.family == 6)
		d->has6 = 1;
	else if (e->cname != NULL)
		d->hascname = 1;
	d->neps++;
}

/* An endpoint's tier (priority, then rank) and its place in the domain. */
struct tier_key {
	long	 priority;
	long	 rank;
	size_t	 i;
};

static int
tier_cmp(const void *a, const void *b)
{
	const struct tier_key *p = a, *q = b;

	if (p->priority != q->priority)
		return p->priority < q->priority ? -1 : 1;
	if (p->rank != q->rank)
		return p->rank < q->rank ? -1 : 1;
	return p->i < q->i ? -1 : p->i > q->i;
}

/*
 * SPEC 3.4: a CNAME may not share its name with other records, so a
 * cname endpoint is alone in its tier; and one tier is either proxied or
 * not, as its records are published together.  Each endpoint is
 * reported against the first endpoint before it in its tier that
 * clashes with it.  The endpoints are sorted by tier rather than each
 * compared with those before it: a domain may have 100,000.
 */
static void
check_tiers(struct ctx *x, const struct domain_cfg *d)
{
	const size_t none = (size_t)-1;
	const struct endpoint_cfg *e, *f;
	struct tier_key *t;
	size_t *clash, i, j, start, cname, prox[2], other;

	if (d->neps < 2)
		return;
	t = xcalloc(d->neps, sizeof(*t));
	clash = xcalloc(d->neps, sizeof(*clash));
	for (i = 0; i < d->neps; i++) {
		t[i].priority = d->eps[i].priority;
		t[i].rank = d->eps[i].rank;
		t[i].i = i;
	}
	qsort(t, d->neps, sizeof(*t), tier_cmp);
	for (start = 0; start < d->neps; start = j) {
		/* The first of the tier so far: a cname, each proxied value. */
		cname = prox[0] = prox[1] = none;
		for (j = start; j < d->neps && t[j].priority ==
		    t[start].priority && t[j].rank == t[start].rank; j++) {
			e = &d->eps[t[j].i];
			if (e->cname != NULL)
				clash[t[j].i] = j > start ? t[start].i : none;
			else {
				other = prox[e->proxied == 0];
				clash[t[j].i] = cname < other ? cname : other;
			}
			if (e->cname != NULL && cname == none)
				cname = t[j].i;
			if (prox[e->proxied != 0] == none)
				prox[e->proxied != 0] = t[j].i;
		}
	}
	for (i = 0; i < d->neps; i++) {
		if (clash[i] == none)
			continue;
		e = &d->eps[i];
		f = &d->eps[clash[i]];
		if (e->cname != NULL || f->cname != NULL)
			cfg_problem(x, e->line, 0, "endpoint '%s': a cname "
			    "endpoint must be alone in its priority, and "
			    "endpoint '%s' at line %d has priority %ld too",
			    e->name != NULL ? e->name : "", f->name != NULL ?
			    f->name : "", f->line, e->priority);
		else
			cfg_problem(x, e->line, 0, "endpoint '%s': proxied "
			    "differs from endpoint '%s' at line %d of the same "
			    "priority %ld (its records are published together)",
			    e->name != NULL ? e->name : "", f->name != NULL ?
			    f->name : "", f->line, e->priority);
	}
	free(clash);
	free(t);
}

/* The domain of section idx; seen: the names of the domains so far. */
/*
 * The domain's TTL must be one its provider's API accepts; line is that
 * of the ttl key (0: inherited from the defaults, or the default).
 */
static void
check_ttl(struct ctx *x, const struct domain_cfg *d, int line)
{
	const struct provider_ops *ops = d->provider->ops;
	long ttl = d->pol.ttl, min = ops->ttl_min;

	if (ops->ttl_min_of != NULL)
		min = ops->ttl_min_of(d->provider);
	if ((ttl >= min && ttl <= ops->ttl_max) ||
	    (ttl == 1 && (ops->caps & PCAP_TTL_AUTO) != 0))
		return;
	cfg_problem(x, line != 0 ? line : d->line, 0, "domain %s: ttl %ld is "
	    "outside what provider '%s' (%s) accepts: %ld..%ld%s", d->name,
	    ttl, d->provider->name, ops->type, min, ops->ttl_max,
	    (ops->caps & PCAP_TTL_AUTO) != 0 ? ", or 1 for automatic" : "");
}

static void
build_domain(struct ctx *x, size_t idx, const struct hc *defaults,
    struct nameset *seen)
{
	struct config *c = x->c;
	struct rsec *s = &x->secs[idx];
	struct domain_cfg *d = &c->domains[c->ndomains];
	const struct rkey *k;
	const char *zone;
	char *z;
	struct hc h;
	struct nameset ips, names;
	int good, warnline, first, j;
	size_t i, n, end, zl, dl;

	cfg_resolve_keys(x, s);
	d->line = s->line;
	d->name = xstrdup(s->name);
	if (!(good = dns_name(d->name, 1)))
		cfg_problem(x, s->line, 0, "bad domain name '%s'", s->name);
	if (good && (first = cfg_nameset_add(seen, d->name, d->line)) != 0)
		cfg_problem(x, s->line, 0, "domain %s defined twice (first at "
		    "line %d)", d->name, first);
	c->ndomains++;

	cfg_hc_copy(&h, defaults);
	cfg_parse_hc(x, s, &h);
	check_head_body(x, &h, d->line);
	check_locations(x, &h, d->line);
	d->pol = h.p;		/* the domain owns the strings now */

	if ((k = cfg_get(x, s, "provider")) != NULL) {
		if ((j = cfg_nameset_get(&x->provset, k->value)) != 0)
			d->provider = &c->providers[j - 1];
		else
			cfg_problem(x, k->line, 0, "domain %s: unknown "
			    "provider '%s'", d->name, k->value);
	} else if (!cfg_has_key(s, "provider"))
		cfg_problem(x, s->line, 0, "domain %s: missing 'provider'",
		    d->name);
	if (good && d->provider != NULL && d->provider->ops != NULL &&
	    d->provider->ops->zone_key != NULL && (zone =
	    provider_cfg_get(d->provider, d->provider->ops->zone_key)) !=
	    NULL) {
		z = xstrdup(zone);
		(void)dns_name(z, 1);
		zl = strlen(z);
		dl = strlen(d->name);
		if (strcmp(d->name, z) != 0 && (dl <= zl ||
		    strcmp(d->name + dl - zl, z) != 0 ||
		    d->name[dl - zl - 1] != '.'))
			cfg_problem(x, k->line, 0, "domain %s is not in zone "
			    "%s of provider '%s'", d->name, z,
			    d->provider->name);
		free(z);
	}
	if (d->provider != NULL && d->provider->ops != NULL)
		check_ttl(x, d, cfg_hc_line(&h, "ttl"));
	if (d->pol.timeout_ms >= c->interval_ms) {
		warnline = cfg_hc_line(&h, "timeout");
		if (warnline == 0)
			warnline = d->line;
		cfg_problem(x, warnline, 1, "domain %s: timeout (%lld ms) is "
		    "not below interval (%lld ms)", d->name, d->pol.timeout_ms,
		    c->interval_ms);
	}

	/* Its endpoints are the sections up to the next domain. */
	for (n = 0, end = idx + 1; end < x->nsecs &&
	    x->secs[end].kind != S_DOMAIN; end++)
		if (x->secs[end].kind == S_ENDPOINT &&
		    x->secs[end].domain == (int)idx)
			n++;
	if (n == 0) {
		cfg_problem(x, s->line, 0, "domain %s has no [endpoint]",
		    d->name);
		return;
	}
	d->eps = xcalloc(n, sizeof(*d->eps));
	cfg_nameset_init(&ips, n);
	cfg_nameset_init(&names, n);
	for (i = idx + 1; i < end; i++)
		if (x->secs[i].kind == S_ENDPOINT &&
		    x->secs[i].domain == (int)idx)
			build_endpoint(x, &x->secs[i], d, &ips, &names);
	check_tiers(x, d);
	cfg_nameset_free(&ips);
	cfg_nameset_free(&names);
}

/* "3m20s", "2.500s": a duration in a warning. */
static void
fmt_secs(long long ms, char *buf, size_t len)
{
	if (ms >= 60000 && ms % 1000 == 0)
		snprintf(buf, len, "%lldm%llds", ms / 60000, ms / 1000 % 60);
	else if (ms % 1000 == 0)
		snprintf(buf, len, "%llds", ms / 1000);
	else
		snprintf(buf, len, "%lld.%03llds", ms / 1000, ms % 1000);
}

/*
 * A run whose checks all time out takes ceil(checks / maxParallel)
 * rounds of the longest timeout, after the controlUrl's check, and then
 * the providers' own timeouts: when that is longer than interval, the
 * runs overlap (the next one finds the lock taken) and failover comes
 * later than --status says.  A warning, for -n: a slow but valid setup.
 * A domain whose timeout alone is not below interval was warned of.
 */
static void
check_run_length(struct ctx *x)
{
	const struct config *c = x->c;
	const struct rkey *k;
	long long tmo = 0, prov = 0, ctl, ms, worst;
	size_t i, n = 0, rounds;
	const char *v;
	char a[32], b[32], d[32], more[96] = "";
	int line = 0;

	for (i = 0; i < c->ndomains; i++) {
		n += c->domains[i].neps;
		if (c->domains[i].pol.timeout_ms > tmo)
			tmo = c->domains[i].pol.timeout_ms;
		v = provider_cfg_get(c->domains[i].provider, "timeout");
		if (v != NULL && parse_duration(v, &ms) == 0 && ms > prov &&
		    ms <= DURATION_MAX_MS)
			prov = ms;
	}
	if (n == 0 || c->max_parallel <= 0 || tmo >= c->interval_ms)
		return;
	rounds = (n + (size_t)c->max_parallel - 1) / (size_t)c->max_parallel;
	ctl = c->control_url != NULL ? c->defaults.timeout_ms : 0;
	/*
	 * Every duration is at most ten years and there are fewer checks
	 * than bytes in the file: no sum or product here can overflow.
	 */
	worst = ctl + (long long)rounds * tmo + prov;
	if (worst <= c->interval_ms)
		return;
	if (ctl > 0) {
		fmt_secs(ctl, a, sizeof(a));
		snprintf(more, sizeof(more), " + controlUrl %s", a);
	}
	if (prov > 0) {
		fmt_secs(prov, a, sizeof(a));
		snprintf(more + strlen(more), sizeof(more) - strlen(more),
		    " + provider %s", a);
	}
	if ((k = cfg_get(x, &x->secs[0], "maxParallel")) != NULL)
		line = k->line;
	fmt_secs(worst, a, sizeof(a));
	fmt_secs(tmo, b, sizeof(b));
	fmt_secs(c->interval_ms, d, sizeof(d));
	cfg_problem(x, line, 1, "a run can take %s when every check times out "
	    "(%zu checks, maxParallel %ld: %zu x timeout %s%s), longer than "
	    "interval (%s)", a, n, c->max_parallel, rounds, b, more, d);
}

void
cfg_build(struct ctx *x)
{
	struct config *c = x->c;
	struct nameset domains;
	struct hc defaults;
	size_t i, np = 0, nd = 0;
	int first;

	check_top(x, &x->secs[0], &defaults);
	for (i = 0; i < x->nsecs; i++) {
		np += x->secs[i].kind == S_PROVIDER;
		nd += x->secs[i].kind == S_DOMAIN;
	}
	/* Domains point into this array: it is sized once, never moved. */
	c->providers = xcalloc(np, sizeof(*c->providers));
	for (i = 0; i < x->nsecs; i++) {
		if (x->secs[i].kind != S_PROVIDER)
			continue;
		if ((first = cfg_nameset_add(&x->provset, x->secs[i].name,
		    (int)c->nproviders + 1)) != 0) {
			cfg_problem(x, x->secs[i].line, 0, "provider '%s' "
			    "defined twice (first at line %d)", x->secs[i].name,
			    c->providers[first - 1].line);
			continue;
		}
		build_provider(x, &x->secs[i], &c->providers[c->nproviders++]);
	}
	cfg_build_notify(x);
	if (nd == 0) {
		cfg_problem(x, 0, 0, "no [domain] section");
		goto out;
	}
	c->domains = xcalloc(nd, sizeof(*c->domains));
	cfg_nameset_init(&domains, nd);
	for (i = 0; i < x->nsecs; i++)
		if (x->secs[i].kind == S_DOMAIN)
			build_domain(x, i, &defaults, &domains);
	cfg_nameset_free(&domains);
	if (x->nerr == 0)
		check_run_length(x);
out:
	cfg_policy_free(&defaults.p);
}
