/*
 * The health checks of a run (ddup-check(8), HEALTH CHECKS): one loop.
 *
 * Every check is a transfer on a single multi handle, so all endpoints of
 * all domains are in flight together, at most max_parallel at a time, in
 * as many slots; a finished check hands its slot to the next one.  The
 * loop follows curl's docs/examples/10-at-a-time.c.  What a check is
 * (HTTP today) is its type's (check/type.h), asked through the table of
 * check/list.c: the loop only holds the slots, starts each check in an
 * idle one and hands a finished transfer back to the type that started
 * it.
 */

#include <sys/resource.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "check.h"
#include "check/type.h"
#include "config.h"
#include "util.h"

#define CHECK_DEFAULT_PARALLEL	256L

/*
 * One of at most max_parallel slots of the loop.  The state a type
 * keeps in it (libcurl's easy handle, say) is made on first use and
 * kept for check after check: creating and freeing a handle per check
 * cost as much as a tenth of a run.
 */
struct slot {
	const struct check_type *type;	/* whose st it is, NULL before */
	void		*st;
	int		 busy;		/* a check is in flight */
};

/*
 * Each transfer holds a socket and, while resolving, the resolver's
 * socket pair: keep max_parallel well inside the descriptor limit so a
 * large maxParallel does not turn into failed checks.
 */
static long
parallel_limit(long max_parallel)
{
	struct rlimit	 rl;
	rlim_t		 want;
	long		 lim;

	if (max_parallel <= 0)
		max_parallel = CHECK_DEFAULT_PARALLEL;
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 ||
	    rl.rlim_cur == RLIM_INFINITY)
		return max_parallel;
	/*
	 * A soft limit below the hard one (systemd's 1024, a shell's
	 * ulimit -Sn) is ours to raise, as far as the checks need: only
	 * a hard limit makes checks wait for each other.
	 */
	want = max_parallel > 100000 ? (rlim_t)100000 * 3 + 64 :
	    (rlim_t)max_parallel * 3 + 64;
	if (rl.rlim_cur < want && rl.rlim_max > rl.rlim_cur) {
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1 &&
		    getrlimit(RLIMIT_NOFILE, &rl) == -1)
			return 1;
	}
	if (rl.rlim_cur < 64 + 3)
		return 1;
	lim = (long)((rl.rlim_cur - 64) / 3);
	return max_parallel < lim ? max_parallel : lim;
}

/* Where check_endpoints() is in the domains and their endpoints. */
struct check_iter {
	const struct config	*cfg;
	struct check_res	*res;
	size_t			 dom;
	size_t			 ep;
};

/* The next endpoint's check for check_run(); 0 when all have been. */
static int
next_check(void *arg, struct check_req *req)
{
	struct check_iter	*it = arg;
	const struct domain_cfg	*dc;

	while (it->dom < it->cfg->ndomains &&
	    it->ep >= it->cfg->domains[it->dom].neps) {
		it->dom++;
		it->ep = 0;
	}
	if (it->dom == it->cfg->ndomains)
		return 0;
	dc = &it->cfg->domains[it->dom];
	req->url = dc->eps[it->ep].url;
	req->host = dc->eps[it->ep].host;
	req->head = dc->pol.head;
	req->timeout_ms = dc->pol.timeout_ms;
	req->expect = &dc->pol.expect;
	req->expect_body = dc->pol.expect_body;
	req->res = it->res++;
	it->ep++;
	return 1;
}

int
check_endpoints(const struct config *cfg, struct check_res *res, char *err,
    size_t errlen)
{
	struct check_iter	 it = { cfg, res, 0, 0 };
	size_t			 i, j, n = 0;

	for (i = 0; i < cfg->ndomains; i++)
		for (j = 0; j < cfg->domains[i].neps; j++)
			check_res_init(&res[n++]);
	return check_run(n, next_check, &it, cfg->max_parallel, cfg->ca_file,
	    err, errlen);
}

/* check_run()'s request when there is one only: *arg, then none. */
static int
next_one(void *arg, struct check_req *req)
{
	const struct check_req	**one = arg;

	if (*one == NULL)
		return 0;
	*req = **one;
	*one = NULL;
	return 1;
}

int
check_control(const struct config *cfg, struct check_res *res, char *err,
    size_t errlen)
{
	const struct domain_policy *p = &cfg->defaults;
	struct check_req	 req;
	const struct check_req	*one = &req;

	memset(&req, 0, sizeof(req));
	req.url = cfg->control_url;
	req.head = p->head;
	req.timeout_ms = p->timeout_ms;
	req.expect = &p->expect;
	req.expect_body = p->expect_body;
	req.res = res;
	check_res_init(res);
	return check_run(1, next_one, &one, 1, cfg->ca_file, err, errlen);
}

/*
 * Starts r in the idle slot s, in the state of the type that takes its
 * url (a slot's state of another type is dropped first).  Returns 0, or
 * -1 when the check failed without starting (its reason set).
 */
static int
slot_start(CURLM *cm, struct slot *s, const struct check_req *r,
    const char *ca_file)
{
	const struct check_type *t = check_type_of(r->url);

	if (s->type != t && s->st != NULL) {
		s->type->slot_free(s->st, cm);
		s->st = NULL;
	}
	s->type = t;
	if (s->st == NULL)
		s->st = t->slot_new();
	if (t->start(s->st, cm, s, r, ca_file) == -1)
		return -1;
	s->busy = 1;
	return 0;
}

int
check_run(size_t n, int (*next_req)(void *, struct check_req *), void *arg,
    long max_parallel, const char *ca_file, char *err, size_t errlen)
{
	struct check_req req;
	CURLM		*cm = NULL;
	CURLMcode	 mc;
	CURLMsg		*msg;
	struct slot	*slots = NULL, *j;
	size_t		*idle = NULL;	/* indexes of the idle slots */
	size_t		 next = 0, nslots = 0, nidle = 0, done, i;
	long		 maxp;
	int		 running, left, rc = -1;

	if (n == 0) {
		rc = 0;
		goto out;
	}
	if ((cm = curl_multi_init()) == NULL) {
		snprintf(err, errlen, "libcurl: cannot create a multi handle");
		goto out;
	}
	maxp = parallel_limit(max_parallel);
	nslots = (size_t)maxp < n ? (size_t)maxp : n;
	slots = xcalloc(nslots, sizeof(*slots));
	idle = xcalloc(nslots, sizeof(*idle));
	for (nidle = 0; nidle < nslots; nidle++)
		idle[nidle] = nslots - 1 - nidle;

	for (;;) {
		/* Refill: a check that cannot start has failed already. */
		while (next < n && nidle > 0) {
			if (!next_req(arg, &req)) {
				n = next;
				break;
			}
			next++;
			if (slot_start(cm, &slots[idle[nidle - 1]], &req,
			    ca_file) == 0)
				nidle--;
		}
		if (nidle == nslots)
			break;

		mc = curl_multi_perform(cm, &running);
		if (mc != CURLM_OK) {
			snprintf(err, errlen, "libcurl: %s",
			    curl_multi_strerror(mc));
			goto out;
		}
		done = 0;
		while ((msg = curl_multi_info_read(cm, &left)) != NULL) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			j = NULL;
			(void)curl_easy_getinfo(msg->easy_handle,
			    CURLINFO_PRIVATE, &j);
			if (j == NULL || !j->busy)
				continue;
			j->type->done(j->st, cm, msg->data.result);
			j->busy = 0;
			idle[nidle++] = (size_t)(j - slots);
			done++;
		}
		/*
		 * Refill before waiting: with every handle gone, the poll
		 * would have nothing to wake it up but its own timeout.
		 */
		if (done > 0)
			continue;
		/* libcurl shortens the wait to its own next timer. */
		mc = curl_multi_poll(cm, NULL, 0, 1000, NULL);
		if (mc != CURLM_OK) {
			snprintf(err, errlen, "libcurl: %s",
			    curl_multi_strerror(mc));
			goto out;
		}
	}
	rc = 0;
out:
	for (i = 0; i < nslots; i++)
		if (slots[i].st != NULL)
			slots[i].type->slot_free(slots[i].st, cm);
	free(idle);
	free(slots);
	if (cm != NULL)
		curl_multi_cleanup(cm);
	return rc;
}

int
check_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

void
check_global_cleanup(void)
{
	curl_global_cleanup();
}
