/*
 * util.c: the parsers and the address set, driven by tables.
 */

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pguri.h"
#include "provider.h"
#include "redact.h"
#include "rrset.h"
#include "util.h"

static void
test_duration(void **state)
{
	static const struct {
		const char	*s;
		int		 rc;
		long long	 ms;
	} t[] = {
		{ "250ms", 0, 250 },
		{ "3s", 0, 3000 },
		{ "5m", 0, 300000 },
		{ "1h", 0, 3600000 },
		{ "7d", 0, 604800000 },
		{ "30", 0, 30000 },
		{ "0", 0, 0 },
		{ "0ms", 0, 0 },
		{ "007s", 0, 7000 },
		{ "9223372036854775807ms", 0, LLONG_MAX },
		{ "9223372036854775", 0, 9223372036854775000LL },
		{ "9223372036854776", -1, 0 },
		{ "9223372036854775808ms", -1, 0 },
		{ "106751991167301d", -1, 0 },
		{ "", -1, 0 },
		{ "-1s", -1, 0 },
		{ "+1s", -1, 0 },
		{ " 1s", -1, 0 },
		{ "1s ", -1, 0 },
		{ "1 s", -1, 0 },
		{ "s", -1, 0 },
		{ "ms", -1, 0 },
		{ "1.5s", -1, 0 },
		{ "1x", -1, 0 },
		{ "1sec", -1, 0 },
		{ "1S", -1, 0 },
		{ "1w", -1, 0 },
		{ "1mss", -1, 0 },
		{ "0x10", -1, 0 },
	};
	long long ms;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ms = -42;
		if (parse_duration(t[i].s, &ms) != t[i].rc)
			fail_msg("parse_duration(\"%s\") != %d", t[i].s, t[i].rc);
		if (t[i].rc == 0 && ms != t[i].ms)
			fail_msg("parse_duration(\"%s\") = %lld, not %lld",
			    t[i].s, ms, t[i].ms);
		if (t[i].rc == -1)
			assert_int_equal(ms, -42);
	}
}

static void
test_long(void **state)
{
	static const struct {
		const char	*s;
		long		 min, max;
		int		 rc;
		long		 v;
	} t[] = {
		{ "120", 1, 2147483647, 0, 120 },
		{ "1", 1, 10, 0, 1 },
		{ "10", 1, 10, 0, 10 },
		{ "0", 0, 10, 0, 0 },
		{ "-5", -10, 10, 0, -5 },
		{ "0", 1, 10, -1, 0 },
		{ "11", 1, 10, -1, 0 },
		{ "-1", 0, 10, -1, 0 },
		{ "", 0, 10, -1, 0 },
		{ " 1", 0, 10, -1, 0 },
		{ "1 ", 0, 10, -1, 0 },
		{ "+1", 0, 10, -1, 0 },
		{ "1x", 0, 10, -1, 0 },
		{ "0x1", 0, 10, -1, 0 },
		{ "-", -10, 10, -1, 0 },
		{ "1.0", 0, 10, -1, 0 },
		{ "99999999999999999999999", 0, LONG_MAX, -1, 0 },
		{ "9223372036854775807", 0, LONG_MAX, 0, LONG_MAX },
	};
	long v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		v = -42;
		if (parse_long(t[i].s, t[i].min, t[i].max, &v) != t[i].rc)
			fail_msg("parse_long(\"%s\") != %d", t[i].s, t[i].rc);
		if (t[i].rc == 0 && v != t[i].v)
			fail_msg("parse_long(\"%s\") = %ld", t[i].s, v);
		if (t[i].rc == -1)
			assert_int_equal(v, -42);
	}
}

static void
test_bool(void **state)
{
	static const struct {
		const char	*s;
		int		 rc;
		int		 v;
	} t[] = {
		{ "true", 0, 1 }, { "TRUE", 0, 1 }, { "yes", 0, 1 },
		{ "on", 0, 1 }, { "1", 0, 1 }, { "false", 0, 0 },
		{ "No", 0, 0 }, { "off", 0, 0 }, { "0", 0, 0 },
		{ "", -1, 0 }, { "t", -1, 0 }, { "true ", -1, 0 },
		{ "2", -1, 0 }, { "yesno", -1, 0 },
	};
	size_t i;
	int v;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		v = -42;
		if (parse_bool(t[i].s, &v) != t[i].rc)
			fail_msg("parse_bool(\"%s\") != %d", t[i].s, t[i].rc);
		if (v != (t[i].rc == 0 ? t[i].v : -42))
			fail_msg("parse_bool(\"%s\") = %d", t[i].s, v);
	}
}

static void
test_expect(void **state)
{
	static const struct {
		const char	*s;
		int		 rc;
		const char	*fmt;	/* expect_format of the result */
	} t[] = {
		{ "200", 0, "200" },
		{ "2xx", 0, "2xx" },
		{ "2XX", 0, "2xx" },
		{ "200, 204, 3xx", 0, "200, 204, 3xx" },
		{ "200,204,3xx", 0, "200, 204, 3xx" },
		{ " 418 ", 0, "418" },
		{ "100", 0, "100" },
		{ "599", 0, "599" },
		{ "1xx, 5xx", 0, "1xx, 5xx" },
		{ "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", -1, NULL },
		{ "200,200,200,200,200,200,200,200,200,200,200,200,200,200,"
		    "200,200", 0, NULL },
		{ "200,200,200,200,200,200,200,200,200,200,200,200,200,200,"
		    "200,200,200", -1, NULL },
		{ "", -1, NULL },
		{ " ", -1, NULL },
		{ "099", -1, NULL },
		{ "600", -1, NULL },
		{ "6xx", -1, NULL },
		{ "0xx", -1, NULL },
		{ "20x", -1, NULL },
		{ "2x0", -1, NULL },
		{ "2000", -1, NULL },
		{ "20", -1, NULL },
		{ "200,", -1, NULL },
		{ ",200", -1, NULL },
		{ "200,,204", -1, NULL },
		{ "200 204", -1, NULL },
		{ "-200", -1, NULL },
		{ "abc", -1, NULL },
	};
	struct expect e;
	char buf[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (parse_expect(t[i].s, &e) != t[i].rc)
			fail_msg("parse_expect(\"%s\") != %d", t[i].s, t[i].rc);
		if (t[i].fmt == NULL)
			continue;
		expect_format(&e, buf, sizeof(buf));
		assert_string_equal(buf, t[i].fmt);
	}

	assert_int_equal(parse_expect("200, 204, 3xx", &e), 0);
	assert_true(expect_match(&e, 200));
	assert_true(expect_match(&e, 204));
	assert_true(expect_match(&e, 300));
	assert_true(expect_match(&e, 399));
	assert_false(expect_match(&e, 201));
	assert_false(expect_match(&e, 400));
	assert_false(expect_match(&e, 0));

	/* A short buffer is cut, still terminated. */
	expect_format(&e, buf, 6);
	assert_string_equal(buf, "200, ");
	expect_format(&e, buf, 1);
	assert_string_equal(buf, "");
}

static void
test_addr(void **state)
{
	static const struct {
		const char	*s;
		int		 family;	/* 0: invalid */
		const char	*canon;
	} t[] = {
		{ "192.0.2.1", 4, "192.0.2.1" },
		{ "0.0.0.0", 4, "0.0.0.0" },
		{ "255.255.255.255", 4, "255.255.255.255" },
		{ "2001:db8::1", 6, "2001:db8::1" },
		{ "2001:DB8:0:0:0:0:0:1", 6, "2001:db8::1" },
		{ "::", 6, "::" },
		{ "::1", 6, "::1" },
		{ "::ffff:192.0.2.1", 6, "::ffff:192.0.2.1" },
		{ "", 0, NULL },
		{ "192.0.2", 0, NULL },
		{ "192.0.2.256", 0, NULL },
		{ "192.0.2.1 ", 0, NULL },
		{ " 192.0.2.1", 0, NULL },
		{ "[2001:db8::1]", 0, NULL },
		{ "fe80::1%eth0", 0, NULL },
		{ "2001:db8::1::2", 0, NULL },
		{ "example.com", 0, NULL },
		{ "192.0.2.1/24", 0, NULL },
	};
	struct addr a;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(&a, 0, sizeof(a));
		if (t[i].family == 0) {
			if (addr_parse(t[i].s, &a) != -1)
				fail_msg("addr_parse(\"%s\") accepted", t[i].s);
			continue;
		}
		if (addr_parse(t[i].s, &a) != 0)
			fail_msg("addr_parse(\"%s\") refused", t[i].s);
		assert_int_equal(a.family, t[i].family);
		assert_string_equal(a.s, t[i].canon);
	}
}

/* IPv4 text is written without inet_ntop(): it must match it byte for byte. */
static void
test_addr_ipv4_text(void **state)
{
	static const int other[] = { 0, 1, 9, 10, 99, 100, 199, 200, 255 };
	unsigned char b[4];
	char want[INET_ADDRSTRLEN];
	struct addr a;
	size_t i, j, k;

	(void)state;
	for (i = 0; i < 256; i++)
		for (j = 0; j < sizeof(other) / sizeof(other[0]); j++)
			for (k = 0; k < 4; k++) {
				b[k] = (unsigned char)i;
				b[(k + 1) % 4] = (unsigned char)other[j];
				b[(k + 2) % 4] = (unsigned char)(255 - i);
				b[(k + 3) % 4] = (unsigned char)(i * 7);
				assert_non_null(inet_ntop(AF_INET, b, want,
				    sizeof(want)));
				assert_int_equal(addr_parse(want, &a), 0);
				assert_string_equal(a.s, want);
				assert_memory_equal(a.b, b, 4);
			}
}

/* What libcurl's URL parser says, as config_value.c asks it. */
static int
curl_accepts(const char *s)
{
	CURLU *u = curl_url();
	char *host = NULL;
	int ok;

	assert_non_null(u);
	ok = curl_url_set(u, CURLUPART_URL, s, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    *host != '\0';
	curl_free(host);
	curl_url_cleanup(u);
	return ok;
}

/*
 * url_plain() stands in for libcurl's parser in the common case: all it
 * accepts libcurl accepts, and the rest goes to libcurl.
 */
static void
test_url_plain(void **state)
{
	static const struct {
		const char	*s;
		int		 plain;
	} t[] = {
		{ "http://127.0.0.1:8080/health", 1 },
		{ "https://www.example.com/", 1 },
		{ "HTTPS://WWW.EXAMPLE.COM", 1 },
		{ "http://a", 1 },
		{ "http://a:", 1 },
		{ "http://a:/x", 1 },
		{ "http://a:0", 1 },
		{ "http://a:65535/", 1 },
		{ "http://a:00080/", 1 },
		{ "http://a?x=1", 1 },
		{ "http://a#frag", 1 },
		{ "http://a/p?q=1&r=%20#f", 1 },
		{ "http://a/\xc3\xa9", 1 },
		{ "http://0x7f.1/", 1 },
		{ "http://1.2.3.999/", 1 },
		{ "http://99999999999999999999/", 1 },
		{ "http://under_score.example/", 1 },
		{ "http://-/", 1 },
		{ "http://./", 1 },
		{ "http://a/../../x", 1 },
		{ "http://a:65536/", 0 },
		{ "http://a:123456/", 0 },
		{ "http://a:8x/", 0 },
		{ "http://a:-1/", 0 },
		{ "http://a b/", 0 },
		{ "http://a/b c", 0 },
		{ "http://a/b\tc", 0 },
		{ "http://a/\x7f", 0 },
		{ "http://a/\x01", 0 },
		{ "http://user@a/", 0 },
		{ "http://user:pw@a/", 0 },
		{ "http://[::1]:80/", 0 },
		{ "http://[::1/", 0 },
		{ "http://a%41/", 0 },
		{ "http://a%00/", 0 },
		{ "http://a!b/", 0 },
		{ "http://a\\b/", 0 },
		{ "http:///a", 0 },
		{ "http:/a", 0 },
		{ "http://", 0 },
		{ "http://:80/", 0 },
		{ "http://a:80:80/", 0 },
		{ "ftp://a/", 0 },
		{ "http:a", 0 },
		{ "", 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (url_plain(t[i].s) != t[i].plain)
			fail_msg("url_plain(\"%s\") is %d", t[i].s, !t[i].plain);
		if (t[i].plain && !curl_accepts(t[i].s))
			fail_msg("url_plain(\"%s\"), libcurl refuses it", t[i].s);
	}
}

static void
test_addr_cmp(void **state)
{
	/* In publication order. */
	static const char *const order[] = { "0.0.0.0", "9.0.0.1",
	    "10.0.0.1", "10.0.0.2", "192.0.2.1", "255.255.255.255", "::",
	    "::1", "::ffff:0.0.0.1", "2001:db8::1", "2001:db8::10",
	    "fe80::1" };
	struct addr a, b;
	size_t i, j;
	int c;

	(void)state;
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		for (j = 0; j < sizeof(order) / sizeof(order[0]); j++) {
			assert_int_equal(addr_parse(order[i], &a), 0);
			assert_int_equal(addr_parse(order[j], &b), 0);
			c = addr_cmp(&a, &b);
			if ((i < j && c >= 0) || (i == j && c != 0) ||
			    (i > j && c <= 0))
				fail_msg("addr_cmp(%s, %s) = %d", order[i],
				    order[j], c);
		}
	}
}

static void
test_addrset(void **state)
{
	struct addrset a = { NULL, 0, 0 }, b = { NULL, 0, 0 };
	struct addr x;
	char *s;

	(void)state;
	s = addrset_join(&a);
	assert_string_equal(s, "");
	free(s);

	assert_int_equal(addrset_add(&a, "2001:db8::2"), 0);
	assert_int_equal(addrset_add(&a, "192.0.2.10"), 0);
	assert_int_equal(addrset_add(&a, "192.0.2.9"), 0);
	assert_int_equal(addrset_add(&a, "2001:DB8::1"), 0);
	assert_int_equal(addrset_add(&a, "192.0.2.9"), 0);	/* again */
	assert_int_equal(addrset_add(&a, "junk"), -1);
	assert_int_equal(a.n, 4);
	s = addrset_join(&a);
	assert_string_equal(s, "192.0.2.9 192.0.2.10 2001:db8::1 2001:db8::2");

	assert_true(addrset_contains(&a, "2001:db8:0::1"));
	assert_true(addrset_contains(&a, "192.0.2.10"));
	assert_false(addrset_contains(&a, "192.0.2.11"));
	assert_false(addrset_contains(&a, "junk"));

	/* The join parses back to the same set, in any order. */
	assert_int_equal(addrset_parse(&b, s), 0);
	assert_true(addrset_equal(&a, &b));
	free(s);
	assert_int_equal(addrset_parse(&b,
	    " 2001:db8::2 192.0.2.10\t2001:db8::1  192.0.2.9 192.0.2.9 "), 0);
	assert_true(addrset_equal(&a, &b));

	/* Junk leaves the set as it was. */
	assert_int_equal(addrset_parse(&b, "192.0.2.1 junk"), -1);
	assert_true(addrset_equal(&a, &b));
	assert_int_equal(addrset_parse(&b,
	    "192.0.2.1 0123456789012345678901234567890123456789012345678"), -1);
	assert_true(addrset_equal(&a, &b));

	assert_int_equal(addrset_parse(&b, ""), 0);
	assert_int_equal(b.n, 0);
	assert_false(addrset_equal(&a, &b));

	addrset_copy(&b, &a);
	assert_true(addrset_equal(&a, &b));
	assert_int_equal(addr_parse("10.1.1.1", &x), 0);
	assert_int_equal(addrset_add_addr(&b, &x), 0);
	assert_false(addrset_equal(&a, &b));
	assert_string_equal(b.v[0].s, "10.1.1.1");

	addrset_free(&a);
	addrset_copy(&b, &a);
	assert_int_equal(b.n, 0);
	assert_true(addrset_equal(&a, &b));
	addrset_free(&a);
	addrset_free(&b);
}

static void
test_addrset_many(void **state)
{
	struct addrset a = { NULL, 0, 0 };
	char buf[ADDR_STRLEN];
	int i;

	(void)state;
	/* Reverse order, with duplicates: the set sorts and merges. */
	for (i = 999; i >= 0; i--) {
		snprintf(buf, sizeof(buf), "10.0.%d.%d", i / 256, i % 256);
		assert_int_equal(addrset_add(&a, buf), 0);
		assert_int_equal(addrset_add(&a, buf), 0);
	}
	assert_int_equal(a.n, 1000);
	for (i = 1; i < 1000; i++)
		assert_true(addr_cmp(&a.v[i - 1], &a.v[i]) < 0);
	addrset_free(&a);
}

static void
test_time(void **state)
{
	static const struct {
		const char	*s;
		int		 rc;
		long long	 ms;
	} t[] = {
		{ "1970-01-01T00:00:00Z", 0, 0 },
		{ "2026-11-30T10:25:56Z", 0, 1796034356000LL },
		{ "2026-11-30T10:25:56.5Z", 0, 1796034356500LL },
		{ "2026-11-30T10:25:56.123456Z", 0, 1796034356123LL },
		{ "2024-02-29T00:00:00Z", 0, 1709164800000LL },
		{ "2026-11-30 10:25:56Z", 0, 1796034356000LL },
		{ "2023-02-29T00:00:00Z", -1, 0 },
		{ "2026-13-01T00:00:00Z", -1, 0 },
		{ "2026-11-31T00:00:00Z", -1, 0 },
		{ "2026-11-30T24:00:00Z", -1, 0 },
		{ "2026-11-30T10:60:00Z", -1, 0 },
		{ "2026-11-30T10:25:56", -1, 0 },
		{ "2026-11-30T10:25:56+00:00", -1, 0 },
		{ "2026-11-30T10:25:56.Z", -1, 0 },
		{ "2026-11-30T10:25:56Zx", -1, 0 },
		{ "2026-1-30T10:25:56Z", -1, 0 },
		/* A clock past 9999 writes five digits: read them back. */
		{ "10056-03-01T00:00:00Z", 0, 255174710400000LL },
		{ "10056-03-01T00:00:00.250Z", 0, 255174710400250LL },
		{ "100000-01-01T00:00:00Z", 0, 3093527980800000LL },
		{ "02026-11-30T10:25:56Z", -1, 0 },
		{ "1000000-01-01T00:00:00Z", -1, 0 },
		{ "10056-3-01T00:00:00Z", -1, 0 },
		{ "1969-07-20T20:17:40Z", 0, -14182940000LL },
		{ "", -1, 0 },
		{ "junk", -1, 0 },
	};
	char buf[32];
	long long ms, now;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ms = -42;
		if (parse_iso_time(t[i].s, &ms) != t[i].rc)
			fail_msg("parse_iso_time(\"%s\") != %d", t[i].s,
			    t[i].rc);
		if (t[i].rc == 0 && ms != t[i].ms)
			fail_msg("parse_iso_time(\"%s\") = %lld", t[i].s, ms);
	}

	iso_time(1796034356999LL, buf, sizeof(buf));
	assert_string_equal(buf, "2026-11-30T10:25:56Z");
	iso_time(0, buf, sizeof(buf));
	assert_string_equal(buf, "1970-01-01T00:00:00Z");
	iso_time(-1, buf, sizeof(buf));
	assert_string_equal(buf, "1969-12-31T23:59:59Z");
	iso_time(255174710400250LL, buf, sizeof(buf));
	assert_string_equal(buf, "10056-03-01T00:00:00Z");
	assert_int_equal(parse_iso_time(buf, &ms), 0);
	assert_int_equal(ms, 255174710400000LL);

	assert_true(ms_add(LLONG_MAX - 5, 10) == LLONG_MAX);
	assert_true(ms_add(LLONG_MIN + 5, -10) == LLONG_MIN);
	assert_true(ms_add(1796034356000LL, DURATION_MAX_MS) ==
	    1796034356000LL + 315360000000LL);
	assert_true(ms_add(-1000, 250) == -750);

	now = now_ms();
	assert_true(now > 1700000000000LL);
	iso_time(now, buf, sizeof(buf));
	assert_int_equal(parse_iso_time(buf, &ms), 0);
	assert_true(ms <= now && now - ms < 1000);

	ms = mono_ms();
	assert_true(ms >= 0);
	assert_true(mono_ms() >= ms);
}

static void
test_printable(void **state)
{
	static const struct {
		const char	*in;
		const char	*out;
	} t[] = {
		{ "", "" },
		{ "plain text: 200 OK", "plain text: 200 OK" },
		{ "line\nforged", "line?forged" },
		{ "cr\rtab\tdel\x7f", "cr?tab?del?" },
		{ "\x1b[31mred\x1b[0m", "?[31mred?[0m" },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
		{ "c1 \xc2\x85 \xc2\x9b", "c1 ?? ??" },		/* NEL, CSI */
		{ "cut \xc3", "cut ?" },
		{ "cut \xe2\x82", "cut ??" },
		{ "lone \x80 \xbf", "lone ? ?" },
		{ "overlong \xc0\xaf \xe0\x80\xaf", "overlong ?? ???" },
		{ "surrogate \xed\xa0\x80", "surrogate ???" },
		{ "too big \xf4\x90\x80\x80 \xf5\x80", "too big ???? ??" },
		{ "ls \xe2\x80\xa8 rlo \xe2\x80\xae", "ls ??? rlo ???" },
		{ "\xff\xfe", "??" },
	};
	char buf[64], small[6];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", t[i].in);
		text_printable(buf);
		if (strcmp(buf, t[i].out) != 0)
			fail_msg("text_printable(\"%s\") = \"%s\"", t[i].out,
			    buf);
		/* The check without a copy agrees with it. */
		if (text_is_printable(t[i].in) != (strcmp(t[i].in, buf) == 0))
			fail_msg("text_is_printable(\"%s\")", t[i].out);
	}
	/* A copy cut inside a sequence leaves no half of it. */
	assert_string_equal(text_printable_copy(small, sizeof(small),
	    "abc\xe2\x82\xac"), "abc??");
	assert_string_equal(text_printable_copy(small, sizeof(small),
	    "abcd\xc3\xa9"), "abcd?");
	assert_string_equal(text_printable_copy(small, sizeof(small), NULL),
	    "");
}

static void
test_width(void **state)
{
	(void)state;
	assert_int_equal(text_width(""), 0);
	assert_int_equal(text_width("plain"), 5);
	assert_int_equal(text_width("\xe6\x9d\xb1\xe4\xba\xac-1"), 6);	/* 東京-1 */
	assert_int_equal(text_width("e\xcc\x81" "cole"), 5);	/* e + U+0301 */
	assert_int_equal(text_width("\xf0\x9f\x9a\x80!"), 3);	/* U+1F680 */
	assert_int_equal(text_width("\xef\xbc\xa1"), 2);	/* fullwidth A */
	assert_int_equal(text_width("a\xc3"), 2);		/* cut short */
	assert_int_equal(text_width("\xff\xfe"), 2);
}

static void
test_alloc(void **state)
{
	char *p, *q;

	(void)state;
	p = xmalloc(0);
	free(p);
	p = xcalloc(0, 8);
	free(p);
	p = xcalloc(4, 8);
	assert_int_equal(p[31], 0);
	p = xrealloc(p, 64);
	free(p);
	p = xrealloc(NULL, 0);
	free(p);
	q = xstrdup("ddup");
	assert_string_equal(q, "ddup");
	free(q);
}

/* Typed records: parsing as stored, equality as DNS sees it. */
static void
test_rrset(void **state)
{
	struct rrset a, b;
	char *s;
	enum rrtype t;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	assert_int_equal(rrtype_parse("CNAME", &t), 0);
	assert_int_equal(t, RR_CNAME);
	assert_int_equal(rrtype_parse("MX", &t), -1);
	assert_string_equal(rrtype_str(RR_AAAA), "AAAA");

	a.type = RR_A;
	assert_int_equal(rrset_parse(&a, "192.0.2.9 192.0.2.1"), 0);
	s = rrset_join(&a);
	assert_string_equal(s, "192.0.2.1 192.0.2.9");
	free(s);
	/* An AAAA address is not an A record. */
	assert_int_equal(rrset_parse(&a, "192.0.2.1 2001:db8::1"), -1);
	assert_true(rrset_empty(&a));

	a.type = b.type = RR_CNAME;
	assert_int_equal(rrset_parse(&a, "lb.example.net"), 0);
	assert_int_equal(rrset_parse(&b, "LB.example.net"), 0);
	a.ttl = b.ttl = 60;
	assert_true(rrset_same(&a, &b));
	b.proxied = 1;
	assert_false(rrset_same(&a, &b));
	b.proxied = 0;
	b.ttl = 120;
	assert_false(rrset_same(&a, &b));
	/* Not a host name: two words, or an address. */
	assert_int_equal(rrset_parse(&b, "a.example b.example"), -1);
	assert_int_equal(rrset_parse(&b, "192.0.2.1"), -1);
	/* Two empty sets are the same whatever their TTL. */
	assert_int_equal(rrset_parse(&a, ""), 0);
	a.ttl = 5;
	assert_true(rrset_same(&a, &b));
	assert_false(rrset_same(&a, &(struct rrset){ .type = RR_A }));
	rrset_clear(&a);
	rrset_clear(&b);
}

/* The i-th of n addresses of 10/8 in the order a multiplier m gives. */
static void
nth_addr(size_t i, size_t n, size_t m, struct addr *a)
{
	char buf[ADDR_STRLEN];
	size_t v = (i * m) % n + 1;

	snprintf(buf, sizeof(buf), "10.%zu.%zu.%zu", (v >> 16) & 255,
	    (v >> 8) & 255, v & 255);
	assert_int_equal(addr_parse(buf, a), 0);
}

/* Appended as a provider's own list holds them: no order, duplicates. */
static void
fill(struct rrset *rs, size_t n, size_t m, size_t dups)
{
	struct addrset *set = &rs->addrs;
	size_t i;

	set->cap = n + dups;
	set->v = xcalloc(set->cap, sizeof(*set->v));
	for (i = 0; i < n + dups; i++)
		nth_addr(i % n, n, m, &set->v[set->n++]);
}

/*
 * A set read of many records: sorted and merged at once (a set built by
 * inserting each would take minutes at this size), compared in one pass,
 * and shown in a log line as a few of them and their count.  A read
 * takes at most RRSET_READ_MAX records of a type.
 */
static void
test_rrset_many(void **state)
{
	enum { N = 200000 };
	static const char head[] = "[{\"type\": \"A\", \"ttl\": 60, "
	    "\"records\": [";
	const struct rrset_json js = { "RRset", "type", "ttl", "records",
	    "record", NULL };
	struct rrset a = { .type = RR_A }, b = { .type = RR_A };
	struct rrset c = { .type = RR_A }, sets[1] = { { .type = RR_A } };
	struct addr x;
	char err[256], *s, *doc;
	size_t i, len, off;

	(void)state;
	fill(&a, N, 7919, 10000);
	fill(&b, N, 104729, 0);
	rrset_read_end(&a);
	rrset_read_end(&b);
	assert_int_equal(a.addrs.n, N);
	for (i = 1; i < a.addrs.n; i++)
		assert_true(addr_cmp(&a.addrs.v[i - 1], &a.addrs.v[i]) < 0);
	a.ttl = b.ttl = 60;
	assert_true(rrset_same(&a, &b));
	nth_addr(N, N + 1, 1, &b.addrs.v[N / 2]);
	assert_false(rrset_same(&a, &b));
	rrset_copy(&c, &a);
	assert_true(rrset_same(&a, &c));
	s = rrset_addrs_shown(&a.addrs);
	assert_non_null(strstr(s, "10.0.0.1 10.0.0.2 "));
	assert_non_null(strstr(s, " ... (200000 records)"));
	assert_true(strlen(s) < 1000);
	free(s);
	rrset_clear(&a);
	rrset_clear(&b);
	rrset_clear(&c);

	/* The limit: RRSET_READ_MAX is taken, one more is not. */
	for (i = 0; i < RRSET_READ_MAX; i++) {
		nth_addr(i, RRSET_READ_MAX, 1, &x);
		assert_int_equal(rrset_read_add(&c, &x, err, sizeof(err)), 0);
	}
	assert_int_equal(rrset_read_add(&c, &x, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "more than 1000 A records"));
	rrset_read_end(&c);
	assert_int_equal(c.addrs.n, RRSET_READ_MAX);
	s = rrset_addrs_shown(&c.addrs);
	assert_non_null(strstr(s, " ... (1000 records)"));
	free(s);
	rrset_clear(&c);

	/* The same through the JSON of an API (deSEC, Gandi). */
	len = sizeof(head) + (RRSET_READ_MAX + 1) * 24 + 8;
	doc = xmalloc(len);
	off = (size_t)snprintf(doc, len, "%s", head);
	for (i = 0; i <= RRSET_READ_MAX; i++) {
		nth_addr(i, RRSET_READ_MAX + 1, 3, &x);
		off += (size_t)snprintf(doc + off, len - off, "%s\"%s\"",
		    i > 0 ? ", " : "", x.s);
	}
	snprintf(doc + off, len - off, "]}]");
	assert_int_equal(rrset_parse_json(doc, strlen(doc), &js, sets, 1, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "more than 1000 A records"));
	assert_true(rrset_empty(&sets[0]));
	/* One fewer is a set, sorted. */
	s = strrchr(doc, ',');
	snprintf(s, len - (size_t)(s - doc), "]}]");
	assert_int_equal(rrset_parse_json(doc, strlen(doc), &js, sets, 1, err,
	    sizeof(err)), 0);
	assert_int_equal(sets[0].addrs.n, RRSET_READ_MAX);
	assert_string_equal(sets[0].addrs.v[0].s, "10.0.0.1");
	rrset_clear(&sets[0]);
	free(doc);
}

/* A CNAME through the JSON of an API: one host name, dot and case gone. */
static void
test_rrset_json_cname(void **state)
{
	struct rrset_json js = { "RRset", "type", "ttl", "records",
	    "record", NULL };
	struct rrset sets[2] = { { .type = RR_A }, { .type = RR_CNAME } };
	char err[256];
	const char *ok = "[{\"type\": \"TXT\", \"ttl\": 60, \"records\": "
	    "[\"x\"]}, {\"type\": \"CNAME\", \"ttl\": 3600, \"records\": "
	    "[\"Backup.Example.NET.\"]}]";
	const char *rel = "[{\"type\": \"CNAME\", \"ttl\": 300, "
	    "\"records\": [\"backup\"]}]";
	const char *bad[] = {
		"[{\"type\": \"CNAME\", \"ttl\": 60, \"records\": "
		    "[\"a.example.\", \"b.example.\"]}]",
		"[{\"type\": \"CNAME\", \"ttl\": 60, \"records\": "
		    "[\"bad name.example.\"]}]",
		"[{\"type\": \"CNAME\", \"ttl\": 60, \"records\": "
		    "[\"a..example.\"]}]",
		"[{\"type\": \"CNAME\", \"ttl\": 60, \"records\": [\".\"]}]",
		/* two final dots: one stripped left an empty label */
		"[{\"type\": \"CNAME\", \"ttl\": 60, \"records\": "
		    "[\"backup.example..\"]}]",
		"[{\"type\": \"CNAME\", \"ttl\": 60, \"records\": [7]}]",
	};
	size_t i;

	(void)state;
	assert_int_equal(rrset_parse_json(ok, strlen(ok), &js, sets, 2, err,
	    sizeof(err)), 0);
	assert_true(rrset_empty(&sets[0]));
	assert_string_equal(sets[1].target, "backup.example.net");
	assert_int_equal(sets[1].ttl, 3600);
	/* Without an origin a target without a dot is taken as it is. */
	assert_int_equal(rrset_parse_json(rel, strlen(rel), &js, sets, 2, err,
	    sizeof(err)), 0);
	assert_string_equal(sets[1].target, "backup");
	js.origin = "Example.Test";
	assert_int_equal(rrset_parse_json(rel, strlen(rel), &js, sets, 2, err,
	    sizeof(err)), 0);
	assert_string_equal(sets[1].target, "backup.example.test");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(rrset_parse_json(bad[i], strlen(bad[i]), &js,
		    sets, 2, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "CNAME"));
		assert_null(sets[1].target);
	}
	rrset_clear(&sets[0]);
	rrset_clear(&sets[1]);
}

/* Reads a whole small file into buf; its length, or -1. */
static ssize_t
slurp(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY)) == -1)
		return -1;
	n = read(fd, buf, len);
	close(fd);
	return n;
}

/* How many entries the folder holds besides . and .. */
static int
dir_entries(const char *dir)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	assert_non_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

static void
test_write_file_atomic(void **state)
{
	char dir[] = "/tmp/ddup-atomic-XXXXXX", path[256], other[256];
	char buf[64] = "", err[512], want[512];
	struct stat st;
	mode_t old;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/metrics.prom", dir);
	snprintf(other, sizeof(other), "%s/other", dir);

	/* A new file, with exactly the mode asked even under a strict umask. */
	old = umask(077);
	assert_int_equal(write_file_atomic(path, "one\n", 4, 0644, err,
	    sizeof(err)), 0);
	umask(old);
	assert_int_equal(slurp(path, buf, sizeof(buf)), 4);
	assert_memory_equal(buf, "one\n", 4);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);

	/* Replaced whole, shorter; nothing left beside it. */
	assert_int_equal(write_file_atomic(path, "2", 1, 0600, err,
	    sizeof(err)), 0);
	assert_int_equal(slurp(path, buf, sizeof(buf)), 1);
	assert_int_equal(buf[0], '2');
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(dir_entries(dir), 1);

	/* Empty data is an empty file. */
	assert_int_equal(write_file_atomic(path, "", 0, 0600, err,
	    sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 0);

	/* A symlink at path is replaced, never followed. */
	assert_int_equal(write_file_atomic(other, "keep", 4, 0600, err,
	    sizeof(err)), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(other, path), 0);
	assert_int_equal(write_file_atomic(path, "new", 3, 0600, err,
	    sizeof(err)), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(slurp(other, buf, sizeof(buf)), 4);
	assert_memory_equal(buf, "keep", 4);

	/* A folder at path: refused, named, old content and folder intact. */
	assert_int_equal(unlink(other), 0);
	assert_int_equal(mkdir(other, 0700), 0);
	err[0] = '\0';
	assert_int_equal(write_file_atomic(other, "x", 1, 0600, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, other));
	assert_non_null(strstr(err, "a folder, not a regular file"));
	assert_int_equal(dir_entries(dir), 2);	/* no temporary file left */
	assert_int_equal(rmdir(other), 0);

	/* A FIFO at path: refused, left a FIFO, nothing left beside it. */
	assert_int_equal(mkfifo(other, 0600), 0);
	err[0] = '\0';
	assert_int_equal(write_file_atomic(other, "x", 1, 0600, err,
	    sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: a FIFO, not a regular file",
	    other);
	assert_non_null(strstr(err, want));
	assert_int_equal(lstat(other, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(dir_entries(dir), 2);
	assert_int_equal(unlink(other), 0);

	/* A device node (root only: /dev/null's numbers, in dir): the same. */
	if (geteuid() == 0) {
		struct stat null;

		assert_int_equal(stat("/dev/null", &null), 0);
		assert_int_equal(mknod(other, S_IFCHR | 0600, null.st_rdev), 0);
		assert_int_equal(write_file_atomic(other, "x", 1, 0600, err,
		    sizeof(err)), -1);
		snprintf(want, sizeof(want), "%s: a character device, not a "
		    "regular file", other);
		assert_non_null(strstr(err, want));
		assert_int_equal(lstat(other, &st), 0);
		assert_true(S_ISCHR(st.st_mode));
		assert_true(st.st_rdev == null.st_rdev);
		assert_int_equal(dir_entries(dir), 2);
		assert_int_equal(unlink(other), 0);
	}

	/* A missing folder: the error names the path and the reason. */
	snprintf(other, sizeof(other), "%s/no/such", dir);
	assert_int_equal(write_file_atomic(other, "x", 1, 0600, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, other));
	assert_non_null(strstr(err, strerror(ENOENT)));

	/* A file at no folder at all (relative path) works too. */
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(write_file_atomic("rel", "r", 1, 0600, err,
	    sizeof(err)), 0);
	assert_int_equal(slurp("rel", buf, sizeof(buf)), 1);
	assert_int_equal(unlink("rel"), 0);
	assert_int_equal(chdir("/"), 0);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* Every missing level made with exactly the mode asked; errors named. */
static void
test_make_parent_dirs(void **state)
{
	char dir[] = "/tmp/ddup-parents-XXXXXX", path[256], sub[256];
	char err[512] = "", want[512];
	struct stat st;
	mode_t old;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a/b/c/page.html", dir);
	old = umask(077);
	assert_int_equal(make_parent_dirs(path, 0755, err, sizeof(err)), 0);
	umask(old);
	snprintf(sub, sizeof(sub), "%s/a", dir);
	assert_int_equal(stat(sub, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0755);
	snprintf(sub, sizeof(sub), "%s/a/b/c", dir);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	/* The file itself is not made; an existing folder is left alone. */
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(chmod(sub, 0700), 0);
	assert_int_equal(make_parent_dirs(path, 0755, err, sizeof(err)), 0);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	/* No folder part, or only the root's: nothing to do. */
	assert_int_equal(make_parent_dirs("rel", 0755, err, sizeof(err)), 0);
	assert_int_equal(make_parent_dirs("/rel", 0755, err, sizeof(err)), 0);

	/* A file where a folder must go: the error names the path and why. */
	snprintf(sub, sizeof(sub), "%s/file", dir);
	assert_int_equal(write_file_atomic(sub, "f", 1, 0600, err,
	    sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/file/x/page.html", dir);
	assert_int_equal(make_parent_dirs(path, 0755, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: cannot create folder %s/file/x: %s",
	    path, dir, strerror(ENOTDIR));
	assert_string_equal(err, want);

	assert_int_equal(unlink(sub), 0);
	snprintf(sub, sizeof(sub), "%s/a/b/c", dir);
	assert_int_equal(rmdir(sub), 0);
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	assert_int_equal(rmdir(sub), 0);
	snprintf(sub, sizeof(sub), "%s/a", dir);
	assert_int_equal(rmdir(sub), 0);
	assert_int_equal(rmdir(dir), 0);
}

/*
 * A write that fails half way (a full disk, here a file size limit, which
 * stops root too): the old file is untouched, no temporary file is left.
 */
static void
test_write_file_atomic_fails(void **state)
{
	char dir[] = "/tmp/ddup-atomic-XXXXXX", path[256], err[512];
	char big[8192], buf[8] = "";
	struct rlimit old, lim;
	void (*oldsig)(int);

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	assert_int_equal(write_file_atomic(path, "old", 3, 0600, err,
	    sizeof(err)), 0);
	memset(big, 'x', sizeof(big));
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 4096;
	oldsig = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	assert_int_equal(write_file_atomic(path, big, sizeof(big), 0600, err,
	    sizeof(err)), -1);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, oldsig);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "write"));
	assert_non_null(strstr(err, strerror(EFBIG)));
	assert_int_equal(slurp(path, buf, sizeof(buf)), 3);
	assert_memory_equal(buf, "old", 3);
	assert_int_equal(dir_entries(dir), 1);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* What r leaves of in (buffer of size bytes). */
static const char *
redacted(const struct redactor *r, const char *in, char *buf, size_t size)
{
	size_t n = strlen(in) < size ? strlen(in) : size - 1;

	memcpy(buf, in, n);
	buf[n] = '\0';
	redactor_apply(r, buf, size);
	return buf;
}

static void
test_redact(void **state)
{
	struct redactor *r;
	char buf[512], small[24];

	(void)state;
	r = redactor_create();
	redactor_add(r, "s3cr3t-TOKEN-0123456789abcdef");
	redactor_add(r, "abcdefgh1234");
	redactor_add(r, "1234wxyz5678");
	redactor_add(r, "abc");		/* below REDACT_MIN: not looked for */
	redactor_add(r, NULL);

	/* Whole, inside a longer word, several times. */
	assert_string_equal(redacted(r, "key s3cr3t-TOKEN-0123456789abcdef "
	    "refused", buf, sizeof(buf)), "key <secret> refused");
	assert_string_equal(redacted(r, "x=XXs3cr3t-TOKEN-0123456789abcdefYY,"
	    "s3cr3t-TOKEN-0123456789abcdef", buf, sizeof(buf)),
	    "x=XX<secret>YY,<secret>");
	/* Two secrets that overlap: nothing of either shows. */
	assert_string_equal(redacted(r, "[abcdefgh1234wxyz5678]", buf,
	    sizeof(buf)), "[<secret>]");
	assert_string_equal(redacted(r, "1234wxyz5678abcdefgh1234", buf,
	    sizeof(buf)), "<secret>");
	/* Cut short at the end of the text, or before a "..." that says so. */
	assert_string_equal(redacted(r, "403: header was s3cr3t-TOKEN-0123",
	    buf, sizeof(buf)), "403: header was <secret>");
	assert_string_equal(redacted(r, "bad token s3cr3t-TOK... (9000 bytes)",
	    buf, sizeof(buf)), "bad token <secret>... (9000 bytes)");
	assert_string_equal(redacted(r, "cut s3cr3t-TOK\xe2\x80\xa6", buf,
	    sizeof(buf)), "cut <secret>\xe2\x80\xa6");
	/* A beginning shorter than REDACT_PREFIX, or not at a cut, stays. */
	assert_string_equal(redacted(r, "ends s3cr3t-", buf, sizeof(buf)),
	    "ends s3cr3t-");
	assert_string_equal(redacted(r, "s3cr3t-TOKEN-01 in the middle", buf,
	    sizeof(buf)), "s3cr3t-TOKEN-01 in the middle");
	assert_string_equal(redacted(r, "abc abcd", buf, sizeof(buf)),
	    "abc abcd");
	/* Its encodings. */
	assert_string_equal(redacted(r, "czNjcjN0LVRPS0VOLTAxMjM0NTY3ODlhYmNkZWY=",
	    buf, sizeof(buf)), "<secret>=");
	redactor_add(r, "p@ss/word\"x");
	assert_string_equal(redacted(r, "u=p%40ss%2Fword%22x&v=p%40ss%2fword"
	    "%22x j=\"p@ss\\/word\\\"x\"", buf, sizeof(buf)),
	    "u=<secret>&v=<secret> j=\"<secret>\"");
	/* Longer than the buffer once replaced: cut to fit, NUL-terminated. */
	assert_string_equal(redacted(r, "abcdabcdefgh1234", small,
	    sizeof(small)), "abcd<secret>");
	redactor_add(r, "wxyz9");
	assert_string_equal(redacted(r, "wxyz9 wxyz9 wxyz9 wxyz9", small,
	    sizeof(small)), "<secret> <secret> <secr");
	redactor_free(r);

	/* A URL: itself, its password, user:password in base64, its path. */
	r = redactor_create();
	redactor_add_url(r, "https://bot:hunter22@hooks.example/T000/B000/XYZsecret?x=1");
	assert_string_equal(redacted(r, "auth Basic Ym90Omh1bnRlcjIy, pw "
	    "hunter22, path /T000/B000/XYZsecret?x=1 host hooks.example", buf,
	    sizeof(buf)), "auth Basic <secret>, pw <secret>, path <secret> "
	    "host hooks.example");
	redactor_free(r);

	/* A header value: the whole, each word after the scheme, Basic's parts. */
	r = redactor_create();
	redactor_add_header(r, "Bearer tok-123456789");
	redactor_add_header(r, "Basic YWxpY2U6b3BlbiBzZXNhbWU=");
	assert_string_equal(redacted(r, "Bearer tok-123456789 / tok-123456789 "
	    "/ alice:open sesame / open sesame / Bearer", buf, sizeof(buf)),
	    "<secret> / <secret> / <secret> / <secret> / Bearer");
	redactor_free(r);

	/* Nothing installed: redact() leaves the text. */
	snprintf(buf, sizeof(buf), "s3cr3t-TOKEN-0123456789abcdef");
	redact(buf, sizeof(buf));
	assert_string_equal(buf, "s3cr3t-TOKEN-0123456789abcdef");
	r = redactor_create();
	redactor_add(r, "s3cr3t-TOKEN-0123456789abcdef");
	redact_install(r);
	redact(buf, sizeof(buf));
	assert_string_equal(buf, "<secret>");
	redact_install(NULL);
}

static void
add_pw(void *arg, const char *pw)
{
	str_append(arg, 256, pw);
	str_append(arg, 256, "|");
}

static void
test_pguri_passwords(void **state)
{
	char got[256] = "";

	(void)state;
	pguri_passwords("postgresql://ddup:p%40ss@db/ddup?sslpassword=k3y&"
	    "password=other", add_pw, got);
	assert_string_equal(got, "p%40ss|p@ss|k3y|other|");
	got[0] = '\0';
	pguri_passwords("postgres://ddup@db/ddup", add_pw, got);
	assert_string_equal(got, "");
}

static void
test_text_cap(void **state)
{
	char buf[1024], big[1024];

	(void)state;
	snprintf(buf, sizeof(buf), "short");
	text_cap(buf, 40, 0);
	assert_string_equal(buf, "short");
	memset(big, 'a', 600);
	big[600] = '\0';
	snprintf(buf, sizeof(buf), "%s", big);
	text_cap(buf, OUTSIDE_MAX, 0);
	assert_int_equal(strlen(buf), OUTSIDE_MAX);
	assert_string_equal(buf + OUTSIDE_MAX - strlen("... (600 bytes)"),
	    "... (600 bytes)");
	/* The full length known from an earlier cut. */
	memcpy(buf, big, 59);
	buf[59] = '\0';
	text_cap(buf, 100, 5000000);
	assert_int_equal(strlen(buf), 59);
	assert_non_null(strstr(buf, "aaa... (5000000 bytes)"));
	/* Never inside a UTF-8 sequence. */
	memset(buf, 0, sizeof(buf));
	for (size_t i = 0; i < 100; i++)
		memcpy(buf + 2 * i, "\xc3\xa9", 2);
	text_cap(buf, 50, 0);
	assert_true(strlen(buf) <= 50);
	snprintf(big, sizeof(big), "%s", buf);
	text_printable(big);
	assert_string_equal(big, buf);
	assert_non_null(strstr(buf, "\xc3\xa9... (200 bytes)"));
}

/* A CNAME target as the providers read it back: canonical, or refused. */
static void
test_host_canon(void **st)
{
	static const struct {
		const char	*in, *out;	/* out NULL: refused */
	} t[] = {
		{ "WWW.Example.COM.", "www.example.com" },
		{ "a-b_c.example", "a-b_c.example" },
		{ "x", "x" },
		{ "", NULL },
		{ ".", NULL },
		{ "..", NULL },
		{ "a..b", NULL },
		{ "a..", NULL },
		{ ".a", NULL },
		{ "a.b..", NULL },
		{ "a b.example", NULL },
		{ "\xc3\xa9.example", NULL },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.x",
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.x" },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.x",
		    NULL },
	};
	char	 buf[300];
	size_t	 i;

	(void)st;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", t[i].in);
		if (t[i].out == NULL) {
			assert_int_equal(rrset_host_canon(buf), 0);
			continue;
		}
		assert_int_equal(rrset_host_canon(buf), 1);
		assert_string_equal(buf, t[i].out);
	}
	/* 253 bytes in all is the most a name holds. */
	memset(buf, 'a', 253);
	buf[253] = '\0';
	for (i = 63; i < 253; i += 64)
		buf[i] = '.';
	assert_int_equal(rrset_host_canon(buf), 1);
	memset(buf, 'a', 254);
	buf[254] = '\0';
	for (i = 63; i < 254; i += 64)
		buf[i] = '.';
	assert_int_equal(rrset_host_canon(buf), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_long),
		cmocka_unit_test(test_bool),
		cmocka_unit_test(test_expect),
		cmocka_unit_test(test_addr),
		cmocka_unit_test(test_addr_ipv4_text),
		cmocka_unit_test(test_url_plain),
		cmocka_unit_test(test_addr_cmp),
		cmocka_unit_test(test_addrset),
		cmocka_unit_test(test_addrset_many),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_printable),
		cmocka_unit_test(test_redact),
		cmocka_unit_test(test_pguri_passwords),
		cmocka_unit_test(test_text_cap),
		cmocka_unit_test(test_width),
		cmocka_unit_test(test_alloc),
		cmocka_unit_test(test_rrset),
		cmocka_unit_test(test_rrset_many),
		cmocka_unit_test(test_rrset_json_cname),
		cmocka_unit_test(test_host_canon),
		cmocka_unit_test(test_write_file_atomic),
		cmocka_unit_test(test_write_file_atomic_fails),
		cmocka_unit_test(test_make_parent_dirs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
