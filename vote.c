/*
 * The tally of a round (ddup-check(8), SEVERAL CHECKERS): see vote.h.
 */

#include <stddef.h>
#include <stdlib.h>

#include "util.h"
#include "vote.h"

/* Index in reports of each checker's latest report in the window. */
static void
latest(const struct vote_round *r, const struct vote_report *reports,
    size_t nreports, size_t *pick)
{
	const struct vote_report *v;
	size_t i;

	for (i = 0; i < r->ncheckers; i++)
		pick[i] = nreports;
	for (i = 0; i < nreports; i++) {
		v = &reports[i];
		if (v->checker >= r->ncheckers ||
		    (v->slot != r->slot && v->slot != r->slot - 1))
			continue;
		if (pick[v->checker] == nreports ||
		    v->seq > reports[pick[v->checker]].seq)
			pick[v->checker] = i;
	}
}

void
vote_tally(struct vote_round *r, const struct vote_report *reports,
    size_t nreports, size_t first, size_t n, struct vote_ep *out)
{
	const struct vote_report *v;
	size_t *pick, i, j;
	size_t quorum = r->quorum < 1 ? 1 : (size_t)r->quorum;

	pick = xcalloc(r->ncheckers + 1, sizeof(*pick));
	latest(r, reports, nreports, pick);
	r->nheard = 0;
	for (j = 0; j < n; j++) {
		out[j].verdict = VERDICT_VOID;
		out[j].npass = out[j].nfail = 0;
	}
	for (i = 0; i < r->ncheckers; i++) {
		r->heard[i] = HEARD_NONE;
		if (pick[i] == nreports)
			continue;
		v = &reports[pick[i]];
		if (!v->in_step || v->nresults < first + n) {
			r->heard[i] = HEARD_OUT_OF_STEP;
			continue;
		}
		r->heard[i] = HEARD_IN_STEP;
		r->nheard++;
		for (j = 0; j < n; j++) {
			if (v->results[first + j] == VOTE_PASS)
				out[j].npass++;
			else if (v->results[first + j] == VOTE_FAIL)
				out[j].nfail++;
		}
	}
	r->void_all = r->nheard < quorum;
	for (j = 0; j < n && !r->void_all; j++) {
		if (out[j].nfail >= quorum)
			out[j].verdict = VERDICT_FAIL;
		else if (out[j].npass >= quorum)
			out[j].verdict = VERDICT_PASS;
	}
	free(pick);
}

const char *
vote_verdict_str(int v)
{
	switch (v) {
	case VERDICT_PASS:
		return "pass";
	case VERDICT_FAIL:
		return "fail";
	default:
		return "void";
	}
}
