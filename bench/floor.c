/*
 * The floor of the benchmark: what libcurl's multi interface needs to make
 * the GETs of a ddup-check run when it does nothing else.  Same requests,
 * same concurrency limit, same timeouts and the per-handle options of
 * check/http.c (no proxy, no signals, no DNS cache, no connection reuse, the
 * same receive buffer), answers thrown away.  No configuration, no
 * state, no DNS, no output but a count.  Like check.c it keeps
 * MAX_PARALLEL easy handles, set up once, and hands each from one
 * finished transfer to the next: the floor is the best this library can
 * do, every saving ddup-check makes available to it too.
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

/* An easy handle with the options check/http.c sets once per handle. */
static CURL *
handle(long tmo)
{
	CURL	*e;

	if ((e = curl_easy_init()) == NULL)
		return NULL;
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_QUICK_EXIT, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, tmo);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, tmo);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "ddup/1.0");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_PROXY, "");
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(e, CURLOPT_SSL_SESSIONID_CACHE, 0L);
	curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 4096L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
	/*
	 * The two settings of check/http.c that make libcurl 7.88 itself fast
	 * with thousands of hosts: no DNS cache to walk after every
	 * transfer, no idle connections to search and evict.  Without them
	 * this program takes seconds more at 10,000 URLs.  Each transfer
	 * opens its own connection, as each check does.
	 */
	curl_easy_setopt(e, CURLOPT_DNS_CACHE_TIMEOUT, 0L);
	curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
	curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
	return e;
}

int
main(int argc, char *argv[])
{
	CURLM	*cm;
	CURLMsg	*msg;
	CURL	**idle;
	char	**urls;
	size_t	 n, next = 0, nidle = 0, nhandles, ok = 0, failed = 0, done;
	size_t	 i;
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
	if (maxp < 1)
		maxp = 1;
	urls = read_urls(argv[1], &n);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (cm = curl_multi_init()) == NULL) {
		fprintf(stderr, "floor: libcurl cannot start\n");
		return 2;
	}
	/* As check.c: min(maxParallel, N) handles, made on first use. */
	nhandles = (size_t)maxp < n ? (size_t)maxp : n;
	if ((idle = calloc(nhandles ? nhandles : 1, sizeof(*idle))) == NULL)
		return 2;
	nidle = nhandles;
	for (;;) {
		while (next < n && nidle > 0) {
			CURL **e = &idle[nidle - 1];

			if (*e == NULL && (*e = handle(tmo)) == NULL) {
				fprintf(stderr, "floor: no easy handle\n");
				return 2;
			}
			curl_easy_setopt(*e, CURLOPT_URL, urls[next++]);
			if (curl_multi_add_handle(cm, *e) == CURLM_OK)
				nidle--;
			else
				failed++;
		}
		if (nidle == nhandles)
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
			idle[nidle++] = msg->easy_handle;
			done++;
		}
		/* Refill (or finish) before waiting for the sockets. */
		if (done > 0)
			continue;
		curl_multi_poll(cm, NULL, 0, 1000, NULL);
	}
	for (i = 0; i < nhandles; i++)
		curl_easy_cleanup(idle[i]);
	free(idle);
	curl_multi_cleanup(cm);
	curl_global_cleanup();
	for (i = 0; i < n; i++)
		free(urls[i]);
	free(urls);
	fprintf(stderr, "ok %zu failed %zu\n", ok, failed);
	return failed == 0 ? 0 : 1;
}
