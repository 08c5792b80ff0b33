/* SKELETON: to be replaced by the real provider. */

#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "provider.h"

static const struct provider_key rfc2136_keys[] = {
	{ "server", PK_REQUIRED },
	{ "zone", PK_REQUIRED },
	{ "keyName", 0 },
	{ "keyAlgorithm", 0 },
	{ "keySecret", PK_SECRET },
	{ "protocol", 0 },
	{ "timeout", 0 },
	{ NULL, 0 }
};

static int
rfc2136_check(const struct provider_cfg *pc, const char **key, char *err,
    size_t errlen)
{
	(void)pc;
	(void)key;
	(void)err;
	(void)errlen;
	return 0;
}

static void *
rfc2136_create(const struct provider_cfg *pc, char *err, size_t errlen)
{
	(void)pc;
	snprintf(err, errlen, "not implemented");
	return NULL;
}

static enum perr
rfc2136_read(void *priv, const char *fqdn, struct rrset *sets, size_t nsets,
    char *err, size_t errlen)
{
	(void)priv; (void)fqdn; (void)sets; (void)nsets;
	snprintf(err, errlen, "not implemented");
	return PERR_TEMP;
}

static enum perr
rfc2136_replace(void *priv, const char *fqdn, const struct rrset *sets,
    size_t nsets, char *err, size_t errlen)
{
	(void)priv; (void)fqdn; (void)sets; (void)nsets;
	snprintf(err, errlen, "not implemented");
	return PERR_TEMP;
}

static void
rfc2136_free(void *priv)
{
	free(priv);
}

const struct provider_ops rfc2136_ops = {
	.type = "rfc2136",
	.keys = rfc2136_keys,
	.check = rfc2136_check,
	.create = rfc2136_create,
	.read = rfc2136_read,
	.replace = rfc2136_replace,
	.free = rfc2136_free,
};
