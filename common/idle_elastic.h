/*
 * idle_elastic.h -- the parking lot (park_lot.h), but the number of active workers
 * adapts (the work-stealing article, seed 003, section 4.3): a worker whose searches
 * keep failing deactivates ("parks for good") until the queues grow; a deactivated
 * worker is reactivated when run queues stay long, or by the watcher (below) when tasks
 * wait queued while every active worker is busy.
 *
 * Thresholds (one place, here):
 *   ELASTIC_WASTED  4   consecutive wasted wake-ups deactivate a worker: it was woken
 *                       (or came back from its search) and ran no task since it last
 *                       went idle, and its search found nothing again.  A worker the
 *                       submitters keep waking for tasks that others take first costs
 *                       two futex calls and two context switches per wake-up for nothing.
 *   ELASTIC_MIN_ACTIVE 1  at least this many workers are never deactivated.
 *   ELASTIC_LONG   16   a run queue "is long" from 16 queued tasks on, after a pop...
 *   ELASTIC_STREAK  8   ...and "stays long" over 8 consecutive observations: pops that
 *                       leave >= 16 queued, or remote takes that had to leave tasks
 *                       behind a full batch (IDLE_BACKLOG).  Then one deactivated worker
 *                       is reactivated.
 *
 * A deactivated worker is not in the parking lot: submitters' wake-ups (park_wake) never
 * claim it; it sleeps on its own futex word until elastic_claim (a long queue elsewhere,
 * or a push that raced with its deactivation) or shutdown.
 *
 * Why no task is stranded.  A deactivated worker's runnext slot and run queue are empty
 * (it deactivates only right after a search found them and its remote queue empty) and
 * only their owner fills them.  Its remote queue must stay empty too: the others do not
 * reliably look there (a worker with work of its own, e.g. two bthreads yielding to each
 * other, never steals), so a task left there could wait for ever.  So non-workers place
 * their tasks on active workers only (IDLE_INACTIVE: the core's placement skips them),
 * and a push that races with a deactivation is caught by a Dekker pair:
 *
 *   deactivator (elastic_deactivate)      pusher (elastic_pushed = IDLE_PUSHED)
 *   deactivated = 1                       (the push: exchange on the queue's `in`)
 *   fence(seq_cst)                        fence(seq_cst)
 *   remote queue non-empty? stay active   deactivated? claim it and wake it
 *
 * The two fences fall in the single seq_cst order: whichever comes second sees the other
 * side's write, so either the worker does not sleep or the pusher reactivates it.  Of the
 * workers left, at least ELASTIC_MIN_ACTIVE are not deactivated (the count is kept by a
 * CAS that refuses to go below it), and each is either awake (it searches before it
 * sleeps) or parked in the lot, where the producer of any new task wakes it by the lot's
 * own protocol.  So every queued task has a worker that will run it; deactivation only
 * takes parallelism away, and the long-queue rule gives it back.
 *
 * The watcher.  The parking lot's watcher (park_lot.h) only sees runnext slots, and
 * only parked workers can be it; a task queued behind an active worker that blocks in a
 * system call or computes reaches a parked worker only through a wake-up, and there may
 * be no parked worker at all (the others deactivated).  So while a worker is
 * deactivated, one deactivated worker is the watcher (elastic_watching; the lot's
 * watcher stands aside meanwhile): it sleeps with a timeout of PARK_WATCH_NS, and at
 * each timeout looks (elastic_look): if some active worker outside the lot has ended no
 * task since the previous look, it searches (find_work: run queues, remote queues, a
 * runnext slot whose owner is stuck) and, finding a task, reactivates itself to run it.
 * A task stranded behind a blocked or computing worker so runs within two watch periods.
 * The same look also brings the watcher back when an active worker has tasks queued while
 * every active worker is busy (none waits in the lot): the long-queue rule needs 16
 * queued, which a task graph's ready set on one worker seldom reaches, so without it a
 * worker deactivated when one burst of work ended stays off through the next.
 * The role passes on: a watcher that leaves it (reactivated) rouses the deactivated
 * workers (a bump of their words without a claim) and one of them takes it.  A task
 * left in a runnext slot (IDLE_WATCH) wakes nobody while the watcher exists: the
 * watcher's look follows the seq_cst exchange into the slot (a fence before each look,
 * and one after the role is left, before the search that follows).  The price: one
 * wake-up per PARK_WATCH_NS while a worker is deactivated, as the lot's watcher costs.
 *
 * No lost reactivation: the sleeper reads its word before it publishes `deactivated`;
 * a reactivator first claims it (deactivated 1 -> 0), then bumps the word and wakes the
 * futex, so the kernel's compare fails if the bump came first.  Shutdown sets `stopping`
 * before it bumps every word (release), and the sleeper's acquire load of the word then
 * sees stopping.
 */
#ifndef SCHEDBENCH_IDLE_ELASTIC_H
#define SCHEDBENCH_IDLE_ELASTIC_H

#include "park_lot.h"

/* 1 while a deactivated worker is the watcher (see above); the lot's watcher stands
 * aside meanwhile (parking.other_watcher). */
static _Atomic int elastic_watching;

#define ELASTIC_WASTED 4
#define ELASTIC_MIN_ACTIVE 1
#define ELASTIC_LONG 16
#define ELASTIC_STREAK 8

typedef struct elastic_slot {
    /* read by every submitter at every push (elastic_inactive, elastic_pushed):
     * written only when the worker deactivates or is reactivated */
    alignas(64) _Atomic int word;    /* futex word of a deactivated worker */
    _Atomic int deactivated;         /* 1 while parked for good; a reactivator claims it */
    /* owner only (and the watcher's rare stores): a line of its own, so that the
     * owner's per-pop bookkeeping does not take the line above from the submitters */
    alignas(64) unsigned wasted;     /* consecutive wasted wake-ups */
    unsigned streak;                 /* consecutive "queue long" observations */
    uint64_t ran_at_idle;            /* tasks_run when it last went idle */
    _Atomic uint64_t watch_seen;     /* its tasks_run at the watcher's last look */
} elastic_slot_t;

static struct elastic {
    /* workers deactivated; a CAS keeps worker_count() - ndeactivated >= ELASTIC_MIN_ACTIVE
     * (counted against the running workers, not the lots set up: IDLE_SETUP gets the
     * maximum, and bthread_setconcurrency may add active workers later) */
    alignas(64) _Atomic int ndeactivated;
    elastic_slot_t *slots;
    int n;
} elastic;

static inline int elastic_setup(int n)
{
    if (park_setup(n) != 0)
        return -1;
    elastic.slots = aligned_alloc(64, (size_t)n * sizeof(elastic_slot_t));
    if (!elastic.slots) {
        park_teardown();
        return -1;
    }
    for (int i = 0; i < n; i++) {
        atomic_init(&elastic.slots[i].word, 0);
        atomic_init(&elastic.slots[i].deactivated, 0);
        elastic.slots[i].wasted = 0;
        elastic.slots[i].streak = 0;
        elastic.slots[i].ran_at_idle = UINT64_MAX; /* the first idle is never "wasted" */
        atomic_init(&elastic.slots[i].watch_seen, 0);
    }
    elastic.n = n;
    atomic_init(&elastic.ndeactivated, 0);
    atomic_init(&elastic_watching, 0);
    parking.other_watcher = &elastic_watching;
    return 0;
}

static inline void elastic_teardown(void)
{
    free(elastic.slots);
    elastic.slots = NULL;
    park_teardown();
}

/* Any thread: claim slot s's worker if it is deactivated (1 -> 0) and wake it; false if
 * it was not.  The claim is counted in the woken worker's statistics. */
static inline bool elastic_claim(elastic_slot_t *s)
{
    int one = 1;
    /* acquire (the claim): pairs with the sleeper's release of `deactivated`, so its
     * read of the word comes before our bump and its futex compare sees it */
    if (!atomic_load_explicit(&s->deactivated, memory_order_relaxed) ||
        !atomic_compare_exchange_strong_explicit(&s->deactivated, &one, 0, memory_order_acquire,
                                                 memory_order_relaxed))
        return false;
    atomic_fetch_sub_explicit(&elastic.ndeactivated, 1, memory_order_relaxed);
    stat_elastic(worker_at((int)(s - elastic.slots)), false);
    /* release: pairs with the sleeper's acquire of the word (see above) */
    atomic_fetch_add_explicit(&s->word, 1, memory_order_release);
    futex_wake_private(&s->word, 1);
    return true;
}

/* Any worker: reactivate one deactivated worker, if there is one. */
static inline void elastic_reactivate(void)
{
    /* relaxed: a hint; a deactivation we miss is reactivated by a later observation */
    if (atomic_load_explicit(&elastic.ndeactivated, memory_order_relaxed) == 0)
        return;
    for (int i = 0; i < elastic.n; i++)
        if (elastic_claim(&elastic.slots[i]))
            return;
}

/* Any thread: is w deactivated?  The core places no foreign task on it (a relaxed hint:
 * a race with a deactivation is caught by elastic_pushed). */
static inline bool elastic_inactive(worker_t *w)
{
    return atomic_load_explicit(&elastic.slots[worker_index(w)].deactivated,
                                memory_order_relaxed);
}

/* Any thread, after pushing a task onto target's remote queue: if target deactivated
 * meanwhile, bring it back (the pusher's half of the Dekker pair above). */
static inline void elastic_pushed(worker_t *target)
{
    elastic_slot_t *s = &elastic.slots[worker_index(target)];
    full_fence(); /* the push before the load below; pairs with elastic_deactivate's */
    if (atomic_load_explicit(&s->deactivated, memory_order_relaxed))
        elastic_claim(s);
}

/* Owner: one observation of its queues (long or not); reactivates one deactivated worker
 * after ELASTIC_STREAK long ones in a row. */
static inline void elastic_observe(worker_t *w, bool long_now)
{
    elastic_slot_t *s = &elastic.slots[worker_index(w)];
    if (!long_now) {
        if (s->streak)
            s->streak = 0;
        return;
    }
    if (++s->streak < ELASTIC_STREAK)
        return;
    s->streak = 0;
    elastic_reactivate();
}

/* Owner, deactivated: become the watcher if nobody is.  seq_cst: in the order that
 * elastic_watch reads. */
static inline bool elastic_try_watch(void)
{
    int zero = 0;
    return core_watch_wanted() &&
           atomic_compare_exchange_strong_explicit(&elastic_watching, &zero, 1,
                                                   memory_order_seq_cst, memory_order_relaxed);
}

/* The watcher leaves the role: rouse the deactivated workers, so that one takes it. */
static inline void elastic_unwatch(worker_t *w)
{
    atomic_store_explicit(&elastic_watching, 0, memory_order_seq_cst);
    full_fence(); /* the store before our next search's loads (see above) */
    for (int i = 0; i < elastic.n; i++) {
        elastic_slot_t *s = &elastic.slots[i];
        if (i == worker_index(w) || !atomic_load_explicit(&s->deactivated, memory_order_relaxed))
            continue;
        /* release: a sleeper whose acquire read of the word sees the bump sees the
         * role free; one that read the word before waits on the old value, and the
         * kernel's compare or this wake-up lets it try again */
        atomic_fetch_add_explicit(&s->word, 1, memory_order_release);
        futex_wake_private(&s->word, 1);
    }
}

/* The watcher's look (see above): a task that an active worker outside the lot strands,
 * or one queued behind a busy active worker while no active worker is idle to take it
 * (a backlog: the short queues of a task graph on one worker never make the long-queue
 * rule fire, and the workers deactivated at the end of one burst of work would stay off
 * through the next), or NULL.  Owner only, while the watcher. */
static inline task_t *elastic_look(worker_t *w)
{
    bool stuck = false, idle = false, backlog = false;
    full_fence(); /* after a runnext exchange whose waker saw us watching (elastic_watch) */
    for (int i = 0; i < worker_count(); i++) {
        elastic_slot_t *v = &elastic.slots[i];
        /* relaxed: hints; a stale one costs a search, or delays it by one look */
        uint64_t ran = stat_tasks_run(worker_at(i));
        if (i != worker_index(w) && !atomic_load_explicit(&v->deactivated, memory_order_relaxed)) {
            if (atomic_load_explicit(&parking.lots[i].waiting, memory_order_relaxed))
                idle = true;
            else if (ran == atomic_load_explicit(&v->watch_seen, memory_order_relaxed))
                stuck = true;
            else if (run_queue_size(worker_at(i)) > 0)
                backlog = true;
        }
        atomic_store_explicit(&v->watch_seen, ran, memory_order_relaxed);
    }
    return stuck || (backlog && !idle) ? find_work(w) : NULL;
}

/* Owner: park for good, unless that would leave fewer than ELASTIC_MIN_ACTIVE active.
 * *found: a task the watcher's look took (it is active again), else NULL. */
static inline bool elastic_deactivate(worker_t *w, task_t **found)
{
    *found = NULL;
    /* relaxed: the count is its own guard (the CAS), it orders nothing else */
    int d = atomic_load_explicit(&elastic.ndeactivated, memory_order_relaxed);
    do {
        if (worker_count() - d <= ELASTIC_MIN_ACTIVE)
            return false;
    } while (!atomic_compare_exchange_weak_explicit(&elastic.ndeactivated, &d, d + 1,
                                                    memory_order_relaxed,
                                                    memory_order_relaxed));
    elastic_slot_t *s = &elastic.slots[worker_index(w)];
    stat_elastic(w, true);
    /* acquire: pairs with the release bump of a reactivator or of shutdown */
    int seen = atomic_load_explicit(&s->word, memory_order_acquire);
    /* release: our read of the word above comes before a reactivator's bump */
    atomic_store_explicit(&s->deactivated, 1, memory_order_release);
    full_fence(); /* the store before the look below; pairs with elastic_pushed's */
    if (!worker_remote_maybe(w)) { /* else a push raced with us: stay active */
        static const struct timespec watch_ts = {0, PARK_WATCH_NS};
        bool watch = false;
        stat_park(w);
        while (!core_stopping() && atomic_load_explicit(&s->deactivated, memory_order_relaxed)) {
            if (!watch)
                watch = elastic_try_watch(); /* after reading the word: see elastic_unwatch */
            futex_wait_private(&s->word, seen, watch ? &watch_ts : NULL);
            int now = atomic_load_explicit(&s->word, memory_order_acquire);
            if (watch && now == seen && !core_stopping() &&
                atomic_load_explicit(&s->deactivated, memory_order_relaxed) &&
                (*found = elastic_look(w)))
                break;
            seen = now;
        }
        if (watch)
            elastic_unwatch(w);
    }
    /* Shutdown, a raced push or the watcher's look left us counted as deactivated: undo
     * our own claim. */
    int one = 1;
    if (atomic_compare_exchange_strong_explicit(&s->deactivated, &one, 0, memory_order_relaxed,
                                                memory_order_relaxed)) {
        atomic_fetch_sub_explicit(&elastic.ndeactivated, 1, memory_order_relaxed);
        stat_elastic(w, false);
    }
    return true;
}

static inline task_t *elastic_wait(worker_t *w)
{
    elastic_slot_t *s = &elastic.slots[worker_index(w)];
    task_t *t = park_search(w);
    if (t || core_stopping()) {
        s->wasted = 0;
        return t;
    }
    uint64_t ran = stat_tasks_run(w);
    s->wasted = ran == s->ran_at_idle ? s->wasted + 1 : 0; /* nothing run since last idle */
    s->ran_at_idle = ran;
    if (s->wasted >= ELASTIC_WASTED && elastic_deactivate(w, &t)) {
        s->wasted = 0;
        s->ran_at_idle = UINT64_MAX; /* a reactivation is a fresh start */
        return t; /* the watcher's find, or NULL: back to the main loop to search again */
    }
    return park_wait(w);
}

static inline void elastic_wake_all(void)
{
    park_wake_all();
    for (int i = 0; i < elastic.n; i++) {
        /* release: shutdown's `stopping` is seen by the sleeper's acquire of the word */
        atomic_fetch_add_explicit(&elastic.slots[i].word, 1, memory_order_release);
        futex_wake_private(&elastic.slots[i].word, 1);
    }
}

/* Owner, after it popped a task from its run queue: observe how long the queue stays
 * (run_queue_size: the queue's own estimate, RQ_SIZE). */
static inline void elastic_popped(worker_t *w)
{
    elastic_observe(w, run_queue_size(w) >= ELASTIC_LONG);
}

/* A remote take left tasks behind a full batch: wake a parked worker as usual, and count
 * it as a long-queue observation. */
static inline void elastic_backlog(worker_t *w)
{
    park_wake(NULL);
    elastic_observe(w, true);
}

/* A task was left in the caller's runnext slot: nothing to do while the watcher (a
 * deactivated worker) looks; else the lot's rule (park_watch). */
static inline void elastic_watch(void)
{
    /* seq_cst: after the exchange into the slot, against the watcher's leaving */
    if (atomic_load_explicit(&elastic_watching, memory_order_seq_cst))
        return;
    park_watch();
}

#define IDLE_SETUP(n) elastic_setup(n)
#define IDLE_TEARDOWN() elastic_teardown()
#define IDLE_WAIT(w) elastic_wait(w)
#define IDLE_WAKE(target) park_wake(target)
#define IDLE_WAKE_ALL() elastic_wake_all()
#define IDLE_BACKLOG(w) elastic_backlog(w)
#define IDLE_WATCH() elastic_watch()
#define IDLE_INACTIVE(w) elastic_inactive(w)
#define IDLE_PUSHED(target) elastic_pushed(target)
#define IDLE_POPPED(w) elastic_popped(w)
#define IDLE_DEACTIVATES 1

#endif /* SCHEDBENCH_IDLE_ELASTIC_H */
