/*
 * The keys of the checks beyond the first HTTP ones (ddup.ini(5),
 * TOP-LEVEL KEYS, DOMAINS, ENDPOINTS): maxExec, header, userAgent,
 * maxLatency, recheck, certWarn, command, send and expect, good and bad
 * values with the exact messages; the decoder of `send`; what the
 * digest and the redactor make of them.  Parsed from memory
 * (config_parse()), the file named "F".
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "config.h"
#include "redact.h"
#include "util.h"

/* Lines 1-3, 4-5 and 6-8. */
#define PROV	"[provider dns]\ntype = exec\ncommand = /bin/true\n"
#define DOM	"[domain app.example.test]\nprovider = dns\n"
#define EP	"[endpoint a]\nurl = http://127.0.0.1:8080/\nip = 192.0.2.1\n"
/* An endpoint's lines 6-7 around key lines from 8 on. */
#define EPH	"[endpoint a]\nip = 192.0.2.1\n"

/* The configuration of text, and its messages in *errs (malloc'd). */
static struct config *
parse(const char *text, int warnings, char **errs)
{
	struct config *c;
	size_t len = 0;
	FILE *fp;

	*errs = NULL;
	fp = open_memstream(errs, &len);
	assert_non_null(fp);
	c = config_parse("F", text, strlen(text), fp, warnings);
	fclose(fp);
	return c;
}

/* text must parse without a word; the config. */
static struct config *
good(const char *text)
{
	struct config *c;
	char *errs;

	c = parse(text, 1, &errs);
	if (c == NULL || strcmp(errs, "") != 0)
		fail_msg("%s\ngave \"%s\"", text, errs);
	free(errs);
	return c;
}

static void
test_defaults(void **state)
{
	const struct domain_policy *p;
	struct config *c;

	(void)state;
	c = good(PROV DOM EP);
	assert_int_equal(c->max_exec, 16);
	p = &c->domains[0].pol;
	assert_int_equal(p->nheaders, 0);
	assert_null(p->user_agent);
	assert_int_equal(p->max_latency_ms, 0);
	assert_int_equal(p->recheck_ms, 0);
	assert_int_equal(p->cert_warn_ms, 14LL * 86400 * 1000);
	assert_null(c->domains[0].eps[0].command);
	assert_null(c->domains[0].eps[0].send);
	assert_null(c->domains[0].eps[0].expect_text);
	config_free(c);
}

static void
test_domain_keys(void **state)
{
	const struct domain_policy *p;
	struct config *c;

	(void)state;
	setenv("DDUP_TEST_HDR", "X-Whole: from env", 1);
	setenv("DDUP_TEST_VAL", "Bearer s3cret", 1);
	c = good("maxExec = 3\nheader = X-Top: 1\nuserAgent = probe/2 (ops)\n"
	    "recheck = 1s\ncertWarn = 0\nmaxLatency = 2s\n" PROV
	    "[domain a.example.test]\nprovider = dns\n" EP
	    "[domain b.example.test]\nprovider = dns\n"
	    "header = !env DDUP_TEST_HDR\n"
	    "HEADER = Authorization:   !env DDUP_TEST_VAL\n"
	    "recheck = 0s\ncertWarn = 30d\nmaxLatency = 500ms\n" EP);
	assert_int_equal(c->max_exec, 3);
	/* The top's, inherited. */
	p = &c->domains[0].pol;
	assert_int_equal(p->nheaders, 1);
	assert_string_equal(p->headers[0], "X-Top: 1");
	assert_string_equal(p->user_agent, "probe/2 (ops)");
	assert_int_equal(p->recheck_ms, 1000);
	assert_int_equal(p->cert_warn_ms, 0);
	assert_int_equal(p->max_latency_ms, 2000);
	/* A domain's headers replace the top's; the rest its own. */
	p = &c->domains[1].pol;
	assert_int_equal(p->nheaders, 2);
	assert_string_equal(p->headers[0], "X-Whole: from env");
	assert_string_equal(p->headers[1], "Authorization: Bearer s3cret");
	assert_string_equal(p->user_agent, "probe/2 (ops)");
	assert_int_equal(p->recheck_ms, 0);
	assert_int_equal(p->cert_warn_ms, 30LL * 86400 * 1000);
	assert_int_equal(p->max_latency_ms, 500);
	config_free(c);
}

static void
test_command(void **state)
{
	const struct endpoint_cfg *e;
	struct config *c;

	(void)state;
	c = good(PROV DOM "[endpoint]\ncommand = /usr/lib/nagios/plugins/"
	    "check_tcp -H {ip} -p 25 --sni {host} {name}/{domain} {}\n"
	    "ip = 192.0.2.1\n");
	e = &c->domains[0].eps[0];
	assert_null(e->url);
	assert_string_equal(e->command, "/usr/lib/nagios/plugins/check_tcp -H "
	    "{ip} -p 25 --sni {host} {name}/{domain} {}");
	/* No section name and no url: the command names it. */
	assert_string_equal(e->name, e->command);
	config_free(c);
}

/* send and expect need a type that takes a stream (tcp://, tls://). */
static void
test_stream_keys(void **state)
{
	const struct endpoint_cfg *e;
	struct config *c;
	char *errs;

	(void)state;
	if ((check_takes("tcp://127.0.0.1:25") & CHECK_TAKES_STREAM) == 0)
		skip();
	c = good(PROV DOM "[endpoint smtp]\nurl = tcp://127.0.0.1:25\n"
	    "send = EHLO x\\r\\n\\x00\\\\end\nexpect = 250 \nip = 192.0.2.1\n");
	e = &c->domains[0].eps[0];
	assert_int_equal(e->send_len, 13);
	assert_memory_equal(e->send, "EHLO x\r\n\0\\end", 13);
	assert_string_equal(e->expect_text, "250");	/* inih drops trailing blanks */
	config_free(c);
	/* A bad escape names its line. */
	c = parse(PROV DOM EPH "url = tls://127.0.0.1:443\nsend = a\\qb\n", 0,
	    &errs);
	assert_null(c);
	assert_string_equal(errs, "F:9: send: bad escape at byte 2: only \\r, "
	    "\\n, \\t, \\\\ and \\xHH (write \\\\ for a backslash)\n");
	free(errs);
}

static const struct {
	const char	*text;
	const char	*errs;
} bad[] = {
	{ "maxExec = 0\n" PROV DOM EP,
	  "F:1: 'maxExec': expected an integer from 1 to 2147483647, not "
	  "'0'\n" },
	{ "maxExec = many\n" PROV DOM EP,
	  "F:1: 'maxExec': expected an integer from 1 to 2147483647, not "
	  "'many'\n" },
	{ PROV DOM "maxLatency = 0\n" EP,
	  "F:6: 'maxLatency': expected a duration above zero (such as 500ms, "
	  "30s, 5m, 1h or 7d), not '0'\n" },
	{ PROV DOM "recheck = soon\n" EP,
	  "F:6: 'recheck': expected a duration above zero (such as 500ms, "
	  "30s, 5m, 1h or 7d), not 'soon'\n" },
	{ PROV DOM "certWarn = -1d\n" EP,
	  "F:6: 'certWarn': expected a duration above zero (such as 500ms, "
	  "30s, 5m, 1h or 7d), not '-1d'\n" },
	{ PROV DOM "userAgent = a\x01" "b\n" EP,
	  "F:6: 'userAgent' must be one line of printable text (a control "
	  "character or invalid UTF-8)\n" },
	{ PROV DOM "header = NoColon\n" EP,
	  "F:6: 'header' must be 'Name: value' with a header name of letters, "
	  "digits and !#$%&'*+-.^_`|~\n" },
	{ PROV DOM "header = Bad Name: x\n" EP,
	  "F:6: 'header' must be 'Name: value' with a header name of letters, "
	  "digits and !#$%&'*+-.^_`|~\n" },
	{ PROV DOM "header = X-A:\n" EP,
	  "F:6: 'header' has no value\n" },
	{ PROV DOM "header = X-A: a\x01" "b\n" EP,
	  "F:6: header X-A: its value holds a control character\n" },
	{ PROV DOM "header =\n" EP, "F:6: 'header' has no value\n" },
	{ PROV DOM "header = !env DDUP_TEST_TWO_LINES\n" EP,
	  "F:6: 'header': the secret is not one line (it holds a line break "
	  "or a control character)\n" },
	{ PROV DOM "header = !env DDUP_TEST_NO_FORM\n" EP,
	  "F:6: 'header': the secret is not of the form 'Name: value' (a "
	  "header name of letters, digits and !#$%&'*+-.^_`|~, then a "
	  "colon)\n" },
	{ PROV DOM "header = !env DDUP_TEST_NO_VALUE\n" EP,
	  "F:6: 'header': the secret's value is empty\n" },
	{ PROV DOM "header = !env DDUP_TEST_UNSET_VARIABLE\n" EP,
	  "F:6: 'header': environment variable DDUP_TEST_UNSET_VARIABLE is "
	  "not set\n" },
	{ PROV DOM "[endpoint a]\nip = 192.0.2.1\n",
	  "F:6: [endpoint] has no 'url' (or 'command')\n" },
	{ PROV DOM EPH "url = http://127.0.0.1/\ncommand = /bin/true\n",
	  "F:6: [endpoint] has both 'url' and 'command' (one of them says "
	  "what to check)\n" },
	{ PROV DOM EPH "command = check_tcp -H {ip}\n",
	  "F:8: command \"check_tcp -H {ip}\" is not an absolute path\n" },
	{ PROV DOM EPH "command = /bin/check -H {IP}\n",
	  "F:8: command: unknown placeholder {IP} (known: {ip}, {host}, "
	  "{name}, {domain})\n" },
	{ PROV DOM EPH "command = /bin/check {ip} {hostname}\n",
	  "F:8: command: unknown placeholder {hostname} (known: {ip}, {host}, "
	  "{name}, {domain})\n" },
	{ PROV DOM EPH "command = /bin/x\x01\n",
	  "F:8: command: a control character or invalid UTF-8\n" },
	{ PROV DOM EPH "command = /bin/x 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 "
	  "16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 "
	  "38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 "
	  "60 61 62 63 64\n",
	  "F:8: command has 65 words, more than 64\n" },
	{ PROV DOM EPH "url = http://127.0.0.1/\nsend = x\n",
	  "F:9: 'send' is for tcp:// and tls:// checks only\n" },
	{ PROV DOM EPH "url = http://127.0.0.1/\nexpect = x\n",
	  "F:9: 'expect' is for tcp:// and tls:// checks only (HTTP checks "
	  "take expectBody)\n" },
	{ PROV DOM EPH "command = /bin/true\nsend = x\nexpect = y\n",
	  "F:9: 'send' is for tcp:// and tls:// checks only\n"
	  "F:10: 'expect' is for tcp:// and tls:// checks only (HTTP checks "
	  "take expectBody)\n" },
	{ PROV DOM EPH "url = gopher://127.0.0.1/\n",
	  "F:8: bad url 'gopher://127.0.0.1/': not a url a check takes "
	  "(http://, https://, tcp://, tls://)\n" },
	/* A bad url: send is not judged by it. */
	{ PROV DOM EPH "url = http://\nsend = x\n",
	  "F:8: bad url 'http://': No host part in the URL\n" },
	/* Each error of one file, in one go. */
	{ "maxExec = 0\n" PROV DOM "header = x\nrecheck = x\n" EPH
	  "command = /x {y}\n",
	  "F:1: 'maxExec': expected an integer from 1 to 2147483647, not '0'\n"
	  "F:7: 'header' must be 'Name: value' with a header name of letters, "
	  "digits and !#$%&'*+-.^_`|~\n"
	  "F:8: 'recheck': expected a duration above zero (such as 500ms, "
	  "30s, 5m, 1h or 7d), not 'x'\n"
	  "F:11: command: unknown placeholder {y} (known: {ip}, {host}, "
	  "{name}, {domain})\n" },
};

static void
test_bad(void **state)
{
	struct config *c;
	char *errs;
	size_t i;

	(void)state;
	setenv("DDUP_TEST_TWO_LINES", "X-A: sekrit1\nX-B: two", 1);
	setenv("DDUP_TEST_NO_FORM", "just a token", 1);
	setenv("DDUP_TEST_NO_VALUE", "X-A:  ", 1);
	unsetenv("DDUP_TEST_UNSET_VARIABLE");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = parse(bad[i].text, 0, &errs);
		if (c != NULL || strcmp(errs, bad[i].errs) != 0)
			fail_msg("case %zu: got %s\"%s\"\nwanted \"%s\"", i,
			    c != NULL ? "a config and " : "", errs,
			    bad[i].errs);
		/* A header's secret is never in a message. */
		assert_null(strstr(errs, "sekrit"));
		assert_null(strstr(errs, "just a token"));
		free(errs);
	}
}

/* -n's warning when a run with recheck can outlast interval. */
static void
test_recheck_warning(void **state)
{
	struct config *c;
	char *errs;

	(void)state;
	c = parse("interval = 10s\n" PROV DOM "recheck = 2s\nattempts = 3\n"
	    EP, 1, &errs);
	assert_non_null(c);
	/* 3s + 2 x (2s + 3s) = 13s. */
	assert_string_equal(errs, "F:7: warning: domain app.example.test: "
	    "with recheck a run can take 13000 ms (timeout + (attempts - 1) x "
	    "(recheck + timeout)), not below interval (10000 ms)\n");
	config_free(c);
	free(errs);
	/* 3s + 1 x (1s + 3s) = 7s: below. */
	c = parse("interval = 10s\n" PROV DOM "recheck = 1s\n" EP, 1, &errs);
	assert_non_null(c);
	assert_string_equal(errs, "");
	config_free(c);
	free(errs);
	/* Exactly interval is not below it; attempts at its top, no overflow. */
	c = parse("interval = 7s\n" PROV DOM "recheck = 1s\n" EP
	    "[domain b.example.test]\nprovider = dns\nrecheck = 3650d\n"
	    "attempts = 2147483647\n" EP, 1, &errs);
	assert_non_null(c);
	assert_non_null(strstr(errs, "F:7: warning: domain app.example.test: "
	    "with recheck a run can take 7000 ms"));
	assert_non_null(strstr(errs, "F:13: warning: domain b.example.test: "
	    "with recheck a run can take 315360000000 ms"));
	config_free(c);
	free(errs);
}

static const struct {
	const char	*in;
	const char	*out;		/* NULL: an error */
	size_t		 len;
	const char	*err;
} sends[] = {
	{ "", "", 0, NULL },
	{ "PING\\r\\n", "PING\r\n", 6, NULL },
	{ "a\\tb\\\\c", "a\tb\\c", 5, NULL },
	{ "\\x00\\xff\\xAb", "\0\xff\xab", 3, NULL },
	{ "\\\\x41", "\\x41", 4, NULL },
	{ "no escape: {} \"' ;", "no escape: {} \"' ;", 18, NULL },
	{ "\\q", NULL, 0, "bad escape at byte 1: only \\r, \\n, \\t, \\\\ and "
	  "\\xHH (write \\\\ for a backslash)" },
	{ "ab\\", NULL, 0, "bad escape at byte 3: only \\r, \\n, \\t, \\\\ "
	  "and \\xHH (write \\\\ for a backslash)" },
	{ "\\x4", NULL, 0, "bad escape at byte 1: \\x needs two hex digits" },
	{ "xy\\xg0", NULL, 0, "bad escape at byte 3: \\x needs two hex "
	  "digits" },
	{ "\\x", NULL, 0, "bad escape at byte 1: \\x needs two hex digits" },
	{ "12345", NULL, 0, "more than 4 bytes once decoded" },
	{ "123\\n", "123\n", 4, NULL },
};

static void
test_send_decode(void **state)
{
	char out[32], err[128];
	size_t i, len, cap;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(sends) / sizeof(sends[0]); i++) {
		cap = strncmp(sends[i].in, "123", 3) == 0 ? 4 : sizeof(out);
		err[0] = '\0';
		rc = config_send_decode(sends[i].in, out, cap, &len, err,
		    sizeof(err));
		if (sends[i].out == NULL) {
			assert_int_equal(rc, -1);
			assert_string_equal(err, sends[i].err);
			continue;
		}
		if (rc != 0)
			fail_msg("case %zu: %s", i, err);
		assert_int_equal(len, sends[i].len);
		assert_memory_equal(out, sends[i].out, len);
	}
}

/* Header values are secrets: not in the digest, in the redactor. */
static void
test_digest_redactor(void **state)
{
	char d1[CONFIG_DIGEST_LEN], d2[CONFIG_DIGEST_LEN];
	char d3[CONFIG_DIGEST_LEN], d4[CONFIG_DIGEST_LEN], buf[128];
	struct redactor *r;
	struct config *c;

	(void)state;
	c = good(PROV DOM "header = X-Token: hunter2hunter2\n" EP);
	config_decision_digest(c, d1);
	r = config_redactor(c);
	snprintf(buf, sizeof(buf), "sent hunter2hunter2 to it");
	redactor_apply(r, buf, sizeof(buf));
	assert_null(strstr(buf, "hunter2"));
	redactor_free(r);
	config_free(c);
	c = good(PROV DOM "header = X-Token: other-value-here\n" EP);
	config_decision_digest(c, d2);
	config_free(c);
	assert_string_equal(d1, d2);
	c = good(PROV DOM "header = X-Other: hunter2hunter2\n" EP);
	config_decision_digest(c, d3);
	config_free(c);
	assert_string_not_equal(d1, d3);
	c = good(PROV DOM "header = X-Token: hunter2hunter2\n"
	    "userAgent = other/1\n" EP);
	config_decision_digest(c, d4);
	config_free(c);
	assert_string_not_equal(d1, d4);
	/* The default spelt out is the default. */
	c = good(PROV DOM "header = X-Token: hunter2hunter2\nuserAgent = "
	    "ddup/1.0\ncertWarn = 14d\nrecheck = 0\n" EP);
	config_decision_digest(c, d4);
	config_free(c);
	assert_string_equal(d1, d4);
}

/* The names' digest: the names a state keeps rows under, and no more. */
static void
names_digest(const char *text, char out[CONFIG_DIGEST_LEN])
{
	struct config *c = good(text);

	config_names_digest(c, out);
	config_free(c);
}

static void
test_names_digest(void **state)
{
	char d[5][CONFIG_DIGEST_LEN];

	(void)state;
	names_digest(PROV DOM EP, d[0]);
	assert_int_equal(strlen(d[0]), 64);
	/* Another URL, address or policy: the same names. */
	names_digest(PROV DOM "ttl = 300\n[endpoint a]\n"
	    "url = http://127.0.0.1:9090/\nip = 192.0.2.7\npriority = 5\n",
	    d[1]);
	assert_string_equal(d[0], d[1]);
	/* Another endpoint, its name, or the record type managed. */
	names_digest(PROV DOM EP "[endpoint b]\nurl = http://127.0.0.1:8080/\n"
	    "ip = 192.0.2.2\n", d[2]);
	assert_string_not_equal(d[0], d[2]);
	names_digest(PROV DOM "[endpoint b]\nurl = http://127.0.0.1:8080/\n"
	    "ip = 192.0.2.1\n", d[3]);
	assert_string_not_equal(d[0], d[3]);
	names_digest(PROV DOM "[endpoint a]\nurl = http://127.0.0.1:8080/\n"
	    "ip = 2001:db8::1\n", d[4]);
	assert_string_not_equal(d[0], d[4]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_domain_keys),
		cmocka_unit_test(test_command),
		cmocka_unit_test(test_stream_keys),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_recheck_warning),
		cmocka_unit_test(test_send_decode),
		cmocka_unit_test(test_digest_redactor),
		cmocka_unit_test(test_names_digest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
