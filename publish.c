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

static int
fam_index(int family)
{
	return family == 6 ? 1 : 0;
}

int
publication_managed(const struct publication *p, int i)
{
	return i == 0 ? p->cfg->has4 : p->cfg->has6;
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
	for (i = 0; i < 2; i++) {
		p->want[i].family = i == 0 ? 4 : 6;
		p->want[i].ttl = cfg->pol.ttl;
	}
}

void
tier_text(const struct log_tier *t, char *buf, size_t len)
{
	if (!t->located)
		snprintf(buf, len, "%ld", t->priority);
	else if (t->location != NULL)
		snprintf(buf, len, "%ld, location %s", t->priority,
		    t->location);
	else
		snprintf(buf, len, "%ld, other locations", t->priority);
}

void
publication_add(struct publication *p, const struct addr *a)
{
	addrset_add_addr(&p->want[fam_index(a->family)].addrs, a);
}

/* Equal as DNS sees it: an empty RRset has no TTL to compare. */
static int
rrset_same(const struct rrset *a, long bttl, const struct addrset *b)
{
	if (!addrset_equal(&a->addrs, b))
		return 0;
	return a->addrs.n == 0 || a->ttl == bttl;
}

/* Both families in one list, for logs. */
static char *
join_both(const struct addrset *a, const struct addrset *b)
{
	struct addrset	 all = { 0 };
	char		*s;
	size_t		 i;

	for (i = 0; a != NULL && i < a->n; i++)
		addrset_add_addr(&all, &a->v[i]);
	for (i = 0; b != NULL && i < b->n; i++)
		addrset_add_addr(&all, &b->v[i]);
	s = addrset_join(&all);
	addrset_free(&all);
	return s;
}

void
publish_failed(struct publication *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->error, sizeof(p->error), fmt, ap);
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
	struct rrset	 rd[2];
	char		 err[512] = "";
	size_t		 k = 0, i;
	enum perr	 pe;
	int		 rc = -1;

	memset(rd, 0, sizeof(rd));
	for (i = 0; i < 2; i++) {
		cur[i].family = i == 0 ? 4 : 6;
		if (!publication_managed(p, (int)i))
			continue;
		if (trusted(p, (int)i)) {
			cur[i].ttl = p->st->pub[i].ttl;
			addrset_copy(&cur[i].addrs, &p->st->pub[i].addrs);
		} else
			rd[k++].family = cur[i].family;
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
	for (i = 0; i < k; i++) {
		struct rrset *c = &cur[fam_index(rd[i].family)];

		c->ttl = rd[i].ttl;
		addrset_copy(&c->addrs, &rd[i].addrs);
	}
	rc = 0;
out:
	for (i = 0; i < k; i++)
		addrset_free(&rd[i].addrs);
	return rc;
}

void
publish(struct publication *p, struct provider *prov)
{
	struct rrset	 cur[2], sets[2];
	char		 err[512] = "";
	char		*old = NULL, *new = NULL;
	size_t		 nsets = 0;
	enum perr	 pe;
	int		 i, nread, differs = 0;

	memset(cur, 0, sizeof(cur));
	if (current_sets(p, prov, cur, &nread) == -1)
		goto out;
	for (i = 0; i < 2; i++) {
		if (!publication_managed(p, i))
			continue;
		/*
		 * Every managed type goes in the one update, changed or not:
		 * the provider applies it all or nothing.
		 */
		sets[nsets++] = p->want[i];
		if (!rrset_same(&p->want[i], cur[i].ttl, &cur[i].addrs))
			differs = 1;
	}
	old = join_both(&cur[0].addrs, &cur[1].addrs);
	new = join_both(&p->want[0].addrs, &p->want[1].addrs);
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
	for (i = 0; i < 2; i++) {
		struct pub_change *c = &p->changes[p->nchanges];

		if (!publication_managed(p, i))
			continue;
		c->family = cur[i].family;
		c->old = addrset_join(&cur[i].addrs);
		c->new = addrset_join(&p->want[i].addrs);
		p->nchanges++;
	}
	if (pe != PERR_OK) {
		snprintf(p->error, sizeof(p->error), "provider %s: %s: %s",
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
	for (i = 0; i < 2; i++)
		addrset_free(&cur[i].addrs);
	free(old);
	free(new);
}

void
publish_explain(const struct publication *p, int any_healthy, char *why,
    size_t len)
{
	const struct st_domain *st = p->st;
	char	*old, *new, tier[160];
	int	 i, first = 0, differs = 0;

	tier_text(&p->tier, tier, sizeof(tier));
	for (i = 0; i < 2; i++) {
		if (!publication_managed(p, i))
			continue;
		if (!trusted(p, i))
			first = 1;
		else if (!rrset_same(&p->want[i], st->pub[i].ttl,
		    &st->pub[i].addrs))
			differs = 1;
	}
	old = join_both(st->has_pub[0] ? &st->pub[0].addrs : NULL,
	    st->has_pub[1] ? &st->pub[1].addrs : NULL);
	new = join_both(&p->want[0].addrs, &p->want[1].addrs);
	if (!any_healthy)
		snprintf(why, len, "no healthy endpoint: DNS would be left as "
		    "it is [%s]", old);
	else if (first)
		snprintf(why, len, "would publish [%s] (tier %s): %s, so the "
		    "provider's records would be read and written only if they "
		    "differ", new, tier, st->unsure ? "the last update's "
		    "outcome was not recorded" : "first run for this domain");
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

	for (i = 0; i < 2; i++)
		addrset_free(&p->want[i].addrs);
	for (i = 0; i < p->nchanges; i++) {
		free(p->changes[i].old);
		free(p->changes[i].new);
	}
	p->nchanges = 0;
}
