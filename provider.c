/*
 * The provider table and the thin layer that calls through it.  Adding a
 * provider: one file in providers/, one line in this table, one line in
 * the Makefile's SRCS.
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "http.h"
#include "provider.h"
#include "redact.h"
#include "util.h"

static const struct provider_ops *const providers[] = {
	&rfc2136_ops,
	&powerdns_ops,
	&exec_ops,
	&azure_ops,
	&ovh_ops,
	&cloudflare_ops,
	&desec_ops,
	&gandi_ops,
	&hetzner_ops,
	&digitalocean_ops,
	&route53_ops,
	NULL
};

struct provider {
	const struct provider_ops *ops;
	void		*priv;
};

const struct provider_ops *
provider_lookup(const char *type)
{
	size_t i;

	for (i = 0; providers[i] != NULL; i++)
		if (strcasecmp(providers[i]->type, type) == 0)
			return providers[i];
	return NULL;
}

const struct provider_ops *
provider_at(size_t i)
{
	size_t	 n = sizeof(providers) / sizeof(providers[0]) - 1;

	return i < n ? providers[i] : NULL;
}

const char *
provider_types(void)
{
	static char list[256];
	size_t i, len;

	/* From the table, so a new provider cannot be left out. */
	if (list[0] == '\0')
		for (i = 0; providers[i] != NULL; i++) {
			len = strlen(list);
			snprintf(list + len, sizeof(list) - len, "%s%s",
			    i > 0 ? ", " : "", providers[i]->type);
		}
	return list;
}

int
provider_check_timeout(const struct provider_cfg *pc, const char **key,
    char *err, size_t errlen)
{
	const char	*v = provider_cfg_get(pc, "timeout");
	long long	 ms;

	if (v != NULL && (parse_duration(v, &ms) == -1 || ms <= 0)) {
		*key = "timeout";
		snprintf(err, errlen, "timeout: \"%s\" is not a positive "
		    "duration", v);
		return -1;
	}
	return 0;
}

int
provider_check_header_secret(const struct provider_cfg *pc, const char *name,
    const char **key, char *err, size_t errlen)
{
	const char *v = provider_cfg_get(pc, name);

	if (v == NULL || v[0] == '\0' || strpbrk(v, "\r\n") != NULL) {
		*key = name;
		snprintf(err, errlen, "%s is empty or has a line break", name);
		return -1;
	}
	return 0;
}

int
provider_check_zone(const struct provider_cfg *pc, const char **key,
    char *err, size_t errlen)
{
	const char *v = provider_cfg_get(pc, "zone");

	if (v != NULL && (v[0] == '\0' || v[0] == '.' || strlen(v) > 253 ||
	    strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789-.") != strlen(v) || strstr(v, "..") != NULL)) {
		*key = "zone";
		snprintf(err, errlen, "zone: \"%s\" is not a DNS zone name", v);
		return -1;
	}
	return 0;
}

int
provider_check_token_zone(const struct provider_cfg *pc, const char **key,
    char *err, size_t errlen)
{
	const char *v;

	if (provider_check_header_secret(pc, "apiToken", key, err,
	    errlen) == -1 || provider_check_zone(pc, key, err, errlen) == -1)
		return -1;
	*key = "baseUrl";
	v = provider_cfg_get(pc, "baseUrl");
	if (v != NULL && http_check_base_url("baseUrl", v, err, errlen) == -1)
		return -1;
	if (provider_check_timeout(pc, key, err, errlen) == -1)
		return -1;
	*key = NULL;
	return 0;
}

char *
provider_zone_name(const char *zone)
{
	char	*z = xstrdup(zone);
	size_t	 len;

	for (len = 0; z[len] != '\0'; len++)
		z[len] = (char)tolower((unsigned char)z[len]);
	if (len > 1 && z[len - 1] == '.')
		z[len - 1] = '\0';
	return z;
}

const char *
perr_str(enum perr e)
{
	switch (e) {
	case PERR_OK:
		return "ok";
	case PERR_AUTH:
		return "authentication failed";
	case PERR_NOTFOUND:
		return "not found";
	case PERR_INVALID:
		return "rejected as invalid";
	case PERR_RATELIMIT:
		return "rate limited";
	case PERR_TEMP:
		return "temporary failure";
	case PERR_NET:
		return "unreachable";
	}
	return "unknown error";
}

/*
 * Every provider message enters the run's outcome here, and from it the
 * log, status, state, dashboard, metrics and notifications: an API that
 * echoes its key in an error body, or answers with megabytes, is tamed
 * once for all of them.
 */
struct provider *
provider_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct provider *p;

	p = xcalloc(1, sizeof(*p));
	p->ops = pc->ops;
	p->priv = p->ops->create(pc, err, errlen);
	if (p->priv == NULL) {
		outside_text(err, errlen);
		free(p);
		return NULL;
	}
	return p;
}

enum perr
provider_read(struct provider *p, const char *fqdn, struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	enum perr e = p->ops->read(p->priv, fqdn, sets, nsets, err, errlen);

	if (e != PERR_OK)
		outside_text(err, errlen);
	return e;
}

enum perr
provider_replace(struct provider *p, const char *fqdn,
    const struct rrset *sets, size_t nsets, char *err, size_t errlen)
{
	enum perr e = p->ops->replace(p->priv, fqdn, sets, nsets, err,
	    errlen);

	if (e != PERR_OK)
		outside_text(err, errlen);
	return e;
}

void
provider_free(struct provider *p)
{
	if (p == NULL)
		return;
	p->ops->free(p->priv);
	free(p);
}
