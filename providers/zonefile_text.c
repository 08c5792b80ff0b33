/*
 * The text of a zonefile provider's file (providers/zonefile.h): pure
 * functions, no I/O, so the unit tests and the fuzz target reach them.
 * Only the block ddup writes is read: ddup owns the file, and a line in
 * the block that is not one it writes means someone else edited it, which
 * fails the domain rather than be guessed at.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "provider.h"
#include "providers/zonefile.h"
#include "util.h"

#define ZF_SERIAL_MAX	4294967295ULL
#define ZF_NAME_MAX	254	/* 253 bytes and the final dot */
#define ZF_FIELDS	5	/* NAME TTL IN TYPE DATA */

void
zf_free(struct zf_file *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		free(f->v[i].name);
		free(f->v[i].data);
	}
	free(f->v);
	memset(f, 0, sizeof(*f));
}

static void
rec_add(struct zf_file *f, const char *name, enum rrtype type, long ttl,
    const char *data)
{
	struct zf_rec *r;

	if (f->n == f->cap) {
		f->cap = f->cap == 0 ? 16 : f->cap * 2;
		f->v = xrealloc(f->v, f->cap * sizeof(*f->v));
	}
	r = &f->v[f->n++];
	r->name = xstrdup(name);
	provider_lower(r->name);
	r->type = type;
	r->ttl = ttl;
	r->data = xstrdup(data);
}

/* Whether line (len bytes) begins with the string s. */
static int
starts(const char *line, size_t len, const char *s)
{
	size_t n = strlen(s);

	return len >= n && memcmp(line, s, n) == 0;
}

/*
 * An absolute name as the block writes it: a name under the one zone
 * rule with its final dot.  The name without the dot goes to out.
 */
static int
abs_name(const char *w, char *out, size_t outlen)
{
	size_t len = strlen(w);

	if (len < 2 || w[len - 1] != '.' || len > ZF_NAME_MAX ||
	    len >= outlen)
		return -1;
	memcpy(out, w, len - 1);
	out[len - 1] = '\0';
	/* "a.." would pass as "a." otherwise. */
	if (out[len - 2] == '.' || !provider_zone_ok(out))
		return -1;
	return 0;
}

/* One line of the block: NAME TTL IN TYPE DATA.  0 or -1. */
static int
parse_rec(const char *line, size_t len, struct zf_file *f)
{
	char field[ZF_FIELDS][ZF_NAME_MAX + 2], name[ZF_NAME_MAX + 1];
	char data[ZF_NAME_MAX + 1];
	const char *p = line, *end = line + len, *w;
	struct addr a;
	enum rrtype type;
	long long ttl = 0;
	size_t n = 0, i;

	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end)
			break;
		for (w = p; p < end && *p != ' ' && *p != '\t'; p++)
			if (*p == '\0')
				return -1;
		if (n == ZF_FIELDS || (size_t)(p - w) >= sizeof(field[0]))
			return -1;
		memcpy(field[n], w, (size_t)(p - w));
		field[n++][p - w] = '\0';
	}
	if (n != ZF_FIELDS || abs_name(field[0], name, sizeof(name)) == -1 ||
	    strcmp(field[2], "IN") != 0 || rrtype_parse(field[3], &type) == -1)
		return -1;
	for (i = 0; field[1][i] != '\0'; i++)
		if (field[1][i] < '0' || field[1][i] > '9' ||
		    (ttl = ttl * 10 + (field[1][i] - '0')) > 2147483647)
			return -1;
	if (i == 0)
		return -1;
	if (type == RR_CNAME) {
		if (abs_name(field[4], data, sizeof(data)) == -1)
			return -1;
		provider_lower(data);
		rec_add(f, name, type, (long)ttl, data);
	} else {
		if (addr_parse(field[4], &a) == -1 ||
		    rrtype_of_family(a.family) != type)
			return -1;
		rec_add(f, name, type, (long)ttl, a.s);
	}
	return 0;
}

/* The serial line's number: at most 4294967295.  0 or -1. */
static int
parse_serial(const char *p, size_t len, unsigned long long *out)
{
	unsigned long long v = 0;
	size_t i;

	if (len == 0 || len > 10)
		return -1;
	for (i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (unsigned long long)(p[i] - '0');
	}
	if (v > ZF_SERIAL_MAX)
		return -1;
	*out = v;
	return 0;
}

int
zf_parse(const char *buf, size_t len, struct zf_file *f, char *err,
    size_t errlen)
{
	const char *p = buf, *end = buf + len, *eol, *why = NULL;
	char shown[65];
	size_t lineno = 0, ll, i, sl = strlen(ZF_SERIAL);
	int in = 0;

	memset(f, 0, sizeof(*f));
	for (; p < end; p = eol + 1) {
		lineno++;
		if ((eol = memchr(p, '\n', (size_t)(end - p))) == NULL)
			eol = end;
		ll = (size_t)(eol - p);
		if (!in) {
			/* Around the block: the template's text, not ours. */
			if (starts(p, ll, ZF_BEGIN)) {
				if (f->has_block) {
					why = "a second records block";
					goto bad;
				}
				f->has_block = in = 1;
			}
		} else if (ll == strlen(ZF_END) && starts(p, ll, ZF_END))
			in = 0;
		else if (starts(p, ll, ZF_SERIAL)) {
			if (f->has_serial || f->n > 0 ||
			    parse_serial(p + sl, ll - sl, &f->serial) == -1) {
				why = "not the serial line ddup-check writes";
				goto bad;
			}
			f->has_serial = 1;
		} else if (parse_rec(p, ll, f) == -1) {
			why = "not a record ddup-check writes (NAME. TTL IN "
			    "A|AAAA|CNAME DATA)";
			goto bad;
		}
		if (eol == end)
			break;
	}
	if (in) {
		snprintf(err, errlen, "the records block (line \"%s\") has no "
		    "end line \"%s\"", ZF_BEGIN, ZF_END);
		zf_free(f);
		return -1;
	}
	return 0;
bad:
	for (i = 0; i < ll && i + 1 < sizeof(shown); i++) {
		shown[i] = p[i];
		if (shown[i] == '\0')
			shown[i] = '?';
	}
	shown[i] = '\0';
	text_printable(shown);
	snprintf(err, errlen, "line %zu: %s: \"%s\"", lineno, why, shown);
	zf_free(f);
	return -1;
}

int
zf_sets(const struct zf_file *f, const char *name, struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	const struct zf_rec *r;
	struct rrset *s;
	struct addr a;
	size_t i, k;

	for (k = 0; k < nsets; k++)
		rrset_clear(&sets[k]);
	for (i = 0; i < f->n; i++) {
		r = &f->v[i];
		if (strcasecmp(r->name, name) != 0)
			continue;
		for (k = 0; k < nsets && sets[k].type != r->type; k++)
			;
		if (k == nsets)
			continue;
		s = &sets[k];
		if (r->type == RR_CNAME) {
			if (s->target != NULL) {
				snprintf(err, errlen, "%s has more than one "
				    "CNAME record", name);
				goto bad;
			}
			s->target = xstrdup(r->data);
			s->ttl = r->ttl;
			continue;
		}
		/* Canonical when parsed: cannot fail. */
		if (addr_parse(r->data, &a) == -1 ||
		    rrset_read_add(s, &a, err, errlen) == -1)
			goto bad;
		if (s->addrs.n == 1 || r->ttl < s->ttl)
			s->ttl = r->ttl;
	}
	for (k = 0; k < nsets; k++)
		if (sets[k].type != RR_CNAME)
			rrset_read_end(&sets[k]);
	return 0;
bad:
	for (k = 0; k < nsets; k++)
		rrset_clear(&sets[k]);
	return -1;
}

void
zf_replace(struct zf_file *f, const char *name, const struct rrset *sets,
    size_t nsets)
{
	size_t i, j, k;

	/* Out go name's records of the types given... */
	for (i = j = 0; i < f->n; i++) {
		for (k = 0; k < nsets; k++)
			if (sets[k].type == f->v[i].type)
				break;
		if (k < nsets && strcasecmp(f->v[i].name, name) == 0) {
			free(f->v[i].name);
			free(f->v[i].data);
			continue;
		}
		f->v[j++] = f->v[i];
	}
	f->n = j;
	/* ...and in the sets as they are to be. */
	for (k = 0; k < nsets; k++) {
		if (sets[k].type == RR_CNAME) {
			if (sets[k].target != NULL)
				rec_add(f, name, RR_CNAME, sets[k].ttl,
				    sets[k].target);
			continue;
		}
		for (i = 0; i < sets[k].addrs.n; i++)
			rec_add(f, name, sets[k].type, sets[k].ttl,
			    sets[k].addrs.v[i].s);
	}
}

static int
rec_cmp(const void *x, const void *y)
{
	const struct zf_rec *a = x, *b = y;
	int c;

	if ((c = strcmp(a->name, b->name)) != 0)
		return c;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if ((c = strcmp(a->data, b->data)) != 0)
		return c;
	return a->ttl < b->ttl ? -1 : a->ttl > b->ttl;
}

/* Appends s to the growing buffer. */
static void
put(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*buf == NULL || *len + n + 1 > *cap) {
		while (*cap == 0 || *len + n + 1 > *cap)
			*cap = *cap == 0 ? 256 : *cap * 2;
		*buf = xrealloc(*buf, *cap);
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
}

char *
zf_block(struct zf_file *f, unsigned long long serial, size_t *len)
{
	char	*buf = NULL, line[2 * ZF_NAME_MAX + 64];
	size_t	 cap = 0, i;
	int	 n;

	*len = 0;
	if (f->n > 0)
		qsort(f->v, f->n, sizeof(*f->v), rec_cmp);
	n = snprintf(line, sizeof(line), "%s (written by ddup-check: edits "
	    "are lost)\n%s%llu\n", ZF_BEGIN, ZF_SERIAL, serial);
	put(&buf, len, &cap, line, (size_t)n);
	for (i = 0; i < f->n; i++) {
		/* The same record twice is one record to DNS: once. */
		if (i > 0 && strcmp(f->v[i].name, f->v[i - 1].name) == 0 &&
		    f->v[i].type == f->v[i - 1].type &&
		    strcmp(f->v[i].data, f->v[i - 1].data) == 0)
			continue;
		n = snprintf(line, sizeof(line), "%s. %ld IN %s %s%s\n",
		    f->v[i].name, f->v[i].ttl, rrtype_str(f->v[i].type),
		    f->v[i].data, f->v[i].type == RR_CNAME ? "." : "");
		put(&buf, len, &cap, line, (size_t)n);
	}
	put(&buf, len, &cap, ZF_END "\n", strlen(ZF_END) + 1);
	return buf;
}

/* Where the next "{name}" of the template is, from p; NULL: none. */
static const char *
next_field(const char *p, const char *end, size_t *which)
{
	static const char *const fields[] = { "{records}", "{serial}" };
	size_t k, n;

	for (; p < end; p++) {
		if (*p != '{')
			continue;
		for (k = 0; k < 2; k++) {
			n = strlen(fields[k]);
			if ((size_t)(end - p) >= n && memcmp(p, fields[k], n) ==
			    0) {
				*which = k;
				return p;
			}
		}
	}
	return NULL;
}

char *
zf_render(const char *tmpl, size_t tlen, const char *block, size_t blen,
    unsigned long long serial, size_t *len, char *err, size_t errlen)
{
	const char *p, *q, *end;
	char	*buf = NULL, num[24];
	size_t	 cap = 0, which, nrec = 0;
	int	 n;

	*len = 0;
	if (tmpl == NULL) {
		put(&buf, len, &cap, block, blen);
		return buf;
	}
	n = snprintf(num, sizeof(num), "%llu", serial);
	end = tmpl + tlen;
	for (p = tmpl; (q = next_field(p, end, &which)) != NULL; p = q) {
		put(&buf, len, &cap, p, (size_t)(q - p));
		if (which == 0) {
			/* Where parse finds it again: at a line's start. */
			if (q != tmpl && q[-1] != '\n') {
				snprintf(err, errlen, "{records} does not "
				    "begin a line");
				free(buf);
				*len = 0;
				return NULL;
			}
			nrec++;
			put(&buf, len, &cap, block, blen);
			q += strlen("{records}");
		} else {
			put(&buf, len, &cap, num, (size_t)n);
			q += strlen("{serial}");
		}
	}
	put(&buf, len, &cap, p, (size_t)(end - p));
	if (nrec != 1) {
		snprintf(err, errlen, "{records} appears %zu times, not once",
		    nrec);
		free(buf);
		*len = 0;
		return NULL;
	}
	return buf;
}

unsigned long long
zf_serial_next(unsigned long long last, long long now)
{
	unsigned long long next = last + 1;

	if (now > 0 && (unsigned long long)now > next)
		next = (unsigned long long)now;
	return next & ZF_SERIAL_MAX;
}
