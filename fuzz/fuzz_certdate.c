/*
 * check_cert_parse(), a server certificate's "Expire date" as libcurl
 * hands it over from OpenSSL ("Jan  2 03:04:05 2027 GMT").  Invariants:
 * a date it takes is in the years 1970..9999; written back in OpenSSL's
 * form (from gmtime, so a "Feb 31" comes back as the day it stands for)
 * it parses to the same second; a buffer cut short anywhere is never
 * read past its end (ASan).
 */

#include <time.h>

#include "check/type.h"
#include "fuzz.h"

#define YEAR_10000	253402300800LL	/* 10000-01-01T00:00:00Z */

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const mon[] = { "Jan", "Feb", "Mar", "Apr", "May",
	    "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	char	*s, buf[64];
	long long t;
	time_t	 tt;
	struct tm tm;

	s = fuzz_cstr(data, size);
	t = check_cert_parse(s);
	/* Dec 31 23:59:60 9999 is the leap second that ends the range. */
	fuzz_check(t >= 0 && t <= YEAR_10000, "out of range", s);
	if (t > 0 && t < YEAR_10000) {
		tt = (time_t)t;
		fuzz_check(gmtime_r(&tt, &tm) != NULL, "gmtime", s);
		snprintf(buf, sizeof(buf), "%s %2d %02d:%02d:%02d %d GMT",
		    mon[tm.tm_mon], tm.tm_mday, tm.tm_hour, tm.tm_min,
		    tm.tm_sec, tm.tm_year + 1900);
		fuzz_check(check_cert_parse(buf) == t, "does not parse back",
		    buf);
	}
	free(s);
	return 0;
}
