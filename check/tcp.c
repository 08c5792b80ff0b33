/*
 * The TCP and TLS checks (ddup.ini(5), CHECK TYPES): tcp://HOST:PORT
 * passes once a connection is made, tls://HOST:PORT once a TLS handshake
 * verified as for HTTPS is done, both within `timeout`; with `send`
 * those bytes are written, with `expect` the check passes only when that
 * text occurs in the first CHECK_EXPECT_READ bytes the server sends.
 *
 * The connection is libcurl's, a connect-only transfer on the loop's
 * multi handle (http:// for TCP, https:// for TLS, so the handshake and
 * its verification are libcurl's own, as for an HTTPS check).  Once it
 * is done the transfer stays on the multi handle (libcurl finds the
 * connection of curl_easy_send() and curl_easy_recv() through it), and
 * the slot waits on the connection's socket through wait() and ready();
 * removing the transfer closes the connection.
 */

#include <sys/socket.h>
#include <arpa/inet.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "check.h"
#include "check/type.h"
#include "util.h"

#define TCP_HOST_MAX	253		/* a DNS name's length */
/* ASCII only, whatever the locale. */
#define IS_DIGIT(c)	((c) >= '0' && (c) <= '9')
#define IS_ALNUM(c)	(IS_DIGIT(c) || ((c) >= 'a' && (c) <= 'z') || \
			    ((c) >= 'A' && (c) <= 'Z'))

enum phase {
	PHASE_IDLE,
	PHASE_CONNECT,			/* the transfer is on the multi handle */
	PHASE_SEND,			/* writing `send` */
	PHASE_RECV			/* reading for `expect` */
};

struct slot {
	CURL		*e;		/* NULL until first used */
	struct check_req r;		/* the check in flight */
	enum phase	 phase;
	int		 tls;
	char		 host[TCP_HOST_MAX + 3];	/* the url's, [::1] */
	char		*orighost;	/* check_connect_to()'s, or NULL */
	struct curl_slist *connect_to;
	struct check_stream *stream;	/* `expect`, or NULL */
	size_t		 sent;		/* bytes of `send` written */
	curl_socket_t	 sock;
	long long	 start;		/* mono_ms() when the check began */
	long long	 deadline;	/* start + timeout */
	char		 errbuf[CURL_ERROR_SIZE];
};

/*
 * url as tcp://HOST:PORT or tls://HOST:PORT, with an optional "/" after
 * the port: *tls, the host (an IPv6 literal with its brackets) and the
 * port.  0, or -1 with why in err.
 */
static int
tcp_url_parse(const char *url, int *tls, char *host, size_t hostlen,
    long *port, char *err, size_t errlen)
{
	const char	*p, *end, *scheme;
	char		 addr[64];
	size_t		 len, i;
	long		 n = 0;

	if (strncasecmp(url, "tcp://", 6) == 0)
		*tls = 0;
	else if (strncasecmp(url, "tls://", 6) == 0)
		*tls = 1;
	else {
		snprintf(err, errlen, "not tcp:// or tls://");
		return -1;
	}
	scheme = *tls ? "tls://" : "tcp://";
	p = url + 6;
	if (strchr(p, '@') != NULL) {
		snprintf(err, errlen, "a %s url has no user name", scheme);
		return -1;
	}
	if (strpbrk(p, "?#") != NULL) {
		snprintf(err, errlen, "a %s url has no query or fragment",
		    scheme);
		return -1;
	}
	if (*p == '[') {
		if ((end = strchr(p, ']')) == NULL ||
		    (len = (size_t)(end - p - 1)) >= sizeof(addr)) {
			snprintf(err, errlen, "bad IPv6 address");
			return -1;
		}
		memcpy(addr, p + 1, len);
		addr[len] = '\0';
		if (inet_pton(AF_INET6, addr, &(struct in6_addr){ 0 }) != 1) {
			snprintf(err, errlen, "bad IPv6 address '%s'", addr);
			return -1;
		}
		end++;
	} else {
		end = p + strcspn(p, ":/");
		for (i = 0; p + i < end; i++)
			if (!IS_ALNUM(p[i]) && strchr("-._", p[i]) == NULL)
				break;
		if (p + i < end || end == p || end - p > TCP_HOST_MAX) {
			snprintf(err, errlen, "%s needs HOST:PORT (%sdb.example."
			    "com:5432), HOST a name or an address", scheme,
			    scheme);
			return -1;
		}
	}
	if ((size_t)(end - p) >= hostlen) {
		snprintf(err, errlen, "host too long");
		return -1;
	}
	memcpy(host, p, (size_t)(end - p));
	host[end - p] = '\0';
	if (*end != ':') {
		snprintf(err, errlen, "%s needs a port: %s%s:PORT", scheme,
		    scheme, host);
		return -1;
	}
	for (p = end + 1; IS_DIGIT(*p) && n <= 65535; p++)
		n = n * 10 + (*p - '0');
	if (p == end + 1 || n < 1 || n > 65535 || IS_DIGIT(*p)) {
		snprintf(err, errlen, "bad port (1-65535)");
		return -1;
	}
	if (*p != '\0' && strcmp(p, "/") != 0) {
		snprintf(err, errlen, "nothing may follow the port of a %s url "
		    "but '/'", scheme);
		return -1;
	}
	*port = n;
	return 0;
}

static int
tcp_url_ok(const char *url, char *err, size_t errlen)
{
	char	 host[TCP_HOST_MAX + 3];
	long	 port;
	int	 tls;

	return tcp_url_parse(url, &tls, host, sizeof(host), &port, err,
	    errlen);
}

/*
 * The slot's easy handle with what every check of it shares, made once:
 * a connection of its own each time (never one left by another check),
 * no TLS session kept, no proxy, no ALPN (a TLS server of another
 * protocol may refuse "http/1.1"), verification as for HTTPS.
 */
static int
slot_handle(struct slot *j, void *tag, const char *ca_file)
{
	CURL	*e;
	int	 bad = 0;

	if (j->e != NULL)
		return 0;
	if ((e = curl_easy_init()) == NULL)
		return -1;
	bad |= curl_easy_setopt(e, CURLOPT_ERRORBUFFER, j->errbuf) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_PRIVATE, tag) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https")
	    != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_CONNECT_ONLY, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_QUICK_EXIT, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_DNS_CACHE_TIMEOUT, 0L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_SSL_SESSIONID_CACHE, 0L)
	    != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_SSL_ENABLE_ALPN, 0L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_PROXY, "") != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L) != CURLE_OK;
	if (ca_file != NULL)
		bad |= curl_easy_setopt(e, CURLOPT_CAINFO, ca_file)
		    != CURLE_OK;
	if (bad) {
		curl_easy_cleanup(e);
		return -1;
	}
	j->e = e;
	return 0;
}

/* The check is over: the connection closed, the slot idle.  Returns 1. */
static int
slot_finish(struct slot *j, CURLM *cm)
{
	if (j->phase != PHASE_IDLE)
		(void)curl_multi_remove_handle(cm, j->e);
	j->phase = PHASE_IDLE;
	free(j->orighost);
	j->orighost = NULL;
	curl_slist_free_all(j->connect_to);
	j->connect_to = NULL;
	check_stream_free(j->stream);
	j->stream = NULL;
	return 1;
}

static int
slot_start(void *st, CURLM *cm, void *tag, const struct check_req *r,
    const char *ca_file)
{
	struct slot	*j = st;
	char		 err[128], url[TCP_HOST_MAX + 32], *cu = NULL;
	long		 port, tmo;
	CURLMcode	 mc;
	int		 bad = 0, rc = -1;

	j->r = *r;
	r = &j->r;
	if (tcp_url_parse(r->url, &j->tls, j->host, sizeof(j->host), &port,
	    err, sizeof(err)) == -1) {
		check_res_reason(r->res, "bad URL: %s", err);
		goto out;
	}
	snprintf(url, sizeof(url), "%s://%s:%ld/", j->tls ? "https" : "http",
	    j->host, port);
	/* `host` is the name a TLS server is asked for and verified by. */
	if (check_connect_to(url, j->tls ? r->host : NULL, r->res, &cu,
	    &j->orighost, &j->connect_to) == -1)
		goto out;
	if (slot_handle(j, tag, ca_file) == -1) {
		check_res_text(r->res, "libcurl: cannot set up the check");
		goto out;
	}
	/* A zero timeout would mean "none" to libcurl: never allow that. */
	tmo = r->timeout_ms > 0 ? (long)r->timeout_ms : 1L;
	j->errbuf[0] = '\0';
	bad |= curl_easy_setopt(j->e, CURLOPT_URL, cu != NULL ? cu : url)
	    != CURLE_OK;
	bad |= curl_easy_setopt(j->e, CURLOPT_TIMEOUT_MS, tmo) != CURLE_OK;
	bad |= curl_easy_setopt(j->e, CURLOPT_CONNECTTIMEOUT_MS, tmo)
	    != CURLE_OK;
	bad |= curl_easy_setopt(j->e, CURLOPT_CONNECT_TO, j->connect_to)
	    != CURLE_OK;
	bad |= check_cert_setup(j->e, j->tls) == -1;
	if (bad) {
		check_res_text(r->res, "libcurl: cannot set up the check");
		goto out;
	}
	j->stream = r->expect_text != NULL ?
	    check_stream_new(r->expect_text) : NULL;
	j->sent = 0;
	j->sock = CURL_SOCKET_BAD;
	j->start = mono_ms();
	j->deadline = j->start + tmo;
	if ((mc = curl_multi_add_handle(cm, j->e)) != CURLM_OK) {
		check_res_reason(r->res, "libcurl: %s",
		    curl_multi_strerror(mc));
		goto out;
	}
	j->phase = PHASE_CONNECT;
	rc = 0;
out:
	free(cu);
	if (rc == -1)
		(void)slot_finish(j, cm);
	return rc;
}

/*
 * The reason of a connection that failed with cc, while connecting or
 * after (a reset while reading is "connection reset"): errno_after is
 * errno as the failed call left it, for when libcurl keeps none.
 */
static void
fail_reason(struct slot *j, CURLcode cc, int errno_after)
{
	struct check_res *res = j->r.res;
	long		 oserr = 0;

	(void)curl_easy_getinfo(j->e, CURLINFO_OS_ERRNO, &oserr);
	if (oserr == 0 && (cc == CURLE_RECV_ERROR || cc == CURLE_SEND_ERROR))
		oserr = errno_after;
	if (!check_fail_connect(res, cc, oserr, j->errbuf,
	    j->orighost != NULL ? j->orighost : j->host))
		check_fail_other(res, cc, j->errbuf);
}

static int
slot_pass(struct slot *j, CURLM *cm)
{
	j->r.res->ok = 1;
	check_res_text(j->r.res, "ok");
	return slot_finish(j, cm);
}

/*
 * Failed once connected: with reason, else by cc.  The latency is then
 * the time until the failure, as for a check that failed to connect.
 */
static int
slot_fail(struct slot *j, CURLM *cm, const char *reason, CURLcode cc)
{
	int	 saved = errno;

	j->r.res->latency_ms = (long)(mono_ms() - j->start);
	if (reason != NULL)
		check_res_text(j->r.res, reason);
	else
		fail_reason(j, cc, saved);
	return slot_finish(j, cm);
}

/*
 * Writes `send`, then reads for `expect`, as far as the socket lets
 * it without waiting.  Returns 1 when the check is over, 0 when it
 * waits on the socket.
 */
static int
slot_step(struct slot *j, CURLM *cm, long long now)
{
	unsigned char	 buf[CHECK_EXPECT_READ];
	size_t		 n, want;
	CURLcode	 cc;

	while (j->phase == PHASE_SEND) {
		n = 0;
		errno = 0;
		cc = curl_easy_send(j->e, j->r.send + j->sent,
		    j->r.send_len - j->sent, &n);
		if (cc == CURLE_AGAIN)
			break;
		if (cc != CURLE_OK)
			return slot_fail(j, cm, NULL, cc);
		j->sent += n;
		if (j->sent == j->r.send_len) {
			if (j->stream == NULL)
				return slot_pass(j, cm);
			j->phase = PHASE_RECV;
		}
	}
	while (j->phase == PHASE_RECV) {
		/* Never read past what expect looks at. */
		want = check_stream_want(j->stream);
		n = 0;
		errno = 0;
		cc = curl_easy_recv(j->e, buf, want < sizeof(buf) ? want :
		    sizeof(buf), &n);
		if (cc == CURLE_AGAIN)
			break;
		if (cc != CURLE_OK)
			return slot_fail(j, cm, NULL, cc);
		/* The server closed the connection. */
		if (n == 0)
			return slot_fail(j, cm, "expected text not received",
			    CURLE_OK);
		switch (check_stream_feed(j->stream, buf, n)) {
		case CHECK_STREAM_FOUND:
			j->r.res->latency_ms = (long)(mono_ms() - j->start);
			return slot_pass(j, cm);
		case CHECK_STREAM_OVER:
			return slot_fail(j, cm, "expected text not received",
			    CURLE_OK);
		default:
			break;
		}
	}
	if (now >= j->deadline)
		return slot_fail(j, cm, "timeout", CURLE_OK);
	return 0;
}

/* The connect-only transfer ended: connected, or the check has failed. */
static int
slot_done(void *st, CURLM *cm, CURLcode cc)
{
	struct slot	*j = st;
	struct check_res *res = j->r.res;
	curl_off_t	 total = 0;

	res->ok = 0;
	res->status = 0;
	(void)curl_easy_getinfo(j->e, CURLINFO_TOTAL_TIME_T, &total);
	res->latency_ms = (long)(total / 1000);
	if (cc != CURLE_OK) {
		fail_reason(j, cc, 0);
		return slot_finish(j, cm);
	}
	if (j->tls)
		res->cert_expires = check_cert_expires(j->e);
	if (curl_easy_getinfo(j->e, CURLINFO_ACTIVESOCKET, &j->sock) !=
	    CURLE_OK || j->sock == CURL_SOCKET_BAD) {
		check_res_text(res, "libcurl: no socket once connected");
		return slot_finish(j, cm);
	}
	if (j->r.send_len > 0)
		j->phase = PHASE_SEND;
	else if (j->stream != NULL)
		j->phase = PHASE_RECV;
	else
		return slot_pass(j, cm);
	/* What is there already (TLS may hold some) is read now. */
	return slot_step(j, cm, mono_ms());
}

static size_t
slot_wait(void *st, struct curl_waitfd *fds, long long *deadline)
{
	struct slot	*j = st;

	if (j->phase != PHASE_SEND && j->phase != PHASE_RECV)
		return 0;
	fds[0].fd = j->sock;
	fds[0].events = j->phase == PHASE_SEND ? CURL_WAIT_POLLOUT :
	    CURL_WAIT_POLLIN;
	*deadline = j->deadline;
	return 1;
}

static int
slot_ready(void *st, CURLM *cm, const struct curl_waitfd *fds, size_t nfds,
    long long now)
{
	struct slot	*j = st;

	if (j->phase != PHASE_SEND && j->phase != PHASE_RECV)
		return 0;
	/* Nothing to read or write, and time left: no call for nothing. */
	if ((nfds == 0 || fds[0].revents == 0) && now < j->deadline)
		return 0;
	return slot_step(j, cm, now);
}

static void *
slot_new(void)
{
	struct slot	*j = xcalloc(1, sizeof(*j));

	j->phase = PHASE_IDLE;
	return j;
}

/* A check in flight is dropped with its connection. */
static void
slot_free(void *st, CURLM *cm)
{
	struct slot	*j = st;

	(void)slot_finish(j, cm);
	if (j->e != NULL)
		curl_easy_cleanup(j->e);
	free(j);
}

static const char *const tcp_schemes[] = { "tcp", "tls", NULL };
/* A tcp:// check sees no certificate (certWarn is refused there). */
static const char *const tcp_tls_schemes[] = { "tls", NULL };

const struct check_type check_tcp = {
	.name = "tcp",
	.schemes = tcp_schemes,
	.takes = CHECK_TAKES_STREAM | CHECK_TAKES_CERT,
	.tls_schemes = tcp_tls_schemes,
	.url_ok = tcp_url_ok,
	.slot_new = slot_new,
	.slot_free = slot_free,
	.start = slot_start,
	.done = slot_done,
	.wait = slot_wait,
	.ready = slot_ready,
};
