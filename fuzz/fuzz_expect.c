/*
 * expectStatus: parse_expect(), expect_match() and expect_format().
 * Invariants: every range is inside 100..599 and well ordered; the
 * formatted text parses back to the same ranges; expect_match agrees
 * with the ranges for every status code; a short buffer still gets a
 * terminated string.
 */

#include "fuzz.h"
#include "util.h"

static int
in_ranges(const struct expect *e, long code)
{
	int i;

	for (i = 0; i < e->n; i++)
		if (code >= e->r[i].lo && code <= e->r[i].hi)
			return 1;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct expect e, again;
	char *s, buf[EXPECT_MAX * 6 + 1], small[8];
	long code;
	int i;

	s = fuzz_cstr(data, size);
	memset(&e, 0x5a, sizeof(e));
	if (parse_expect(s, &e) == -1)
		goto out;
	fuzz_check(e.n >= 1 && e.n <= EXPECT_MAX, "range count", s);
	for (i = 0; i < e.n; i++)
		fuzz_check(e.r[i].lo >= 100 && e.r[i].hi <= 599 &&
		    e.r[i].lo <= e.r[i].hi, "range bounds", s);
	for (code = -1; code <= 700; code++)
		fuzz_check(expect_match(&e, code) == in_ranges(&e, code),
		    "expect_match disagrees with the ranges", s);

	/* Room for EXPECT_MAX items of "NNN, ": the text is never cut. */
	expect_format(&e, buf, sizeof(buf));
	fuzz_check(strlen(buf) < sizeof(buf), "formatted text", s);
	memset(&again, 0, sizeof(again));
	fuzz_check(parse_expect(buf, &again) == 0, "formatted text does "
	    "not parse", buf);
	fuzz_check(again.n == e.n, "round trip changes the count", buf);
	for (i = 0; i < e.n; i++)
		fuzz_check(again.r[i].lo == e.r[i].lo &&
		    again.r[i].hi == e.r[i].hi, "round trip changes a range",
		    buf);

	memset(small, 'x', sizeof(small));
	expect_format(&e, small, sizeof(small));
	fuzz_check(memchr(small, '\0', sizeof(small)) != NULL,
	    "short buffer left unterminated", s);
	fuzz_check(strncmp(small, buf, strlen(small)) == 0,
	    "short buffer is not a prefix", s);
out:
	free(s);
	return 0;
}
