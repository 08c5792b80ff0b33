/*
 * Typed values and validators for the builder: a known key's value in
 * a section, integers and durations (ddup.ini(5), DESCRIPTION), names
 * that must print as written, location and DNS names, urls, secrets
 * written as !env NAME or !file PATH, and the folder of the file.  A
 * value that is wrong is reported with cfg_problem() at its line.
 * Above config_problem.c only (config_int.h).
 */

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "check.h"
#include "config_int.h"
#include "util.h"

#define SECRET_MAX	65536		/* bytes read from a !file secret */

/* A known key's value, or NULL; an empty value is reported here. */
const struct rkey *
cfg_get(struct ctx *x, const struct rsec *s, const char *canon)
{
	size_t i;

	for (i = 0; i < s->nkeys; i++) {
		if (s->keys[i].canon != NULL &&
		    strcmp(s->keys[i].canon, canon) == 0) {
			if (s->keys[i].value[0] == '\0') {
				cfg_problem(x, s->keys[i].line, 0, "'%s' has "
				    "no value", canon);
				return NULL;
			}
			return &s->keys[i];
		}
	}
	return NULL;
}

int
cfg_has_key(const struct rsec *s, const char *canon)
{
	size_t i;

	for (i = 0; i < s->nkeys; i++)
		if (s->keys[i].canon != NULL &&
		    strcmp(s->keys[i].canon, canon) == 0)
			return 1;
	return 0;
}

void
cfg_get_long(struct ctx *x, const struct rkey *k, long min, long max, long *out)
{
	if (parse_long(k->value, min, max, out) == -1)
		cfg_problem(x, k->line, 0, "'%s': expected an integer from "
		    "%ld to %ld, not '%s'", k->canon, min, max, k->value);
}

int
cfg_get_duration(struct ctx *x, const struct rkey *k, long long *out)
{
	long long ms;

	if (parse_duration(k->value, &ms) == -1 || ms <= 0) {
		cfg_problem(x, k->line, 0, "'%s': expected a duration above "
		    "zero (such as 500ms, 30s, 5m, 1h or 7d), not '%s'",
		    k->canon, k->value);
		return -1;
	}
	/*
	 * Bounded so that arithmetic on durations (3 x interval in
	 * --status, now - history) cannot overflow.
	 */
	if (ms > DURATION_MAX_MS) {
		cfg_problem(x, k->line, 0, "'%s': at most %lldd, not '%s'",
		    k->canon, DURATION_MAX_MS / 86400000, k->value);
		return -1;
	}
	*out = ms;
	return 0;
}

/*
 * Names and urls are shown in every output (logs, status, JSON): they
 * must print as they are written, so that the operator's name is the
 * one shown and JSON output is valid.
 */
int
cfg_text_ok(const char *s)
{
	return text_is_printable(s);
}

/* Letters, digits, '-', '_' and '.' (ddup.ini(5), POLICIES). */
int
cfg_location_ok(const char *s)
{
	size_t len = strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.");

	return len > 0 && s[len] == '\0';
}

/* Lower-cases s in place and drops one trailing dot; 0 if not a DNS name. */
int
cfg_dns_name(char *s, int trailing_dot)
{
	size_t len = strlen(s), label = 0;
	char *p;

	if (trailing_dot && len > 1 && s[len - 1] == '.')
		s[--len] = '\0';
	if (len == 0 || len > 253)
		return 0;
	for (p = s;; p++) {
		if (*p == '.' || *p == '\0') {
			if (label == 0 || label > 63)
				return 0;
			if (*p == '\0')
				return 1;
			label = 0;
			continue;
		}
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= '0' && *p <= '9') &&
		    *p != '-' && *p != '_')
			return 0;
		label++;
	}
}

/*
 * `host` is sent as Host header and TLS server name while libcurl
 * connects to the address of the url: a port, scheme or brackets here
 * would end up in the wrong place.
 */
int
cfg_bare_host(const char *s)
{
	size_t len = strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._");

	return len > 0 && len <= 253 && s[len] == '\0';
}

/*
 * Whether url (http:// or https://) has a user name or password before
 * its host.  Read from the text, not from libcurl, so that a url that is
 * bad in other ways is caught too: the problem line quotes a bad url.
 */
int
cfg_url_has_userinfo(const char *v)
{
	const char *auth = strstr(v, "://");
	size_t n;

	if (auth == NULL)
		return 0;
	auth += 3;
	n = strcspn(auth, "/?#");
	return memchr(auth, '@', n) != NULL;
}

/* The http type's own test (check/http.c), after the scheme's. */
int
cfg_url_ok(const char *v, char *err, size_t len)
{
	if (strncasecmp(v, "http://", 7) != 0 &&
	    strncasecmp(v, "https://", 8) != 0) {
		snprintf(err, len, "must start with http:// or https://");
		return 0;
	}
	return check_url_ok(v, err, len) == 0;
}

/* Reads the file of a !file secret; NULL after reporting a problem. */
static char *
read_secret_file(struct ctx *x, const struct rkey *k, const char *canon,
    const char *file)
{
	char *path = NULL, *buf = NULL, *ret = NULL;
	const char *slash;
	size_t n = 0;
	FILE *fp = NULL;
	struct stat st;
	int len, fd;

	/* Relative to the configuration, not to wherever cron runs us. */
	slash = strrchr(x->path, '/');
	if (*file != '/' && slash != NULL) {
		len = (int)(slash - x->path);
		path = xmalloc((size_t)len + strlen(file) + 2);
		sprintf(path, "%.*s/%s", len, x->path, file);
	} else
		path = xstrdup(file);
	/* As for caFile: nothing but a regular file is opened. */
	if (stat(path, &st) == -1) {
		cfg_problem(x, k->line, 0, "'%s': !file %s: cannot read: %s",
		    canon, path, strerror(errno));
		goto out;
	}
	if (S_ISREG(st.st_mode)) {
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd != -1)
			fp = fdopen(fd, "r");
		if (fp == NULL) {
			cfg_problem(x, k->line, 0, "'%s': !file %s: cannot "
			    "read: %s", canon, path, strerror(errno));
			if (fd != -1)
				close(fd);
			goto out;
		}
	}
	/* fstat as well: it may have been replaced in between. */
	if (fp == NULL || fstat(fileno(fp), &st) == -1 ||
	    !S_ISREG(st.st_mode)) {
		cfg_problem(x, k->line, 0, "'%s': !file %s: not a regular "
		    "file", canon, path);
		goto out;
	}
	buf = xmalloc(SECRET_MAX + 1);
	n = fread(buf, 1, SECRET_MAX + 1, fp);
	if (ferror(fp)) {
		cfg_problem(x, k->line, 0, "'%s': !file %s: cannot read: %s",
		    canon, path, strerror(errno));
		goto out;
	}
	if (n > SECRET_MAX) {
		cfg_problem(x, k->line, 0, "'%s': !file %s: larger than %d "
		    "bytes", canon, path, SECRET_MAX);
		goto out;
	}
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	buf[n] = '\0';
	if (memchr(buf, '\0', n) != NULL)
		cfg_problem(x, k->line, 0, "'%s': !file %s: holds a NUL byte",
		    canon, path);
	else if (n == 0)
		cfg_problem(x, k->line, 0, "'%s': !file %s: is empty", canon,
		    path);
	else {
		ret = buf;
		buf = NULL;
	}
out:
	if (fp != NULL)
		fclose(fp);
	if (buf != NULL)
		explicit_bzero(buf, SECRET_MAX + 1);
	free(buf);
	free(path);
	return ret;
}

/* "!env NAME" / "!file PATH" prefix: the argument, else NULL. */
static const char *
directive(const char *v, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(v, word, n) != 0 ||
	    (v[n] != '\0' && !isspace((unsigned char)v[n])))
		return NULL;
	for (v += n; isspace((unsigned char)*v); v++)
		;
	return v;
}

int
cfg_secret_ref(const char *v)
{
	return directive(v, "!env") != NULL || directive(v, "!file") != NULL;
}

/*
 * The value of key k, canonically canon, with !env and !file resolved
 * (secret 0: refused); *literal tells a value written in the file.
 * NULL after a problem.
 */
char *
cfg_secret(struct ctx *x, const struct rkey *k, const char *canon,
    int secret, int *literal)
{
	const char *env, *file, *v;

	*literal = 0;
	env = directive(k->value, "!env");
	file = directive(k->value, "!file");
	if ((env != NULL || file != NULL) && !secret) {
		cfg_problem(x, k->line, 0, "'%s' is not a secret: !env and "
		    "!file work only for secrets", canon);
		return NULL;
	}
	if (env != NULL) {
		if (*env == '\0') {
			cfg_problem(x, k->line, 0, "'%s': !env needs a "
			    "variable name", canon);
			return NULL;
		}
		if ((v = getenv(env)) == NULL || *v == '\0') {
			cfg_problem(x, k->line, 0, "'%s': environment "
			    "variable %s is %s", canon, env,
			    v == NULL ? "not set" : "empty");
			return NULL;
		}
		return xstrdup(v);
	}
	if (file != NULL) {
		if (*file == '\0') {
			cfg_problem(x, k->line, 0, "'%s': !file needs a path",
			    canon);
			return NULL;
		}
		return read_secret_file(x, k, canon, file);
	}
	if (*k->value == '\0') {
		cfg_problem(x, k->line, 0, "'%s' has no value", canon);
		return NULL;
	}
	*literal = 1;
	return xstrdup(k->value);
}

/*
 * The value of key k (canon), secrets resolved; NULL after a problem.
 * owner names the section in the warning about a literal secret, as
 * "provider 'x'"; warn 0 earns no such warning.
 */
char *
cfg_value(struct ctx *x, const char *owner, const struct rkey *k,
    const char *canon, int secret, int warn)
{
	char *v;
	int literal;

	if ((v = cfg_secret(x, k, canon, secret, &literal)) == NULL)
		return NULL;
	if (secret && warn && literal && x->group_readable)
		cfg_problem(x, k->line, 1, "%s: secret '%s' is written in a "
		    "file that group or others can read; use !env or !file, "
		    "or make the file private", owner, canon);
	return v;
}

char *
cfg_dir(const struct ctx *x)
{
	const char *slash;
	char *dir;

	if ((slash = strrchr(x->path, '/')) == NULL)
		return xstrdup(".");
	if (slash == x->path)
		return xstrdup("/");
	dir = xmalloc((size_t)(slash - x->path) + 1);
	memcpy(dir, x->path, (size_t)(slash - x->path));
	dir[slash - x->path] = '\0';
	return dir;
}
