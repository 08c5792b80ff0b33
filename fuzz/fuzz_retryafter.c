/*
 * http_retry_after(), the reader of a Retry-After header from a provider
 * or a webhook.  Invariants: the wait is -1 (none) or 0 to
 * HTTP_RETRY_AFTER_MAX seconds whatever the text and the clock; a
 * number of seconds below the cap survives being written back in
 * decimal; a date's wait does not grow as the clock goes on.
 */

#include <stdint.h>

#include "fuzz.h"
#include "http.h"

static void
check_at(const char *s, time_t now)
{
	char buf[32];
	long long w, again;

	w = http_retry_after(s, now);
	fuzz_check(w == -1 || (w >= 0 && w <= HTTP_RETRY_AFTER_MAX),
	    "wait outside -1 and 0..HTTP_RETRY_AFTER_MAX", s);
	if (w > 0 && w < HTTP_RETRY_AFTER_MAX) {
		snprintf(buf, sizeof(buf), "%lld", w);
		again = http_retry_after(buf, now);
		fuzz_check(again == w, "seconds do not survive as decimal", s);
	}
	if (w >= 0 && now < INT64_MAX - 3600)
		fuzz_check(http_retry_after(s, now + 3600) <= w, "the wait "
		    "grows as time goes on", s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	s = fuzz_cstr(data, size);
	check_at(s, 1700000000);
	check_at(s, 0);
	check_at(s, (time_t)INT64_MIN);
	free(s);
	return 0;
}
