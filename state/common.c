/*
 * What both backends and state.c share (state/backend.h): the frees and
 * lookups of state.h's types, which the core calls too, and the small
 * helpers the backends fill them with.  It calls no backend and no
 * state.c, so every one of them may use it.
 */

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "rrset.h"
#include "state.h"
#include "state/backend.h"
#include "util.h"

void
state_domain_free(struct st_domain *d)
{
	int t;

	for (t = 0; t < RR_NTYPES; t++) {
		rrset_clear(&d->pub[t]);
		d->has_pub[t] = 0;
	}
	free(d->last_error);
	free(d->failover_reason);
	d->last_error = d->failover_reason = NULL;
}

int
st_fail_open_parse(const char *v)
{
	if (v != NULL && strcmp(v, "all") == 0)
		return ALLDOWN_ALL;
	if (v != NULL && strcmp(v, "fallback") == 0)
		return ALLDOWN_FALLBACK;
	return ALLDOWN_KEEP;
}

const char *
st_fail_open_str(int fail_open)
{
	return fail_open == ALLDOWN_ALL ? "all" :
	    fail_open == ALLDOWN_FALLBACK ? "fallback" : NULL;
}

char *
st_error_dup(const char *v)
{
	size_t	 len;
	char	*s;

	if (v == NULL || v[0] == '\0')
		return NULL;
	/* Cut as the 512-byte buffer it replaces did. */
	len = strnlen(v, ST_ERROR_MAX - 1);
	s = xmalloc(len + 1);
	memcpy(s, v, len);
	s[len] = '\0';
	return s;
}

void
state_requests_free(struct st_requests *r)
{
	size_t i;

	for (i = 0; i < r->ndrains; i++) {
		free(r->drains[i].domain);
		free(r->drains[i].endpoint);
	}
	free(r->drains);
	for (i = 0; i < r->nfailbacks; i++)
		free(r->failbacks[i]);
	free(r->failbacks);
	memset(r, 0, sizeof(*r));
}

const struct st_drain *
state_find_drain(const struct st_requests *r, const char *domain,
    const char *endpoint)
{
	size_t i;

	for (i = 0; i < r->ndrains; i++)
		if (strcmp(r->drains[i].domain, domain) == 0 &&
		    strcmp(r->drains[i].endpoint, endpoint) == 0)
			return &r->drains[i];
	return NULL;
}

int
state_has_failback(const struct st_requests *r, const char *domain)
{
	size_t i;

	for (i = 0; i < r->nfailbacks; i++)
		if (strcmp(r->failbacks[i], domain) == 0)
			return 1;
	return 0;
}

void
state_changes_free(struct st_change *v, size_t n)
{
	size_t i;

	for (i = 0; v != NULL && i < n; i++) {
		free(v[i].domain);
		free(v[i].type);
		free(v[i].old_set);
		free(v[i].new_set);
		free(v[i].error);
	}
	free(v);
}

void
state_timeline_free(struct st_timeline *t)
{
	size_t i;

	for (i = 0; t->segs != NULL && i < t->nsegs; i++) {
		free(t->segs[i].domain);
		free(t->segs[i].endpoint);
	}
	for (i = 0; t->marks != NULL && i < t->nmarks; i++) {
		free(t->marks[i].domain);
		free(t->marks[i].type);
		free(t->marks[i].old_set);
		free(t->marks[i].new_set);
	}
	free(t->segs);
	free(t->marks);
	memset(t, 0, sizeof(*t));
}

struct counter_key {
	const char	*domain, *endpoint, *name;
};

/*
 * The order both backends read the counters in: byte order of each
 * field in turn.
 */
static int
counter_cmp(const void *key, const void *elem)
{
	const struct counter_key *a = key;
	const struct st_counter *b = elem;
	int c;

	if ((c = strcmp(a->domain, b->domain)) != 0)
		return c;
	if ((c = strcmp(a->endpoint, b->endpoint)) != 0)
		return c;
	return strcmp(a->name, b->name);
}

long long
state_counter(const struct st_counter *v, size_t n, const char *domain,
    const char *endpoint, const char *name)
{
	struct counter_key key = { domain, endpoint, name };
	const struct st_counter *hit;

	if (v == NULL || n == 0)
		return 0;
	hit = bsearch(&key, v, n, sizeof(*v), counter_cmp);
	return hit != NULL ? hit->value : 0;
}

void
state_counters_free(struct st_counter *v, size_t n)
{
	size_t i;

	for (i = 0; v != NULL && i < n; i++) {
		free(v[i].domain);
		free(v[i].endpoint);
		free(v[i].name);
	}
	free(v);
}

void
state_deliveries_free(struct st_delivery *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].body);
	free(v);
}

const char *
state_errmsg(const struct state *st)
{
	if (st == NULL)
		return "no state file";
	return st->err;
}
