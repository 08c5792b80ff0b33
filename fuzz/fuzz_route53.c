/*
 * Route 53 answers as the route53 provider reads them: a page of
 * ListResourceRecordSets (parse_list), the answer to a change
 * (parse_change), an error answer (r53_error, and through
 * http_status_error), and the change batch built from what was listed
 * (change_body).  The provider file is included to reach its static
 * functions.
 *
 * Invariants: a parse that fails says why in one printable line; a
 * listed set holds addresses of its type only, as many as its values,
 * with a TTL in range; a listed CNAME holds one printable target, lower
 * case, without a trailing dot; a page that goes on names A, AAAA or
 * CNAME; a batch that moves the name to a CNAME has its DELETEs before
 * its UPSERTs; a change id
 * and an error text are one printable line; the change batch built with
 * whatever values were listed (quotes, ampersands, brackets) is an XML
 * document the provider's own reader takes back.
 */

#include "../providers/route53.c"

#include "fuzz.h"

#define NAME	"app.example.test."

static void
check_sets(const struct r53set cur[RR_NTYPES])
{
	const char *t = cur[RR_CNAME].target;
	size_t i;
	int k;

	fuzz_check(cur[RR_CNAME].addrs.n == 0 && (cur[RR_CNAME].nvalues == 0 ||
	    (cur[RR_CNAME].nvalues == 1 && t != NULL)), "list: CNAME values",
	    t);
	if (t != NULL)
		fuzz_check(t[0] != '\0' && fuzz_printable(t) &&
		    t[strlen(t) - 1] != '.' && strpbrk(t, "ABCDEFGHIJKLMNOPQRST"
		    "UVWXYZ") == NULL, "list: CNAME target", t);
	for (k = 0; k < 2; k++) {
		fuzz_check(cur[k].target == NULL, "list: target of an address "
		    "set", NULL);
		fuzz_check(cur[k].addrs.n <= cur[k].nvalues, "list: more "
		    "addresses than values", NULL);
		fuzz_check(cur[k].ttl >= 0 && cur[k].ttl <= 2147483647,
		    "list: ttl", NULL);
		for (i = 0; i < cur[k].addrs.n; i++)
			fuzz_check(cur[k].addrs.v[i].family == (k == 0 ? 4 : 6),
			    "list: other family", cur[k].addrs.v[i].s);
	}
}

/* The batch is an XML document; its DELETEs all come before its UPSERTs. */
static void
check_doc(const char *body)
{
	xmlDoc *doc;
	xmlNode *top;
	const char *up, *del;
	char err[256];

	doc = xml_read(body, strlen(body), "ChangeResourceRecordSetsRequest",
	    &top, err, sizeof(err));
	fuzz_check(doc != NULL, "change: not XML", err);
	xmlFreeDoc(doc);
	up = strstr(body, "<Action>UPSERT</Action>");
	for (del = strstr(body, "<Action>DELETE</Action>"); del != NULL;
	    del = strstr(del + 1, "<Action>DELETE</Action>"))
		fuzz_check(up == NULL || del < up, "change: a DELETE after an "
		    "UPSERT", NULL);
}

/*
 * What replace() would send: A made 192.0.2.1, AAAA and CNAME emptied;
 * then A and AAAA emptied, the CNAME made lb.example.net.
 */
static void
check_body(const struct r53set cur[RR_NTYPES])
{
	struct rrset want[RR_NTYPES];
	char *body;

	memset(want, 0, sizeof(want));
	want[0].type = RR_A;
	want[0].ttl = 60;
	(void)addrset_add(&want[0].addrs, "192.0.2.1");
	want[1].type = RR_AAAA;
	want[2].type = RR_CNAME;
	body = change_body(NAME, want, RR_NTYPES, cur);
	if (body != NULL)
		check_doc(body);
	else
		fuzz_check(cur[0].nvalues > 0 && cur[1].nvalues == 0 &&
		    cur[2].nvalues == 0, "change: nothing sent, where "
		    "something differs", NULL);
	free(body);
	rrset_clear(&want[0]);
	want[2].ttl = 60;
	want[2].target = xstrdup("lb.example.net");
	body = change_body(NAME, want, RR_NTYPES, cur);
	if (body != NULL) {
		check_doc(body);
		fuzz_check(strstr(body, "<Value>lb.example.net.</Value>") !=
		    NULL || (cur[2].target != NULL && cur[2].ttl == 60 &&
		    strcmp(cur[2].target, "lb.example.net") == 0),
		    "change: CNAME not fully qualified", body);
	} else
		fuzz_check(cur[0].nvalues == 0 && cur[1].nvalues == 0 &&
		    cur[2].target != NULL, "change: nothing sent, where "
		    "something differs", NULL);
	free(body);
	rrset_clear(&want[2]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct http_req rq = {
		.who = "Route 53",
		.method = "POST",
		.url = "https://route53.amazonaws.com/2013-04-01/hostedzone/Z1/"
		    "rrset/",
		.errtext = r53_errtext,
		.err_ctype = "text/xml",
	};
	struct r53set cur[RR_NTYPES];
	struct r53page pg;
	char *s, err[256], id[128], code[128], text[256];

	/*
	 * The body as body_write() leaves it: terminated, maybe with NULs.
	 * One reader per input, picked by its length (each XML parse costs
	 * a parser of its own); the corpus covers all three.
	 */
	s = fuzz_cstr(data, size);
	memset(cur, 0, sizeof(cur));
	err[0] = '\0';
	switch (size % 3) {
	case 0:
		if (parse_list(s, size, NAME, cur, &pg, err, sizeof(err)) ==
		    -1) {
			fuzz_check(err[0] != '\0' && fuzz_printable(err),
			    "list: reason is not one printable line", err);
			break;
		}
		check_sets(cur);
		fuzz_check(!pg.more || strcmp(pg.next_type, "A") == 0 ||
		    strcmp(pg.next_type, "AAAA") == 0 ||
		    strcmp(pg.next_type, "CNAME") == 0, "list: next type",
		    pg.next_type);
		check_body(cur);
		break;
	case 1:
		if (parse_change(s, size, id, sizeof(id), err, sizeof(err)) ==
		    -1)
			fuzz_check(err[0] != '\0' && fuzz_printable(err),
			    "change: reason is not one printable line", err);
		else
			fuzz_check(id[0] != '\0' && fuzz_printable(id),
			    "change: id", id);
		break;
	default:
		if (r53_error(s, size, code, sizeof(code), text,
		    sizeof(text)) == 0)
			fuzz_check(code[0] != '\0' && fuzz_printable(code) &&
			    fuzz_printable(text), "error: not one printable "
			    "line", text);
		fuzz_http_error(&rq, s, size);
	}
	r53set_clear(&cur[0]);
	r53set_clear(&cur[1]);
	r53set_clear(&cur[2]);
	free(s);
	return 0;
}
