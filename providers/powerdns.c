/*
 * PowerDNS Authoritative HTTP API (libcurl easy interface, jansson).
 *
 * replace() is one PATCH of the zone with one RRset per family and
 * changetype REPLACE; PowerDNS applies all RRsets of a PATCH in one
 * transaction (all or nothing), and "records": [] deletes an RRset.
 * read() is one GET of the zone restricted to the name (rrset_name).
 *
 * https://doc.powerdns.com/authoritative/http-api/zone.html
 *
 * The API key travels only in the X-API-Key header: it never appears in
 * a URL, an error or a log line.  Answers are untrusted: bodies are
 * capped, parsed strictly, and each parser takes (buffer, length) so it
 * can be fuzzed on its own.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <jansson.h>

#include "config.h"
#include "http.h"
#include "provider.h"
#include "providers/api.h"
#include "util.h"

#define PD_DEFAULT_TIMEOUT	"10s"

static const struct provider_key powerdns_keys[] = {
	{ "baseUrl", PK_REQUIRED },
	{ "apiKey", PK_REQUIRED | PK_SECRET },
	{ "serverId", 0 },
	{ "zone", PK_REQUIRED },
	{ "timeout", 0 },
	{ NULL, 0 }
};

struct pdns {
	struct api	 api;
	char		*zone_url;	/* .../servers/ID/zones/ZONE. */
	char		*notfound;	/* the hint of a 404, naming the zone */
};

static int	parse_error(const char *buf, size_t len, char *out,
		    size_t outlen);

static const struct api_def pdns_api = {
	.who = "PowerDNS",
	.auth_key = "apiKey",
	.auth = "X-API-Key: ",
	.zone_key = "zone",
	.timeout = PD_DEFAULT_TIMEOUT,
	.errtext = parse_error,
	.auth_hint = "check apiKey",
};

static int
powerdns_check(const struct provider_cfg *pc, const char **key, char *err,
    size_t errlen)
{
	const char *v;
	int rv = -1;

	*key = "baseUrl";
	if (http_check_base_url("baseUrl", provider_cfg_get(pc, "baseUrl"),
	    err, errlen) == -1)
		goto out;
	if (provider_check_header_secret(pc, "apiKey", key, err,
	    errlen) == -1)
		goto out;
	*key = "serverId";
	v = provider_cfg_get(pc, "serverId");
	if (v != NULL && v[0] == '\0') {
		snprintf(err, errlen, "serverId is empty");
		goto out;
	}
	if (provider_check_zone(pc, "zone", key, err, errlen) == -1)
		goto out;
	if (provider_check_timeout(pc, key, err, errlen) == -1)
		goto out;
	*key = NULL;
	rv = 0;
out:
	return rv;
}

static void
pdns_free(struct pdns *pd)
{
	if (pd == NULL)
		return;
	free(pd->zone_url);
	free(pd->notfound);
	api_free(&pd->api);
}

static void *
powerdns_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct pdns *pd;
	const char *v;
	char *sid = NULL, *zid = NULL, *t;

	if ((pd = api_create(sizeof(*pd), &pdns_api, pc, err, errlen)) == NULL)
		return NULL;
	v = provider_cfg_get(pc, "serverId");
	sid = curl_easy_escape(NULL, v != NULL ? v : "localhost", 0);
	zid = curl_easy_escape(NULL, pd->api.zone, 0);
	if (sid == NULL || zid == NULL) {
		snprintf(err, errlen, "out of memory");
		pdns_free(pd);
		pd = NULL;
		goto out;
	}
	t = xconcat(pd->api.base, "/api/v1/servers/", sid, "/zones/", zid);
	pd->zone_url = xconcat(t, ".", "", "", "");
	free(t);
	pd->notfound = xconcat("zone ", pd->api.zone, ". not found (or wrong "
	    "serverId)", "", "");
out:
	curl_free(sid);
	curl_free(zid);
	return pd;
}

/*
 * The `error` text of a PowerDNS error document
 * ({"error": "...", "errors": [...]}); -1 when there is none.
 */
static int
parse_error(const char *buf, size_t len, char *out, size_t outlen)
{
	json_t *root, *e;
	json_error_t je;
	int rv = -1;

	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je)) == NULL)
		return -1;
	if (json_is_object(root) && (e = json_object_get(root, "error")) !=
	    NULL && json_is_string(e)) {
		snprintf(out, outlen, "%s", json_string_value(e));
		text_printable(out);
		rv = 0;
	}
	json_decref(root);
	return rv;
}

/*
 * One API call.  Success is the status want (any 2xx when want is 0)
 * with the answer in *rs; anything else is classified into a perr with
 * the URL and status in err.
 */
static enum perr
pd_call(const struct pdns *pd, const char *method, const char *url,
    const char *json, long want, struct http_resp *rs, char *err,
    size_t errlen)
{
	struct http_req rq = {
		.method = method, .url = url, .body = json, .want = want,
		.notfound_hint = pd->notfound,
	};

	return api_call(&pd->api, &rq, rs, err, errlen);
}

/*
 * Fills sets from a zone document restricted to one name
 * ({"rrsets": [{"name", "type", "ttl", "records": [{"content",
 * "disabled"}]}], ...}).  Every RRset must have the documented types;
 * only A and AAAA of name (absolute, lower case) are kept, and disabled
 * records are skipped.  Returns 0, or -1 with the problem in err.
 */
static int
parse_zone(const char *buf, size_t len, const char *name, struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	json_t *root, *rrsets, *rs, *recs, *rec, *jname, *jtype, *jttl;
	json_t *content, *disabled;
	struct addr a;
	size_t i, j, k;
	int fam, rv = -1;

	if ((root = api_json_load(buf, len, err, errlen)) == NULL)
		return -1;
	if ((rrsets = api_json_array(root, "rrsets", err, errlen)) == NULL)
		goto out;
	json_array_foreach(rrsets, i, rs) {
		jname = json_object_get(rs, "name");
		jtype = json_object_get(rs, "type");
		jttl = json_object_get(rs, "ttl");
		recs = json_object_get(rs, "records");
		if (!json_is_object(rs) || !json_is_string(jname) ||
		    !json_is_string(jtype) || !json_is_array(recs) ||
		    (jttl != NULL && !json_is_integer(jttl))) {
			snprintf(err, errlen, "rrsets[%zu] lacks name, type, "
			    "ttl or records of the right type", i);
			goto out;
		}
		if (strcasecmp(json_string_value(jname), name) != 0)
			continue;
		if (strcmp(json_string_value(jtype), "A") == 0)
			fam = 4;
		else if (strcmp(json_string_value(jtype), "AAAA") == 0)
			fam = 6;
		else
			continue;
		for (k = 0; k < nsets && sets[k].type !=
		    rrtype_of_family(fam); k++)
			;
		if (k == nsets)
			continue;
		json_array_foreach(recs, j, rec) {
			content = json_object_get(rec, "content");
			disabled = json_object_get(rec, "disabled");
			if (!json_is_object(rec) || !json_is_string(content) ||
			    (disabled != NULL && !json_is_boolean(disabled))) {
				snprintf(err, errlen, "rrsets[%zu].records[%zu] "
				    "lacks content or disabled of the right "
				    "type", i, j);
				goto out;
			}
			if (json_is_true(disabled))
				continue;
			if (addr_parse(json_string_value(content), &a) == -1 ||
			    a.family != fam) {
				snprintf(err, errlen, "rrsets[%zu].records[%zu]"
				    ": \"%.64s\" is not an IPv%d address", i, j,
				    json_string_value(content), fam);
				goto out;
			}
			if (rrset_read_add(&sets[k], &a, err, errlen) == -1)
				goto out;
		}
		rrset_read_end(&sets[k]);
		if (jttl == NULL || json_integer_value(jttl) < 0 ||
		    json_integer_value(jttl) > 2147483647) {
			snprintf(err, errlen, "rrsets[%zu]: bad ttl", i);
			goto out;
		}
		if (sets[k].addrs.n > 0)
			sets[k].ttl = (long)json_integer_value(jttl);
	}
	rv = 0;
out:
	/* The reason quotes the answer, and goes to the log. */
	if (rv == -1)
		text_printable(err);
	json_decref(root);
	return rv;
}

static enum perr
powerdns_read(void *priv, const char *fqdn, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	struct pdns *pd = priv;
	struct http_resp rs;
	char *name, *esc = NULL, *url = NULL, perr_[256];
	size_t i, len;
	enum perr rv = PERR_TEMP;

	api_begin(&pd->api);
	memset(&rs, 0, sizeof(rs));
	for (i = 0; i < nsets; i++) {
		sets[i].ttl = 0;
		addrset_free(&sets[i].addrs);
	}
	name = api_absname(fqdn);
	if ((esc = curl_easy_escape(NULL, name, 0)) == NULL) {
		snprintf(err, errlen, "PowerDNS: out of memory");
		goto out;
	}
	len = strlen(pd->zone_url) + strlen(esc) + 32;
	url = xmalloc(len);
	snprintf(url, len, "%s?rrset_name=%s", pd->zone_url, esc);
	if ((rv = pd_call(pd, "GET", url, NULL, 0, &rs, err, errlen)) !=
	    PERR_OK)
		goto out;
	if (parse_zone(rs.body, rs.len, name, sets, nsets, perr_,
	    sizeof(perr_)) == -1) {
		for (i = 0; i < nsets; i++) {
			sets[i].ttl = 0;
			addrset_free(&sets[i].addrs);
		}
		snprintf(err, errlen, "PowerDNS at %s: unexpected answer: %s",
		    url, perr_);
		rv = PERR_INVALID;
		goto out;
	}
	rv = PERR_OK;
out:
	http_resp_free(&rs);
	free(url);
	curl_free(esc);
	free(name);
	return rv;
}

/* {"rrsets": [{name, type, ttl, changetype REPLACE, records}, ...]} */
static char *
patch_body(const char *name, const struct rrset *sets, size_t nsets)
{
	json_t *root, *rrsets, *recs;
	size_t i, j;
	char *s = NULL;

	root = json_object();
	rrsets = json_array();
	if (root == NULL || rrsets == NULL ||
	    json_object_set_new(root, "rrsets", rrsets) == -1)
		goto out;
	for (i = 0; i < nsets; i++) {
		if ((recs = json_array()) == NULL)
			goto out;
		for (j = 0; j < sets[i].addrs.n; j++)
			json_array_append_new(recs, json_pack("{s:s, s:b}",
			    "content", sets[i].addrs.v[j].s, "disabled", 0));
		if (json_array_size(recs) != sets[i].addrs.n ||
		    json_array_append_new(rrsets, json_pack("{s:s, s:s, "
		    "s:I, s:s, s:o}", "name", name, "type",
		    rrtype_str(sets[i].type), "ttl", (json_int_t)sets[i].ttl,
		    "changetype", "REPLACE", "records", recs)) == -1)
			goto out;
	}
	s = json_dumps(root, JSON_COMPACT);
out:
	json_decref(root);
	return s;
}

static enum perr
powerdns_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct pdns *pd = priv;
	struct http_resp rs;
	char *name, *json;
	enum perr rv;

	api_begin(&pd->api);
	memset(&rs, 0, sizeof(rs));
	name = api_absname(fqdn);
	if ((json = patch_body(name, sets, nsets)) == NULL) {
		snprintf(err, errlen, "PowerDNS: cannot build the request for "
		    "%s", fqdn);
		rv = PERR_TEMP;
		goto out;
	}
	/* PowerDNS answers a PATCH that worked with 204 No Content. */
	rv = pd_call(pd, "PATCH", pd->zone_url, json, 204, &rs, err, errlen);
out:
	http_resp_free(&rs);
	free(json);
	free(name);
	return rv;
}

static void
powerdns_free(void *priv)
{
	pdns_free(priv);
}

const struct provider_ops powerdns_ops = {
	.type = "powerdns",
	.keys = powerdns_keys,
	/* A PATCH is one transaction. */
	.caps = PCAP_ATOMIC,
	.ttl_min = 0,
	.ttl_max = 2147483647,
	.zone_key = "zone",
	.check = powerdns_check,
	.create = powerdns_create,
	.read = powerdns_read,
	.replace = powerdns_replace,
	.free = powerdns_free,
};
