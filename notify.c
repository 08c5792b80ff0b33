/*
 * Notifications (notify.h): the retry schedule, and delivery of the
 * outbox by webhook (http.c) or by program (proc.c).  The event JSON is
 * outbox.c's.
 */

#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "http.h"
#include "log.h"
#include "notify.h"
#include "proc.h"
#include "redact.h"
#include "state.h"
#include "util.h"

#define RETRY_GAP_MAX	(24LL * 3600 * 1000)	/* a day */
#define ANSWER_MAX	((size_t)64 * 1024)	/* a receiver's answer is not read */

long long
notify_retry_at(long long last, long attempts, long long interval_ms)
{
	long long gap = interval_ms;
	long i;

	for (i = 1; i < attempts && gap < RETRY_GAP_MAX; i++)
		gap *= 4;
	if (gap > RETRY_GAP_MAX)
		gap = RETRY_GAP_MAX;
	return last + gap - interval_ms / 2;
}

int
notify_due(long long next_attempt, long attempts, long long now,
    long long interval_ms)
{
	/*
	 * Later than a retry set now would be: set by a clock that has
	 * since been stepped back, and due, or the section would wait for
	 * that clock's date and every event behind it with it.
	 */
	return next_attempt <= now ||
	    next_attempt > notify_retry_at(now, attempts, interval_ms);
}

/*
 * The stored JSON with "id" first: the event's number in the outbox, so
 * that a receiver can drop an event it got twice (an attempt that
 * reached it but whose answer came too late, or a run killed before it
 * recorded the answer).  NULL if the stored text is not one event_json()
 * wrote.
 */
static char *
with_id(const char *body, long long id)
{
	char *s;
	size_t len;

	/* event_json() wrote it: an object whose first member follows. */
	if (strncmp(body, "{\"", 2) != 0)
		return NULL;
	len = strlen(body) + 32;
	s = xmalloc(len);
	snprintf(s, len, "{\"id\":%lld,%s", id, body + 1);
	return s;
}

/* POSTs (or PUTs...) body to the webhook; 0 when it answered 2xx. */
static int
send_webhook(const struct notify_cfg *n, const char *who, const char *body,
    long long timeout_ms, char *err, size_t errlen)
{
	const char **hdrs;
	struct http_resp rs;
	size_t i, k = 0;
	int has_ctype = 0, rc;

	hdrs = xcalloc(n->nheaders + 2, sizeof(*hdrs));
	for (i = 0; i < n->nheaders; i++) {
		has_ctype |= strncasecmp(n->headers[i], "Content-Type:", 13) ==
		    0;
		hdrs[k++] = n->headers[i];
	}
	if (!has_ctype)
		hdrs[k++] = "Content-Type: application/json";
	hdrs[k] = NULL;
	{
		struct http_req rq = {
			.who = who,
			.method = n->method,
			.url = n->url,
			.shown_url = n->url_secret ? "<secret url>" : NULL,
			.headers = hdrs,
			.body = body,
			.body_len = strlen(body),
			.timeout_ms = timeout_ms,
			/* A 2xx is a delivery, whatever body comes with it. */
			.max_body = ANSWER_MAX,
			.skip_body = 1,
			.want = 0,
			.url_key = "url",
			/* A 429 is waited out if its wait fits. */
			.deadline = mono_ms() + timeout_ms,
		};

		rc = http_call(&rq, &rs, err, errlen) == PERR_OK ? 0 : -1;
	}
	http_resp_free(&rs);
	free((void *)hdrs);
	return rc;
}

/* Runs the program with body on stdin; 0 when it exits 0. */
static int
send_program(const struct notify_cfg *n, const char *who, const char *body,
    long long timeout_ms, char *err, size_t errlen)
{
	const char *argv[2] = { n->command, NULL };
	struct proc_spec ps = {
		.path = n->command,
		.argv = argv,
		.dir = n->dir,
		.input = body,
		.input_len = strlen(body),
		.timeout_ms = timeout_ms,
		.out_max = ANSWER_MAX,
	};
	struct proc_result o;
	char line[PROC_ERR_LINE + 1], why[256];
	int rc = -1;

	if (proc_run(&ps, &o, why, sizeof(why)) != 0)
		snprintf(err, errlen, "%s: program %s: %s", who, n->command,
		    why);
	else if (o.timed_out)
		snprintf(err, errlen, "%s: program %s: still running after "
		    "%lld ms: killed", who, n->command, timeout_ms);
	else if (WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0)
		rc = 0;
	else {
		proc_first_line(&o, line, sizeof(line));
		if (line[0] != '\0')
			snprintf(why, sizeof(why), "%s", line);
		else if (WIFEXITED(o.status))
			snprintf(why, sizeof(why), "exit status %d",
			    WEXITSTATUS(o.status));
		else
			snprintf(why, sizeof(why), "killed by signal %d",
			    WIFSIGNALED(o.status) ? WTERMSIG(o.status) : 0);
		snprintf(err, errlen, "%s: program %s: %s", who, n->command,
		    why);
	}
	proc_result_free(&o);
	return rc;
}

/* One section's deliveries that are due, within its timeout in all. */
static void
deliver_section(const struct config *c, const struct notify_cfg *n,
    struct state *st)
{
	struct st_delivery *v;
	char who[300], err[1024], dberr[512], rerr[768], *body;
	long long end, left, t;
	size_t nv, i;
	int ok, given_up;

	snprintf(who, sizeof(who), "notify '%s'", n->name);
	if (state_get_deliveries(st, n->name, &v, &nv, rerr,
	    sizeof(rerr)) == -1) {
		logx(LOG_ERR, NULL, NULL, "%s: %s", who, rerr);
		return;
	}
	end = mono_ms() + n->timeout_ms;
	for (i = 0; i < nv; i++) {
		struct st_delivery *d = &v[i];

		/* Later events wait for this one: they go out in order. */
		if (!notify_due(d->next_attempt, d->attempts, now_ms(),
		    c->interval_ms))
			break;
		if ((left = end - mono_ms()) <= 0)
			break;
		t = left < n->timeout_ms ? left : n->timeout_ms;
		err[0] = '\0';
		if ((body = with_id(d->body, d->event)) == NULL) {
			snprintf(err, sizeof(err), "%s: event %lld: its stored "
			    "JSON does not parse", who, d->event);
			ok = 0;
		} else
			ok = n->url != NULL ? send_webhook(n, who, body, t, err,
			    sizeof(err)) == 0 : send_program(n, who, body, t,
			    err, sizeof(err)) == 0;
		free(body);
		/* A receiver's answer may echo a header or the url. */
		if (!ok)
			outside_text(err, sizeof(err));
		/*
		 * An attempt cut short by what this run had left is not
		 * counted: the next run tries again with the whole timeout.
		 */
		if (!ok && t < n->timeout_ms)
			break;
		given_up = 0;
		if (!ok) {
			d->attempts++;
			given_up = d->attempts >= n->attempts;
			d->next_attempt = given_up ? 0 : notify_retry_at(
			    now_ms(), d->attempts, c->interval_ms);
		}
		if (state_put_delivery(st, n->name, d, now_ms(), ok, given_up,
		    ok ? NULL : err, dberr, sizeof(dberr)) == -1) {
			logx(LOG_ERR, NULL, NULL, "%s: %s", who, dberr);
			break;
		}
		if (ok) {
			logx(LOG_DEBUG, NULL, NULL, "%s: event %lld delivered",
			    who, d->event);
			continue;
		}
		if (given_up) {
			logx(LOG_ERR, NULL, NULL, "%s: event %lld given up after"
			    " %ld attempts: %s", who, d->event, d->attempts,
			    err);
			continue;
		}
		logx(LOG_WARN, NULL, NULL, "%s: event %lld not delivered "
		    "(attempt %ld of %ld, tried again by a later run): %s",
		    who, d->event, d->attempts, n->attempts, err);
		break;
	}
	state_deliveries_free(v, nv);
}

void
notify_deliver(const struct config *c, struct state *st)
{
	size_t i;

	for (i = 0; i < c->nnotifiers; i++)
		deliver_section(c, &c->notifiers[i], st);
}
