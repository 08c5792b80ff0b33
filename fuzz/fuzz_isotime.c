/*
 * parse_iso_time() and iso_time(), the time stamps of the state file
 * and the status output.  Invariants: a parsed time written back and
 * parsed again is the same second (years of four digits or more:
 * iso_time writes the year as strftime's %Y, unpadded, and a clock past
 * 9999 writes five); any time in the years 1000..999999 survives
 * iso_time + parse to the second.
 */

#include "fuzz.h"
#include "util.h"

#define YEAR_1000_MS	(-30610224000000LL)	/* 1000-01-01T00:00:00Z */
#define YEAR_MAX_MS	(31494784780800000LL)	/* 1000000-01-01T00:00:00Z */

static long long
floor_sec(long long ms)
{
	return ms / 1000 - (ms % 1000 < 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, buf[64];
	long long ms, again, v;
	size_t i;

	s = fuzz_cstr(data, size);
	if (parse_iso_time(s, &ms) == 0 && ms >= YEAR_1000_MS &&
	    ms < YEAR_MAX_MS) {
		iso_time(ms, buf, sizeof(buf));
		fuzz_check(parse_iso_time(buf, &again) == 0 &&
		    floor_sec(again) == floor_sec(ms), "time does not survive "
		    "iso_time + parse", s);
	}

	/* The same bytes read as a time in milliseconds. */
	for (i = 0, v = 0; i < size && i < 8; i++)
		v = (long long)((unsigned long long)v << 8 | data[i]);
	v %= YEAR_MAX_MS;
	if (v >= YEAR_1000_MS) {
		iso_time(v, buf, sizeof(buf));
		fuzz_check(parse_iso_time(buf, &again) == 0 &&
		    again == floor_sec(v) * 1000, "iso_time does not parse "
		    "back", buf);
	}
	iso_time(v, buf, 1);
	fuzz_check(buf[0] == '\0', "one-byte buffer", s);
	free(s);
	return 0;
}
