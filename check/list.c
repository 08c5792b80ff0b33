/*
 * The one explicit table of check types (check/type.h), and the look-up
 * through it.  It lives apart from check.c and check/result.c, which
 * the types use: the table uses every type, and no type uses it.
 * Adding a type: one file in check/, one line here, one in
 * check/Makefile.inc.  Which endpoint a type takes is declared in its
 * entry (schemes), never tested by its name.
 */

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "check/type.h"

static const struct check_type *const check_types[] = {
	&check_http,
	&check_tcp,
	&check_prog,
	NULL
};

/* Whether url starts with scheme, then "://". */
static int
has_scheme(const char *url, const char *scheme)
{
	size_t	 len = strlen(scheme);

	return strncasecmp(url, scheme, len) == 0 &&
	    strncmp(url + len, "://", 3) == 0;
}

const struct check_type *
check_type_of(const char *url)
{
	size_t	 i, k;

	for (i = 0; check_types[i] != NULL; i++) {
		if (url == NULL) {
			if (check_types[i]->schemes[0] == NULL)
				return check_types[i];
			continue;
		}
		for (k = 0; check_types[i]->schemes[k] != NULL; k++)
			if (has_scheme(url, check_types[i]->schemes[k]))
				return check_types[i];
	}
	return NULL;
}

unsigned
check_takes(const char *url)
{
	const struct check_type *t = check_type_of(url);
	unsigned takes;
	size_t	 k;

	if (t == NULL)
		return 0;
	takes = t->takes;
	/* http:// sees no certificate where https:// does. */
	if ((takes & CHECK_TAKES_CERT) && t->tls_schemes != NULL) {
		for (k = 0; t->tls_schemes[k] != NULL; k++)
			if (has_scheme(url, t->tls_schemes[k]))
				break;
		if (t->tls_schemes[k] == NULL)
			takes &= ~(unsigned)CHECK_TAKES_CERT;
	}
	return takes;
}

int
check_url_ok(const char *url, char *err, size_t errlen)
{
	const struct check_type *t = check_type_of(url);

	if (t == NULL) {
		snprintf(err, errlen, "not a url a check takes (http://, "
		    "https://, tcp://, tls://)");
		return -1;
	}
	return t->url_ok != NULL ? t->url_ok(url, err, errlen) : 0;
}
