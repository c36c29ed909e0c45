/*
 * atomics.h -- the one seq_cst fence every component uses, and sanitizer detection.
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

#include <stdatomic.h>

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

#if SB_TSAN
extern _Atomic int sb_tsan_fence_word;
static inline void full_fence(void)
{
    atomic_fetch_add_explicit(&sb_tsan_fence_word, 0, memory_order_seq_cst);
}
#else
static inline void full_fence(void) { atomic_thread_fence(memory_order_seq_cst); }
#endif

#endif /* SCHEDBENCH_ATOMICS_H */
