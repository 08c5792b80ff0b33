/*
 * Saving a run: its outcome, the record of everything it learnt, handed
 * to the state's backend in one go (state_save()); the SQLite backend
 * writes it in one transaction (state/sqlite.c), so a run killed at any
 * moment leaves either the state before it or the state after it.
 */

#include <stdio.h>

#include "config.h"
#include "log.h"
#include "outcome.h"
#include "save.h"
#include "state.h"

/*
 * Everything the run learnt, in one go, through the state's backend: its
 * outcome is the record.
 */
int
save_outcome(struct state *st, const struct outcome *o,
    const struct config *cfg)
{
	char		 err[512];
	long long	 rows, pages;

	if (state_save(st, cfg, o, err, sizeof(err)) == -1) {
		logx(LOG_ERR, NULL, NULL, "saving state: %s", err);
		return -1;
	}
	state_last_writes(st, &rows, &pages);
	if (rows < 0)		/* a store that does not count them */
		logx(LOG_DEBUG, NULL, NULL, "state saved");
	else
		logx(LOG_DEBUG, NULL, NULL, "state saved: %lld rows changed, "
		    "%lld pages written", rows, pages);
	return 0;
}
