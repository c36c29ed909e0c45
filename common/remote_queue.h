/*
 * remote_queue.h -- a worker's remote queue: where tasks from non-workers (placed
 * round-robin over the workers), yields, and tasks that did not fit a full run queue
 * wait.  Any thread pushes; one consumer at a time (the owner, or a thief) takes a
 * batch.  FIFO per producer.  Internal to the core (sched.c; the unit test
 * tests/c/unit_remote_queue.c stresses it alone).
 *
 * Two parts, each a published design:
 *
 *   the rings  an array of task pointers, many producers and one consumer (the
 *              multi-producer form of a Lamport ring, as in Vyukov's bounded queue,
 *              1024cores.net, but with one consumer): a producer claims a position by
 *              a compare-exchange of `tail` once the consumer's `head` is less than a
 *              lap behind, and publishes it by writing the pointer with the position's
 *              lap parity in bit 0; the consumer reads cells in order and only moves
 *              `head`, so it never writes a cell back (Vyukov's per-cell sequence
 *              number, written by both sides, moved each cell's line to the consumer
 *              and back at every task).  A full ring is replaced by one twice its size
 *              (rmq_ring_grow), up to REMOTE_RING_MAX.
 *   the list   Vyukov's intrusive MPSC queue (1024cores.net, "Intrusive MPSC node-based
 *              queue"), linked through task->next with a stub node, unbounded: it takes
 *              what the rings cannot (the largest ring full, or no memory for one).
 *
 *   list producer (any thread)            list consumer
 *   t->next = NULL                        follow out->next from `out`; the last linked
 *   prev = exchange(in, t)                task is detached by pushing the stub behind it
 *   prev->next = t      <- published
 *
 * Why rings first: a list consumer follows a chain of task->next, each link a line the
 * producer just wrote on another core, so a batch of 16 costs 16 cache misses in series,
 * and the producer's link store lands on a line the consumer has just read.  A ring's
 * cells are contiguous (eight to a line): the consumer reads a batch's pointers in a few
 * lines, never touches a task's line, and its caller can prefetch the 16 tasks together
 * (rmq_take returns them in an array).  And the rings grow rather than spill: a
 * submitter that outruns the workers would otherwise move every task to the list, where
 * the worker, slower per task, falls further behind.
 *
 * FIFO per producer across the two parts, by two rules:
 *   - a producer pushes to the list whenever the list is not empty (list_len counts the
 *     list's tasks) or the rings cannot take the task;
 *   - a consumer's round first reads the list's `in` (acquire), then takes the rings
 *     until they are empty (awaiting cells claimed but not yet written when the list
 *     may hold tasks; without a list phase, such a cell ends the round), and takes list
 *     tasks only if the rings ran empty, and then only up to the `in` it read (when
 *     that is the stub: the tasks linked before the stub).
 * A producer's list task T behind one of its ring tasks R: R was claimed and written
 * before T's exchange, so a round whose read of `in` covers T sees R in the rings and
 * takes it first; a round whose read does not cover T leaves T.  A producer's ring task
 * behind a list task T: the producer read list_len 0 after its own increment for T, so
 * after the decrement of a consumer round that took T in its list phase; the ring task
 * waits for a later round.  (`in` at the stub would not say "empty": a consumer that
 * re-links the stub behind the last task it takes, while a producer links another, leaves
 * that task waiting before the stub.)
 *
 * A push never takes a lock and never waits for a consumer: a submitter is not held up
 * by a consumer walking a batch, nor by one that was preempted.  The claim (ring) or the
 * exchange (list) is the publication: from then on the queue is not empty to a consumer,
 * which waits for a producer's cell or link not yet written (a producer is never blocked
 * between its two steps, only perhaps preempted, so the wait yields the CPU).  So a
 * consumer never reports the queue empty after it has seen a producer's claim or
 * exchange, and the idle protocol needs nothing more: a producer publishes, then wakes a
 * worker as its variant says.
 *
 * The consumer side is single-threaded by a try-lock: the owner takes a batch, a thief a
 * smaller one, and a thief that finds the lock held moves on.  The holder is awake, and
 * one that leaves tasks behind a full batch wakes a sleeper for them (sched.c's
 * remote_take_batch), the way a producer does.  But a holder that read a cell just
 * before its producer wrote it leaves that task to the producer's wake-up, and a
 * producer that skipped its wake-up for a searcher (adaptive's spinners) counts on that
 * searcher's last look before it sleeps: so that look waits for the lock (`wait`)
 * instead of moving on.
 */
#ifndef SCHEDBENCH_REMOTE_QUEUE_H
#define SCHEDBENCH_REMOTE_QUEUE_H

#include <errno.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "atomics.h"
#include "core.h"
#include "spinlock.h"

/* Cells of a queue's first ring, and the most a ring grows to (powers of two): 16 KiB
 * a worker to start with, doubled whenever producers find it full, up to 16 MiB (2^20
 * tasks waiting), past which producers spill to the list.  A test may build them
 * smaller. */
#ifndef REMOTE_RING_FIRST
#define REMOTE_RING_FIRST 1024u
#endif
#ifndef REMOTE_RING_MAX
#define REMOTE_RING_MAX (1u << 20)
#endif

/* The link of a free list or queue: relaxed, because every list is ordered by a lock or
 * owned by one thread (the list below says its orders). */
static inline task_t *link_get(task_t *t) { return atomic_load_explicit(&t->next, memory_order_relaxed); }
static inline void link_set(task_t *t, task_t *n) { atomic_store_explicit(&t->next, n, memory_order_relaxed); }

/* A cell: the task pointer, its bit 0 the lap parity of the position it was written
 * for (tasks are line-aligned).  It holds the task pushed at position p when its parity
 * is lap(p); otherwise it still holds the previous lap's (taken) task: p is free, or
 * claimed and not yet written. */
typedef _Atomic uintptr_t remote_cell_t;
_Static_assert(alignof(task_t) >= 2, "a cell keeps the lap parity in a task pointer's bit 0");

/* A ring.  When producers find it full, one of them makes a ring twice its size, links
 * it as `next`, and closes this one: RING_CLOSED in `tail` makes every later claim fail
 * (claims and the closing serialise on `tail`), so producers move on to `next`, and the
 * consumer, once it has taken every position claimed here, follows them.  A producer's
 * tasks are in order across rings too: it only moves forward.  A replaced ring is kept
 * until rmq_fini, since a producer may still be reading it; the rings of a queue
 * sum to less than twice its largest. */
#define RING_CLOSED (1ull << 63)
typedef struct remote_ring {
    /* read-mostly: every push and every pop reads `mask`, so it shares no line with a
     * field that either side writes all the time */
    alignas(CACHELINE) uint64_t mask;         /* cells - 1 */
    _Atomic(struct remote_ring *) next;        /* the ring that replaced this one */
    struct remote_ring *older;                 /* the ring this one replaced */
    alignas(CACHELINE) _Atomic uint64_t tail; /* producers: the next position to claim */
    _Atomic uint64_t head_seen;                /* producers: a `head` one of them read */
    alignas(CACHELINE) _Atomic uint64_t head; /* the consumer's next position: the cells
                                                 before it are free (a hint to others) */
    alignas(CACHELINE) remote_cell_t cells[];
} remote_ring_t;

typedef struct remote_queue {
    /* producers' line: the newest ring, and counters that foreign threads keep here
     * (bthread.h's Q and WQ; see rmq_counter below) */
    alignas(CACHELINE) _Atomic(remote_ring_t *) ring;
    spinlock_t grow;                         /* held while a ring is replaced */
    _Atomic uint64_t ring_pushes_before;     /* pushes to the rings replaced */
    _Atomic uint64_t list_pushes, flushes, flushed_tasks;
    /* the list's producers' end, on a line of its own: every producer reads list_len,
     * and the line stays unwritten (shared, no miss) while the rings take the tasks */
    alignas(CACHELINE) _Atomic(task_t *) in; /* the last task pushed to the list */
    _Atomic uint64_t list_len;               /* tasks on the list, or about to be */
    /* consumer's line */
    alignas(CACHELINE) spinlock_t consumer;  /* held by the one thread taking tasks */
    _Atomic(task_t *) out;                   /* the list's consumer end */
    _Atomic(remote_ring_t *) taking;         /* the oldest ring not yet drained */
    task_t stub;                             /* stands in while the list is empty */
} remote_queue_t;

/* The Q counters (any thread, relaxed: statistics).  Tasks pushed: a ring's count is its
 * tail, so a ring push writes no counter of its own. */
#define rmq_counter(q, name) rmq_counter_##name(q)
static inline uint64_t rmq_counter_remote_pushes(remote_queue_t *q)
{
    remote_ring_t *r = atomic_load_explicit(&q->ring, memory_order_acquire);
    return (atomic_load_explicit(&r->tail, memory_order_relaxed) & ~RING_CLOSED) +
           atomic_load_explicit(&q->ring_pushes_before, memory_order_relaxed) +
           atomic_load_explicit(&q->list_pushes, memory_order_relaxed);
}
static inline uint64_t rmq_counter_flushes(remote_queue_t *q)
{
    return atomic_load_explicit(&q->flushes, memory_order_relaxed);
}
static inline uint64_t rmq_counter_flushed_tasks(remote_queue_t *q)
{
    return atomic_load_explicit(&q->flushed_tasks, memory_order_relaxed);
}

/* The lap parity of position p in r. */
static inline uintptr_t rmq_lap(const remote_ring_t *r, uint64_t p) { return (p & (r->mask + 1)) != 0; }

/* A ring of `cells` (a power of two; NULL: no memory), every cell as if taken in lap -1. */
static inline remote_ring_t *rmq_ring_new(uint64_t cells)
{
    remote_ring_t *r = aligned_alloc(CACHELINE, sizeof *r + cells * sizeof(remote_cell_t));
    if (!r)
        return NULL;
    atomic_init(&r->tail, 0);
    atomic_init(&r->head_seen, 0);
    atomic_init(&r->head, 0);
    atomic_init(&r->next, NULL);
    r->older = NULL;
    r->mask = cells - 1;
    for (uint64_t p = 0; p < cells; p++)
        atomic_init(&r->cells[p], 1);
    return r;
}

/* 0, or ENOMEM. */
static inline int rmq_init(remote_queue_t *q)
{
    remote_ring_t *r = rmq_ring_new(REMOTE_RING_FIRST);
    if (!r)
        return ENOMEM;
    atomic_init(&q->ring, r);
    atomic_init(&q->taking, r);
    q->grow = (spinlock_t)SPINLOCK_INIT;
    q->consumer = (spinlock_t)SPINLOCK_INIT;
    atomic_init(&q->stub.next, NULL);
    atomic_init(&q->in, &q->stub);
    atomic_init(&q->out, &q->stub);
    atomic_init(&q->ring_pushes_before, 0);
    atomic_init(&q->list_pushes, 0);
    atomic_init(&q->list_len, 0);
    atomic_init(&q->flushes, 0);
    atomic_init(&q->flushed_tasks, 0);
    return 0;
}

/* No thread uses the queue any more. */
static inline void rmq_fini(remote_queue_t *q)
{
    for (remote_ring_t *r = atomic_load_explicit(&q->ring, memory_order_relaxed), *o; r; r = o) {
        o = r->older;
        free(r);
    }
    atomic_store_explicit(&q->ring, NULL, memory_order_relaxed);
}

/* ---- the list ------------------------------------------------------------------- */
static inline void rmq_list_link(remote_queue_t *q, task_t *t)
{
    link_set(t, NULL);
    /* acq_rel: release orders our t->next = NULL (and, for a task, its fields) before
     * the next producer's link into t->next; acquire orders the previous producer's
     * prev->next = NULL before our link below, so our link is not overwritten */
    task_t *prev = atomic_exchange_explicit(&q->in, t, memory_order_acq_rel);
    /* release: the consumer's acquire load of prev->next sees t's fields */
    atomic_store_explicit(&prev->next, t, memory_order_release);
}

/* Consumer only: x's successor, which a producer that exchanged `in` behind x is about
 * to link (it may have been preempted between its two steps: yield to it). */
static inline task_t *rmq_list_await_link(task_t *x)
{
    task_t *next;
    /* acquire: pairs with the producer's release link, so the task's fields are seen */
    for (unsigned r = 0; !(next = atomic_load_explicit(&x->next, memory_order_acquire)); r++)
        backoff(r);
    return next;
}

/* Consumer only: the oldest task of the list, or NULL when it is empty (no producer has
 * exchanged `in` since the last task was taken). */
static inline task_t *rmq_list_pop(remote_queue_t *q)
{
    task_t *out = atomic_load_explicit(&q->out, memory_order_relaxed); /* ours */
    /* acquire: pairs with the producer's release link, so the task's fields are seen */
    task_t *next = atomic_load_explicit(&out->next, memory_order_acquire);
    if (out == &q->stub) {
        if (!next) {
            /* relaxed: an exchange we miss here is followed by its producer's wake-up */
            if (atomic_load_explicit(&q->in, memory_order_relaxed) == &q->stub)
                return NULL;
            next = rmq_list_await_link(out);
        }
        out = next;
        next = atomic_load_explicit(&out->next, memory_order_acquire);
    }
    if (!next) {
        /* out is the last task linked.  If it is also the last pushed, queue the stub
         * behind it so that it can be detached; either way somebody links out->next. */
        if (out == atomic_load_explicit(&q->in, memory_order_relaxed))
            rmq_list_link(q, &q->stub);
        next = rmq_list_await_link(out);
    }
    atomic_store_explicit(&q->out, next, memory_order_relaxed);
    return out;
}

/* ---- the rings ----------------------------------------------------------------- */
/* A producer found r full: the ring to try next, r's replacement (made here unless
 * another producer made it first), or NULL when rings may not grow (the largest size,
 * or no memory): the task goes to the list. */
static inline remote_ring_t *rmq_ring_grow(remote_queue_t *q, remote_ring_t *r)
{
    spin_lock(&q->grow);
    remote_ring_t *now = atomic_load_explicit(&q->ring, memory_order_relaxed);
    if (now != r) { /* replaced meanwhile */
        spin_unlock(&q->grow);
        return now;
    }
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    remote_ring_t *nr = r->mask + 1 < REMOTE_RING_MAX ? rmq_ring_new(2 * (r->mask + 1)) : NULL;
    if (nr) {
        nr->older = r;
        /* release: a producer that sees RING_CLOSED (acquire) sees next and its cells */
        atomic_store_explicit(&r->next, nr, memory_order_release);
        tail = atomic_fetch_or_explicit(&r->tail, RING_CLOSED, memory_order_release);
        /* relaxed: a statistic (the closed ring's count), read with the new ring */
        atomic_fetch_add_explicit(&q->ring_pushes_before, tail, memory_order_relaxed);
        /* release: producers that load the new ring (acquire) see it made */
        atomic_store_explicit(&q->ring, nr, memory_order_release);
    }
    spin_unlock(&q->grow);
    return nr;
}

/* Any thread: false when the rings are full and may not grow. */
static inline bool rmq_ring_push(remote_queue_t *q, task_t *t)
{
    /* acquire: pairs with rmq_ring_grow's release, so a new ring is seen made */
    remote_ring_t *r = atomic_load_explicit(&q->ring, memory_order_acquire);
    for (;;) {
        /* acquire: seeing RING_CLOSED, we see `next` (rmq_ring_grow) */
        uint64_t pos = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (pos & RING_CLOSED) {
            r = atomic_load_explicit(&r->next, memory_order_acquire);
            continue;
        }
        /* Full when pos is a lap ahead of the consumer.  `head_seen` first: `head` is
         * the consumer's line, written at every take, so it is read only when the
         * last head seen says full.  acquire (both): pairs with the consumer's release
         * of `head` (directly, or through the producer that stored head_seen), so its
         * read of the cell's last task came before our write.  Signed: pos may be
         * older than a head read since */
        int64_t lap = (int64_t)(r->mask + 1);
        if ((int64_t)(pos - atomic_load_explicit(&r->head_seen, memory_order_acquire)) >= lap) {
            uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
            if ((int64_t)(pos - h) >= lap) { /* full */
                if (!(r = rmq_ring_grow(q, r)))
                    return false;
                continue;
            }
            /* release: passes the consumer's release on (see above); a head older than
             * another producer's store only makes us read `head` again sooner */
            atomic_store_explicit(&r->head_seen, h, memory_order_release);
        }
        /* relaxed: the claim orders nothing by itself; the cell's release below
         * publishes the task.  A failed exchange or a closed ring: look again */
        if (atomic_compare_exchange_weak_explicit(&r->tail, &pos, pos + 1, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            /* release: the consumer's acquire of the cell sees the task and its fields */
            atomic_store_explicit(&r->cells[pos & r->mask], (uintptr_t)t | rmq_lap(r, pos),
                                  memory_order_release);
            return true;
        }
    }
}

/* Consumer only: the oldest task of the rings, or NULL when there is none: no position
 * past the last taken, or (unless `await`) the next one claimed but not yet written; its
 * producer wakes a worker once it is written.  `await` waits for such a cell instead:
 * the round is about to take list tasks, which may come after it (see above).  Without
 * it, an empty ring is told by its cell and `next`, not by `tail`: at every drained
 * queue a read of `tail` would take that line from the producers, their next claim a
 * miss. */
static inline task_t *rmq_ring_pop(remote_queue_t *q, bool await)
{
    remote_ring_t *r = atomic_load_explicit(&q->taking, memory_order_relaxed); /* ours */
    for (;;) {
        uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed); /* ours */
        remote_cell_t *c = &r->cells[h & r->mask];
        /* acquire: pairs with the producer's release, so the task and its fields are
         * seen */
        uintptr_t v = atomic_load_explicit(c, memory_order_acquire);
        if ((v & 1) != rmq_lap(r, h)) {
            /* relaxed: a ring not yet replaced is all there is; a replacement we miss
             * here is followed by its producer's wake-up */
            if (!await && !atomic_load_explicit(&r->next, memory_order_relaxed))
                return NULL;
            /* acquire: seeing RING_CLOSED, we see `next`.  A claim we miss here is
             * followed by its producer's wake-up */
            uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
            if ((tail & ~RING_CLOSED) == h) {
                if (!(tail & RING_CLOSED))
                    return NULL;
                /* drained and replaced: on to the next ring */
                r = atomic_load_explicit(&r->next, memory_order_acquire);
                /* release: a thread asking rmq_maybe (acquire) reads this ring's
                 * mask and cells made, as we saw them through `next` */
                atomic_store_explicit(&q->taking, r, memory_order_release);
                continue;
            }
            if (!await)
                return NULL;
            for (unsigned k = 0;
                 ((v = atomic_load_explicit(c, memory_order_acquire)) & 1) != rmq_lap(r, h); k++)
                backoff(k);
        }
        /* release: our read of the cell comes before the next lap's producer writes it
         * (the cell is not written back: its line stays the producers') */
        atomic_store_explicit(&r->head, h + 1, memory_order_release);
        return (task_t *)(v & ~(uintptr_t)1);
    }
}

/* ---- the queue ------------------------------------------------------------------- */
/* Any thread.  The caller then wakes a worker as its variant says (or, for a NOSIGNAL
 * task, leaves that to bthread_flush). */
static inline void rmq_push(remote_queue_t *q, task_t *t)
{
    /* relaxed: only our own tasks matter to our FIFO order, and we see our own
     * increment, or the consumer's decrement for it once it took the task (coherence) */
    if (atomic_load_explicit(&q->list_len, memory_order_relaxed) == 0 && rmq_ring_push(q, t))
        return;
    atomic_fetch_add_explicit(&q->list_len, 1, memory_order_relaxed);
    rmq_list_link(q, t);
    /* relaxed: a statistic */
    atomic_fetch_add_explicit(&q->list_pushes, 1, memory_order_relaxed);
}

/* Any thread: might the queue hold a task?  A hint (relaxed snapshots): a false "no"
 * only for a task whose producer has not finished its push, or one a consumer just left
 * behind; both are covered by a wake-up (see above). */
static inline bool rmq_maybe(remote_queue_t *q)
{
    /* The oldest ring's next cell, not its tail: idle workers ask this over and over,
     * and a read of `tail` would take that line from the producers every time (their
     * next claim a miss).  The cell's line is written by producers only, and read by
     * the consumer anyway.  A cell claimed but not yet written reads as empty: a false
     * "no" for a push not finished. */
    /* acquire: pairs with rmq_ring_pop's release, so the ring is seen made */
    remote_ring_t *r = atomic_load_explicit(&q->taking, memory_order_acquire);
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    uintptr_t cell = atomic_load_explicit(&r->cells[h & r->mask], memory_order_relaxed);
    return (cell & 1) == rmq_lap(r, h) || r != atomic_load_explicit(&q->ring, memory_order_relaxed) ||
           atomic_load_explicit(&q->in, memory_order_relaxed) != &q->stub ||
           atomic_load_explicit(&q->out, memory_order_relaxed) != &q->stub;
}

/* Any thread: take up to max tasks in FIFO order into out[]; 0 when there are none or
 * (unless `wait`) another consumer holds the queue; `wait` waits for that consumer
 * instead (a sleeper's last look: see above).  *left is set when tasks may remain behind
 * the batch.  The tasks' own lines are not touched when they came through the ring. */
static inline unsigned rmq_take(remote_queue_t *q, unsigned max, task_t **out, bool *left,
                                bool wait)
{
    unsigned n = 0;
    *left = false;
    if (!rmq_maybe(q))
        return 0;
    if (wait)
        spin_lock(&q->consumer);
    else if (!spin_trylock(&q->consumer))
        return 0;
    /* acquire: a producer's ring tasks older than its list tasks up to `last` are in
     * the ring below (see above) */
    task_t *last = atomic_load_explicit(&q->in, memory_order_acquire);
    task_t *t;
    /* relaxed: ours (the consumer lock); a list that may hold tasks for this round makes
     * the rings' claimed cells awaited */
    bool await = last != &q->stub || atomic_load_explicit(&q->out, memory_order_relaxed) != &q->stub;
    while (n < max && (t = rmq_ring_pop(q, await)))
        out[n++] = t;
    if (n == max) /* the list waits until the ring runs empty */
        goto done;
    unsigned from_list = n;
    if (last == &q->stub) { /* the tasks linked before the stub, if any */
        while (n < max && atomic_load_explicit(&q->out, memory_order_relaxed) != &q->stub &&
               (t = rmq_list_pop(q)))
            out[n++] = t;
    } else {
        while (n < max && (t = rmq_list_pop(q))) {
            out[n++] = t;
            if (t == last)
                break;
        }
    }
    if (n > from_list) /* relaxed: see rmq_push */
        atomic_fetch_sub_explicit(&q->list_len, n - from_list, memory_order_relaxed);
done:
    *left = n == max && rmq_maybe(q);
    spin_unlock(&q->consumer);
    return n;
}

#endif /* SCHEDBENCH_REMOTE_QUEUE_H */
