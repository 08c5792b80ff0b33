/*
 * parse_duration() and parse_long(), the number parsers of the
 * configuration.  Invariants: a parsed duration is not negative and
 * survives being written back in milliseconds; a parsed integer lies in
 * its bounds and survives being written back in decimal.
 */

#include <limits.h>

#include "fuzz.h"
#include "util.h"

static void
duration(const char *s)
{
	char buf[64];
	long long ms, again;

	if (parse_duration(s, &ms) == -1)
		return;
	fuzz_check(ms >= 0, "duration is negative", s);
	snprintf(buf, sizeof(buf), "%lldms", ms);
	fuzz_check(parse_duration(buf, &again) == 0 && again == ms,
	    "duration does not survive as milliseconds", s);
	if (ms % 1000 == 0) {
		snprintf(buf, sizeof(buf), "%lld", ms / 1000);
		fuzz_check(parse_duration(buf, &again) == 0 && again == ms,
		    "duration does not survive as seconds", s);
	}
}

static void
integer(const char *s)
{
	char buf[32];
	long n, again;

	if (parse_long(s, LONG_MIN, LONG_MAX, &n) == 0) {
		snprintf(buf, sizeof(buf), "%ld", n);
		fuzz_check(parse_long(buf, LONG_MIN, LONG_MAX, &again) == 0 &&
		    again == n, "integer does not survive as decimal", s);
	}
	/* The bounds of ttl, a typical checked key. */
	if (parse_long(s, 1, 2147483647, &n) == 0)
		fuzz_check(n >= 1 && n <= 2147483647, "integer outside its "
		    "bounds", s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	s = fuzz_cstr(data, size);
	duration(s);
	integer(s);
	free(s);
	return 0;
}
