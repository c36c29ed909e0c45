/*
 * sched.c -- the scheduler core, compiled once per variant against its variant.h.
 *
 * Read it top to bottom:
 *   1. the task pool: task metadata in slots with versioned ids
 *   2. remote queues: where tasks from non-workers (and yields) wait
 *   3. the workers: the variant's hooks bound (policy.h), struct worker, the services
 *      the policy components call back
 *   4. making a task ready: placement, wake-ups, bthread_flush, the runnext slot
 *   5. the switch path: sched_to, task_runner, ending a task, the "remained" callback
 *   6. finding work and the worker's main loop
 *   7. the public API (start, join, yield, exit, ...)
 *   8. start-up, shutdown and statistics
 *
 * A worker is a pthread that owns a run queue (the variant's kind) and a remote queue.
 * It runs tasks on their own stacks, switching with bthread_jump_fcontext.  Whatever a
 * task must do *after* it has left its stack (requeue itself, join a butex wait list,
 * give its stack back) it leaves as the "remained" callback, which the next context runs
 * first thing after the switch.  That is what makes waits free of lost wake-ups: a task
 * is published to a wait list only once nobody runs on its stack any more.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "atomics.h"
#include "butex.h"
#include "core.h"
#include "fiber.h"
#include "remote_queue.h"
#include "timeutil.h"
#include "topology.h"

/* A worker's counters: those of BTHREAD_WORKER_COUNTERS (bthread.h) kept on the worker's
 * line (W, WQ), in the list's order.  Those that foreign threads count (Q, WQ) live on
 * the remote queue's line instead (remote_queue_t), and bthread_get_stats adds them. */
#define COUNTER_FIELD_W(name) _Atomic uint64_t name;
#define COUNTER_FIELD_Q(name)
#define COUNTER_FIELD_WQ(name) COUNTER_FIELD_W(name)
#define COUNTER_FIELD(name, kept, what) COUNTER_FIELD_##kept(name)
typedef struct worker_stats {
    BTHREAD_WORKER_COUNTERS(COUNTER_FIELD)
} worker_stats_t;

/* Statistics: only the owner writes, so a relaxed load + store is an exact increment. */
#define STAT_ADD(w, field, n)                                                             \
    atomic_store_explicit(&(w)->st.field,                                                 \
                          atomic_load_explicit(&(w)->st.field, memory_order_relaxed) + (n), \
                          memory_order_relaxed)
#define STAT_INC(w, field) STAT_ADD(w, field, 1)

#if SB_TSAN
_Atomic int sb_tsan_fence_word; /* atomics.h */
#endif

/* The worker running on this thread, NULL on any other thread. */
static __thread worker_t *tls_worker;

/* Read tls_worker anew.  A task may resume on another worker after any switch, and a
 * compiler may keep a thread-local address across a call: this accessor cannot be
 * folded or moved (brpc has the same guard for its thread-locals). */
static __attribute__((noinline)) worker_t *this_worker(void)
{
    worker_t *w = tls_worker;
    __asm__ __volatile__("" : "+r"(w));
    return w;
}


/* ======================================================================================
 * 1. The task pool.  Slots live in chunks that are never freed before shutdown; a task's
 * id is version << 32 | slot.  join_bx.value holds the live incarnation's version; it
 * moves to version + 1 when the task ends, so a stale id never reaches a reused slot.
 * Versions never wrap: a slot that has handed out version 2^32 - 1 is retired (its
 * join_bx.value becomes VERSION_RETIRED and it never returns to a free list), so no id
 * is ever issued twice, at the price of 128 bytes per 4 billion tasks on one slot.  A
 * slot's versions also outlive bthread_shutdown: each chunk has a record of its slots'
 * next versions (`next_version`), written at shutdown and read when the chunk is made
 * again, so an id from before a restart stays stale.
 * ==================================================================================== */
#define SLOTS_PER_CHUNK 16384u /* 2 MiB of 128-byte slots: one huge page (chunk_alloc) */
#define MAX_CHUNKS 256u /* 4M tasks alive at once */
#define WORKER_FREE_MAX 256u
#define FREE_BATCH (WORKER_FREE_MAX / 2) /* slots a full worker cache hands back at once */
#define FREE_CACHE_REFILL 32u /* single slots a cache takes from the shared list per lock */

/* Free slots wait under pool.lock in three forms: single slots (pool.free, where a new
 * chunk goes), and whole batches of FREE_BATCH that full worker caches handed back, as
 * arrays of slot pointers (pool.arrays) or, when no array could be allocated, as chains
 * through ->next (pool.batches, chained through their first slot's `arg`, which
 * start_task overwrites).  A cache refills with one batch in O(1).
 *
 * Why arrays: the slots of a batch were last written by the worker that ended their
 * tasks, and a foreign submitter takes them one per start.  Down a chain, each slot's
 * line must arrive before the next slot is known: one cross-core miss per start, in
 * series, most of the submitter's time per task.  From an array it prefetches the
 * slots SLOT_PREFETCH_AHEAD starts ahead, so the misses overlap. */
#define SLOT_PREFETCH_AHEAD 8u
typedef struct slot_array {
    struct slot_array *next; /* on pool.arrays or pool.spare */
    struct slot_array *all;  /* every array made (pool.all), freed at shutdown */
    task_t *slot[FREE_BATCH];
} slot_array_t;

static _Atomic(task_t *) chunks[MAX_CHUNKS];
static _Atomic unsigned pool_generation; /* bumped by shutdown: foreign caches go stale */
static _Atomic uint32_t nchunks;
/* Per chunk, the next version of each of its slots (0: retired) as of the last
 * bthread_shutdown, or NULL for a chunk never made.  Allocated with the chunk (a chunk
 * that cannot have one is not made), written by pool_free_all (under ctl.lock, no task
 * alive), read by pool_grow and by core_task_of for a chunk not made again since the
 * restart (relaxed: an id from before the shutdown is compared with a number the
 * shutdown wrote before the caller could have learnt that the id ended). */
static _Atomic(_Atomic uint32_t *) next_version[MAX_CHUNKS];

#define VERSION_RETIRED 0u /* join_bx.value of a retired slot: no id holds version 0 */
/* The first version of a slot in a chunk made for the first time: 1, or, for the tests
 * of retirement, SCHEDBENCH_TEST_FIRST_VERSION (so a test reaches the end of a slot's
 * versions in a few starts instead of 2^32). */
static uint32_t first_version(void)
{
    const char *e = getenv("SCHEDBENCH_TEST_FIRST_VERSION");
    unsigned long v = e ? strtoul(e, NULL, 0) : 1;
    return v >= 1 && v <= UINT32_MAX ? (uint32_t)v : 1;
}

/* The lock and what it guards share a line of their own (no other global's writes). */
static struct {
    alignas(CACHELINE) spinlock_t lock;
    task_t *free;         /* under lock */
    task_t *batches;      /* under lock */
    slot_array_t *arrays; /* under lock: full arrays */
    slot_array_t *spare;  /* under lock: empty arrays */
    slot_array_t *all;    /* under lock */
} pool = {.lock = SPINLOCK_INIT};

/* A chunk's memory, zeroed, aligned to 2 MiB and offered to the kernel for a
 * transparent huge page (THP is on for madvise here): a million slots then cost 64
 * first-touch faults instead of 32768 (a first touch costs the fault more than the
 * zeroing).  From malloc, not a mapping of our own: trimming one to the alignment
 * takes one munmap or two, as the kernel placed it, and the simulation charges each,
 * so two simulated runs would differ.  NULL: no memory. */
#define CHUNK_BYTES ((size_t)SLOTS_PER_CHUNK * sizeof(task_t))
#define CHUNK_ALIGN ((size_t)2 << 20)
static task_t *chunk_alloc(void)
{
    /* C11's aligned_alloc wants a multiple of the alignment (ASan checks it) */
    task_t *c = aligned_alloc(CHUNK_ALIGN, (CHUNK_BYTES + CHUNK_ALIGN - 1) & ~(CHUNK_ALIGN - 1));
    if (c) {
        (void)madvise(c, CHUNK_BYTES, MADV_HUGEPAGE); /* a hint: without it, small pages */
        memset(c, 0, CHUNK_BYTES);
    }
    return c;
}

static bool pool_grow(void) /* under pool.lock */
{
    uint32_t c = atomic_load_explicit(&nchunks, memory_order_relaxed);
    if (c == MAX_CHUNKS)
        return false;
    /* relaxed: written by a shutdown, which every start-up is ordered after (ctl.lock
     * and core_ensure_started's acquire, which every caller of pool_grow passed) */
    _Atomic uint32_t *saved = atomic_load_explicit(&next_version[c], memory_order_relaxed);
    if (!saved) {
        if (!(saved = malloc(SLOTS_PER_CHUNK * sizeof *saved)))
            return false;
        uint32_t first = first_version();
        for (uint32_t i = 0; i < SLOTS_PER_CHUNK; i++)
            atomic_init(&saved[i], first);
        atomic_store_explicit(&next_version[c], saved, memory_order_release);
    }
    task_t *chunk = chunk_alloc();
    if (!chunk)
        return false;
    for (uint32_t i = SLOTS_PER_CHUNK; i-- > 0;) {
        task_t *t = &chunk[i];
        uint32_t next = atomic_load_explicit(&saved[i], memory_order_relaxed);
        t->slot = c * SLOTS_PER_CHUNK + i;
        butex_init_embedded(&t->join_bx, (int)next); /* free: the version it hands out next */
        /* task_alloc hands out version + 1; a retired slot's last one was UINT32_MAX */
        atomic_init(&t->version, next - 1);
        if (next == VERSION_RETIRED)
            continue; /* never free again */
        link_set(t, pool.free);
        pool.free = t;
    }
    atomic_store_explicit(&chunks[c], chunk, memory_order_relaxed);
    /* release: a reader that sees the new count sees the chunk pointer and its slots */
    atomic_store_explicit(&nchunks, c + 1, memory_order_release);
    return true;
}

/* Every thread that starts tasks keeps free slots of its own (no lock): a list, which a
 * worker's ended tasks join, and the rest of an array taken from the pool.  A worker
 * also keeps an empty array (`spare`) to hand its next batch back in. */
struct free_cache {
    task_t *head;       /* the list */
    unsigned n;         /* slots on the list */
    slot_array_t *arr;  /* slots arr->slot[next ..] are ours; NULL: none */
    unsigned next;
    slot_array_t *spare;
};

static inline bool cache_empty(const struct free_cache *fc)
{
    return !fc->head && !(fc->arr && fc->next < FREE_BATCH);
}

/* Refill an empty cache: one whole batch (an array, else a chain), else up to
 * FREE_CACHE_REFILL single slots.  An array used up goes back as a spare.  False when
 * the pool cannot grow. */
static bool cache_refill(struct free_cache *fc)
{
    spin_lock(&pool.lock);
    if (fc->arr) {
        fc->arr->next = pool.spare;
        pool.spare = fc->arr;
        fc->arr = NULL;
    }
    task_t *b = pool.batches;
    if (pool.arrays) {
        fc->arr = pool.arrays;
        pool.arrays = fc->arr->next;
        fc->next = 0;
    } else if (b) {
        pool.batches = b->arg;
        fc->head = b;
        fc->n = FREE_BATCH;
    } else if (pool.free || pool_grow()) {
        for (unsigned k = 0; pool.free && k < FREE_CACHE_REFILL; k++) {
            task_t *x = pool.free;
            pool.free = link_get(x);
            link_set(x, fc->head);
            fc->head = x;
            fc->n++;
        }
    }
    spin_unlock(&pool.lock);
    if (fc->arr) /* the first slots' misses overlap from the start */
        for (unsigned k = 0; k < SLOT_PREFETCH_AHEAD; k++)
            __builtin_prefetch(fc->arr->slot[k], 1);
    return !cache_empty(fc);
}

static task_t *task_alloc(struct free_cache *fc)
{
    if (cache_empty(fc) && !cache_refill(fc))
        return NULL;
    task_t *t = fc->head;
    if (t) {
        fc->head = link_get(t);
        fc->n--;
        /* A worker's own list: lines it wrote, usually; else fetch the next one now */
        if (fc->head)
            __builtin_prefetch(fc->head, 1);
    } else {
        t = fc->arr->slot[fc->next++];
        if (fc->next + SLOT_PREFETCH_AHEAD - 1 < FREE_BATCH)
            __builtin_prefetch(fc->arr->slot[fc->next + SLOT_PREFETCH_AHEAD - 1], 1);
    }
    /* The next version from the line we write anyway, not from join_bx's: a free slot's
     * join_bx.value already is it (task_end, pool_grow), and leaving that line alone
     * keeps it in the cache of the worker that will end this task (an ended task's
     * exchange on it missed, cross-core, for every foreign start). */
    uint32_t v = atomic_load_explicit(&t->version, memory_order_relaxed) + 1; /* < 2^32:
                                                     retired slots are never free */
    atomic_store_explicit(&t->version, v, memory_order_relaxed); /* see core.h */
    link_set(t, NULL);
    return t;
}

/* Owner of fc only. */
static void task_free(struct free_cache *fc, task_t *t)
{
    link_set(t, fc->head);
    fc->head = t;
    if (++fc->n <= WORKER_FREE_MAX)
        return;
    /* too many: hand FREE_BATCH back to the shared pool as one batch (the walk touches
     * only lines this worker just wrote) */
    slot_array_t *a = fc->spare, *made = NULL;
    if (!a)
        a = made = malloc(sizeof *a);
    task_t *first = fc->head, *last = first;
    if (a) {
        for (unsigned k = 0; k < FREE_BATCH; k++) {
            a->slot[k] = fc->head;
            fc->head = link_get(fc->head);
        }
    } else { /* no memory for an array: a chain */
        for (unsigned k = 1; k < FREE_BATCH; k++)
            last = link_get(last);
        fc->head = link_get(last);
        link_set(last, NULL);
    }
    fc->n -= FREE_BATCH;
    spin_lock(&pool.lock);
    if (made) {
        made->all = pool.all;
        pool.all = made;
    }
    if (a) {
        a->next = pool.arrays;
        pool.arrays = a;
        fc->spare = pool.spare;
        if (fc->spare)
            pool.spare = fc->spare->next;
    } else {
        first->arg = pool.batches;
        pool.batches = first;
    }
    spin_unlock(&pool.lock);
}

/* Non-worker threads only allocate (tasks end on workers), from a thread-local cache
 * (refilled as above); it is dropped when the pool was freed by a shutdown since. */
static __thread struct free_cache foreign_cache;
static __thread unsigned foreign_generation;

static struct free_cache *foreign_free_cache(void)
{
    /* relaxed: a shutdown and the next start-up are ordered by ctl.lock and the
     * acquire in core_ensure_started, which every caller passed */
    unsigned gen = atomic_load_explicit(&pool_generation, memory_order_relaxed);
    if (foreign_generation != gen) {
        foreign_cache = (struct free_cache){0}; /* its array, if any, was freed too */
        foreign_generation = gen;
    }
    return &foreign_cache;
}

static task_t *slot_task(uint32_t slot)
{
    uint32_t c = slot / SLOTS_PER_CHUNK;
    /* acquire: pairs with pool_grow's release, so the chunk pointer is set */
    if (c >= atomic_load_explicit(&nchunks, memory_order_acquire))
        return NULL;
    return &atomic_load_explicit(&chunks[c], memory_order_relaxed)[slot % SLOTS_PER_CHUNK];
}

/* Versions of a slot are handed out in order (1, 2, ..., 2^32 - 1, never wrapping);
 * join_bx.value is the live version, or, while the slot is free, the next one it will
 * hand out, or VERSION_RETIRED once every version was.  So an id whose version is ahead
 * of the value was never handed out; one equal to it is alive if t->version (the latest
 * incarnation) equals it too, was never handed out if t->version is older (the slot is
 * free), and has ended if t->version is newer (it ended and the slot was reused between
 * our two loads).  A slot past every chunk ever made, or in a chunk not made since a
 * restart, is judged by the chunk's record of next versions (next_version), or is
 * never-issued when the chunk was never made. */
task_t *core_task_of(bthread_t tid, bool *invalid)
{
    uint32_t version = (uint32_t)(tid >> 32), slot = (uint32_t)tid;
    task_t *t = version ? slot_task(slot) : NULL;
    bool never = true;
    if (t) {
        /* acquire: pairs with the release in task_end; alive iff the versions match */
        uint32_t now = (uint32_t)atomic_load_explicit(&t->join_bx.value, memory_order_acquire);
        if (now == VERSION_RETIRED) {
            never = false; /* every version was handed out, and every one has ended */
        } else if (now != version) {
            never = version > now; /* ahead of the slot, else ended */
        } else {
            /* relaxed: monotonic per slot; an id's holder got it after task_alloc stored
             * it.  Read only here: an ended id (a join after the end) costs one line */
            uint32_t latest = atomic_load_explicit(&t->version, memory_order_relaxed);
            if (latest == version) {
                if (invalid)
                    *invalid = false;
                return t;
            }
            never = latest < version; /* free, not yet issued */
        }
    } else if (version && slot / SLOTS_PER_CHUNK < MAX_CHUNKS) {
        /* acquire: pairs with pool_grow's release of a new record */
        _Atomic uint32_t *saved = atomic_load_explicit(&next_version[slot / SLOTS_PER_CHUNK],
                                                       memory_order_acquire);
        if (saved) { /* a chunk not made again since a restart: older ids are stale */
            uint32_t next = atomic_load_explicit(&saved[slot % SLOTS_PER_CHUNK],
                                                 memory_order_relaxed);
            never = next != VERSION_RETIRED && version >= next;
        }
    }
    if (invalid)
        *invalid = never;
    return NULL;
}

task_t *core_task_lock(bthread_t tid, bool *invalid)
{
    task_t *t = core_task_of(tid, invalid);
    if (!t)
        return NULL;
    spin_lock(&t->wait_lock);
    /* relaxed: task_end moves join_bx.value under wait_lock, which we hold.  The id was
     * alive above, so the value still equal to its version means it still is (versions
     * never repeat) */
    if ((uint32_t)atomic_load_explicit(&t->join_bx.value, memory_order_relaxed) ==
        (uint32_t)(tid >> 32))
        return t;
    spin_unlock(&t->wait_lock); /* it ended in between */
    return NULL;
}

static unsigned long live_tasks(void)
{
    unsigned long live = 0;
    uint32_t n = atomic_load_explicit(&nchunks, memory_order_acquire);
    for (uint32_t c = 0; c < n; c++) {
        task_t *chunk = atomic_load_explicit(&chunks[c], memory_order_relaxed);
        for (uint32_t i = 0; i < SLOTS_PER_CHUNK; i++)
            live += (uint32_t)atomic_load_explicit(&chunk[i].join_bx.value,
                                                   memory_order_acquire) ==
                    atomic_load_explicit(&chunk[i].version, memory_order_relaxed);
    }
    return live;
}

/* Under ctl.lock, every task ended: record each slot's next version (next_version, so
 * the slot's ids stay stale after the restart) and free the slots. */
static void pool_free_all(void)
{
    atomic_fetch_add_explicit(&pool_generation, 1, memory_order_relaxed);
    uint32_t n = atomic_load_explicit(&nchunks, memory_order_relaxed);
    atomic_store_explicit(&nchunks, 0, memory_order_relaxed);
    for (uint32_t c = 0; c < n; c++) {
        task_t *chunk = atomic_load_explicit(&chunks[c], memory_order_relaxed);
        _Atomic uint32_t *saved = atomic_load_explicit(&next_version[c], memory_order_relaxed);
        for (uint32_t i = 0; i < SLOTS_PER_CHUNK; i++)
            /* relaxed: every task ended before shutdown found no live task */
            atomic_store_explicit(&saved[i],
                                  (uint32_t)atomic_load_explicit(&chunk[i].join_bx.value,
                                                                 memory_order_relaxed),
                                  memory_order_relaxed);
        free(chunk);
    }
    pool.free = NULL;
    pool.batches = NULL;
    for (slot_array_t *a = pool.all, *next; a; a = next) {
        next = a->all;
        free(a);
    }
    pool.arrays = pool.spare = pool.all = NULL;
}

/* ======================================================================================
 * 2. Remote queues: one per worker, for tasks from non-workers (placed round-robin over
 * the workers), yields, and tasks that did not fit a full run queue; remote_queue.h has
 * the queue and why it never loses a task.  Workers check their own remote queue after
 * their run queue, and every 64th time before it, so nothing waits forever behind a busy
 * LIFO queue; thieves check other workers' remote queues after their run queues.
 * ==================================================================================== */

/* ======================================================================================
 * 3. The workers.  policy.h binds the variant's hooks (through variant.h) and declares
 * the services the policy components call back; the worker, the array of workers and
 * those services follow.
 * ==================================================================================== */
#include "policy.h"

struct worker {
    /* -- owner only: touched by this worker's thread alone -------------------------- */
    alignas(CACHELINE) task_t *cur;  /* running task; &main_task in the main loop */
    void (*remained)(void *);        /* runs after the next switch */
    void *remained_arg;
    task_t *inline_next;             /* a task for the main loop to run on its stack */
    uint64_t rng;
    unsigned tick;
    unsigned runnext_tick; /* searches that found the runnext slot full (find_local) */
    bool last_look;        /* in find_work_last_look: remote queues wait for their lock */
    unsigned yield_tick; /* yields that found nothing ready here (bthread_yield) */
    int index;
    struct free_cache free_slots;
    void *main_lo;                   /* the pthread stack (sanitizer bookkeeping) */
    size_t main_size;
    void *main_tsan_fiber;
    VICTIM_STATE_T victims;
    task_t main_task;                /* the worker's own (pthread) context */
    task_t scratch;                  /* "from" of a switch away from an ended task, whose
                                        slot may already be reused: never resumed */
    /* -- statistics: written by the owner, read by bthread_get_stats ------------------ */
    alignas(CACHELINE) worker_stats_t st;
    /* -- shared with thieves and submitters ------------------------------------------ */
    alignas(CACHELINE) _Atomic(task_t *) runnext; /* a woken task this worker runs next */
    _Atomic bool thread_blocked; /* its thread is blocked in a wait (core_worker_blocks) */
    RQ_T rq;
    remote_queue_t remote;
    pthread_t thread;
};

/* The workers live in one array of BTHREAD_MAX_CONCURRENCY entries that never moves
 * while the scheduler runs, so bthread_setconcurrency can add workers to a running
 * scheduler: it sets up the new entries, starts their threads, and only then raises
 * nworkers (release).  Anything that reads nworkers (acquire) sees set-up workers, each
 * with a thread.  Entries past nworkers are untouched memory (their pages are never
 * written), so the array costs address space, not memory. */
static struct control {
    alignas(CACHELINE) pthread_mutex_t lock; /* start-up, growth and shutdown */
    _Atomic int running;  /* 1 while workers run */
    _Atomic bool stopping;
    _Atomic int nworkers; /* workers with a thread; only grows while running */
    int configured; /* bthread_setconcurrency before start; 0 = number of CPUs */
    worker_t *workers; /* [BTHREAD_MAX_CONCURRENCY] */
} ctl = {.lock = PTHREAD_MUTEX_INITIALIZER};

static inline __attribute__((unused)) int worker_index(const worker_t *w) { return w->index; }
/* acquire: pairs with the release that published a new worker (start_workers) */
static inline __attribute__((unused)) int worker_count(void) { return atomic_load_explicit(&ctl.nworkers, memory_order_acquire); }
static inline __attribute__((unused)) worker_t *worker_at(int i) { return &ctl.workers[i]; }
static inline __attribute__((unused)) bool core_stopping(void) { return atomic_load_explicit(&ctl.stopping, memory_order_acquire); }
static inline __attribute__((unused)) void stat_park(worker_t *w) { STAT_INC(w, parks); }
static inline __attribute__((unused)) void stat_woken(worker_t *w) { STAT_INC(w, woken); }
static inline __attribute__((unused)) uint64_t stat_tasks_run(worker_t *w)
{
    return atomic_load_explicit(&w->st.tasks_run, memory_order_relaxed);
}
/* park: w deactivated (its owner counts); else w was reactivated, counted by whichever
 * thread brought it back (an atomic add: the counter has more than one writer). */
static inline __attribute__((unused)) void stat_elastic(worker_t *w, bool park)
{
    if (park)
        STAT_INC(w, elastic_parks);
    else
        atomic_fetch_add_explicit(&w->st.elastic_wakes, 1, memory_order_relaxed);
}
static inline __attribute__((unused)) void stat_wakeup(void)
{
    worker_t *w = tls_worker;
    if (w)
        STAT_INC(w, wakeups);
}

static inline __attribute__((unused)) uint64_t worker_random(worker_t *w) /* xorshift64* */
{
    w->rng ^= w->rng >> 12;
    w->rng ^= w->rng << 25;
    w->rng ^= w->rng >> 27;
    return w->rng * 2685821657736338717ull;
}

static inline __attribute__((unused)) void remote_push(worker_t *w, task_t *t) { rmq_push(&w->remote, t); }

/* Onto the remote queue of a worker the caller placed t on (not the caller's own). */
static inline void push_to(worker_t *target, task_t *t)
{
    remote_push(target, t);
    IDLE_PUSHED(target);
}

static inline __attribute__((unused)) bool worker_remote_maybe(worker_t *w) { return rmq_maybe(&w->remote); }

/* A task that did not fit w's run queue waits on w's remote queue instead. */
static inline __attribute__((unused)) void spill(worker_t *w, task_t *t) { remote_push(w, t); }

/* Each non-worker thread goes round-robin over the workers from a start of its own:
 * new threads take consecutive starts, so P threads that start one task each (a request
 * per thread, the article's one submitter per worker) land on P different workers
 * instead of all on worker 0.  Workers the idling keeps inactive (IDLE_INACTIVE:
 * elastic's, parked for good) are skipped. */
static _Atomic unsigned submit_rr_first;
static __thread unsigned tls_submit_rr; /* this thread's next target + 1; 0: none yet */
static inline worker_t *next_rr(void)
{
    unsigned n = (unsigned)worker_count(), i = tls_submit_rr;
    if (i == 0) /* relaxed: it only spreads threads, and orders nothing */
        i = atomic_fetch_add_explicit(&submit_rr_first, 1, memory_order_relaxed) % n + 1;
    else if (i > n) /* a compare, not `%`: no division per task on the submitter */
        i = 1;
    tls_submit_rr = i + 1;
    return &ctl.workers[i - 1];
}

static inline __attribute__((unused)) worker_t *remote_target_rr(void)
{
    worker_t *t = next_rr();
    for (int k = 1; k < worker_count() && IDLE_INACTIVE(t); k++)
        t = next_rr();
    return t;
}

static inline __attribute__((unused)) long run_queue_size(worker_t *w) { return RQ_SIZE(w); }

/* ======================================================================================
 * 4. Making a task ready: where it goes (the variant's placement), who is woken for it,
 * the unsignalled tasks that wait for bthread_flush, and the runnext slot.
 * ==================================================================================== */

/* Tasks this thread made ready without a wake-up (BTHREAD_NOSIGNAL), for
 * bthread_flush(): brpc's _num_nosignal / _remote_num_nosignal.  They are queued at once
 * (any worker that looks runs them); only the wake-up waits.  A non-worker's unsignalled
 * tasks all go to one worker's remote queue (`target`, as brpc's
 * tls_task_group_nosignal), so that one woken worker takes them in batches.  Valid only
 * for the scheduler incarnation `generation` (a shutdown frees the workers). */
static __thread struct unsignalled {
    unsigned n;
    unsigned generation;
    worker_t *target; /* where they wait: NULL = several workers (stealing variants) */
} tls_unsignalled;

static struct unsignalled *unsignalled_now(void)
{
    struct unsignalled *u = &tls_unsignalled;
    /* relaxed: as in foreign_free_cache */
    unsigned gen = atomic_load_explicit(&pool_generation, memory_order_relaxed);
    if (u->generation != gen) {
        u->n = 0;
        u->target = NULL;
        u->generation = gen;
    }
    return u;
}

/* Wake workers for this thread's unsignalled tasks: one wake-up per task, at most one
 * per worker (each wakes one sleeper, if any; with stealing the first woken worker takes
 * a batch and wakes the next when it leaves tasks behind).  Variants without stealing
 * wake the worker that holds them. */
static void flush_unsignalled(struct unsignalled *u)
{
    unsigned n = u->n;
    worker_t *target = u->target;
    u->n = 0;
    u->target = NULL;
    if (!n)
        return;
    worker_t *w = tls_worker;
    if (w) {
        STAT_INC(w, flushes);
        STAT_ADD(w, flushed_tasks, n);
    } else if (target) { /* relaxed: statistics, on the line our pushes already wrote */
        atomic_fetch_add_explicit(&target->remote.flushes, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&target->remote.flushed_tasks, n, memory_order_relaxed);
    }
    if (!STEALING) {
        IDLE_WAKE(target);
        return;
    }
    for (unsigned k = 0; k < n && k < (unsigned)worker_count(); k++)
        IDLE_WAKE(NULL);
}

/* Onto w's own queue (the remote one if full), with no wake-up.  Owner only. */
static inline __attribute__((unused)) void push_own(worker_t *w, task_t *t)
{
    if (!RQ_PUSH(w, t))
        spill(w, t);
}

/* Make a task runnable from the calling thread; signal: wake a worker for it (else it
 * waits for bthread_flush(), or for a worker that looks anyway). */
static void make_ready(worker_t *w, task_t *t, bool signal)
{
#ifdef REMOTE_SUBMIT
    if (!w) { /* the variant places non-workers' tasks itself (and signals as it must) */
        REMOTE_SUBMIT(t);
        return;
    }
#endif
    struct unsignalled *u = NULL;
    worker_t *target;
    if (w) {
        target = SPAWN_TARGET(w);
        if (target != w)
            push_to(target, t);
        else if (!RQ_PUSH(w, t))
            spill(w, t);
    } else {
        u = signal ? NULL : unsignalled_now();
        target = u && u->n && u->target ? u->target : REMOTE_TARGET();
        push_to(target, t);
    }
    if (signal) {
        IDLE_WAKE(STEALING ? NULL : target);
        /* as brpc: a signalled start also signals the unsignalled ones before it */
        if (__builtin_expect(tls_unsignalled.n != 0, 0))
            flush_unsignalled(unsignalled_now());
        return;
    }
    if (!u)
        u = unsignalled_now();
    /* without stealing only `target` can run it: another target's tasks get their
     * wake-up now, so one record per thread suffices */
    if (u->n && u->target != target && (!STEALING || !w))
        flush_unsignalled(u);
    u->target = w && STEALING ? NULL : target;
    u->n++;
}

void bthread_flush(void)
{
    /* acquire: pairs with start_locked's release (the workers array); a thread that
     * made tasks ready passed the same acquire in core_ensure_started */
    if (!atomic_load_explicit(&ctl.running, memory_order_acquire)) {
        tls_unsignalled.n = 0; /* nothing can be pending: the scheduler is not running */
        return;
    }
    flush_unsignalled(unsignalled_now());
}

/* A "remained" callback: requeue the task we left without a wake-up (urgent NOSIGNAL). */
static void ready_unsignalled_cb(void *t) { make_ready(tls_worker, t, false); }

/* Runnext and the watcher: why a woken task is never stranded.
 *
 * A task woken by a butex on a worker goes to that worker's runnext slot (Go's runnext)
 * and, usually, nobody is woken for it: the waker usually blocks soon (a ping-pong, a
 * hand-off, a lock convoy), and then this worker runs the woken task at once, on a warm
 * cache, without a system call.  That is what makes a mutex+cond ping-pong cost under
 * 0.2 us per round trip.  But the waker may instead keep its worker: compute for
 * seconds, sleep in nanosleep, or block in read() on a pipe that the woken task would
 * write (a deadlock).  The woken task must not wait for it while other workers sleep.
 *
 * So some idle worker always keeps an eye on the runnext slots: the idler's watcher.
 * With the parking lot (idle_park.h) at most one parked worker is the watcher: it parks
 * with a timeout (PARK_WATCH_NS) instead of for good, and looks at the runnext slots
 * (runnext_rescue) when it fires.
 * The waker, after its seq_cst exchange into runnext, reads (seq_cst) whether a
 * watcher exists (IDLE_WATCH); if none does and somebody sleeps, it wakes one, which then
 * becomes the watcher.  A watcher leaves the role (seq_cst decrement) before it looks,
 * so either the waker sees the watcher, or the watcher's look sees the slot: the
 * publish / full barrier / check pattern of idle_park.h.  In a steady ping-pong the
 * other worker is the watcher, so a hand-off costs one load of a read-mostly line and
 * no system call; the watcher wakes once per PARK_WATCH_NS.  Spinners (spin, adaptive)
 * search anyway and are the watchers there.
 *
 * Rejected: waking an idle worker at every such wake (brpc's default without NOSIGNAL)
 * made the mutex+cond ping-pong 2.1x slower at 2 workers (butex ping-pong 1.8x; median
 * of 4 alternating rounds against the watcher's ~1.0x, on this 2-core VM); Go's answer,
 * a woken worker that spins a while before it parks, is the adaptive variant's idling
 * policy, and giving it to every parking variant would erase that axis.  The watcher
 * instead bounds the delay (below) and costs nothing per hand-off.
 *
 * A searcher that finds a task in another worker's runnext gives the owner a grace
 * period (runnext_take_stuck): it takes the task only if the owner has neither run it
 * nor switched or ended a task for RUNNEXT_GRACE_NS (Go waits ~3 us the same way), so a
 * healthy hand-off is not stolen from the worker whose cache is warm.  A woken task
 * waits at most PARK_WATCH_NS + RUNNEXT_GRACE_NS while another worker sleeps.
 *
 * Variants that never move a task (STEALING 0: static, affinity) set READY_HOME: a
 * task that ran is made ready again on the worker it last ran on (its home; a timer or
 * an interrupt from elsewhere does not move it either), through that worker's remote
 * queue and a targeted wake, and only a task woken on its own home worker takes the
 * runnext slot there.  The global-queue pool (threadpool) has no runnext at all. */
static void make_ready_again(worker_t *w, task_t *t, bool woken)
{
    if (READY_HOME) {
        worker_t *home = &ctl.workers[t->home];
        if (home != w) {
            push_to(home, t);
            IDLE_WAKE(home);
            return;
        }
    }
    if (!RUNNEXT || !woken || !w) {
        if (READY_HOME) /* w is t's home: its own queue, not a placement decision */
            push_own(w, t);
        else
            make_ready(w, t, true);
        return;
    }
    /* seq_cst: publishes t to a thief's exchange and acquires the task we displace;
     * ordered before IDLE_WATCH's loads (see above) */
    task_t *old = atomic_exchange_explicit(&w->runnext, t, memory_order_seq_cst);
    if (old && READY_HOME)
        push_own(w, old); /* only w's own tasks enter w's slot there */
    else if (old)
        make_ready(w, old, true);
    if (STEALING)
        IDLE_WATCH();
}

/* A task that ran before is runnable again (requeued, interrupted, or not queued by a
 * wait): into the calling worker's queue (READY_HOME: its home worker's). */
void core_ready(task_t *t) { make_ready_again(tls_worker, t, false); }

/* A task woken by a butex: the runnext slot (see above). */
void core_ready_woken(task_t *t) { make_ready_again(tls_worker, t, true); }

/* ======================================================================================
 * 5. The switch path.
 * ==================================================================================== */
static void task_runner(intptr_t unused);
static task_t *next_or_main(worker_t *w);

static void run_remained(worker_t *w)
{
    if (w->remained) {
        void (*fn)(void *) = w->remained;
        w->remained = NULL;
        fn(w->remained_arg);
    }
}

static enum stack_class class_of(const task_t *t)
{
    switch (t->stack_type) {
    case BTHREAD_STACKTYPE_SMALL: return STACK_SMALL;
    case BTHREAD_STACKTYPE_LARGE: return STACK_LARGE;
    default: return STACK_NORMAL;
    }
}

/* t starts or resumes on w. */
static inline void switched_in(worker_t *w, task_t *t)
{
    if (READY_HOME)
        t->home = w->index;
}

/* Give t a stack and a fresh context on it.  False when no stack can be had. */
static bool assign_stack(task_t *t)
{
    sb_stack_t *s = stack_get(class_of(t));
    if (!s)
        return false;
    fiber_asan_fresh_stack(s->limit, s->size);
    fiber_tsan_destroy(s->tsan_fiber); /* a fresh context gets a fresh fiber */
    s->tsan_fiber = fiber_tsan_create();
    t->stack = s;
    t->ctx = bthread_make_fcontext(s->top, s->size, task_runner);
    return true;
}

/* Tasks that found no stack (memory exhausted) wait here for one, FIFO.  A task never
 * runs on a worker's own stack unless it asked to (BTHREAD_STACKTYPE_PTHREAD): there its
 * first blocking call would block the worker, and enough of them deadlock the program.
 * A waiting task is made runnable again
 *   - by each stack an ending task gives back (release_stack_cb), on that worker, where
 *     the stack is now cached;
 *   - every STACKLESS_RETRY_NS by the timer thread (stackless_retry), one at a time, so
 *     memory freed elsewhere, or a stack cached on another worker, is found.
 * And it never waits on a stack that no task holds: each class keeps a reserve stack,
 * made at start-up (stack_reserve) and handed out only when no other can be made, so
 * while no task holds a stack the reserve is free and the next task gets it.  While any
 * task waits, bthread_start_* fails with EAGAIN, so a program learns of the exhaustion.
 * (Before the reserve, a program whose first task found the address space exhausted by
 * its worker threads' arenas waited forever in its join.) */
#define STACKLESS_RETRY_NS 10000000 /* 10 ms */
static struct {
    alignas(CACHELINE) spinlock_t lock;
    task_t *head, *tail;  /* under lock */
    _Atomic int n;        /* read without the lock as a hint */
    _Atomic bool retry_armed; /* a stackless_retry timer is set */
} stackless = {.lock = SPINLOCK_INIT};

static task_t *stackless_pop(void);

/* The timer thread: one waiting task goes back to a queue (a non-worker's start), and
 * the timer is set again while others wait. */
static void stackless_retry(void *unused)
{
    (void)unused;
    atomic_store_explicit(&stackless.retry_armed, false, memory_order_relaxed);
    task_t *t = stackless_pop();
    if (t)
        make_ready(NULL, t, true); /* it may fail again: then it re-arms the timer */
    /* relaxed hint: a task pushed meanwhile arms the timer itself */
    if (atomic_load_explicit(&stackless.n, memory_order_relaxed) &&
        !atomic_exchange_explicit(&stackless.retry_armed, true, memory_order_relaxed)) {
        struct timespec at = sb_ns_to_ts(sb_clock_ns(CLOCK_REALTIME) + STACKLESS_RETRY_NS);
        if (!timer_add(&at, stackless_retry, NULL))
            atomic_store_explicit(&stackless.retry_armed, false, memory_order_relaxed);
    }
}

static void stackless_push(task_t *t)
{
    static _Atomic int warned;
    if (!atomic_exchange_explicit(&warned, 1, memory_order_relaxed))
        fprintf(stderr, "schedbench: no stack for a bthread (%s); it waits for a stack to be "
                        "freed, and new bthreads fail with EAGAIN meanwhile\n", strerror(errno));
    t->next = NULL;
    spin_lock(&stackless.lock);
    if (stackless.tail)
        stackless.tail->next = t;
    else
        stackless.head = t;
    stackless.tail = t;
    atomic_fetch_add_explicit(&stackless.n, 1, memory_order_relaxed);
    spin_unlock(&stackless.lock);
    /* relaxed: the flag only keeps one timer set at a time */
    if (!atomic_exchange_explicit(&stackless.retry_armed, true, memory_order_relaxed)) {
        struct timespec at = sb_ns_to_ts(sb_clock_ns(CLOCK_REALTIME) + STACKLESS_RETRY_NS);
        if (!timer_add(&at, stackless_retry, NULL)) /* no memory: the next push tries */
            atomic_store_explicit(&stackless.retry_armed, false, memory_order_relaxed);
    }
}

static task_t *stackless_pop(void)
{
    /* relaxed hint: a push we miss is retried by the next stack released */
    if (!atomic_load_explicit(&stackless.n, memory_order_relaxed))
        return NULL;
    spin_lock(&stackless.lock);
    task_t *t = stackless.head;
    if (t) {
        stackless.head = t->next;
        if (!stackless.head)
            stackless.tail = NULL;
        t->next = NULL;
        atomic_fetch_sub_explicit(&stackless.n, 1, memory_order_relaxed);
    }
    spin_unlock(&stackless.lock);
    return t;
}

static void release_stack_cb(void *s)
{
    stack_put(s);
    task_t *t = stackless_pop();
    if (t)
        make_ready(this_worker(), t, true);
}

/* t's AddressSanitizer fake-stack slot for fiber.h (NULL in other builds: no field). */
static inline void **asan_save(task_t *t)
{
#if SB_ASAN
    return &t->asan_fake_stack;
#else
    (void)t;
    return NULL;
#endif
}

/* Switch from the running context to `to`.  `dying`: the context we leave never runs
 * again (its stack is being released). */
static void jump_to(worker_t *w, task_t *from, task_t *to, bool dying)
{
    const void *lo = to->stack ? to->stack->limit : w->main_lo;
    size_t size = to->stack ? to->stack->size : w->main_size;
    fiber_asan_start(dying ? NULL : asan_save(from), lo, size);
    fiber_tsan_switch(to->stack ? to->stack->tsan_fiber : w->main_tsan_fiber);
    bthread_jump_fcontext(&from->ctx, to->ctx, 0, false);
    fiber_asan_finish(asan_save(from));
}

/* Run `next` on w instead of the current context.  Returns when the current context is
 * resumed (perhaps on another worker). */
static void sched_to(worker_t *w, task_t *next, bool dying)
{
    task_t *cur = w->cur;
    while (!next->stack && next != &w->main_task && !assign_stack(next)) {
        /* No stack at all (memory exhausted): it waits for one (see stackless) */
        stackless_push(next);
        next = next_or_main(w);
        if (next == cur) {
            run_remained(w);
            return;
        }
    }
    /* this thread's errno, read before the switch: the plain (foldable) accessor will do;
     * after it, the thread may be another, and `errno` is bthread.h's non-foldable one */
    cur->saved_errno = *__errno_location();
    w->cur = next;
    switched_in(w, next);
    STAT_INC(w, switches);
    jump_to(w, cur, next, dying);
    /* resumed */
    w = this_worker();
    run_remained(w); /* may make system calls: restore errno after it */
    errno = cur->saved_errno;
}

/* The next context for w: a task if one is ready, else the main loop (which idles). */
static task_t *switch_target(worker_t *w, task_t *t)
{
    if (!t)
        return &w->main_task;
    if (t->stack_type == BTHREAD_STACKTYPE_PTHREAD) { /* runs on the main stack */
        w->inline_next = t;
        return &w->main_task;
    }
    return t;
}

static task_t *next_or_main(worker_t *w)
{
    return switch_target(w, find_work(w));
}

/* Everything that ends a task except leaving its stack.  Returns the worker it ends on:
 * a key destructor may block, and the task resume on another worker. */
static worker_t *task_end(worker_t *w, task_t *t)
{
    if (t->keytable) {
        key_run_destructors(t);
        w = this_worker();
    }
    t->fn = NULL;
    /* counted before the end is published: a joiner that returns sees the count (the
     * version store below releases it), so a test may read the stats after a join */
    STAT_INC(w, tasks_run);
    uint32_t v = atomic_load_explicit(&t->version, memory_order_relaxed);
    uint32_t next = v == UINT32_MAX ? VERSION_RETIRED : v + 1; /* see section 1 */
    /* The version moves under wait_lock: bthread_stop and bthread_interrupt check it and
     * write the flags under the lock (core_task_lock), so they either reach this
     * incarnation before it ends (the flags are reset below) or see it ended, never the
     * slot's next task; and bthread_join announces itself under it, so either we count
     * the joiner here and wake it, or it sees the new version and does not wait.  The
     * lock's one RMW is the end's only locked instruction (no store-load fence: the
     * critical sections order both sides, under qemu-user's aarch64 too).  release:
     * a joiner's acquire load of the new version sees the task's effects (and the count
     * above); most tasks have no joiner and make no wake call. */
    spin_lock(&t->wait_lock);
    atomic_store_explicit(&t->join_bx.value, (int)next, memory_order_release);
    const int joiners = atomic_load_explicit(&t->joiners, memory_order_relaxed);
    spin_unlock(&t->wait_lock);
    if (joiners)
        butex_wake_all(&t->join_bx);
    /* reset the run-time fields for the slot's next task here, where the line is local
     * (relaxed: the slot's next owner gets it through the free list's ordering; a
     * stopper's flag writes came before our unlock above, so these land after them) */
    atomic_store_explicit(&t->interrupted, false, memory_order_relaxed);
    atomic_store_explicit(&t->stopped, false, memory_order_relaxed);
    atomic_store_explicit(&t->joiners, 0, memory_order_relaxed);
    if (next != VERSION_RETIRED)
        task_free(&w->free_slots, t);
    return w;
}

/* Entry of every stack.  A stack may run several tasks in a row: when a task ends and
 * the next one has no stack yet and wants this size, it takes this stack over without
 * a switch (the loop below). */
static void task_runner(intptr_t unused)
{
    (void)unused;
    fiber_asan_finish(NULL); /* first arrival on this stack */
    worker_t *w = tls_worker;
    run_remained(w);
    for (;;) {
        task_t *t = w->cur;
        t->fn(t->arg);
        w = this_worker();
        sb_stack_t *s = t->stack;
        w = task_end(w, t);
        task_t *next = next_or_main(w);
        if (next != &w->main_task && !next->stack && class_of(next) == s->cls) {
            next->stack = s; /* hand the stack over: no switch, no allocation */
            switched_in(w, next);
            w->cur = next;
            continue;
        }
        w->remained = release_stack_cb;
        w->remained_arg = s;
        w->cur = &w->scratch; /* t's slot is free: save nothing into it */
        sched_to(w, next, true); /* never returns */
        abort();
    }
}

/* ======================================================================================
 * 6. Finding work, and the worker's main loop.
 * ==================================================================================== */
/* A batch from `from`'s remote queue (our own, or a victim's): the first task is
 * returned, the rest go to our run queue, where thieves can still reach them.  Tasks
 * left behind the batch get a wake-up, as a producer's would (section 2). */
#define REMOTE_BATCH 16      /* the owner's batch: one try-lock for up to 16 tasks */
#define REMOTE_STEAL_BATCH 8 /* a thief's: it leaves the owner some */
_Static_assert(REMOTE_STEAL_BATCH <= REMOTE_BATCH, "one array holds either batch");
static task_t *remote_take_batch(worker_t *self, worker_t *from, unsigned max)
{
    task_t *batch[REMOTE_BATCH];
    bool left;
    unsigned n = rmq_take(&from->remote, max, batch, &left, self->last_look);
    if (!n)
        return NULL;
    /* every task's lines at once: the first was written on another core, the others
     * (written when it ends) were last touched when the slot's previous task ended or
     * was joined; the misses overlap here instead of stalling each task in turn */
    for (unsigned i = 0; i < n; i++)
        for (size_t off = 0; off <= offsetof(task_t, join_bx); off += CACHELINE)
            __builtin_prefetch((char *)batch[i] + off, 1);
    for (unsigned i = 1; i < n; i++)
        if (!RQ_PUSH(self, batch[i]))
            spill(self, batch[i]);
    STAT_ADD(self, remote_pops, n);
    STAT_INC(self, remote_takes);
    if (STEALING && left)
        IDLE_BACKLOG(self);
    return batch[0];
}

static inline task_t *remote_pop_own(worker_t *w) { return remote_take_batch(w, w, REMOTE_BATCH); }

/* The victim's progress: it moves whenever the victim switches or ends a task (both
 * counters are written by the owner only; relaxed: a hint, rechecked by the exchange). */
static inline __attribute__((unused)) uint64_t worker_progress(worker_t *v)
{
    return atomic_load_explicit(&v->st.switches, memory_order_relaxed) +
           atomic_load_explicit(&v->st.tasks_run, memory_order_relaxed);
}

/* The task in v's runnext slot if v's owner leaves it there for RUNNEXT_GRACE_NS while
 * doing nothing else visible (no switch, no task ended), else NULL: a busy owner is
 * about to run it on a warm cache.  Any thread. */
#define RUNNEXT_GRACE_NS 3000
static inline __attribute__((unused)) task_t *runnext_take_stuck(worker_t *v)
{
    /* relaxed: the slot is usually empty; the exchange below orders the take */
    task_t *t = atomic_load_explicit(&v->runnext, memory_order_relaxed);
    if (!t)
        return NULL;
    uint64_t seen = worker_progress(v), t0 = core_now_ns();
    while (core_now_ns() - t0 < RUNNEXT_GRACE_NS) {
        cpu_relax();
        if (atomic_load_explicit(&v->runnext, memory_order_relaxed) != t ||
            worker_progress(v) != seen)
            return NULL;
    }
    /* acq_rel: acquires the task the waker published with its exchange */
    return atomic_exchange_explicit(&v->runnext, NULL, memory_order_acq_rel);
}

/* Workers whose thread is blocked in a wait (core_worker_blocks).  Counted for the
 * variants without stealing only: there nobody else would ever run what waits on such a
 * worker. */
static _Atomic int nblocked;

/* A worker whose thread blocks: a BTHREAD_STACKTYPE_PTHREAD task (or a worker's own
 * context) waiting on a butex or sleeping, on the worker's thread.  Where workers steal,
 * others take its queued tasks once one of them looks, so a sleeper is woken to search
 * in its place.  Where they do not (STEALING 0: static,
 * affinity), its queues would wait for its thread, and a task it waits for, queued
 * there, never runs: a deadlock brpc never has (its workers steal), e.g. brpc's
 * BthreadTest.bthread_usleep and SemaphoreTest.mix_thread_types.  So while a worker is
 * blocked it lends its queues to the others: the idle workers' search takes from them
 * (rescue_blocked), one sleeper is woken when it blocks, and while any worker is blocked
 * the parking lot's watcher looks every PARK_WATCH_NS for what was queued there since
 * (core_watch_wanted).  A policy that never moves a task thus moves one only when the
 * alternative is that it never runs. */
void core_worker_blocks(bool blocking)
{
    worker_t *w = tls_worker;
    if (!w)
        return;
    if (STEALING) {
        /* This worker stops searching while its thread waits: a sleeper searches in its
         * place.  Not only for what is queued here (others steal it, but only a worker
         * that looks does): a submitter that found no sleeper to claim may have counted
         * on this worker, which left the lot with a task and will not look again before
         * that task ends, and the task now waits, perhaps for the very one it left
         * queued (brpc's SemaphoreTest.mix_thread_types: about 1 run in 70 of
         * adaptive hung with every worker parked or blocked and tasks in the remote
         * queues). */
        if (blocking)
            IDLE_WAKE(NULL);
        return;
    }
    /* seq_cst: the flag and the count are seen by a searcher (rescue_blocked) and a
     * parking worker (park_try_watch) after the wake below, or by their own next look */
    atomic_store_explicit(&w->thread_blocked, blocking, memory_order_seq_cst);
    atomic_fetch_add_explicit(&nblocked, blocking ? 1 : -1, memory_order_seq_cst);
    if (blocking)
        IDLE_WAKE(NULL); /* someone comes for what is queued here already */
}

/* A task queued on a worker whose thread is blocked, taken by w, or NULL (STEALING 0
 * only, see core_worker_blocks).  Owner only. */
static task_t *rescue_blocked(worker_t *w)
{
    if (STEALING || !atomic_load_explicit(&nblocked, memory_order_seq_cst))
        return NULL;
    int n = worker_count();
    for (int i = 0; i < n; i++) {
        worker_t *v = &ctl.workers[i];
        if (v == w || !atomic_load_explicit(&v->thread_blocked, memory_order_seq_cst))
            continue;
        task_t *t = NULL;
        /* acq_rel: acquires the task the waker published with its exchange */
        if (RUNNEXT && atomic_load_explicit(&v->runnext, memory_order_relaxed))
            t = atomic_exchange_explicit(&v->runnext, NULL, memory_order_acq_rel);
        unsigned moved = 1;
        if (!t)
            t = RQ_STEAL(v, w, &moved); /* the owner is blocked: a thief's take */
        if (!t)
            t = remote_take_batch(w, v, REMOTE_STEAL_BATCH);
        if (t) {
            STAT_ADD(w, rescues, moved); /* not a steal: this policy does not steal */
            return t;
        }
    }
    return NULL;
}

/* True when an idle worker should watch the runnext slots (the parking lot's watcher):
 * there is a slot that another worker may take, or a blocked worker's queues (variants
 * without stealing: see core_worker_blocks). */
static inline __attribute__((unused)) bool core_watch_wanted(void)
{
    return (STEALING && RUNNEXT && worker_count() > 1) ||
           (!STEALING && atomic_load_explicit(&nblocked, memory_order_seq_cst) > 0);
}

/* The watcher's look: a task stuck in another worker's runnext slot, or queued on a
 * blocked worker (STEALING 0), or NULL.  Owner only (w is the caller's worker). */
static inline __attribute__((unused)) task_t *runnext_rescue(worker_t *w)
{
    if (!STEALING)
        return rescue_blocked(w);
    int n = worker_count();
    for (int i = 0; RUNNEXT && i < n; i++) {
        task_t *t = i == w->index ? NULL : runnext_take_stuck(&ctl.workers[i]);
        if (t) {
            STAT_INC(w, rescues);
            return t;
        }
    }
    return NULL;
}

static task_t *steal_round(worker_t *w)
{
#if STEALING
    if (worker_count() < 2)
        return NULL;
    VICTIM_ITER_T it;
    int v;
    VICTIM_BEGIN(w, &it);
    while ((v = VICTIM_NEXT(w, &it)) >= 0) {
        worker_t *victim = &ctl.workers[v];
        STAT_INC(w, steal_attempts);
        unsigned moved = 1;
        task_t *t = RQ_STEAL(victim, w, &moved);
        if (t) {
            STAT_INC(w, steals);
            STAT_ADD(w, stolen_tasks, moved);
            VICTIM_STOLE(w, v);
            return t;
        }
    }
    VICTIM_BEGIN(w, &it);
    while ((v = VICTIM_NEXT(w, &it)) >= 0) {
        task_t *t = remote_take_batch(w, &ctl.workers[v], REMOTE_STEAL_BATCH);
        if (t) {
            VICTIM_STOLE(w, v);
            return t;
        }
    }
    /* last: a victim's runnext, once its owner looks stuck (see make_ready_again) */
    VICTIM_BEGIN(w, &it);
    while (RUNNEXT && (v = VICTIM_NEXT(w, &it)) >= 0) {
        task_t *t = runnext_take_stuck(&ctl.workers[v]);
        if (t) {
            STAT_INC(w, rescues);
            VICTIM_STOLE(w, v);
            return t;
        }
    }
#else
    return rescue_blocked(w);
#endif
    return NULL;
}

/* Non-blocking: own runnext, own run queue, own remote queue (first every
 * REMOTE_FIRST_EVERY-th time: bounded starvation of submitted work under LIFO), then
 * other workers' (steal_round).  Every RUNNEXT_QUEUE_EVERY-th time the runnext slot is
 * full, the run queue and then the remote queue go before it: two tasks that wake each
 * other (a semaphore ping-pong) refill the slot at every switch, and would otherwise
 * keep the queues from running for as long as they play (forever, if they wait for a
 * queued task).  So a worker's queues wait at most RUNNEXT_QUEUE_EVERY picks from its
 * runnext slot; the woken task stays in the slot meanwhile. */
#define REMOTE_FIRST_EVERY 64u  /* a power of two */
#define RUNNEXT_QUEUE_EVERY 64u /* a power of two */
static task_t *find_local(worker_t *w)
{
    task_t *t;
    if ((++w->tick & (REMOTE_FIRST_EVERY - 1)) == 0 && (t = remote_pop_own(w)))
        return t;
    /* relaxed load first: the slot is usually empty; the exchange orders the take */
    if (RUNNEXT && atomic_load_explicit(&w->runnext, memory_order_relaxed)) {
        if ((++w->runnext_tick & (RUNNEXT_QUEUE_EVERY - 1)) == 0) {
            if ((t = RQ_POP(w))) {
                IDLE_POPPED(w);
                return t;
            }
            if ((t = remote_pop_own(w)))
                return t;
        }
        if ((t = atomic_exchange_explicit(&w->runnext, NULL, memory_order_acq_rel)))
            return t;
    }
    if ((t = RQ_POP(w))) {
        IDLE_POPPED(w);
        return t;
    }
    return remote_pop_own(w);
}

static task_t *find_work(worker_t *w)
{
    task_t *t = find_local(w);
    return t ? t : steal_round(w);
}

/* The look a sleeper's protocol relies on (policy.h).  Why a busy remote queue is waited
 * for: its consumer may have read a cell just before the producer wrote it, and the
 * producer may have skipped its wake-up for a searcher that is this very look (adaptive's
 * spinners); passing the queue over would leave the task with nobody to take it. */
static __attribute__((unused)) task_t *find_work_last_look(worker_t *w)
{
    w->last_look = true;
    task_t *t = find_work(w);
    w->last_look = false;
    return t;
}

static void run_on_main_stack(worker_t *w, task_t *t);

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    WORKER_ON_START(w);
    tls_worker = w;
    w->cur = &w->main_task;
    w->main_tsan_fiber = fiber_tsan_current();
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &w->main_lo, &w->main_size);
        pthread_attr_destroy(&attr);
    }
    for (;;) {
        task_t *t = find_work(w);
        if (!t) {
            if (core_stopping())
                break;
            t = IDLE_WAIT(w);
            if (!t)
                continue;
        }
        while (t) {
            if (t->stack_type == BTHREAD_STACKTYPE_PTHREAD)
                run_on_main_stack(w, t);
            else
                sched_to(w, t, false); /* back here when a task switches to main */
            t = w->inline_next;
            w->inline_next = NULL;
        }
    }
    stack_flush_thread_cache();
    return NULL;
}

/* ======================================================================================
 * 7. The public API.
 * ==================================================================================== */
/* Tasks that run on a stack they do not own (a PTHREAD-stack task on the worker's
 * stack, a child run inline by its joiner) leave bthread_exit through an exit frame:
 * libc's _setjmp (no signal mask, so no system call), which AddressSanitizer also
 * intercepts to unpoison the frames it skips. */
typedef struct exit_frame { jmp_buf buf; } exit_frame_t;
#define EXIT_SETJMP(f) _setjmp((f)->buf)
#define EXIT_LONGJMP(f) _longjmp((f)->buf, 1)

static __attribute__((noinline)) void call_with_exit_frame(task_t *t, exit_frame_t *f)
{
    t->exit_frame = f;
    if (EXIT_SETJMP(f) == 0)
        t->fn(t->arg);
}

static void run_on_main_stack(worker_t *w, task_t *t)
{
    exit_frame_t f;
    w->cur = t;
    switched_in(w, t);
    call_with_exit_frame(t, &f);
    t->exit_frame = NULL;
    w = task_end(this_worker(), t);
    w->cur = &w->main_task;
}

/* Run a child that has not started on the joiner's stack (no stack, no switch). */
static void run_inline(worker_t *w, task_t *parent, task_t *child)
{
    exit_frame_t f;
    child->stack = parent->stack;
    child->borrowed_stack = true;
    switched_in(w, child);
    w->cur = child;
    call_with_exit_frame(child, &f);
    w = this_worker(); /* it may have blocked and moved */
    child->exit_frame = NULL;
    child->stack = NULL;
    child->borrowed_stack = false;
    w = task_end(w, child);
    w->cur = parent;
}

task_t *core_current(void)
{
    worker_t *w = tls_worker;
    return w && w->cur != &w->main_task ? w->cur : NULL;
}

task_t *core_current_suspendable(void)
{
    task_t *t = core_current();
    return t && t->stack_type != BTHREAD_STACKTYPE_PTHREAD ? t : NULL;
}

void core_suspend(void (*fn)(void *), void *arg)
{
    worker_t *w = tls_worker;
    w->remained = fn;
    w->remained_arg = arg;
    sched_to(w, next_or_main(w), false);
}

static int start_task(bthread_t *tid, const bthread_attr_t *attr, void *(*fn)(void *),
                      void *arg, bool urgent)
{
    if (!fn)
        return EINVAL;
    if (core_ensure_started() != 0)
        return EAGAIN;
    /* relaxed hint: tasks wait for stacks (see stackless); an allocation would fail too */
    if (atomic_load_explicit(&stackless.n, memory_order_relaxed) &&
        !(attr && attr->stack_type == BTHREAD_STACKTYPE_PTHREAD))
        return EAGAIN;
    worker_t *w = tls_worker;
    task_t *t = task_alloc(w ? &w->free_slots : foreign_free_cache());
    if (!t)
        return EAGAIN;
    /* Only the first cache line of t is written here (see core.h); the run-time fields
     * were reset by task_end, or zeroed with the pool chunk. */
    t->fn = fn;
    t->arg = arg;
    t->stack = NULL;
    t->stack_type = attr ? attr->stack_type : BTHREAD_STACKTYPE_NORMAL;
    t->attr_flags = attr ? attr->flags : 0;
    t->keytable = attr ? key_initial_table(attr->keytable_pool) : NULL;
    t->waiter = NULL;
    if (tid)
        *tid = core_tid(t); /* before it can run (and end) */
    task_t *cur = urgent ? core_current_suspendable() : NULL;
    if (cur && t->stack_type != BTHREAD_STACKTYPE_PTHREAD) {
        /* urgent: run t now; the caller goes back to the queue after the switch, with
         * NOSIGNAL unsignalled (as brpc: the flag then applies to the caller) */
        w->remained = t->attr_flags & BTHREAD_NOSIGNAL ? ready_unsignalled_cb
                                                       : (void (*)(void *))core_ready;
        w->remained_arg = cur;
        sched_to(w, t, false);
        return 0;
    }
    make_ready(w, t, !(t->attr_flags & BTHREAD_NOSIGNAL));
    return 0;
}

int bthread_start_urgent(bthread_t *tid, const bthread_attr_t *attr, void *(*fn)(void *),
                         void *arg)
{
    return start_task(tid, attr, fn, arg, true);
}

int bthread_start_background(bthread_t *tid, const bthread_attr_t *attr,
                             void *(*fn)(void *), void *arg)
{
    return start_task(tid, attr, fn, arg, false);
}

bthread_t bthread_self(void)
{
    task_t *t = core_current();
    return t ? core_tid(t) : 0;
}

int bthread_equal(bthread_t a, bthread_t b) { return a == b; }

int bthread_join(bthread_t tid, void **ret)
{
    if (ret)
        *ret = NULL; /* as brpc: return values are not kept */
    if (tid == 0)
        return EINVAL;
    bool invalid;
    task_t *t = core_task_of(tid, &invalid);
    if (invalid)
        return EINVAL;
    if (!t)
        return 0; /* already ended */
    if (tid == bthread_self())
        return EINVAL;
    task_t *cur = core_current_suspendable();
    worker_t *w = tls_worker;
    /* Still at the bottom of our own queue and never started: run it here, inline.
     * Only once it is ours again may we read its fields: until then its slot may have
     * ended and been reused by another worker's start, which writes them.  One that
     * already ran (it has a stack), or one that asks for a pthread's stack, goes back
     * where it was. */
    if (cur && RQ_TAKE_BACK(w, t)) {
        if (!t->stack && t->stack_type != BTHREAD_STACKTYPE_PTHREAD) {
            run_inline(w, cur, t);
            return 0;
        }
        if (!RQ_PUSH(w, t))
            spill(w, t);
    }
    uint32_t version = (uint32_t)(tid >> 32);
    /* announced under wait_lock, where task_end moves the version (see there) */
    spin_lock(&t->wait_lock);
    const bool alive =
        (uint32_t)atomic_load_explicit(&t->join_bx.value, memory_order_relaxed) == version;
    if (alive) /* a load and a store: every count that meets a live version is under this lock */
        atomic_store_explicit(&t->joiners, atomic_load_explicit(&t->joiners, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    spin_unlock(&t->wait_lock);
    if (!alive)
        return 0;
    const int saved_errno = errno; /* the wait's EWOULDBLOCK or EINTR is not the caller's */
    /* acquire: pairs with task_end's release of the new version */
    while ((uint32_t)atomic_load_explicit(&t->join_bx.value, memory_order_acquire) == version)
        butex_wait(&t->join_bx, (int)version, NULL); /* EWOULDBLOCK once it ends */
    errno = saved_errno;
    return 0;
}

void bthread_exit(void *retval)
{
    (void)retval; /* as brpc: not kept */
    worker_t *w = tls_worker;
    task_t *t = core_current();
    if (!t) { /* a plain pthread: exit the thread, as pthread_exit would */
        pthread_exit(retval);
    }
    if (t->borrowed_stack || t->stack_type == BTHREAD_STACKTYPE_PTHREAD) {
        exit_frame_t *f = t->exit_frame;
        EXIT_LONGJMP(f);
    }
    sb_stack_t *s = t->stack;
    w = task_end(w, t);
    w->remained = release_stack_cb;
    w->remained_arg = s;
    w->cur = &w->scratch; /* t's slot is free: save nothing into it */
    sched_to(w, next_or_main(w), true);
    abort(); /* not reached */
}

/* A yielded task waits behind everything queued here: on the run queue only when that
 * is empty (no owner's LIFO pop can then prefer it to an older task; the cheap path of
 * two bthreads yielding to each other), else on the remote queue (section 2).  Then it
 * is signalled as a start is: the task we switched to may keep this worker (block in a
 * system call, compute), so an idle worker must come and take it.  A wake-up costs a
 * fence and one load while nobody sleeps. */
static void yield_remained(void *arg)
{
    worker_t *w = tls_worker;
    if (!(RQ_EMPTY(w) && RQ_PUSH(w, (task_t *)arg)))
        remote_push(w, arg);
    if (STEALING) /* else only this worker can run it (or RQ_PUSH signalled: threadpool) */
        IDLE_WAKE(NULL);
}

/* A yield switches only to a task that is ready here (runnext, run queue, own remote
 * queue).  With nothing ready here the caller is the only task this worker has, and it
 * goes on at once: no switch, and no steal that would drag another worker's task (its
 * owner is mid-yield, busy, not idle) across cores for each round of two bthreads
 * yielding on two workers.  Every YIELD_STEAL_EVERY-th such yield still tries a steal
 * round, so a bthread that yields while it waits for work queued elsewhere (its owner
 * busy in a long task) lets that work run here within a bounded number of yields. */
#define YIELD_STEAL_EVERY 64u /* a power of two */
int bthread_yield(void)
{
    task_t *cur = core_current_suspendable();
    if (!cur) {
        sched_yield();
        return 0;
    }
    worker_t *w = tls_worker;
    task_t *next = find_local(w);
    if (!next && (++w->yield_tick & (YIELD_STEAL_EVERY - 1)) == 0)
        next = steal_round(w);
    if (!next)
        return 0;
    w->remained = yield_remained;
    w->remained_arg = cur;
    sched_to(w, switch_target(w, next), false);
    return 0;
}

int bthread_attr_init(bthread_attr_t *a)
{
    *a = BTHREAD_ATTR_NORMAL;
    return 0;
}

int bthread_attr_destroy(bthread_attr_t *a)
{
    (void)a;
    return 0;
}

int bthread_getattr(bthread_t tid, bthread_attr_t *attr)
{
    task_t *t = core_task_of(tid, NULL);
    if (!t || !attr)
        return EINVAL;
    attr->stack_type = t->stack_type;
    attr->flags = t->attr_flags;
    attr->keytable_pool = NULL; /* not kept: the slot holds the table once used */
    return 0;
}

/* ======================================================================================
 * 8. Start-up, shutdown, statistics.
 * ==================================================================================== */
static int default_workers(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > BTHREAD_MAX_CONCURRENCY ? BTHREAD_MAX_CONCURRENCY : (int)n;
}


static int nsetup; /* workers set up (RQ_INIT done); under ctl.lock */

/* Set up worker i, past nworkers (nobody looks at it yet).  Under ctl.lock. */
static int worker_setup(int i)
{
    worker_t *w = &ctl.workers[i];
    memset(w, 0, sizeof *w);
    w->index = i;
    w->rng = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1) ^ (uint64_t)core_now_ns();
    w->main_task.slot = UINT32_MAX;
    if (rmq_init(&w->remote) != 0) /* its stub lives in w: the array never moves */
        return ENOMEM;
    if (RQ_INIT(w) != 0) {
        rmq_fini(&w->remote);
        return ENOMEM;
    }
    nsetup = i + 1;
    return 0;
}

/* Start the threads of set-up workers [from, to), raising nworkers (release) after each,
 * so a thread that sees a count sees those workers running.  Stops at the first failure
 * and says so.  Returns the workers running.  Under ctl.lock. */
static int start_threads(int from, int to)
{
    for (int i = from; i < to; i++) {
        int e = pthread_create(&ctl.workers[i].thread, NULL, worker_main, &ctl.workers[i]);
        if (e != 0) {
            fprintf(stderr, "schedbench: cannot start worker %d (%s); running with %d\n",
                    i + 1, strerror(e), i);
            return i;
        }
        atomic_store_explicit(&ctl.nworkers, i + 1, memory_order_release);
    }
    return to;
}

static void free_workers(void) /* under ctl.lock, no worker thread left */
{
    IDLE_TEARDOWN();
    for (int i = 0; i < nsetup; i++) {
        RQ_FINI(&ctl.workers[i]);
        rmq_fini(&ctl.workers[i].remote);
    }
    free(ctl.workers);
    ctl.workers = NULL;
    nsetup = 0;
    atomic_store_explicit(&ctl.nworkers, 0, memory_order_relaxed);
}

/* ---- fork() ------------------------------------------------------------------------
 * The contract: a child forked while the scheduler runs starts with none.  Its one
 * thread (the one that forked) is a plain pthread, even if it forked inside a bthread;
 * the parent's workers, timer and fd dispatcher threads do not exist there, and the
 * parent's bthreads do not either: their ids read as ended (join returns 0 at once,
 * interrupt ESRCH), and their memory (stacks, task slots, the worker array) is left as
 * it is, unused.  The child's first bthread call starts a scheduler of its own.
 * Before this, the child's first start + join hung (its task went to a worker that did
 * not exist in the child).
 *
 * pthread_atfork handlers, registered at the first start-up: the parent holds ctl.lock
 * across the fork (no start-up, growth or shutdown is half done in the child); the
 * child makes every lock of common/ new (a thread of the parent may have held one) and
 * forgets the scheduler. */
static void atfork_prepare(void) { pthread_mutex_lock(&ctl.lock); }
static void atfork_parent(void) { pthread_mutex_unlock(&ctl.lock); }

static void atfork_child(void)
{
    static const pthread_mutex_t m0 = PTHREAD_MUTEX_INITIALIZER;
    ctl.lock = m0; /* held by this thread since atfork_prepare */
    tls_worker = NULL;
    if (atomic_load_explicit(&ctl.running, memory_order_relaxed)) {
        /* every task of the parent ends here, for its ids: its slot's next version is
         * recorded as if it had ended (pool_free_all without freeing: a parent's task
         * slot or stack may be what this thread runs on) */
        uint32_t n = atomic_load_explicit(&nchunks, memory_order_relaxed);
        for (uint32_t c = 0; c < n; c++) {
            task_t *chunk = atomic_load_explicit(&chunks[c], memory_order_relaxed);
            _Atomic uint32_t *saved = atomic_load_explicit(&next_version[c],
                                                           memory_order_relaxed);
            for (uint32_t i = 0; i < SLOTS_PER_CHUNK; i++) {
                uint32_t now = (uint32_t)atomic_load_explicit(&chunk[i].join_bx.value,
                                                              memory_order_relaxed);
                uint32_t v = atomic_load_explicit(&chunk[i].version, memory_order_relaxed);
                if (now == v) /* alive in the parent: ended here */
                    now = v == UINT32_MAX ? VERSION_RETIRED : v + 1;
                atomic_store_explicit(&saved[i], now, memory_order_relaxed);
            }
        }
        atomic_store_explicit(&nchunks, 0, memory_order_relaxed);
        ctl.workers = NULL;
        nsetup = 0;
        atomic_store_explicit(&ctl.nworkers, 0, memory_order_relaxed);
        atomic_store_explicit(&ctl.stopping, false, memory_order_relaxed);
        atomic_store_explicit(&ctl.running, 0, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&pool_generation, 1, memory_order_relaxed);
    spin_init(&pool.lock);
    pool.free = pool.batches = NULL;
    pool.arrays = pool.spare = pool.all = NULL;
    spin_init(&stackless.lock);
    stackless.head = stackless.tail = NULL;
    atomic_store_explicit(&stackless.n, 0, memory_order_relaxed);
    atomic_store_explicit(&stackless.retry_armed, false, memory_order_relaxed);
    atomic_store_explicit(&nblocked, 0, memory_order_relaxed);
    stack_atfork_child();
    timer_atfork_child();
    key_atfork_child();
    butex_atfork_child();
    if (bthread_fd_atfork_child_internal)
        bthread_fd_atfork_child_internal();
}

static int start_locked(void)
{
    static bool atfork_registered; /* under ctl.lock */
    if (!atfork_registered &&
        pthread_atfork(atfork_prepare, atfork_parent, atfork_child) == 0)
        atfork_registered = true;
    int n = ctl.configured > 0 ? ctl.configured : default_workers();
    /* the whole array at once: it never moves while workers run (see ctl) */
    ctl.workers = aligned_alloc(CACHELINE, BTHREAD_MAX_CONCURRENCY * sizeof(worker_t));
    if (!ctl.workers)
        return ENOMEM;
    for (int i = 0; i < n; i++)
        if (worker_setup(i) != 0)
            goto fail;
    if (stack_reserve() != 0) /* each class's reserve stack: see stackless */
        goto fail;
    atomic_store_explicit(&ctl.stopping, false, memory_order_relaxed);
    /* the victim orders are built for n workers (a start that falls short only leaves
     * empty victims in them) */
    atomic_store_explicit(&ctl.nworkers, n, memory_order_relaxed);
    for (int i = 0; i < n; i++)
        if (VICTIM_SETUP(&ctl.workers[i]) != 0)
            goto fail;
    if (IDLE_SETUP(BTHREAD_MAX_CONCURRENCY) != 0)
        goto fail;
    atomic_store_explicit(&ctl.nworkers, 0, memory_order_relaxed);
    int started = start_threads(0, n);
    if (started == 0) {
        free_workers();
        return EAGAIN;
    }
    /* release: a thread that sees running == 1 sees the workers array */
    atomic_store_explicit(&ctl.running, 1, memory_order_release);
    return 0;
fail:
    atomic_store_explicit(&ctl.nworkers, 0, memory_order_relaxed);
    for (int i = 0; i < nsetup; i++) {
        RQ_FINI(&ctl.workers[i]);
        rmq_fini(&ctl.workers[i].remote);
    }
    free(ctl.workers);
    ctl.workers = NULL;
    nsetup = 0;
    return ENOMEM;
}

/* The slow path of core_ensure_started, out of line: inlined, its register saves
 * would be paid by every call (gcc does not shrink-wrap them off the fast path; that
 * cost fib and spawn about 6 instructions per task). */
static __attribute__((noinline, cold)) int start_slow(void)
{
    /* The start-up runs in the caller's thread, and what it calls (hwloc, mmap, thread
     * creation) may leave errno set: the caller's errno is as it was (brpc's
     * errno_not_changed). */
    const int saved_errno = errno;
    pthread_mutex_lock(&ctl.lock);
    int rc = 0;
    if (!atomic_load_explicit(&ctl.running, memory_order_relaxed) && (rc = start_locked()) != 0)
        fprintf(stderr, "schedbench: cannot start the scheduler: %s\n", strerror(rc));
    pthread_mutex_unlock(&ctl.lock);
    errno = saved_errno;
    return rc;
}

int core_ensure_started(void)
{
    /* acquire: pairs with the release in start_locked */
    return atomic_load_explicit(&ctl.running, memory_order_acquire) ? 0 : start_slow();
}

int bthread_getconcurrency(void)
{
    if (atomic_load_explicit(&ctl.running, memory_order_acquire))
        return worker_count();
    return ctl.configured > 0 ? ctl.configured : default_workers();
}

/* Before start-up: the count to start with.  Running: add workers up to num (never
 * fewer).  EAGAIN when not all could be started (those that could are running). */
int bthread_setconcurrency(int num)
{
    if (num < 1 || num > BTHREAD_MAX_CONCURRENCY)
        return EINVAL;
    int rc = 0;
    const int saved_errno = errno; /* as in start_slow: growth starts threads */
    pthread_mutex_lock(&ctl.lock);
    int n = worker_count();
    if (!atomic_load_explicit(&ctl.running, memory_order_relaxed)) {
        ctl.configured = num;
    } else if (num < n) {
        rc = EPERM; /* never shrinks */
    } else if (num > n && VICTIM_FIXED_COUNT) {
        rc = EPERM; /* this variant's victim orders are fixed at start-up */
    } else if (num > n) {
        for (int i = n; i < num && rc == 0; i++) /* one by one: stop at the first failure */
            if (worker_setup(i) != 0 || VICTIM_SETUP(&ctl.workers[i]) != 0 ||
                start_threads(i, i + 1) == i)
                rc = EAGAIN;
    }
    pthread_mutex_unlock(&ctl.lock);
    errno = saved_errno;
    return rc;
}

/* How long bthread_shutdown lets the live count stand still before it gives up. */
#define SHUTDOWN_PATIENCE_MS 1000

/* The tasks alive once those still finishing have ended: a background task that has
 * signalled whoever waited for it (spawn's countdown) may still be on its way out.  The
 * count is looked at every millisecond while it keeps falling; it stands still only
 * where tasks wait for something.  Under ctl.lock (the chunks stay). */
static unsigned long live_tasks_settled(void)
{
    unsigned long live = live_tasks();
    for (int still = 0; live && still < SHUTDOWN_PATIENCE_MS;) {
        const struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        const unsigned long now = live_tasks();
        still = now < live ? 0 : still + 1;
        live = now;
    }
    return live;
}

int bthread_shutdown(void)
{
    if (tls_worker)
        return EPERM; /* a worker cannot join itself */
    pthread_mutex_lock(&ctl.lock);
    if (!atomic_load_explicit(&ctl.running, memory_order_relaxed)) {
        pthread_mutex_unlock(&ctl.lock);
        return 0;
    }
    unsigned long live = live_tasks_settled();
    if (live) {
        pthread_mutex_unlock(&ctl.lock);
        fprintf(stderr, "schedbench: bthread_shutdown: %lu bthreads still alive\n", live);
        return EBUSY;
    }
    if (bthread_fd_shutdown_internal)
        bthread_fd_shutdown_internal();
    timer_shutdown();
    atomic_store_explicit(&ctl.stopping, true, memory_order_release);
    IDLE_WAKE_ALL();
    for (int i = 0; i < worker_count(); i++)
        pthread_join(ctl.workers[i].thread, NULL);
    free_workers();
    pool_free_all();
    stack_shutdown();
    atomic_store_explicit(&ctl.running, 0, memory_order_release);
    pthread_mutex_unlock(&ctl.lock);
    return 0;
}

int bthread_get_stats(bthread_worker_stats_t *out, int max)
{
    if (!atomic_load_explicit(&ctl.running, memory_order_acquire))
        return 0;
    int n = worker_count();
    for (int i = 0; i < n && i < max; i++) {
        worker_t *w = &ctl.workers[i];
        bthread_worker_stats_t *o = &out[i];
#define COUNTER_W(name) atomic_load_explicit(&w->st.name, memory_order_relaxed)
#define COUNTER_Q(name) rmq_counter(&w->remote, name)
#define COUNTER_WQ(name) COUNTER_W(name) + COUNTER_Q(name)
#define COUNTER_COPY(name, kept, what) o->name = COUNTER_##kept(name);
        BTHREAD_WORKER_COUNTERS(COUNTER_COPY)
#undef COUNTER_COPY
#undef COUNTER_WQ
#undef COUNTER_Q
#undef COUNTER_W
        clockid_t cid;
        struct timespec ts;
        o->cpu_ns = 0;
        if (pthread_getcpuclockid(w->thread, &cid) == 0 && clock_gettime(cid, &ts) == 0)
            o->cpu_ns = (uint64_t)sb_ts_to_ns(&ts);
    }
    return n;
}

const char *bthread_variant_name(void) { return VARIANT_NAME; }

void bthread_get_policy(bthread_policy_t *out)
{
    *out = (bthread_policy_t){
        .steals = STEALING,
        .steal_batch = STEALING ? STEAL_BATCH : 0,
        .keeps_tasks = READY_HOME,
        .spreads_tasks = SPREADS_TASKS,
#ifdef REMOTE_SUBMIT
        .one_queue = 1,
#endif
        .runnext = RUNNEXT,
        .idle_sleeps = IDLE_SLEEPS,
        .idle_spins = IDLE_SPINS,
        .deactivates = IDLE_DEACTIVATES,
        .fixed_workers = VICTIM_FIXED_COUNT,
    };
}

/* The run record's view of the topology: common/topology.c keeps it (the numa variant's
 * table, else what hwloc loads now). */
int bthread_describe_topology(char *buf, size_t n) { return topology_describe(buf, n); }
int bthread_worker_placement(int worker, char *buf, size_t n)
{
    return topology_worker_placement(worker, buf, n);
}

#undef errno
/* Not foldable: the asm keeps the compiler from inferring `const` and reusing one
 * thread's errno address after a switch to another thread. */
__attribute__((noinline)) int *bthread_errno_location(void)
{
    int *p = __errno_location();
    __asm__ __volatile__("" : "+r"(p));
    return p;
}

/* ---- small system helpers ------------------------------------------------------------ */
int futex_wait_private(_Atomic int *addr, int expected, const struct timespec *rel)
{
    return (int)syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, expected, rel, NULL, 0);
}

int futex_wake_private(_Atomic int *addr, int n)
{
    return (int)syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

uint64_t core_now_ns(void) { return (uint64_t)sb_clock_ns(CLOCK_MONOTONIC); }
