/*
 * A check's result (struct check_res, check.h) and its reason, for the
 * loop and every check type: apart from check.c so that a type can set
 * a reason without using the loop, which uses every type.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check/type.h"
#include "redact.h"
#include "util.h"

/* The reason goes; the earlier results stay. */
static void
drop_reason(struct check_res *res)
{
	free(res->text);
	res->text = NULL;
	res->reason = NULL;
}

void
check_res_free(struct check_res *res)
{
	struct check_res *b, *next;

	drop_reason(res);
	for (b = res->before; b != NULL; b = next) {
		next = b->before;
		drop_reason(b);
		free(b);
	}
	res->before = NULL;
}

/* A constant reason: text must outlive the result. */
void
check_res_text(struct check_res *res, const char *text)
{
	drop_reason(res);
	res->reason = text;
}

/* A reason made from fmt, cut at CHECK_REASON_MAX - 1 bytes. */
void
check_res_reason(struct check_res *res, const char *fmt, ...)
{
	char	 buf[CHECK_REASON_MAX];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* It may quote a server (a certificate's subject name, say). */
	outside_text(buf, sizeof(buf));
	drop_reason(res);
	res->text = xstrdup(buf);
	res->reason = res->text;
}

void
check_res_init(struct check_res *res)
{
	memset(res, 0, sizeof(*res));
	check_res_text(res, "not checked");
}
