/*
 * Cloudflare API v4, DNS records (http.c, jansson).
 *
 * Cloudflare keeps one record per address, each with an id, a comment and
 * a proxied flag of its own, so replace() lists the name's records, diffs
 * them with the wanted sets and sends only the difference: records
 * already right are left alone (their id and comment survive), a record
 * whose TTL or proxied flag is wrong is patched, the rest created or
 * deleted.  All of it goes in one batch call, which Cloudflare runs as one
 * transaction, in the order deletes, patches, puts, posts.  An API that
 * answers the batch path 404 or 405 gets single calls instead, in an
 * order that keeps the name resolving: additions before deletions.
 *
 * A name holds either a CNAME or addresses, never both (Cloudflare
 * refuses it too), so a move between the two turns one existing record
 * into the other with a PUT: from addresses to a CNAME, the other
 * addresses are deleted first and the last one becomes the CNAME; from a
 * CNAME, it becomes the first address and the others are added after.
 * The name never holds both, and never nothing.
 *
 * https://developers.cloudflare.com/api/resources/dns/subresources/records/
 *
 * The token travels only in the Authorization header.  Answers are
 * untrusted: every parser takes (buffer, length) and is fuzzed.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "config.h"
#include "http.h"
#include "provider.h"
#include "providers/api.h"
#include "rrset.h"
#include "util.h"

#define CF_BASE_URL	"https://api.cloudflare.com/client/v4"
#define CF_TIMEOUT	"10s"
#define CF_PER_PAGE	100
#define CF_MAX_PAGES	100	/* 10000 records of the name, of any type */
#define CF_ID_MAX	64

static const struct provider_key cloudflare_keys[] = {
	{ "apiToken", PK_REQUIRED | PK_SECRET },
	{ "zoneId", 0 },
	{ "zone", 0 },
	{ "proxied", 0 },		/* its endpoints' default (config_build.c) */
	{ "baseUrl", 0 },
	{ "timeout", 0 },
	{ NULL, 0 }
};

/* One record of the name as Cloudflare holds it, or as ddup wants it. */
struct cfrec {
	char		 id[CF_ID_MAX];	/* "" for a wanted one */
	enum rrtype	 type;
	char		*content;	/* canonical address, or lower-case target */
	long		 ttl;
	int		 proxied;
	int		 keep;		/* matched: not deleted / not created */
};

struct cflist {
	struct cfrec	*v;
	size_t		 n;
	size_t		 cap;
};

struct cf {
	struct api	 api;		/* api.zone NULL: given by id */
	char		*zone_id;	/* NULL until looked up */
	int		 no_batch;	/* the API answered batch 404/405 */
};

/* ---------------------------------------------------------------- parsers */

/* "7003 No route for the URI" and the first error_chain entry, if any. */
static const struct api_errtext cf_err = {
	.prefix = "Cloudflare error ",
	.form = { { .in = "errors", .in_first = 1, .code = "code",
	    .code_num = 1, .msg = "message" } },
	.chain = "error_chain",
	.hint_code = 10000,
	.hint = " (check apiToken: it needs Zone.DNS edit on the zone)",
};

static int
cf_errtext(const char *buf, size_t len, char *out, size_t outlen)
{
	return api_errtext(&cf_err, buf, len, out, outlen);
}

static const struct api_def cf_api = {
	.who = "Cloudflare",
	.base_url = CF_BASE_URL,
	.auth_key = "apiToken",
	.auth = "Authorization: Bearer ",
	.zone_key = "zone",
	.timeout = CF_TIMEOUT,
	.errtext = cf_errtext,
};

/*
 * The envelope of an answer: an object with "success": true, and its
 * result (borrowed from *root, which the caller frees).  -1 with the
 * reason in err otherwise.
 */
static int
cf_envelope(const char *buf, size_t len, json_t **root, json_t **result,
    char *err, size_t errlen)
{
	json_t *ok;
	char text[192];

	*result = NULL;
	if ((*root = api_json_load(buf, len, err, errlen)) == NULL)
		return -1;
	ok = json_is_object(*root) ? json_object_get(*root, "success") : NULL;
	if (!json_is_true(ok)) {
		if (cf_errtext(buf, len, text, sizeof(text)) == 0)
			snprintf(err, errlen, "success is not true: %s", text);
		else
			snprintf(err, errlen, "success is not true");
		text_printable(err);
		return -1;
	}
	*result = json_object_get(*root, "result");
	return 0;
}

/* The id of the zone called name in a /zones answer; -1 if none. */
static int
parse_zones(const char *buf, size_t len, const char *name, char *id,
    size_t idlen, char *err, size_t errlen)
{
	json_t *root, *res, *z, *jn, *jid;
	size_t i;
	int rv = -1;

	id[0] = '\0';
	if (cf_envelope(buf, len, &root, &res, err, errlen) == -1)
		goto out;
	if (!json_is_array(res)) {
		snprintf(err, errlen, "result is not an array");
		goto out;
	}
	json_array_foreach(res, i, z) {
		jn = json_object_get(z, "name");
		jid = json_object_get(z, "id");
		if (!json_is_string(jn) || !json_is_string(jid) ||
		    strcasecmp(json_string_value(jn), name) != 0)
			continue;
		if (json_string_length(jid) == 0 ||
		    json_string_length(jid) >= idlen ||
		    strspn(json_string_value(jid), "0123456789abcdefABCDEF") !=
		    json_string_length(jid)) {
			snprintf(err, errlen, "zone id is not hexadecimal");
			goto out;
		}
		snprintf(id, idlen, "%s", json_string_value(jid));
		rv = 0;
		goto out;
	}
	snprintf(err, errlen, "no zone %s in the answer", name);
out:
	json_decref(root);
	return rv;
}

static void
cflist_free(struct cflist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].content);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static struct cfrec *
cflist_add(struct cflist *l, enum rrtype type, const char *content, long ttl,
    int proxied)
{
	struct cfrec *r;

	if (l->n == l->cap) {
		l->cap = l->cap == 0 ? 8 : l->cap * 2;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	r = &l->v[l->n++];
	memset(r, 0, sizeof(*r));
	r->type = type;
	r->content = xstrdup(content);
	r->ttl = ttl;
	r->proxied = proxied;
	return r;
}

/* A host name as compared and stored: lower case, no trailing dot. */
static void
host_canon(char *s)
{
	size_t n;

	provider_lower(s);
	n = strlen(s);
	if (n > 1 && s[n - 1] == '.')
		s[n - 1] = '\0';
}

/*
 * One page of a dns_records list: the records of name of the types in
 * the mask types (bit 1 << type) are appended to l (others are not
 * ddup's, nor counted), and the number of pages is put in *pages.  -1
 * with the reason in err on anything unexpected.
 */
static int
parse_records(const char *buf, size_t len, const char *name, unsigned types,
    struct cflist *l, long *pages, char *err, size_t errlen)
{
	json_t *root, *res, *r, *info, *tp, *jid, *jt, *jn, *jc, *jttl, *jp;
	enum rrtype t;
	struct addr a;
	char *c = NULL;
	size_t i;
	int rv = -1;

	*pages = 1;
	if (cf_envelope(buf, len, &root, &res, err, errlen) == -1)
		goto out;
	if (!json_is_array(res)) {
		snprintf(err, errlen, "result is not an array");
		goto out;
	}
	info = json_object_get(root, "result_info");
	tp = json_is_object(info) ? json_object_get(info, "total_pages") : NULL;
	if (tp != NULL && json_is_number(tp)) {
		if (json_number_value(tp) < 0 ||
		    json_number_value(tp) > 1e9) {
			snprintf(err, errlen, "result_info.total_pages out of "
			    "range");
			goto out;
		}
		*pages = (long)json_number_value(tp);
	}
	json_array_foreach(res, i, r) {
		jid = json_object_get(r, "id");
		jt = json_object_get(r, "type");
		jn = json_object_get(r, "name");
		jc = json_object_get(r, "content");
		jttl = json_object_get(r, "ttl");
		jp = json_object_get(r, "proxied");
		if (!json_is_string(jid) || !json_is_string(jt) ||
		    !json_is_string(jn) || !json_is_string(jc) ||
		    !json_is_integer(jttl) ||
		    (jp != NULL && !json_is_boolean(jp))) {
			snprintf(err, errlen, "result[%zu] lacks id, type, "
			    "name, content or ttl of the right type", i);
			goto out;
		}
		if (strcasecmp(json_string_value(jn), name) != 0 ||
		    rrtype_parse(json_string_value(jt), &t) == -1 ||
		    (types & 1u << t) == 0)
			continue;
		/* The managed types together: what diff() weighs. */
		if (rrset_read_room(l->n, t, err, errlen) == -1)
			goto out;
		if (json_string_length(jid) == 0 ||
		    json_string_length(jid) >= CF_ID_MAX ||
		    strspn(json_string_value(jid), "0123456789abcdefABCDEF") !=
		    json_string_length(jid)) {
			snprintf(err, errlen, "result[%zu]: id is not "
			    "hexadecimal", i);
			goto out;
		}
		if (json_integer_value(jttl) < 1 ||
		    json_integer_value(jttl) > 2147483647) {
			snprintf(err, errlen, "result[%zu]: ttl out of range",
			    i);
			goto out;
		}
		free(c);
		c = xstrdup(json_string_value(jc));
		if (t == RR_CNAME) {
			host_canon(c);
			if (c[0] == '\0' || c[0] == '.' || strlen(c) > 253 ||
			    strspn(c, "abcdefghijklmnopqrstuvwxyz0123456789"
			    "-._") != strlen(c)) {
				snprintf(err, errlen, "result[%zu]: CNAME "
				    "content is not a host name", i);
				goto out;
			}
		} else if (addr_parse(c, &a) == -1 ||
		    a.family != (t == RR_A ? 4 : 6)) {
			snprintf(err, errlen, "result[%zu]: \"%.64s\" is not "
			    "an %s address", i, c, rrtype_str(t));
			goto out;
		} else {
			free(c);
			c = xstrdup(a.s);
		}
		snprintf(cflist_add(l, t, c, (long)json_integer_value(jttl),
		    json_is_true(jp))->id, CF_ID_MAX, "%s",
		    json_string_value(jid));
	}
	rv = 0;
out:
	if (rv == -1)
		text_printable(err);
	free(c);
	json_decref(root);
	return rv;
}

/* -------------------------------------------------------------- HTTP calls */

/*
 * One API call whose 2xx answer must carry "success": true; its result
 * is left in *rs for the caller to parse; http_call() waits out a 429
 * whose Retry-After fits in what is left of this operation's timeout.
 */
static enum perr
cf_call(struct cf *cf, const char *method, const char *url, const char *body,
    struct http_resp *rs, char *err, size_t errlen)
{
	struct http_req rq = { .method = method, .url = url, .body = body };
	json_t *root, *res;
	char why[256];
	enum perr e;

	if ((e = api_call(&cf->api, &rq, rs, err, errlen)) != PERR_OK)
		return e;
	if (cf_envelope(rs->body, rs->len, &root, &res, why, sizeof(why)) ==
	    -1) {
		snprintf(err, errlen, "Cloudflare at %s: unexpected answer: %s",
		    url, why);
		text_printable(err);
		e = PERR_INVALID;
	}
	json_decref(root);
	return e;
}

/* The zone's id: given, or looked up by name once per run. */
static enum perr
zone_id(struct cf *cf, char *err, size_t errlen)
{
	struct http_resp rs;
	char *esc = NULL, *url = NULL, id[CF_ID_MAX], why[256];
	size_t len;
	enum perr e = PERR_TEMP;

	if (cf->zone_id != NULL)
		return PERR_OK;
	memset(&rs, 0, sizeof(rs));
	if ((esc = curl_easy_escape(NULL, cf->api.zone, 0)) == NULL) {
		snprintf(err, errlen, "Cloudflare: out of memory");
		goto out;
	}
	len = strlen(cf->api.base) + strlen(esc) + 32;
	url = xmalloc(len);
	snprintf(url, len, "%s/zones?name=%s", cf->api.base, esc);
	if ((e = cf_call(cf, "GET", url, NULL, &rs, err, errlen)) != PERR_OK)
		goto out;
	if (parse_zones(rs.body, rs.len, cf->api.zone, id, sizeof(id), why,
	    sizeof(why)) == -1) {
		snprintf(err, errlen, "Cloudflare at %s: zone %s not found "
		    "(%s): check zone, or give zoneId", url, cf->api.zone, why);
		text_printable(err);
		e = PERR_NOTFOUND;
		goto out;
	}
	cf->zone_id = xstrdup(id);
	e = PERR_OK;
out:
	http_resp_free(&rs);
	free(url);
	curl_free(esc);
	return e;
}

/* The records url of the zone, with tail appended. */
static char *
records_url(const struct cf *cf, const char *tail)
{
	size_t len = strlen(cf->api.base) + strlen(cf->zone_id) + strlen(tail) +
	    32;
	char *url = xmalloc(len);

	snprintf(url, len, "%s/zones/%s/dns_records%s", cf->api.base, cf->zone_id,
	    tail);
	return url;
}

/* The types of sets, as parse_records() takes them. */
static unsigned
type_mask(const struct rrset *sets, size_t nsets)
{
	unsigned types = 0;
	size_t i;

	for (i = 0; i < nsets; i++)
		types |= 1u << sets[i].type;
	return types;
}

/* Every record of fqdn of the types of sets, page after page. */
static enum perr
list_records(struct cf *cf, const char *fqdn, const struct rrset *sets,
    size_t nsets, struct cflist *l, char *err, size_t errlen)
{
	struct http_resp rs;
	char *esc = NULL, *url = NULL, tail[320], why[256];
	long page, pages = 1;
	enum perr e;

	memset(&rs, 0, sizeof(rs));
	if ((e = zone_id(cf, err, errlen)) != PERR_OK)
		return e;
	if ((esc = curl_easy_escape(NULL, fqdn, 0)) == NULL) {
		snprintf(err, errlen, "Cloudflare: out of memory");
		return PERR_TEMP;
	}
	for (page = 1; page <= pages; page++) {
		if (page > CF_MAX_PAGES) {
			snprintf(err, errlen, "Cloudflare at %s: more than %d "
			    "pages of records for %s", url, CF_MAX_PAGES,
			    fqdn);
			e = PERR_INVALID;
			break;
		}
		snprintf(tail, sizeof(tail), "?name=%s&per_page=%d&page=%ld",
		    esc, CF_PER_PAGE, page);
		free(url);
		url = records_url(cf, tail);
		if ((e = cf_call(cf, "GET", url, NULL, &rs, err, errlen)) !=
		    PERR_OK)
			break;
		if (parse_records(rs.body, rs.len, fqdn, type_mask(sets, nsets),
		    l, &pages, why, sizeof(why)) == -1) {
			snprintf(err, errlen, "Cloudflare at %s: unexpected "
			    "answer: %s", url, why);
			e = PERR_INVALID;
			break;
		}
		http_resp_free(&rs);
	}
	http_resp_free(&rs);
	free(url);
	curl_free(esc);
	if (e != PERR_OK)
		cflist_free(l);
	return e;
}

/* -------------------------------------------------------------- the diff */

/* What ddup wants: one record per address, or the CNAME; TTL 1 if proxied. */
static void
wanted(const struct rrset *sets, size_t nsets, struct cflist *w)
{
	size_t i, j;
	long ttl;

	for (i = 0; i < nsets; i++) {
		ttl = sets[i].proxied ? 1 : sets[i].ttl;
		if (sets[i].type == RR_CNAME) {
			if (sets[i].target != NULL)
				host_canon(cflist_add(w, RR_CNAME,
				    sets[i].target, ttl,
				    sets[i].proxied)->content);
			continue;
		}
		for (j = 0; j < sets[i].addrs.n; j++)
			cflist_add(w, sets[i].type, sets[i].addrs.v[j].s, ttl,
			    sets[i].proxied);
	}
}

static int
managed(const struct rrset *sets, size_t nsets, enum rrtype t)
{
	size_t i;

	for (i = 0; i < nsets; i++)
		if (sets[i].type == t)
			return 1;
	return 0;
}

/* The changes, as JSON arrays of the batch body. */
struct plan {
	json_t		*deletes;	/* [{"id"}] */
	json_t		*patches;	/* [{"id", "ttl", "proxied"}] */
	json_t		*puts;		/* [{"id", record}]: CNAME <-> address */
	json_t		*posts;		/* [record] */
	int		 to_cname;	/* the put makes a CNAME: delete first */
};

static json_t *
rec_json(const char *fqdn, const struct cfrec *r)
{
	return json_pack("{s:s, s:s, s:s, s:I, s:b}", "type",
	    rrtype_str(r->type), "name", fqdn, "content", r->content, "ttl",
	    (json_int_t)r->ttl, "proxied", r->proxied);
}

/*
 * Matches the current records (cur, of the managed types) with the
 * wanted ones: same type and content is the same record.  Fills the
 * plan; returns the number of changes.
 */
static size_t
diff(const char *fqdn, struct cflist *cur, struct cflist *w,
    const struct rrset *sets, size_t nsets, struct plan *p)
{
	struct cfrec *c, *x, *del = NULL, *add = NULL;
	json_t *j;
	size_t i, k;

	for (i = 0; i < cur->n; i++) {
		c = &cur->v[i];
		if (!managed(sets, nsets, c->type))
			c->keep = 1;	/* not ddup's to touch */
		for (k = 0; !c->keep && k < w->n; k++) {
			x = &w->v[k];
			if (x->keep || x->type != c->type ||
			    strcmp(x->content, c->content) != 0)
				continue;
			x->keep = c->keep = 1;
			if (x->ttl != c->ttl || x->proxied != c->proxied)
				json_array_append_new(p->patches, json_pack(
				    "{s:s, s:I, s:b}", "id", c->id, "ttl",
				    (json_int_t)x->ttl, "proxied",
				    x->proxied));
		}
	}
	/*
	 * A CNAME leaving, coming or changing its target: one record
	 * changes in place (a name may not hold a CNAME beside another
	 * record, so it cannot be added first and the old one deleted after).
	 */
	for (i = 0; i < cur->n && (del == NULL || add == NULL); i++)
		if (!cur->v[i].keep && (del == NULL ||
		    cur->v[i].type == RR_CNAME))
			del = &cur->v[i];
	for (k = 0; k < w->n && add == NULL; k++)
		if (!w->v[k].keep)
			add = &w->v[k];
	if (del != NULL && add != NULL &&
	    (del->type == RR_CNAME || add->type == RR_CNAME)) {
		j = rec_json(fqdn, add);
		json_object_set_new(j, "id", json_string(del->id));
		json_array_append_new(p->puts, j);
		p->to_cname = add->type == RR_CNAME && del->type != RR_CNAME;
		del->keep = add->keep = 1;
	}
	for (i = 0; i < cur->n; i++)
		if (!cur->v[i].keep)
			json_array_append_new(p->deletes, json_pack("{s:s}",
			    "id", cur->v[i].id));
	for (k = 0; k < w->n; k++)
		if (!w->v[k].keep)
			json_array_append_new(p->posts, rec_json(fqdn,
			    &w->v[k]));
	return json_array_size(p->deletes) + json_array_size(p->patches) +
	    json_array_size(p->puts) + json_array_size(p->posts);
}

/* One batch call; *gone set when the API has no batch endpoint. */
static enum perr
send_batch(struct cf *cf, const struct plan *p, int *gone, char *err,
    size_t errlen)
{
	struct http_resp rs;
	json_t *body;
	char *url, *s;
	enum perr e;

	memset(&rs, 0, sizeof(rs));
	body = json_object();
	if (json_array_size(p->deletes) > 0)
		json_object_set(body, "deletes", p->deletes);
	if (json_array_size(p->patches) > 0)
		json_object_set(body, "patches", p->patches);
	if (json_array_size(p->puts) > 0)
		json_object_set(body, "puts", p->puts);
	if (json_array_size(p->posts) > 0)
		json_object_set(body, "posts", p->posts);
	s = json_dumps(body, JSON_COMPACT);
	url = records_url(cf, "/batch");
	e = cf_call(cf, "POST", url, s, &rs, err, errlen);
	*gone = e != PERR_OK && (rs.status == 404 || rs.status == 405);
	http_resp_free(&rs);
	free(url);
	free(s);
	json_decref(body);
	return e;
}

/* The calls of one array of the plan, one by one. */
static enum perr
send_each(struct cf *cf, const char *method, json_t *ops, char *err,
    size_t errlen)
{
	struct http_resp rs;
	json_t *op, *body;
	char *url, *s, tail[CF_ID_MAX + 2];
	const char *id;
	size_t i;
	enum perr e = PERR_OK;

	json_array_foreach(ops, i, op) {
		/* The id goes in the URL, the rest in the body. */
		id = json_string_value(json_object_get(op, "id"));
		snprintf(tail, sizeof(tail), "%s%s", id != NULL ? "/" : "",
		    id != NULL ? id : "");
		url = records_url(cf, tail);
		body = json_deep_copy(op);
		json_object_del(body, "id");
		s = strcmp(method, "DELETE") == 0 ? NULL :
		    json_dumps(body, JSON_COMPACT);
		e = cf_call(cf, method, url, s, &rs, err, errlen);
		http_resp_free(&rs);
		json_decref(body);
		free(url);
		free(s);
		if (e != PERR_OK)
			break;
	}
	return e;
}

/*
 * Without batch: additions before deletions, so the name is never
 * empty; towards a CNAME the addresses must go before the last one turns
 * into it.
 */
static enum perr
send_singles(struct cf *cf, const struct plan *p, char *err, size_t errlen)
{
	enum perr e;

	if (p->to_cname)
		return (e = send_each(cf, "DELETE", p->deletes, err, errlen)) !=
		    PERR_OK ? e : send_each(cf, "PUT", p->puts, err, errlen);
	if ((e = send_each(cf, "PUT", p->puts, err, errlen)) != PERR_OK ||
	    (e = send_each(cf, "POST", p->posts, err, errlen)) != PERR_OK ||
	    (e = send_each(cf, "PATCH", p->patches, err, errlen)) != PERR_OK)
		return e;
	return send_each(cf, "DELETE", p->deletes, err, errlen);
}

/* ---------------------------------------------------------- the provider */

static int
cloudflare_check(const struct provider_cfg *pc, const char **key, char *err,
    size_t errlen)
{
	const char *v;

	if (provider_check_header_secret(pc, "apiToken", key, err,
	    errlen) == -1)
		return -1;
	*key = "zoneId";
	v = provider_cfg_get(pc, "zoneId");
	if (v != NULL && (v[0] == '\0' || strlen(v) >= CF_ID_MAX ||
	    strspn(v, "0123456789abcdefABCDEF") != strlen(v))) {
		snprintf(err, errlen, "zoneId: \"%s\" is not a Cloudflare zone "
		    "id (hexadecimal, as the dashboard shows it)", v);
		return -1;
	}
	*key = "zone";
	v = provider_cfg_get(pc, "zone");
	if (v == NULL && provider_cfg_get(pc, "zoneId") == NULL) {
		*key = NULL;
		snprintf(err, errlen, "needs zoneId or zone");
		return -1;
	}
	if (provider_check_zone(pc, "zone", key, err, errlen) == -1)
		return -1;
	*key = "proxied";
	v = provider_cfg_get(pc, "proxied");
	if (v != NULL && parse_bool(v, &(int){ 0 }) == -1) {
		snprintf(err, errlen, "proxied: \"%s\" is not true or false",
		    v);
		return -1;
	}
	return api_check_url_timeout(pc, key, err, errlen);
}

static void
cf_free(struct cf *cf)
{
	if (cf == NULL)
		return;
	free(cf->zone_id);
	api_free(&cf->api);
}

static void *
cloudflare_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct cf *cf;
	const char *v;

	if ((cf = api_create(sizeof(*cf), &cf_api, pc, err, errlen)) == NULL)
		return NULL;
	if ((v = provider_cfg_get(pc, "zoneId")) != NULL)
		cf->zone_id = xstrdup(v);
	return cf;
}

static enum perr
cloudflare_read(void *priv, const char *fqdn, struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct cf *cf = priv;
	struct cflist cur = { 0 };
	struct cfrec *r;
	struct rrset *s;
	struct addr a;
	size_t i, k;
	enum perr e;

	api_begin(&cf->api);
	for (k = 0; k < nsets; k++)
		rrset_clear(&sets[k]);
	if ((e = list_records(cf, fqdn, sets, nsets, &cur, err,
	    errlen)) != PERR_OK)
		return e;
	for (i = 0; i < cur.n; i++) {
		r = &cur.v[i];
		for (k = 0; k < nsets && sets[k].type != r->type; k++)
			;
		if (k == nsets)
			continue;
		s = &sets[k];
		/*
		 * Records of one set that disagree on TTL or proxied make a
		 * set that matches nothing ddup wants: the next replace
		 * brings them in line.
		 */
		if (rrset_empty(s)) {
			s->ttl = r->ttl;
			s->proxied = r->proxied;
		} else if (s->ttl != r->ttl || s->proxied != r->proxied)
			s->ttl = 0;
		/* At most RRSET_READ_MAX: parse_records() saw to it. */
		if (r->type == RR_CNAME) {
			if (s->target == NULL)
				s->target = xstrdup(r->content);
		} else if (addr_parse(r->content, &a) == 0)
			(void)rrset_read_add(s, &a, err, errlen);
	}
	for (k = 0; k < nsets; k++)
		rrset_read_end(&sets[k]);
	cflist_free(&cur);
	return PERR_OK;
}

static enum perr
cloudflare_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct cf *cf = priv;
	struct cflist cur = { 0 }, w = { 0 };
	struct plan p;
	enum perr e;
	int gone = 0;

	api_begin(&cf->api);
	p.deletes = json_array();
	p.patches = json_array();
	p.puts = json_array();
	p.posts = json_array();
	p.to_cname = 0;
	if ((e = list_records(cf, fqdn, sets, nsets, &cur, err,
	    errlen)) != PERR_OK)
		goto out;
	wanted(sets, nsets, &w);
	if (diff(fqdn, &cur, &w, sets, nsets, &p) == 0)
		goto out;
	if (!cf->no_batch) {
		e = send_batch(cf, &p, &gone, err, errlen);
		if (!gone)
			goto out;
		cf->no_batch = 1;
	}
	e = send_singles(cf, &p, err, errlen);
out:
	json_decref(p.deletes);
	json_decref(p.patches);
	json_decref(p.puts);
	json_decref(p.posts);
	cflist_free(&cur);
	cflist_free(&w);
	return e;
}

static void
cloudflare_free(void *priv)
{
	cf_free(priv);
}

const struct provider_ops cloudflare_ops = {
	.type = "cloudflare",
	.keys = cloudflare_keys,
	/* A batch is one transaction; TTL 1 is Cloudflare's "automatic". */
	.caps = PCAP_CNAME | PCAP_PROXIED | PCAP_ATOMIC | PCAP_TTL_AUTO,
	.ttl_min = 60,
	.ttl_max = 86400,
	.zone_key = "zone",
	.check = cloudflare_check,
	.create = cloudflare_create,
	.read = cloudflare_read,
	.replace = cloudflare_replace,
	.free = cloudflare_free,
};
