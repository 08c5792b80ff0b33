/*
 * Gandi LiveDNS answers as the gandi provider reads them: the RRsets of
 * a name (gandi_parse_records, asked for A, AAAA or both) and an error
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

static void
records(const char *buf, size_t len)
{
	struct rrset sets[2];
	char err[256];
	size_t nsets, k, i;

	memset(sets, 0, sizeof(sets));
	/* A, AAAA, or both (in either order), from the input's length. */
	nsets = len % 4 == 3 ? 1 : 2;
	sets[0].type = len % 2 == 0 ? RR_A : RR_AAAA;
	sets[1].type = sets[0].type == RR_A ? RR_AAAA : RR_A;
	if (len % 4 == 1)
		sets[0].type = RR_AAAA, nsets = 1;
	err[0] = '\0';
	if (gandi_parse_records(buf, len, sets, nsets, err, sizeof(err)) ==
	    -1) {
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "records: "
		    "reason is not one printable line", err);
		for (k = 0; k < nsets; k++)
			fuzz_check(sets[k].addrs.n == 0 && sets[k].ttl == 0,
			    "records: a failure left records", NULL);
		return;
	}
	for (k = 0; k < nsets; k++) {
		fuzz_check((sets[k].addrs.n > 0) == (sets[k].ttl >= 1) &&
		    sets[k].ttl >= 0, "records: ttl", NULL);
		for (i = 0; i < sets[k].addrs.n; i++) {
			fuzz_check(sets[k].addrs.v[i].family ==
			    (sets[k].type == RR_AAAA ? 6 : 4), "records: "
			    "address of the other family",
			    sets[k].addrs.v[i].s);
			fuzz_check(i == 0 || addr_cmp(&sets[k].addrs.v[i - 1],
			    &sets[k].addrs.v[i]) < 0, "records: not sorted",
			    NULL);
		}
		rrset_clear(&sets[k]);
	}
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
	records(s, size);
	error_answer(s, size);
	free(s);
	return 0;
}
