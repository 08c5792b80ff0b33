/*
 * A zonefile provider's file read back (zf_parse(), providers/zonefile.h):
 * any bytes, NULs included, as the file may hold after someone else's
 * edit; and the same bytes as a template (zf_render()).
 *
 * Invariants: a parse that fails says why in one printable line and holds
 * no record; one that works holds only records ddup could have written
 * (lower-case absolute names under the zone rule, a TTL in range,
 * canonical data), and the block written from them reads back to the
 * same block.  A name's sets are RRsets of their type.  A template that
 * renders holds the block once.
 */

#include "providers/zonefile.h"
#include "provider.h"

#include "fuzz.h"

static void
check_recs(const struct zf_file *f)
{
	struct addr a;
	size_t i;

	for (i = 0; i < f->n; i++) {
		const struct zf_rec *r = &f->v[i];
		size_t k;

		fuzz_check(provider_zone_ok(r->name), "name", r->name);
		for (k = 0; r->name[k] != '\0'; k++)
			fuzz_check(r->name[k] < 'A' || r->name[k] > 'Z',
			    "name not lower case", r->name);
		fuzz_check(r->ttl >= 0 && r->ttl <= 2147483647, "ttl", NULL);
		if (r->type == RR_CNAME)
			fuzz_check(provider_zone_ok(r->data), "target",
			    r->data);
		else {
			fuzz_check(addr_parse(r->data, &a) == 0 &&
			    strcmp(a.s, r->data) == 0 &&
			    rrtype_of_family(a.family) == r->type, "address",
			    r->data);
		}
	}
}

static void
check_sets(const struct zf_file *f)
{
	struct rrset s[RR_NTYPES];
	char err[256];
	size_t i;
	int k;

	if (f->n == 0)
		return;
	memset(s, 0, sizeof(s));
	for (k = 0; k < RR_NTYPES; k++)
		s[k].type = (enum rrtype)k;
	if (zf_sets(f, f->v[0].name, s, RR_NTYPES, err, sizeof(err)) == 0) {
		fuzz_check(!rrset_empty(&s[f->v[0].type]), "its own record "
		    "not read", f->v[0].name);
		for (k = 0; k < 2; k++)
			for (i = 0; i < s[k].addrs.n; i++)
				fuzz_check(i == 0 || addr_cmp(
				    &s[k].addrs.v[i - 1], &s[k].addrs.v[i]) < 0,
				    "not sorted", NULL);
	} else
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "reason",
		    err);
	for (k = 0; k < RR_NTYPES; k++)
		rrset_clear(&s[k]);
}

static void
round_trip(struct zf_file *f)
{
	struct zf_file g;
	char *b1, *b2, err[256];
	size_t l1, l2;

	b1 = zf_block(f, f->serial, &l1);
	fuzz_check(zf_parse(b1, l1, &g, err, sizeof(err)) == 0, "its own "
	    "block refused", err);
	fuzz_check(g.has_block && g.has_serial && g.serial == f->serial &&
	    g.n <= f->n, "block read back", NULL);
	b2 = zf_block(&g, g.serial, &l2);
	fuzz_check(l1 == l2 && memcmp(b1, b2, l1) == 0, "block not stable",
	    NULL);
	free(b1);
	free(b2);
	zf_free(&g);
}

/* Whether n bytes of s occur in buf (memmem is a GNU extension). */
static int
holds(const char *buf, size_t len, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i + n <= len; i++)
		if (memcmp(buf + i, s, n) == 0)
			return 1;
	return 0;
}

static void
as_template(const char *buf, size_t len)
{
	static const char block[] = ZF_BEGIN "\n" ZF_END "\n";
	char *out, err[128];
	size_t olen;

	out = zf_render(buf, len, block, sizeof(block) - 1, 4294967295ULL,
	    &olen, err, sizeof(err));
	if (out == NULL) {
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "template "
		    "reason", err);
		return;
	}
	fuzz_check(holds(out, olen, block, sizeof(block) - 1),
	    "block not in the output", NULL);
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Not NUL-terminated: the parser must keep to len. */
	char *s = malloc(size > 0 ? size : 1), err[256];
	struct zf_file f;

	if (s == NULL)
		abort();
	memcpy(s, data, size);
	err[0] = '\0';
	if (zf_parse(s, size, &f, err, sizeof(err)) == -1) {
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "reason is "
		    "not one printable line", err);
		fuzz_check(f.n == 0 && f.v == NULL, "failure with records",
		    err);
	} else {
		fuzz_check(f.has_block || f.n == 0, "records without a block",
		    NULL);
		check_recs(&f);
		check_sets(&f);
		round_trip(&f);
		zf_free(&f);
	}
	as_template(s, size);
	free(s);
	return 0;
}
