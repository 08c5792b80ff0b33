/*
 * Small parsers and value types shared by every module (see util.h).
 * Nothing here does I/O except the allocation wrappers, which end the
 * program when memory runs out, and write_file_atomic().
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int
parse_duration(const char *s, long long *ms)
{
	long long v = 0, mult;
	const char *p = s;
	int d;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		d = *p - '0';
		if (v > (LLONG_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (*p == '\0' || strcmp(p, "s") == 0)
		mult = 1000;
	else if (strcmp(p, "ms") == 0)
		mult = 1;
	else if (strcmp(p, "m") == 0)
		mult = 60 * 1000LL;
	else if (strcmp(p, "h") == 0)
		mult = 3600 * 1000LL;
	else if (strcmp(p, "d") == 0)
		mult = 86400 * 1000LL;
	else
		return -1;
	if (v > LLONG_MAX / mult)
		return -1;
	*ms = v * mult;
	return 0;
}

int
parse_long(const char *s, long min, long max, long *out)
{
	const char *p = s;
	char *end;
	long v;

	/* strtol would skip white space and take a '+'; a config value must not. */
	if (*p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int
parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}

/* One item of an expectStatus list: "204" or "2xx". */
static int
parse_expect_item(const char *s, size_t len, int *lo, int *hi)
{
	int v;

	if (len != 3 || *s < '1' || *s > '5')
		return -1;
	if ((s[1] == 'x' || s[1] == 'X') && (s[2] == 'x' || s[2] == 'X')) {
		*lo = (*s - '0') * 100;
		*hi = *lo + 99;
		return 0;
	}
	if (!isdigit((unsigned char)s[1]) || !isdigit((unsigned char)s[2]))
		return -1;
	v = (s[0] - '0') * 100 + (s[1] - '0') * 10 + (s[2] - '0');
	*lo = *hi = v;
	return 0;
}

int
parse_expect(const char *s, struct expect *e)
{
	struct expect tmp;
	const char *p = s, *item, *end;
	size_t len;

	memset(&tmp, 0, sizeof(tmp));
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		item = p;
		while (*p != '\0' && *p != ',')
			p++;
		end = p;
		while (end > item && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		len = (size_t)(end - item);
		if (tmp.n == EXPECT_MAX)
			return -1;
		if (parse_expect_item(item, len, &tmp.r[tmp.n].lo,
		    &tmp.r[tmp.n].hi) == -1)
			return -1;
		tmp.n++;
		if (*p == '\0')
			break;
		p++;		/* the comma */
	}
	*e = tmp;
	return 0;
}

int
expect_match(const struct expect *e, long code)
{
	int i;

	for (i = 0; i < e->n; i++)
		if (code >= e->r[i].lo && code <= e->r[i].hi)
			return 1;
	return 0;
}

void
expect_format(const struct expect *e, char *buf, size_t len)
{
	size_t off = 0;
	int i, n;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < e->n && off < len; i++) {
		if (e->r[i].lo == e->r[i].hi)
			n = snprintf(buf + off, len - off, "%s%d",
			    i > 0 ? ", " : "", e->r[i].lo);
		else
			n = snprintf(buf + off, len - off, "%s%dxx",
			    i > 0 ? ", " : "", e->r[i].lo / 100);
		if (n < 0)
			break;
		off += (size_t)n;
	}
}

/*
 * inet_ntop()'s text of an IPv4 address, "%u.%u.%u.%u", without going
 * through printf: glibc's costs ten times as much, and every endpoint's
 * address is parsed once per run.
 */
static void
ip4_text(const unsigned char *b, char *s)
{
	int	 i;

	for (i = 0; i < 4; i++) {
		if (b[i] >= 100)
			*s++ = (char)('0' + b[i] / 100);
		if (b[i] >= 10)
			*s++ = (char)('0' + b[i] / 10 % 10);
		*s++ = (char)('0' + b[i] % 10);
		*s++ = i < 3 ? '.' : '\0';
	}
}

int
addr_parse(const char *s, struct addr *out)
{
	struct addr a;

	memset(&a, 0, sizeof(a));
	if (inet_pton(AF_INET, s, a.b) == 1) {
		a.family = 4;
		ip4_text(a.b, a.s);
	} else if (inet_pton(AF_INET6, s, a.b) == 1) {
		a.family = 6;
		if (inet_ntop(AF_INET6, a.b, a.s, sizeof(a.s)) == NULL)
			return -1;
	} else
		return -1;
	*out = a;
	return 0;
}

/*
 * The bytes libcurl's URL parser takes for a host name whatever they
 * spell (a name, or an IPv4 number it normalises): none of them is one
 * it refuses in a name, a user, a port or an IPv6 address.
 */
static int
url_plain_host(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
}

#define URL_MAX_INPUT	8000000		/* CURL_MAX_INPUT_LENGTH */

int
url_plain(const char *s)
{
	const char	*p;
	long		 port;
	size_t		 n;

	if (strncasecmp(s, "http://", 7) == 0)
		p = s + 7;
	else if (strncasecmp(s, "https://", 8) == 0)
		p = s + 8;
	else
		return 0;
	for (n = 0; url_plain_host((unsigned char)*p); n++)
		p++;
	if (n == 0)
		return 0;
	/* libcurl takes "host:" as the default port. */
	if (*p == ':') {
		p++;
		for (n = 0, port = 0; n < 6 && *p >= '0' && *p <= '9'; n++)
			port = port * 10 + (*p++ - '0');
		if (n > 5 || port > 65535)
			return 0;
	}
	if (*p != '\0' && *p != '/' && *p != '?' && *p != '#')
		return 0;
	/* Path, query and fragment: no control byte, no space. */
	for (; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f)
			return 0;
	return (size_t)(p - s) <= URL_MAX_INPUT;
}

int
addr_cmp(const struct addr *a, const struct addr *b)
{
	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	return memcmp(a->b, b->b, a->family == 4 ? 4 : 16);
}

/* Index of a in set, or of where it would go (*found tells which). */
static size_t
addrset_find(const struct addrset *set, const struct addr *a, int *found)
{
	size_t lo = 0, hi = set->n, mid;
	int c;

	*found = 0;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = addr_cmp(&set->v[mid], a);
		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
addrset_add_addr(struct addrset *set, const struct addr *a)
{
	size_t i;
	int found;

	i = addrset_find(set, a, &found);
	if (found)
		return 0;
	/*
	 * By half again, not double: a run holds four sets of each domain
	 * to its end, 68 bytes an address, and doubling left up to half
	 * of each unused (16 slots for 10 addresses).
	 */
	if (set->n == set->cap) {
		set->cap = set->cap == 0 ? 4 : set->cap + set->cap / 2;
		set->v = xrealloc(set->v, set->cap * sizeof(*set->v));
	}
	memmove(&set->v[i + 1], &set->v[i], (set->n - i) * sizeof(*set->v));
	set->v[i] = *a;
	set->n++;
	return 0;
}

int
addrset_add(struct addrset *set, const char *s)
{
	struct addr a;

	if (addr_parse(s, &a) == -1)
		return -1;
	return addrset_add_addr(set, &a);
}

int
addrset_contains(const struct addrset *set, const char *s)
{
	struct addr a;
	int found;

	if (addr_parse(s, &a) == -1)
		return 0;
	(void)addrset_find(set, &a, &found);
	return found;
}

int
addrset_equal(const struct addrset *a, const struct addrset *b)
{
	size_t i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (addr_cmp(&a->v[i], &b->v[i]) != 0)
			return 0;
	return 1;
}

void
addrset_copy(struct addrset *dst, const struct addrset *src)
{
	if (dst == src)
		return;
	addrset_free(dst);
	if (src->n == 0)
		return;
	dst->v = xcalloc(src->n, sizeof(*dst->v));
	memcpy(dst->v, src->v, src->n * sizeof(*dst->v));
	dst->n = dst->cap = src->n;
}

int
addrset_parse(struct addrset *set, const char *list)
{
	struct addrset tmp = { NULL, 0, 0 };
	char word[ADDR_STRLEN];
	const char *p = list, *start;
	size_t len;
	int rc = -1;

	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		start = p;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
		len = (size_t)(p - start);
		if (len >= sizeof(word))
			goto out;
		memcpy(word, start, len);
		word[len] = '\0';
		if (addrset_add(&tmp, word) == -1)
			goto out;
	}
	addrset_free(set);
	*set = tmp;
	tmp.v = NULL;
	rc = 0;
out:
	addrset_free(&tmp);
	return rc;
}

char *
addrset_join(const struct addrset *set)
{
	char *s;
	size_t i, off = 0, len;

	s = xmalloc(set->n * ADDR_STRLEN + 1);
	s[0] = '\0';
	for (i = 0; i < set->n; i++) {
		if (i > 0)
			s[off++] = ' ';
		len = strlen(set->v[i].s);
		memcpy(s + off, set->v[i].s, len + 1);
		off += len;
	}
	return s;
}

void
addrset_free(struct addrset *set)
{
	free(set->v);
	set->v = NULL;
	set->n = set->cap = 0;
}

static long long
clock_ms(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) == -1)
		return 0;
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long
now_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}

long long
mono_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

void
iso_time(long long ms, char *buf, size_t len)
{
	struct tm tm;
	time_t t;
	long long sec;

	if (len == 0)
		return;
	/* Round towards minus infinity so times before 1970 stay whole seconds. */
	sec = ms / 1000;
	if (ms % 1000 < 0)
		sec--;
	t = (time_t)sec;
	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "%s", "1970-01-01T00:00:00Z");
}

/* n decimal digits at s, into *v. */
static int
digits(const char *s, int n, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

int
parse_iso_time(const char *s, long long *ms)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31,
	    30, 31 };
	struct tm tm;
	int year, mon, day, hour, min, sec, frac = 0, scale = 100, leap;
	const char *p;
	time_t t;

	if (strlen(s) < 20 || digits(s, 4, &year) == -1 || s[4] != '-' ||
	    digits(s + 5, 2, &mon) == -1 || s[7] != '-' ||
	    digits(s + 8, 2, &day) == -1 ||
	    (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
	    digits(s + 11, 2, &hour) == -1 || s[13] != ':' ||
	    digits(s + 14, 2, &min) == -1 || s[16] != ':' ||
	    digits(s + 17, 2, &sec) == -1)
		return -1;
	p = s + 19;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		for (; isdigit((unsigned char)*p); p++) {
			frac += (*p - '0') * scale;
			scale /= 10;
		}
	}
	if ((*p != 'Z' && *p != 'z') || p[1] != '\0')
		return -1;
	leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
	if (mon < 1 || mon > 12 || day < 1 || day > mdays[mon - 1] ||
	    (mon == 2 && day == 29 && !leap) || hour > 23 || min > 59 ||
	    sec > 59)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = year - 1900;
	tm.tm_mon = mon - 1;
	tm.tm_mday = day;
	tm.tm_hour = hour;
	tm.tm_min = min;
	tm.tm_sec = sec;
	t = timegm(&tm);
	*ms = (long long)t * 1000 + frac;
	return 0;
}

/* Length of the valid UTF-8 sequence at s (1-4), 0 if it is not one. */
static size_t
utf8_len(const unsigned char *s, unsigned long *cp)
{
	size_t n, i;
	unsigned long c, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		c = s[0] & 0x1f;
		min = 0x80;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		c = s[0] & 0x0f;
		min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		c = s[0] & 0x07;
		min = 0x10000;
	} else
		return 0;
	/* The NUL at the end is not a continuation byte: no overread. */
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

static int
cp_printable(unsigned long c)
{
	if (c < 0x20 || (c >= 0x7f && c <= 0x9f))
		return 0;		/* C0, DEL, C1 */
	if (c == 0x2028 || c == 0x2029)
		return 0;		/* line and paragraph separators */
	if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) ||
	    c == 0x200e || c == 0x200f || c == 0x061c)
		return 0;		/* bidirectional controls */
	return 1;
}

void
text_printable(char *s)
{
	unsigned char *p = (unsigned char *)s;
	unsigned long c;
	size_t n, i;

	while (*p != '\0') {
		n = utf8_len(p, &c);
		if (n == 0 || !cp_printable(c)) {
			if (n == 0)
				n = 1;
			for (i = 0; i < n; i++)
				p[i] = '?';
		}
		p += n;
	}
}

const char *
text_printable_copy(char *dst, size_t len, const char *src)
{
	if (len == 0)
		return dst;
	snprintf(dst, len, "%s", src != NULL ? src : "");
	text_printable(dst);	/* also a sequence cut by snprintf */
	return dst;
}

static void
oom(void)
{
	fprintf(stderr, "ddup-check: out of memory\n");
	exit(1);
}

void *
xmalloc(size_t n)
{
	void *p;

	if ((p = malloc(n == 0 ? 1 : n)) == NULL)
		oom();
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p;

	if (n == 0 || size == 0)
		n = size = 1;
	if ((p = calloc(n, size)) == NULL)
		oom();
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	void *q;

	if ((q = realloc(p, n == 0 ? 1 : n)) == NULL)
		oom();
	return q;
}

char *
xstrdup(const char *s)
{
	char *p;

	if ((p = strdup(s)) == NULL)
		oom();
	return p;
}

char *
xconcat(const char *a, const char *b, const char *c, const char *d,
    const char *e)
{
	size_t len = strlen(a) + strlen(b) + strlen(c) + strlen(d) +
	    strlen(e) + 1;
	char *s = xmalloc(len);

	snprintf(s, len, "%s%s%s%s%s", a, b, c, d, e);
	return s;
}

void
str_append(char *buf, size_t buflen, const char *text)
{
	size_t len = strlen(buf);

	if (len + 1 < buflen)
		snprintf(buf + len, buflen - len, "%s", text);
}

void
free_secret(char *s)
{
	if (s != NULL) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

/*
 * Opens a new file "DIR/.BASE.PID.N" beside path.  The name is not
 * secret: O_EXCL refuses one that exists (then the next N is tried) and
 * O_NOFOLLOW a symlink, so a name guessed by someone else costs a retry,
 * never a write elsewhere.
 */
static int
atomic_open_tmp(const char *path, mode_t mode, char *tmp, size_t tmplen)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash != NULL ? (int)(slash - path + 1) : 0;
	const char *base = slash != NULL ? slash + 1 : path;
	int fd = -1, n;

	for (n = 0; n < 100; n++) {
		if (snprintf(tmp, tmplen, "%.*s.%s.%ld.%d", dirlen, path,
		    base, (long)getpid(), n) >= (int)tmplen) {
			errno = ENAMETOOLONG;
			break;
		}
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, mode);
		if (fd != -1 || errno != EEXIST)
			break;
	}
	return fd;
}

/* Syncs the folder that holds path, so that a rename in it is durable. */
static int
fsync_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	int fd, rc;

	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if (snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path),
	    path) >= (int)sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int
write_file_atomic(const char *path, const void *data, size_t len,
    mode_t mode, char *err, size_t errlen)
{
	const char *p = data, *step = "create a temporary file";
	char tmp[4096];
	size_t off = 0;
	ssize_t w;
	int fd = -1, rc = -1, saved;

	tmp[0] = '\0';
	if ((fd = atomic_open_tmp(path, mode, tmp, sizeof(tmp))) == -1) {
		tmp[0] = '\0';	/* not ours: never remove it */
		goto fail;
	}
	step = "set the mode of a temporary file";
	/* The mode given, not the umask's: the reader may be another user. */
	if (fchmod(fd, mode) == -1)
		goto fail;
	step = "write";
	while (off < len) {
		if ((w = write(fd, p + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		off += (size_t)w;
	}
	step = "sync";
	if (fsync(fd) == -1)
		goto fail;
	step = "close";
	saved = close(fd);
	fd = -1;
	if (saved == -1)
		goto fail;
	step = "rename";
	if (rename(tmp, path) == -1)
		goto fail;
	tmp[0] = '\0';		/* path is the new file now: nothing to remove */
	step = "sync its folder";
	if (fsync_dir_of(path) == -1)
		goto fail;
	rc = 0;
	goto out;
fail:
	saved = errno;
	snprintf(err, errlen, "%s: cannot %s: %s", path, step,
	    strerror(saved));
	if (fd != -1)
		close(fd);
	if (tmp[0] != '\0')
		unlink(tmp);
out:
	return rc;
}
