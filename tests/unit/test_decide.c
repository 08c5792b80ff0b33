/*
 * The failover decision, replayed run after run.  Each scenario is a
 * table of runs: the check results of that run, which endpoints DNS
 * holds afterwards, the state of each endpoint and of the domain.  The
 * harness plays the caller: DNS takes the publish set when there is a
 * healthy endpoint and is left alone when there is none.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "decide.h"

/*
 * The tables write what a case needs and leave the rest zero (no
 * policy, nothing drained): that is what the initialisers are for.
 */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define MAXEP	8
#define MAXRUN	16

struct run {
	const char	*checks;	/* per endpoint: P pass, F fail, - none;
					   with recheck, F fails every
					   repeat, B (a blip) passes the
					   first repeat */
	const char	*dns;		/* per endpoint: 1 in DNS after the run */
	const char	*states;	/* space-separated ep_state names */
	const char	*domain;	/* dom_status name */
	int		 waiting;	/* a better choice waits (manual failback) */
	const char	*drained;	/* per endpoint: D drained; NULL: none */
	int		 failback;	/* --failback was asked before this run */
	int		 control_failed; /* controlUrl failed in this run */
	const char	*made;		/* with recheck: checks made per
					   endpoint, digits; NULL: any */
	int		 void_round;	/* fewer checkers heard than quorum */
	const char	*fail_open;	/* allDown applied: "keep", "all" or
					   "fallback"; NULL: not checked */
	const char	*degraded;	/* "yes" or "no"; NULL: not checked */
	int		 left;		/* with degraded: the endpoint left,
					   1-based; 0: not checked */
};

struct scenario {
	const char	*name;
	long		 attempts;
	long		 recover_after;
	long		 prio[MAXEP];
	int		 family[MAXEP];	/* 4 or 6; 0 means 4 */
	int		 n;
	struct run	 runs[MAXRUN];
	long		 rank[MAXEP];	/* location rank */
	long		 min_healthy;
	int		 publish_one;
	int		 manual;	/* failback = manual */
	int		 recheck;	/* repeats as dec_repeats() allows */
	int		 all_down;	/* enum all_down */
};

/*
 * The directory-sync location examples: six servers, in this file
 * order, and the location of each (a: austin, l: london, b: boston).
 */
#define SIX	"austin1 london1 boston1 austin2 boston2 london2"

static const struct scenario scenarios[] = {
	/* A primary and a backup (ddup.ini(5), EXAMPLES). */
	{ "primary and backup, recoverAfter 3", 2, 3, { 0, 10 }, { 0 }, 2, {
		{ "PP", "10", "active standby", "healthy" },
		{ "FP", "10", "failing standby", "warning" },
		{ "FP", "01", "down active", "warning" },
		{ "FP", "01", "down active", "warning" },
		{ "PP", "01", "recovering active", "warning" },
		{ "PP", "01", "recovering active", "warning" },
		{ "PP", "10", "active standby", "healthy" },
		{ "PP", "10", "active standby", "healthy" },
	} },
	/* A single slow answer does not move DNS; a failure resets passes. */
	{ "one failure is survived", 2, 1, { 0, 10 }, { 0 }, 2, {
		{ "PP", "10", "active standby", "healthy" },
		{ "FP", "10", "failing standby", "warning" },
		{ "PP", "10", "active standby", "healthy" },
		{ "FP", "10", "failing standby", "warning" },
		{ "PP", "10", "active standby", "healthy" },
	} },
	/* Recovery interrupted by a failure starts counting again. */
	{ "recovery restarts after a failure", 1, 3, { 0, 10 }, { 0 }, 2, {
		{ "PP", "10", "active standby", "healthy" },
		{ "FP", "01", "down active", "warning" },
		{ "PP", "01", "recovering active", "warning" },
		{ "FP", "01", "down active", "warning" },
		{ "PP", "01", "recovering active", "warning" },
		{ "PP", "01", "recovering active", "warning" },
		{ "PP", "10", "active standby", "healthy" },
	} },
	/* Two locations with two servers each, round robin inside a tier. */
	{ "two locations, two servers each", 2, 1, { 0, 0, 10, 10 }, { 0 }, 4, {
		{ "PPPP", "1100", "active active standby standby", "healthy" },
		{ "FPPP", "1100", "failing active standby standby", "warning" },
		{ "FPPP", "0100", "down active standby standby", "warning" },
		{ "FFPP", "0100", "down failing standby standby", "warning" },
		{ "FFPP", "0011", "down down active active", "warning" },
		{ "FFPF", "0011", "down down active failing", "warning" },
		{ "PFPF", "1000", "active down standby down", "warning" },
		{ "PPPP", "1100", "active active standby standby", "healthy" },
	} },
	/* Three levels: 0, 10 and 100. */
	{ "three levels 0/10/100", 2, 1, { 0, 10, 100 }, { 0 }, 3, {
		{ "PPP", "100", "active standby standby", "healthy" },
		{ "FPP", "100", "failing standby standby", "warning" },
		{ "FPP", "010", "down active standby", "warning" },
		{ "FFP", "010", "down failing standby", "warning" },
		{ "FFP", "001", "down down active", "warning" },
		{ "FPP", "010", "down active standby", "warning" },
		{ "PPP", "100", "active standby standby", "healthy" },
	} },
	/* Every endpoint down: DNS keeps the last set, shown as down. */
	{ "all endpoints down", 2, 1, { 0, 10 }, { 0 }, 2, {
		{ "PP", "10", "active standby", "healthy" },
		{ "FF", "10", "failing down", "warning" },
		{ "FF", "10", "down down", "unhealthy" },
		{ "FF", "10", "down down", "unhealthy" },
		{ "FP", "01", "down active", "warning" },
		{ "PP", "10", "active standby", "healthy" },
	} },
	/* No priorities: every healthy endpoint, round robin. */
	{ "round robin without priorities", 2, 1, { 0, 0, 0 }, { 0 }, 3, {
		{ "PPP", "111", "active active active", "healthy" },
		{ "PFP", "111", "active failing active", "warning" },
		{ "PFP", "101", "active down active", "warning" },
		{ "PPP", "111", "active active active", "healthy" },
	} },
	/* First run: a pass is healthy, a failure is not (but not removed). */
	{ "first run", 2, 3, { 0, 10, 20 }, { 0 }, 3, {
		{ "FPP", "010", "down active standby", "warning" },
		{ "PPP", "100", "active standby standby", "healthy" },
	} },
	{ "first run, everything fails", 2, 1, { 0, 10 }, { 0 }, 2, {
		{ "FF", "00", "down down", "unhealthy" },
		{ "FP", "01", "down active", "warning" },
	} },
	/*
	 * With attempts = 1 too, a new endpoint's first failure does not
	 * remove it (FAILOVER RULES): its next pass publishes it.  Once known, a
	 * failure removes at once, and recoverAfter passes bring it back.
	 */
	{ "attempts 1", 1, 2, { 0, 10 }, { 0 }, 2, {
		{ "FP", "01", "down active", "warning" },
		{ "PP", "10", "active standby", "healthy" },
		{ "FP", "01", "down active", "warning" },
		{ "PP", "01", "recovering active", "warning" },
		{ "PP", "10", "active standby", "healthy" },
	} },
	{ "attempts 1, a new endpoint fails twice", 1, 3, { 0, 10 }, { 0 }, 2, {
		{ "FP", "01", "down active", "warning" },
		{ "FP", "01", "down active", "warning" },
		{ "PP", "01", "recovering active", "warning" },
		{ "PP", "01", "recovering active", "warning" },
		{ "PP", "10", "active standby", "healthy" },
	} },
	/*
	 * Mixed families: the IPv6 primary fails over to an IPv4-only
	 * tier, so the AAAA set must become empty (checked by the
	 * harness through the family column).
	 */
	{ "mixed IPv4/IPv6, AAAA emptied", 2, 1, { 0, 0, 10 }, { 4, 6, 4 }, 3, {
		{ "PPP", "110", "active active standby", "healthy" },
		{ "FFP", "110", "failing failing standby", "warning" },
		{ "FFP", "001", "down down active", "warning" },
		{ "PPP", "110", "active active standby", "healthy" },
	} },
	/* Status only (no checks): nothing moves. */
	{ "no checks keeps everything", 2, 1, { 0, 10 }, { 0 }, 2, {
		{ "PP", "10", "active standby", "healthy" },
		{ "--", "10", "active standby", "healthy" },
		{ "FP", "10", "failing standby", "warning" },
		{ "--", "10", "failing standby", "warning" },
	} },

	/*
	 * ddup-check(8), FAILOVER RULES, directory-sync failover: SIX
	 * without locations, publish one, manual failback.  List order is
	 * the order of preference; the server in use is kept until it
	 * fails, then the best healthy one takes over; past the end of the
	 * list, the top again.
	 */
	{ .name = SIX ", publish one, manual failback", .attempts = 1,
	  .recover_after = 1, .n = 6, .publish_one = 1, .manual = 1, .runs = {
		{ "PPPPPP", "100000", "active standby standby standby standby "
		  "standby", "healthy", 0 },
		{ "FPPPPP", "010000", "down active standby standby standby "
		  "standby", "warning", 0 },
		{ "FFPPPP", "001000", "down down active standby standby "
		  "standby", "warning", 0 },
		{ "FFFPPP", "000100", "down down down active standby standby",
		  "warning", 0 },
		{ "FFFFPP", "000010", "down down down down active standby",
		  "warning", 0 },
		{ "FFFFFP", "000001", "down down down down down active",
		  "warning", 0 },
		/* Everything back: london2 stays, austin1 waits. */
		{ "PPPPPP", "000001", "standby standby standby standby "
		  "standby active", "healthy", 1 },
		{ "PPPPPP", "000001", "standby standby standby standby "
		  "standby active", "healthy", 1 },
		/* london2 fails: past the end of the list, the top. */
		{ "PPPPPF", "100000", "active standby standby standby "
		  "standby down", "warning", 0 },
		/* austin1 fails, london1 takes over and keeps it. */
		{ "FPPPPP", "010000", "down active standby standby standby "
		  "standby", "warning", 0 },
		{ "PPPPPP", "010000", "standby active standby standby standby "
		  "standby", "healthy", 1 },
		/* --failback: the best healthy one, at the next run. */
		{ "PPPPPP", "100000", "active standby standby standby standby "
		  "standby", "healthy", 0, NULL, 1 },
	} },
	/* The same with automatic failback: austin1 back when healthy. */
	{ .name = SIX ", publish one, auto failback", .attempts = 1,
	  .recover_after = 1, .n = 6, .publish_one = 1, .runs = {
		{ "PPPPPP", "100000", "active standby standby standby standby "
		  "standby", "healthy" },
		{ "FPPPPP", "010000", "down active standby standby standby "
		  "standby", "warning" },
		{ "FFPPPP", "001000", "down down active standby standby "
		  "standby", "warning" },
		{ "PFPPPP", "100000", "active down standby standby standby "
		  "standby", "warning" },
	} },
	/*
	 * Locations, the checker in austin: austin1, then austin2, then
	 * the rest in list order (london1, boston1, boston2, london2).
	 */
	{ .name = SIX ", location austin, publish one", .attempts = 1,
	  .recover_after = 1, .n = 6, .publish_one = 1,
	  .rank = { 0, 1, 1, 0, 1, 1 }, .runs = {
		{ "PPPPPP", "100000", "active standby standby standby standby "
		  "standby", "healthy" },
		{ "FPPPPP", "000100", "down standby standby active standby "
		  "standby", "warning" },
		{ "FPPFPP", "010000", "down active standby down standby "
		  "standby", "warning" },
		{ "FFPFPP", "001000", "down down active down standby standby",
		  "warning" },
		{ "FFFFPP", "000010", "down down down down active standby",
		  "warning" },
		{ "FFFFFP", "000001", "down down down down down active",
		  "warning" },
		{ "FFFPFP", "000100", "down down down active down standby",
		  "warning" },
		{ "PPPPPP", "100000", "active standby standby standby standby "
		  "standby", "healthy" },
	} },
	/* With failoverLocations = boston: boston before london. */
	{ .name = SIX ", location austin, failover boston, publish one",
	  .attempts = 1, .recover_after = 1, .n = 6, .publish_one = 1,
	  .rank = { 0, 2, 1, 0, 1, 2 }, .runs = {
		{ "PPPPPP", "100000", "active standby standby standby standby "
		  "standby", "healthy" },
		{ "FPPPPP", "000100", "down standby standby active standby "
		  "standby", "warning" },
		{ "FPPFPP", "001000", "down standby active down standby "
		  "standby", "warning" },
		{ "FPFFPP", "000010", "down standby down down active standby",
		  "warning" },
		{ "FPFFFP", "010000", "down active down down down standby",
		  "warning" },
		{ "FFFFFP", "000001", "down down down down down active",
		  "warning" },
		{ "FFPFFP", "001000", "down down active down down standby",
		  "warning" },
		{ "PPPPPP", "100000", "active standby standby standby standby "
		  "standby", "healthy" },
	} },
	/* The same with publish = all: a location's servers together. */
	{ .name = SIX ", location austin, failover boston, publish all",
	  .attempts = 1, .recover_after = 1, .n = 6,
	  .rank = { 0, 2, 1, 0, 1, 2 }, .runs = {
		{ "PPPPPP", "100100", "active standby standby active standby "
		  "standby", "healthy" },
		{ "FPPPPP", "000100", "down standby standby active standby "
		  "standby", "warning" },
		{ "FPPFPP", "001010", "down standby active down active "
		  "standby", "warning" },
		{ "FPFFFP", "010001", "down active down down down active",
		  "warning" },
		{ "FPFPFP", "000100", "down standby down active down standby",
		  "warning" },
	} },
	/*
	 * Locations with manual failback: failed over to boston, the
	 * domain stays there when austin is back, until boston fails or
	 * --failback; the tier waiting is austin's.
	 */
	{ .name = SIX ", location austin, failover boston, manual, one",
	  .attempts = 1, .recover_after = 1, .n = 6, .publish_one = 1,
	  .manual = 1, .rank = { 0, 2, 1, 0, 1, 2 }, .runs = {
		{ "PPPPPP", "100000", "active standby standby standby standby "
		  "standby", "healthy", 0 },
		{ "FPPFPP", "001000", "down standby active down standby "
		  "standby", "warning", 0 },
		{ "PPPPPP", "001000", "standby standby active standby standby "
		  "standby", "healthy", 1 },
		/* boston1 fails: boston2, still boston, still waiting. */
		{ "PPFPPP", "000010", "standby standby down standby active "
		  "standby", "warning", 1 },
		{ "PPPPPP", "100000", "active standby standby standby standby "
		  "standby", "healthy", 0, NULL, 1 },
	} },
	/* Priority orders endpoints inside a location. */
	{ .name = "priority inside a location", .attempts = 1,
	  .recover_after = 1, .n = 3, .prio = { 10, 0, 0 },
	  .rank = { 0, 0, 1 }, .runs = {
		{ "PPP", "010", "standby active standby", "healthy" },
		{ "PFP", "100", "active down standby", "warning" },
		{ "FFP", "001", "down down active", "warning" },
	} },
	/*
	 * minHealthy = 2: a tier with one healthy endpoint is passed over;
	 * when none has two, the best with any.
	 */
	{ .name = "minHealthy 2", .attempts = 1, .recover_after = 1, .n = 4,
	  .prio = { 0, 0, 10, 10 }, .min_healthy = 2, .runs = {
		{ "PPPP", "1100", "active active standby standby", "healthy" },
		{ "FPPP", "0011", "down standby active active", "warning" },
		{ "FPFP", "0100", "down active down standby", "warning" },
		{ "FFFF", "0100", "down down down down", "unhealthy" },
		{ "PPPP", "1100", "active active standby standby", "healthy" },
	} },
	/* minHealthy with publish one: the first of the tier that has enough. */
	{ .name = "minHealthy 2, publish one", .attempts = 1,
	  .recover_after = 1, .n = 4, .prio = { 0, 0, 10, 10 },
	  .min_healthy = 2, .publish_one = 1, .runs = {
		{ "PPPP", "1000", "active standby standby standby", "healthy" },
		{ "PFPP", "0010", "standby down active standby", "warning" },
	} },
	/*
	 * Manual failback: the current tier is kept while any endpoint of
	 * it is healthy; --failback goes back at the next run.
	 */
	{ .name = "manual failback, priorities", .attempts = 1,
	  .recover_after = 1, .n = 3, .prio = { 0, 10, 10 }, .manual = 1,
	  .runs = {
		{ "PPP", "100", "active standby standby", "healthy", 0 },
		{ "FPP", "011", "down active active", "warning", 0 },
		{ "PPP", "011", "standby active active", "healthy", 1 },
		{ "PFP", "001", "standby down active", "warning", 1 },
		{ "PFF", "100", "active down down", "warning", 0 },
		{ "FPP", "011", "down active active", "warning", 0 },
		{ "PPP", "100", "active standby standby", "healthy", 0, NULL,
		  1 },
	} },
	/* Manual with minHealthy: a tier gone below it is left. */
	{ .name = "manual failback, minHealthy 2", .attempts = 1,
	  .recover_after = 1, .n = 4, .prio = { 0, 0, 10, 10 },
	  .min_healthy = 2, .manual = 1, .runs = {
		{ "PPPP", "1100", "active active standby standby", "healthy",
		  0 },
		{ "FPPP", "0011", "down standby active active", "warning", 0 },
		{ "PPPP", "0011", "standby standby active active", "healthy",
		  1 },
		{ "PPPF", "1100", "active active standby down", "warning", 0 },
	} },
	/*
	 * Drained endpoints are checked, never published; draining the
	 * last one leaves DNS as it is (FAILOVER RULES); undrained, back.
	 */
	{ .name = "drain", .attempts = 1, .recover_after = 1, .n = 3,
	  .prio = { 0, 0, 10 }, .runs = {
		{ "PPP", "110", "active active standby", "healthy" },
		{ "PPP", "010", "drained active standby", "warning", 0, "D--" },
		{ "PPP", "001", "drained drained active", "warning", 0, "DD-" },
		{ "FPP", "001", "drained drained active", "warning", 0, "DD-" },
		{ "PPP", "001", "drained drained drained", "unhealthy", 0,
		  "DDD" },
		{ "PPP", "110", "active active standby", "healthy" },
	} },
	/* A drained endpoint with publish one: the next in file order. */
	{ .name = "drain, publish one", .attempts = 2, .recover_after = 1,
	  .n = 3, .publish_one = 1, .runs = {
		{ "PPP", "100", "active standby standby", "healthy" },
		{ "PPP", "010", "drained active standby", "warning", 0, "D--" },
		{ "PPP", "100", "active standby standby", "healthy" },
	} },
	/*
	 * A failed controlUrl: failures do not count, passes do, DNS is
	 * not touched.
	 */
	{ .name = "control URL failed", .attempts = 1, .recover_after = 2,
	  .n = 2, .prio = { 0, 10 }, .runs = {
		{ "PP", "10", "active standby", "healthy" },
		{ "FF", "10", "active standby", "healthy", 0, NULL, 0, 1 },
		{ "FP", "10", "active standby", "healthy", 0, NULL, 0, 1 },
		{ "FP", "01", "down active", "warning" },
		{ "PF", "01", "recovering active", "warning", 0, NULL, 0, 1 },
		{ "PF", "10", "active down", "warning" },
	} },
	/* A first run whose control URL fails: nothing known, nothing done. */
	{ .name = "control URL failed on the first run", .attempts = 2,
	  .recover_after = 1, .n = 2, .prio = { 0, 10 }, .runs = {
		{ "FF", "00", "unknown unknown", "unknown", 0, NULL, 0, 1 },
		{ "FP", "01", "down active", "warning" },
	} },
	/*
	 * recheck (ddup.ini(5)): a dead primary leaves DNS in the run that
	 * first sees it fail, after attempts - 1 repeats; once removed it
	 * gets none, and recoverAfter still counts runs.
	 */
	{ "recheck: removed in the first failing run", 3, 2, { 0, 10 }, { 0 },
	    2, {
		{ "PP", "10", "active standby", "healthy", .made = "11" },
		{ "FP", "01", "down active", "warning", .made = "31" },
		{ "FP", "01", "down active", "warning", .made = "11" },
		{ "PP", "01", "recovering active", "warning", .made = "11" },
		{ "PP", "10", "active standby", "healthy", .made = "11" },
	}, .recheck = 1 },
	/* A blip costs one repeat and no removal; a failure left counts. */
	{ "recheck: a blip", 3, 1, { 0, 10 }, { 0 }, 2, {
		{ "PP", "10", "active standby", "healthy", .made = "11" },
		{ "BP", "10", "active standby", "healthy", .made = "21" },
		{ "FP", "01", "down active", "warning", .made = "31" },
		/* Removed: no repeat, so its blip is a failure. */
		{ "BP", "01", "down active", "warning", .made = "11" },
		{ "PP", "10", "active standby", "healthy", .made = "11" },
	}, .recheck = 1 },
	/*
	 * Repeats only up to attempts - 1 failures in a row, a standby's
	 * too; none for a drained endpoint, for a failed controlUrl or for
	 * a first check.
	 */
	{ "recheck: repeats left, standby, drained", 3, 1, { 0, 10 }, { 0 },
	    2, {
		{ "FF", "00", "down down", "unhealthy", .made = "11" },
		{ "PP", "10", "active standby", "healthy", .made = "11" },
		{ "PP", "10", "active standby", "healthy", .made = "11",
		    .control_failed = 1 },
		{ "FF", "10", "active standby", "healthy", .made = "11",
		    .control_failed = 1 },
		{ "BB", "10", "active standby", "healthy", .made = "22" },
		{ "PF", "10", "active down", "warning", .made = "13" },
		{ "PP", "10", "active standby", "healthy", .made = "11" },
		{ "PF", "10", "active drained", "warning", .made = "11",
		    .drained = "-D" },
		{ "FP", "01", "down active", "warning", .made = "31" },
	}, .recheck = 1 },
	/*
	 * allDown = fallback (ddup.ini(5), POLICIES): DNS "fb" holds the
	 * fallback addresses.  Off the preferred set until both are back.
	 */
	{ "allDown fallback and back", 1, 1, { 0, 0 }, { 0 }, 2, {
		{ "PP", "11", "active active", "healthy", .degraded = "no",
		    .fail_open = "keep" },
		{ "FF", "fb", "down down", "unhealthy", .degraded = "yes",
		    .left = 1, .fail_open = "fallback" },
		{ "FF", "fb", "down down", "unhealthy", .fail_open = "fallback" },
		{ "FP", "01", "down active", "warning", .degraded = "yes",
		    .left = 1, .fail_open = "keep" },
		{ "PP", "11", "active active", "healthy", .degraded = "no" },
	}, .all_down = ALLDOWN_FALLBACK },
	/*
	 * Neither a failed controlUrl nor a void round applies allDown:
	 * the endpoints removed under the fallback stay so, DNS as it is.
	 */
	{ "allDown not when the checks do not count", 1, 2, { 0, 10 }, { 0 },
	    2, {
		{ "PP", "10", "active standby", "healthy" },
		{ "FF", "fb", "down down", "unhealthy", .fail_open = "fallback" },
		{ "FF", "fb", "down down", "unhealthy", .fail_open = "keep",
		    .control_failed = 1 },
		{ "--", "fb", "down down", "unhealthy", .fail_open = "keep",
		    .void_round = 1 },
		{ "PF", "fb", "recovering down", "unhealthy",
		    .fail_open = "fallback" },
		{ "PF", "10", "active down", "warning", .degraded = "no" },
	}, .all_down = ALLDOWN_FALLBACK },
	/*
	 * allDown = all from the first run: both endpoints of the best
	 * tier, never counted as published and healthy by it (attempts 3
	 * would keep a published one failing).
	 */
	{ "allDown all from the first run", 3, 1, { 0, 0, 10 }, { 0 }, 3, {
		{ "FFF", "110", "down down down", "unhealthy", .degraded = "yes",
		    .left = 1, .fail_open = "all" },
		{ "FFF", "110", "down down down", "unhealthy", .fail_open = "all" },
		{ "FFP", "001", "down down active", "warning", .degraded = "yes",
		    .left = 1, .fail_open = "keep" },
		{ "PPP", "110", "active active standby", "healthy",
		    .degraded = "no" },
	}, .all_down = ALLDOWN_ALL },
	/* allDown = all passes drained endpoints over, a tier too. */
	{ "allDown all without the drained", 1, 1, { 0, 0, 10 }, { 0 }, 3, {
		{ "PPP", "110", "active active standby", "healthy" },
		{ "FFF", "100", "down drained down", "unhealthy",
		    .drained = "-D-", .fail_open = "all" },
		{ "FFF", "001", "drained drained down", "unhealthy",
		    .drained = "DD-", .degraded = "yes", .left = 1 },
	}, .all_down = ALLDOWN_ALL },
	/* With publish one, allDown = all publishes one too. */
	{ "allDown all, publish one", 1, 1, { 0, 0 }, { 0 }, 2, {
		{ "PP", "10", "active standby", "healthy", .degraded = "no" },
		{ "FF", "10", "down down", "unhealthy", .fail_open = "all" },
	}, .all_down = ALLDOWN_ALL, .publish_one = 1 },
	/*
	 * degradedTtl's preferred set: with every endpoint healthy and none
	 * drained.  A drain, a tier passed over and a waiting manual
	 * failback are all off it.
	 */
	{ "off the preferred set", 1, 1, { 0, 0, 10 }, { 0 }, 3, {
		{ "PPP", "110", "active active standby", "healthy",
		    .degraded = "no" },
		{ "PPP", "100", "active drained standby", "warning",
		    .drained = "-D-", .degraded = "yes", .left = 2 },
		{ "FFP", "001", "down down active", "warning", .degraded = "yes",
		    .left = 1 },
		{ "PPP", "001", "standby standby active", "healthy",
		    .waiting = 1, .degraded = "yes", .left = 1 },
		{ "PPP", "110", "active active standby", "healthy",
		    .failback = 1, .degraded = "no" },
	}, .manual = 1 },
};

static void
expect_all_down(const struct scenario *s, int r, const struct dec_domain *d)
{
	const struct run *run = &s->runs[r];
	const char *names[] = { "keep", "all", "fallback" };

	if (run->fail_open != NULL && strcmp(names[d->fail_open],
	    run->fail_open) != 0)
		fail_msg("%s, run %d: allDown applied %s, want %s", s->name,
		    r + 1, names[d->fail_open], run->fail_open);
	if (run->degraded != NULL && strcmp(d->degraded ? "yes" : "no",
	    run->degraded) != 0)
		fail_msg("%s, run %d: degraded %d, want %s", s->name, r + 1,
		    d->degraded, run->degraded);
	if (run->left != 0 && d->left != (size_t)run->left - 1)
		fail_msg("%s, run %d: left endpoint %zu, want %d", s->name,
		    r + 1, d->left + 1, run->left);
}

static void
expect_states(const struct scenario *s, int r, const struct dec_ep *eps,
    const char *want)
{
	char	 got[256] = "";
	int	 i;

	for (i = 0; i < s->n; i++) {
		if (i > 0)
			strcat(got, " ");
		strcat(got, ep_state_str(eps[i].state));
	}
	if (strcmp(got, want) != 0)
		fail_msg("%s, run %d: states \"%s\", want \"%s\"", s->name,
		    r + 1, got, want);
}

static void
play(const struct scenario *s)
{
	struct dec_ep	 eps[MAXEP];
	struct dec_domain d;
	struct tier	 current = { 0, 0 };
	int		 in_dns[MAXEP] = { 0 }, last_ok[MAXEP] = { 0 };
	int		 has_state = 0, has_current = 0, fail_open = 0;
	int		 i, r;
	long		 rep;

	memset(eps, 0, sizeof(eps));
	for (r = 0; r < MAXRUN && s->runs[r].checks != NULL; r++) {
		const struct run *run = &s->runs[r];
		char dns[MAXEP + 1];
		int any6 = 0, want6 = 0, writes;

		memset(&d, 0, sizeof(d));
		d.attempts = s->attempts;
		d.recover_after = s->recover_after;
		d.min_healthy = s->min_healthy;
		d.publish_one = s->publish_one;
		d.failback_manual = s->manual;
		d.failback_now = run->failback;
		d.control_failed = run->control_failed;
		d.void_round = run->void_round;
		d.all_down = s->all_down;
		d.has_current = has_current;
		d.current = current;
		for (i = 0; i < s->n; i++) {
			struct dec_ep *e = &eps[i];

			e->priority = s->prio[i];
			e->rank = s->rank[i];
			e->drained = run->drained != NULL &&
			    run->drained[i] == 'D';
			e->has_state = has_state;
			e->failures = e->new_failures;
			e->passes = e->new_passes;
			e->removed = e->new_removed;
			/* As dec_ep_load(): in DNS by allDown is not published. */
			e->published = fail_open == ALLDOWN_KEEP && in_dns[i];
			e->last_ok = last_ok[i];
			e->result = run->checks[i] == 'P' ? CR_PASS :
			    run->checks[i] == 'F' || run->checks[i] == 'B' ?
			    CR_FAIL : CR_NONE;
			e->failed_before = 0;
			/* The loop's part: repeats while they fail. */
			rep = s->recheck ? dec_repeats(&d, e) : 0;
			if (rep > 0 && run->checks[i] == 'B') {
				e->failed_before = 1;
				e->result = CR_PASS;
			} else if (rep > 0 && run->checks[i] == 'F')
				e->failed_before = rep;
			if (run->made != NULL && run->made[i] - '0' !=
			    e->failed_before + (e->result != CR_NONE))
				fail_msg("%s, run %d: endpoint %d made %ld "
				    "checks, want %c", s->name, r + 1, i,
				    e->failed_before + (e->result != CR_NONE),
				    run->made[i]);
		}
		decide(&d, eps, (size_t)s->n);
		expect_all_down(s, r, &d);
		/*
		 * The caller's part: write DNS only when something is
		 * healthy, or allDown applies, and the checks count.
		 */
		writes = (d.any_healthy || d.fail_open != ALLDOWN_KEEP) &&
		    !run->control_failed && !run->void_round;
		if (writes && d.has_tier) {
			has_current = 1;
			current = d.tier;
		}
		if (writes)
			fail_open = d.fail_open;
		for (i = 0; i < s->n; i++) {
			if (eps[i].counted)
				last_ok[i] = eps[i].result == CR_PASS;
			if (writes)
				in_dns[i] = eps[i].publish;
			eps[i].published = in_dns[i];
			dns[i] = in_dns[i] ? '1' : '0';
			if (s->family[i] == 6) {
				any6 = 1;
				want6 |= eps[i].publish;
			}
		}
		dns[s->n] = '\0';
		if (fail_open == ALLDOWN_FALLBACK)
			snprintf(dns, sizeof(dns), "fb");
		decide_states(&d, eps, (size_t)s->n);
		if (strcmp(dns, run->dns) != 0)
			fail_msg("%s, run %d: DNS %s, want %s", s->name, r + 1,
			    dns, run->dns);
		expect_states(s, r, eps, run->states);
		if (strcmp(dom_status_str(d.status), run->domain) != 0)
			fail_msg("%s, run %d: domain %s, want %s", s->name,
			    r + 1, dom_status_str(d.status), run->domain);
		if (d.waiting != run->waiting)
			fail_msg("%s, run %d: waiting %d, want %d", s->name,
			    r + 1, d.waiting, run->waiting);
		/* A tier without IPv6 empties AAAA. */
		if (any6 && d.any_healthy && strchr(run->dns, '1') != NULL) {
			int dns6 = 0;

			for (i = 0; i < s->n; i++)
				if (s->family[i] == 6 && run->dns[i] == '1')
					dns6 = 1;
			assert_int_equal(want6, dns6);
		}
		if (run->checks[0] != '-' && !run->control_failed &&
		    !run->void_round)
			has_state = 1;
	}
}

static void
test_scenarios(void **unused)
{
	size_t i;

	(void)unused;
	for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		play(&scenarios[i]);
}

/* The tier is the lowest healthy priority; gaps do not matter. */
static void
test_tier(void **unused)
{
	struct dec_ep	 eps[3];
	struct dec_domain d = { .attempts = 2, .recover_after = 1 };

	(void)unused;
	memset(eps, 0, sizeof(eps));
	eps[0].priority = 7;
	eps[1].priority = 1000;
	eps[2].priority = 7;
	eps[0].result = eps[1].result = eps[2].result = CR_PASS;
	decide(&d, eps, 3);
	assert_true(d.has_tier);
	assert_int_equal(d.tier.priority, 7);
	assert_int_equal(d.tier.rank, 0);
	assert_true(eps[0].publish && !eps[1].publish && eps[2].publish);

	/* Nothing healthy: no tier, nothing to publish. */
	memset(eps, 0, sizeof(eps));
	eps[0].result = eps[1].result = eps[2].result = CR_FAIL;
	decide(&d, eps, 3);
	assert_false(d.any_healthy);
	assert_false(d.has_tier);
	assert_false(eps[0].publish || eps[1].publish || eps[2].publish);
	assert_int_equal(d.status, DOM_UNHEALTHY);
}

/* Counters follow ddup-check(8), FAILOVER RULES, exactly. */
static void
test_counters(void **unused)
{
	struct dec_ep	 e;
	struct dec_domain d = { .attempts = 3, .recover_after = 2 };

	(void)unused;
	memset(&e, 0, sizeof(e));
	e.has_state = 1;
	e.failures = 2;
	e.passes = 0;
	e.published = 1;
	e.result = CR_FAIL;
	decide(&d, &e, 1);
	assert_int_equal(e.new_failures, 3);
	assert_int_equal(e.new_passes, 0);
	assert_true(e.new_removed);
	assert_false(e.healthy);

	e.failures = 3;
	e.removed = 1;
	e.result = CR_PASS;
	decide(&d, &e, 1);
	assert_int_equal(e.new_failures, 0);
	assert_int_equal(e.new_passes, 1);
	assert_true(e.new_removed);
	assert_int_equal(e.state, EP_RECOVERING);

	e.failures = 0;
	e.passes = 1;
	decide(&d, &e, 1);
	assert_int_equal(e.new_passes, 2);
	assert_false(e.new_removed);
	assert_true(e.healthy);

	/* Never checked and no state: unknown. */
	memset(&e, 0, sizeof(e));
	decide(&d, &e, 1);
	assert_int_equal(e.state, EP_UNKNOWN);
	assert_int_equal(d.status, DOM_UNKNOWN);
}

static void
test_names(void **unused)
{
	(void)unused;
	assert_string_equal(ep_state_str(EP_RECOVERING), "recovering");
	assert_string_equal(ep_state_str(99), "unknown");
	assert_string_equal(dom_status_str(DOM_WARNING), "warning");
	assert_string_equal(dom_status_str(-1), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scenarios),
		cmocka_unit_test(test_tier),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests_name("decide", tests, NULL, NULL);
}
