/*
 * atomics.h -- the one seq_cst fence every component uses, sanitizer detection, the
 * cache-line size that shared data is padded to, and the one spin-wait backoff.
 *
 * ThreadSanitizer does not model standalone fences (gcc even rejects
 * atomic_thread_fence under -fsanitize=thread).  Its documented workaround is to put the
 * ordering on atomic accesses instead, so under TSan full_fence() is a seq_cst
 * read-modify-write of one shared word: all such RMWs are ordered in that word's single
 * modification order, which gives TSan the happens-before edges that a pair of seq_cst
 * fences gives the hardware.  Stronger, never weaker, than the fence it replaces.
 *
 * x86-64 vs aarch64.  full_fence() is `mfence` on x86-64 and `dmb ish` on aarch64; it
 * is needed on both, for the store-then-load patterns (a store, then a load of another
 * word that must not be read before the store is visible) that even TSO reorders.
 * Acquire loads, release stores and release fences cost nothing on x86-64 (plain movs:
 * TSO already keeps loads in order and stores in order), so there a missing acquire or
 * release goes unnoticed by the hardware, by qemu-user (which runs aarch64 code with the
 * host's order) and by any test; on aarch64 (ldar/stlr, `dmb ish`) they are what keeps
 * the order.  ThreadSanitizer checks them by the C11 model, whatever the host.  And a
 * seq_cst read-modify-write is a full barrier on x86-64 (every locked instruction is)
 * but not in C11 and not on aarch64 with load/store-exclusive atomics, where a later
 * plain load may be satisfied before the RMW's store is visible: a protocol that needs
 * "my RMW, then my loads" in order needs full_fence() after the RMW (idle_park.h).
 */
#ifndef SCHEDBENCH_ATOMICS_H
#define SCHEDBENCH_ATOMICS_H

#include <sched.h>
#include <stdatomic.h>

/* The padding unit: data written by different threads sits CACHELINE bytes apart, so
 * no two of them share a line (64 bytes on x86-64 and on the aarch64 cores we run). */
#define CACHELINE 64

#if defined(__SANITIZE_THREAD__)
#define SB_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SB_TSAN 1
#endif
#endif
#ifndef SB_TSAN
#define SB_TSAN 0
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SB_ASAN 1
#endif
#endif
#ifndef SB_ASAN
#define SB_ASAN 0
#endif

#if SB_TSAN
extern _Atomic int sb_tsan_fence_word;
static inline void full_fence(void)
{
    atomic_fetch_add_explicit(&sb_tsan_fence_word, 0, memory_order_seq_cst);
}
#else
static inline void full_fence(void) { atomic_thread_fence(memory_order_seq_cst); }
#endif

/* ---- spin-wait backoff ------------------------------------------------------------ */

/* One pause of a spin loop: a short delay that does not touch memory.  The spin counts
 * (the backoff below, the spin lock's) assume a pause takes time, as x86's `pause` does
 * (tens to ~140 cycles).  aarch64 has no equivalent: `yield` is a hint that cores
 * without SMT (Neoverse, Graviton, Ampere) retire as a nop, so the backoff would shrink
 * to nothing.  `isb` stalls the front end until the back end drains, a delay of a few
 * tens of cycles with no memory effect; Rust's core::hint::spin_loop uses it for that
 * reason (rust-lang/rust#84725).  Other targets: a compiler barrier only (asm/fcontext.S
 * refuses them anyway). */
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

/* Round r of a spin wait pauses 2^r times, at most 2^BACKOFF_MAX_SHIFT (128). */
#define BACKOFF_MAX_SHIFT 7
/* From this round on, backoff() yields the CPU instead of pausing. */
#define BACKOFF_YIELD_ROUND 8

/* The pauses of round r (r = 0, 1, 2, ...): 1, 2, 4 ... 128, 128, ... */
static inline void backoff_pause(unsigned r)
{
    unsigned n = 1u << (r < BACKOFF_MAX_SHIFT ? r : BACKOFF_MAX_SHIFT);
    for (unsigned k = 0; k < n; k++)
        cpu_relax();
}

/* Round r of a wait that may last: pause (backoff_pause) for the first
 * BACKOFF_YIELD_ROUND rounds, then sched_yield, so that a preempted thread we wait for
 * gets the core back. */
static inline void backoff(unsigned r)
{
    if (r < BACKOFF_YIELD_ROUND)
        backoff_pause(r);
    else
        sched_yield();
}

#endif /* SCHEDBENCH_ATOMICS_H */
