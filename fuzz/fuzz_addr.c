/*
 * Addresses and address sets: addr_parse(), addrset_parse(),
 * addrset_join() and the set operations the state file and the
 * providers rely on.  Invariants: a parsed address is canonical (its
 * text parses to itself); a parsed set is strictly sorted, holds only
 * addresses written in the input, and survives join + parse; add,
 * contains, copy and equal agree with each other.
 */

#include "fuzz.h"
#include "util.h"

static void
one(const char *s)
{
	struct addr a, again;

	if (addr_parse(s, &a) == -1)
		return;
	fuzz_check(a.family == 4 || a.family == 6, "family", s);
	fuzz_check(strlen(a.s) < ADDR_STRLEN, "text length", s);
	fuzz_check(addr_parse(a.s, &again) == 0 && again.family == a.family &&
	    addr_cmp(&a, &again) == 0 && strcmp(a.s, again.s) == 0,
	    "canonical text does not parse to itself", s);
}

/* Orders addresses as bytes, independently of addr_cmp. */
static int
raw_cmp(const void *x, const void *y)
{
	const struct addr *a = x, *b = y;

	if (a->family != b->family)
		return a->family - b->family;
	return memcmp(a->b, b->b, sizeof(a->b));
}

/*
 * The number of distinct addresses among the blank-separated words of
 * list, each of which must be an address (addrset_parse accepted it).
 * Also checks that every word is in st.
 */
static size_t
distinct_words(const char *list, const struct addrset *st)
{
	char word[ADDR_STRLEN];
	const char *p = list, *start;
	struct addr *w = NULL;
	size_t len, n = 0, cap = 0, i, distinct;

	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		start = p;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
		len = (size_t)(p - start);
		fuzz_check(len < sizeof(word), "accepted a long word", list);
		memcpy(word, start, len);
		word[len] = '\0';
		if (n == cap) {
			cap = cap == 0 ? 16 : cap * 2;
			if ((w = realloc(w, cap * sizeof(*w))) == NULL)
				abort();
		}
		memset(&w[n], 0, sizeof(w[n]));
		fuzz_check(addr_parse(word, &w[n]) == 0, "accepted a word "
		    "that is not an address", word);
		fuzz_check(addrset_contains(st, word), "a word is missing "
		    "from the set", word);
		memset(w[n].s, 0, sizeof(w[n].s));
		n++;
	}
	if (n > 0)
		qsort(w, n, sizeof(*w), raw_cmp);
	for (i = 0, distinct = 0; i < n; i++)
		if (i == 0 || raw_cmp(&w[i - 1], &w[i]) != 0)
			distinct++;
	free(w);
	return distinct;
}

static void
set(const char *s)
{
	struct addrset st = { NULL, 0, 0 }, back = { NULL, 0, 0 };
	struct addrset built = { NULL, 0, 0 }, copy = { NULL, 0, 0 };
	char *joined;
	size_t i;

	if (addrset_parse(&st, s) == -1) {
		fuzz_check(st.n == 0 && st.v == NULL, "failed parse left "
		    "addresses", s);
		return;
	}
	for (i = 0; i < st.n; i++) {
		fuzz_check(i == 0 || addr_cmp(&st.v[i - 1], &st.v[i]) < 0,
		    "set not strictly sorted", s);
		fuzz_check(addrset_contains(&st, st.v[i].s), "contains "
		    "misses a member", st.v[i].s);
	}
	/* Every word in the set and nothing else. */
	fuzz_check(distinct_words(s, &st) == st.n, "set holds an address "
	    "not in the input", s);
	joined = addrset_join(&st);
	fuzz_check(addrset_parse(&back, joined) == 0 &&
	    addrset_equal(&st, &back), "join + parse changes the set", s);

	/* Built one by one in reverse order: the same set. */
	for (i = st.n; i > 0; i--)
		fuzz_check(addrset_add(&built, st.v[i - 1].s) == 0, "add "
		    "refuses a member", st.v[i - 1].s);
	for (i = 0; i < st.n; i++)
		addrset_add_addr(&built, &st.v[i]);
	fuzz_check(addrset_equal(&st, &built), "set depends on the order "
	    "of adds", s);
	addrset_copy(&copy, &st);
	fuzz_check(addrset_equal(&st, &copy), "copy differs", s);
	addrset_copy(&copy, &copy);
	fuzz_check(addrset_equal(&st, &copy), "copy onto itself", s);
	free(joined);
	addrset_free(&st);
	addrset_free(&back);
	addrset_free(&built);
	addrset_free(&copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	s = fuzz_cstr(data, size);
	one(s);
	set(s);
	free(s);
	return 0;
}
