/*
 * DigitalOcean API answers as the digitalocean provider reads them: a
 * page of a domain records list (parse_records) and the error text of a
 * failure (do_errtext, also as http_status_error() quotes it).  The
 * provider file is included to reach its static functions.
 *
 * Invariants: a parse that fails says why in one printable line; a page
 * that parses gives records of the type asked only, each with an id of at
 * least 1, a TTL in range and a canonical address of that type (a
 * CNAME: a lower-case host name without its final dot); an error text is
 * one printable line.
 */

#include "../providers/digitalocean.c"

#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct http_req rq = {
		.who = "DigitalOcean",
		.method = "POST",
		.url = "https://api.digitalocean.com/v2/domains/example.test/records",
		.errtext = do_errtext,
	};
	struct dolist l = { 0 };
	struct addr a;
	enum rrtype t = size % 3 == 0 ? RR_A : size % 3 == 1 ? RR_AAAA :
	    RR_CNAME;
	const char *tg;
	char *s, err[256], text[256];
	size_t i;
	int more = -1;

	/* The body as http.c leaves it: terminated, maybe with NULs. */
	s = fuzz_cstr(data, size);
	/* Unterminated: a parse must write err before it reads it. */
	memset(err, 'x', sizeof(err));
	if (parse_records(s, size, size % 2 == 0 ? "@" : "app", "example.test",
	    t, &l, &more, err, sizeof(err)) == -1)
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "records: "
		    "reason is not one printable line", err);
	else {
		fuzz_check(more == 0 || more == 1, "records: more", NULL);
		for (i = 0; i < l.n; i++) {
			fuzz_check(l.v[i].id >= 1 && l.v[i].ttl >= 0,
			    "records: id or ttl", NULL);
			if (t == RR_CNAME) {
				tg = l.v[i].target;
				fuzz_check(tg != NULL && tg[0] != '\0' &&
				    tg[0] != '.' && strlen(tg) <= 253 &&
				    strspn(tg, "abcdefghijklmnopqrstuvwxyz"
				    "0123456789-._") == strlen(tg),
				    "records: CNAME target", tg);
				continue;
			}
			fuzz_check(l.v[i].target == NULL &&
			    addr_parse(l.v[i].a.s, &a) == 0 &&
			    a.family == (t == RR_A ? 4 : 6) &&
			    strcmp(a.s, l.v[i].a.s) == 0, "records: address",
			    l.v[i].a.s);
		}
	}
	dolist_free(&l);
	if (do_errtext(s, size, text, sizeof(text)) == 0)
		fuzz_check(text[0] != '\0' && fuzz_printable(text), "errtext: "
		    "not one printable line", text);
	fuzz_http_error(&rq, s, size);
	free(s);
	return 0;
}
