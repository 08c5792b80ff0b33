/*
 * Hetzner DNS through the Hetzner Cloud API (http.c, jansson).
 *
 * A name's sets are read with one list call (GET
 * /zones/ZONE/rrsets?name=N&type=A&type=AAAA, and &type=CNAME when a
 * CNAME is asked for).  replace() reads them
 * again and changes only what differs, each set on its own: a missing
 * set is created (POST /zones/ZONE/rrsets, records and TTL at once), an
 * existing one gets set_records (its records replaced in one action)
 * and, if its TTL differs, change_ttl; an emptied one is deleted.
 * set_records takes no empty list and no TTL, hence the three paths.
 *
 * An RRset is named by its name and type, and no call changes a type:
 * a tier that moves between a CNAME and addresses deletes the old
 * type's sets before it creates the new one (the emptied sets go
 * first), so the name never holds a CNAME beside addresses, which a
 * zone cannot, but holds nothing for the moment between the two.  The
 * CNAME's value is written absolute, with its final dot (records are
 * values in zone file syntax, relative to the zone without one).
 *
 * Every write answers with an action that may still be running.  ddup
 * waits for it (polling GET /zones/actions/ID) within the provider's
 * timeout: an action that ends in error is a failed update, and one
 * still running when the time is up is reported as a temporary failure,
 * so the domain stays unsure and the next run reads the records back.
 * Waiting also keeps the next write of the same set from meeting a
 * resource locked by the action before it.
 *
 * https://docs.hetzner.cloud/reference/cloud#zone-rrsets
 * https://docs.hetzner.cloud/reference/cloud#zone-rrset-actions
 *
 * The token travels only in the Authorization header.  The legacy DNS
 * console API (dns.hetzner.com) is not spoken.
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
#include "rrset.h"
#include "util.h"

#define HZ_BASE_URL	"https://api.hetzner.cloud/v1"
#define HZ_TIMEOUT	"10s"
#define HZ_POLL_MS	500

struct hz {
	struct api	 api;
};

/* ---------------------------------------------------------------- parsers */

/* "Hetzner error not_found: zone not found" from {"error": {...}}. */
static const struct api_errtext hz_err = {
	.prefix = "Hetzner error ",
	.form = { { .in = "error", .code = "code", .msg = "message" } },
};

static int
hz_errtext(const char *buf, size_t len, char *out, size_t outlen)
{
	return api_errtext(&hz_err, buf, len, out, outlen);
}

static const struct api_def hz_api = {
	.who = "Hetzner",
	.base_url = HZ_BASE_URL,
	.auth_key = "apiToken",
	.auth = "Authorization: Bearer ",
	.zone_key = "zone",
	.timeout = HZ_TIMEOUT,
	.errtext = hz_errtext,
};

/*
 * The one record of a CNAME set (rrsets[i].records) into set; a second
 * one (no zone holds two) or a value that is no host name is junk.
 */
static int
parse_cname(json_t *recs, size_t i, struct rrset *set, char *err,
    size_t errlen)
{
	json_t *jv;
	char *s;

	jv = json_array_size(recs) == 1 ?
	    json_object_get(json_array_get(recs, 0), "value") : NULL;
	if (!json_is_string(jv)) {
		snprintf(err, errlen, "rrsets[%zu]: a CNAME set holds not one "
		    "record with a value", i);
		return -1;
	}
	s = xstrdup(json_string_value(jv));
	if (!rrset_host_canon(s)) {
		free(s);
		snprintf(err, errlen, "rrsets[%zu].records[0] is not a host "
		    "name", i);
		return -1;
	}
	free(set->target);
	set->target = s;
	return 0;
}

/*
 * The sets of name (relative, as the API names it) in a list answer
 * ({"rrsets": [{"name", "type", "ttl", "records": [{"value"}]}]}).  A
 * TTL of null (the zone's default) is kept as 0: it matches no wanted
 * set, so the first update writes the TTL ddup wants.
 */
static int
parse_rrsets(const char *buf, size_t len, const char *name, struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	json_t *root, *list, *rs, *recs, *rec, *jn, *jt, *jttl, *jv;
	enum rrtype t;
	struct addr a;
	size_t i, j, k;
	int rv = -1;

	if ((root = api_json_load(buf, len, err, errlen)) == NULL)
		goto out;
	if ((list = api_json_array(root, "rrsets", err, errlen)) == NULL)
		goto out;
	json_array_foreach(list, i, rs) {
		jn = json_object_get(rs, "name");
		jt = json_object_get(rs, "type");
		jttl = json_object_get(rs, "ttl");
		recs = json_object_get(rs, "records");
		if (!json_is_string(jn) || !json_is_string(jt) ||
		    !json_is_array(recs) || (jttl != NULL &&
		    !json_is_null(jttl) && !json_is_integer(jttl))) {
			snprintf(err, errlen, "rrsets[%zu] lacks name, type, "
			    "ttl or records of the right type", i);
			goto out;
		}
		if (strcasecmp(json_string_value(jn), name) != 0 ||
		    rrtype_parse(json_string_value(jt), &t) == -1)
			continue;
		for (k = 0; k < nsets && sets[k].type != t; k++)
			;
		if (k == nsets)
			continue;
		if (json_is_integer(jttl) && (json_integer_value(jttl) < 0 ||
		    json_integer_value(jttl) > 2147483647)) {
			snprintf(err, errlen, "rrsets[%zu]: ttl out of range", i);
			goto out;
		}
		if (t == RR_CNAME) {
			if (parse_cname(recs, i, &sets[k], err, errlen) == -1)
				goto out;
			sets[k].ttl = sets[k].target != NULL &&
			    json_is_integer(jttl) ?
			    (long)json_integer_value(jttl) : 0;
			continue;
		}
		json_array_foreach(recs, j, rec) {
			jv = json_object_get(rec, "value");
			if (!json_is_string(jv) ||
			    addr_parse(json_string_value(jv), &a) == -1 ||
			    a.family != (t == RR_A ? 4 : 6)) {
				snprintf(err, errlen, "rrsets[%zu].records[%zu]"
				    " is not an %s address", i, j,
				    rrtype_str(t));
				goto out;
			}
			if (rrset_read_add(&sets[k], &a, err, errlen) == -1)
				goto out;
		}
		rrset_read_end(&sets[k]);
		sets[k].ttl = sets[k].addrs.n > 0 && json_is_integer(jttl) ?
		    (long)json_integer_value(jttl) : 0;
	}
	rv = 0;
out:
	/* The reason quotes the answer, and goes to the log. */
	if (rv == -1)
		text_printable(err);
	json_decref(root);
	return rv;
}

/*
 * The action of an answer ({"action": {"id", "status", "error"}}): 0
 * with its id and *done (1 success, -1 error with its text in why, 0
 * running); -1 with the reason in why when there is none.
 */
static int
parse_action(const char *buf, size_t len, long long *id, int *done,
    char *why, size_t whylen)
{
	json_t *root, *act, *jid, *st, *e, *code, *msg;
	json_error_t je;
	const char *s;
	int rv = -1;

	*id = 0;
	*done = 0;
	snprintf(why, whylen, "no action in the answer");
	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je)) == NULL)
		return -1;
	act = json_is_object(root) ? json_object_get(root, "action") : NULL;
	jid = json_is_object(act) ? json_object_get(act, "id") : NULL;
	st = json_is_object(act) ? json_object_get(act, "status") : NULL;
	if (!json_is_integer(jid) || json_integer_value(jid) < 1 ||
	    !json_is_string(st))
		goto out;
	*id = (long long)json_integer_value(jid);
	s = json_string_value(st);
	rv = 0;
	if (strcmp(s, "success") == 0)
		*done = 1;
	else if (strcmp(s, "error") == 0) {
		*done = -1;
		e = json_object_get(act, "error");
		code = json_is_object(e) ? json_object_get(e, "code") : NULL;
		msg = json_is_object(e) ? json_object_get(e, "message") : NULL;
		snprintf(why, whylen, "action %lld failed: %s: %s", *id,
		    json_is_string(code) ? json_string_value(code) : "?",
		    json_is_string(msg) ? json_string_value(msg) : "?");
	} else if (strcmp(s, "running") != 0) {
		snprintf(why, whylen, "action status is not running, success "
		    "or error");
		rv = -1;
	}
out:
	text_printable(why);
	json_decref(root);
	return rv;
}

/* -------------------------------------------------------------- HTTP calls */

static enum perr
hz_call(struct hz *hz, const char *method, const char *url, const char *body,
    struct http_resp *rs, char *err, size_t errlen)
{
	struct http_req rq = { .method = method, .url = url, .body = body };
	enum perr e;

	e = api_call(&hz->api, &rq, rs, err, errlen);
	/* locked, conflict: another action holds the set; the next run. */
	if (e == PERR_INVALID && (rs->status == 409 || rs->status == 423))
		e = PERR_TEMP;
	return e;
}

/* A write whose answer carries an action, waited for to its end. */
static enum perr
hz_write(struct hz *hz, const char *method, const char *url, const char *body,
    char *err, size_t errlen)
{
	struct http_resp rs;
	char why[256], aurl[512];
	long long id;
	int done;
	enum perr e;

	if ((e = hz_call(hz, method, url, body, &rs, err, errlen)) != PERR_OK)
		goto out;
	snprintf(aurl, sizeof(aurl), "%s", url);
	for (;;) {
		if (parse_action(rs.body, rs.len, &id, &done, why,
		    sizeof(why)) == -1) {
			snprintf(err, errlen, "Hetzner at %s: unexpected "
			    "answer: %s", aurl, why);
			e = PERR_INVALID;
			break;
		}
		if (done != 0) {
			if (done == -1) {
				snprintf(err, errlen, "Hetzner at %s: %s", url,
				    why);
				e = PERR_TEMP;
			}
			break;
		}
		if (mono_ms() + HZ_POLL_MS > hz->api.deadline) {
			snprintf(err, errlen, "Hetzner at %s: action %lld "
			    "still running after %llds", url, id,
			    hz->api.timeout_ms / 1000);
			e = PERR_TEMP;
			break;
		}
		http_sleep_ms(HZ_POLL_MS);
		http_resp_free(&rs);
		snprintf(aurl, sizeof(aurl), "%s/zones/actions/%lld",
		    hz->api.base, id);
		if ((e = hz_call(hz, "GET", aurl, NULL, &rs, err, errlen)) !=
		    PERR_OK)
			break;
	}
out:
	if (e != PERR_OK)
		text_printable(err);
	http_resp_free(&rs);
	return e;
}

/* The name as the API wants it: relative to the zone, "@" at the apex. */
static char *
rr_name(const struct hz *hz, const char *fqdn)
{
	char *s = api_relname(&hz->api, fqdn);

	if (s[0] == '\0') {
		free(s);
		s = xstrdup("@");
	}
	return s;
}

/* base/zones/ZONE/rrsets, then tail. */
static char *
rrsets_url(const struct hz *hz, const char *tail)
{
	size_t len = strlen(hz->api.base) + strlen(hz->api.zone) +
	    strlen(tail) + 32;
	char *url = xmalloc(len);

	snprintf(url, len, "%s/zones/%s/rrsets%s", hz->api.base, hz->api.zone,
	    tail);
	return url;
}

static enum perr
hz_list(struct hz *hz, const char *name, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	struct http_resp rs;
	char *esc, *url, tail[320], why[256];
	size_t k;
	enum perr e;

	for (k = 0; k < nsets; k++)
		rrset_clear(&sets[k]);
	esc = curl_easy_escape(NULL, name, 0);
	snprintf(tail, sizeof(tail), "?name=%s&type=A&type=AAAA",
	    esc != NULL ? esc : "");
	curl_free(esc);
	for (k = 0; k < nsets; k++)
		if (sets[k].type == RR_CNAME)
			str_append(tail, sizeof(tail), "&type=CNAME");
	url = rrsets_url(hz, tail);
	if ((e = hz_call(hz, "GET", url, NULL, &rs, err, errlen)) == PERR_OK &&
	    parse_rrsets(rs.body, rs.len, name, sets, nsets, why,
	    sizeof(why)) == -1) {
		snprintf(err, errlen, "Hetzner at %s: unexpected answer: %s",
		    url, why);
		text_printable(err);
		e = PERR_INVALID;
	}
	if (e != PERR_OK)
		for (k = 0; k < nsets; k++)
			rrset_clear(&sets[k]);
	http_resp_free(&rs);
	free(url);
	return e;
}

/* One set made as wanted, from what it is now. */
static enum perr
hz_sync(struct hz *hz, const char *name, const struct rrset *want,
    const struct rrset *cur, char *err, size_t errlen)
{
	json_t *recs, *body = NULL;
	char *url, *s = NULL, *abs, tail[320];
	const char *type = rrtype_str(want->type);
	size_t j;
	enum perr e = PERR_OK;

	snprintf(tail, sizeof(tail), "/%s/%s", name, type);
	url = rrsets_url(hz, tail);
	recs = json_array();
	for (j = 0; j < want->addrs.n; j++)
		json_array_append_new(recs, json_pack("{s:s}", "value",
		    want->addrs.v[j].s));
	if (want->type == RR_CNAME && want->target != NULL) {
		abs = xconcat(want->target, ".", "", "", "");
		json_array_append_new(recs, json_pack("{s:s}", "value", abs));
		free(abs);
	}
	if (rrset_empty(want)) {
		if (!rrset_empty(cur))
			e = hz_write(hz, "DELETE", url, NULL, err, errlen);
		goto out;
	}
	if (rrset_empty(cur)) {
		free(url);
		url = rrsets_url(hz, "");
		body = json_pack("{s:s, s:s, s:I, s:O}", "name", name, "type",
		    type, "ttl", (json_int_t)want->ttl, "records", recs);
		s = json_dumps(body, JSON_COMPACT);
		e = hz_write(hz, "POST", url, s, err, errlen);
		goto out;
	}
	if (want->type == RR_CNAME ? strcmp(want->target, cur->target) != 0 :
	    !addrset_equal(&want->addrs, &cur->addrs)) {
		snprintf(tail, sizeof(tail), "/%s/%s/actions/set_records", name,
		    type);
		free(url);
		url = rrsets_url(hz, tail);
		body = json_pack("{s:O}", "records", recs);
		s = json_dumps(body, JSON_COMPACT);
		if ((e = hz_write(hz, "POST", url, s, err, errlen)) != PERR_OK)
			goto out;
	}
	if (want->ttl != cur->ttl) {
		snprintf(tail, sizeof(tail), "/%s/%s/actions/change_ttl", name,
		    type);
		free(url);
		url = rrsets_url(hz, tail);
		free(s);
		json_decref(body);
		body = json_pack("{s:I}", "ttl", (json_int_t)want->ttl);
		s = json_dumps(body, JSON_COMPACT);
		e = hz_write(hz, "POST", url, s, err, errlen);
	}
out:
	json_decref(recs);
	json_decref(body);
	free(s);
	free(url);
	return e;
}

/* ---------------------------------------------------------- the provider */

static void
hetzner_free(void *priv)
{
	struct hz *hz = priv;

	api_free(hz != NULL ? &hz->api : NULL);
}

static void *
hetzner_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	return api_create(sizeof(struct hz), &hz_api, pc, err, errlen);
}

static enum perr
hetzner_read(void *priv, const char *fqdn, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	struct hz *hz = priv;
	char *name = rr_name(hz, fqdn);
	enum perr e;

	api_begin(&hz->api);
	e = hz_list(hz, name, sets, nsets, err, errlen);
	free(name);
	return e;
}

static enum perr
hetzner_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct hz *hz = priv;
	struct rrset cur[RR_NTYPES];
	char *name = rr_name(hz, fqdn);
	size_t k;
	int pass;
	enum perr e;

	api_begin(&hz->api);
	memset(cur, 0, sizeof(cur));
	for (k = 0; k < nsets && k < RR_NTYPES; k++)
		cur[k].type = sets[k].type;
	if ((e = hz_list(hz, name, cur, k, err, errlen)) != PERR_OK)
		goto out;
	/*
	 * The emptied sets first, the others after: towards a CNAME the
	 * addresses go before it comes, and the other way round.
	 */
	for (pass = 0; pass < 2; pass++)
		for (k = 0; k < nsets && k < RR_NTYPES && e == PERR_OK; k++)
			if (rrset_empty(&sets[k]) == (pass == 0) &&
			    !rrset_same(&sets[k], &cur[k]))
				e = hz_sync(hz, name, &sets[k], &cur[k], err,
				    errlen);
out:
	for (k = 0; k < RR_NTYPES; k++)
		rrset_clear(&cur[k]);
	free(name);
	return e;
}

const struct provider_ops hetzner_ops = {
	.type = "hetzner",
	.keys = api_token_zone_keys,
	/* Each set is its own request: A and AAAA are not all or nothing. */
	.caps = PCAP_CNAME,
	.ttl_min = 60,
	.ttl_max = 2147483647,
	.zone_key = "zone",
	.check = api_check_token_zone,
	.create = hetzner_create,
	.read = hetzner_read,
	.replace = hetzner_replace,
	.free = hetzner_free,
};
