/*
 * Small parsers and value types shared by every module (see util.h).
 * Nothing here does I/O except the allocation wrappers, which end the
 * program when memory runs out, make_parent_dirs() and
 * write_file_atomic().
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

#include "run.h"
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

void
format_duration(long long ms, char *buf, size_t len)
{
	if (ms % 1000 == 0)
		snprintf(buf, len, "%llds", ms / 1000);
	else
		snprintf(buf, len, "%lldms", ms);
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

void
addrset_reserve(struct addrset *set, size_t n)
{
	if (n <= set->cap)
		return;
	set->v = xrealloc(set->v, n * sizeof(*set->v));
	set->cap = n;
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
hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

const char *
word_next(const char **p, size_t *len)
{
	const char *s = *p, *start;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0') {
		*p = s;
		return NULL;
	}
	start = s;
	while (*s != '\0' && *s != ' ' && *s != '\t')
		s++;
	*len = (size_t)(s - start);
	*p = s;
	return start;
}

int
addrset_parse(struct addrset *set, const char *list)
{
	struct addrset tmp = { NULL, 0, 0 };
	char word[ADDR_STRLEN];
	const char *p = list, *start;
	size_t len, words = 0;
	int rc = -1;

	/* Sized once: the stored sets are kept to the end of a run. */
	while (word_next(&p, &len) != NULL)
		words++;
	addrset_reserve(&tmp, words);
	p = list;
	while ((start = word_next(&p, &len)) != NULL) {
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

long long
ms_add(long long t, long long d)
{
	if (d > 0 && t > LLONG_MAX - d)
		return LLONG_MAX;
	if (d < 0 && t < LLONG_MIN - d)
		return LLONG_MIN;
	return t + d;
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
	int year, mon, day, hour, min, sec, frac = 0, scale = 100, leap, y;
	const char *p;
	time_t t;

	/*
	 * After the year 9999 iso_time() and the state writes five digits
	 * (or six): read them back, or a clock that far on would turn every
	 * time into "never".  No leading zero past four digits.
	 */
	for (y = 0; y < 7 && isdigit((unsigned char)s[y]); y++)
		;
	if (y < 4 || y > 6 || (y > 4 && s[0] == '0'))
		return -1;
	if (digits(s, y, &year) == -1)
		return -1;
	s += y - 4;
	if (strlen(s) < 20 || s[4] != '-' ||
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

int
text_is_printable(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned long c;
	size_t n;

	while (*p != '\0') {
		/* Printable ASCII, as names and URLs mostly are. */
		if (*p >= 0x20 && *p < 0x7f) {
			p++;
			continue;
		}
		n = utf8_len(p, &c);
		if (n == 0 || !cp_printable(c))
			return 0;
		p += n;
	}
	return 1;
}

/* Inclusive ranges of code points, in order. */
struct cp_range {
	unsigned long	 lo, hi;
};

/*
 * Columns for text_width(), in the way of wcwidth(): combining marks,
 * zero-width characters, Hangul medial and final jamo, variation
 * selectors and tags take none; East Asian wide and full-width
 * characters and emoji take two (Unicode's EastAsianWidth W and F, in
 * broad blocks).  Ours rather than glibc's, whose wcwidth() needs a
 * UTF-8 locale that the program does not run in.
 */
static const struct cp_range cp_zero[] = {
	{ 0x0300, 0x036f }, { 0x0483, 0x0489 }, { 0x0591, 0x05bd },
	{ 0x05bf, 0x05bf }, { 0x05c1, 0x05c2 }, { 0x05c4, 0x05c5 },
	{ 0x05c7, 0x05c7 }, { 0x0610, 0x061a }, { 0x064b, 0x065f },
	{ 0x0670, 0x0670 }, { 0x06d6, 0x06dc }, { 0x06df, 0x06e4 },
	{ 0x06e7, 0x06e8 }, { 0x06ea, 0x06ed }, { 0x0711, 0x0711 },
	{ 0x0730, 0x074a }, { 0x07a6, 0x07b0 }, { 0x07eb, 0x07f3 },
	{ 0x0816, 0x082d }, { 0x0859, 0x085b }, { 0x08d3, 0x08ff },
	{ 0x0900, 0x0902 }, { 0x093a, 0x093a }, { 0x093c, 0x093c },
	{ 0x0941, 0x0948 }, { 0x094d, 0x094d }, { 0x0951, 0x0957 },
	{ 0x0962, 0x0963 }, { 0x0981, 0x0981 }, { 0x09bc, 0x09bc },
	{ 0x09c1, 0x09c4 }, { 0x09cd, 0x09cd }, { 0x09e2, 0x09e3 },
	{ 0x0e31, 0x0e31 }, { 0x0e34, 0x0e3a }, { 0x0e47, 0x0e4e },
	{ 0x0eb1, 0x0eb1 }, { 0x0eb4, 0x0ebc }, { 0x0ec8, 0x0ecd },
	{ 0x0f18, 0x0f19 }, { 0x0f35, 0x0f35 }, { 0x0f37, 0x0f37 },
	{ 0x0f39, 0x0f39 }, { 0x0f71, 0x0f7e }, { 0x0f80, 0x0f84 },
	{ 0x1160, 0x11ff }, { 0x135d, 0x135f }, { 0x17b4, 0x17b5 },
	{ 0x17b7, 0x17bd }, { 0x17c6, 0x17c6 }, { 0x17c9, 0x17d3 },
	{ 0x180b, 0x180f }, { 0x1ab0, 0x1aff }, { 0x1dc0, 0x1dff },
	{ 0x200b, 0x200f }, { 0x202a, 0x202e }, { 0x2060, 0x2064 },
	{ 0x20d0, 0x20f0 }, { 0x2cef, 0x2cf1 }, { 0x2de0, 0x2dff },
	{ 0x302a, 0x302d }, { 0x3099, 0x309a }, { 0xa66f, 0xa672 },
	{ 0xa674, 0xa67d }, { 0xa69e, 0xa69f }, { 0xa6f0, 0xa6f1 },
	{ 0xfb1e, 0xfb1e }, { 0xfe00, 0xfe0f }, { 0xfe20, 0xfe2f },
	{ 0xfeff, 0xfeff }, { 0x1d167, 0x1d169 }, { 0x1d17b, 0x1d182 },
	{ 0x1e8d0, 0x1e8d6 }, { 0xe0001, 0xe007f }, { 0xe0100, 0xe01ef },
};
static const struct cp_range cp_wide[] = {
	{ 0x1100, 0x115f }, { 0x231a, 0x231b }, { 0x2329, 0x232a },
	{ 0x23e9, 0x23ec }, { 0x23f0, 0x23f0 }, { 0x23f3, 0x23f3 },
	{ 0x25fd, 0x25fe }, { 0x2614, 0x2615 }, { 0x2648, 0x2653 },
	{ 0x267f, 0x267f }, { 0x2693, 0x2693 }, { 0x26a1, 0x26a1 },
	{ 0x26aa, 0x26ab }, { 0x26bd, 0x26be }, { 0x26c4, 0x26c5 },
	{ 0x26ce, 0x26ce }, { 0x26d4, 0x26d4 }, { 0x26ea, 0x26ea },
	{ 0x26f2, 0x26f3 }, { 0x26f5, 0x26f5 }, { 0x26fa, 0x26fa },
	{ 0x26fd, 0x26fd }, { 0x2705, 0x2705 }, { 0x270a, 0x270b },
	{ 0x2728, 0x2728 }, { 0x274c, 0x274c }, { 0x274e, 0x274e },
	{ 0x2753, 0x2755 }, { 0x2757, 0x2757 }, { 0x2795, 0x2797 },
	{ 0x27b0, 0x27b0 }, { 0x27bf, 0x27bf }, { 0x2b1b, 0x2b1c },
	{ 0x2b50, 0x2b50 }, { 0x2b55, 0x2b55 }, { 0x2e80, 0x303e },
	{ 0x3041, 0x33ff }, { 0x3400, 0x4dbf }, { 0x4e00, 0x9fff },
	{ 0xa000, 0xa4cf }, { 0xa960, 0xa97f }, { 0xac00, 0xd7a3 },
	{ 0xf900, 0xfaff }, { 0xfe10, 0xfe19 }, { 0xfe30, 0xfe6f },
	{ 0xff00, 0xff60 }, { 0xffe0, 0xffe6 }, { 0x16fe0, 0x16fe4 },
	{ 0x17000, 0x18cff }, { 0x1b000, 0x1b2ff }, { 0x1f004, 0x1f004 },
	{ 0x1f0cf, 0x1f0cf }, { 0x1f18e, 0x1f18e }, { 0x1f191, 0x1f19a },
	{ 0x1f200, 0x1f251 }, { 0x1f300, 0x1f64f }, { 0x1f680, 0x1f6ff },
	{ 0x1f7e0, 0x1f7eb }, { 0x1f90c, 0x1f9ff }, { 0x1fa70, 0x1faff },
	{ 0x20000, 0x2fffd }, { 0x30000, 0x3fffd },
};

static int
cp_in(unsigned long c, const struct cp_range *r, size_t n)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (c < r[mid].lo)
			hi = mid;
		else if (c > r[mid].hi)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

size_t
text_width(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned long	 c;
	size_t		 n, w = 0;

	while (*p != '\0') {
		if ((n = utf8_len(p, &c)) == 0) {
			w++;		/* printed as '?' */
			p++;
			continue;
		}
		/* Zero first: a few marks sit inside the wide blocks. */
		if (!cp_in(c, cp_zero, sizeof(cp_zero) / sizeof(cp_zero[0])))
			w += cp_in(c, cp_wide, sizeof(cp_wide) /
			    sizeof(cp_wide[0])) ? 2 : 1;
		p += n;
	}
	return w;
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

void
text_cap(char *s, size_t max, size_t total)
{
	char mark[48];
	size_t len, room, keep;
	int mlen;

	len = strlen(s);
	if (total < len)
		total = len;
	if (total <= max)
		return;
	/* The buffer holds len bytes and its NUL, maybe no more. */
	room = len < max ? len : max;
	mlen = snprintf(mark, sizeof(mark), "... (%zu bytes)", total);
	keep = room > (size_t)mlen ? room - (size_t)mlen : 0;
	/* Not inside a UTF-8 sequence: what is left stays valid. */
	while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
		keep--;
	snprintf(s + keep, room - keep + 1, "%s", mark);
}

/*
 * Not exit 1, a failed DNS update: the run stopped where it was (a
 * domain being updated is marked unsure, the next run reads it back).
 */
void
out_of_memory(void)
{
	fprintf(stderr, "ddup-check: out of memory\n");
	exit(RUN_NOMEM);
}

void *
xmalloc(size_t n)
{
	void *p;

	if ((p = malloc(n == 0 ? 1 : n)) == NULL)
		out_of_memory();
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p;

	if (n == 0 || size == 0)
		n = size = 1;
	if ((p = calloc(n, size)) == NULL)
		out_of_memory();
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	void *q;

	if ((q = realloc(p, n == 0 ? 1 : n)) == NULL)
		out_of_memory();
	return q;
}

char *
xstrdup(const char *s)
{
	char *p;

	if ((p = strdup(s)) == NULL)
		out_of_memory();
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
make_parent_dirs(const char *path, mode_t mode, char *err, size_t errlen)
{
	struct stat	 sb;
	char		*dir, *slash, *end;
	int		 rc = -1;

	dir = xstrdup(path);
	end = strrchr(dir, '/');
	if (end == NULL || end == dir) {
		rc = 0;		/* the current folder or "/" */
		goto out;
	}
	*end = '\0';
	if (stat(dir, &sb) == 0) {
		rc = 0;		/* not a folder: the open that follows says so */
		goto out;
	}
	/* Each prefix of dir in turn; the first '/' is the root's. */
	for (slash = strchr(dir + 1, '/');; slash = strchr(slash + 1, '/')) {
		if (slash != NULL)
			*slash = '\0';
		if (mkdir(dir, mode) == 0) {
			/* Exactly mode: the umask may narrow it. */
			if (chmod(dir, mode) == -1) {
				snprintf(err, errlen, "%s: cannot set the mode "
				    "of folder %s: %s", path, dir,
				    strerror(errno));
				goto out;
			}
			/* Best effort: some file systems refuse it. */
			(void)fsync_dir_of(dir);
		} else if (errno != EEXIST) {
			snprintf(err, errlen, "%s: cannot create folder %s: "
			    "%s", path, dir, strerror(errno));
			goto out;
		}
		if (slash == NULL)
			break;
		*slash = '/';
	}
	rc = 0;
out:
	free(dir);
	return rc;
}

/* What kind of thing, other than a regular file or a symlink, st is. */
static const char *
file_kind(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return "a folder";
	if (S_ISFIFO(st->st_mode))
		return "a FIFO";
	if (S_ISCHR(st->st_mode))
		return "a character device";
	if (S_ISBLK(st->st_mode))
		return "a block device";
	if (S_ISSOCK(st->st_mode))
		return "a socket";
	return "of an unknown kind";
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
	struct stat st;

	tmp[0] = '\0';
	/*
	 * A rename replaces whatever is at path: a device node or a FIFO
	 * (/dev/full given by mistake) would become a regular file.  Only
	 * a regular file or a symlink (replaced, never followed) may go.
	 */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) &&
	    !S_ISLNK(st.st_mode)) {
		snprintf(err, errlen, "%s: %s, not a regular file: left as "
		    "it is", path, file_kind(&st));
		return -1;
	}
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
