/*
 * Hetzner Cloud API answers as the hetzner provider reads them: an RRSet
 * list (parse_rrsets), the action of a write or of a poll
 * (parse_action), and the error text of a failure (hz_errtext, also as
 * http_status_error() quotes it).  The provider file is included to reach
 * its static functions.
 *
 * Invariants: a parse that fails says why in one printable line; a list
 * that parses gives sets of the asked types only, each address of its
 * family and canonical, a CNAME's target a lower-case host name without
 * its final dot, a TTL of 0 when the set is empty; an action that
 * parses has an id of at least 1, and one that failed says why in one
 * printable line; an error text is one printable line.
 */

#include "../providers/hetzner.c"

#include "fuzz.h"

static void
check_sets(const struct rrset *sets, size_t nsets)
{
	struct addr a;
	size_t i, j;

	for (i = 0; i < nsets; i++) {
		fuzz_check(sets[i].type == RR_CNAME || sets[i].target == NULL,
		    "rrsets: target", NULL);
		fuzz_check(sets[i].type != RR_CNAME || sets[i].target == NULL ||
		    (strlen(sets[i].target) > 0 && strlen(sets[i].target) <=
		    253 && strspn(sets[i].target, "abcdefghijklmnopqrstuvwxyz"
		    "0123456789-._") == strlen(sets[i].target) &&
		    sets[i].target[0] != '.'), "rrsets: CNAME target",
		    sets[i].target);
		fuzz_check(sets[i].ttl >= 0 && (!rrset_empty(&sets[i]) ||
		    sets[i].ttl == 0), "rrsets: ttl", NULL);
		for (j = 0; j < sets[i].addrs.n; j++)
			fuzz_check(addr_parse(sets[i].addrs.v[j].s, &a) == 0 &&
			    a.family == (sets[i].type == RR_A ? 4 : 6) &&
			    strcmp(a.s, sets[i].addrs.v[j].s) == 0,
			    "rrsets: address", sets[i].addrs.v[j].s);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct http_req rq = {
		.who = "Hetzner",
		.method = "POST",
		.url = "https://api.hetzner.cloud/v1/zones/example.test/rrsets",
		.errtext = hz_errtext,
	};
	struct rrset sets[3];
	char *s, err[256], text[256];
	long long id;
	int done;
	size_t i;

	/* The body as http.c leaves it: terminated, maybe with NULs. */
	s = fuzz_cstr(data, size);
	memset(sets, 0, sizeof(sets));
	sets[0].type = RR_A;
	sets[1].type = RR_CNAME;
	sets[2].type = RR_AAAA;
	/*
	 * Only A and CNAME when the input's length is odd: a type not asked
	 * for.  err starts unterminated: a parse must write it before it
	 * reads it.
	 */
	memset(err, 'x', sizeof(err));
	if (parse_rrsets(s, size, "app", sets, 2 + (size % 2 == 0), err,
	    sizeof(err)) == -1)
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "rrsets: "
		    "reason is not one printable line", err);
	else {
		check_sets(sets, 2 + (size % 2 == 0));
		fuzz_check(size % 2 == 0 || sets[2].addrs.n == 0,
		    "rrsets: a type not asked for", NULL);
	}
	for (i = 0; i < 3; i++)
		rrset_clear(&sets[i]);
	err[0] = '\0';
	if (parse_action(s, size, &id, &done, err, sizeof(err)) == -1)
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "action: "
		    "reason is not one printable line", err);
	else {
		fuzz_check(id >= 1 && done >= -1 && done <= 1, "action: id",
		    NULL);
		fuzz_check(done != -1 || (err[0] != '\0' &&
		    fuzz_printable(err)), "action: error text", err);
	}
	if (hz_errtext(s, size, text, sizeof(text)) == 0)
		fuzz_check(text[0] != '\0' && fuzz_printable(text), "errtext: "
		    "not one printable line", text);
	fuzz_http_error(&rq, s, size);
	free(s);
	return 0;
}
