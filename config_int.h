#ifndef DDUP_CONFIG_INT_H
#define DDUP_CONFIG_INT_H

/*
 * Private to the config module (config.c, config_read.c, config_build.c):
 * no other file includes this header.
 *
 * Reading happens in two passes.  config_read.c splits the text into
 * sections and key/value pairs with inih and only collects them, as
 * written (struct rsec, struct rkey); config_build.c then checks the whole
 * collection and turns it into struct config, so that every problem of
 * the file is reported in one go.  Problems are gathered as struct msg
 * and printed by config.c, sorted by line.
 */

#include <stddef.h>

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
 * that set entry i of the table of domain keys (config_read.c), 0 for
 * the built-in default.
 */
#define HC_KEYS_MAX	24
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

/* Records a problem at line (0: the whole file); warn: not an error. */
void	 cfg_problem(struct ctx *x, int line, int warn, const char *fmt,
	    ...) __attribute__((format(printf, 4, 5)));

/* Collects the sections and keys of x->in (config_read.c). */
void	 cfg_read(struct ctx *x);
/* Frees what cfg_read() collected. */
void	 cfg_read_free(struct ctx *x);

/* Sets canon of every key of a top, domain or endpoint section. */
void	 cfg_resolve_keys(struct ctx *x, struct rsec *s);
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
/* The built-in defaults of the domain keys. */
void	 cfg_hc_defaults(struct hc *h);
/* The domain keys of section s, over what h holds already. */
void	 cfg_parse_hc(struct ctx *x, const struct rsec *s, struct hc *h);
/* The line that set domain key canon in h, 0: the built-in default. */
int	 cfg_hc_line(const struct hc *h, const char *canon);
/* A copy of src into dst, strings and all. */
void	 cfg_hc_copy(struct hc *dst, const struct hc *src);
/* A location name: letters, digits, '-', '_' and '.' (SPEC 9). */
int	 cfg_location_ok(const char *s);
/* Frees the strings of p (config.c frees the domains' with it). */
void	 cfg_policy_free(struct domain_policy *p);

/*
 * The value of key k (canon, for messages), with !env and !file
 * resolved when secret, else refused; NULL after a problem.  owner
 * names the section ("provider 'x'") in the warning about a literal
 * secret in a file others can read, given only when warn.
 */
char	*cfg_value(struct ctx *x, const char *owner, const struct rkey *k,
	    const char *canon, int secret, int warn);
/* Whether s prints as it is (no control character, valid UTF-8). */
int	 cfg_text_ok(const char *s);
/* Whether url is a usable http:// or https:// url; err says why not. */
int	 cfg_url_ok(const char *v, char *err, size_t len);
/* Whether url has a user name or password before its host. */
int	 cfg_url_has_userinfo(const char *v);
/* The folder of the configuration file, for programs (malloc'd). */
char	*cfg_dir(const struct ctx *x);

/* Checks what cfg_read collected and fills x->c (config_build.c). */
void	 cfg_build(struct ctx *x);
/* The [notify] sections into x->c->notifiers (config_notify.c). */
void	 cfg_build_notify(struct ctx *x);
/* The i-th key of a [notify] section; NULL past the last. */
const char	*cfg_notify_key_at(size_t i);
/* Whether key may be given more than once in a section of kind. */
int	 cfg_repeatable(enum kind kind, const char *key);
/* Frees one notifier's fields (config.c frees them all with the config). */
void	 cfg_notify_free(struct notify_cfg *n);

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

/* Room for one more element in *v, doubling; returns *v. */
void	*cfg_grow(void *v, size_t n, size_t *cap, size_t size);

#endif
