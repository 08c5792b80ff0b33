/*
 * Reading the configuration text: sections and key/value pairs, collected
 * as written (config_int.h tells the two passes apart); then which keys
 * each kind of section may hold, and their values by type, for
 * config_build.c.
 *
 * Debian builds inih with INI_MAX_LINE 200, multi-line values and no line
 * numbers for the handler.  So inih reads the text through our own line
 * reader, which counts lines, keeps the current section itself (inih cuts
 * section names at 49 characters), and hands inih an empty line in place
 * of any line inih would misread: too long (cut), indented (joined to the
 * previous value) or malformed.  The text comes from memory and may hold
 * anything, NUL bytes included.
 */

#include <sys/types.h>

#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ini.h>

#include "config_int.h"
#include "util.h"

#define STRBLOCK_MIN	4096
#define KEYS_LINEAR	8	/* keys of a section checked for twins one by one */

/* A copy of the len bytes at s, with a NUL, kept until the parse ends. */
static char *
keep(struct ctx *x, const char *s, size_t len)
{
	struct strblock *b = x->strs;
	char *copy;
	size_t cap;

	if (b == NULL || b->cap - b->len < len + 1) {
		/* The first block holds all the strings of the text. */
		cap = b == NULL ? x->inlen + 2 : STRBLOCK_MIN;
		if (cap < len + 1)
			cap = len + 1;
		b = xmalloc(sizeof(*b) + cap);
		b->next = x->strs;
		b->len = 0;
		b->cap = cap;
		x->strs = b;
	}
	copy = b->s + b->len;
	memcpy(copy, s, len);
	copy[len] = '\0';
	b->len += len + 1;
	return copy;
}

static void
add_section(struct ctx *x, enum kind kind, char *name, int line)
{
	struct rsec *s;

	/* Sized from a count of the lines (see count_lines()). */
	x->secs = cfg_grow(x->secs, x->nsecs, &x->capsecs, sizeof(*x->secs));
	s = &x->secs[x->nsecs];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->name = name != NULL && *name != '\0' ? name : NULL;
	s->line = line;
	s->domain = -1;
	s->first = x->nkeys;
	x->cur = x->nsecs++;
	cfg_nameset_free(&x->keyset);
}

/* A "[kind name]" header; text is what inih keeps between the brackets. */
static void
new_section(struct ctx *x, const char *text, size_t len)
{
	char *copy, *kind, *name, *end;
	enum kind k = S_SKIP;

	copy = keep(x, text, len);
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

	if (strcasecmp(kind, "provider") == 0 ||
	    strcasecmp(kind, "domain") == 0) {
		k = tolower((unsigned char)*kind) == 'p' ? S_PROVIDER :
		    S_DOMAIN;
		if (*name == '\0') {
			cfg_problem(x, x->lineno, 0,
			    "[%s] needs a name: [%s NAME]",
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
			cfg_problem(x, x->lineno, 0, "[endpoint] before any "
			    "[domain]: an endpoint belongs to the [domain] "
			    "above it");
		else if (x->lastdomain >= 0)
			k = S_ENDPOINT;
	} else if (strcasecmp(kind, "notify") == 0) {
		k = S_NOTIFY;
		if (*name == '\0') {
			cfg_problem(x, x->lineno, 0, "[notify] needs a name: "
			    "[notify NAME]");
			k = S_SKIP;
		}
	} else if (*kind == '\0')
		cfg_problem(x, x->lineno, 0, "empty section header");
	else
		cfg_problem(x, x->lineno, 0, "unknown section kind '%s' "
		    "(expected provider, domain, endpoint or notify)", kind);
	add_section(x, k, name, x->lineno);
	if (k == S_ENDPOINT)
		x->secs[x->cur].domain = x->lastdomain;
}

/*
 * inih's own scan: up to c or d, or a ';' comment after white space
 * (inih looks the characters up in a string of them: two are enough).
 */
static const char *
find_chars_or_comment(const char *s, char c, char d)
{
	int was_space = 0;

	while (*s != '\0' && *s != c && *s != d &&
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
		cfg_problem(x, x->lineno, 0, "indented line: inih would join "
		    "it to the previous value; remove the indentation");
		return 0;
	}
	if (*t == '[') {
		end = find_chars_or_comment(t + 1, ']', ']');
		if (*end != ']') {
			cfg_problem(x, x->lineno, 0,
			    "section header without ']'");
			add_section(x, S_SKIP, NULL, x->lineno);
			return 0;
		}
		new_section(x, t + 1, (size_t)(end - t - 1));
		for (end++; isspace((unsigned char)*end); end++)
			;
		if (*end != '\0' && *end != ';' && *end != '#')
			cfg_problem(x, x->lineno, 0, "text after ']'");
		return 1;
	}
	end = find_chars_or_comment(t, '=', ':');
	if (*end != '=' && *end != ':') {
		cfg_problem(x, x->lineno, 0, "expected 'key = value'");
		return 0;
	}
	return 1;
}

/* The next line of x->in into x->buf, without its end; -1 at the end. */
static ssize_t
next_line(struct ctx *x)
{
	const char *s, *nl;
	size_t len;

	if (x->inpos >= x->inlen)
		return -1;
	s = x->in + x->inpos;
	nl = memchr(s, '\n', x->inlen - x->inpos);
	len = nl != NULL ? (size_t)(nl - s) : x->inlen - x->inpos;
	x->inpos += len + (nl != NULL);
	if (len + 1 > x->bufsz) {
		free(x->buf);
		x->bufsz = len + 1;
		x->buf = xmalloc(x->bufsz);
	}
	memcpy(x->buf, s, len);
	x->buf[len] = '\0';
	return (ssize_t)len;
}

static char *
reader(char *str, int num, void *stream)
{
	struct ctx *x = stream;
	ssize_t n;
	size_t len, max = (size_t)num - 1;	/* room for the NUL */
	char *s;

	if ((n = next_line(x)) == -1)
		return NULL;
	x->lineno++;
	s = x->buf;
	len = (size_t)n;
	if (len > 0 && s[len - 1] == '\r')
		s[--len] = '\0';
	if (x->lineno == 1 && len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
		s += 3;
		len -= 3;
	}
	str[0] = '\n';
	str[1] = '\0';
	if (memchr(s, '\0', len) != NULL)
		cfg_problem(x, x->lineno, 0, "NUL byte in line");
	else if (len > max)
		cfg_problem(x, x->lineno, 0, "line too long (at most %zu "
		    "characters)", max);
	else if (line_ok(x, s)) {
		/*
		 * inih strips the end of the line itself: the '\n' fgets
		 * would keep is not needed, and a line that fills the
		 * buffer goes without it.
		 */
		memcpy(str, s, len);
		str[len] = '\0';
	}
	return str;
}

/* The line of key name in section s so far, or 0. */
static int
key_seen(struct ctx *x, const struct rsec *s, const char *name)
{
	size_t i;

	if (s->nkeys < KEYS_LINEAR) {
		for (i = s->first; i < s->first + s->nkeys; i++)
			if (strcasecmp(x->keys[i].key, name) == 0)
				return x->keys[i].line;
		return 0;
	}
	return cfg_nameset_get(&x->keyset, name);
}

static int
handler(void *user, const char *section, const char *name, const char *value)
{
	struct ctx *x = user;
	struct rsec *s = &x->secs[x->cur];
	struct rkey *k;
	size_t i;
	int first;

	(void)section;		/* ours is not cut short */
	if (s->kind == S_SKIP)
		return 1;
	if (*name == '\0') {
		cfg_problem(x, x->lineno, 0, "missing key name before '='");
		return 1;
	}
	if (!cfg_repeatable(s->kind, name) &&
	    (first = key_seen(x, s, name)) != 0) {
		cfg_problem(x, x->lineno, 0, "'%s' given twice in one "
		    "section (first at line %d)", name, first);
		return 1;
	}
	/* Sized from a count of the lines (see count_lines()). */
	x->keys = cfg_grow(x->keys, x->nkeys, &x->capkeys, sizeof(*x->keys));
	k = &x->keys[x->nkeys];
	k->key = keep(x, name, strlen(name));
	k->canon = NULL;
	k->value = keep(x, value, strlen(value));
	k->line = x->lineno;
	s->nkeys++;
	x->nkeys++;
	/* Past a few keys, their names go to a hash set, to stay linear. */
	if (s->nkeys == KEYS_LINEAR)
		for (i = s->first; i < x->nkeys; i++)
			(void)cfg_nameset_add(&x->keyset, x->keys[i].key,
			    x->keys[i].line);
	else if (s->nkeys > KEYS_LINEAR)
		(void)cfg_nameset_add(&x->keyset, k->key, k->line);
	return 1;
}

/* Where each key may be written. */
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
	{ "url", W_ENDPOINT },
	{ "ip", W_ENDPOINT },
	{ "host", W_ENDPOINT },
	{ "priority", W_ENDPOINT },
	{ "name", W_ENDPOINT },
	{ "cname", W_ENDPOINT },
	{ "proxied", W_ENDPOINT },
	{ "statusHtml", W_TOP },
	{ "metricsFile", W_TOP },
	{ "location", W_ENDPOINT },
	{ "controlUrl", W_TOP },
	{ "checkers", W_TOP },
	{ "checker", W_TOP },
	{ "quorum", W_TOP },
};

/*
 * The domain keys (SPEC 3.3 and 9): each may be written at the top of
 * the file, as the default of every domain, or in a [domain].  One
 * entry each: its type says how the value is read into the field at
 * off of struct domain_policy.
 */
enum dk_type {
	DK_LONG,		/* long, from min */
	DK_DURATION,		/* long long ms above zero */
	DK_WORD,		/* int: the index of the value in words */
	DK_EXPECT,		/* struct expect */
	DK_TEXT,		/* char *, any text */
	DK_LOCATION,		/* char *, a location name */
	DK_LOCATIONS		/* char **, with nfailover: a list of them */
};

static const struct dom_key {
	const char	*name;
	enum dk_type	 type;
	size_t		 off;
	long		 min;			/* DK_LONG */
	const char	*words[3];		/* DK_WORD, NULL-terminated */
} dom_keys[] = {
	{ "ttl", DK_LONG, offsetof(struct domain_policy, ttl), 1, { NULL } },
	{ "timeout", DK_DURATION, offsetof(struct domain_policy, timeout_ms),
	    0, { NULL } },
	{ "attempts", DK_LONG, offsetof(struct domain_policy, attempts), 1,
	    { NULL } },
	{ "recoverAfter", DK_LONG,
	    offsetof(struct domain_policy, recover_after), 1, { NULL } },
	{ "method", DK_WORD, offsetof(struct domain_policy, head), 0,
	    { "GET", "HEAD", NULL } },
	{ "expectStatus", DK_EXPECT, offsetof(struct domain_policy, expect),
	    0, { NULL } },
	{ "expectBody", DK_TEXT, offsetof(struct domain_policy, expect_body),
	    0, { NULL } },
	{ "location", DK_LOCATION, offsetof(struct domain_policy, location),
	    0, { NULL } },
	{ "failoverLocations", DK_LOCATIONS, 0, 0, { NULL } },
	{ "failback", DK_WORD, offsetof(struct domain_policy, failback_manual),
	    0, { "auto", "manual", NULL } },
	{ "publish", DK_WORD, offsetof(struct domain_policy, publish_one), 0,
	    { "all", "one", NULL } },
	{ "minHealthy", DK_LONG, offsetof(struct domain_policy, min_healthy),
	    1, { NULL } },
};

int
config_key_where(size_t i)
{
	size_t	 nkeytab = sizeof(keytab) / sizeof(keytab[0]);
	size_t	 ndom = sizeof(dom_keys) / sizeof(dom_keys[0]);
	int	 w;

	if (i < nkeytab) {
		w = keytab[i].where;
		return ((w & (W_TOP | W_NOTYET)) != 0 ? CFG_KEY_TOP : 0) |
		    ((w & W_DOMAIN) != 0 ? CFG_KEY_DOMAIN : 0) |
		    ((w & W_ENDPOINT) != 0 ? CFG_KEY_ENDPOINT : 0);
	}
	if (i - nkeytab < ndom)
		return CFG_KEY_TOP | CFG_KEY_DOMAIN;
	/* Past the two tables, config_key_at() lists the [notify] keys. */
	return config_key_at(i) != NULL ? CFG_KEY_NOTIFY : 0;
}

const char *
config_key_at(size_t i)
{
	size_t	 nkeytab = sizeof(keytab) / sizeof(keytab[0]);
	size_t	 ndom = sizeof(dom_keys) / sizeof(dom_keys[0]);

	if (i < nkeytab)
		return keytab[i].name;
	if (i - nkeytab < ndom)
		return dom_keys[i - nkeytab].name;
	return cfg_notify_key_at(i - nkeytab - ndom);
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

/*
 * Where key may be written and its canonical spelling; 0 when unknown.
 * A name may be in both tables (an endpoint's `location` is not the
 * domain's), so where is the union.
 */
static int
key_where(const char *key, const char **canon)
{
	size_t	 j;
	int	 where = 0;

	/*
	 * Equal bytes stay equal with bit 5 set, letters of either case
	 * too: a cheap first look before each comparison.
	 */
	for (j = 0; j < sizeof(keytab) / sizeof(keytab[0]); j++)
		if ((keytab[j].name[0] | 0x20) == (key[0] | 0x20) &&
		    strcasecmp(keytab[j].name, key) == 0) {
			*canon = keytab[j].name;
			where |= keytab[j].where;
		}
	for (j = 0; j < sizeof(dom_keys) / sizeof(dom_keys[0]); j++)
		if ((dom_keys[j].name[0] | 0x20) == (key[0] | 0x20) &&
		    strcasecmp(dom_keys[j].name, key) == 0) {
			*canon = dom_keys[j].name;
			where |= W_TOP | W_DOMAIN;
		}
	return where;
}

/* Sets canon of every key of a top, domain or endpoint section. */
void
cfg_resolve_keys(struct ctx *x, struct rsec *s)
{
	static const char *const kname[] = { "at the top of the file",
	    "in [provider]", "in [domain]", "in [endpoint]", "in [notify]",
	    "" };
	static const int kwhere[] = { W_TOP, 0, W_DOMAIN, W_ENDPOINT, 0, 0 };
	struct rkey *k;
	const char *canon = NULL;
	size_t i;
	int where;

	for (i = 0; i < s->nkeys; i++) {
		k = &s->keys[i];
		where = key_where(k->key, &canon);
		if (where == 0)
			cfg_problem(x, k->line, 0, "unknown key '%s' %s",
			    k->key, kname[s->kind]);
		else if ((where & W_NOTYET) != 0 &&
		    (where & kwhere[s->kind]) == 0)
			cfg_problem(x, k->line, 0, "'%s' is not supported by "
			    "this version of ddup-check", canon);
		else if ((where & kwhere[s->kind]) == 0)
			cfg_problem(x, k->line, 0, "'%s' cannot be used %s "
			    "(it belongs %s)", canon, kname[s->kind],
			    where_text(where & ~W_NOTYET));
		else
			k->canon = canon;
	}
}

/* A known key's value, or NULL; an empty value is reported here. */
const struct rkey *
cfg_get(struct ctx *x, const struct rsec *s, const char *canon)
{
	size_t i;

	for (i = 0; i < s->nkeys; i++) {
		if (s->keys[i].canon != NULL &&
		    strcmp(s->keys[i].canon, canon) == 0) {
			if (s->keys[i].value[0] == '\0') {
				cfg_problem(x, s->keys[i].line, 0, "'%s' has "
				    "no value", canon);
				return NULL;
			}
			return &s->keys[i];
		}
	}
	return NULL;
}

int
cfg_has_key(const struct rsec *s, const char *canon)
{
	size_t i;

	for (i = 0; i < s->nkeys; i++)
		if (s->keys[i].canon != NULL &&
		    strcmp(s->keys[i].canon, canon) == 0)
			return 1;
	return 0;
}

void
cfg_get_long(struct ctx *x, const struct rkey *k, long min, long max, long *out)
{
	if (parse_long(k->value, min, max, out) == -1)
		cfg_problem(x, k->line, 0, "'%s': expected an integer from "
		    "%ld to %ld, not '%s'", k->canon, min, max, k->value);
}

int
cfg_get_duration(struct ctx *x, const struct rkey *k, long long *out)
{
	long long ms;

	if (parse_duration(k->value, &ms) == -1 || ms <= 0) {
		cfg_problem(x, k->line, 0, "'%s': expected a duration above "
		    "zero (such as 500ms, 30s, 5m, 1h or 7d), not '%s'",
		    k->canon, k->value);
		return -1;
	}
	/*
	 * Bounded so that arithmetic on durations (3 x interval in
	 * --status, now - history) cannot overflow.
	 */
	if (ms > DURATION_MAX_MS) {
		cfg_problem(x, k->line, 0, "'%s': at most %lldd, not '%s'",
		    k->canon, DURATION_MAX_MS / 86400000, k->value);
		return -1;
	}
	*out = ms;
	return 0;
}

_Static_assert(sizeof(dom_keys) / sizeof(dom_keys[0]) <= HC_KEYS_MAX,
    "struct hc has a line for every domain key");

void
cfg_hc_defaults(struct hc *h)
{
	memset(h, 0, sizeof(*h));
	h->p.ttl = 120;
	h->p.timeout_ms = 3000;
	h->p.attempts = 2;
	h->p.recover_after = 1;
	h->p.expect.n = 1;
	h->p.expect.r[0].lo = 200;
	h->p.expect.r[0].hi = 299;
	h->p.min_healthy = 1;
}

int
cfg_hc_line(const struct hc *h, const char *canon)
{
	size_t j;

	for (j = 0; j < sizeof(dom_keys) / sizeof(dom_keys[0]); j++)
		if (strcmp(dom_keys[j].name, canon) == 0)
			return h->line[j];
	return 0;
}

static char **
strv_copy(char *const *v, size_t n)
{
	char	**c;
	size_t	  i;

	if (n == 0)
		return NULL;
	c = xcalloc(n, sizeof(*c));
	for (i = 0; i < n; i++)
		c[i] = xstrdup(v[i]);
	return c;
}

static void
strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
cfg_policy_free(struct domain_policy *p)
{
	free(p->expect_body);
	free(p->location);
	strv_free(p->failover, p->nfailover);
	p->expect_body = p->location = NULL;
	p->failover = NULL;
	p->nfailover = 0;
}

void
cfg_hc_copy(struct hc *dst, const struct hc *src)
{
	*dst = *src;
	dst->p.expect_body = src->p.expect_body != NULL ?
	    xstrdup(src->p.expect_body) : NULL;
	dst->p.location = src->p.location != NULL ?
	    xstrdup(src->p.location) : NULL;
	dst->p.failover = strv_copy(src->p.failover, src->p.nfailover);
}

/* Letters, digits, '-', '_' and '.' (SPEC 9). */
int
cfg_location_ok(const char *s)
{
	size_t len = strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.");

	return len > 0 && s[len] == '\0';
}

/* A list of locations, split at commas and white space; -1: reported. */
static int
parse_locations(struct ctx *x, const struct rkey *k, char ***out, size_t *n)
{
	char	 *copy, *w, *save = NULL, **v = NULL;
	size_t	  nv = 0, i;
	int	  rc = 0;

	copy = xstrdup(k->value);
	v = xcalloc(strlen(copy) / 2 + 1, sizeof(*v));
	for (w = strtok_r(copy, ", \t", &save); w != NULL;
	    w = strtok_r(NULL, ", \t", &save)) {
		if (!cfg_location_ok(w)) {
			cfg_problem(x, k->line, 0, "'%s': bad location '%s' "
			    "(letters, digits, '-', '_' and '.')", k->canon, w);
			rc = -1;
			continue;
		}
		for (i = 0; i < nv; i++)
			if (strcasecmp(v[i], w) == 0)
				break;
		if (i < nv) {
			cfg_problem(x, k->line, 0, "'%s': location '%s' listed "
			    "twice", k->canon, w);
			rc = -1;
			continue;
		}
		v[nv++] = xstrdup(w);
	}
	if (rc == 0 && nv == 0) {
		cfg_problem(x, k->line, 0, "'%s' has no location", k->canon);
		rc = -1;
	}
	free(copy);
	if (rc == -1) {
		strv_free(v, nv);
		return -1;
	}
	*out = v;
	*n = nv;
	return 0;
}

/* Key k of entry dk into h->p; -1 when its value was reported. */
static int
parse_dom_key(struct ctx *x, const struct dom_key *dk, const struct rkey *k,
    struct hc *h)
{
	void	 *field = (char *)&h->p + dk->off;
	char	**sp = field, **v;
	size_t	  n, i;
	long	  l;

	switch (dk->type) {
	case DK_LONG:
		if (parse_long(k->value, dk->min, 2147483647, &l) == -1) {
			cfg_problem(x, k->line, 0, "'%s': expected an integer "
			    "from %ld to %ld, not '%s'", dk->name, dk->min,
			    2147483647L, k->value);
			return -1;
		}
		*(long *)field = l;
		return 0;
	case DK_DURATION:
		return cfg_get_duration(x, k, field);
	case DK_WORD:
		for (i = 0; dk->words[i] != NULL; i++)
			if (strcasecmp(k->value, dk->words[i]) == 0) {
				*(int *)field = (int)i;
				return 0;
			}
		cfg_problem(x, k->line, 0, "'%s': expected %s or %s, not "
		    "'%s'", dk->name, dk->words[0], dk->words[1], k->value);
		return -1;
	case DK_EXPECT:
		if (parse_expect(k->value, field) == -1) {
			cfg_problem(x, k->line, 0, "'expectStatus': expected a "
			    "status code (100-599), a class such as 2xx, or a "
			    "list of them, not '%s'", k->value);
			return -1;
		}
		return 0;
	case DK_LOCATION:
		if (!cfg_location_ok(k->value)) {
			cfg_problem(x, k->line, 0, "'%s': bad location '%s' "
			    "(letters, digits, '-', '_' and '.')", dk->name,
			    k->value);
			return -1;
		}
		/* FALLTHROUGH */
	case DK_TEXT:
		free(*sp);
		*sp = xstrdup(k->value);
		return 0;
	case DK_LOCATIONS:
		if (parse_locations(x, k, &v, &n) == -1)
			return -1;
		strv_free(h->p.failover, h->p.nfailover);
		h->p.failover = v;
		h->p.nfailover = n;
		return 0;
	}
	return -1;
}

/* The domain keys of section s, over what h holds already. */
void
cfg_parse_hc(struct ctx *x, const struct rsec *s, struct hc *h)
{
	const struct rkey *k;
	size_t j;

	for (j = 0; j < sizeof(dom_keys) / sizeof(dom_keys[0]); j++)
		if ((k = cfg_get(x, s, dom_keys[j].name)) != NULL &&
		    parse_dom_key(x, &dom_keys[j], k, h) == 0)
			h->line[j] = k->line;
}

/*
 * The sections and keys of the text, counted from the first byte of each
 * line: a header starts with '[', a key with anything but white space, a
 * comment or a header (the reader hands inih nothing else).  A byte
 * order mark can hide the first line's first byte: it counts for both.
 * So the arrays are sized once; should the count ever fall short, they
 * grow.
 */
static void
count_lines(const struct ctx *x, size_t *nsecs, size_t *nkeys)
{
	const char *p = x->in, *end = x->in + x->inlen, *nl;

	*nsecs = 2;
	*nkeys = 1;
	while (p < end) {
		if (*p == '[')
			++*nsecs;
		else if (!isspace((unsigned char)*p) && *p != ';' && *p != '#')
			++*nkeys;
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			break;
		p = nl + 1;
	}
}

void
cfg_read(struct ctx *x)
{
	size_t i;
	int rc, seen;

	count_lines(x, &x->capsecs, &x->capkeys);
	x->secs = xmalloc(x->capsecs * sizeof(*x->secs));
	x->keys = xmalloc(x->capkeys * sizeof(*x->keys));
	x->nkeys = 0;
	x->lastdomain = -1;
	add_section(x, S_TOP, NULL, 0);
	rc = ini_parse_stream(reader, x, handler, x);
	if (rc > 0) {
		/* A line inih refused that the reader let through. */
		for (seen = 0, i = 0; i < x->nmsgs; i++)
			seen |= x->msgs[i].line == rc && !x->msgs[i].warn;
		if (!seen)
			cfg_problem(x, rc, 0, "cannot parse this line");
	} else if (rc < 0)
		cfg_problem(x, 0, 0, "inih failed (%d)", rc);
	/* The keys stay where they are from now on. */
	for (i = 0; i < x->nsecs; i++)
		x->secs[i].keys = x->keys + x->secs[i].first;
}

void
cfg_read_free(struct ctx *x)
{
	struct strblock *b;

	/* Secrets written in the file are among the strings. */
	while ((b = x->strs) != NULL) {
		x->strs = b->next;
		explicit_bzero(b->s, b->len);
		free(b);
	}
	free(x->keys);
	free(x->secs);
	cfg_nameset_free(&x->keyset);
	free(x->buf);
}
