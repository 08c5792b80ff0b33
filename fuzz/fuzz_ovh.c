/*
 * OVH answers as the ovh provider reads them: the server's time
 * (ovh_parse_time), a list of record ids (ovh_parse_ids), one record
 * (ovh_parse_record, A, AAAA or CNAME) and an error answer (ovh_errtext,
 * through http_status_error).  The provider file is included to reach
 * its static functions.
 *
 * Invariants: a time is positive; ids are never more than the room
 * given and never negative; a record that parses is an address of the
 * family asked for, or a CNAME's target that is a canonical host name
 * (lower case, no final dot), with a ttl in range; every reason and
 * message is one printable line.
 */

#include "../providers/ovh.c"

#include "fuzz.h"

#define FUZZ_IDS	8

static void
ids(const char *buf, size_t len)
{
	long long v[FUZZ_IDS];
	char err[256];
	int i, n;

	err[0] = '\0';
	n = ovh_parse_ids(buf, len, v, FUZZ_IDS, err, sizeof(err));
	if (n == -1) {
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "ids: reason "
		    "is not one printable line", err);
		return;
	}
	fuzz_check(n >= 0 && n <= FUZZ_IDS, "ids: count", NULL);
	for (i = 0; i < n; i++)
		fuzz_check(v[i] >= 0, "ids: negative", NULL);
}

static void
record(const char *buf, size_t len, enum rrtype t)
{
	struct orec r;
	char err[256], canon[256];

	err[0] = '\0';
	switch (ovh_parse_record(buf, len, t, "app", "example.test", &r, err,
	    sizeof(err))) {
	case -1:
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "record: "
		    "reason is not one printable line", err);
		return;
	case 1:
		return;
	}
	if (t == RR_CNAME) {
		snprintf(canon, sizeof(canon), "%s", r.target);
		fuzz_check(rrset_host_canon(canon) &&
		    strcmp(canon, r.target) == 0, "record: target not "
		    "canonical", r.target);
	} else
		fuzz_check(r.a.family == (t == RR_AAAA ? 6 : 4), "record: "
		    "other family", r.a.s);
	fuzz_check(r.ttl >= 0 && r.ttl <= 2147483647, "record: ttl", NULL);
}

static void
error_answer(const char *buf, size_t len)
{
	static const struct http_req rq = {
		.who = "OVH",
		.method = "POST",
		.url = "https://eu.api.ovh.com/1.0/domain/zone/x/record",
		.errtext = ovh_errtext,
	};
	long long t;

	fuzz_http_error(&rq, buf, len);
	t = 0;
	if (ovh_parse_time(buf, len, &t) == 0)
		fuzz_check(t > 0, "time: not positive", NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	/* The body as http_call() leaves it: terminated, maybe with NULs. */
	s = fuzz_cstr(data, size);
	ids(s, size);
	record(s, size, (enum rrtype)(size % 3));
	error_answer(s, size);
	free(s);
	return 0;
}
