/*
 * Gandi LiveDNS (API v5), on the HTTP layer (http.h).
 *
 * LiveDNS keeps RRsets: read() is one GET of the name's RRsets
 * ({base}/domains/ZONE/records/NAME, "@" for the apex: all its types,
 * one array); replace() is one PUT of each type's RRset
 * (.../records/NAME/TYPE with {"rrset_values", "rrset_ttl"}), or a
 * DELETE of a type with no record left.  A and AAAA are two RRsets: two
 * calls, not one transaction.  LiveDNS answers 404 both for a name
 * without records and for a domain it does not serve; the domain's own
 * GET ({base}/domains/ZONE) tells which.
 *
 * A CNAME is an RRset too, its one value the target with a final dot (a
 * value without one is relative to the zone, as LiveDNS reads it).
 * LiveDNS refuses a CNAME beside other records of the name, so per-type
 * calls could only switch through a name with neither.  A domain with a
 * `cname` endpoint reads the name's records first; when the update
 * turns addresses into a CNAME or back, it is one PUT of the name
 * ({base}/domains/ZONE/records/NAME with {"items": [...]}), which
 * replaces every record of the name at once: the other types it held
 * are written back as they were, and the name never holds both, nor
 * neither.
 *
 * https://api.gandi.net/docs/livedns/
 *
 * The personal access token travels only in the Authorization header.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config.h"
#include "http.h"
#include "provider.h"
#include "providers/api.h"
#include "rrset.h"
#include "util.h"

static const struct provider_key gandi_keys[] = {
	{ "apiToken", PK_REQUIRED | PK_SECRET },
	{ "zone", PK_REQUIRED },
	{ "baseUrl", 0 },
	{ "timeout", 0 },
	{ NULL, 0 }
};

struct gandi {
	struct api	 api;
	char		*domain_url;	/* {base}/domains/ZONE */
};

/*
 * The message of an error answer: {"code", "message", "object",
 * "cause"}, with "errors": [{"location", "name", "description"}] for a
 * request that fails validation.
 */
static const struct api_errtext gandi_err = {
	.form = {
		{ .in = "errors", .in_first = 1, .code = "name",
		    .msg = "description" },
		{ .msg = "message" },
	},
};

static int
gandi_errtext(const char *buf, size_t len, char *out, size_t outlen)
{
	return api_errtext(&gandi_err, buf, len, out, outlen);
}

static const struct api_def gandi_api = {
	.who = "Gandi LiveDNS",
	.base_url = "https://api.gandi.net/v5/livedns",
	.auth_key = "apiToken",
	.auth = "Authorization: Bearer ",
	.zone_key = "zone",
	.errtext = gandi_errtext,
	.auth_hint = "check apiToken (a personal access token with "
	    "\"Manage domain name technical configurations\" on the "
	    "domain)",
};

/*
 * The name's RRsets: an array of {"rrset_type", "rrset_ttl",
 * "rrset_values": [...], ...}; a CNAME's one value "host.example." or
 * a name relative to the zone.
 */
static const struct rrset_json gandi_json = {
	.item = "record", .type = "rrset_type", .ttl = "rrset_ttl",
	.values = "rrset_values", .value = "value",
};

static int
gandi_parse_records(const char *zone, const char *buf, size_t len,
    struct rrset *sets, size_t nsets, char *err, size_t errlen)
{
	struct rrset_json js = gandi_json;

	js.origin = zone;
	return rrset_parse_json(buf, len, &js, sets, nsets, err, errlen);
}

static int
gandi_check(const struct provider_cfg *pc, const char **key, char *err,
    size_t errlen)
{
	if (api_check_token_word(pc, "apiToken", key, err, errlen) == -1)
		return -1;
	if (provider_check_zone(pc, "zone", key, err, errlen) == -1)
		return -1;
	return api_check_url_timeout(pc, key, err, errlen);
}

static void
gandi_free(void *priv)
{
	struct gandi *gd = priv;

	if (gd == NULL)
		return;
	free(gd->domain_url);
	api_free(&gd->api);
}

static void *
gandi_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct gandi *gd;

	if ((gd = api_create(sizeof(*gd), &gandi_api, pc, err, errlen)) ==
	    NULL)
		return NULL;
	gd->domain_url = xconcat(gd->api.base, "/domains/", gd->api.zone, "",
	    "");
	return gd;
}

/* {domain_url}/records/NAME[/TYPE], NAME "@" for the apex; malloc'd. */
static char *
records_url(const struct gandi *gd, const char *fqdn, const char *type)
{
	char *name = api_relname(&gd->api, fqdn), *url;

	url = xconcat(gd->domain_url, "/records/", name[0] != '\0' ? name : "@",
	    type != NULL ? "/" : "", type != NULL ? type : "");
	free(name);
	return url;
}

static enum perr
gd_call(const struct gandi *gd, const char *method, const char *url,
    const char *body, long want, struct http_resp *rs, char *err,
    size_t errlen)
{
	struct http_req rq = {
		.method = method, .url = url, .body = body, .want = want,
	};

	return api_call(&gd->api, &rq, rs, err, errlen);
}

/*
 * After a 404 about a name's records: PERR_OK when the domain is there
 * (the name just has none), else the class of the domain's own GET.
 */
static enum perr
domain_there(const struct gandi *gd, char *err, size_t errlen)
{
	struct http_resp rs;
	enum perr e;

	e = gd_call(gd, "GET", gd->domain_url, NULL, 200, &rs, err, errlen);
	if (e == PERR_NOTFOUND)
		snprintf(err, errlen, "Gandi LiveDNS at %s: 404 Not Found: "
		    "LiveDNS does not serve %s for apiToken (check zone)",
		    gd->domain_url, gd->api.zone);
	http_resp_free(&rs);
	return e;
}

static enum perr
gandi_read(void *priv, const char *fqdn, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	struct gandi *gd = priv;
	struct http_resp rs;
	char why[256], *url = records_url(gd, fqdn, NULL);
	size_t k;
	enum perr e;

	for (k = 0; k < nsets; k++)
		rrset_clear(&sets[k]);
	api_begin(&gd->api);
	e = gd_call(gd, "GET", url, NULL, 200, &rs, err, errlen);
	if (e == PERR_OK && gandi_parse_records(gd->api.zone, rs.body, rs.len,
	    sets, nsets, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "Gandi LiveDNS at %s: unexpected answer: "
		    "%s", url, why);
		e = PERR_INVALID;
	} else if (e == PERR_NOTFOUND)
		e = domain_there(gd, err, errlen);
	http_resp_free(&rs);
	free(url);
	return e;
}

/*
 * {"rrset_values": [...], "rrset_ttl": N}, with "rrset_type" too when
 * typed (an item of the name's PUT); NULL: no memory.
 */
static json_t *
rrset_obj(const struct rrset *set, int typed)
{
	json_t *o, *vals = json_array();
	size_t i;
	char *fq;

	for (i = 0; vals != NULL && i < set->addrs.n; i++)
		if (json_array_append_new(vals,
		    json_string(set->addrs.v[i].s)) == -1)
			break;
	/* Absolute: without its dot LiveDNS would read it in the zone. */
	if (vals != NULL && set->type == RR_CNAME && set->target != NULL) {
		fq = xconcat(set->target, ".", "", "", "");
		json_array_append_new(vals, json_string(fq));
		free(fq);
	}
	o = json_pack("{s:o, s:I}", "rrset_values", vals, "rrset_ttl",
	    (json_int_t)set->ttl);
	if (o != NULL && json_array_size(json_object_get(o, "rrset_values")) !=
	    (set->type == RR_CNAME ? 1 : set->addrs.n)) {
		json_decref(o);
		o = NULL;
	}
	if (o != NULL && typed && json_object_set_new(o, "rrset_type",
	    json_string(rrtype_str(set->type))) == -1) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

/* The JSON of o, malloc'd, o released; NULL: no memory. */
static char *
dump_free(json_t *o)
{
	char *s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	return s;
}

/* Every set, each in its own call, in the order given. */
static enum perr
replace_each(struct gandi *gd, const char *fqdn, const struct rrset *sets,
    size_t nsets, const int *skip, char *err, size_t errlen)
{
	struct http_resp rs;
	char *url, *body;
	size_t i;
	enum perr e = PERR_OK;

	/* In the order given; the first failure ends the update. */
	for (i = 0; i < nsets && e == PERR_OK; i++) {
		if (skip != NULL && skip[i])
			continue;
		url = records_url(gd, fqdn, rrtype_str(sets[i].type));
		body = NULL;
		if (rrset_empty(&sets[i])) {
			e = gd_call(gd, "DELETE", url, NULL, 204, &rs, err,
			    errlen);
			/* Nothing to delete is what was wanted. */
			if (e == PERR_NOTFOUND)
				e = domain_there(gd, err, errlen);
		} else if ((body = dump_free(rrset_obj(&sets[i], 0))) == NULL) {
			snprintf(err, errlen, "Gandi LiveDNS: cannot build the "
			    "request for %s", fqdn);
			e = PERR_TEMP;
			memset(&rs, 0, sizeof(rs));
		} else
			e = gd_call(gd, "PUT", url, body, 201, &rs, err,
			    errlen);
		http_resp_free(&rs);
		free(body);
		free(url);
	}
	return e;
}

/*
 * The name's records as LiveDNS lists them: an array, empty when the
 * name has none (404, the domain served).  NULL with err set on failure.
 */
static json_t *
name_records(struct gandi *gd, const char *fqdn, enum perr *e, char *err,
    size_t errlen)
{
	struct http_resp rs;
	json_t *arr = NULL;
	char *url = records_url(gd, fqdn, NULL);

	*e = gd_call(gd, "GET", url, NULL, 200, &rs, err, errlen);
	if (*e == PERR_OK) {
		arr = json_loadb(rs.body, rs.len, JSON_REJECT_DUPLICATES, NULL);
		if (!json_is_array(arr)) {
			snprintf(err, errlen, "Gandi LiveDNS at %s: unexpected "
			    "answer: not an array of records", url);
			json_decref(arr);
			arr = NULL;
			*e = PERR_INVALID;
		}
	} else if (*e == PERR_NOTFOUND &&
	    (*e = domain_there(gd, err, errlen)) == PERR_OK)
		arr = json_array();
	http_resp_free(&rs);
	free(url);
	return arr;
}

/* The index of the set of type t (a string) in sets, or -1. */
static int
set_of(const struct rrset *sets, size_t nsets, json_t *t)
{
	size_t i;

	for (i = 0; json_is_string(t) && i < nsets; i++)
		if (strcmp(json_string_value(t), rrtype_str(sets[i].type)) == 0)
			return (int)i;
	return -1;
}

/*
 * A domain that may hold a CNAME (nsets at most RR_NTYPES).  From the
 * name's records: a switch between a CNAME and addresses is one PUT of
 * the whole name (records of other types written back as listed);
 * anything else the calls of the types held or wanted, no more.
 */
static enum perr
replace_cname(struct gandi *gd, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct http_resp rs;
	json_t *cur, *items = NULL, *o, *it, *doc = NULL;
	char *url = NULL, *body = NULL;
	int skip[RR_NTYPES], had_cname = 0, had_addr = 0, want_cname = 0;
	int want_addr = 0, k;
	size_t i;
	enum perr e;

	memset(&rs, 0, sizeof(rs));
	if ((cur = name_records(gd, fqdn, &e, err, errlen)) == NULL)
		return e;
	for (i = 0; i < nsets && i < RR_NTYPES; i++) {
		skip[i] = rrset_empty(&sets[i]);
		if (!skip[i])
			*(sets[i].type == RR_CNAME ? &want_cname : &want_addr) = 1;
	}
	json_array_foreach(cur, i, o) {
		if ((k = set_of(sets, nsets, json_object_get(o, "rrset_type")))
		    == -1)
			continue;
		skip[k] = 0;		/* held: written or deleted */
		*(sets[k].type == RR_CNAME ? &had_cname : &had_addr) = 1;
	}
	if (!((had_cname && want_addr) || (had_addr && want_cname))) {
		e = replace_each(gd, fqdn, sets, nsets, skip, err, errlen);
		goto out;
	}
	if ((items = json_array()) == NULL)
		goto nomem;
	/* The name's other types, as they are. */
	json_array_foreach(cur, i, o) {
		if (set_of(sets, nsets, json_object_get(o, "rrset_type")) != -1)
			continue;
		it = json_pack("{s:O, s:O, s:O}", "rrset_type",
		    json_object_get(o, "rrset_type"), "rrset_ttl",
		    json_object_get(o, "rrset_ttl"), "rrset_values",
		    json_object_get(o, "rrset_values"));
		if (it == NULL || json_array_append_new(items, it) == -1)
			goto nomem;
	}
	for (i = 0; i < nsets; i++)
		if (!rrset_empty(&sets[i]) && ((it = rrset_obj(&sets[i], 1)) ==
		    NULL || json_array_append_new(items, it) == -1))
			goto nomem;
	url = records_url(gd, fqdn, NULL);
	if ((doc = json_pack("{s:O}", "items", items)) == NULL ||
	    (body = json_dumps(doc, JSON_COMPACT)) == NULL)
		goto nomem;
	e = gd_call(gd, "PUT", url, body, 201, &rs, err, errlen);
	goto out;
nomem:
	snprintf(err, errlen, "Gandi LiveDNS: cannot build the request for %s",
	    fqdn);
	e = PERR_TEMP;
out:
	http_resp_free(&rs);
	json_decref(doc);
	json_decref(items);
	json_decref(cur);
	free(body);
	free(url);
	return e;
}

static enum perr
gandi_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct gandi *gd = priv;
	size_t i;

	api_begin(&gd->api);
	/* The first CNAME set, if any: a domain with a `cname` endpoint. */
	i = 0;
	while (i < nsets && sets[i].type != RR_CNAME)
		i++;
	return i < nsets && nsets <= RR_NTYPES ? replace_cname(gd, fqdn, sets,
	    nsets, err, errlen) : replace_each(gd, fqdn, sets, nsets, NULL, err,
	    errlen);
}

const struct provider_ops gandi_ops = {
	.type = "gandi",
	.keys = gandi_keys,
	/*
	 * A and AAAA are two RRsets: two calls, not one transaction; the
	 * switch to or from a CNAME is one call of the whole name.
	 */
	.caps = PCAP_CNAME,
	.ttl_min = 300,
	.ttl_max = 2592000,
	.zone_key = "zone",
	.check = gandi_check,
	.create = gandi_create,
	.read = gandi_read,
	.replace = gandi_replace,
	.free = gandi_free,
};
