#ifndef DDUP_REDACT_H
#define DDUP_REDACT_H

/*
 * Secrets out of outside text.  A server may echo what it was sent (an
 * API key in a 400's body, a header in an error page), and that text
 * goes to the log, --status, the state, the dashboard, the metrics and
 * the notifications.  The configuration knows every secret value
 * (config_redactor()); once it is read, one redactor holding them all is
 * installed for the process, and outside_text() is applied where such
 * text enters a run's outcome: a provider's, a check's and a
 * notification's error.  log.c applies redact() to every line as a last
 * line of defence.
 *
 * What is hidden, as REDACTED: each secret wherever it occurs (inside a
 * longer word too), its percent-encoded, JSON-escaped and base64 forms,
 * for a URL its password, its "user:password" in base64 (Basic auth)
 * and its path, for a header value each word after the scheme; and a
 * part of any of these of at least REDACT_PREFIX bytes that starts the
 * secret and reaches the end of a cut text (the end of the text, or a
 * "..." that marks a cut), so that a secret cut short does not show
 * even in part.  Occurrences that overlap are hidden as one.  A secret
 * shorter than REDACT_MIN bytes is not looked for: it would hide
 * ordinary words, and is no secret anyway.
 */

#include <stddef.h>

#define REDACTED	"<secret>"
#define REDACT_MIN	4
#define REDACT_PREFIX	8
/*
 * The longest outside text a log line, a state row or a notification
 * keeps, in bytes: a provider's message quotes its URL (an Azure
 * resource path is some 200 bytes) and at most 160 bytes of the API's
 * own text; a longer one is cut and ends in "... (N bytes)".
 */
#define OUTSIDE_MAX	400

struct redactor;

struct redactor	*redactor_create(void);
/* A secret value and its encodings (above). */
void		 redactor_add(struct redactor *r, const char *secret);
/* A URL that is a secret: itself, its password, user:password, its path. */
void		 redactor_add_url(struct redactor *r, const char *url);
/* A header value ("Bearer TOKEN", "Basic B64"): itself and its words. */
void		 redactor_add_header(struct redactor *r, const char *value);
/*
 * Replaces every secret in the text in buf (of size bytes) with
 * REDACTED, in place, cut to fit.  Whatever the bytes; the result is
 * not yet made printable (a cut may split a character).
 */
void		 redactor_apply(const struct redactor *r, char *buf,
		    size_t size);
/* Zeroes the secrets it holds, then frees it. */
void		 redactor_free(struct redactor *r);

/* The process's redactor (taken; the one before is freed); NULL: none. */
void		 redact_install(struct redactor *r);
/* redactor_apply() with the process's redactor; nothing without one. */
void		 redact(char *buf, size_t size);
/*
 * Outside text as it may enter a run's outcome, in place: secrets
 * hidden, made printable (util.h), at most OUTSIDE_MAX bytes.
 */
void		 outside_text(char *buf, size_t size);

#endif
