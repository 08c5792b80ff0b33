/*
 * Batches of statements for the PostgreSQL backend (state/pg.h), in
 * libpq's pipeline mode: every statement of a batch goes out before the
 * first answer is read, so a batch costs one round trip however many
 * statements it holds.
 *
 * A batch of thousands of statements must not deadlock: the server
 * answers while it reads, and stops reading when its answers are not
 * read.  So the connection is non-blocking while the batch goes out, and
 * whenever libpq cannot write everything the answers that arrived are
 * taken in (PQconsumeInput) until it can, as libpq's documentation of
 * non-blocking connections says.
 */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "pguri.h"
#include "state.h"
#include "state/pg.h"
#include "util.h"

/* Statements added between two flushes while a batch goes out. */
#define PGQ_FLUSH_EVERY	64
/*
 * A statement whose parameters are this long goes out at once, so that
 * libpq's buffer holds one such statement, not the batch's.
 */
#define PGQ_FLUSH_BYTES	65536

struct pgq_stmt {
	char		*what;
	char		*sql;
	int		 nparams;
	char		**params;	/* NULL entries are SQL NULL */
	size_t		 bytes;		/* of the parameters */
	PGresult	*res;
	int		 ok;		/* it ran */
	pgq_sink_fn	*sink;		/* takes the answer as it comes */
	void		*arg;		/* the sink's, freed with the batch */
};

struct pgq {
	struct pg_state	*st;
	struct pgq_stmt	*s;
	size_t		 n, cap;
	size_t		 sent;		/* run (or given up) so far */
};

void
pg_format_err(char *err, size_t errlen, const char *where, const char *what,
    const char *msg)
{
	char line[512], *shown, *said;

	/*
	 * libpq quotes what it took from the URI, which may be pieces of a
	 * password it split: hidden before the line is cut, so that no cut
	 * leaves part of one.
	 */
	shown = pguri_redact(where != NULL ? where : "");
	said = pguri_redact_msg(where != NULL ? where : "", msg != NULL ?
	    msg : "");
	pguri_msg_line(said, line, sizeof(line));
	text_printable(line);
	snprintf(err, errlen, "state %s: %s%s%s", shown, what,
	    line[0] != '\0' ? ": " : "", line);
	free(said);
	free(shown);
}

void
pg_set_err(struct pg_state *st, const char *what, const char *msg)
{
	pg_format_err(st->base.err, sizeof(st->base.err), st->where, what, msg);
}

const char *
pg_lld(char buf[32], long long v)
{
	snprintf(buf, 32, "%lld", v);
	return buf;
}

const char *
pg_bool(int v)
{
	return v ? "t" : "f";
}

long long
pg_getlld(const PGresult *r, int row, int col)
{
	if (r == NULL || PQgetisnull(r, row, col))
		return 0;
	return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

int
pg_getbool(const PGresult *r, int row, int col)
{
	return r != NULL && !PQgetisnull(r, row, col) &&
	    PQgetvalue(r, row, col)[0] == 't';
}

const char *
pg_getstr(const PGresult *r, int row, int col)
{
	if (r == NULL || PQgetisnull(r, row, col))
		return "";
	return PQgetvalue(r, row, col);
}

static void
pga_put(struct pg_arr *a, char c)
{
	if (a->len + 2 >= a->cap) {
		a->cap = a->cap != 0 ? a->cap * 2 : 256;
		a->s = xrealloc(a->s, a->cap);
	}
	a->s[a->len++] = c;
	a->s[a->len] = '\0';
}

void
pga_add(struct pg_arr *a, const char *v)
{
	const char *p;

	pga_put(a, a->n++ == 0 ? '{' : ',');
	if (v == NULL) {
		for (p = "NULL"; *p != '\0'; p++)
			pga_put(a, *p);
		return;
	}
	/* Quoted whole, so that no element reads as NULL or splits. */
	pga_put(a, '"');
	for (p = v; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			pga_put(a, '\\');
		pga_put(a, *p);
	}
	pga_put(a, '"');
}

void
pga_lld(struct pg_arr *a, long long v)
{
	char buf[32];

	pga_add(a, pg_lld(buf, v));
}

const char *
pga_text(struct pg_arr *a)
{
	if (a->n == 0)
		return "{}";
	/* The closing brace comes and goes, so that adding can go on. */
	pga_put(a, '}');
	a->len--;
	return a->s;
}

void
pga_free(struct pg_arr *a)
{
	free(a->s);
	memset(a, 0, sizeof(*a));
}

struct pgq *
pgq_new(struct pg_state *st)
{
	struct pgq *q = xcalloc(1, sizeof(*q));

	q->st = st;
	return q;
}

/*
 * Statement i's parameters, once libpq has them or the batch is freed:
 * one the next statement shares (pgq_add()) is left to it.
 */
static void
pgq_drop_params(struct pgq *q, size_t i)
{
	struct pgq_stmt *s = &q->s[i], *next = i + 1 < q->n ? s + 1 : NULL;
	int j;

	for (j = 0; j < s->nparams; j++) {
		if (next == NULL || j >= next->nparams ||
		    next->params[j] != s->params[j])
			free(s->params[j]);
		s->params[j] = NULL;
	}
}

void
pgq_free(struct pgq *q)
{
	size_t i;

	if (q == NULL)
		return;
	for (i = 0; i < q->n; i++) {
		pgq_drop_params(q, i);
		free(q->s[i].params);
		free(q->s[i].what);
		free(q->s[i].sql);
		free(q->s[i].arg);
		PQclear(q->s[i].res);
	}
	free(q->s);
	free(q);
}

void
pgq_add(struct pgq *q, const char *what, const char *sql, int nparams,
    const char *const *params)
{
	struct pgq_stmt *s, *prev;
	int j;

	if (q->n == q->cap) {
		q->cap = q->cap != 0 ? q->cap * 2 : 16;
		q->s = xrealloc(q->s, q->cap * sizeof(*q->s));
	}
	s = &q->s[q->n++];
	s->what = xstrdup(what);
	s->sql = xstrdup(sql);
	s->nparams = nparams;
	s->params = nparams > 0 ? xcalloc((size_t)nparams,
	    sizeof(*s->params)) : NULL;
	/*
	 * A parameter the previous statement has in the same place, as the
	 * prunes' lists of every configured endpoint, is shared, not copied
	 * again (an unsent one's parameters are all there).
	 */
	prev = q->n > q->sent + 1 ? s - 1 : NULL;
	s->bytes = 0;
	for (j = 0; j < nparams; j++) {
		if (params[j] == NULL)
			s->params[j] = NULL;
		else if (prev != NULL && j < prev->nparams &&
		    prev->params[j] != NULL &&
		    strcmp(prev->params[j], params[j]) == 0)
			s->params[j] = prev->params[j];
		else
			s->params[j] = xstrdup(params[j]);
		s->bytes += params[j] != NULL ? strlen(params[j]) : 0;
	}
	s->res = NULL;
	s->ok = 0;
	s->sink = NULL;
	s->arg = NULL;
}

void
pgq_sink(struct pgq *q, pgq_sink_fn *fn, void *arg)
{
	struct pgq_stmt *s = &q->s[q->n - 1];

	free(s->arg);
	s->sink = fn;
	s->arg = arg;
}

int
pgq_ok(const struct pgq *q, size_t i)
{
	return i < q->n && q->s[i].ok;
}

size_t
pgq_count(const struct pgq *q)
{
	return q->n;
}

PGresult *
pgq_result(const struct pgq *q, size_t i)
{
	return i < q->n ? q->s[i].res : NULL;
}

/*
 * Writes what libpq holds for the server, taking in the server's answers
 * whenever the socket is readable so that the server never waits on us.
 * 0, or -1 (the connection's message says why).
 */
static int
pgq_push(PGconn *c)
{
	struct pollfd p;
	int f;

	while ((f = PQflush(c)) == 1) {
		p.fd = PQsocket(c);
		p.events = POLLIN | POLLOUT;
		p.revents = 0;
		if (poll(&p, 1, -1) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if ((p.revents & (POLLIN | POLLERR | POLLHUP)) != 0 &&
		    PQconsumeInput(c) == 0)
			return -1;
	}
	return f;
}

/* Sends statements sent..n-1 and the sync; 0, or -1 with st->err. */
static int
pgq_send(struct pgq *q, PGconn *c)
{
	struct pgq_stmt *s;
	size_t i;

	for (i = q->sent; i < q->n; i++) {
		s = &q->s[i];
		if (PQsendQueryParams(c, s->sql, s->nparams, NULL,
		    (const char *const *)s->params, NULL, NULL, 0) == 0) {
			pg_set_err(q->st, s->what, PQerrorMessage(c));
			return -1;
		}
		/* libpq has copied them. */
		pgq_drop_params(q, i);
		if (((i - q->sent) % PGQ_FLUSH_EVERY == PGQ_FLUSH_EVERY - 1 ||
		    s->bytes >= PGQ_FLUSH_BYTES) && pgq_push(c) == -1) {
			pg_set_err(q->st, s->what, PQerrorMessage(c));
			return -1;
		}
	}
	if (PQpipelineSync(c) == 0 || pgq_push(c) == -1) {
		pg_set_err(q->st, "cannot send a batch", PQerrorMessage(c));
		return -1;
	}
	return 0;
}

/*
 * Reads the answers of statements sent..n-1 and the sync's; the first
 * failure goes to st->err.  0, or -1.
 */
static int
pgq_read(struct pgq *q, PGconn *c)
{
	struct pgq_stmt *s;
	PGresult *r;
	size_t i;
	int rc = 0, status;

	for (i = q->sent; i < q->n; i++) {
		s = &q->s[i];
		if ((r = PQgetResult(c)) == NULL) {
			/* The connection broke: nothing more will come. */
			if (rc == 0)
				pg_set_err(q->st, s->what, PQerrorMessage(c));
			return -1;
		}
		status = PQresultStatus(r);
		if (status == PGRES_PIPELINE_ABORTED) {
			PQclear(r);
			r = NULL;
		} else if (status != PGRES_COMMAND_OK &&
		    status != PGRES_TUPLES_OK) {
			if (rc == 0)
				pg_set_err(q->st, s->what,
				    PQresultErrorMessage(r));
			rc = -1;
		} else
			s->ok = 1;
		/*
		 * Taken and freed before the next answer is read: the
		 * snapshot's rows of every endpoint are not all held at once.
		 */
		if (s->ok && s->sink != NULL) {
			s->sink(r, s->arg);
			PQclear(r);
			r = NULL;
		}
		s->res = r;
		/* The end of this statement's answers. */
		while ((r = PQgetResult(c)) != NULL)
			PQclear(r);
	}
	if ((r = PQgetResult(c)) == NULL ||
	    PQresultStatus(r) != PGRES_PIPELINE_SYNC) {
		if (rc == 0)
			pg_set_err(q->st, "cannot end a batch",
			    r != NULL ? PQresultErrorMessage(r) :
			    PQerrorMessage(c));
		rc = -1;
	}
	PQclear(r);
	return rc;
}

int
pgq_run(struct pgq *q)
{
	PGconn *c = q->st->conn;
	int rc = -1, piped = 0;

	if (q->sent == q->n)
		return 0;
	q->st->round_trips++;
	if (PQenterPipelineMode(c) == 0 || PQsetnonblocking(c, 1) == -1) {
		pg_set_err(q->st, q->s[q->sent].what, PQerrorMessage(c));
		goto out;
	}
	piped = 1;
	if (pgq_send(q, c) == -1)
		goto out;
	/* The answers are read blocking: everything has gone out. */
	if (PQsetnonblocking(c, 0) == -1) {
		pg_set_err(q->st, q->s[q->sent].what, PQerrorMessage(c));
		goto out;
	}
	rc = pgq_read(q, c);
out:
	q->sent = q->n;
	PQsetnonblocking(c, 0);
	if (piped && PQexitPipelineMode(c) == 0 && rc == 0) {
		pg_set_err(q->st, "cannot end a batch", PQerrorMessage(c));
		rc = -1;
	}
	if (rc == -1 && PQstatus(c) == CONNECTION_OK &&
	    PQtransactionStatus(c) != PQTRANS_IDLE) {
		q->st->round_trips++;
		PQclear(PQexec(c, "ROLLBACK"));
	}
	return rc;
}
