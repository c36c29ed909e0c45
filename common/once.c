/*
 * once.c -- bthread_once: run an init routine exactly once, losers wait on a butex.
 *
 * The flag is one int (bthread_once_t.state_): NOT_STARTED (0, so zeroed memory is a
 * valid flag), RUNNING, DONE.  The first caller to move it NOT_STARTED -> RUNNING runs
 * the routine, stores DONE and wakes the waiters.  Everyone else waits until DONE.
 *
 * Where the losers sleep.  brpc gives every flag a butex of its own (its bthread_once_t
 * is a C++ class that creates one in its constructor and frees it in its destructor).
 * A C flag has no constructor or destructor and must work as a zeroed global, so it
 * cannot own a butex.  Instead every flag hashes, by its address, to one of
 * ONCE_BUCKETS butexes shared by the whole process, created on first need and never
 * freed (16 butexes at most; butex memory is type-stable anyway).  A bucket's value is
 * a generation counter, not a flag's state: sharing is harmless, it only costs a waiter
 * of another flag a spurious wake-up, after which it checks its own flag again.
 *
 * Why no wake-up is lost (the rule of sync.c: change the word first, wake second, sleep
 * only on the exact value observed):
 *
 *     winner                                  waiter
 *     init_routine()                          gen = load(bucket)       acquire
 *     store(state, DONE)          release     if load(state) == DONE   acquire
 *     fetch_add(bucket, 1)        release         return
 *     butex_wake_all(bucket)                  butex_wait(bucket, gen)
 *
 * If the waiter's load of the generation sees the winner's increment (or any later
 * one: every increment is a read-modify-write, so a later one carries the winner's
 * release on), it also sees DONE and returns.  If it sees an older generation, the
 * increment comes later, and butex_wait re-checks the value under the butex's lock
 * that butex_wake_all takes after the increment: the wait either returns at once
 * (EWOULDBLOCK) or is queued before the wake-up looks.  The winner and every waiter of a
 * flag use the same bucket, fetched before the winner claims the flag, so a winner never
 * finds itself unable to wake (a failure to create the bucket is reported as ENOMEM
 * before anything was claimed).
 *
 * The routine's writes reach every caller: the winner's release store of DONE pairs with
 * the acquire loads of the fast path and of the waiters.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "bthread.h"
#include "butex.h"

enum { ONCE_NOT_STARTED = 0, ONCE_RUNNING = 1, ONCE_DONE = 2 };

#define ONCE_BUCKETS 16 /* a power of two */

/* The flag's word, accessed atomically.  bthread.h keeps it a plain int (it is also
 * compiled as C++); an _Atomic int has the same size and alignment here. */
_Static_assert(sizeof(_Atomic int) == sizeof(int) && _Alignof(_Atomic int) == _Alignof(int),
               "atomic int layout");
static inline _Atomic int *state_word(bthread_once_t *o) { return (_Atomic int *)&o->state_; }

/* The value word of a butex (butex.h: the value is the first member). */
static inline _Atomic int *butex_word(void *butex) { return (_Atomic int *)butex; }

static _Atomic(void *) buckets[ONCE_BUCKETS];

/* Any thread: the butex that the flag's winner and waiters share, created on first
 * need; NULL with ENOMEM if it could not be. */
static void *bucket_of(const bthread_once_t *o)
{
    /* Fibonacci hashing of the address; flags are at least int-aligned. */
    const uint64_t h = (uint64_t)(uintptr_t)o * UINT64_C(0x9E3779B97F4A7C15);
    _Atomic(void *) *slot = &buckets[h >> (64 - 4)];
    _Static_assert(ONCE_BUCKETS == 1 << 4, "the shift takes log2(ONCE_BUCKETS) bits");
    /* acquire: pairs with the release CAS below, so the butex's initialization is seen. */
    void *b = atomic_load_explicit(slot, memory_order_acquire);
    if (b)
        return b;
    void *fresh = butex_create();
    if (!fresh)
        return NULL;
    /* release: publishes the new butex's initialization; acquire on failure: as above. */
    if (atomic_compare_exchange_strong_explicit(slot, &b, fresh, memory_order_acq_rel,
                                                memory_order_acquire))
        return fresh;
    butex_destroy(fresh); /* another caller installed one first: use that */
    return b;
}

int bthread_once(bthread_once_t *once_control, void (*init_routine)(void))
{
    if (!once_control || !init_routine)
        return EINVAL;
    _Atomic int *st = state_word(once_control);
    /* acquire: pairs with the winner's release store of DONE: init_routine's writes. */
    if (atomic_load_explicit(st, memory_order_acquire) == ONCE_DONE)
        return 0;
    void *b = bucket_of(once_control);
    if (!b)
        return ENOMEM;
    int s = ONCE_NOT_STARTED;
    /* relaxed: the winner reads nothing another thread published, and a loser looks at
     * the state again below, with acquire. */
    if (atomic_compare_exchange_strong_explicit(st, &s, ONCE_RUNNING, memory_order_relaxed,
                                                memory_order_relaxed)) {
        init_routine();
        /* release: pairs with the callers' acquire loads of the state. */
        atomic_store_explicit(st, ONCE_DONE, memory_order_release);
        /* release: a waiter whose acquire load of the generation sees this increment
         * sees DONE (the header's table); the value change comes before the wake. */
        atomic_fetch_add_explicit(butex_word(b), 1, memory_order_release);
        butex_wake_all(b);
        return 0;
    }
    for (;;) {
        /* acquire: pairs with the winner's release increment (the header's table). */
        const int gen = atomic_load_explicit(butex_word(b), memory_order_acquire);
        /* acquire: as the fast path. */
        if (atomic_load_explicit(st, memory_order_acquire) == ONCE_DONE)
            return 0;
        /* Woken (maybe by another flag's winner), interrupted, or the generation moved
         * on: look at the flag again.  Nothing else can end a wait without deadline. */
        if (butex_wait(b, gen, NULL) != 0 && errno != EWOULDBLOCK && errno != EINTR)
            return errno;
    }
}
