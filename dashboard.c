/*
 * The statusHtml page: the same report as --status, plus the last DNS
 * changes, as one HTML file that needs nothing but itself.  Written
 * after every run (run.c decides when), atomically, so a web server
 * never serves half a page.
 *
 * Layout: a header (when written, the stale warning), the counts of
 * domains by status, one section per domain (its settings, its last 24
 * hours drawn by dashboard_timeline.c, then a table of its endpoints)
 * and a table of the last changes.  Narrow screens
 * get each table row as a card with its labels; wide ones a table that
 * scrolls sideways if it must.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "check.h"
#include "config.h"
#include "dashboard.h"
#include "dashboard_int.h"
#include "decide.h"
#include "log.h"
#include "outcome.h"
#include "state.h"
#include "util.h"

/*
 * The stale warning.  A static page cannot know "now" and the browser's
 * refresh reloads the same file when the scheduler has stopped, so a
 * script compares the clock with the time in data-stale-at (three
 * intervals after the page was written) and shows the warning.  The
 * script is constant: the policy names its hash, and nothing else (no
 * request, no other script) is allowed.  Without scripts the page says
 * in words when it goes stale.
 */
static const char stale_script[] =
    "(function(){var b=document.body,w=document.getElementById('stale');"
    "function f(){if(Date.now()>Number(b.getAttribute('data-stale-at')))"
    "{w.hidden=false;b.className+=' is-stale';}}"
    "f();setInterval(f,5000);})();";

static const char style[] =
    ":root{color-scheme:light dark;--bg:#f6f7f9;--fg:#1b1f24;--muted:#5b6470;"
    "--card:#fff;--line:#d9dde3;--ok:#17723a;--ok-bg:#e3f4e8;--warn:#8a5a00;"
    "--warn-bg:#fdf1d6;--bad:#b3261e;--bad-bg:#fbe4e2;--unk:#5b6470;"
    "--unk-bg:#eceef1}\n"
    "@media (prefers-color-scheme:dark){:root{--bg:#111418;--fg:#e6e9ed;"
    "--muted:#9aa3ad;--card:#1b2027;--line:#323a44;--ok:#6fd68f;"
    "--ok-bg:#17331f;--warn:#f2c14e;--warn-bg:#3a2e10;--bad:#ff8a80;"
    "--bad-bg:#441a17;--unk:#9aa3ad;--unk-bg:#262c34}}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;padding:1rem;background:var(--bg);color:var(--fg);"
    "font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}\n"
    "main{max-width:80rem;margin:0 auto}\n"
    "h1{font-size:1.4rem;margin:0 0 .25rem}\n"
    "h2{font-size:1.15rem;margin:0 0 .5rem;overflow-wrap:anywhere}\n"
    "p{margin:.25rem 0}\n"
    ".muted{color:var(--muted)}\n"
    "code{font:.9em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;"
    "overflow-wrap:anywhere}\n"
    ".banner{border-radius:.5rem;padding:.6rem .8rem;margin:.75rem 0;"
    "font-weight:600;background:var(--bad-bg);color:var(--bad);"
    "border:1px solid var(--bad)}\n"
    ".banner.warn{background:var(--warn-bg);color:var(--warn);"
    "border-color:var(--warn)}\n"
    ".counts{display:flex;flex-wrap:wrap;gap:.5rem;margin:1rem 0}\n"
    ".count{flex:1 1 6rem;border-radius:.5rem;padding:.6rem .8rem;"
    "border:1px solid var(--line);background:var(--card)}\n"
    ".count b{display:block;font-size:1.8rem;line-height:1.1}\n"
    ".card{background:var(--card);border:1px solid var(--line);"
    "border-radius:.6rem;padding:.9rem;margin:1rem 0}\n"
    ".badge{display:inline-block;border-radius:1rem;padding:0 .55rem;"
    "font-size:.85rem;font-weight:600;vertical-align:.1em;"
    "white-space:nowrap}\n"
    ".s-healthy,.s-active{color:var(--ok)}\n"
    ".s-warning,.s-failing,.s-recovering,.s-drained{color:var(--warn)}\n"
    ".s-unhealthy,.s-down{color:var(--bad)}\n"
    ".s-unknown{color:var(--unk)}\n"
    ".badge.s-healthy,.badge.s-active{background:var(--ok-bg)}\n"
    ".badge.s-warning,.badge.s-failing,.badge.s-recovering,"
    ".badge.s-drained{background:var(--warn-bg)}\n"
    ".badge.s-standby{background:var(--unk-bg);color:var(--fg)}\n"
    ".badge.s-unhealthy,.badge.s-down{background:var(--bad-bg)}\n"
    ".badge.s-unknown{background:var(--unk-bg)}\n"
    "dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;"
    "margin:.5rem 0 .9rem}\n"
    "dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}\n"
    ".err{color:var(--bad)}\n"
    ".scroll{overflow-x:auto}\n"
    "table{border-collapse:collapse;width:100%}\n"
    "th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid "
    "var(--line);vertical-align:top}\n"
    "th{color:var(--muted);font-weight:600;white-space:nowrap}\n"
    "td.num{text-align:right;white-space:nowrap}\n"
    "td{overflow-wrap:anywhere}\n"
    "@media (max-width:720px){body{padding:.6rem}"
    "table,thead,tbody,tr,th,td{display:block}"
    "thead{position:absolute;left:-9999px}"
    "tr{border:1px solid var(--line);border-radius:.5rem;margin:.5rem 0;"
    "padding:.3rem .5rem}"
    "td{border:0;position:relative;padding:.15rem 0 .15rem 7.5rem;"
    "min-height:1.7em}"
    "td.num{text-align:left}"
    "td::before{content:attr(data-label);color:var(--muted);"
    "position:absolute;left:0;width:7rem}}\n"
    ".is-stale .counts,.is-stale .card{opacity:.6}\n";

/* A time as a <time> element; "never" for 0 (before 1970 is a time). */
static void
put_time(FILE *f, long long ms)
{
	char buf[32];

	if (ms == 0) {
		fputs("<span class=\"muted\">never</span>", f);
		return;
	}
	iso_time(ms, buf, sizeof(buf));
	fprintf(f, "<time datetime=\"%s\">%s</time>", buf, buf);
}

/* "1h 30m", "90s", "500ms": a duration for people. */
static void
fmt_duration(long long ms, char *buf, size_t len)
{
	if (ms % 1000 != 0)
		snprintf(buf, len, "%lld ms", ms);
	else if (ms % 3600000 == 0)
		snprintf(buf, len, "%lld h", ms / 3600000);
	else if (ms % 60000 == 0)
		snprintf(buf, len, "%lld min", ms / 60000);
	else
		snprintf(buf, len, "%lld s", ms / 1000);
}

/* The base64 SHA-256 of the script, as the policy names it. */
static int
script_hash(char *out, size_t len)
{
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen = 0;

	/* 32 bytes give 44 characters of base64 and a NUL. */
	if (len < 45 || EVP_Digest(stale_script, strlen(stale_script), md,
	    &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32)
		return -1;
	EVP_EncodeBlock((unsigned char *)out, md, (int)mdlen);
	return 0;
}

/* The streak as people count it: "2/3 passes" while recovering. */
static void
fmt_streak(const struct report_domain *d, const struct outcome_ep *e,
    char *buf, size_t len)
{
	if (e->state == EP_UNKNOWN)
		snprintf(buf, len, "-");
	else if (e->state == EP_RECOVERING)
		snprintf(buf, len, "%ld/%ld passes", e->passes,
		    d->recover_after);
	else if (e->state == EP_FAILING)
		snprintf(buf, len, "%ld/%ld failures", e->failures,
		    d->attempts);
	else if (e->failures > 0)
		snprintf(buf, len, "%ld failure%s", e->failures,
		    e->failures == 1 ? "" : "s");
	else
		snprintf(buf, len, "%ld pass%s", e->passes,
		    e->passes == 1 ? "" : "es");
}

static void
put_head(FILE *f, const struct report *r, const char *hash, long refresh_s)
{
	size_t	 i, n[4] = { 0, 0, 0, 0 };

	for (i = 0; i < r->ndomains; i++)
		if (r->domains[i].status >= 0 && r->domains[i].status < 4)
			n[r->domains[i].status]++;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	    "<meta charset=\"utf-8\">\n"
	    "<meta name=\"viewport\" content=\"width=device-width, "
	    "initial-scale=1\">\n"
	    "<meta name=\"color-scheme\" content=\"light dark\">\n", f);
	fprintf(f, "<meta http-equiv=\"Content-Security-Policy\" content=\""
	    "default-src 'none'; style-src 'unsafe-inline'; script-src "
	    "'sha256-%s'; img-src 'none'; base-uri 'none'; form-action "
	    "'none'\">\n", hash);
	fprintf(f, "<meta http-equiv=\"refresh\" content=\"%ld\">\n",
	    refresh_s);
	fprintf(f, "<title>ddup: %zu unhealthy, %zu warning, %zu healthy"
	    "</title>\n", n[DOM_UNHEALTHY], n[DOM_WARNING], n[DOM_HEALTHY]);
	fprintf(f, "<style>\n%s%s</style>\n</head>\n", style,
	    dash_timeline_style);
}

static void
put_header(FILE *f, const struct report *r)
{
	char		 stale[32], every[32];
	long long	 stale_at = r->generated + 3 * r->interval_ms;
	size_t		 i, n[4] = { 0, 0, 0, 0 };
	static const char *const label[4] = {
		[DOM_UNKNOWN] = "unknown", [DOM_HEALTHY] = "healthy",
		[DOM_WARNING] = "warning", [DOM_UNHEALTHY] = "unhealthy",
	};
	static const int order[] = { DOM_HEALTHY, DOM_WARNING, DOM_UNHEALTHY };

	for (i = 0; i < r->ndomains; i++)
		if (r->domains[i].status >= 0 && r->domains[i].status < 4)
			n[r->domains[i].status]++;
	iso_time(stale_at, stale, sizeof(stale));
	fmt_duration(r->interval_ms, every, sizeof(every));
	fprintf(f, "<body data-stale-at=\"%lld\">\n<main>\n<header>\n"
	    "<h1>ddup</h1>\n<p>Written ", stale_at);
	put_time(f, r->generated);
	fprintf(f, " (UTC) after a run; reloads every %s.</p>\n", every);
	fprintf(f, "<p id=\"stale\" class=\"banner\" hidden>Stale: this page "
	    "was written more than three intervals ago (it should be "
	    "rewritten every %s). Is the scheduler running?</p>\n", every);
	fprintf(f, "<noscript><p class=\"muted\">If it is later than "
	    "<time datetime=\"%s\">%s</time> (UTC), this page is stale: the "
	    "scheduler has stopped.</p></noscript>\n", stale, stale);
	if (r->control_url != NULL && r->control_since != 0) {
		fputs("<p class=\"banner warn\">controlUrl <code>", f);
		dash_text(f, r->control_url);
		fputs("</code> has failed since ", f);
		put_time(f, r->control_since);
		fputs(" (", f);
		dash_text(f, r->control_result != NULL ? r->control_result :
		    "?");
		fputs("): this checker's own network is blamed; no failure is "
		    "counted and DNS is not changed.</p>\n", f);
	}
	fputs("</header>\n<section class=\"counts\" aria-label=\"domains\">\n",
	    f);
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		fprintf(f, "<div class=\"count s-%s\"><b>%zu</b>%s</div>\n",
		    label[order[i]], n[order[i]], label[order[i]]);
	if (n[DOM_UNKNOWN] > 0)
		fprintf(f, "<div class=\"count s-unknown\"><b>%zu</b>unknown "
		    "(not run yet)</div>\n", n[DOM_UNKNOWN]);
	fputs("</section>\n", f);
}

/* A <td> with its label, for the narrow layout's cards. */
static void
td_open(FILE *f, const char *label, const char *cls)
{
	fprintf(f, "<td data-label=\"%s\"%s%s%s>", label,
	    cls != NULL ? " class=\"" : "", cls != NULL ? cls : "",
	    cls != NULL ? "\"" : "");
}

/* A cell of outside text, or a muted "-" when there is none. */
static void
td_text(FILE *f, const char *label, const char *cls, const char *text)
{
	td_open(f, label, cls);
	if (text != NULL)
		dash_text(f, text);
	else
		fputs("<span class=\"muted\">-</span>", f);
	fputs("</td>", f);
}

/*
 * When its certificate expires (ddup.ini(5), certWarn), marked as a
 * warning within certWarn of now; "-" for a check that sees none.
 */
static void
put_cert(FILE *f, const struct report_domain *d, const struct outcome_ep *e,
    long long now)
{
	int near = d->cert_warn_ms > 0 && e->cert_expires != 0 &&
	    e->cert_expires * 1000 - now < d->cert_warn_ms;

	td_open(f, "Certificate", near ? "s-warning" : NULL);
	if (!(check_takes(e->cfg->url) & CHECK_TAKES_CERT))
		fputs("<span class=\"muted\">-</span>", f);
	else if (e->cert_expires == 0)
		fputs("<span class=\"muted\">not seen</span>", f);
	else {
		put_time(f, e->cert_expires * 1000);
		if (near)
			fputs(" (within certWarn)", f);
	}
	fputs("</td>", f);
}

static void
put_endpoint(FILE *f, const struct report_domain *d,
    const struct outcome_ep *e, int located, int certs, long long now)
{
	const char	*st = ep_state_str(e->state);
	char		 buf[64];

	fprintf(f, "<tr data-state=\"%s\">", st);
	td_text(f, "Endpoint", NULL, e->cfg->name);
	td_open(f, "Address", NULL);
	fputs("<code>", f);
	dash_text(f, outcome_ep_ip(e) != NULL ? outcome_ep_ip(e) : e->cfg->cname);
	fputs("</code></td>", f);
	td_open(f, "Priority", "num");
	fprintf(f, "%ld</td>", e->cfg->priority);
	if (located)
		td_text(f, "Location", NULL, e->cfg->location);
	td_open(f, "State", NULL);
	fprintf(f, "<span class=\"badge s-%s\">%s</span>%s", st, st,
	    e->published ? " <span class=\"muted\">in DNS</span>" : "");
	if (e->drained && e->drained_until != 0) {
		fputs(" <span class=\"muted\">until ", f);
		put_time(f, e->drained_until);
		fputs("</span>", f);
	} else if (e->drained)
		fputs(" <span class=\"muted\">until --undrain</span>", f);
	fputs("</td>", f);
	fmt_streak(d, e, buf, sizeof(buf));
	td_open(f, "Streak", NULL);
	fprintf(f, "%s</td>", buf);
	td_text(f, "Last result", e->last_result != NULL &&
	    strcmp(e->last_result, "ok") != 0 ? "err" : NULL, e->last_result);
	td_open(f, "Latency", "num");
	if (e->latency_ms >= 0)
		fprintf(f, "%ld ms</td>", e->latency_ms);
	else
		fputs("<span class=\"muted\">-</span></td>", f);
	if (certs)
		put_cert(f, d, e, now);
	td_open(f, "Last check", NULL);
	put_time(f, e->last_check);
	fputs("</td></tr>\n", f);
}

static void
put_domain(FILE *f, const struct report *r, const struct report_domain *d,
    const struct st_timeline *tl)
{
	long long	 now = r->generated;
	const char	*st = dom_status_str(d->status);
	size_t		 i;
	int		 located = 0, certs = 0;

	for (i = 0; i < d->neps; i++) {
		if (d->eps[i].cfg->location != NULL)
			located = 1;
		if (check_takes(d->eps[i].cfg->url) & CHECK_TAKES_CERT)
			certs = 1;
	}
	fprintf(f, "<section class=\"card\">\n<h2><span class=\"badge s-%s\">"
	    "%s</span> ", st, st);
	dash_text(f, d->name);
	fputs("</h2>\n<dl>\n<dt>Provider</dt><dd>", f);
	dash_text(f, d->provider);
	fprintf(f, "</dd>\n<dt>TTL</dt><dd>%ld s</dd>\n<dt>Published</dt><dd>",
	    d->ttl);
	if (d->published.n == 0 && d->published_cname == NULL)
		fputs("<span class=\"muted\">nothing</span>", f);
	for (i = 0; i < d->published.n; i++)
		fprintf(f, "%s<code>%s</code>", i > 0 ? " " : "",
		    d->published.v[i].s);
	if (d->published_cname != NULL) {
		fputs(d->published.n > 0 ? " <code>" : "<code>", f);
		dash_text(f, d->published_cname);
		fputs("</code>", f);
	}
	fputs("</dd>\n<dt>Tier</dt><dd>", f);
	if (d->fallback)
		fputs("fallback <span class=\"s-unhealthy\">(no endpoint is "
		    "healthy)</span>", f);
	else if (!d->has_tier)
		fputs("<span class=\"muted\">none</span>", f);
	else {
		fprintf(f, "priority %ld", d->tier);
		if (d->located && d->tier_location != NULL) {
			fputs(", location ", f);
			dash_text(f, d->tier_location);
		} else if (d->located)
			fputs(", other locations", f);
	}
	if (d->waiting)
		fprintf(f, " <span class=\"s-warning\">(a better tier, "
		    "priority %ld, is healthy: waiting for --failback)</span>",
		    d->best_tier);
	fputs("</dd>\n<dt>Last change</dt><dd>", f);
	put_time(f, d->last_change);
	fputs("</dd>\n<dt>Last error</dt><dd", f);
	if (d->last_error != NULL) {
		fputs(" class=\"err\">", f);
		dash_text(f, d->last_error);
	} else
		fputs("><span class=\"muted\">none</span>", f);
	fputs("</dd>\n</dl>\n", f);
	if (tl != NULL)
		dash_timeline(f, d, tl, r->generated, r->interval_ms);
	fputs("<div class=\"scroll\"><table>\n<thead><tr>"
	    "<th>Endpoint</th><th>Address</th><th>Priority</th>", f);
	if (located)
		fputs("<th>Location</th>", f);
	fputs("<th>State</th><th>Streak</th><th>Last result</th>"
	    "<th>Latency</th>", f);
	if (certs)
		fputs("<th>Certificate</th>", f);
	fputs("<th>Last check</th></tr></thead>\n<tbody>\n", f);
	for (i = 0; i < d->neps; i++)
		put_endpoint(f, d, &d->eps[i], located, certs, now);
	fputs("</tbody></table></div>\n</section>\n", f);
}

/* A space-separated set as <code> words; "none" when empty. */
static void
put_set(FILE *f, const char *set)
{
	if (set == NULL || set[0] == '\0') {
		fputs("<span class=\"muted\">none</span>", f);
		return;
	}
	fputs("<code>", f);
	dash_text(f, set);
	fputs("</code>", f);
}

static void
put_changes(FILE *f, const struct report *r)
{
	size_t i;

	fprintf(f, "<section class=\"card\">\n<h2>Last DNS changes</h2>\n");
	if (r->nchanges == 0) {
		fputs("<p class=\"muted\">No DNS change yet.</p>\n</section>\n",
		    f);
		return;
	}
	fputs("<div class=\"scroll\"><table>\n<thead><tr><th>Time</th>"
	    "<th>Domain</th><th>Type</th><th>Old</th><th>New</th><th>Tier</th>"
	    "<th>Result</th></tr></thead>\n<tbody>\n", f);
	for (i = 0; i < r->nchanges && i < DASH_CHANGES; i++) {
		const struct st_change *c = &r->changes[i];

		fputs("<tr>", f);
		td_open(f, "Time", NULL);
		put_time(f, c->when);
		fputs("</td>", f);
		td_text(f, "Domain", NULL, c->domain);
		td_text(f, "Type", NULL, c->type);
		td_open(f, "Old", NULL);
		put_set(f, c->old_set);
		fputs("</td>", f);
		td_open(f, "New", NULL);
		put_set(f, c->new_set);
		fputs("</td>", f);
		td_open(f, "Tier", "num");
		if (c->tier >= 0)
			fprintf(f, "%ld", c->tier);
		else
			fputs("<span class=\"muted\">-</span>", f);
		fputs("</td>", f);
		td_open(f, "Result", c->ok ? "s-healthy" : "err");
		if (c->ok)
			fputs("done", f);
		else {
			fputs("failed: ", f);
			dash_text(f, c->error != NULL ? c->error : "?");
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table></div>\n</section>\n", f);
}

int
dashboard_render(FILE *f, const struct report *r)
{
	return dashboard_render_day(f, r, NULL);
}

int
dashboard_render_day(FILE *f, const struct report *r,
    const struct st_timeline *tl)
{
	char	 hash[64];
	long	 refresh_s;
	size_t	 i;

	if (script_hash(hash, sizeof(hash)) == -1)
		return -1;
	/* Whole seconds, at least one: a refresh of 0 would never stop. */
	refresh_s = (long)((r->interval_ms + 999) / 1000);
	if (refresh_s < 1)
		refresh_s = 1;
	put_head(f, r, hash, refresh_s);
	put_header(f, r);
	for (i = 0; i < r->ndomains; i++)
		put_domain(f, r, &r->domains[i], tl);
	put_changes(f, r);
	fprintf(f, "</main>\n<script>%s</script>\n</body>\n</html>\n",
	    stale_script);
	return ferror(f) ? -1 : 0;
}

static int
write_day(const char *path, const struct report *r,
    const struct st_timeline *tl, char *err, size_t errlen)
{
	FILE	*f;
	char	*buf = NULL;
	size_t	 len = 0;
	int	 rc = -1, bad;

	f = open_memstream(&buf, &len);
	if (f == NULL) {
		snprintf(err, errlen, "statusHtml %s: out of memory", path);
		goto out;
	}
	bad = dashboard_render_day(f, r, tl);
	if (fclose(f) != 0 || bad == -1) {
		snprintf(err, errlen, "statusHtml %s: the page could not be "
		    "built", path);
		goto out;
	}
	/* A web server reads the page and its folder: 0755, 0644. */
	if (make_parent_dirs(path, 0755, err, errlen) == -1 ||
	    write_file_atomic(path, buf, len, 0644, err, errlen) == -1)
		goto out;
	rc = 0;
out:
	free(buf);
	return rc;
}

int
dashboard_write(const char *path, const struct report *r, char *err,
    size_t errlen)
{
	return write_day(path, r, NULL, err, errlen);
}

int
dashboard_write_outcome(const char *path, const struct outcome *o,
    struct state *st, long long interval_ms, const struct st_change *changes,
    size_t n, char *err, size_t errlen)
{
	struct report		 rep;
	struct st_timeline	 tl;
	char			 rerr[768];
	int			 rc, read;

	report_from_outcome(&rep, o, interval_ms);
	rep.changes = changes;
	rep.nchanges = n;
	/*
	 * Two intervals before the window: the streak that ends just
	 * before it says whether the window begins void.  A failed read
	 * is logged, and the page goes without the days.
	 */
	read = state_timeline(st, rep.generated - DASH_DAY_MS -
	    2 * interval_ms, &tl, rerr, sizeof(rerr));
	if (read == -1)
		logx(LOG_ERR, NULL, NULL, "statusHtml %s: %s", path, rerr);
	rc = write_day(path, &rep, read == 0 ? &tl : NULL, err, errlen);
	state_timeline_free(&tl);
	report_free(&rep);
	return rc;
}
