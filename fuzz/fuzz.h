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

/* No byte below 0x20 or 0x7f: nothing that breaks or forges a log line. */
static inline int
fuzz_printable(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			return 0;
	return 1;
}

#endif
