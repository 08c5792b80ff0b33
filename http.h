#ifndef DDUP_HTTP_H
#define DDUP_HTTP_H

/*
 * The HTTP client of the provider APIs (and of webhooks): one request,
 * one capped answer, classified into the provider error classes of
 * provider.h.  libcurl easy interface; the options every API call needs
 * are set here once: a total timeout, no redirects (following one could
 * carry a credential to another host), http and https only, TLS verified
 * against the system trust store (caFile is for health checks only),
 * `User-Agent: ddup/1.0`.
 *
 * How a provider uses it:
 *
 *	const char *hdrs[] = { pv->auth_hdr, "Accept: application/json",
 *	    NULL };
 *	struct http_req rq = {
 *		.who = "Example", .method = "GET", .url = url,
 *		.headers = hdrs, .timeout_ms = pv->timeout_ms,
 *		.errtext = example_errtext, .auth_hint = "check apiToken",
 *	};
 *	struct http_resp rs;
 *
 *	if ((e = http_call(&rq, &rs, err, errlen)) == PERR_OK)
 *		... parse rs.body, rs.len (the answer was a 2xx) ...
 *	http_resp_free(&rs);
 *
 * A body goes with whatever method is named (PUT, PATCH, POST...); give
 * its Content-Type among the headers, or libcurl sends the form type.
 *
 * A provider sets .deadline to mono_ms() plus its timeout when an
 * operation (a read, a replace) starts (the HTTP providers by
 * api_begin() and api_call(), providers/api.h), and passes it to every
 * call of that operation: each request gets what is left of it (so the timeout
 * bounds the whole operation, however many pages it reads), one made
 * after it fails at once, and a 429 that asks for a wait which fits is
 * waited out here, for every provider alike.
 *
 * Secrets go in headers (or the body), never in the URL: every message
 * quotes the URL, never a header or the request body.  Messages start
 * with "WHO at URL: " and are one printable line; on failure the answer
 * stays in rs for a provider that wants to look closer (e.g. an API
 * whose errors come with 200).
 */

#include <stddef.h>
#include <time.h>

#include "provider.h"

#define HTTP_BODY_MAX	((size_t)4 * 1024 * 1024)
/* The longest Retry-After taken as given (a year): larger ones are cut. */
#define HTTP_RETRY_AFTER_MAX	(365LL * 86400)
#define HTTP_USER_AGENT	"ddup/1.0"

struct http_req {
	const char	 *who;		/* "PowerDNS": starts every message */
	const char	 *method;	/* "GET", "PATCH", ... */
	const char	 *url;		/* quoted in messages: no secret, */
	const char	 *shown_url;	/* unless this stands for it there */
	const char *const *headers;	/* "Name: value", NULL-terminated; may be NULL */
	const char	 *body;		/* NULL: none */
	size_t		  body_len;
	long long	  timeout_ms;	/* the whole exchange, at most */
	size_t		  max_body;	/* 0: HTTP_BODY_MAX */
	/*
	 * 1: the body is not needed (a webhook's answer): the transfer
	 * ends at max_body bytes, which stay for messages, and a 2xx is a
	 * success however long its body.  0: a longer body is an error.
	 */
	int		  skip_body;
	long		  want;		/* the one success status; 0: any 2xx */
	/*
	 * mono_ms() bound of the operation this call is part of: the
	 * request gets what is left of it, fails at once when nothing is
	 * left, and a 429 whose Retry-After ends before it is waited out
	 * and the request sent again; 0 (or a longer wait) fails as rate
	 * limited at once.  0: timeout_ms for this request alone.
	 */
	long long	  deadline;

	/*
	 * Optional: the API's own error text in an answer (printable, one
	 * line); 0 when found, -1 when the body has none.  Must take any
	 * bytes: it is fuzzed with everything else.
	 */
	int		(*errtext)(const char *body, size_t len, char *out,
			    size_t outlen);
	/* The media type of errtext's answers; NULL: application/json. */
	const char	 *err_ctype;
	/*
	 * AWS Signature Version 4, computed by libcurl for each attempt:
	 * "aws:amz:REGION:SERVICE", with "ACCESSKEY:SECRET" in userpwd (a
	 * secret: never quoted).  NULL: unsigned.  Every header given is
	 * signed with host and x-amz-date.
	 */
	const char	 *aws_sigv4;
	const char	 *userpwd;
	const char	 *auth_hint;	/* for 401/403, e.g. "check apiKey" */
	const char	 *url_key;	/* the key of url, for 3xx; NULL: baseUrl */
	const char	 *notfound_hint; /* for 404, e.g. "zone x. not found" */
};

struct http_resp {
	long		 status;	/* 0: no answer */
	char		*body;		/* NUL-terminated (len bytes before it) */
	size_t		 len;
	char		*ctype;		/* Content-Type, or NULL */
	long long	 retry_after;	/* http_retry_after() of the answer's */

	/* private */
	size_t		 cap;
	size_t		 max;
	int		 over;
};

/*
 * Sends rq.  PERR_OK when the answer's status is rq->want (any 2xx when
 * want is 0); anything else is classified, with the message in err.  rs
 * is always initialised and must be freed with http_resp_free().
 */
enum perr	 http_call(const struct http_req *rq, struct http_resp *rs,
		    char *err, size_t errlen);
void		 http_resp_free(struct http_resp *rs);

/*
 * The class and message of an answer that is not a success (non-2xx),
 * as http_call() gives them; for providers that find an error in a 2xx
 * answer, and for the fuzz targets.
 */
enum perr	 http_status_error(const struct http_req *rq,
		    const struct http_resp *rs, char *err, size_t errlen);
/*
 * The seconds a Retry-After value (delay-seconds or an HTTP-date, taken
 * against now) asks to wait: 0 for a date past, at most
 * HTTP_RETRY_AFTER_MAX; -1 for anything else (garbage, a sign, an
 * empty value).  Any text; it never overflows.
 */
long long	 http_retry_after(const char *v, time_t now);
/*
 * Sleeps ms milliseconds (nothing for 0 or less), resumed after a
 * signal: the wait of a Retry-After, or of a provider polling a job.
 */
void		 http_sleep_ms(long long ms);
/* The class of an HTTP status that is not a success. */
enum perr	 http_status_class(long status);

/*
 * For a provider's check(): v, the value of key (a base URL the API's
 * paths are appended to), is an http:// or https:// URL with a host and
 * no user name or password (messages quote the URL), query or fragment.
 * 0, or -1 with "KEY: ..." in err (never echoing a password).
 */
int		 http_check_base_url(const char *key, const char *v,
		    char *err, size_t errlen);

#endif
