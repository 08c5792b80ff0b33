/*
 * A PostgreSQL URI as it may be shown: see pguri.h.
 */

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pguri.h"
#include "util.h"

#define HIDDEN	"***"

int
pguri_is(const char *s)
{
	return strncasecmp(s, "postgresql://", 13) == 0 ||
	    strncasecmp(s, "postgres://", 11) == 0;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Whether the n bytes at s, percent-decoded, are a parameter whose value
 * is a password.  libpq compares keywords exactly; any case is hidden
 * here, as hiding too much costs nothing.
 */
static int
secret_param(const char *s, size_t n)
{
	char name[16];
	size_t i, j;
	int hi, lo;

	for (i = j = 0; i < n; i++) {
		if (j + 1 >= sizeof(name))
			return 0;
		if (s[i] == '%' && i + 2 < n &&
		    (hi = hexval(s[i + 1])) >= 0 &&
		    (lo = hexval(s[i + 2])) >= 0) {
			name[j++] = (char)(hi * 16 + lo);
			i += 2;
		} else
			name[j++] = s[i];
	}
	name[j] = '\0';
	return strcasecmp(name, "password") == 0 ||
	    strcasecmp(name, "sslpassword") == 0;
}

/* Appends the n bytes at s to buf, at *len. */
static void
put(char *buf, size_t *len, const char *s, size_t n)
{
	memcpy(buf + *len, s, n);
	*len += n;
	buf[*len] = '\0';
}

char *
pguri_redact(const char *uri)
{
	const char *auth, *query, *at, *colon, *p, *amp, *eq;
	char *out;
	size_t len = 0, n;

	/* The result is never longer than uri with each password HIDDEN. */
	out = xmalloc(strlen(uri) * (sizeof(HIDDEN) + 1) + sizeof(HIDDEN) + 1);
	out[0] = '\0';
	if ((auth = strstr(uri, "://")) == NULL) {
		put(out, &len, uri, strlen(uri));
		return out;
	}
	auth += 3;
	put(out, &len, uri, (size_t)(auth - uri));
	query = auth + strcspn(auth, "?");
	for (at = NULL, p = auth; p < query; p++)
		if (*p == '@')
			at = p;
	p = auth;
	if (at != NULL) {
		colon = memchr(auth, ':', (size_t)(at - auth));
		if (colon != NULL) {
			put(out, &len, auth, (size_t)(colon + 1 - auth));
			put(out, &len, HIDDEN, strlen(HIDDEN));
			p = at;
		}
	}
	put(out, &len, p, (size_t)(query - p));
	if (*query == '\0')
		return out;
	/*
	 * "?a=b&password=c": each parameter up to '&', or up to a second
	 * '?', which libpq would refuse but which must not hide a
	 * password from this rule either.
	 */
	put(out, &len, "?", 1);
	for (p = query + 1;; p = amp + 1) {
		amp = p + strcspn(p, "&?");
		n = (size_t)(amp - p);
		eq = memchr(p, '=', n);
		if (eq != NULL && secret_param(p, (size_t)(eq - p))) {
			put(out, &len, p, (size_t)(eq + 1 - p));
			put(out, &len, HIDDEN, strlen(HIDDEN));
		} else
			put(out, &len, p, n);
		if (*amp == '\0')
			break;
		put(out, &len, amp, 1);
	}
	return out;
}
