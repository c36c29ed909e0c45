/*
 * atomics.h -- the one seq_cst fence every component uses, and sanitizer detection.
 *
 * ThreadSanitizer does not model standalone fences (gcc even rejects
 * atomic_thread_fence under -fsanitize=thread).  Its documented workaround is to put the
 * ordering on atomic accesses instead, so under TSan full_fence() is a seq_cst
 * read-modify-write of one shared word: all such RMWs are ordered in that word's single
 * modification order, which gives TSan the happens-before edges that a pair of seq_cst
 * fences gives the hardware.  Stronger, never weaker, than the fence it replaces.
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
