/*
 * A PostgreSQL URI as it may be shown: see pguri.h.
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pguri.h"
#include "util.h"

#define HIDDEN	"***"

/*
 * Where libpq may cut a password written without percent-encoding, and
 * take the pieces for a user, a host, a port, a database, one host of a
 * list or a query parameter.
 */
#define PIECE_SEPS	"@:/?&=,"

#define BLANKS		" \t\n\r\f\v"

int
pguri_is(const char *s)
{
	return strncasecmp(s, "postgresql://", 13) == 0 ||
	    strncasecmp(s, "postgres://", 11) == 0;
}

/* The n bytes at s percent-decoded, as libpq decodes a value; malloc'd. */
static char *
decode(const char *s, size_t n)
{
	char *out = xmalloc(n + 1);
	size_t i, j;
	int hi, lo;

	for (i = j = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n &&
		    (hi = hex_digit(s[i + 1])) >= 0 &&
		    (lo = hex_digit(s[i + 2])) >= 0) {
			out[j++] = (char)(hi * 16 + lo);
			i += 2;
		} else
			out[j++] = s[i];
	}
	out[j] = '\0';
	return out;
}

/*
 * Whether the n bytes at s, percent-decoded, are a parameter whose value
 * is a password.  libpq compares keywords exactly; any case is hidden
 * here, as hiding too much costs nothing.
 */
static int
secret_param(const char *s, size_t n)
{
	char *name = decode(s, n);
	int secret;

	secret = strcasecmp(name, "password") == 0 ||
	    strcasecmp(name, "sslpassword") == 0;
	free(name);
	return secret;
}

/*
 * Where the query begins in the text after "://": at the first '?' that
 * is not part of a password.  A '?' followed by an '@' before any '='
 * is taken for one (user:pa?ss@host): a parameter's name holds no '@'.
 */
static const char *
query_start(const char *auth)
{
	const char *q = auth;
	size_t n;

	for (;;) {
		q += strcspn(q, "?");
		if (*q == '\0')
			return q;
		n = strcspn(q + 1, "@=");
		if (q[1 + n] != '@')
			return q;
		q += 1 + n;
	}
}

/* A password in a URI: n bytes from off. */
struct span {
	size_t		 off, n;
};

static void
add_span(struct span **v, size_t *n, size_t *cap, size_t off, size_t len)
{
	if (*n == *cap) {
		*cap = *cap != 0 ? *cap * 2 : 4;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[*n].off = off;
	(*v)[*n].n = len;
	(*n)++;
}

/*
 * The passwords of uri, in the order they come (malloc'd, *nout of
 * them): the one of the user part (user:PASSWORD@host), and the value
 * of each password or sslpassword query parameter (their names
 * percent-decoded, as libpq reads them; a parameter ends at '&', or at
 * a '?' libpq would refuse).  A user part is taken to end at the last
 * '@' before the query, so that a password holding '@' or '/' is found
 * whole however libpq would split it.
 */
static struct span *
passwords(const char *uri, size_t *nout)
{
	const char *auth, *query, *at, *colon, *p, *amp, *eq;
	struct span *v = NULL;
	size_t n = 0, cap = 0;

	*nout = 0;
	if ((auth = strstr(uri, "://")) == NULL)
		return NULL;
	auth += 3;
	query = query_start(auth);
	for (at = NULL, p = auth; p < query; p++)
		if (*p == '@')
			at = p;
	if (at != NULL &&
	    (colon = memchr(auth, ':', (size_t)(at - auth))) != NULL)
		add_span(&v, &n, &cap, (size_t)(colon + 1 - uri),
		    (size_t)(at - colon - 1));
	/*
	 * "?a=b&password=c": each parameter up to '&', or up to a second
	 * '?', which libpq would refuse but which must not hide a
	 * password from this rule either.
	 */
	for (p = query; *p != '\0'; p = amp) {
		p++;
		amp = p + strcspn(p, "&?");
		eq = memchr(p, '=', (size_t)(amp - p));
		if (eq != NULL && secret_param(p, (size_t)(eq - p)))
			add_span(&v, &n, &cap, (size_t)(eq + 1 - uri),
			    (size_t)(amp - eq - 1));
	}
	*nout = n;
	return v;
}

/* Appends the n bytes at s to buf, at *len. */
static void
put(char *buf, size_t *len, const char *s, size_t n)
{
	memcpy(buf + *len, s, n);
	*len += n;
	buf[*len] = '\0';
}

char *
pguri_redact(const char *uri)
{
	struct span *v;
	char *out;
	size_t nv, i, from = 0, len = 0;

	v = passwords(uri, &nv);
	/* Never longer than uri with each password HIDDEN. */
	out = xmalloc(strlen(uri) + nv * sizeof(HIDDEN) + 1);
	for (i = 0; i < nv; i++) {
		put(out, &len, uri + from, v[i].off - from);
		put(out, &len, HIDDEN, strlen(HIDDEN));
		from = v[i].off + v[i].n;
	}
	put(out, &len, uri + from, strlen(uri + from));
	free(v);
	return out;
}

/* What a message must not hold: texts, longest matched first. */
struct needles {
	char		**s;
	size_t		 n, cap;
};

/* The n bytes at s, as written and percent-decoded; nothing if empty. */
static void
add_needle(struct needles *nd, const char *s, size_t n)
{
	if (n == 0)
		return;
	if (nd->n + 2 > nd->cap) {
		nd->cap = nd->cap != 0 ? nd->cap * 2 : 16;
		nd->s = xrealloc(nd->s, nd->cap * sizeof(*nd->s));
	}
	nd->s[nd->n++] = decode(s, n);
	nd->s[nd->n] = xmalloc(n + 1);
	memcpy(nd->s[nd->n], s, n);
	nd->s[nd->n++][n] = '\0';
}

char *
pguri_redact_msg(const char *uri, const char *msg)
{
	struct needles nd = { NULL, 0, 0 };
	struct span *v;
	const char *w, *end;
	char *out;
	size_t nv, i, j, best, len = 0, n;

	v = passwords(uri, &nv);
	for (i = 0; i < nv; i++) {
		w = uri + v[i].off;
		end = w + v[i].n;
		add_needle(&nd, w, v[i].n);
		while (w < end) {
			n = strcspn(w, PIECE_SEPS);
			if (n > (size_t)(end - w))
				n = (size_t)(end - w);
			add_needle(&nd, w, n);
			w += n + (w + n < end);
		}
	}
	/*
	 * libpq shows a piece within a value it cut at PIECE_SEPS, in a
	 * message that sets values off with quotes, blanks or punctuation:
	 * never next to a letter or a digit.  So the "ss" of "p@ss" is
	 * hidden in "ss@host" but not in "address".  Each byte becomes
	 * HIDDEN at most.
	 */
	out = xmalloc(strlen(msg) * strlen(HIDDEN) + 1);
	out[0] = '\0';
	for (i = 0; msg[i] != '\0';) {
		best = 0;
		for (j = 0; j < nd.n &&
		    (i == 0 || !isalnum((unsigned char)msg[i - 1])); j++) {
			n = strlen(nd.s[j]);
			if (n > best && strncmp(msg + i, nd.s[j], n) == 0 &&
			    !isalnum((unsigned char)msg[i + n]))
				best = n;
		}
		if (best > 0) {
			put(out, &len, HIDDEN, strlen(HIDDEN));
			i += best;
		} else
			put(out, &len, msg + i++, 1);
	}
	for (j = 0; j < nd.n; j++)
		free(nd.s[j]);
	free(nd.s);
	free(v);
	return out;
}

/* Begins each line of libpq's about one host it could not use. */
#define HOST_FAILED	"connection to server "

void
pguri_msg_line(const char *msg, char *line, size_t len)
{
	const char *p = msg;
	size_t n = strcspn(p, "\n"), used;

	if (len == 0)
		return;
	snprintf(line, len, "%.*s", (int)n, p);
	for (p += n; *p != '\0'; p += n) {
		p++;		/* the '\n' */
		n = strcspn(p, "\n");
		if (strncmp(p, HOST_FAILED, strlen(HOST_FAILED)) != 0)
			continue;
		used = strlen(line);
		snprintf(line + used, len - used, "; %.*s", (int)n, p);
	}
}

/*
 * libpq's connection keywords (libpq's documentation, "Parameter Key
 * Words"), for a keyword/value connection string written where a URI
 * belongs.
 */
static const char *const conn_keywords[] = {
	"host", "hostaddr", "port", "dbname", "user", "password", "passfile",
	"require_auth", "channel_binding", "connect_timeout",
	"client_encoding", "options", "application_name",
	"fallback_application_name", "keepalives", "keepalives_idle",
	"keepalives_interval", "keepalives_count", "tcp_user_timeout",
	"replication", "gssencmode", "sslmode", "sslnegotiation",
	"sslcompression", "sslcert", "sslkey", "sslkeylogfile",
	"sslpassword", "sslcertmode", "sslrootcert", "sslcrl", "sslcrldir",
	"sslsni", "requirepeer", "ssl_min_protocol_version",
	"ssl_max_protocol_version", "min_protocol_version",
	"max_protocol_version", "krbsrvname", "gsslib", "gssdelegation",
	"scram_client_key", "scram_server_key", "service",
	"target_session_attrs", "load_balance_hosts", "oauth_issuer",
	"oauth_client_id", "oauth_client_secret", "oauth_scope", "authtype",
	"tty", NULL,
};

int
pguri_is_conninfo(const char *s)
{
	const char *p, *w, *q;
	size_t n, i;

	for (p = s; *p != '\0';) {
		p += strspn(p, BLANKS);
		w = p;
		while (*p == '_' || isalpha((unsigned char)*p))
			p++;
		n = (size_t)(p - w);
		q = p + strspn(p, BLANKS);
		if (n > 0 && *q == '=')
			for (i = 0; conn_keywords[i] != NULL; i++)
				if (strlen(conn_keywords[i]) == n &&
				    strncasecmp(w, conn_keywords[i], n) == 0)
					return 1;
		/* A keyword begins a value or follows white space. */
		p = q != p ? q : p + strcspn(p, BLANKS);
	}
	return 0;
}

void
pguri_passwords(const char *uri, void (*fn)(void *arg, const char *pw),
    void *arg)
{
	struct span *v;
	char *pw, *dec;
	size_t nv, i;

	v = passwords(uri, &nv);
	for (i = 0; i < nv; i++) {
		if (v[i].n == 0)
			continue;
		pw = xmalloc(v[i].n + 1);
		memcpy(pw, uri + v[i].off, v[i].n);
		pw[v[i].n] = '\0';
		fn(arg, pw);
		/* libpq percent-decodes it: that form may show too. */
		dec = decode(pw, v[i].n);
		if (strcmp(dec, pw) != 0)
			fn(arg, dec);
		free_secret(dec);
		free_secret(pw);
	}
	free(v);
}
