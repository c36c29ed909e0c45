/*
 * butex.h -- a futex for bthreads (brpc's names and return conventions).
 *
 * A butex is a 32-bit atomic value plus a list of waiters.  A waiting bthread suspends
 * only itself (its worker runs other tasks); a waiting pthread sleeps on a futex.  The
 * value is the first member, so the pointer returned by butex_create() may be used as
 * an `_Atomic int *` (e.g. atomic_store_explicit((_Atomic int *)b, 1, ...)).
 *
 * Butex memory is type-stable: butex_destroy() returns it to a pool, never to the OS,
 * so a late wake on a destroyed butex touches valid memory (it wakes nobody).
 */
#ifndef SCHEDBENCH_BUTEX_H
#define SCHEDBENCH_BUTEX_H

#include <stddef.h>
#include <time.h>

#include "bthread.h"

#ifdef __cplusplus
extern "C" {
#endif

void *butex_create(void);         /* value 0; NULL with errno ENOMEM */
/* Waiters still on the butex are woken (a misuse; their wait returns 0). */
void butex_destroy(void *butex);
/* EXTENSION: 1 if some waiter is queued on the butex, else 0.  A waiter that has read
 * the value but is not queued yet is not seen. */
int butex_waiting(void *butex);
/* Wake at most one / n / all waiters; return how many were woken. */
int butex_wake(void *butex);
int butex_wake_n(void *butex, size_t n);
int butex_wake_all(void *butex);
/* Wake all waiters but the bthread `excluded`. */
int butex_wake_except(void *butex, bthread_t excluded);
/* Wake one waiter of butex and move the rest onto butex2 (cond broadcast). */
int butex_requeue(void *butex, void *butex2);
/* If the value still equals expected, wait until woken, interrupted or abstime
 * (CLOCK_REALTIME, NULL = forever).  0 when woken, else -1 with errno EWOULDBLOCK (value
 * differed), ETIMEDOUT or EINTR. */
int butex_wait(void *butex, int expected, const struct timespec *abstime);

#ifdef __cplusplus
}
#endif
#endif /* SCHEDBENCH_BUTEX_H */
