/*
 * Gandi LiveDNS answers as the gandi provider reads them: the RRsets of
 * a name (gandi_parse_records, asked for A, AAAA or both, and for a
 * CNAME beside them, relative targets in example.test) and an error
 * answer (gandi_errtext, through http_status_error).  The provider file is
 * included to reach its static functions.
 *
 * Invariants: a failed parse says why in one printable line and leaves
 * nothing behind; a parse that works holds only addresses of each set's
 * family, strictly sorted, and a ttl of at least 1 exactly when it holds
 * some; an error answer has its status's class and a message of one
 * printable line.
 */

#include "../providers/gandi.c"

#include "fuzz.h"

/* The reader of a name's records in the zone example.test. */
static int
parse_example(const char *buf, size_t len, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	return gandi_parse_records("example.test", buf, len, sets, nsets, err,
	    errlen);
}

static void
error_answer(const char *buf, size_t len)
{
	static const struct http_req rq = {
		.who = "Gandi LiveDNS",
		.method = "PUT",
		.url = "https://api.gandi.net/v5/livedns/domains/example.test/records/app/A",
		.errtext = gandi_errtext,
	};
	char text[160];

	fuzz_http_error(&rq, buf, len);
	if (gandi_errtext(buf, len, text, sizeof(text)) == 0)
		fuzz_check(fuzz_printable(text), "errtext: not printable",
		    text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	/* The body as http_call() leaves it: terminated, maybe with NULs. */
	s = fuzz_cstr(data, size);
	fuzz_rrsets(parse_example, s, size);
	fuzz_rrsets_cname(parse_example, s, size);
	error_answer(s, size);
	free(s);
	return 0;
}
