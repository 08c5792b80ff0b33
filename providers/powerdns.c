/* SKELETON: to be replaced by the real provider. */

#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "provider.h"

static const struct provider_key powerdns_keys[] = {
	{ "baseUrl", PK_REQUIRED },
	{ "apiKey", PK_REQUIRED | PK_SECRET },
	{ "serverId", 0 },
	{ "zone", PK_REQUIRED },
	{ "timeout", 0 },
	{ NULL, 0 }
};

static int
powerdns_check(const struct provider_cfg *pc, const char **key, char *err,
    size_t errlen)
{
	(void)pc;
	(void)key;
	(void)err;
	(void)errlen;
	return 0;
}

static void *
powerdns_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	(void)pc;
	snprintf(err, errlen, "not implemented");
	return NULL;
}

static enum perr
powerdns_read(void *priv, const char *fqdn, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	(void)priv; (void)fqdn; (void)sets; (void)nsets;
	snprintf(err, errlen, "not implemented");
	return PERR_TEMP;
}

static enum perr
powerdns_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	(void)priv; (void)fqdn; (void)sets; (void)nsets;
	snprintf(err, errlen, "not implemented");
	return PERR_TEMP;
}

static void
powerdns_free(void *priv)
{
	free(priv);
}

const struct provider_ops powerdns_ops = {
	.type = "powerdns",
	.keys = powerdns_keys,
	.check = powerdns_check,
	.create = powerdns_create,
	.read = powerdns_read,
	.replace = powerdns_replace,
	.free = powerdns_free,
};
