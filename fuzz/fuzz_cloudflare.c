/*
 * Cloudflare API answers as the cloudflare provider reads them: a page
 * of a dns_records list (parse_records), a zone lookup (parse_zones),
 * the error text of a failure (cf_errtext), and the diff of the records
 * read with a wanted set (diff).  The provider file is included to reach
 * its static functions.
 *
 * Invariants: a parse that fails says why in one printable line; a
 * parse that works gives records of name only, each with a hexadecimal
 * id, a TTL of at least 1, and a canonical address of its type or a
 * lower-case target without a trailing dot; a zone id is hexadecimal; an
 * error text is one printable line.  The diff deletes every record read
 * that it neither keeps nor turns into another, once, and creates every
 * wanted record it does not find.
 */

#include "../providers/cloudflare.c"

#include "fuzz.h"

#define NAME	"app.example.test"

static void
check_records(const struct cflist *l)
{
	const struct cfrec *r;
	struct addr a;
	size_t i;

	for (i = 0; i < l->n; i++) {
		r = &l->v[i];
		fuzz_check(r->id[0] != '\0' && strspn(r->id,
		    "0123456789abcdefABCDEF") == strlen(r->id), "records: id",
		    r->id);
		fuzz_check(r->ttl >= 1, "records: ttl", NULL);
		if (r->type == RR_CNAME) {
			fuzz_check(r->content[0] != '\0' && fuzz_printable(
			    r->content) && strpbrk(r->content,
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ ") == NULL,
			    "records: target", r->content);
			continue;
		}
		fuzz_check(addr_parse(r->content, &a) == 0 &&
		    a.family == (r->type == RR_A ? 4 : 6) &&
		    strcmp(a.s, r->content) == 0, "records: address",
		    r->content);
	}
}

/* The wanted sets come from the input's length: A, AAAA and/or CNAME. */
static void
check_diff(struct cflist *cur, size_t len)
{
	struct rrset sets[3];
	struct cflist w = { 0 };
	struct plan p;
	size_t i, nsets = 0, kept = 0, managed_n = 0, unwanted;

	memset(sets, 0, sizeof(sets));
	if (len % 3 == 0) {
		sets[nsets].type = RR_CNAME;
		sets[nsets].ttl = 60;
		sets[nsets++].target = xstrdup("lb.example.net");
	} else {
		sets[nsets].type = RR_A;
		sets[nsets].ttl = len % 2 ? 60 : 300;
		sets[nsets].proxied = len % 5 == 0;
		(void)addrset_add(&sets[nsets++].addrs, "192.0.2.1");
	}
	if (len % 4 == 0) {
		sets[nsets].type = RR_AAAA;
		sets[nsets++].ttl = 60;
	}
	p.deletes = json_array();
	p.patches = json_array();
	p.puts = json_array();
	p.posts = json_array();
	p.to_cname = 0;
	wanted(sets, nsets, &w);
	for (i = 0; i < cur->n; i++)
		managed_n += managed(sets, nsets, cur->v[i].type);
	(void)diff(NAME, cur, &w, sets, nsets, &p);
	for (i = 0; i < cur->n; i++)
		kept += cur->v[i].keep && managed(sets, nsets, cur->v[i].type);
	unwanted = managed_n - kept;
	fuzz_check(json_array_size(p.deletes) == unwanted, "diff: deletes",
	    NULL);
	fuzz_check(json_array_size(p.puts) <= 1, "diff: more than one put",
	    NULL);
	for (i = 0, kept = 0; i < w.n; i++)
		kept += !w.v[i].keep;
	fuzz_check(json_array_size(p.posts) == kept, "diff: posts", NULL);
	json_decref(p.deletes);
	json_decref(p.patches);
	json_decref(p.puts);
	json_decref(p.posts);
	cflist_free(&w);
	for (i = 0; i < nsets; i++)
		rrset_clear(&sets[i]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct http_req rq = {
		.who = "Cloudflare",
		.method = "PATCH",
		.url = "https://api.cloudflare.com/client/v4/zones/x/dns_records",
		.errtext = cf_errtext,
	};
	struct cflist l = { 0 };
	char *s, err[256], text[256], id[CF_ID_MAX];
	long pages = -1;

	/* The body as http.c leaves it: terminated, maybe with NULs. */
	s = fuzz_cstr(data, size);
	err[0] = '\0';
	/* Every type ddup manages: diff() is checked with other types. */
	if (parse_records(s, size, NAME, 1u << RR_A | 1u << RR_AAAA |
	    1u << RR_CNAME, &l, &pages, err, sizeof(err)) == -1)
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "records: "
		    "reason is not one printable line", err);
	else {
		fuzz_check(pages >= 0, "records: pages", NULL);
		check_records(&l);
		check_diff(&l, size);
	}
	cflist_free(&l);
	err[0] = '\0';
	if (parse_zones(s, size, "example.test", id, sizeof(id), err,
	    sizeof(err)) == -1)
		fuzz_check(err[0] != '\0' && fuzz_printable(err), "zones: "
		    "reason is not one printable line", err);
	else
		fuzz_check(id[0] != '\0' && strspn(id, "0123456789abcdefABCDEF")
		    == strlen(id), "zones: id", id);
	if (cf_errtext(s, size, text, sizeof(text)) == 0)
		fuzz_check(text[0] != '\0' && fuzz_printable(text), "errtext: "
		    "not one printable line", text);
	fuzz_http_error(&rq, s, size);
	free(s);
	return 0;
}
