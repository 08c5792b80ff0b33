/*
 * Secrets out of outside text: see redact.h.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "redact.h"
#include "util.h"

struct redactor {
	char		**v;		/* the forms looked for, NUL-terminated */
	size_t		 *len;
	size_t		  n;
	size_t		  cap;
};

static struct redactor *active;

struct redactor *
redactor_create(void)
{
	return xcalloc(1, sizeof(struct redactor));
}

void
redactor_free(struct redactor *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->n; i++)
		free_secret(r->v[i]);
	free((void *)r->v);
	free(r->len);
	free(r);
}

/* One form of len bytes, looked for as it is (copied). */
static void
add_form(struct redactor *r, const char *s, size_t len)
{
	size_t i;

	/* Text has no NUL byte: such a form never shows. */
	if (len < REDACT_MIN || memchr(s, '\0', len) != NULL)
		return;
	for (i = 0; i < r->n; i++)
		if (r->len[i] == len && memcmp(r->v[i], s, len) == 0)
			return;
	if (r->n == r->cap) {
		r->cap = r->cap == 0 ? 8 : r->cap * 2;
		r->v = xrealloc((void *)r->v, r->cap * sizeof(*r->v));
		r->len = xrealloc(r->len, r->cap * sizeof(*r->len));
	}
	r->v[r->n] = xmalloc(len + 1);
	memcpy(r->v[r->n], s, len);
	r->v[r->n][len] = '\0';
	r->len[r->n++] = len;
}

/* The len bytes at s percent-encoded (RFC 3986 unreserved kept), hex in case. */
static char *
pct_encode(const char *s, size_t len, const char *hex)
{
	char *out = xmalloc(len * 3 + 1), *o = out;
	unsigned char c;
	size_t i;

	for (i = 0; i < len; i++) {
		c = (unsigned char)s[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("-._~", c) != NULL) {
			*o++ = (char)c;
			continue;
		}
		*o++ = '%';
		*o++ = hex[c >> 4];
		*o++ = hex[c & 15];
	}
	*o = '\0';
	return out;
}

/* As a JSON encoder may write it inside a string ('/' as "\/" too). */
static char *
json_escape(const char *s, size_t len)
{
	char *out = xmalloc(len * 2 + 1), *o = out;
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] == '"' || s[i] == '\\' || s[i] == '/')
			*o++ = '\\';
		*o++ = s[i];
	}
	*o = '\0';
	return out;
}

/* Base64 of the len bytes at s, without its '=' padding. */
static char *
b64_encode(const char *s, size_t len)
{
	char *out = xmalloc((len + 2) / 3 * 4 + 1);
	size_t n;

	EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)s,
	    (int)len);
	n = strlen(out);
	while (n > 0 && out[n - 1] == '=')
		out[--n] = '\0';
	return out;
}

/* The secret of len bytes at s and its encodings. */
static void
add_secret(struct redactor *r, const char *s, size_t len)
{
	char *f;

	if (len < REDACT_MIN)
		return;
	add_form(r, s, len);
	f = pct_encode(s, len, "0123456789ABCDEF");
	add_form(r, f, strlen(f));
	free_secret(f);
	f = pct_encode(s, len, "0123456789abcdef");
	add_form(r, f, strlen(f));
	free_secret(f);
	f = json_escape(s, len);
	add_form(r, f, strlen(f));
	free_secret(f);
	f = b64_encode(s, len);
	add_form(r, f, strlen(f));
	free_secret(f);
}

void
redactor_add(struct redactor *r, const char *secret)
{
	if (secret != NULL)
		add_secret(r, secret, strlen(secret));
}

void
redactor_add_url(struct redactor *r, const char *url)
{
	const char *auth, *end, *at, *colon, *path;
	char *b64;

	if (url == NULL)
		return;
	add_secret(r, url, strlen(url));
	if ((auth = strstr(url, "://")) == NULL)
		return;
	auth += 3;
	end = auth + strcspn(auth, "/?#");
	for (at = NULL, path = auth; path < end; path++)
		if (*path == '@')
			at = path;
	if (at != NULL) {
		/* libcurl sends user:password as Basic auth. */
		b64 = b64_encode(auth, (size_t)(at - auth));
		add_form(r, b64, strlen(b64));
		free_secret(b64);
		if ((colon = memchr(auth, ':', (size_t)(at - auth))) != NULL)
			add_secret(r, colon + 1, (size_t)(at - colon - 1));
	}
	/* A chat service's token is in the path or the query. */
	if (strlen(end) >= REDACT_PREFIX)
		add_secret(r, end, strlen(end));
}

void
redactor_add_header(struct redactor *r, const char *value)
{
	const char *w, *p;
	unsigned char *raw;
	size_t n, wl;
	int dl;

	if (value == NULL)
		return;
	add_secret(r, value, strlen(value));
	/* "Bearer TOKEN": a server may quote the token alone. */
	for (w = value + strcspn(value, " \t"); *w != '\0'; w += wl) {
		w += strspn(w, " \t");
		wl = strcspn(w, " \t");
		add_secret(r, w, wl);
	}
	if (strncasecmp(value, "Basic ", 6) != 0)
		return;
	/* "Basic B64": its user:password, and the password alone. */
	w = value + 6 + strspn(value + 6, " \t");
	n = strcspn(w, " \t");
	raw = xmalloc(n / 4 * 3 + 4);
	dl = EVP_DecodeBlock(raw, (const unsigned char *)w, (int)n);
	if (dl > 0 && n % 4 == 0) {
		/* EVP_DecodeBlock counts the padding as bytes: drop them. */
		if (n >= 1 && w[n - 1] == '=')
			dl--;
		if (n >= 2 && w[n - 2] == '=')
			dl--;
		add_secret(r, (const char *)raw, (size_t)dl);
		if ((p = memchr(raw, ':', (size_t)dl)) != NULL)
			add_secret(r, p + 1, (size_t)dl -
			    (size_t)(p + 1 - (const char *)raw));
	}
	explicit_bzero(raw, n / 4 * 3 + 4);
	free(raw);
}

/*
 * Marks in mark the start of form f (of flen bytes) that ends at end in
 * s, when that part is at least REDACT_PREFIX bytes: the text was cut
 * there, in the middle of the secret.
 */
static void
mark_cut(const char *s, size_t end, const char *f, size_t flen,
    unsigned char *mark)
{
	size_t k;

	for (k = flen - 1 < end ? flen - 1 : end; k >= REDACT_PREFIX; k--)
		if (memcmp(s + end - k, f, k) == 0) {
			memset(mark + end - k, 1, k);
			return;
		}
}

void
redactor_apply(const struct redactor *r, char *buf, size_t size)
{
	static const char *const cuts[] = { "...", "\xe2\x80\xa6", NULL };
	unsigned char *mark;
	const char *p, *q;
	char *out;
	size_t len, i, j, o, any = 0;

	if (r == NULL || r->n == 0 || size == 0)
		return;
	buf[size - 1] = '\0';
	len = strlen(buf);
	mark = xcalloc(len + 1, 1);
	for (i = 0; i < r->n; i++) {
		for (p = buf; (q = strstr(p, r->v[i])) != NULL; p = q + 1) {
			memset(mark + (q - buf), 1, r->len[i]);
			any = 1;
		}
		if (r->len[i] <= REDACT_PREFIX)
			continue;
		mark_cut(buf, len, r->v[i], r->len[i], mark);
		for (j = 0; cuts[j] != NULL; j++)
			for (p = buf; (q = strstr(p, cuts[j])) != NULL;
			    p = q + 1)
				mark_cut(buf, (size_t)(q - buf), r->v[i],
				    r->len[i], mark);
	}
	for (i = 0; i < len && !any; i++)
		any = mark[i];
	if (!any) {
		free(mark);
		return;
	}
	/* Each run of marked bytes becomes one REDACTED. */
	out = xmalloc(len * sizeof(REDACTED) + 1);
	for (i = o = 0; i < len; i++) {
		if (!mark[i])
			out[o++] = buf[i];
		else if (i == 0 || !mark[i - 1]) {
			memcpy(out + o, REDACTED, sizeof(REDACTED) - 1);
			o += sizeof(REDACTED) - 1;
		}
	}
	out[o] = '\0';
	snprintf(buf, size, "%s", out);
	explicit_bzero(out, o);
	free(out);
	free(mark);
}

void
redact_install(struct redactor *r)
{
	redactor_free(active);
	active = r;
}

void
redact(char *buf, size_t size)
{
	redactor_apply(active, buf, size);
}

void
outside_text(char *buf, size_t size)
{
	redact(buf, size);
	text_printable(buf);
	text_cap(buf, OUTSIDE_MAX, 0);
}
