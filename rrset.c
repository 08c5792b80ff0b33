/*
 * Typed records (rrset.h).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "rrset.h"
#include "util.h"

const char *
rrtype_str(enum rrtype t)
{
	switch (t) {
	case RR_A:
		return "A";
	case RR_AAAA:
		return "AAAA";
	case RR_CNAME:
		return "CNAME";
	}
	return "?";
}

int
rrtype_parse(const char *s, enum rrtype *t)
{
	if (s == NULL)
		return -1;
	if (strcmp(s, "A") == 0)
		*t = RR_A;
	else if (strcmp(s, "AAAA") == 0)
		*t = RR_AAAA;
	else if (strcmp(s, "CNAME") == 0)
		*t = RR_CNAME;
	else
		return -1;
	return 0;
}

enum rrtype
rrtype_of_family(int family)
{
	return family == 6 ? RR_AAAA : RR_A;
}

int
rrset_empty(const struct rrset *rs)
{
	return rs->type == RR_CNAME ? rs->target == NULL : rs->addrs.n == 0;
}

int
rrset_same(const struct rrset *a, const struct rrset *b)
{
	if (a->type != b->type || rrset_empty(a) != rrset_empty(b))
		return 0;
	/* An empty RRset has no TTL or flag to compare. */
	if (rrset_empty(a))
		return 1;
	if (a->ttl != b->ttl || (a->proxied != 0) != (b->proxied != 0))
		return 0;
	if (a->type == RR_CNAME)
		return strcasecmp(a->target, b->target) == 0;
	return addrset_equal(&a->addrs, &b->addrs);
}

void
rrset_copy(struct rrset *dst, const struct rrset *src)
{
	rrset_clear(dst);
	dst->type = src->type;
	dst->ttl = src->ttl;
	dst->proxied = src->proxied;
	addrset_copy(&dst->addrs, &src->addrs);
	dst->target = src->target != NULL ? xstrdup(src->target) : NULL;
}

char *
rrset_join(const struct rrset *rs)
{
	if (rs->type == RR_CNAME)
		return xstrdup(rs->target != NULL ? rs->target : "");
	return addrset_join(&rs->addrs);
}

int
rrset_parse(struct rrset *rs, const char *text)
{
	struct addr a;
	size_t i;

	rrset_clear(rs);
	if (rs->type != RR_CNAME) {
		if (addrset_parse(&rs->addrs, text) == -1)
			goto bad;
		/* Each of the RRset's own family, as a type holds. */
		for (i = 0; i < rs->addrs.n; i++)
			if (rrtype_of_family(rs->addrs.v[i].family) != rs->type)
				goto bad;
		return 0;
	}
	if (text[0] == '\0')
		return 0;
	/* One host name: no blank, and not an address. */
	if (strpbrk(text, " \t\r\n") != NULL || addr_parse(text, &a) == 0)
		goto bad;
	rs->target = xstrdup(text);
	return 0;
bad:
	rrset_clear(rs);
	return -1;
}

int
rrset_read_room(size_t n, enum rrtype t, char *err, size_t errlen)
{
	if (n < RRSET_READ_MAX)
		return 0;
	snprintf(err, errlen, "more than %d %s records of the name: no set "
	    "ddup publishes, and a read takes at most %d", RRSET_READ_MAX,
	    rrtype_str(t), RRSET_READ_MAX);
	return -1;
}

int
rrset_read_add(struct rrset *rs, const struct addr *a, char *err,
    size_t errlen)
{
	struct addrset *set = &rs->addrs;

	if (rrset_read_room(set->n, rs->type, err, errlen) == -1)
		return -1;
	if (set->n == set->cap) {
		set->cap = set->cap == 0 ? 4 : set->cap * 2;
		set->v = xrealloc(set->v, set->cap * sizeof(*set->v));
	}
	set->v[set->n++] = *a;
	return 0;
}

static int
addr_qcmp(const void *a, const void *b)
{
	return addr_cmp(a, b);
}

void
rrset_read_end(struct rrset *rs)
{
	struct addrset *set = &rs->addrs;
	size_t i, n;

	if (set->n < 2)
		return;
	qsort(set->v, set->n, sizeof(*set->v), addr_qcmp);
	for (i = 1, n = 1; i < set->n; i++)
		if (addr_cmp(&set->v[n - 1], &set->v[i]) != 0)
			set->v[n++] = set->v[i];
	set->n = n;
}

char *
rrset_addrs_shown(const struct addrset *set)
{
	struct addrset	 head = *set;
	char		*s, *t;
	size_t		 len;

	if (set->n <= RRSET_SHOWN_MAX)
		return addrset_join(set);
	/* The first ones, joined from a view of the set, not a copy. */
	head.n = RRSET_SHOWN_MAX;
	s = addrset_join(&head);
	len = strlen(s) + 48;
	t = xmalloc(len);
	snprintf(t, len, "%s ... (%zu records)", s, set->n);
	free(s);
	return t;
}

void
rrset_clear(struct rrset *rs)
{
	addrset_free(&rs->addrs);
	free(rs->target);
	rs->target = NULL;
	rs->ttl = 0;
	rs->proxied = 0;
}

int
rrset_host_canon(char *s)
{
	const char	*p, *dot;
	size_t		 n;

	for (n = 0; s[n] != '\0'; n++)
		if (s[n] >= 'A' && s[n] <= 'Z')
			s[n] = (char)(s[n] - 'A' + 'a');
	if (n > 1 && s[n - 1] == '.')
		s[--n] = '\0';
	if (n == 0 || n > 253 || strspn(s,
	    "abcdefghijklmnopqrstuvwxyz0123456789-._") != n)
		return 0;
	/* Every label 1 to 63 bytes: no "a..b", no ".a", no "a.." */
	for (p = s; ; p = dot + 1) {
		dot = strchr(p, '.');
		n = dot != NULL ? (size_t)(dot - p) : strlen(p);
		if (n == 0 || n > 63)
			return 0;
		if (dot == NULL)
			return 1;
	}
}

/*
 * A CNAME record as an API writes it, into set->target: lower case,
 * without its final dot, relative names completed with origin.  -1 if
 * it is no host name.
 */
static int
json_target(const char *v, const char *origin, struct rrset *set)
{
	char	*s;
	size_t	 n;

	n = strlen(v);
	if (origin != NULL && origin[0] != '\0' && n > 0 && v[n - 1] != '.')
		s = xconcat(v, ".", origin, "", "");
	else
		s = xstrdup(v);
	if (!rrset_host_canon(s)) {
		free(s);
		return -1;
	}
	set->target = s;
	return 0;
}

int
rrset_parse_json(const char *buf, size_t len, const struct rrset_json *js,
    struct rrset *sets, size_t nsets, char *err, size_t errlen)
{
	json_t *root, *o, *type, *ttl, *recs, *r;
	json_error_t je;
	struct addr a;
	size_t i, j, k;
	int rv = -1, fam;

	for (k = 0; k < nsets; k++)
		rrset_clear(&sets[k]);
	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je)) ==
	    NULL) {
		snprintf(err, errlen, "not JSON: %s (line %d)", je.text,
		    je.line);
		goto out;
	}
	if (!json_is_array(root)) {
		snprintf(err, errlen, "not an array of %ss", js->item);
		goto out;
	}
	json_array_foreach(root, i, o) {
		type = json_object_get(o, js->type);
		if (!json_is_string(type)) {
			snprintf(err, errlen, "%s %zu has no %s", js->item, i,
			    js->type);
			goto out;
		}
		for (k = 0; k < nsets; k++)
			if (strcmp(json_string_value(type),
			    rrtype_str(sets[k].type)) == 0)
				break;
		if (k == nsets)
			continue;	/* a type ddup does not manage here */
		ttl = json_object_get(o, js->ttl);
		recs = json_object_get(o, js->values);
		if (!rrset_empty(&sets[k]) || !json_is_integer(ttl) ||
		    json_integer_value(ttl) < 1 ||
		    json_integer_value(ttl) > 2147483647 ||
		    json_array_size(recs) == 0) {
			snprintf(err, errlen, "%s %zu (%s) is a second one, "
			    "or has no %s or no %s", js->item, i,
			    rrtype_str(sets[k].type), js->ttl, js->values);
			goto out;
		}
		if (sets[k].type == RR_CNAME) {
			r = json_array_get(recs, 0);
			if (json_array_size(recs) != 1 || !json_is_string(r) ||
			    json_target(json_string_value(r), js->origin,
			    &sets[k]) == -1) {
				snprintf(err, errlen, "%s %zu: a CNAME of more "
				    "than one %s, or not of a host name",
				    js->item, i, js->value);
				goto out;
			}
			sets[k].ttl = (long)json_integer_value(ttl);
			continue;
		}
		fam = sets[k].type == RR_AAAA ? 6 : 4;
		json_array_foreach(recs, j, r) {
			if (!json_is_string(r) || addr_parse(json_string_value(r),
			    &a) == -1 || a.family != fam) {
				snprintf(err, errlen, "%s %zu: %s %zu is not an "
				    "IPv%d address", js->item, i, js->value, j, fam);
				goto out;
			}
			if (rrset_read_add(&sets[k], &a, err, errlen) == -1)
				goto out;
		}
		rrset_read_end(&sets[k]);
		sets[k].ttl = (long)json_integer_value(ttl);
	}
	rv = 0;
out:
	if (rv == -1) {
		for (k = 0; k < nsets; k++)
			rrset_clear(&sets[k]);
		text_printable(err);
	}
	json_decref(root);
	return rv;
}
