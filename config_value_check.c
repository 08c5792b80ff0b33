/*
 * The values of the checks' own keys that need more than a type: a
 * `header` line (of the checks, and of a [notify]), a secret whose
 * messages never quote it, and the escapes of `send` (ddup.ini(5),
 * DOMAINS, ENDPOINTS, NOTIFICATIONS).  Above config_value.c
 * (config_int.h); config_send_decode() is pure, for its fuzz target.
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "util.h"

/* The byte that escape \C of `send` stands for; -1: none (\x apart). */
static int
send_escape(char c)
{
	switch (c) {
	case 'r':
		return '\r';
	case 'n':
		return '\n';
	case 't':
		return '\t';
	case '\\':
		return '\\';
	default:
		return -1;
	}
}

int
config_send_decode(const char *in, char *out, size_t cap, size_t *outlen,
    char *err, size_t errlen)
{
	size_t	 i, n = 0;
	int	 c, hi, lo;

	*outlen = 0;
	for (i = 0; in[i] != '\0'; i++) {
		c = (unsigned char)in[i];
		if (c == '\\' && in[i + 1] == 'x') {
			/* A NUL stops each test: nothing past it is read. */
			if ((hi = hex_digit(in[i + 2])) == -1 ||
			    (lo = hex_digit(in[i + 3])) == -1) {
				snprintf(err, errlen, "bad escape at byte %zu: "
				    "\\x needs two hex digits", i + 1);
				return -1;
			}
			c = hi * 16 + lo;
			i += 3;
		} else if (c == '\\') {
			if ((c = send_escape(in[i + 1])) == -1) {
				snprintf(err, errlen, "bad escape at byte %zu: "
				    "only \\r, \\n, \\t, \\\\ and \\xHH (write "
				    "\\\\ for a backslash)", i + 1);
				return -1;
			}
			i++;
		}
		if (n == cap) {
			snprintf(err, errlen, "more than %zu bytes once decoded",
			    cap);
			return -1;
		}
		out[n++] = (char)c;
	}
	*outlen = n;
	return 0;
}

/* An HTTP token (RFC 9110 5.6.2): the name of a header. */
static int
token_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0)
		return 0;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) &&
		    strchr("!#$%&'*+-.^_`|~", s[i]) == NULL)
			return 0;
	return 1;
}

/* Where a control character is in s (a tab is none), or -1. */
static long
control_at(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\t') ||
		    (unsigned char)s[i] == 0x7f)
			return (long)i;
	return -1;
}

/*
 * A whole "Name: value" line from !env or !file: nothing of it is shown,
 * as the secret may be all of it.  A copy made canonical, or NULL.
 */
static char *
header_whole(struct ctx *x, const char *pre, const struct rkey *k,
    const char *line)
{
	const char *colon = strchr(line, ':'), *v;
	char *hdr;
	size_t nlen, n;

	if (colon == NULL || !token_ok(line, (size_t)(colon - line))) {
		cfg_problem(x, k->line, 0, "%s'header': the secret is not of "
		    "the form 'Name: value' (a header name of letters, digits "
		    "and !#$%%&'*+-.^_`|~, then a colon)", pre);
		return NULL;
	}
	for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
		;
	if (control_at(line) != -1) {
		cfg_problem(x, k->line, 0, "%s'header': the secret is not one "
		    "line (it holds a line break or a control character)", pre);
		return NULL;
	}
	if (*v == '\0') {
		cfg_problem(x, k->line, 0, "%s'header': the secret's value is "
		    "empty", pre);
		return NULL;
	}
	nlen = (size_t)(colon - line);
	n = nlen + 2 + strlen(v) + 1;
	hdr = xmalloc(n);
	snprintf(hdr, n, "%.*s: %s", (int)nlen, line, v);
	return hdr;
}

char *
cfg_header(struct ctx *x, const char *who, const struct rkey *k, int whole)
{
	const char *colon, *v;
	struct rkey vk;
	char *val, *hdr = NULL, pre[128];
	size_t nlen, i;

	snprintf(pre, sizeof(pre), "%s%s", who != NULL ? who : "",
	    who != NULL ? ": " : "");
	if (whole && cfg_secret_ref(k->value)) {
		if ((val = cfg_value(x, who, k, "header", 1, 0)) == NULL)
			return NULL;
		hdr = header_whole(x, pre, k, val);
		explicit_bzero(val, strlen(val));
		free(val);
		return hdr;
	}
	if ((colon = strchr(k->value, ':')) == NULL ||
	    !token_ok(k->value, (size_t)(colon - k->value))) {
		cfg_problem(x, k->line, 0, "%s'header' must be 'Name: "
		    "value' with a header name of letters, digits and "
		    "!#$%%&'*+-.^_`|~", pre);
		return NULL;
	}
	nlen = (size_t)(colon - k->value);
	for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
		;
	/* The value alone, as if it were the key's: "!env NAME" works. */
	vk = *k;
	vk.value = xstrdup(v);
	val = cfg_value(x, who, &vk, "header", 1, 0);
	explicit_bzero(vk.value, strlen(vk.value));
	free(vk.value);
	if (val == NULL)
		return NULL;
	/* A line break would start another header, or the body. */
	if (control_at(val) != -1)
		cfg_problem(x, k->line, 0, "%sheader %.*s: its value holds a "
		    "control character", pre, (int)nlen, k->value);
	else {
		i = nlen + 2 + strlen(val) + 1;
		hdr = xmalloc(i);
		snprintf(hdr, i, "%.*s: %s", (int)nlen, k->value, val);
	}
	explicit_bzero(val, strlen(val));
	free(val);
	return hdr;
}

