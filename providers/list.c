/*
 * The one explicit table of providers (provider.h), and the look-ups
 * through it.  It lives apart from provider.c, whose helpers every
 * provider uses: the table uses every provider, and no provider uses
 * it.  Adding a provider: one file in providers/, one line here, one in
 * providers/Makefile.inc.  What a provider can do is declared in its
 * ops (caps), never tested by its name.
 */

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "provider.h"

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
	&zonefile_ops,
	&porkbun_ops,
	&bunny_ops,
	&webhook_ops,
	NULL
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
