/*
 * The output of an exec provider's `read` (parse_read), as the program
 * prints it: any bytes, NULs included.  The provider file is included to
 * reach its static parser.
 *
 * Invariants: a parse that fails says why in one printable line and
 * leaves the set empty; a parse that works returns a strictly sorted set
 * of the type asked in which every address is written in the output, and
 * a TTL in 0..2147483647 only with addresses.
 */

#include "../providers/exec.c"

#include "fuzz.h"

/* Whether the output holds a word that parses to a. */
static int
has_addr(const char *buf, size_t len, const struct addr *a)
{
	char word[ADDR_STRLEN + 1];
	struct addr w;
	size_t i, j;

	for (i = 0; i < len; i = j + 1) {
		for (j = i; j < len && buf[j] != ' ' && buf[j] != '\t' &&
		    buf[j] != '\n' && buf[j] != '\r'; j++)
			;
		if (j - i == 0 || j - i >= sizeof(word))
			continue;
		memcpy(word, buf + i, j - i);
		word[j - i] = '\0';
		if (addr_parse(word, &w) == 0 && addr_cmp(&w, a) == 0)
			return 1;
	}
	return 0;
}

static void
one(const char *buf, size_t len, enum rrtype type)
{
	struct rrset set;
	char err[256];
	size_t i;

	memset(&set, 0, sizeof(set));
	set.type = type;
	err[0] = '\0';
	if (parse_read(buf, len, &set, err, sizeof(err)) == -1) {
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "reason is "
		    "not one printable line", err);
		fuzz_check(rrset_empty(&set) && set.ttl == 0, "failure with "
		    "records", err);
		goto out;
	}
	fuzz_check(set.type == type, "type changed", NULL);
	fuzz_check(memchr(buf, '\0', len) == NULL, "a NUL byte accepted",
	    NULL);
	fuzz_check(set.ttl >= 0 && set.ttl <= 2147483647 &&
	    (set.addrs.n > 0 || set.target != NULL || set.ttl == 0), "ttl",
	    NULL);
	if (set.target != NULL) {
		struct addr a;
		size_t n = strlen(set.target);

		fuzz_check(type == RR_CNAME && set.addrs.n == 0, "a target "
		    "beside addresses", set.target);
		fuzz_check(n > 0 && set.target[n - 1] != '.' &&
		    fuzz_printable(set.target) && strpbrk(set.target,
		    " ABCDEFGHIJKLMNOPQRSTUVWXYZ") == NULL &&
		    addr_parse(set.target, &a) == -1, "target not one lower-case "
		    "host name", set.target);
	}
	for (i = 0; i < set.addrs.n; i++) {
		fuzz_check(rrtype_of_family(set.addrs.v[i].family) == type,
		    "address of the other type", set.addrs.v[i].s);
		fuzz_check(i == 0 || addr_cmp(&set.addrs.v[i - 1],
		    &set.addrs.v[i]) < 0, "not sorted", NULL);
		fuzz_check(has_addr(buf, len, &set.addrs.v[i]), "address "
		    "not in the output", set.addrs.v[i].s);
	}
out:
	rrset_clear(&set);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Not NUL-terminated: the parser must keep to len. */
	char *s = malloc(size > 0 ? size : 1);

	if (s == NULL)
		abort();
	memcpy(s, data, size);
	one(s, size, size % 3 == 0 ? RR_A : size % 3 == 1 ? RR_AAAA :
	    RR_CNAME);
	free(s);
	return 0;
}
