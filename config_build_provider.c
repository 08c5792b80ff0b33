/*
 * The [provider NAME] sections (ddup.ini(5), PROVIDERS): the `type`
 * names the provider, whose table (provider_lookup()) lists the keys it
 * takes, which are required and which are secrets; the provider then
 * checks its settings as a whole.
 */

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_int.h"
#include "provider.h"
#include "util.h"

/* The value of a provider key, secrets resolved; NULL after a problem. */
static char *
provider_value(struct ctx *x, const struct provider_cfg *pc,
    const struct rkey *k, const char *canon, int secret)
{
	char *v;
	int literal;

	if ((v = cfg_secret(x, k, canon, secret, &literal)) == NULL)
		return NULL;
	if (secret && literal && x->group_readable)
		cfg_problem(x, k->line, 1, "provider '%s': secret '%s' is "
		    "written in a file that group or others can read; use "
		    "!env or !file, or make the file private", pc->name, canon);
	return v;
}

static void
build_provider(struct ctx *x, const struct rsec *s, struct provider_cfg *pc)
{
	const struct provider_key *pk;
	const struct rkey *k, *type = NULL;
	const char *key, *w;
	char err[512], *v;
	size_t i;
	int nerr = x->nerr;

	pc->name = xstrdup(s->name);
	pc->line = s->line;
	/* Where an exec provider's program runs (ddup.ini(5), PROVIDERS). */
	pc->dir = cfg_dir(x);
	if (!cfg_text_ok(pc->name))
		cfg_problem(x, s->line, 0, "provider name '%s': a control "
		    "character or invalid UTF-8", pc->name);
	for (i = 0; i < s->nkeys; i++)
		if (strcasecmp(s->keys[i].key, "type") == 0)
			type = &s->keys[i];
	if (type == NULL) {
		cfg_problem(x, s->line, 0, "provider '%s': missing 'type' "
		    "(one of: %s)", pc->name, provider_types());
		return;
	}
	if ((pc->ops = provider_lookup(type->value)) == NULL) {
		cfg_problem(x, type->line, 0, "provider '%s': unknown type "
		    "'%s' (known: %s)", pc->name, type->value,
		    provider_types());
		return;
	}
	pc->kv = xcalloc(s->nkeys, sizeof(*pc->kv));
	for (i = 0; i < s->nkeys; i++) {
		k = &s->keys[i];
		if (k == type)
			continue;
		for (pk = pc->ops->keys; pk->name != NULL; pk++)
			if (strcasecmp(pk->name, k->key) == 0)
				break;
		if (pk->name == NULL) {
			cfg_problem(x, k->line, 0, "provider '%s': unknown "
			    "key '%s' for type %s", pc->name, k->key,
			    pc->ops->type);
			continue;
		}
		v = provider_value(x, pc, k, pk->name,
		    (pk->flags & PK_SECRET) != 0);
		if (v == NULL)
			continue;
		pc->kv[pc->nkv].key = xstrdup(pk->name);
		pc->kv[pc->nkv].value = v;
		pc->kv[pc->nkv].line = k->line;
		pc->kv[pc->nkv].secret = (pk->flags & PK_SECRET) != 0;
		pc->nkv++;
	}
	for (pk = pc->ops->keys; pk->name != NULL; pk++) {
		if ((pk->flags & PK_REQUIRED) == 0)
			continue;
		for (i = 0; i < s->nkeys; i++)
			if (strcasecmp(pk->name, s->keys[i].key) == 0)
				break;
		if (i == s->nkeys)
			cfg_problem(x, s->line, 0, "provider '%s': missing "
			    "'%s'", pc->name, pk->name);
	}
	if (x->nerr != nerr)
		return;
	key = NULL;
	err[0] = '\0';
	if (pc->ops->check(pc, &key, err, sizeof(err)) == -1)
		cfg_problem(x, provider_cfg_line(pc, key), 0, "provider '%s': "
		    "%s", pc->name, err[0] != '\0' ? err : "invalid settings");
	if (pc->ops->warning != NULL && (w = pc->ops->warning(pc)) != NULL)
		cfg_problem(x, s->line, 1, "provider '%s': %s", pc->name, w);
}

int
provider_cfg_line(const struct provider_cfg *pc, const char *key)
{
	size_t i;

	if (key != NULL)
		for (i = 0; i < pc->nkv; i++)
			if (strcasecmp(pc->kv[i].key, key) == 0)
				return pc->kv[i].line;
	return pc->line;
}

void
cfg_build_providers(struct ctx *x)
{
	struct config *c = x->c;
	size_t i, np = 0;
	int first;

	for (i = 0; i < x->nsecs; i++)
		np += x->secs[i].kind == S_PROVIDER;
	/* Domains point into this array: it is sized once, never moved. */
	c->providers = xcalloc(np, sizeof(*c->providers));
	for (i = 0; i < x->nsecs; i++) {
		if (x->secs[i].kind != S_PROVIDER)
			continue;
		if ((first = cfg_nameset_add(&x->provset, x->secs[i].name,
		    (int)c->nproviders + 1)) != 0) {
			cfg_problem(x, x->secs[i].line, 0, "provider '%s' "
			    "defined twice (first at line %d)", x->secs[i].name,
			    c->providers[first - 1].line);
			continue;
		}
		build_provider(x, &x->secs[i], &c->providers[c->nproviders++]);
	}
}
