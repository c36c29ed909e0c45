/*
 * spinlock.h -- a test-and-test-and-set lock for short critical sections (a few
 * loads and stores).  Acquire on lock orders the section after it; release on unlock
 * publishes the section's writes to the next owner.  Spins with a CPU pause, then
 * yields the thread, so a lock holder that was preempted gets the core back.
 *
 * x86-64 vs aarch64: on x86-64 (TSO) the acquire exchange is a locked xchg, a full
 * barrier anyway, and the release store a plain mov, so x86 would order the section
 * even with weaker orders; on aarch64 they become an acquire exchange (swpa, or
 * ldaxr/stxr) and stlr, and both orders are what keep the section inside the lock.
 * Neither is stronger than aarch64 needs.
 */
#ifndef SCHEDBENCH_SPINLOCK_H
#define SCHEDBENCH_SPINLOCK_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

typedef struct { _Atomic int v; } spinlock_t;
#define SPINLOCK_INIT {0}

/* One pause of a spin loop: a short delay that does not touch memory.  The spin counts
 * (64 here, the 1..128 backoff of idle_spin.h and idle_adaptive.h) assume a pause takes
 * time, as x86's `pause` does (tens to ~140 cycles).  aarch64 has no equivalent: `yield`
 * is a hint that cores without SMT (Neoverse, Graviton, Ampere) retire as a nop, so the
 * backoff would shrink to nothing.  `isb` stalls the front end until the back end
 * drains, a delay of a few tens of cycles with no memory effect; Rust's
 * core::hint::spin_loop uses it for that reason (rust-lang/rust#84725), as do several
 * databases.  Other targets: a compiler barrier only (asm/fcontext.S refuses them). */
static inline void cpu_relax(void)
{
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("isb" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

static inline bool spin_trylock(spinlock_t *l)
{
    /* acquire: the critical section may not move above the lock */
    return atomic_load_explicit(&l->v, memory_order_relaxed) == 0 &&
           !atomic_exchange_explicit(&l->v, 1, memory_order_acquire);
}

static inline void spin_lock(spinlock_t *l)
{
    for (unsigned n = 0; !spin_trylock(l); n++) {
        if (n < 64)
            cpu_relax();
        else
            sched_yield();
    }
}

static inline void spin_unlock(spinlock_t *l)
{
    /* release: the critical section's writes are visible to the next owner */
    atomic_store_explicit(&l->v, 0, memory_order_release);
}

#endif /* SCHEDBENCH_SPINLOCK_H */
