/*
 * The [notify NAME] sections (ddup.ini(5), NOTIFICATIONS): a webhook
 * (`url`) or a program (`command`) told about events, which ones
 * (`events`), and how long and how often delivery is tried; their keys
 * are in config_keys.c.  Header values are secrets: they may be
 * written as !env NAME or !file PATH, and no message quotes them.
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_int.h"
#include "util.h"

#define NOTIFY_DEFAULT_EVENTS	((1u << EVT_DNS_UPDATED) | \
				 (1u << EVT_DNS_UPDATE_FAILED) | \
				 (1u << EVT_ALL_UNHEALTHY))
#define NOTIFY_ATTEMPTS_MAX	100
#define NOTIFY_HEADERS_MAX	32

static const char *const event_names[EVT_COUNT] = {
	[EVT_DNS_UPDATED] = "dns_updated",
	[EVT_DNS_UPDATE_FAILED] = "dns_update_failed",
	[EVT_ALL_UNHEALTHY] = "all_unhealthy",
	[EVT_ENDPOINT_DOWN] = "endpoint_down",
	[EVT_ENDPOINT_UP] = "endpoint_up",
	[EVT_CERT_EXPIRING] = "cert_expiring",
};

const char *
event_type_str(int type)
{
	return type >= 0 && type < EVT_COUNT ? event_names[type] : NULL;
}

/* The bits of an events list, split at commas and white space; -1: reported. */
static int
parse_events(struct ctx *x, const char *who, const struct rkey *k,
    unsigned *out)
{
	char *copy, *w, *save = NULL;
	unsigned bits = 0;
	int i, rc = 0;

	copy = xstrdup(k->value);
	for (w = strtok_r(copy, ", \t", &save); w != NULL;
	    w = strtok_r(NULL, ", \t", &save)) {
		for (i = 0; i < EVT_COUNT; i++)
			if (strcasecmp(w, event_names[i]) == 0)
				break;
		if (i == EVT_COUNT) {
			cfg_problem(x, k->line, 0, "%s: unknown event '%s' "
			    "(known: dns_updated, dns_update_failed, "
			    "all_unhealthy, endpoint_down, endpoint_up)", who,
			    w);
			rc = -1;
		} else
			bits |= 1u << i;
	}
	free(copy);
	if (rc == 0 && bits == 0) {
		cfg_problem(x, k->line, 0, "%s: 'events' names no event", who);
		rc = -1;
	}
	if (rc == 0)
		*out = bits;
	return rc;
}

/* The keys other than url, command and header. */
static void
build_settings(struct ctx *x, const char *who, const struct rkey *k,
    struct notify_cfg *n)
{
	static const char *const methods[] = { "POST", "PUT", "PATCH" };
	size_t i;

	if (strcasecmp(k->canon, "method") == 0) {
		for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
			if (strcasecmp(k->value, methods[i]) == 0) {
				free(n->method);
				n->method = xstrdup(methods[i]);
				return;
			}
		cfg_problem(x, k->line, 0, "%s: 'method': expected POST, PUT "
		    "or PATCH, not '%s'", who, k->value);
	} else if (strcasecmp(k->canon, "timeout") == 0)
		(void)cfg_get_duration(x, k, &n->timeout_ms);
	else if (strcasecmp(k->canon, "attempts") == 0)
		cfg_get_long(x, k, 1, NOTIFY_ATTEMPTS_MAX, &n->attempts);
	else if (strcasecmp(k->canon, "events") == 0)
		(void)parse_events(x, who, k, &n->events);
}

/*
 * A url written as !env or !file is a secret (a chat service's webhook
 * holds its token in the path): no message quotes it, the outbox and
 * logs name it "<secret url>".
 */
static void
build_secret_url(struct ctx *x, const char *who, const struct rkey *k,
    struct notify_cfg *n)
{
	char *v, err[256];

	if ((v = cfg_value(x, who, k, "url", 1, 0)) == NULL)
		return;
	if (!cfg_text_ok(v))
		cfg_problem(x, k->line, 0, "%s: the url in %s: a control "
		    "character or invalid UTF-8", who, k->value);
	else if (!cfg_url_ok(v, err, sizeof(err)))
		cfg_problem(x, k->line, 0, "%s: the url in %s is not a usable "
		    "url: %s", who, k->value, err);
	else {
		n->url = v;
		n->url_secret = 1;
		return;
	}
	explicit_bzero(v, strlen(v));
	free(v);
}

static void
build_notify(struct ctx *x, struct rsec *s, struct notify_cfg *n)
{
	const struct rkey *url = NULL, *cmd = NULL;
	struct rkey *k;
	char who[300], err[256], *h;
	size_t i, j, nh = 0;

	n->name = xstrdup(s->name);
	n->line = s->line;
	n->method = xstrdup("POST");
	n->timeout_ms = 10000;
	n->attempts = 5;
	n->events = NOTIFY_DEFAULT_EVENTS;
	snprintf(who, sizeof(who), "notify '%s'", n->name);
	if (!cfg_text_ok(n->name))
		cfg_problem(x, s->line, 0, "notify name '%s': a control "
		    "character or invalid UTF-8", n->name);
	for (i = 0; i < s->nkeys; i++) {
		k = &s->keys[i];
		for (j = 0; j < cfg_nnotify_keys; j++)
			if (strcasecmp(k->key, cfg_notify_keys[j].name) == 0)
				break;
		if (j == cfg_nnotify_keys) {
			cfg_problem(x, k->line, 0, "%s: unknown key '%s' (known:"
			    " url, command, method, header, timeout, attempts,"
			    " events)", who, k->key);
			continue;
		}
		k->canon = cfg_notify_keys[j].name;
		if (k->value[0] == '\0') {
			cfg_problem(x, k->line, 0, "%s: '%s' has no value", who,
			    k->canon);
			continue;
		}
		if (j == 0)
			url = k;
		else if (j == 1)
			cmd = k;
		else if (strcmp(k->canon, "header") == 0)
			nh++;
		else
			build_settings(x, who, k, n);
	}
	if (url != NULL && cmd != NULL) {
		cfg_problem(x, cmd->line, 0, "%s: give either 'url' (a webhook)"
		    " or 'command' (a program), not both", who);
		return;
	}
	if (url == NULL && cmd == NULL) {
		cfg_problem(x, s->line, 0, "%s: missing 'url' (a webhook) or "
		    "'command' (a program)", who);
		return;
	}
	if (cmd != NULL) {
		for (i = 0; i < s->nkeys; i++)
			for (j = 0; j < cfg_nnotify_keys; j++)
				if (cfg_notify_keys[j].webhook && j != 0 &&
				    s->keys[i].canon == cfg_notify_keys[j].name)
					cfg_problem(x, s->keys[i].line, 0, "%s: "
					    "'%s' is for webhooks (url), not for "
					    "a command", who, s->keys[i].canon);
		if (cmd->value[0] != '/')
			cfg_problem(x, cmd->line, 0, "%s: command \"%s\" is not "
			    "an absolute path", who, cmd->value);
		else if (!cfg_text_ok(cmd->value))
			cfg_problem(x, cmd->line, 0, "%s: command: a control "
			    "character or invalid UTF-8", who);
		else
			n->command = xstrdup(cmd->value);
		n->dir = cfg_dir(x);
		return;
	}
	if (strncmp(url->value, "!env", 4) == 0 ||
	    strncmp(url->value, "!file", 5) == 0)
		build_secret_url(x, who, url, n);
	else if (cfg_url_has_userinfo(url->value))
		cfg_problem(x, url->line, 0, "%s: url must not hold a user name "
		    "or password (messages show the url; put credentials in "
		    "a header, or the url in !env or !file)", who);
	else if (!cfg_text_ok(url->value))
		cfg_problem(x, url->line, 0, "%s: url: a control character or "
		    "invalid UTF-8", who);
	else if (!cfg_url_ok(url->value, err, sizeof(err)))
		cfg_problem(x, url->line, 0, "%s: bad url '%s': %s", who,
		    url->value, err);
	else
		n->url = xstrdup(url->value);
	if (nh > NOTIFY_HEADERS_MAX) {
		cfg_problem(x, s->line, 0, "%s: more than %d headers", who,
		    NOTIFY_HEADERS_MAX);
		return;
	}
	n->headers = xcalloc(nh + 1, sizeof(*n->headers));
	for (i = 0; i < s->nkeys; i++)
		if (s->keys[i].canon != NULL && s->keys[i].value[0] != '\0' &&
		    strcmp(s->keys[i].canon, "header") == 0 &&
		    (h = cfg_header(x, who, &s->keys[i], 0)) != NULL)
			n->headers[n->nheaders++] = h;
}

void
cfg_build_notify(struct ctx *x)
{
	struct config *c = x->c;
	struct nameset seen;
	size_t i, n = 0;
	int first;

	for (i = 0; i < x->nsecs; i++)
		n += x->secs[i].kind == S_NOTIFY;
	if (n == 0)
		return;
	c->notifiers = xcalloc(n, sizeof(*c->notifiers));
	cfg_nameset_init(&seen, n);
	for (i = 0; i < x->nsecs; i++) {
		if (x->secs[i].kind != S_NOTIFY)
			continue;
		if ((first = cfg_nameset_add(&seen, x->secs[i].name,
		    x->secs[i].line)) != 0) {
			cfg_problem(x, x->secs[i].line, 0, "notify '%s' defined"
			    " twice (first at line %d)", x->secs[i].name,
			    first);
			continue;
		}
		build_notify(x, &x->secs[i], &c->notifiers[c->nnotifiers++]);
	}
	cfg_nameset_free(&seen);
}

void
cfg_notify_free(struct notify_cfg *n)
{
	size_t i;

	for (i = 0; i < n->nheaders; i++) {
		explicit_bzero(n->headers[i], strlen(n->headers[i]));
		free(n->headers[i]);
	}
	free(n->headers);
	free(n->name);
	if (n->url != NULL)
		explicit_bzero(n->url, strlen(n->url));
	free(n->url);
	free(n->command);
	free(n->dir);
	free(n->method);
}
