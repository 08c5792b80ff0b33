/*
 * providers/zonefile_text.c: the block of records a zonefile provider
 * writes and reads back, a name's records changed among others', the
 * template's fields and the serial rule.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "providers/zonefile.h"
#include "util.h"

#define BLOCK(serial, recs) \
	ZF_BEGIN " (written by ddup-check: edits are lost)\n" \
	ZF_SERIAL serial "\n" recs ZF_END "\n"

static void
parse_ok(const char *text, struct zf_file *f)
{
	char err[256] = "";

	if (zf_parse(text, strlen(text), f, err, sizeof(err)) != 0)
		fail_msg("parse failed: %s", err);
}

static void
set_a(struct rrset *s, long ttl, const char *a1, const char *a2)
{
	memset(s, 0, sizeof(*s));
	s->type = RR_A;
	s->ttl = ttl;
	if (a1 != NULL)
		addrset_add(&s->addrs, a1);
	if (a2 != NULL)
		addrset_add(&s->addrs, a2);
}

static void
test_parse_and_sets(void **state)
{
	static const char text[] = "$TTL 60\n@ IN SOA x. y. 7 1 1 1 1\n"
	    BLOCK("1764745000",
	    "www.example.test. 60 IN A 192.0.2.2\n"
	    "www.example.test.\t30 IN A 192.0.2.1\n"
	    "WWW.Example.Test.  60  IN AAAA 2001:DB8:0::1\n"
	    "other.example.test. 60 IN A 198.51.100.1\n"
	    "web.example.test. 60 IN CNAME Target.Example.Net.\n")
	    "; after the block: the template's\n";
	struct zf_file f;
	struct rrset s[3];
	char err[256];

	(void)state;
	parse_ok(text, &f);
	assert_true(f.has_block);
	assert_true(f.has_serial);
	assert_int_equal(f.serial, 1764745000ULL);
	assert_int_equal(f.n, 5);
	memset(s, 0, sizeof(s));
	s[0].type = RR_A;
	s[1].type = RR_AAAA;
	s[2].type = RR_CNAME;
	assert_int_equal(zf_sets(&f, "www.example.test", s, 3, err,
	    sizeof(err)), 0);
	assert_int_equal(s[0].addrs.n, 2);
	assert_string_equal(s[0].addrs.v[0].s, "192.0.2.1");
	assert_string_equal(s[0].addrs.v[1].s, "192.0.2.2");
	assert_int_equal(s[0].ttl, 30);		/* the lowest */
	assert_int_equal(s[1].addrs.n, 1);
	assert_string_equal(s[1].addrs.v[0].s, "2001:db8::1");
	assert_null(s[2].target);
	assert_int_equal(zf_sets(&f, "web.example.test", s, 3, err,
	    sizeof(err)), 0);
	assert_true(rrset_empty(&s[0]));
	assert_string_equal(s[2].target, "target.example.net");
	rrset_clear(&s[0]);
	rrset_clear(&s[1]);
	rrset_clear(&s[2]);
	zf_free(&f);
}

static void
test_no_block(void **state)
{
	struct zf_file f;

	(void)state;
	parse_ok("", &f);
	assert_false(f.has_block);
	assert_int_equal(f.n, 0);
	/* Text outside a block is not looked at, whatever it is. */
	parse_ok("www 60 IN A 192.0.2.1\n\x01junk", &f);
	assert_false(f.has_block);
	assert_int_equal(f.n, 0);
	zf_free(&f);
}

static void
test_parse_rejects(void **state)
{
	static const char *const bad[] = {
		BLOCK("1", "www.example.test 60 IN A 192.0.2.1\n"),
		BLOCK("1", "www.example.test. 60 IN A 2001:db8::1\n"),
		BLOCK("1", "www.example.test. 60 IN MX 10 mail.\n"),
		BLOCK("1", "www.example.test. 60 CH A 192.0.2.1\n"),
		BLOCK("1", "www.example.test. -1 IN A 192.0.2.1\n"),
		BLOCK("1", "www.example.test. 2147483648 IN A 192.0.2.1\n"),
		BLOCK("1", "www.example.test. 60 IN A 192.0.2.1 x\n"),
		BLOCK("1", "www.example.test. 60 IN CNAME relative\n"),
		BLOCK("1", "a..test. 60 IN A 192.0.2.1\n"),
		BLOCK("1", "\n"),
		BLOCK("4294967296", ""),
		BLOCK("1x", ""),
		ZF_BEGIN "\n" ZF_SERIAL "1\n" ZF_SERIAL "2\n" ZF_END "\n",
		ZF_BEGIN "\nwww.example.test. 60 IN A 192.0.2.1\n",
		BLOCK("1", "") BLOCK("2", ""),
	};
	struct zf_file f;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (zf_parse(bad[i], strlen(bad[i]), &f, err, sizeof(err)) !=
		    -1)
			fail_msg("accepted: %s", bad[i]);
		assert_int_equal(f.n, 0);
		assert_true(err[0] != '\0');
	}
	/* A NUL in the block is junk, and shown as '?'. */
	assert_int_equal(zf_parse(BLOCK("1", "a.test. 60 IN A 192.0.2.1\0\n"),
	    sizeof(BLOCK("1", "a.test. 60 IN A 192.0.2.1\0\n")) - 1, &f, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "192.0.2.1?"));
}

static void
test_replace_keeps_other_names(void **state)
{
	struct zf_file f, g;
	struct rrset s;
	char *block, err[256];
	size_t len;

	(void)state;
	parse_ok(BLOCK("5", "b.example.test. 60 IN A 198.51.100.1\n"
	    "a.example.test. 60 IN A 192.0.2.1\n"
	    "a.example.test. 60 IN AAAA 2001:db8::1\n"), &f);
	set_a(&s, 120, "192.0.2.9", "192.0.2.8");
	zf_replace(&f, "A.example.test", &s, 1);
	block = zf_block(&f, 6, &len);
	assert_int_equal(strlen(block), len);
	/* Sorted by name, type, data; AAAA of a stays (type not given). */
	assert_string_equal(block, BLOCK("6",
	    "a.example.test. 120 IN A 192.0.2.8\n"
	    "a.example.test. 120 IN A 192.0.2.9\n"
	    "a.example.test. 60 IN AAAA 2001:db8::1\n"
	    "b.example.test. 60 IN A 198.51.100.1\n"));
	/* What it writes, it reads back. */
	parse_ok(block, &g);
	assert_int_equal(g.serial, 6);
	assert_int_equal(g.n, 4);
	rrset_clear(&s);
	assert_int_equal(zf_sets(&g, "a.example.test", &s, 1, err,
	    sizeof(err)), 0);
	assert_int_equal(s.addrs.n, 2);
	assert_int_equal(s.ttl, 120);
	rrset_clear(&s);
	free(block);
	/* An empty set deletes the name's records of the type. */
	s.type = RR_A;
	zf_replace(&g, "a.example.test", &s, 1);
	block = zf_block(&g, 7, &len);
	assert_null(strstr(block, "a.example.test. 120 IN A"));
	assert_non_null(strstr(block, "b.example.test. 60 IN A"));
	free(block);
	zf_free(&f);
	zf_free(&g);
}

static void
test_cname_and_duplicates(void **state)
{
	struct zf_file f;
	struct rrset s[2];
	char *block;
	size_t len;

	(void)state;
	parse_ok(BLOCK("1", "w.example.test. 60 IN A 192.0.2.1\n"
	    "x.example.test. 60 IN A 192.0.2.1\n"
	    "x.example.test. 60 IN A 192.0.2.1\n"), &f);
	memset(s, 0, sizeof(s));
	s[0].type = RR_A;
	s[1].type = RR_CNAME;
	s[1].ttl = 60;
	s[1].target = xstrdup("target.example.net");
	zf_replace(&f, "w.example.test", s, 2);
	block = zf_block(&f, 2, &len);
	assert_string_equal(block, BLOCK("2",
	    "w.example.test. 60 IN CNAME target.example.net.\n"
	    "x.example.test. 60 IN A 192.0.2.1\n"));
	free(block);
	rrset_clear(&s[1]);
	zf_free(&f);
}

static void
test_two_cnames_rejected(void **state)
{
	struct zf_file f;
	struct rrset s;
	char err[256];

	(void)state;
	parse_ok(BLOCK("1", "w.example.test. 60 IN CNAME a.example.net.\n"
	    "w.example.test. 60 IN CNAME b.example.net.\n"), &f);
	memset(&s, 0, sizeof(s));
	s.type = RR_CNAME;
	assert_int_equal(zf_sets(&f, "w.example.test", &s, 1, err,
	    sizeof(err)), -1);
	assert_null(s.target);
	assert_non_null(strstr(err, "more than one CNAME"));
	zf_free(&f);
}

static void
test_render(void **state)
{
	static const char tmpl[] = "@ SOA x. y. {serial} 1 1 1 1 ; {serial}\n"
	    "{records}; end {other}\n";
	char *out, err[128];
	size_t len;

	(void)state;
	out = zf_render(NULL, 0, "B\n", 2, 9, &len, err, sizeof(err));
	assert_string_equal(out, "B\n");
	free(out);
	out = zf_render(tmpl, strlen(tmpl), "B\n", 2, 4000000000ULL, &len,
	    err, sizeof(err));
	assert_string_equal(out, "@ SOA x. y. 4000000000 1 1 1 1 ; "
	    "4000000000\nB\n; end {other}\n");
	assert_int_equal(len, strlen(out));
	free(out);
	assert_null(zf_render("{serial}\n", 9, "B\n", 2, 1, &len, err,
	    sizeof(err)));
	assert_non_null(strstr(err, "0 times"));
	assert_null(zf_render("{records}\n{records}\n", 20, "B\n", 2, 1,
	    &len, err, sizeof(err)));
	assert_non_null(strstr(err, "2 times"));
	assert_null(zf_render("x {records}\n", 12, "B\n", 2, 1, &len, err,
	    sizeof(err)));
	assert_non_null(strstr(err, "begin a line"));
}

static void
test_serial_rule(void **state)
{
	(void)state;
	/* The larger of last + 1 and the Unix time. */
	assert_int_equal(zf_serial_next(0, 1764745000), 1764745000ULL);
	assert_int_equal(zf_serial_next(1764745000, 1764745000),
	    1764745001ULL);
	assert_int_equal(zf_serial_next(1764745005, 1764745000),
	    1764745006ULL);
	assert_int_equal(zf_serial_next(2024010101, 1764745000),
	    2024010102ULL);
	assert_int_equal(zf_serial_next(5, -1), 6);
	/* Past 2^32 - 1 it wraps (RFC 1982). */
	assert_int_equal(zf_serial_next(4294967295ULL, 1764745000), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_and_sets),
		cmocka_unit_test(test_no_block),
		cmocka_unit_test(test_parse_rejects),
		cmocka_unit_test(test_replace_keeps_other_names),
		cmocka_unit_test(test_cname_and_duplicates),
		cmocka_unit_test(test_two_cnames_rejected),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_serial_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
