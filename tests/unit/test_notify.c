/*
 * outbox.c's event JSON of ddup.ini(5), NOTIFICATIONS, exactly, and
 * notify.c's retry schedule.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "notify.h"
#include "outbox.h"
#include "util.h"

/* 2026-11-30T10:25:56Z */
#define T0	1796034356000LL

static void
test_event_json(void **state)
{
	static const char *const now[] = { "192.0.2.2", "2001:db8::2" };
	static const char *const before[] = { "192.0.2.1" };
	static const struct event_ep eps[] = {
		{ "a", "192.0.2.1", 0, 0, "down", "HTTP 503", 0 },
		/* 2027-01-02T03:04:05Z */
		{ "b", "192.0.2.2", 1, 1, "active", "ok", 1798859045LL },
		{ "c", "2001:db8::2", 1, 1, "active", NULL, 0 },
	};
	struct event ev = {
		.type = EVT_DNS_UPDATED,
		.domain = "app.example.test",
		.time = T0,
		.published = now,
		.npublished = 2,
		.previous = before,
		.nprevious = 1,
		.has_tier = 1,
		.tier = 1,
		.has_previous_tier = 1,
		.previous_tier = 0,
		.eps = eps,
		.neps = 3,
	};
	char *s;

	(void)state;
	s = event_json(&ev);
	assert_non_null(s);
	assert_string_equal(s, "{\"event\":\"dns_updated\","
	    "\"domain\":\"app.example.test\",\"time\":\"2026-11-30T10:25:56Z\","
	    "\"published\":[\"192.0.2.2\",\"2001:db8::2\"],"
	    "\"previous\":[\"192.0.2.1\"],\"tier\":1,\"previousTier\":0,"
	    "\"endpoints\":["
	    "{\"name\":\"a\",\"ip\":\"192.0.2.1\",\"priority\":0,"
	    "\"healthy\":false,\"state\":\"down\",\"lastResult\":\"HTTP 503\"},"
	    "{\"name\":\"b\",\"ip\":\"192.0.2.2\",\"priority\":1,"
	    "\"healthy\":true,\"state\":\"active\",\"lastResult\":\"ok\","
	    "\"certExpires\":\"2027-01-02T03:04:05Z\"},"
	    "{\"name\":\"c\",\"ip\":\"2001:db8::2\",\"priority\":1,"
	    "\"healthy\":true,\"state\":\"active\",\"lastResult\":null}],"
	    "\"error\":null}");
	free(s);

	/* A failed update on a first run: no tier before, an error. */
	ev.type = EVT_DNS_UPDATE_FAILED;
	ev.has_previous_tier = 0;
	ev.nprevious = 0;
	ev.neps = 0;
	ev.error = "provider dns: \"refused\"\x01\n";
	s = event_json(&ev);
	assert_non_null(s);
	assert_string_equal(s, "{\"event\":\"dns_update_failed\","
	    "\"domain\":\"app.example.test\",\"time\":\"2026-11-30T10:25:56Z\","
	    "\"published\":[\"192.0.2.2\",\"2001:db8::2\"],\"previous\":[],"
	    "\"tier\":1,\"previousTier\":null,\"endpoints\":[],"
	    "\"error\":\"provider dns: \\\"refused\\\"??\"}");
	free(s);

	/* An endpoint's event names it, after the time. */
	ev.type = EVT_ENDPOINT_DOWN;
	ev.endpoint = "a";
	ev.error = NULL;
	ev.has_tier = 0;
	s = event_json(&ev);
	assert_non_null(s);
	assert_non_null(strstr(s, "\"time\":\"2026-11-30T10:25:56Z\","
	    "\"endpoint\":\"a\",\"published\""));
	assert_non_null(strstr(s, "\"tier\":null,\"previousTier\":null"));
	free(s);
}

/* Gaps of interval x 4^(n-1), at most a day, less half an interval. */
static void
test_retry_schedule(void **state)
{
	static const struct {
		long		 attempts;
		long long	 interval_ms;
		long long	 gap_ms;
	} cases[] = {
		{ 1, 30000, 15000 },
		{ 2, 30000, 105000 },
		{ 3, 30000, 465000 },
		{ 4, 30000, 1905000 },
		{ 5, 30000, 7665000 },
		{ 8, 30000, 86400000 - 15000 },
		{ 100, 30000, 86400000 - 15000 },
		{ 1, 500, 250 },
		{ 2, 500, 1750 },
		{ 1, 3600000, 1800000 },
		{ 3, 3600000, 16 * 3600000LL - 1800000 },
		{ 4, 3600000, 86400000 - 1800000 },
		{ 1, 2LL * 86400000, 86400000 - 86400000 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (notify_retry_at(T0, cases[i].attempts,
		    cases[i].interval_ms) != T0 + cases[i].gap_ms)
			fail_msg("case %zu: %lld, wanted %lld", i,
			    notify_retry_at(T0, cases[i].attempts,
			    cases[i].interval_ms) - T0, cases[i].gap_ms);
	/* Each gap is longer than the one before, until the cap. */
	for (i = 2; i < 8; i++)
		assert_true(notify_retry_at(0, (long)i, 30000) >
		    notify_retry_at(0, (long)i - 1, 30000));
}

/* A retry time no clock that kept its pace can have set is due at once. */
static void
test_due(void **state)
{
	const long long ten_years = 10LL * 365 * 86400000;

	(void)state;
	assert_true(notify_due(0, 0, T0, 30000));
	assert_true(notify_due(T0, 1, T0, 30000));
	assert_true(notify_due(T0 - 1, 3, T0, 30000));
	assert_false(notify_due(T0 + 1, 1, T0, 30000));
	/* Up to the gap of the attempt: it waits. */
	assert_false(notify_due(T0 + 15000, 1, T0, 30000));
	assert_false(notify_due(T0 + 105000, 2, T0, 30000));
	assert_false(notify_due(T0 + 86400000 - 15000, 100, T0, 30000));
	/* Past it: set by a clock since stepped back. */
	assert_true(notify_due(T0 + 15001, 1, T0, 30000));
	assert_true(notify_due(T0 + 105001, 2, T0, 30000));
	assert_true(notify_due(T0 + 86400000 - 14999, 100, T0, 30000));
	assert_true(notify_due(T0 + ten_years, 1, T0, 30000));
	assert_true(notify_due(T0 + ten_years, 5, T0, 3600000));
}

static void
test_wants(void **state)
{
	struct notify_cfg n;

	(void)state;
	memset(&n, 0, sizeof(n));
	n.events = (1u << EVT_ENDPOINT_DOWN) | (1u << EVT_DNS_UPDATED);
	assert_true(outbox_wants(&n, EVT_ENDPOINT_DOWN));
	assert_true(outbox_wants(&n, EVT_DNS_UPDATED));
	assert_false(outbox_wants(&n, EVT_ENDPOINT_UP));
	assert_false(outbox_wants(&n, EVT_ALL_UNHEALTHY));
	assert_false(outbox_wants(&n, -1));
	assert_false(outbox_wants(&n, EVT_COUNT));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_json),
		cmocka_unit_test(test_retry_schedule),
		cmocka_unit_test(test_due),
		cmocka_unit_test(test_wants),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
