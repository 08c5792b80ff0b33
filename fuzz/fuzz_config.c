/*
 * The whole configuration loader: inih, the line reader and the
 * validation, through config_parse() on the bytes of a file.  Messages
 * go to /dev/null.  The file name lies in a folder that does not exist,
 * so a relative !file secret reads nothing and the run does not depend
 * on the machine.
 *
 * Invariants of a configuration that loads: what config.h promises of
 * each value (ranges, canonical addresses, lower-case domain names
 * without a trailing dot, A/AAAA management following the endpoints,
 * providers from the table, with their required keys), and the
 * validation rules of ddup.ini(5), ENDPOINTS: every domain has
 * endpoints, none twice by ip or name, inside its provider's zone.
 */

#include <ctype.h>
#include <strings.h>

#include "check.h"
#include "config.h"
#include "fuzz.h"
#include "provider.h"
#include "util.h"

#define NAME	"/nonexistent-ddup-fuzz/ddup.ini"

/* name is zone or below it; zone may be NULL (no such key) or end in '.'. */
static int
in_zone(const char *name, const char *zone)
{
	size_t n, z;

	if (zone == NULL)
		return 1;
	n = strlen(name);
	z = strlen(zone);
	if (z > 1 && zone[z - 1] == '.')
		z--;
	if (n == z)
		return strncasecmp(name, zone, z) == 0;
	return n > z && name[n - z - 1] == '.' &&
	    strncasecmp(name + n - z, zone, z) == 0;
}

/* ddup.ini(5), POLICIES: location names, letters, digits, '-', '_' and '.'. */
static int
location_ok(const char *s)
{
	size_t len = strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.");

	return len > 0 && s[len] == '\0';
}

static void
check_domain(const struct config *c, const struct domain_cfg *d)
{
	const struct endpoint_cfg *ep;
	struct addr again;
	char err[256];
	size_t i, j, len;
	int has4 = 0, has6 = 0;

	len = strlen(d->name);
	fuzz_check(len > 0 && d->name[len - 1] != '.', "domain name",
	    d->name);
	for (i = 0; i < len; i++)
		fuzz_check(!isupper((unsigned char)d->name[i]), "domain name "
		    "not lower case", d->name);
	fuzz_check(d->provider >= c->providers &&
	    d->provider < c->providers + c->nproviders, "domain provider",
	    d->name);
	fuzz_check(d->pol.ttl >= 1 && d->pol.ttl <= 2147483647, "ttl", d->name);
	fuzz_check(d->pol.timeout_ms > 0 && d->pol.attempts >= 1 &&
	    d->pol.recover_after >= 1, "check settings", d->name);
	fuzz_check(d->pol.expect.n >= 1 && d->pol.expect.n <= EXPECT_MAX,
	    "expectStatus", d->name);
	fuzz_check(d->neps > 0, "domain without endpoints", d->name);
	fuzz_check(d->pol.min_healthy >= 1, "minHealthy", d->name);
	fuzz_check(d->pol.location == NULL || location_ok(d->pol.location),
	    "location", d->name);
	fuzz_check(d->pol.nfailover == 0 || d->pol.location != NULL,
	    "failoverLocations without location", d->name);
	for (i = 0; i < d->pol.nfailover; i++) {
		fuzz_check(location_ok(d->pol.failover[i]) &&
		    strcasecmp(d->pol.failover[i], d->pol.location) != 0,
		    "failover location", d->pol.failover[i]);
		for (j = i + 1; j < d->pol.nfailover; j++)
			fuzz_check(strcasecmp(d->pol.failover[i],
			    d->pol.failover[j]) != 0, "a failover location "
			    "twice", d->pol.failover[i]);
	}
	for (i = 0; i < d->neps; i++) {
		ep = &d->eps[i];
		/* A url a check type takes, or a program's absolute path. */
		fuzz_check(ep->name != NULL && (ep->url == NULL) !=
		    (ep->command == NULL) && (ep->url == NULL ||
		    check_url_ok(ep->url, err, sizeof(err)) == 0) &&
		    (ep->command == NULL || ep->command[0] == '/'),
		    "endpoint name and url or command", d->name);
		fuzz_check(ep->ip.family == 4 || ep->ip.family == 6,
		    "endpoint family", ep->name);
		fuzz_check(addr_parse(ep->ip.s, &again) == 0 &&
		    addr_cmp(&again, &ep->ip) == 0 &&
		    strcmp(again.s, ep->ip.s) == 0, "endpoint ip not "
		    "canonical", ep->ip.s);
		fuzz_check(ep->priority >= 0, "endpoint priority", ep->name);
		/* ddup.ini(5), POLICIES: a rank in the order of preference. */
		fuzz_check(ep->rank >= 0 && (size_t)ep->rank <=
		    d->pol.nfailover + 1 && (d->pol.location != NULL ||
		    ep->rank == 0), "endpoint rank", ep->name);
		fuzz_check(ep->location == NULL || location_ok(ep->location),
		    "endpoint location", ep->name);
		if (ep->ip.family == 4)
			has4 = 1;
		else
			has6 = 1;
	}
	fuzz_check(d->has4 == has4 && d->has6 == has6, "has4/has6 do not "
	    "follow the endpoints", d->name);
	for (i = 0; i < d->neps; i++)
		for (j = i + 1; j < d->neps; j++) {
			fuzz_check(addr_cmp(&d->eps[i].ip, &d->eps[j].ip) != 0,
			    "the same ip twice in a domain", d->eps[i].ip.s);
			fuzz_check(strcmp(d->eps[i].name, d->eps[j].name) != 0,
			    "the same endpoint name twice", d->eps[i].name);
		}
	fuzz_check(in_zone(d->name, provider_cfg_get(d->provider, "zone")),
	    "domain outside its provider's zone", d->name);
}

/*
 * ddup.ini(5), NOTIFICATIONS: a webhook or a program, its events, no line
 * break in a header.
 */
static void
check_notify(const struct notify_cfg *n)
{
	size_t i, j;

	fuzz_check((n->url != NULL) != (n->command != NULL), "url or command",
	    n->name);
	fuzz_check(n->url == NULL || strncasecmp(n->url, "http", 4) == 0,
	    "webhook url", n->url);
	fuzz_check(n->command == NULL || (n->command[0] == '/' &&
	    n->dir != NULL && n->nheaders == 0), "program", n->command);
	fuzz_check(n->attempts >= 1 && n->attempts <= 100 &&
	    n->timeout_ms > 0, "attempts, timeout", n->name);
	fuzz_check(n->events != 0 && n->events < (1u << EVT_COUNT), "events",
	    n->name);
	fuzz_check(n->method != NULL && (strcmp(n->method, "POST") == 0 ||
	    strcmp(n->method, "PUT") == 0 || strcmp(n->method, "PATCH") == 0),
	    "method", n->method);
	for (i = 0; i < n->nheaders; i++) {
		fuzz_check(strstr(n->headers[i], ": ") != NULL &&
		    n->headers[i][0] != ':', "header shape", n->name);
		for (j = 0; n->headers[i][j] != '\0'; j++)
			fuzz_check((unsigned char)n->headers[i][j] >= 0x20 ||
			    n->headers[i][j] == '\t', "header control character",
			    n->name);
	}
}

static void
check_config(const struct config *c)
{
	const struct provider_cfg *pc;
	const struct provider_key *pk;
	size_t i, j;

	fuzz_check(c->path != NULL && strcmp(c->path, NAME) == 0, "path",
	    c->path);
	fuzz_check(c->state != NULL && c->state[0] != '\0', "state", NULL);
	fuzz_check(c->interval_ms > 0 && c->history_ms >= 0 &&
	    c->max_parallel >= 1, "top-level values", NULL);
	fuzz_check(c->ndomains > 0, "no domain", NULL);
	for (i = 0; i < c->nproviders; i++) {
		pc = &c->providers[i];
		fuzz_check(pc->ops != NULL &&
		    provider_lookup(pc->ops->type) == pc->ops, "provider type",
		    pc->name);
		/* Every required key is there, every key is in the table. */
		for (pk = pc->ops->keys; pk->name != NULL; pk++)
			if (pk->flags & PK_REQUIRED)
				fuzz_check(provider_cfg_get(pc, pk->name) !=
				    NULL, "required key missing", pk->name);
		for (j = 0; j < pc->nkv; j++) {
			for (pk = pc->ops->keys; pk->name != NULL; pk++)
				if (strcmp(pk->name, pc->kv[j].key) == 0)
					break;
			fuzz_check(pk->name != NULL, "key not in the table",
			    pc->kv[j].key);
			fuzz_check(pc->kv[j].secret ==
			    ((pk->flags & PK_SECRET) != 0), "secret flag",
			    pc->kv[j].key);
		}
	}
	for (i = 0; i < c->ndomains; i++)
		check_domain(c, &c->domains[i]);
	for (i = 0; i < c->nnotifiers; i++)
		check_notify(&c->notifiers[i]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	struct config *c;

	if (devnull == NULL) {
		if ((devnull = fopen("/dev/null", "w")) == NULL)
			abort();
		/* For "apiKey = !env DDUP_FUZZ_KEY" in the seeds. */
		setenv("DDUP_FUZZ_KEY", "fuzz-api-key", 1);
	}
	c = config_parse(NAME, (const char *)data, size, devnull,
	    (int)(size & 1));
	if (c != NULL) {
		check_config(c);
		config_free(c);
	}
	return 0;
}
