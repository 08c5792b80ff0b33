/*
 * The TCP and TLS check type (check/tcp.c) by tables: the urls it takes
 * (check_url_ok()) and why it refuses the others; `expect` matched
 * across reads however they cut the stream (check/stream.c); the
 * reasons of a failed connection every type shares (check/fail.c).
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "check/type.h"

struct url_case {
	const char	*url;
	const char	*err;		/* NULL: taken; else in the message */
};

static const struct url_case urls[] = {
	{ "tcp://127.0.0.1:25", NULL },
	{ "tcp://127.0.0.1:25/", NULL },
	{ "tls://mail.example.com:465", NULL },
	{ "TLS://Mail.Example.COM:993/", NULL },
	{ "tcp://[::1]:6379", NULL },
	{ "tls://[2001:db8::1]:443/", NULL },
	{ "tcp://db_1.internal:1", NULL },
	{ "tcp://h:65535", NULL },
	{ "tcp://h:00025", NULL },
	{ "tcp://h", "needs a port: tcp://h:PORT" },
	{ "tcp://h/", "needs a port" },
	{ "tls://h:", "bad port (1-65535)" },
	{ "tcp://h:0", "bad port" },
	{ "tcp://h:65536", "bad port" },
	{ "tcp://h:99999999999999999999", "bad port" },
	{ "tcp://h:-1", "bad port" },
	{ "tcp://h:25x", "nothing may follow the port of a tcp:// url" },
	{ "tcp://h:25/health", "nothing may follow the port" },
	{ "tcp://h:25//", "nothing may follow the port" },
	{ "tcp://:25", "tcp:// needs HOST:PORT" },
	{ "tcp://", "needs HOST:PORT" },
	{ "tcp://ho st:25", "needs HOST:PORT" },
	{ "tcp://h%41:25", "needs HOST:PORT" },
	{ "tls://user:pw@h:465", "a tls:// url has no user name" },
	{ "tcp://h:25?x=1", "no query or fragment" },
	{ "tcp://h:25#top", "no query or fragment" },
	{ "tcp://[::1:25", "bad IPv6 address" },
	{ "tcp://[::g]:25", "bad IPv6 address '::g'" },
	{ "tcp://[127.0.0.1]:25", "bad IPv6 address" },
	{ "tcp://[::1]25", "needs a port" },
	{ "tcp://::1:25", "needs HOST:PORT" },
};

static void
test_url_ok(void **unused)
{
	char	 err[256];
	size_t	 i;
	int	 rc;

	(void)unused;
	for (i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		err[0] = '\0';
		rc = check_url_ok(urls[i].url, err, sizeof(err));
		if (urls[i].err == NULL) {
			if (rc != 0)
				fail_msg("%s: refused: %s", urls[i].url, err);
		} else if (rc != -1 || strstr(err, urls[i].err) == NULL)
			fail_msg("%s: want \"%s\", got %d \"%s\"", urls[i].url,
			    urls[i].err, rc, err);
	}
}

static void
test_takes(void **unused)
{
	(void)unused;
	/* Only a TLS check sees a certificate (certWarn). */
	assert_int_equal(check_takes("tcp://h:25"), CHECK_TAKES_STREAM);
	assert_int_equal(check_takes("tls://h:465"),
	    CHECK_TAKES_STREAM | CHECK_TAKES_CERT);
	assert_int_equal(check_takes("TLS://h:465"),
	    CHECK_TAKES_STREAM | CHECK_TAKES_CERT);
	assert_int_equal(check_takes("tcpx://h:25") & CHECK_TAKES_STREAM, 0);
	assert_int_equal(check_takes("https://h/") & CHECK_TAKES_STREAM, 0);
}

/* A stream in pieces; a piece's length is given, so it may hold NULs. */
struct piece {
	const char	*data;
	size_t		 len;
};

struct stream_case {
	const char	*text;
	struct piece	 pieces[4];	/* up to the first with data NULL */
	int		 want[4];	/* feed()'s answer after each */
};

#define P(s)	{ s, sizeof(s) - 1 }

static const struct stream_case streams[] = {
	{ "220 ", { P("220 mail ESMTP\r\n") }, { CHECK_STREAM_FOUND } },
	{ "+PONG", { P("+PO"), P("NG\r\n") },
	    { CHECK_STREAM_MORE, CHECK_STREAM_FOUND } },
	{ "+PONG", { P("+"), P("P"), P("ONG") },
	    { CHECK_STREAM_MORE, CHECK_STREAM_MORE, CHECK_STREAM_FOUND } },
	/* The borders of KMP: a false start that is itself a prefix. */
	{ "aab", { P("aa"), P("aab") }, { CHECK_STREAM_MORE,
	    CHECK_STREAM_FOUND } },
	{ "abab", { P("aba"), P("cabab") }, { CHECK_STREAM_MORE,
	    CHECK_STREAM_FOUND } },
	{ "abac", { P("ababa"), P("c") }, { CHECK_STREAM_MORE,
	    CHECK_STREAM_FOUND } },
	/* NUL bytes before and inside the stream, never in the text. */
	{ "OK", { P("\0\0\0O"), P("\0K"), P("O\0K"), P("OK") },
	    { CHECK_STREAM_MORE, CHECK_STREAM_MORE, CHECK_STREAM_MORE,
	    CHECK_STREAM_FOUND } },
	{ "ready", { P("not yet"), P("\r\n") }, { CHECK_STREAM_MORE,
	    CHECK_STREAM_MORE } },
	/* Found stays found, whatever follows. */
	{ "x", { P("x"), P("yyy") }, { CHECK_STREAM_FOUND,
	    CHECK_STREAM_FOUND } },
	{ "", { P("anything") }, { CHECK_STREAM_FOUND } },
	{ "", { { NULL, 0 } }, { 0 } },
};

static void
test_stream(void **unused)
{
	struct check_stream *s;
	size_t	 i, k;
	int	 got;

	(void)unused;
	for (i = 0; i < sizeof(streams) / sizeof(streams[0]); i++) {
		s = check_stream_new(streams[i].text);
		for (k = 0; k < 4 && streams[i].pieces[k].data != NULL; k++) {
			got = check_stream_feed(s, streams[i].pieces[k].data,
			    streams[i].pieces[k].len);
			if (got != streams[i].want[k])
				fail_msg("\"%s\", piece %zu: want %d, got %d",
				    streams[i].text, k, streams[i].want[k], got);
		}
		check_stream_free(s);
	}
}

/* The text must lie wholly in the first CHECK_EXPECT_READ bytes. */
static void
test_stream_limit(void **unused)
{
	static char	 junk[CHECK_EXPECT_READ];
	struct check_stream *s;

	(void)unused;
	memset(junk, '.', sizeof(junk));

	/* Ends at the very last byte: found. */
	s = check_stream_new("END");
	assert_int_equal(check_stream_feed(s, junk, sizeof(junk) - 3),
	    CHECK_STREAM_MORE);
	assert_int_equal(check_stream_want(s), 3);
	assert_int_equal(check_stream_feed(s, "END", 3), CHECK_STREAM_FOUND);
	assert_int_equal(check_stream_want(s), 0);
	check_stream_free(s);

	/* One byte too far: over, and it stays so. */
	s = check_stream_new("END");
	assert_int_equal(check_stream_feed(s, junk, sizeof(junk) - 2),
	    CHECK_STREAM_MORE);
	assert_int_equal(check_stream_feed(s, "END", 3), CHECK_STREAM_OVER);
	assert_int_equal(check_stream_feed(s, "END", 3), CHECK_STREAM_OVER);
	assert_int_equal(check_stream_want(s), 0);
	check_stream_free(s);

	/* All of it in one piece, more than 4 KiB: over. */
	s = check_stream_new("END");
	assert_int_equal(check_stream_feed(s, junk, sizeof(junk)),
	    CHECK_STREAM_OVER);
	check_stream_free(s);

	/* A text longer than what is looked at is never found. */
	s = check_stream_new(memset(&(char[CHECK_EXPECT_READ + 2]){ 0 }[0],
	    '.', CHECK_EXPECT_READ + 1));
	assert_int_equal(check_stream_feed(s, junk, sizeof(junk)),
	    CHECK_STREAM_OVER);
	check_stream_free(s);
}

struct reason_case {
	CURLcode	 cc;
	long		 oserr;
	const char	*errbuf;
	const char	*want;		/* NULL: not one of the shared ones */
};

static const struct reason_case reasons[] = {
	{ CURLE_OPERATION_TIMEDOUT, 0, "Connection timed out after 2001 ms",
	    "timeout" },
	{ CURLE_COULDNT_CONNECT, ETIMEDOUT, "", "timeout" },
	{ CURLE_COULDNT_CONNECT, ECONNREFUSED, "Failed to connect",
	    "connection refused" },
	{ CURLE_RECV_ERROR, ECONNRESET, "Recv failure: Connection reset by "
	    "peer", "connection reset" },
	{ CURLE_SEND_ERROR, ECONNRESET, "", "connection reset" },
	{ CURLE_COULDNT_CONNECT, EHOSTUNREACH, "", "no route to host" },
	{ CURLE_COULDNT_CONNECT, ENETUNREACH, "", "network unreachable" },
	{ CURLE_COULDNT_RESOLVE_HOST, 0, "Could not resolve host: db.test",
	    "could not resolve host db.test" },
	{ CURLE_PEER_FAILED_VERIFICATION, 0, "SSL: no alternative "
	    "certificate subject name matches target host name 'x'",
	    "TLS: SSL: no alternative certificate subject name matches "
	    "target host name 'x'" },
	{ CURLE_SSL_CONNECT_ERROR, ECONNRESET, "", "TLS: SSL connect error" },
	/* A server's words made printable: a control character goes. */
	{ CURLE_SSL_CACERT_BADFILE, 0, "bad\x1b[31m", "TLS: bad?[31m" },
	{ CURLE_RECV_ERROR, 0, "Recv failure", NULL },
	{ CURLE_GOT_NOTHING, 0, "", NULL },
};

static void
test_reasons(void **unused)
{
	struct check_res res;
	size_t	 i;
	int	 rc;

	(void)unused;
	for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		check_res_init(&res);
		rc = check_fail_connect(&res, reasons[i].cc, reasons[i].oserr,
		    reasons[i].errbuf, "db.test");
		if (reasons[i].want == NULL) {
			assert_int_equal(rc, 0);
			assert_string_equal(res.reason, "not checked");
		} else {
			assert_int_equal(rc, 1);
			assert_string_equal(res.reason, reasons[i].want);
		}
		check_res_free(&res);
	}

	check_res_init(&res);
	check_fail_other(&res, CURLE_GOT_NOTHING, "");
	assert_string_equal(res.reason, "Server returned nothing (no headers, "
	    "no data)");
	check_fail_other(&res, CURLE_RECV_ERROR, "Recv failure: x");
	assert_string_equal(res.reason, "Failure when receiving data from the "
	    "peer: Recv failure: x");
	check_res_free(&res);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_url_ok),
		cmocka_unit_test(test_takes),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_stream_limit),
		cmocka_unit_test(test_reasons),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
