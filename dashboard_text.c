/*
 * The statusHtml page's escaping (dashboard_int.h), which the page and
 * its drawings share: outside text made printable, then HTML-escaped.
 */

#include <stdio.h>
#include <stdlib.h>

#include "dashboard_int.h"
#include "util.h"

void
dash_text(FILE *f, const char *s)
{
	char		*copy;
	const char	*p;

	if (s == NULL)
		return;
	copy = xstrdup(s);
	text_printable(copy);
	for (p = copy; *p != '\0'; p++) {
		switch (*p) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*p, f);
		}
	}
	free(copy);
}
