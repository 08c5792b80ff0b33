/*
 * The certificates table (schema version 11): when each endpoint's
 * certificate expires, as its latest check saw it (ddup.ini(5),
 * certWarn).  A table of its own, written only when an expiry changes,
 * so that a steady run writes no page for it.
 */

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "config.h"
#include "state.h"
#include "state/sqlite.h"
#include "util.h"

struct cert_row {
	char		*domain;
	char		*endpoint;
	long long	 expires;
};

static int
cert_cmp(const void *a, const void *b)
{
	const struct cert_row *x = a, *y = b;
	int c = strcmp(x->domain, y->domain);

	return c != 0 ? c : strcmp(x->endpoint, y->endpoint);
}

int
state_get_certs(struct sqlite_state *st, const struct config *c,
    struct st_ep_snap *eps)
{
	sqlite3_stmt	*s = NULL;
	struct cert_row	*v = NULL, key, *hit;
	size_t		 n = 0, cap = 0, i, j, k = 0;
	int		 rc = -1, step;

	if (st == NULL)
		return 0;
	/* Once a run: no prepared statement kept. */
	if (st_stmt(st, "SELECT domain, endpoint, expires FROM certs", &s,
	    "reading the certificates") == -1)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap != 0 ? cap * 2 : 16;
			v = xrealloc(v, cap * sizeof(*v));
		}
		v[n].domain = st_col_text(s, 0);
		v[n].endpoint = st_col_text(s, 1);
		v[n].expires = sqlite3_column_int64(s, 2);
		n++;
	}
	if (step != SQLITE_DONE) {
		st_db_err(st, st->db, "reading the certificates");
		goto out;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), cert_cmp);
	for (i = 0; i < c->ndomains; i++)
		for (j = 0; j < c->domains[i].neps; j++, k++) {
			key.domain = c->domains[i].name;
			key.endpoint = c->domains[i].eps[j].name;
			hit = n > 0 ? bsearch(&key, v, n, sizeof(*v),
			    cert_cmp) : NULL;
			eps[k].cert_expires = hit != NULL ? hit->expires : 0;
		}
	rc = 0;
out:
	sqlite3_finalize(s);
	for (i = 0; i < n; i++) {
		free(v[i].domain);
		free(v[i].endpoint);
	}
	free(v);
	return rc;
}

int
state_put_cert(struct sqlite_state *st, const char *domain,
    const char *endpoint, long long expires)
{
	sqlite3_stmt	*s = NULL;
	int		 b, rc = -1;

	if (st_need_tx(st, "saving a certificate") == -1)
		return -1;
	if (st_stmt(st, "INSERT INTO certs (domain, endpoint, expires)"
	    " VALUES (?1, ?2, ?3) ON CONFLICT (domain, endpoint)"
	    " DO UPDATE SET expires = excluded.expires", &s,
	    "saving a certificate") == -1)
		goto out;
	b = sqlite3_bind_text(s, 1, domain, -1, SQLITE_STATIC);
	b |= sqlite3_bind_text(s, 2, endpoint, -1, SQLITE_STATIC);
	b |= sqlite3_bind_int64(s, 3, expires);
	rc = st_step_done(st, s, b, "saving a certificate");
out:
	sqlite3_finalize(s);
	return rc;
}
