/*
 * bunny.net DNS API answers as the bunny provider reads them: a zone
 * (parse_zone, for A, AAAA and CNAME, at the apex and at a name), a page
 * of the zone search (parse_search), and the error text of a failure
 * (bn_errtext, also as http_status_error() quotes it).  The provider
 * file is included to reach its static functions.
 *
 * Invariants: a parse that fails says why in one printable line; a zone
 * that parses gives a domain that is a canonical host name's text and
 * records of the type asked only, each with an id above 0, a TTL in
 * range and a canonical value of that type (an address, or a lower-case
 * host name without its final dot); a search that parses gives an id of
 * 0 or above; an error text is one printable line.
 */

#include "../providers/bunny.c"

#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct http_req rq = {
		.who = "bunny.net",
		.method = "PUT",
		.url = "https://api.bunny.net/dnszone/48213/records",
		.errtext = bn_errtext,
	};
	struct bnlist l = { 0 };
	struct addr a;
	enum rrtype t = size % 3 == 0 ? RR_A : size % 3 == 1 ? RR_AAAA :
	    RR_CNAME;
	long long id;
	char *s, *domain = NULL, err[256], text[256];
	size_t i;
	int more;

	/* The body as http.c leaves it: terminated, maybe with NULs. */
	s = fuzz_cstr(data, size);
	/* Unterminated: a parse must write err before it reads it. */
	memset(err, 'x', sizeof(err));
	if (parse_zone(s, size, size % 2 == 0 ? "" : "app", t, &l, &domain,
	    err, sizeof(err)) == -1)
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "zone: "
		    "reason is not one printable line", err);
	else {
		fuzz_check(domain != NULL && fuzz_printable(domain), "zone: "
		    "domain", domain != NULL ? domain : "(null)");
		snprintf(text, sizeof(text), "%s", domain);
		fuzz_check(strlen(domain) < sizeof(text) &&
		    rrset_host_canon(text) && strcmp(text, domain) == 0,
		    "zone: domain not canonical", domain);
		for (i = 0; i < l.n; i++) {
			fuzz_check(l.v[i].type == t && l.v[i].ttl >= 0 &&
			    l.v[i].id > 0, "zone: type, id or ttl", "");
			if (t == RR_CNAME)
				fuzz_check(fuzz_printable(l.v[i].value) &&
				    rrset_host_canon(l.v[i].value),
				    "zone: host name", l.v[i].value);
			else
				fuzz_check(addr_parse(l.v[i].value, &a) == 0 &&
				    a.family == (t == RR_A ? 4 : 6) &&
				    strcmp(a.s, l.v[i].value) == 0,
				    "zone: address", l.v[i].value);
		}
	}
	free(domain);
	bnlist_free(&l);
	memset(err, 'x', sizeof(err));
	if (parse_search(s, size, "example.test", &id, &more, err,
	    sizeof(err)) == -1)
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "search: "
		    "reason is not one printable line", err);
	else
		fuzz_check(id >= 0 && (more == 0 || more == 1), "search: id",
		    "");
	if (bn_errtext(s, size, text, sizeof(text)) == 0)
		fuzz_check(text[0] != '\0' && fuzz_printable(text), "errtext: "
		    "not one printable line", text);
	fuzz_http_error(&rq, s, size);
	free(s);
	return 0;
}
