/*
 * The HTTP(S) check (ddup-check(8), HEALTH CHECKS): one transfer on the
 * loop's multi handle (check.c), a GET or HEAD of the endpoint's url,
 * passed by its status (expectStatus) and body (expectBody).  What a
 * health checker needs on top of a plain transfer: a timeout on every
 * transfer (a check never hangs), a per-handle error buffer (the reason
 * shown to the operator), and a body cap (a huge or endless body costs
 * 64 KiB at most).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "check.h"
#include "check/type.h"
#include "util.h"

#define CHECK_UA		"ddup/1.0"
/*
 * No DNS cache between checks.  libcurl 7.88 puts every host in it, IP
 * literals too, in a hash of 7 lists, and walks the whole cache after each
 * transfer to prune it: quadratic, 10,000 checks took 6.6 s instead of
 * 1.8 s (bench/).  With 0 the cache only holds lookups still in use, and
 * every check resolves its name itself, afresh on each run as ddup-check(8),
 * HEALTH CHECKS, asks.
 */
#define CHECK_DNS_CACHE_S	0L
#define CHECK_BUFSIZE		4096L

/*
 * One of at most max_parallel easy handles, made on first use and then
 * used for check after check: creating and freeing a handle per check
 * cost as much as a tenth of a run.  What a check leaves in its handle
 * is either set again by the next one or cannot carry over (see
 * slot_handle()).
 */
struct slot {
	CURL		*e;		/* NULL until first used */
	void		*tag;		/* the loop's, its CURLOPT_PRIVATE */
	const struct check_req *req;	/* the check in flight (&r), or NULL */
	struct check_req r;
	char		*orighost;	/* the configured URL's host, [::1] */
	struct curl_slist *connect_to;
	struct curl_slist *headers;	/* `header` lines, secrets */
	unsigned char	*body;		/* kept only when expect_body is set */
	size_t		 bodylen;
	size_t		 bodycap;
	size_t		 received;	/* body bytes seen, kept or not */
	int		 capped;	/* we stopped at CHECK_BODY_MAX */
	char		 errbuf[CURL_ERROR_SIZE];
};

/*
 * Keeps what expect_body needs and stops the transfer once CHECK_BODY_MAX
 * bytes came: the short count makes libcurl end it with
 * CURLE_WRITE_ERROR, which slot_done() knows is our doing.
 */
static size_t
write_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct slot	*j = arg;
	size_t		 len = size * nmemb, keep, want;

	keep = len;
	if (j->received + keep > CHECK_BODY_MAX)
		keep = CHECK_BODY_MAX - j->received;
	if (j->req->expect_body != NULL && keep > 0) {
		want = j->bodylen + keep;
		if (want > j->bodycap) {
			j->bodycap = j->bodycap == 0 ? 16384 : j->bodycap;
			while (j->bodycap < want)
				j->bodycap *= 2;
			if (j->bodycap > CHECK_BODY_MAX)
				j->bodycap = CHECK_BODY_MAX;
			j->body = xrealloc(j->body, j->bodycap);
		}
		memcpy(j->body + j->bodylen, data, keep);
		j->bodylen += keep;
	}
	j->received += keep;
	if (j->received >= CHECK_BODY_MAX) {
		j->capped = 1;
		return keep < len ? keep : 0;
	}
	return len;
}

/* memmem() is a GNU extension; the body may hold NUL bytes. */
static int
body_has(const unsigned char *buf, size_t len, const char *text)
{
	size_t	 tlen = strlen(text), i;

	if (tlen == 0)
		return 1;
	if (buf == NULL || len < tlen)
		return 0;
	for (i = 0; i + tlen <= len; i++)
		if (buf[i] == (unsigned char)text[0] &&
		    memcmp(buf + i, text, tlen) == 0)
			return 1;
	return 0;
}

/*
 * For `host`: the URL's host becomes `host` (so the Host header, SNI and
 * certificate check all use it) and CURLOPT_CONNECT_TO sends the
 * connection to the configured address; *url is then ours to free.
 * Without `host` the URL is used as written, unparsed: libcurl parses it
 * anyway, and orighost is only needed to name a host that does not
 * resolve (see fail_reason()).  Returns 0, or -1 with the reason set.
 */
static int
slot_url(struct slot *j, struct check_res *res, char **url)
{
	return check_connect_to(j->req->url, j->req->host, res, url,
	    &j->orighost, &j->connect_to);
}

/*
 * The easy handle of slot j with the options every check shares, set
 * once.  Each check connects afresh, as a client would: a connection
 * left by another endpoint's check on the same address would skip the
 * connect and TLS handshake being tested, and the multi handle's cache
 * would keep descriptors open against the file limit.  So connections
 * are neither reused nor kept (FORBID_REUSE, FRESH_CONNECT), and no TLS
 * session is kept for a later check on the same handle to resume.
 * Returns 0, or -1 with the check's reason set.
 */
static int
slot_handle(struct slot *j, struct check_res *res, const char *ca_file)
{
	CURL	*e;
	int	 bad = 0;

	if (j->e != NULL)
		return 0;
	if ((e = curl_easy_init()) == NULL) {
		check_res_text(res, "libcurl: cannot create a handle");
		return -1;
	}
	bad |= curl_easy_setopt(e, CURLOPT_ERRORBUFFER, j->errbuf) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_PRIVATE, j->tag) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https")
	    != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
	/*
	 * A lookup that outlives the timeout would otherwise make libcurl
	 * wait for its resolver thread when the handle is done.
	 */
	bad |= curl_easy_setopt(e, CURLOPT_QUICK_EXIT, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_DNS_CACHE_TIMEOUT,
	    CHECK_DNS_CACHE_S) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_SSL_SESSIONID_CACHE, 0L)
	    != CURLE_OK;
	/* A health check goes straight to the server, whatever http_proxy. */
	bad |= curl_easy_setopt(e, CURLOPT_PROXY, "") != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L) != CURLE_OK;
	if (ca_file != NULL)
		bad |= curl_easy_setopt(e, CURLOPT_CAINFO, ca_file)
		    != CURLE_OK;
	/*
	 * Each handle keeps a receive buffer of this size: libcurl's 16 KiB
	 * for each of 256 handles made a sixth of a run's memory, for
	 * answers that mostly fit in a few hundred bytes (a body of
	 * CHECK_BODY_MAX takes 16 reads).
	 */
	bad |= curl_easy_setopt(e, CURLOPT_BUFFERSIZE, CHECK_BUFSIZE)
	    != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb)
	    != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_WRITEDATA, j) != CURLE_OK;
	if (bad) {
		curl_easy_cleanup(e);
		check_res_text(res, "libcurl: cannot set up the check");
		return -1;
	}
	j->e = e;
	return 0;
}

/* Wipes the strings of list, `header` values, before it is freed. */
static void
slist_wipe(struct curl_slist *list)
{
	for (; list != NULL; list = list->next)
		explicit_bzero(list->data, strlen(list->data));
}

/*
 * The check's `header` lines as libcurl's list; 0, or -1 with the
 * reason set (no header named in it: they are secrets).
 */
static int
slot_headers(struct slot *j, struct check_res *res)
{
	struct curl_slist *l;
	size_t i;

	for (i = 0; i < j->req->nheaders; i++) {
		if ((l = curl_slist_append(j->headers, j->req->headers[i])) ==
		    NULL) {
			check_res_text(res, "out of memory");
			return -1;
		}
		j->headers = l;
	}
	return 0;
}

/* Forgets what the check in slot j kept; the handle stays. */
static void
slot_clear(struct slot *j)
{
	free(j->orighost);
	j->orighost = NULL;
	curl_slist_free_all(j->connect_to);
	j->connect_to = NULL;
	/* The transfer that used them is over; they were secrets. */
	slist_wipe(j->headers);
	curl_slist_free_all(j->headers);
	j->headers = NULL;
	free(j->body);
	j->body = NULL;
	j->bodylen = j->bodycap = j->received = 0;
	j->capped = 0;
	j->req = NULL;
}

/*
 * Starts check r in the idle slot j.  Returns 0, or -1 with the check's
 * reason set (the check then fails without a transfer, the slot stays
 * idle).
 */
static int
slot_start(void *st, CURLM *cm, void *tag, const struct check_req *r,
    const char *ca_file)
{
	struct slot	*j = st;
	CURLMcode	 mc;
	char		*url = NULL;
	long		 tmo;
	int		 bad = 0, rc = -1;

	j->tag = tag;
	j->r = *r;
	j->req = &j->r;
	r = j->req;
	if (slot_url(j, r->res, &url) == -1 ||
	    slot_handle(j, r->res, ca_file) == -1 ||
	    slot_headers(j, r->res) == -1)
		goto out;
	/* A zero timeout would mean "none" to libcurl: never allow that. */
	tmo = r->timeout_ms > 0 ? (long)r->timeout_ms : 1L;
	j->errbuf[0] = '\0';
	/* libcurl copies the URL; the CONNECT_TO list must outlive it. */
	bad |= curl_easy_setopt(j->e, CURLOPT_URL,
	    url != NULL ? url : r->url) != CURLE_OK;
	bad |= curl_easy_setopt(j->e, CURLOPT_TIMEOUT_MS, tmo) != CURLE_OK;
	bad |= curl_easy_setopt(j->e, CURLOPT_CONNECTTIMEOUT_MS, tmo)
	    != CURLE_OK;
	bad |= curl_easy_setopt(j->e, CURLOPT_CONNECT_TO, j->connect_to)
	    != CURLE_OK;
	bad |= curl_easy_setopt(j->e, CURLOPT_NOBODY, r->head ? 1L : 0L)
	    != CURLE_OK;
	/* Its own tls_schemes: https:// keeps the server's certificate. */
	bad |= check_cert_setup(j->e, strncasecmp(r->url, "https://", 8) == 0)
	    != 0;
	bad |= curl_easy_setopt(j->e, CURLOPT_USERAGENT, r->user_agent != NULL ?
	    r->user_agent : CHECK_UA) != CURLE_OK;
	/* NULL when there are none: a list of the check before is gone. */
	bad |= curl_easy_setopt(j->e, CURLOPT_HTTPHEADER, j->headers)
	    != CURLE_OK;
	if (bad) {
		check_res_text(r->res, "libcurl: cannot set up the check");
		goto out;
	}
	if ((mc = curl_multi_add_handle(cm, j->e)) != CURLM_OK) {
		check_res_reason(r->res, "libcurl: %s",
		    curl_multi_strerror(mc));
		goto out;
	}
	rc = 0;
out:
	free(url);
	if (rc == -1)
		slot_clear(j);
	return rc;
}

/*
 * Whether a transfer that ended with cc met a header line past
 * libcurl's limit (100 KiB): before 8.6 libcurl says "Out of memory",
 * with no message, once connected and before any of the body.
 */
static int
is_header_too_long(const struct slot *j, CURLcode cc, const char *peer)
{
#if LIBCURL_VERSION_NUM >= 0x080600
	if (cc == CURLE_TOO_LARGE)
		return 1;
#endif
	return cc == CURLE_OUT_OF_MEMORY && j->received == 0 && peer != NULL &&
	    *peer != '\0';
}

/*
 * The reason of a transfer that ended with cc (not ours to ignore): a
 * failure to connect as every type names it (check/fail.c), else what
 * only an HTTP answer can do.
 */
static void
fail_reason(struct slot *j, CURLcode cc)
{
	struct check_res *res = j->req->res;
	const char	*detail = j->errbuf[0] != '\0' ? j->errbuf :
			    curl_easy_strerror(cc);
	char		*peer = NULL;
	long		 oserr = 0;

	(void)curl_easy_getinfo(j->e, CURLINFO_OS_ERRNO, &oserr);
	(void)curl_easy_getinfo(j->e, CURLINFO_PRIMARY_IP, &peer);
	if (cc == CURLE_COULDNT_RESOLVE_HOST && j->orighost == NULL)
		j->orighost = check_url_host(j->req->url);

	if (check_fail_connect(res, cc, oserr, j->errbuf,
	    j->orighost != NULL ? j->orighost : j->req->url))
		return;
	/*
	 * libcurl calls an answer that is not HTTP "Unsupported protocol"
	 * (HTTP/0.9), which reads like a bad URL: say what happened.
	 */
	if (cc == CURLE_WEIRD_SERVER_REPLY ||
	    (cc == CURLE_UNSUPPORTED_PROTOCOL && peer != NULL &&
	    *peer != '\0'))
		check_res_reason(res, "not an HTTP answer: %s", detail);
	/* The server's doing, not a lack of memory here. */
	else if (is_header_too_long(j, cc, peer))
		check_res_text(res, "response header too long");
	else
		check_fail_other(res, cc, j->errbuf);
}

/* Fills in the result of a finished transfer; the slot is idle after. */
static int
slot_done(void *st, CURLM *cm, CURLcode cc)
{
	struct slot	*j = st;
	struct check_res *res = j->req->res;
	curl_off_t	 total = 0;
	long		 code = 0;

	(void)curl_easy_getinfo(j->e, CURLINFO_RESPONSE_CODE, &code);
	(void)curl_easy_getinfo(j->e, CURLINFO_TOTAL_TIME_T, &total);
	res->status = code;
	res->latency_ms = (long)(total / 1000);
	res->ok = 0;
	res->cert_expires = check_cert_expires(j->e);

	/* Our write callback stopped it: the body we need has arrived. */
	if (cc == CURLE_WRITE_ERROR && j->capped)
		cc = CURLE_OK;

	if (cc != CURLE_OK)
		fail_reason(j, cc);
	else if (j->req->expect != NULL ?
	    !expect_match(j->req->expect, code) : code / 100 != 2)
		check_res_reason(res, "HTTP %ld", code);
	/* HEAD has no body to look in: expectBody applies to GET only. */
	else if (j->req->expect_body != NULL && !j->req->head &&
	    !body_has(j->body, j->bodylen, j->req->expect_body))
		check_res_reason(res, "HTTP %ld: expected text not found",
		    code);
	else {
		res->ok = 1;
		check_res_text(res, "ok");
	}

	(void)curl_multi_remove_handle(cm, j->e);
	slot_clear(j);
	return 1;
}

static void *
slot_new(void)
{
	return xcalloc(1, sizeof(struct slot));
}

/* The slot's transfer, if one is in flight, is dropped with its handle. */
static void
slot_free(void *st, CURLM *cm)
{
	struct slot	*j = st;

	if (j->req != NULL)
		(void)curl_multi_remove_handle(cm, j->e);
	if (j->e != NULL)
		curl_easy_cleanup(j->e);
	slot_clear(j);
	free(j);
}

/*
 * An http:// or https:// url with a host (the configuration's test of
 * every url of this type, check_url_ok()).
 */
static int
http_url_ok(const char *v, char *err, size_t len)
{
	CURLU *u;
	CURLUcode rc;
	char *host = NULL;
	int ret = -1;

	/* The common case, without a parse that costs 100 times as much. */
	if (url_plain(v))
		return 0;
	if ((u = curl_url()) == NULL) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	if ((rc = curl_url_set(u, CURLUPART_URL, v, 0)) != CURLUE_OK)
		snprintf(err, len, "%s", curl_url_strerror(rc));
	else if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    *host == '\0')
		snprintf(err, len, "no host");
	else
		ret = 0;
	curl_free(host);
	curl_url_cleanup(u);
	return ret;
}

static const char *const http_schemes[] = { "http", "https", NULL };
static const char *const http_tls_schemes[] = { "https", NULL };

const struct check_type check_http = {
	.name = "http",
	.schemes = http_schemes,
	.takes = CHECK_TAKES_HTTP | CHECK_TAKES_CERT,
	.tls_schemes = http_tls_schemes,
	.url_ok = http_url_ok,
	.slot_new = slot_new,
	.start = slot_start,
	.done = slot_done,
	.slot_free = slot_free,
};
