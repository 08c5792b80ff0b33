/*
 * A client of external-dns's webhook provider protocol, version 1
 * (https://github.com/kubernetes-sigs/external-dns, api/webhook.yaml and
 * docs/tutorials/webhook-provider.md): any of external-dns's webhook
 * providers, run beside ddup, serves as its provider.
 *
 * Once per run `GET /` negotiates the media type and gives the server's
 * domain filter, which must take the domain's name.  A read is one
 * `GET /records` (the whole zone: the name's A, AAAA and CNAME
 * endpoints are taken, the rest passed over).  A replace reads the
 * records again and sends one `POST /records` with what changes for the
 * name only: a type it lacks in create, one that changes in
 * updateOld/updateNew (the old endpoint exactly as listed), one emptied
 * in delete (providers/webhook.h); nothing to change is no call.
 *
 * The protocol retries 5xx only, and so does ddup, bounded as every
 * provider is: at most WH_TRIES attempts, each wait within the
 * operation's `timeout`.  A 5xx on the POST may follow a batch partly
 * applied, so the retry reads the records again and sends what is still
 * to change, never the same batch twice.  Any other status is a failure
 * at once, with the server's text (made printable).
 *
 * The order in which the lists of one POST are applied is the server's:
 * external-dns's own providers differ (its in-memory one validates the
 * whole batch, then creates, updates and deletes).  What ddup
 * guarantees is that each list names only the name's own types, a type
 * at most once in all four lists, and that the end state is the wanted
 * one in any order: a CNAME tier deletes the A and AAAA endpoints and
 * creates the CNAME in the same batch, and the way back deletes the
 * CNAME and creates the addresses.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "config.h"
#include "http.h"
#include "provider.h"
#include "providers/api.h"
#include "providers/webhook.h"
#include "rrset.h"
#include "util.h"

#define WH_URL		"http://127.0.0.1:8888"
#define WH_TRIES	3
#define WH_WAIT_MS	250		/* the first wait; doubled after */
/* The protocol's cap on a body (external-dns's default). */
#define WH_BODY_MAX	((size_t)32 * 1024 * 1024)

struct whv {
	struct api	 api;
	char		*filter;	/* the negotiated filter's JSON; NULL: not yet */
};

static const struct api_def wh_api = {
	.who = "webhook",
	.base_url = WH_URL,
	.timeout = "10s",
};

static const char *const wh_get_hdrs[] = { "Accept: " WH_MEDIA, NULL };
static const char *const wh_post_hdrs[] = { "Accept: " WH_MEDIA,
	"Content-Type: " WH_MEDIA, NULL };

/*
 * One request to {url}PATH, retried on a 5xx when retry is set; *rs
 * holds the last answer.
 */
static enum perr
wh_call(struct whv *wv, const char *method, const char *path,
    const char *body, int retry, struct http_resp *rs, char *err,
    size_t errlen)
{
	char *url = xconcat(wv->api.base, path, "", "", "");
	struct http_req rq = {
		.method = method, .url = url, .body = body,
		.headers = body != NULL ? wh_post_hdrs : wh_get_hdrs,
		.max_body = WH_BODY_MAX, .url_key = "url",
	};
	long long wait = WH_WAIT_MS;
	int n;
	enum perr e;

	for (n = 1;; n++) {
		e = api_call(&wv->api, &rq, rs, err, errlen);
		if (!retry || e == PERR_OK || rs->status < 500 ||
		    rs->status > 599 || n == WH_TRIES ||
		    mono_ms() + wait >= wv->api.deadline)
			break;
		http_resp_free(rs);
		http_sleep_ms(wait);
		wait *= 2;
	}
	free(url);
	return e;
}

/* Whether a Content-Type is the protocol's media type (spaces aside). */
static int
wh_media_ok(const char *ct)
{
	char buf[128];
	size_t n = 0, m = strlen(WH_MEDIA);

	for (; ct != NULL && *ct != '\0' && n + 1 < sizeof(buf); ct++)
		if (*ct != ' ' && *ct != '\t')
			buf[n++] = *ct;
	buf[n] = '\0';
	return n >= m && strncasecmp(buf, WH_MEDIA, m) == 0 &&
	    (buf[m] == '\0' || buf[m] == ';');
}

/* GET / once per run; then whether the filter takes fqdn. */
static enum perr
wh_negotiate(struct whv *wv, const char *fqdn, char *err, size_t errlen)
{
	struct http_resp rs;
	char why[256];
	enum perr e;
	int m;

	if (wv->filter == NULL) {
		if ((e = wh_call(wv, "GET", "/", NULL, 1, &rs, err, errlen)) ==
		    PERR_OK && !wh_media_ok(rs.ctype)) {
			snprintf(err, errlen, "webhook at %s/: the negotiation "
			    "answered %s, not %s", wv->api.base, rs.ctype !=
			    NULL ? rs.ctype : "no Content-Type", WH_MEDIA);
			text_printable(err);
			e = PERR_INVALID;
		} else if (e == PERR_OK)
			wv->filter = xstrdup(rs.body);
		http_resp_free(&rs);
		if (e != PERR_OK)
			return e;
	}
	if ((m = wh_filter_match(wv->filter, strlen(wv->filter), fqdn, why,
	    sizeof(why))) == 1)
		return PERR_OK;
	snprintf(err, errlen, "webhook at %s/: %s%s", wv->api.base,
	    m == -1 ? "unexpected answer: " : "", why);
	text_printable(err);
	return m == -1 ? PERR_INVALID : PERR_NOTFOUND;
}

/* GET /records: the name's sets and their endpoints as listed. */
static enum perr
wh_list(struct whv *wv, const char *fqdn, struct rrset *sets, json_t **cur,
    size_t nsets, char *err, size_t errlen)
{
	struct http_resp rs;
	char why[256];
	enum perr e;

	if ((e = wh_call(wv, "GET", "/records", NULL, 1, &rs, err, errlen)) ==
	    PERR_OK && wh_records_parse(rs.body, rs.len, fqdn, sets, cur,
	    nsets, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "webhook at %s/records: unexpected "
		    "answer: %s", wv->api.base, why);
		text_printable(err);
		e = PERR_INVALID;
	}
	http_resp_free(&rs);
	return e;
}

/* ---------------------------------------------------------- the provider */

static const struct provider_key webhook_keys[] = {
	{ "url", 0 },
	{ "timeout", 0 },
	{ NULL, 0 }
};

static int
webhook_check(const struct provider_cfg *pc, const char **key, char *err,
    size_t errlen)
{
	const char *v = provider_cfg_get(pc, "url");

	*key = "url";
	if (v != NULL && http_check_base_url("url", v, err, errlen) == -1)
		return -1;
	if (provider_check_timeout(pc, key, err, errlen) == -1)
		return -1;
	*key = NULL;
	return 0;
}

static void
webhook_free(void *priv)
{
	struct whv *wv = priv;

	if (wv == NULL)
		return;
	free(wv->filter);
	api_free(&wv->api);
}

static void *
webhook_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct whv *wv;
	const char *v;

	if ((wv = api_create(sizeof(*wv), &wh_api, pc, err, errlen)) == NULL)
		return NULL;
	if ((v = provider_cfg_get(pc, "url")) != NULL)
		api_set_base(&wv->api, v);
	return wv;
}

static enum perr
webhook_read(void *priv, const char *fqdn, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	struct whv *wv = priv;
	json_t *cur[RR_NTYPES] = { NULL };
	size_t k;
	enum perr e;

	api_begin(&wv->api);
	for (k = 0; k < nsets; k++)
		rrset_clear(&sets[k]);
	if (nsets > RR_NTYPES) {
		snprintf(err, errlen, "webhook: %zu sets asked", nsets);
		return PERR_INVALID;
	}
	if ((e = wh_negotiate(wv, fqdn, err, errlen)) == PERR_OK)
		e = wh_list(wv, fqdn, sets, cur, nsets, err, errlen);
	wh_cur_free(cur, nsets);
	return e;
}

static enum perr
webhook_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct whv *wv = priv;
	struct rrset have[RR_NTYPES];
	json_t *cur[RR_NTYPES] = { NULL };
	struct http_resp rs;
	char *body = NULL;
	long long wait = WH_WAIT_MS;
	size_t k;
	int n;
	enum perr e;

	memset(have, 0, sizeof(have));
	if (nsets > RR_NTYPES) {
		snprintf(err, errlen, "webhook: %zu sets asked", nsets);
		return PERR_INVALID;
	}
	for (k = 0; k < nsets; k++)
		have[k].type = sets[k].type;
	api_begin(&wv->api);
	if ((e = wh_negotiate(wv, fqdn, err, errlen)) != PERR_OK)
		goto out;
	for (n = 1;; n++) {
		if ((e = wh_list(wv, fqdn, have, cur, nsets, err, errlen)) !=
		    PERR_OK)
			break;
		free(body);
		if ((body = wh_changes(fqdn, cur, have, sets, nsets)) == NULL)
			break;	/* nothing (or nothing more) to change */
		e = wh_call(wv, "POST", "/records", body, 0, &rs, err, errlen);
		if (e == PERR_OK || rs.status < 500 || rs.status > 599 ||
		    n == WH_TRIES || mono_ms() + wait >= wv->api.deadline) {
			http_resp_free(&rs);
			break;
		}
		/* Maybe partly applied: what is left is read again. */
		http_resp_free(&rs);
		wh_cur_free(cur, nsets);
		http_sleep_ms(wait);
		wait *= 2;
	}
out:
	free(body);
	wh_cur_free(cur, nsets);
	for (k = 0; k < nsets; k++)
		rrset_clear(&have[k]);
	return e;
}

const struct provider_ops webhook_ops = {
	.type = "webhook",
	.keys = webhook_keys,
	/*
	 * Whether one POST is all or nothing is the server's: not
	 * declared.
	 */
	.caps = PCAP_CNAME,
	/* A TTL is the server's to take or refuse (0 is its default). */
	.ttl_min = 1,
	.ttl_max = 2147483647,
	.check = webhook_check,
	.create = webhook_create,
	.read = webhook_read,
	.replace = webhook_replace,
	.free = webhook_free,
};
