/*
 * Porkbun API v3 answers as the porkbun provider reads them: a
 * retrieveByNameType answer (parse_records), a write's answer (its
 * status), and the error text of a failure (pb_errtext, also as
 * http_status_error() quotes it, and refused_keys(), which reclassifies
 * a 400).  The provider file is included to reach its static functions.
 *
 * Invariants: a parse that fails says why in one printable line; an
 * answer that parses gives records of the type asked only, each with an
 * id of digits, a TTL in range and a canonical content of that type (an
 * address, or a lower-case host name without its final dot); an error
 * text is one printable line.
 */

#include "../providers/porkbun.c"

#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct http_req rq = {
		.who = "Porkbun",
		.method = "POST",
		.url = "https://api.porkbun.com/api/json/v3/dns/create/example.test",
		.errtext = pb_errtext,
	};
	struct pblist l = { 0 };
	struct http_resp rs = { 0 };
	struct addr a;
	enum rrtype t = size % 3 == 0 ? RR_A : size % 3 == 1 ? RR_AAAA :
	    RR_CNAME;
	json_t *root;
	char *s, err[256], text[256];
	size_t i;

	/* The body as http.c leaves it: terminated, maybe with NULs. */
	s = fuzz_cstr(data, size);
	/* Unterminated: a parse must write err before it reads it. */
	memset(err, 'x', sizeof(err));
	if (parse_records(s, size, size % 2 == 0 ? "example.test" :
	    "app.example.test", t, &l, err, sizeof(err)) == -1)
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "records: "
		    "reason is not one printable line", err);
	else
		for (i = 0; i < l.n; i++) {
			fuzz_check(l.v[i].type == t && l.v[i].ttl >= 0 &&
			    l.v[i].id[0] != '\0' && strspn(l.v[i].id,
			    "0123456789") == strlen(l.v[i].id), "records: type, "
			    "id or ttl", l.v[i].id);
			if (t == RR_CNAME)
				fuzz_check(fuzz_printable(l.v[i].content) &&
				    rrset_host_canon(l.v[i].content),
				    "records: host name", l.v[i].content);
			else
				fuzz_check(addr_parse(l.v[i].content, &a) == 0 &&
				    a.family == (t == RR_A ? 4 : 6) &&
				    strcmp(a.s, l.v[i].content) == 0,
				    "records: address", l.v[i].content);
		}
	pblist_free(&l);
	memset(err, 'x', sizeof(err));
	if ((root = api_json_load(s, size, err, sizeof(err))) != NULL &&
	    parse_status(root, err, sizeof(err)) == -1)
		fuzz_check(fuzz_printable(err), "status: reason", err);
	json_decref(root);
	if (pb_errtext(s, size, text, sizeof(text)) == 0)
		fuzz_check(text[0] != '\0' && fuzz_printable(text), "errtext: "
		    "not one printable line", text);
	rs.body = s;
	rs.len = size;
	rs.status = 400;
	(void)refused_keys(&rs);
	fuzz_http_error(&rq, s, size);
	free(s);
	return 0;
}
