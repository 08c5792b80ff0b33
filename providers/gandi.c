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

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config.h"
#include "http.h"
#include "provider.h"
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
	char		*domain_url;	/* {base}/domains/ZONE */
	char		*zone;		/* lower case, no trailing dot */
	char		*auth_hdr;	/* "Authorization: Bearer ..." */
	long long	 timeout_ms;
	long long	 deadline;	/* mono_ms() bound of this operation's waits */
};

/*
 * The message of an error answer: {"code", "message", "object",
 * "cause"}, with "errors": [{"location", "name", "description"}] for a
 * request that fails validation.
 */
static int
gandi_errtext(const char *buf, size_t len, char *out, size_t outlen)
{
	json_t *root, *e, *name, *desc, *msg;
	json_error_t je;
	int rv = -1;

	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je)) == NULL)
		return -1;
	e = json_array_get(json_object_get(root, "errors"), 0);
	name = json_object_get(e, "name");
	desc = json_object_get(e, "description");
	msg = json_object_get(root, "message");
	if (json_is_string(name) && json_is_string(desc)) {
		snprintf(out, outlen, "%s: %s", json_string_value(name),
		    json_string_value(desc));
		rv = 0;
	} else if (json_is_string(msg)) {
		snprintf(out, outlen, "%s", json_string_value(msg));
		rv = 0;
	}
	if (rv == 0)
		text_printable(out);
	json_decref(root);
	return rv;
}

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
	const char *v;

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
gandi_free(void *priv)
{
	struct gandi *gd = priv;

	if (gd == NULL)
		return;
	free(gd->domain_url);
	free(gd->zone);
	free_secret(gd->auth_hdr);
	free(gd);
}

static void *
gandi_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct gandi *gd = xcalloc(1, sizeof(*gd));
	const char *v = provider_cfg_get(pc, "timeout");
	char *base;
	size_t i, len;

	if (parse_duration(v != NULL ? v : "10s", &gd->timeout_ms) == -1) {
		snprintf(err, errlen, "timeout: not a duration");
		gandi_free(gd);
		return NULL;
	}
	gd->zone = xstrdup(provider_cfg_get(pc, "zone"));
	len = strlen(gd->zone);
	if (len > 1 && gd->zone[len - 1] == '.')
		gd->zone[--len] = '\0';
	for (i = 0; i < len; i++)
		gd->zone[i] = (char)tolower((unsigned char)gd->zone[i]);
	base = xstrdup((v = provider_cfg_get(pc, "baseUrl")) != NULL ? v :
	    "https://api.gandi.net/v5/livedns");
	for (len = strlen(base); len > 0 && base[len - 1] == '/'; len--)
		base[len - 1] = '\0';
	gd->domain_url = xconcat(base, "/domains/", gd->zone, "", "");
	free(base);
	v = provider_cfg_get(pc, "apiToken");
	len = strlen(v) + 32;
	gd->auth_hdr = xmalloc(len);
	snprintf(gd->auth_hdr, len, "Authorization: Bearer %s", v);
	return gd;
}

/* {domain_url}/records/NAME[/TYPE], NAME "@" for the apex; malloc'd. */
static char *
records_url(const struct gandi *gd, const char *fqdn, const char *type)
{
	size_t flen = strlen(fqdn), zlen = strlen(gd->zone);
	char *name = xstrdup(fqdn), *url;

	if (flen > 0 && name[flen - 1] == '.')
		name[--flen] = '\0';
	/* The core checked that fqdn is in the zone. */
	name[flen > zlen ? flen - zlen - 1 : 0] = '\0';
	for (flen = 0; name[flen] != '\0'; flen++)
		name[flen] = (char)tolower((unsigned char)name[flen]);
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
	const char *hdrs[] = { gd->auth_hdr, "Accept: application/json",
	    body != NULL ? "Content-Type: application/json" : NULL, NULL };
	struct http_req rq = {
		.who = "Gandi LiveDNS", .method = method, .url = url,
		.headers = hdrs, .body = body,
		.body_len = body != NULL ? strlen(body) : 0,
		.timeout_ms = gd->timeout_ms, .deadline = gd->deadline,
		.want = want,
		.errtext = gandi_errtext,
		.auth_hint = "check apiToken (a personal access token with "
		    "\"Manage domain name technical configurations\" on the "
		    "domain)",
	};

	return http_call(&rq, rs, err, errlen);
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
		    gd->domain_url, gd->zone);
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
	/* A short Retry-After is waited out within the timeout. */
	gd->deadline = mono_ms() + gd->timeout_ms;
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

	gd->deadline = mono_ms() + gd->timeout_ms;
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
