/*
 * The redactor (redact.h), which stands between every text a server
 * sends and every output.  With a fixed set of secrets, some of which
 * overlap: no secret is left whole in what comes out, planted in the
 * input or cut short at its end; what comes out fits its buffer; and
 * outside_text() leaves printable text of at most OUTSIDE_MAX bytes.
 */

#include "fuzz.h"
#include "redact.h"
#include "util.h"

static const char *const secrets[] = {
	"Zq9-planted-secret-0123", "secret-0123wxyz", "wxyz9", "p@ss/word\"x",
	NULL
};

static struct redactor *
the_redactor(void)
{
	static struct redactor *r;
	size_t i;

	if (r == NULL) {
		r = redactor_create();
		for (i = 0; secrets[i] != NULL; i++)
			redactor_add(r, secrets[i]);
		redactor_add_url(r, "https://u:hunter22@hooks.example/T0/B0/xyzzy");
		redactor_add_header(r, "Bearer tok-123456789");
	}
	return r;
}

static void
check_clean(const char *in, const char *out)
{
	size_t i, len = strlen(out);

	for (i = 0; secrets[i] != NULL; i++)
		fuzz_check(strstr(out, secrets[i]) == NULL, "a secret shows",
		    in);
	/* A cut text never ends in the first 8 bytes or more of one. */
	for (i = 0; secrets[i] != NULL; i++)
		if (strlen(secrets[i]) > REDACT_PREFIX && len >= REDACT_PREFIX)
			fuzz_check(memcmp(out + len - REDACT_PREFIX, secrets[i],
			    REDACT_PREFIX) != 0, "a cut secret shows", in);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct redactor *r = the_redactor();
	char *s, *buf, *again;
	size_t len, bl;

	s = fuzz_cstr(data, size);
	len = strlen(s);
	/* Room for every byte to become REDACTED: nothing is cut. */
	bl = (len + 64) * sizeof(REDACTED) + 1;
	buf = xmalloc(bl);
	snprintf(buf, bl, "%s%s%s", s, secrets[0], s);
	redactor_apply(r, buf, bl);
	check_clean(s, buf);
	/* Cut short at the end. */
	snprintf(buf, bl, "%s%.*s", s, 12, secrets[0]);
	redactor_apply(r, buf, bl);
	check_clean(s, buf);
	/* A small buffer: cut to fit. */
	snprintf(buf, bl, "%s", s);
	redactor_apply(r, buf, 40 < bl ? 40 : bl);
	fuzz_check(strlen(buf) < 40, "longer than its buffer", s);
	/* What an output gets: printable, bounded, the same when done twice. */
	snprintf(buf, bl, "%s", s);
	outside_text(buf, bl);
	fuzz_check(strlen(buf) <= OUTSIDE_MAX, "longer than OUTSIDE_MAX", s);
	again = xstrdup(buf);
	text_printable(again);
	fuzz_check(strcmp(again, buf) == 0, "not printable", s);
	free(again);
	free(buf);
	free(s);
	return 0;
}
