/*
 * `expect` of a TCP or TLS check (check/type.h): the text looked for in
 * the first CHECK_EXPECT_READ bytes of what the server sends, however
 * its reads cut it.  Knuth-Morris-Pratt: each byte is looked at once and
 * nothing is kept of the stream but how much of the text its last bytes
 * match, so a text split over two reads, or a stream of NUL bytes, needs
 * no buffer.
 */

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check/type.h"
#include "util.h"

struct check_stream {
	char		*text;
	size_t		 len;
	size_t		*fail;		/* KMP's failure function, len of them */
	size_t		 matched;	/* bytes of text the stream ends with */
	size_t		 seen;		/* bytes looked at, <= CHECK_EXPECT_READ */
	int		 state;		/* CHECK_STREAM_* */
};

struct check_stream *
check_stream_new(const char *text)
{
	struct check_stream *s = xcalloc(1, sizeof(*s));
	size_t	 i, k = 0;

	s->text = xstrdup(text);
	s->len = strlen(text);
	s->fail = xcalloc(s->len + 1, sizeof(*s->fail));
	/* fail[i]: the longest proper border of text[0..i]. */
	for (i = 1; i < s->len; i++) {
		while (k > 0 && text[i] != text[k])
			k = s->fail[k - 1];
		if (text[i] == text[k])
			k++;
		s->fail[i] = k;
	}
	s->state = s->len == 0 ? CHECK_STREAM_FOUND : CHECK_STREAM_MORE;
	return s;
}

int
check_stream_feed(struct check_stream *s, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t	 i, k = s->matched;

	for (i = 0; i < len && s->state == CHECK_STREAM_MORE; i++) {
		unsigned char c = p[i];

		while (k > 0 && c != (unsigned char)s->text[k])
			k = s->fail[k - 1];
		if (c == (unsigned char)s->text[k])
			k++;
		s->seen++;
		if (k == s->len)
			s->state = CHECK_STREAM_FOUND;
		else if (s->seen >= CHECK_EXPECT_READ)
			s->state = CHECK_STREAM_OVER;
	}
	s->matched = k;
	return s->state;
}

size_t
check_stream_want(const struct check_stream *s)
{
	return s->state == CHECK_STREAM_MORE ? CHECK_EXPECT_READ - s->seen :
	    0;
}

void
check_stream_free(struct check_stream *s)
{
	if (s == NULL)
		return;
	free(s->fail);
	free(s->text);
	free(s);
}
