/*
 * The base of the HTTP providers (api.h): what each of them did once
 * for itself, done here for all.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config.h"
#include "http.h"
#include "provider.h"
#include "providers/api.h"
#include "util.h"

void *
api_create(size_t size, const struct api_def *def,
    const struct provider_cfg *pc, char *err, size_t errlen)
{
	struct api *a = xcalloc(1, size);
	const char *v;

	a->def = def;
	v = provider_cfg_get(pc, "baseUrl");
	api_set_base(a, v != NULL ? v : def->base_url != NULL ?
	    def->base_url : "");
	if (def->auth_key != NULL) {
		v = provider_cfg_get(pc, def->auth_key);
		a->auth_hdr = xconcat(def->auth, v != NULL ? v : "", "", "",
		    "");
	}
	if (def->zone_key != NULL &&
	    (v = provider_cfg_get(pc, def->zone_key)) != NULL)
		a->zone = provider_zone_name(v);
	/* check() took the value: this fails only on a value it did not see. */
	v = provider_cfg_get(pc, "timeout");
	if (parse_duration(v != NULL ? v : def->timeout != NULL ?
	    def->timeout : "10s", &a->timeout_ms) == -1 || a->timeout_ms <= 0) {
		snprintf(err, errlen, "timeout: not a positive duration");
		api_free(a);
		return NULL;
	}
	return a;
}

char *
api_url_trimmed(const char *url)
{
	char *s = xstrdup(url);
	size_t len;

	for (len = strlen(s); len > 0 && s[len - 1] == '/'; len--)
		s[len - 1] = '\0';
	return s;
}

int
api_check_url_timeout(const struct provider_cfg *pc, const char **key,
    char *err, size_t errlen)
{
	const char *v;

	*key = "baseUrl";
	v = provider_cfg_get(pc, "baseUrl");
	if (v != NULL && http_check_base_url("baseUrl", v, err, errlen) == -1)
		return -1;
	if (provider_check_timeout(pc, key, err, errlen) == -1)
		return -1;
	*key = NULL;
	return 0;
}

int
api_check_token_word(const struct provider_cfg *pc, const char *name,
    const char **key, char *err, size_t errlen)
{
	const char *v = provider_cfg_get(pc, name);

	*key = name;
	if (v == NULL || v[0] == '\0' || strpbrk(v, " \t\r\n") != NULL) {
		snprintf(err, errlen, "%s is empty or has white space", name);
		return -1;
	}
	return 0;
}

const struct provider_key api_token_zone_keys[] = {
	{ "apiToken", PK_REQUIRED | PK_SECRET },
	{ "zone", PK_REQUIRED },
	{ "baseUrl", 0 },
	{ "timeout", 0 },
	{ NULL, 0 }
};

int
api_check_token_zone(const struct provider_cfg *pc, const char **key,
    char *err, size_t errlen)
{
	if (provider_check_header_secret(pc, "apiToken", key, err,
	    errlen) == -1 || provider_check_zone(pc, "zone", key, err,
	    errlen) == -1)
		return -1;
	return api_check_url_timeout(pc, key, err, errlen);
}

void
api_set_base(struct api *a, const char *url)
{
	free(a->base);
	a->base = api_url_trimmed(url);
}

void
api_free(struct api *a)
{
	if (a == NULL)
		return;
	free(a->base);
	free_secret(a->auth_hdr);
	free(a->zone);
	free(a);
}

void
api_begin(struct api *a)
{
	/* A short Retry-After is waited out within it (http.h). */
	a->deadline = mono_ms() + a->timeout_ms;
}

char *
api_relname(const struct api *a, const char *fqdn)
{
	char *s = a->def->keep_case ? xstrdup(fqdn) : provider_zone_name(fqdn);
	size_t flen = strlen(s), zlen = a->zone != NULL ? strlen(a->zone) : 0;

	if (a->def->keep_case && flen > 1 && s[flen - 1] == '.')
		s[--flen] = '\0';

	/* The configuration checked that fqdn is in the zone. */
	s[flen > zlen ? flen - zlen - 1 : 0] = '\0';
	return s;
}

char *
api_absname(const char *fqdn)
{
	char *s = provider_zone_name(fqdn), *abs;

	abs = xconcat(s, ".", "", "", "");
	free(s);
	return abs;
}

enum perr
api_call(const struct api *a, const struct http_req *rq,
    struct http_resp *rs, char *err, size_t errlen)
{
	const char *hdrs[4];
	struct http_req r = *rq;
	size_t n = 0;

	if (r.headers == NULL) {
		if (a->auth_hdr != NULL)
			hdrs[n++] = a->auth_hdr;
		hdrs[n++] = "Accept: application/json";
		if (r.body != NULL)
			hdrs[n++] = "Content-Type: application/json";
		hdrs[n] = NULL;
		r.headers = hdrs;
	}
	if (r.who == NULL)
		r.who = a->def->who;
	if (r.body != NULL && r.body_len == 0)
		r.body_len = strlen(r.body);
	if (r.timeout_ms == 0)
		r.timeout_ms = a->timeout_ms;
	if (r.deadline == 0)
		r.deadline = a->deadline;
	if (r.errtext == NULL)
		r.errtext = a->def->errtext;
	if (r.auth_hint == NULL)
		r.auth_hint = a->def->auth_hint;
	if (r.notfound_hint == NULL)
		r.notfound_hint = a->def->notfound_hint;
	return http_call(&r, rs, err, errlen);
}

json_t *
api_json_load(const char *buf, size_t len, char *err, size_t errlen)
{
	json_error_t je;
	json_t *root;

	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je)) ==
	    NULL) {
		snprintf(err, errlen, "not JSON: %s (line %d)", je.text,
		    je.line);
		/* The reason quotes the answer, and goes to the log. */
		text_printable(err);
	}
	return root;
}

json_t *
api_json_array(json_t *root, const char *key, char *err, size_t errlen)
{
	json_t *v = json_is_object(root) ? json_object_get(root, key) : NULL;

	if (!json_is_array(v)) {
		snprintf(err, errlen, "no %s array", key);
		return NULL;
	}
	return v;
}

/* ------------------------------------------------------------ error text */

/* Appends text to out (cut as snprintf cuts). */
static void
put(char *out, size_t outlen, const char *text, int len)
{
	size_t n = strlen(out);

	if (n + 1 < outlen)
		snprintf(out + n, outlen - n, "%.*s", len, text);
}

/* The code of form f in o: a string, an integer, or NULL. */
static json_t *
form_code(const struct api_errform *f, json_t *o)
{
	json_t *c = f->code != NULL ? json_object_get(o, f->code) : NULL;

	if (f->code_num ? json_is_integer(c) : json_is_string(c))
		return c;
	return NULL;
}

/*
 * The text of form f in body, into out; 0, or -1 when its fields are not
 * there; 1 when they are not but no later form may be tried.
 */
static int
form_text(const struct api_errtext *d, const struct api_errform *f,
    json_t *body, char *out, size_t outlen, json_t **code)
{
	json_t *o = body, *c, *m;
	const char *s;
	char num[32];

	if (f->in != NULL) {
		o = json_object_get(body, f->in);
		if (f->in_first)
			o = json_is_array(o) ? json_array_get(o, 0) : NULL;
		else if (f->in_or_body && !json_is_object(o))
			o = body;
	}
	c = form_code(f, o);
	m = json_object_get(o, f->msg);
	if ((c == NULL && (f->code == NULL || f->code_opt)) || c != NULL) {
		if (!json_is_string(m))
			return c != NULL && f->final ? 1 : -1;
	} else
		return -1;
	out[0] = '\0';
	put(out, outlen, d->prefix != NULL ? d->prefix : "", -1);
	if (c != NULL) {
		if (json_is_integer(c)) {
			snprintf(num, sizeof(num), "%lld",
			    (long long)json_integer_value(c));
			put(out, outlen, num, -1);
		} else
			put(out, outlen, json_string_value(c), -1);
		put(out, outlen, ": ", -1);
	}
	s = json_string_value(m);
	put(out, outlen, s, d->first_line ? (int)strcspn(s, "\r\n") : -1);
	*code = c;
	return 0;
}

/* " (CODE: TEXT)" of the first entry of d->chain in the form's object. */
static void
chain_text(const struct api_errtext *d, const struct api_errform *f,
    json_t *body, char *out, size_t outlen)
{
	json_t *o = body, *c0, *c, *m;
	char num[32];

	if (f->in != NULL) {
		o = json_object_get(body, f->in);
		if (f->in_first)
			o = json_is_array(o) ? json_array_get(o, 0) : NULL;
	}
	c0 = json_object_get(o, d->chain);
	c0 = json_is_array(c0) ? json_array_get(c0, 0) : NULL;
	c = json_object_get(c0, "code");
	m = json_object_get(c0, "message");
	if (!json_is_integer(c) || !json_is_string(m))
		return;
	snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(c));
	put(out, outlen, " (", -1);
	put(out, outlen, num, -1);
	put(out, outlen, ": ", -1);
	put(out, outlen, json_string_value(m), -1);
	put(out, outlen, ")", -1);
}

/* "KEY: TEXT" of the first key of o whose value is (a list of) text. */
static int
any_key(json_t *o, char *out, size_t outlen)
{
	json_t *v, *first;
	const char *k;

	json_object_foreach(o, k, v) {
		first = json_is_array(v) ? json_array_get(v, 0) : v;
		if (!json_is_string(first))
			continue;
		snprintf(out, outlen, "%s: %s", k, json_string_value(first));
		return 0;
	}
	return -1;
}

int
api_errtext(const struct api_errtext *d, const char *buf, size_t len,
    char *out, size_t outlen)
{
	json_t *root, *body, *v, *code = NULL;
	json_error_t je;
	size_t i;
	int rv = -1, r;

	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je)) == NULL)
		return -1;
	body = root;
	if (d->first_nonempty)
		json_array_foreach(root, i, v)
			if (json_object_size(v) > 0) {
				body = v;
				break;
			}
	for (i = 0; i < sizeof(d->form) / sizeof(d->form[0]) &&
	    d->form[i].msg != NULL; i++) {
		if ((r = form_text(d, &d->form[i], body, out, outlen,
		    &code)) == 1)
			goto out;
		if (r == 0) {
			if (d->chain != NULL)
				chain_text(d, &d->form[i], body, out, outlen);
			if (d->hint != NULL && json_is_integer(code) &&
			    json_integer_value(code) == d->hint_code)
				put(out, outlen, d->hint, -1);
			rv = 0;
			goto out;
		}
	}
	if (d->any_key)
		rv = any_key(body, out, outlen);
out:
	if (rv == 0)
		text_printable(out);
	json_decref(root);
	return rv;
}
