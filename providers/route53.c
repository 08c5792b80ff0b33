/*
 * Amazon Route 53 (libcurl easy interface, libxml2).
 *
 * read() lists the name's record sets: GET {baseUrl}/2013-04-01/
 * hostedzone/{Id}/rrset?name=NAME.&type=A&maxitems=100, page after page
 * (NextRecordName, NextRecordType) while the listing is still at the
 * name.  replace() lists them again, then sends one
 * ChangeResourceRecordSets (POST .../rrset/) whose change batch holds an
 * UPSERT for each set that must hold other records and a DELETE, with
 * the exact set just listed (TTL and values, as the API requires), for
 * each set that must be emptied: Route 53 applies a batch all or nothing.
 * The DELETEs go first: a tier that moves between a CNAME and addresses
 * loses the old type before it gains the new, and as the batch is
 * applied whole the name never holds both, nor neither.  A CNAME is
 * written fully qualified (a trailing dot); it is read back without one,
 * in lower case, whichever way it was written.
 * Nothing differs: no call.  The change is not waited for (GetChange):
 * Route 53 answers PENDING and its name servers have it within a minute.
 *
 * https://docs.aws.amazon.com/Route53/latest/APIReference/API_ListResourceRecordSets.html
 * https://docs.aws.amazon.com/Route53/latest/APIReference/API_ChangeResourceRecordSets.html
 *
 * Requests are signed with AWS Signature Version 4 by libcurl
 * (CURLOPT_AWS_SIGV4, service route53, region us-east-1 unless told);
 * a session token travels in X-Amz-Security-Token, which libcurl signs
 * with the other headers.  Credentials never appear in a URL, a message
 * or a log line.
 *
 * Answers are XML, read with libxml2 without network access and with no
 * document type declaration at all (so no entity is ever defined, let
 * alone expanded); each parser takes (buffer, length) so it can be
 * fuzzed on its own.  Only simple record sets are managed: an alias or a
 * set with a routing policy (SetIdentifier) at the name is an error, not
 * something to overwrite.
 */

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include "config.h"
#include "http.h"
#include "provider.h"
#include "providers/api.h"
#include "util.h"

#define R53_BASE_URL	"https://route53.amazonaws.com"
#define R53_NS		"https://route53.amazonaws.com/doc/2013-04-01/"
#define R53_PAGE	"100"		/* maxitems of one list call */
#define R53_PAGES_MAX	20		/* of one name: a loop, not a zone */
#define R53_TEXT_MAX	1024		/* a name, a value, a message */
#define R53_ZONE_ID_MAX	32

static const struct provider_key route53_keys[] = {
	{ "accessKeyId", PK_REQUIRED },
	{ "secretAccessKey", PK_REQUIRED | PK_SECRET },
	{ "sessionToken", PK_SECRET },
	{ "hostedZoneId", PK_REQUIRED },
	{ "region", 0 },
	{ "baseUrl", 0 },
	{ "timeout", 0 },
	{ NULL, 0 }
};

/* A record set of the name as listed, at its enum rrtype. */
struct r53set {
	int		 seen;
	long		 ttl;
	struct addrset	 addrs;		/* A, AAAA */
	char		*target;	/* CNAME: lower case, no trailing dot */
	char		**values;	/* as listed, for a DELETE */
	size_t		 nvalues;
};

/* Where a listing goes on. */
struct r53page {
	int		 more;		/* next page still at the name */
	char		 next_type[8];
};

struct r53 {
	struct api	 api;
	char		*rrset_url;	/* .../2013-04-01/hostedzone/ID/rrset */
	char		*sigv4;		/* "aws:amz:REGION:route53" */
	char		*userpwd;	/* "KEY:SECRET": secret */
	char		*token_hdr;	/* "X-Amz-Security-Token: ...": secret */
};

/* ------------------------------------------------------------------ XML */

/*
 * libxml2 reports some problems (an encoding error) on stderr even with
 * XML_PARSE_NOERROR: that would put the answer's bytes into the log.
 * Every report is dropped; the reason is read from xmlGetLastError().
 */
static void
xml_silent(void *ctx, const char *fmt, ...)
{
	(void)ctx;
	(void)fmt;
}

static void
xml_silent_structured(void *ctx, xmlErrorPtr e)
{
	(void)ctx;
	(void)e;
}

static int
has_doctype(const char *buf, size_t len)
{
	static const char dt[] = "<!DOCTYPE";
	size_t i;

	for (i = 0; i + sizeof(dt) - 1 <= len; i++)
		if (memcmp(buf + i, dt, sizeof(dt) - 1) == 0)
			return 1;
	return 0;
}

/*
 * The document in buf, its root element named root (any when root is
 * NULL); NULL with the reason in err.  No network, no DTD: a document
 * that declares one is refused before the parser sees it; read as UTF-8
 * whatever it declares, so no converter is ever asked.
 */
static xmlDoc *
xml_read(const char *buf, size_t len, const char *root, xmlNode **top,
    char *err, size_t errlen)
{
	const xmlError *xe;
	xmlDoc *doc;
	xmlNode *n;
	char why[160];

	if (len > INT_MAX || len == 0) {
		snprintf(err, errlen, "not an XML document");
		return NULL;
	}
	if (has_doctype(buf, len)) {
		snprintf(err, errlen, "a document type declaration (refused)");
		return NULL;
	}
	xmlSetGenericErrorFunc(NULL, xml_silent);
	xmlSetStructuredErrorFunc(NULL, xml_silent_structured);
	xmlResetLastError();
	/* UTF-8, as Route 53 writes: a declared other encoding is ignored. */
	doc = xmlReadMemory(buf, (int)len, NULL, "UTF-8", XML_PARSE_NONET |
	    XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NOCDATA);
	if (doc == NULL) {
		xe = xmlGetLastError();
		snprintf(why, sizeof(why), "%s", xe != NULL && xe->message !=
		    NULL ? xe->message : "");
		why[strcspn(why, "\r\n")] = '\0';
		text_printable(why);
		snprintf(err, errlen, "not XML%s%s", why[0] != '\0' ? ": " :
		    "", why);
		xmlResetLastError();
		return NULL;
	}
	n = xmlDocGetRootElement(doc);
	if (doc->intSubset != NULL || doc->extSubset != NULL || n == NULL ||
	    (root != NULL && xmlStrcmp(n->name, (const xmlChar *)root) != 0)) {
		snprintf(err, errlen, "not a %s document", root != NULL ? root :
		    "usable");
		xmlFreeDoc(doc);
		return NULL;
	}
	*top = n;
	return doc;
}

/* The first element child of n named name, or NULL. */
static xmlNode *
kid(const xmlNode *n, const char *name)
{
	xmlNode *c;

	for (c = n != NULL ? n->children : NULL; c != NULL; c = c->next)
		if (c->type == XML_ELEMENT_NODE &&
		    xmlStrcmp(c->name, (const xmlChar *)name) == 0)
			return c;
	return NULL;
}

/*
 * The text of element n (text only, shorter than outlen and than
 * R53_TEXT_MAX, no NUL); 0, or -1.
 */
static int
text_of(const xmlNode *n, char *out, size_t outlen)
{
	const xmlNode *c;
	size_t len = 0, l;

	out[0] = '\0';
	if (n == NULL)
		return -1;
	for (c = n->children; c != NULL; c = c->next) {
		if (c->type != XML_TEXT_NODE || c->content == NULL)
			return -1;
		l = strlen((const char *)c->content);
		if (len + l + 1 > outlen || len + l >= R53_TEXT_MAX)
			return -1;
		memcpy(out + len, c->content, l);
		len += l;
	}
	out[len] = '\0';
	return 0;
}

/* ------------------------------------------------------------- parsers */

/*
 * The error of an answer: ErrorResponse/Error/{Code, Message}, or
 * InvalidChangeBatch/Messages/Message...  Code alone in code (may be
 * NULL), "Code: Message" in out; -1 when the body is neither.
 */
static int
r53_error(const char *buf, size_t len, char *code, size_t codelen,
    char *out, size_t outlen)
{
	xmlDoc *doc;
	xmlNode *top, *e, *m;
	char why[64], c[128], msg[R53_TEXT_MAX];
	size_t olen;
	int rv = -1;

	if (code != NULL)
		code[0] = '\0';
	out[0] = '\0';
	if ((doc = xml_read(buf, len, NULL, &top, why, sizeof(why))) == NULL)
		return -1;
	if (xmlStrcmp(top->name, (const xmlChar *)"ErrorResponse") == 0) {
		e = kid(top, "Error");
		if (text_of(kid(e, "Code"), c, sizeof(c)) == -1 || c[0] == '\0')
			goto out;
		if (text_of(kid(e, "Message"), msg, sizeof(msg)) == -1)
			msg[0] = '\0';
		snprintf(out, outlen, "%s%s%s", c, msg[0] != '\0' ? ": " : "",
		    msg);
	} else if (xmlStrcmp(top->name, (const xmlChar *)"InvalidChangeBatch")
	    == 0) {
		snprintf(c, sizeof(c), "InvalidChangeBatch");
		snprintf(out, outlen, "%s", c);
		e = kid(top, "Messages");
		for (m = e != NULL ? e->children : NULL; m != NULL;
		    m = m->next) {
			if (m->type != XML_ELEMENT_NODE || xmlStrcmp(m->name,
			    (const xmlChar *)"Message") != 0 ||
			    text_of(m, msg, sizeof(msg)) == -1)
				continue;
			olen = strlen(out);
			snprintf(out + olen, outlen - olen, "%s%s",
			    strchr(out, ':') == NULL ? ": " : "; ", msg);
		}
	} else
		goto out;
	if (code != NULL)
		text_printable_copy(code, codelen, c);
	text_printable(out);
	rv = 0;
out:
	xmlFreeDoc(doc);
	return rv;
}

/* For http.c: the API's own error text. */
static int
r53_errtext(const char *buf, size_t len, char *out, size_t outlen)
{
	return r53_error(buf, len, NULL, 0, out, outlen);
}

/*
 * Signed by libcurl (SigV4, r53_call()): no credential header; the
 * hosted zone is named by id, so there is no zone name to check.
 */
static const struct api_def r53_api = {
	.who = "Route 53",
	.base_url = R53_BASE_URL,
	.errtext = r53_errtext,
};

static int
set_index(const char *type)
{
	if (strcmp(type, "A") == 0)
		return 0;
	if (strcmp(type, "AAAA") == 0)
		return 1;
	if (strcmp(type, "CNAME") == 0)
		return 2;
	return -1;
}

static void
r53set_clear(struct r53set *s)
{
	size_t i;

	for (i = 0; i < s->nvalues; i++)
		free(s->values[i]);
	free(s->values);
	addrset_free(&s->addrs);
	free(s->target);
	memset(s, 0, sizeof(*s));
}

/*
 * A CNAME's value as struct rrset holds it (rrset.h): no trailing dot
 * (Route 53 lists it as it was written, with one or without), lower
 * case; -1 for one that is not a printable host name.
 */
static int
cname_target(const char *v, char *out, size_t outlen)
{
	size_t len = strlen(v), i;

	if (len > 1 && v[len - 1] == '.')
		len--;
	if (len == 0 || len >= outlen || len > 253)
		return -1;
	for (i = 0; i < len; i++) {
		if (v[i] <= ' ' || v[i] > '~' || v[i] == '\\')
			return -1;
		out[i] = (char)tolower((unsigned char)v[i]);
	}
	out[len] = '\0';
	return 0;
}

/* One value of a set of type k: an address of its family, or a target. */
static int
parse_value(const char *name, int k, const char *v, struct rrset *got,
    char *err, size_t errlen)
{
	char t[R53_TEXT_MAX];
	struct addr a;

	if (k == RR_CNAME) {
		if (got->target != NULL || cname_target(v, t, sizeof(t)) ==
		    -1) {
			snprintf(err, errlen, "%s: a CNAME that is not one host "
			    "name", name);
			return -1;
		}
		got->target = xstrdup(t);
		return 0;
	}
	if (addr_parse(v, &a) == -1 || a.family != (k == RR_A ? 4 : 6)) {
		snprintf(err, errlen, "%s: a record that is not an IPv%d "
		    "address", name, k == RR_A ? 4 : 6);
		return -1;
	}
	return rrset_read_add(got, &a, err, errlen);
}

/* One ResourceRecordSet of the name, of type k (enum rrtype), into s. */
static int
parse_set(const xmlNode *rrs, const char *name, int k, struct r53set *s,
    char *err, size_t errlen)
{
	const xmlNode *rr, *recs;
	char v[R53_TEXT_MAX], *end;
	const char *tname = rrtype_str((enum rrtype)k);
	long long ttl;
	struct rrset got = { .type = (enum rrtype)k };

	if (kid(rrs, "AliasTarget") != NULL || kid(rrs, "SetIdentifier") !=
	    NULL) {
		snprintf(err, errlen, "%s %s is an alias or has a routing "
		    "policy (SetIdentifier): only simple record sets are "
		    "managed", name, tname);
		return -1;
	}
	if (s->seen) {
		snprintf(err, errlen, "%s %s listed twice", name, tname);
		return -1;
	}
	s->seen = 1;
	if (text_of(kid(rrs, "TTL"), v, sizeof(v)) == -1 ||
	    !isdigit((unsigned char)v[0]) || (ttl = strtoll(v, &end, 10),
	    *end != '\0') || ttl > 2147483647) {
		snprintf(err, errlen, "%s: no TTL from 0 to 2147483647", name);
		return -1;
	}
	s->ttl = (long)ttl;
	if ((recs = kid(rrs, "ResourceRecords")) == NULL) {
		snprintf(err, errlen, "%s: no ResourceRecords", name);
		return -1;
	}
	for (rr = recs->children; rr != NULL; rr = rr->next) {
		if (rr->type != XML_ELEMENT_NODE)
			continue;
		if (xmlStrcmp(rr->name, (const xmlChar *)"ResourceRecord") !=
		    0 || text_of(kid(rr, "Value"), v, sizeof(v)) == -1) {
			snprintf(err, errlen, "%s: a ResourceRecord without a "
			    "Value", name);
			goto bad;
		}
		if (parse_value(name, k, v, &got, err, errlen) == -1)
			goto bad;
		/* Doubled at each power of two: no realloc per record. */
		if ((s->nvalues & (s->nvalues - 1)) == 0)
			s->values = xrealloc(s->values, (s->nvalues == 0 ? 1 :
			    s->nvalues * 2) * sizeof(*s->values));
		s->values[s->nvalues++] = xstrdup(v);
	}
	if (s->nvalues == 0) {
		snprintf(err, errlen, "%s: a record set without records",
		    name);
		goto bad;
	}
	rrset_read_end(&got);
	/* Listed once (seen): nothing held before. */
	addrset_free(&s->addrs);
	s->addrs = got.addrs;
	s->target = got.target;
	return 0;
bad:
	rrset_clear(&got);
	return -1;
}

/*
 * A page of ListResourceRecordSets for name (absolute, lower case): the
 * A, AAAA and CNAME sets of name go into cur[RR_A...]; other types and
 * names are passed over (the listing runs on through the zone), and
 * pg says whether the next page is still at the name.
 * Returns 0, or -1 with the reason in err.
 */
static int
parse_list(const char *buf, size_t len, const char *name,
    struct r53set cur[RR_NTYPES], struct r53page *pg, char *err, size_t errlen)
{
	xmlDoc *doc;
	xmlNode *top, *sets, *rrs;
	char n[R53_TEXT_MAX], t[32], trunc[8];
	int k, rv = -1;

	pg->more = 0;
	pg->next_type[0] = '\0';
	if ((doc = xml_read(buf, len, "ListResourceRecordSetsResponse", &top,
	    err, errlen)) == NULL)
		return -1;
	if ((sets = kid(top, "ResourceRecordSets")) == NULL) {
		snprintf(err, errlen, "no ResourceRecordSets");
		goto out;
	}
	for (rrs = sets->children; rrs != NULL; rrs = rrs->next) {
		if (rrs->type != XML_ELEMENT_NODE)
			continue;
		if (xmlStrcmp(rrs->name, (const xmlChar *)"ResourceRecordSet")
		    != 0 || text_of(kid(rrs, "Name"), n, sizeof(n)) == -1 ||
		    text_of(kid(rrs, "Type"), t, sizeof(t)) == -1) {
			snprintf(err, errlen, "a record set without Name or "
			    "Type");
			goto out;
		}
		if (strcasecmp(n, name) != 0 || (k = set_index(t)) == -1)
			continue;
		if (parse_set(rrs, name, k, &cur[k], err, errlen) == -1)
			goto out;
	}
	if (text_of(kid(top, "IsTruncated"), trunc, sizeof(trunc)) == -1 ||
	    (strcmp(trunc, "true") != 0 && strcmp(trunc, "false") != 0)) {
		snprintf(err, errlen, "no IsTruncated");
		goto out;
	}
	/* Sorted by name, then type: a next page may still be the name's. */
	if (strcmp(trunc, "true") == 0) {
		if (text_of(kid(top, "NextRecordName"), n, sizeof(n)) == -1 ||
		    text_of(kid(top, "NextRecordType"), t, sizeof(t)) == -1) {
			snprintf(err, errlen, "truncated without "
			    "NextRecordName and NextRecordType");
			goto out;
		}
		if (strcasecmp(n, name) == 0 && (k = set_index(t)) != -1) {
			if (kid(top, "NextRecordIdentifier") != NULL) {
				snprintf(err, errlen, "%s has record sets with "
				    "a routing policy: only simple record "
				    "sets are managed", name);
				goto out;
			}
			pg->more = 1;
			snprintf(pg->next_type, sizeof(pg->next_type), "%s",
			    rrtype_str((enum rrtype)k));
		} else if (strcasecmp(n, name) == 0 && strcmp(t, "AAAA") > 0 &&
		    strcmp(t, "CNAME") < 0) {
			/* CAA sorts between: the CNAME may still follow. */
			pg->more = 1;
			snprintf(pg->next_type, sizeof(pg->next_type), "CNAME");
		}
	}
	rv = 0;
out:
	if (rv == -1)
		text_printable(err);
	xmlFreeDoc(doc);
	return rv;
}

/* The answer to a change: ChangeInfo with an Id and a Status. */
static int
parse_change(const char *buf, size_t len, char *id, size_t idlen,
    char *err, size_t errlen)
{
	xmlDoc *doc;
	xmlNode *top, *ci;
	char st[32];
	int rv = -1;

	if ((doc = xml_read(buf, len, "ChangeResourceRecordSetsResponse",
	    &top, err, errlen)) == NULL)
		return -1;
	ci = kid(top, "ChangeInfo");
	if (text_of(kid(ci, "Id"), id, idlen) == -1 || id[0] == '\0' ||
	    text_of(kid(ci, "Status"), st, sizeof(st)) == -1 ||
	    (strcmp(st, "PENDING") != 0 && strcmp(st, "INSYNC") != 0)) {
		snprintf(err, errlen, "no ChangeInfo with an Id and a Status "
		    "PENDING or INSYNC");
		goto out;
	}
	text_printable(id);
	rv = 0;
out:
	xmlFreeDoc(doc);
	return rv;
}

/* ------------------------------------------------------------ requests */

static void
xml_add(xmlNode *parent, xmlNs *ns, const char *name, const char *text)
{
	(void)xmlNewTextChild(parent, ns, (const xmlChar *)name,
	    (const xmlChar *)text);
}

static void
add_change(xmlNode *changes, xmlNs *ns, const char *action,
    const char *name, const char *type, long ttl, char *const *values,
    size_t n)
{
	xmlNode *c, *rrs, *recs, *rr;
	char num[24];
	size_t i;

	c = xmlNewChild(changes, ns, (const xmlChar *)"Change", NULL);
	xml_add(c, ns, "Action", action);
	rrs = xmlNewChild(c, ns, (const xmlChar *)"ResourceRecordSet", NULL);
	xml_add(rrs, ns, "Name", name);
	xml_add(rrs, ns, "Type", type);
	snprintf(num, sizeof(num), "%ld", ttl);
	xml_add(rrs, ns, "TTL", num);
	recs = xmlNewChild(rrs, ns, (const xmlChar *)"ResourceRecords", NULL);
	for (i = 0; i < n; i++) {
		rr = xmlNewChild(recs, ns, (const xmlChar *)"ResourceRecord",
		    NULL);
		xml_add(rr, ns, "Value", values[i]);
	}
}

/* Whether set is what was listed (c) already. */
static int
listed_same(const struct r53set *c, const struct rrset *set)
{
	if (c->nvalues == 0 || c->ttl != set->ttl)
		return 0;
	if (set->type == RR_CNAME)
		return c->target != NULL && set->target != NULL &&
		    strcmp(c->target, set->target) == 0;
	return addrset_equal(&c->addrs, &set->addrs);
}

/* The UPSERT that makes set's type of name hold set's records. */
static void
add_upsert(xmlNode *changes, xmlNs *ns, const char *name,
    const struct rrset *set)
{
	char **vals, *fq;
	size_t j;

	if (set->type == RR_CNAME) {
		/* Fully qualified, whatever Route 53 would assume. */
		fq = xconcat(set->target, ".", "", "", "");
		add_change(changes, ns, "UPSERT", name, "CNAME", set->ttl,
		    &fq, 1);
		free(fq);
		return;
	}
	vals = xcalloc(set->addrs.n, sizeof(*vals));
	for (j = 0; j < set->addrs.n; j++)
		vals[j] = (char *)set->addrs.v[j].s;
	add_change(changes, ns, "UPSERT", name, rrtype_str(set->type),
	    set->ttl, vals, set->addrs.n);
	free(vals);
}

/*
 * The change batch that makes the sets of name what sets says, given
 * what was listed (cur); NULL when nothing differs.  malloc'd.  Every
 * DELETE before every UPSERT: the batch is applied whole, but it reads
 * in the order that never leaves the name with a CNAME beside addresses.
 */
static char *
change_body(const char *name, const struct rrset *sets, size_t nsets,
    const struct r53set cur[RR_NTYPES])
{
	xmlDoc *doc;
	xmlNode *root, *batch, *changes;
	xmlNs *ns;
	xmlChar *out = NULL;
	char *body = NULL;
	const struct r53set *c;
	size_t i;
	int size = 0, n = 0;

	doc = xmlNewDoc((const xmlChar *)"1.0");
	root = xmlNewNode(NULL, (const xmlChar *)
	    "ChangeResourceRecordSetsRequest");
	ns = xmlNewNs(root, (const xmlChar *)R53_NS, NULL);
	xmlSetNs(root, ns);
	(void)xmlDocSetRootElement(doc, root);
	batch = xmlNewChild(root, ns, (const xmlChar *)"ChangeBatch", NULL);
	xml_add(batch, ns, "Comment", "ddup-check");
	changes = xmlNewChild(batch, ns, (const xmlChar *)"Changes", NULL);
	for (i = 0; i < nsets; i++) {
		c = &cur[sets[i].type];
		if (rrset_empty(&sets[i]) && c->nvalues > 0) {
			add_change(changes, ns, "DELETE", name,
			    rrtype_str(sets[i].type), c->ttl, c->values,
			    c->nvalues);
			n++;
		}
	}
	for (i = 0; i < nsets; i++) {
		if (rrset_empty(&sets[i]) ||
		    listed_same(&cur[sets[i].type], &sets[i]))
			continue;
		add_upsert(changes, ns, name, &sets[i]);
		n++;
	}
	if (n > 0) {
		xmlDocDumpMemoryEnc(doc, &out, &size, "UTF-8");
		if (out != NULL && size > 0) {
			body = xmalloc((size_t)size + 1);
			memcpy(body, out, (size_t)size);
			body[size] = '\0';
		}
		xmlFree(out);
	}
	xmlFreeDoc(doc);
	return body;
}

/*
 * One signed call; success is a 200 with the answer in rs (freed by the
 * caller either way).  Route 53 says what went wrong in the answer's
 * Code, which decides the class where the status alone does not (a
 * throttled call is a 400).
 */
static enum perr
r53_call(struct r53 *r, const char *method, const char *url,
    const char *body, struct http_resp *rs, char *err, size_t errlen)
{
	static const char *const ratelimit[] = { "Throttling",
	    "PriorRequestNotComplete", NULL };
	static const char *const auth[] = { "SignatureDoesNotMatch",
	    "AccessDenied", "InvalidClientTokenId", "ExpiredToken",
	    "IncompleteSignature", "MissingAuthenticationToken", NULL };
	const char *hdrs[3];
	struct http_req rq = {
		.method = method, .url = url, .headers = hdrs, .body = body,
		.want = 200, .err_ctype = "text/xml",
		.aws_sigv4 = r->sigv4, .userpwd = r->userpwd,
	};
	char code[128], text[8];
	size_t h = 0, i;
	enum perr e;

	if (r->token_hdr != NULL)
		hdrs[h++] = r->token_hdr;
	if (body != NULL)
		hdrs[h++] = "Content-Type: text/xml";
	hdrs[h] = NULL;
	if ((e = api_call(&r->api, &rq, rs, err, errlen)) == PERR_OK ||
	    rs->status < 400 || r53_error(rs->body, rs->len, code,
	    sizeof(code), text, sizeof(text)) == -1)
		goto out;
	for (i = 0; ratelimit[i] != NULL; i++)
		if (strcmp(code, ratelimit[i]) == 0)
			e = PERR_RATELIMIT;
	for (i = 0; auth[i] != NULL; i++)
		if (strcmp(code, auth[i]) == 0)
			e = PERR_AUTH;
	if (strcmp(code, "InvalidChangeBatch") == 0 ||
	    strcmp(code, "InvalidInput") == 0)
		e = PERR_INVALID;
	if (strcmp(code, "NoSuchHostedZone") == 0) {
		e = PERR_NOTFOUND;
		str_append(err, errlen, " (check hostedZoneId)");
	}
out:
	if (e == PERR_AUTH)
		str_append(err, errlen, " (check accessKeyId, secretAccessKey, "
		    "sessionToken and the key's IAM policy)");
	return e;
}

/*
 * The list of the sets from name (absolute, lower case) and type on.  The
 * parameters go in the order of SigV4's canonical query: libcurl 7.88
 * signs the query as it is written, Route 53 checks it sorted.
 */
static char *
list_url(const struct r53 *r, const char *name, const char *type)
{
	char *esc, *url;
	size_t len;

	if ((esc = curl_easy_escape(NULL, name, 0)) == NULL)
		return NULL;
	len = strlen(r->rrset_url) + strlen(esc) + strlen(type) + 64;
	url = xmalloc(len);
	snprintf(url, len, "%s?maxitems=%s&name=%s&type=%s", r->rrset_url,
	    R53_PAGE, esc, type);
	curl_free(esc);
	return url;
}

/* The A, AAAA and CNAME sets of name, listed page after page. */
static enum perr
r53_list(struct r53 *r, const char *name, struct r53set cur[RR_NTYPES], char *err,
    size_t errlen)
{
	struct r53page pg = { .more = 1, .next_type = "A" };
	struct http_resp rs;
	char why[256], *url = NULL;
	int pages;
	enum perr e = PERR_OK;

	memset(&rs, 0, sizeof(rs));
	for (pages = 0; pg.more && e == PERR_OK; pages++) {
		if (pages == R53_PAGES_MAX) {
			snprintf(err, errlen, "Route 53 at %s: more than %d "
			    "pages of record sets at %s", r->rrset_url,
			    R53_PAGES_MAX, name);
			e = PERR_TEMP;
			break;
		}
		free(url);
		if ((url = list_url(r, name, pg.next_type)) == NULL) {
			snprintf(err, errlen, "Route 53: out of memory");
			e = PERR_TEMP;
			break;
		}
		http_resp_free(&rs);
		if ((e = r53_call(r, "GET", url, NULL, &rs, err, errlen)) !=
		    PERR_OK)
			break;
		if (parse_list(rs.body, rs.len, name, cur, &pg, why,
		    sizeof(why)) == -1) {
			snprintf(err, errlen, "Route 53 at %s: unexpected "
			    "answer: %s", url, why);
			text_printable(err);
			e = PERR_INVALID;
		}
	}
	http_resp_free(&rs);
	free(url);
	return e;
}

/* ---------------------------------------------------------- the provider */

static int
route53_check(const struct provider_cfg *pc, const char **key, char *err,
    size_t errlen)
{
	const char *v;

	*key = "accessKeyId";
	v = provider_cfg_get(pc, "accessKeyId");
	/* It goes before the ':' of libcurl's user:password. */
	if (v[0] == '\0' || strlen(v) > 128 ||
	    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789") != strlen(v)) {
		snprintf(err, errlen, "accessKeyId is empty or not letters and "
		    "digits (such as AKIAIOSFODNN7EXAMPLE)");
		return -1;
	}
	*key = "secretAccessKey";
	v = provider_cfg_get(pc, "secretAccessKey");
	if (v[0] == '\0' || strpbrk(v, "\r\n") != NULL) {
		snprintf(err, errlen, "secretAccessKey is empty or has a line "
		    "break");
		return -1;
	}
	*key = "sessionToken";
	v = provider_cfg_get(pc, "sessionToken");
	/* Never echoed; a line break would smuggle in a header. */
	if (v != NULL && (v[0] == '\0' || strpbrk(v, "\r\n") != NULL)) {
		snprintf(err, errlen, "sessionToken is empty or has a line "
		    "break");
		return -1;
	}
	*key = "hostedZoneId";
	v = provider_cfg_get(pc, "hostedZoneId");
	if (strncmp(v, "/hostedzone/", 12) == 0)
		v += 12;
	if (v[0] == '\0' || strlen(v) > R53_ZONE_ID_MAX ||
	    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != strlen(v)) {
		snprintf(err, errlen, "hostedZoneId: \"%s\" is not a hosted "
		    "zone id (upper-case letters and digits, such as "
		    "Z1D633PJN98FT9)", provider_cfg_get(pc, "hostedZoneId"));
		text_printable(err);
		return -1;
	}
	*key = "region";
	v = provider_cfg_get(pc, "region");
	if (v != NULL && (v[0] == '\0' || strlen(v) > 32 ||
	    strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(v))) {
		snprintf(err, errlen, "region: \"%s\" is not an AWS region "
		    "(such as us-east-1)", v);
		text_printable(err);
		return -1;
	}
	return api_check_url_timeout(pc, key, err, errlen);
}

static void
route53_free(void *priv)
{
	struct r53 *r = priv;

	if (r == NULL)
		return;
	free(r->rrset_url);
	free(r->sigv4);
	free_secret(r->userpwd);
	free_secret(r->token_hdr);
	api_free(&r->api);
}

static char *
joined(const char *a, const char *b, const char *c)
{
	size_t len = strlen(a) + strlen(b) + strlen(c) + 1;
	char *s = xmalloc(len);

	snprintf(s, len, "%s%s%s", a, b, c);
	return s;
}

static void *
route53_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct r53 *r;
	const char *v, *id;

	if ((r = api_create(sizeof(*r), &r53_api, pc, err, errlen)) == NULL)
		return NULL;
	id = provider_cfg_get(pc, "hostedZoneId");
	if (strncmp(id, "/hostedzone/", 12) == 0)
		id += 12;
	r->rrset_url = xconcat(r->api.base, "/2013-04-01/hostedzone/", id,
	    "/rrset", "");
	v = provider_cfg_get(pc, "region");
	r->sigv4 = joined("aws:amz:", v != NULL ? v : "us-east-1",
	    ":route53");
	r->userpwd = joined(provider_cfg_get(pc, "accessKeyId"), ":",
	    provider_cfg_get(pc, "secretAccessKey"));
	if ((v = provider_cfg_get(pc, "sessionToken")) != NULL)
		r->token_hdr = joined("X-Amz-Security-Token: ", v, "");
	return r;
}

static enum perr
route53_read(void *priv, const char *fqdn, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	struct r53 *r = priv;
	struct r53set cur[RR_NTYPES];
	const struct r53set *c;
	char *name;
	size_t i;
	int k;
	enum perr e;

	api_begin(&r->api);
	memset(cur, 0, sizeof(cur));
	for (i = 0; i < nsets; i++)
		rrset_clear(&sets[i]);
	name = api_absname(fqdn);
	if ((e = r53_list(r, name, cur, err, errlen)) == PERR_OK)
		for (i = 0; i < nsets; i++) {
			c = &cur[sets[i].type];
			if (c->nvalues == 0)
				continue;
			sets[i].ttl = c->ttl;
			addrset_copy(&sets[i].addrs, &c->addrs);
			if (c->target != NULL)
				sets[i].target = xstrdup(c->target);
		}
	for (k = 0; k < RR_NTYPES; k++)
		r53set_clear(&cur[k]);
	free(name);
	return e;
}

static enum perr
route53_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	struct r53 *r = priv;
	struct r53set cur[RR_NTYPES];
	struct http_resp rs;
	char *name, *body = NULL, *url = NULL, why[256], id[128];
	int k;
	enum perr e;

	api_begin(&r->api);
	memset(cur, 0, sizeof(cur));
	memset(&rs, 0, sizeof(rs));
	name = api_absname(fqdn);
	/* A DELETE must name the set exactly as it is now. */
	if ((e = r53_list(r, name, cur, err, errlen)) != PERR_OK)
		goto out;
	if ((body = change_body(name, sets, nsets, cur)) == NULL)
		goto out;
	url = joined(r->rrset_url, "/", "");
	if ((e = r53_call(r, "POST", url, body, &rs, err, errlen)) ==
	    PERR_OK && parse_change(rs.body, rs.len, id, sizeof(id), why,
	    sizeof(why)) == -1) {
		snprintf(err, errlen, "Route 53 at %s: unexpected answer: %s",
		    url, why);
		text_printable(err);
		e = PERR_TEMP;
	}
out:
	http_resp_free(&rs);
	for (k = 0; k < RR_NTYPES; k++)
		r53set_clear(&cur[k]);
	free(body);
	free(url);
	free(name);
	return e;
}

const struct provider_ops route53_ops = {
	.type = "route53",
	.keys = route53_keys,
	/* One change batch: all or nothing. */
	.caps = PCAP_CNAME | PCAP_ATOMIC,
	.ttl_min = 0,
	.ttl_max = 2147483647,
	.zone_key = NULL,
	.check = route53_check,
	.create = route53_create,
	.read = route53_read,
	.replace = route53_replace,
	.free = route53_free,
};
