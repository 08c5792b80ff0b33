/*
 * The floor of the benchmark: what libcurl's multi interface needs to make
 * the GETs of a ddup-check run when it does nothing else.  Same requests,
 * same concurrency limit, same timeouts and the main per-handle options
 * of check.c (no proxy, no signals, no DNS cache, no connection reuse),
 * answers thrown away.  No configuration, no state, no DNS, no output
 * but a count.  It makes one easy handle per transfer, as a plain
 * program would; check.c keeps max_parallel handles and hands each from
 * one check to the next, which costs less (see README, Performance).
 *
 *	floor URLFILE [TIMEOUT_MS [MAX_PARALLEL]]
 *
 * URLFILE holds one URL a line.  Prints "ok N failed M" on stderr; exits 1
 * when any transfer failed or did not answer 2xx.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

static size_t
discard(char *data, size_t size, size_t nmemb, void *arg)
{
	(void)data;
	(void)arg;
	return size * nmemb;
}

/* The URLs of path, one a line, in one allocation each. */
static char **
read_urls(const char *path, size_t *np)
{
	FILE	*fp;
	char	 line[4096], **urls = NULL;
	size_t	 n = 0, cap = 0, len;

	if ((fp = fopen(path, "r")) == NULL) {
		perror(path);
		exit(2);
	}
	while (fgets(line, sizeof(line), fp) != NULL) {
		len = strcspn(line, "\r\n");
		line[len] = '\0';
		if (len == 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			if ((urls = realloc(urls, cap * sizeof(*urls))) == NULL)
				exit(2);
		}
		if ((urls[n++] = strdup(line)) == NULL)
			exit(2);
	}
	fclose(fp);
	*np = n;
	return urls;
}

static int
add(CURLM *cm, const char *url, long tmo)
{
	CURL	*e;

	if ((e = curl_easy_init()) == NULL)
		return -1;
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, tmo);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, tmo);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "ddup/1.0");
	curl_easy_setopt(e, CURLOPT_PROXY, "");
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
	/*
	 * The two settings of check.c that make libcurl 7.88 itself fast
	 * with thousands of hosts: no DNS cache to walk after every
	 * transfer, no idle connections to search and evict.  Without them
	 * this program takes seconds more at 10,000 URLs.
	 */
	curl_easy_setopt(e, CURLOPT_DNS_CACHE_TIMEOUT, 0L);
	curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
	if (curl_multi_add_handle(cm, e) != CURLM_OK) {
		curl_easy_cleanup(e);
		return -1;
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	CURLM	*cm;
	CURLMsg	*msg;
	char	**urls;
	size_t	 n, next = 0, inflight = 0, ok = 0, failed = 0, done, i;
	long	 tmo = 3000, maxp = 256, code;
	int	 running, left;

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: floor URLFILE [TIMEOUT_MS "
		    "[MAX_PARALLEL]]\n");
		return 2;
	}
	if (argc > 2)
		tmo = strtol(argv[2], NULL, 10);
	if (argc > 3)
		maxp = strtol(argv[3], NULL, 10);
	urls = read_urls(argv[1], &n);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (cm = curl_multi_init()) == NULL) {
		fprintf(stderr, "floor: libcurl cannot start\n");
		return 2;
	}
	for (;;) {
		while (next < n && inflight < (size_t)maxp) {
			if (add(cm, urls[next++], tmo) == 0)
				inflight++;
			else
				failed++;
		}
		if (inflight == 0)
			break;
		curl_multi_perform(cm, &running);
		done = 0;
		while ((msg = curl_multi_info_read(cm, &left)) != NULL) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			code = 0;
			curl_easy_getinfo(msg->easy_handle,
			    CURLINFO_RESPONSE_CODE, &code);
			if (msg->data.result == CURLE_OK && code / 100 == 2)
				ok++;
			else
				failed++;
			curl_multi_remove_handle(cm, msg->easy_handle);
			curl_easy_cleanup(msg->easy_handle);
			inflight--;
			done++;
		}
		/* Refill (or finish) before waiting for the sockets. */
		if (done > 0)
			continue;
		curl_multi_poll(cm, NULL, 0, 1000, NULL);
	}
	curl_multi_cleanup(cm);
	curl_global_cleanup();
	for (i = 0; i < n; i++)
		free(urls[i]);
	free(urls);
	fprintf(stderr, "ok %zu failed %zu\n", ok, failed);
	return failed == 0 ? 0 : 1;
}
