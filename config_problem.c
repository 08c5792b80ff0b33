/*
 * The problems of a configuration file: each error or warning is
 * recorded with the line it names and printed, once the whole file is
 * checked, as "FILE:LINE: message" sorted by line (ddup.ini(5),
 * DESCRIPTION), so that one run shows them all.  The lowest layer of
 * the configuration (config_int.h).
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "config_int.h"
#include "util.h"

void
cfg_problem(struct ctx *x, int line, int warn, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* Binary junk in a file must not reach a terminal as is. */
	text_printable(buf);
	x->msgs = cfg_grow(x->msgs, x->nmsgs, &x->capmsgs, sizeof(*x->msgs));
	x->msgs[x->nmsgs].line = line;
	x->msgs[x->nmsgs].seq = x->nmsgs;
	x->msgs[x->nmsgs].warn = warn;
	x->msgs[x->nmsgs].text = xstrdup(buf);
	x->nmsgs++;
	if (!warn)
		x->nerr++;
}

int
cfg_problem_on(const struct ctx *x, int line)
{
	size_t i;

	for (i = 0; i < x->nmsgs; i++)
		if (x->msgs[i].line == line && !x->msgs[i].warn)
			return 1;
	return 0;
}

/*
 * Doubling keeps a file of many small sections or problems linear.  The
 * counts are bounded by the size of the text (CONFIG_MAX), far from
 * overflowing cap * size.
 */
void *
cfg_grow(void *v, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return v;
	*cap = *cap == 0 ? 8 : *cap * 2;
	return xrealloc(v, *cap * size);
}

static int
msg_cmp(const void *a, const void *b)
{
	const struct msg *m = a, *n = b;

	if (m->line != n->line)
		return m->line < n->line ? -1 : 1;
	return m->seq < n->seq ? -1 : m->seq > n->seq;
}

void
cfg_problems_print(struct ctx *x, FILE *errs, int warnings)
{
	const struct msg *m;
	size_t i;

	if (x->nmsgs > 0)
		qsort(x->msgs, x->nmsgs, sizeof(*x->msgs), msg_cmp);
	for (i = 0; i < x->nmsgs; i++) {
		if (x->msgs[i].warn && !warnings)
			continue;
		m = &x->msgs[i];
		if (m->line > 0)
			fprintf(errs, "%s:%d: %s%s\n", x->path, m->line,
			    m->warn ? "warning: " : "", m->text);
		else
			fprintf(errs, "%s: %s%s\n", x->path,
			    m->warn ? "warning: " : "", m->text);
	}
}

void
cfg_problems_free(struct ctx *x)
{
	size_t i;

	for (i = 0; i < x->nmsgs; i++)
		free(x->msgs[i].text);
	free(x->msgs);
	x->msgs = NULL;
	x->nmsgs = x->capmsgs = 0;
}
