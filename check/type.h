#ifndef DDUP_CHECK_TYPE_H
#define DDUP_CHECK_TYPE_H

/*
 * The check types, private to check.c and check/: each type is one file
 * in check/ that defines one const struct check_type, listed once in the
 * table of check/list.c (check_type_of()).  The loop of check.c holds
 * the checks in flight and never looks inside a type: it asks the table
 * which type takes an endpoint, lets that type join the one multi handle
 * in one of the loop's slots, and hands it back what libcurl reported
 * when the transfer ends.  check/result.c sets the reasons every type
 * gives.
 */

#include <curl/curl.h>

#include "check.h"

struct check_type {
	const char	 *name;		/* "http" */
	/* The url schemes it takes, lower case, NULL-terminated. */
	const char *const *schemes;

	/*
	 * A slot's state for this type, made on a slot's first check of
	 * the type and used for check after check; slot_free() drops it,
	 * with a transfer still in flight on cm.
	 */
	void	*(*slot_new)(void);
	void	 (*slot_free)(void *st, CURLM *cm);
	/*
	 * Starts r in the idle slot st: adds its transfers to cm, each
	 * with CURLOPT_PRIVATE set to tag (the loop's slot).  r is copied.
	 * Returns 0, or -1 with r->res's reason set (the check has then
	 * failed without a transfer, the slot stays idle).
	 */
	int	 (*start)(void *st, CURLM *cm, void *tag,
		    const struct check_req *r, const char *ca_file);
	/*
	 * The slot's transfer ended with cc: its result (ok, status,
	 * latency, reason) into the request's res, its transfers out of
	 * cm.  The slot is idle after.
	 */
	void	 (*done)(void *st, CURLM *cm, CURLcode cc);
};

extern const struct check_type check_http;

/*
 * The type that takes url, by its scheme.  The configuration refuses a
 * url no type takes; one that comes anyway goes to the table's first,
 * whose transfer then says why.
 */
const struct check_type *check_type_of(const char *url);

/* check/result.c: a constant reason (text outlives res), or one made. */
void	 check_res_text(struct check_res *res, const char *text);
void	 check_res_reason(struct check_res *res, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

#endif
