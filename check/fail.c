/*
 * What the types that connect through libcurl share (check/type.h): a
 * url sent to its own address under the name of `host`, and the reasons
 * of a connection that failed, the same words for an HTTP(S) check as
 * for a TCP or TLS one (ddup-check(8), HEALTH CHECKS).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "check.h"
#include "check/type.h"
#include "util.h"

int
check_connect_to(const char *url, const char *host, struct check_res *res,
    char **newurl, char **orighost, struct curl_slist **connect_to)
{
	CURLU		*u = NULL;
	CURLUcode	 uc;
	char		*uhost = NULL, *port = NULL, *cu = NULL;
	char		*ct = NULL;
	size_t		 ctlen;
	int		 rc = -1;

	*newurl = NULL;
	if (host == NULL) {
		rc = 0;
		goto out;
	}
	if ((u = curl_url()) == NULL) {
		check_res_text(res, "out of memory");
		goto out;
	}
	uc = curl_url_set(u, CURLUPART_URL, url, 0);
	if (uc == CURLUE_OK)
		uc = curl_url_get(u, CURLUPART_HOST, &uhost, 0);
	if (uc == CURLUE_OK)
		uc = curl_url_get(u, CURLUPART_PORT, &port,
		    CURLU_DEFAULT_PORT);
	if (uc != CURLUE_OK) {
		check_res_reason(res, "bad URL: %s", curl_url_strerror(uc));
		goto out;
	}
	*orighost = xstrdup(uhost);

	uc = curl_url_set(u, CURLUPART_HOST, host, 0);
	if (uc == CURLUE_OK)
		uc = curl_url_get(u, CURLUPART_URL, &cu, 0);
	if (uc != CURLUE_OK) {
		check_res_reason(res, "bad host %s: %s", host,
		    curl_url_strerror(uc));
		goto out;
	}
	/* "HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT", brackets kept. */
	ctlen = strlen(host) + strlen(uhost) + 2 * strlen(port) + 4;
	ct = xmalloc(ctlen);
	snprintf(ct, ctlen, "%s:%s:%s:%s", host, port, uhost, port);
	*connect_to = curl_slist_append(NULL, ct);
	if (*connect_to == NULL) {
		check_res_text(res, "out of memory");
		goto out;
	}
	*newurl = xstrdup(cu);
	rc = 0;
out:
	free(ct);
	curl_free(cu);
	curl_free(port);
	curl_free(uhost);
	curl_url_cleanup(u);
	return rc;
}

char *
check_url_host(const char *url)
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

int
check_is_tls_error(CURLcode cc)
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

int
check_fail_connect(struct check_res *res, CURLcode cc, long oserr,
    const char *errbuf, const char *host)
{
	const char	*detail = errbuf != NULL && *errbuf != '\0' ? errbuf :
			    curl_easy_strerror(cc);

	if (cc == CURLE_OPERATION_TIMEDOUT ||
	    (cc == CURLE_COULDNT_CONNECT && oserr == ETIMEDOUT))
		check_res_text(res, "timeout");
	else if (check_is_tls_error(cc))
		check_res_reason(res, "TLS: %s", detail);
	else if (cc == CURLE_COULDNT_RESOLVE_HOST)
		check_res_reason(res, "could not resolve host %s",
		    host != NULL ? host : "");
	else if (oserr == ECONNREFUSED)
		check_res_text(res, "connection refused");
	else if (oserr == ECONNRESET)
		check_res_text(res, "connection reset");
	else if (cc == CURLE_COULDNT_CONNECT && oserr == EHOSTUNREACH)
		check_res_text(res, "no route to host");
	else if (cc == CURLE_COULDNT_CONNECT && oserr == ENETUNREACH)
		check_res_text(res, "network unreachable");
	else
		return 0;
	return 1;
}

void
check_fail_other(struct check_res *res, CURLcode cc, const char *errbuf)
{
	if (errbuf != NULL && *errbuf != '\0')
		check_res_reason(res, "%s: %s", curl_easy_strerror(cc),
		    errbuf);
	else
		check_res_reason(res, "%s", curl_easy_strerror(cc));
}
