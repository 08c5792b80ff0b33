#ifndef DDUP_PUBLISH_H
#define DDUP_PUBLISH_H

/*
 * Publication of one domain: compare the sets a run wants with the sets
 * last published (on the domain's first run, with what the provider holds
 * now) and call the provider only when they differ (ddup-check(8),
 * FAILOVER RULES).
 */

#include <stddef.h>

#include "decide.h"
#include "log.h"
#include "provider.h"
#include "util.h"

struct domain_cfg;
struct endpoint_cfg;
struct st_domain;
struct state;

/* One attempted change of one RRset, for the history table. */
struct pub_change {
	enum rrtype	 type;
	char		*old;		/* space-separated, malloc'd */
	char		*new;
};

#define PUB_ERROR_MAX	512

struct publication {
	/* in: publication_init() and publication_add() */
	const struct domain_cfg	*cfg;
	const struct st_domain	*st;	/* the sets last published */
	struct state		*db;	/* marks an update as under way; NULL: dry run */
	struct rrset		 want[RR_NTYPES];	/* by enum rrtype */
	/*
	 * By enum rrtype: the domain manages the type (an endpoint has an
	 * address of its family, or a CNAME), from cfg.  Data, not a call,
	 * for the state's backends, which save what was published: they
	 * may not call this module, which calls the state.
	 */
	int			 managed[RR_NTYPES];
	struct log_tier		 tier;	/* for logs: the tier published */
	long			 ttl;	/* degradedTtl in force; 0: the domain's ttl */

	/* out */
	int			 synced;	/* DNS holds want (written, or found so) */
	int			 wrote;		/* this run changed DNS */
	int			 failed;	/* reading or writing failed */
	enum perr		 perr;		/* the provider's error class */
	char			*error;		/* with failed; allocated, at most
						   PUB_ERROR_MAX - 1 bytes */
	struct pub_change	 changes[RR_NTYPES];
	size_t			 nchanges;
};

void	 publication_init(struct publication *p, const struct domain_cfg *cfg,
	    const struct st_domain *st, struct state *db, struct tier tier);
/* The tier as logs and status show it: "0", "0, location austin"... */
void	 tier_text(const struct log_tier *t, char *buf, size_t len);
/* Adds an endpoint of the tier to publish: its address or its CNAME. */
void	 publication_add(struct publication *p, const struct endpoint_cfg *e);
/*
 * allDown = fallback (ddup.ini(5), POLICIES): addresses a to publish
 * instead of any endpoint, not proxied, at the domain's ttl.
 */
void	 publication_add_fallback(struct publication *p,
	    const struct addrset *a);
/*
 * degradedTtl: the TTL of the sets to publish while they are not the
 * preferred ones (not of a proxied one: automatic).  Called last.
 */
void	 publication_degrade(struct publication *p, long ttl);
/* Does the domain manage type i (an enum rrtype)?  p->managed[i]. */
int	 publication_managed(const struct publication *p, int i);

/* Brings DNS to want through prov; logs the change or the failure. */
/*
 * Whether publish() may send an update: a managed set to publish differs
 * from the stored one, or the stored one is not trusted (then the
 * provider is read first).  No I/O.
 */
int	 publication_may_write(const struct publication *p);
/* The sets to publish as one line of text, malloc'd ("" for none). */
char	*publication_want_text(const struct publication *p);
void	 publish(struct publication *p, struct provider *prov);
/* Records and logs a failure that happened before publish() could run. */
void	 publish_failed(struct publication *p, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Dry run: what publish() would do, without calling the provider. */
void	 publish_explain(const struct publication *p, int any_healthy,
	    char *why, size_t len);

void	 publication_free(struct publication *p);

#endif
