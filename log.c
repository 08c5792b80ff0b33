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
#include "redact.h"
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
	char	 msg[2048], dom[512], ep[512];
	va_list	 ap;
	json_t	*obj;
	int	 n;

	if (!log_enabled(lvl))
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/*
	 * Outside text reaches here hidden and bounded already
	 * (redact.h); this is the last line of defence.  Quoted text from
	 * servers and files must not forge a line.
	 */
	redact(msg, sizeof(msg));
	text_printable(msg);
	text_cap(msg, sizeof(msg) - 1, n > 0 ? (size_t)n : 0);
	if (domain != NULL)
		domain = text_printable_copy(dom, sizeof(dom), domain);
	if (endpoint != NULL)
		endpoint = text_printable_copy(ep, sizeof(ep), endpoint);

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
	json_object_set_new(obj, "msg", json_string(msg));
	emit_json(lvl, obj);
}

void
log_change(enum log_level lvl, const char *event, const char *domain,
    const char *old, const char *new, const struct log_tier *tier,
    const char *msg)
{
	json_t		*obj;
	char		 dom[512], text[2048], locbuf[256];
	const char	*loc = NULL;

	if (!log_enabled(lvl))
		return;
	domain = text_printable_copy(dom, sizeof(dom), domain);
	snprintf(text, sizeof(text), "%s", msg);
	redact(text, sizeof(text));
	text_printable(text);
	msg = text;
	if (tier != NULL && tier->location != NULL)
		loc = text_printable_copy(locbuf, sizeof(locbuf),
		    tier->location);
	if (!log_json) {
		char t[160] = "";

		if (tier != NULL && tier->fallback)
			snprintf(t, sizeof(t), " (fallback: all down)");
		else if (tier != NULL && tier->all_down)
			snprintf(t, sizeof(t), " (tier %ld, all down: every "
			    "endpoint)", tier->priority);
		else if (tier != NULL && !tier->located)
			snprintf(t, sizeof(t), " (tier %ld)", tier->priority);
		else if (tier != NULL && loc != NULL)
			snprintf(t, sizeof(t), " (tier %ld, location %s)",
			    tier->priority, loc);
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
	json_object_set_new(obj, "tier", tier == NULL ? json_null() :
	    tier->fallback ? json_string("fallback") :
	    json_integer(tier->priority));
	if (tier != NULL && tier->all_down)
		json_object_set_new(obj, "allDown", json_string("all"));
	if (tier != NULL && tier->located) {
		json_object_set_new(obj, "tierRank", json_integer(tier->rank));
		json_object_set_new(obj, "tierLocation",
		    loc != NULL ? json_string(loc) :
		    json_null());
	}
	json_object_set_new(obj, "msg", json_string(msg));
	emit_json(lvl, obj);
}
