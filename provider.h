#ifndef DDUP_PROVIDER_H
#define DDUP_PROVIDER_H

/*
 * The DNS provider interface.  Each provider is one file in providers/
 * that defines one const struct provider_ops, listed once in the table
 * in providers/list.c (which defines provider_lookup(), provider_at()
 * and provider_types()).  The core never looks inside a provider: it
 * asks it to read a name's current RRsets and to replace them, and gets
 * back a classified error so the core (not the provider) decides what
 * to do.  provider.c holds the rest: the calls through the ops, and the
 * helpers the providers share.
 */

#include <stddef.h>

#include "rrset.h"
#include "util.h"

struct provider_cfg;

/* Classified provider errors. */
enum perr {
	PERR_OK = 0,
	PERR_AUTH,		/* credentials refused: 401/403, NOTAUTH, REFUSED, BADKEY */
	PERR_NOTFOUND,		/* zone or name unknown to the provider: 404, NOTZONE */
	PERR_INVALID,		/* the provider rejected the request: 400/422, FORMERR */
	PERR_RATELIMIT,		/* 429 and friends: try again later */
	PERR_TEMP,		/* 5xx, SERVFAIL, an answer that makes no sense: next run */
	PERR_NET		/* no answer at all: refused, unreachable, timed out */
};

/* Flags of a provider key. */
#define PK_REQUIRED	0x01	/* must be present */
#define PK_SECRET	0x02	/* may be !env/!file; never printed */

/* One key a provider section accepts (besides `type`). */
struct provider_key {
	const char	*name;		/* canonical spelling; matched case-insensitively */
	int		 flags;
};

/*
 * The RRsets of a name (rrset.h).  For read, the caller sets type; the
 * provider fills ttl and the records (ttl 0 and nothing held when the
 * name has no such records).  For replace, an empty RRset means "delete
 * it".  A provider is asked for CNAME only if it has PCAP_CNAME, and
 * looks at proxied only if it has PCAP_PROXIED.
 */

/*
 * Capabilities: what the core may ask of a provider.  The core reads
 * these bits, never a provider's name.
 */
#define PCAP_CNAME	0x01	/* can publish a CNAME instead of addresses */
#define PCAP_PROXIED	0x02	/* has a `proxied` flag per record (Cloudflare) */
#define PCAP_ATOMIC	0x04	/* replace() of several RRsets is all or nothing */
#define PCAP_TTL_AUTO	0x08	/* TTL 1 means "automatic", outside ttl_min */
/*
 * read() gives what the provider wrote (a file), not what DNS serves: a
 * domain with no stored set to trust (its first run, unsure) is written
 * whatever read() gives, so that a step after the write that failed (a
 * reload) is done again.
 */
#define PCAP_WRITE_UNSURE	0x10

struct provider_ops {
	const char		 *type;		/* value of `type` */
	const struct provider_key *keys;	/* terminated by { NULL, 0 } */
	unsigned		  caps;		/* PCAP_* */
	long			  ttl_min;	/* the TTLs the API accepts */
	long			  ttl_max;
	/*
	 * Optional: the smallest TTL a section accepts when one of its
	 * keys can raise ttl_min (deSEC's per-domain minimum); NULL:
	 * ttl_min.  It must take any value of that key: a bad one is
	 * check()'s to report, and the floor it gives then matters not.
	 * No I/O.
	 */
	long	(*ttl_min_of)(const struct provider_cfg *pc);
	/*
	 * The key that holds the zone's DNS name ("zone", "zoneName"), so
	 * the configuration can check that a domain is inside it; NULL, or
	 * the key not given (a zone known by id), skips the check.
	 */
	const char		 *zone_key;

	/*
	 * Validates the values of a section whose keys already passed the
	 * table (required present, no unknown).  Returns 0, or -1 with a
	 * message in err and *key set to the key at fault (NULL: the section).
	 * No I/O.
	 */
	int	(*check)(const struct provider_cfg *pc, const char **key,
		    char *err, size_t errlen);

	/*
	 * Optional: a warning about a valid section (e.g. unsigned
	 * updates), or NULL.  No I/O.
	 */
	const char *(*warning)(const struct provider_cfg *pc);

	/* Builds the provider's private state; NULL with err set on failure. */
	void	*(*create)(const struct provider_cfg *pc, char *err,
		    size_t errlen);

	/*
	 * Reads the current sets of fqdn (no trailing dot) for each of the
	 * nsets families asked for.
	 */
	enum perr (*read)(void *priv, const char *fqdn, struct rrset *sets,
		    size_t nsets, char *err, size_t errlen);

	/*
	 * Replaces the sets of fqdn, all of them in one request where the
	 * provider allows it (all or nothing).
	 */
	enum perr (*replace)(void *priv, const char *fqdn,
		    const struct rrset *sets, size_t nsets, char *err,
		    size_t errlen);

	void	 (*free)(void *priv);
};

/* The provider for a `type` value, or NULL. */
const struct provider_ops *provider_lookup(const char *type);
/* The i-th provider of the table, NULL past the last (for the tests). */
const struct provider_ops *provider_at(size_t i);
/* "rfc2136, powerdns" for error messages. */
const char	*provider_types(void);
/*
 * The value of a provider's own key (matched case-insensitively), or
 * NULL.  Defined here, in provider.c; config.h declares it too, beside
 * struct provider_cfg.
 */
const char	*provider_cfg_get(const struct provider_cfg *pc,
		    const char *key);
/* "authentication failed", "not found", ... */
const char	*perr_str(enum perr e);
/*
 * For a provider's check(): the optional `timeout` key is absent or a
 * positive duration.  0, or -1 with err set and *key = "timeout".
 */
int		 provider_check_timeout(const struct provider_cfg *pc,
		    const char **key, char *err, size_t errlen);
/*
 * A credential that goes into an HTTP header: present, not empty and
 * without a line break (which would smuggle in another header).  The
 * value is never echoed.  0, or -1 with err set and *key = name.
 */
int		 provider_check_header_secret(const struct provider_cfg *pc,
		    const char *name, const char **key, char *err,
		    size_t errlen);
/*
 * The one rule for a zone's DNS name: labels of letters, digits and '-'
 * (at most 63 bytes each, none empty), at most 253 bytes, an optional
 * final dot.  1 when v is one.
 */
int		 provider_zone_ok(const char *v);
/*
 * The key name (zone, zoneName), when given, is a DNS zone name
 * (provider_zone_ok()).  0, or -1 with err set and *key = name.
 */
int		 provider_check_zone(const struct provider_cfg *pc,
		    const char *name, const char **key, char *err,
		    size_t errlen);
/* Lower-cases s in place (ASCII: DNS names compare so). */
void		 provider_lower(char *s);
/* The zone as the APIs name it: lower case, without its final dot. */
char		*provider_zone_name(const char *zone);

/* A configured provider: ops plus its private state. */
struct provider;

struct provider	*provider_create(const struct provider_cfg *pc, char *err,
		    size_t errlen);
enum perr	 provider_read(struct provider *p, const char *fqdn,
		    struct rrset *sets, size_t nsets, char *err, size_t errlen);
enum perr	 provider_replace(struct provider *p, const char *fqdn,
		    const struct rrset *sets, size_t nsets, char *err,
		    size_t errlen);
void		 provider_free(struct provider *p);

extern const struct provider_ops rfc2136_ops;
extern const struct provider_ops powerdns_ops;
extern const struct provider_ops exec_ops;
extern const struct provider_ops azure_ops;
extern const struct provider_ops ovh_ops;
extern const struct provider_ops cloudflare_ops;
extern const struct provider_ops desec_ops;
extern const struct provider_ops gandi_ops;
extern const struct provider_ops hetzner_ops;
extern const struct provider_ops digitalocean_ops;
extern const struct provider_ops route53_ops;
extern const struct provider_ops zonefile_ops;
extern const struct provider_ops porkbun_ops;
extern const struct provider_ops bunny_ops;
extern const struct provider_ops webhook_ops;

#endif
