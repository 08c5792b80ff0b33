/*
 * Change-only publication of one domain's A and AAAA sets.  The provider
 * is the slow and fallible part of a run, so it is called only when the
 * set to publish differs from the one last written (kept in the state
 * file), and read only on a domain's first run.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "publish.h"
#include "state.h"

int
publication_managed(const struct publication *p, int i)
{
	return p->managed[i];
}

void
publication_init(struct publication *p, const struct domain_cfg *cfg,
    const struct st_domain *st, struct state *db, struct tier tier)
{
	int i;

	memset(p, 0, sizeof(*p));
	p->cfg = cfg;
	p->st = st;
	p->db = db;
	p->tier.priority = tier.priority;
	p->tier.located = cfg->pol.location != NULL;
	p->tier.rank = tier.rank;
	p->tier.location = domain_rank_location(cfg, tier.rank);
	for (i = 0; i < RR_NTYPES; i++) {
		p->want[i].type = (enum rrtype)i;
		p->want[i].ttl = cfg->pol.ttl;
		p->managed[i] = i == RR_A ? cfg->has4 : i == RR_AAAA ?
		    cfg->has6 : cfg->hascname;
	}
}

void
tier_text(const struct log_tier *t, char *buf, size_t len)
{
	if (t->fallback)
		snprintf(buf, len, "fallback");
	else if (t->all_down)
		snprintf(buf, len, "%ld, all down", t->priority);
	else if (!t->located)
		snprintf(buf, len, "%ld", t->priority);
	else if (t->location != NULL)
		snprintf(buf, len, "%ld, location %s", t->priority,
		    t->location);
	else
		snprintf(buf, len, "%ld, other locations", t->priority);
}

/* The domain's endpoints with an address of family. */
static size_t
family_count(const struct domain_cfg *cfg, int family)
{
	size_t i, n = 0;

	for (i = 0; i < cfg->neps; i++)
		if (cfg->eps[i].cname == NULL && cfg->eps[i].ip.family == family)
			n++;
	return n;
}

void
publication_add(struct publication *p, const struct endpoint_cfg *e)
{
	int i;

	if (e->cname != NULL) {
		/* Alone in its tier (config_build_endpoint.c): the one target. */
		free(p->want[RR_CNAME].target);
		p->want[RR_CNAME].target = xstrdup(e->cname);
	} else {
		struct addrset *set =
		    &p->want[rrtype_of_family(e->ip.family)].addrs;

		/* Room for the domain's addresses of the family at once. */
		if (set->cap == 0)
			addrset_reserve(set, family_count(p->cfg,
			    e->ip.family));
		addrset_add_addr(set, &e->ip);
	}
	/*
	 * A tier is proxied or not as a whole (config_build_endpoint.c); proxied
	 * records have TTL 1, automatic, whatever the domain's ttl says.
	 */
	for (i = 0; i < RR_NTYPES; i++) {
		p->want[i].proxied = e->proxied;
		p->want[i].ttl = e->proxied ? 1 : p->cfg->pol.ttl;
	}
}

void
publication_add_fallback(struct publication *p, const struct addrset *a)
{
	size_t	 i;
	int	 k;

	for (i = 0; i < a->n; i++)
		addrset_add_addr(&p->want[rrtype_of_family(a->v[i].family)].addrs,
		    &a->v[i]);
	for (k = 0; k < RR_NTYPES; k++) {
		p->want[k].proxied = 0;
		p->want[k].ttl = p->cfg->pol.ttl;
	}
	/* No tier: the history's changes and the state store none. */
	p->tier.fallback = 1;
	p->tier.priority = -1;
	p->tier.rank = 0;
	p->tier.location = NULL;
}

void
publication_degrade(struct publication *p, long ttl)
{
	int k;

	/* A proxied record's TTL is the provider's (automatic). */
	for (k = 0; k < RR_NTYPES; k++)
		if (!p->want[k].proxied)
			p->want[k].ttl = ttl;
	p->ttl = ttl;
}

/*
 * Every type's records in one list, for logs: the addresses (IPv4
 * before IPv6, each sorted), then a CNAME's target.  sets[t] NULL: none.
 * shown: cut as a log line lists them (RRSET_SHOWN_MAX): what a
 * provider holds may be many records of the name that are not ddup's.
 */
static char *
join_all(const struct rrset *const sets[RR_NTYPES], int shown)
{
	struct addrset	 all = { 0 };
	const char	*target = NULL;
	char		*s, *t;
	size_t		 i, len;
	int		 k;

	for (k = 0; k < RR_NTYPES; k++) {
		if (sets[k] == NULL)
			continue;
		for (i = 0; i < sets[k]->addrs.n; i++)
			addrset_add_addr(&all, &sets[k]->addrs.v[i]);
		if (sets[k]->target != NULL)
			target = sets[k]->target;
	}
	s = shown ? rrset_addrs_shown(&all) : addrset_join(&all);
	addrset_free(&all);
	if (target != NULL) {
		len = strlen(s) + strlen(target) + 2;
		t = xmalloc(len);
		snprintf(t, len, "%s%s%s", s, s[0] != '\0' ? " " : "", target);
		free(s);
		s = t;
	}
	return s;
}

/* join_all() of an array of RRsets indexed by type. */
static char *
join_sets(const struct rrset *sets, int shown)
{
	const struct rrset *v[RR_NTYPES];
	int k;

	for (k = 0; k < RR_NTYPES; k++)
		v[k] = &sets[k];
	return join_all(v, shown);
}

/*
 * The error, cut as a 512-byte buffer would: allocated only when there is
 * one, as a run holds every domain's publication to its end.
 */
static void set_error(struct publication *, const char *, va_list)
    __attribute__((format(printf, 2, 0)));
static void set_errorf(struct publication *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static void
set_error(struct publication *p, const char *fmt, va_list ap)
{
	char	 buf[PUB_ERROR_MAX];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	free(p->error);
	p->error = xstrdup(buf);
}

static void
set_errorf(struct publication *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_error(p, fmt, ap);
	va_end(ap);
}

void
publish_failed(struct publication *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_error(p, fmt, ap);
	va_end(ap);
	p->failed = 1;
	logx(LOG_ERR, p->cfg->name, NULL, "%s", p->error);
}

/*
 * Whether the stored set of family index i is what DNS holds: not on a
 * domain's first run, nor after a run that sent an update and did not
 * live to record its outcome.
 */
static int
trusted(const struct publication *p, int i)
{
	return p->st->has_pub[i] && !p->st->unsure;
}

/*
 * The sets DNS holds now as far as ddup knows: the stored ones, and for a
 * managed family without a trusted one, what the provider answers.
 */
static int
current_sets(struct publication *p, struct provider *prov, struct rrset *cur,
    int *nread)
{
	struct rrset	 rd[RR_NTYPES];
	char		 err[512] = "";
	size_t		 k = 0, i;
	enum perr	 pe;
	int		 rc = -1;

	memset(rd, 0, sizeof(rd));
	for (i = 0; i < RR_NTYPES; i++) {
		cur[i].type = (enum rrtype)i;
		if (!publication_managed(p, (int)i))
			continue;
		if (trusted(p, (int)i))
			rrset_copy(&cur[i], &p->st->pub[i]);
		else
			rd[k++].type = cur[i].type;
	}
	*nread = (int)k;
	if (k == 0)
		return 0;
	pe = provider_read(prov, p->cfg->name, rd, k, err, sizeof(err));
	if (pe != PERR_OK) {
		publish_failed(p, "reading current records from provider %s: "
		    "%s: %s", p->cfg->provider->name, perr_str(pe), err);
		p->perr = pe;
		goto out;
	}
	for (i = 0; i < k; i++)
		rrset_copy(&cur[rd[i].type], &rd[i]);
	rc = 0;
out:
	for (i = 0; i < k; i++)
		rrset_clear(&rd[i]);
	return rc;
}

int
publication_may_write(const struct publication *p)
{
	int i;

	for (i = 0; i < RR_NTYPES; i++)
		if (publication_managed(p, i) && (!trusted(p, i) ||
		    !rrset_same(&p->want[i], &p->st->pub[i])))
			return 1;
	return 0;
}

char *
publication_want_text(const struct publication *p)
{
	return join_sets(p->want, 0);
}

void
publish(struct publication *p, struct provider *prov)
{
	struct rrset	 cur[RR_NTYPES], sets[RR_NTYPES];
	char		 err[512] = "";
	char		*old = NULL, *new = NULL;
	size_t		 nsets = 0;
	enum perr	 pe;
	int		 i, nread, differs = 0;

	memset(cur, 0, sizeof(cur));
	if (current_sets(p, prov, cur, &nread) == -1)
		goto out;
	for (i = 0; i < RR_NTYPES; i++) {
		if (!publication_managed(p, i))
			continue;
		/*
		 * Every managed type goes in the one update, changed or not:
		 * a provider with PCAP_ATOMIC applies it all or nothing.
		 */
		sets[nsets++] = p->want[i];
		if (!rrset_same(&p->want[i], &cur[i]))
			differs = 1;
	}
	/* What it read proves nothing of what DNS serves (provider.h). */
	if (nread > 0 && (p->cfg->provider->ops->caps & PCAP_WRITE_UNSURE))
		differs = 1;
	old = join_sets(cur, 1);
	new = join_sets(p->want, 1);
	if (!differs) {
		if (nread > 0)
			logx(LOG_DEBUG, p->cfg->name, NULL,
			    "DNS already holds [%s]", new);
		p->synced = 1;
		goto out;
	}
	/*
	 * Recorded before the update goes out: if this run dies before its
	 * state is saved, the next one reads DNS instead of trusting a
	 * stored set that may no longer be there.
	 */
	if (p->db != NULL && state_mark_unsure(p->db, p->cfg->name,
	    p->cfg->provider->name, p->cfg->pol.ttl, err, sizeof(err)) == -1) {
		publish_failed(p, "not updated: cannot record the update in "
		    "the state file: %s", err);
		goto out;
	}
	pe = provider_replace(prov, p->cfg->name, sets, nsets, err,
	    sizeof(err));
	for (i = 0; i < RR_NTYPES; i++) {
		struct pub_change *c = &p->changes[p->nchanges];

		if (!publication_managed(p, i))
			continue;
		c->type = cur[i].type;
		c->old = rrset_join(&cur[i]);
		c->new = rrset_join(&p->want[i]);
		p->nchanges++;
	}
	if (pe != PERR_OK) {
		set_errorf(p, "provider %s: %s: %s",
		    p->cfg->provider->name, perr_str(pe), err);
		log_change(LOG_ERR, "dns_update_failed", p->cfg->name, old,
		    new, &p->tier, p->error);
		p->failed = 1;
		p->perr = pe;
		goto out;
	}
	log_change(LOG_INFO, "dns_updated", p->cfg->name, old, new, &p->tier,
	    "DNS updated");
	p->synced = 1;
	p->wrote = 1;
out:
	for (i = 0; i < RR_NTYPES; i++)
		rrset_clear(&cur[i]);
	free(old);
	free(new);
}

void
publish_explain(const struct publication *p, int any_healthy, char *why,
    size_t len)
{
	const struct st_domain *st = p->st;
	const struct rrset *stored[RR_NTYPES];
	char	*old, *new, tier[160];
	int	 i, first = 0, differs = 0;

	tier_text(&p->tier, tier, sizeof(tier));
	for (i = 0; i < RR_NTYPES; i++) {
		stored[i] = st->has_pub[i] ? &st->pub[i] : NULL;
		if (!publication_managed(p, i))
			continue;
		if (!trusted(p, i))
			first = 1;
		else if (!rrset_same(&p->want[i], &st->pub[i]))
			differs = 1;
	}
	old = join_all(stored, 1);
	new = join_sets(p->want, 1);
	if (!any_healthy)
		snprintf(why, len, "no healthy endpoint: DNS would be left as "
		    "it is [%s]", old);
	else if (first)
		snprintf(why, len, "would publish [%s] (tier %s): %s, so the "
		    "provider's records would be %s", new, tier, st->unsure ?
		    "the last update's outcome was not recorded" : "first run "
		    "for this domain", (p->cfg->provider->ops->caps &
		    PCAP_WRITE_UNSURE) ? "written whatever they are" : "read "
		    "and written only if they differ");
	else if (differs)
		snprintf(why, len, "would change DNS: [%s] -> [%s] (tier %s)",
		    old, new, tier);
	else
		snprintf(why, len, "no change: DNS holds [%s] (tier %s)", old,
		    tier);
	free(old);
	free(new);
}

void
publication_free(struct publication *p)
{
	size_t i;

	for (i = 0; i < RR_NTYPES; i++)
		rrset_clear(&p->want[i]);
	for (i = 0; i < p->nchanges; i++) {
		free(p->changes[i].old);
		free(p->changes[i].new);
	}
	p->nchanges = 0;
	free(p->error);
	p->error = NULL;
}
