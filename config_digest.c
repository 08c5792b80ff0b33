/*
 * The digest of the configuration as the decision sees it (ddup.ini(5),
 * SEVERAL CHECKERS, and config.h): every checker of a fleet computes it
 * from its own file, and a report is counted only by a decider whose
 * digest is the same.
 *
 * Each value goes in as its name, a NUL, its canonical text and a NUL
 * (no value holds a NUL), so no two configurations feed the same bytes.
 * Canonical: the values as the run uses them (durations in ms, names in
 * lower case, defaults filled in), so spelling a value another way
 * changes nothing; the order of domains and endpoints is kept, as
 * `publish = one` depends on it.
 *
 * The names' digest is another, of the names alone under which a state
 * keeps rows: a PostgreSQL store prunes what is no longer configured
 * only when it changes (state/pg_save.c).
 */

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "config.h"
#include "provider.h"
#include "util.h"

static void
feed(EVP_MD_CTX *md, const char *name, const char *value)
{
	(void)EVP_DigestUpdate(md, name, strlen(name) + 1);
	(void)EVP_DigestUpdate(md, value != NULL ? value : "",
	    value != NULL ? strlen(value) + 1 : 1);
}

/*
 * len bytes of value, which may hold a NUL (`send`): its length goes
 * first, so that no two values feed the same bytes.
 */
static void
feed_len(EVP_MD_CTX *md, const char *name, const char *value, size_t len)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%zu", len);
	feed(md, name, buf);
	(void)EVP_DigestUpdate(md, value, len);
}

static void
feed_num(EVP_MD_CTX *md, const char *name, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	feed(md, name, buf);
}

/* The fleet sorted, so that listing it in another order changes nothing. */
static void
feed_fleet(EVP_MD_CTX *md, const struct config *c)
{
	const char *last = "", *next;
	char lower[256];
	size_t i, k, done;

	feed_num(md, "checkers", (long long)c->ncheckers);
	for (done = 0; done < c->ncheckers; done++) {
		next = NULL;
		for (i = 0; i < c->ncheckers; i++)
			if (strcasecmp(c->checkers[i], last) > 0 &&
			    (next == NULL || strcasecmp(c->checkers[i],
			    next) < 0))
				next = c->checkers[i];
		if (next == NULL)
			break;
		for (k = 0; next[k] != '\0' && k + 1 < sizeof(lower); k++)
			lower[k] = (char)(next[k] >= 'A' && next[k] <= 'Z' ?
			    next[k] + 32 : next[k]);
		lower[k] = '\0';
		feed(md, "checker", lower);
		last = next;
	}
	feed_num(md, "quorum", c->quorum);
}

/* The provider's keys in the order of its table, secrets left out. */
static void
feed_provider(EVP_MD_CTX *md, const struct provider_cfg *pc)
{
	const struct provider_key *pk;
	const char *v;

	feed(md, "[provider]", pc->name);
	feed(md, "type", pc->ops != NULL ? pc->ops->type : "");
	if (pc->ops == NULL)
		return;
	for (pk = pc->ops->keys; pk->name != NULL; pk++) {
		if ((pk->flags & PK_SECRET) != 0)
			continue;
		if ((v = provider_cfg_get(pc, pk->name)) != NULL)
			feed(md, pk->name, v);
	}
}

static void
feed_policy(EVP_MD_CTX *md, const struct domain_policy *p)
{
	char buf[EXPECT_MAX * 16];
	size_t i;

	feed_num(md, "ttl", p->ttl);
	feed_num(md, "timeout", p->timeout_ms);
	feed_num(md, "attempts", p->attempts);
	feed_num(md, "recoverAfter", p->recover_after);
	feed(md, "method", p->head ? "HEAD" : "GET");
	expect_format(&p->expect, buf, sizeof(buf));
	feed(md, "expectStatus", buf);
	feed(md, "expectBody", p->expect_body);
	feed(md, "location", p->location);
	feed_num(md, "failoverLocations", (long long)p->nfailover);
	for (i = 0; i < p->nfailover; i++)
		feed(md, "failoverLocation", p->failover[i]);
	feed(md, "failback", p->failback_manual ? "manual" : "auto");
	feed(md, "publish", p->publish_one ? "one" : "all");
	feed_num(md, "minHealthy", p->min_healthy);
	/* The headers are secrets: how many, and the name of each. */
	feed_num(md, "headers", (long long)p->nheaders);
	for (i = 0; i < p->nheaders; i++)
		feed_len(md, "header", p->headers[i],
		    strcspn(p->headers[i], ":"));
	feed(md, "userAgent", p->user_agent != NULL ? p->user_agent :
	    "ddup/1.0");
	feed_num(md, "maxLatency", p->max_latency_ms);
	feed_num(md, "recheck", p->recheck_ms);
	feed_num(md, "certWarn", p->cert_warn_ms);
	feed_num(md, "allDown", p->all_down);
	feed_num(md, "fallbacks", (long long)p->fallback.n);
	for (i = 0; i < p->fallback.n; i++)
		feed(md, "fallback", p->fallback.v[i].s);
	feed_num(md, "degradedTtl", p->degraded_ttl);
}

static void
feed_endpoint(EVP_MD_CTX *md, const struct endpoint_cfg *e)
{
	feed(md, "[endpoint]", e->name);
	feed(md, "url", e->url);
	feed(md, "command", e->command);
	feed_len(md, "send", e->send != NULL ? e->send : "", e->send_len);
	feed(md, "expect", e->expect_text);
	feed(md, "host", e->host);
	feed(md, "ip", e->ip.family != 0 ? e->ip.s : NULL);
	feed(md, "cname", e->cname);
	feed_num(md, "proxied", e->proxied);
	feed_num(md, "priority", e->priority);
	feed(md, "location", e->location);
}

static void
feed_decision(EVP_MD_CTX *md, const struct config *c)
{
	size_t j, k;

	feed(md, "ddup", "1");
	feed_num(md, "interval", c->interval_ms);
	feed_fleet(md, c);
	for (j = 0; j < c->nproviders; j++)
		feed_provider(md, &c->providers[j]);
	for (j = 0; j < c->ndomains; j++) {
		const struct domain_cfg *d = &c->domains[j];

		feed(md, "[domain]", d->name);
		feed(md, "provider", d->provider != NULL ? d->provider->name :
		    NULL);
		feed_policy(md, &d->pol);
		for (k = 0; k < d->neps; k++)
			feed_endpoint(md, &d->eps[k]);
	}
}

static void
feed_names(EVP_MD_CTX *md, const struct config *c)
{
	size_t j, k;

	feed(md, "ddup names", "1");
	for (j = 0; j < c->ndomains; j++) {
		const struct domain_cfg *d = &c->domains[j];

		feed(md, "[domain]", d->name);
		feed_num(md, "types", d->has4 | d->has6 << 1 | d->hascname << 2);
		for (k = 0; k < d->neps; k++)
			feed(md, "[endpoint]", d->eps[k].name);
	}
}

/* SHA-256 of what fn feeds, as hex into buf ("" if OpenSSL fails). */
static void
digest(const struct config *c, void (*fn)(EVP_MD_CTX *,
    const struct config *), char buf[CONFIG_DIGEST_LEN])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char out[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	EVP_MD_CTX *md;
	size_t i;

	buf[0] = '\0';
	if ((md = EVP_MD_CTX_new()) == NULL)
		return;
	if (EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1)
		goto out;
	fn(md, c);
	if (EVP_DigestFinal_ex(md, out, &n) != 1 ||
	    (size_t)n * 2 >= CONFIG_DIGEST_LEN)
		goto out;
	for (i = 0; i < n; i++) {
		buf[i * 2] = hex[out[i] >> 4];
		buf[i * 2 + 1] = hex[out[i] & 15];
	}
	buf[(size_t)n * 2] = '\0';
out:
	EVP_MD_CTX_free(md);
}

void
config_decision_digest(const struct config *c, char buf[CONFIG_DIGEST_LEN])
{
	digest(c, feed_decision, buf);
}

void
config_names_digest(const struct config *c, char buf[CONFIG_DIGEST_LEN])
{
	digest(c, feed_names, buf);
}
