/*
 * url_plain(), the shortcut config_value.c takes before asking libcurl's
 * URL parser: whatever it calls plain, libcurl must accept with the same
 * call config_value.c makes (flags 0, a host that is not empty), or the
 * configuration's validation would differ from libcurl's.
 */

#include <curl/curl.h>

#include "fuzz.h"
#include "util.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	CURLU *u;
	char *s, *host = NULL;
	int ok;

	s = fuzz_cstr(data, size);
	if (url_plain(s)) {
		if ((u = curl_url()) == NULL)
			abort();
		ok = curl_url_set(u, CURLUPART_URL, s, 0) == CURLUE_OK &&
		    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
		    *host != '\0';
		fuzz_check(ok, "plain URL refused by libcurl", s);
		curl_free(host);
		curl_url_cleanup(u);
	}
	free(s);
	return 0;
}
