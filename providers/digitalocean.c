/*
 * DigitalOcean DNS through its API v2 (http.c, jansson).
 *
 * DigitalOcean keeps records one by one, each with an id: a set is read
 * by listing the name's records of its type (GET
 * /v2/domains/ZONE/records?name=FQDN&type=T, page after page), and
 * replaced by a diff of that list with the wanted addresses: the missing
 * ones are added (POST), a right address with a wrong TTL is patched in
 * place (PATCH), and only then are the unwanted ones deleted (DELETE by
 * id), so the name never goes empty on the way.  Records already right
 * are left alone; records of other types are never touched.
 *
 * A CNAME is a record of its own type, and an update cannot change a
 * record's type: a tier that moves between a CNAME and addresses
 * deletes every record of the old type (the emptied sets go first) and
 * creates the new ones after, so the name never holds a CNAME beside
 * addresses, which DigitalOcean refuses, but holds nothing for the
 * moment between.  A CNAME to another host is patched in place.  Its
 * data is written with the final dot DigitalOcean requires, and read
 * back without it ("@" is the zone's apex).
 *
 * https://docs.digitalocean.com/reference/api/digitalocean/#tag/Domain-Records
 *
 * The token travels only in the Authorization header.
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

#define DO_BASE_URL	"https://api.digitalocean.com"
#define DO_TIMEOUT	"10s"
#define DO_PER_PAGE	200		/* the API's largest page */
#define DO_MAX_PAGES	50		/* 10,000 records: a loop, or no filter */

/* One record of the name, as listed. */
struct dorec {
	long long	 id;
	struct addr	 a;		/* A, AAAA */
	char		*target;	/* CNAME: canonical, no final dot */
	long		 ttl;
	int		 keep;
};

struct dolist {
	struct dorec	*v;
	size_t		 n;
	size_t		 cap;
};

struct dov {
	struct api	 api;
	char		*records;	/* {base}/v2/domains/ZONE/records */
};

static void
dolist_free(struct dolist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].target);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/*
 * A CNAME's data as struct rrset holds it: lower case, without the
 * final dot, "@" the zone itself; NULL when it is no host name.
 */
static char *
cname_target(const char *data, const char *zone)
{
	char *s = xstrdup(strcmp(data, "@") == 0 ? zone : data);
	size_t n;

	provider_lower(s);
	n = strlen(s);
	if (n > 1 && s[n - 1] == '.')
		s[--n] = '\0';
	if (n == 0 || n > 253 || s[0] == '.' || strspn(s,
	    "abcdefghijklmnopqrstuvwxyz0123456789-._") != n) {
		free(s);
		s = NULL;
	}
	return s;
}

/* ---------------------------------------------------------------- parsers */

/* "DigitalOcean error not_found: ..." from {"id", "message"}. */
static const struct api_errtext do_err = {
	.prefix = "DigitalOcean error ",
	.form = { { .code = "id", .msg = "message" } },
};

static int
do_errtext(const char *buf, size_t len, char *out, size_t outlen)
{
	return api_errtext(&do_err, buf, len, out, outlen);
}

static const struct api_def do_api = {
	.who = "DigitalOcean",
	.base_url = DO_BASE_URL,
	.auth_key = "apiToken",
	.auth = "Authorization: Bearer ",
	.zone_key = "zone",
	.timeout = DO_TIMEOUT,
	.errtext = do_errtext,
	.keep_case = 1,
};

/*
 * One page of a list ({"domain_records": [{"id", "type", "name",
 * "data", "ttl"}], "links": {"pages": {"next"}}}): the records of type
 * t called name (relative, "@" at the apex) are appended to l, and *more
 * says whether a next page follows.  -1 with the reason in err.
 */
static int
parse_records(const char *buf, size_t len, const char *name, const char *zone,
    enum rrtype t, struct dolist *l, int *more, char *err, size_t errlen)
{
	json_t *root, *recs, *r, *jid, *jt, *jn, *jd, *jttl, *links, *pages;
	struct dorec *d;
	struct addr a;
	char *target = NULL;
	size_t i;
	int rv = -1;

	*more = 0;
	if ((root = api_json_load(buf, len, err, errlen)) == NULL)
		goto out;
	if ((recs = api_json_array(root, "domain_records", err, errlen)) ==
	    NULL)
		goto out;
	json_array_foreach(recs, i, r) {
		jid = json_object_get(r, "id");
		jt = json_object_get(r, "type");
		jn = json_object_get(r, "name");
		jd = json_object_get(r, "data");
		jttl = json_object_get(r, "ttl");
		if (!json_is_integer(jid) || !json_is_string(jt) ||
		    !json_is_string(jn) || !json_is_string(jd) ||
		    !json_is_integer(jttl)) {
			snprintf(err, errlen, "domain_records[%zu] lacks id, "
			    "type, name, data or ttl of the right type", i);
			goto out;
		}
		if (strcmp(json_string_value(jt), rrtype_str(t)) != 0 ||
		    strcasecmp(json_string_value(jn), name) != 0)
			continue;
		if (json_integer_value(jid) < 1 ||
		    json_integer_value(jttl) < 0 ||
		    json_integer_value(jttl) > 2147483647) {
			snprintf(err, errlen, "domain_records[%zu]: id or ttl "
			    "out of range", i);
			goto out;
		}
		if (t == RR_CNAME) {
			if ((target = cname_target(json_string_value(jd),
			    zone)) == NULL) {
				snprintf(err, errlen, "domain_records[%zu]: data "
				    "is not a host name", i);
				goto out;
			}
			memset(&a, 0, sizeof(a));
		} else if (addr_parse(json_string_value(jd), &a) == -1 ||
		    a.family != (t == RR_A ? 4 : 6)) {
			snprintf(err, errlen, "domain_records[%zu]: data is not "
			    "an %s address", i, rrtype_str(t));
			goto out;
		}
		if (rrset_read_room(l->n, t, err, errlen) == -1) {
			free(target);
			goto out;
		}
		if (l->n == l->cap) {
			l->cap = l->cap == 0 ? 8 : l->cap * 2;
			l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
		}
		d = &l->v[l->n++];
		d->id = (long long)json_integer_value(jid);
		d->a = a;
		d->target = target;
		target = NULL;
		d->ttl = (long)json_integer_value(jttl);
		d->keep = 0;
	}
	links = json_object_get(root, "links");
	pages = json_is_object(links) ? json_object_get(links, "pages") : NULL;
	*more = json_is_object(pages) && json_is_string(json_object_get(pages,
	    "next"));
	rv = 0;
out:
	/* The reason quotes the answer, and goes to the log. */
	if (rv == -1)
		text_printable(err);
	json_decref(root);
	return rv;
}

/* -------------------------------------------------------------- HTTP calls */

static enum perr
do_call(struct dov *dv, const char *method, const char *url, json_t *body,
    long want, struct http_resp *rs, char *err, size_t errlen)
{
	char *s = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
	struct http_req rq = {
		.method = method, .url = url, .body = s, .want = want,
	};
	enum perr e;

	e = api_call(&dv->api, &rq, rs, err, errlen);
	free(s);
	json_decref(body);
	return e;
}

/* The name relative to the zone, as records are named: "@" at the apex. */
static void
do_rel(const struct dov *dv, const char *fqdn, char *buf, size_t len)
{
	char *s = api_relname(&dv->api, fqdn);

	snprintf(buf, len, "%s", s[0] != '\0' ? s : "@");
	free(s);
}

/* Every record of fqdn of type t, page after page. */
static enum perr
do_list(struct dov *dv, const char *fqdn, enum rrtype t, struct dolist *l,
    char *err, size_t errlen)
{
	struct http_resp rs;
	char *esc, url[1024], rel[256], why[256];
	int page, more = 1;
	enum perr e = PERR_OK;

	dolist_free(l);
	if ((esc = curl_easy_escape(NULL, fqdn, 0)) == NULL) {
		snprintf(err, errlen, "DigitalOcean: out of memory");
		return PERR_TEMP;
	}
	do_rel(dv, fqdn, rel, sizeof(rel));
	for (page = 1; more && e == PERR_OK; page++) {
		snprintf(url, sizeof(url), "%s?name=%s&type=%s&per_page=%d"
		    "&page=%d", dv->records, esc, rrtype_str(t), DO_PER_PAGE,
		    page);
		if (page > DO_MAX_PAGES) {
			snprintf(err, errlen, "DigitalOcean at %s: more than %d "
			    "pages of records", url, DO_MAX_PAGES);
			e = PERR_INVALID;
		} else if ((e = do_call(dv, "GET", url, NULL, 200, &rs, err,
		    errlen)) == PERR_OK && parse_records(rs.body, rs.len, rel,
		    dv->api.zone, t, l, &more, why, sizeof(why)) == -1) {
			snprintf(err, errlen, "DigitalOcean at %s: unexpected "
			    "answer: %s", url, why);
			e = PERR_INVALID;
		}
		if (page <= DO_MAX_PAGES)
			http_resp_free(&rs);
	}
	if (e != PERR_OK)
		text_printable(err);
	curl_free(esc);
	return e;
}

/*
 * The name's one CNAME made as wanted: the first record listed is
 * patched to it if it differs, any other deleted (a name has one CNAME,
 * so none is created beside another); created when there is none.
 */
static enum perr
do_sync_cname(struct dov *dv, const char *rel, const struct rrset *want,
    const struct dolist *cur, char *err, size_t errlen)
{
	struct http_resp rs;
	char url[1024], *data;
	size_t i;
	enum perr e = PERR_OK;

	data = xconcat(want->target, ".", "", "", "");
	if (cur->n == 0)
		e = do_call(dv, "POST", dv->records, json_pack("{s:s, s:s, s:s, "
		    "s:I}", "type", "CNAME", "name", rel, "data", data, "ttl",
		    (json_int_t)want->ttl), 201, &rs, err, errlen);
	else if (strcmp(cur->v[0].target, want->target) != 0 ||
	    cur->v[0].ttl != want->ttl) {
		snprintf(url, sizeof(url), "%s/%lld", dv->records,
		    cur->v[0].id);
		e = do_call(dv, "PATCH", url, json_pack("{s:s, s:s, s:I}",
		    "type", "CNAME", "data", data, "ttl",
		    (json_int_t)want->ttl), 200, &rs, err, errlen);
	} else
		goto extra;
	http_resp_free(&rs);
extra:
	for (i = 1; i < cur->n && e == PERR_OK; i++) {
		snprintf(url, sizeof(url), "%s/%lld", dv->records,
		    cur->v[i].id);
		e = do_call(dv, "DELETE", url, NULL, 204, &rs, err, errlen);
		http_resp_free(&rs);
	}
	free(data);
	return e;
}

/* One set made as wanted: additions, TTL fixes, then deletions. */
static enum perr
do_sync(struct dov *dv, const char *fqdn, const struct rrset *want,
    char *err, size_t errlen)
{
	struct dolist cur = { 0 };
	struct http_resp rs;
	char url[1024], rel[256];
	const char *type = rrtype_str(want->type);
	size_t i, j;
	enum perr e;

	if ((e = do_list(dv, fqdn, want->type, &cur, err, errlen)) != PERR_OK)
		goto out;
	do_rel(dv, fqdn, rel, sizeof(rel));
	if (want->type == RR_CNAME && want->target != NULL) {
		e = do_sync_cname(dv, rel, want, &cur, err, errlen);
		goto out;
	}
	for (j = 0; j < want->addrs.n && e == PERR_OK; j++) {
		for (i = 0; i < cur.n && (cur.v[i].keep ||
		    addr_cmp(&cur.v[i].a, &want->addrs.v[j]) != 0); i++)
			;
		if (i == cur.n) {
			e = do_call(dv, "POST", dv->records, json_pack("{s:s, s:s, "
			    "s:s, s:I}", "type", type, "name", rel, "data",
			    want->addrs.v[j].s, "ttl", (json_int_t)want->ttl),
			    201, &rs, err, errlen);
			http_resp_free(&rs);
			continue;
		}
		cur.v[i].keep = 1;
		if (cur.v[i].ttl == want->ttl)
			continue;
		snprintf(url, sizeof(url), "%s/%lld", dv->records, cur.v[i].id);
		e = do_call(dv, "PATCH", url, json_pack("{s:s, s:I}", "type",
		    type, "ttl", (json_int_t)want->ttl), 200, &rs, err, errlen);
		http_resp_free(&rs);
	}
	for (i = 0; i < cur.n && e == PERR_OK; i++) {
		if (cur.v[i].keep)
			continue;
		snprintf(url, sizeof(url), "%s/%lld", dv->records, cur.v[i].id);
		e = do_call(dv, "DELETE", url, NULL, 204, &rs, err, errlen);
		http_resp_free(&rs);
	}
out:
	dolist_free(&cur);
	return e;
}

/* ---------------------------------------------------------- the provider */

static void
digitalocean_free(void *priv)
{
	struct dov *dv = priv;

	if (dv == NULL)
		return;
	free(dv->records);
	api_free(&dv->api);
}

static void *
digitalocean_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct dov *dv;

	if ((dv = api_create(sizeof(*dv), &do_api, pc, err, errlen)) == NULL)
		return NULL;
	dv->records = xconcat(dv->api.base, "/v2/domains/", dv->api.zone,
	    "/records", "");
	return dv;
}

static enum perr
digitalocean_read(void *priv, const char *fqdn, struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct dov *dv = priv;
	struct dolist l = { 0 };
	size_t i, k;
	enum perr e = PERR_OK;

	api_begin(&dv->api);
	for (k = 0; k < nsets; k++)
		rrset_clear(&sets[k]);
	for (k = 0; k < nsets && e == PERR_OK; k++) {
		if ((e = do_list(dv, fqdn, sets[k].type, &l, err, errlen)) !=
		    PERR_OK)
			break;
		if (sets[k].type == RR_CNAME) {
			/* Two CNAMEs (no zone holds them): no wanted set. */
			if (l.n > 0) {
				sets[k].target = xstrdup(l.v[0].target);
				sets[k].ttl = l.n == 1 ? l.v[0].ttl : 0;
			}
			continue;
		}
		/* At most RRSET_READ_MAX: parse_records() saw to it. */
		for (i = 0; i < l.n; i++) {
			/* TTLs that disagree match no wanted set: 0. */
			sets[k].ttl = i == 0 || l.v[i].ttl == sets[k].ttl ?
			    l.v[i].ttl : 0;
			(void)rrset_read_add(&sets[k], &l.v[i].a, err, errlen);
		}
		rrset_read_end(&sets[k]);
	}
	if (e != PERR_OK)
		for (k = 0; k < nsets; k++)
			rrset_clear(&sets[k]);
	dolist_free(&l);
	return e;
}

static enum perr
digitalocean_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct dov *dv = priv;
	size_t k;
	int pass;
	enum perr e = PERR_OK;

	api_begin(&dv->api);
	/*
	 * The emptied sets first, the others after: towards a CNAME the
	 * addresses go before it comes, and the other way round.
	 */
	for (pass = 0; pass < 2; pass++)
		for (k = 0; k < nsets && e == PERR_OK; k++)
			if (rrset_empty(&sets[k]) == (pass == 0))
				e = do_sync(dv, fqdn, &sets[k], err, errlen);
	return e;
}

const struct provider_ops digitalocean_ops = {
	.type = "digitalocean",
	.keys = api_token_zone_keys,
	/* Record by record: nothing is all or nothing. */
	.caps = PCAP_CNAME,
	.ttl_min = 30,
	.ttl_max = 2147483647,
	.zone_key = "zone",
	.check = api_check_token_zone,
	.create = digitalocean_create,
	.read = digitalocean_read,
	.replace = digitalocean_replace,
	.free = digitalocean_free,
};
