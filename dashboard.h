#ifndef DDUP_DASHBOARD_H
#define DDUP_DASHBOARD_H

/*
 * statusHtml (ddup.ini(5), TOP-LEVEL KEYS): the report of a run as one
 * self-contained HTML page, for a person with a browser.  No file,
 * font or request outside the page: the styles are inline, and the one
 * inline script (allowed by its hash in the page's
 * Content-Security-Policy, nothing else is) only shows the "stale"
 * warning, which a static page cannot know otherwise.  Every text from the configuration, the servers or the
 * state file is made printable and HTML-escaped.
 */

#include <stdio.h>

#include "status.h"

/* How many DNS changes the page shows, newest first. */
#define DASH_CHANGES	20

/*
 * Writes the page of r to f (interval from r->interval_ms, the time it
 * was written from r->generated).  Returns 0, -1 when f failed.
 */
int	 dashboard_render(FILE *f, const struct report *r);

struct st_timeline;

/*
 * Likewise, with each domain's last 24 hours drawn from tl (of
 * state_timeline(); NULL: not drawn).
 */
int	 dashboard_render_day(FILE *f, const struct report *r,
	    const struct st_timeline *tl);

/*
 * Renders r and puts it at path atomically (mode 0644, a missing folder
 * made 0755: a web server may serve it; it holds nothing secret).
 * Returns 0, or -1 with err naming the path and the cause.
 */
int	 dashboard_write(const char *path, const struct report *r, char *err,
	    size_t errlen);

struct outcome;
struct state;

/*
 * The page of a run's outcome o, with the n last DNS changes (newest
 * first, from state_recent_changes()) and the last 24 hours read from
 * st in one state_timeline() (a failed read is logged, and the page
 * written without them), put at path as dashboard_write() does.
 */
int	 dashboard_write_outcome(const char *path, const struct outcome *o,
	    struct state *st, long long interval_ms,
	    const struct st_change *changes, size_t n, char *err,
	    size_t errlen);

#endif
