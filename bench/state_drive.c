/*
 * The state file over many runs, without the checks: drives the state
 * module as a run of ddup-check does (read every endpoint, put it after
 * its check, the domains, finish, commit), so 1,000 runs at N = 10,000
 * take minutes instead of the better part of an hour of real checks.
 *
 *   state-drive FILE N RUNS FLAP% PERIOD loop|jitter
 *
 * N endpoints over N/10 domains, as bench.py configures them.  FLAP% of
 * the endpoints change result every PERIOD runs (pass, then 503); the
 * others pass.  Latency: "loop" 0-1 ms as on loopback, "jitter" 20-59 ms
 * uniformly at random, to show what the latency deadband writes.  Prints
 * the file size, the streak rows, and the rows changed and pages written
 * per run (mean over the runs after the first).
 */

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "rrset.h"
#include "state.h"
#include "state/sqlite.h"
#include "util.h"

#define T0	1764498356123LL		/* 2025-11-30T10:25:56.123Z */
#define EVERY	30000LL			/* a run every 30 s */

static long long
file_size(const char *path, const char *suffix)
{
	struct stat	 sb;
	char		 p[4096];

	snprintf(p, sizeof(p), "%s%s", path, suffix);
	return stat(p, &sb) == 0 ? (long long)sb.st_size : 0;
}

/* A fixed sequence, so runs compare (xorshift32). */
static unsigned
next_rand(unsigned *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static double
mono_s(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	struct config		 c;
	struct domain_cfg	*doms;
	struct endpoint_cfg	*eps;
	struct state		*st;
	struct st_endpoint	 e;
	struct st_domain	 sd;
	char			 err[1024], (*names)[24], (*ips)[40], (*urls)[64];
	char			 (*dnames)[32];
	size_t			 n, nd, per, i, k;
	long			 runs, r, flap, period;
	long long		 rows, pages, sum_rows = 0, sum_pages = 0;
	double			 t, sum_t = 0;
	int			 jitter, rc = 1;
	unsigned		 seed = 1;

	if (argc != 7) {
		fprintf(stderr, "usage: state-drive FILE N RUNS FLAP%% PERIOD"
		    " loop|jitter\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 10);
	runs = strtol(argv[3], NULL, 10);
	flap = strtol(argv[4], NULL, 10);
	period = strtol(argv[5], NULL, 10);
	jitter = strcmp(argv[6], "jitter") == 0;
	if (n < 10 || runs < 2 || flap < 0 || flap > 100 || period < 1)
		return 2;
	nd = n / 10;
	per = n / nd;
	n = nd * per;
	doms = xcalloc(nd, sizeof(*doms));
	eps = xcalloc(n, sizeof(*eps));
	names = xcalloc(n, sizeof(*names));
	ips = xcalloc(n, sizeof(*ips));
	urls = xcalloc(n, sizeof(*urls));
	dnames = xcalloc(nd, sizeof(*dnames));
	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "e%zu", i);
		snprintf(ips[i], sizeof(ips[i]), "127.130.%zu.%zu", i / 250,
		    i % 250 + 1);
		snprintf(urls[i], sizeof(urls[i]), "http://%s:8080/health",
		    ips[i]);
		eps[i].name = names[i];
	}
	for (k = 0; k < nd; k++) {
		snprintf(dnames[k], sizeof(dnames[k]), "d%zu.bench.test", k);
		doms[k].name = dnames[k];
		doms[k].eps = &eps[k * per];
		doms[k].neps = per;
		doms[k].has4 = 1;
	}
	memset(&c, 0, sizeof(c));
	c.domains = doms;
	c.ndomains = nd;
	c.history_ms = 7LL * 24 * 3600 * 1000;

	if (state_open_checker(argv[1], NULL, STATE_RW, &st, err,
	    sizeof(err)) != STATE_OK) {
		fprintf(stderr, "%s\n", err);
		goto out;
	}
	for (r = 0; r < runs; r++) {
		long long now = T0 + r * EVERY;

		t = mono_s();
		state_read_begin(sqlite_of(st));
		if (state_begin(sqlite_of(st), err, sizeof(err)) == -1)
			goto fail;
		for (i = 0; i < n; i++) {
			size_t	 dk = i / per;
			int	 flaps = flap > 0 && i % 100 < (size_t)flap;
			int	 ok = !flaps || (r / period) % 2 == 0;

			if (state_get_endpoint(sqlite_of(st), dnames[dk],
			    names[i], ips[i],
			    urls[i], &e) == -1)
				goto dberr;
			if (ok) {
				e.passes = e.found ? e.passes + 1 : 1;
				e.failures = 0;
				if (e.removed && e.passes >= 1)
					e.removed = 0;
			} else {
				e.failures = e.found ? e.failures + 1 : 1;
				e.passes = 0;
				if (e.failures >= 2)
					e.removed = 1;
			}
			e.found = 1;
			e.last_check = now;
			e.last_ok = ok;
			e.last_status = ok ? 200 : 503;
			e.latency_ms = (long)(jitter ? 20 + next_rand(&seed) % 40 :
			    next_rand(&seed) % 2);
			snprintf(e.last_result, sizeof(e.last_result), "%s",
			    ok ? "ok" : "HTTP 503");
			if (state_put_endpoint(sqlite_of(st), dnames[dk],
			    names[i], ips[i],
			    urls[i], 10, &e) == -1)
				goto dberr;
		}
		for (k = 0; k < nd; k++) {
			memset(&sd, 0, sizeof(sd));
			sd.has_tier = 1;
			sd.tier = 10;
			sd.tier_rank = 0;
			sd.last_change = T0;
			if (state_put_domain(sqlite_of(st), dnames[k], "bind",
			    60, &sd)
			    == -1)
				goto dberr;
		}
		if (state_finish_run(sqlite_of(st), now, &c) == -1)
			goto dberr;
		if (state_commit(sqlite_of(st), err, sizeof(err)) == -1)
			goto fail;
		t = mono_s() - t;
		state_last_writes(st, &rows, &pages);
		if (r > 0) {
			sum_rows += rows;
			sum_pages += pages;
			sum_t += t;
		}
		if ((r + 1) % 100 == 0)
			fprintf(stderr, "run %ld: %lld rows, %lld pages, %.3f s,"
			    " %.1f MB + %.1f MB WAL\n", r + 1, rows, pages, t,
			    (double)file_size(argv[1], "") / 1e6,
			    (double)file_size(argv[1], "-wal") / 1e6);
	}
	state_close(st);
	st = NULL;
	printf("N=%zu runs=%ld flap=%ld%% period=%ld latency=%s: file %.2f MB"
	    " (+ WAL %.2f MB), per run after the first: %.1f rows changed,"
	    " %.1f pages written, %.1f ms\n", n, runs, flap, period,
	    jitter ? "jitter" : "loop", (double)file_size(argv[1], "") / 1e6,
	    (double)file_size(argv[1], "-wal") / 1e6,
	    (double)sum_rows / (double)(runs - 1),
	    (double)sum_pages / (double)(runs - 1),
	    sum_t * 1000 / (double)(runs - 1));
	rc = 0;
	goto out;
 dberr:
	snprintf(err, sizeof(err), "%s", state_errmsg(st));
 fail:
	fprintf(stderr, "run %ld: %s\n", r, err);
 out:
	state_close(st);
	free(doms);
	free(eps);
	free(names);
	free(ips);
	free(urls);
	free(dnames);
	return rc;
}
