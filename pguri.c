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

/*
 * Hands uri to fn piece by piece, in order: secret 0 for text shown as
 * it is, 1 for a password.
 */
static void
walk(const char *uri, void (*fn)(void *, const char *, size_t, int),
    void *arg)
{
	const char *auth, *query, *at, *colon, *p, *amp, *eq;
	size_t n;

	if ((auth = strstr(uri, "://")) == NULL) {
		fn(arg, uri, strlen(uri), 0);
		return;
	}
	auth += 3;
	fn(arg, uri, (size_t)(auth - uri), 0);
	query = auth + strcspn(auth, "?");
	for (at = NULL, p = auth; p < query; p++)
		if (*p == '@')
			at = p;
	p = auth;
	if (at != NULL) {
		colon = memchr(auth, ':', (size_t)(at - auth));
		if (colon != NULL) {
			fn(arg, auth, (size_t)(colon + 1 - auth), 0);
			fn(arg, colon + 1, (size_t)(at - colon - 1), 1);
			p = at;
		}
	}
	fn(arg, p, (size_t)(query - p), 0);
	if (*query == '\0')
		return;
	/*
	 * "?a=b&password=c": each parameter up to '&', or up to a second
	 * '?', which libpq would refuse but which must not hide a
	 * password from this rule either.
	 */
	fn(arg, "?", 1, 0);
	for (p = query + 1;; p = amp + 1) {
		amp = p + strcspn(p, "&?");
		n = (size_t)(amp - p);
		eq = memchr(p, '=', n);
		if (eq != NULL && secret_param(p, (size_t)(eq - p))) {
			fn(arg, p, (size_t)(eq + 1 - p), 0);
			fn(arg, eq + 1, (size_t)(amp - eq - 1), 1);
		} else
			fn(arg, p, n, 0);
		if (*amp == '\0')
			break;
		fn(arg, amp, 1, 0);
	}
}

struct shown {
	char	*buf;
	size_t	 len;
};

/* Appends a piece to the URI as shown, a password as HIDDEN. */
static void
put(void *arg, const char *s, size_t n, int secret)
{
	struct shown *sh = arg;

	if (secret) {
		s = HIDDEN;
		n = strlen(HIDDEN);
	}
	memcpy(sh->buf + sh->len, s, n);
	sh->len += n;
	sh->buf[sh->len] = '\0';
}

char *
pguri_redact(const char *uri)
{
	struct shown sh;

	/* The result is never longer than uri with each password HIDDEN. */
	sh.buf = xmalloc(strlen(uri) * (sizeof(HIDDEN) + 1) +
	    sizeof(HIDDEN) + 1);
	sh.buf[0] = '\0';
	sh.len = 0;
	walk(uri, put, &sh);
	return sh.buf;
}

struct pw_sink {
	void	(*fn)(void *, const char *);
	void	*arg;
};

static void
pw_piece(void *arg, const char *s, size_t n, int secret)
{
	struct pw_sink *k = arg;
	char *pw, *d;
	size_t i;
	int hi, lo;

	if (!secret || n == 0)
		return;
	pw = xmalloc(n + 1);
	memcpy(pw, s, n);
	pw[n] = '\0';
	k->fn(k->arg, pw);
	/* libpq percent-decodes it: that form may show too. */
	for (i = 0, d = pw; i < n; i++)
		if (s[i] == '%' && i + 2 < n && (hi = hexval(s[i + 1])) >= 0 &&
		    (lo = hexval(s[i + 2])) >= 0) {
			*d++ = (char)(hi * 16 + lo);
			i += 2;
		} else
			*d++ = s[i];
	*d = '\0';
	if ((size_t)(d - pw) != n)
		k->fn(k->arg, pw);
	explicit_bzero(pw, n);
	free(pw);
}

void
pguri_passwords(const char *uri, void (*fn)(void *arg, const char *pw),
    void *arg)
{
	struct pw_sink k = { fn, arg };

	walk(uri, pw_piece, &k);
}
