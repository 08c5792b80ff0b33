#ifndef DDUP_CONFIG_H
#define DDUP_CONFIG_H

/*
 * The INI configuration (ddup.ini(5)), read with inih and validated
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
	char		*dir;		/* the configuration file's folder */
};

/* provider_cfg_get(), the value of a key, is provider.h's. */
/* The line of key, or the section's line when not given. */
int		 provider_cfg_line(const struct provider_cfg *pc,
		    const char *key);

struct endpoint_cfg {
	char		*name;		/* `name`, else section name, else url (the same
					   string), else command (a copy) */
	char		*url;		/* NULL: a check program (command) */
	char		*command;	/* the program's line as written; NULL: url */
	char		*send;		/* tcp/tls: bytes written, decoded; NULL: none */
	size_t		 send_len;
	char		*expect_text;	/* tcp/tls `expect`; NULL: none */
	char		*host;		/* NULL: none */
	struct addr	 ip;		/* parsed and canonical; family 0 with cname */
	/* The ints by ip's odd size, so no padding comes between. */
	int		 proxied;	/* its own `proxied`, else its provider's */
	int		 line;
	char		*cname;		/* CNAME target, lower case, no trailing
					   dot; NULL: the endpoint publishes ip */
	long		 priority;
	char		*location;	/* NULL: none */
	/*
	 * Where its location comes in the domain's order of preference
	 * (ddup.ini(5), POLICIES): 0 the domain's own location, i for
	 * failover location i, then the rest; 0 for every endpoint of a domain without one.
	 */
	long		 rank;
};

/*
 * The settings a domain takes from the top of the file unless it sets
 * them itself (ddup.ini(5), DOMAINS and POLICIES).  config_keys.c lists
 * them in one table, so a new one is a field here and an entry there.
 */
/* allDown (ddup.ini(5), POLICIES): what a domain with nothing healthy publishes. */
enum all_down {
	ALLDOWN_KEEP = 0,	/* nothing: DNS stays as it is */
	ALLDOWN_ALL,		/* every endpoint of the best tier not drained */
	ALLDOWN_FALLBACK	/* the fallback addresses */
};

struct domain_policy {
	long		 ttl;
	long long	 timeout_ms;
	long		 attempts;
	long		 recover_after;
	int		 head;		/* method HEAD (else GET) */
	struct expect	 expect;
	char		*expect_body;	/* NULL: none */
	char		*location;	/* NULL: none */
	char		**failover;	/* failoverLocations, in order */
	size_t		 nfailover;
	int		 failback_manual; /* failback = manual (else auto) */
	int		 publish_one;	/* publish = one (else all) */
	long		 min_healthy;
	/* HTTP(S) checks: `header` lines "Name: value", each a secret. */
	char		**headers;
	size_t		 nheaders;
	char		*user_agent;	/* NULL: "ddup/1.0" */
	long long	 max_latency_ms; /* 0: none */
	long long	 recheck_ms;	/* 0: off */
	long long	 cert_warn_ms;	/* 0: off */
	int		 all_down;	/* allDown: enum all_down */
	struct addrset	 fallback;	/* allDown = fallback: what to publish */
	long		 degraded_ttl;	/* degradedTtl; 0: none, ttl throughout */
};

struct domain_cfg {
	char		*name;		/* lower case, no trailing dot */
	const struct provider_cfg *provider;
	struct domain_policy pol;
	struct endpoint_cfg *eps;
	size_t		 neps;
	int		 has4;		/* some endpoint has an IPv4 address: A is managed */
	int		 has6;		/* likewise AAAA */
	int		 hascname;	/* some endpoint has a cname: CNAME is managed */
	int		 line;
};

/*
 * The events of ddup.ini(5), NOTIFICATIONS, as bits of notify_cfg.events
 * (1 << EVT_...).
 */
enum event_type {
	EVT_DNS_UPDATED,
	EVT_DNS_UPDATE_FAILED,
	EVT_ALL_UNHEALTHY,
	EVT_ENDPOINT_DOWN,
	EVT_ENDPOINT_UP,
	EVT_CERT_EXPIRING,
	EVT_COUNT
};

/* "dns_updated", ...; NULL past EVT_COUNT. */
const char	*event_type_str(int type);

/*
 * A [notify NAME] section (ddup.ini(5), NOTIFICATIONS): a webhook (url)
 * or a program.
 */
struct notify_cfg {
	char		*name;
	char		*url;		/* NULL: a program */
	int		 url_secret;	/* from !env or !file: never shown */
	char		*command;	/* NULL: a webhook */
	char		*dir;		/* the program runs in the config's folder */
	char		*method;	/* "POST" */
	char		**headers;	/* "Name: value", secrets resolved */
	size_t		 nheaders;
	long long	 timeout_ms;	/* of all its deliveries in one run */
	long		 attempts;	/* the first delivery included */
	unsigned	 events;	/* 1 << enum event_type */
	int		 line;
};

struct config {
	char		*path;
	long long	 interval_ms;
	char		*state;
	long		 max_parallel;
	long		 max_exec;	/* check programs at once (maxExec) */
	char		*dir;		/* the configuration file's folder */
	char		*ca_file;	/* NULL: system store */
	int		 log_json;
	long long	 history_ms;
	char		*control_url;	/* NULL: none */
	char		*status_html;	/* the dashboard's path, NULL: none */
	char		*metrics_file;	/* Prometheus text file, NULL: none */
	/*
	 * ddup.ini(5), SEVERAL CHECKERS.  state_pg: state is a PostgreSQL
	 * URI (a secret: print it only through pguri_redact()).  The fleet as written, in file
	 * order (ncheckers 0: none given); checker: this host's name, one
	 * of them (the host name by default); quorum: how many must agree,
	 * "majority" resolved (1 without a fleet).  With a SQLite state
	 * they are validated and not used.
	 */
	int		 state_pg;
	char		**checkers;
	size_t		 ncheckers;
	char		*checker;
	long		 quorum;
	struct domain_policy defaults;	/* the top of the file */
	struct provider_cfg *providers;
	size_t		 nproviders;
	struct domain_cfg *domains;
	size_t		 ndomains;
	struct notify_cfg *notifiers;
	size_t		 nnotifiers;
};

/*
 * Reads and validates path.  Problems go to errs as "FILE:LINE: message"
 * (all of them); warnings as "FILE:LINE: warning: message" unless
 * warnings is 0.  Returns NULL if the file cannot be used.  A directory,
 * an unreadable file or one larger than 64 MiB is refused.
 */
struct config	*config_load(const char *path, FILE *errs, int warnings);

/*
 * config_load() on the len bytes of buf, which may hold anything (NUL
 * bytes included; more than 64 MiB is refused as for a file).  name
 * stands for the file in messages and c->path, and relative !file paths
 * are taken from its folder.  Nothing but !file secrets and caFile
 * (looked at, not read) touches the file system.  As the text has no
 * file mode, a literal secret earns no warning here.
 */
struct config	*config_parse(const char *name, const char *buf,
		    size_t len, FILE *errs, int warnings);
void		 config_free(struct config *c);

/*
 * The digest of the configuration as the decision sees it (ddup.ini(5),
 * SEVERAL CHECKERS):
 * SHA-256, as 64 hex digits and a NUL in buf, of the canonical values
 * of every domain, endpoint and provider key (secrets left out), of
 * checkers, quorum and interval.  The keys that describe the host
 * (checker, controlUrl, caFile) and those that do not change a decision
 * (state, maxParallel, logFormat, history) are left out, so every
 * checker of a fleet has the same digest (config_digest.c).
 */
#define CONFIG_DIGEST_LEN	65
void		 config_decision_digest(const struct config *c,
		    char buf[CONFIG_DIGEST_LEN]);
/*
 * The same of the names a state keeps rows under: each domain with the
 * record types it manages, and its endpoints.  A store last pruned to
 * this digest holds no other (state/pg_save.c).
 */
void		 config_names_digest(const struct config *c,
		    char buf[CONFIG_DIGEST_LEN]);

/*
 * A redactor (redact.h) that holds every secret value of c: the keys
 * marked secret in the providers' tables, the values of the notifiers'
 * headers, their urls given as !env or !file, the passwords of a
 * PostgreSQL `state`.  Free it with redactor_free().
 */
struct redactor;
struct redactor	*config_redactor(const struct config *c);

/*
 * Decodes an endpoint's `send` (ddup.ini(5), ENDPOINTS): the escapes
 * \r, \n, \t, \\ and \xHH (two hex digits), every other byte as it is,
 * into out, at most cap bytes, their count in *outlen (a NUL may be among
 * them).  Returns 0, or -1 with why in err: a bad escape and where it
 * starts (byte 1 is the first), or more than cap bytes.  Pure: nothing
 * allocated, nothing touched but out, *outlen and err.
 */
int		 config_send_decode(const char *in, char *out, size_t cap,
		    size_t *outlen, char *err, size_t errlen);

/* What e publishes, as text: its address, or its CNAME target. */
const char	*endpoint_target(const struct endpoint_cfg *e);
/*
 * What e's check is, as the state keeps it (another one: another
 * endpoint's counters): its url, or its check program's command.
 */
const char	*endpoint_check(const struct endpoint_cfg *e);

/*
 * The location of rank in d's order of preference: its own location,
 * a failover location, or NULL for the rest (and for every rank of a
 * domain without a location).
 */
const char	*domain_rank_location(const struct domain_cfg *d, long rank);

/*
 * The i-th key the reader knows outside [provider] sections (the
 * providers' own keys are in their tables, provider_at()), in its
 * canonical spelling; NULL past the last.  Every table of keys the
 * reader accepts is listed here: tests/unit/test_doc.c checks that each
 * one is documented in doc/ddup.ini.5.
 */
const char	*config_key_at(size_t i);

/*
 * Where the key of config_key_at(i) may be written, CFG_KEY_* bits, so
 * that the test finds it in that part of the manual; 0 past the last.
 */
#define CFG_KEY_TOP	 0x01
#define CFG_KEY_DOMAIN	 0x02	/* also at the top, as every domain's default */
#define CFG_KEY_ENDPOINT 0x04
#define CFG_KEY_NOTIFY	 0x08
int		 config_key_where(size_t i);

#endif
