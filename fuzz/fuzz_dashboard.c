/*
 * dashboard_render_day() with outside text everywhere it shows some: the
 * input, cut at '\n', gives an endpoint's name, location and last
 * result, a domain's name, provider, error and CNAME, the controlUrl
 * and its result, and a change's domain, sets and error; the last day
 * (a streak of the endpoint, a change of the domain with those sets)
 * is drawn too.  Invariants:
 * no input becomes markup (the page has as many '<', '>', '"', '\'' and
 * '&' outside entities as the same page with every text "x", empty
 * or "ok" as it was), and the
 * page is printable UTF-8 lines (text_printable() leaves each alone).
 */

#include "config.h"
#include "dashboard.h"
#include "decide.h"
#include "fuzz.h"
#include "outcome.h"
#include "state.h"
#include "status.h"
#include "util.h"

#define NFIELDS	13

/* The page of r with the day tl, malloc'd. */
static char *
page(const struct report *r, const struct st_timeline *tl)
{
	char	*buf = NULL;
	size_t	 len = 0;
	FILE	*f = open_memstream(&buf, &len);

	fuzz_check(f != NULL, "open_memstream", NULL);
	fuzz_check(dashboard_render_day(f, r, tl) == 0, "render failed", NULL);
	fclose(f);
	return buf;
}

/* Markup characters, with '&' only where it does not start an entity. */
static void
markup(const char *s, size_t n[5])
{
	memset(n, 0, 5 * sizeof(n[0]));
	for (; *s != '\0'; s++) {
		if (*s == '<')
			n[0]++;
		else if (*s == '>')
			n[1]++;
		else if (*s == '"')
			n[2]++;
		else if (*s == '\'')
			n[3]++;
		else if (*s == '&' && strncmp(s, "&amp;", 5) != 0 &&
		    strncmp(s, "&lt;", 4) != 0 && strncmp(s, "&gt;", 4) != 0 &&
		    strncmp(s, "&quot;", 6) != 0 && strncmp(s, "&#39;", 5) != 0)
			n[4]++;
	}
}

/* Fills r and the day tl (of g and m) from f[0..NFIELDS-1]. */
static void
fill(struct report *r, struct report_domain *d, struct endpoint_cfg *ec,
    struct outcome_ep *e, struct st_change *c, struct st_timeline *tl,
    struct st_tl_seg *g, struct st_tl_mark *m, char **f)
{
	memset(r, 0, sizeof(*r));
	memset(d, 0, sizeof(*d));
	memset(ec, 0, sizeof(*ec));
	memset(e, 0, sizeof(*e));
	memset(c, 0, sizeof(*c));
	ec->name = f[0];
	ec->location = f[1];
	ec->ip.family = 4;
	strcpy(ec->ip.s, "192.0.2.1");
	e->cfg = ec;
	e->last_result = f[2];
	e->state = EP_RECOVERING;
	e->passes = 1;
	e->last_check = 1;
	d->name = f[3];
	d->provider = f[4];
	d->last_error = f[5];
	d->published_cname = f[6];
	d->located = 1;
	d->has_tier = 1;
	d->tier_location = f[1];
	d->status = DOM_WARNING;
	d->recover_after = 2;
	d->eps = e;
	d->neps = 1;
	r->control_url = f[7];
	r->control_result = f[8];
	r->control_since = 1;
	c->domain = f[9];
	c->type = "A";
	c->old_set = f[10];
	c->new_set = f[11];
	c->error = f[12];
	c->tier = -1;
	r->changes = c;
	r->nchanges = 1;
	r->generated = 1764498356000LL;
	r->interval_ms = 30000;
	r->domains = d;
	r->ndomains = 1;
	memset(g, 0, sizeof(*g));
	memset(m, 0, sizeof(*m));
	g->domain = f[3];
	g->endpoint = f[0];
	g->kind = ST_TL_FAIL;
	g->from = r->generated - 3600000;
	g->to = r->generated - 60000;
	m->domain = f[3];
	m->type = "A";
	m->when = r->generated - 1800000;
	m->old_set = f[10];
	m->new_set = f[11];
	tl->segs = g;
	tl->nsegs = 1;
	tl->marks = m;
	tl->nmarks = 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report		 r;
	struct report_domain	 d;
	struct endpoint_cfg	 ec;
	struct outcome_ep	 e;
	struct st_change	 c;
	struct st_timeline	 tl;
	struct st_tl_seg	 g;
	struct st_tl_mark	 m;
	char			*s, *f[NFIELDS], *x[NFIELDS], *p, *got, *want;
	char			*line, *copy;
	size_t			 i, ng[5], nw[5];

	s = fuzz_cstr(data, size);
	for (i = 0, p = s; i < NFIELDS; i++) {
		f[i] = p;
		if ((p = strchr(p, '\n')) != NULL)
			*p++ = '\0';
		else
			p = "";
		/* The same page but for the texts: empty, "ok" and others
		   are shown differently (none, no error colour, the text). */
		x[i] = f[i][0] == '\0' ? "" : strcmp(f[i], "ok") == 0 ? "ok" :
		    "x";
	}
	fill(&r, &d, &ec, &e, &c, &tl, &g, &m, f);
	got = page(&r, &tl);
	fill(&r, &d, &ec, &e, &c, &tl, &g, &m, x);
	want = page(&r, &tl);
	markup(got, ng);
	markup(want, nw);
	fuzz_check(memcmp(ng, nw, sizeof(ng)) == 0, "input became markup", s);
	for (line = got; line != NULL && *line != '\0'; ) {
		p = strchr(line, '\n');
		if (p != NULL)
			*p = '\0';
		copy = xstrdup(line);
		text_printable(copy);
		fuzz_check(strcmp(copy, line) == 0, "a line is not printable",
		    line);
		free(copy);
		line = p != NULL ? p + 1 : NULL;
	}
	free(got);
	free(want);
	free(s);
	return 0;
}
