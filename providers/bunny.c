/*
 * bunny.net DNS through its API (http.c, jansson).
 *
 * The account's API key goes in an AccessKey header.  A zone is named
 * by its numeric id (zoneId), or looked up once by its domain (zone:
 * GET /dnszone?search=, paged).  GET /dnszone/ID answers the whole zone
 * with its records, each with an id, an integer type (0 A, 1 AAAA,
 * 2 CNAME, ...), a name relative to the zone ("" at the apex), a value
 * and a TTL: one call reads every type.  A set is replaced by a diff:
 * records already right stay (a wrong TTL is updated in place, POST
 * .../records/ID), what is missing is added (PUT .../records) and what
 * is left over deleted (DELETE .../records/ID): additions first, so the
 * name never goes empty.  A name holds a CNAME or addresses, never both, and the API
 * has no call that swaps one for the other: across a CNAME change the
 * old records go first and the new ones come after, so the name is
 * empty between the last delete and the first add.  Records of other
 * names and types are never touched.
 *
 * https://docs.bunny.net/reference/bunnynet-api-overview
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

#define BN_BASE_URL	"https://api.bunny.net"
#define BN_TIMEOUT	"10s"
#define BN_TTL_MIN	15		/* the shortest the dashboard offers */
#define BN_TTL_MAX	2147483647
#define BN_ID_MAX	20		/* digits of an id */
#define BN_PAGES	50		/* of the zone lookup */
#define BN_AUTH_HINT	"check apiKey: the account's API key"

/* The API's record type numbers (its DnsRecordTypes). */
#define BN_T_A		0
#define BN_T_AAAA	1
#define BN_T_CNAME	2

struct bnrec {
	long long	 id;
	enum rrtype	 type;
	char		*value;		/* canonical for its type */
	long		 ttl;
	int		 keep;
};

struct bnlist {
	struct bnrec	*v;
	size_t		 n;
	size_t		 cap;
};

struct bnv {
	struct api	 api;
	long long	 zone_id;	/* 0: not looked up yet */
};

/* ---------------------------------------------------------------- parsers */

/* "bunny.net error: ..." from {"ErrorKey", "Field", "Message"}. */
static const struct api_errtext bn_err = {
	.prefix = "bunny.net error: ",
	.form = { { .code = "ErrorKey", .code_opt = 1, .msg = "Message" } },
	.first_line = 1,
};

static int
bn_errtext(const char *buf, size_t len, char *out, size_t outlen)
{
	return api_errtext(&bn_err, buf, len, out, outlen);
}

static const struct api_def bn_api = {
	.who = "bunny.net",
	.base_url = BN_BASE_URL,
	.auth_key = "apiKey",
	.auth = "AccessKey: ",
	.zone_key = "zone",
	.timeout = BN_TIMEOUT,
	.errtext = bn_errtext,
	.auth_hint = BN_AUTH_HINT,
	.notfound_hint = "check zoneId or zone",
};

static int
bn_type(enum rrtype t)
{
	return t == RR_A ? BN_T_A : t == RR_AAAA ? BN_T_AAAA : BN_T_CNAME;
}

/*
 * A zone answer ({"Id", "Domain", "Records": [{"Id", "Type", "Name",
 * "Value", "Ttl"}]}): its domain (lower case, malloc'd, in *domain when
 * not NULL) and the records called rel of type t appended to l.  -1
 * with the reason in err (printable).
 */
static int
parse_zone(const char *buf, size_t len, const char *rel, enum rrtype t,
    struct bnlist *l, char **domain, char *err, size_t errlen)
{
	json_t *root, *recs, *r, *jid, *jt, *jn, *jv, *jttl, *jd;
	struct bnrec *p;
	struct addr a;
	char *c = NULL, *d = NULL;
	size_t i, nt = 0;
	int rv = -1;

	for (i = 0; i < l->n; i++)
		nt += l->v[i].type == t;
	if ((root = api_json_load(buf, len, err, errlen)) == NULL)
		goto out;
	jd = json_object_get(root, "Domain");
	if (!json_is_string(jd) || json_string_length(jd) == 0) {
		snprintf(err, errlen, "no Domain string");
		goto out;
	}
	/* The records' names are relative to it: a junk one is no zone. */
	d = xstrdup(json_string_value(jd));
	if (!rrset_host_canon(d)) {
		snprintf(err, errlen, "Domain is not a DNS name");
		goto out;
	}
	if ((recs = api_json_array(root, "Records", err, errlen)) == NULL)
		goto out;
	json_array_foreach(recs, i, r) {
		jid = json_object_get(r, "Id");
		jt = json_object_get(r, "Type");
		jn = json_object_get(r, "Name");
		jv = json_object_get(r, "Value");
		jttl = json_object_get(r, "Ttl");
		if (!json_is_integer(jt) || !json_is_string(jn) ||
		    !json_is_string(jv)) {
			snprintf(err, errlen, "Records[%zu] lacks Type, Name or "
			    "Value of the right type", i);
			goto out;
		}
		if (json_integer_value(jt) != bn_type(t) ||
		    strcasecmp(json_string_value(jn), rel) != 0)
			continue;
		if (!json_is_integer(jid) || json_integer_value(jid) < 1 ||
		    !json_is_integer(jttl) || json_integer_value(jttl) < 0 ||
		    json_integer_value(jttl) > BN_TTL_MAX) {
			snprintf(err, errlen, "Records[%zu]: Id or Ttl is not a "
			    "number in range", i);
			goto out;
		}
		free(c);
		c = xstrdup(json_string_value(jv));
		if (t == RR_CNAME ? !rrset_host_canon(c) :
		    (addr_parse(c, &a) == -1 ||
		    a.family != (t == RR_A ? 4 : 6))) {
			snprintf(err, errlen, "Records[%zu]: Value is not %s",
			    i, t == RR_CNAME ? "a host name" : t == RR_A ?
			    "an A address" : "an AAAA address");
			goto out;
		}
		if (rrset_read_room(nt++, t, err, errlen) == -1)
			goto out;
		if (l->n == l->cap) {
			l->cap = l->cap == 0 ? 8 : l->cap * 2;
			l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
		}
		p = &l->v[l->n++];
		p->id = (long long)json_integer_value(jid);
		p->type = t;
		p->value = t == RR_CNAME ? c : xstrdup(a.s);
		if (t == RR_CNAME)
			c = NULL;
		p->ttl = (long)json_integer_value(jttl);
		p->keep = 0;
	}
	if (domain != NULL) {
		*domain = d;
		d = NULL;
	}
	rv = 0;
out:
	if (rv == -1)
		text_printable(err);
	free(c);
	free(d);
	json_decref(root);
	return rv;
}

/*
 * A page of the zone search ({"Items": [{"Id", "Domain"}],
 * "HasMoreItems"}): *id the zone called zone (0 if not on the page),
 * *more whether pages follow.  -1 with the reason in err.
 */
static int
parse_search(const char *buf, size_t len, const char *zone, long long *id,
    int *more, char *err, size_t errlen)
{
	json_t *root, *items, *it, *jid, *jd, *jm;
	char *d = NULL;
	size_t i;
	int rv = -1;

	*id = 0;
	*more = 0;
	if ((root = api_json_load(buf, len, err, errlen)) == NULL ||
	    (items = api_json_array(root, "Items", err, errlen)) == NULL)
		goto out;
	json_array_foreach(items, i, it) {
		jid = json_object_get(it, "Id");
		jd = json_object_get(it, "Domain");
		if (!json_is_integer(jid) || json_integer_value(jid) < 1 ||
		    !json_is_string(jd)) {
			snprintf(err, errlen, "Items[%zu] lacks Id or Domain", i);
			goto out;
		}
		free(d);
		d = xstrdup(json_string_value(jd));
		(void)rrset_host_canon(d);
		if (strcmp(d, zone) == 0 && *id == 0)
			*id = (long long)json_integer_value(jid);
	}
	jm = json_object_get(root, "HasMoreItems");
	*more = json_is_true(jm);
	rv = 0;
out:
	if (rv == -1)
		text_printable(err);
	free(d);
	json_decref(root);
	return rv;
}

static void
bnlist_free(struct bnlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].value);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* -------------------------------------------------------------- HTTP calls */

/* METHOD {base}PATH with body (taken, may be NULL), expecting want. */
static enum perr
bn_call(struct bnv *bv, const char *method, const char *path, json_t *body,
    long want, struct http_resp *rs, char *err, size_t errlen)
{
	struct http_req rq = { .method = method, .want = want };
	char *url = xconcat(bv->api.base, path, "", "", ""), *s = NULL;
	enum perr e;

	if (body != NULL)
		s = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	rq.url = url;
	rq.body = s;
	e = api_call(&bv->api, &rq, rs, err, errlen);
	free(s);
	free(url);
	return e;
}

/* The zone's id, looked up by its domain on the first call of the run. */
static enum perr
bn_zone_id(struct bnv *bv, char *err, size_t errlen)
{
	struct http_resp rs;
	char path[512], why[256], *esc;
	long long id = 0;
	int page, more = 1;
	enum perr e = PERR_OK;

	if (bv->zone_id != 0)
		goto out;
	if ((esc = curl_easy_escape(NULL, bv->api.zone, 0)) == NULL) {
		snprintf(err, errlen, "bunny.net: out of memory");
		e = PERR_TEMP;
		goto out;
	}
	for (page = 1; page <= BN_PAGES && more && id == 0 && e == PERR_OK;
	    page++) {
		memset(&rs, 0, sizeof(rs));
		snprintf(path, sizeof(path), "/dnszone?search=%s&page=%d&"
		    "perPage=1000", esc, page);
		if ((e = bn_call(bv, "GET", path, NULL, 200, &rs, err,
		    errlen)) == PERR_OK && parse_search(rs.body, rs.len,
		    bv->api.zone, &id, &more, why, sizeof(why)) == -1) {
			snprintf(err, errlen, "bunny.net at %s%s: unexpected "
			    "answer: %s", bv->api.base, path, why);
			text_printable(err);
			e = PERR_INVALID;
		}
		http_resp_free(&rs);
	}
	curl_free(esc);
	if (e == PERR_OK && id == 0) {
		snprintf(err, errlen, "bunny.net at %s/dnszone: no zone %s "
		    "(check zone, or give zoneId)", bv->api.base, bv->api.zone);
		e = PERR_INVALID;
	}
	bv->zone_id = id;
out:
	return e;
}

/* The records of fqdn of the types of sets, in l: one read of the zone. */
static enum perr
bn_list(struct bnv *bv, const char *fqdn, const struct rrset *sets,
    size_t nsets, struct bnlist *l, char *err, size_t errlen)
{
	struct http_resp rs = { 0 };
	char path[64], why[256], *rel = NULL, *domain = NULL;
	size_t fl, dl, k;
	enum perr e;

	if ((e = bn_zone_id(bv, err, errlen)) != PERR_OK)
		goto out;
	snprintf(path, sizeof(path), "/dnszone/%lld", bv->zone_id);
	if ((e = bn_call(bv, "GET", path, NULL, 200, &rs, err, errlen)) !=
	    PERR_OK)
		goto out;
	/*
	 * The zone's domain from the answer: zoneId may come alone.  The
	 * apex's A records, which the parse collects too, are not wanted.
	 */
	if (bv->api.zone == NULL) {
		struct bnlist apex = { 0 };

		if (parse_zone(rs.body, rs.len, "", RR_A, &apex, &domain, why,
		    sizeof(why)) == 0) {
			bv->api.zone = domain;
			domain = NULL;
		}
		bnlist_free(&apex);
	}
	fl = strlen(fqdn) - (fqdn[0] != '\0' && fqdn[strlen(fqdn) - 1] == '.');
	dl = bv->api.zone != NULL ? strlen(bv->api.zone) : 0;
	if (bv->api.zone != NULL && (fl < dl || strncasecmp(fqdn + fl - dl,
	    bv->api.zone, dl) != 0 || (fl > dl && fqdn[fl - dl - 1] != '.'))) {
		snprintf(err, errlen, "bunny.net at %s%s: %s is not in the zone "
		    "%s", bv->api.base, path, fqdn, bv->api.zone);
		text_printable(err);
		e = PERR_INVALID;
		goto out;
	}
	rel = api_relname(&bv->api, fqdn);
	for (k = 0; k < nsets && e == PERR_OK; k++)
		if (parse_zone(rs.body, rs.len, rel, sets[k].type, l, NULL, why,
		    sizeof(why)) == -1) {
			snprintf(err, errlen, "bunny.net at %s%s: unexpected "
			    "answer: %s", bv->api.base, path, why);
			text_printable(err);
			e = PERR_INVALID;
		}
out:
	free(rel);
	free(domain);
	http_resp_free(&rs);
	return e;
}

/* Add (id 0: PUT .../records) or update (POST .../records/ID) a record. */
static enum perr
bn_put(struct bnv *bv, const char *fqdn, long long id, enum rrtype t,
    const char *value, long ttl, char *err, size_t errlen)
{
	struct http_resp rs = { 0 };
	char path[96], *rel = api_relname(&bv->api, fqdn);
	json_t *o;
	enum perr e;

	o = json_pack("{s:i, s:s, s:s, s:I}", "Type", bn_type(t), "Name", rel,
	    "Value", value, "Ttl", (json_int_t)ttl);
	if (id == 0)
		snprintf(path, sizeof(path), "/dnszone/%lld/records",
		    bv->zone_id);
	else
		snprintf(path, sizeof(path), "/dnszone/%lld/records/%lld",
		    bv->zone_id, id);
	e = bn_call(bv, id == 0 ? "PUT" : "POST", path, o, id == 0 ? 201 : 204,
	    &rs, err, errlen);
	http_resp_free(&rs);
	free(rel);
	return e;
}

static enum perr
bn_delete(struct bnv *bv, long long id, char *err, size_t errlen)
{
	struct http_resp rs = { 0 };
	char path[96];
	enum perr e;

	snprintf(path, sizeof(path), "/dnszone/%lld/records/%lld", bv->zone_id,
	    id);
	e = bn_call(bv, "DELETE", path, NULL, 204, &rs, err, errlen);
	http_resp_free(&rs);
	return e;
}

/* ---------------------------------------------------------- the provider */

static const struct provider_key bunny_keys[] = {
	{ "apiKey", PK_REQUIRED | PK_SECRET },
	{ "zoneId", 0 },
	{ "zone", 0 },
	{ "baseUrl", 0 },
	{ "timeout", 0 },
	{ NULL, 0 }
};

static int
bunny_check(const struct provider_cfg *pc, const char **key, char *err,
    size_t errlen)
{
	const char *v;
	int rv = -1;

	if (provider_check_header_secret(pc, "apiKey", key, err, errlen) == -1)
		goto out;
	*key = "zoneId";
	v = provider_cfg_get(pc, "zoneId");
	if (v != NULL && (v[0] == '\0' || v[0] == '0' || strlen(v) >
	    BN_ID_MAX - 2 || strspn(v, "0123456789") != strlen(v))) {
		snprintf(err, errlen, "zoneId: \"%s\" is not a bunny.net zone "
		    "id (a number, as the dashboard's URL shows it)", v);
		goto out;
	}
	*key = "zone";
	if (v == NULL && provider_cfg_get(pc, "zone") == NULL) {
		*key = NULL;
		snprintf(err, errlen, "needs zoneId or zone");
		goto out;
	}
	if (provider_check_zone(pc, "zone", key, err, errlen) == -1)
		goto out;
	rv = api_check_url_timeout(pc, key, err, errlen);
out:
	return rv;
}

static void
bunny_free(void *priv)
{
	struct bnv *bv = priv;

	if (bv != NULL)
		api_free(&bv->api);
}

static void *
bunny_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct bnv *bv;
	const char *v;

	if ((bv = api_create(sizeof(*bv), &bn_api, pc, err, errlen)) == NULL)
		return NULL;
	if ((v = provider_cfg_get(pc, "zoneId")) != NULL)
		bv->zone_id = strtoll(v, NULL, 10);
	return bv;
}

static enum perr
bunny_read(void *priv, const char *fqdn, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	struct bnv *bv = priv;
	struct bnlist l = { 0 };
	struct addr a;
	size_t i, k, n;
	enum perr e = PERR_OK;

	api_begin(&bv->api);
	for (k = 0; k < nsets; k++)
		rrset_clear(&sets[k]);
	e = bn_list(bv, fqdn, sets, nsets, &l, err, errlen);
	for (k = 0; k < nsets && e == PERR_OK; k++) {
		for (i = 0, n = 0; i < l.n; i++) {
			if (l.v[i].type != sets[k].type)
				continue;
			/* TTLs that disagree, or two CNAMEs: no wanted set. */
			sets[k].ttl = n++ == 0 || (l.v[i].ttl == sets[k].ttl &&
			    sets[k].type != RR_CNAME) ? l.v[i].ttl : 0;
			if (sets[k].type == RR_CNAME) {
				if (sets[k].target == NULL)
					sets[k].target = xstrdup(l.v[i].value);
			} else if (addr_parse(l.v[i].value, &a) == 0)
				(void)rrset_read_add(&sets[k], &a, err, errlen);
		}
		rrset_read_end(&sets[k]);
	}
	if (e != PERR_OK)
		for (k = 0; k < nsets; k++)
			rrset_clear(&sets[k]);
	bnlist_free(&l);
	return e;
}

/* Deletes every record of cur not kept. */
static enum perr
bn_delete_rest(struct bnv *bv, const struct bnlist *cur, char *err,
    size_t errlen)
{
	size_t i;
	enum perr e = PERR_OK;

	for (i = 0; i < cur->n && e == PERR_OK; i++)
		if (!cur->v[i].keep)
			e = bn_delete(bv, cur->v[i].id, err, errlen);
	return e;
}

static enum perr
bunny_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct bnv *bv = priv;
	struct bnlist cur = { 0 };
	char *target = NULL;
	size_t i, j, k, n;
	long ttl = 300;
	int had_cname = 0, to_cname = 0, swap;
	enum perr e = PERR_OK;

	api_begin(&bv->api);
	if ((e = bn_list(bv, fqdn, sets, nsets, &cur, err, errlen)) != PERR_OK)
		goto out;
	for (k = 0; k < nsets; k++) {
		if (!rrset_empty(&sets[k]))
			ttl = sets[k].ttl;
		if (sets[k].type == RR_CNAME && sets[k].target != NULL) {
			target = xstrdup(sets[k].target);
			(void)rrset_host_canon(target);
			to_cname = 1;
		}
	}
	/* What is there and wanted is kept (its TTL updated in place). */
	for (i = 0; i < cur.n; i++) {
		had_cname |= cur.v[i].type == RR_CNAME;
		for (k = 0; k < nsets && !cur.v[i].keep; k++) {
			if (sets[k].type != cur.v[i].type)
				continue;
			if (sets[k].type == RR_CNAME)
				cur.v[i].keep = target != NULL &&
				    strcmp(cur.v[i].value, target) == 0;
			else
				for (j = 0; j < sets[k].addrs.n; j++)
					cur.v[i].keep |= strcmp(cur.v[i].value,
					    sets[k].addrs.v[j].s) == 0;
		}
	}
	/* A CNAME comes or goes: the old records first (the name empty). */
	swap = to_cname || had_cname;
	if (swap && (e = bn_delete_rest(bv, &cur, err, errlen)) != PERR_OK)
		goto out;
	for (i = 0; i < cur.n && e == PERR_OK; i++)
		if (cur.v[i].keep && cur.v[i].ttl != ttl)
			e = bn_put(bv, fqdn, cur.v[i].id, cur.v[i].type,
			    cur.v[i].value, ttl, err, errlen);
	for (k = 0; k < nsets && e == PERR_OK; k++) {
		n = sets[k].type == RR_CNAME ? target != NULL :
		    sets[k].addrs.n;
		for (j = 0; j < n && e == PERR_OK; j++) {
			const char *c = sets[k].type == RR_CNAME ? target :
			    sets[k].addrs.v[j].s;

			for (i = 0; i < cur.n && !(cur.v[i].keep &&
			    cur.v[i].type == sets[k].type &&
			    strcmp(cur.v[i].value, c) == 0); i++)
				;
			if (i == cur.n)
				e = bn_put(bv, fqdn, 0, sets[k].type, c, ttl,
				    err, errlen);
		}
	}
	if (!swap && e == PERR_OK)
		e = bn_delete_rest(bv, &cur, err, errlen);
out:
	free(target);
	bnlist_free(&cur);
	return e;
}

const struct provider_ops bunny_ops = {
	.type = "bunny",
	.keys = bunny_keys,
	/* Record by record: nothing is all or nothing. */
	.caps = PCAP_CNAME,
	.ttl_min = BN_TTL_MIN,
	.ttl_max = BN_TTL_MAX,
	.zone_key = "zone",
	.check = bunny_check,
	.create = bunny_create,
	.read = bunny_read,
	.replace = bunny_replace,
	.free = bunny_free,
};
