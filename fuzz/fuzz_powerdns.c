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

/*
 * The status and Content-Type come from the input's length, so every
 * input is read as one error answer (a loop over all of them would cost
 * thirty parses per input) and the corpus still covers them all.
 */
static void
error_answer(const char *buf, size_t len)
{
	static const long codes[] = { 400, 401, 403, 404, 409, 422, 429, 500,
	    503, 302 };
	static const char *ctypes[] = { "application/json",
	    "application/json; charset=utf-8", "text/html", NULL };
	struct http_req rq = {
		.who = "PowerDNS",
		.method = "GET",
		.url = "http://127.0.0.1:8081/api",
		.errtext = parse_error,
		.auth_hint = "check apiKey",
		.notfound_hint = "zone example.test. not found",
	};
	struct http_resp rs;
	char err[512];
	enum perr e, want;
	long code;

	memset(&rs, 0, sizeof(rs));
	rs.body = (char *)(uintptr_t)buf;
	rs.len = len;
	rs.retry_after = (long long)(len % 5) - 1;
	code = codes[len % (sizeof(codes) / sizeof(codes[0]))];
	rs.status = code;
	rs.ctype = (char *)(uintptr_t)ctypes[len / 7 %
	    (sizeof(ctypes) / sizeof(ctypes[0]))];
	err[0] = '\0';
	e = http_status_error(&rq, &rs, err, sizeof(err));
	want = code == 401 || code == 403 ? PERR_AUTH : code == 404 ?
	    PERR_NOTFOUND : code == 429 ? PERR_RATELIMIT : code >= 500 ?
	    PERR_TEMP : PERR_INVALID;
	fuzz_check(e == want, "error: class", err);
	fuzz_check(err[0] != '\0' && fuzz_printable(err), "error: message "
	    "is not one printable line", err);
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
