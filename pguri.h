#ifndef DDUP_PGURI_H
#define DDUP_PGURI_H

/*
 * A PostgreSQL `state` (ddup.ini(5), SEVERAL CHECKERS): telling a URI
 * from a SQLite path, and the URI as it may be shown.  Pure text functions, no libpq, so that
 * every output (messages, status, logs) can use them and the tests can
 * drive them with tables.
 */

#include <stddef.h>

/* Whether s starts with postgresql:// or postgres:// (any case). */
int	 pguri_is(const char *s);

/*
 * uri with every password replaced by "***": the one of the user part
 * (user:PASSWORD@host) and the value of a password or sslpassword
 * query parameter (their names percent-decoded, as libpq reads them;
 * a parameter ends at '&', or at a '?' libpq would refuse).
 * A user part is taken to end at the last '@' before the query, so that
 * a password holding '@' or '/' is hidden whole however libpq would
 * split it; a '?' with an '@' after it before any '=' is taken for
 * part of a password, not for the query's start.  malloc'd.
 */
char	*pguri_redact(const char *uri);

/*
 * msg, a message of libpq about uri, with "***" for every text of it
 * that may be a password of uri (as pguri_redact() finds them): each
 * password whole, and each piece of it between '@', ':', '/', '?', '&',
 * '=' and ',', which libpq takes for a host, a port, a user, a database
 * or a parameter when the password was not percent-encoded (and may
 * then quote); each as written and percent-decoded.  malloc'd.
 */
char	*pguri_redact_msg(const char *uri, const char *msg);

/*
 * Calls fn with each password of uri (as pguri_redact() finds them), as
 * written and percent-decoded (when that differs), so that they can be
 * hidden wherever they show (redact.h).  Each is zeroed after the call.
 */
void	 pguri_passwords(const char *uri, void (*fn)(void *arg,
	    const char *pw), void *arg);

/*
 * msg, a message of libpq, as one line into line (len bytes, cut there):
 * its first line and, when the URI named several hosts, each further
 * host's "connection to server ... failed" line, after "; ", so that why
 * each host was passed over shows.  The lines between (libpq's hints)
 * are left out.
 */
void	 pguri_msg_line(const char *msg, char *line, size_t len);

/*
 * Whether s looks like a libpq keyword/value connection string
 * ("host=db password=x"): it has a word that libpq knows as a
 * connection keyword, followed by '=', at its start or after white
 * space.
 */
int	 pguri_is_conninfo(const char *s);

#endif
