/*
 * The decoder of an endpoint's `send` (config_send_decode(),
 * ddup.ini(5), ENDPOINTS).  Invariants: it never writes past cap; what
 * decodes is at most as long as the text; text without a backslash
 * comes out as it is; the output escaped again (every byte that is not
 * printable ASCII as \xHH, a backslash as \\) decodes to the same bytes;
 * a smaller cap gives a prefix or refuses; a refusal says why.
 */

#include "config.h"
#include "fuzz.h"

#define SEND_CAP	4096

/* out, of n bytes, in the escapes the decoder reads; malloc'd. */
static char *
escape(const char *out, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char *s, *p;
	size_t i;
	unsigned char c;

	if ((s = malloc(n * 4 + 1)) == NULL)
		abort();
	for (i = 0, p = s; i < n; i++) {
		c = (unsigned char)out[i];
		if (c == '\\') {
			*p++ = '\\';
			*p++ = '\\';
		} else if (c >= 0x20 && c < 0x7f)
			*p++ = (char)c;
		else {
			*p++ = '\\';
			*p++ = 'x';
			*p++ = hex[c >> 4];
			*p++ = hex[c & 15];
		}
	}
	*p = '\0';
	return s;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, *again = NULL, out[SEND_CAP + 1], out2[SEND_CAP + 1];
	char err[160];
	size_t len = 0, len2 = 0, small;
	int rc;

	s = fuzz_cstr(data, size);
	out[SEND_CAP] = '\x5a';
	err[0] = '\0';
	rc = config_send_decode(s, out, SEND_CAP, &len, err, sizeof(err));
	fuzz_check(out[SEND_CAP] == '\x5a', "wrote past cap", s);
	if (rc == -1) {
		fuzz_check(err[0] != '\0' && memchr(err, '\0', sizeof(err)) !=
		    NULL, "a refusal without a reason", s);
		fuzz_check(strchr(s, '\\') != NULL || strlen(s) > SEND_CAP,
		    "refused text without an escape, within cap", s);
		goto out;
	}
	fuzz_check(rc == 0 && len <= strlen(s) && len <= SEND_CAP,
	    "decoded longer than the text", s);
	if (strchr(s, '\\') == NULL)
		fuzz_check(len == strlen(s) && memcmp(out, s, len) == 0,
		    "text without an escape changed", s);

	again = escape(out, len);
	fuzz_check(config_send_decode(again, out2, SEND_CAP, &len2, err,
	    sizeof(err)) == 0 && len2 == len && memcmp(out, out2, len) == 0,
	    "escaped output does not decode back", again);

	/* A cap below the length: refused, else the same bytes. */
	small = len / 2;
	rc = config_send_decode(s, out2, small, &len2, err, sizeof(err));
	if (len > small)
		fuzz_check(rc == -1, "a cap too small was not refused", s);
	else
		fuzz_check(rc == 0 && len2 == len && memcmp(out, out2, len) ==
		    0, "a smaller cap changed the bytes", s);
out:
	free(again);
	free(s);
	return 0;
}
