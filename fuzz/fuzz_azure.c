/*
 * Azure answers as the azure provider reads them: a token answer
 * (azure_parse_token), a record set (azure_parse_recordset, for A, AAAA
 * and CNAME) and an error answer (azure_errtext, azure_errcode, through
 * http_status_error).  The provider file is included to reach its
 * static functions.
 *
 * Invariants: a failed parse says why in one printable line and leaves
 * nothing behind; a token is non-empty and has no line break; a record
 * set holds only addresses of the family asked for, strictly sorted, a
 * ttl only with addresses, a CNAME one host name as struct rrset holds
 * it (canonical already) and a ttl only with it, and an etag without a line break that fits
 * its buffer; every error message is one printable line.
 */

#include "../providers/azure.c"

#include "fuzz.h"

static void
token(const char *buf, size_t len)
{
	char err[256], *t;

	err[0] = '\0';
	if ((t = azure_parse_token(buf, len, err, sizeof(err))) == NULL) {
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "token: "
		    "reason is not one printable line", err);
		return;
	}
	fuzz_check(t[0] != '\0' && strpbrk(t, "\r\n") == NULL, "token: empty "
	    "or with a line break", NULL);
	free(t);
}

static void
cname(struct rrset *set)
{
	char *again;

	fuzz_check(set->addrs.n == 0 && (set->target != NULL ||
	    set->ttl == 0), "recordset: CNAME with addresses, or a ttl "
	    "without a target", NULL);
	if (set->target == NULL)
		return;
	again = xstrdup(set->target);
	fuzz_check(rrset_host_canon(again) && strcmp(again, set->target) ==
	    0, "recordset: CNAME target not canonical", set->target);
	free(again);
	rrset_clear(set);
}

static void
recordset(const char *buf, size_t len, int family)
{
	struct rrset set;
	char err[256], etag[AZ_ETAG_MAX];
	size_t i;

	memset(&set, 0, sizeof(set));
	set.type = family == 6 ? RR_AAAA : family == 4 ? RR_A : RR_CNAME;
	err[0] = '\0';
	if (azure_parse_recordset(buf, len, &set, etag, sizeof(etag), err,
	    sizeof(err)) == -1) {
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "recordset: "
		    "reason is not one printable line", err);
		fuzz_check(set.addrs.n == 0 && set.ttl == 0 && etag[0] == '\0' &&
		    set.target == NULL, "recordset: a failure left records",
		    NULL);
		return;
	}
	if (set.type == RR_CNAME) {
		cname(&set);
		return;
	}
	fuzz_check(strlen(etag) < sizeof(etag) && strpbrk(etag, "\r\n") ==
	    NULL, "recordset: etag", etag);
	fuzz_check(set.ttl >= 0 && set.ttl <= 2147483647 &&
	    (set.addrs.n > 0 || set.ttl == 0), "recordset: ttl", NULL);
	for (i = 0; i < set.addrs.n; i++) {
		fuzz_check(set.addrs.v[i].family == family, "recordset: "
		    "address of the other family", set.addrs.v[i].s);
		fuzz_check(i == 0 || addr_cmp(&set.addrs.v[i - 1],
		    &set.addrs.v[i]) < 0, "recordset: not sorted", NULL);
	}
	addrset_free(&set.addrs);
}

static void
error_answer(const char *buf, size_t len)
{
	static const struct http_req rq = {
		.who = "Azure DNS",
		.method = "PUT",
		.url = "https://management.azure.com/subscriptions/x",
		.errtext = azure_errtext,
	};
	char code[64];

	fuzz_http_error(&rq, buf, len);
	azure_errcode(buf, len, code, sizeof(code));
	fuzz_check(strlen(code) < sizeof(code), "errcode: too long", NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	/* The body as http_call() leaves it: terminated, maybe with NULs. */
	s = fuzz_cstr(data, size);
	token(s, size);
	/* A, AAAA or CNAME (0) by the input's length. */
	recordset(s, size, size % 3 == 0 ? 4 : size % 3 == 1 ? 6 : 0);
	error_answer(s, size);
	free(s);
	return 0;
}
