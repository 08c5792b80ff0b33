/*
 * The OVHcloud API, on the HTTP layer (http.h); SHA-1 from libcrypto.
 *
 * Every call but GET /auth/time is signed: X-Ovh-Application,
 * X-Ovh-Consumer, X-Ovh-Timestamp and X-Ovh-Signature = "$1$" + hex
 * SHA-1 of secret+consumer key+method+URL+body+timestamp (joined with
 * "+").  The timestamp is the server's: its clock is asked once per run
 * (/auth/time) and the difference applied, so a host whose clock is off
 * still signs in time.
 *
 * OVH keeps records one by one: read lists the ids of a name's records
 * of a type (GET /domain/zone/Z/record?fieldType=A&subDomain=S) and gets
 * each; replace diffs them with the set wanted, creates what is missing
 * (POST), corrects a TTL in place (PUT), then deletes what is unwanted
 * (DELETE), so the name never goes empty; records already right are
 * left alone.  Changes reach OVH's name servers at the refresh of the
 * zone (POST /domain/zone/Z/refresh), made once after any write.
 *
 * A name holds a CNAME or addresses, never both.  Between the two the
 * old type's records are deleted first and the new ones created after:
 * the zone as the API holds it is then never with both, and the name
 * servers, which see it only at the refresh, go from one to the other
 * in one step.  Should a call fail in such a move, the zone is not
 * refreshed: the name servers keep the old records rather than serve
 * the name with neither.  A CNAME's target is written with a final dot
 * (absolute); one read without it is relative to the zone, as in a
 * zone file.
 *
 * https://help.ovhcloud.com/csm/en-gb-api-getting-started-ovhcloud-api
 * https://eu.api.ovh.com/console/ (/domain/zone)
 *
 * The secret and the consumer key go only into the signature and the
 * X-Ovh-Consumer header: never into a URL or a message.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>
#include <openssl/evp.h>

#include "config.h"
#include "http.h"
#include "provider.h"
#include "providers/api.h"
#include "rrset.h"
#include "util.h"

#define OVH_MAX_RECORDS	256		/* of one name and type */
_Static_assert(OVH_MAX_RECORDS <= RRSET_READ_MAX, "a read holds them all");

static const struct provider_key ovh_keys[] = {
	{ "endpoint", 0 },
	{ "baseUrl", 0 },
	{ "applicationKey", PK_REQUIRED },
	{ "applicationSecret", PK_REQUIRED | PK_SECRET },
	{ "consumerKey", PK_REQUIRED | PK_SECRET },
	{ "zone", PK_REQUIRED },
	{ "timeout", 0 },
	{ NULL, 0 }
};

static const struct {
	const char	*name;
	const char	*url;
} ovh_endpoints[] = {
	{ "eu", "https://eu.api.ovh.com/1.0" },
	{ "ca", "https://ca.api.ovh.com/1.0" },
	{ "us", "https://api.us.ovhcloud.com/1.0" },
	{ NULL, NULL }
};

/* One record of a name, as listed. */
struct orec {
	long long	 id;
	struct addr	 a;		/* A, AAAA */
	char		 target[254];	/* CNAME: canonical (rrset_host_canon) */
	long		 ttl;
	int		 keep;
};

struct ovh {
	struct api	 api;		/* api.base: .../1.0 */
	char		*app_hdr;	/* "X-Ovh-Application: ..." */
	char		*ck_hdr;	/* "X-Ovh-Consumer: ...": secret */
	char		*secret;
	char		*ck;
	long long	 delta;		/* server time - our time, seconds */
	int		 have_delta;
};

/* OVH's error document: {"message", "errorCode"?, "httpCode"?, "class"?}. */
static const struct api_errtext ovh_err = {
	.form = { { .code = "errorCode", .code_opt = 1, .msg = "message" } },
};

static int
ovh_errtext(const char *buf, size_t len, char *out, size_t outlen)
{
	return api_errtext(&ovh_err, buf, len, out, outlen);
}

/* The requests are signed (ovh_sign()): no credential header here. */
static const struct api_def ovh_api = {
	.who = "OVH",
	.zone_key = "zone",
	.errtext = ovh_errtext,
};

/* The answer of /auth/time: a bare positive integer. */
static int
ovh_parse_time(const char *buf, size_t len, long long *t)
{
	json_t *root;
	json_error_t je;
	int rv = -1;

	root = json_loadb(buf, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
	    &je);
	if (json_is_integer(root) && json_integer_value(root) > 0 &&
	    json_integer_value(root) < ((json_int_t)1 << 40)) {
		*t = (long long)json_integer_value(root);
		rv = 0;
	}
	json_decref(root);
	return rv;
}

/* A list of record ids: [1, 2, ...]; the count, or -1 with err. */
static int
ovh_parse_ids(const char *buf, size_t len, long long *ids, size_t max,
    char *err, size_t errlen)
{
	json_t *root, *v;
	size_t i;
	int n = -1;

	if ((root = api_json_load(buf, len, err, errlen)) == NULL)
		return -1;
	if (!json_is_array(root) || json_array_size(root) > max) {
		snprintf(err, errlen, "not an array of at most %zu record ids",
		    max);
		goto out;
	}
	json_array_foreach(root, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			snprintf(err, errlen, "id %zu is not a non-negative "
			    "integer", i);
			goto out;
		}
		ids[i] = (long long)json_integer_value(v);
	}
	n = (int)json_array_size(root);
out:
	json_decref(root);
	return n;
}

/*
 * A CNAME's target as OVH holds it into out, canonical: absolute with a
 * final dot, else relative to zone ("@" or "" is the zone itself).  0,
 * or -1 when it is no host name.
 */
static int
ovh_cname_target(const char *v, const char *zone, char *out, size_t outlen)
{
	size_t n = strlen(v);
	int w;

	if (n > 1 && v[n - 1] == '.')
		w = snprintf(out, outlen, "%s", v);
	else if (n == 0 || strcmp(v, "@") == 0)
		w = snprintf(out, outlen, "%s", zone);
	else
		w = snprintf(out, outlen, "%s.%s", v, zone);
	if (w < 0 || (size_t)w >= outlen || !rrset_host_canon(out))
		return -1;
	/* No empty label ("a..b", "a.."). */
	n = strlen(out);
	return strstr(out, "..") == NULL && out[n - 1] != '.' ? 0 : -1;
}

/*
 * One record ({"id", "fieldType", "subDomain", "target", "ttl", ...}) of
 * type under sub: 0; 1 when it is of another type or name (the list's
 * filter did not hold: not ours, left alone); -1 with err when it makes
 * no sense.
 */
static int
ovh_parse_record(const char *buf, size_t len, enum rrtype t, const char *sub,
    const char *zone, struct orec *r, char *err, size_t errlen)
{
	json_t *root, *id, *type, *jsub, *target, *ttl;
	int rv = -1;

	if ((root = api_json_load(buf, len, err, errlen)) == NULL)
		goto out;
	id = json_object_get(root, "id");
	type = json_object_get(root, "fieldType");
	jsub = json_object_get(root, "subDomain");
	target = json_object_get(root, "target");
	ttl = json_object_get(root, "ttl");
	/* OVH's document lets subDomain be null: the apex, as "". */
	if (!json_is_integer(id) || !json_is_string(type) ||
	    !(json_is_string(jsub) || json_is_null(jsub)) ||
	    !json_is_string(target) ||
	    (ttl != NULL && !json_is_null(ttl) && (!json_is_integer(ttl) ||
	    json_integer_value(ttl) < 0 ||
	    json_integer_value(ttl) > 2147483647))) {
		snprintf(err, errlen, "a record lacks id, fieldType, subDomain, "
		    "target or ttl of the right type");
		goto out;
	}
	if (strcmp(json_string_value(type), rrtype_str(t)) != 0 ||
	    strcasecmp(json_is_null(jsub) ? "" : json_string_value(jsub),
	    sub) != 0) {
		rv = 1;
		goto out;
	}
	if (t == RR_CNAME) {
		if (ovh_cname_target(json_string_value(target), zone,
		    r->target, sizeof(r->target)) == -1) {
			snprintf(err, errlen, "record %lld: \"%.64s\" is not "
			    "a host name", (long long)json_integer_value(id),
			    json_string_value(target));
			goto out;
		}
	} else if (addr_parse(json_string_value(target), &r->a) == -1 ||
	    r->a.family != (t == RR_AAAA ? 6 : 4)) {
		snprintf(err, errlen, "record %lld: \"%.64s\" is not an IPv%d "
		    "address", (long long)json_integer_value(id),
		    json_string_value(target), t == RR_AAAA ? 6 : 4);
		goto out;
	}
	r->id = (long long)json_integer_value(id);
	r->ttl = json_is_integer(ttl) ? (long)json_integer_value(ttl) : 0;
	r->keep = 0;
	rv = 0;
out:
	if (rv == -1)
		text_printable(err);
	json_decref(root);
	return rv;
}

/*
 * The API's URL for endpoint or baseUrl (either takes a name or a URL,
 * checked by ovh_check()), and in *key the key it came from.
 */
static const char *
ovh_url(const struct provider_cfg *pc, const char **key, int *named)
{
	const char *v;
	size_t i;

	*key = "baseUrl";
	if ((v = provider_cfg_get(pc, "baseUrl")) == NULL) {
		*key = "endpoint";
		if ((v = provider_cfg_get(pc, "endpoint")) == NULL)
			v = "eu";
	}
	*named = 1;
	for (i = 0; ovh_endpoints[i].name != NULL; i++)
		if (strcasecmp(v, ovh_endpoints[i].name) == 0)
			return ovh_endpoints[i].url;
	*named = 0;
	return v;
}

static int
ovh_check(const struct provider_cfg *pc, const char **key, char *err,
    size_t errlen)
{
	static const char *const creds[] = { "applicationKey",
	    "applicationSecret", "consumerKey", NULL };
	const char *v;
	size_t i;
	int named;

	*key = "baseUrl";
	if (provider_cfg_get(pc, "baseUrl") != NULL &&
	    provider_cfg_get(pc, "endpoint") != NULL) {
		snprintf(err, errlen, "give endpoint or baseUrl, not both");
		return -1;
	}
	v = ovh_url(pc, key, &named);
	if (!named && http_check_base_url(*key, v, err, errlen) == -1) {
		/* A word that is no URL was meant as an endpoint's name. */
		if (strstr(v, "://") == NULL)
			snprintf(err, errlen, "%s: not eu, ca, us or an http:// "
			    "or https:// URL without user, query or fragment",
			    *key);
		return -1;
	}
	for (i = 0; creds[i] != NULL; i++)
		if (provider_check_header_secret(pc, creds[i], key, err,
		    errlen) == -1)
			return -1;
	if (provider_check_zone(pc, "zone", key, err, errlen) == -1)
		return -1;
	if (provider_check_timeout(pc, key, err, errlen) == -1)
		return -1;
	*key = NULL;
	return 0;
}

static void
ovh_free(void *priv)
{
	struct ovh *ov = priv;

	if (ov == NULL)
		return;
	free(ov->app_hdr);
	free_secret(ov->ck_hdr);
	free_secret(ov->secret);
	free_secret(ov->ck);
	api_free(&ov->api);
}

static void *
ovh_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct ovh *ov;
	const char *key;
	int named;

	if ((ov = api_create(sizeof(*ov), &ovh_api, pc, err, errlen)) == NULL)
		return NULL;
	/* ovh_check() passed: a name or a base URL. */
	api_set_base(&ov->api, ovh_url(pc, &key, &named));
	ov->app_hdr = xconcat("X-Ovh-Application: ",
	    provider_cfg_get(pc, "applicationKey"), "", "", "");
	ov->ck_hdr = xconcat("X-Ovh-Consumer: ",
	    provider_cfg_get(pc, "consumerKey"), "", "", "");
	ov->secret = xstrdup(provider_cfg_get(pc, "applicationSecret"));
	ov->ck = xstrdup(provider_cfg_get(pc, "consumerKey"));
	return ov;
}

/* "$1$" + hex SHA-1 of the parts joined with "+"; 0 or -1. */
static int
ovh_sign(const struct ovh *ov, const char *method, const char *url,
    const char *body, long long ts, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char *msg;
	size_t i, len;
	int rv = -1;

	len = strlen(ov->secret) + strlen(ov->ck) + strlen(method) +
	    strlen(url) + strlen(body) + 32 + 6;
	msg = xmalloc(len);
	snprintf(msg, len, "%s+%s+%s+%s+%s+%lld", ov->secret, ov->ck, method,
	    url, body, ts);
	if (EVP_Digest(msg, strlen(msg), md, &mdlen, EVP_sha1(), NULL) == 1 &&
	    outlen > 3 + 2 * (size_t)mdlen) {
		snprintf(out, outlen, "$1$");
		for (i = 0; i < mdlen; i++) {
			out[3 + 2 * i] = hex[md[i] >> 4];
			out[4 + 2 * i] = hex[md[i] & 0x0f];
		}
		out[3 + 2 * i] = '\0';
		rv = 0;
	}
	explicit_bzero(msg, len);
	free(msg);
	return rv;
}

/* The server's clock minus ours, asked once per run. */
static enum perr
ovh_clock(struct ovh *ov, char *err, size_t errlen)
{
	/* Not signed, and without an Accept header. */
	struct http_req rq = { .who = "OVH", .method = "GET",
	    .timeout_ms = ov->api.timeout_ms, .deadline = ov->api.deadline,
	    .want = 200, .errtext = ovh_errtext };
	struct http_resp rs;
	long long t;
	enum perr e;

	if (ov->have_delta)
		return PERR_OK;
	rq.url = xconcat(ov->api.base, "/auth/time", "", "", "");
	e = http_call(&rq, &rs, err, errlen);
	if (e == PERR_OK && ovh_parse_time(rs.body, rs.len, &t) == -1) {
		snprintf(err, errlen, "OVH at %s: unexpected answer: not a "
		    "time", rq.url);
		e = PERR_INVALID;
	}
	if (e == PERR_OK) {
		ov->delta = t - (long long)time(NULL);
		ov->have_delta = 1;
	}
	http_resp_free(&rs);
	free((char *)rq.url);
	return e;
}

/*
 * One signed call to base+path with an optional JSON body; on success
 * the answer is in rs (freed by the caller either way).
 */
static enum perr
ovh_call(struct ovh *ov, const char *method, const char *path,
    const char *body, struct http_resp *rs, char *err, size_t errlen)
{
	struct http_req rq = { .method = method, .want = 200 };
	const char *hdrs[8];
	char *url, tshdr[64], sig[64], sighdr[96], code[160];
	long long ts;
	size_t h = 0;
	enum perr e;

	memset(rs, 0, sizeof(*rs));
	if ((e = ovh_clock(ov, err, errlen)) != PERR_OK)
		return e;
	rq.url = url = xconcat(ov->api.base, path, "", "", "");
	ts = (long long)time(NULL) + ov->delta;
	if (ovh_sign(ov, method, url, body != NULL ? body : "", ts, sig,
	    sizeof(sig)) == -1) {
		snprintf(err, errlen, "OVH at %s: cannot sign the request",
		    url);
		free(url);
		return PERR_TEMP;
	}
	snprintf(tshdr, sizeof(tshdr), "X-Ovh-Timestamp: %lld", ts);
	snprintf(sighdr, sizeof(sighdr), "X-Ovh-Signature: %s", sig);
	hdrs[h++] = ov->app_hdr;
	hdrs[h++] = ov->ck_hdr;
	hdrs[h++] = tshdr;
	hdrs[h++] = sighdr;
	hdrs[h++] = "Accept: application/json";
	if (body != NULL)
		hdrs[h++] = "Content-Type: application/json";
	hdrs[h] = NULL;
	rq.headers = hdrs;
	rq.body = body;
	e = api_call(&ov->api, &rq, rs, err, errlen);
	/* A bad signature is a wrong secret; out of time, a clock. */
	if (e == PERR_INVALID && rs->status == 400 &&
	    ovh_errtext(rs->body, rs->len, code, sizeof(code)) == 0) {
		if (strncmp(code, "INVALID_SIGNATURE", 17) == 0)
			e = PERR_AUTH;
		else if (strncmp(code, "QUERY_TIME_OUT", 14) == 0)
			e = PERR_TEMP;
	}
	free(url);
	return e;
}

/* The name relative to the zone, "" at the apex; malloc'd. */
static char *
ovh_sub(const struct ovh *ov, const char *fqdn)
{
	return api_relname(&ov->api, fqdn);
}

/* The records of sub and type t into recs, their count in *n. */
static enum perr
ovh_list(struct ovh *ov, const char *sub, enum rrtype t, struct orec *recs,
    size_t *n, char *err, size_t errlen)
{
	long long ids[OVH_MAX_RECORDS];
	struct http_resp rs;
	char path[512], why[256], *esc;
	size_t i;
	int got = 0, pr;
	enum perr e;

	*n = 0;
	if ((esc = curl_easy_escape(NULL, sub, 0)) == NULL) {
		snprintf(err, errlen, "OVH: out of memory");
		return PERR_TEMP;
	}
	snprintf(path, sizeof(path), "/domain/zone/%s/record?fieldType=%s&"
	    "subDomain=%s", ov->api.zone, rrtype_str(t), esc);
	curl_free(esc);
	e = ovh_call(ov, "GET", path, NULL, &rs, err, errlen);
	if (e == PERR_OK && (got = ovh_parse_ids(rs.body, rs.len, ids,
	    OVH_MAX_RECORDS, why, sizeof(why))) == -1) {
		snprintf(err, errlen, "OVH at %s%s: unexpected answer: %s",
		    ov->api.base, path, why);
		e = PERR_INVALID;
	}
	http_resp_free(&rs);
	for (i = 0; e == PERR_OK && i < (size_t)got; i++) {
		snprintf(path, sizeof(path), "/domain/zone/%s/record/%lld",
		    ov->api.zone, ids[i]);
		e = ovh_call(ov, "GET", path, NULL, &rs, err, errlen);
		pr = e == PERR_OK ? ovh_parse_record(rs.body, rs.len, t, sub,
		    ov->api.zone, &recs[*n], why, sizeof(why)) : 1;
		if (pr == -1) {
			snprintf(err, errlen, "OVH at %s%s: unexpected "
			    "answer: %s", ov->api.base, path, why);
			e = PERR_INVALID;
		} else if (pr == 0) {
			/* Deleted, if it comes to that, by the id asked for. */
			recs[*n].id = ids[i];
			(*n)++;
		}
		http_resp_free(&rs);
	}
	return e;
}

static enum perr
ovh_read(void *priv, const char *fqdn, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	struct ovh *ov = priv;
	struct orec *recs;
	char *sub;
	size_t i, j, n;
	enum perr e = PERR_OK;

	api_begin(&ov->api);
	recs = xcalloc(OVH_MAX_RECORDS, sizeof(*recs));
	sub = ovh_sub(ov, fqdn);
	for (i = 0; i < nsets && e == PERR_OK; i++) {
		rrset_clear(&sets[i]);
		e = ovh_list(ov, sub, sets[i].type, recs, &n, err, errlen);
		/* At most OVH_MAX_RECORDS: below RRSET_READ_MAX. */
		for (j = 0; e == PERR_OK && j < n; j++) {
			/*
			 * Records of mixed TTLs, or two CNAMEs: TTL 0, never
			 * one wanted, so that the set is rewritten.
			 */
			sets[i].ttl = j == 0 || (recs[j].ttl == sets[i].ttl &&
			    sets[i].type != RR_CNAME) ? recs[j].ttl : 0;
			if (sets[i].type != RR_CNAME)
				(void)rrset_read_add(&sets[i], &recs[j].a, err,
				    errlen);
			else if (j == 0)
				sets[i].target = xstrdup(recs[j].target);
		}
		rrset_read_end(&sets[i]);
	}
	if (e != PERR_OK)
		for (i = 0; i < nsets; i++)
			rrset_clear(&sets[i]);
	free(sub);
	free(recs);
	return e;
}

/*
 * One write; *wrote counts it once it may have gone out (an answer that
 * never came may still have followed a change), whatever the answer.
 */
static enum perr
ovh_write(struct ovh *ov, const char *method, const char *path,
    json_t *doc, int *wrote, char *err, size_t errlen)
{
	struct http_resp rs;
	char *body = NULL;
	enum perr e;

	if (doc != NULL && (body = json_dumps(doc, JSON_COMPACT)) == NULL) {
		snprintf(err, errlen, "OVH: cannot build the request");
		json_decref(doc);
		return PERR_TEMP;
	}
	json_decref(doc);
	e = ovh_call(ov, method, path, body, &rs, err, errlen);
	if (ov->have_delta)
		*wrote = 1;
	http_resp_free(&rs);
	free(body);
	return e;
}

/* What a name holds of one type, and which of it is wanted. */
struct oset {
	struct orec	*recs;
	size_t		 n;
	int		*match;	/* per wanted value: a record's index, or -1 */
};

/* The count of values set wants. */
static size_t
ovh_nwant(const struct rrset *set)
{
	if (set->type == RR_CNAME)
		return set->target != NULL;
	return set->addrs.n;
}

/* Whether record r is set's i-th value. */
static int
ovh_is(const struct orec *r, const struct rrset *set, size_t i)
{
	if (set->type == RR_CNAME)
		return strcasecmp(r->target, set->target) == 0;
	return addr_cmp(&r->a, &set->addrs.v[i]) == 0;
}

/* Pairs each wanted value with a record that holds it, if any. */
static void
ovh_match(const struct rrset *set, struct oset *os)
{
	size_t i, j;

	for (i = 0; i < ovh_nwant(set); i++) {
		for (j = 0; j < os->n && (os->recs[j].keep ||
		    !ovh_is(&os->recs[j], set, i)); j++)
			;
		os->match[i] = j < os->n ? (int)j : -1;
		if (j < os->n)
			os->recs[j].keep = 1;
	}
}

/* Creates the values of set that are missing, corrects the TTLs. */
static enum perr
ovh_adds(struct ovh *ov, const char *sub, const char *base,
    const struct rrset *set, const struct oset *os, int *wrote, char *err,
    size_t errlen)
{
	char path[512], target[256];
	size_t i;
	enum perr e = PERR_OK;

	for (i = 0; e == PERR_OK && i < ovh_nwant(set); i++) {
		if (os->match[i] >= 0) {
			if (os->recs[os->match[i]].ttl == set->ttl)
				continue;
			snprintf(path, sizeof(path), "%s/%lld", base,
			    os->recs[os->match[i]].id);
			e = ovh_write(ov, "PUT", path, json_pack("{s:I}", "ttl",
			    (json_int_t)set->ttl), wrote, err, errlen);
			continue;
		}
		/* A CNAME's target absolute: with its final dot. */
		if (set->type == RR_CNAME)
			snprintf(target, sizeof(target), "%s.", set->target);
		else
			snprintf(target, sizeof(target), "%s",
			    set->addrs.v[i].s);
		e = ovh_write(ov, "POST", base, json_pack("{s:s, s:s, s:s, s:I}",
		    "fieldType", rrtype_str(set->type), "subDomain", sub,
		    "target", target, "ttl", (json_int_t)set->ttl), wrote, err,
		    errlen);
	}
	return e;
}

/* Deletes the records no wanted value holds. */
static enum perr
ovh_dels(struct ovh *ov, const char *base, const struct oset *os, int *wrote,
    char *err, size_t errlen)
{
	char path[512];
	size_t j;
	enum perr e = PERR_OK;

	for (j = 0; e == PERR_OK && j < os->n; j++) {
		if (os->recs[j].keep)
			continue;
		snprintf(path, sizeof(path), "%s/%lld", base, os->recs[j].id);
		e = ovh_write(ov, "DELETE", path, NULL, wrote, err, errlen);
	}
	return e;
}

static enum perr
ovh_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct ovh *ov = priv;
	struct oset *os;
	char path[512], base[256], rerr[512];
	char *sub;
	size_t i;
	int wrote = 0, swap = 0, pass;
	enum perr e = PERR_OK, re;

	api_begin(&ov->api);
	sub = ovh_sub(ov, fqdn);
	os = xcalloc(nsets, sizeof(*os));
	snprintf(base, sizeof(base), "/domain/zone/%s/record", ov->api.zone);
	for (i = 0; i < nsets && e == PERR_OK; i++) {
		os[i].recs = xcalloc(OVH_MAX_RECORDS, sizeof(*os[i].recs));
		os[i].match = xcalloc(ovh_nwant(&sets[i]) + 1, sizeof(int));
		e = ovh_list(ov, sub, sets[i].type, os[i].recs, &os[i].n, err,
		    errlen);
	}
	if (e != PERR_OK)
		goto out;
	/*
	 * Towards or from a CNAME (or from one CNAME to another, which
	 * cannot stand beside it either) what goes is deleted first;
	 * between addresses what is missing comes first, so the name never
	 * goes empty.
	 */
	for (i = 0; i < nsets; i++) {
		ovh_match(&sets[i], &os[i]);
		if (sets[i].type == RR_CNAME)
			swap |= os[i].n > 0 || !rrset_empty(&sets[i]);
	}
	for (pass = 0; pass < 2 && e == PERR_OK; pass++)
		for (i = 0; i < nsets && e == PERR_OK; i++)
			e = (pass == 0) == (swap != 0) ?
			    ovh_dels(ov, base, &os[i], &wrote, err, errlen) :
			    ovh_adds(ov, sub, base, &sets[i], &os[i], &wrote,
			    err, errlen);
	/*
	 * What was written is pushed to the name servers even when a later
	 * call failed, when it only ever added before it deleted; a move
	 * between a CNAME and addresses cut short is not (the name could
	 * be left with neither).  With nothing to write the zone is
	 * refreshed all the same: ddup asks for an update only when what
	 * it last published differs, so records found right may be the
	 * writes of a run whose refresh failed, which OVH cannot tell.
	 */
	if ((wrote || e == PERR_OK) && (e == PERR_OK || !swap)) {
		snprintf(path, sizeof(path), "/domain/zone/%s/refresh",
		    ov->api.zone);
		re = ovh_write(ov, "POST", path, NULL, &wrote, rerr,
		    sizeof(rerr));
		if (e == PERR_OK && re != PERR_OK) {
			e = re;
			snprintf(err, errlen, "%s", rerr);
		}
	}
out:
	for (i = 0; i < nsets; i++) {
		free(os[i].recs);
		free(os[i].match);
	}
	free(os);
	free(sub);
	return e;
}

const struct provider_ops ovh_ops = {
	.type = "ovh",
	.keys = ovh_keys,
	/* Record by record, then a refresh: not one transaction. */
	.caps = PCAP_CNAME,
	.ttl_min = 0,
	.ttl_max = 2147483647,
	.zone_key = "zone",
	.check = ovh_check,
	.create = ovh_create,
	.read = ovh_read,
	.replace = ovh_replace,
	.free = ovh_free,
};
