/*
 * outcome.c: the events of ddup.ini(5), NOTIFICATIONS, from a domain's
 * before and after, driven by a table; the iteration over a sealed outcome.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "check/type.h"
#include "config.h"
#include "decide.h"
#include "outcome.h"

#define MAXEP	4

/*
 * One case: per endpoint three characters, whether this run's check
 * counted ('c'; '-' when excused by a failed controlUrl; 'n' counted,
 * but the endpoint's first), removed before and after ('0', '1'); the
 * domain's flags; and the events expected, in order, as "name" or
 * "name:ENDPOINT-INDEX".
 */
struct ev_case {
	const char	*name;
	const char	*eps;
	int		 any_healthy;
	int		 was_unhealthy;
	int		 control_failed;
	int		 changed;
	int		 failed;
	const char	*events;
};

static const struct ev_case cases[] = {
	{ "steady", "c00 c00", 1, 0, 0, 0, 0, "" },
	{ "removed after attempts", "c01 c00", 1, 0, 0, 1, 0,
	    "dns_updated endpoint_down:0" },
	{ "still removed: nothing new", "c11 c00", 1, 0, 0, 0, 0, "" },
	{ "back", "c10 c00", 1, 0, 0, 1, 0, "dns_updated endpoint_up:0" },
	{ "the last one goes", "c11 c01", 0, 0, 0, 0, 0,
	    "all_unhealthy endpoint_down:1" },
	{ "all_unhealthy once per loss", "c11 c11", 0, 1, 0, 0, 0, "" },
	{ "healthy again", "c11 c10", 1, 1, 0, 1, 0,
	    "dns_updated endpoint_up:1" },
	{ "a failed update", "c01 c00", 1, 0, 0, 0, 1,
	    "dns_update_failed endpoint_down:0" },
	{ "the network is blamed", "-00 -00", 0, 0, 1, 0, 0, "" },
	/* Passes count while the controlUrl fails: the way back is said. */
	{ "back while the network is blamed", "c10 -00", 1, 0, 1, 0, 0,
	    "endpoint_up:0" },
	{ "first run, nothing healthy", "n00 n00", 0, 0, 0, 0, 0,
	    "all_unhealthy" },
	{ "several at once, file order", "c01 c10 c01", 1, 0, 0, 1, 0,
	    "dns_updated endpoint_down:0 endpoint_up:1 endpoint_down:2" },
};

/* The events as the table writes them. */
static void
events_text(const struct outcome_event *ev, size_t n,
    const struct outcome_domain *d, char *buf, size_t len)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < n && off < len; i++) {
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
		    i > 0 ? " " : "", event_type_str(ev[i].kind));
		if (ev[i].ep != NULL && off < len)
			off += (size_t)snprintf(buf + off, len - off, ":%d",
			    (int)(ev[i].ep - d->eps));
		assert_ptr_equal(ev[i].domain, d);
		assert_int_equal(ev[i].time, 1000);
	}
}

static void
test_events(void **state)
{
	struct outcome_ep	 eps[MAXEP];
	struct outcome_domain	 d;
	struct outcome_event	*ev;
	char			 got[256];
	size_t			 i, j, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ev_case *c = &cases[i];

		memset(&d, 0, sizeof(d));
		memset(eps, 0, sizeof(eps));
		for (j = 0; c->eps[j * 4] != '\0'; j++) {
			eps[j].check.done = 1;
			eps[j].check.counted = c->eps[j * 4] != '-';
			eps[j].has_state = c->eps[j * 4] != 'n';
			eps[j].check.reason = "HTTP 503";
			eps[j].removed_before = c->eps[j * 4 + 1] == '1';
			eps[j].removed = c->eps[j * 4 + 2] == '1';
			if (c->eps[j * 4 + 3] == '\0') {
				j++;
				break;
			}
		}
		d.eps = eps;
		d.neps = j;
		d.any_healthy = c->any_healthy;
		d.was_unhealthy = c->was_unhealthy;
		d.changed = c->changed;
		d.failed = c->failed;
		d.error = c->failed ? "provider p: timeout" : NULL;
		ev = NULL;
		n = 0;
		outcome_domain_events(&d, 1000, c->control_failed, &ev, &n);
		events_text(ev, n, &d, got, sizeof(got));
		if (strcmp(got, c->events) != 0)
			fail_msg("%s: events \"%s\", not \"%s\"", c->name, got,
			    c->events);
		for (j = 0; j < n; j++) {
			if (ev[j].kind == EVT_DNS_UPDATE_FAILED)
				assert_string_equal(ev[j].error,
				    "provider p: timeout");
			else
				assert_null(ev[j].error);
		}
		free(ev);
	}
}

#define DAY_MS	(86400LL * 1000)
#define NOW_MS	(20000LL * DAY_MS)	/* a run's now */
#define NOW_S	(NOW_MS / 1000)

/*
 * The certificate rule (outcome.h, outcome_cert_entering): days left of
 * this run's certificate (or none seen), of the stored one as of the
 * check before (none stored, or no check before), certWarn in days.
 */
struct cert_case {
	const char	*name;
	int		 seen;		/* this run's check saw one */
	long long	 left;		/* its days left at now */
	int		 stored;	/* one was stored */
	long long	 left_before;	/* its days left at the check before */
	int		 checked_before;
	long long	 warn;		/* certWarn, days (0: off) */
	int		 within;	/* outcome_cert_within() */
	int		 event;		/* cert_expiring */
};

static const struct cert_case cert_cases[] = {
	{ "first seen, far", 1, 300, 0, 0, 0, 14, 0, 0 },
	{ "first seen, near", 1, 5, 0, 0, 0, 14, 1, 1 },
	{ "came near since the check before", 1, 13, 1, 15, 1, 14, 1, 1 },
	{ "near already at the check before", 1, 12, 1, 13, 1, 14, 1, 0 },
	{ "renewed, far again", 1, 90, 1, 3, 1, 14, 0, 0 },
	{ "renewed to a near one", 1, 5, 1, 400, 1, 14, 1, 1 },
	{ "expired, said before", 1, -2, 1, 1, 1, 14, 1, 0 },
	{ "certWarn off", 1, 1, 0, 0, 0, 0, 0, 0 },
	{ "none seen, the stored one near", 0, 0, 1, 5, 1, 14, 1, 0 },
	{ "stored, no check before", 1, 5, 1, 5, 0, 14, 1, 1 },
};

static void
test_cert_events(void **state)
{
	struct outcome_ep	 e;
	struct outcome_domain	 d;
	struct domain_cfg	 dc;
	struct outcome_event	*ev;
	size_t			 i, n;

	(void)state;
	for (i = 0; i < sizeof(cert_cases) / sizeof(cert_cases[0]); i++) {
		const struct cert_case *c = &cert_cases[i];
		long long before_at = NOW_MS - DAY_MS / 24;	/* an hour ago */

		memset(&d, 0, sizeof(d));
		memset(&dc, 0, sizeof(dc));
		memset(&e, 0, sizeof(e));
		dc.pol.cert_warn_ms = c->warn * DAY_MS;
		d.cfg = &dc;
		d.any_healthy = 1;
		d.eps = &e;
		d.neps = 1;
		e.check.done = e.check.counted = e.has_state = 1;
		e.check.reason = "ok";
		e.last_check_before = c->checked_before ? before_at : 0;
		if (c->stored)
			e.cert_expires_before = before_at / 1000 +
			    c->left_before * 86400;
		if (c->seen)
			e.check.cert_expires = NOW_S + c->left * 86400;
		e.cert_expires = c->seen ? e.check.cert_expires :
		    e.cert_expires_before;
		if (outcome_cert_within(&d, &e, NOW_MS) != c->within)
			fail_msg("%s: within %d", c->name, !c->within);
		ev = NULL;
		n = 0;
		outcome_domain_events(&d, NOW_MS, 0, &ev, &n);
		if ((size_t)c->event != n ||
		    (n == 1 && (ev[0].kind != EVT_CERT_EXPIRING ||
		    ev[0].ep != &e)))
			fail_msg("%s: %zu events, want %d", c->name, n,
			    c->event);
		assert_int_equal(outcome_cert_entering(&d, &e, NOW_MS),
		    c->event);
		free(ev);
	}
}

/* Made, filled, sealed and read as run.c and the outputs do. */
static void
test_iteration(void **state)
{
	struct endpoint_cfg	 ec[2];
	struct domain_cfg	 dc[2];
	struct outcome		*o;
	struct outcome_domain	*d;
	size_t			 i;

	(void)state;
	memset(ec, 0, sizeof(ec));
	memset(dc, 0, sizeof(dc));
	dc[0].name = "a.example";
	dc[0].eps = ec;
	dc[0].neps = 2;
	dc[1].name = "b.example";
	dc[1].eps = ec;
	dc[1].neps = 1;
	o = outcome_create(OUTCOME_RUN, 5000, 2);
	for (i = 0; i < 2; i++) {
		d = outcome_fill(o, i, &dc[i]);
		assert_int_equal(d->neps, dc[i].neps);
		d->eps[0].cfg = &ec[0];
		d->eps[0].check.counted = 1;
		d->eps[0].removed = 1;	/* both lose their first endpoint */
		assert_int_equal(addrset_add(&d->published, "192.0.2.1"), 0);
	}
	outcome_domain(o, 0)->eps[0].has_state = 1;
	outcome_domain(o, 1)->eps[0].has_state = 1;
	outcome_domain(o, 1)->eps[0].removed_before = 1; /* b already had */
	outcome_control_fill(o)->failed = 0;
	outcome_seal(o);
	outcome_seal(o);	/* once only */
	assert_int_equal(outcome_kind(o), OUTCOME_RUN);
	assert_int_equal(outcome_time(o), 5000);
	assert_int_equal(outcome_last_run(o), 5000);
	assert_int_equal(outcome_ndomains(o), 2);
	assert_null(outcome_domain(o, 2));
	/* a: all_unhealthy, endpoint_down; b: all_unhealthy. */
	assert_int_equal(outcome_nevents(o), 3);
	assert_int_equal(outcome_event(o, 0)->kind, EVT_ALL_UNHEALTHY);
	assert_ptr_equal(outcome_event(o, 0)->domain, outcome_domain(o, 0));
	assert_int_equal(outcome_event(o, 1)->kind, EVT_ENDPOINT_DOWN);
	assert_ptr_equal(outcome_event(o, 1)->ep, &outcome_domain(o, 0)->eps[0]);
	assert_int_equal(outcome_event(o, 2)->kind, EVT_ALL_UNHEALTHY);
	assert_ptr_equal(outcome_event(o, 2)->domain, outcome_domain(o, 1));
	assert_null(outcome_event(o, 3));
	outcome_free(o);

	/* --status reports the stored state: nothing happened, no event. */
	o = outcome_create(OUTCOME_STATUS, 9000, 1);
	outcome_set_last_run(o, 4000);
	d = outcome_fill(o, 0, &dc[1]);
	d->eps[0].check.counted = 1;
	d->eps[0].removed = 1;
	outcome_seal(o);
	assert_int_equal(outcome_nevents(o), 0);
	assert_int_equal(outcome_last_run(o), 4000);
	outcome_free(o);
}

/*
 * recheck: the failed checks before the last are the outcome's when the
 * decision counted them (one checker), and the outcome frees them.
 */
static void
test_repeats(void **state)
{
	struct outcome		*o = outcome_create(OUTCOME_RUN, 1000, 0);
	struct outcome_ep	 oe;
	struct dec_ep		 de;
	struct check_res	 res, *b1, *b2;

	(void)state;
	check_res_init(&res);
	b1 = xcalloc(1, sizeof(*b1));
	b2 = xcalloc(1, sizeof(*b2));
	check_res_reason(b1, "HTTP %d", 503);
	check_res_text(b2, "timeout");
	b2->before = b1;		/* latest first: b1 came first */
	res.before = b2;
	res.ok = 1;
	check_res_text(&res, "ok");
	memset(&de, 0, sizeof(de));
	de.result = CR_PASS;
	de.counted = 1;
	de.failed_before = 2;
	memset(&oe, 0, sizeof(oe));
	oe.check.done = 1;
	outcome_ep_settle(&oe, &de, &res, NULL, 1000);
	assert_ptr_equal(oe.check.before, b2);
	assert_string_equal(oe.check.before->before->reason, "HTTP 503");
	assert_true(oe.check.ok);

	/* A fleet's round counted one result: no repeat in the outcome. */
	de.failed_before = 0;
	memset(&oe, 0, sizeof(oe));
	oe.check.done = 1;
	outcome_ep_settle(&oe, &de, &res, NULL, 1000);
	assert_null(oe.check.before);

	/* Handed over, freed with the outcome (valgrind and ASan see it). */
	outcome_keep_checks(o, res.before);
	res.before = NULL;
	check_res_free(&res);
	outcome_free(o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_cert_events),
		cmocka_unit_test(test_iteration),
		cmocka_unit_test(test_repeats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
