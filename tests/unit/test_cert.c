/*
 * check_cert_parse(): the "Expire date" of libcurl's certificate
 * information, as OpenSSL prints it ("Jan  2 03:04:05 2027 GMT"), to
 * Unix seconds; 0 for anything else.  And check_takes(): only the
 * schemes that make a TLS handshake see a certificate.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "check/type.h"

struct date {
	const char	*in;
	long long	 want;		/* 0: refused */
};

static const struct date good[] = {
	{ "Jan  2 03:04:05 2027 GMT", 1798859045LL },
	{ "Dec 31 23:59:59 2026 GMT", 1798761599LL },
	{ "Jan  1 00:00:01 1970 GMT", 1LL },
	{ "Feb 29 12:00:00 2028 GMT", 1835438400LL },	/* leap day */
	{ "Mar  1 00:00:00 2100 GMT", 4107542400LL },	/* 2100: no leap */
	{ "Jun 15 08:30:00 2049 GMT", 2507358600LL },	/* past 2038 */
	{ "Dec 31 23:59:59 9999 GMT", 253402300799LL },
	/* libcurl's line leaves the blank after "Expire date:". */
	{ " Sep  9 09:09:09 2030 GMT", 1915175349LL },
	/* One blank before a one-digit day is accepted too. */
	{ "Jan 2 03:04:05 2027 GMT", 1798859045LL },
	{ "Nov 30 10:25:56 2026 GMT", 1796034356LL },
};

static const struct date bad[] = {
	{ "", 0 },
	{ "Jam  2 03:04:05 2027 GMT", 0 },	/* no such month */
	{ "jan  2 03:04:05 2027 GMT", 0 },	/* OpenSSL's case only */
	{ "anF  2 03:04:05 2027 GMT", 0 },	/* across two months' names */
	{ "January  2 03:04:05 2027 GMT", 0 },
	{ "Ja  2 03:04:05 2027 GMT", 0 },
	{ "Jan  0 03:04:05 2027 GMT", 0 },
	{ "Jan 32 03:04:05 2027 GMT", 0 },
	{ "Jan  2 24:04:05 2027 GMT", 0 },
	{ "Jan  2 03:60:05 2027 GMT", 0 },
	{ "Jan  2 03:04:61 2027 GMT", 0 },
	{ "Jan  2 03:04:05 1969 GMT", 0 },
	{ "Jan  2 03:04:05 10000 GMT", 0 },
	{ "Jan  2 03:04:05 2027 UTC", 0 },	/* OpenSSL says GMT */
	{ "Jan  2 03:04:05 2027", 0 },
	{ "Jan  2 03:04:05 2027 GMT junk", 0 },
	{ "Jan  2 03:04 2027 GMT", 0 },
	{ "20270102030405Z", 0 },		/* ASN.1 GeneralizedTime */
	{ "\x01\xff\xfe", 0 },
};

static void
test_good_dates(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (check_cert_parse(good[i].in) != good[i].want)
			fail_msg("'%s': %lld, want %lld", good[i].in,
			    check_cert_parse(good[i].in), good[i].want);
	}
}

static void
test_bad_dates(void **state)
{
	size_t i;

	(void)state;
	assert_int_equal(check_cert_parse(NULL), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (check_cert_parse(bad[i].in) != 0)
			fail_msg("'%s' not refused: %lld", bad[i].in,
			    check_cert_parse(bad[i].in));
}

/* Every day of some years, against timegm() of the same fields. */
static void
test_against_timegm(void **state)
{
	static const char *const mon[] = { "Jan", "Feb", "Mar", "Apr", "May",
	    "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	struct tm tm;
	time_t	 t;
	char	 buf[64];
	long long day;

	(void)state;
	for (day = 0; day < 366LL * 140; day += 3) {
		t = (time_t)(day * 86400 + day % 86400);
		gmtime_r(&t, &tm);
		snprintf(buf, sizeof(buf), "%s %2d %02d:%02d:%02d %d GMT",
		    mon[tm.tm_mon], tm.tm_mday, tm.tm_hour, tm.tm_min,
		    tm.tm_sec, tm.tm_year + 1900);
		if (check_cert_parse(buf) != (long long)t)
			fail_msg("'%s': %lld, want %lld", buf,
			    check_cert_parse(buf), (long long)t);
	}
}

static void
test_takes_cert(void **state)
{
	(void)state;
	assert_true(check_takes("https://a.example/") & CHECK_TAKES_CERT);
	assert_true(check_takes("HTTPS://a.example/") & CHECK_TAKES_CERT);
	assert_false(check_takes("http://a.example/") & CHECK_TAKES_CERT);
	assert_true(check_takes("http://a.example/") & CHECK_TAKES_HTTP);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_dates),
		cmocka_unit_test(test_bad_dates),
		cmocka_unit_test(test_against_timegm),
		cmocka_unit_test(test_takes_cert),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
