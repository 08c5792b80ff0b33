/*
 * Porkbun DNS through its API v3 (http.c, jansson).
 *
 * Every call is a POST whose JSON body carries the two keys (apikey,
 * secretapikey): there is no credential header, and the body is never
 * quoted in a message (http.h).  Porkbun keeps records one by one,
 * each with an id: a set is read with retrieveByNameType/ZONE/TYPE/SUB
 * (only the name's records of that type), and replaced by a diff with
 * what is wanted.  Records already right stay; a right one with a
 * wrong TTL is edited in place; a wrong one is edited into a missing
 * one (edit/ZONE/ID takes a new type and content), so a failover is
 * one call and the name never goes empty; what is still missing is
 * created, and what is left over deleted last.  A name holds a CNAME
 * or addresses, never both: towards a CNAME the other addresses go
 * first and the last one is edited into it; from a CNAME, it is edited
 * into the first address and the others are added after.  Records of
 * other names and types are never touched.
 *
 * Porkbun answers a refused key with 400 and {"status": "ERROR",
 * "message": "Invalid API key. (002)"}: the message, not the status,
 * says that it is the credential.
 *
 * https://porkbun.com/api/json/v3/documentation
 */

#include <ctype.h>
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

#define PB_BASE_URL	"https://api.porkbun.com/api/json/v3"
#define PB_TIMEOUT	"10s"
#define PB_TTL_MIN	600		/* the API's minimum (and default) */
#define PB_ID_MAX	20		/* digits of a record id */
#define PB_AUTH_HINT	"check apiKey and secretApiKey, and that API " \
			"access is on for the domain"

/* One record of the name, as listed: content canonical for its type. */
struct pbrec {
	char		 id[PB_ID_MAX + 1];
	enum rrtype	 type;
	char		*content;
	long		 ttl;
	int		 keep;		/* right as it is, or edited into a want */
};

struct pblist {
	struct pbrec	*v;
	size_t		 n;
	size_t		 cap;
};

/* A record that should be there and is not: created, or edited into. */
struct pbwant {
	enum rrtype	 type;
	const char	*content;
	long		 from;		/* the record edited into it; -1: create */
};

struct pbv {
	struct api	 api;
	char		*apikey;
	char		*secret;
};

/* ---------------------------------------------------------------- parsers */

/* "Porkbun error: ..." from {"status": "ERROR", "message"}. */
static const struct api_errtext pb_err = {
	.prefix = "Porkbun error: ",
	.form = { { .msg = "message" } },
	.first_line = 1,
};

static int
pb_errtext(const char *buf, size_t len, char *out, size_t outlen)
{
	return api_errtext(&pb_err, buf, len, out, outlen);
}

static const struct api_def pb_api = {
	.who = "Porkbun",
	.base_url = PB_BASE_URL,
	.zone_key = "zone",
	.timeout = PB_TIMEOUT,
	.errtext = pb_errtext,
	.auth_hint = PB_AUTH_HINT,
};

/* A number Porkbun writes as a string of digits (or, maybe, a number). */
static int
json_num(json_t *v, long long max, long long *out)
{
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;

	*out = -1;
	if (json_is_integer(v))
		*out = (long long)json_integer_value(v);
	else if (s != NULL && s[0] != '\0' && strlen(s) <= PB_ID_MAX - 1 &&
	    strspn(s, "0123456789") == strlen(s))
		/* At most 19 digits; strtoll() caps what is past max. */
		*out = strtoll(s, NULL, 10);
	return *out >= 0 && *out <= max ? 0 : -1;
}

/* The status of an answer is "SUCCESS": 0, or -1 with the reason. */
static int
parse_status(json_t *root, char *err, size_t errlen)
{
	json_t *st = json_is_object(root) ? json_object_get(root, "status") :
	    NULL;
	int ok = json_is_string(st) && strcmp(json_string_value(st),
	    "SUCCESS") == 0;

	if (!ok)
		snprintf(err, errlen, "status is not SUCCESS");
	return ok ? 0 : -1;
}

/*
 * A retrieveByNameType answer ({"status": "SUCCESS", "records": [{"id",
 * "name", "type", "content", "ttl", "prio", "notes"}]}): the records of
 * type t called fqdn are appended to l, others passed over.  -1 with
 * the reason in err (printable).
 */
static int
parse_records(const char *buf, size_t len, const char *fqdn, enum rrtype t,
    struct pblist *l, char *err, size_t errlen)
{
	json_t *root, *recs, *r, *jid, *jn, *jt, *jc, *jttl;
	struct pbrec *p;
	struct addr a;
	long long id, ttl;
	char *c = NULL;
	size_t i, nt = 0;
	int rv = -1;

	/* l may hold records of other types already (a replace lists all). */
	for (i = 0; i < l->n; i++)
		nt += l->v[i].type == t;
	if ((root = api_json_load(buf, len, err, errlen)) == NULL)
		goto out;
	if (parse_status(root, err, errlen) == -1 || (recs = api_json_array(root,
	    "records", err, errlen)) == NULL)
		goto out;
	json_array_foreach(recs, i, r) {
		jid = json_object_get(r, "id");
		jn = json_object_get(r, "name");
		jt = json_object_get(r, "type");
		jc = json_object_get(r, "content");
		jttl = json_object_get(r, "ttl");
		if (!json_is_string(jn) || !json_is_string(jt) ||
		    !json_is_string(jc)) {
			snprintf(err, errlen, "records[%zu] lacks name, type or "
			    "content of the right type", i);
			goto out;
		}
		if (strcmp(json_string_value(jt), rrtype_str(t)) != 0 ||
		    strcasecmp(json_string_value(jn), fqdn) != 0)
			continue;
		if (json_num(jid, 9223372036854775807LL, &id) == -1 || id < 1 ||
		    json_num(jttl, 2147483647, &ttl) == -1) {
			snprintf(err, errlen, "records[%zu]: id or ttl is not a "
			    "number in range", i);
			goto out;
		}
		free(c);
		c = xstrdup(json_string_value(jc));
		if (t == RR_CNAME ? !rrset_host_canon(c) :
		    (addr_parse(c, &a) == -1 ||
		    a.family != (t == RR_A ? 4 : 6))) {
			snprintf(err, errlen, "records[%zu]: content is not %s",
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
		snprintf(p->id, sizeof(p->id), "%lld", id);
		p->type = t;
		p->content = t == RR_CNAME ? c : xstrdup(a.s);
		if (t == RR_CNAME)
			c = NULL;
		p->ttl = (long)ttl;
		p->keep = 0;
	}
	rv = 0;
out:
	/* The reason quotes the answer, and goes to the log. */
	if (rv == -1)
		text_printable(err);
	free(c);
	json_decref(root);
	return rv;
}

static void
pblist_free(struct pblist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].content);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* -------------------------------------------------------------- HTTP calls */

/* Whether an error answer's message is about the keys (then: 400). */
static int
refused_keys(const struct http_resp *rs)
{
	char text[256];
	size_t i;

	if (pb_errtext(rs->body, rs->len, text, sizeof(text)) == -1)
		return 0;
	for (i = 0; text[i] != '\0'; i++)
		text[i] = (char)tolower((unsigned char)text[i]);
	return strstr(text, "api key") != NULL ||
	    strstr(text, "api access") != NULL;
}

/*
 * POST {base}PATH with body (taken) and the keys in it: an answer of 200
 * whose status is SUCCESS, else the class and the reason.
 */
static enum perr
pb_call(struct pbv *pv, const char *path, json_t *body, struct http_resp *rs,
    char *err, size_t errlen)
{
	struct http_req rq = { .method = "POST", .want = 200 };
	char *url = xconcat(pv->api.base, path, "", "", ""), *s, why[128];
	json_t *root;
	size_t n;
	enum perr e;

	json_object_set_new(body, "apikey", json_string(pv->apikey));
	json_object_set_new(body, "secretapikey", json_string(pv->secret));
	s = json_dumps(body, JSON_COMPACT);
	/* The body holds the keys: only its length is kept past here. */
	json_object_del(body, "apikey");
	json_object_del(body, "secretapikey");
	json_decref(body);
	rq.url = url;
	rq.body = s != NULL ? s : "{}";
	e = api_call(&pv->api, &rq, rs, err, errlen);
	free_secret(s);
	if (e == PERR_INVALID && rs->status == 400 && refused_keys(rs)) {
		e = PERR_AUTH;
		n = strlen(err);
		snprintf(err + n, errlen - n, " (%s)", PB_AUTH_HINT);
	} else if (e == PERR_OK) {
		if ((root = api_json_load(rs->body, rs->len, why,
		    sizeof(why))) == NULL || parse_status(root, why,
		    sizeof(why)) == -1) {
			if (root != NULL && pb_errtext(rs->body, rs->len, why,
			    sizeof(why)) == -1)
				snprintf(why, sizeof(why), "status is not "
				    "SUCCESS");
			snprintf(err, errlen, "Porkbun at %s: unexpected answer: "
			    "%s", url, why);
			text_printable(err);
			e = PERR_INVALID;
		}
		json_decref(root);
	}
	free(url);
	return e;
}

/* "/ZONE/A/app" (the subdomain URL-escaped; none at the apex). */
static int
pb_name_path(const struct pbv *pv, const char *fqdn, enum rrtype t,
    char *buf, size_t len)
{
	char *rel = api_relname(&pv->api, fqdn), *esc;
	int rv = -1;

	if ((esc = curl_easy_escape(NULL, rel, 0)) != NULL) {
		snprintf(buf, len, "/dns/retrieveByNameType/%s/%s%s%s",
		    pv->api.zone, rrtype_str(t), esc[0] != '\0' ? "/" : "", esc);
		curl_free(esc);
		rv = 0;
	}
	free(rel);
	return rv;
}

/* Every record of fqdn of type t, appended to l. */
static enum perr
pb_list(struct pbv *pv, const char *fqdn, enum rrtype t, struct pblist *l,
    char *err, size_t errlen)
{
	struct http_resp rs = { 0 };
	char path[1024], why[256];
	enum perr e = PERR_TEMP;

	if (pb_name_path(pv, fqdn, t, path, sizeof(path)) == -1) {
		snprintf(err, errlen, "Porkbun: out of memory");
		goto out;
	}
	if ((e = pb_call(pv, path, json_object(), &rs, err, errlen)) ==
	    PERR_OK && parse_records(rs.body, rs.len, fqdn, t, l, why,
	    sizeof(why)) == -1) {
		snprintf(err, errlen, "Porkbun at %s%s: unexpected answer: %s",
		    pv->api.base, path, why);
		text_printable(err);
		e = PERR_INVALID;
	}
	http_resp_free(&rs);
out:
	return e;
}

/* A record's fields as create and edit take them (ttl as a string). */
static json_t *
pb_record(const struct pbv *pv, const char *fqdn, enum rrtype t,
    const char *content, long ttl)
{
	char *rel = api_relname(&pv->api, fqdn), num[32];
	json_t *o;

	snprintf(num, sizeof(num), "%ld", ttl);
	o = json_pack("{s:s, s:s, s:s, s:s}", "name", rel, "type",
	    rrtype_str(t), "content", content, "ttl", num);
	free(rel);
	return o;
}

/* One write: "create", "edit/ID" or "delete/ID", with the record or none. */
static enum perr
pb_write(struct pbv *pv, const char *what, const char *id, json_t *rec,
    char *err, size_t errlen)
{
	struct http_resp rs;
	char path[512];
	enum perr e;

	snprintf(path, sizeof(path), "/dns/%s/%s%s%s", what, pv->api.zone,
	    id != NULL ? "/" : "", id != NULL ? id : "");
	e = pb_call(pv, path, rec != NULL ? rec : json_object(), &rs, err,
	    errlen);
	http_resp_free(&rs);
	return e;
}

/* ------------------------------------------------------------ the diff */

/*
 * The record of cur to edit into w: one of w's type not kept; else,
 * across a CNAME change, the last address (towards a CNAME) or the
 * CNAME (towards an address).  -1: none, w is created.
 */
static long
pb_pick(const struct pblist *cur, const struct pbwant *w)
{
	long i, same = -1, alt = -1;

	for (i = 0; i < (long)cur->n && same == -1; i++) {
		if (cur->v[i].keep)
			continue;
		if (cur->v[i].type == w->type)
			same = i;
		else if ((w->type == RR_CNAME) != (cur->v[i].type == RR_CNAME))
			alt = i;
	}
	return same >= 0 ? same : alt;
}

/*
 * The writes, in an order that never leaves the name empty nor with a
 * CNAME beside addresses: towards a CNAME, deletions first; else edits
 * and creations first, deletions last.
 */
static enum perr
pb_apply(struct pbv *pv, const char *fqdn, struct pblist *cur,
    struct pbwant *w, size_t nw, long ttl, int to_cname, char *err,
    size_t errlen)
{
	enum perr e = PERR_OK;
	size_t i, j;
	int pass;

	/* Pass 0: deletions towards a CNAME; 1: edits; 2: creations; 3: deletions. */
	for (pass = 0; pass < 4 && e == PERR_OK; pass++) {
		if (pass == 0 && !to_cname)
			continue;
		if (pass == 3 && to_cname)
			break;
		if (pass == 0 || pass == 3) {
			for (i = 0; i < cur->n && e == PERR_OK; i++)
				if (!cur->v[i].keep)
					e = pb_write(pv, "delete", cur->v[i].id,
					    NULL, err, errlen);
			continue;
		}
		if (pass == 1)
			/* The right content with the wrong TTL, in place. */
			for (i = 0; i < cur->n && e == PERR_OK; i++)
				if (cur->v[i].keep == 1 && cur->v[i].ttl != ttl)
					e = pb_write(pv, "edit", cur->v[i].id,
					    pb_record(pv, fqdn, cur->v[i].type,
					    cur->v[i].content, ttl), err, errlen);
		for (j = 0; j < nw && e == PERR_OK; j++)
			if ((w[j].from >= 0) == (pass == 1))
				e = pb_write(pv, pass == 1 ? "edit" : "create",
				    pass == 1 ? cur->v[w[j].from].id : NULL,
				    pb_record(pv, fqdn, w[j].type, w[j].content,
				    ttl), err, errlen);
	}
	return e;
}

/* ---------------------------------------------------------- the provider */

static const struct provider_key porkbun_keys[] = {
	{ "apiKey", PK_REQUIRED | PK_SECRET },
	{ "secretApiKey", PK_REQUIRED | PK_SECRET },
	{ "zone", PK_REQUIRED },
	{ "baseUrl", 0 },
	{ "timeout", 0 },
	{ NULL, 0 }
};

static int
porkbun_check(const struct provider_cfg *pc, const char **key, char *err,
    size_t errlen)
{
	if (api_check_token_word(pc, "apiKey", key, err, errlen) == -1 ||
	    api_check_token_word(pc, "secretApiKey", key, err, errlen) == -1 ||
	    provider_check_zone(pc, "zone", key, err, errlen) == -1)
		return -1;
	return api_check_url_timeout(pc, key, err, errlen);
}

static void
porkbun_free(void *priv)
{
	struct pbv *pv = priv;

	if (pv == NULL)
		return;
	free_secret(pv->apikey);
	free_secret(pv->secret);
	api_free(&pv->api);
}

static void *
porkbun_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct pbv *pv;
	const char *k, *s;

	if ((pv = api_create(sizeof(*pv), &pb_api, pc, err, errlen)) == NULL)
		return NULL;
	k = provider_cfg_get(pc, "apiKey");
	s = provider_cfg_get(pc, "secretApiKey");
	pv->apikey = xstrdup(k != NULL ? k : "");
	pv->secret = xstrdup(s != NULL ? s : "");
	return pv;
}

static enum perr
porkbun_read(void *priv, const char *fqdn, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	struct pbv *pv = priv;
	struct pblist l = { 0 };
	struct addr a;
	size_t i, k;
	enum perr e = PERR_OK;

	api_begin(&pv->api);
	for (k = 0; k < nsets; k++)
		rrset_clear(&sets[k]);
	for (k = 0; k < nsets && e == PERR_OK; k++) {
		pblist_free(&l);
		if ((e = pb_list(pv, fqdn, sets[k].type, &l, err, errlen)) !=
		    PERR_OK)
			break;
		for (i = 0; i < l.n; i++) {
			/* TTLs that disagree, or two CNAMEs: no wanted set. */
			sets[k].ttl = i == 0 || (l.v[i].ttl == sets[k].ttl &&
			    sets[k].type != RR_CNAME) ? l.v[i].ttl : 0;
			if (sets[k].type == RR_CNAME) {
				if (i == 0)
					sets[k].target = xstrdup(l.v[i].content);
			} else if (addr_parse(l.v[i].content, &a) == 0)
				(void)rrset_read_add(&sets[k], &a, err, errlen);
		}
		rrset_read_end(&sets[k]);
	}
	if (e != PERR_OK)
		for (k = 0; k < nsets; k++)
			rrset_clear(&sets[k]);
	pblist_free(&l);
	return e;
}

static enum perr
porkbun_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct pbv *pv = priv;
	struct pblist cur = { 0 };
	struct pbwant *w = NULL;
	char *target = NULL;
	size_t i, j, k, nw = 0, cap = 0;
	long ttl = PB_TTL_MIN;
	int to_cname = 0;
	enum perr e = PERR_OK;

	api_begin(&pv->api);
	for (k = 0; k < nsets && e == PERR_OK; k++)
		e = pb_list(pv, fqdn, sets[k].type, &cur, err, errlen);
	if (e != PERR_OK)
		goto out;
	/* What is wanted and not there; what is there and wanted is kept. */
	for (k = 0; k < nsets; k++) {
		const struct rrset *s = &sets[k];
		size_t n = s->type == RR_CNAME ? s->target != NULL :
		    s->addrs.n;

		if (!rrset_empty(s))
			ttl = s->ttl;
		if (s->type == RR_CNAME && s->target != NULL) {
			free(target);
			target = xstrdup(s->target);
			(void)rrset_host_canon(target);
			to_cname = 1;
		}
		for (j = 0; j < n; j++) {
			const char *c = s->type == RR_CNAME ? target :
			    s->addrs.v[j].s;

			for (i = 0; i < cur.n && (cur.v[i].keep ||
			    cur.v[i].type != s->type ||
			    strcmp(cur.v[i].content, c) != 0); i++)
				;
			if (i < cur.n) {
				cur.v[i].keep = 1;
				continue;
			}
			if (nw == cap) {
				cap = cap == 0 ? 8 : cap * 2;
				w = xrealloc(w, cap * sizeof(*w));
			}
			w[nw].type = s->type;
			w[nw].content = c;
			w[nw++].from = -1;
		}
	}
	/* The records that go are edited into the ones that come. */
	for (j = 0; j < nw; j++)
		if ((w[j].from = pb_pick(&cur, &w[j])) >= 0)
			cur.v[w[j].from].keep = 2;
	e = pb_apply(pv, fqdn, &cur, w, nw, ttl, to_cname, err, errlen);
out:
	free(w);
	free(target);
	pblist_free(&cur);
	return e;
}

const struct provider_ops porkbun_ops = {
	.type = "porkbun",
	.keys = porkbun_keys,
	/* Record by record: nothing is all or nothing. */
	.caps = PCAP_CNAME,
	.ttl_min = PB_TTL_MIN,
	.ttl_max = 2147483647,
	.zone_key = "zone",
	.check = porkbun_check,
	.create = porkbun_create,
	.read = porkbun_read,
	.replace = porkbun_replace,
	.free = porkbun_free,
};
