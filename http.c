/*
 * The HTTP client of the provider APIs: see http.h.  Answers are
 * untrusted: bodies are capped while they arrive, and whatever is quoted
 * from them is cut to one printable line.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "http.h"
#include "util.h"

static size_t
body_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct http_resp *rs = arg;
	size_t n = size * nmemb;

	/*
	 * A short count makes libcurl abort with CURLE_WRITE_ERROR: a body
	 * past the cap is not read on (http_once() tells whether that is a
	 * failure).
	 */
	if (n > rs->max - rs->len) {
		rs->over = 1;
		return 0;
	}
	/* Doubling: a body of many small pieces is not copied over and over. */
	if (rs->len + n + 1 > rs->cap) {
		rs->cap = rs->cap > 16384 ? rs->cap : 16384;
		while (rs->cap < rs->len + n + 1)
			rs->cap *= 2;
		rs->body = xrealloc(rs->body, rs->cap);
	}
	memcpy(rs->body + rs->len, data, n);
	rs->len += n;
	rs->body[rs->len] = '\0';
	return n;
}

/* A short printable excerpt of a text body: its first line. */
static void
excerpt(const struct http_resp *rs, char *out, size_t outlen)
{
	size_t i, j;

	out[0] = '\0';
	if (rs->body == NULL)
		return;
	for (i = 0, j = 0; i < rs->len && j + 1 < outlen && j < 120; i++) {
		if (rs->body[i] == '\n' || rs->body[i] == '\r')
			break;
		out[j] = rs->body[i];
		if (out[j] == '\0')
			out[j] = '?';
		j++;
	}
	out[j] = '\0';
	text_printable(out);
}

static const char *
reason(long status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 412: return "Precondition Failed";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	}
	return "";
}

enum perr
http_status_class(long status)
{
	if (status == 401 || status == 403)
		return PERR_AUTH;
	if (status == 404)
		return PERR_NOTFOUND;
	if (status == 429)
		return PERR_RATELIMIT;
	if (status >= 500)
		return PERR_TEMP;
	/* 3xx (not followed), 400, 409, 422...: the request was wrong. */
	return PERR_INVALID;
}

/*
 * Whether the wait rs asks for ends before rq's deadline (retry_after is
 * at most HTTP_RETRY_AFTER_MAX: no overflow).
 */
static int
wait_fits(const struct http_req *rq, const struct http_resp *rs)
{
	return rq->deadline > 0 && rs->retry_after > 0 &&
	    mono_ms() + rs->retry_after * 1000 < rq->deadline;
}

/* The url as messages quote it. */
static const char *
shown(const struct http_req *rq)
{
	return rq->shown_url != NULL ? rq->shown_url : rq->url;
}

enum perr
http_status_error(const struct http_req *rq, const struct http_resp *rs,
    char *err, size_t errlen)
{
	char detail[256], text[160];
	const char *ct = rs->ctype;
	const char *mt = rq->err_ctype != NULL ? rq->err_ctype :
	    "application/json";
	enum perr e;
	size_t len;

	e = http_status_class(rs->status);
	detail[0] = '\0';
	if (rq->errtext != NULL && ct != NULL &&
	    strncasecmp(ct, mt, strlen(mt)) == 0 &&
	    (ct[strlen(mt)] == '\0' || ct[strlen(mt)] == ';' ||
	    ct[strlen(mt)] == ' ') &&
	    rq->errtext(rs->body != NULL ? rs->body : "", rs->len, text,
	    sizeof(text)) == 0) {
		text_printable(text);
		snprintf(detail, sizeof(detail), ": %s", text);
	} else if (rs->len > 0) {
		excerpt(rs, text, sizeof(text));
		if (text[0] != '\0' && strcasecmp(text, reason(rs->status)) !=
		    0)
			snprintf(detail, sizeof(detail), ": %s", text);
	}
	if (e == PERR_AUTH && rq->auth_hint != NULL)
		snprintf(detail, sizeof(detail), ": %s", rq->auth_hint);
	else if (e == PERR_NOTFOUND && rq->notfound_hint != NULL)
		snprintf(detail, sizeof(detail), ": %s", rq->notfound_hint);
	else if (rs->status >= 300 && rs->status <= 399)
		snprintf(detail, sizeof(detail), ": redirects are not "
		    "followed (check %s)", rq->url_key != NULL ? rq->url_key :
		    "baseUrl");
	snprintf(err, errlen, "%s at %s: %ld%s%s%s", rq->who, shown(rq),
	    rs->status, reason(rs->status)[0] != '\0' ? " " : "",
	    reason(rs->status), detail);
	/* A wait longer than the operation's budget is the next run's. */
	if (e == PERR_RATELIMIT && rs->retry_after > 0 &&
	    (len = strlen(err)) + 1 < errlen) {
		if (rs->retry_after >= HTTP_RETRY_AFTER_MAX)
			snprintf(err + len, errlen - len, " (retry after %lld "
			    "days or more", HTTP_RETRY_AFTER_MAX / 86400);
		else
			snprintf(err + len, errlen - len, " (retry after %llds",
			    rs->retry_after);
		len = strlen(err);
		snprintf(err + len, errlen - len, "%s)", rq->deadline > 0 &&
		    !wait_fits(rq, rs) ? ": past the timeout, not waited" : "");
	}
	text_printable(err);
	return e;
}

/* The message of a transfer that got no usable answer. */
static enum perr
transfer_error(const struct http_req *rq, const struct http_resp *rs,
    CURLcode cc, const char *ebuf, char *err, size_t errlen)
{
	enum perr e = PERR_TEMP;
	char tmo[32];

	if ((cc == CURLE_WRITE_ERROR && rs->over) ||
	    cc == CURLE_FILESIZE_EXCEEDED) {
		snprintf(err, errlen, "%s at %s: unexpected answer: body "
		    "larger than %zu bytes", rq->who, shown(rq), rs->max);
		e = PERR_INVALID;
	} else if (cc == CURLE_OPERATION_TIMEDOUT) {
		format_duration(rq->timeout_ms, tmo, sizeof(tmo));
		snprintf(err, errlen, "%s at %s: no answer within %s", rq->who,
		    shown(rq), tmo);
		e = PERR_NET;
	} else {
		snprintf(err, errlen, "%s at %s: %s", rq->who, shown(rq),
		    ebuf[0] != '\0' ? ebuf : curl_easy_strerror(cc));
		/* Nothing came back: the server is not there for this run. */
		if (cc == CURLE_COULDNT_CONNECT ||
		    cc == CURLE_COULDNT_RESOLVE_HOST ||
		    cc == CURLE_SEND_ERROR || cc == CURLE_RECV_ERROR ||
		    cc == CURLE_GOT_NOTHING)
			e = PERR_NET;
	}
	text_printable(err);
	return e;
}

/* Every option a provider call needs; CURLE_OK or the first failure. */
static CURLcode
set_options(CURL *c, const struct http_req *rq, long long tmo,
    struct curl_slist *hdrs, struct http_resp *rs, char *ebuf)
{
	CURLcode cc;

	if ((cc = curl_easy_setopt(c, CURLOPT_URL, rq->url)) != CURLE_OK ||
	    (cc = curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, rq->method)) !=
	    CURLE_OK ||
	    (cc = curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs)) != CURLE_OK ||
	    (cc = curl_easy_setopt(c, CURLOPT_USERAGENT, HTTP_USER_AGENT)) !=
	    CURLE_OK ||
	    (cc = curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https")) !=
	    CURLE_OK ||
	    (cc = curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L)) !=
	    CURLE_OK ||
	    (cc = curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L)) !=
	    CURLE_OK ||
	    (cc = curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L)) !=
	    CURLE_OK ||
	    (cc = curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L)) != CURLE_OK ||
	    (cc = curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)tmo)) !=
	    CURLE_OK ||
	    (cc = curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, body_write)) !=
	    CURLE_OK ||
	    (cc = curl_easy_setopt(c, CURLOPT_WRITEDATA, rs)) != CURLE_OK ||
	    (cc = curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf)) != CURLE_OK)
		return cc;
	/*
	 * A body that is not needed is cut at the cap once it arrives
	 * (body_write()), whatever length it announces.
	 */
	if (!rq->skip_body && (cc = curl_easy_setopt(c,
	    CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)rs->max)) != CURLE_OK)
		return cc;
	if (rq->aws_sigv4 != NULL &&
	    ((cc = curl_easy_setopt(c, CURLOPT_AWS_SIGV4, rq->aws_sigv4)) !=
	    CURLE_OK ||
	    (cc = curl_easy_setopt(c, CURLOPT_USERPWD, rq->userpwd)) !=
	    CURLE_OK))
		return cc;
	if (rq->body != NULL &&
	    ((cc = curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)rq->body_len)) != CURLE_OK ||
	    (cc = curl_easy_setopt(c, CURLOPT_POSTFIELDS, rq->body)) !=
	    CURLE_OK))
		return cc;
	return CURLE_OK;
}

long long
http_retry_after(const char *v, time_t now)
{
	long long s = 0;
	time_t when;

	while (*v == ' ' || *v == '\t')
		v++;
	if (*v >= '0' && *v <= '9') {
		/* delay-seconds: saturates instead of overflowing. */
		for (; *v >= '0' && *v <= '9'; v++)
			if (s < HTTP_RETRY_AFTER_MAX)
				s = s * 10 + (*v - '0');
		while (*v == ' ' || *v == '\t')
			v++;
		if (*v != '\0')
			return -1;
		return s < HTTP_RETRY_AFTER_MAX ? s : HTTP_RETRY_AFTER_MAX;
	}
	/* An HTTP-date; a sign or anything else curl cannot read is none. */
	if (*v == '\0' || *v == '-' || *v == '+' ||
	    (when = curl_getdate(v, NULL)) == -1)
		return -1;
	if (when <= now)
		return 0;
	/* curl_getdate() makes years 1583 to 99999: no overflow here. */
	if ((long long)when - HTTP_RETRY_AFTER_MAX >= (long long)now)
		return HTTP_RETRY_AFTER_MAX;
	return (long long)when - (long long)now;
}

static void
resp_init(const struct http_req *rq, struct http_resp *rs)
{
	memset(rs, 0, sizeof(*rs));
	rs->retry_after = -1;
	rs->max = rq->max_body > 0 ? rq->max_body : HTTP_BODY_MAX;
	rs->body = xstrdup("");
}

/*
 * One request, one answer within tmo ms: http_call() without the
 * deadline and the Retry-After wait.
 */
static enum perr
http_once(const struct http_req *rq, long long tmo, struct http_resp *rs,
    char *err, size_t errlen)
{
	CURL *c = NULL;
	CURLcode cc;
	struct curl_slist *hdrs = NULL, *h;
	struct curl_header *ra;
	char ebuf[CURL_ERROR_SIZE], *ct = NULL, text[128];
	size_t i;
	enum perr rv = PERR_TEMP;

	resp_init(rq, rs);
	ebuf[0] = '\0';
	if ((c = curl_easy_init()) == NULL) {
		snprintf(err, errlen, "%s at %s: cannot start libcurl",
		    rq->who, shown(rq));
		goto out;
	}
	for (i = 0; rq->headers != NULL && rq->headers[i] != NULL; i++) {
		if ((h = curl_slist_append(hdrs, rq->headers[i])) == NULL) {
			snprintf(err, errlen, "%s at %s: out of memory",
			    rq->who, shown(rq));
			goto out;
		}
		hdrs = h;
	}
	if ((cc = set_options(c, rq, tmo, hdrs, rs, ebuf)) != CURLE_OK) {
		snprintf(err, errlen, "%s at %s: libcurl refused an option: "
		    "%s", rq->who, shown(rq), curl_easy_strerror(cc));
		goto out;
	}
	cc = curl_easy_perform(c);
	/* A body not needed, cut at the cap: the answer is its status. */
	if (cc == CURLE_WRITE_ERROR && rs->over && rq->skip_body)
		cc = CURLE_OK;
	if (cc != CURLE_OK) {
		rv = transfer_error(rq, rs, cc, ebuf, err, errlen);
		goto out;
	}
	if (curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &rs->status) !=
	    CURLE_OK || curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct) !=
	    CURLE_OK) {
		snprintf(err, errlen, "%s at %s: no status in the answer",
		    rq->who, shown(rq));
		goto out;
	}
	if (ct != NULL)
		rs->ctype = xstrdup(ct);
	/*
	 * Read here, not by CURLINFO_RETRY_AFTER: libcurl hands on any
	 * number it parsed (2^63 - 1 seconds), and a date it cannot read
	 * as 0, "now".
	 */
	if (curl_easy_header(c, "Retry-After", 0, CURLH_HEADER, -1, &ra) ==
	    CURLHE_OK)
		rs->retry_after = http_retry_after(ra->value, time(NULL));
	if (rs->status < 200 || rs->status > 299) {
		rv = http_status_error(rq, rs, err, errlen);
		goto out;
	}
	/*
	 * Another 2xx than the API gives (a proxy's page, a captive
	 * portal) says nothing about the change: it failed, and the next
	 * run tries again.
	 */
	if (rq->want != 0 && rs->status != rq->want) {
		excerpt(rs, text, sizeof(text));
		snprintf(err, errlen, "%s at %s: unexpected answer: %ld to a "
		    "%s, where %s answers %ld%s%s", rq->who, shown(rq),
		    rs->status, rq->method, rq->who, rq->want,
		    text[0] != '\0' ? ": " : "", text);
		text_printable(err);
		goto out;
	}
	rv = PERR_OK;
out:
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(c);
	return rv;
}

void
http_sleep_ms(long long ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) == -1)
		;
}

/*
 * Each request gets what is left of the operation's deadline, at most
 * its timeout: paging through a slow API ends with the operation's
 * timeout, not one timeout per page.  A 429 whose Retry-After ends
 * before the deadline is waited out and the request sent again (with a
 * fresh signature where libcurl signs it); a longer one fails as rate
 * limited at once.
 */
enum perr
http_call(const struct http_req *rq, struct http_resp *rs, char *err,
    size_t errlen)
{
	long long tmo, left;
	char when[32];
	enum perr e;

	for (;;) {
		tmo = rq->timeout_ms;
		if (rq->deadline > 0) {
			if ((left = rq->deadline - mono_ms()) <= 0) {
				resp_init(rq, rs);
				format_duration(rq->timeout_ms, when, sizeof(when));
				snprintf(err, errlen, "%s at %s: timeout after "
				    "%s, before this request was sent",
				    rq->who, shown(rq), when);
				text_printable(err);
				e = PERR_NET;
				break;
			}
			if (left < tmo)
				tmo = left;
		}
		e = http_once(rq, tmo, rs, err, errlen);
		if (e != PERR_RATELIMIT || !wait_fits(rq, rs))
			break;
		http_sleep_ms(rs->retry_after * 1000);
		http_resp_free(rs);
	}
	return e;
}

int
http_check_base_url(const char *key, const char *v, char *err,
    size_t errlen)
{
	CURLU *u;
	char *scheme = NULL, *host = NULL, *user = NULL, *pw = NULL;
	int rv = -1;

	if ((u = curl_url()) == NULL) {
		snprintf(err, errlen, "%s: out of memory", key);
		return -1;
	}
	if (curl_url_set(u, CURLUPART_URL, v, 0) == CURLUE_OK &&
	    (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PASSWORD, &pw, 0) == CURLUE_OK))
		/* The credential goes in its own key, never in a message. */
		snprintf(err, errlen, "%s must not hold a user name or "
		    "password (messages quote it)", key);
	else if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) !=
	    CURLUE_OK || curl_url_get(u, CURLUPART_HOST, &host, 0) !=
	    CURLUE_OK || (strcasecmp(scheme, "http") != 0 &&
	    strcasecmp(scheme, "https") != 0) || strpbrk(v, "?#") != NULL) {
		if (strchr(v, '@') != NULL)
			snprintf(err, errlen, "%s: not an http:// or https:// "
			    "URL without user, query or fragment", key);
		else
			snprintf(err, errlen, "%s: \"%s\" is not an http:// or "
			    "https:// URL without user, query or fragment",
			    key, v);
		text_printable(err);
	} else
		rv = 0;
	curl_free(scheme);
	curl_free(host);
	curl_free(user);
	curl_free(pw);
	curl_url_cleanup(u);
	return rv;
}

void
http_resp_free(struct http_resp *rs)
{
	free(rs->body);
	free(rs->ctype);
	rs->body = rs->ctype = NULL;
	rs->len = rs->cap = 0;
}
