/*
 * vote_tally() on reports as a shared database may hold them: any
 * checker index, slot, digest flag and result bytes of any length, as
 * another checker (or anyone with write access to the database) left
 * them.  Invariants: an endpoint fails only with quorum failures counted
 * and passes only with quorum passes and fewer than quorum failures; no
 * more votes than checkers heard, no more heard than the fleet; a round
 * with fewer heard than quorum is void for every endpoint.
 */

#include "fuzz.h"
#include "vote.h"

#define MAXREP	16
#define MAXEP	32

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vote_report	 rep[MAXREP];
	struct vote_ep		 out[MAXEP];
	struct vote_round	 r;
	char			*res[MAXREP];
	int			 heard[8];
	size_t			 i, n = 0, pos, first, neps, len;

	if (size < 4)
		return 0;
	memset(&r, 0, sizeof(r));
	r.ncheckers = (size_t)(data[0] % 8) + 1;
	r.quorum = (long)(data[1] % r.ncheckers) + 1;
	r.slot = 1000;
	r.heard = heard;
	first = data[2] % 8;
	neps = (size_t)(data[3] % 16) + 1;
	pos = 4;
	while (n < MAXREP && pos + 4 <= size) {
		len = data[pos + 3] % 40;
		if (pos + 4 + len > size)
			len = size - pos - 4;
		res[n] = fuzz_cstr(data + pos + 4, len);
		rep[n].checker = data[pos] % (r.ncheckers + 1);
		rep[n].slot = r.slot - (data[pos + 1] % 4);
		rep[n].seq = data[pos + 2] >> 1;
		rep[n].in_step = data[pos + 2] & 1;
		rep[n].results = res[n];
		rep[n].nresults = strlen(res[n]);
		pos += 4 + len;
		n++;
	}
	/* A checker index outside the fleet is the caller's to drop. */
	for (i = 0; i < n; i++)
		if (rep[i].checker >= r.ncheckers)
			rep[i].checker = r.ncheckers - 1;
	vote_tally(&r, rep, n, first, neps, out);
	fuzz_check(r.nheard <= r.ncheckers, "heard more than the fleet", NULL);
	for (i = 0; i < neps; i++) {
		fuzz_check(out[i].npass + out[i].nfail <= r.nheard,
		    "more votes than checkers heard", NULL);
		if (out[i].verdict == VERDICT_FAIL)
			fuzz_check((long)out[i].nfail >= r.quorum,
			    "failed without a quorum", NULL);
		if (out[i].verdict == VERDICT_PASS)
			fuzz_check((long)out[i].npass >= r.quorum &&
			    (long)out[i].nfail < r.quorum,
			    "passed without a quorum, or with one of failures",
			    NULL);
		if ((long)r.nheard < r.quorum)
			fuzz_check(out[i].verdict == VERDICT_VOID && r.void_all,
			    "counted with fewer heard than quorum", NULL);
	}
	for (i = 0; i < n; i++)
		free(res[i]);
	return 0;
}
