/*
 * providers/webhook_json.c: the domain filter matched as external-dns
 * matches it, the endpoints of a records answer (the name's only), and
 * the changes of a POST, type by type.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "providers/webhook.h"
#include "rrset.h"
#include "util.h"

#define NAME	"app.example.test"

static int
match(const char *json, const char *fqdn, char *err, size_t errlen)
{
	return wh_filter_match(json, strlen(json), fqdn, err, errlen);
}

static void
test_filter(void **state)
{
	char err[256];

	(void)state;
	/* A domain takes itself and the names under it, whatever the case. */
	assert_int_equal(match("{\"include\":[\"example.test\"]}", NAME, err,
	    sizeof(err)), 1);
	assert_int_equal(match("{\"include\":[\"Example.Test.\"]}",
	    "example.test", err, sizeof(err)), 1);
	assert_int_equal(match("{\"include\":[\"app.example.test\"]}",
	    "APP.example.test.", err, sizeof(err)), 1);
	/* Not a suffix of a label. */
	assert_int_equal(match("{\"include\":[\"ple.test\"]}", NAME, err,
	    sizeof(err)), 0);
	assert_non_null(strstr(err, "outside the domain filter"));
	/* A leading dot: the names under it only. */
	assert_int_equal(match("{\"include\":[\".example.test\"]}", NAME, err,
	    sizeof(err)), 1);
	assert_int_equal(match("{\"include\":[\".example.test\"]}",
	    "example.test", err, sizeof(err)), 0);
	/* None, empty, null: every name; the document's "filters" too. */
	assert_int_equal(match("{}", NAME, err, sizeof(err)), 1);
	assert_int_equal(match("{\"include\":[],\"exclude\":null}", NAME, err,
	    sizeof(err)), 1);
	assert_int_equal(match("{\"filters\":[\"other.test\"]}", NAME, err,
	    sizeof(err)), 0);
	assert_non_null(strstr(err, "filters"));
	assert_int_equal(match("{\"filters\":[\"other.test\",\"example.test\"]}",
	    NAME, err, sizeof(err)), 1);
	/* An exclusion wins. */
	assert_int_equal(match("{\"include\":[\"example.test\"],\"exclude\":"
	    "[\"app.example.test\"]}", NAME, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "excluded"));
	assert_int_equal(match("{\"exclude\":[\"www.example.test\"]}", NAME,
	    err, sizeof(err)), 1);
	/* Junk, and the regular expressions ddup does not evaluate. */
	assert_int_equal(match("{\"regexInclude\":\".*\"}", NAME, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "regular expression"));
	assert_int_equal(match("{\"regexInclude\":\"\"}", NAME, err,
	    sizeof(err)), 1);
	assert_int_equal(match("[\"example.test\"]", NAME, err, sizeof(err)),
	    -1);
	assert_int_equal(match("{\"include\":\"example.test\"}", NAME, err,
	    sizeof(err)), -1);
	assert_int_equal(match("{\"include\":[1]}", NAME, err, sizeof(err)),
	    -1);
	assert_int_equal(match("{\"include\":[\"a\"],\"include\":[\"b\"]}",
	    NAME, err, sizeof(err)), -1);
	assert_int_equal(match("", NAME, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not JSON"));
}

static void
sets_init(struct rrset *s)
{
	memset(s, 0, 3 * sizeof(*s));
	s[0].type = RR_A;
	s[1].type = RR_AAAA;
	s[2].type = RR_CNAME;
}

static void
sets_clear(struct rrset *s, json_t **cur)
{
	size_t k;

	for (k = 0; k < 3; k++)
		rrset_clear(&s[k]);
	wh_cur_free(cur, 3);
}

static int
parse(const char *json, struct rrset *s, json_t **cur, char *err,
    size_t errlen)
{
	return wh_records_parse(json, strlen(json), NAME, s, cur, 3, err,
	    errlen);
}

static void
test_records(void **state)
{
	static const char answer[] = "[{\"dnsName\":\"www.example.test\","
	    "\"recordType\":\"A\",\"targets\":[\"198.51.100.1\"]},"
	    "{\"dnsName\":\"app.example.test\",\"recordType\":\"TXT\","
	    "\"targets\":[\"hello\"]},"
	    "{\"dnsName\":\"APP.example.test.\",\"recordType\":\"A\","
	    "\"recordTTL\":60,\"targets\":[\"192.0.2.2\",\"192.0.2.1\","
	    "\"192.0.2.2\"],\"labels\":{\"owner\":\"x\"}},"
	    "{\"dnsName\":\"app.example.test\",\"recordType\":\"AAAA\","
	    "\"targets\":[\"2001:DB8::1\"]}]";
	struct rrset s[3];
	json_t *cur[3];
	char err[256], *j;

	(void)state;
	sets_init(s);
	assert_int_equal(parse(answer, s, cur, err, sizeof(err)), 0);
	j = rrset_join(&s[0]);
	assert_string_equal(j, "192.0.2.1 192.0.2.2");
	free(j);
	assert_int_equal(s[0].ttl, 60);
	/* No TTL: the server's default, 0. */
	assert_int_equal(s[1].ttl, 0);
	assert_string_equal(s[1].addrs.v[0].s, "2001:db8::1");
	assert_null(s[2].target);
	assert_null(cur[2]);
	assert_string_equal(json_string_value(json_object_get(cur[0],
	    "dnsName")), "APP.example.test.");
	sets_clear(s, cur);

	/* Go's empty list, and a CNAME. */
	assert_int_equal(parse("null", s, cur, err, sizeof(err)), 0);
	assert_null(cur[0]);
	assert_int_equal(parse("[{\"dnsName\":\"app.example.test\","
	    "\"recordType\":\"CNAME\",\"recordTTL\":300,\"targets\":"
	    "[\"Backup.Example.NET.\"]}]", s, cur, err, sizeof(err)), 0);
	assert_string_equal(s[2].target, "backup.example.net");
	assert_non_null(cur[2]);
	sets_clear(s, cur);
}

static void
test_records_junk(void **state)
{
	static const char *const junk[] = {
		"{}",
		"[1]",
		"[{\"dnsName\":\"x\"}]",
		"[{\"dnsName\":\"app.example.test\",\"recordType\":\"A\","
		    "\"targets\":[\"::1\"]}]",
		"[{\"dnsName\":\"app.example.test\",\"recordType\":\"A\","
		    "\"targets\":\"192.0.2.1\"}]",
		"[{\"dnsName\":\"app.example.test\",\"recordType\":\"A\","
		    "\"recordTTL\":\"60\"}]",
		"[{\"dnsName\":\"app.example.test\",\"recordType\":\"A\","
		    "\"recordTTL\":2147483648}]",
		"[{\"dnsName\":\"app.example.test\",\"recordType\":\"CNAME\","
		    "\"targets\":[\"a.test\",\"b.test\"]}]",
		"[{\"dnsName\":\"app.example.test\",\"recordType\":\"CNAME\","
		    "\"targets\":[\"not a host\"]}]",
		"[{\"dnsName\":\"app.example.test\",\"recordType\":\"A\"},"
		    "{\"dnsName\":\"app.example.test\",\"recordType\":\"A\"}]",
	};
	struct rrset s[3];
	json_t *cur[3];
	char err[256];
	size_t i;

	(void)state;
	sets_init(s);
	for (i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		err[0] = '\0';
		if (parse(junk[i], s, cur, err, sizeof(err)) != -1)
			fail_msg("taken: %s", junk[i]);
		assert_true(err[0] != '\0');
		assert_null(cur[0]);
		assert_null(s[0].addrs.v);
	}
	/* Junk of a type or a name ddup does not manage is passed over. */
	assert_int_equal(parse("[{\"dnsName\":\"app.example.test\","
	    "\"recordType\":\"MX\",\"targets\":[1]},{\"dnsName\":\"www.example."
	    "test\",\"recordType\":\"A\",\"targets\":[\"::1\"]}]", s, cur, err,
	    sizeof(err)), 0);
	sets_clear(s, cur);
}

static void
want_a(struct rrset *s, long ttl, const char *a1)
{
	sets_init(s);
	s[0].ttl = ttl;
	if (a1 != NULL)
		addrset_add(&s[0].addrs, a1);
}

static void
test_changes(void **state)
{
	struct rrset have[3], want[3];
	json_t *cur[3];
	char err[256], *body;

	(void)state;
	sets_init(have);
	/* Nothing listed: a create of the name as ddup writes it. */
	assert_int_equal(parse("[]", have, cur, err, sizeof(err)), 0);
	want_a(want, 60, "192.0.2.1");
	body = wh_changes("App.Example.Test.", cur, have, want, 3);
	assert_string_equal(body, "{\"create\":[{\"dnsName\":\"app.example."
	    "test\",\"recordType\":\"A\",\"recordTTL\":60,\"targets\":"
	    "[\"192.0.2.1\"]}]}");
	free(body);
	sets_clear(have, cur);

	/* The same set: nothing; another TTL: an update keeping labels. */
	assert_int_equal(parse("[{\"dnsName\":\"app.example.test\","
	    "\"recordType\":\"A\",\"recordTTL\":60,\"targets\":[\"192.0.2.1\"],"
	    "\"labels\":{\"o\":\"x\"}}]", have, cur, err, sizeof(err)), 0);
	assert_null(wh_changes(NAME, cur, have, want, 3));
	want[0].ttl = 300;
	body = wh_changes(NAME, cur, have, want, 3);
	assert_string_equal(body, "{\"updateOld\":[{\"dnsName\":\"app.example."
	    "test\",\"recordType\":\"A\",\"recordTTL\":60,\"targets\":"
	    "[\"192.0.2.1\"],\"labels\":{\"o\":\"x\"}}],\"updateNew\":"
	    "[{\"dnsName\":\"app.example.test\",\"recordType\":\"A\","
	    "\"recordTTL\":300,\"targets\":[\"192.0.2.1\"],\"labels\":"
	    "{\"o\":\"x\"}}]}");
	free(body);

	/* To a CNAME: the A deleted and the CNAME created in one body. */
	rrset_clear(&want[0]);
	want[2].target = xstrdup("backup.example.net");
	want[2].ttl = 60;
	body = wh_changes(NAME, cur, have, want, 3);
	assert_string_equal(body, "{\"create\":[{\"dnsName\":\"app.example."
	    "test\",\"recordType\":\"CNAME\",\"recordTTL\":60,\"targets\":"
	    "[\"backup.example.net\"]}],\"delete\":[{\"dnsName\":\"app.example."
	    "test\",\"recordType\":\"A\",\"recordTTL\":60,\"targets\":"
	    "[\"192.0.2.1\"],\"labels\":{\"o\":\"x\"}}]}");
	free(body);
	sets_clear(want, cur);
	sets_clear(have, cur);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_records_junk),
		cmocka_unit_test(test_changes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
