/*
 * The statusHtml page's last day of a domain (ddup-check(8), statusHtml):
 * per endpoint a row of its streaks, the DNS changes as marks across
 * the rows, the hours, and the domain's uptime.
 *
 * The drawing is an inline <svg> without a viewBox: every x and width
 * is a percentage of the window, every y a pixel, so that the rows
 * stretch to any width (a phone's 390 px as a desktop's) while the text
 * keeps its size and shape, which a stretched viewBox would distort.
 * Colours come from classes of the page's style block, so dark mode and
 * the page's policy hold as they are.  Names go into text and <title>
 * only, escaped as everywhere on the page.
 *
 * What a segment is: a streak of the state (state.h, state_timeline())
 * holds from its first check until the next streak begins, when that
 * comes within a run and a half of its last check; else until a run
 * after its last check, and what follows until the next streak is void,
 * the time no check counted (a controlUrl that failed, a void round of
 * several checkers, no run at all).  The open streak holds to the end of
 * the window.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "dashboard_int.h"
#include "outcome.h"
#include "state.h"
#include "status.h"
#include "util.h"

enum tl_kind { TL_PASS, TL_FAIL, TL_VOID, TL_DRAINED };

static const char *const kind_name[] = {
	[TL_PASS] = "pass", [TL_FAIL] = "fail", [TL_VOID] = "void",
	[TL_DRAINED] = "drained",
};

struct seg {
	int		 kind;	/* enum tl_kind */
	long long	 from, to;	/* ms, within the window */
};

struct segs {
	struct seg	*v;
	size_t		 n, cap;
};

/* The window, [w0, w1], in ms. */
struct win {
	long long	 w0, w1;
};

/* Pixels of a row: its name, its bar, the drained lane below. */
#define TL_TOP		2
#define TL_NAME_Y	12	/* the name's baseline, from the row's top */
#define TL_BAR_Y	17
#define TL_BAR_H	12
#define TL_DRAIN_Y	31
#define TL_DRAIN_H	5
#define TL_ROW_H	42
#define TL_AXIS_H	18
/* The narrowest segment drawn, in % of the window: a run stays visible. */
#define TL_MIN_W	0.15

const char dash_timeline_style[] =
    ".tl{margin:.25rem 0 1rem}\n"
    ".tl h3{font-size:1rem;margin:.6rem 0 .2rem}\n"
    ".tl-svg{display:block;width:100%;overflow:hidden}\n"
    ".tl-svg text{font:12px system-ui,-apple-system,'Segoe UI',Roboto,"
    "sans-serif;fill:var(--muted)}\n"
    ".tl-svg text.tl-name{fill:var(--fg);font-weight:600}\n"
    ".track{fill:var(--unk-bg)}\n"
    ".seg.pass{fill:var(--ok)}.seg.fail{fill:var(--bad)}"
    ".seg.void{fill:var(--unk);fill-opacity:.55}"
    ".seg.drained{fill:var(--warn)}\n"
    ".tick{stroke:var(--line);stroke-width:1}\n"
    ".mark line{stroke:var(--fg);stroke-width:2}"
    ".mark.failed line{stroke:var(--bad);stroke-dasharray:3 2}\n"
    ".tl-key{display:flex;flex-wrap:wrap;gap:.15rem .9rem;"
    "font-size:.85rem;color:var(--muted);margin:.3rem 0 0}\n"
    ".key::before{content:'';display:inline-block;width:.9em;height:.9em;"
    "margin-right:.3em;vertical-align:-.1em;border-radius:2px;"
    "background:var(--ok)}\n"
    ".key.fail::before{background:var(--bad)}"
    ".key.void::before{background:var(--unk);opacity:.55}"
    ".key.drained::before{background:var(--warn)}"
    ".key.mark::before{width:3px;border-radius:0;background:var(--fg)}\n"
    "@media (max-width:720px){.tl-minor{display:none}}\n";

static void
seg_add(struct segs *s, int kind, long long from, long long to,
    const struct win *w)
{
	if (from < w->w0)
		from = w->w0;
	if (to > w->w1)
		to = w->w1;
	if (to <= from)
		return;
	if (s->n == s->cap) {
		s->cap = s->cap * 2 + 16;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n].kind = kind;
	s->v[s->n].from = from;
	s->v[s->n].to = to;
	s->n++;
}

static int
by_from(const void *a, const void *b)
{
	const struct st_tl_seg *x = *(const struct st_tl_seg *const *)a;
	const struct st_tl_seg *y = *(const struct st_tl_seg *const *)b;

	return x->from < y->from ? -1 : x->from > y->from;
}

/*
 * Endpoint ep of domain dom: its streaks as pass, fail and void
 * segments in time order into health, its drains into drained.
 */
static void
ep_segments(const struct st_timeline *tl, const char *dom, const char *ep,
    const struct win *w, long long iv, struct segs *health,
    struct segs *drained)
{
	const struct st_tl_seg	**st;
	const struct st_tl_seg	 *g;
	size_t			  i, n = 0;
	long long		  end, next;

	st = xcalloc(tl->nsegs + 1, sizeof(const struct st_tl_seg *));
	for (i = 0; i < tl->nsegs; i++) {
		g = &tl->segs[i];
		if (strcmp(g->domain, dom) != 0 || strcmp(g->endpoint, ep) != 0)
			continue;
		if (g->kind == ST_TL_DRAIN)
			seg_add(drained, TL_DRAINED, g->from,
			    g->to == 0 || g->to > w->w1 ? w->w1 : g->to, w);
		else
			st[n++] = g;
	}
	qsort(st, n, sizeof(const struct st_tl_seg *), by_from);
	for (i = 0; i < n; i++) {
		g = st[i];
		end = g->open ? w->w1 : g->to + iv;
		next = i + 1 < n ? st[i + 1]->from : w->w1;
		/* A run and a half: the next run came, or was late. */
		if (i + 1 < n && next <= g->to + iv + iv / 2)
			end = next;
		if (end > next && i + 1 < n)
			end = next;
		seg_add(health, g->kind == ST_TL_PASS ? TL_PASS : TL_FAIL,
		    g->from, end, w);
		if (end < next)
			seg_add(health, TL_VOID, end, next, w);
	}
	free(st);
}

/* Whether a segment of s of kind (-1: pass or fail) covers [a, b]. */
static int
covers(const struct segs *s, int kind, long long a, long long b)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if ((kind == -1 ? s->v[i].kind != TL_VOID : s->v[i].kind ==
		    kind) && s->v[i].from <= a && s->v[i].to >= b)
			return 1;
	return 0;
}

static int
ll_cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/*
 * The uptime of the domain: of the time some endpoint's check counted
 * (*known, ms), that in which one of them passed and was not drained
 * (*up).
 */
static void
uptime(const struct segs *health, const struct segs *drained, size_t neps,
    long long *up, long long *known)
{
	long long	*t;
	size_t		 i, j, n = 0, cap = 2;
	int		 k, u;

	*up = *known = 0;
	for (i = 0; i < neps; i++)
		cap += 2 * (health[i].n + drained[i].n);
	t = xcalloc(cap, sizeof(*t));
	for (i = 0; i < neps; i++) {
		for (j = 0; j < health[i].n; j++) {
			t[n++] = health[i].v[j].from;
			t[n++] = health[i].v[j].to;
		}
		for (j = 0; j < drained[i].n; j++) {
			t[n++] = drained[i].v[j].from;
			t[n++] = drained[i].v[j].to;
		}
	}
	qsort(t, n, sizeof(*t), ll_cmp);
	for (j = 0; j + 1 < n; j++) {
		if (t[j] == t[j + 1])
			continue;
		for (i = 0, k = 0, u = 0; i < neps && !u; i++) {
			if (!covers(&health[i], -1, t[j], t[j + 1]))
				continue;
			k = 1;
			u = covers(&health[i], TL_PASS, t[j], t[j + 1]) &&
			    !covers(&drained[i], TL_DRAINED, t[j], t[j + 1]);
		}
		if (k)
			*known += t[j + 1] - t[j];
		if (u)
			*up += t[j + 1] - t[j];
	}
	free(t);
}

static double
pct(const struct win *w, long long t)
{
	return (double)(t - w->w0) * 100.0 / (double)(w->w1 - w->w0);
}

/* "3 h 20 min" of ms. */
static void
fmt_span(long long ms, char *buf, size_t len)
{
	long long min = ms / 60000;

	if (min >= 60)
		snprintf(buf, len, "%lld h %lld min", min / 60, min % 60);
	else if (min > 0)
		snprintf(buf, len, "%lld min", min);
	else
		snprintf(buf, len, "less than a minute");
}

static void
put_uptime(FILE *f, long long up, long long known)
{
	char		 span[48];
	long long	 bp;

	fputs("<p class=\"tl-up\">Uptime ", f);
	if (known <= 0) {
		fputs("<span class=\"muted\">not known: no check counted in "
		    "the last 24 hours</span></p>\n", f);
		return;
	}
	/* Hundredths of a percent, rounded down: 99.999 is not 100. */
	bp = up * 10000 / known;
	fmt_span(known, span, sizeof(span));
	fprintf(f, "<b class=\"tl-pct\">%lld.%02lld %%</b> <span class=\"muted\">"
	    "of the %s with counted checks: the share in which an endpoint "
	    "passed and was not drained</span></p>\n", bp / 100, bp % 100,
	    span);
}

static void
put_seg(FILE *f, const struct seg *s, const struct win *w, int y, int h)
{
	char	 a[32], b[32];
	double	 x = pct(w, s->from), wd = pct(w, s->to) - x;

	if (wd < TL_MIN_W)
		wd = TL_MIN_W;
	iso_time(s->from, a, sizeof(a));
	iso_time(s->to, b, sizeof(b));
	fprintf(f, "<rect class=\"seg %s\" data-kind=\"%s\" data-from=\"%lld\""
	    " data-to=\"%lld\" x=\"%.3f%%\" y=\"%d\" width=\"%.3f%%\""
	    " height=\"%d\"><title>%s %s to %s</title></rect>",
	    kind_name[s->kind], kind_name[s->kind], s->from, s->to, x, y, wd,
	    h, kind_name[s->kind], a, b);
}

/* Whole UTC hours: a tick each, a label each third (each sixth on a phone). */
static void
put_hours(FILE *f, const struct win *w, int bottom)
{
	long long	 h;
	double		 x;
	char		 buf[32];

	for (h = (w->w0 / 3600000 + 1) * 3600000; h < w->w1; h += 3600000) {
		x = pct(w, h);
		fprintf(f, "<line class=\"tick\" x1=\"%.3f%%\" x2=\"%.3f%%\" "
		    "y1=\"%d\" y2=\"%d\"/>", x, x, TL_TOP, bottom);
		if ((h / 3600000) % 3 != 0 || x < 4 || x > 96)
			continue;
		iso_time(h, buf, sizeof(buf));
		fprintf(f, "<text class=\"tl-hour%s\" x=\"%.3f%%\" y=\"%d\" "
		    "text-anchor=\"middle\">%.5s</text>",
		    (h / 3600000) % 6 != 0 ? " tl-minor" : "", x, bottom + 13,
		    buf + 11);
	}
	fputc('\n', f);
}

/*
 * The domain's DNS changes: a group each, of a line over every row's
 * bars (not over the names, which stay readable), with what changed as
 * its <title>.
 */
static void
put_marks(FILE *f, const struct st_timeline *tl, const char *dom,
    const struct win *w, size_t rows)
{
	const struct st_tl_mark	*m;
	size_t			 i, j;
	double			 x;
	int			 y;
	char			 buf[32];

	for (i = 0; i < tl->nmarks; i++) {
		m = &tl->marks[i];
		if (strcmp(m->domain, dom) != 0 || m->when < w->w0 ||
		    m->when > w->w1)
			continue;
		x = pct(w, m->when);
		iso_time(m->when, buf, sizeof(buf));
		fprintf(f, "<g class=\"mark %s\" data-time=\"%lld\"><title>",
		    m->ok ? "ok" : "failed", m->when);
		fprintf(f, "%s %s%s: ", buf, m->ok ? "" : "failed ", m->type);
		dash_text(f, m->old_set[0] != '\0' ? m->old_set : "none");
		fputs(" to ", f);
		dash_text(f, m->new_set[0] != '\0' ? m->new_set : "none");
		fputs("</title>", f);
		for (j = 0; j < rows; j++) {
			y = TL_TOP + (int)j * TL_ROW_H;
			fprintf(f, "<line x1=\"%.3f%%\" x2=\"%.3f%%\" "
			    "y1=\"%d\" y2=\"%d\"/>", x, x, y + TL_BAR_Y - 3,
			    y + TL_DRAIN_Y + TL_DRAIN_H);
		}
		fputs("</g>\n", f);
	}
}

void
dash_timeline(FILE *f, const struct report_domain *d,
    const struct st_timeline *tl, long long end, long long interval_ms)
{
	struct segs	*health, *drained;
	struct win	 w = { end - DASH_DAY_MS, end };
	long long	 up, known;
	size_t		 i, j;
	int		 y, bottom = TL_TOP + (int)d->neps * TL_ROW_H;

	health = xcalloc(d->neps + 1, sizeof(*health));
	drained = xcalloc(d->neps + 1, sizeof(*drained));
	for (i = 0; i < d->neps; i++)
		ep_segments(tl, d->name, d->eps[i].cfg->name, &w,
		    interval_ms > 0 ? interval_ms : 1, &health[i],
		    &drained[i]);
	uptime(health, drained, d->neps, &up, &known);

	fputs("<div class=\"tl\">\n<h3>Last 24 hours</h3>\n", f);
	put_uptime(f, up, known);
	fprintf(f, "<svg class=\"tl-svg\" width=\"100%%\" height=\"%d\" "
	    "role=\"img\" xmlns=\"http://www.w3.org/2000/svg\"><title>",
	    bottom + TL_AXIS_H);
	fputs("The last 24 hours of ", f);
	dash_text(f, d->name);
	fputs("</title>\n", f);
	put_hours(f, &w, bottom);
	for (i = 0; i < d->neps; i++) {
		y = TL_TOP + (int)i * TL_ROW_H;
		fprintf(f, "<g class=\"tl-row\"><rect class=\"track\" x=\"0\" "
		    "y=\"%d\" width=\"100%%\" height=\"%d\"/>", y + TL_BAR_Y,
		    TL_BAR_H);
		for (j = 0; j < health[i].n; j++)
			put_seg(f, &health[i].v[j], &w, y + TL_BAR_Y, TL_BAR_H);
		for (j = 0; j < drained[i].n; j++)
			put_seg(f, &drained[i].v[j], &w, y + TL_DRAIN_Y,
			    TL_DRAIN_H);
		fprintf(f, "<text class=\"tl-name\" x=\"0\" y=\"%d\">",
		    y + TL_NAME_Y);
		dash_text(f, d->eps[i].cfg->name);
		fputs("</text></g>\n", f);
		free(health[i].v);
		free(drained[i].v);
	}
	put_marks(f, tl, d->name, &w, d->neps);
	fputs("</svg>\n<p class=\"tl-key\"><span class=\"key pass\">pass"
	    "</span><span class=\"key fail\">fail</span><span class=\"key "
	    "void\">void: no check counted</span><span class=\"key drained\">"
	    "drained</span><span class=\"key mark\">DNS change</span>"
	    "<span>UTC hours</span></p>\n</div>\n", f);
	free(health);
	free(drained);
}
