/*
 * The vote of several checkers (vote.c), by tables: the reports in a
 * round's window, what each endpoint's round result is, and who was
 * heard; then rounds of votes fed to decide(), as a run would.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "decide.h"
#include "vote.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define MAXREP	8
#define MAXCK	5

/* A report: checker, slot, seq, in step, results ('p', 'f', '-'). */
struct rep {
	size_t		 checker;
	long long	 slot;
	long long	 seq;
	int		 in_step;
	const char	*results;
};

struct tcase {
	const char	*name;
	size_t		 ncheckers;
	long		 quorum;
	long long	 slot;
	struct rep	 reps[MAXREP];	/* up to the first with results NULL */
	size_t		 first;		/* the domain's endpoints: first .. */
	const char	*verdicts;	/* per endpoint: P pass, F fail, V void */
	const char	*heard;		/* per checker: - none, I in step, O out */
	int		 void_all;
};

static const struct tcase cases[] = {
	{ "three agree", 3, 2, 10,
	  { { 0, 10, 1, 1, "ppf" }, { 1, 10, 2, 1, "ppf" },
	    { 2, 10, 3, 1, "ppf" } }, 0, "PPF", "III", 0 },
	{ "one cut off is outvoted", 3, 2, 10,
	  { { 0, 10, 1, 1, "pp" }, { 1, 9, 2, 1, "pp" },
	    { 2, 10, 3, 1, "ff" } }, 0, "PP", "III", 0 },
	{ "two of three fail it", 3, 2, 10,
	  { { 0, 10, 1, 1, "pf" }, { 1, 9, 2, 1, "pf" },
	    { 2, 10, 3, 1, "pp" } }, 0, "PF", "III", 0 },
	{ "a lone survivor fails nothing", 3, 2, 10,
	  { { 0, 10, 1, 1, "ff" } }, 0, "VV", "I--", 1 },
	{ "a lone survivor passes nothing either", 3, 2, 10,
	  { { 2, 10, 1, 1, "pp" } }, 0, "VV", "--I", 1 },
	{ "reports older than the slot before are outside", 3, 2, 10,
	  { { 0, 10, 5, 1, "f" }, { 1, 8, 4, 1, "f" }, { 2, 7, 3, 1, "f" } },
	  0, "V", "I--", 1 },
	{ "a report from a later slot is outside too", 3, 2, 10,
	  { { 0, 10, 5, 1, "f" }, { 1, 11, 6, 1, "f" } }, 0, "V", "I--", 1 },
	{ "the latest report of a checker wins", 3, 2, 10,
	  { { 0, 10, 3, 1, "f" }, { 1, 9, 1, 1, "f" }, { 1, 10, 4, 1, "p" },
	    { 0, 9, 2, 1, "p" } }, 0, "V", "II-", 0 },
	{ "by seq, not by the order given", 3, 2, 10,
	  { { 1, 10, 9, 1, "f" }, { 1, 10, 4, 1, "p" }, { 0, 10, 1, 1, "f" } },
	  0, "F", "II-", 0 },
	{ "one pass one fail, no third: void", 3, 2, 10,
	  { { 0, 10, 1, 1, "p" }, { 1, 10, 2, 1, "f" } }, 0, "V", "II-", 0 },
	{ "not checked ('-') is no vote", 3, 2, 10,
	  { { 0, 10, 1, 1, "-p" }, { 1, 10, 2, 1, "fp" },
	    { 2, 10, 3, 1, "-f" } }, 0, "VP", "III", 0 },
	{ "another digest is not counted", 3, 2, 10,
	  { { 0, 10, 1, 1, "f" }, { 1, 10, 2, 0, "f" }, { 2, 10, 3, 0, "f" } },
	  0, "V", "IOO", 1 },
	{ "out of step by its latest report only", 3, 2, 10,
	  { { 0, 10, 1, 1, "f" }, { 1, 9, 2, 1, "f" }, { 1, 10, 3, 0, "f" } },
	  0, "V", "IO-", 1 },
	{ "a report too short counts as out of step", 3, 2, 10,
	  { { 0, 10, 1, 1, "ff" }, { 1, 10, 2, 1, "f" } }, 0, "VV", "IO-", 1 },
	{ "quorum 1: any failure fails (failures win)", 3, 1, 10,
	  { { 0, 10, 1, 1, "pf" }, { 1, 10, 2, 1, "fp" } }, 0, "FF", "II-", 0 },
	{ "quorum 3 of 3: all must agree", 3, 3, 10,
	  { { 0, 10, 1, 1, "fpf" }, { 1, 10, 2, 1, "fpp" },
	    { 2, 10, 3, 1, "fp-" } }, 0, "FPV", "III", 0 },
	{ "quorum 3, two heard: void", 3, 3, 10,
	  { { 0, 10, 1, 1, "f" }, { 1, 10, 2, 1, "f" } }, 0, "V", "II-", 1 },
	{ "two of two", 2, 2, 10,
	  { { 0, 10, 1, 1, "fp" }, { 1, 9, 2, 1, "pp" } }, 0, "VP", "II", 0 },
	{ "one of one", 1, 1, 10,
	  { { 0, 10, 1, 1, "fp" } }, 0, "FP", "I", 0 },
	{ "a domain's slice", 3, 2, 10,
	  { { 0, 10, 1, 1, "ffpp" }, { 1, 10, 2, 1, "ffpf" } }, 2, "PV", "II-",
	  0 },
	{ "a checker not in the fleet is ignored", 2, 2, 10,
	  { { 0, 10, 1, 1, "f" }, { 7, 10, 2, 1, "f" } }, 0, "V", "I-", 1 },
	{ "five, three fail", 5, 3, 10,
	  { { 0, 10, 1, 1, "f" }, { 1, 10, 2, 1, "f" }, { 2, 9, 3, 1, "f" },
	    { 3, 10, 4, 1, "p" }, { 4, 10, 5, 1, "p" } }, 0, "F", "IIIII", 0 },
	{ "none heard", 3, 2, 10, { { 0 } }, 0, "VVV", "---", 1 },
};

static void
tally(const struct tcase *t, struct vote_ep *out, int *heard,
    struct vote_round *r)
{
	struct vote_report reps[MAXREP];
	size_t n;

	for (n = 0; n < MAXREP && t->reps[n].results != NULL; n++) {
		reps[n].checker = t->reps[n].checker;
		reps[n].slot = t->reps[n].slot;
		reps[n].seq = t->reps[n].seq;
		reps[n].in_step = t->reps[n].in_step;
		reps[n].results = t->reps[n].results;
		reps[n].nresults = strlen(t->reps[n].results);
	}
	memset(r, 0, sizeof(*r));
	r->slot = t->slot;
	r->quorum = t->quorum;
	r->ncheckers = t->ncheckers;
	r->heard = heard;
	vote_tally(r, reps, n, t->first, strlen(t->verdicts), out);
}

static void
test_cases(void **state)
{
	static const char vch[] = "VPF", hch[] = "-IO";
	struct vote_ep out[8];
	struct vote_round r;
	int heard[MAXCK];
	char got[16], gheard[MAXCK + 1];
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcase *t = &cases[i];

		tally(t, out, heard, &r);
		for (j = 0; j < strlen(t->verdicts); j++)
			got[j] = vch[out[j].verdict];
		got[j] = '\0';
		for (j = 0; j < t->ncheckers; j++)
			gheard[j] = hch[heard[j]];
		gheard[j] = '\0';
		if (strcmp(got, t->verdicts) != 0 ||
		    strcmp(gheard, t->heard) != 0 || r.void_all != t->void_all)
			fail_msg("%s: verdicts %s heard %s void_all %d; wanted "
			    "%s %s %d", t->name, got, gheard, r.void_all,
			    t->verdicts, t->heard, t->void_all);
	}
}

/* The counts behind a verdict, shown by --status. */
static void
test_counts(void **state)
{
	struct vote_ep out[2];
	struct vote_round r;
	int heard[MAXCK];

	(void)state;
	tally(&cases[10], out, heard, &r);
	assert_int_equal(out[0].npass, 0);
	assert_int_equal(out[0].nfail, 1);
	assert_int_equal(out[1].npass, 2);
	assert_int_equal(out[1].nfail, 1);
	assert_int_equal(r.nheard, 3);
	assert_string_equal(vote_verdict_str(VERDICT_FAIL), "fail");
	assert_string_equal(vote_verdict_str(VERDICT_VOID), "void");
}

/*
 * Rounds fed to decide(), as the deciding run does: the verdict is the
 * check result, a void round leaves the counters alone.  Three
 * checkers, attempts 2, one endpoint published.
 */
struct round {
	const char	*votes;		/* per checker: p, f, - (not heard) */
	int		 removed;	/* after the round */
	long		 failures;
};

static const struct {
	const char	*name;
	struct round	 rounds[8];	/* up to votes NULL */
} rounds[] = {
	{ "a cut-off checker never removes it", {
	  { "ppf", 0, 0 }, { "ppf", 0, 0 }, { "ppf", 0, 0 }, { "ppf", 0, 0 } } },
	{ "a real failure is removed after attempts rounds", {
	  { "fff", 0, 1 }, { "ff-", 1, 2 }, { "fff", 1, 3 } } },
	{ "a lone survivor changes nothing", {
	  { "f--", 0, 0 }, { "f--", 0, 0 }, { "f--", 0, 0 } } },
	{ "void rounds do not reset a streak", {
	  { "ffp", 0, 1 }, { "f-p", 0, 1 }, { "ffp", 1, 2 } } },
};

static void
test_rounds(void **state)
{
	struct vote_report reps[3];
	struct vote_round r;
	struct vote_ep out;
	struct dec_domain d;
	struct dec_ep e;
	char res[3][2];
	int heard[3];
	size_t i, k, c, n;

	(void)state;
	for (i = 0; i < sizeof(rounds) / sizeof(rounds[0]); i++) {
		memset(&e, 0, sizeof(e));
		e.has_state = 1;
		e.published = 1;
		for (k = 0; k < 8 && rounds[i].rounds[k].votes != NULL; k++) {
			const struct round *rd = &rounds[i].rounds[k];

			for (n = c = 0; c < 3; c++) {
				if (rd->votes[c] == '-')
					continue;
				res[c][0] = rd->votes[c];
				res[c][1] = '\0';
				reps[n].checker = c;
				reps[n].slot = (long long)k;
				reps[n].seq = (long long)(k * 3 + c);
				reps[n].in_step = 1;
				reps[n].results = res[c];
				reps[n].nresults = 1;
				n++;
			}
			memset(&r, 0, sizeof(r));
			r.slot = (long long)k;
			r.quorum = 2;
			r.ncheckers = 3;
			r.heard = heard;
			vote_tally(&r, reps, n, 0, 1, &out);
			memset(&d, 0, sizeof(d));
			d.attempts = 2;
			d.recover_after = 1;
			d.min_healthy = 1;
			e.result = out.verdict == VERDICT_PASS ? CR_PASS :
			    out.verdict == VERDICT_FAIL ? CR_FAIL : CR_NONE;
			decide(&d, &e, 1);
			if (e.new_removed != rd->removed ||
			    e.new_failures != rd->failures)
				fail_msg("%s, round %zu: removed %d failures %ld;"
				    " wanted %d %ld", rounds[i].name, k,
				    e.new_removed, e.new_failures, rd->removed,
				    rd->failures);
			e.failures = e.new_failures;
			e.passes = e.new_passes;
			e.removed = e.new_removed;
			e.published = e.publish || (!d.any_healthy &&
			    e.published);
		}
	}
}

/*
 * The window across slots, as the fleet runs: in each slot checker 0
 * decides first with its fresh report while the others' latest are from
 * the slot before (then they report too).  A server that stops before
 * slot 1 is removed in round attempts + 1; one that comes back is
 * published again one round later than with one checker.
 */
static const struct {
	long		 attempts;
	const char	*up;		/* per slot: 1 the server answers */
	const char	*published;	/* per slot, after its round */
} windows[] = {
	{ 1, "1000", "1100" },
	{ 2, "10000", "11100" },
	{ 3, "100000", "111100" },
	{ 1, "100111", "110011" },
	{ 2, "1000011", "1110001" },
};

static void
test_window(void **state)
{
	struct vote_report reps[3];
	char res[3][2];
	struct vote_round r;
	struct vote_ep out;
	struct dec_domain d;
	struct dec_ep e;
	int heard[3];
	char got[16];
	size_t i, k, c;

	(void)state;
	for (i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
		memset(&e, 0, sizeof(e));
		e.has_state = 1;
		e.published = 1;
		memset(reps, 0, sizeof(reps));
		for (c = 0; c < 3; c++) {
			/* Every checker saw it pass in slot 0. */
			res[c][0] = VOTE_PASS;
			res[c][1] = '\0';
			reps[c].checker = c;
			reps[c].slot = 0;
			reps[c].seq = (long long)c;
			reps[c].in_step = 1;
			reps[c].results = res[c];
			reps[c].nresults = 1;
		}
		got[0] = '1';
		for (k = 1; windows[i].up[k] != '\0'; k++) {
			char v = windows[i].up[k] == '1' ? VOTE_PASS : VOTE_FAIL;

			/* The decider's report of slot k, the others' of k - 1. */
			res[0][0] = v;
			reps[0].slot = (long long)k;
			reps[0].seq = (long long)(k * 3);
			memset(&r, 0, sizeof(r));
			r.slot = (long long)k;
			r.quorum = 2;
			r.ncheckers = 3;
			r.heard = heard;
			vote_tally(&r, reps, 3, 0, 1, &out);
			memset(&d, 0, sizeof(d));
			d.attempts = windows[i].attempts;
			d.recover_after = 1;
			d.min_healthy = 1;
			e.result = out.verdict == VERDICT_PASS ? CR_PASS :
			    out.verdict == VERDICT_FAIL ? CR_FAIL : CR_NONE;
			decide(&d, &e, 1);
			e.failures = e.new_failures;
			e.passes = e.new_passes;
			e.removed = e.new_removed;
			e.published = e.publish || (!d.any_healthy &&
			    e.published);
			got[k] = e.publish ? '1' : '0';
			/* Then the others report in slot k. */
			for (c = 1; c < 3; c++) {
				res[c][0] = v;
				reps[c].slot = (long long)k;
				reps[c].seq = (long long)(k * 3 + c);
			}
		}
		got[k] = '\0';
		if (strcmp(got, windows[i].published) != 0)
			fail_msg("attempts %ld, up %s: published %s; wanted %s",
			    windows[i].attempts, windows[i].up, got,
			    windows[i].published);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_rounds),
		cmocka_unit_test(test_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
