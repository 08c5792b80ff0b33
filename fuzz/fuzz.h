#ifndef DDUP_FUZZ_H
#define DDUP_FUZZ_H

/*
 * Helpers shared by the libFuzzer targets.  A target checks invariants
 * with fuzz_check(): a broken invariant aborts, which libFuzzer reports
 * as a crash and saves the input, exactly like a sanitizer report.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "rrset.h"
#include "util.h"

int	 LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void
fuzz_check(int ok, const char *what, const char *detail)
{
	if (ok)
		return;
	fprintf(stderr, "fuzz: invariant broken: %s%s%s\n", what,
	    detail != NULL ? ": " : "", detail != NULL ? detail : "");
	abort();
}

/*
 * The input as a C string.  Configuration values and stored lists are C
 * strings, so an embedded NUL ends the text there, as it would for the
 * program.  The caller frees it.
 */
static inline char *
fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s;

	if ((s = malloc(size + 1)) == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/*
 * Text from outside must come out as text_printable() leaves it: valid
 * UTF-8 with no C0 or C1 control, no DEL, no line or paragraph separator
 * and no bidirectional control, so nothing breaks, forges or reorders a
 * log line.  Two checks: the rule applied again changes nothing (the text
 * did go through it), and an independent decoder finds none of the code
 * points that must never appear (the rule itself is right).
 */
static inline int
fuzz_printable_cp(unsigned long c)
{
	if (c < 0x20 || (c >= 0x7f && c <= 0x9f))
		return 0;
	if (c == 0x2028 || c == 0x2029)
		return 0;
	if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) ||
	    c == 0x200e || c == 0x200f || c == 0x061c)
		return 0;
	return 1;
}

static inline int
fuzz_printable(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned long c, min;
	size_t n, i;
	char *again;
	int same;

	if ((again = strdup(s)) == NULL)
		abort();
	text_printable(again);
	same = strcmp(again, s) == 0;
	free(again);
	if (!same)
		return 0;
	while (*p != '\0') {
		if (*p < 0x80) {
			n = 1, c = *p, min = 0;
		} else if ((*p & 0xe0) == 0xc0) {
			n = 2, c = *p & 0x1f, min = 0x80;
		} else if ((*p & 0xf0) == 0xe0) {
			n = 3, c = *p & 0x0f, min = 0x800;
		} else if ((*p & 0xf8) == 0xf0) {
			n = 4, c = *p & 0x07, min = 0x10000;
		} else
			return 0;	/* continuation or invalid lead byte */
		for (i = 1; i < n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return 0;	/* truncated (the NUL included) */
			c = (c << 6) | (p[i] & 0x3f);
		}
		if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			return 0;	/* overlong, beyond Unicode, surrogate */
		if (!fuzz_printable_cp(c))
			return 0;
		p += n;
	}
	return 1;
}

/*
 * An API's error answer with body buf, as http_call() would have it, through
 * http_status_error() with rq (who, url, errtext...): the status and the
 * Content-Type come from the input's length, so every input is read as one
 * error answer (a loop over all of them would cost many parses per input)
 * and the corpus still covers them all.  The class must be the status's,
 * the message one printable line.
 */
static inline void
fuzz_http_error(const struct http_req *rq, const char *buf, size_t len)
{
	static const long codes[] = { 400, 401, 403, 404, 409, 412, 422, 429,
	    500, 503, 302 };
	static const char *ctypes[] = { "application/json",
	    "application/json; charset=utf-8", "text/xml", "text/html", NULL };
	struct http_resp rs;
	char err[512];
	enum perr e, want;
	long code;

	memset(&rs, 0, sizeof(rs));
	rs.body = (char *)(uintptr_t)buf;
	rs.len = len;
	rs.retry_after = (long long)(len % 5) - 1;
	code = codes[len % (sizeof(codes) / sizeof(codes[0]))];
	rs.status = code;
	rs.ctype = (char *)(uintptr_t)ctypes[len / 11 %
	    (sizeof(ctypes) / sizeof(ctypes[0]))];
	err[0] = '\0';
	e = http_status_error(rq, &rs, err, sizeof(err));
	want = code == 401 || code == 403 ? PERR_AUTH : code == 404 ?
	    PERR_NOTFOUND : code == 429 ? PERR_RATELIMIT : code >= 500 ?
	    PERR_TEMP : PERR_INVALID;
	fuzz_check(e == want, "error: class", err);
	fuzz_check(err[0] != '\0' && fuzz_printable(err), "error: message "
	    "is not one printable line", err);
}

/*
 * A provider's reader of a name's RRsets asked for a CNAME beside A and
 * AAAA (a domain with a `cname` endpoint).  A failed parse says why in
 * one printable line and leaves nothing behind; a CNAME read is one host
 * name as struct rrset holds it (printable, lower case, no final dot)
 * with a ttl of at least 1, and no CNAME is a ttl of 0.
 */
static inline void
fuzz_rrsets_cname(int (*parse)(const char *, size_t, struct rrset *,
    size_t, char *, size_t), const char *buf, size_t len)
{
	struct rrset sets[3];
	const char *t;
	char err[256];
	size_t k, n;

	memset(sets, 0, sizeof(sets));
	sets[0].type = RR_A;
	sets[1].type = RR_AAAA;
	sets[2].type = RR_CNAME;
	err[0] = '\0';
	if (parse(buf, len, sets, 3, err, sizeof(err)) == -1) {
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "cname: "
		    "reason is not one printable line", err);
		for (k = 0; k < 3; k++)
			fuzz_check(rrset_empty(&sets[k]) && sets[k].ttl == 0,
			    "cname: a failure left records", NULL);
		return;
	}
	t = sets[2].target;
	fuzz_check((t != NULL) == (sets[2].ttl >= 1) && sets[2].ttl >= 0,
	    "cname: ttl", t);
	if (t != NULL) {
		n = strlen(t);
		fuzz_check(n > 0 && n <= 253 && t[n - 1] != '.' &&
		    fuzz_printable(t) && strpbrk(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZ "
		    "\\") == NULL, "cname: target not canonical", t);
	}
	for (k = 0; k < 3; k++)
		rrset_clear(&sets[k]);
}

/*
 * A provider's reader of a name's address RRsets (as rrset_parse_json()
 * reads them), asked for A, AAAA or both (in either order, from the
 * input's length).  A failed parse says why in one printable line and
 * leaves nothing behind; a parse that works holds only addresses of each
 * set's family, strictly sorted, and a ttl of at least 1 exactly when it
 * holds some.
 */
static inline void
fuzz_rrsets(int (*parse)(const char *, size_t, struct rrset *, size_t,
    char *, size_t), const char *buf, size_t len)
{
	struct rrset sets[2];
	char err[256];
	size_t nsets, k, i;

	memset(sets, 0, sizeof(sets));
	/* A, AAAA, or both (in either order), from the input's length. */
	nsets = len % 4 == 3 ? 1 : 2;
	sets[0].type = len % 2 == 0 ? RR_A : RR_AAAA;
	sets[1].type = sets[0].type == RR_A ? RR_AAAA : RR_A;
	if (len % 4 == 1)
		sets[0].type = RR_AAAA, nsets = 1;
	err[0] = '\0';
	if (parse(buf, len, sets, nsets, err, sizeof(err)) == -1) {
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "rrsets: "
		    "reason is not one printable line", err);
		for (k = 0; k < nsets; k++)
			fuzz_check(sets[k].addrs.n == 0 && sets[k].ttl == 0,
			    "rrsets: a failure left records", NULL);
		return;
	}
	for (k = 0; k < nsets; k++) {
		fuzz_check((sets[k].addrs.n > 0) == (sets[k].ttl >= 1) &&
		    sets[k].ttl >= 0, "rrsets: ttl", NULL);
		for (i = 0; i < sets[k].addrs.n; i++) {
			fuzz_check(sets[k].addrs.v[i].family ==
			    (sets[k].type == RR_AAAA ? 6 : 4), "rrsets: "
			    "address of the other family",
			    sets[k].addrs.v[i].s);
			fuzz_check(i == 0 || addr_cmp(&sets[k].addrs.v[i - 1],
			    &sets[k].addrs.v[i]) < 0, "rrsets: not sorted",
			    NULL);
		}
		rrset_clear(&sets[k]);
	}
}

#endif
