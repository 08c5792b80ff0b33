#ifndef DDUP_PROC_INT_H
#define DDUP_PROC_INT_H

/*
 * Between proc.c, which starts and ends a program, and proc_sig.c, which
 * holds what stands around the programs while they run (the stop
 * signals, SIGCHLD, the table of programs running, the reaping).
 * Private to proc*.c.
 */

#include <sys/types.h>

#include <signal.h>
#include <stddef.h>

#include "proc.h"

/*
 * Before the fork of c: 0, with the stop signals masked (old: the mask
 * to put back) and caught while programs run; -1 with err set when too
 * many run already, or a stop signal came.
 */
int	 proc_enter(struct proc_child *c, sigset_t *old, char *err,
	    size_t errlen);
/* In the parent after the fork, pid (-1: it failed): the mask put back. */
void	 proc_forked(struct proc_child *c, pid_t pid, const sigset_t *old);
/* In the child, before execve: the signals as a program gets them. */
void	 proc_child_signals(void);
/*
 * After c has been reaped: its group and what the programs left are
 * ended; the last program's end puts the signals back as they were,
 * then dies of a stop signal that came meanwhile.
 */
void	 proc_leave(struct proc_child *c);

#endif
