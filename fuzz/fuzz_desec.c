/*
 * deSEC answers as the desec provider reads them: the RRsets of a name
 * (desec_parse_rrsets, asked for A, AAAA or both, and for a CNAME beside
 * them) and an error answer
 * (desec_errtext, through http_status_error).  The provider file is
 * included to reach its static functions.
 *
 * Invariants: a failed parse says why in one printable line and leaves
 * nothing behind; a parse that works holds only addresses of each set's
 * family, strictly sorted, and a ttl of at least 1 exactly when it holds
 * some; an error answer has its status's class and a message of one
 * printable line.
 */

#include "../providers/desec.c"

#include "fuzz.h"

static void
error_answer(const char *buf, size_t len)
{
	static const struct http_req rq = {
		.who = "deSEC",
		.method = "PATCH",
		.url = "https://desec.io/api/v1/domains/example.test/rrsets/",
		.errtext = desec_errtext,
	};
	char text[160];

	fuzz_http_error(&rq, buf, len);
	if (desec_errtext(buf, len, text, sizeof(text)) == 0)
		fuzz_check(fuzz_printable(text), "errtext: not printable",
		    text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	/* The body as http_call() leaves it: terminated, maybe with NULs. */
	s = fuzz_cstr(data, size);
	fuzz_rrsets(desec_parse_rrsets, s, size);
	fuzz_rrsets_cname(desec_parse_rrsets, s, size);
	error_answer(s, size);
	free(s);
	return 0;
}
