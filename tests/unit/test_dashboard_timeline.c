/*
 * dashboard_timeline.c: a domain's last 24 hours on the statusHtml
 * page, drawn from state_timeline()'s rows made here: the segments of
 * each endpoint (void between streaks that do not follow each other),
 * their place and width on the axis, the clipping to the window, the
 * marks of DNS changes, the uptime, and the escaping of names.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "dashboard_int.h"
#include "outcome.h"
#include "state.h"
#include "status.h"
#include "util.h"

#define END	1764498356000LL		/* 2025-11-30T10:25:56Z */
#define H	3600000LL
#define IV	60000LL			/* the interval: a minute */

static struct endpoint_cfg cfgs[2] = {
	{ .name = "a", .url = "http://192.0.2.1/", .priority = 0 },
	{ .name = "b", .url = "http://192.0.2.2/", .priority = 10 },
};
static struct outcome_ep eps[2] = { { .cfg = &cfgs[0] }, { .cfg = &cfgs[1] } };

static struct st_tl_seg
seg(const char *dom, const char *ep, int kind, int open, long long from,
    long long to)
{
	struct st_tl_seg g = { .domain = (char *)dom, .endpoint = (char *)ep,
	    .kind = kind, .open = open, .from = from, .to = to };

	return g;
}

/* The drawing of domain dom (its endpoints eps) from the rows, malloc'd. */
static char *
draw(const char *dom, struct st_tl_seg *segs, size_t nsegs,
    struct st_tl_mark *marks, size_t nmarks)
{
	struct report_domain	 d;
	struct st_timeline	 tl = { segs, nsegs, marks, nmarks };
	char			*buf = NULL;
	size_t			 len = 0;
	FILE			*f = open_memstream(&buf, &len);

	assert_non_null(f);
	memset(&d, 0, sizeof(d));
	d.name = dom;
	d.eps = eps;
	d.neps = 2;
	dash_timeline(f, &d, &tl, END, IV);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static size_t
count(const char *hay, const char *needle)
{
	size_t n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* Row i's rects as "kind from to" lines, from before its name (malloc'd). */
static char *
row(const char *html, int i)
{
	const char	*p = html, *end;
	char		*out = xcalloc(1, 4096), kind[16];
	long long	 from, to;
	size_t		 n = 0;

	for (; i >= 0; i--) {
		p = strstr(p, "<g class=\"tl-row\">");
		assert_non_null(p);
		p++;
	}
	end = strstr(p, "</g>");
	assert_non_null(end);
	while ((p = strstr(p, "data-kind=\"")) != NULL && p < end) {
		assert_int_equal(sscanf(p, "data-kind=\"%15[a-z]\" data-from="
		    "\"%lld\" data-to=\"%lld\"", kind, &from, &to), 3);
		n += (size_t)snprintf(out + n, 4096 - n, "%s %lld %lld\n", kind,
		    (from - END) / 60000, (to - END) / 60000);
		p++;
	}
	return out;
}

static void
test_segments(void **state)
{
	struct st_tl_seg g[] = {
		seg("d.test", "a", ST_TL_PASS, 0, END - 10 * H, END - 6 * H),
		/* The next run's check failed: no void between them. */
		seg("d.test", "a", ST_TL_FAIL, 0, END - 6 * H + IV, END - 3 * H),
		/* Two hours without a counted check, then passes to the end. */
		seg("d.test", "a", ST_TL_PASS, 1, END - 1 * H, END),
		seg("d.test", "b", ST_TL_PASS, 1, END - 5 * H, END),
		/* Another domain's endpoint of the same name is not drawn. */
		seg("other.test", "a", ST_TL_FAIL, 1, END - 20 * H, END),
	};
	char	*html, *r;

	(void)state;
	html = draw("d.test", g, 5, NULL, 0);
	r = row(html, 0);
	/* Minutes from the end of the window. */
	assert_string_equal(r, "pass -600 -359\n" "fail -359 -179\n"
	    "void -179 -60\n" "pass -60 0\n");
	free(r);
	r = row(html, 1);
	assert_string_equal(r, "pass -300 0\n");
	free(r);
	/* Placed in percent of the day, y in pixels. */
	assert_non_null(strstr(html, "data-from=\"1764462356000\" data-to=\""
	    "1764476816000\" x=\"58.333%\" y=\"19\" width=\"16.736%\""));
	assert_int_equal(count(html, "<svg"), 1);
	assert_int_equal(count(html, "<g class=\"tl-row\">"), 2);
	/* 24 whole hours but the one at the start: ticks; 3-hourly labels. */
	assert_int_equal(count(html, "<line class=\"tick\""), 24);
	assert_non_null(strstr(html, ">09:00</text>"));
	assert_non_null(strstr(html, "class=\"tl-hour tl-minor\""));
	free(html);
}

static void
test_clipping(void **state)
{
	struct st_tl_seg g[] = {
		seg("d.test", "a", ST_TL_PASS, 0, END - 30 * H, END - 20 * H),
		seg("d.test", "a", ST_TL_FAIL, 1, END - 20 * H + IV, END),
		/* Drained since before the window, until --undrain. */
		seg("d.test", "a", ST_TL_DRAIN, 1, END - 26 * H, 0),
		/* A drain that ended before the window: nothing. */
		seg("d.test", "b", ST_TL_DRAIN, 0, END - 30 * H, END - 25 * H),
		/* One in force until after the end: drawn to the end. */
		seg("d.test", "b", ST_TL_DRAIN, 1, END - 2 * H, END + 5 * H),
	};
	struct st_tl_mark m[] = {
		{ "d.test", "A", END - 25 * H, 1, "192.0.2.1", "192.0.2.2" },
		{ "d.test", "A", END - 20 * H, 1, "192.0.2.2", "192.0.2.1" },
		{ "d.test", "AAAA", END - 4 * H, 0, "", "2001:db8::1" },
		{ "other.test", "A", END - 4 * H, 1, "", "192.0.2.9" },
	};
	char	*html, *r;

	(void)state;
	html = draw("d.test", g, 5, m, 4);
	r = row(html, 0);
	assert_string_equal(r, "pass -1440 -1199\n" "fail -1199 0\n"
	    "drained -1440 0\n");
	free(r);
	r = row(html, 1);
	assert_string_equal(r, "drained -120 0\n");
	free(r);
	assert_non_null(strstr(html, "x=\"0.000%\""));
	/* The changes of the window only, of this domain, failed ones apart. */
	assert_int_equal(count(html, "<g class=\"mark "), 2);
	assert_int_equal(count(html, "<g class=\"mark failed\""), 1);
	/* A line over each row's bars, from the same time. */
	assert_int_equal(count(html, "<line x1=\"16.667%\" x2=\"16.667%\""), 2);
	assert_non_null(strstr(html, "failed AAAA: none to 2001:db8::1"));
	assert_null(strstr(html, "192.0.2.9"));
	free(html);
}

static void
test_uptime(void **state)
{
	struct st_tl_seg g[] = {
		seg("d.test", "a", ST_TL_PASS, 0, END - 24 * H, END - 12 * H),
		seg("d.test", "a", ST_TL_FAIL, 1, END - 12 * H, END),
	};
	struct st_tl_seg dr[] = {
		g[0], g[1],
		seg("d.test", "a", ST_TL_DRAIN, 0, END - 18 * H, END - 12 * H),
		/* b passes, but only while a passes undrained: adds nothing. */
		seg("d.test", "b", ST_TL_PASS, 0, END - 22 * H, END - 21 * H),
	};
	struct st_tl_seg v[] = {
		/* Void for 12 hours: not known, so not counted either way. */
		seg("d.test", "a", ST_TL_PASS, 0, END - 24 * H, END - 18 * H),
		seg("d.test", "a", ST_TL_FAIL, 1, END - 6 * H, END),
	};
	char *html;

	(void)state;
	html = draw("d.test", g, 2, NULL, 0);
	assert_non_null(strstr(html, "<b class=\"tl-pct\">50.00 %</b>"));
	assert_non_null(strstr(html, "of the 24 h 0 min with counted checks"));
	free(html);
	html = draw("d.test", dr, 4, NULL, 0);
	assert_non_null(strstr(html, "<b class=\"tl-pct\">25.00 %</b>"));
	free(html);
	/* 6 h 1 min of passes (to a run after the last) of 12 h 1 min. */
	html = draw("d.test", v, 2, NULL, 0);
	assert_non_null(strstr(html, "<b class=\"tl-pct\">50.06 %</b>"));
	assert_non_null(strstr(html, "of the 12 h 1 min"));
	free(html);
	html = draw("d.test", NULL, 0, NULL, 0);
	assert_non_null(strstr(html, "not known: no check counted"));
	assert_null(strstr(html, "data-kind"));
	free(html);
}

static void
test_hostile_names(void **state)
{
	static const char evil[] = "<script>alert(\"x\")</script>&'y'";
	struct endpoint_cfg	 c0 = cfgs[0];
	struct st_tl_seg	 g[] = {
		seg(evil, evil, ST_TL_PASS, 1, END - 3 * H, END),
	};
	struct st_tl_mark	 m[] = {
		{ (char *)evil, "A", END - H, 1, (char *)evil, "<b>" },
	};
	char			*html, *r;

	(void)state;
	c0.name = (char *)evil;
	eps[0].cfg = &c0;
	html = draw(evil, g, 1, m, 1);
	eps[0].cfg = &cfgs[0];
	/* Found by its name all the same, and drawn. */
	r = row(html, 0);
	assert_string_equal(r, "pass -180 0\n");
	free(r);
	assert_null(strstr(html, "<script"));
	assert_null(strstr(html, "<b>"));
	assert_int_equal(count(html, "&lt;script&gt;alert(&quot;x&quot;)"
	    "&lt;/script&gt;&amp;&#39;y&#39;"), 3);
	/* In text and <title> only, never in an attribute. */
	assert_null(strstr(html, "=\"&lt;"));
	assert_non_null(strstr(html, "<text class=\"tl-name\" x=\"0\" "
	    "y=\"14\">&lt;script&gt;"));
	free(html);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_segments),
		cmocka_unit_test(test_clipping),
		cmocka_unit_test(test_uptime),
		cmocka_unit_test(test_hostile_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
