/*
 * stack.h -- guarded, pooled stacks for bthreads.
 *
 * Three size classes (small / normal / large: 32 KiB / 1 MiB / 8 MiB by default; the
 * environment variables SCHEDBENCH_STACK_SMALL, _NORMAL, _LARGE and _GUARD override them,
 * in bytes, read once at first use).  Each stack is page-aligned with a PROT_NONE guard
 * of SCHEDBENCH_STACK_GUARD bytes (default one page; 0 = none) at its low, overflowing
 * end, so an overflow faults instead of corrupting a neighbour.
 *
 * Pools: a thread keeps a few stacks per class in a thread-local cache; beyond that they
 * go to a bounded shared free list per class; beyond that they are unmapped.  A finished
 * task's stack is reused without a system call.
 *
 * Limits and the fallback.  Every guarded stack costs the kernel two memory maps (VMAs)
 * and a process may have /proc/sys/vm/max_map_count of them (65530 by default, about 32k
 * guarded stacks).  The allocator keeps its guarded stacks within a budget of half that
 * limit minus a reserve for the rest of the process (malloc, threads, libraries).  Past
 * the budget, or when mmap/mprotect fails, stacks are carved unguarded from 64 MiB slabs
 * (one map per slab, so a million small stacks cost ~500 maps), and the first such stack
 * logs one line to stderr naming the limit.  Slab stacks are pooled like the others and
 * never unmapped before stack_shutdown().  Only when a slab cannot be mapped either does
 * stack_get() return NULL (errno ENOMEM).
 *
 * Thread safety: every function may be called from any thread.
 */
#ifndef SCHEDBENCH_STACK_H
#define SCHEDBENCH_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum stack_class { STACK_SMALL = 0, STACK_NORMAL = 1, STACK_LARGE = 2, STACK_NCLASS = 3 };

/* A stack.  The descriptor lives at the top (high end) of its own memory, so it costs no
 * allocation and shares the page the task touches first. */
typedef struct sb_stack {
    void *top;            /* high end, 16-byte aligned: where the context frame starts */
    void *limit;          /* lowest usable byte (just above the guard) */
    size_t size;          /* usable bytes, limit .. descriptor */
    void *map;            /* what to munmap (NULL for slab stacks) */
    size_t map_len;
    enum stack_class cls;
    bool guarded;
    bool reserve;         /* the class's reserve stack (stack_reserve) */
    unsigned valgrind_id;
    void *tsan_fiber;     /* owned by the core's switch code (ThreadSanitizer builds) */
    struct sb_stack *next; /* free-list link */
} sb_stack_t;

/* Returns a stack of the class, or NULL with errno = ENOMEM.  When no stack can be
 * made, the class's reserve (stack_reserve) is handed out if it is free. */
sb_stack_t *stack_get(enum stack_class cls);
/* Make sure each class has its reserve: one stack set aside at start-up and handed out
 * only when no other can be had, then kept for that use (stack_put puts it back there).
 * So while no task holds a stack, a task that needs one gets one: a program never waits
 * for a stack that nobody will give back.  0, or ENOMEM (the start-up then fails). */
int stack_reserve(void);
/* True after a stack_get found no stack but the reserve (or none), until a new stack
 * can be mapped again: stack_put then keeps no stack in a thread's own cache, where a
 * task on another thread could not reach it. */
bool stack_scarce(void);
/* Back to the calling thread's cache (or the shared list, or the OS). */
void stack_put(sb_stack_t *s);
/* Return every cached and pooled stack to the OS and forget the configuration.  Only
 * when no stack is in use (bthread_shutdown). */
void stack_shutdown(void);
/* Move this thread's cache to the shared lists (a worker exiting). */
void stack_flush_thread_cache(void);
/* In the child of a fork(): the locks as new (a parent's thread may have held them);
 * the stacks the parent's tasks held stay mapped and are forgotten, a reserve one of
 * them held included (the next start-up makes a new one). */
void stack_atfork_child(void);

/* The pool-miss path alone (harness/bench/bench_stack.c measures it): a new stack in a
 * map of its own, made as stack_get makes one when its pools are empty (guard, populated
 * top page, descriptor), or NULL with errno; and its unmapping, as stack_put when they
 * are full.  No pool and no slab fallback is involved. */
sb_stack_t *stack_map_new(enum stack_class cls);
void stack_unmap(sb_stack_t *s);

/* Configured sizes (after rounding to pages). */
size_t stack_class_size(enum stack_class cls);
size_t stack_guard_size(void);

typedef struct stack_counters {
    uint64_t mapped;        /* guarded (or guard-0) stacks mapped one by one */
    uint64_t unmapped;
    uint64_t slab_stacks;   /* unguarded stacks carved from slabs (the fallback) */
    uint64_t slabs;
    uint64_t pool_hits;     /* stack_get served from a cache or shared list */
    uint64_t failures;      /* stack_get returned NULL */
    uint64_t map_budget;    /* guarded stacks allowed before the slab fallback */
} stack_counters_t;
void stack_get_counters(stack_counters_t *out);

/* Test hooks (fault injection): the next n mmap / mprotect calls made for single
 * guarded stacks fail with ENOMEM; slab_fail makes slab maps fail as well.  Budget
 * overrides the map budget (0 = computed from max_map_count). */
void stack_test_inject(unsigned fail_mmap, unsigned fail_mprotect, bool slab_fail);
void stack_test_set_budget(uint64_t budget);

#endif /* SCHEDBENCH_STACK_H */
