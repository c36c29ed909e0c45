/*
 * ws_deque.h -- the work-stealing article's deque (seed 003, section 3.1): one per
 * worker, a ring buffer of task pointers that grows, the owner pushing and popping at the
 * bottom, thieves taking from the top with a CAS; batches at both ends.
 *
 * The memory orders are those of Le, Pop, Cohen and Zappa Nardelli, "Correct and
 * Efficient Work-Stealing for Weak Memory Models" (PPoPP 2013, Fig. 1), for the article's
 * push and steal and for the owner's pop and growth, which its sketch leaves out.  Two
 * batch knobs, the article's section 4.2, change the algorithm as follows.
 *
 * Batch push.  The owner writes k slots, then publishes them with one release fence and
 * one store of bottom (ws_push): thieves see all k or none, for the price of one.
 *
 * Batch steal.  A thief takes up to k items with ONE CAS on top (ws_steal: top from t to
 * t + n claims slots t .. t + n - 1).  The plain Chase-Lev owner pops without a CAS
 * whenever it sees more than one item, which a single-CAS batch would race with (the
 * batch may reach the slot the owner is popping: that is why common/wsq.h's
 * wsq_steal_half takes one CAS per task).  Here the deque has a margin K, the most items
 * any steal may take, fixed at init:
 *
 *   owner (ws_pop)                              thief (ws_steal, n <= K)
 *   bottom = b (one less); fence(seq_cst)       t = top; fence(seq_cst); b' = bottom
 *   t = top                                     n = min(k, b' - t, K); read slots t..t+n-1
 *   t + K <= b: take slot b, no CAS             CAS top t -> t + n
 *   t <= b < t + K: restore bottom, take slot t
 *               with a CAS on top, as a thief
 *   t > b: empty, restore bottom
 *
 * Why no item is taken twice.  The CASes on top claim disjoint ranges, so only the
 * owner's CAS-free pop can meet a thief.  Say the owner took slot b having read top t_o
 * with t_o + K <= b, and a thief's CAS from t claimed b: t <= b < t + n <= t + K, so
 * t > t_o.  Top only grows, so the write of t came after the owner's read of t_o, and
 * the thief read t before its fence: the owner's fence precedes the thief's in the single
 * order of seq_cst operations, and the thief's load of bottom sees the owner's store of
 * b or a later one.  Seeing b, it takes n <= b - t items, below b.  Seeing a later,
 * higher bottom means the owner pushed into slot b again after its pop (only a push
 * raises bottom past b), and that push's release fence hands the thief the new item, not
 * the one the owner took.  With K = 1 this is exactly Chase-Lev: the fast pop needs
 * t < b and the last item goes by CAS.  The price of a larger K: the owner's last K pops
 * each pay a CAS, and take the oldest item (FIFO) instead of the newest.  "Half" is half
 * of what the thief sees, at most K.
 *
 * Growth (Le et al.'s resize).  A push that does not fit copies the live slots into a
 * ring twice the size and publishes it (release; a thief loads it with acquire, so the
 * copies are visible).  The old ring stays readable for thieves that loaded it before:
 * rings are freed only by ws_deque_fini.  A ring never written after its replacement
 * holds exactly the items it had, so a thief that read an old one reads valid items,
 * and its CAS on top decides as before.
 *
 * Who may call what (the contract, concurrencykit-style):
 *   ws_push, ws_pop            owner only; may run in parallel with ws_steal
 *   ws_steal                   any thread; in parallel with the owner and other thieves
 *   ws_size                    any thread; a snapshot (stale at once)
 *   ws_deque_init, ws_deque_fini  with no other thread using the deque
 *
 * ThreadSanitizer does not model standalone fences; as in common/wsq.h, under TSan the
 * fenced relaxed accesses become seq_cst ones and the seq_cst fences full_fence()
 * (atomics.h): stronger, never weaker.  x86-64: only the owner's store-then-load fence in
 * ws_pop and the CASes cost anything; the acquires and the release fence are plain movs.
 */
#ifndef SCHEDBENCH_WS_DEQUE_H
#define SCHEDBENCH_WS_DEQUE_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "atomics.h"

/* Orders that are relaxed next to a fence, strengthened under TSan (see above). */
#define WS_FENCED (SB_TSAN ? memory_order_seq_cst : memory_order_relaxed)
/* The thieves' loads of top and bottom: acquire (seq_cst under TSan). */
#define WS_THIEF_LOAD (SB_TSAN ? memory_order_seq_cst : memory_order_acquire)
/* ws_steal's k for "half of what the thief sees" (at most the margin). */
#define WS_HALF (-1L)
/* ws_steal's result when another taker's CAS won: try again. */
#define WS_LOST (-1L)

typedef struct ws_ring {
    long mask;            /* slots - 1; slots a power of two */
    struct ws_ring *prev; /* the ring this one replaced (owner only: freed at fini) */
    _Atomic(void *) slot[]; /* atomic: a thief may read one the owner writes */
} ws_ring_t;

typedef struct ws_deque {
    /* thieves write top; the owner writes bottom: separate cache lines */
    alignas(CACHELINE) _Atomic long top;
    alignas(CACHELINE) _Atomic long bottom;
    _Atomic(ws_ring_t *) ring; /* replaced by the owner's growth; read by thieves */
    long top_seen;             /* owner only: a value of top it loaded (acquire) */
    long margin;               /* K: the most one steal takes (see above) */
} ws_deque_t;

static inline ws_ring_t *ws_ring_new(long slots)
{
    ws_ring_t *r = malloc(sizeof *r + (size_t)slots * sizeof r->slot[0]);
    if (r) {
        r->mask = slots - 1;
        r->prev = NULL;
    }
    return r;
}

/* capacity: the first ring's slots, a power of two; margin: K >= 1. */
static inline int ws_deque_init(ws_deque_t *q, long capacity, long margin)
{
    ws_ring_t *r = ws_ring_new(capacity);
    if (!r)
        return -1;
    atomic_init(&q->top, 0);
    atomic_init(&q->bottom, 0);
    atomic_init(&q->ring, r);
    q->top_seen = 0;
    q->margin = margin < 1 ? 1 : margin;
    return 0;
}

static inline void ws_deque_fini(ws_deque_t *q)
{
    ws_ring_t *r = atomic_load_explicit(&q->ring, memory_order_relaxed); /* no other user */
    while (r) {
        ws_ring_t *prev = r->prev;
        free(r);
        r = prev;
    }
    atomic_store_explicit(&q->ring, NULL, memory_order_relaxed);
}

/* Owner only: a ring of at least `need` slots holding items t .. b - 1 of r, published;
 * NULL when memory runs out (r stays in use). */
static inline ws_ring_t *ws_grow(ws_deque_t *q, ws_ring_t *r, long t, long b, long need)
{
    long slots = (r->mask + 1) * 2;
    while (slots < need)
        slots *= 2;
    ws_ring_t *g = ws_ring_new(slots);
    if (!g)
        return NULL;
    for (long i = t; i < b; i++) /* relaxed: the owner reads slots only it writes */
        atomic_store_explicit(&g->slot[i & g->mask],
                              atomic_load_explicit(&r->slot[i & r->mask], memory_order_relaxed),
                              memory_order_relaxed);
    g->prev = r;
    /* release: pairs with ws_steal's acquire load of ring, so a thief that loads g sees
     * the copies above */
    atomic_store_explicit(&q->ring, g, memory_order_release);
    return g;
}

/* Owner only: push items[0 .. k-1] (k >= 1) as one batch: thieves see all or none.
 * False, nothing pushed, when the ring would have to grow and memory runs out. */
static inline bool ws_push(ws_deque_t *q, void *const *items, long k)
{
    long b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
    ws_ring_t *r = atomic_load_explicit(&q->ring, memory_order_relaxed); /* ours */
    /* The slots b .. b + k - 1 last held items that top has passed once any value of top
     * read with acquire says so (top only grows, by CASes: release RMWs whose thieves
     * read their slots first).  Reload top only when the one seen says the ring may be
     * full, then grow if it is. */
    if (b + k - q->top_seen > r->mask + 1) {
        q->top_seen = atomic_load_explicit(&q->top, memory_order_acquire);
        if (b + k - q->top_seen > r->mask + 1 &&
            !(r = ws_grow(q, r, q->top_seen, b, b + k - q->top_seen)))
            return false;
    }
    for (long i = 0; i < k; i++)
        atomic_store_explicit(&r->slot[(b + i) & r->mask], items[i], memory_order_relaxed);
#if SB_TSAN /* the release moves onto the store (see the top) */
    atomic_store_explicit(&q->bottom, b + k, memory_order_release);
#else
    /* release fence: the slot stores (and a new ring) are visible before the new bottom,
     * so a thief that sees bottom > b + i reads item i; one fence for the whole batch */
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&q->bottom, b + k, memory_order_relaxed);
#endif
    return true;
}

/* Owner only: the newest item, or within K of top the oldest (see the top); NULL when
 * empty. */
static inline void *ws_pop(ws_deque_t *q)
{
    for (;;) {
        long b = atomic_load_explicit(&q->bottom, memory_order_relaxed) - 1;
        ws_ring_t *r = atomic_load_explicit(&q->ring, memory_order_relaxed); /* ours */
        atomic_store_explicit(&q->bottom, b, WS_FENCED);
        /* seq_cst fence: our claim (bottom = b) and the thieves' reads of bottom fall in
         * one order with their fences (the argument at the top) */
        full_fence();
        long t = atomic_load_explicit(&q->top, WS_FENCED);
        if (t + q->margin <= b) /* no steal can reach slot b */
            return atomic_load_explicit(&r->slot[b & r->mask], memory_order_relaxed);
        if (t > b) { /* empty */
            atomic_store_explicit(&q->bottom, b + 1, memory_order_relaxed);
            return NULL;
        }
        /* within reach of a steal: take the oldest with the thieves' CAS; read the slot
         * first (once top moves, a push may overwrite it) */
        void *x = atomic_load_explicit(&r->slot[t & r->mask], memory_order_relaxed);
        bool won = atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1,
                                                           memory_order_seq_cst,
                                                           memory_order_relaxed);
        /* relaxed (release under TSan): the slots up to b + 1 were published by their
         * pushes' fences, whose release sequence this store of the owner's continues */
        atomic_store_explicit(&q->bottom, b + 1, SB_TSAN ? memory_order_release : memory_order_relaxed);
        if (won)
            return x;
        /* a thief moved top meanwhile: look again */
    }
}

/* Any thread: take up to k items (k >= 1, or WS_HALF; never more than the margin) into
 * out[] with one CAS.  The count taken; 0 when empty; WS_LOST when another taker's CAS
 * won (the deque was not empty). */
static inline long ws_steal(ws_deque_t *q, long k, void **out)
{
    /* acquire: pairs with the previous taker's CAS, so its slot reads are done */
    long t = atomic_load_explicit(&q->top, WS_THIEF_LOAD);
    /* seq_cst fence: pairs with the owner's fence in ws_pop (the argument at the top);
     * x86-64 keeps these two loads in order anyway, the C11 argument needs it */
    full_fence();
    /* acquire: pairs with ws_push's release fence: slots below this bottom are written */
    long b = atomic_load_explicit(&q->bottom, WS_THIEF_LOAD);
    long n = b - t;
    if (n <= 0)
        return 0;
    if (k == WS_HALF)
        k = (n + 1) / 2;
    if (k > q->margin)
        k = q->margin;
    if (n > k)
        n = k;
    /* acquire: pairs with ws_grow's release store, so a newer ring's copies are seen */
    ws_ring_t *r = atomic_load_explicit(&q->ring, memory_order_acquire);
    for (long i = 0; i < n; i++) /* before the CAS: once top moves, pushes may reuse them */
        out[i] = atomic_load_explicit(&r->slot[(t + i) & r->mask], memory_order_relaxed);
    if (!atomic_compare_exchange_strong_explicit(&q->top, &t, t + n, memory_order_seq_cst,
                                                 memory_order_relaxed))
        return WS_LOST;
    return n;
}

/* Any thread: a snapshot of the number of items (relaxed: a hint, stale at once). */
static inline long ws_size(ws_deque_t *q)
{
    long b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
    long t = atomic_load_explicit(&q->top, memory_order_relaxed);
    return b - t > 0 ? b - t : 0;
}

#endif /* SCHEDBENCH_WS_DEQUE_H */
