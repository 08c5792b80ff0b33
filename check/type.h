#ifndef DDUP_CHECK_TYPE_H
#define DDUP_CHECK_TYPE_H

/*
 * The check types, private to check.c and check/: each type is one file
 * in check/ that defines one const struct check_type, listed once in the
 * table of check/list.c (check_type_of()).  The loop of check.c holds
 * the checks in flight and never looks inside a type: it asks the table
 * which type takes an endpoint, lets that type join the one multi handle
 * in one of the loop's slots, and hands it back what libcurl reported
 * when the transfer ends.  check/result.c sets the reasons every type
 * gives.
 */

#include <curl/curl.h>

#include "check.h"

/* Descriptors a slot may wait on beside libcurl's own. */
#define CHECK_WAIT_FDS	2

struct check_type {
	const char	 *name;		/* "http" */
	/*
	 * The url schemes it takes, lower case, NULL-terminated; a type
	 * with none takes an endpoint's `command` instead of a url.
	 */
	const char *const *schemes;
	unsigned	 takes;		/* CHECK_TAKES_* (check.h) */
	/*
	 * With CHECK_TAKES_CERT: those of its schemes that make a TLS
	 * handshake (only they take it); NULL: all of them.
	 */
	const char *const *tls_schemes;
	/* Whether url is of the form it takes; NULL: any of its schemes. */
	int	 (*url_ok)(const char *url, char *err, size_t errlen);

	/*
	 * A slot's state for this type, made on a slot's first check of
	 * the type and used for check after check; slot_free() drops it,
	 * with a check still in flight (its transfers on cm, a process).
	 */
	void	*(*slot_new)(void);
	void	 (*slot_free)(void *st, CURLM *cm);
	/*
	 * Starts r in the idle slot st: adds its transfers to cm, each
	 * with CURLOPT_PRIVATE set to tag (the loop's slot), or starts
	 * what it waits on through wait().  r is copied.  Returns 0, or -1
	 * with r->res's reason set (the check has then failed without
	 * starting, the slot stays idle).
	 */
	int	 (*start)(void *st, CURLM *cm, void *tag,
		    const struct check_req *r, const char *ca_file);
	/*
	 * The slot's transfer ended with cc.  Returns 1 when the check is
	 * over: its result (ok, status, latency, reason) in the request's
	 * res, its transfers out of cm, the slot idle.  0: it goes on, on
	 * what wait() gives (a TCP check's send and expect).  NULL for a
	 * type that has no transfer.
	 */
	int	 (*done)(void *st, CURLM *cm, CURLcode cc);
	/*
	 * What a busy slot waits on beside its transfers: at most
	 * CHECK_WAIT_FDS descriptors into fds (fd and events; the loop
	 * clears revents) and a deadline, mono_ms(), into *deadline (0:
	 * none).  Returns how many descriptors.  NULL: only transfers.
	 */
	size_t	 (*wait)(void *st, struct curl_waitfd *fds,
		    long long *deadline);
	/*
	 * After each wait of the loop, with the revents of what wait()
	 * gave, in its order, and now (mono_ms()).  Returns 1 when the
	 * check is over (as done()), 0 while it goes on.
	 */
	int	 (*ready)(void *st, CURLM *cm, const struct curl_waitfd *fds,
		    size_t nfds, long long now);
};

extern const struct check_type check_http;
extern const struct check_type check_tcp;	/* tcp:// and tls:// */
extern const struct check_type check_prog;	/* command */

/*
 * The type that takes url, by its scheme; url NULL: the type with no
 * scheme (a program).  NULL when none takes it: the configuration
 * refuses such a url, and the loop fails its check.
 */
const struct check_type *check_type_of(const char *url);

/*
 * check/cert.c: check_cert_setup() before a transfer asks e to keep the
 * server's certificate (want 0: not to); after the handshake,
 * check_cert_expires() says when it expires, Unix seconds, 0 when none
 * was seen.  check_cert_parse() reads OpenSSL's "Jan  2 03:04:05 2027
 * GMT" (leading blanks allowed), 0 when it is not that.
 */
int	 check_cert_setup(CURL *e, int want);
long long check_cert_expires(CURL *e);
long long check_cert_parse(const char *s);

/*
 * check/fail.c, for the types that connect through libcurl.
 * check_connect_to(): for `host` (non-NULL), *newurl is url with its host
 * replaced by host (the name sent and verified), *connect_to the
 * CURLOPT_CONNECT_TO list that sends the connection to url's own host,
 * *orighost that host (brackets kept); the caller frees all three.  host
 * NULL: *newurl NULL, nothing made.  0, or -1 with res's reason set.
 * check_url_host(): the host of url as libcurl sees it, or NULL.
 * check_fail_connect(): the reason of a transfer that ended with cc and
 * the system's oserr (CURLINFO_OS_ERRNO) when it is one every type names
 * alike ("timeout", "TLS: <errbuf>", "could not resolve host <host>",
 * "connection refused", ...): 1, else 0 and res untouched.
 * check_fail_other(): libcurl's words for any other failure.
 */
int	 check_connect_to(const char *url, const char *host,
	    struct check_res *res, char **newurl, char **orighost,
	    struct curl_slist **connect_to);
char	*check_url_host(const char *url);
int	 check_is_tls_error(CURLcode cc);
int	 check_fail_connect(struct check_res *res, CURLcode cc, long oserr,
	    const char *errbuf, const char *host);
void	 check_fail_other(struct check_res *res, CURLcode cc,
	    const char *errbuf);

/*
 * check/stream.c: whether `expect` occurs in the first CHECK_EXPECT_READ
 * bytes of a stream that arrives in pieces (split anywhere, NUL bytes
 * and all).  check_stream_feed() takes the next piece; bytes past the
 * first CHECK_EXPECT_READ are not looked at.  It returns
 * CHECK_STREAM_FOUND once the text has occurred, CHECK_STREAM_OVER once
 * CHECK_EXPECT_READ bytes came without it (either stays so), else
 * CHECK_STREAM_MORE.  check_stream_want() is how many bytes it can still
 * look at (0 once found or over).  An empty text is found at once.
 */
#define CHECK_STREAM_MORE	0
#define CHECK_STREAM_FOUND	1
#define CHECK_STREAM_OVER	2
struct check_stream;
struct check_stream *check_stream_new(const char *text);
int	 check_stream_feed(struct check_stream *s, const void *buf,
	    size_t len);
size_t	 check_stream_want(const struct check_stream *s);
void	 check_stream_free(struct check_stream *s);

/* check/result.c: a constant reason (text outlives res), or one made. */
void	 check_res_text(struct check_res *res, const char *text);
void	 check_res_reason(struct check_res *res, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

#endif
