/*
 * Azure DNS through Azure Resource Manager, on the HTTP layer (http.h).
 *
 * A token first: OAuth 2.0 client credentials at the Microsoft identity
 * platform (POST {authorityUrl}/{tenantId}/oauth2/v2.0/token, scope
 * https://management.azure.com/.default), fetched once per run when the
 * first call needs it.  Then one record set per type, at
 * {baseUrl}/subscriptions/S/resourceGroups/G/providers/Microsoft.Network
 * /dnsZones/Z/{A|AAAA|CNAME}/{relative name}?api-version=2018-05-01: read
 * is a GET (404 NotFound: no such set), replace a PUT of the whole set,
 * or a DELETE when a type has nothing left.  A record set read in this
 * run is written with If-Match (its etag) or, when there was none,
 * If-None-Match: *, so a change made meanwhile by someone else fails
 * the update (412) instead of being overwritten; the next run reads again.
 * Each type is its own record set: one call each, not atomic.
 *
 * A CNAME record set holds one record, {"CNAMERecord": {"cname": HOST}},
 * and Azure refuses it beside any other record set of the name, and
 * any record set beside it (409 Conflict).  No call swaps one type for
 * another, so between a CNAME and addresses the old type's sets are
 * deleted before the new one is put: the name never holds both, but
 * holds neither for the moment between.  A PUT refused after those
 * deletions fails the update, and the next run, which reads again,
 * puts it again.
 *
 * https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-client-creds-grant-flow
 * https://learn.microsoft.com/en-us/rest/api/dns/record-sets
 *
 * The client secret travels only in the token request's body, the token
 * only in the Authorization header: neither is in a URL or a message.
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

#define AZ_API_VERSION	"2018-05-01"
#define AZ_SCOPE	"https://management.azure.com/.default"
#define AZ_ETAG_MAX	128

static const struct provider_key azure_keys[] = {
	{ "subscriptionId", PK_REQUIRED },
	{ "resourceGroupName", PK_REQUIRED },
	{ "zoneName", PK_REQUIRED },
	{ "tenantId", PK_REQUIRED },
	{ "clientId", PK_REQUIRED },
	{ "clientSecret", PK_REQUIRED | PK_SECRET },
	{ "baseUrl", 0 },
	{ "authorityUrl", 0 },
	{ "timeout", 0 },
	{ NULL, 0 }
};

struct azure {
	struct api	 api;		/* api.auth_hdr: once logged in */
	char		*zone_url;	/* .../dnsZones/ZONE */
	char		*token_url;	/* .../TENANT/oauth2/v2.0/token */
	char		*form;		/* the token request: holds the secret */
	/* A login refused is refused for the whole run: asked once. */
	enum perr	 login_e;
	char		 login_err[512];
	/* What read() saw, for If-Match: etag per type ("" none). */
	char		*seen_name;
	int		 seen[RR_NTYPES];
	char		 etag[RR_NTYPES][AZ_ETAG_MAX];
};

/*
 * The message of an error answer: ARM's {"error": {"code", "message"}}
 * or {"code", "message"}, or the identity platform's {"error":
 * "invalid_client", "error_description": "AADSTS..."}.
 */
static const struct api_errtext azure_err = {
	.form = {
		{ .code = "error", .msg = "error_description", .final = 1 },
		{ .in = "error", .in_or_body = 1, .code = "code",
		    .msg = "message" },
	},
	/* AADSTS texts go on with trace and correlation ids. */
	.first_line = 1,
};

static int
azure_errtext(const char *buf, size_t len, char *out, size_t outlen)
{
	return api_errtext(&azure_err, buf, len, out, outlen);
}

/* The token is had by a login (azure_login()), not configured. */
static const struct api_def azure_api = {
	.who = "Azure DNS",
	.base_url = "https://management.azure.com",
	.zone_key = "zoneName",
	.errtext = azure_errtext,
	.keep_case = 1,
};

/* The "code" of an ARM error answer into out ("" when none). */
static void
azure_errcode(const char *buf, size_t len, char *out, size_t outlen)
{
	json_t *root, *e, *code;
	json_error_t je;

	out[0] = '\0';
	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je)) == NULL)
		return;
	e = json_object_get(root, "error");
	code = json_object_get(json_is_object(e) ? e : root, "code");
	if (json_is_string(code))
		snprintf(out, outlen, "%s", json_string_value(code));
	json_decref(root);
}

/* The access token of a token answer, or NULL with the reason in err. */
static char *
azure_parse_token(const char *buf, size_t len, char *err, size_t errlen)
{
	json_t *root, *tok, *type;
	const char *t;
	char *s = NULL;

	if ((root = api_json_load(buf, len, err, errlen)) == NULL)
		return NULL;
	tok = json_object_get(root, "access_token");
	type = json_object_get(root, "token_type");
	if (!json_is_string(tok) || !json_is_string(type) ||
	    strcasecmp(json_string_value(type), "Bearer") != 0) {
		snprintf(err, errlen, "no Bearer access_token");
		goto out;
	}
	/* It goes in a header: a line break would add another. */
	t = json_string_value(tok);
	if (t[0] == '\0' || strlen(t) > 16384 || strpbrk(t, "\r\n") != NULL) {
		snprintf(err, errlen, "access_token is empty, too long or "
		    "has a line break");
		goto out;
	}
	s = xstrdup(t);
out:
	json_decref(root);
	return s;
}

/* The member of a record set's properties that holds its records. */
static const char *
set_field(enum rrtype t)
{
	return t == RR_CNAME ? "CNAMERecord" : t == RR_AAAA ? "AAAARecords" :
	    "ARecords";
}

/*
 * A CNAME record set's one record ({"cname": HOST}; absent, null or
 * without cname in a set that holds none) into set->target, as struct
 * rrset holds it; 0, or -1 with the reason in err.
 */
static int
parse_cname(json_t *rec, struct rrset *set, char *err, size_t errlen)
{
	json_t *c;

	if (rec == NULL || json_is_null(rec))
		return 0;
	c = json_object_get(rec, "cname");
	if (!json_is_object(rec) || (c != NULL && !json_is_string(c))) {
		snprintf(err, errlen, "CNAMERecord is not {\"cname\": a host "
		    "name}");
		return -1;
	}
	if (c == NULL)
		return 0;
	set->target = xstrdup(json_string_value(c));
	if (!rrset_host_canon(set->target)) {
		snprintf(err, errlen, "CNAMERecord: cname is not a host name");
		free(set->target);
		set->target = NULL;
		return -1;
	}
	return 0;
}

/*
 * Fills set (its type set by the caller) and etag from a record set
 * ({"etag", "properties": {"TTL", "ARecords": [{"ipv4Address"}],
 * "AAAARecords": [{"ipv6Address"}] or "CNAMERecord": {"cname"}}}); 0,
 * or -1 with the reason in err.
 */
static int
azure_parse_recordset(const char *buf, size_t len, struct rrset *set,
    char *etag, size_t etaglen, char *err, size_t errlen)
{
	json_t *root, *props, *ttl, *recs, *rec, *ip, *jetag;
	const char *field = set_field(set->type);
	const char *key = set->type == RR_AAAA ? "ipv6Address" : "ipv4Address";
	int family = set->type == RR_AAAA ? 6 : 4;
	struct addr a;
	size_t i;
	int rv = -1;

	etag[0] = '\0';
	if ((root = api_json_load(buf, len, err, errlen)) == NULL)
		goto out;
	props = json_object_get(root, "properties");
	ttl = json_object_get(props, "TTL");
	recs = json_object_get(props, field);
	jetag = json_object_get(root, "etag");
	if (!json_is_object(props) || !json_is_integer(ttl) ||
	    json_integer_value(ttl) < 0 ||
	    json_integer_value(ttl) > 2147483647 ||
	    (set->type != RR_CNAME && recs != NULL && !json_is_null(recs) &&
	    !json_is_array(recs)) ||
	    (jetag != NULL && !json_is_string(jetag))) {
		snprintf(err, errlen, "no properties with a TTL and %s", field);
		goto out;
	}
	if (jetag != NULL) {
		/* Sent back in If-Match: one printable line, short. */
		if (strlen(json_string_value(jetag)) >= etaglen ||
		    strpbrk(json_string_value(jetag), "\r\n") != NULL) {
			snprintf(err, errlen, "etag is too long or has a line "
			    "break");
			goto out;
		}
		snprintf(etag, etaglen, "%s", json_string_value(jetag));
	}
	if (set->type == RR_CNAME) {
		if (parse_cname(recs, set, err, errlen) == -1)
			goto out;
		if (set->target != NULL)
			set->ttl = (long)json_integer_value(ttl);
		rv = 0;
		goto out;
	}
	json_array_foreach(recs, i, rec) {
		ip = json_object_get(rec, key);
		if (!json_is_string(ip) ||
		    addr_parse(json_string_value(ip), &a) == -1 ||
		    a.family != family) {
			snprintf(err, errlen, "%s[%zu] is not {\"%s\": an IPv%d "
			    "address}", field, i, key, family);
			goto out;
		}
		if (rrset_read_add(set, &a, err, errlen) == -1)
			goto out;
	}
	rrset_read_end(set);
	if (set->addrs.n > 0)
		set->ttl = (long)json_integer_value(ttl);
	rv = 0;
out:
	if (rv == -1) {
		rrset_clear(set);
		etag[0] = '\0';
		text_printable(err);
	}
	json_decref(root);
	return rv;
}

/* http:// or https://, no credentials, query or fragment; -1 if not. */
static int
azure_check(const struct provider_cfg *pc, const char **key, char *err,
    size_t errlen)
{
	static const char *const urls[] = { "baseUrl", "authorityUrl", NULL };
	static const char *const ids[] = { "subscriptionId",
	    "resourceGroupName", "zoneName", "tenantId", "clientId", NULL };
	const char *v;
	size_t i;

	for (i = 0; urls[i] != NULL; i++) {
		*key = urls[i];
		v = provider_cfg_get(pc, urls[i]);
		if (v != NULL && http_check_base_url(urls[i], v, err,
		    errlen) == -1)
			return -1;
	}
	/* Each goes in a URL path or a form: one word, no slash. */
	for (i = 0; ids[i] != NULL; i++) {
		*key = ids[i];
		v = provider_cfg_get(pc, ids[i]);
		if (strcmp(ids[i], "zoneName") == 0) {
			if (provider_check_zone(pc, ids[i], key, err,
			    errlen) == -1)
				return -1;
		} else if (v[0] == '\0' || strpbrk(v, "/?#%& \t\r\n") != NULL ||
		    strcmp(v, ".") == 0 || strcmp(v, "..") == 0) {
			snprintf(err, errlen, "%s: \"%s\" is empty or holds a "
			    "character it cannot have", ids[i], v);
			return -1;
		}
	}
	*key = "clientSecret";
	if (provider_cfg_get(pc, "clientSecret")[0] == '\0') {
		snprintf(err, errlen, "clientSecret is empty");
		return -1;
	}
	if (provider_check_timeout(pc, key, err, errlen) == -1)
		return -1;
	*key = NULL;
	return 0;
}

static void
azure_free(void *priv)
{
	struct azure *az = priv;

	if (az == NULL)
		return;
	free(az->zone_url);
	free(az->token_url);
	free_secret(az->form);
	free(az->seen_name);
	api_free(&az->api);
}

static void *
azure_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct azure *az;
	const char *v;
	char *base, *p1 = NULL, *id = NULL, *sec = NULL, *scope = NULL;
	size_t len;

	if ((az = api_create(sizeof(*az), &azure_api, pc, err, errlen)) ==
	    NULL)
		return NULL;
	p1 = xconcat(az->api.base, "/subscriptions/", provider_cfg_get(pc,
	    "subscriptionId"), "/resourceGroups/", provider_cfg_get(pc,
	    "resourceGroupName"));
	az->zone_url = xconcat(p1, "/providers/Microsoft.Network/dnsZones/",
	    az->api.zone, "", "");
	v = provider_cfg_get(pc, "authorityUrl");
	base = api_url_trimmed(v != NULL ? v : "https://login.microsoftonline.com");
	az->token_url = xconcat(base, "/", provider_cfg_get(pc, "tenantId"),
	    "/oauth2/v2.0/token", "");
	free(base);
	id = curl_easy_escape(NULL, provider_cfg_get(pc, "clientId"), 0);
	sec = curl_easy_escape(NULL, provider_cfg_get(pc, "clientSecret"), 0);
	scope = curl_easy_escape(NULL, AZ_SCOPE, 0);
	if (id == NULL || sec == NULL || scope == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	len = strlen(id) + strlen(sec) + strlen(scope) + 80;
	az->form = xmalloc(len);
	snprintf(az->form, len, "grant_type=client_credentials&client_id=%s&"
	    "client_secret=%s&scope=%s", id, sec, scope);
	explicit_bzero(sec, strlen(sec));
	curl_free(id);
	curl_free(sec);
	curl_free(scope);
	free(p1);
	return az;
fail:
	curl_free(id);
	curl_free(sec);
	curl_free(scope);
	free(p1);
	azure_free(az);
	return NULL;
}

/* The token, fetched at the first call that needs it. */
static enum perr
azure_login(struct azure *az, char *err, size_t errlen)
{
	static const char *const hdrs[] = { "Accept: application/json",
	    "Content-Type: application/x-www-form-urlencoded", NULL };
	struct http_req rq = {
		.who = "Azure login", .method = "POST", .url = az->token_url,
		.headers = hdrs, .body = az->form, .want = 200,
	};
	struct http_resp rs;
	char why[256], *tok = NULL;
	enum perr e;

	if (az->api.auth_hdr != NULL)
		return PERR_OK;
	if (az->login_e != PERR_OK) {
		snprintf(err, errlen, "%s", az->login_err);
		return az->login_e;
	}
	e = api_call(&az->api, &rq, &rs, err, errlen);
	/*
	 * The identity platform answers 400 for an unknown tenant or
	 * client, 401 for a wrong secret: either way the credentials.
	 */
	if (e == PERR_INVALID && rs.status == 400)
		e = PERR_AUTH;
	if (e == PERR_AUTH)
		str_append(err, errlen, " (check tenantId, clientId and "
		    "clientSecret)");
	if (e != PERR_OK)
		goto out;
	if ((tok = azure_parse_token(rs.body, rs.len, why, sizeof(why))) ==
	    NULL) {
		snprintf(err, errlen, "Azure login at %s: unexpected answer: "
		    "%s", az->token_url, why);
		e = PERR_INVALID;
		goto out;
	}
	az->api.auth_hdr = xconcat("Authorization: Bearer ", tok, "", "", "");
	free_secret(tok);
out:
	if (e == PERR_AUTH) {
		az->login_e = e;
		snprintf(az->login_err, sizeof(az->login_err), "%s", err);
	}
	/* The answer holds the token. */
	explicit_bzero(rs.body, rs.len);
	http_resp_free(&rs);
	return e;
}

/*
 * The record set's URL: zone_url/TYPE/relative name?api-version=...
 * The apex is "@" as it is, unescaped, as Azure's own clients send it
 * (dns.json marks the name x-ms-skip-url-encoding; RFC 3986 allows "@"
 * in a path).
 */
static char *
set_url(const struct azure *az, const char *fqdn, enum rrtype type)
{
	char *rel = api_relname(&az->api, fqdn), *esc = NULL, *path, *url;
	const char *name = "@";

	/* Out of memory to escape it: a host name needs no escape anyway. */
	if (rel[0] != '\0')
		name = (esc = curl_easy_escape(NULL, rel, 0)) != NULL ? esc : rel;
	path = xconcat(az->zone_url, "/", rrtype_str(type), "/", name);
	url = xconcat(path, "?api-version=", AZ_API_VERSION, "", "");
	curl_free(esc);
	free(path);
	free(rel);
	return url;
}

static enum perr
azure_read(void *priv, const char *fqdn, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	struct azure *az = priv;
	const char *hdrs[] = { NULL, "Accept: application/json", NULL };
	struct http_req rq = { .method = "GET", .headers = hdrs, .want = 200 };
	struct http_resp rs;
	char why[256], code[64], *url = NULL;
	size_t i;
	int k;
	enum perr e;

	api_begin(&az->api);
	free(az->seen_name);
	az->seen_name = xstrdup(fqdn);
	memset(az->seen, 0, sizeof(az->seen));
	if ((e = azure_login(az, err, errlen)) != PERR_OK)
		return e;
	hdrs[0] = az->api.auth_hdr;
	for (i = 0; i < nsets && e == PERR_OK; i++) {
		k = (int)sets[i].type;
		rrset_clear(&sets[i]);
		rq.url = url = set_url(az, fqdn, sets[i].type);
		e = api_call(&az->api, &rq, &rs, err, errlen);
		if (e == PERR_AUTH)
			str_append(err, errlen, " (clientId needs a role on the "
			    "zone: DNS Zone Contributor)");
		if (e == PERR_NOTFOUND) {
			/* No such record set is an empty one; no zone is not. */
			azure_errcode(rs.body, rs.len, code, sizeof(code));
			if (strcmp(code, "NotFound") == 0) {
				e = PERR_OK;
				az->etag[k][0] = '\0';
				az->seen[k] = 1;
			}
		} else if (e == PERR_OK) {
			if (azure_parse_recordset(rs.body, rs.len, &sets[i],
			    az->etag[k], AZ_ETAG_MAX, why, sizeof(why)) == -1) {
				snprintf(err, errlen, "Azure DNS at %s: "
				    "unexpected answer: %s", url, why);
				e = PERR_INVALID;
			} else
				az->seen[k] = 1;
		}
		http_resp_free(&rs);
		free(url);
	}
	return e;
}

/*
 * {"properties": {"TTL": N, "ARecords": [{"ipv4Address": "..."}]}}, or
 * "AAAARecords": [{"ipv6Address"}], or "CNAMERecord": {"cname": HOST}.
 */
static char *
put_body(const struct rrset *set)
{
	json_t *root, *recs;
	size_t i;
	char *s = NULL;

	/* A CNAME set holds no address: the loop adds nothing to it. */
	recs = set->type == RR_CNAME ? json_pack("{s:s}", "cname",
	    set->target) : json_array();
	for (i = 0; recs != NULL && i < set->addrs.n; i++)
		json_array_append_new(recs, json_pack("{s:s}", set->type ==
		    RR_AAAA ? "ipv6Address" : "ipv4Address", set->addrs.v[i].s));
	root = json_pack("{s:{s:I, s:o}}", "properties", "TTL",
	    (json_int_t)set->ttl, set_field(set->type), recs);
	if (root != NULL && (set->type == RR_CNAME ||
	    json_array_size(recs) == set->addrs.n))
		s = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return s;
}

/*
 * Whether set, emptied, is in the way of what the replace puts: a name
 * holds a CNAME or addresses, never both, so the sets of the other kind
 * go before the new kind's are put.  The rest of the emptied sets go
 * after, so that a move among addresses (A to AAAA) never leaves the
 * name empty.
 */
static int
in_the_way(const struct rrset *set, const struct rrset *sets, size_t nsets)
{
	size_t i;
	int to_cname = 0;

	for (i = 0; i < nsets; i++)
		if (sets[i].type == RR_CNAME && !rrset_empty(&sets[i]))
			to_cname = 1;
	return rrset_empty(set) && (set->type == RR_CNAME) != to_cname;
}

/* One set made as wanted: a PUT, or a DELETE when it holds nothing. */
static enum perr
write_set(struct azure *az, const char *fqdn, const struct rrset *set,
    int seen, char *err, size_t errlen)
{
	const char *hdrs[5];
	char cond[AZ_ETAG_MAX + 16], *url, *json = NULL;
	struct http_req rq = { .headers = hdrs };
	struct http_resp rs;
	size_t h = 0;
	int k = (int)set->type;
	enum perr e;

	hdrs[h++] = az->api.auth_hdr;
	hdrs[h++] = "Accept: application/json";
	/* Only what this run read is a condition worth setting. */
	if (seen && az->seen[k]) {
		if (az->etag[k][0] != '\0')
			snprintf(cond, sizeof(cond), "If-Match: %s",
			    az->etag[k]);
		else
			snprintf(cond, sizeof(cond), "If-None-Match: *");
		hdrs[h++] = cond;
	}
	if (rrset_empty(set)) {
		/* Nothing there and nothing wanted: nothing to do. */
		if (seen && az->seen[k] && az->etag[k][0] == '\0')
			return PERR_OK;
		rq.method = "DELETE";
	} else {
		if ((json = put_body(set)) == NULL) {
			snprintf(err, errlen, "Azure DNS: cannot build the "
			    "request for %s", fqdn);
			return PERR_TEMP;
		}
		hdrs[h++] = "Content-Type: application/json";
		rq.method = "PUT";
		rq.body = json;
		rq.body_len = strlen(json);
	}
	hdrs[h] = NULL;
	rq.url = url = set_url(az, fqdn, set->type);
	e = api_call(&az->api, &rq, &rs, err, errlen);
	/* Changed since this run read it: the next run reads again. */
	if (rs.status == 412)
		e = PERR_TEMP;
	if (e == PERR_AUTH)
		str_append(err, errlen, " (clientId needs DNS Zone "
		    "Contributor on the zone)");
	/* Azure's 409: another record set of the name stands in the way. */
	if (rs.status == 409)
		str_append(err, errlen, " (a CNAME cannot share its name with "
		    "another record set)");
	http_resp_free(&rs);
	free(url);
	free(json);
	/* The etag is spent: a second write needs a new read. */
	az->seen[k] = 0;
	return e;
}

/*
 * Three passes: the emptied sets in the way, the PUTs, the other
 * emptied sets (in_the_way()); the first failure ends the update.
 */
static enum perr
azure_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct azure *az = priv;
	size_t i;
	int pass, seen, p;
	enum perr e;

	api_begin(&az->api);
	if ((e = azure_login(az, err, errlen)) != PERR_OK)
		return e;
	seen = az->seen_name != NULL && strcasecmp(az->seen_name, fqdn) == 0;
	for (pass = 0; pass < 3; pass++)
		for (i = 0; i < nsets && e == PERR_OK; i++) {
			p = in_the_way(&sets[i], sets, nsets) ? 0 :
			    rrset_empty(&sets[i]) ? 2 : 1;
			if (p == pass)
				e = write_set(az, fqdn, &sets[i], seen, err,
				    errlen);
		}
	return e;
}

const struct provider_ops azure_ops = {
	.type = "azure",
	.keys = azure_keys,
	/* One record set per type: a call each, not one transaction. */
	.caps = PCAP_CNAME,
	.ttl_min = 0,
	.ttl_max = 2147483647,
	.zone_key = "zoneName",
	.check = azure_check,
	.create = azure_create,
	.read = azure_read,
	.replace = azure_replace,
	.free = azure_free,
};
