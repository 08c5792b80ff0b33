/*
 * deSEC's DNS API, on the HTTP layer (http.h).
 *
 * RRsets are the API's unit.  read() is one GET of the name's RRsets
 * ({base}/domains/ZONE/rrsets/?subname=SUB: all its types, one array;
 * 404 only when the account has no such domain).  replace() of one
 * type is a PUT of that RRset ({base}/domains/ZONE/rrsets/SUB/TYPE/,
 * "@" for the apex), or a DELETE when it has no record left; a PUT
 * answered 404 is an RRset that does not exist yet, created by the
 * collection's PUT.  Both types go in one PATCH of the collection, which
 * deSEC applies all or nothing ("records": [] deletes one).
 *
 * The TTL must be at least the domain's minimum_ttl, which deSEC sets
 * (3600, lower on request): minimumTtl tells it to the configuration.
 *
 * https://desec.readthedocs.io/en/latest/dns/rrsets.html
 *
 * The token travels only in the Authorization header.
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "config.h"
#include "http.h"
#include "provider.h"
#include "rrset.h"
#include "util.h"

#define DS_MIN_TTL	3600L	/* deSEC's minimum_ttl of a new domain */
#define DS_MAX_TTL	86400L

static const struct provider_key desec_keys[] = {
	{ "apiToken", PK_REQUIRED | PK_SECRET },
	{ "zone", PK_REQUIRED },
	{ "minimumTtl", 0 },
	{ "baseUrl", 0 },
	{ "timeout", 0 },
	{ NULL, 0 }
};

struct desec {
	char		*rrsets_url;	/* {base}/domains/ZONE/rrsets/ */
	char		*zone;		/* lower case, no trailing dot */
	char		*auth_hdr;	/* "Authorization: Token ..." */
	long long	 timeout_ms;
	long long	 deadline;	/* mono_ms() bound of this operation's waits */
};

/*
 * The message of an error answer: {"detail": "..."}, or a validation
 * error {"ttl": ["Ensure ..."]}, or of a bulk request a list of those
 * ([{}, {"records": [...]}]).
 */
static int
desec_errtext(const char *buf, size_t len, char *out, size_t outlen)
{
	json_t *root, *o, *v, *first;
	json_error_t je;
	const char *k;
	size_t i;
	int rv = -1;

	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je)) == NULL)
		return -1;
	o = root;
	json_array_foreach(root, i, v)
		if (json_object_size(v) > 0) {
			o = v;
			break;
		}
	if (json_is_string(v = json_object_get(o, "detail"))) {
		snprintf(out, outlen, "%s", json_string_value(v));
		rv = 0;
	} else
		json_object_foreach(o, k, v) {
			first = json_is_array(v) ? json_array_get(v, 0) : v;
			if (!json_is_string(first))
				continue;
			snprintf(out, outlen, "%s: %s", k,
			    json_string_value(first));
			rv = 0;
			break;
		}
	if (rv == 0)
		text_printable(out);
	json_decref(root);
	return rv;
}

/*
 * The name's RRsets: an array of {"type", "ttl", "records":
 * ["192.0.2.1", ...], ...}.
 */
static const struct rrset_json desec_json = {
	.item = "RRset", .type = "type", .ttl = "ttl",
	.values = "records", .value = "record",
};

static int
desec_parse_rrsets(const char *buf, size_t len, struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	return rrset_parse_json(buf, len, &desec_json, sets, nsets,
	    err, errlen);
}

static long
desec_ttl_min_of(const struct provider_cfg *pc)
{
	const char *v = provider_cfg_get(pc, "minimumTtl");
	long min;

	if (v == NULL || parse_long(v, 1, DS_MAX_TTL, &min) == -1)
		return DS_MIN_TTL;
	return min;
}

static int
desec_check(const struct provider_cfg *pc, const char **key, char *err,
    size_t errlen)
{
	const char *v;
	long min;

	*key = "apiToken";
	v = provider_cfg_get(pc, "apiToken");
	if (v[0] == '\0' || strpbrk(v, " \t\r\n") != NULL) {
		snprintf(err, errlen, "apiToken is empty or has white space");
		return -1;
	}
	*key = "zone";
	v = provider_cfg_get(pc, "zone");
	if (v[0] == '\0' || v[0] == '.' || strpbrk(v, "/?#%& \t\r\n") != NULL) {
		snprintf(err, errlen, "zone: \"%s\" is not a domain name", v);
		return -1;
	}
	*key = "minimumTtl";
	v = provider_cfg_get(pc, "minimumTtl");
	if (v != NULL && parse_long(v, 1, DS_MAX_TTL, &min) == -1) {
		snprintf(err, errlen, "minimumTtl: expected an integer from 1 "
		    "to %ld (the domain's minimum_ttl at deSEC), not '%s'",
		    DS_MAX_TTL, v);
		return -1;
	}
	*key = "baseUrl";
	v = provider_cfg_get(pc, "baseUrl");
	if (v != NULL && http_check_base_url("baseUrl", v, err, errlen) == -1)
		return -1;
	if (provider_check_timeout(pc, key, err, errlen) == -1)
		return -1;
	*key = NULL;
	return 0;
}

static void
desec_free(void *priv)
{
	struct desec *ds = priv;

	if (ds == NULL)
		return;
	free(ds->rrsets_url);
	free(ds->zone);
	free_secret(ds->auth_hdr);
	free(ds);
}

static void *
desec_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct desec *ds = xcalloc(1, sizeof(*ds));
	const char *v = provider_cfg_get(pc, "timeout");
	char *base;
	size_t i, len;

	if (parse_duration(v != NULL ? v : "10s", &ds->timeout_ms) == -1) {
		snprintf(err, errlen, "timeout: not a duration");
		desec_free(ds);
		return NULL;
	}
	ds->zone = xstrdup(provider_cfg_get(pc, "zone"));
	len = strlen(ds->zone);
	if (len > 1 && ds->zone[len - 1] == '.')
		ds->zone[--len] = '\0';
	for (i = 0; i < len; i++)
		ds->zone[i] = (char)tolower((unsigned char)ds->zone[i]);
	base = xstrdup((v = provider_cfg_get(pc, "baseUrl")) != NULL ? v :
	    "https://desec.io/api/v1");
	for (len = strlen(base); len > 0 && base[len - 1] == '/'; len--)
		base[len - 1] = '\0';
	ds->rrsets_url = xconcat(base, "/domains/", ds->zone, "/rrsets/", "");
	free(base);
	v = provider_cfg_get(pc, "apiToken");
	len = strlen(v) + 32;
	ds->auth_hdr = xmalloc(len);
	snprintf(ds->auth_hdr, len, "Authorization: Token %s", v);
	return ds;
}

/* The name's subname in the zone ("" for the apex), malloc'd. */
static char *
subname(const struct desec *ds, const char *fqdn)
{
	size_t flen = strlen(fqdn), zlen = strlen(ds->zone);
	char *s = xstrdup(fqdn);

	if (flen > 0 && s[flen - 1] == '.')
		s[--flen] = '\0';
	/* The core checked that fqdn is in the zone. */
	s[flen > zlen ? flen - zlen - 1 : 0] = '\0';
	for (flen = 0; s[flen] != '\0'; flen++)
		s[flen] = (char)tolower((unsigned char)s[flen]);
	return s;
}

/* One call; body NULL for none. */
static enum perr
ds_call(const struct desec *ds, const char *method, const char *url,
    const char *body, long want, struct http_resp *rs, char *err,
    size_t errlen)
{
	const char *hdrs[] = { ds->auth_hdr, "Accept: application/json",
	    body != NULL ? "Content-Type: application/json" : NULL, NULL };
	struct http_req rq = {
		.who = "deSEC", .method = method, .url = url,
		.headers = hdrs, .body = body,
		.body_len = body != NULL ? strlen(body) : 0,
		.timeout_ms = ds->timeout_ms, .deadline = ds->deadline,
		.want = want,
		.errtext = desec_errtext,
		.auth_hint = "check apiToken; a token with policies needs "
		    "perm_write on the name's A and AAAA RRsets",
		.notfound_hint = "no such domain in the account of apiToken "
		    "(check zone)",
	};

	return http_call(&rq, rs, err, errlen);
}

static enum perr
desec_read(void *priv, const char *fqdn, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	struct desec *ds = priv;
	struct http_resp rs;
	char why[256], *sub = subname(ds, fqdn), *esc, *url;
	enum perr e = PERR_TEMP;

	/* A short Retry-After is waited out within the timeout. */
	ds->deadline = mono_ms() + ds->timeout_ms;
	esc = curl_easy_escape(NULL, sub, 0);
	url = xconcat(ds->rrsets_url, "?subname=", esc != NULL ? esc : "", "",
	    "");
	if ((e = ds_call(ds, "GET", url, NULL, 200, &rs, err, errlen)) ==
	    PERR_OK && desec_parse_rrsets(rs.body, rs.len, sets, nsets, why,
	    sizeof(why)) == -1) {
		snprintf(err, errlen, "deSEC at %s: unexpected answer: %s",
		    url, why);
		e = PERR_INVALID;
	}
	http_resp_free(&rs);
	curl_free(esc);
	free(url);
	free(sub);
	return e;
}

/* {"subname", "type", "ttl", "records"}; an empty set without its ttl. */
static json_t *
rrset_json(const char *sub, const struct rrset *set)
{
	json_t *o, *recs = json_array();
	size_t i;

	for (i = 0; i < set->addrs.n; i++)
		json_array_append_new(recs, json_string(set->addrs.v[i].s));
	o = json_pack("{s:s, s:s, s:o}", "subname", sub, "type",
	    rrtype_str(set->type), "records", recs);
	if (o != NULL && set->addrs.n > 0)
		json_object_set_new(o, "ttl", json_integer(set->ttl));
	return o;
}

/* The sets as one bulk request's array; NULL when out of memory. */
static char *
bulk_body(const char *sub, const struct rrset *sets, size_t nsets)
{
	json_t *doc = json_array();
	size_t i;
	char *s = NULL;

	for (i = 0; doc != NULL && i < nsets; i++)
		if (json_array_append_new(doc, rrset_json(sub, &sets[i])) == -1)
			goto out;
	s = json_dumps(doc, JSON_COMPACT);
out:
	json_decref(doc);
	return s;
}

static enum perr
desec_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct desec *ds = priv;
	struct http_resp rs;
	json_t *one = NULL;
	char *sub = subname(ds, fqdn), *url = NULL, *body = NULL;
	enum perr e = PERR_NOTFOUND;

	memset(&rs, 0, sizeof(rs));
	ds->deadline = mono_ms() + ds->timeout_ms;
	/* One type with records: a PUT of that RRset. */
	if (nsets == 1 && sets[0].addrs.n > 0) {
		url = xconcat(ds->rrsets_url, sub[0] != '\0' ? sub : "@", "/",
		    rrtype_str(sets[0].type), "/");
		if ((one = rrset_json(sub, &sets[0])) == NULL ||
		    (body = json_dumps(one, JSON_COMPACT)) == NULL)
			goto nomem;
		e = ds_call(ds, "PUT", url, body, 200, &rs, err, errlen);
		http_resp_free(&rs);
		free(body);
		body = NULL;
	}
	/*
	 * Else, or when that RRset does not exist yet (404), a PATCH of the
	 * collection: it creates, changes and deletes ("records": []) the
	 * RRsets given, all or nothing.
	 */
	if (e == PERR_NOTFOUND) {
		if ((body = bulk_body(sub, sets, nsets)) == NULL)
			goto nomem;
		e = ds_call(ds, "PATCH", ds->rrsets_url, body, 200, &rs, err,
		    errlen);
		http_resp_free(&rs);
	}
	goto out;
nomem:
	snprintf(err, errlen, "deSEC: cannot build the request for %s", fqdn);
	e = PERR_TEMP;
out:
	json_decref(one);
	free(body);
	free(url);
	free(sub);
	return e;
}

const struct provider_ops desec_ops = {
	.type = "desec",
	.keys = desec_keys,
	/* Both types go in one bulk request, applied all or nothing. */
	.caps = PCAP_ATOMIC,
	.ttl_min = DS_MIN_TTL,
	.ttl_max = DS_MAX_TTL,
	.ttl_min_of = desec_ttl_min_of,
	.zone_key = "zone",
	.check = desec_check,
	.create = desec_create,
	.read = desec_read,
	.replace = desec_replace,
	.free = desec_free,
};
