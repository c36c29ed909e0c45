/*
 * ws_sched.h -- the work-stealing article's own scheduler (seed 003, sections 2.2, 3.2),
 * written from its description: N worker pthreads, each with a deque of task pointers
 * (ws_deque.h); a task is a function and its argument (fnrt.h), run to completion on
 * the worker's own stack, so a task is a few stores and loads, not a context.
 *
 * A worker's loop (the article's worker_thread):
 *   own deque (LIFO at the bottom) -> own inbox -> steal: random victims, each its deque
 *   then its inbox -> spin, looking again, WS_SPIN_NS -> sleep (below) -> again.
 * Tasks come from a worker (a task starting tasks: onto its own deque) or from another
 * thread (onto the inbox of that thread's home worker, homes dealt round-robin).  The
 * inbox is a lock-free list (one CAS pushes a whole batch; a taker swaps the whole list
 * out and moves it into its own deque), so every task runs from some deque.  A task
 * placed on one worker (ws_submit_on: the article's submitters, one per worker) goes to
 * that worker's `placed` list, which only its owner takes: a thread of the article's
 * pool submits from its own core, and a thief must not move it elsewhere.
 *
 * The two knobs of section 4.2, and the article's baseline:
 *   batch submission  ws_submit(ts, k): k tasks with one release (ws_push's fence, or one
 *                     CAS on the inbox) and at most one wake-up check, so the fence and
 *                     the sleepers load below are paid once per batch;
 *   batch stealing    steal_k: a thief takes up to k tasks of a victim's deque with one
 *                     CAS (1, 4, 16, 32, or WS_HALF: half of it, at most WS_HALF_MAX),
 *                     runs the first and keeps the rest in its own deque;
 *   no stealing       steal_k 0: the article's "traditional pool" (section 1): every
 *                     thread runs only its own queue; a wake-up goes to the one worker
 *                     that holds the task.
 *
 * Sleeping without a lost wake-up.  Each worker has a futex word `state` and a flag
 * `waiting`; `sleepers` counts workers between announcing and leaving.  Publish, full
 * barrier, check, on both sides:
 *
 *   sleeper (ws_park)                       waker (ws_wake, after publishing tasks)
 *   st = state                              fence(seq_cst)
 *   waiting = 1, sleepers++                 if sleepers == 0: return       <- cheap path
 *   fence(seq_cst)                          claim a waiting worker (1 -> 0, sleepers--),
 *   t = look for work (recheck)               the target first; any other only when
 *   if !t: futex_wait(&state, st)             thieves may take the task
 *                                           state++; futex_wake(&state, 1)
 *
 * The fences are in the single order of seq_cst operations.  If the waker's is first,
 * the sleeper's recheck sees the task; if the sleeper's is first, the waker reads
 * sleepers > 0 and finds waiting == 1, bumps state, and the sleeper either has not
 * entered futex_wait (the kernel sees state != st and returns) or is woken.  The claim
 * (a CAS on waiting) makes the next waker look elsewhere while the woken worker gets
 * up, so a burst wakes each sleeper once.  A sleeper whose recheck found work, or that
 * was woken spuriously, uncounts itself unless a waker claimed it first.  A waker that
 * finds nobody asleep pays one fence and one load of a line that changes only when
 * somebody sleeps: that pair, once per task or once per batch, is what batch submission
 * saves when workers are busy.
 *
 * Counters (per worker, written by that worker only, relaxed; the bench sums them):
 * WS_COUNTERS below, named as the bthread variants' where they mean the same.
 *
 * Header-only, so that the reference row (ws.c) and the unit test (tests/c/unit_ws.c)
 * compile the same code.  Who may call what: ws_start / ws_stop one thread, not a
 * worker; ws_submit, ws_submit_on (not a worker), ws_self any thread.
 */
#ifndef SCHEDBENCH_WS_SCHED_H
#define SCHEDBENCH_WS_SCHED_H

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "atomics.h"
#include "fnrt.h"
#include "timeutil.h"
#include "ws_deque.h"

#define WS_NOSTEAL 0
/* The most one steal takes, and the margin of every deque, under WS_HALF. */
#define WS_HALF_MAX 1024
/* A batch is published at most this many tasks at a time (the pointers live on the
 * submitter's stack meanwhile). */
#define WS_PUBLISH_MAX 256
/* An idle worker looks again, with pauses 1, 2, 4 .. 128, for this long before it
 * sleeps: the bthread variants' search (common/idle_park.h's PARK_SEARCH_NS), so that the
 * two designs differ in their tasks, not in how soon an idle worker sleeps. */
#define WS_SPIN_NS 80000
/* A worker looks at its inbox first every this many tasks, so that tasks from other
 * threads are not starved by a deque that never empties. */
#define WS_INBOX_EVERY 64
/* The first ring of each deque (it grows). */
#define WS_DEQUE_SLOTS 1024

#define WS_COUNTERS(X)                                                                  \
    X(tasks_run, "tasks run")                                                           \
    X(steal_attempts, "steals tried on a victim's deque (a lost CAS tries again)")      \
    X(steals, "steals that took tasks from a deque")                                    \
    X(stolen_tasks, "tasks those steals took (> steals for batch steals)")              \
    X(remote_pops, "tasks taken from an inbox (own or a victim's)")                     \
    X(remote_takes, "inbox takes that found tasks")                                     \
    X(parks, "times the worker went to sleep")                                          \
    X(woken, "times the worker was woken by a waker's claim")

#define WS_COUNTER_ENUM(name, what) WS_##name,
enum { WS_COUNTERS(WS_COUNTER_ENUM) WS_NCOUNTERS };
#undef WS_COUNTER_ENUM

typedef struct ws_sched ws_sched_t;

typedef struct ws_worker {
    ws_deque_t dq;
    /* foreign threads push here; the owner and thieves take the whole list */
    alignas(CACHELINE) _Atomic(ref_task_t *) inbox;
    _Atomic(ref_task_t *) placed; /* ws_submit_on's: the owner alone takes them */
    /* sleeping: the futex word, bumped by each wake, and the announcement */
    alignas(CACHELINE) _Atomic int state;
    _Atomic int waiting;
    /* the owner's; counters read by the bench from another thread */
    alignas(CACHELINE) uint64_t rng;
    unsigned since_inbox;
    int index;
    ws_sched_t *s;
    pthread_t thread;
    _Atomic uint64_t count[WS_NCOUNTERS];
} ws_worker_t;

struct ws_sched {
    ws_worker_t *w;
    int n;
    long steal_k; /* WS_NOSTEAL, k >= 1, or WS_HALF */
    alignas(CACHELINE) _Atomic int sleepers;
    _Atomic unsigned next_wake; /* where an untargeted wake starts looking */
    alignas(CACHELINE) _Atomic bool stopping;
    _Atomic unsigned next_home; /* the next foreign thread's home worker */
};

/* The worker the calling thread is (NULL: not a worker of any scheduler). */
static _Thread_local ws_worker_t *ws_me;
/* A foreign thread's home worker index + 1 (0: none yet). */
static _Thread_local unsigned ws_home;

static inline void ws_count(ws_worker_t *w, int c, uint64_t n)
{
    /* relaxed load + store: only the owner writes; the bench's reader wants a value */
    atomic_store_explicit(&w->count[c], atomic_load_explicit(&w->count[c], memory_order_relaxed) + n,
                          memory_order_relaxed);
}

static inline int ws_futex(_Atomic int *addr, int op, int val)
{
    return (int)syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

/* ---- the inbox: a list that foreign threads push batches onto ---------------------- */

/* Push ts[0 .. k-1] onto a list (an inbox, or a placed list) with one CAS.  Any thread. */
static inline void ws_inbox_put(_Atomic(ref_task_t *) *list, ref_task_t *ts, long k)
{
    for (long i = 0; i + 1 < k; i++)
        ts[i].next = &ts[i + 1];
    ref_task_t *head = atomic_load_explicit(list, memory_order_relaxed); /* the CAS decides */
    do
        ts[k - 1].next = head;
    /* release: pairs with ws_inbox_take's acquire exchange: the tasks and links are
     * written before a taker follows them */
    while (!atomic_compare_exchange_weak_explicit(list, &head, ts, memory_order_release,
                                                  memory_order_relaxed));
}

/* Push items[0 .. k-1] onto w's own deque as one batch (w's thread only); without the
 * memory to grow the deque, run them here instead.  True when pushed. */
static inline bool ws_publish(ws_worker_t *w, void *const *items, long k)
{
    if (ws_push(&w->dq, items, k))
        return true;
    for (long i = 0; i < k; i++) {
        ref_task_t *t = items[i];
        t->fn(t->ctx, t->i);
    }
    return false;
}

static inline void ws_wake(ws_sched_t *s, ws_worker_t *target, bool shared);

/* Owner or thief `me`: take all of a list (an inbox; a placed list: its owner only); run
 * the first, push the rest onto me's deque (batches) and, where thieves may take them,
 * tell a sleeper.  NULL when empty. */
static inline ref_task_t *ws_inbox_take(ws_worker_t *me, _Atomic(ref_task_t *) *list)
{
    /* relaxed: a hint; the exchange below decides */
    if (!atomic_load_explicit(list, memory_order_relaxed))
        return NULL;
    /* acquire: pairs with ws_inbox_put's release CAS */
    ref_task_t *t = atomic_exchange_explicit(list, NULL, memory_order_acquire);
    if (!t)
        return NULL;
    void *batch[WS_PUBLISH_MAX];
    long n = 1, k = 0;
    bool kept = false;
    for (ref_task_t *x = t->next, *next; x; x = next, n++) {
        next = x->next; /* before x is published: a thief may run it at once */
        batch[k++] = x;
        if (k == WS_PUBLISH_MAX || !next) {
            kept |= ws_publish(me, batch, k);
            k = 0;
        }
    }
    ws_count(me, WS_remote_takes, 1);
    ws_count(me, WS_remote_pops, (uint64_t)n);
    if (kept && me->s->steal_k != WS_NOSTEAL)
        ws_wake(me->s, NULL, true);
    return t;
}

/* ---- waking and sleeping ------------------------------------------------------------ */

/* Claim w if it is announced, and wake it. */
static inline bool ws_claim(ws_sched_t *s, ws_worker_t *w)
{
    int one = 1;
    /* relaxed: ordered after the caller's fence; the claim only has to be one CAS */
    if (!atomic_compare_exchange_strong_explicit(&w->waiting, &one, 0, memory_order_relaxed,
                                                 memory_order_relaxed))
        return false;
    /* relaxed: a count read after full fences (ws_wake's, ws_park's) */
    atomic_fetch_sub_explicit(&s->sleepers, 1, memory_order_relaxed);
    /* seq_cst: after the caller's fence, so a sleeper that read the old state before
     * it announced sees the new one in the kernel's compare */
    atomic_fetch_add_explicit(&w->state, 1, memory_order_seq_cst);
    ws_futex(&w->state, FUTEX_WAKE_PRIVATE, 1);
    return true;
}

/* After publishing tasks that `target` holds (NULL: the caller's own deque): wake
 * target if it sleeps, else, where thieves may take the tasks (shared, and stealing on),
 * any one sleeper. */
static inline void ws_wake(ws_sched_t *s, ws_worker_t *target, bool shared)
{
    /* seq_cst fence: the publication (bottom, or the inbox CAS) before the load of
     * sleepers; pairs with ws_park's fence between its announcement and its recheck */
    full_fence();
    if (atomic_load_explicit(&s->sleepers, memory_order_relaxed) == 0) /* after the fence */
        return;
    if (target && ws_claim(s, target))
        return;
    if (!shared || s->steal_k == WS_NOSTEAL)
        return; /* only the holder could run them */
    /* relaxed: only where the search starts, spreading the wakes */
    unsigned start = atomic_fetch_add_explicit(&s->next_wake, 1, memory_order_relaxed);
    for (int i = 0; i < s->n; i++)
        if (ws_claim(s, &s->w[(start + (unsigned)i) % (unsigned)s->n]))
            return;
}

static ref_task_t *ws_find(ws_worker_t *w);

/* Announce, recheck, sleep; returns a task the recheck found, else NULL (woken). */
static inline ref_task_t *ws_park(ws_worker_t *w)
{
    ws_sched_t *s = w->s;
    /* acquire: pairs with a waker's seq_cst bump (and ws_stop's) */
    int st = atomic_load_explicit(&w->state, memory_order_acquire);
    /* relaxed: the fence below orders the announcement before the recheck */
    atomic_store_explicit(&w->waiting, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->sleepers, 1, memory_order_relaxed);
    /* seq_cst fence: pairs with ws_wake's fence (the protocol at the top) */
    full_fence();
    ref_task_t *t = ws_find(w);
    /* relaxed: the fence above orders it; ws_stop bumps state after its store */
    if (!t && !atomic_load_explicit(&s->stopping, memory_order_relaxed)) {
        ws_count(w, WS_parks, 1);
        ws_futex(&w->state, FUTEX_WAIT_PRIVATE, st);
    }
    int one = 1; /* leave: uncount ourselves unless a waker claimed (and uncounted) us;
                  * relaxed: the claim is decided by this CAS alone, and a waker that still
                  * counts us only makes a futile claim attempt */
    if (atomic_compare_exchange_strong_explicit(&w->waiting, &one, 0, memory_order_relaxed,
                                                memory_order_relaxed))
        atomic_fetch_sub_explicit(&s->sleepers, 1, memory_order_relaxed);
    else
        ws_count(w, WS_woken, 1);
    return t;
}

/* ---- finding work --------------------------------------------------------------------- */

/* One round of random victims: each victim's deque, then its inbox. */
static inline ref_task_t *ws_steal_round(ws_worker_t *w)
{
    ws_sched_t *s = w->s;
    void *got[WS_HALF_MAX];
    for (int a = 1; a < s->n; a++) {
        w->rng ^= w->rng << 13, w->rng ^= w->rng >> 7, w->rng ^= w->rng << 17;
        ws_worker_t *v = &s->w[(w->index + 1 + (int)(w->rng % (uint64_t)(s->n - 1))) % s->n];
        long n;
        do
            ws_count(w, WS_steal_attempts, 1);
        while ((n = ws_steal(&v->dq, s->steal_k, got)) == WS_LOST);
        if (n > 0) {
            ws_count(w, WS_steals, 1);
            ws_count(w, WS_stolen_tasks, (uint64_t)n);
            if (n > 1 && ws_publish(w, got + 1, n - 1)) /* the rest are w's own now */
                ws_wake(s, NULL, true);
            return got[0];
        }
        ref_task_t *t = ws_inbox_take(w, &v->inbox);
        if (t)
            return t;
    }
    return NULL;
}

/* The owner's search: its placed tasks and its inbox (first, every WS_INBOX_EVERY
 * tasks), its deque, then a steal round where stealing is on.  NULL when nothing was
 * found. */
static ref_task_t *ws_find(ws_worker_t *w)
{
    ref_task_t *t;
    if (++w->since_inbox % WS_INBOX_EVERY == 0 &&
        ((t = ws_inbox_take(w, &w->placed)) || (t = ws_inbox_take(w, &w->inbox))))
        return t;
    if ((t = ws_pop(&w->dq)) || (t = ws_inbox_take(w, &w->placed)) ||
        (t = ws_inbox_take(w, &w->inbox)))
        return t;
    return w->s->steal_k == WS_NOSTEAL ? NULL : ws_steal_round(w);
}

/* Look again with pauses for WS_SPIN_NS (on the clock, as PARK_SEARCH_NS). */
static inline ref_task_t *ws_spin(ws_worker_t *w)
{
    int64_t end = sb_clock_ns(CLOCK_MONOTONIC) + WS_SPIN_NS;
    for (unsigned r = 0;; r++) {
        backoff_pause(r);
        ref_task_t *t = ws_find(w);
        /* relaxed: a stop is also announced by a wake-up */
        if (t || atomic_load_explicit(&w->s->stopping, memory_order_relaxed) ||
            sb_clock_ns(CLOCK_MONOTONIC) >= end)
            return t;
    }
}

static inline void *ws_worker_main(void *arg)
{
    ws_worker_t *w = arg;
    ws_me = w;
    for (;;) {
        ref_task_t *t = ws_find(w);
        if (!t && !(t = ws_spin(w)) && !(t = ws_park(w))) {
            /* woken, or stopping; relaxed: ws_stop's bump ordered it before our wake */
            if (atomic_load_explicit(&w->s->stopping, memory_order_relaxed))
                return NULL;
            continue;
        }
        t->fn(t->ctx, t->i);
        ws_count(w, WS_tasks_run, 1);
    }
}

/* ---- the public calls ----------------------------------------------------------------- */

/* Start n workers; steal_k WS_NOSTEAL, k >= 1 or WS_HALF.  The workers started (the
 * scheduler runs with fewer when a thread cannot be made), or -errno. */
static inline int ws_start(ws_sched_t *s, int n, long steal_k)
{
    if (n < 1 || (steal_k < 0 && steal_k != WS_HALF))
        return -EINVAL;
    s->w = aligned_alloc(CACHELINE, (size_t)n * sizeof *s->w);
    if (!s->w)
        return -ENOMEM;
    s->steal_k = steal_k;
    long margin = steal_k == WS_HALF ? WS_HALF_MAX : steal_k < 1 ? 1 : steal_k;
    atomic_init(&s->sleepers, 0);
    atomic_init(&s->next_wake, 0);
    atomic_init(&s->stopping, false);
    atomic_init(&s->next_home, 0);
    for (int i = 0; i < n; i++) {
        ws_worker_t *w = &s->w[i];
        if (ws_deque_init(&w->dq, WS_DEQUE_SLOTS, margin) != 0) {
            while (i-- > 0)
                ws_deque_fini(&s->w[i].dq);
            free(s->w);
            return -ENOMEM;
        }
        atomic_init(&w->inbox, NULL);
        atomic_init(&w->placed, NULL);
        atomic_init(&w->state, 0);
        atomic_init(&w->waiting, 0);
        w->rng = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
        w->since_inbox = 0;
        w->index = i;
        w->s = s;
        for (int c = 0; c < WS_NCOUNTERS; c++)
            atomic_init(&w->count[c], 0);
    }
    s->n = n;
    for (int i = 0; i < n; i++)
        if (pthread_create(&s->w[i].thread, NULL, ws_worker_main, &s->w[i]) != 0) {
            if (i == 0) { /* nothing runs */
                for (int j = 0; j < n; j++)
                    ws_deque_fini(&s->w[j].dq);
                free(s->w);
                return -EAGAIN;
            }
            s->n = i; /* the others never see a worker past i */
            break;
        }
    return s->n;
}

/* End every worker (after the tasks they hold ran: the caller waits for them) and free
 * the scheduler.  Not from a worker. */
static inline void ws_stop(ws_sched_t *s)
{
    atomic_store_explicit(&s->stopping, true, memory_order_seq_cst);
    for (int i = 0; i < s->n; i++) {
        /* seq_cst: after the stopping store, so a sleeper that read the old state sees
         * stopping in its recheck or is woken */
        atomic_fetch_add_explicit(&s->w[i].state, 1, memory_order_seq_cst);
        ws_futex(&s->w[i].state, FUTEX_WAKE_PRIVATE, 1);
    }
    for (int i = 0; i < s->n; i++)
        pthread_join(s->w[i].thread, NULL);
    for (int i = 0; i < s->n; i++)
        ws_deque_fini(&s->w[i].dq);
    free(s->w);
    s->w = NULL;
}

/* The calling thread's worker in s, or NULL. */
static inline ws_worker_t *ws_self(ws_sched_t *s)
{
    return ws_me && ws_me->s == s ? ws_me : NULL;
}

/* Start ts[0 .. k-1] as one batch (fnrt_submit's contract). */
static inline void ws_submit(ws_sched_t *s, ref_task_t *ts, long k)
{
    ws_worker_t *w = ws_self(s);
    if (!w) {
        if (!ws_home) /* relaxed: a round-robin count, nothing to order */
            ws_home = 1 + atomic_fetch_add_explicit(&s->next_home, 1, memory_order_relaxed);
        ws_worker_t *home = &s->w[(ws_home - 1) % (unsigned)s->n];
        ws_inbox_put(&home->inbox, ts, k);
        ws_wake(s, home, true);
        return;
    }
    void *batch[WS_PUBLISH_MAX];
    for (long done = 0; done < k;) {
        long m = k - done < WS_PUBLISH_MAX ? k - done : WS_PUBLISH_MAX;
        for (long i = 0; i < m; i++)
            batch[i] = &ts[done + i];
        /* without stealing nobody else can run them: no wake-up */
        if (ws_publish(w, batch, m) && s->steal_k != WS_NOSTEAL)
            ws_wake(s, NULL, true);
        done += m;
    }
}

/* Start t on worker idx, and there only (fnrt_submit_on's contract; not from a worker). */
static inline void ws_submit_on(ws_sched_t *s, int idx, ref_task_t *t)
{
    ws_worker_t *w = &s->w[idx % s->n];
    ws_inbox_put(&w->placed, t, 1);
    ws_wake(s, w, false);
}

/* The counters summed over the workers into sum[WS_NCOUNTERS].  Any thread. */
static inline void ws_counters_sum(ws_sched_t *s, double *sum)
{
    for (int c = 0; c < WS_NCOUNTERS; c++)
        sum[c] = 0;
    for (int i = 0; i < s->n; i++)
        for (int c = 0; c < WS_NCOUNTERS; c++) /* relaxed: a snapshot */
            sum[c] += (double)atomic_load_explicit(&s->w[i].count[c], memory_order_relaxed);
}

#endif /* SCHEDBENCH_WS_SCHED_H */
