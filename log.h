#ifndef DDUP_LOG_H
#define DDUP_LOG_H

/*
 * Log lines go to stderr, one per event, as text or as one JSON object
 * per line (logFormat = json).  Levels: LOG_ERR is always shown, LOG_WARN
 * and LOG_INFO are hidden by -q, LOG_DEBUG needs -v.
 */

enum log_level {
	LOG_ERR = 0,
	LOG_WARN,
	LOG_INFO,
	LOG_DEBUG
};

void	 log_init(int json, enum log_level max);
int	 log_enabled(enum log_level lvl);

/*
 * One event.  domain and endpoint may be NULL; they become the prefix
 * "domain: endpoint: " in text and fields in JSON.
 */
void	 logx(enum log_level lvl, const char *domain, const char *endpoint,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The tier of a change, as logs show it (decide.h has the tier itself). */
struct log_tier {
	long		 priority;
	int		 located;	/* the domain prefers a location */
	long		 rank;		/* with located: its rank */
	const char	*location;	/* with located: its name, NULL: the others */
	int		 fallback;	/* allDown = fallback: its addresses, no tier */
	int		 all_down;	/* allDown = all: every endpoint of the tier */
};

/*
 * One line per domain for a DNS change or a failed one: text
 * "DOMAIN: MSG: [OLD] -> [NEW] (tier T)", or "(tier T, location L)" and
 * "(tier T, other locations)" for a domain with a location; JSON with the
 * fields event, domain, old, new, tier (and tierRank, tierLocation for a
 * domain with a location), msg.  old and new are space-separated address
 * lists of both families ("" for none); tier NULL means none.
 */
void	 log_change(enum log_level lvl, const char *event, const char *domain,
	    const char *old, const char *new, const struct log_tier *tier,
	    const char *msg);

#endif
