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
#define CHECK_DEFAULT_EXEC	16L

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
	struct check_req req;		/* the check in flight, for its repeat */
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
	const long		*repeats;	/* one per endpoint, or NULL */
	size_t			 dom;
	size_t			 ep;
	size_t			 n;		/* endpoints so far */
};

/* The keys of a domain's policy every type may read (check_takes()). */
static void
req_policy(struct check_req *req, const struct domain_policy *p)
{
	req->head = p->head;
	req->timeout_ms = p->timeout_ms;
	req->max_latency_ms = p->max_latency_ms;
	req->expect = &p->expect;
	req->expect_body = p->expect_body;
	req->user_agent = p->user_agent;
	req->headers = (const char *const *)p->headers;
	req->nheaders = p->nheaders;
	req->recheck_ms = p->recheck_ms;
}

/* The next endpoint's check for check_run(); 0 when all have been. */
static int
next_check(void *arg, struct check_req *req)
{
	struct check_iter	*it = arg;
	const struct domain_cfg	*dc;
	const struct endpoint_cfg *e;

	while (it->dom < it->cfg->ndomains &&
	    it->ep >= it->cfg->domains[it->dom].neps) {
		it->dom++;
		it->ep = 0;
	}
	if (it->dom == it->cfg->ndomains)
		return 0;
	dc = &it->cfg->domains[it->dom];
	e = &dc->eps[it->ep];
	memset(req, 0, sizeof(*req));
	req->url = e->url;
	req->command = e->command;
	req->host = e->host;
	req->ip = endpoint_target(e);
	req->name = e->name;
	req->domain = dc->name;
	req->dir = it->cfg->dir;	/* NULL: "/" */
	req_policy(req, &dc->pol);
	req->send = e->send;
	req->send_len = e->send_len;
	req->expect_text = e->expect_text;
	req->repeats = it->repeats != NULL ? it->repeats[it->n] : 0;
	req->res = it->res++;
	it->ep++;
	it->n++;
	return 1;
}

int
check_endpoints(const struct config *cfg, struct check_res *res,
    const long *repeats, char *err, size_t errlen)
{
	struct check_iter	 it = { cfg, res, repeats, 0, 0, 0 };
	struct check_limits	 lim = { cfg->max_parallel, cfg->max_exec,
				    cfg->ca_file };
	size_t			 i, j, n = 0;

	for (i = 0; i < cfg->ndomains; i++)
		for (j = 0; j < cfg->domains[i].neps; j++)
			check_res_init(&res[n++]);
	return check_run(n, next_check, &it, &lim, err, errlen);
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
	struct check_limits	 lim = { 1, 1, cfg->ca_file };

	memset(&req, 0, sizeof(req));
	req.url = cfg->control_url;
	req_policy(&req, p);
	/*
	 * Asked once, and failed only by what says the network is down:
	 * a slow answer is not that.
	 */
	req.recheck_ms = 0;
	req.max_latency_ms = 0;
	req.res = res;
	check_res_init(res);
	return check_run(1, next_one, &one, &lim, err, errlen);
}

/*
 * Checks not in a slot: a failed check's repeat waiting for its time
 * (recheck), and a program waiting for one of maxExec (due 0).  A
 * binary heap by due time, then by the order they came, so programs
 * start in file order.
 */
struct later {
	struct check_req req;
	long long	 due;		/* mono_ms(); 0: as soon as it may */
	size_t		 seq;
};

struct heap {
	struct later	*v;
	size_t		 n;
	size_t		 cap;
	size_t		 seq;
};

static int
later_before(const struct later *a, const struct later *b)
{
	return a->due != b->due ? a->due < b->due : a->seq < b->seq;
}

static void
heap_push(struct heap *h, const struct check_req *req, long long due)
{
	struct later	 x;
	size_t		 i;

	if (h->n == h->cap) {
		h->cap = h->cap == 0 ? 16 : h->cap * 2;
		h->v = xrealloc(h->v, h->cap * sizeof(*h->v));
	}
	x.req = *req;
	x.due = due;
	x.seq = h->seq++;
	for (i = h->n++; i > 0 && later_before(&x, &h->v[(i - 1) / 2]);
	    i = (i - 1) / 2)
		h->v[i] = h->v[(i - 1) / 2];
	h->v[i] = x;
}

static struct check_req
heap_pop(struct heap *h)
{
	struct check_req top = h->v[0].req;
	struct later	 x = h->v[--h->n];
	size_t		 i = 0, c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && later_before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!later_before(&h->v[c], &x))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n > 0)
		h->v[i] = x;
	return top;
}

/* The loop of check_run(). */
struct loop {
	CURLM		*cm;
	const struct check_limits *lim;
	struct slot	*slots;
	size_t		 nslots;
	size_t		*idle;		/* indexes of the idle slots */
	size_t		 nidle;
	long		 nexec;		/* programs running */
	long		 max_exec;
	struct heap	 rechecks;	/* repeats, by their time */
	struct heap	 programs;	/* programs waiting for maxExec */
	/* wait_all()'s descriptors, and where each slot's begin: made once. */
	struct curl_waitfd *fds;
	size_t		*from;
};

/*
 * Starts r in an idle slot, in the state of the type that takes it (a
 * slot's state of another type is dropped first).  A program past
 * maxExec waits in l->programs; a check that fails without starting
 * has its reason set and takes no slot.
 */
static void
slot_start(struct loop *l, const struct check_req *r)
{
	const struct check_type *t;
	struct slot	*s;

	t = check_type_of(r->command != NULL ? NULL : r->url);
	if (t == NULL) {
		r->res->ok = 0;
		check_res_text(r->res, "no check takes this url");
		return;
	}
	if ((t->takes & CHECK_TAKES_EXEC) && l->nexec >= l->max_exec) {
		heap_push(&l->programs, r, 0);
		return;
	}
	s = &l->slots[l->idle[l->nidle - 1]];
	if (s->type != t && s->st != NULL) {
		s->type->slot_free(s->st, l->cm);
		s->st = NULL;
	}
	s->type = t;
	if (s->st == NULL)
		s->st = t->slot_new();
	s->req = *r;
	if (t->start(s->st, l->cm, s, r, l->lim->ca_file) == -1) {
		r->res->ok = 0;
		return;
	}
	s->busy = 1;
	l->nidle--;
	if (t->takes & CHECK_TAKES_EXEC)
		l->nexec++;
}

/*
 * Slot s's check is over: the slot is idle again, and a failed check
 * with repeats left waits for its time, its result kept in res->before.
 */
static void
slot_end(struct loop *l, struct slot *s)
{
	struct check_req *r = &s->req;
	struct check_res *res = r->res, *prev;

	s->busy = 0;
	l->idle[l->nidle++] = (size_t)(s - l->slots);
	if (s->type->takes & CHECK_TAKES_EXEC)
		l->nexec--;
	/* maxLatency (ddup.ini(5)): the same for every type. */
	if (res->ok && r->max_latency_ms > 0 &&
	    res->latency_ms > r->max_latency_ms) {
		res->ok = 0;
		check_res_reason(res, "slow: %ld ms > %lld ms", res->latency_ms,
		    r->max_latency_ms);
	}
	if (res->ok || r->repeats <= 0)
		return;
	prev = xmalloc(sizeof(*prev));
	*prev = *res;
	memset(res, 0, sizeof(*res));
	check_res_text(res, "not checked");
	res->before = prev;
	r->repeats--;
	heap_push(&l->rechecks, r, mono_ms() + r->recheck_ms);
}

/*
 * Fills the idle slots: programs that waited for maxExec, repeats whose
 * time has come, then the next checks.  Returns 0 when nothing is left
 * to start or to wait for.
 */
static int
refill(struct loop *l, size_t *next, size_t *n,
    int (*next_req)(void *, struct check_req *), void *arg)
{
	struct check_req req;
	long long	 now = mono_ms();

	while (l->nidle > 0) {
		if (l->programs.n > 0 && l->nexec < l->max_exec)
			req = heap_pop(&l->programs);
		else if (l->rechecks.n > 0 && l->rechecks.v[0].due <= now)
			req = heap_pop(&l->rechecks);
		else if (*next < *n && next_req(arg, &req))
			(*next)++;
		else {
			if (*next < *n)
				*n = *next;	/* next_req() has no more */
			break;
		}
		slot_start(l, &req);
	}
	return l->nidle < l->nslots || l->rechecks.n > 0 ||
	    l->programs.n > 0 || *next < *n;
}

/*
 * Waits for libcurl's transfers, the descriptors of the slots that
 * wait on some, and the first deadline among them and the repeats.
 */
static int
wait_all(struct loop *l, char *err, size_t errlen)
{
	struct curl_waitfd *fds = l->fds;
	long long	 deadline, first = 0, now = mono_ms();
	size_t		 i, k, nfds = 0, *from = l->from;
	CURLMcode	 mc;
	long		 tmo = 1000;

	for (i = 0; i < l->nslots; i++) {
		struct slot *s = &l->slots[i];

		from[i] = nfds;
		if (!s->busy || s->type->wait == NULL)
			continue;
		deadline = 0;
		k = s->type->wait(s->st, &fds[nfds], &deadline);
		for (; k > 0; k--)
			fds[nfds++].revents = 0;
		if (deadline != 0 && (first == 0 || deadline < first))
			first = deadline;
	}
	if (l->rechecks.n > 0 && (first == 0 || l->rechecks.v[0].due < first))
		first = l->rechecks.v[0].due;
	if (first != 0)
		tmo = first <= now ? 0 : first - now < tmo ? (long)(first - now) :
		    tmo;
	/* libcurl shortens the wait to its own next timer. */
	mc = curl_multi_poll(l->cm, nfds > 0 ? fds : NULL, (unsigned)nfds,
	    (int)tmo, NULL);
	if (mc != CURLM_OK) {
		snprintf(err, errlen, "libcurl: %s", curl_multi_strerror(mc));
		return -1;
	}
	now = mono_ms();
	for (i = 0; i < l->nslots; i++) {
		struct slot *s = &l->slots[i];
		size_t	 end = i + 1 < l->nslots ? from[i + 1] : nfds;

		if (!s->busy || s->type->ready == NULL)
			continue;
		if (s->type->ready(s->st, l->cm, &fds[from[i]], end - from[i],
		    now))
			slot_end(l, s);
	}
	return 0;
}

int
check_run(size_t n, int (*next_req)(void *, struct check_req *), void *arg,
    const struct check_limits *lim, char *err, size_t errlen)
{
	struct loop	 l;
	CURLMcode	 mc;
	CURLMsg		*msg;
	struct slot	*j;
	size_t		 next = 0, done, i;
	long		 maxp;
	int		 running, left, rc = -1;

	memset(&l, 0, sizeof(l));
	l.lim = lim;
	if (n == 0) {
		rc = 0;
		goto out;
	}
	if ((l.cm = curl_multi_init()) == NULL) {
		snprintf(err, errlen, "libcurl: cannot create a multi handle");
		goto out;
	}
	maxp = parallel_limit(lim->max_parallel);
	l.max_exec = lim->max_exec > 0 ? lim->max_exec : CHECK_DEFAULT_EXEC;
	l.nslots = (size_t)maxp < n ? (size_t)maxp : n;
	l.slots = xcalloc(l.nslots, sizeof(*l.slots));
	l.idle = xcalloc(l.nslots, sizeof(*l.idle));
	l.fds = xcalloc(l.nslots * CHECK_WAIT_FDS + 1, sizeof(*l.fds));
	l.from = xcalloc(l.nslots + 1, sizeof(*l.from));
	for (l.nidle = 0; l.nidle < l.nslots; l.nidle++)
		l.idle[l.nidle] = l.nslots - 1 - l.nidle;

	while (refill(&l, &next, &n, next_req, arg)) {
		mc = curl_multi_perform(l.cm, &running);
		if (mc != CURLM_OK) {
			snprintf(err, errlen, "libcurl: %s",
			    curl_multi_strerror(mc));
			goto out;
		}
		done = 0;
		while ((msg = curl_multi_info_read(l.cm, &left)) != NULL) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			j = NULL;
			(void)curl_easy_getinfo(msg->easy_handle,
			    CURLINFO_PRIVATE, &j);
			if (j == NULL || !j->busy || j->type->done == NULL)
				continue;
			if (j->type->done(j->st, l.cm, msg->data.result)) {
				slot_end(&l, j);
				done++;
			}
		}
		/*
		 * Refill before waiting: with every handle gone, the poll
		 * would have nothing to wake it up but its own timeout.
		 */
		if (done > 0)
			continue;
		if (wait_all(&l, err, errlen) == -1)
			goto out;
	}
	rc = 0;
out:
	for (i = 0; i < l.nslots; i++)
		if (l.slots[i].st != NULL)
			l.slots[i].type->slot_free(l.slots[i].st, l.cm);
	free(l.rechecks.v);
	free(l.programs.v);
	free(l.from);
	free(l.fds);
	free(l.idle);
	free(l.slots);
	if (l.cm != NULL)
		curl_multi_cleanup(l.cm);
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
