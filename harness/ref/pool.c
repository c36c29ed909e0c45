/*
 * pool.c -- the plain thread-pool reference row: what a C programmer writes without a
 * task runtime, the textbook pool of ring_pool.h.  N pthreads share one FIFO ring buffer
 * of function-pointer tasks guarded by one mutex; an idle worker sleeps on one condition
 * variable, and submit signals it only when some worker is asleep.  No allocation per
 * task, no work stealing, no per-worker queues, no task-local waits.
 *
 * Workers.  --workers N starts N pool threads; the calling thread only submits and
 * waits (on a latch: an atomic countdown plus a mutex/condvar for the last task).
 *
 * fib is not offered: a task that blocks waiting for its children holds a pool thread,
 * and with a fixed number of threads a deep enough tree has every thread waiting on
 * children that no thread is left to run -- a deadlock, not a slow result.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ref.h"
#include "ring_pool.h"
#include "timeutil.h"
#include "wl_defs.h"

const char ref_variant[] = "pool";
const char ref_runtime[] = "pthread mutex+condvar pool";

static ring_pool_t pool;

/* Queue fn(ctx, i); when the ring cannot grow the caller runs it itself. */
static void pool_submit(ring_pool_fn *fn, void *ctx, long i)
{
    if (ring_pool_submit(&pool, fn, ctx, i) != 0)
        fn(ctx, i);
}

/* Waits for `left` tasks to count down. */
struct latch {
    atomic_long left;
    int done; /* under mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

static void latch_init(struct latch *l, long n)
{
    atomic_init(&l->left, n);
    l->done = 0;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
}

static void latch_count_down(struct latch *l)
{
    /* acq_rel: release publishes this task's result; the last task's acquire sees every
     * earlier task's, and its unlock below hands them all to the waiter. */
    if (atomic_fetch_sub_explicit(&l->left, 1, memory_order_acq_rel) == 1) {
        pthread_mutex_lock(&l->mu); /* signal under the lock: the waiter cannot return */
        l->done = 1;                /* and destroy the latch before we are done with it */
        pthread_cond_signal(&l->cv);
        pthread_mutex_unlock(&l->mu);
    }
}

static void latch_wait(struct latch *l)
{
    pthread_mutex_lock(&l->mu);
    while (!l->done)
        pthread_cond_wait(&l->cv, &l->mu);
    pthread_mutex_unlock(&l->mu);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
}

int ref_init(int workers)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int n = workers > 0 ? workers : online > 0 ? (int)online : 1;
    /* the threads live until the process ends: the bench never stops its pool */
    if (ring_pool_start(&pool, n, 4096) < 1)
        abort(); /* no pool at all: nothing could ever run */
    return pool.workers;
}

bool ref_supports(const char *workload, const long *args)
{
    (void)args;
    return strcmp(workload, "fib") != 0; /* see the top of this file */
}

int ref_fib(const long *args, wl_run_t *out)
{
    (void)args;
    (void)out;
    return ENOTSUP; /* never registered: ref_supports says no */
}

/* ---- spawn: n tiny tasks from the calling thread ------------------------------------ */

struct spawn_run {
    WL_OWN_LINE atomic_uint_least64_t sum; /* WL_OWN_LINE: see workload.h */
    struct latch done;
};

static void spawn_task(void *ctx, long i)
{
    struct spawn_run *r = ctx;
    /* relaxed: only the total matters; the latch orders it before the caller's read */
    atomic_fetch_add_explicit(&r->sum, (uint64_t)i, memory_order_relaxed);
    latch_count_down(&r->done);
}

int ref_spawn(const long *args, wl_run_t *out)
{
    long n = args[0];
    if (n < 1)
        return EINVAL;
    struct spawn_run r;
    atomic_init(&r.sum, 0);
    latch_init(&r.done, n);
    for (long i = 0; i < n; i++)
        pool_submit(spawn_task, &r, i);
    latch_wait(&r.done);
    out->answer = atomic_load_explicit(&r.sum, memory_order_relaxed); /* after the latch */
    out->items = (double)n;
    return 0;
}

/* ---- imbalance: P submitter threads, each queueing its share one task at a time ---- */

struct imb_run {
    WL_OWN_LINE wl_imbalance_t p; /* the arguments; WL_OWN_LINE: see workload.h */
    uint64_t iters, start_ns, delay_ns;
    uint64_t *sums;
    struct latch done;
};

struct imb_submitter {
    pthread_t thread;
    struct imb_run *run;
    long s;
};

static void imb_task(void *ctx, long i)
{
    struct imb_run *r = ctx;
    r->sums[i] = wl_imbalance_task((uint64_t)i, (uint64_t)r->p.tasks, r->iters, r->p.imbalance,
                                   r->p.skew);
    latch_count_down(&r->done);
}

static void *imb_submit(void *arg)
{
    struct imb_submitter *sub = arg;
    struct imb_run *r = sub->run;
    if (wl_submitter_is_late(sub->s, r->p.submitters, r->p.late))
        sb_sleep_until_ns((int64_t)(r->start_ns + r->delay_ns));
    long first, last;
    wl_submitter_share(r->p.tasks, r->p.submitters, sub->s, &first, &last);
    for (long i = first; i < last; i++)
        pool_submit(imb_task, r, i);
    return NULL;
}

int ref_imbalance(const long *args, wl_run_t *out)
{
    struct imb_run r;
    memset(&r, 0, sizeof r);
    if (wl_imbalance_parse(args, &r.p) != 0)
        return EINVAL;
    r.iters = wl_grain_iters(r.p.grain_us);
    r.delay_ns = wl_imbalance_delay_ns(&r.p, pool.workers);
    r.sums = calloc((size_t)r.p.tasks, sizeof *r.sums);
    struct imb_submitter *subs = calloc((size_t)r.p.submitters, sizeof *subs);
    if (!r.sums || !subs) {
        free(r.sums);
        free(subs);
        return ENOMEM;
    }
    latch_init(&r.done, r.p.tasks);
    r.start_ns = wl_now_ns();
    long started = 0;
    for (; started < r.p.submitters; started++) {
        subs[started] = (struct imb_submitter){.run = &r, .s = started};
        if (pthread_create(&subs[started].thread, NULL, imb_submit, &subs[started]) != 0)
            break;
    }
    for (long s = started; s < r.p.submitters; s++) {
        subs[s] = (struct imb_submitter){.run = &r, .s = s};
        imb_submit(&subs[s]); /* no thread to spare: submit that share from here */
    }
    for (long s = 0; s < started; s++)
        pthread_join(subs[s].thread, NULL);
    latch_wait(&r.done);
    uint64_t sum = 0;
    for (long i = 0; i < r.p.tasks; i++)
        sum += r.sums[i];
    free(r.sums);
    free(subs);
    out->answer = sum;
    out->items = (double)r.p.tasks;
    wl_counter_add(out, "iters_per_us", wl_iters_per_us());
    wl_counter_add(out, "late_delay_us", (double)r.delay_ns / 1000.0);
    return 0;
}

/* ---- granularity: one sweep step, queued by the calling thread ---------------------- */

struct gran_run {
    WL_OWN_LINE int g; /* WL_OWN_LINE: see workload.h */
    uint64_t iters;
    uint64_t *sums;
    struct latch done;
};

static void gran_task(void *ctx, long i)
{
    struct gran_run *r = ctx;
    r->sums[i] = wl_granularity_task(r->g, (uint64_t)i, r->iters);
    latch_count_down(&r->done);
}

int ref_granularity_step(int g, long tasks, uint64_t iters, uint64_t *sum)
{
    struct gran_run r = {.g = g, .iters = iters};
    r.sums = calloc((size_t)tasks, sizeof *r.sums);
    if (!r.sums)
        return ENOMEM;
    latch_init(&r.done, tasks);
    for (long i = 0; i < tasks; i++)
        pool_submit(gran_task, &r, i);
    latch_wait(&r.done);
    uint64_t s = 0;
    for (long i = 0; i < tasks; i++)
        s += r.sums[i];
    free(r.sums);
    *sum = s;
    return 0;
}
