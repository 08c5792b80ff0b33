/*
 * Which keys each kind of section takes, in their canonical spelling:
 * the top of the file, [domain] and [endpoint] (ddup.ini(5), TOP-LEVEL
 * KEYS, DOMAINS, ENDPOINTS), the domain keys that the top of the file
 * also sets as every domain's default (POLICIES), the keys of a
 * [notify] section (NOTIFICATIONS) and the one key that may be
 * repeated (`header`).  A [provider]'s keys are in its provider's table.  Above
 * config_problem.c only (config_int.h).
 */

#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "config_int.h"

/* Where each key may be written. */
#define W_TOP		0x01
#define W_DOMAIN	0x02
#define W_ENDPOINT	0x04
#define W_NOTYET	0x08		/* documented, not in this version */

static const struct {
	const char	*name;
	int		 where;
} keytab[] = {
	{ "interval", W_TOP },
	{ "state", W_TOP },
	{ "maxParallel", W_TOP },
	{ "maxExec", W_TOP },
	{ "caFile", W_TOP },
	{ "logFormat", W_TOP },
	{ "history", W_TOP },
	{ "provider", W_DOMAIN },
	{ "url", W_ENDPOINT },
	{ "command", W_ENDPOINT },
	{ "send", W_ENDPOINT },
	{ "expect", W_ENDPOINT },
	{ "ip", W_ENDPOINT },
	{ "host", W_ENDPOINT },
	{ "priority", W_ENDPOINT },
	{ "name", W_ENDPOINT },
	{ "cname", W_ENDPOINT },
	{ "proxied", W_ENDPOINT },
	{ "statusHtml", W_TOP },
	{ "metricsFile", W_TOP },
	{ "location", W_ENDPOINT },
	{ "controlUrl", W_TOP },
	{ "checkers", W_TOP },
	{ "checker", W_TOP },
	{ "quorum", W_TOP },
};

/*
 * The domain keys (ddup.ini(5), DOMAINS and POLICIES): each may be
 * written at the top of the file, as the default of every domain, or in
 * a [domain].  One entry each: its type says how config_build_policy.c
 * reads the value into the field at off of struct domain_policy.
 */
const struct cfg_dom_key cfg_dom_keys[] = {
	{ "ttl", DK_LONG, offsetof(struct domain_policy, ttl), 1, { NULL } },
	{ "timeout", DK_DURATION, offsetof(struct domain_policy, timeout_ms),
	    0, { NULL } },
	{ "attempts", DK_LONG, offsetof(struct domain_policy, attempts), 1,
	    { NULL } },
	{ "recoverAfter", DK_LONG,
	    offsetof(struct domain_policy, recover_after), 1, { NULL } },
	{ "method", DK_WORD, offsetof(struct domain_policy, head), 0,
	    { "GET", "HEAD", NULL } },
	{ "expectStatus", DK_EXPECT, offsetof(struct domain_policy, expect),
	    0, { NULL } },
	{ "expectBody", DK_TEXT, offsetof(struct domain_policy, expect_body),
	    0, { NULL } },
	{ "location", DK_LOCATION, offsetof(struct domain_policy, location),
	    0, { NULL } },
	{ "failoverLocations", DK_LOCATIONS, 0, 0, { NULL } },
	{ "failback", DK_WORD, offsetof(struct domain_policy, failback_manual),
	    0, { "auto", "manual", NULL } },
	{ "publish", DK_WORD, offsetof(struct domain_policy, publish_one), 0,
	    { "all", "one", NULL } },
	{ "minHealthy", DK_LONG, offsetof(struct domain_policy, min_healthy),
	    1, { NULL } },
	{ "header", DK_HEADERS, 0, 0, { NULL } },
	{ "userAgent", DK_LINE, offsetof(struct domain_policy, user_agent), 0,
	    { NULL } },
	{ "maxLatency", DK_DURATION,
	    offsetof(struct domain_policy, max_latency_ms), 0, { NULL } },
	{ "recheck", DK_DURATION0, offsetof(struct domain_policy, recheck_ms),
	    0, { NULL } },
	{ "certWarn", DK_DURATION0,
	    offsetof(struct domain_policy, cert_warn_ms), 0, { NULL } },
	{ "allDown", DK_WORD, offsetof(struct domain_policy, all_down), 0,
	    { "keep", "all", "fallback", NULL } },
	{ "fallback", DK_ADDRS, offsetof(struct domain_policy, fallback), 0,
	    { NULL } },
	{ "degradedTtl", DK_LONG, offsetof(struct domain_policy, degraded_ttl),
	    1, { NULL } },
};

const size_t cfg_ndom_keys = sizeof(cfg_dom_keys) / sizeof(cfg_dom_keys[0]);

_Static_assert(sizeof(cfg_dom_keys) / sizeof(cfg_dom_keys[0]) <=
    HC_KEYS_MAX, "struct hc has a line for every domain key");

/* The keys of a [notify] section; webhook: only with url. */
const struct cfg_notify_key cfg_notify_keys[] = {
	{ "url", 1 },
	{ "command", 0 },
	{ "method", 1 },
	{ "header", 1 },
	{ "timeout", 0 },
	{ "attempts", 0 },
	{ "events", 0 },
};

const size_t cfg_nnotify_keys = sizeof(cfg_notify_keys) /
    sizeof(cfg_notify_keys[0]);

/* `header`, in a [notify], a [domain] or at the top of the file. */
int
cfg_repeatable(enum kind kind, const char *key)
{
	return (kind == S_NOTIFY || kind == S_DOMAIN || kind == S_TOP) &&
	    strcasecmp(key, "header") == 0;
}

int
config_key_where(size_t i)
{
	size_t	 nkeytab = sizeof(keytab) / sizeof(keytab[0]);
	int	 w;

	if (i < nkeytab) {
		w = keytab[i].where;
		return ((w & (W_TOP | W_NOTYET)) != 0 ? CFG_KEY_TOP : 0) |
		    ((w & W_DOMAIN) != 0 ? CFG_KEY_DOMAIN : 0) |
		    ((w & W_ENDPOINT) != 0 ? CFG_KEY_ENDPOINT : 0);
	}
	if (i - nkeytab < cfg_ndom_keys)
		return CFG_KEY_TOP | CFG_KEY_DOMAIN;
	/* Past the two tables, config_key_at() lists the [notify] keys. */
	return config_key_at(i) != NULL ? CFG_KEY_NOTIFY : 0;
}

const char *
config_key_at(size_t i)
{
	size_t	 nkeytab = sizeof(keytab) / sizeof(keytab[0]);

	if (i < nkeytab)
		return keytab[i].name;
	if (i - nkeytab < cfg_ndom_keys)
		return cfg_dom_keys[i - nkeytab].name;
	i -= nkeytab + cfg_ndom_keys;
	return i < cfg_nnotify_keys ? cfg_notify_keys[i].name : NULL;
}

static const char *
where_text(int where)
{
	if (where == W_TOP)
		return "at the top of the file";
	if (where == W_ENDPOINT)
		return "in [endpoint]";
	if (where == W_DOMAIN)
		return "in [domain]";
	return "in [domain] or at the top of the file";
}

/*
 * Where key may be written and its canonical spelling; 0 when unknown.
 * A name may be in both tables (an endpoint's `location` is not the
 * domain's), so where is the union.
 */
static int
key_where(const char *key, const char **canon)
{
	size_t	 j;
	int	 where = 0;

	/*
	 * Equal bytes stay equal with bit 5 set, letters of either case
	 * too: a cheap first look before each comparison.
	 */
	for (j = 0; j < sizeof(keytab) / sizeof(keytab[0]); j++)
		if ((keytab[j].name[0] | 0x20) == (key[0] | 0x20) &&
		    strcasecmp(keytab[j].name, key) == 0) {
			*canon = keytab[j].name;
			where |= keytab[j].where;
		}
	for (j = 0; j < cfg_ndom_keys; j++)
		if ((cfg_dom_keys[j].name[0] | 0x20) == (key[0] | 0x20) &&
		    strcasecmp(cfg_dom_keys[j].name, key) == 0) {
			*canon = cfg_dom_keys[j].name;
			where |= W_TOP | W_DOMAIN;
		}
	return where;
}

void
cfg_resolve_keys(struct ctx *x, struct rsec *s)
{
	static const char *const kname[] = { "at the top of the file",
	    "in [provider]", "in [domain]", "in [endpoint]", "in [notify]",
	    "" };
	static const int kwhere[] = { W_TOP, 0, W_DOMAIN, W_ENDPOINT, 0, 0 };
	struct rkey *k;
	const char *canon = NULL;
	size_t i;
	int where;

	for (i = 0; i < s->nkeys; i++) {
		k = &s->keys[i];
		where = key_where(k->key, &canon);
		if (where == 0)
			cfg_problem(x, k->line, 0, "unknown key '%s' %s",
			    k->key, kname[s->kind]);
		else if ((where & W_NOTYET) != 0 &&
		    (where & kwhere[s->kind]) == 0)
			cfg_problem(x, k->line, 0, "'%s' is not supported by "
			    "this version of ddup-check", canon);
		else if ((where & kwhere[s->kind]) == 0)
			cfg_problem(x, k->line, 0, "'%s' cannot be used %s "
			    "(it belongs %s)", canon, kname[s->kind],
			    where_text(where & ~W_NOTYET));
		else
			k->canon = canon;
	}
}
