/*
 * The classification of provider API answers (http_status_error): the
 * class of each status, what the message quotes and what it hides; the
 * check of a provider's base URL (http_check_base_url).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "http.h"
#include "provider.h"
#include "providers/api.h"
#include "util.h"

static int
fake_errtext(const char *body, size_t len, char *out, size_t outlen)
{
	(void)len;
	if (strncmp(body, "{\"error\":", 9) != 0)
		return -1;
	snprintf(out, outlen, "%s", body + 9);
	return 0;
}

struct answer {
	long		 status;
	const char	*ctype;
	const char	*body;
	long long	 retry;
	enum perr	 want;
	const char	*has;		/* must occur in the message */
	const char	*hasnt;		/* must not; NULL: no such check */
};

static const struct answer answers[] = {
	{ 401, NULL, "", -1, PERR_AUTH, "401 Unauthorized: check apiKey", NULL },
	{ 403, "application/json", "{\"error\":nope", -1, PERR_AUTH,
	    "403 Forbidden: check apiKey", "nope" },
	{ 404, NULL, "", -1, PERR_NOTFOUND, "404 Not Found: zone z. not found",
	    NULL },
	{ 400, "application/json", "{\"error\":bad ttl", -1, PERR_INVALID,
	    "400 Bad Request: bad ttl", NULL },
	{ 422, "text/plain", "first line\nsecond", -1, PERR_INVALID,
	    "422 Unprocessable Entity: first line", "second" },
	{ 429, NULL, "", 120, PERR_RATELIMIT, "429 Too Many Requests "
	    "(retry after 120s)", NULL },
	{ 429, NULL, "", -1, PERR_RATELIMIT, "429", "retry after" },
	{ 500, "text/html", "Internal Server Error", -1, PERR_TEMP,
	    "500 Internal Server Error", "Error: Internal" },
	{ 503, "application/json", "{\"error\":db\x1b[31m\xc3\xa9", -1,
	    PERR_TEMP, "503 Service Unavailable: db?[31m\xc3\xa9", "\x1b" },
	{ 307, NULL, "", -1, PERR_INVALID, "307: redirects are not followed",
	    NULL },
	{ 418, NULL, "", -1, PERR_INVALID, "418", NULL },
	/* The error text of an API that speaks XML, asked for by media type. */
	{ 400, "text/xml", "{\"error\":InvalidChangeBatch", -1, PERR_INVALID,
	    "400 Bad Request: InvalidChangeBatch", NULL },
	{ 400, "text/xmlish", "{\"error\":x", -1, PERR_INVALID,
	    "400 Bad Request: {\"error\":x", NULL },
};

static void
test_answers(void **unused)
{
	struct http_req rq = {
		.who = "API",
		.method = "GET",
		.url = "http://127.0.0.1:1/x",
		.errtext = fake_errtext,
		.auth_hint = "check apiKey",
		.notfound_hint = "zone z. not found",
	};
	struct http_resp rs;
	char err[512];
	size_t i;

	(void)unused;
	for (i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		const struct answer *a = &answers[i];

		memset(&rs, 0, sizeof(rs));
		rs.status = a->status;
		rs.ctype = (char *)(size_t)a->ctype;
		rs.body = (char *)(size_t)a->body;
		rs.len = strlen(a->body);
		rs.retry_after = a->retry;
		rq.err_ctype = a->ctype != NULL && strncmp(a->ctype, "text/xml",
		    8) == 0 ? "text/xml" : NULL;
		if (http_status_error(&rq, &rs, err, sizeof(err)) != a->want)
			fail_msg("%ld: class %d, want %d (%s)", a->status,
			    (int)http_status_class(a->status), (int)a->want,
			    err);
		if (strncmp(err, "API at http://127.0.0.1:1/x: ", 29) != 0 ||
		    strstr(err, a->has) == NULL)
			fail_msg("%ld: \"%s\" lacks \"%s\"", a->status, err,
			    a->has);
		if (a->hasnt != NULL && strstr(err, a->hasnt) != NULL)
			fail_msg("%ld: \"%s\" has \"%s\"", a->status, err,
			    a->hasnt);
	}
}

struct base_url {
	const char	*v;
	int		 ok;
	const char	*has;		/* in the message */
	const char	*hasnt;		/* not in it */
};

static const struct base_url base_urls[] = {
	{ "https://api.example.com", 1, NULL, NULL },
	{ "http://127.0.0.1:8081/api/v1/", 1, NULL, NULL },
	{ "HTTPS://[::1]:443", 1, NULL, NULL },
	{ "ftp://x", 0, "baseUrl: \"ftp://x\" is not an http:// or https://",
	    NULL },
	{ "api.example.com", 0, "is not an http", NULL },
	{ "https://x/?a=1", 0, "query or fragment", NULL },
	{ "https://x/#top", 0, "query or fragment", NULL },
	{ "https://u:s3cret@x/", 0, "must not hold a user name or password",
	    "s3cret" },
	{ "https://u@x/", 0, "must not hold a user name", NULL },
	{ "gopher://u:s3cret@x/", 0, "baseUrl", "s3cret" },
	{ "https://x/\x1b[31m?", 0, "baseUrl", "\x1b" },
	{ "", 0, "baseUrl", NULL },
};

static void
test_base_url(void **unused)
{
	const struct base_url *b;
	char err[256];
	size_t i;
	int rv;

	(void)unused;
	for (i = 0; i < sizeof(base_urls) / sizeof(base_urls[0]); i++) {
		b = &base_urls[i];
		err[0] = '\0';
		rv = http_check_base_url("baseUrl", b->v, err, sizeof(err));
		if (rv != (b->ok ? 0 : -1))
			fail_msg("%s: %d (%s)", b->v, rv, err);
		if (b->has != NULL && strstr(err, b->has) == NULL)
			fail_msg("%s: \"%s\" lacks \"%s\"", b->v, err, b->has);
		if (b->hasnt != NULL && strstr(err, b->hasnt) != NULL)
			fail_msg("%s: \"%s\" has \"%s\"", b->v, err, b->hasnt);
	}
}

struct retry {
	const char	*v;
	time_t		 now;
	long long	 want;
};

#define RA_MAX	HTTP_RETRY_AFTER_MAX
#define IMF	784111777	/* Sun, 06 Nov 1994 08:49:37 GMT */

static const struct retry retries[] = {
	{ "120", 0, 120 },
	{ " \t7 ", 0, 7 },
	{ "0", 0, 0 },
	{ "31535999", 0, RA_MAX - 1 },
	/* Past every integer type a provider may think of: cut, no overflow. */
	{ "9223372036854775808", 0, RA_MAX },		/* 2^63 */
	{ "9223372036854775807", 0, RA_MAX },
	{ "18000000000000000", 0, RA_MAX },		/* 1.8e16 */
	{ "184467440737095516160000000000000000000000", 0, RA_MAX },
	{ "-5", 0, -1 },
	{ "-9223372036854775808", 0, -1 },
	{ "+5", 0, -1 },
	{ "", 0, -1 },
	{ "   ", 0, -1 },
	{ "soon", 0, -1 },
	{ "12abc", 0, -1 },
	{ "1.5", 0, -1 },
	{ "1e9", 0, -1 },
	{ "0x10", 0, -1 },
	/* HTTP-dates: the three forms RFC 9110 has recipients read. */
	{ "Sun, 06 Nov 1994 08:49:37 GMT", IMF - 30, 30 },
	{ "Sunday, 06-Nov-94 08:49:37 GMT", IMF - 30, 30 },
	{ "Sun Nov  6 08:49:37 1994", IMF - 30, 30 },
	{ "Sun, 06 Nov 1994 08:49:37 GMT", IMF, 0 },
	{ "Sun, 06 Nov 1994 08:49:37 GMT", IMF + 3600, 0 },
	{ "Fri, 31 Dec 9999 23:59:59 GMT", IMF, RA_MAX },
	{ "Fri, 31 Dec 99999 23:59:59 GMT", IMF, RA_MAX },
	{ "Fri, 31 Dec 9223372036854775807 23:59:59 GMT", IMF, -1 },
	{ "Fri, 31 Dec 18446744073709551616 23:59:59 GMT", IMF, -1 },
	{ "Sun, 06 Nov 1994 08:49:37 GMT", (time_t)(-9223372036854775807LL - 1),
	    RA_MAX },
	{ "Fri, 31 Dec 1e999 23:59:59 GMT", IMF, -1 },
};

static void
test_retry_after(void **unused)
{
	size_t i;
	long long got;

	(void)unused;
	for (i = 0; i < sizeof(retries) / sizeof(retries[0]); i++) {
		got = http_retry_after(retries[i].v, retries[i].now);
		if (got != retries[i].want)
			fail_msg("\"%s\": %lld, want %lld", retries[i].v, got,
			    retries[i].want);
	}
}

/* The message of a 429 whose wait is cut, and of one past the deadline. */
static void
test_retry_after_message(void **unused)
{
	struct http_req rq = { .who = "API", .method = "GET",
	    .url = "http://127.0.0.1:1/x" };
	struct http_resp rs;
	char err[512];

	(void)unused;
	memset(&rs, 0, sizeof(rs));
	rs.status = 429;
	rs.body = (char *)(size_t)"";
	rs.retry_after = HTTP_RETRY_AFTER_MAX;
	assert_int_equal(http_status_error(&rq, &rs, err, sizeof(err)),
	    PERR_RATELIMIT);
	assert_non_null(strstr(err, "429 Too Many Requests (retry after 365 "
	    "days or more)"));
	/* An operation that has a deadline says the wait is not made. */
	rq.deadline = 1;
	rs.retry_after = 600;
	(void)http_status_error(&rq, &rs, err, sizeof(err));
	assert_non_null(strstr(err, "(retry after 600s: past the timeout, "
	    "not waited)"));
}

/* A request whose operation's deadline has passed is not sent. */
static void
test_past_deadline(void **unused)
{
	struct http_req rq = { .who = "API", .method = "GET",
	    .url = "http://127.0.0.1:1/x", .timeout_ms = 2000, .deadline = 1 };
	struct http_resp rs;
	char err[512];

	(void)unused;
	assert_int_equal(http_call(&rq, &rs, err, sizeof(err)), PERR_NET);
	assert_string_equal(err, "API at http://127.0.0.1:1/x: timeout after "
	    "2s, before this request was sent");
	assert_int_equal(rs.status, 0);
	http_resp_free(&rs);
}

/* A 3xx names the key that holds the URL, baseUrl unless told. */
static void
test_redirect_names_its_key(void **unused)
{
	struct http_req rq = { .who = "notify 'ops'", .method = "POST",
	    .url = "http://127.0.0.1:1/hook" };
	struct http_resp rs;
	char err[512];

	(void)unused;
	memset(&rs, 0, sizeof(rs));
	rs.status = 302;
	rs.body = (char *)(size_t)"";
	rs.retry_after = -1;
	(void)http_status_error(&rq, &rs, err, sizeof(err));
	assert_non_null(strstr(err, "redirects are not followed (check "
	    "baseUrl)"));
	rq.url_key = "url";
	(void)http_status_error(&rq, &rs, err, sizeof(err));
	assert_non_null(strstr(err, "redirects are not followed (check url)"));
	assert_null(strstr(err, "baseUrl"));
}

static void
test_printable(void **unused)
{
	char s[] = "a\tb\nc\x7f\xff z";

	(void)unused;
	text_printable(s);
	assert_string_equal(s, "a?b?c?? z");
}

/* The one zone rule (provider.h). */
static void
test_zone_name(void **unused)
{
	char label[70];

	(void)unused;
	assert_true(provider_zone_ok("example.com"));
	assert_true(provider_zone_ok("Example.COM."));
	assert_true(provider_zone_ok("xn--bcher-kva.de"));
	assert_true(provider_zone_ok("_acme-challenge.example.com"));
	assert_false(provider_zone_ok("b\xc3\xbc" "cher.de"));
	assert_false(provider_zone_ok(""));
	assert_false(provider_zone_ok("."));
	assert_false(provider_zone_ok(".example.com"));
	assert_false(provider_zone_ok("a..b"));
	assert_false(provider_zone_ok("example.com.."));
	assert_false(provider_zone_ok("exa mple.com"));
	assert_false(provider_zone_ok("a/b"));
	memset(label, 'a', 64);
	label[64] = '\0';
	assert_false(provider_zone_ok(label));
	label[63] = '\0';
	assert_true(provider_zone_ok(label));
}

/* One parser, told where each API keeps its message (providers/api.h). */
static void
test_errtext(void **unused)
{
	static const struct api_errtext coded = {
		.prefix = "X error ",
		.form = { { .in = "errors", .in_first = 1, .code = "code",
		    .code_num = 1, .msg = "message" } },
		.chain = "error_chain", .hint_code = 9, .hint = " (hint)",
	};
	static const struct api_errtext two = {
		.form = {
			{ .code = "error", .msg = "error_description",
			    .final = 1 },
			{ .in = "error", .in_or_body = 1, .code = "code",
			    .msg = "message" },
		},
		.first_line = 1,
	};
	static const struct api_errtext any = {
		.first_nonempty = 1, .form = { { .msg = "detail" } },
		.any_key = 1,
	};
	char out[128];
	const char *b;

	(void)unused;
	b = "{\"errors\":[{\"code\":9,\"message\":\"m\",\"error_chain\":"
	    "[{\"code\":1,\"message\":\"c\"}]}]}";
	assert_int_equal(api_errtext(&coded, b, strlen(b), out, sizeof(out)),
	    0);
	assert_string_equal(out, "X error 9: m (1: c) (hint)");
	b = "{\"errors\":[{\"code\":\"9\",\"message\":\"m\"}]}";
	assert_int_equal(api_errtext(&coded, b, strlen(b), out, sizeof(out)),
	    -1);
	b = "{\"error\":\"bad\",\"error_description\":\"AADSTS1\\r\\nTrace\"}";
	assert_int_equal(api_errtext(&two, b, strlen(b), out, sizeof(out)), 0);
	assert_string_equal(out, "bad: AADSTS1");
	/* The code found, its message not: no later form is asked. */
	b = "{\"error\":\"bad\",\"code\":\"c\",\"message\":\"m\"}";
	assert_int_equal(api_errtext(&two, b, strlen(b), out, sizeof(out)),
	    -1);
	b = "{\"code\":\"c\",\"message\":\"m\"}";
	assert_int_equal(api_errtext(&two, b, strlen(b), out, sizeof(out)), 0);
	assert_string_equal(out, "c: m");
	b = "[{},{\"ttl\":[\"too low\"]}]";
	assert_int_equal(api_errtext(&any, b, strlen(b), out, sizeof(out)), 0);
	assert_string_equal(out, "ttl: too low");
	b = "not json";
	assert_int_equal(api_errtext(&any, b, strlen(b), out, sizeof(out)),
	    -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answers),
		cmocka_unit_test(test_printable),
		cmocka_unit_test(test_base_url),
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test(test_retry_after_message),
		cmocka_unit_test(test_past_deadline),
		cmocka_unit_test(test_redirect_names_its_key),
		cmocka_unit_test(test_zone_name),
		cmocka_unit_test(test_errtext),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
