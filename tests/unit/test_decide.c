/*
 * The failover decision, replayed run after run.  Each scenario is a
 * table of runs: the check results of that run, which endpoints DNS
 * holds afterwards, the state of each endpoint and of the domain.  The
 * harness plays the caller: DNS takes the publish set when there is a
 * healthy endpoint and is left alone when there is none.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "decide.h"

#define MAXEP	8
#define MAXRUN	16

struct run {
	const char	*checks;	/* per endpoint: P pass, F fail, - none */
	const char	*dns;		/* per endpoint: 1 in DNS after the run */
	const char	*states;	/* space-separated ep_state names */
	const char	*domain;	/* dom_status name */
};

struct scenario {
	const char	*name;
	long		 attempts;
	long		 recover_after;
	long		 prio[MAXEP];
	int		 family[MAXEP];	/* 4 or 6; 0 means 4 */
	int		 n;
	struct run	 runs[MAXRUN];
};

static const struct scenario scenarios[] = {
	/* ddup README, "Failover with priorities": a primary and a backup. */
	{ "primary and backup, recoverAfter 3", 2, 3, { 0, 10 }, { 0 }, 2, {
		{ "PP", "10", "active standby", "healthy" },
		{ "FP", "10", "failing standby", "warning" },
		{ "FP", "01", "down active", "warning" },
		{ "FP", "01", "down active", "warning" },
		{ "PP", "01", "recovering active", "warning" },
		{ "PP", "01", "recovering active", "warning" },
		{ "PP", "10", "active standby", "healthy" },
		{ "PP", "10", "active standby", "healthy" },
	} },
	/* A single slow answer does not move DNS; a failure resets passes. */
	{ "one failure is survived", 2, 1, { 0, 10 }, { 0 }, 2, {
		{ "PP", "10", "active standby", "healthy" },
		{ "FP", "10", "failing standby", "warning" },
		{ "PP", "10", "active standby", "healthy" },
		{ "FP", "10", "failing standby", "warning" },
		{ "PP", "10", "active standby", "healthy" },
	} },
	/* Recovery interrupted by a failure starts counting again. */
	{ "recovery restarts after a failure", 1, 3, { 0, 10 }, { 0 }, 2, {
		{ "PP", "10", "active standby", "healthy" },
		{ "FP", "01", "down active", "warning" },
		{ "PP", "01", "recovering active", "warning" },
		{ "FP", "01", "down active", "warning" },
		{ "PP", "01", "recovering active", "warning" },
		{ "PP", "01", "recovering active", "warning" },
		{ "PP", "10", "active standby", "healthy" },
	} },
	/* Two locations with two servers each, round robin inside a tier. */
	{ "two locations, two servers each", 2, 1, { 0, 0, 10, 10 }, { 0 }, 4, {
		{ "PPPP", "1100", "active active standby standby", "healthy" },
		{ "FPPP", "1100", "failing active standby standby", "warning" },
		{ "FPPP", "0100", "down active standby standby", "warning" },
		{ "FFPP", "0100", "down failing standby standby", "warning" },
		{ "FFPP", "0011", "down down active active", "warning" },
		{ "FFPF", "0011", "down down active failing", "warning" },
		{ "PFPF", "1000", "active down standby down", "warning" },
		{ "PPPP", "1100", "active active standby standby", "healthy" },
	} },
	/* Three levels: 0, 10 and 100. */
	{ "three levels 0/10/100", 2, 1, { 0, 10, 100 }, { 0 }, 3, {
		{ "PPP", "100", "active standby standby", "healthy" },
		{ "FPP", "100", "failing standby standby", "warning" },
		{ "FPP", "010", "down active standby", "warning" },
		{ "FFP", "010", "down failing standby", "warning" },
		{ "FFP", "001", "down down active", "warning" },
		{ "FPP", "010", "down active standby", "warning" },
		{ "PPP", "100", "active standby standby", "healthy" },
	} },
	/* Every endpoint down: DNS keeps the last set, shown as down. */
	{ "all endpoints down", 2, 1, { 0, 10 }, { 0 }, 2, {
		{ "PP", "10", "active standby", "healthy" },
		{ "FF", "10", "failing down", "warning" },
		{ "FF", "10", "down down", "unhealthy" },
		{ "FF", "10", "down down", "unhealthy" },
		{ "FP", "01", "down active", "warning" },
		{ "PP", "10", "active standby", "healthy" },
	} },
	/* No priorities: every healthy endpoint, round robin. */
	{ "round robin without priorities", 2, 1, { 0, 0, 0 }, { 0 }, 3, {
		{ "PPP", "111", "active active active", "healthy" },
		{ "PFP", "111", "active failing active", "warning" },
		{ "PFP", "101", "active down active", "warning" },
		{ "PPP", "111", "active active active", "healthy" },
	} },
	/* First run: a pass is healthy, a failure is not (but not removed). */
	{ "first run", 2, 3, { 0, 10, 20 }, { 0 }, 3, {
		{ "FPP", "010", "down active standby", "warning" },
		{ "PPP", "100", "active standby standby", "healthy" },
	} },
	{ "first run, everything fails", 2, 1, { 0, 10 }, { 0 }, 2, {
		{ "FF", "00", "down down", "unhealthy" },
		{ "FP", "01", "down active", "warning" },
	} },
	/* With attempts = 1 a first failure removes at once. */
	{ "attempts 1", 1, 2, { 0, 10 }, { 0 }, 2, {
		{ "FP", "01", "down active", "warning" },
		{ "PP", "01", "recovering active", "warning" },
		{ "PP", "10", "active standby", "healthy" },
	} },
	/*
	 * Mixed families: the IPv6 primary fails over to an IPv4-only
	 * tier, so the AAAA set must become empty (checked by the
	 * harness through the family column).
	 */
	{ "mixed IPv4/IPv6, AAAA emptied", 2, 1, { 0, 0, 10 }, { 4, 6, 4 }, 3, {
		{ "PPP", "110", "active active standby", "healthy" },
		{ "FFP", "110", "failing failing standby", "warning" },
		{ "FFP", "001", "down down active", "warning" },
		{ "PPP", "110", "active active standby", "healthy" },
	} },
	/* Status only (no checks): nothing moves. */
	{ "no checks keeps everything", 2, 1, { 0, 10 }, { 0 }, 2, {
		{ "PP", "10", "active standby", "healthy" },
		{ "--", "10", "active standby", "healthy" },
		{ "FP", "10", "failing standby", "warning" },
		{ "--", "10", "failing standby", "warning" },
	} },
};

static void
expect_states(const struct scenario *s, int r, const struct dec_ep *eps,
    const char *want)
{
	char	 got[256] = "";
	int	 i;

	for (i = 0; i < s->n; i++) {
		if (i > 0)
			strcat(got, " ");
		strcat(got, ep_state_str(eps[i].state));
	}
	if (strcmp(got, want) != 0)
		fail_msg("%s, run %d: states \"%s\", want \"%s\"", s->name,
		    r + 1, got, want);
}

static void
play(const struct scenario *s)
{
	struct dec_ep	 eps[MAXEP];
	struct dec_domain d;
	int		 in_dns[MAXEP] = { 0 };
	int		 has_state = 0;
	int		 i, r;

	memset(eps, 0, sizeof(eps));
	for (r = 0; r < MAXRUN && s->runs[r].checks != NULL; r++) {
		const struct run *run = &s->runs[r];
		char dns[MAXEP + 1];
		int any6 = 0, want6 = 0;

		memset(&d, 0, sizeof(d));
		d.attempts = s->attempts;
		d.recover_after = s->recover_after;
		for (i = 0; i < s->n; i++) {
			struct dec_ep *e = &eps[i];

			e->priority = s->prio[i];
			e->has_state = has_state;
			e->failures = e->new_failures;
			e->passes = e->new_passes;
			e->removed = e->new_removed;
			e->published = in_dns[i];
			if (run->checks[i] != '-')
				e->last_ok = run->checks[i] == 'P';
			e->result = run->checks[i] == 'P' ? CR_PASS :
			    run->checks[i] == 'F' ? CR_FAIL : CR_NONE;
		}
		decide(&d, eps, (size_t)s->n);
		/* The caller's part: write DNS only when something is healthy. */
		for (i = 0; i < s->n; i++) {
			if (d.any_healthy)
				in_dns[i] = eps[i].publish;
			eps[i].published = in_dns[i];
			dns[i] = in_dns[i] ? '1' : '0';
			if (s->family[i] == 6) {
				any6 = 1;
				want6 |= eps[i].publish;
			}
		}
		dns[s->n] = '\0';
		decide_states(&d, eps, (size_t)s->n);
		if (strcmp(dns, run->dns) != 0)
			fail_msg("%s, run %d: DNS %s, want %s", s->name, r + 1,
			    dns, run->dns);
		expect_states(s, r, eps, run->states);
		if (strcmp(dom_status_str(d.status), run->domain) != 0)
			fail_msg("%s, run %d: domain %s, want %s", s->name,
			    r + 1, dom_status_str(d.status), run->domain);
		/* A tier without IPv6 empties AAAA. */
		if (any6 && d.any_healthy && strchr(run->dns, '1') != NULL) {
			int dns6 = 0;

			for (i = 0; i < s->n; i++)
				if (s->family[i] == 6 && run->dns[i] == '1')
					dns6 = 1;
			assert_int_equal(want6, dns6);
		}
		if (run->checks[0] != '-')
			has_state = 1;
	}
}

static void
test_scenarios(void **unused)
{
	size_t i;

	(void)unused;
	for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		play(&scenarios[i]);
}

/* The tier is the lowest healthy priority; gaps do not matter. */
static void
test_tier(void **unused)
{
	struct dec_ep	 eps[3];
	struct dec_domain d = { .attempts = 2, .recover_after = 1 };

	(void)unused;
	memset(eps, 0, sizeof(eps));
	eps[0].priority = 7;
	eps[1].priority = 1000;
	eps[2].priority = 7;
	eps[0].result = eps[1].result = eps[2].result = CR_PASS;
	decide(&d, eps, 3);
	assert_true(d.has_tier);
	assert_int_equal(d.tier, 7);
	assert_true(eps[0].publish && !eps[1].publish && eps[2].publish);

	/* Nothing healthy: no tier, nothing to publish. */
	memset(eps, 0, sizeof(eps));
	eps[0].result = eps[1].result = eps[2].result = CR_FAIL;
	decide(&d, eps, 3);
	assert_false(d.any_healthy);
	assert_false(d.has_tier);
	assert_false(eps[0].publish || eps[1].publish || eps[2].publish);
	assert_int_equal(d.status, DOM_UNHEALTHY);
}

/* Counters follow SPEC 5 exactly. */
static void
test_counters(void **unused)
{
	struct dec_ep	 e;
	struct dec_domain d = { .attempts = 3, .recover_after = 2 };

	(void)unused;
	memset(&e, 0, sizeof(e));
	e.has_state = 1;
	e.failures = 2;
	e.passes = 0;
	e.published = 1;
	e.result = CR_FAIL;
	decide(&d, &e, 1);
	assert_int_equal(e.new_failures, 3);
	assert_int_equal(e.new_passes, 0);
	assert_true(e.new_removed);
	assert_false(e.healthy);

	e.failures = 3;
	e.removed = 1;
	e.result = CR_PASS;
	decide(&d, &e, 1);
	assert_int_equal(e.new_failures, 0);
	assert_int_equal(e.new_passes, 1);
	assert_true(e.new_removed);
	assert_int_equal(e.state, EP_RECOVERING);

	e.failures = 0;
	e.passes = 1;
	decide(&d, &e, 1);
	assert_int_equal(e.new_passes, 2);
	assert_false(e.new_removed);
	assert_true(e.healthy);

	/* Never checked and no state: unknown. */
	memset(&e, 0, sizeof(e));
	decide(&d, &e, 1);
	assert_int_equal(e.state, EP_UNKNOWN);
	assert_int_equal(d.status, DOM_UNKNOWN);
}

static void
test_names(void **unused)
{
	(void)unused;
	assert_string_equal(ep_state_str(EP_RECOVERING), "recovering");
	assert_string_equal(ep_state_str(99), "unknown");
	assert_string_equal(dom_status_str(DOM_WARNING), "warning");
	assert_string_equal(dom_status_str(-1), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scenarios),
		cmocka_unit_test(test_tier),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests_name("decide", tests, NULL, NULL);
}
