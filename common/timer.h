/*
 * timer.h -- one timer thread for timed butex waits and bthread_usleep (timer.c).
 * Internal.  A leaf: timer.c depends on nothing of the scheduler core; butex.c and
 * sched.c (through core.h) depend on it, one way.
 */
#ifndef SCHEDBENCH_TIMER_H
#define SCHEDBENCH_TIMER_H

#include <stdint.h>
#include <time.h>

/* Any thread.  Run fn(arg) on the timer thread at abstime (CLOCK_REALTIME).  Returns an
 * id (never 0), or 0 on ENOMEM. */
uint64_t timer_add(const struct timespec *abstime, void (*fn)(void *), void *arg);
/* Any thread but the timer thread.  0 = removed before it ran; 1 = it ran or is
 * running, and timer_del returned only after it finished. */
int timer_del(uint64_t id);
/* Stop the timer thread (bthread_shutdown); the next timer_add starts it again. */
void timer_shutdown(void);
/* In the child of a fork(): no timer thread exists there, and the parent's timers are
 * its waiters' (gone): forget them (their memory is kept for reuse); the next
 * timer_add starts a thread. */
void timer_atfork_child(void);

#endif /* SCHEDBENCH_TIMER_H */
