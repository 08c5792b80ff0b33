#ifndef DDUP_CONFIG_H
#define DDUP_CONFIG_H

/*
 * The INI configuration (SPEC section 3), read with inih and validated
 * as a whole.  config_load() and config_parse() either return a
 * configuration in which every value is valid, or NULL after printing
 * every problem found as "FILE:LINE: message".  The structs are plain
 * data owned by the config; callers read them and never free parts of
 * them.
 */

#include <stdio.h>

#include "util.h"

struct provider_ops;

/* A key of a [provider] section other than `type`. */
struct kv {
	char		*key;		/* canonical spelling from the provider's table */
	char		*value;		/* secrets already resolved from !env/!file */
	int		 line;
	int		 secret;	/* PK_SECRET: never print value */
};

struct provider_cfg {
	char		*name;		/* section name */
	const struct provider_ops *ops;	/* from `type` */
	struct kv	*kv;
	size_t		 nkv;
	int		 line;		/* of the section header */
};

/* The value of key (case-insensitive), or NULL when not given. */
const char	*provider_cfg_get(const struct provider_cfg *pc,
		    const char *key);
/* The line of key, or the section's line when not given. */
int		 provider_cfg_line(const struct provider_cfg *pc,
		    const char *key);

struct endpoint_cfg {
	char		*name;		/* `name`, else section name, else url */
	char		*url;
	char		*host;		/* NULL: none */
	struct addr	 ip;		/* parsed and canonical */
	long		 priority;
	int		 line;
};

struct domain_cfg {
	char		*name;		/* lower case, no trailing dot */
	const struct provider_cfg *provider;
	long		 ttl;
	long long	 timeout_ms;
	long		 attempts;
	long		 recover_after;
	int		 head;		/* method HEAD (else GET) */
	struct expect	 expect;
	char		*expect_body;	/* NULL: none */
	struct endpoint_cfg *eps;
	size_t		 neps;
	int		 has4;		/* some endpoint has an IPv4 address: A is managed */
	int		 has6;		/* likewise AAAA */
	int		 line;
};

struct config {
	char		*path;
	long long	 interval_ms;
	char		*state;
	long		 max_parallel;
	char		*ca_file;	/* NULL: system store */
	int		 log_json;
	long long	 history_ms;
	struct provider_cfg *providers;
	size_t		 nproviders;
	struct domain_cfg *domains;
	size_t		 ndomains;
};

/*
 * Reads and validates path.  Problems go to errs as "FILE:LINE: message"
 * (all of them); warnings as "FILE:LINE: warning: message" unless
 * warnings is 0.  Returns NULL if the file cannot be used.  A directory,
 * an unreadable file or one larger than 1 MiB is refused.
 */
struct config	*config_load(const char *path, FILE *errs, int warnings);

/*
 * config_load() on the len bytes of buf, which may hold anything (NUL
 * bytes included; more than 1 MiB is refused as for a file).  name
 * stands for the file in messages and c->path, and relative !file paths
 * are taken from its folder.  Nothing but !file secrets and caFile
 * (looked at, not read) touches the file system.  As the text has no
 * file mode, a literal secret earns no warning here.
 */
struct config	*config_parse(const char *name, const char *buf,
		    size_t len, FILE *errs, int warnings);
void		 config_free(struct config *c);

#endif
