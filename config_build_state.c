/*
 * `state` and the fleet of checkers at the top of the file: a SQLite
 * path or a PostgreSQL URI (ddup.ini(5), TOP-LEVEL KEYS), and
 * `checkers`, `checker` and `quorum` (ddup.ini(5), SEVERAL CHECKERS).
 */

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "config_int.h"
#include "pguri.h"
#include "util.h"

#define STATE_DEFAULT	"/var/lib/ddup/ddup.db"
#define CHECKER_MAX	253		/* bytes in a checker's name: a host name */

/*
 * A PostgreSQL URI that libpq cannot read is a configuration error, found
 * by -n without connecting.  libpq's message quotes parts of the URI,
 * which may hold the password: what it quotes is left out.
 */
static void
check_pg_uri(struct ctx *x, const struct rkey *k, const char *uri)
{
	PQconninfoOption *opts;
	const char *p;
	char *msg = NULL, *shown;
	size_t n = 0;
	int quoted = 0;

	if ((opts = PQconninfoParse(uri, &msg)) != NULL) {
		PQconninfoFree(opts);
		return;
	}
	if (msg == NULL) {
		cfg_problem(x, k->line, 0, "'state': libpq cannot read the URI "
		    "(out of memory)");
		return;
	}
	/* Each quoted part becomes "...": at most 5 bytes for its 2. */
	shown = xmalloc(strlen(msg) * 3 + 1);
	for (p = msg; *p != '\0'; p++) {
		if (*p == '"') {
			quoted = !quoted;
			if (quoted) {
				memcpy(shown + n, "\"...\"", 5);
				n += 5;
			}
		} else if (!quoted && *p != '\n')
			shown[n++] = *p;
	}
	shown[n] = '\0';
	cfg_problem(x, k->line, 0, "'state': not a PostgreSQL URI that libpq "
	    "can read: %s", shown);
	free(shown);
	PQfreemem(msg);
}

/*
 * `state` (ddup.ini(5), TOP-LEVEL KEYS and SEVERAL CHECKERS): a path,
 * or a PostgreSQL URI.  It is a
 * secret, as the URI may hold a password; that one is never shown.
 */
static void
check_state(struct ctx *x, const struct rsec *s)
{
	struct config *c = x->c;
	const struct rkey *k;
	char *v, *shown;
	int literal;

	if ((k = cfg_get(x, s, "state")) == NULL) {
		if (!cfg_has_key(s, "state"))
			c->state = xstrdup(STATE_DEFAULT);
		return;
	}
	if ((v = cfg_secret(x, k, "state", 1, &literal)) == NULL)
		return;
	c->state = v;
	/*
	 * Not a SQLite file named after a connection string, password and
	 * all; the value is not quoted, for that password.
	 */
	if (!pguri_is(v) && pguri_is_conninfo(v))
		cfg_problem(x, k->line, 0, "'state': looks like a libpq "
		    "keyword/value connection string; write a postgresql:// "
		    "URI");
	if (!pguri_is(v))
		return;
	c->state_pg = 1;
	check_pg_uri(x, k, v);
	shown = pguri_redact(v);
	if (literal && x->group_readable && strcmp(shown, v) != 0)
		cfg_problem(x, k->line, 1, "'state': the URI's password is "
		    "written in a file that group or others can read; use "
		    "!env or !file, or make the file private");
	free(shown);
}

/*
 * A checker's name: as a location's (ddup.ini(5), SEVERAL CHECKERS), and
 * no longer than a host's.
 */
static int
checker_name_ok(const char *s)
{
	return cfg_location_ok(s) && strlen(s) <= CHECKER_MAX;
}

/* The fleet's spelling of name, or NULL when it is not one of checkers. */
static char *
fleet_member(const struct config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->ncheckers; i++)
		if (strcasecmp(c->checkers[i], name) == 0)
			return c->checkers[i];
	return NULL;
}

/*
 * `checkers`: names separated by commas (ddup.ini(5), SEVERAL
 * CHECKERS), blanks around each
 * allowed, each once.  A blank inside a name is refused rather than
 * read as a separator: "a b" may be a typo for one name as well as two.
 */
static void
check_checkers(struct ctx *x, const struct rkey *k)
{
	struct config *c = x->c;
	char *copy, *rest, *w, *end;
	int nerr = x->nerr;

	copy = rest = xstrdup(k->value);
	c->checkers = xcalloc(strlen(copy) / 2 + 1, sizeof(*c->checkers));
	while ((w = strsep(&rest, ",")) != NULL) {
		w += strspn(w, " \t");
		for (end = w + strlen(w); end > w && (end[-1] == ' ' ||
		    end[-1] == '\t'); end--)
			;
		*end = '\0';
		if (*w == '\0')
			continue;
		if (strpbrk(w, " \t") != NULL)
			cfg_problem(x, k->line, 0, "'checkers': bad checker "
			    "name '%s' (the names are separated by commas, "
			    "not blanks)", w);
		else if (!checker_name_ok(w))
			cfg_problem(x, k->line, 0, "'checkers': bad checker "
			    "name '%s' (letters, digits, '-', '_' and '.', at "
			    "most %d)", w, CHECKER_MAX);
		else if (fleet_member(c, w) != NULL)
			cfg_problem(x, k->line, 0, "'checkers': '%s' listed "
			    "twice", w);
		else
			c->checkers[c->ncheckers++] = xstrdup(w);
	}
	if (x->nerr == nerr && c->ncheckers == 0)
		cfg_problem(x, k->line, 0, "'checkers' names no checker");
	free(copy);
}

/*
 * `checker`, this host's name (the host name by default), as the fleet
 * spells it; line: that of `checkers`.
 */
static void
check_checker(struct ctx *x, const struct rsec *s, int line)
{
	struct config *c = x->c;
	const struct rkey *k;
	const char *name;
	char host[CHECKER_MAX + 2], *m;

	if ((k = cfg_get(x, s, "checker")) != NULL) {
		if (!checker_name_ok(k->value)) {
			cfg_problem(x, k->line, 0, "'checker': bad checker "
			    "name '%s' (letters, digits, '-', '_' and '.', at "
			    "most %d)", k->value, CHECKER_MAX);
			return;
		}
		name = k->value;
	} else if (cfg_has_key(s, "checker") || c->ncheckers == 0)
		return;
	else {
		if (gethostname(host, sizeof(host)) == -1)
			host[0] = '\0';
		host[sizeof(host) - 1] = '\0';
		if (!checker_name_ok(host)) {
			cfg_problem(x, line, 0, "this host's name '%s' cannot "
			    "be the default of 'checker' (letters, digits, "
			    "'-', '_' and '.'): set 'checker'", host);
			return;
		}
		name = host;
	}
	if (c->ncheckers == 0) {
		c->checker = xstrdup(name);
		return;
	}
	if ((m = fleet_member(c, name)) != NULL)
		c->checker = xstrdup(m);
	else if (k != NULL)
		cfg_problem(x, k->line, 0, "'checker': '%s' is not one of "
		    "'checkers' (line %d)", name, line);
	else
		cfg_problem(x, line, 0, "this host's name '%s' (the default "
		    "of 'checker') is not one of 'checkers': add it, or set "
		    "'checker'", name);
}

/*
 * The fleet (ddup.ini(5), SEVERAL CHECKERS): checkers, checker and
 * quorum.  Required with a PostgreSQL state; with a SQLite one validated all the same (a file
 * ready to move to PostgreSQL), and not used.
 */
static void
check_fleet(struct ctx *x, const struct rsec *s)
{
	struct config *c = x->c;
	const struct rkey *k;
	long q, max;
	size_t n;
	int line = 0;

	if ((k = cfg_get(x, s, "checkers")) != NULL) {
		line = k->line;
		check_checkers(x, k);
	} else if (!cfg_has_key(s, "checkers") && c->state_pg)
		cfg_problem(x, (k = cfg_get(x, s, "state")) != NULL ? k->line :
		    0, 0, "a PostgreSQL state needs 'checkers': the names of "
		    "every checker of this configuration, comma-separated");
	check_checker(x, s, line);
	n = c->ncheckers;
	c->quorum = (long)(n / 2 + 1);
	if ((k = cfg_get(x, s, "quorum")) == NULL ||
	    strcasecmp(k->value, "majority") == 0)
		return;
	max = n > 0 ? (long)n : 2147483647L;
	if (parse_long(k->value, 1, max, &q) == -1) {
		if (n > 0)
			cfg_problem(x, k->line, 0, "'quorum': expected majority "
			    "or a number from 1 to %zu (the number of "
			    "checkers), not '%s'", n, k->value);
		else
			cfg_problem(x, k->line, 0, "'quorum': expected majority "
			    "or a number from 1, not '%s'", k->value);
		return;
	}
	c->quorum = q;
	if (n > 0 && (size_t)q <= n / 2)
		cfg_problem(x, k->line, 1, "'quorum' %ld of %zu checkers is not "
		    "a majority: checkers that cannot reach the servers can "
		    "fail endpoints that the others see pass (failures win)",
		    q, n);
}

void
cfg_build_state(struct ctx *x, const struct rsec *s)
{
	check_state(x, s);
	check_fleet(x, s);
}
