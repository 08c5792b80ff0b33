/*
 * A domain's policy (ddup.ini(5), DOMAINS and POLICIES): the built-in
 * defaults, then the domain keys at the top of the file, then those of
 * the [domain], each read by its type from the table in config_keys.c;
 * the pairs of keys that cannot go together; and where a location comes
 * in a domain's order of preference.
 */

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_int.h"
#include "util.h"


void
cfg_hc_defaults(struct hc *h)
{
	memset(h, 0, sizeof(*h));
	h->p.ttl = 120;
	h->p.timeout_ms = 3000;
	h->p.attempts = 2;
	h->p.recover_after = 1;
	h->p.expect.n = 1;
	h->p.expect.r[0].lo = 200;
	h->p.expect.r[0].hi = 299;
	h->p.min_healthy = 1;
	h->p.cert_warn_ms = 14LL * 86400 * 1000;
}

int
cfg_hc_line(const struct hc *h, const char *canon)
{
	size_t j;

	for (j = 0; j < cfg_ndom_keys; j++)
		if (strcmp(cfg_dom_keys[j].name, canon) == 0)
			return h->line[j];
	return 0;
}

static char **
strv_copy(char *const *v, size_t n)
{
	char	**c;
	size_t	  i;

	if (n == 0)
		return NULL;
	c = xcalloc(n, sizeof(*c));
	for (i = 0; i < n; i++)
		c[i] = xstrdup(v[i]);
	return c;
}

static void
strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The same for secrets: wiped before they are freed. */
static void
secretv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		explicit_bzero(v[i], strlen(v[i]));
	strv_free(v, n);
}

void
cfg_policy_free(struct domain_policy *p)
{
	free(p->expect_body);
	free(p->location);
	free(p->user_agent);
	strv_free(p->failover, p->nfailover);
	secretv_free(p->headers, p->nheaders);
	addrset_free(&p->fallback);
	p->expect_body = p->location = p->user_agent = NULL;
	p->failover = p->headers = NULL;
	p->nfailover = p->nheaders = 0;
}

void
cfg_hc_copy(struct hc *dst, const struct hc *src)
{
	*dst = *src;
	dst->p.expect_body = src->p.expect_body != NULL ?
	    xstrdup(src->p.expect_body) : NULL;
	dst->p.location = src->p.location != NULL ?
	    xstrdup(src->p.location) : NULL;
	dst->p.failover = strv_copy(src->p.failover, src->p.nfailover);
	dst->p.user_agent = src->p.user_agent != NULL ?
	    xstrdup(src->p.user_agent) : NULL;
	dst->p.headers = strv_copy(src->p.headers, src->p.nheaders);
	memset(&dst->p.fallback, 0, sizeof(dst->p.fallback));
	addrset_copy(&dst->p.fallback, &src->p.fallback);
}

/*
 * Every `header` of section s (repeatable), which replace those that h
 * has from the top of the file.  Returns the line of the first, or -1
 * when s has none (h keeps its own).
 */
static int
parse_headers(struct ctx *x, const struct rsec *s, struct hc *h)
{
	char	**v, *hdr;
	size_t	  i, n = 0, nv = 0;
	int	  line = 0;

	for (i = 0; i < s->nkeys; i++)
		if (s->keys[i].canon != NULL &&
		    strcmp(s->keys[i].canon, "header") == 0)
			n++;
	if (n == 0)
		return -1;
	v = xcalloc(n, sizeof(*v));
	for (i = 0; i < s->nkeys; i++) {
		const struct rkey *k = &s->keys[i];

		if (k->canon == NULL || strcmp(k->canon, "header") != 0)
			continue;
		if (line == 0)
			line = k->line;
		if (nv == HC_HEADERS_MAX) {
			cfg_problem(x, k->line, 0, "more than %d 'header' "
			    "lines", HC_HEADERS_MAX);
			break;
		}
		if (k->value[0] == '\0')
			cfg_problem(x, k->line, 0, "'header' has no value");
		else if ((hdr = cfg_header(x, NULL, k, 1)) != NULL)
			v[nv++] = hdr;
	}
	secretv_free(h->p.headers, h->p.nheaders);
	h->p.headers = v;
	h->p.nheaders = nv;
	return line;
}

/* A list of locations, split at commas and white space; -1: reported. */
static int
parse_locations(struct ctx *x, const struct rkey *k, char ***out, size_t *n)
{
	char	 *copy, *w, *save = NULL, **v = NULL;
	size_t	  nv = 0, i;
	int	  rc = 0;

	copy = xstrdup(k->value);
	v = xcalloc(strlen(copy) / 2 + 1, sizeof(*v));
	for (w = strtok_r(copy, ", \t", &save); w != NULL;
	    w = strtok_r(NULL, ", \t", &save)) {
		if (!cfg_location_ok(w)) {
			cfg_problem(x, k->line, 0, "'%s': bad location '%s' "
			    "(letters, digits, '-', '_' and '.')", k->canon, w);
			rc = -1;
			continue;
		}
		for (i = 0; i < nv; i++)
			if (strcasecmp(v[i], w) == 0)
				break;
		if (i < nv) {
			cfg_problem(x, k->line, 0, "'%s': location '%s' listed "
			    "twice", k->canon, w);
			rc = -1;
			continue;
		}
		v[nv++] = xstrdup(w);
	}
	if (rc == 0 && nv == 0) {
		cfg_problem(x, k->line, 0, "'%s' has no location", k->canon);
		rc = -1;
	}
	free(copy);
	if (rc == -1) {
		strv_free(v, nv);
		return -1;
	}
	*out = v;
	*n = nv;
	return 0;
}

/*
 * fallback: addresses split at commas and white space, each once, in
 * their canonical spelling (the set publication compares); -1: reported.
 */
static int
parse_addrs(struct ctx *x, const struct rkey *k, struct addrset *out)
{
	struct addrset	 set;
	char		*copy, *w, *save = NULL;
	int		 rc = 0;

	memset(&set, 0, sizeof(set));
	copy = xstrdup(k->value);
	for (w = strtok_r(copy, ", \t", &save); w != NULL;
	    w = strtok_r(NULL, ", \t", &save)) {
		if (addrset_contains(&set, w)) {
			cfg_problem(x, k->line, 0, "'%s': address %s listed "
			    "twice", k->canon, w);
			rc = -1;
		} else if (addrset_add(&set, w) == -1) {
			cfg_problem(x, k->line, 0, "'%s': '%s' is not an IPv4 "
			    "or IPv6 address", k->canon, w);
			rc = -1;
		}
	}
	if (rc == 0 && set.n == 0) {
		cfg_problem(x, k->line, 0, "'%s' has no address", k->canon);
		rc = -1;
	}
	free(copy);
	if (rc == -1) {
		addrset_free(&set);
		return -1;
	}
	addrset_free(out);
	*out = set;
	return 0;
}

/* Key k of entry dk into h->p; -1 when its value was reported. */
static int
parse_dom_key(struct ctx *x, const struct cfg_dom_key *dk, const struct rkey *k,
    struct hc *h)
{
	void	 *field = (char *)&h->p + dk->off;
	char	**sp = field, **v;
	size_t	  n, i;
	long long ms;
	long	  l;

	switch (dk->type) {
	case DK_LONG:
		if (parse_long(k->value, dk->min, 2147483647, &l) == -1) {
			cfg_problem(x, k->line, 0, "'%s': expected an integer "
			    "from %ld to %ld, not '%s'", dk->name, dk->min,
			    2147483647L, k->value);
			return -1;
		}
		*(long *)field = l;
		return 0;
	case DK_DURATION:
		return cfg_get_duration(x, k, field);
	case DK_DURATION0:
		if (parse_duration(k->value, &ms) == 0 && ms == 0) {
			*(long long *)field = 0;	/* off */
			return 0;
		}
		return cfg_get_duration(x, k, field);
	case DK_LINE:
		if (!cfg_text_ok(k->value)) {
			cfg_problem(x, k->line, 0, "'%s' must be one line of "
			    "printable text (a control character or invalid "
			    "UTF-8)", dk->name);
			return -1;
		}
		free(*sp);
		*sp = xstrdup(k->value);
		return 0;
	case DK_HEADERS:
		return -1;	/* every line of them: parse_headers() */
	case DK_WORD:
		for (i = 0; dk->words[i] != NULL; i++)
			if (strcasecmp(k->value, dk->words[i]) == 0) {
				*(int *)field = (int)i;
				return 0;
			}
		cfg_problem(x, k->line, 0, "'%s': expected %s%s%s or %s, not "
		    "'%s'", dk->name, dk->words[0], dk->words[2] != NULL ?
		    ", " : "", dk->words[2] != NULL ? dk->words[1] : "",
		    dk->words[2] != NULL ? dk->words[2] : dk->words[1],
		    k->value);
		return -1;
	case DK_ADDRS:
		return parse_addrs(x, k, field);
	case DK_EXPECT:
		if (parse_expect(k->value, field) == -1) {
			cfg_problem(x, k->line, 0, "'expectStatus': expected a "
			    "status code (100-599), a class such as 2xx, or a "
			    "list of them, not '%s'", k->value);
			return -1;
		}
		return 0;
	case DK_LOCATION:
		if (!cfg_location_ok(k->value)) {
			cfg_problem(x, k->line, 0, "'%s': bad location '%s' "
			    "(letters, digits, '-', '_' and '.')", dk->name,
			    k->value);
			return -1;
		}
		/* FALLTHROUGH */
	case DK_TEXT:
		free(*sp);
		*sp = xstrdup(k->value);
		return 0;
	case DK_LOCATIONS:
		if (parse_locations(x, k, &v, &n) == -1)
			return -1;
		strv_free(h->p.failover, h->p.nfailover);
		h->p.failover = v;
		h->p.nfailover = n;
		return 0;
	}
	return -1;
}

/* The domain keys of section s, over what h holds already. */
void
cfg_parse_hc(struct ctx *x, const struct rsec *s, struct hc *h)
{
	const struct rkey *k;
	size_t j;

	int line;

	for (j = 0; j < cfg_ndom_keys; j++)
		if (cfg_dom_keys[j].type == DK_HEADERS) {
			if ((line = parse_headers(x, s, h)) > 0)
				h->line[j] = line;
		} else if ((k = cfg_get(x, s, cfg_dom_keys[j].name)) != NULL &&
		    parse_dom_key(x, &cfg_dom_keys[j], k, h) == 0)
			h->line[j] = k->line;
}

/*
 * HEAD with expectBody can never pass.  Reported at the later of the two
 * keys, the one that made the pair; after is the line of the section
 * header, so that a pair made at the top of the file is reported there
 * once and not again by each domain that inherits it.
 */
static void
check_head_body(struct ctx *x, const struct hc *h, int after)
{
	int line;

	int mline = cfg_hc_line(h, "method"), bline = cfg_hc_line(h,
	    "expectBody");

	if (!h->p.head || h->p.expect_body == NULL)
		return;
	line = mline > bline ? mline : bline;
	if (line > after)
		cfg_problem(x, line, 0, "expectBody needs method GET (a HEAD "
		    "answer has no body)");
}

/*
 * failoverLocations needs a location to fall back from, and may not
 * name it (ddup.ini(5), POLICIES).  Reported, as the pair above, at the later of the
 * two keys when it comes after `after`.
 */
static void
check_locations(struct ctx *x, const struct hc *h, int after)
{
	int	 lline = cfg_hc_line(h, "location");
	int	 fline = cfg_hc_line(h, "failoverLocations");
	int	 line = lline > fline ? lline : fline;
	size_t	 i;

	if (h->p.nfailover == 0 || line <= after)
		return;
	if (h->p.location == NULL) {
		cfg_problem(x, fline, 0, "failoverLocations needs a location "
		    "(the one whose endpoints are preferred)");
		return;
	}
	for (i = 0; i < h->p.nfailover; i++)
		if (strcasecmp(h->p.failover[i], h->p.location) == 0)
			cfg_problem(x, line, 0, "failoverLocations lists '%s', "
			    "the domain's own location", h->p.failover[i]);
}

void
cfg_check_policy(struct ctx *x, const struct hc *h, int after)
{
	check_head_body(x, h, after);
	check_locations(x, h, after);
}

/* Where loc comes in p's order of preference (struct endpoint_cfg). */
long
cfg_location_rank(const struct domain_policy *p, const char *loc)
{
	size_t i;

	if (p->location == NULL)
		return 0;
	if (loc != NULL && strcasecmp(loc, p->location) == 0)
		return 0;
	for (i = 0; loc != NULL && i < p->nfailover; i++)
		if (strcasecmp(loc, p->failover[i]) == 0)
			return (long)i + 1;
	return (long)p->nfailover + 1;
}
