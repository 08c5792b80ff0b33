/*
 * Reading the configuration text (ddup.ini(5), DESCRIPTION): sections
 * and key/value pairs, collected as written with their lines, for the
 * builder (config_int.h tells the two passes apart); and the name sets
 * that keep the reader's and the builder's duplicate checks linear.
 * Above config_problem.c and config_keys.c (a repeatable key).
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

/*
 * The name sets: open addressing on a hash of the name in ASCII lower
 * case.  The reader's look for a key given twice in a large section,
 * the builder's for a provider, domain, notifier, address or endpoint
 * name given twice.
 */
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
	int rc;

	count_lines(x, &x->capsecs, &x->capkeys);
	x->secs = xmalloc(x->capsecs * sizeof(*x->secs));
	x->keys = xmalloc(x->capkeys * sizeof(*x->keys));
	x->nkeys = 0;
	x->lastdomain = -1;
	add_section(x, S_TOP, NULL, 0);
	rc = ini_parse_stream(reader, x, handler, x);
	if (rc > 0) {
		/* A line inih refused that the reader let through. */
		if (!cfg_problem_on(x, rc))
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
