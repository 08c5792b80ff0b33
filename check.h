#ifndef DDUP_CHECK_H
#define DDUP_CHECK_H

/*
 * Health checks (ddup-check(8), HEALTH CHECKS), all in flight together
 * through the libcurl multi interface, at most max_parallel at once:
 * the loop in check.c, each check by its type (HTTP(S) today, in
 * check/).  check_res_init() and check_res_free() are check/result.c's.
 */

#include <stddef.h>

#include "util.h"

#define CHECK_BODY_MAX	((size_t)64 * 1024)	/* bytes of body read at most */
#define CHECK_REASON_MAX 160		/* bytes of a reason, with its NUL */

struct check_req {
	const char	*url;
	const char	*host;		/* NULL: none; else Host, SNI and cert name */
	int		 head;		/* HEAD instead of GET */
	long long	 timeout_ms;
	const struct expect *expect;
	const char	*expect_body;	/* NULL: none */
	struct check_res *res;		/* where its result goes */
};

/*
 * A check's result.  Most reasons are constants ("ok", "timeout"): only
 * one made from a status or libcurl's message is allocated, so that ten
 * thousand results do not each carry a buffer of CHECK_REASON_MAX.
 */
struct check_res {
	int		 ok;		/* 1 passed, 0 failed */
	long		 status;	/* HTTP status, 0 when none arrived */
	long		 latency_ms;	/* until the answer (or failure) */
	const char	*reason;	/* "ok", "timeout", "HTTP 503", ... */
	char		*text;		/* the reason when allocated, else NULL */
};

/*
 * Runs n checks, each writing its result to its req.res: next_req(arg,
 * req) fills in the next one when there is room for it and returns 1 (0:
 * there are no more).  So only the checks in flight are held here, not
 * all n.  A result must have been made ready with check_res_init(): a
 * check that never starts is "not checked".  ca_file NULL means the
 * system trust store.  Returns 0, or -1 with err set when the checks
 * could not be run at all (libcurl could not start).
 */
int	 check_run(size_t n, int (*next_req)(void *arg, struct check_req *req),
	    void *arg, long max_parallel, const char *ca_file, char *err,
	    size_t errlen);
struct config;

/*
 * The controlUrl, alone, with the settings of the top of the file
 * (ddup.ini(5), TOP-LEVEL KEYS), into res.  As check_run().
 */
int	 check_control(const struct config *cfg, struct check_res *res,
	    char *err, size_t errlen);
/*
 * Every endpoint of cfg, domain after domain and each domain's in file
 * order, with its domain's settings, into res[0], res[1], ... (as many
 * as cfg has endpoints), at most maxParallel at once.  As check_run().
 */
int	 check_endpoints(const struct config *cfg, struct check_res *res,
	    char *err, size_t errlen);
/* A result before its check: "not checked". */
void	 check_res_init(struct check_res *res);

/* Frees what a result holds (check_run() fills it again). */
void	 check_res_free(struct check_res *res);

/* curl_global_init/cleanup, once per process. */
int	 check_global_init(void);
void	 check_global_cleanup(void);

#endif
