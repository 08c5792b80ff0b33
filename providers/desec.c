/*
 * deSEC's DNS API, on the HTTP layer (http.h).
 *
 * RRsets are the API's unit.  read() is one GET of the name's RRsets
 * ({base}/domains/ZONE/rrsets/?subname=SUB: all its types, one array;
 * 404 only when the account has no such domain).  replace() of one
 * type is a PUT of that RRset ({base}/domains/ZONE/rrsets/SUB/TYPE/,
 * "@" for the apex), or a DELETE when it has no record left; a PUT
 * answered 404 is an RRset that does not exist yet, created by the
 * collection's PATCH.  Several types go in one PATCH of the collection,
 * which deSEC applies all or nothing ("records": [] deletes one).
 *
 * A CNAME is an RRset like the others, its one record the target with a
 * final dot (deSEC refuses it without).  deSEC refuses a CNAME beside
 * any other RRset of the name, but checks a bulk request against the
 * state it leaves (its deletions first): so every update that holds the
 * CNAME type is the one PATCH, which empties the old type and fills the
 * new in one transaction: the name never holds both, nor neither.
 *
 * The TTL must be at least the domain's minimum_ttl, which deSEC sets
 * (3600, lower on request): minimumTtl tells it to the configuration.
 *
 * https://desec.readthedocs.io/en/latest/dns/rrsets.html
 *
 * The token travels only in the Authorization header.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "config.h"
#include "http.h"
#include "provider.h"
#include "providers/api.h"
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
	struct api	 api;
	char		*rrsets_url;	/* {base}/domains/ZONE/rrsets/ */
};

/*
 * The message of an error answer: {"detail": "..."}, or a validation
 * error {"ttl": ["Ensure ..."]}, or of a bulk request a list of those
 * ([{}, {"records": [...]}]).
 */
static const struct api_errtext desec_err = {
	.first_nonempty = 1,
	.form = { { .msg = "detail" } },
	.any_key = 1,
};

static int
desec_errtext(const char *buf, size_t len, char *out, size_t outlen)
{
	return api_errtext(&desec_err, buf, len, out, outlen);
}

static const struct api_def desec_api = {
	.who = "deSEC",
	.base_url = "https://desec.io/api/v1",
	.auth_key = "apiToken",
	.auth = "Authorization: Token ",
	.zone_key = "zone",
	.errtext = desec_errtext,
	.auth_hint = "check apiToken; a token with policies needs "
	    "perm_write on the name's A and AAAA (and CNAME) RRsets",
	.notfound_hint = "no such domain in the account of apiToken "
	    "(check zone)",
};

/*
 * The name's RRsets: an array of {"type", "ttl", "records":
 * ["192.0.2.1", ...], ...}; a CNAME's one record "host.example.".
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

	if (api_check_token_word(pc, "apiToken", key, err, errlen) == -1)
		return -1;
	if (provider_check_zone(pc, "zone", key, err, errlen) == -1)
		return -1;
	*key = "minimumTtl";
	v = provider_cfg_get(pc, "minimumTtl");
	if (v != NULL && parse_long(v, 1, DS_MAX_TTL, &min) == -1) {
		snprintf(err, errlen, "minimumTtl: expected an integer from 1 "
		    "to %ld (the domain's minimum_ttl at deSEC), not '%s'",
		    DS_MAX_TTL, v);
		return -1;
	}
	return api_check_url_timeout(pc, key, err, errlen);
}

static void
desec_free(void *priv)
{
	struct desec *ds = priv;

	if (ds == NULL)
		return;
	free(ds->rrsets_url);
	api_free(&ds->api);
}

static void *
desec_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct desec *ds;

	if ((ds = api_create(sizeof(*ds), &desec_api, pc, err, errlen)) ==
	    NULL)
		return NULL;
	ds->rrsets_url = xconcat(ds->api.base, "/domains/", ds->api.zone,
	    "/rrsets/", "");
	return ds;
}

/* One call; body NULL for none. */
static enum perr
ds_call(const struct desec *ds, const char *method, const char *url,
    const char *body, long want, struct http_resp *rs, char *err,
    size_t errlen)
{
	struct http_req rq = {
		.method = method, .url = url, .body = body, .want = want,
	};

	return api_call(&ds->api, &rq, rs, err, errlen);
}

static enum perr
desec_read(void *priv, const char *fqdn, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	struct desec *ds = priv;
	struct http_resp rs;
	char why[256], *sub = api_relname(&ds->api, fqdn), *esc, *url;
	enum perr e = PERR_TEMP;

	api_begin(&ds->api);
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
	char *fq;

	for (i = 0; i < set->addrs.n; i++)
		json_array_append_new(recs, json_string(set->addrs.v[i].s));
	/* deSEC takes a CNAME's target only as an absolute name. */
	if (set->type == RR_CNAME && set->target != NULL) {
		fq = xconcat(set->target, ".", "", "", "");
		json_array_append_new(recs, json_string(fq));
		free(fq);
	}
	o = json_pack("{s:s, s:s, s:o}", "subname", sub, "type",
	    rrtype_str(set->type), "records", recs);
	if (o != NULL && !rrset_empty(set))
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
	char *sub = api_relname(&ds->api, fqdn), *url = NULL, *body = NULL;
	enum perr e = PERR_NOTFOUND;

	memset(&rs, 0, sizeof(rs));
	api_begin(&ds->api);
	/*
	 * One address type with records: a PUT of that RRset.  Never a
	 * CNAME alone: deSEC checks it against the name's other RRsets,
	 * which only the bulk request can empty with it.
	 */
	if (nsets == 1 && sets[0].type != RR_CNAME && sets[0].addrs.n > 0) {
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
	/*
	 * Every type goes in one bulk request, applied all or nothing,
	 * the switch between a CNAME and addresses too.
	 */
	.caps = PCAP_CNAME | PCAP_ATOMIC,
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
