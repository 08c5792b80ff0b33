#ifndef DDUP_METRICS_H
#define DDUP_METRICS_H

/*
 * metricsFile: a run's outcome in Prometheus's text exposition format,
 * for node_exporter's textfile collector, replaced atomically after
 * every run.  Names follow Prometheus's conventions: the ddup_ prefix,
 * base units (seconds), _total for counters, HELP and TYPE lines.
 */

#include <stddef.h>

struct outcome;
struct st_counter;

/* What the file says of the run itself. */
struct metrics_run {
	long long	 duration_ms;
	int		 exit_status;
	long long	 interval_ms;
};

/*
 * The exposition text of o, with the counters c (n of them, from
 * state_counters()); malloc'd, its length in *len.
 */
char	*metrics_render(const struct outcome *o, const struct st_counter *c,
	    size_t n, const struct metrics_run *mr, size_t *len);
/*
 * Renders and writes path (mode 0644, a missing folder made 0755);
 * -1 with err naming path.
 */
int	 metrics_write(const char *path, const struct outcome *o,
	    const struct st_counter *c, size_t n, const struct metrics_run *mr,
	    char *err, size_t errlen);

#endif
