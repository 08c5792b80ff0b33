/*
 * The [endpoint] sections of one domain (ddup.ini(5), ENDPOINTS): each
 * one's url or check program with what its check takes, address or
 * CNAME target, host, priority, location and name, no two with the same address or name, and the tiers they form
 * (priority, then location) checked as a whole.
 */

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config_int.h"
#include "provider.h"
#include "util.h"

/* The placeholders a check program's words may hold (ddup.ini(5)). */
static const char *const placeholders[] = { "ip", "host", "name", "domain",
    NULL };

/*
 * An unknown "{word}" in a program's line: a typo ({IP}, {hostname})
 * would reach the program as written and fail every check.  Returns
 * the first, its length with the braces in *len, or NULL.
 */
static const char *
bad_placeholder(const char *v, size_t *len)
{
	const char *p, *end;
	size_t i, n;

	for (p = strchr(v, '{'); p != NULL; p = strchr(p + 1, '{')) {
		for (end = p + 1; *end == '_' || (*end >= 'a' && *end <= 'z') ||
		    (*end >= 'A' && *end <= 'Z') || (*end >= '0' && *end <= '9');
		    end++)
			;
		if (*end != '}' || end == p + 1)
			continue;
		n = (size_t)(end - p - 1);
		for (i = 0; placeholders[i] != NULL; i++)
			if (strlen(placeholders[i]) == n &&
			    strncmp(placeholders[i], p + 1, n) == 0)
				break;
		if (placeholders[i] == NULL) {
			*len = n + 2;
			return p;
		}
	}
	return NULL;
}

/* `command`: an absolute path and its words, placeholders known. */
static void
build_command(struct ctx *x, const struct rkey *k, struct endpoint_cfg *e)
{
	const char *p = k->value, *bad;
	size_t len, n = 0;

	while (word_next(&p, &len) != NULL)
		n++;
	if (!cfg_text_ok(k->value))
		cfg_problem(x, k->line, 0, "command: a control character or "
		    "invalid UTF-8");
	else if (k->value[strspn(k->value, " \t")] != '/')
		cfg_problem(x, k->line, 0, "command \"%s\" is not an absolute "
		    "path", k->value);
	else if (n > CHECK_ARGV_MAX)
		cfg_problem(x, k->line, 0, "command has %zu words, more than "
		    "%d", n, CHECK_ARGV_MAX);
	else if ((bad = bad_placeholder(k->value, &len)) != NULL)
		cfg_problem(x, k->line, 0, "command: unknown placeholder "
		    "%.*s (known: {ip}, {host}, {name}, {domain})", (int)len,
		    bad);
	else
		e->command = xstrdup(k->value);
}

/* `url`: one a check type takes, printable, without a password. */
static void
build_url(struct ctx *x, const struct rkey *k, struct endpoint_cfg *e)
{
	char err[256];

	/*
	 * Logs, status and the state file show the url: refused as
	 * baseUrl is, and not quoted.
	 */
	if (cfg_url_has_userinfo(k->value))
		cfg_problem(x, k->line, 0, "url must not hold a user name or "
		    "password (logs and status show the url)");
	else if (!cfg_text_ok(k->value))
		cfg_problem(x, k->line, 0, "bad url '%s': a control character "
		    "or invalid UTF-8", k->value);
	else if (check_url_ok(k->value, err, sizeof(err)) == 0)
		e->url = xstrdup(k->value);
	else
		cfg_problem(x, k->line, 0, "bad url '%s': %s", k->value, err);
}

/* `send` and `expect`, of a check that takes them (a stream's). */
static void
build_stream(struct ctx *x, const struct rsec *s, struct endpoint_cfg *e)
{
	unsigned takes = check_takes(e->url);
	const struct rkey *k;
	char err[256], buf[CHECK_SEND_MAX];
	size_t len;

	if ((k = cfg_get(x, s, "send")) != NULL) {
		if ((takes & CHECK_TAKES_STREAM) == 0)
			cfg_problem(x, k->line, 0, "'send' is for tcp:// and "
			    "tls:// checks only");
		else if (config_send_decode(k->value, buf, sizeof(buf), &len,
		    err, sizeof(err)) == -1)
			cfg_problem(x, k->line, 0, "send: %s", err);
		else {
			e->send = xmalloc(len + 1);
			memcpy(e->send, buf, len);
			e->send[len] = '\0';
			e->send_len = len;
		}
	}
	if ((k = cfg_get(x, s, "expect")) != NULL) {
		if ((takes & CHECK_TAKES_STREAM) == 0)
			cfg_problem(x, k->line, 0, "'expect' is for tcp:// and "
			    "tls:// checks only (HTTP checks take expectBody)");
		else if (!cfg_text_ok(k->value))
			cfg_problem(x, k->line, 0, "expect: a control character "
			    "or invalid UTF-8");
		else
			e->expect_text = xstrdup(k->value);
	}
}

/*
 * `url` or `command`, exactly one of them, then what the check they
 * make takes.  A bad url says nothing of what it takes: send and expect
 * wait for it to be mended.
 */
static void
build_target(struct ctx *x, const struct rsec *s, struct endpoint_cfg *e)
{
	const struct rkey *k;
	int hasurl = cfg_has_key(s, "url"), hascmd = cfg_has_key(s, "command");

	if (hasurl && hascmd) {
		cfg_problem(x, s->line, 0, "[endpoint] has both 'url' and "
		    "'command' (one of them says what to check)");
		return;
	}
	if (!hasurl && !hascmd) {
		cfg_problem(x, s->line, 0, "[endpoint] has no 'url' (or "
		    "'command')");
		return;
	}
	if ((k = cfg_get(x, s, "url")) != NULL)
		build_url(x, k, e);
	else if ((k = cfg_get(x, s, "command")) != NULL)
		build_command(x, k, e);
	if (e->url != NULL || e->command != NULL)
		build_stream(x, s, e);
}

/* The provider's name and type, for messages; NULL when it is unknown. */
static const struct provider_ops *
domain_ops(const struct domain_cfg *d)
{
	return d->provider != NULL ? d->provider->ops : NULL;
}

/* `cname`: instead of ip, only on a provider that can publish one. */
static void
build_cname(struct ctx *x, const struct rsec *s, const struct domain_cfg *d,
    struct endpoint_cfg *e, int *line)
{
	const struct provider_ops *ops = domain_ops(d);
	const struct rkey *k;
	char *t;

	if ((k = cfg_get(x, s, "cname")) == NULL)
		return;
	*line = k->line;
	if (cfg_has_key(s, "ip")) {
		cfg_problem(x, k->line, 0, "an endpoint has 'ip' or 'cname', "
		    "not both");
		return;
	}
	if (ops != NULL && (ops->caps & PCAP_CNAME) == 0) {
		cfg_problem(x, k->line, 0, "cname: provider '%s' (%s) cannot "
		    "publish a CNAME", d->provider->name, ops->type);
		return;
	}
	t = xstrdup(k->value);
	if (!cfg_dns_name(t, 1) || strchr(t, '.') == NULL) {
		cfg_problem(x, k->line, 0, "bad cname '%s': not a host name",
		    k->value);
		free(t);
	} else if (d->name != NULL && strcmp(t, d->name) == 0) {
		cfg_problem(x, k->line, 0, "cname %s is the domain itself", t);
		free(t);
	} else
		e->cname = t;
}

/* `proxied`: the endpoint's, else its provider's, where it has one. */
static void
build_proxied(struct ctx *x, const struct rsec *s, const struct domain_cfg *d,
    struct endpoint_cfg *e)
{
	const struct provider_ops *ops = domain_ops(d);
	const struct rkey *k;
	const char *v;

	if (ops != NULL && (ops->caps & PCAP_PROXIED) != 0 &&
	    (v = provider_cfg_get(d->provider, "proxied")) != NULL)
		(void)parse_bool(v, &e->proxied);	/* checked by the provider */
	if ((k = cfg_get(x, s, "proxied")) == NULL)
		return;
	if (ops != NULL && (ops->caps & PCAP_PROXIED) == 0)
		cfg_problem(x, k->line, 0, "proxied: provider '%s' (%s) has no "
		    "proxied records", d->provider->name, ops->type);
	else if (parse_bool(k->value, &e->proxied) == -1)
		cfg_problem(x, k->line, 0, "proxied: '%s' is not true or false",
		    k->value);
}

/* Endpoint s of domain d; ips and names: those of d so far, their lines. */
static void
build_endpoint(struct ctx *x, struct rsec *s, struct domain_cfg *d,
    struct nameset *ips, struct nameset *names)
{
	struct endpoint_cfg *e = &d->eps[d->neps];
	const struct rkey *k;
	char *host;
	int ipline, nameline, first;

	cfg_resolve_keys(x, s);
	e->line = s->line;
	ipline = nameline = s->line;
	build_target(x, s, e);
	if ((k = cfg_get(x, s, "ip")) != NULL) {
		ipline = k->line;
		if (addr_parse(k->value, &e->ip) == -1)
			cfg_problem(x, k->line, 0, "bad IP address '%s'",
			    k->value);
	}
	build_cname(x, s, d, e, &ipline);
	if (!cfg_has_key(s, "ip") && !cfg_has_key(s, "cname"))
		cfg_problem(x, s->line, 0, "[endpoint] has no 'ip'");
	build_proxied(x, s, d, e);
	if ((k = cfg_get(x, s, "host")) != NULL && !cfg_bare_host(k->value))
		cfg_problem(x, k->line, 0, "host must be a host name without "
		    "port");
	else if (k != NULL) {
		host = xstrdup(k->value);
		if (cfg_dns_name(host, 0))
			e->host = host;
		else {
			cfg_problem(x, k->line, 0, "bad host name '%s'",
			    k->value);
			free(host);
		}
	}
	if ((k = cfg_get(x, s, "priority")) != NULL)
		cfg_get_long(x, k, 0, 2147483647, &e->priority);
	if ((k = cfg_get(x, s, "location")) != NULL) {
		if (cfg_location_ok(k->value))
			e->location = xstrdup(k->value);
		else
			cfg_problem(x, k->line, 0, "bad location '%s' (letters, "
			    "digits, '-', '_' and '.')", k->value);
	}
	e->rank = cfg_location_rank(&d->pol, e->location);
	if ((k = cfg_get(x, s, "name")) != NULL) {
		e->name = xstrdup(k->value);
		nameline = k->line;
	} else if (s->name != NULL)
		e->name = xstrdup(s->name);
	else if (e->url != NULL)
		e->name = e->url;	/* one string: see config_free() */
	else if (e->command != NULL)
		e->name = xstrdup(e->command);
	if (e->name != NULL && !cfg_text_ok(e->name))
		cfg_problem(x, nameline, 0, "endpoint name '%s': a control "
		    "character or invalid UTF-8", e->name);

	/* Canonical text: one address, one spelling. */
	if (e->ip.family != 0 &&
	    (first = cfg_nameset_add(ips, e->ip.s, e->line)) != 0)
		cfg_problem(x, ipline, 0, "ip %s is also the ip of the "
		    "endpoint at line %d", e->ip.s, first);
	if (e->cname != NULL &&
	    (first = cfg_nameset_add(ips, e->cname, e->line)) != 0)
		cfg_problem(x, ipline, 0, "cname %s is also the cname of the "
		    "endpoint at line %d", e->cname, first);
	if (e->name != NULL &&
	    (first = cfg_nameset_add(names, e->name, e->line)) != 0)
		cfg_problem(x, nameline, 0, "endpoint name '%s' is also the "
		    "name of the endpoint at line %d", e->name, first);
	if (e->ip.family == 4)
		d->has4 = 1;
	else if (e->ip.family == 6)
		d->has6 = 1;
	else if (e->cname != NULL)
		d->hascname = 1;
	d->neps++;
}

/* An endpoint's tier (priority, then rank) and its place in the domain. */
struct tier_key {
	long	 priority;
	long	 rank;
	size_t	 i;
};

static int
tier_cmp(const void *a, const void *b)
{
	const struct tier_key *p = a, *q = b;

	if (p->priority != q->priority)
		return p->priority < q->priority ? -1 : 1;
	if (p->rank != q->rank)
		return p->rank < q->rank ? -1 : 1;
	return p->i < q->i ? -1 : p->i > q->i;
}

/*
 * ddup.ini(5), ENDPOINTS: a CNAME may not share its name with other records, so a
 * cname endpoint is alone in its tier; and one tier is either proxied or
 * not, as its records are published together.  Each endpoint is
 * reported against the first endpoint before it in its tier that
 * clashes with it.  The endpoints are sorted by tier rather than each
 * compared with those before it: a domain may have 100,000.
 */
static void
check_tiers(struct ctx *x, const struct domain_cfg *d)
{
	const size_t none = (size_t)-1;
	const struct endpoint_cfg *e, *f;
	struct tier_key *t;
	size_t *clash, i, j, start, cname, prox[2], other;

	if (d->neps < 2)
		return;
	t = xcalloc(d->neps, sizeof(*t));
	clash = xcalloc(d->neps, sizeof(*clash));
	for (i = 0; i < d->neps; i++) {
		t[i].priority = d->eps[i].priority;
		t[i].rank = d->eps[i].rank;
		t[i].i = i;
	}
	qsort(t, d->neps, sizeof(*t), tier_cmp);
	for (start = 0; start < d->neps; start = j) {
		/* The first of the tier so far: a cname, each proxied value. */
		cname = prox[0] = prox[1] = none;
		for (j = start; j < d->neps && t[j].priority ==
		    t[start].priority && t[j].rank == t[start].rank; j++) {
			e = &d->eps[t[j].i];
			if (e->cname != NULL)
				clash[t[j].i] = j > start ? t[start].i : none;
			else {
				other = prox[e->proxied == 0];
				clash[t[j].i] = cname < other ? cname : other;
			}
			if (e->cname != NULL && cname == none)
				cname = t[j].i;
			if (prox[e->proxied != 0] == none)
				prox[e->proxied != 0] = t[j].i;
		}
	}
	for (i = 0; i < d->neps; i++) {
		if (clash[i] == none)
			continue;
		e = &d->eps[i];
		f = &d->eps[clash[i]];
		if (e->cname != NULL || f->cname != NULL)
			cfg_problem(x, e->line, 0, "endpoint '%s': a cname "
			    "endpoint must be alone in its priority, and "
			    "endpoint '%s' at line %d has priority %ld too",
			    e->name != NULL ? e->name : "", f->name != NULL ?
			    f->name : "", f->line, e->priority);
		else
			cfg_problem(x, e->line, 0, "endpoint '%s': proxied "
			    "differs from endpoint '%s' at line %d of the same "
			    "priority %ld (its records are published together)",
			    e->name != NULL ? e->name : "", f->name != NULL ?
			    f->name : "", f->line, e->priority);
	}
	free(clash);
	free(t);
}

/* The endpoints of domain d, section idx: the sections up to the next. */
void
cfg_build_endpoints(struct ctx *x, size_t idx, struct domain_cfg *d)
{
	struct nameset ips, names;
	size_t i, n, end;

	for (n = 0, end = idx + 1; end < x->nsecs &&
	    x->secs[end].kind != S_DOMAIN; end++)
		if (x->secs[end].kind == S_ENDPOINT &&
		    x->secs[end].domain == (int)idx)
			n++;
	if (n == 0) {
		cfg_problem(x, x->secs[idx].line, 0, "domain %s has no "
		    "[endpoint]", d->name);
		return;
	}
	d->eps = xcalloc(n, sizeof(*d->eps));
	cfg_nameset_init(&ips, n);
	cfg_nameset_init(&names, n);
	for (i = idx + 1; i < end; i++)
		if (x->secs[i].kind == S_ENDPOINT &&
		    x->secs[i].domain == (int)idx)
			build_endpoint(x, &x->secs[i], d, &ips, &names);
	check_tiers(x, d);
	cfg_nameset_free(&ips);
	cfg_nameset_free(&names);
}
