#ifndef DDUP_VOTE_H
#define DDUP_VOTE_H

/*
 * The vote of several checkers (ddup-check(8), SEVERAL CHECKERS) as a
 * pure function: the reports in the window of a round in, one result per
 * endpoint out, for the pure decide() (decide.h).  No I/O, no clock:
 * tested by tables.
 *
 * A report is what one run of one checker saw: one byte per endpoint of
 * the configuration, in its order (every domain's endpoints in file
 * order, domain after domain).  Reports are counted only when their
 * configuration digest is the decider's, so the same position is the
 * same endpoint in every report counted.
 */

#include <stddef.h>

/* One endpoint's result in a report. */
#define VOTE_PASS	'p'
#define VOTE_FAIL	'f'
#define VOTE_NONE	'-'	/* not counted: its controlUrl failed, or no check */

struct vote_report {
	size_t		 checker;	/* index in the fleet */
	long long	 slot;		/* of the database time of the report */
	long long	 seq;		/* orders one checker's reports: latest wins */
	int		 in_step;	/* its digest is the decider's */
	const char	*results;	/* VOTE_* per endpoint */
	size_t		 nresults;	/* endpoints of the configuration */
};

/* The round's result of one endpoint. */
enum vote_verdict {
	VERDICT_VOID = 0,	/* its counters do not change */
	VERDICT_PASS,
	VERDICT_FAIL
};

struct vote_ep {
	int		 verdict;	/* enum vote_verdict */
	size_t		 npass;		/* checkers counted that saw it pass */
	size_t		 nfail;		/* and fail */
};

/* What the round heard, per checker of the fleet. */
enum vote_heard {
	HEARD_NONE = 0,		/* no report in the window */
	HEARD_IN_STEP,		/* its latest report is counted */
	HEARD_OUT_OF_STEP	/* its latest report has another digest */
};

struct vote_round {
	long long	 slot;		/* the round's slot */
	long		 quorum;	/* checkers that must agree, 1 or more */
	size_t		 ncheckers;	/* the fleet */
	int		*heard;		/* out: enum vote_heard per checker */
	size_t		 nheard;	/* out: checkers counted */
	int		 void_all;	/* out: fewer than quorum counted */
};

/*
 * The round of slot r->slot over the endpoints first .. first + n - 1
 * (one domain's): the latest report of each checker whose slot is
 * r->slot or the one before is taken (others are outside the window),
 * and counted when in step.  An endpoint fails with at least quorum
 * failures, else passes with at least quorum passes, else is void; with
 * fewer checkers counted than quorum every endpoint is void (so with a
 * majority quorum a lone checker can fail nothing).  A report with fewer
 * than first + n results counts as not in step.  out has n entries.
 */
void	 vote_tally(struct vote_round *r, const struct vote_report *reports,
	    size_t nreports, size_t first, size_t n, struct vote_ep *out);

const char	*vote_verdict_str(int v);

#endif
