#ifndef DDUP_PROVIDERS_API_H
#define DDUP_PROVIDERS_API_H

/*
 * Private to providers/ (and tests/unit/test_http.c, which tests its
 * error-text parser, and the fuzz targets that include a provider's
 * source): the base of the HTTP providers (the JSON ones and Route
 * 53).  What every such API has is kept here once: its base URL, the
 * credential's header, the zone (one rule for its name), the `timeout`
 * as a deadline for each read or replace (doc/design.md, "Publishing
 * DNS, every provider"), the name relative to the zone, and where in an
 * error body the API's own message is.  A provider embeds struct api as
 * its first member and keeps only what is its own:
 *
 *	struct example {
 *		struct api	 api;
 *		char		*records_url;
 *	};
 *
 *	static const struct api_def example_api = {
 *		.who = "Example", .base_url = "https://api.example.net/v1",
 *		.auth_key = "apiToken", .auth = "Authorization: Bearer ",
 *		.zone_key = "zone", .errtext = example_errtext,
 *	};
 *
 *	ex = api_create(sizeof(*ex), &example_api, pc, err, errlen);
 *	...
 *	api_begin(&ex->api);	(as a read or a replace starts)
 *	struct http_req rq = { .method = "GET", .url = url, .want = 200 };
 *	e = api_call(&ex->api, &rq, &rs, err, errlen);
 */

#include <stddef.h>

#include <jansson.h>

#include "http.h"
#include "provider.h"

/*
 * One place an error body may hold the API's message: the object under
 * `in` (the body itself when NULL), a message string under `msg`, and
 * optionally a code under `code`.  The text is "CODE: MESSAGE", or
 * "MESSAGE" alone when there is no code.
 */
struct api_errform {
	const char	*in;
	int		 in_first;	/* `in` is an array: its first element */
	int		 in_or_body;	/* `in` is not an object: the body */
	const char	*code;
	int		 code_num;	/* the code is an integer */
	int		 code_opt;	/* without a code the message will do */
	const char	*msg;
	int		 final;		/* the code found: no later form */
};

/* Where an API's error text is, for api_errtext(). */
struct api_errtext {
	const char	*prefix;	/* before the text: "Hetzner error " */
	/* Tried in order, the first that has its fields wins; msg NULL ends. */
	struct api_errform form[3];
	int		 first_line;	/* only the message's first line */
	/* A body that is an array: its first non-empty object (deSEC bulk). */
	int		 first_nonempty;
	/* Else the first key with a string or a list of them: "KEY: TEXT". */
	int		 any_key;
	/* An array of {code, message}: the first appended " (CODE: TEXT)". */
	const char	*chain;
	/* Appended when the (numeric) code is hint_code. */
	long long	 hint_code;
	const char	*hint;
};

struct api_def {
	const char	*who;		/* starts every message: "deSEC" */
	const char	*base_url;	/* baseUrl's default; NULL: required */
	/* The key of the credential, and what goes before it in its header. */
	const char	*auth_key;	/* NULL: the provider signs its own */
	const char	*auth;		/* "Authorization: Bearer " */
	const char	*zone_key;	/* "zone", "zoneName"; NULL: none */
	const char	*timeout;	/* timeout's default; NULL: "10s" */
	/* The API's error text in an answer (http.h); may be NULL. */
	int		(*errtext)(const char *body, size_t len, char *out,
			    size_t outlen);
	const char	*auth_hint;	/* for 401/403 */
	const char	*notfound_hint;	/* for 404 */
	/* Names relative to the zone keep their case (DigitalOcean's). */
	int		 keep_case;
};

/* The common part: the first member of every HTTP provider's state. */
struct api {
	const struct api_def *def;
	char		*base;		/* baseUrl, no trailing slash */
	char		*auth_hdr;	/* auth and the credential; NULL: none */
	char		*zone;		/* lower case, no final dot; NULL: none */
	long long	 timeout_ms;
	long long	 deadline;	/* mono_ms() bound of this operation */
};

/*
 * For a provider's check(), no I/O; each gives 0, or -1 with err set
 * and *key at the key at fault.  The optional baseUrl (http.h's rule)
 * and timeout; *key = NULL after.
 */
int		 api_check_url_timeout(const struct provider_cfg *pc,
		    const char **key, char *err, size_t errlen);
/* A token that must be one word: not empty, no white space. */
int		 api_check_token_word(const struct provider_cfg *pc,
		    const char *name, const char **key, char *err,
		    size_t errlen);
/*
 * The whole check() of an API with a bearer token: apiToken, zone, an
 * optional baseUrl and timeout (Hetzner, DigitalOcean).
 */
int		 api_check_token_zone(const struct provider_cfg *pc,
		    const char **key, char *err, size_t errlen);
/* The keys that check() takes, for the provider's ops. */
extern const struct provider_key api_token_zone_keys[];

/*
 * A provider's state of size bytes (struct api first, the rest zeroed)
 * with the common part filled from pc; NULL with err set.
 */
void		*api_create(size_t size, const struct api_def *def,
		    const struct provider_cfg *pc, char *err, size_t errlen);
/* url without the slashes it ends with (paths are appended), malloc'd. */
char		*api_url_trimmed(const char *url);
/* Another base URL than baseUrl (OVH's endpoint names one). */
void		 api_set_base(struct api *a, const char *url);
/* Frees the common part and the whole state (what api_create gave). */
void		 api_free(struct api *a);
/* A read or a replace starts: its deadline is `timeout` from now. */
void		 api_begin(struct api *a);
/*
 * The name fqdn (inside the zone: the configuration checked it) as the
 * APIs name it relative to the zone: lower case (unless keep_case),
 * "" for the apex; malloc'd.
 */
char		*api_relname(const struct api *a, const char *fqdn);
/* fqdn as some APIs write names: lower case, with the final dot. */
char		*api_absname(const char *fqdn);
/*
 * http_call() with what is common filled in where rq leaves it empty:
 * who, the headers (the credential's, Accept and, with a body,
 * Content-Type: application/json), body_len, the timeout and deadline,
 * errtext and the hints.
 */
enum perr	 api_call(const struct api *a, const struct http_req *rq,
		    struct http_resp *rs, char *err, size_t errlen);
/*
 * An answer's body as JSON (a key twice is refused): the root, to be
 * json_decref()'d, or NULL with err "not JSON: TEXT (line N)",
 * printable.
 */
json_t		*api_json_load(const char *buf, size_t len, char *err,
		    size_t errlen);
/* The array under key of the object root, or NULL with err "no KEY array". */
json_t		*api_json_array(json_t *root, const char *key, char *err,
		    size_t errlen);
/*
 * The API's message in an error body, as d says where it is: 0 with a
 * printable line in out, -1 when the body has none.  Any bytes.
 */
int		 api_errtext(const struct api_errtext *d, const char *buf,
		    size_t len, char *out, size_t outlen);

#endif
