/*
 * `expect` of a TCP or TLS check across reads (check/stream.c): the
 * first byte gives the text's length, the next bytes the text (up to a
 * NUL, as a configuration value ends), the second byte a seed for where
 * the rest, the stream, is cut into reads.  Invariants: the answer is
 * the naive search's over the first CHECK_EXPECT_READ bytes however the
 * reads cut them (FOUND when the text lies wholly in them, OVER when
 * that many came without it, else MORE), it never changes once FOUND
 * or OVER, and want() is what is left to look at.
 */

#include "fuzz.h"
#include "check.h"
#include "check/type.h"

/*
 * Where the first occurrence of text (tlen bytes) in buf[0..len) ends,
 * naively; SIZE_MAX when there is none.
 */
static size_t
naive_end(const uint8_t *buf, size_t len, const char *text, size_t tlen)
{
	size_t i;

	for (i = 0; i + tlen <= len; i++)
		if (memcmp(buf + i, text, tlen) == 0)
			return i + tlen;
	return SIZE_MAX;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct check_stream *s;
	const uint8_t *stream;
	size_t tlen, slen, off = 0, cut, fed = 0, end;
	unsigned seed;
	char *text;
	int got = CHECK_STREAM_MORE, want, prev = CHECK_STREAM_MORE;

	if (size < 2)
		return 0;
	tlen = data[0] % 24;
	seed = data[1];
	if (tlen > size - 2)
		tlen = size - 2;
	text = fuzz_cstr(data + 2, tlen);
	tlen = strlen(text);
	stream = data + 2 + tlen;
	slen = size - 2 - tlen;

	end = naive_end(stream, slen < CHECK_EXPECT_READ ? slen :
	    CHECK_EXPECT_READ, text, tlen);
	s = check_stream_new(text);
	do {
		/* Pieces of 0 to 15 bytes, a small LCG choosing. */
		seed = seed * 1103515245u + 12345u;
		cut = (seed >> 16) % 16;
		if (cut > slen - off)
			cut = slen - off;
		got = check_stream_feed(s, stream + off, cut);
		off += cut;
		fed += cut;
		fuzz_check(prev == CHECK_STREAM_MORE || got == prev,
		    "answer changed once final", text);
		prev = got;
		if (end <= fed)
			want = CHECK_STREAM_FOUND;
		else
			want = fed >= CHECK_EXPECT_READ ? CHECK_STREAM_OVER :
			    CHECK_STREAM_MORE;
		fuzz_check(got == want, "answer is not the naive search's",
		    text);
		fuzz_check(check_stream_want(s) == (got == CHECK_STREAM_MORE ?
		    CHECK_EXPECT_READ - fed : 0), "want", text);
	} while (off < slen);
	check_stream_free(s);
	free(text);
	return 0;
}
