/*
 * Log lines on stderr: text for people reading cron mail, or one JSON
 * object per line for log collectors.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "log.h"
#include "util.h"

static int		 log_json;
static enum log_level	 log_max = LOG_INFO;

static const char *const level_names[] = { "error", "warning", "info", "debug" };

void
log_init(int json, enum log_level max)
{
	log_json = json;
	log_max = max;
}

int
log_enabled(enum log_level lvl)
{
	return lvl <= log_max;
}

/* Emits obj (which it consumes) as one line, adding time and level. */
static void
emit_json(enum log_level lvl, json_t *obj)
{
	char	 ts[32];
	char	*s;

	iso_time(now_ms(), ts, sizeof(ts));
	json_object_set_new(obj, "time", json_string(ts));
	json_object_set_new(obj, "level", json_string(level_names[lvl]));
	s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (s != NULL) {
		fprintf(stderr, "%s\n", s);
		free(s);
	}
	json_decref(obj);
}

void
logx(enum log_level lvl, const char *domain, const char *endpoint,
    const char *fmt, ...)
{
	char	 msg[2048];
	va_list	 ap;
	json_t	*obj;

	if (!log_enabled(lvl))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	if (!log_json) {
		fprintf(stderr, "ddup-check: %s%s%s%s%s%s\n",
		    lvl == LOG_ERR ? "error: " : lvl == LOG_WARN ? "warning: " : "",
		    domain ? domain : "", domain ? ": " : "",
		    endpoint ? endpoint : "", endpoint ? ": " : "", msg);
		return;
	}
	obj = json_object();
	if (domain != NULL)
		json_object_set_new(obj, "domain", json_string(domain));
	if (endpoint != NULL)
		json_object_set_new(obj, "endpoint", json_string(endpoint));
	/* json_string() refuses invalid UTF-8; a message from a server may be. */
	json_object_set_new(obj, "msg", json_stringn_nocheck(msg, strlen(msg)));
	emit_json(lvl, obj);
}

void
log_change(enum log_level lvl, const char *event, const char *domain,
    const char *old, const char *new, const struct log_tier *tier,
    const char *msg)
{
	json_t	*obj;

	if (!log_enabled(lvl))
		return;
	if (!log_json) {
		char t[160] = "";

		if (tier != NULL && !tier->located)
			snprintf(t, sizeof(t), " (tier %ld)", tier->priority);
		else if (tier != NULL && tier->location != NULL)
			snprintf(t, sizeof(t), " (tier %ld, location %s)",
			    tier->priority, tier->location);
		else if (tier != NULL)
			snprintf(t, sizeof(t), " (tier %ld, other locations)",
			    tier->priority);
		fprintf(stderr, "ddup-check: %s%s: %s: [%s] -> [%s]%s\n",
		    lvl == LOG_ERR ? "error: " : "", domain, msg, old, new, t);
		return;
	}
	obj = json_object();
	json_object_set_new(obj, "event", json_string(event));
	json_object_set_new(obj, "domain", json_string(domain));
	json_object_set_new(obj, "old", json_string(old));
	json_object_set_new(obj, "new", json_string(new));
	json_object_set_new(obj, "tier", tier != NULL ?
	    json_integer(tier->priority) : json_null());
	if (tier != NULL && tier->located) {
		json_object_set_new(obj, "tierRank", json_integer(tier->rank));
		json_object_set_new(obj, "tierLocation",
		    tier->location != NULL ? json_string(tier->location) :
		    json_null());
	}
	json_object_set_new(obj, "msg", json_stringn_nocheck(msg, strlen(msg)));
	emit_json(lvl, obj);
}
