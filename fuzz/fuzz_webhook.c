/*
 * The webhook provider's JSON (providers/webhook.h), any bytes as a
 * server may answer them: the domain filter of GET / (wh_filter_match),
 * the endpoints of GET /records (wh_records_parse), and the changes made
 * from what was read (wh_changes).
 *
 * Invariants: a filter is 1, 0 or -1, the reason of 0 or -1 one printable
 * line; a records answer that fails says why in one printable line and
 * holds nothing; one that parses holds sets of their type only
 * (canonical addresses of the family, sorted without duplicates, or one
 * host name), a TTL in range and the endpoint of each non-empty set; no
 * change from a set to itself is a body; the body that empties the name
 * is JSON with a delete list only, one endpoint per set read.
 */

#include <jansson.h>

#include "provider.h"
#include "providers/webhook.h"
#include "rrset.h"

#include "fuzz.h"

static void
check_sets(const struct rrset *s, json_t *const *cur)
{
	struct addr a;
	char *c;
	size_t k, i;

	for (k = 0; k < RR_NTYPES; k++) {
		fuzz_check(s[k].ttl >= 0 && s[k].ttl <= 2147483647, "ttl", "");
		fuzz_check(rrset_empty(&s[k]) || cur[k] != NULL,
		    "a set without its endpoint", "");
		if (s[k].type == RR_CNAME) {
			fuzz_check(s[k].addrs.n == 0, "cname addresses", "");
			if (s[k].target != NULL) {
				/* Canonical: the rule leaves it as it is. */
				c = fuzz_cstr((const uint8_t *)s[k].target,
				    strlen(s[k].target));
				fuzz_check(rrset_host_canon(c) &&
				    strcmp(c, s[k].target) == 0,
				    "cname target", s[k].target);
				free(c);
			}
			continue;
		}
		fuzz_check(s[k].target == NULL, "address set target", "");
		for (i = 0; i < s[k].addrs.n; i++) {
			fuzz_check(addr_parse(s[k].addrs.v[i].s, &a) == 0 &&
			    a.family == (s[k].type == RR_A ? 4 : 6) &&
			    strcmp(a.s, s[k].addrs.v[i].s) == 0, "address",
			    s[k].addrs.v[i].s);
			fuzz_check(i == 0 || strcmp(s[k].addrs.v[i - 1].s,
			    s[k].addrs.v[i].s) != 0, "duplicate address",
			    s[k].addrs.v[i].s);
		}
	}
}

/* body (freed) is NULL for n 0, else JSON with n endpoints to delete only. */
static void
check_delete(char *body, size_t n)
{
	json_error_t je;
	json_t *doc;

	fuzz_check((body == NULL) == (n == 0), "delete body", "");
	if (body == NULL)
		return;
	doc = json_loads(body, 0, &je);
	fuzz_check(doc != NULL && json_object_size(doc) == 1 &&
	    json_array_size(json_object_get(doc, "delete")) == n,
	    "delete body", body);
	json_decref(doc);
	free(body);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *fqdn = size % 2 == 0 ? "app.example.test" : "example.test";
	struct rrset s[RR_NTYPES], none[RR_NTYPES];
	json_t *cur[RR_NTYPES];
	char *buf, *body, err[256];
	size_t k, n = 0, nempty = 0;
	int m;

	buf = fuzz_cstr(data, size);
	memset(err, 'x', sizeof(err));
	m = wh_filter_match(buf, size, fqdn, err, sizeof(err));
	fuzz_check(m == -1 || m == 0 || m == 1, "filter result", "");
	if (m != 1)
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "filter: "
		    "reason is not one printable line", err);

	memset(s, 0, sizeof(s));
	memset(none, 0, sizeof(none));
	for (k = 0; k < RR_NTYPES; k++)
		s[k].type = none[k].type = (enum rrtype)k;
	memset(err, 'x', sizeof(err));
	if (wh_records_parse(buf, size, fqdn, s, cur, RR_NTYPES, err,
	    sizeof(err)) == -1) {
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "records: "
		    "reason is not one printable line", err);
		for (k = 0; k < RR_NTYPES; k++)
			fuzz_check(cur[k] == NULL && rrset_empty(&s[k]),
			    "records: held after a failure", "");
		goto out;
	}
	check_sets(s, cur);
	/* To itself: nothing, but an endpoint listed without targets goes. */
	for (k = 0; k < RR_NTYPES; k++) {
		n += cur[k] != NULL;
		nempty += cur[k] != NULL && rrset_empty(&s[k]);
	}
	body = wh_changes(fqdn, cur, s, s, RR_NTYPES);
	check_delete(body, nempty);
	check_delete(wh_changes(fqdn, cur, s, none, RR_NTYPES), n);
	wh_cur_free(cur, RR_NTYPES);
out:
	for (k = 0; k < RR_NTYPES; k++)
		rrset_clear(&s[k]);
	free(buf);
	return 0;
}
