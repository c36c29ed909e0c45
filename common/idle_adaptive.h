/*
 * idle_adaptive.h -- spin, then park, with at most half of the workers spinning at once
 * (Go's scheduler, Tokio).
 *
 * An idle worker first becomes a "spinner" if fewer than half the workers (at least one)
 * are spinning: it searches with backoff for ADAPTIVE_SPIN_NS.  Then it stops spinning
 * and parks in the parking lot (park_lot.h).  Submitters wake a parked worker only
 * when nobody spins: a spinner will find the task anyway.
 *
 * Why no wake-up is lost (publish, full barrier, check; Go's runtime/proc.go):
 *
 *   spinner giving up                       submitter
 *   nspinning-- (seq_cst)                   publish the task
 *   recheck every queue                     fence(seq_cst)
 *   park (announce, recheck, sleep)         if nspinning > 0: done, else park_wake
 *
 * If the submitter sees nspinning > 0, that spinner's decrement comes after the
 * submitter's load in the seq_cst order, so the spinner's recheck finds the task (at
 * the latest the one park_wait makes after its fence).  If it sees 0, park_wake's own
 * protocol covers the parked workers.  A spinner that finds work while it was the last
 * spinner wakes one parked worker to search in its place, which spins in turn, so a
 * burst of tasks still spreads (Go's resetspinning and wakep).
 *
 * Runnext slots (sched.c, make_ready_again): spinners search them, so they are the
 * watchers while they spin; when nobody spins, the parking lot's watcher takes over
 * (idle_park.h).  The same argument as above covers a task left in a slot.
 */
#ifndef SCHEDBENCH_IDLE_ADAPTIVE_H
#define SCHEDBENCH_IDLE_ADAPTIVE_H

#include "park_lot.h"

/* How long a spinner searches before it parks, on the clock (not a count of rounds, so
 * that it does not depend on what a round costs on the machine): 180 us is what 64
 * rounds of backoff_pause took here (7,423 pauses of ~24 ns). */
#define ADAPTIVE_SPIN_NS 180000

static _Atomic int nspinning;

/* At every start-up: the parking lot, and no spinner (a fork() child starts from the
 * parent's count, which its spinners, gone there, never take back). */
static inline int adaptive_setup(int n)
{
    atomic_store_explicit(&nspinning, 0, memory_order_relaxed);
    return park_setup(n);
}

/* One spin phase, if fewer than half of the workers (at least one) spin: a task, or
 * NULL after ADAPTIVE_SPIN_NS (or when the spinners are too many). */
static inline task_t *adaptive_spin(worker_t *w)
{
    /* A loop, not one compare-exchange: a worker woken to search in place of the last
     * spinner must spin (so that it wakes the next when it finds work) unless enough
     * others do; one lost race with another spinner's count must not turn it into a
     * plain parker that takes one task and wakes nobody (a burst of tasks queued on
     * parked workers then waited for good). */
    int s = atomic_load_explicit(&nspinning, memory_order_relaxed);
    do {
        if (s != 0 && 2 * s >= worker_count())
            return NULL;
    } while (!atomic_compare_exchange_weak_explicit(&nspinning, &s, s + 1, memory_order_seq_cst,
                                                    memory_order_relaxed));
    int64_t end = sb_clock_ns(CLOCK_MONOTONIC) + ADAPTIVE_SPIN_NS;
    for (unsigned i = 0; !core_stopping() && i < IDLE_SEARCH_ROUNDS_MAX &&
                         (i == 0 || sb_clock_ns(CLOCK_MONOTONIC) < end);
         i++) {
        task_t *t = find_work(w);
        if (t) {
            if (atomic_fetch_sub_explicit(&nspinning, 1, memory_order_seq_cst) == 1)
                park_wake(NULL);
            return t;
        }
        backoff_pause(i);
    }
    /* The recheck right below is a fast path only: a seq_cst RMW does not order later
     * relaxed loads, in C11 nor on aarch64 (x86-64's locked RMW does).  The guarantee
     * is park_wait's: its fence follows this decrement, so a submitter that read our
     * count from before it has its task seen by park_wait's recheck. */
    atomic_fetch_sub_explicit(&nspinning, 1, memory_order_seq_cst);
    return find_work(w);
}

/* Spin, then park; a worker woken from the lot spins again before it takes work (Go's
 * wakep starts a spinning M), so that when it finds a task while it is the last spinner
 * it wakes the next one.  That chain is what carries a burst of tasks that were queued
 * while somebody spun (their submitters woke nobody) to enough workers: without it, the
 * one worker the last spinner woke took one task and nothing woke another for the
 * rest.  When both take tasks that block their threads (BTHREAD_STACKTYPE_PTHREAD
 * bthreads waiting on a mutex), the rest stay queued on parked workers for good: brpc's
 * MutexTest.mix_thread_types hung in about 1 run of 10. */
static inline task_t *adaptive_wait(worker_t *w)
{
    for (;;) {
        task_t *t = adaptive_spin(w);
        if (t)
            return t;
        t = park_wait(w);
        if (t || core_stopping())
            return t;
    }
}

static inline void adaptive_wake(worker_t *target)
{
    /* seq_cst fence: the published task is ordered before the load of nspinning */
    full_fence();
    if (atomic_load_explicit(&nspinning, memory_order_relaxed) > 0)
        return;
    park_wake(target);
}

static inline void adaptive_watch(void)
{
    /* seq_cst: after the caller's exchange into runnext, against a spinner's decrement
     * then recheck */
    if (atomic_load_explicit(&nspinning, memory_order_seq_cst) > 0)
        return;
    park_watch();
}

#define IDLE_SETUP(n) adaptive_setup(n)
#define IDLE_TEARDOWN() park_teardown()
#define IDLE_WAIT(w) adaptive_wait(w)
#define IDLE_WAKE(target) adaptive_wake(target)
#define IDLE_WAKE_ALL() park_wake_all()
#define IDLE_WATCH() adaptive_watch()
#define IDLE_SPINS 1

#endif /* SCHEDBENCH_IDLE_ADAPTIVE_H */
