#ifndef DDUP_CONFIG_INT_H
#define DDUP_CONFIG_INT_H

/*
 * Private to the configuration's files: config.c, config_problem.c,
 * config_keys.c, config_read.c, config_value*.c and config_build*.c
 * include it, and no other file (config_digest.c and the tests use
 * config.h only).
 *
 * Reading happens in two passes.  config_read.c splits the text into
 * sections and key/value pairs with inih and only collects them, as
 * written (struct rsec, struct rkey); config_build.c then checks the whole
 * collection and turns it into struct config, so that every problem of
 * the file is reported in one go (ddup.ini(5), DESCRIPTION).  Problems
 * are gathered as struct msg and printed sorted by line.
 *
 * The files form layers, each using only those below it:
 *
 *   config.c               config_load(), config_parse(), config_free()
 *   config_build.c         the top of the file, then calls
 *     config_build_domain.c    -> config_build_endpoint.c
 *     config_build_provider.c, config_build_notify.c,
 *     config_build_state.c, config_build_policy.c
 *   config_read.c          the text into sections and keys; name sets
 *   config_value_check.c   `header` lines and `send`'s escapes
 *   config_value.c         typed values, validators, secrets
 *   config_keys.c          which keys each section takes
 *   config_problem.c       problems with their lines
 *
 * config_read.c and config_value.c do not use each other; config_keys.c
 * uses config_problem.c only.
 */

#include <stddef.h>
#include <stdio.h>

#include "config.h"
#include "util.h"

enum kind { S_TOP, S_PROVIDER, S_DOMAIN, S_ENDPOINT, S_NOTIFY, S_SKIP };

/* A key as written; canon is set once the key is known for its section. */
struct rkey {
	char		*key;
	const char	*canon;
	char		*value;
	int		 line;
};

struct rsec {
	enum kind	 kind;
	char		*name;		/* NULL: none */
	int		 line;
	int		 domain;	/* endpoints: index of their [domain] */
	struct rkey	*keys;		/* set when the text is read */
	size_t		 first;		/* index of the first in ctx.keys */
	size_t		 nkeys;
};

/*
 * The strings of what was read, copied one after the other into blocks
 * freed together with the parse: one block for an ordinary file, never
 * a malloc per string.
 */
struct strblock {
	struct strblock	*next;
	size_t		 len;
	size_t		 cap;
	char		 s[];
};

struct msg {
	int		 line;		/* 0: the file as a whole */
	size_t		 seq;		/* keeps the order of one line's messages */
	int		 warn;
	char		*text;
};

/*
 * A domain's settings as inherited: built-in defaults, then the top of
 * the file, then the domain.  p owns its strings.  line[i] is the line
 * that set entry i of the table of domain keys (config_keys.c), 0 for
 * the built-in default.
 */
#define HC_KEYS_MAX	24
#define HC_HEADERS_MAX	32		/* `header` lines of one section */
struct hc {
	struct domain_policy p;
	int		 line[HC_KEYS_MAX];
};

/* Names seen so far, for lookups and duplicate checks in linear time. */
struct nameset {
	const char	**name;		/* not owned; NULL: free */
	int		*val;
	size_t		 cap;		/* a power of two, or 0 */
	size_t		 n;
};

struct ctx {
	const char	*path;		/* for messages, relative !file */
	int		 group_readable; /* literal secrets earn a warning */

	/* The text being read (config_read.c). */
	const char	*in;
	size_t		 inlen;
	size_t		 inpos;
	char		*buf;		/* the current line, with NUL */
	size_t		 bufsz;
	int		 lineno;

	/*
	 * What was read: secs[0] is the top of the file; the keys of each
	 * section follow each other in keys.  Both arrays are sized once,
	 * from a count of the lines that can make a section or a key.
	 */
	struct rsec	*secs;
	size_t		 nsecs;
	size_t		 capsecs;
	struct rkey	*keys;
	size_t		 nkeys;
	size_t		 capkeys;
	size_t		 cur;
	struct nameset	 keyset;	/* keys of a large secs[cur]: lines */
	struct strblock	*strs;
	int		 lastdomain;	/* -1: none yet, -2: a broken one */

	struct msg	*msgs;
	size_t		 nmsgs;
	size_t		 capmsgs;
	int		 nerr;

	struct config	*c;		/* being built */
	struct nameset	 provset;	/* c->providers: index + 1 */
};

/*
 * config_problem.c, the lowest layer: problems, and growing arrays.
 */

/* Records a problem at line (0: the whole file); warn: not an error. */
void	 cfg_problem(struct ctx *x, int line, int warn, const char *fmt,
	    ...) __attribute__((format(printf, 4, 5)));
/* Whether an error (not a warning) names line already. */
int	 cfg_problem_on(const struct ctx *x, int line);
/* Prints the problems sorted by line, warnings unless warnings is 0. */
void	 cfg_problems_print(struct ctx *x, FILE *errs, int warnings);
void	 cfg_problems_free(struct ctx *x);
/* Room for one more element in *v, doubling; returns *v. */
void	*cfg_grow(void *v, size_t n, size_t *cap, size_t size);

/*
 * config_keys.c: the key tables.
 */

/* How the value of a domain key is read into struct domain_policy. */
enum dk_type {
	DK_LONG,		/* long, from min */
	DK_DURATION,		/* long long ms above zero */
	DK_DURATION0,		/* long long ms, 0 allowed (off) */
	DK_WORD,		/* int: the index of the value in words */
	DK_EXPECT,		/* struct expect */
	DK_TEXT,		/* char *, any text */
	DK_LINE,		/* char *, one printable line */
	DK_HEADERS,		/* char **, with nheaders: every `header` */
	DK_LOCATION,		/* char *, a location name */
	DK_LOCATIONS,		/* char **, with nfailover: a list of them */
	DK_ADDRS		/* struct addrset: addresses, comma-separated */
};

struct cfg_dom_key {
	const char	*name;
	enum dk_type	 type;
	size_t		 off;			/* in struct domain_policy */
	long		 min;			/* DK_LONG */
	const char	*words[4];		/* DK_WORD, NULL-terminated */
};

/* The domain keys, in the order of struct hc's lines. */
extern const struct cfg_dom_key cfg_dom_keys[];
extern const size_t cfg_ndom_keys;

/* The keys of a [notify] section: url first, command second. */
struct cfg_notify_key {
	const char	*name;
	int		 webhook;		/* only with url */
};

extern const struct cfg_notify_key cfg_notify_keys[];
extern const size_t cfg_nnotify_keys;

/* Whether key may be given more than once in a section of kind. */
int	 cfg_repeatable(enum kind kind, const char *key);
/* Sets canon of every key of a top, domain or endpoint section. */
void	 cfg_resolve_keys(struct ctx *x, struct rsec *s);

/*
 * config_read.c: reading, and the name sets.
 */

/* Collects the sections and keys of x->in. */
void	 cfg_read(struct ctx *x);
/* Frees what cfg_read() collected. */
void	 cfg_read_free(struct ctx *x);

/*
 * Adds name (compared without regard to case) with val, 1 or more (a
 * line, an index + 1); when the name is there already, returns the val
 * it came with instead, else 0.  name must outlive the set.
 */
int	 cfg_nameset_add(struct nameset *ns, const char *name, int val);
/* The val of name, or 0. */
int	 cfg_nameset_get(const struct nameset *ns, const char *name);
/* An empty set with room for n names (zero-initialised sets grow). */
void	 cfg_nameset_init(struct nameset *ns, size_t n);
void	 cfg_nameset_free(struct nameset *ns);

/*
 * config_value.c: typed values and validators.
 */

/* A known key's value, or NULL; an empty value is reported here. */
const struct rkey *cfg_get(struct ctx *x, const struct rsec *s,
	    const char *canon);
/* Whether the section holds the known key, empty or not. */
int	 cfg_has_key(const struct rsec *s, const char *canon);
/* Typed values of key k, reported when wrong (out untouched then). */
void	 cfg_get_long(struct ctx *x, const struct rkey *k, long min,
	    long max, long *out);
int	 cfg_get_duration(struct ctx *x, const struct rkey *k,
	    long long *out);
/* Whether s prints as it is (no control character, valid UTF-8). */
int	 cfg_text_ok(const char *s);
/* A location name: letters, digits, '-', '_' and '.'. */
int	 cfg_location_ok(const char *s);
/* Lower-cases s in place and drops one trailing dot; 0 if not a DNS name. */
int	 cfg_dns_name(char *s, int trailing_dot);
/* Whether s is a host name alone, without port, scheme or brackets. */
int	 cfg_bare_host(const char *s);
/* Whether url is a usable http:// or https:// url; err says why not. */
int	 cfg_url_ok(const char *v, char *err, size_t len);
/* Whether url has a user name or password before its host. */
int	 cfg_url_has_userinfo(const char *v);
/* Whether v is written as "!env NAME" or "!file PATH". */
int	 cfg_secret_ref(const char *v);
/*
 * The value of key k (canon, for messages), with !env and !file
 * resolved when secret, else refused; *literal tells a value written in
 * the file.  NULL after a problem.
 */
char	*cfg_secret(struct ctx *x, const struct rkey *k, const char *canon,
	    int secret, int *literal);
/*
 * cfg_secret(), and when warn a warning about a literal secret in a file
 * others can read; owner names the section in it ("provider 'x'").
 */
char	*cfg_value(struct ctx *x, const char *owner, const struct rkey *k,
	    const char *canon, int secret, int warn);
/*
 * config_value_check.c.  A `header` line, "Name: value" (malloc'd), or NULL after a problem
 * that never quotes the value.  The value may be written as !env or
 * !file; with whole, the whole line may be too (the checks' `header`).
 * who, as "notify 'x'", begins the messages; NULL: nothing.
 */
char	*cfg_header(struct ctx *x, const char *who, const struct rkey *k,
	    int whole);
/* The folder of the configuration file, for programs (malloc'd). */
char	*cfg_dir(const struct ctx *x);

/*
 * config_build*.c: building.  config_build.c calls the others; a
 * domain's file calls its endpoints' and the policies'.
 */

/* Checks what cfg_read collected and fills x->c (config_build.c). */
void	 cfg_build(struct ctx *x);

/* config_build_policy.c */
/* The built-in defaults of the domain keys. */
void	 cfg_hc_defaults(struct hc *h);
/* The domain keys of section s, over what h holds already. */
void	 cfg_parse_hc(struct ctx *x, const struct rsec *s, struct hc *h);
/* The line that set domain key canon in h, 0: the built-in default. */
int	 cfg_hc_line(const struct hc *h, const char *canon);
/* A copy of src into dst, strings and all. */
void	 cfg_hc_copy(struct hc *dst, const struct hc *src);
/*
 * The pairs of keys in h that cannot go together, reported at the later
 * key of each pair when it comes after line after (the section's
 * header), so that the top of the file's pair is reported once.
 */
void	 cfg_check_policy(struct ctx *x, const struct hc *h, int after);
/* Where location loc comes in p's order of preference (endpoint_cfg). */
long	 cfg_location_rank(const struct domain_policy *p, const char *loc);
/* Frees the strings of p (config.c frees the domains' with it). */
void	 cfg_policy_free(struct domain_policy *p);

/* config_build_state.c: `state`, `checkers`, `checker`, `quorum`. */
void	 cfg_build_state(struct ctx *x, const struct rsec *s);

/* config_build_provider.c: the [provider] sections into x->c. */
void	 cfg_build_providers(struct ctx *x);

/* config_build_notify.c: the [notify] sections into x->c->notifiers. */
void	 cfg_build_notify(struct ctx *x);
/* Frees one notifier's fields (config.c frees them all with the config). */
void	 cfg_notify_free(struct notify_cfg *n);

/* config_build_domain.c: the [domain] sections, over defaults. */
void	 cfg_build_domains(struct ctx *x, const struct hc *defaults);
/* config_build_endpoint.c: the endpoints of domain d, section idx. */
void	 cfg_build_endpoints(struct ctx *x, size_t idx,
	    struct domain_cfg *d);

#endif
