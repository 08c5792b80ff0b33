/*
 * The [domain RECORDNAME] sections (ddup.ini(5), DOMAINS): the name, its
 * policy over the defaults of the top of the file, its provider and
 * zone, a TTL the provider accepts, then its endpoints.
 */

#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "provider.h"
#include "util.h"

/*
 * A TTL the domain writes (key: ttl or degradedTtl) must be one its
 * provider's API accepts; line is that of the key (0: inherited from
 * the defaults, or the default).
 */
static void
check_ttl(struct ctx *x, const struct domain_cfg *d, const char *key,
    long ttl, int line)
{
	const struct provider_ops *ops = d->provider->ops;
	long min = ops->ttl_min;

	if (ops->ttl_min_of != NULL)
		min = ops->ttl_min_of(d->provider);
	if ((ttl >= min && ttl <= ops->ttl_max) ||
	    (ttl == 1 && (ops->caps & PCAP_TTL_AUTO) != 0))
		return;
	cfg_problem(x, line != 0 ? line : d->line, 0, "domain %s: %s %ld is "
	    "outside what provider '%s' (%s) accepts: %ld..%ld%s", d->name,
	    key, ttl, d->provider->name, ops->type, min, ops->ttl_max,
	    (ops->caps & PCAP_TTL_AUTO) != 0 ? ", or 1 for automatic" : "");
}

/*
 * degradedTtl shortens the TTL while the domain is off its preferred
 * set: one at or above ttl would lengthen it, so it is refused.
 */
static void
check_degraded_ttl(struct ctx *x, const struct domain_cfg *d, int line)
{
	if (d->pol.degraded_ttl == 0)
		return;
	if (d->pol.degraded_ttl >= d->pol.ttl) {
		cfg_problem(x, line != 0 ? line : d->line, 0, "domain %s: "
		    "degradedTtl %ld is not below ttl %ld", d->name,
		    d->pol.degraded_ttl, d->pol.ttl);
		return;
	}
	check_ttl(x, d, "degradedTtl", d->pol.degraded_ttl, line);
}

/*
 * allDown = fallback publishes the fallback addresses, whose families
 * the domain then manages as it manages its endpoints' (ddup.ini(5),
 * POLICIES).  Called once the endpoints set has4 and has6.
 */
static void
check_fallback(struct ctx *x, struct domain_cfg *d, int line)
{
	size_t i;

	if (d->pol.all_down != ALLDOWN_FALLBACK)
		return;
	if (d->pol.fallback.n == 0) {
		cfg_problem(x, line != 0 ? line : d->line, 0, "domain %s: "
		    "allDown = fallback needs 'fallback' addresses", d->name);
		return;
	}
	for (i = 0; i < d->pol.fallback.n; i++)
		if (d->pol.fallback.v[i].family == 4)
			d->has4 = 1;
		else
			d->has6 = 1;
}

/*
 * ddup.ini(5), recheck: a run's checks of the domain can last timeout +
 * (attempts - 1) x (recheck + timeout); when that is not below interval,
 * the next run finds this one still going.  A warning, as for timeout.
 */
static void
check_recheck(struct ctx *x, const struct domain_cfg *d, const struct hc *h)
{
	const struct domain_policy *p = &d->pol;
	long long worst, per = p->recheck_ms + p->timeout_ms;
	int line;

	if (p->recheck_ms <= 0 || p->timeout_ms >= x->c->interval_ms)
		return;
	/*
	 * Durations are at most DURATION_MAX_MS, but attempts may be 2^31:
	 * past a day of repeats the product is not needed to know.
	 */
	if (p->attempts - 1 > 86400000LL * 3650 / per)
		worst = 86400000LL * 3650;
	else
		worst = p->timeout_ms + (p->attempts - 1) * per;
	if (worst < x->c->interval_ms)
		return;
	if ((line = cfg_hc_line(h, "recheck")) == 0)
		line = d->line;
	cfg_problem(x, line, 1, "domain %s: with recheck a run can take %lld "
	    "ms (timeout + (attempts - 1) x (recheck + timeout)), not below "
	    "interval (%lld ms)", d->name, worst, x->c->interval_ms);
}

/* The domain of section idx; seen: the names of the domains so far. */
static void
build_domain(struct ctx *x, size_t idx, const struct hc *defaults,
    struct nameset *seen)
{
	struct config *c = x->c;
	struct rsec *s = &x->secs[idx];
	struct domain_cfg *d = &c->domains[c->ndomains];
	const struct rkey *k;
	const char *zone;
	char *z;
	struct hc h;
	int good, warnline, first, j;
	size_t zl, dl;

	cfg_resolve_keys(x, s);
	d->line = s->line;
	d->name = xstrdup(s->name);
	if (!(good = cfg_dns_name(d->name, 1)))
		cfg_problem(x, s->line, 0, "bad domain name '%s'", s->name);
	if (good && (first = cfg_nameset_add(seen, d->name, d->line)) != 0)
		cfg_problem(x, s->line, 0, "domain %s defined twice (first at "
		    "line %d)", d->name, first);
	c->ndomains++;

	cfg_hc_copy(&h, defaults);
	cfg_parse_hc(x, s, &h);
	cfg_check_policy(x, &h, d->line);
	d->pol = h.p;		/* the domain owns the strings now */

	if ((k = cfg_get(x, s, "provider")) != NULL) {
		if ((j = cfg_nameset_get(&x->provset, k->value)) != 0)
			d->provider = &c->providers[j - 1];
		else
			cfg_problem(x, k->line, 0, "domain %s: unknown "
			    "provider '%s'", d->name, k->value);
	} else if (!cfg_has_key(s, "provider"))
		cfg_problem(x, s->line, 0, "domain %s: missing 'provider'",
		    d->name);
	/* A provider is found only through its key k. */
	if (good && k != NULL && d->provider != NULL &&
	    d->provider->ops != NULL &&
	    d->provider->ops->zone_key != NULL && (zone =
	    provider_cfg_get(d->provider, d->provider->ops->zone_key)) !=
	    NULL) {
		z = xstrdup(zone);
		(void)cfg_dns_name(z, 1);
		zl = strlen(z);
		dl = strlen(d->name);
		if (strcmp(d->name, z) != 0 && (dl <= zl ||
		    strcmp(d->name + dl - zl, z) != 0 ||
		    d->name[dl - zl - 1] != '.'))
			cfg_problem(x, k->line, 0, "domain %s is not in zone "
			    "%s of provider '%s'", d->name, z,
			    d->provider->name);
		free(z);
	}
	if (d->provider != NULL && d->provider->ops != NULL) {
		check_ttl(x, d, "ttl", d->pol.ttl, cfg_hc_line(&h, "ttl"));
		check_degraded_ttl(x, d, cfg_hc_line(&h, "degradedTtl"));
	}
	if (d->pol.timeout_ms >= c->interval_ms) {
		warnline = cfg_hc_line(&h, "timeout");
		if (warnline == 0)
			warnline = d->line;
		cfg_problem(x, warnline, 1, "domain %s: timeout (%lld ms) is "
		    "not below interval (%lld ms)", d->name, d->pol.timeout_ms,
		    c->interval_ms);
	}
	check_recheck(x, d, &h);
	cfg_build_endpoints(x, idx, d);
	check_fallback(x, d, cfg_hc_line(&h, "allDown"));
}

void
cfg_build_domains(struct ctx *x, const struct hc *defaults)
{
	struct config *c = x->c;
	struct nameset domains;
	size_t i, nd = 0;

	for (i = 0; i < x->nsecs; i++)
		nd += x->secs[i].kind == S_DOMAIN;
	if (nd == 0) {
		cfg_problem(x, 0, 0, "no [domain] section");
		return;
	}
	c->domains = xcalloc(nd, sizeof(*c->domains));
	cfg_nameset_init(&domains, nd);
	for (i = 0; i < x->nsecs; i++)
		if (x->secs[i].kind == S_DOMAIN)
			build_domain(x, i, defaults, &domains);
	cfg_nameset_free(&domains);
}
