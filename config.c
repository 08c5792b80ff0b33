/*
 * The configuration file (SPEC section 3).
 *
 * Reading happens in two passes.  inih splits the file into sections and
 * key/value pairs, which are only collected, as written; then the whole
 * collection is checked and turned into struct config, so that every
 * problem of the file is reported in one go, sorted by line.
 *
 * Debian builds inih with INI_MAX_LINE 200, multi-line values and no line
 * numbers for the handler.  So inih reads the file through our own line
 * reader, which counts lines, keeps the current section itself (inih cuts
 * section names at 49 characters), and hands inih an empty line in place
 * of any line inih would misread: too long (cut), indented (joined to the
 * previous value) or malformed.
 */

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>
#include <ini.h>

#include "config.h"
#include "provider.h"
#include "util.h"

#define SECRET_MAX	65536		/* bytes read from a !file secret */

enum kind { S_TOP, S_PROVIDER, S_DOMAIN, S_ENDPOINT, S_SKIP };

/* A key as written; canon is set once the key is known for its section. */
struct rkey {
	char		*key;
	const char	*canon;
	char		*value;
	int		 line;
};

struct rsec {
	enum kind	 kind;
	char		*name;		/* NULL: none */
	int		 line;
	int		 domain;	/* endpoints: index of their [domain] */
	struct rkey	*keys;
	size_t		 nkeys;
};

struct msg {
	int		 line;		/* 0: the file as a whole */
	size_t		 seq;		/* keeps the order of one line's messages */
	int		 warn;
	char		*text;
};

/* Health-check settings: built-in defaults, then top level, then domain. */
struct hc {
	long		 ttl;
	long long	 timeout_ms;
	long		 attempts;
	long		 recover_after;
	int		 head;
	struct expect	 expect;
	const char	*body;
	int		 timeout_line;	/* 0: built-in default */
};

struct ctx {
	const char	*path;
	FILE		*fp;
	char		*buf;
	size_t		 bufsz;
	int		 lineno;
	int		 read_errno;
	int		 group_readable;
	struct rsec	*secs;
	size_t		 nsecs;
	size_t		 cur;
	int		 lastdomain;	/* -1: none yet, -2: a broken one */
	struct msg	*msgs;
	size_t		 nmsgs;
	int		 nerr;
	int		 interval_line;
	struct config	*c;
};

#define W_TOP		0x01
#define W_DOMAIN	0x02
#define W_ENDPOINT	0x04
#define W_NOTYET	0x08		/* in SPEC, not in this version */

static const struct {
	const char	*name;
	int		 where;
} keytab[] = {
	{ "interval", W_TOP },
	{ "state", W_TOP },
	{ "maxParallel", W_TOP },
	{ "caFile", W_TOP },
	{ "logFormat", W_TOP },
	{ "history", W_TOP },
	{ "provider", W_DOMAIN },
	{ "ttl", W_TOP | W_DOMAIN },
	{ "timeout", W_TOP | W_DOMAIN },
	{ "attempts", W_TOP | W_DOMAIN },
	{ "recoverAfter", W_TOP | W_DOMAIN },
	{ "method", W_TOP | W_DOMAIN },
	{ "expectStatus", W_TOP | W_DOMAIN },
	{ "expectBody", W_TOP | W_DOMAIN },
	{ "url", W_ENDPOINT },
	{ "ip", W_ENDPOINT },
	{ "host", W_ENDPOINT },
	{ "priority", W_ENDPOINT },
	{ "name", W_ENDPOINT },
	{ "statusHtml", W_NOTYET },
	{ "metricsFile", W_NOTYET },
	{ "cname", W_NOTYET },
	{ "proxied", W_NOTYET },
	{ "location", W_NOTYET },
	{ "failoverLocations", W_NOTYET },
	{ "failback", W_NOTYET },
	{ "publish", W_NOTYET },
	{ "minHealthy", W_NOTYET },
	{ "controlUrl", W_NOTYET },
};

static void	 problem(struct ctx *, int, int, const char *, ...)
		    __attribute__((format(printf, 4, 5)));

static void
problem(struct ctx *x, int line, int warn, const char *fmt, ...)
{
	char buf[1024], *p;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* Binary junk in a file must not reach a terminal as is. */
	for (p = buf; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	x->msgs = xrealloc(x->msgs, (x->nmsgs + 1) * sizeof(*x->msgs));
	x->msgs[x->nmsgs].line = line;
	x->msgs[x->nmsgs].seq = x->nmsgs;
	x->msgs[x->nmsgs].warn = warn;
	x->msgs[x->nmsgs].text = xstrdup(buf);
	x->nmsgs++;
	if (!warn)
		x->nerr++;
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
add_section(struct ctx *x, enum kind kind, const char *name, int line)
{
	struct rsec *s;

	x->secs = xrealloc(x->secs, (x->nsecs + 1) * sizeof(*x->secs));
	s = &x->secs[x->nsecs];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->name = name != NULL && *name != '\0' ? xstrdup(name) : NULL;
	s->line = line;
	s->domain = -1;
	x->cur = x->nsecs++;
}

/* A "[kind name]" header; text is what inih keeps between the brackets. */
static void
new_section(struct ctx *x, const char *text, size_t len)
{
	char *copy, *kind, *name, *end;
	enum kind k = S_SKIP;

	copy = xmalloc(len + 1);
	memcpy(copy, text, len);
	copy[len] = '\0';
	for (kind = copy; isspace((unsigned char)*kind); kind++)
		;
	for (name = kind; *name != '\0' && !isspace((unsigned char)*name);
	    name++)
		;
	if (*name != '\0')
		*name++ = '\0';
	while (isspace((unsigned char)*name))
		name++;
	for (end = name + strlen(name); end > name &&
	    isspace((unsigned char)end[-1]); end--)
		end[-1] = '\0';

	if (strcasecmp(kind, "provider") == 0 || strcasecmp(kind, "domain") == 0) {
		k = tolower((unsigned char)*kind) == 'p' ? S_PROVIDER : S_DOMAIN;
		if (*name == '\0') {
			problem(x, x->lineno, 0, "[%s] needs a name: [%s NAME]",
			    k == S_DOMAIN ? "domain" : "provider",
			    k == S_DOMAIN ? "domain" : "provider");
			k = S_SKIP;
		}
		if (k == S_DOMAIN)
			x->lastdomain = (int)x->nsecs;
		else if (tolower((unsigned char)*kind) == 'd')
			x->lastdomain = -2;
	} else if (strcasecmp(kind, "endpoint") == 0) {
		if (x->lastdomain == -1)
			problem(x, x->lineno, 0, "[endpoint] before any [domain]: "
			    "an endpoint belongs to the [domain] above it");
		else if (x->lastdomain >= 0)
			k = S_ENDPOINT;
	} else if (strcasecmp(kind, "notify") == 0)
		problem(x, x->lineno, 0, "[notify] sections are not supported "
		    "by this version of ddup-check");
	else if (*kind == '\0')
		problem(x, x->lineno, 0, "empty section header");
	else
		problem(x, x->lineno, 0, "unknown section kind '%s' (expected "
		    "provider, domain or endpoint)", kind);
	add_section(x, k, name, x->lineno);
	if (k == S_ENDPOINT)
		x->secs[x->cur].domain = x->lastdomain;
	free(copy);
}

/* inih's own scan: up to one of chars, or a ';' comment after white space. */
static const char *
find_chars_or_comment(const char *s, const char *chars)
{
	int was_space = 0;

	while (*s != '\0' && strchr(chars, *s) == NULL &&
	    !(was_space && *s == ';')) {
		was_space = isspace((unsigned char)*s);
		s++;
	}
	return s;
}

/* Whether inih may see line s (already checked for length). */
static int
line_ok(struct ctx *x, const char *s)
{
	const char *t, *end;

	for (t = s; isspace((unsigned char)*t); t++)
		;
	if (*t == '\0' || *t == ';' || *t == '#')
		return 1;
	if (t != s) {
		problem(x, x->lineno, 0, "indented line: inih would join it "
		    "to the previous value; remove the indentation");
		return 0;
	}
	if (*t == '[') {
		end = find_chars_or_comment(t + 1, "]");
		if (*end != ']') {
			problem(x, x->lineno, 0, "section header without ']'");
			add_section(x, S_SKIP, NULL, x->lineno);
			return 0;
		}
		new_section(x, t + 1, (size_t)(end - t - 1));
		for (end++; isspace((unsigned char)*end); end++)
			;
		if (*end != '\0' && *end != ';' && *end != '#')
			problem(x, x->lineno, 0, "text after ']'");
		return 1;
	}
	end = find_chars_or_comment(t, "=:");
	if (*end != '=' && *end != ':') {
		problem(x, x->lineno, 0, "expected 'key = value'");
		return 0;
	}
	return 1;
}

static char *
reader(char *str, int num, void *stream)
{
	struct ctx *x = stream;
	ssize_t n;
	size_t len, max = (size_t)num - 2;
	char *s;

	errno = 0;
	n = getline(&x->buf, &x->bufsz, x->fp);
	if (n == -1) {
		if (ferror(x->fp))
			x->read_errno = errno != 0 ? errno : EIO;
		return NULL;
	}
	x->lineno++;
	s = x->buf;
	len = (size_t)n;
	if (len > 0 && s[len - 1] == '\n')
		s[--len] = '\0';
	if (len > 0 && s[len - 1] == '\r')
		s[--len] = '\0';
	if (x->lineno == 1 && len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
		s += 3;
		len -= 3;
	}
	strcpy(str, "\n");
	if (memchr(s, '\0', len) != NULL)
		problem(x, x->lineno, 0, "NUL byte in line");
	else if (len > max)
		problem(x, x->lineno, 0, "line too long (at most %zu "
		    "characters)", max);
	else if (line_ok(x, s)) {
		memcpy(str, s, len);
		strcpy(str + len, "\n");
	}
	return str;
}

static int
handler(void *user, const char *section, const char *name, const char *value)
{
	struct ctx *x = user;
	struct rsec *s = &x->secs[x->cur];
	struct rkey *k;
	size_t i;

	(void)section;		/* ours is not cut short */
	if (s->kind == S_SKIP)
		return 1;
	if (*name == '\0') {
		problem(x, x->lineno, 0, "missing key name before '='");
		return 1;
	}
	for (i = 0; i < s->nkeys; i++) {
		if (strcasecmp(s->keys[i].key, name) == 0) {
			problem(x, x->lineno, 0, "'%s' given twice in one "
			    "section (first at line %d)", name, s->keys[i].line);
			return 1;
		}
	}
	s->keys = xrealloc(s->keys, (s->nkeys + 1) * sizeof(*s->keys));
	k = &s->keys[s->nkeys++];
	k->key = xstrdup(name);
	k->canon = NULL;
	k->value = xstrdup(value);
	k->line = x->lineno;
	return 1;
}

static const char *
where_text(int where)
{
	if (where == W_TOP)
		return "at the top of the file";
	if (where == W_ENDPOINT)
		return "in [endpoint]";
	if (where == W_DOMAIN)
		return "in [domain]";
	return "in [domain] or at the top of the file";
}

/* Sets canon of every key of a top, domain or endpoint section. */
static void
resolve_keys(struct ctx *x, struct rsec *s)
{
	static const char *const kname[] = { "at the top of the file",
	    "in [provider]", "in [domain]", "in [endpoint]", "" };
	static const int kwhere[] = { W_TOP, 0, W_DOMAIN, W_ENDPOINT, 0 };
	struct rkey *k;
	size_t i, j;

	for (i = 0; i < s->nkeys; i++) {
		k = &s->keys[i];
		for (j = 0; j < sizeof(keytab) / sizeof(keytab[0]); j++)
			if (strcasecmp(keytab[j].name, k->key) == 0)
				break;
		if (j == sizeof(keytab) / sizeof(keytab[0]))
			problem(x, k->line, 0, "unknown key '%s' %s",
			    k->key, kname[s->kind]);
		else if (keytab[j].where == W_NOTYET)
			problem(x, k->line, 0, "'%s' is not supported by this "
			    "version of ddup-check", keytab[j].name);
		else if ((keytab[j].where & kwhere[s->kind]) == 0)
			problem(x, k->line, 0, "'%s' cannot be used %s "
			    "(it belongs %s)", keytab[j].name, kname[s->kind],
			    where_text(keytab[j].where));
		else
			k->canon = keytab[j].name;
	}
}

/* A known key's value, or NULL; an empty value is reported here. */
static const struct rkey *
get(struct ctx *x, const struct rsec *s, const char *canon)
{
	size_t i;

	for (i = 0; i < s->nkeys; i++) {
		if (s->keys[i].canon != NULL &&
		    strcmp(s->keys[i].canon, canon) == 0) {
			if (s->keys[i].value[0] == '\0') {
				problem(x, s->keys[i].line, 0, "'%s' has no "
				    "value", canon);
				return NULL;
			}
			return &s->keys[i];
		}
	}
	return NULL;
}

static int
has_key(const struct rsec *s, const char *canon)
{
	size_t i;

	for (i = 0; i < s->nkeys; i++)
		if (s->keys[i].canon != NULL &&
		    strcmp(s->keys[i].canon, canon) == 0)
			return 1;
	return 0;
}

static void
get_long(struct ctx *x, const struct rkey *k, long min, long max, long *out)
{
	if (parse_long(k->value, min, max, out) == -1)
		problem(x, k->line, 0, "'%s': expected an integer from %ld to "
		    "%ld, not '%s'", k->canon, min, max, k->value);
}

static int
get_duration(struct ctx *x, const struct rkey *k, long long *out)
{
	long long ms;

	if (parse_duration(k->value, &ms) == -1 || ms <= 0) {
		problem(x, k->line, 0, "'%s': expected a duration above zero "
		    "(such as 500ms, 30s, 5m, 1h or 7d), not '%s'", k->canon,
		    k->value);
		return -1;
	}
	*out = ms;
	return 0;
}

/* The health-check keys of section s, over what h holds already. */
static void
parse_hc(struct ctx *x, const struct rsec *s, struct hc *h)
{
	const struct rkey *k;

	if ((k = get(x, s, "ttl")) != NULL)
		get_long(x, k, 1, 2147483647, &h->ttl);
	if ((k = get(x, s, "timeout")) != NULL &&
	    get_duration(x, k, &h->timeout_ms) == 0)
		h->timeout_line = k->line;
	if ((k = get(x, s, "attempts")) != NULL)
		get_long(x, k, 1, 2147483647, &h->attempts);
	if ((k = get(x, s, "recoverAfter")) != NULL)
		get_long(x, k, 1, 2147483647, &h->recover_after);
	if ((k = get(x, s, "method")) != NULL) {
		if (strcasecmp(k->value, "GET") == 0)
			h->head = 0;
		else if (strcasecmp(k->value, "HEAD") == 0)
			h->head = 1;
		else
			problem(x, k->line, 0, "'method': expected GET or HEAD, "
			    "not '%s'", k->value);
	}
	if ((k = get(x, s, "expectStatus")) != NULL &&
	    parse_expect(k->value, &h->expect) == -1)
		problem(x, k->line, 0, "'expectStatus': expected a status code "
		    "(100-599), a class such as 2xx, or a list of them, not "
		    "'%s'", k->value);
	if ((k = get(x, s, "expectBody")) != NULL)
		h->body = k->value;
}

static void
check_top(struct ctx *x, struct rsec *s, struct hc *h)
{
	struct config *c = x->c;
	const struct rkey *k;
	struct stat st;
	int fd;

	resolve_keys(x, s);
	c->interval_ms = 30 * 1000LL;
	c->max_parallel = 256;
	c->history_ms = 7 * 86400 * 1000LL;
	if ((k = get(x, s, "interval")) != NULL &&
	    get_duration(x, k, &c->interval_ms) == 0)
		x->interval_line = k->line;
	if ((k = get(x, s, "history")) != NULL)
		(void)get_duration(x, k, &c->history_ms);
	if ((k = get(x, s, "maxParallel")) != NULL)
		get_long(x, k, 1, 2147483647, &c->max_parallel);
	c->state = xstrdup((k = get(x, s, "state")) != NULL ? k->value :
	    "/var/lib/ddup/ddup.db");
	if ((k = get(x, s, "logFormat")) != NULL) {
		if (strcasecmp(k->value, "json") == 0)
			c->log_json = 1;
		else if (strcasecmp(k->value, "text") != 0)
			problem(x, k->line, 0, "'logFormat': expected text or "
			    "json, not '%s'", k->value);
	}
	if ((k = get(x, s, "caFile")) != NULL) {
		/* Non-blocking, so that a FIFO cannot hang the check. */
		fd = open(k->value, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd == -1)
			problem(x, k->line, 0, "caFile %s: cannot read: %s",
			    k->value, strerror(errno));
		else if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode))
			problem(x, k->line, 0, "caFile %s: not a regular file",
			    k->value);
		else
			c->ca_file = xstrdup(k->value);
		if (fd != -1)
			close(fd);
	}

	h->ttl = 120;
	h->timeout_ms = 3000;
	h->attempts = 2;
	h->recover_after = 1;
	h->head = 0;
	h->expect.n = 1;
	h->expect.r[0].lo = 200;
	h->expect.r[0].hi = 299;
	h->body = NULL;
	h->timeout_line = 0;
	parse_hc(x, s, h);
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
	int len;

	/* Relative to the configuration, not to wherever cron runs us. */
	slash = strrchr(x->path, '/');
	if (*file != '/' && slash != NULL) {
		len = (int)(slash - x->path);
		path = xmalloc((size_t)len + strlen(file) + 2);
		sprintf(path, "%.*s/%s", len, x->path, file);
	} else
		path = xstrdup(file);
	if ((fp = fopen(path, "r")) == NULL) {
		problem(x, k->line, 0, "'%s': !file %s: cannot read: %s",
		    canon, path, strerror(errno));
		goto out;
	}
	if (fstat(fileno(fp), &st) == -1 || !S_ISREG(st.st_mode)) {
		problem(x, k->line, 0, "'%s': !file %s: not a regular file",
		    canon, path);
		goto out;
	}
	buf = xmalloc(SECRET_MAX + 1);
	n = fread(buf, 1, SECRET_MAX + 1, fp);
	if (ferror(fp)) {
		problem(x, k->line, 0, "'%s': !file %s: cannot read: %s",
		    canon, path, strerror(errno));
		goto out;
	}
	if (n > SECRET_MAX) {
		problem(x, k->line, 0, "'%s': !file %s: larger than %d bytes",
		    canon, path, SECRET_MAX);
		goto out;
	}
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	buf[n] = '\0';
	if (memchr(buf, '\0', n) != NULL)
		problem(x, k->line, 0, "'%s': !file %s: holds a NUL byte",
		    canon, path);
	else if (n == 0)
		problem(x, k->line, 0, "'%s': !file %s: is empty", canon, path);
	else {
		ret = buf;
		buf = NULL;
	}
out:
	if (fp != NULL)
		fclose(fp);
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

/* The value of a provider key, secrets resolved; NULL after a problem. */
static char *
provider_value(struct ctx *x, const struct provider_cfg *pc,
    const struct rkey *k, const char *canon, int secret)
{
	const char *env, *file, *v;

	env = directive(k->value, "!env");
	file = directive(k->value, "!file");
	if ((env != NULL || file != NULL) && !secret) {
		problem(x, k->line, 0, "'%s' is not a secret: !env and !file "
		    "work only for secrets", canon);
		return NULL;
	}
	if (env != NULL) {
		if (*env == '\0') {
			problem(x, k->line, 0, "'%s': !env needs a variable "
			    "name", canon);
			return NULL;
		}
		if ((v = getenv(env)) == NULL || *v == '\0') {
			problem(x, k->line, 0, "'%s': environment variable %s "
			    "is %s", canon, env, v == NULL ? "not set" : "empty");
			return NULL;
		}
		return xstrdup(v);
	}
	if (file != NULL) {
		if (*file == '\0') {
			problem(x, k->line, 0, "'%s': !file needs a path", canon);
			return NULL;
		}
		return read_secret_file(x, k, canon, file);
	}
	if (*k->value == '\0') {
		problem(x, k->line, 0, "'%s' has no value", canon);
		return NULL;
	}
	if (secret && x->group_readable)
		problem(x, k->line, 1, "provider '%s': secret '%s' is written "
		    "in a file that group or others can read; use !env or "
		    "!file, or make the file private", pc->name, canon);
	return xstrdup(k->value);
}

static void
build_provider(struct ctx *x, const struct rsec *s, struct provider_cfg *pc)
{
	const struct provider_key *pk;
	const struct rkey *k, *type = NULL;
	const char *key;
	char err[512], *v;
	size_t i;
	int nerr = x->nerr;

	pc->name = xstrdup(s->name);
	pc->line = s->line;
	for (i = 0; i < s->nkeys; i++)
		if (strcasecmp(s->keys[i].key, "type") == 0)
			type = &s->keys[i];
	if (type == NULL) {
		problem(x, s->line, 0, "provider '%s': missing 'type' (one of: "
		    "%s)", pc->name, provider_types());
		return;
	}
	if ((pc->ops = provider_lookup(type->value)) == NULL) {
		problem(x, type->line, 0, "provider '%s': unknown type '%s' "
		    "(known: %s)", pc->name, type->value, provider_types());
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
			problem(x, k->line, 0, "provider '%s': unknown key '%s' "
			    "for type %s", pc->name, k->key, pc->ops->type);
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
			problem(x, s->line, 0, "provider '%s': missing '%s'",
			    pc->name, pk->name);
	}
	if (x->nerr != nerr)
		return;
	key = NULL;
	err[0] = '\0';
	if (pc->ops->check(pc, &key, err, sizeof(err)) == -1)
		problem(x, provider_cfg_line(pc, key), 0, "provider '%s': %s",
		    pc->name, err[0] != '\0' ? err : "invalid settings");
	if (strcmp(pc->ops->type, "rfc2136") == 0 &&
	    provider_cfg_get(pc, "keySecret") == NULL)
		problem(x, s->line, 1, "provider '%s': updates will not be "
		    "signed (no TSIG key)", pc->name);
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

static int
url_ok(const char *v, char *err, size_t len)
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

/* Endpoint s of domain d; ipline[] keeps where each ip was written. */
static void
build_endpoint(struct ctx *x, struct rsec *s, struct domain_cfg *d,
    int *ipline, int *nameline)
{
	struct endpoint_cfg *e = &d->eps[d->neps];
	const struct rkey *k;
	char err[256], *host;
	size_t i;

	resolve_keys(x, s);
	e->line = s->line;
	ipline[d->neps] = nameline[d->neps] = s->line;
	if ((k = get(x, s, "url")) != NULL) {
		if (url_ok(k->value, err, sizeof(err)))
			e->url = xstrdup(k->value);
		else
			problem(x, k->line, 0, "bad url '%s': %s", k->value, err);
	} else if (!has_key(s, "url"))
		problem(x, s->line, 0, "[endpoint] has no 'url'");
	if ((k = get(x, s, "ip")) != NULL) {
		ipline[d->neps] = k->line;
		if (addr_parse(k->value, &e->ip) == -1)
			problem(x, k->line, 0, "bad IP address '%s'", k->value);
	} else if (!has_key(s, "ip"))
		problem(x, s->line, 0, "[endpoint] has no 'ip'");
	if ((k = get(x, s, "host")) != NULL) {
		host = xstrdup(k->value);
		if (dns_name(host, 0))
			e->host = host;
		else {
			problem(x, k->line, 0, "bad host name '%s'", k->value);
			free(host);
		}
	}
	if ((k = get(x, s, "priority")) != NULL)
		get_long(x, k, 0, 2147483647, &e->priority);
	if ((k = get(x, s, "name")) != NULL) {
		e->name = xstrdup(k->value);
		nameline[d->neps] = k->line;
	} else if (s->name != NULL)
		e->name = xstrdup(s->name);
	else if (e->url != NULL)
		e->name = xstrdup(e->url);

	for (i = 0; i < d->neps; i++) {
		if (e->ip.family != 0 && addr_cmp(&e->ip, &d->eps[i].ip) == 0)
			problem(x, ipline[d->neps], 0, "ip %s is also the ip of "
			    "the endpoint at line %d", e->ip.s, d->eps[i].line);
		if (e->name != NULL && d->eps[i].name != NULL &&
		    strcasecmp(e->name, d->eps[i].name) == 0)
			problem(x, nameline[d->neps], 0, "endpoint name '%s' is "
			    "also the name of the endpoint at line %d", e->name,
			    d->eps[i].line);
	}
	if (e->ip.family == 4)
		d->has4 = 1;
	else if (e->ip.family == 6)
		d->has6 = 1;
	d->neps++;
}

static void
build_domain(struct ctx *x, size_t idx, const struct hc *defaults)
{
	struct config *c = x->c;
	struct rsec *s = &x->secs[idx];
	struct domain_cfg *d = &c->domains[c->ndomains];
	const struct rkey *k;
	const char *zone;
	char *z;
	struct hc h = *defaults;
	int *ipline, *nameline, good, warnline;
	size_t i, n, zl, dl;

	resolve_keys(x, s);
	d->line = s->line;
	d->name = xstrdup(s->name);
	if (!(good = dns_name(d->name, 1)))
		problem(x, s->line, 0, "bad domain name '%s'", s->name);
	for (i = 0; good && i < c->ndomains; i++)
		if (strcmp(c->domains[i].name, d->name) == 0)
			problem(x, s->line, 0, "domain %s defined twice (first "
			    "at line %d)", d->name, c->domains[i].line);
	c->ndomains++;

	parse_hc(x, s, &h);
	d->ttl = h.ttl;
	d->timeout_ms = h.timeout_ms;
	d->attempts = h.attempts;
	d->recover_after = h.recover_after;
	d->head = h.head;
	d->expect = h.expect;
	d->expect_body = h.body != NULL ? xstrdup(h.body) : NULL;

	if ((k = get(x, s, "provider")) != NULL) {
		for (i = 0; i < c->nproviders; i++)
			if (strcasecmp(c->providers[i].name, k->value) == 0)
				d->provider = &c->providers[i];
		if (d->provider == NULL)
			problem(x, k->line, 0, "domain %s: unknown provider "
			    "'%s'", d->name, k->value);
	} else if (!has_key(s, "provider"))
		problem(x, s->line, 0, "domain %s: missing 'provider'",
		    d->name);
	if (good && d->provider != NULL && d->provider->ops != NULL &&
	    (zone = provider_cfg_get(d->provider, "zone")) != NULL) {
		z = xstrdup(zone);
		(void)dns_name(z, 1);
		zl = strlen(z);
		dl = strlen(d->name);
		if (strcmp(d->name, z) != 0 && (dl <= zl ||
		    strcmp(d->name + dl - zl, z) != 0 ||
		    d->name[dl - zl - 1] != '.'))
			problem(x, k->line, 0, "domain %s is not in zone %s of "
			    "provider '%s'", d->name, z, d->provider->name);
		free(z);
	}
	if (d->timeout_ms >= c->interval_ms) {
		warnline = h.timeout_line != 0 ? h.timeout_line : d->line;
		problem(x, warnline, 1, "domain %s: timeout (%lld ms) is not "
		    "below interval (%lld ms)", d->name, d->timeout_ms,
		    c->interval_ms);
	}

	for (n = 0, i = idx + 1; i < x->nsecs; i++)
		if (x->secs[i].kind == S_ENDPOINT && x->secs[i].domain == (int)idx)
			n++;
	if (n == 0) {
		problem(x, s->line, 0, "domain %s has no [endpoint]", d->name);
		return;
	}
	d->eps = xcalloc(n, sizeof(*d->eps));
	ipline = xcalloc(n, sizeof(*ipline));
	nameline = xcalloc(n, sizeof(*nameline));
	for (i = idx + 1; i < x->nsecs; i++)
		if (x->secs[i].kind == S_ENDPOINT && x->secs[i].domain == (int)idx)
			build_endpoint(x, &x->secs[i], d, ipline, nameline);
	free(ipline);
	free(nameline);
}

/* Turns the collected sections into x->c. */
static void
build(struct ctx *x)
{
	struct config *c = x->c;
	struct hc defaults;
	size_t i, j, np = 0, nd = 0;

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
		for (j = 0; j < c->nproviders; j++)
			if (strcasecmp(c->providers[j].name, x->secs[i].name) == 0)
				break;
		if (j < c->nproviders) {
			problem(x, x->secs[i].line, 0, "provider '%s' defined "
			    "twice (first at line %d)", x->secs[i].name,
			    c->providers[j].line);
			continue;
		}
		build_provider(x, &x->secs[i], &c->providers[c->nproviders++]);
	}
	if (nd == 0) {
		problem(x, 0, 0, "no [domain] section");
		return;
	}
	c->domains = xcalloc(nd, sizeof(*c->domains));
	for (i = 0; i < x->nsecs; i++)
		if (x->secs[i].kind == S_DOMAIN)
			build_domain(x, i, &defaults);
}

struct config *
config_load(const char *path, FILE *errs, int warnings)
{
	struct ctx x;
	struct config *c = NULL;
	struct stat st;
	size_t i, j;
	int rc, seen;

	memset(&x, 0, sizeof(x));
	x.path = path;
	x.lastdomain = -1;
	if ((x.fp = fopen(path, "r")) == NULL) {
		fprintf(errs, "%s: cannot read: %s\n", path, strerror(errno));
		goto out;
	}
	if (fstat(fileno(x.fp), &st) == -1) {
		fprintf(errs, "%s: cannot read: %s\n", path, strerror(errno));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		fprintf(errs, "%s: cannot read: %s\n", path, strerror(EISDIR));
		goto out;
	}
	x.group_readable = (st.st_mode & (S_IRGRP | S_IROTH)) != 0;
	x.c = xcalloc(1, sizeof(*x.c));
	x.c->path = xstrdup(path);
	add_section(&x, S_TOP, NULL, 0);

	rc = ini_parse_stream(reader, &x, handler, &x);
	if (x.read_errno != 0) {
		fprintf(errs, "%s: cannot read: %s\n", path,
		    strerror(x.read_errno));
		goto out;
	}
	if (rc > 0) {
		/* A line inih refused that the reader let through. */
		for (seen = 0, i = 0; i < x.nmsgs; i++)
			seen |= x.msgs[i].line == rc && !x.msgs[i].warn;
		if (!seen)
			problem(&x, rc, 0, "cannot parse this line");
	} else if (rc < 0)
		problem(&x, 0, 0, "inih failed (%d)", rc);
	build(&x);

	if (x.nmsgs > 0)
		qsort(x.msgs, x.nmsgs, sizeof(*x.msgs), msg_cmp);
	for (i = 0; i < x.nmsgs; i++) {
		if (x.msgs[i].warn && !warnings)
			continue;
		if (x.msgs[i].line > 0)
			fprintf(errs, "%s:%d: %s%s\n", path, x.msgs[i].line,
			    x.msgs[i].warn ? "warning: " : "", x.msgs[i].text);
		else
			fprintf(errs, "%s: %s%s\n", path,
			    x.msgs[i].warn ? "warning: " : "", x.msgs[i].text);
	}
	if (x.nerr == 0) {
		c = x.c;
		x.c = NULL;
	}
out:
	config_free(x.c);
	if (x.fp != NULL)
		fclose(x.fp);
	free(x.buf);
	for (i = 0; i < x.nsecs; i++) {
		for (j = 0; j < x.secs[i].nkeys; j++) {
			free(x.secs[i].keys[j].key);
			free(x.secs[i].keys[j].value);
		}
		free(x.secs[i].keys);
		free(x.secs[i].name);
	}
	free(x.secs);
	for (i = 0; i < x.nmsgs; i++)
		free(x.msgs[i].text);
	free(x.msgs);
	return c;
}

const char *
provider_cfg_get(const struct provider_cfg *pc, const char *key)
{
	size_t i;

	for (i = 0; i < pc->nkv; i++)
		if (strcasecmp(pc->kv[i].key, key) == 0)
			return pc->kv[i].value;
	return NULL;
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
	}
	free(c->providers);
	for (i = 0; i < c->ndomains; i++) {
		d = &c->domains[i];
		for (j = 0; j < d->neps; j++) {
			free(d->eps[j].name);
			free(d->eps[j].url);
			free(d->eps[j].host);
		}
		free(d->eps);
		free(d->name);
		free(d->expect_body);
	}
	free(c->domains);
	free(c->path);
	free(c->state);
	free(c->ca_file);
	free(c);
}
