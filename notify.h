#ifndef DDUP_NOTIFY_H
#define DDUP_NOTIFY_H

/*
 * Notifications (ddup.ini(5), NOTIFICATIONS): delivery of what the
 * state's outbox holds to the [notify] sections, by webhook or by
 * program.  A run stores its events with the rest of its state (the
 * event JSON of outbox.h, in state_save()) and calls notify_deliver()
 * after the commit: nothing is sent that is not already in the store,
 * so a webhook that is down or a run that is killed loses no event.
 *
 * What is sent is the stored JSON with "id" added first: the event's
 * number in the outbox, the same for every attempt, so a receiver
 * can drop one it got twice (delivery is at least once: an attempt
 * whose answer comes too late, or a run killed before it recorded the
 * answer, is made again).
 *
 * Each section's events go out one by one, oldest first: one that fails
 * holds back the later ones until it is delivered or given up, so a
 * receiver sees them in order.  A failed attempt is tried again by a
 * later run, after a gap that grows with each attempt
 * (notify_retry_at()), until `attempts` are spent; it is then given up.
 * All the deliveries of one section in one run take at most its
 * `timeout`.
 */

#include <stddef.h>

struct config;
struct state;

/*
 * When the next attempt is due after `attempts` failed ones, the last at
 * `last` (ms): interval x 4^(attempts - 1) later, at most a day, less
 * half an interval so that the run that comes that late is not missed
 * by a hair.
 */
long long	 notify_retry_at(long long last, long attempts,
		    long long interval_ms);

/*
 * Whether a delivery whose next attempt is at next_attempt (ms, 0: at
 * once), after `attempts` failed ones, is due at now: when that time
 * has come, and also when it is later than notify_retry_at(now,
 * attempts), which no clock that kept its pace can have set.
 */
int		 notify_due(long long next_attempt, long attempts,
		    long long now, long long interval_ms);

/*
 * Sends what is due, section by section, and records each outcome in
 * the state file as it is known.  Logs failures (a warning; an error when
 * an event is given up); never changes the run's exit status.
 */
void		 notify_deliver(const struct config *c, struct state *st);

#endif
