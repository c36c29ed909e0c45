/*
 * wsq.h -- a bounded Chase-Lev work-stealing deque of task pointers.
 *
 * The owner pushes and pops at the bottom (LIFO: the task it made last is hot in its
 * cache); thieves take from the top with a CAS.  The memory orders are those of Le, Pop,
 * Cohen and Zappa Nardelli, "Correct and Efficient Work-Stealing for Weak Memory Models"
 * (PPoPP 2013), Fig. 1, with each fence commented below.  Capacity is a power of two;
 * the deque does not grow: a full push returns false and the caller spills the task
 * elsewhere (the core puts it on the worker's remote queue).
 *
 * Who may call what:
 *   wsq_push, wsq_pop          owner only; may run in parallel with wsq_steal
 *   wsq_steal, wsq_steal_half, wsq_steal_k
 *                              any thread; may run in parallel with the owner and
 *                              with other thieves
 *   wsq_size                   any thread; a snapshot (may be stale at once)
 *
 * ThreadSanitizer does not model standalone fences (atomic_thread_fence) and would
 * report the slot accesses as races.  Its documented workaround is to express the same
 * ordering on the atomic accesses themselves, so under TSan (WSQ_TSAN) the fenced
 * relaxed accesses below become seq_cst / release / acquire accesses, and the seq_cst
 * fences become full_fence() (atomics.h).  That is stronger than the fenced version,
 * never weaker, so it checks the same algorithm.
 *
 * x86-64 vs aarch64 (see atomics.h): the orders are the paper's, for C11, and each is
 * needed on aarch64.  On x86-64 only the seq_cst fence in wsq_pop (a store, then a load:
 * `mfence`) and the CASes (locked) do anything; the acquire loads and the release fence
 * compile to plain movs there, so an x86-64 run, native or under qemu-user, cannot show
 * that they are needed.  The seq_cst fence in wsq_steal_one orders two loads, which TSO
 * keeps in order anyway: on x86-64 it is an `mfence` that only the C11 argument needs.
 */
#ifndef SCHEDBENCH_WSQ_H
#define SCHEDBENCH_WSQ_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "atomics.h"

#define WSQ_TSAN SB_TSAN

/* Orders that are relaxed next to a fence, strengthened under TSan (see above). */
#define WSQ_FENCED (WSQ_TSAN ? memory_order_seq_cst : memory_order_relaxed)

struct task;

typedef struct wsq {
    /* thieves write top; the owner writes bottom: separate cache lines */
    alignas(CACHELINE) _Atomic long top;
    alignas(CACHELINE) _Atomic long bottom;
    long top_seen; /* owner only: a value of top it loaded (acquire); top only grows */
    _Atomic(struct task *) *buf; /* slots are atomic: a thief may read one the owner writes */
    long mask;
} wsq_t;

static inline int wsq_init(wsq_t *q, size_t capacity)
{
    /* capacity must be a power of two */
    q->buf = calloc(capacity, sizeof *q->buf);
    if (!q->buf)
        return -1;
    q->mask = (long)capacity - 1;
    atomic_init(&q->top, 0);
    atomic_init(&q->bottom, 0);
    q->top_seen = 0;
    return 0;
}

static inline void wsq_fini(wsq_t *q)
{
    free(q->buf);
    q->buf = NULL;
}

/* Owner only.  False when full. */
static inline bool wsq_push(wsq_t *q, struct task *x)
{
    long b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
    /* The slot we write, b, last held item b - capacity.  It is free once top passed
     * it, and any value of top we loaded with acquire says so for every item below it:
     * top only grows, by CASes (each a release RMW, so a later value read with acquire
     * synchronizes with every earlier CAS: the release sequence), and each thief reads
     * its slot before its CAS.  So the owner reloads top only when the top it saw last
     * says the deque may be full: not on every push, where the load is a cache-line
     * transfer from the last thief while thieves are at work.  (aarch64: without the
     * acquire, our slot store could land before a thief's relaxed slot read that
     * preceded its CAS; x86-64 never reorders a load with a later store.) */
    if (b - q->top_seen > q->mask) {
        q->top_seen = atomic_load_explicit(&q->top, memory_order_acquire);
        if (b - q->top_seen > q->mask)
            return false;
    }
    atomic_store_explicit(&q->buf[b & q->mask], x, memory_order_relaxed);
#if WSQ_TSAN /* see atomics.h: the release moves onto the store */
    atomic_store_explicit(&q->bottom, b + 1, memory_order_release);
#else
    /* release fence: the slot store above is visible before the new bottom below, so a
     * thief that sees bottom > b reads x, not an old pointer (aarch64: `dmb ish`, and
     * needed: stores to two lines may become visible out of order; x86-64: nothing) */
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&q->bottom, b + 1, memory_order_relaxed);
#endif
    return true;
}

/* Owner only.  NULL when empty. */
static inline struct task *wsq_pop(wsq_t *q)
{
    long b = atomic_load_explicit(&q->bottom, memory_order_relaxed) - 1;
    atomic_store_explicit(&q->bottom, b, WSQ_FENCED);
    /* seq_cst fence: our claim (bottom = b) and the thieves' claims (top + 1) are
     * ordered in one total order, so a thief and we never both take the last item
     * without one of us seeing the other */
    full_fence();
    long t = atomic_load_explicit(&q->top, WSQ_FENCED);
    struct task *x = NULL;
    if (t <= b) {
        x = atomic_load_explicit(&q->buf[b & q->mask], memory_order_relaxed);
        if (t == b) {
            /* the last item: race the thieves for it with the same CAS they use */
            if (!atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1,
                                                         memory_order_seq_cst,
                                                         memory_order_relaxed))
                x = NULL;
            atomic_store_explicit(&q->bottom, b + 1, memory_order_relaxed);
        }
    } else {
        atomic_store_explicit(&q->bottom, b + 1, memory_order_relaxed); /* was empty */
    }
    return x;
}

/* Any thread.  NULL when empty or when another thread won the race (*lost set). */
static inline struct task *wsq_steal_one(wsq_t *q, bool *lost)
{
    /* acquire: pairs with the CAS of the previous thief, so its slot read is done */
    long t = atomic_load_explicit(&q->top, WSQ_TSAN ? memory_order_seq_cst : memory_order_acquire);
    /* seq_cst fence: pairs with the owner's fence in wsq_pop (the total order above);
     * x86-64 keeps these two loads in order anyway, the C11 argument needs the fence */
    full_fence();
    /* acquire: pairs with the owner's release fence in wsq_push, so slot t is written
     * (aarch64: else the slot read below may be satisfied before this load) */
    long b = atomic_load_explicit(&q->bottom, WSQ_TSAN ? memory_order_seq_cst : memory_order_acquire);
    if (t >= b)
        return NULL;
    /* read the slot before the CAS: once top moves the owner may overwrite it */
    struct task *x = atomic_load_explicit(&q->buf[t & q->mask], memory_order_relaxed);
    if (!atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1, memory_order_seq_cst,
                                                 memory_order_relaxed)) {
        *lost = true;
        return NULL;
    }
    return x;
}

/* Any thread: retries while it loses races to other takers. */
static inline struct task *wsq_steal(wsq_t *q)
{
    for (;;) {
        bool lost = false;
        struct task *x = wsq_steal_one(q, &lost);
        if (x || !lost)
            return x;
    }
}

/* Any thread: a snapshot of the number of items. */
static inline long wsq_size(wsq_t *q)
{
    long b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
    long t = atomic_load_explicit(&q->top, memory_order_relaxed);
    return b - t > 0 ? b - t : 0;
}

/* Owner only: pop the bottom item if it is x (the owner wants back a task it queued,
 * e.g. to run a child inline in its joiner).  True when x is now the caller's. */
static inline bool wsq_take_back(wsq_t *q, struct task *x)
{
    long b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
    /* only the owner writes slots, so this read is not racy with itself; a thief may
     * have taken x already, in which case wsq_pop below returns NULL */
    if (atomic_load_explicit(&q->buf[(b - 1) & q->mask], memory_order_relaxed) != x)
        return false;
    return wsq_pop(q) == x;
}

/* Any thread: move up to half of `from` (at least one) into `to`, whose owner must be
 * the caller; returns the first task and sets *moved to the count taken.  Each task is
 * taken with a wsq_steal_one CAS: a single CAS over a batch would be wrong here, since
 * the owner pops at the bottom without a CAS while it sees more than one item. */
static inline struct task *wsq_steal_half(wsq_t *from, wsq_t *to, unsigned *moved,
                                          void (*overflow)(void *ctx, struct task *),
                                          void *ctx)
{
    long want = (wsq_size(from) + 1) / 2;
    struct task *first = NULL;
    unsigned n = 0;
    for (long i = 0; i < (want > 0 ? want : 1); i++) {
        struct task *x = wsq_steal(from);
        if (!x)
            break;
        n++;
        if (!first)
            first = x;
        else if (!wsq_push(to, x))
            overflow(ctx, x);
    }
    *moved = n;
    return first;
}

/* Any thread: move up to k tasks of `from` (at least one, and never more than half of
 * it, rounded up, as wsq_steal_half) into `to`, whose owner must be the caller; returns
 * the first and sets *moved to the count taken.  The work-stealing article's batch
 * stealing (section 4.2) for this deque: the batch is one visit, not one CAS, for the
 * reason wsq_steal_half gives (harness/ref/ws_deque.h shows what a single-CAS batch
 * costs the owner instead). */
static inline struct task *wsq_steal_k(wsq_t *from, wsq_t *to, long k, unsigned *moved,
                                       void (*overflow)(void *ctx, struct task *), void *ctx)
{
    long half = (wsq_size(from) + 1) / 2;
    long want = k < half ? k : half;
    struct task *first = wsq_steal(from);
    unsigned n = first != NULL;
    while (n > 0 && (long)n < want) {
        struct task *x = wsq_steal(from);
        if (!x)
            break;
        if (!wsq_push(to, x))
            overflow(ctx, x);
        n++;
    }
    *moved = n;
    return first;
}

#endif /* SCHEDBENCH_WSQ_H */
