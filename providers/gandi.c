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
 * "rrset_values": [...], ...}.
 */
static const struct rrset_json gandi_json = {
	.item = "record", .type = "rrset_type", .ttl = "rrset_ttl",
	.values = "rrset_values", .value = "value",
};

static int
gandi_parse_records(const char *buf, size_t len, struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	return rrset_parse_json(buf, len, &gandi_json, sets, nsets,
	    err, errlen);
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
	if (e == PERR_OK && gandi_parse_records(rs.body, rs.len, sets, nsets,
	    why, sizeof(why)) == -1) {
		snprintf(err, errlen, "Gandi LiveDNS at %s: unexpected answer: "
		    "%s", url, why);
		e = PERR_INVALID;
	} else if (e == PERR_NOTFOUND)
		e = domain_there(gd, err, errlen);
	http_resp_free(&rs);
	free(url);
	return e;
}

/* {"rrset_values": [...], "rrset_ttl": N}, malloc'd; NULL: no memory. */
static char *
put_body(const struct rrset *set)
{
	json_t *o, *vals = json_array();
	size_t i;
	char *s = NULL;

	for (i = 0; vals != NULL && i < set->addrs.n; i++)
		if (json_array_append_new(vals,
		    json_string(set->addrs.v[i].s)) == -1)
			break;
	o = json_pack("{s:o, s:I}", "rrset_values", vals, "rrset_ttl",
	    (json_int_t)set->ttl);
	if (o != NULL && json_array_size(vals) == set->addrs.n)
		s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

static enum perr
gandi_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct gandi *gd = priv;
	struct http_resp rs;
	char *url, *body;
	size_t i;
	enum perr e = PERR_OK;

	api_begin(&gd->api);
	/* In the order given; the first failure ends the update. */
	for (i = 0; i < nsets && e == PERR_OK; i++) {
		url = records_url(gd, fqdn, rrtype_str(sets[i].type));
		body = NULL;
		if (sets[i].addrs.n == 0) {
			e = gd_call(gd, "DELETE", url, NULL, 204, &rs, err,
			    errlen);
			/* Nothing to delete is what was wanted. */
			if (e == PERR_NOTFOUND)
				e = domain_there(gd, err, errlen);
		} else if ((body = put_body(&sets[i])) == NULL) {
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

const struct provider_ops gandi_ops = {
	.type = "gandi",
	.keys = gandi_keys,
	/* A and AAAA are two RRsets: two calls, not one transaction. */
	.caps = 0,
	.ttl_min = 300,
	.ttl_max = 2592000,
	.zone_key = "zone",
	.check = gandi_check,
	.create = gandi_create,
	.read = gandi_read,
	.replace = gandi_replace,
	.free = gandi_free,
};
