#ifndef DDUP_UTIL_H
#define DDUP_UTIL_H

/*
 * Small parsers and value types shared by every module: durations,
 * integers, HTTP status expectations, IP addresses and sorted address
 * sets, and time stamps.  All of it is pure (no I/O) so the unit tests
 * can drive it with tables.
 */

#include <stddef.h>
#include <sys/types.h>

#define ADDR_STRLEN	46		/* INET6_ADDRSTRLEN */
#define EXPECT_MAX	16		/* status ranges in one expectStatus */

/* One IP address, kept both as bytes (for ordering) and as canonical text. */
struct addr {
	/* A byte, not an int: 63 bytes an address, not 68 (a run holds
	   every domain's address sets four times over). */
	unsigned char	 family;	/* 4 or 6 */
	unsigned char	 b[16];		/* network order; 4 bytes used for IPv4 */
	char		 s[ADDR_STRLEN];/* canonical text (inet_ntop) */
};

/*
 * A set of addresses, sorted IPv4 before IPv6, each numerically, without
 * duplicates.  Zero-initialise it; free with addrset_free().
 */
struct addrset {
	struct addr	*v;
	size_t		 n;
	size_t		 cap;
};

/* expectStatus: a list of inclusive ranges ("204" is 204-204, "2xx" 200-299). */
struct expect {
	int		 n;
	struct {
		int	 lo;
		int	 hi;
	}		 r[EXPECT_MAX];
};

/* Each parser returns 0 on success and -1 when the text is not valid. */

/* "250ms", "3s", "5m", "1h", "7d", "30" (seconds). Result in milliseconds. */
int	 parse_duration(const char *s, long long *ms);
/*
 * The longest duration taken from a person (configuration, --for): ten
 * years, so that a time plus or minus a few of them cannot overflow.
 */
#define DURATION_MAX_MS	(3650LL * 86400 * 1000)
/* A duration as the configuration writes it: "2s", "1500ms". */
void	 format_duration(long long ms, char *buf, size_t len);
/* Decimal integer in [min, max], surrounding white space not allowed. */
int	 parse_long(const char *s, long min, long max, long *out);
/* "true", "yes", "on", "1" or their opposites, any case. */
int	 parse_bool(const char *s, int *out);
/* "200", "2xx", "200, 204, 3xx". */
int	 parse_expect(const char *s, struct expect *e);
int	 expect_match(const struct expect *e, long code);
/* Writes "2xx" or "200, 204, 3xx" back (for status output). */
void	 expect_format(const struct expect *e, char *buf, size_t len);

/* Parses an IPv4 or IPv6 literal (no brackets, no zone id). */
int	 addr_parse(const char *s, struct addr *out);
/*
 * Whether s is an http:// or https:// URL of a plain form that libcurl
 * 7.88's URL parser always accepts (with flags 0, and with a host): a
 * host of letters, digits, '.', '-' and '_' only (no user, no brackets,
 * no '%'), an optional port of at most five digits up to 65535, then
 * nothing, or '/', '?' or '#' and no control byte or space after.  Other
 * URLs may be valid too: only libcurl can tell (config_build.c asks it).
 */
int	 url_plain(const char *s);
/* <0, 0, >0 in publication order: IPv4 before IPv6, numeric inside. */
int	 addr_cmp(const struct addr *a, const struct addr *b);

/* Adds text address s; returns -1 if s is not an address (set unchanged). */
int	 addrset_add(struct addrset *set, const char *s);
int	 addrset_add_addr(struct addrset *set, const struct addr *a);
/* Makes room for n addresses in all, so that adding them grows nothing. */
void	 addrset_reserve(struct addrset *set, size_t n);
int	 addrset_contains(const struct addrset *set, const char *s);
int	 addrset_equal(const struct addrset *a, const struct addrset *b);
/* Copies into dst (freed first). */
void	 addrset_copy(struct addrset *dst, const struct addrset *src);
/* The value of hex digit c (either case), or -1. */
int	 hex_digit(int c);
/*
 * The next word of *p, words split on spaces and tabs, no quoting: its
 * start, its length in *len and *p just past it; NULL when none is left.
 */
const char *word_next(const char **p, size_t *len);
/* Parses a space-separated list as written by addrset_join; -1 on junk. */
int	 addrset_parse(struct addrset *set, const char *list);
/* "192.0.2.1 192.0.2.2" (empty string for an empty set); malloc'd. */
char	*addrset_join(const struct addrset *set);
void	 addrset_free(struct addrset *set);

/* Wall-clock milliseconds since the epoch; monotonic milliseconds. */
long long now_ms(void);
long long mono_ms(void);
/* t + d, held at LLONG_MIN or LLONG_MAX instead of overflowing. */
long long ms_add(long long t, long long d);
/* "2026-11-30T10:25:56Z" (UTC, whole seconds); buf at least 32 bytes. */
void	 iso_time(long long ms, char *buf, size_t len);
/*
 * Inverse of iso_time (also accepts a fraction, and a year of five or
 * six digits); -1 on junk.
 */
int	 parse_iso_time(const char *s, long long *ms);

/*
 * Makes text from outside (a server, libcurl, a provider, the
 * configuration, the state file) safe for every output: each byte of a
 * control character (C0, DEL, C1), of a Unicode line or paragraph
 * separator or bidirectional override, or of anything that is not valid
 * UTF-8 (overlong, surrogate, cut short) becomes '?', in place.  What
 * remains is valid UTF-8 that cannot break or forge a log line, a table
 * row or a JSON string.  The one rule for all output.
 */
void	 text_printable(char *s);
/* Whether text_printable() would leave s as it is (without a copy). */
int	 text_is_printable(const char *s);
/*
 * The columns a terminal gives s (UTF-8): 2 for an East Asian wide
 * character or an emoji, 0 for a combining mark, as wcwidth() would in
 * a UTF-8 locale (a table of our own); 1 for each byte that is not
 * UTF-8.  For padding text tables.
 */
size_t	 text_width(const char *s);
/* Copies src into dst (of len > 0 bytes, cut if needed), made printable. */
const char *text_printable_copy(char *dst, size_t len, const char *src);
/*
 * Bounds a text already made printable to max bytes (max > 32): a longer
 * one is cut at a character's start and ends in "... (N bytes)", N being
 * total when an earlier cut (vsnprintf's) knew the full length, else its
 * own length.  In place: the result is never longer than the text.
 */
void	 text_cap(char *s, size_t max, size_t total);

/*
 * Creates the folders above path that are missing, every level from the
 * top down, each with exactly mode (whatever the umask), and syncs the
 * folder each is made in so that a power loss does not take it away.
 * Returns 0 (also when something exists where the folder goes: the
 * caller's open says what is wrong with it), or -1 with err "PATH:
 * cannot create folder DIR: strerror".
 */
int	 make_parent_dirs(const char *path, mode_t mode, char *err,
	    size_t errlen);

/*
 * Replaces the file at path with len bytes of data, all or nothing: a
 * reader (node_exporter, a web server) sees either the old file or the
 * new one, never half of it, even if the run is killed or the machine
 * loses power.  The bytes go to a new temporary file in the same folder
 * (O_EXCL and O_NOFOLLOW, so nothing planted there is followed or
 * reused), which gets exactly mode (not narrowed by the umask: a
 * dashboard may be meant for a web server's user), is synced, renamed
 * over path, and the folder is synced so the rename survives a crash.
 * Something at path that is neither a regular file nor a symlink (a
 * device node, a FIFO, a folder) is refused and left as it is.
 * Returns 0, or -1 with err naming the path, the step and strerror; on
 * a failure before the rename the temporary file is removed and the
 * old file is left untouched.
 */
int	 write_file_atomic(const char *path, const void *data, size_t len,
	    mode_t mode, char *err, size_t errlen);

/*
 * malloc/strdup that end the program on failure (a one-shot tool), as
 * out_of_memory() does: "out of memory" on stderr, exit RUN_NOMEM.
 */
void	 out_of_memory(void) __attribute__((noreturn));
void	*xmalloc(size_t n);
void	*xcalloc(size_t n, size_t size);
void	*xrealloc(void *p, size_t n);
char	*xstrdup(const char *s);
/* a b c d e, one after the other, in a new string ("" for a part unused). */
char	*xconcat(const char *a, const char *b, const char *c, const char *d,
	    const char *e);
/* Appends text to the string in buf (of size buflen), cut to fit. */
void	 str_append(char *buf, size_t buflen, const char *text);
/* Zeroes a string that held a secret, then frees it; NULL is fine. */
void	 free_secret(char *s);

#endif
