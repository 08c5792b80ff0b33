/*
 * The JSON of the webhook provider (providers/webhook.h): pure functions
 * of their input, fuzzed (fuzz/fuzz_webhook.c) and unit tested.
 *
 * https://github.com/kubernetes-sigs/external-dns, api/webhook.yaml and
 * endpoint/domain_filter.go for the filter's wire form and its match.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "provider.h"
#include "providers/webhook.h"
#include "rrset.h"
#include "util.h"

/* ------------------------------------------------------------ the filter */

/* A name as filters compare it: lower case, no final dot; malloc'd. */
static char *
filter_name(const char *s)
{
	return provider_zone_name(s);
}

/*
 * Whether name matches one filter f: ".example.com" the names under it,
 * "example.com" the name itself and the names under it.
 */
static int
filter_one(const char *name, const char *filter)
{
	char *f = filter_name(filter);
	size_t nl = strlen(name), fl = strlen(f);
	int m = 0;

	if (fl == 0)
		goto out;
	if (f[0] == '.')
		m = nl > fl && strcmp(name + nl - fl, f) == 0;
	else
		m = strcmp(name, f) == 0 || (nl > fl && name[nl - fl - 1] ==
		    '.' && strcmp(name + nl - fl, f) == 0);
out:
	free(f);
	return m;
}

/*
 * The list under key of o: -1 when it is there and not a list of
 * strings; else whether any matches name (0 for none, or no list),
 * with *n its length.
 */
static int
filter_list(json_t *o, const char *key, const char *name, size_t *n)
{
	json_t *l = json_object_get(o, key), *v;
	size_t i;
	int m = 0;

	*n = 0;
	if (l == NULL || json_is_null(l))
		return 0;
	if (!json_is_array(l))
		return -1;
	json_array_foreach(l, i, v) {
		if (!json_is_string(v))
			return -1;
		m |= filter_one(name, json_string_value(v));
	}
	*n = json_array_size(l);
	return m;
}

static int
regex_given(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) && json_string_value(v)[0] != '\0';
}

int
wh_filter_match(const char *buf, size_t len, const char *fqdn, char *err,
    size_t errlen)
{
	json_error_t je;
	json_t *root;
	const char *ikey = "include";
	char *name = filter_name(fqdn);
	size_t ni, ne;
	int in, ex, rv = -1;

	if (errlen > 0)
		err[0] = '\0';
	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je)) ==
	    NULL) {
		snprintf(err, errlen, "not JSON: %s (line %d)", je.text,
		    je.line);
		goto out;
	}
	if (!json_is_object(root)) {
		snprintf(err, errlen, "the domain filter is not an object");
		goto out;
	}
	if (regex_given(root, "regexInclude") || regex_given(root,
	    "regexExclude")) {
		snprintf(err, errlen, "the domain filter is a regular "
		    "expression (regexInclude, regexExclude), which ddup does "
		    "not evaluate: give the server a list of domains");
		goto out;
	}
	/* The OpenAPI document's name for the list, when the Go one is absent. */
	if (json_object_get(root, ikey) == NULL)
		ikey = "filters";
	in = filter_list(root, ikey, name, &ni);
	ex = filter_list(root, "exclude", name, &ne);
	if (in == -1 || ex == -1) {
		snprintf(err, errlen, "the domain filter's %s is not a list of "
		    "names", in == -1 ? ikey : "exclude");
		goto out;
	}
	rv = 1;
	if (ni > 0 && !in) {
		snprintf(err, errlen, "%s is outside the domain filter "
		    "(%s: none of its %zu domains)", name, ikey, ni);
		rv = 0;
	} else if (ex) {
		snprintf(err, errlen, "%s is outside the domain filter "
		    "(excluded)", name);
		rv = 0;
	}
out:
	text_printable(err);
	json_decref(root);
	free(name);
	return rv;
}

/* --------------------------------------------------------- the endpoints */

void
wh_cur_free(json_t **cur, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		json_decref(cur[i]);
		cur[i] = NULL;
	}
}

/* The targets of endpoint i (o) into s: 0, or -1 with err. */
static int
parse_targets(json_t *o, size_t i, struct rrset *s, char *err,
    size_t errlen)
{
	json_t *tg = json_object_get(o, "targets"), *v;
	struct addr a;
	char *c;
	size_t j;
	int fam = s->type == RR_AAAA ? 6 : 4;

	if (tg != NULL && !json_is_null(tg) && !json_is_array(tg)) {
		snprintf(err, errlen, "endpoint %zu: targets is not a list", i);
		return -1;
	}
	if (s->type == RR_CNAME) {
		if (json_array_size(tg) == 0)
			return 0;
		v = json_array_get(tg, 0);
		c = json_is_string(v) ? xstrdup(json_string_value(v)) : NULL;
		if (json_array_size(tg) != 1 || c == NULL ||
		    !rrset_host_canon(c)) {
			free(c);
			snprintf(err, errlen, "endpoint %zu: a CNAME of more "
			    "than one target, or not of a host name", i);
			return -1;
		}
		s->target = c;
		return 0;
	}
	json_array_foreach(tg, j, v) {
		if (!json_is_string(v) || addr_parse(json_string_value(v),
		    &a) == -1 || a.family != fam) {
			snprintf(err, errlen, "endpoint %zu: target %zu is not "
			    "an IPv%d address", i, j, fam);
			return -1;
		}
		if (rrset_read_add(s, &a, err, errlen) == -1)
			return -1;
	}
	rrset_read_end(s);
	return 0;
}

int
wh_records_parse(const char *buf, size_t len, const char *fqdn,
    struct rrset *sets, json_t **cur, size_t nsets, char *err, size_t errlen)
{
	json_error_t je;
	json_t *root, *o, *dn, *rt, *ttl;
	char *name = filter_name(fqdn), *n;
	size_t i, k, nl;
	int rv = -1, other;

	for (k = 0; k < nsets; k++) {
		rrset_clear(&sets[k]);
		cur[k] = NULL;
	}
	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES |
	    JSON_DECODE_ANY, &je)) == NULL) {
		snprintf(err, errlen, "not JSON: %s (line %d)", je.text,
		    je.line);
		goto out;
	}
	/* Go writes an empty list of endpoints as null. */
	if (!json_is_array(root) && !json_is_null(root)) {
		snprintf(err, errlen, "not a list of endpoints");
		goto out;
	}
	json_array_foreach(root, i, o) {
		dn = json_object_get(o, "dnsName");
		rt = json_object_get(o, "recordType");
		if (!json_is_string(dn) || !json_is_string(rt)) {
			snprintf(err, errlen, "endpoint %zu has no dnsName or "
			    "recordType", i);
			goto out;
		}
		for (k = 0; k < nsets && strcmp(json_string_value(rt),
		    rrtype_str(sets[k].type)) != 0; k++)
			;
		if (k == nsets)
			continue;	/* a type ddup does not manage here */
		n = xstrdup(json_string_value(dn));
		nl = strlen(n);
		if (nl > 1 && n[nl - 1] == '.')
			n[nl - 1] = '\0';
		other = strcasecmp(n, name) != 0;
		free(n);
		if (other)
			continue;	/* another name: not ddup's */
		ttl = json_object_get(o, "recordTTL");
		if (cur[k] != NULL || (ttl != NULL && (!json_is_integer(ttl) ||
		    json_integer_value(ttl) < 0 ||
		    json_integer_value(ttl) > 2147483647))) {
			snprintf(err, errlen, "endpoint %zu (%s) is a second "
			    "one of the name, or its recordTTL is not in "
			    "0..2147483647", i, rrtype_str(sets[k].type));
			goto out;
		}
		if (parse_targets(o, i, &sets[k], err, errlen) == -1)
			goto out;
		sets[k].ttl = ttl != NULL ? (long)json_integer_value(ttl) : 0;
		cur[k] = json_incref(o);
	}
	rv = 0;
out:
	if (rv == -1) {
		for (k = 0; k < nsets; k++)
			rrset_clear(&sets[k]);
		wh_cur_free(cur, nsets);
		text_printable(err);
	}
	json_decref(root);
	free(name);
	return rv;
}

/* ----------------------------------------------------------- the changes */

/* The targets of s as the protocol lists them. */
static json_t *
targets_of(const struct rrset *s)
{
	json_t *l = json_array();
	size_t i;

	if (s->type == RR_CNAME)
		json_array_append_new(l, json_string(s->target));
	else
		for (i = 0; i < s->addrs.n; i++)
			json_array_append_new(l, json_string(s->addrs.v[i].s));
	return l;
}

/* The endpoint of want: a copy of old (may be NULL) with its records. */
static json_t *
endpoint_of(const char *name, json_t *old, const struct rrset *want)
{
	json_t *o = old != NULL ? json_deep_copy(old) : json_object();

	if (old == NULL) {
		json_object_set_new(o, "dnsName", json_string(name));
		json_object_set_new(o, "recordType",
		    json_string(rrtype_str(want->type)));
	}
	json_object_set_new(o, "recordTTL", json_integer(want->ttl));
	json_object_set_new(o, "targets", targets_of(want));
	return o;
}

char *
wh_changes(const char *fqdn, json_t *const *cur, const struct rrset *have,
    const struct rrset *want, size_t nsets)
{
	static const char *const keys[] = { "create", "updateOld",
	    "updateNew", "delete" };
	json_t *l[4], *body = NULL;
	char *name = filter_name(fqdn), *s = NULL;
	size_t i, k, n = 0;

	for (i = 0; i < 4; i++)
		l[i] = json_array();
	for (k = 0; k < nsets; k++) {
		if (rrset_empty(&want[k])) {
			if (cur[k] != NULL)
				json_array_append(l[3], cur[k]);
		} else if (cur[k] == NULL)
			json_array_append_new(l[0], endpoint_of(name, NULL,
			    &want[k]));
		else if (!rrset_same(&have[k], &want[k])) {
			json_array_append(l[1], cur[k]);
			json_array_append_new(l[2], endpoint_of(name, cur[k],
			    &want[k]));
		}
	}
	body = json_object();
	for (i = 0; i < 4; i++) {
		n += json_array_size(l[i]);
		/* Empty lists are left out, as external-dns leaves them. */
		if (json_array_size(l[i]) > 0)
			json_object_set(body, keys[i], l[i]);
		json_decref(l[i]);
	}
	if (n > 0)
		s = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	free(name);
	return s;
}
