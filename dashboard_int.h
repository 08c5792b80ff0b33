#ifndef DDUP_DASHBOARD_INT_H
#define DDUP_DASHBOARD_INT_H

/*
 * Private to dashboard.c and dashboard_timeline.c (and the unit tests):
 * the page's escaping, and the drawing of a domain's last day.
 */

#include <stdio.h>

struct report_domain;
struct st_timeline;

/* The window the page draws: the 24 hours before it was written. */
#define DASH_DAY_MS	(24LL * 3600 * 1000)

/* Writes s HTML-escaped (for text and for quoted attributes), printable. */
void	 dash_text(FILE *f, const char *s);

/*
 * Domain d's last 24 hours up to end (ms) from tl, for runs every
 * interval_ms: its uptime, then one inline <svg> with a row of
 * segments per endpoint (pass, fail, void, drained), the DNS changes as
 * marks and the hour ticks.  Only the page's CSS classes colour it
 * (dash_timeline_style, in the page's style block).
 */
void	 dash_timeline(FILE *f, const struct report_domain *d,
	    const struct st_timeline *tl, long long end, long long interval_ms);
extern const char dash_timeline_style[];

#endif
