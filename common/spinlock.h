/*
 * spinlock.h -- a test-and-test-and-set lock for short critical sections (a few
 * loads and stores).  Acquire on lock orders the section after it; release on unlock
 * publishes the section's writes to the next owner.  Spins with exponential CPU pauses,
 * then yields the thread (backoff() in atomics.h), so a lock holder that was preempted
 * gets the core back.
 *
 * x86-64 vs aarch64: on x86-64 (TSO) the acquire exchange is a locked xchg, a full
 * barrier anyway, and the release store a plain mov, so x86 would order the section
 * even with weaker orders; on aarch64 they become an acquire exchange (swpa, or
 * ldaxr/stxr) and stlr, and both orders are what keep the section inside the lock.
 * Neither is stronger than aarch64 needs.
 */
#ifndef SCHEDBENCH_SPINLOCK_H
#define SCHEDBENCH_SPINLOCK_H

#include <stdatomic.h>
#include <stdbool.h>

#include "atomics.h"

typedef struct { _Atomic int v; } spinlock_t;
#define SPINLOCK_INIT {0}

static inline bool spin_trylock(spinlock_t *l)
{
    /* acquire: the critical section may not move above the lock */
    return atomic_load_explicit(&l->v, memory_order_relaxed) == 0 &&
           !atomic_exchange_explicit(&l->v, 1, memory_order_acquire);
}

static inline void spin_lock(spinlock_t *l)
{
    for (unsigned r = 0; !spin_trylock(l); r++)
        backoff(r);
}

/* As new: for a fork() child, where a thread of the parent may have held it. */
static inline void spin_init(spinlock_t *l) { atomic_store_explicit(&l->v, 0, memory_order_relaxed); }

static inline void spin_unlock(spinlock_t *l)
{
    /* release: the critical section's writes are visible to the next owner */
    atomic_store_explicit(&l->v, 0, memory_order_release);
}

#endif /* SCHEDBENCH_SPINLOCK_H */
