/*
 * HTTP(S) health checks (ddup-check(8), HEALTH CHECKS).
 *
 * Every check is a transfer on a single multi handle, so all endpoints of
 * all domains are in flight together, at most max_parallel at a time, on
 * as many easy handles; a finished transfer hands its handle to the next
 * check.  The loop follows curl's docs/examples/10-at-a-time.c, plus what
 * a health checker needs on top: a timeout on every transfer (a check
 * never hangs), a per-handle error buffer (the reason shown to the
 * operator), and a body cap (a huge or endless body costs 64 KiB at most).
 */

#include <sys/resource.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "check.h"
#include "config.h"
#include "redact.h"
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
#define CHECK_DEFAULT_PARALLEL	256L
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
	const struct check_req *req;	/* the check in flight (&r), or NULL */
	struct check_req r;
	char		*orighost;	/* the configured URL's host, [::1] */
	struct curl_slist *connect_to;
	unsigned char	*body;		/* kept only when expect_body is set */
	size_t		 bodylen;
	size_t		 bodycap;
	size_t		 received;	/* body bytes seen, kept or not */
	int		 capped;	/* we stopped at CHECK_BODY_MAX */
	char		 errbuf[CURL_ERROR_SIZE];
};

void
check_res_free(struct check_res *res)
{
	free(res->text);
	res->text = NULL;
	res->reason = NULL;
}

/* A constant reason: text must outlive the result. */
static void
set_text(struct check_res *res, const char *text)
{
	check_res_free(res);
	res->reason = text;
}

static void	set_reason(struct check_res *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

/* A reason made from fmt, cut at CHECK_REASON_MAX - 1 bytes. */
static void
set_reason(struct check_res *res, const char *fmt, ...)
{
	char	 buf[CHECK_REASON_MAX];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* It may quote a server (a certificate's subject name, say). */
	outside_text(buf, sizeof(buf));
	check_res_free(res);
	res->text = xstrdup(buf);
	res->reason = res->text;
}

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
	CURLU		*u = NULL;
	CURLUcode	 uc;
	char		*host = NULL, *port = NULL, *cu = NULL;
	char		*ct = NULL;
	size_t		 ctlen;
	int		 rc = -1;

	*url = NULL;
	if (j->req->host == NULL) {
		rc = 0;
		goto out;
	}
	if ((u = curl_url()) == NULL) {
		set_text(res, "out of memory");
		goto out;
	}
	uc = curl_url_set(u, CURLUPART_URL, j->req->url, 0);
	if (uc == CURLUE_OK)
		uc = curl_url_get(u, CURLUPART_HOST, &host, 0);
	if (uc == CURLUE_OK)
		uc = curl_url_get(u, CURLUPART_PORT, &port,
		    CURLU_DEFAULT_PORT);
	if (uc != CURLUE_OK) {
		set_reason(res, "bad URL: %s", curl_url_strerror(uc));
		goto out;
	}
	j->orighost = xstrdup(host);

	uc = curl_url_set(u, CURLUPART_HOST, j->req->host, 0);
	if (uc == CURLUE_OK)
		uc = curl_url_get(u, CURLUPART_URL, &cu, 0);
	if (uc != CURLUE_OK) {
		set_reason(res, "bad host %s: %s", j->req->host,
		    curl_url_strerror(uc));
		goto out;
	}
	/* "HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT", brackets kept. */
	ctlen = strlen(j->req->host) + strlen(host) + 2 * strlen(port) + 4;
	ct = xmalloc(ctlen);
	snprintf(ct, ctlen, "%s:%s:%s:%s", j->req->host, port, host, port);
	j->connect_to = curl_slist_append(NULL, ct);
	if (j->connect_to == NULL) {
		set_text(res, "out of memory");
		goto out;
	}
	*url = xstrdup(cu);
	rc = 0;
out:
	free(ct);
	curl_free(cu);
	curl_free(port);
	curl_free(host);
	curl_url_cleanup(u);
	return rc;
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
		set_text(res, "libcurl: cannot create a handle");
		return -1;
	}
	bad |= curl_easy_setopt(e, CURLOPT_ERRORBUFFER, j->errbuf) != CURLE_OK;
	bad |= curl_easy_setopt(e, CURLOPT_PRIVATE, j) != CURLE_OK;
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
	bad |= curl_easy_setopt(e, CURLOPT_USERAGENT, CHECK_UA) != CURLE_OK;
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
		set_text(res, "libcurl: cannot set up the check");
		return -1;
	}
	j->e = e;
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
slot_start(CURLM *cm, struct slot *j, const struct check_req *r,
    const char *ca_file)
{
	CURLMcode	 mc;
	char		*url = NULL;
	long		 tmo;
	int		 bad = 0, rc = -1;

	j->r = *r;
	j->req = &j->r;
	r = j->req;
	if (slot_url(j, r->res, &url) == -1 ||
	    slot_handle(j, r->res, ca_file) == -1)
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
	if (bad) {
		set_text(r->res, "libcurl: cannot set up the check");
		goto out;
	}
	if ((mc = curl_multi_add_handle(cm, j->e)) != CURLM_OK) {
		set_reason(r->res, "libcurl: %s", curl_multi_strerror(mc));
		goto out;
	}
	rc = 0;
out:
	free(url);
	if (rc == -1)
		slot_clear(j);
	return rc;
}

static int
is_tls_error(CURLcode cc)
{
	switch (cc) {
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_ENGINE_NOTFOUND:
	case CURLE_SSL_ENGINE_SETFAILED:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_ENGINE_INITFAILED:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_SHUTDOWN_FAILED:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_SSL_CLIENTCERT:
	case CURLE_USE_SSL_FAILED:
		return 1;
	default:
		return 0;
	}
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

/* The host of url as libcurl sees it (IPv6 in brackets), or NULL. */
static char *
url_host(const char *url)
{
	CURLU	*u;
	char	*host = NULL, *copy = NULL;

	if ((u = curl_url()) == NULL)
		return NULL;
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK)
		copy = xstrdup(host);
	curl_free(host);
	curl_url_cleanup(u);
	return copy;
}

/* The reason of a transfer that ended with cc (not ours to ignore). */
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

	if (cc == CURLE_OPERATION_TIMEDOUT ||
	    (cc == CURLE_COULDNT_CONNECT && oserr == ETIMEDOUT))
		set_text(res, "timeout");
	else if (is_tls_error(cc))
		set_reason(res, "TLS: %s", detail);
	else if (cc == CURLE_COULDNT_RESOLVE_HOST) {
		if (j->orighost == NULL)
			j->orighost = url_host(j->req->url);
		set_reason(res, "could not resolve host %s",
		    j->orighost != NULL ? j->orighost : j->req->url);
	}
	else if (oserr == ECONNREFUSED)
		set_text(res, "connection refused");
	else if (oserr == ECONNRESET)
		set_text(res, "connection reset");
	else if (cc == CURLE_COULDNT_CONNECT && oserr == EHOSTUNREACH)
		set_text(res, "no route to host");
	else if (cc == CURLE_COULDNT_CONNECT && oserr == ENETUNREACH)
		set_text(res, "network unreachable");
	/*
	 * libcurl calls an answer that is not HTTP "Unsupported protocol"
	 * (HTTP/0.9), which reads like a bad URL: say what happened.
	 */
	else if (cc == CURLE_WEIRD_SERVER_REPLY ||
	    (cc == CURLE_UNSUPPORTED_PROTOCOL && peer != NULL &&
	    *peer != '\0'))
		set_reason(res, "not an HTTP answer: %s", detail);
	/* The server's doing, not a lack of memory here. */
	else if (is_header_too_long(j, cc, peer))
		set_text(res, "response header too long");
	else if (j->errbuf[0] != '\0')
		set_reason(res, "%s: %s", curl_easy_strerror(cc), j->errbuf);
	else
		set_reason(res, "%s", curl_easy_strerror(cc));
}

/* Fills in the result of a finished transfer; the slot is idle after. */
static void
slot_done(CURLM *cm, struct slot *j, CURLcode cc)
{
	struct check_res *res = j->req->res;
	curl_off_t	 total = 0;
	long		 code = 0;

	(void)curl_easy_getinfo(j->e, CURLINFO_RESPONSE_CODE, &code);
	(void)curl_easy_getinfo(j->e, CURLINFO_TOTAL_TIME_T, &total);
	res->status = code;
	res->latency_ms = (long)(total / 1000);
	res->ok = 0;

	/* Our write callback stopped it: the body we need has arrived. */
	if (cc == CURLE_WRITE_ERROR && j->capped)
		cc = CURLE_OK;

	if (cc != CURLE_OK)
		fail_reason(j, cc);
	else if (j->req->expect != NULL ?
	    !expect_match(j->req->expect, code) : code / 100 != 2)
		set_reason(res, "HTTP %ld", code);
	/* HEAD has no body to look in: expectBody applies to GET only. */
	else if (j->req->expect_body != NULL && !j->req->head &&
	    !body_has(j->body, j->bodylen, j->req->expect_body))
		set_reason(res, "HTTP %ld: expected text not found", code);
	else {
		res->ok = 1;
		set_text(res, "ok");
	}

	(void)curl_multi_remove_handle(cm, j->e);
	slot_clear(j);
}

/*
 * Each transfer holds a socket and, while resolving, the resolver's
 * socket pair: keep max_parallel well inside the descriptor limit so a
 * large maxParallel does not turn into failed checks.
 */
static long
parallel_limit(long max_parallel)
{
	struct rlimit	 rl;
	rlim_t		 want;
	long		 lim;

	if (max_parallel <= 0)
		max_parallel = CHECK_DEFAULT_PARALLEL;
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 ||
	    rl.rlim_cur == RLIM_INFINITY)
		return max_parallel;
	/*
	 * A soft limit below the hard one (systemd's 1024, a shell's
	 * ulimit -Sn) is ours to raise, as far as the checks need: only
	 * a hard limit makes checks wait for each other.
	 */
	want = max_parallel > 100000 ? (rlim_t)100000 * 3 + 64 :
	    (rlim_t)max_parallel * 3 + 64;
	if (rl.rlim_cur < want && rl.rlim_max > rl.rlim_cur) {
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1 &&
		    getrlimit(RLIMIT_NOFILE, &rl) == -1)
			return 1;
	}
	if (rl.rlim_cur < 64 + 3)
		return 1;
	lim = (long)((rl.rlim_cur - 64) / 3);
	return max_parallel < lim ? max_parallel : lim;
}

/* Where check_endpoints() is in the domains and their endpoints. */
struct check_iter {
	const struct config	*cfg;
	struct check_res	*res;
	size_t			 dom;
	size_t			 ep;
};

/* The next endpoint's check for check_run(); 0 when all have been. */
static int
next_check(void *arg, struct check_req *req)
{
	struct check_iter	*it = arg;
	const struct domain_cfg	*dc;

	while (it->dom < it->cfg->ndomains &&
	    it->ep >= it->cfg->domains[it->dom].neps) {
		it->dom++;
		it->ep = 0;
	}
	if (it->dom == it->cfg->ndomains)
		return 0;
	dc = &it->cfg->domains[it->dom];
	req->url = dc->eps[it->ep].url;
	req->host = dc->eps[it->ep].host;
	req->head = dc->pol.head;
	req->timeout_ms = dc->pol.timeout_ms;
	req->expect = &dc->pol.expect;
	req->expect_body = dc->pol.expect_body;
	req->res = it->res++;
	it->ep++;
	return 1;
}

int
check_endpoints(const struct config *cfg, struct check_res *res, char *err,
    size_t errlen)
{
	struct check_iter	 it = { cfg, res, 0, 0 };
	size_t			 i, j, n = 0;

	for (i = 0; i < cfg->ndomains; i++)
		for (j = 0; j < cfg->domains[i].neps; j++)
			check_res_init(&res[n++]);
	return check_run(n, next_check, &it, cfg->max_parallel, cfg->ca_file,
	    err, errlen);
}

/* check_run()'s request when there is one only: *arg, then none. */
static int
next_one(void *arg, struct check_req *req)
{
	const struct check_req	**one = arg;

	if (*one == NULL)
		return 0;
	*req = **one;
	*one = NULL;
	return 1;
}

int
check_control(const struct config *cfg, struct check_res *res, char *err,
    size_t errlen)
{
	const struct domain_policy *p = &cfg->defaults;
	struct check_req	 req;
	const struct check_req	*one = &req;

	memset(&req, 0, sizeof(req));
	req.url = cfg->control_url;
	req.head = p->head;
	req.timeout_ms = p->timeout_ms;
	req.expect = &p->expect;
	req.expect_body = p->expect_body;
	req.res = res;
	check_res_init(res);
	return check_run(1, next_one, &one, 1, cfg->ca_file, err, errlen);
}

void
check_res_init(struct check_res *res)
{
	memset(res, 0, sizeof(*res));
	set_text(res, "not checked");
}

int
check_run(size_t n, int (*next_req)(void *, struct check_req *), void *arg,
    long max_parallel, const char *ca_file, char *err, size_t errlen)
{
	struct check_req req;
	CURLM		*cm = NULL;
	CURLMcode	 mc;
	CURLMsg		*msg;
	struct slot	*slots = NULL, *j;
	size_t		*idle = NULL;	/* indexes of the idle slots */
	size_t		 next = 0, nslots = 0, nidle = 0, done, i;
	long		 maxp;
	int		 running, left, rc = -1;

	if (n == 0) {
		rc = 0;
		goto out;
	}
	if ((cm = curl_multi_init()) == NULL) {
		snprintf(err, errlen, "libcurl: cannot create a multi handle");
		goto out;
	}
	maxp = parallel_limit(max_parallel);
	nslots = (size_t)maxp < n ? (size_t)maxp : n;
	slots = xcalloc(nslots, sizeof(*slots));
	idle = xcalloc(nslots, sizeof(*idle));
	for (nidle = 0; nidle < nslots; nidle++)
		idle[nidle] = nslots - 1 - nidle;

	for (;;) {
		/* Refill: a check that cannot start has failed already. */
		while (next < n && nidle > 0) {
			if (!next_req(arg, &req)) {
				n = next;
				break;
			}
			next++;
			if (slot_start(cm, &slots[idle[nidle - 1]], &req,
			    ca_file) == 0)
				nidle--;
		}
		if (nidle == nslots)
			break;

		mc = curl_multi_perform(cm, &running);
		if (mc != CURLM_OK) {
			snprintf(err, errlen, "libcurl: %s",
			    curl_multi_strerror(mc));
			goto out;
		}
		done = 0;
		while ((msg = curl_multi_info_read(cm, &left)) != NULL) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			j = NULL;
			(void)curl_easy_getinfo(msg->easy_handle,
			    CURLINFO_PRIVATE, &j);
			if (j == NULL || j->req == NULL)
				continue;
			slot_done(cm, j, msg->data.result);
			idle[nidle++] = (size_t)(j - slots);
			done++;
		}
		/*
		 * Refill before waiting: with every handle gone, the poll
		 * would have nothing to wake it up but its own timeout.
		 */
		if (done > 0)
			continue;
		/* libcurl shortens the wait to its own next timer. */
		mc = curl_multi_poll(cm, NULL, 0, 1000, NULL);
		if (mc != CURLM_OK) {
			snprintf(err, errlen, "libcurl: %s",
			    curl_multi_strerror(mc));
			goto out;
		}
	}
	rc = 0;
out:
	for (i = 0; i < nslots; i++) {
		if (slots[i].req != NULL)
			(void)curl_multi_remove_handle(cm, slots[i].e);
		if (slots[i].e != NULL)
			curl_easy_cleanup(slots[i].e);
		slot_clear(&slots[i]);
	}
	free(idle);
	free(slots);
	if (cm != NULL)
		curl_multi_cleanup(cm);
	return rc;
}

int
check_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

void
check_global_cleanup(void)
{
	curl_global_cleanup();
}
