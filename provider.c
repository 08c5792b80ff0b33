/*
 * The thin layer the core calls a provider through, and the helpers the
 * providers share for their keys.  The table of providers is in
 * providers/list.c, which no provider uses, so the uses run one way:
 * the core -> the table -> each provider -> this file.
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "provider.h"
#include "redact.h"
#include "util.h"

struct provider {
	const struct provider_ops *ops;
	void		*priv;
};

const char *
provider_cfg_get(const struct provider_cfg *pc, const char *key)
{
	size_t i;

	for (i = 0; i < pc->nkv; i++)
		if (strcasecmp(pc->kv[i].key, key) == 0)
			return pc->kv[i].value;
	return NULL;
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
provider_zone_ok(const char *v)
{
	size_t len = strlen(v), label = 0, i;

	/*
	 * Letters, digits, '-' and '_' (a zone such as
	 * _acme-challenge.example.com is delegated in practice); an IDN
	 * in its xn-- form, as every API here takes it (doc/design.md,
	 * "Publishing DNS, every provider").  A trailing dot is the root's:
	 * "example.com." is a zone name.
	 */
	if (len > 1 && v[len - 1] == '.')
		len--;
	if (len == 0 || len > 253)
		return 0;
	for (i = 0; i < len; i++) {
		if (v[i] == '.') {
			if (label == 0)
				return 0;
			label = 0;
		} else if (strchr("abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", v[i]) == NULL ||
		    ++label > 63)
			return 0;
	}
	return label > 0;
}

int
provider_check_zone(const struct provider_cfg *pc, const char *name,
    const char **key, char *err, size_t errlen)
{
	const char *v = provider_cfg_get(pc, name);

	if (v != NULL && !provider_zone_ok(v)) {
		*key = name;
		snprintf(err, errlen, "%s: \"%s\" is not a DNS zone name", name,
		    v);
		return -1;
	}
	return 0;
}

void
provider_lower(char *s)
{
	for (; *s != '\0'; s++)
		*s = (char)tolower((unsigned char)*s);
}

char *
provider_zone_name(const char *zone)
{
	char	*z = xstrdup(zone);
	size_t	 len;

	provider_lower(z);
	len = strlen(z);
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
