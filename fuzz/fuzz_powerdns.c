/*
 * PowerDNS API answers as the powerdns provider reads them: the zone
 * document of a read (parse_zone) and the body of an error answer
 * (http_status_error with parse_error, as the provider calls it).  The provider file is included
 * to reach its static functions.
 *
 * Invariants: a parse that fails says why in one printable line; a
 * parse that works returns, for each family asked, a strictly sorted set
 * of that family in which every address is a string of the document, and
 * a ttl only with addresses; an error answer is classified by its status
 * alone and its message is one printable line.
 */

#include "../providers/powerdns.c"

#include "fuzz.h"

#define NAME	"app.example.test."

/* Whether some string in j parses to the address a. */
static int
json_has_addr(const json_t *j, const struct addr *a)
{
	const char *key;
	json_t *v;
	struct addr w;
	size_t i;

	if (json_is_string(j))
		return addr_parse(json_string_value(j), &w) == 0 &&
		    addr_cmp(&w, a) == 0;
	if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			if (json_has_addr(v, a))
				return 1;
	} else if (json_is_object(j)) {
		json_object_foreach((json_t *)j, key, v)
			if (json_has_addr(v, a))
				return 1;
	}
	return 0;
}

static void
zone(const char *buf, size_t len, const int *fams, size_t nsets)
{
	struct rrset sets[2];
	json_t *doc = NULL;
	json_error_t je;
	char err[256];
	size_t i, k;

	memset(sets, 0, sizeof(sets));
	for (k = 0; k < nsets; k++)
		sets[k].type = rrtype_of_family(fams[k]);
	err[0] = '\0';
	if (parse_zone(buf, len, NAME, sets, nsets, err, sizeof(err)) == -1) {
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "zone: "
		    "reason is not one printable line", err);
		goto out;
	}
	doc = json_loadb(buf, len, 0, &je);
	fuzz_check(doc != NULL, "zone: accepted a document jansson refuses",
	    NULL);
	for (k = 0; k < nsets; k++) {
		fuzz_check(sets[k].type == rrtype_of_family(fams[k]), "zone: type changed",
		    NULL);
		fuzz_check(sets[k].ttl >= 0 && sets[k].ttl <= 2147483647 &&
		    (sets[k].addrs.n > 0 || sets[k].ttl == 0), "zone: ttl",
		    NULL);
		for (i = 0; i < sets[k].addrs.n; i++) {
			fuzz_check(sets[k].addrs.v[i].family == fams[k],
			    "zone: address of the other family",
			    sets[k].addrs.v[i].s);
			fuzz_check(i == 0 || addr_cmp(&sets[k].addrs.v[i - 1],
			    &sets[k].addrs.v[i]) < 0, "zone: not sorted",
			    NULL);
			fuzz_check(json_has_addr(doc, &sets[k].addrs.v[i]),
			    "zone: address not in the document",
			    sets[k].addrs.v[i].s);
		}
	}
out:
	json_decref(doc);
	for (k = 0; k < nsets; k++)
		addrset_free(&sets[k].addrs);
}

static void
error_answer(const char *buf, size_t len)
{
	static const struct http_req rq = {
		.who = "PowerDNS",
		.method = "GET",
		.url = "http://127.0.0.1:8081/api",
		.errtext = parse_error,
		.auth_hint = "check apiKey",
		.notfound_hint = "zone example.test. not found",
	};

	fuzz_http_error(&rq, buf, len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int both[] = { 4, 6 }, six[] = { 6 };
	char *s;

	/* The body as body_write() leaves it: terminated, maybe with NULs. */
	s = fuzz_cstr(data, size);
	/* Both families, or AAAA alone (the A RRsets must be skipped). */
	if (size % 3 != 0)
		zone(s, size, both, 2);
	else
		zone(s, size, six, 1);
	error_answer(s, size);
	free(s);
	return 0;
}
