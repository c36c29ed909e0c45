/*
 * park_lot.h -- the parking lot: idle workers sleep on one futex word each.  The
 * mechanism only; idle_park.h binds the idling hooks to it, and idle_adaptive.h and
 * idle_elastic.h build their idling on it.
 *
 * Each worker has a lot {state, waiting}; `sleepers` counts workers between "announced"
 * and "awake again".  The protocol (publish, full barrier, check) cannot lose a wake-up:
 *
 *   sleeper (park_wait)                  waker (park_wake, after publishing a task)
 *   st = lot.state                        fence(seq_cst)
 *   lot.waiting++, sleepers++             if sleepers == 0: return      <- the cheap path
 *   fence(seq_cst)                        pick a lot with waiting > 0
 *   t = find_work()  (recheck)            lot.state++; futex_wake(&lot.state, 1)
 *   if !t: futex_wait(&lot.state, st)
 *
 * The two fences fall in the single order of seq_cst operations.  If the waker's comes
 * first, the sleeper's recheck sees the task.  If the sleeper's comes first, the waker
 * reads sleepers > 0 and finds lot.waiting == 1; it bumps that lot's state: that worker
 * either has not reached futex_wait (the kernel compares state with st and returns at
 * once) or is woken.  Either way it runs find_work again.  A waker therefore pays one
 * fence and one load of a mostly read-only line when nobody sleeps, and a system call
 * only when somebody does: on this kind of VM a futex call costs ~1.2 us, more than the
 * whole switch path.
 *
 * A waker claims the worker it wakes (waiting 1 -> 0, uncounted from sleepers), so a
 * burst of submissions wakes each sleeper once instead of calling futex_wake for every
 * task while the first woken worker is still getting up.  A worker whose recheck found
 * work uncounts itself.  Every worker still counted either can be claimed or will run
 * find_work again, so the check above stays sound, with one delay: a worker leaving the
 * lot with a task its recheck found searches again only when that task ends, or blocks
 * its thread (core_worker_blocks then wakes a sleeper in its place).  A submission that
 * counted on it waits that long: a cost in parallelism, never a lost task.
 *
 * Each wake wakes at most one worker, so no more workers wake than tasks appear.  A
 * targeted wake (a task placed on one worker's queue, for variants without stealing)
 * goes to that worker's lot.
 *
 * Before it announces itself, an idle worker searches a while longer, PARK_SEARCH_NS
 * (park_search).  Unannounced, so the protocol above is unchanged: a waker that reads
 * sleepers == 0 while a worker searches relies on that worker's own later announcement
 * and recheck.  It keeps a worker that runs dry between a submitter's tasks from paying
 * a park and its wake-up per task (one foreign submitter feeding the workers).  It is not
 * adaptive's spinning: nobody counts the searchers and no waker skips a wake-up for
 * them, and it lasts a fixed time, not until a spin budget runs out.
 *
 * The watcher (sched.c, make_ready_again, explains why one is needed).  A task woken on
 * a busy worker waits in that worker's runnext slot with no wake-up.  So while some
 * worker runs, one parked worker at most, the watcher, parks with a timeout of
 * PARK_WATCH_NS instead of for good, and looks at the slots again when it fires:
 *
 *   watcher (park_wait)                   waker (park_watch, after its seq_cst
 *   announce; recheck                             exchange into a runnext slot)
 *   watching 0 -> 1 (seq_cst)             if watching > 0: return        <- the cheap path
 *   futex_wait(state, st, PARK_WATCH_NS)  if sleepers == 0: return
 *   watching-- (seq_cst)                  park_wake(NULL): that one searches, and
 *   look at the runnext slots                                  becomes the watcher
 *   (runnext_rescue), watch again
 *
 * If the waker reads watching > 0, the watcher's decrement comes later in the seq_cst
 * order, so its look after it sees the slot.  If it reads 0 and sleepers > 0, it wakes
 * a sleeper, which searches; if it reads sleepers == 0, every later sleeper announces
 * itself after the slot was filled and sees it in its recheck.  Either way somebody
 * looks at the slot within PARK_WATCH_NS (and takes the task if the owner is stuck).
 * The others still park for good, and when every worker sleeps nobody watches (no slot
 * can fill without a wake).  A watcher whose timeout fires looks at the runnext slots
 * only, not at the queues, and stays parked (announced, claimable) throughout: the
 * parking lot otherwise behaves as before: one extra wake-up per PARK_WATCH_NS while
 * work runs, and no spinning.
 */
#ifndef SCHEDBENCH_PARK_LOT_H
#define SCHEDBENCH_PARK_LOT_H

#include <stdlib.h>

#include "atomics.h"
#include "timeutil.h"

typedef struct park_lot {
    alignas(CACHELINE) _Atomic int state; /* the futex word: bumped by each wake */
    _Atomic int waiting;           /* 1 while its worker is announced */
} park_lot_t;

#define PARK_WATCH_NS 1000000 /* a watcher looks at the runnext slots this often (1 ms) */

static struct parking {
    alignas(CACHELINE) _Atomic int sleepers;
    _Atomic int watching; /* 1 while a parked worker is the watcher */
    _Atomic unsigned next; /* where the next untargeted wake starts looking */
    park_lot_t *lots;
    int n;
    /* Another watcher the lot's stands aside for while it is 1 (idle_elastic.h's), or
     * NULL: set by the idling built on the lot, at set-up. */
    _Atomic int *other_watcher;
} parking;

static inline int park_setup(int n)
{
    parking.other_watcher = NULL;
    parking.lots = aligned_alloc(CACHELINE, (size_t)n * sizeof(park_lot_t));
    if (!parking.lots)
        return -1;
    for (int i = 0; i < n; i++) {
        atomic_init(&parking.lots[i].state, 0);
        atomic_init(&parking.lots[i].waiting, 0);
    }
    parking.n = n;
    atomic_init(&parking.sleepers, 0);
    atomic_init(&parking.watching, 0);
    return 0;
}

static inline void park_teardown(void)
{
    free(parking.lots);
    parking.lots = NULL;
}

/* The search before announcing lasts PARK_SEARCH_NS, measured on the clock, not a count
 * of rounds: each find_work after a pause of 8, 16, 32, 64, then 128 CPU pauses, until
 * the time is up.  A count of rounds would end sooner where rounds are cheap (few
 * victims, a fast pause) and later where they are dear, so how long a worker waits for
 * the next task before it parks would depend on the machine, not on the policy.
 *
 * Why 80 us: a worker that runs dry while one submitter feeds P workers in turn gets its
 * next task about P submits later (~1 us each without a wake-up).  If it parks first, the
 * submitter pays a futex wake for that task, submits slow down, the gaps grow, and every
 * worker parks after every task: a stable collapse (simulated, 64 workers, one
 * submitter: 37.6 ms and 0.98 parks per task with a 40 us search, 6.0 ms and 0.003 with
 * 80 us).  80 us covers P up to about 64; at 2 workers it is the CPU an idle worker burns
 * before it sleeps, a few times what a park and its wake-up cost.  One clock read per
 * round (~25 ns, vDSO) is the price.  Fixed here, not a -D: a different search is a
 * different variant. */
#define PARK_SEARCH_NS 80000
/* A backstop for every clock-bounded search (this one, idle_adaptive.h's spin), never
 * reached on hardware: a round has up to 128 pauses and a pause lasts at least a few
 * cycles (~24 ns here), so 1024 rounds outlast 180 us anywhere.  Where pauses and clock
 * reads cost nothing, as in the simulator's unit-cost test model, the clock never
 * reaches the end, and the search ends after this many rounds instead of spinning in
 * place forever. */
#define IDLE_SEARCH_ROUNDS_MAX 1024

/* Unannounced searching before parking: see above. */
static inline task_t *park_search(worker_t *w)
{
    int64_t end = sb_clock_ns(CLOCK_MONOTONIC) + PARK_SEARCH_NS;
    for (unsigned i = 0; i < IDLE_SEARCH_ROUNDS_MAX; i++) {
        for (unsigned k = 0; k < (8u << (i < 4 ? i : 4)); k++)
            cpu_relax();
        task_t *t = find_work(w);
        if (t || core_stopping())
            return t;
        if (sb_clock_ns(CLOCK_MONOTONIC) >= end)
            return NULL;
    }
    return NULL;
}

/* Become the watcher if it is wanted (another worker runs: else no slot can fill
 * unseen) and nobody else is: the lot's watcher, or another the idling put in its place
 * (parking.other_watcher; relaxed: a hint, the role itself is the CAS below).  seq_cst:
 * the claim is in the order park_watch reads. */
static inline bool park_try_watch(void)
{
    int zero = 0;
    return core_watch_wanted() &&
           !(parking.other_watcher &&
             atomic_load_explicit(parking.other_watcher, memory_order_relaxed)) &&
           atomic_load_explicit(&parking.sleepers, memory_order_relaxed) < worker_count() &&
           atomic_compare_exchange_strong_explicit(&parking.watching, &zero, 1,
                                                   memory_order_seq_cst, memory_order_relaxed);
}

static inline task_t *park_wait(worker_t *w)
{
    park_lot_t *lot = &parking.lots[worker_index(w)];
    int st = atomic_load_explicit(&lot->state, memory_order_acquire);
    /* relaxed: the fence below orders the announcement before the recheck */
    atomic_store_explicit(&lot->waiting, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&parking.sleepers, 1, memory_order_relaxed);
    /* seq_cst fence: pairs with park_wake's fence (see above): the announcement is
     * visible before the recheck's loads are made.  A seq_cst RMW alone would not do:
     * it is a full barrier on x86-64 (lock xadd), but not in C11, nor on aarch64 with
     * load/store-exclusive atomics, where the recheck's relaxed loads (the remote
     * queues' emptiness hints) may be satisfied before the increment is visible. */
    full_fence();
    task_t *t = find_work_last_look(w);
    if (!t && !core_stopping()) {
        static const struct timespec watch_ts = {0, PARK_WATCH_NS};
        bool watch = park_try_watch();
        stat_park(w);
        for (;;) {
            futex_wait_private(&lot->state, st, watch ? &watch_ts : NULL);
            if (!watch)
                break;
            /* seq_cst: ordered before the look at the slots that follows (park_watch) */
            atomic_fetch_sub_explicit(&parking.watching, 1, memory_order_seq_cst);
            /* acquire: pairs with a waker's bump; woken (claimed, shutdown): search */
            if (atomic_load_explicit(&lot->state, memory_order_acquire) != st || core_stopping())
                break;
            /* the watch fired: the runnext slots only, so that the watcher changes
             * nothing else about how this idler behaves (queued work is a waker's job) */
            if ((t = runnext_rescue(w)))
                break;
            watch = park_try_watch(); /* else sleep for good: another watches, or none runs */
        }
    }
    /* Leave: unless a waker claimed us (and so uncounted us), uncount ourselves. */
    int one = 1;
    if (atomic_compare_exchange_strong_explicit(&lot->waiting, &one, 0, memory_order_relaxed,
                                                memory_order_relaxed))
        atomic_fetch_sub_explicit(&parking.sleepers, 1, memory_order_relaxed);
    else
        stat_woken(w);
    return t;
}

/* The chaselev idler: search a little, then park. */
static inline task_t *park_search_wait(worker_t *w)
{
    task_t *t = park_search(w);
    return t || core_stopping() ? t : park_wait(w);
}

/* Claim a waiting worker and wake it.  The claim (waiting 1 -> 0, and sleepers - 1 at
 * once) makes the next waker look elsewhere instead of waking the same worker again
 * while it is still on its way out of futex_wait: one system call per sleeper. */
static inline bool park_signal(park_lot_t *lot)
{
    int one = 1;
    if (!atomic_compare_exchange_strong_explicit(&lot->waiting, &one, 0, memory_order_relaxed,
                                                 memory_order_relaxed))
        return false;
    atomic_fetch_sub_explicit(&parking.sleepers, 1, memory_order_relaxed);
    /* seq_cst: the bump is ordered after our caller's fence, so a worker that reads the
     * old state before it waits sees the new one in the kernel's compare */
    atomic_fetch_add_explicit(&lot->state, 1, memory_order_seq_cst);
    futex_wake_private(&lot->state, 1);
    stat_wakeup();
    return true;
}

/* After publishing a task: wake `target`, or any one sleeper when target is NULL. */
static inline void park_wake(worker_t *target)
{
    /* seq_cst fence: the task's publication (a queue store) is ordered before the load
     * of sleepers; pairs with park_wait's fence between its announcement and recheck */
    full_fence();
    if (atomic_load_explicit(&parking.sleepers, memory_order_relaxed) == 0)
        return;
    if (target) {
        park_signal(&parking.lots[worker_index(target)]);
        return;
    }
    int n = worker_count();
    unsigned start = atomic_fetch_add_explicit(&parking.next, 1, memory_order_relaxed);
    for (int k = 0; k < n; k++) {
        park_lot_t *lot = &parking.lots[(start + (unsigned)k) % (unsigned)n];
        if (atomic_load_explicit(&lot->waiting, memory_order_relaxed) && park_signal(lot))
            return;
    }
}

static inline void park_wake_all(void)
{
    for (int i = 0; i < worker_count(); i++) {
        atomic_fetch_add_explicit(&parking.lots[i].state, 1, memory_order_seq_cst);
        futex_wake_private(&parking.lots[i].state, 1);
    }
}

/* A task was left in the caller's runnext slot without a wake-up: make sure a watcher
 * exists (see above).  The caller's seq_cst exchange into the slot comes first. */
static inline void park_watch(void)
{
    /* seq_cst loads: after the exchange, against the watcher's decrement and a
     * sleeper's announcement (see above) */
    if (atomic_load_explicit(&parking.watching, memory_order_seq_cst) ||
        atomic_load_explicit(&parking.sleepers, memory_order_seq_cst) == 0)
        return;
    park_wake(NULL);
}

#endif /* SCHEDBENCH_PARK_LOT_H */
