/*
 * pguri_redact(), which stands between a PostgreSQL `state` and every
 * output, and pguri_redact_msg(), between libpq's messages and every
 * output.  Invariants: redacting again changes nothing; whatever lies
 * between the user part's ':' and its last '@' is "***"; every
 * password or sslpassword parameter (its name percent-decoded) has the
 * value "***"; a password planted in a URI built around the input
 * never comes out; and the pieces of a password holding '@' never come
 * out of a message that quotes them, as libpq would.  And
 * pguri_msg_line(), libpq's message as one line.
 */

#include <strings.h>

#include "fuzz.h"
#include "pguri.h"
#include "util.h"

/* The n bytes at s percent-decoded into buf (cut at len - 1). */
static void
decode(const char *s, size_t n, char *buf, size_t len)
{
	size_t i, j = 0;

	for (i = 0; i < n && j + 1 < len; i++) {
		if (s[i] == '%' && i + 2 < n && hex_digit(s[i + 1]) >= 0 &&
		    hex_digit(s[i + 2]) >= 0) {
			buf[j++] = (char)(hex_digit(s[i + 1]) * 16 +
			    hex_digit(s[i + 2]));
			i += 2;
		} else
			buf[j++] = s[i];
	}
	buf[j] = '\0';
}

static void
check_shown(const char *in, const char *out)
{
	const char *auth, *query, *at = NULL, *colon, *p, *amp, *eq;
	char name[64], *again;

	again = pguri_redact(out);
	fuzz_check(strcmp(again, out) == 0, "redacting twice changes it", in);
	free(again);
	if ((auth = strstr(out, "://")) == NULL)
		return;
	auth += 3;
	/* The query: from the first '?' that has no '@' before its '='. */
	for (query = auth;; query += 1 + strcspn(query + 1, "@=")) {
		query += strcspn(query, "?");
		if (*query == '\0' || query[1 + strcspn(query + 1, "@=")] != '@')
			break;
	}
	for (p = auth; p < query; p++)
		if (*p == '@')
			at = p;
	if (at != NULL && (colon = memchr(auth, ':', (size_t)(at - auth))) !=
	    NULL)
		fuzz_check(at - colon - 1 == 3 && memcmp(colon + 1, "***", 3) ==
		    0, "a user part's password shows", in);
	if (*query == '\0')
		return;
	for (p = query + 1;; p = amp + 1) {
		amp = p + strcspn(p, "&?");
		eq = memchr(p, '=', (size_t)(amp - p));
		if (eq != NULL && (size_t)(eq - p) < sizeof(name)) {
			decode(p, (size_t)(eq - p), name, sizeof(name));
			if (strcasecmp(name, "password") == 0 ||
			    strcasecmp(name, "sslpassword") == 0)
				fuzz_check(amp - eq - 1 == 3 &&
				    memcmp(eq + 1, "***", 3) == 0,
				    "a password parameter shows", in);
		}
		if (*amp == '\0')
			break;
	}
}

/* A password "P1@P2" written as is, its pieces quoted in a message. */
static void
check_msg(const char *s)
{
	static const char p1[] = "Zq9planted", p2[] = "Zq9secret";
	char *uri, *msg, *out;
	size_t len;

	len = strlen(s) * 2 + sizeof(p1) * 2 + sizeof(p2) * 2 + 64;
	uri = xmalloc(len);
	msg = xmalloc(len);
	snprintf(uri, len, "postgresql://u:%s@%s@%s/d", p1, p2, s);
	snprintf(msg, len, "%s \"%s@h\" port %s %s", s, p2, p1, s);
	out = pguri_redact_msg(uri, msg);
	fuzz_check(strstr(s, "Zq9") != NULL || (strstr(out, p1) == NULL &&
	    strstr(out, p2) == NULL), "a piece of the password shows", s);
	free(out);
	/* Any input as URI and message: no crash, no overflow. */
	free(pguri_redact_msg(s, s));
	free(msg);
	free(uri);
}

/*
 * A message as one line: no line break, within len, and made of the
 * message's own first line, then "; " and a host's line at a time.
 */
static void
check_line(const char *s)
{
	char line[96];
	size_t n = strcspn(s, "\n"), got;

	pguri_msg_line(s, line, sizeof(line));
	got = strlen(line);
	fuzz_check(got < sizeof(line) && strchr(line, '\n') == NULL,
	    "a line break or an overflow", s);
	fuzz_check(strncmp(line, s, got < n ? got : n) == 0,
	    "not the message's first line", s);
	fuzz_check(got <= n || strncmp(line + n, "; ", got - n < 2 ?
	    got - n : 2) == 0, "more than the first line, not after \"; \"",
	    s);
	pguri_msg_line(s, line, 1);
	fuzz_check(line[0] == '\0', "a line in one byte", s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char secret[] = "Zq9-planted-secret";
	char *s, *out, *uri;
	size_t len;

	s = fuzz_cstr(data, size);
	out = pguri_redact(s);
	check_shown(s, out);
	free(out);
	/* The input around a planted password, in both places. */
	len = strlen(s) * 2 + sizeof(secret) * 2 + 64;
	uri = xmalloc(len);
	snprintf(uri, len, "postgresql://u:%s@%s/d?password=%s&x=%s", secret,
	    s, secret, s);
	out = pguri_redact(uri);
	/* Unless the input holds the text itself, elsewhere. */
	fuzz_check(strstr(s, secret) != NULL || strstr(out, secret) == NULL,
	    "the planted password shows", s);
	check_shown(uri, out);
	free(out);
	free(uri);
	check_msg(s);
	check_line(s);
	free(s);
	return 0;
}
