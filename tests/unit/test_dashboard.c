/*
 * dashboard.c: the statusHtml page, rendered from reports made here:
 * escaping of every outside text, the page's structure, the policy's
 * script hash, the streaks, and the atomic write.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dashboard.h"
#include "config.h"
#include "decide.h"
#include "outcome.h"
#include "state.h"
#include "status.h"
#include "util.h"

#define T0	1764498356000LL		/* 2025-11-30T10:25:56Z */

/* The page of r, malloc'd. */
static char *
render(const struct report *r)
{
	char	*buf = NULL;
	size_t	 len = 0;
	FILE	*f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(dashboard_render(f, r), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(strlen(buf), len);
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

/* The text between the first a after from and the b after it, malloc'd. */
static char *
between(const char *s, const char *a, const char *b)
{
	const char	*p = strstr(s, a), *q;
	char		*out;

	assert_non_null(p);
	p += strlen(a);
	q = strstr(p, b);
	assert_non_null(q);
	out = xmalloc((size_t)(q - p) + 1);
	memcpy(out, p, (size_t)(q - p));
	out[q - p] = '\0';
	return out;
}

#define EP_CFG(n, last, prio) { .name = n, \
	.url = "http://192.0.2." #last "/", \
	.ip = { .family = 4, .s = "192.0.2." #last }, .priority = prio }

static struct endpoint_cfg cfgs[] = {
	EP_CFG("primary", 1, 0),
	EP_CFG("backup", 2, 10),
	EP_CFG("third", 3, 0),
	EP_CFG("fourth", 4, 10),
	EP_CFG("never", 5, 0),
};

static struct outcome_ep eps[] = {
	{ .cfg = &cfgs[0], .state = EP_DOWN, .failures = 4, .last_check = T0,
	  .last_result = "connection refused", .latency_ms = 3 },
	{ .cfg = &cfgs[1], .state = EP_ACTIVE, .healthy = 1, .published = 1,
	  .passes = 7, .last_check = T0, .last_result = "ok",
	  .latency_ms = 12 },
	{ .cfg = &cfgs[2], .state = EP_RECOVERING, .passes = 2,
	  .last_check = T0, .last_result = "ok", .latency_ms = 5 },
	{ .cfg = &cfgs[3], .state = EP_FAILING, .healthy = 1, .published = 1,
	  .failures = 1, .last_check = T0, .last_result = "HTTP 503",
	  .latency_ms = 9 },
	{ .cfg = &cfgs[4], .state = EP_UNKNOWN, .latency_ms = -1 },
};

/* One domain of each status, with the endpoints above in the first. */
static void
make_report(struct report *r, struct report_domain *d)
{
	memset(r, 0, sizeof(*r));
	memset(d, 0, 3 * sizeof(*d));
	d[0].name = "app.example.test";
	d[0].provider = "bind";
	d[0].ttl = 60;
	d[0].status = DOM_WARNING;
	addrset_add(&d[0].published, "192.0.2.4");
	addrset_add(&d[0].published, "192.0.2.2");
	d[0].has_tier = 1;
	d[0].tier = 10;
	d[0].last_change = T0;
	d[0].attempts = 2;
	d[0].recover_after = 3;
	d[0].eps = eps;
	d[0].neps = sizeof(eps) / sizeof(eps[0]);
	d[1].name = "ok.example.test";
	d[1].provider = "bind";
	d[1].status = DOM_HEALTHY;
	d[1].eps = &eps[1];
	d[1].neps = 1;
	d[2].name = "down.example.test";
	d[2].provider = "bind";
	d[2].status = DOM_UNHEALTHY;
	d[2].eps = &eps[0];
	d[2].neps = 1;
	r->generated = T0;
	r->last_run = T0;
	r->interval_ms = 30000;
	r->domains = d;
	r->ndomains = 3;
}

static void
free_report(struct report_domain *d)
{
	addrset_free(&d[0].published);
}

static void
test_escaping(void **state)
{
	struct report		 r;
	struct report_domain	 d[3];
	struct endpoint_cfg	 ec = cfgs[0];
	struct outcome_ep	 e = eps[0];
	struct st_change	 c = { .when = T0, .domain = "a<b>.test",
	    .type = "A", .old_set = "", .new_set = "<i>", .tier = 0,
	    .ok = 0, .error = "refused: <script>x()</script>" };
	char			*html;

	(void)state;
	make_report(&r, d);
	ec.name = "<script>alert(\"ep\")</script> & 'b'";
	ec.location = "\"><img src=x onerror=alert(1)>";
	e.cfg = &ec;
	e.last_result = "HTTP 503 </td></tr></table>\x1b[2J";
	d[1].eps = &e;
	d[1].name = "x<y>&z";
	d[1].provider = "p\"q'";
	d[1].last_error = "ns1: <b>REFUSED</b>\n\xff";
	r.control_url = "http://c.test/?a=<b>";
	r.control_since = T0;
	r.control_result = "<u>timeout</u>";
	r.changes = &c;
	r.nchanges = 1;
	html = render(&r);
	assert_non_null(strstr(html, "&lt;script&gt;alert(&quot;ep&quot;)"
	    "&lt;/script&gt; &amp; &#39;b&#39;"));
	assert_non_null(strstr(html, "&quot;&gt;&lt;img src=x onerror="
	    "alert(1)&gt;"));
	/* A control character is made printable, then escaped. */
	assert_non_null(strstr(html, "HTTP 503 &lt;/td&gt;&lt;/tr&gt;"
	    "&lt;/table&gt;?[2J"));
	assert_non_null(strstr(html, "x&lt;y&gt;&amp;z"));
	assert_non_null(strstr(html, "p&quot;q&#39;"));
	assert_non_null(strstr(html, "ns1: &lt;b&gt;REFUSED&lt;/b&gt;??"));
	assert_non_null(strstr(html, "http://c.test/?a=&lt;b&gt;"));
	assert_non_null(strstr(html, "&lt;u&gt;timeout&lt;/u&gt;"));
	assert_non_null(strstr(html, "a&lt;b&gt;.test"));
	assert_non_null(strstr(html, "<code>&lt;i&gt;</code>"));
	assert_non_null(strstr(html, "failed: refused: &lt;script&gt;"));
	/* Nothing of it became markup: one script, no image, no stray end. */
	assert_int_equal(count(html, "<script"), 1);
	assert_int_equal(count(html, "<img"), 0);
	assert_int_equal(count(html, "<b>REFUSED"), 0);
	assert_int_equal(count(html, "\x1b"), 0);
	assert_int_equal(count(html, "<tr"), count(html, "</tr>"));
	assert_int_equal(count(html, "<td"), count(html, "</td>"));
	assert_int_equal(count(html, "<table"), count(html, "</table>"));
	free(html);
	free_report(d);
}

static void
test_structure(void **state)
{
	struct report		 r;
	struct report_domain	 d[3];
	char			*html, *title;

	(void)state;
	make_report(&r, d);
	html = render(&r);
	assert_int_equal(strncmp(html, "<!DOCTYPE html>\n<html lang=\"en\">",
	    32), 0);
	assert_int_equal(strcmp(html + strlen(html) - 8, "</html>\n"), 0);
	assert_non_null(strstr(html, "<meta charset=\"utf-8\">"));
	assert_non_null(strstr(html, "name=\"viewport\""));
	assert_non_null(strstr(html, "prefers-color-scheme:dark"));
	assert_non_null(strstr(html, "@media (max-width:720px)"));
	assert_non_null(strstr(html,
	    "<meta http-equiv=\"refresh\" content=\"30\">"));
	/* Nothing from elsewhere: no link, no source, no url(). */
	assert_int_equal(count(html, "<link"), 0);
	assert_int_equal(count(html, "src="), 0);
	assert_int_equal(count(html, "url("), 0);
	assert_int_equal(count(html, "@import"), 0);
	assert_non_null(strstr(html, "default-src 'none'"));
	/* Written at T0, stale three intervals later. */
	assert_non_null(strstr(html, "<time datetime=\"2025-11-30T10:25:56Z\">"
	    "2025-11-30T10:25:56Z</time> (UTC)"));
	assert_non_null(strstr(html, "data-stale-at=\"1764498446000\""));
	assert_non_null(strstr(html, "<noscript><p class=\"muted\">If it is "
	    "later than <time datetime=\"2025-11-30T10:27:26Z\">"));
	assert_non_null(strstr(html, "<p id=\"stale\" class=\"banner\" "
	    "hidden>"));
	/* The counts, in the title too. */
	title = between(html, "<title>", "</title>");
	assert_string_equal(title, "ddup: 1 unhealthy, 1 warning, 1 healthy");
	free(title);
	assert_non_null(strstr(html, "<div class=\"count s-healthy\"><b>1</b>"
	    "healthy</div>\n<div class=\"count s-warning\"><b>1</b>warning"
	    "</div>\n<div class=\"count s-unhealthy\"><b>1</b>unhealthy"
	    "</div>"));
	assert_int_equal(count(html, "s-unknown\"><b>"), 0);
	/* The domain: published set, tier, change, no error. */
	assert_non_null(strstr(html, "<dt>Published</dt><dd><code>192.0.2.2"
	    "</code> <code>192.0.2.4</code></dd>"));
	assert_non_null(strstr(html, "<dt>Tier</dt><dd>priority 10</dd>"));
	assert_non_null(strstr(html, "<dt>TTL</dt><dd>60 s</dd>"));
	assert_non_null(strstr(html, "<dt>Last error</dt><dd><span "
	    "class=\"muted\">none</span>"));
	assert_non_null(strstr(html, "<dt>Published</dt><dd><span "
	    "class=\"muted\">nothing</span>"));
	/* Streaks: against recoverAfter while recovering, attempts failing. */
	assert_non_null(strstr(html, ">2/3 passes</td>"));
	assert_non_null(strstr(html, ">1/2 failures</td>"));
	assert_non_null(strstr(html, ">4 failures</td>"));
	assert_non_null(strstr(html, ">7 passes</td>"));
	assert_non_null(strstr(html, "<td data-label=\"Streak\">-</td>"));
	assert_non_null(strstr(html, "<td data-label=\"Latency\" "
	    "class=\"num\">12 ms</td>"));
	assert_non_null(strstr(html, "<td data-label=\"Last result\" "
	    "class=\"err\">connection refused</td>"));
	assert_non_null(strstr(html, "<span class=\"badge s-active\">active"
	    "</span> <span class=\"muted\">in DNS</span>"));
	/* Drained: until when. */
	assert_null(strstr(html, "until"));
	free(html);
	eps[2].drained = 1;
	eps[2].state = EP_DRAINED;
	eps[3].drained = 1;
	eps[3].drained_until = T0 + 3600000;
	html = render(&r);
	eps[2].drained = eps[3].drained = 0;
	eps[2].state = EP_RECOVERING;
	eps[3].drained_until = 0;
	assert_non_null(strstr(html, "<span class=\"badge s-drained\">drained"
	    "</span> <span class=\"muted\">until --undrain</span></td>"));
	assert_non_null(strstr(html, "<span class=\"muted\">in DNS</span> "
	    "<span class=\"muted\">until <time datetime=\"2025-11-30T11:25:56Z"
	    "\">"));
	/* No location set: no such column. */
	assert_int_equal(count(html, "Location"), 0);
	assert_non_null(strstr(html, "No DNS change yet."));
	assert_int_equal(count(html, "<section class=\"card\">"), 4);
	free(html);

	/* Sub-second intervals reload after a whole second. */
	r.interval_ms = 500;
	html = render(&r);
	assert_non_null(strstr(html, "content=\"1\">"));
	assert_non_null(strstr(html, "reloads every 500 ms"));
	free(html);
	r.interval_ms = 90500;
	html = render(&r);
	assert_non_null(strstr(html, "content=\"91\">"));
	free(html);
	r.interval_ms = 120000;
	html = render(&r);
	assert_non_null(strstr(html, "reloads every 2 min"));
	free(html);
	free_report(d);
}

/* The policy allows the page's own script by hash, and only it. */
static void
test_script_hash(void **state)
{
	struct report		 r;
	struct report_domain	 d[3];
	unsigned char		 md[EVP_MAX_MD_SIZE];
	unsigned int		 mdlen = 0;
	char			*html, *script, *csp, want[128], b64[64];

	(void)state;
	make_report(&r, d);
	html = render(&r);
	script = between(html, "<script>", "</script>");
	csp = between(html, "script-src '", "'");
	assert_int_equal(EVP_Digest(script, strlen(script), md, &mdlen,
	    EVP_sha256(), NULL), 1);
	EVP_EncodeBlock((unsigned char *)b64, md, (int)mdlen);
	snprintf(want, sizeof(want), "sha256-%s", b64);
	assert_string_equal(csp, want);
	/* Constant: no report text inside it. */
	assert_null(strstr(script, "example"));
	free(script);
	free(csp);
	free(html);
	free_report(d);
}

static void
test_locations_and_changes(void **state)
{
	struct report		 r;
	struct report_domain	 d[3];
	struct endpoint_cfg	 ec = cfgs[1];
	struct outcome_ep	 e[2];
	struct st_change	 c[25];
	char			*html, sets[25][16];
	size_t			 i;

	(void)state;
	make_report(&r, d);
	e[0] = eps[1];
	ec.location = "boston";
	e[0].cfg = &ec;
	e[1] = eps[0];
	d[1].eps = e;
	d[1].neps = 2;
	d[1].has_tier = 1;
	d[1].tier = 0;
	d[1].located = 1;
	d[1].tier_location = "boston";
	for (i = 0; i < 25; i++) {
		snprintf(sets[i], sizeof(sets[i]), "192.0.2.%zu", 100 + i);
		c[i] = (struct st_change){ .when = T0 - (long long)i * 1000,
		    .domain = "app.example.test", .type = "A",
		    .old_set = "192.0.2.1", .new_set = sets[i], .tier = -1,
		    .ok = 1 };
	}
	r.changes = c;
	r.nchanges = 25;
	html = render(&r);
	/* One table with a location column; the other endpoint's is empty. */
	assert_int_equal(count(html, "<th>Location</th>"), 1);
	assert_non_null(strstr(html, "<td data-label=\"Location\">boston"
	    "</td>"));
	assert_non_null(strstr(html, "<td data-label=\"Location\"><span "
	    "class=\"muted\">-</span></td>"));
	assert_non_null(strstr(html, "priority 0, location boston"));
	/* The newest 20, in the order given. */
	assert_int_equal(count(html, "<td data-label=\"Time\">"), 20);
	assert_non_null(strstr(html, "192.0.2.119"));
	assert_null(strstr(html, "192.0.2.120"));
	assert_true(strstr(html, "192.0.2.100") < strstr(html, "192.0.2.101"));
	assert_null(strstr(html, "No DNS change yet."));
	assert_non_null(strstr(html, "<td data-label=\"Result\" "
	    "class=\"s-healthy\">done</td>"));
	free(html);
	free_report(d);
}

/*
 * A clock before 1970 or past 9999: the times are shown as they are
 * (a last check that exists is never "never"), five digits and all.
 */
static void
test_odd_clock(void **state)
{
	struct report		 r;
	struct report_domain	 d[3];
	struct outcome_ep	 e[2];
	char			*html;
	size_t			 nevers;

	(void)state;
	make_report(&r, d);
	e[0] = eps[1];
	e[1] = eps[0];
	d[1].eps = e;
	d[1].neps = 2;
	html = render(&r);
	nevers = count(html, "never<");
	free(html);
	e[0].last_check = -14182940000LL;	/* 1969-07-20T20:17:40Z */
	e[1].last_check = 255174710400000LL;	/* 10056-03-01T00:00:00Z */
	r.generated = 255174710400000LL;
	html = render(&r);
	assert_non_null(strstr(html, "<time datetime=\"1969-07-20T20:17:40Z\">"
	    "1969-07-20T20:17:40Z</time>"));
	assert_non_null(strstr(html, "<time datetime=\"10056-03-01T00:00:00Z\">"
	    "10056-03-01T00:00:00Z</time>"));
	/* No "never" more than at T0. */
	assert_int_equal(count(html, "never<"), nevers);
	free(html);
	free_report(d);
}

static void
test_write(void **state)
{
	struct report		 r;
	struct report_domain	 d[3];
	struct stat		 sb;
	char			 dir[] = "/tmp/ddup-dash-XXXXXX", path[64];
	char			 err[512] = "", *html, *want;
	FILE			*f;
	long			 n;

	(void)state;
	make_report(&r, d);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ddup.html", dir);
	assert_int_equal(dashboard_write(path, &r, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0644);
	f = fopen(path, "r");
	assert_non_null(f);
	html = xcalloc(1, (size_t)sb.st_size + 1);
	n = (long)fread(html, 1, (size_t)sb.st_size, f);
	fclose(f);
	assert_int_equal(n, sb.st_size);
	want = render(&r);
	assert_string_equal(html, want);
	free(html);
	free(want);
	unlink(path);
	rmdir(dir);
	/* A folder that is gone is made again, 0755 for a web server. */
	assert_int_equal(dashboard_write(path, &r, err, sizeof(err)), 0);
	assert_int_equal(stat(dir, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0755);
	unlink(path);
	/* A folder at the path: an error naming the path. */
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(dashboard_write(path, &r, err, sizeof(err)), -1);
	assert_non_null(strstr(err, path));
	rmdir(path);
	rmdir(dir);
	free_report(d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_structure),
		cmocka_unit_test(test_script_hash),
		cmocka_unit_test(test_locations_and_changes),
		cmocka_unit_test(test_odd_clock),
		cmocka_unit_test(test_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
