#ifndef DDUP_CHECK_H
#define DDUP_CHECK_H

/*
 * Health checks (ddup-check(8), HEALTH CHECKS), all in flight together
 * through the libcurl multi interface, at most max_parallel at once:
 * the loop in check.c, each check by its type (HTTP(S), TCP, TLS, programs, in
 * check/).  check_res_init() and check_res_free() are check/result.c's.
 */

#include <stddef.h>

#include "util.h"

#define CHECK_BODY_MAX	((size_t)64 * 1024)	/* bytes of body read at most */
/*
 * Bytes of a reason made by check_res_reason(), with its NUL: room for a
 * check program's line of 200 bytes after "warning: ".
 */
#define CHECK_REASON_MAX 224

/* A check program's words past this many are a configuration error. */
#define CHECK_ARGV_MAX	64
#define CHECK_SEND_MAX	4096		/* bytes of `send`, decoded */
#define CHECK_EXPECT_READ ((size_t)4096) /* bytes `expect` looks in */

/*
 * One check, as the configuration gives it: what the types of check/
 * read.  Strings belong to the caller and outlive the check.  Each type
 * reads only the fields of its keys (check_takes()).
 */
struct check_req {
	const char	*url;		/* http(s)://, tcp://, tls://; NULL: command */
	const char	*command;	/* a check program's line (placeholders
					   not yet replaced); NULL: url */
	const char	*host;		/* NULL: none; else Host, SNI and cert name */
	/* For a program's placeholders and environment (ddup.ini(5)). */
	const char	*ip;		/* {ip}: the ip, or the cname */
	const char	*name;		/* {name} */
	const char	*domain;	/* {domain} */
	const char	*dir;		/* a program runs here; NULL: "/" */
	int		 head;		/* HEAD instead of GET */
	long long	 timeout_ms;
	long long	 max_latency_ms; /* 0: none */
	const struct expect *expect;
	const char	*expect_body;	/* NULL: none */
	const char	*user_agent;	/* NULL: "ddup/1.0" */
	const char *const *headers;	/* "Name: value" each; secrets */
	size_t		 nheaders;
	const char	*send;		/* tcp/tls: bytes written, decoded */
	size_t		 send_len;
	const char	*expect_text;	/* tcp/tls: NULL: none */
	/*
	 * recheck (ddup.ini(5)): a failed check is made again recheck_ms
	 * later, at most repeats times, until one passes.
	 */
	long		 repeats;
	long long	 recheck_ms;
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
	/* Unix seconds the server's certificate expires; 0: none seen. */
	long long	 cert_expires;
	/*
	 * The failed checks of this run before this one (recheck), the
	 * latest first; each a check like this one.  NULL: none.  Owned.
	 */
	struct check_res *before;
};
/*
 * Runs n checks, each writing its result to its req.res: next_req(arg,
 * req) fills in the next one when there is room for it and returns 1 (0:
 * there are no more).  So only the checks in flight are held here, not
 * all n.  A result must have been made ready with check_res_init(): a
 * check that never starts is "not checked".  A failed check with
 * repeats left is made again recheck_ms later, on a timer of the same
 * loop (its slot free meanwhile): its earlier results move to
 * res->before.  Returns 0, or -1 with err set when the checks
 * could not be run at all (libcurl could not start).
 */
struct check_limits {
	long		 max_parallel;	/* checks in flight, <= 0: 256 */
	long		 max_exec;	/* programs of them, <= 0: 16 */
	const char	*ca_file;	/* NULL: the system store */
};
int	 check_run(size_t n, int (*next_req)(void *arg, struct check_req *req),
	    void *arg, const struct check_limits *lim, char *err,
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
 * as cfg has endpoints), at most maxParallel at once.  repeats, in the
 * same order, gives each check's req.repeats (recheck); NULL: none
 * repeats.  As check_run().
 */
int	 check_endpoints(const struct config *cfg, struct check_res *res,
	    const long *repeats, char *err, size_t errlen);
/*
 * What the check of an endpoint with this url (NULL: a command) takes,
 * as CHECK_TAKES_* bits; 0 when no check type takes the url.  The
 * configuration refuses a key of a check that does not take it.
 */
#define CHECK_TAKES_HTTP	0x01	/* method, expectStatus, expectBody,
					   header, userAgent */
#define CHECK_TAKES_STREAM	0x02	/* send, expect */
#define CHECK_TAKES_CERT	0x04	/* certWarn: a certificate is seen
					   (https://, not http://) */
#define CHECK_TAKES_EXEC	0x08	/* a program: counted in maxExec */
unsigned check_takes(const char *url);
/*
 * Whether url is one the type of its scheme takes (tcp://HOST:PORT
 * needs its port, say); -1 with why in err (no url in it: the caller
 * names the line), 0 when it is.
 */
int	 check_url_ok(const char *url, char *err, size_t errlen);

/* A result before its check: "not checked". */
void	 check_res_init(struct check_res *res);

/* Frees what a result holds (check_run() fills it again). */
void	 check_res_free(struct check_res *res);

/* curl_global_init/cleanup, once per process. */
int	 check_global_init(void);
void	 check_global_cleanup(void);

#endif
