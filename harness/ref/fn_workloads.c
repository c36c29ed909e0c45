/*
 * fn_workloads.c -- ref.h's workloads, written once over a function-pointer task runtime
 * (fnrt.h): pool.c (the textbook pool) and ws.c (the work-stealing article's scheduler)
 * link this file and differ only in how they queue and run a task.
 *
 * A task is a ref_task_t (fn, argument, index), filled by its submitter just before it
 * is started: in one reused window for a runtime that copies it (pool), in the run's
 * array for one that queues a pointer to it (ws); see task_records.  A task cannot wait here (a runtime thread that blocks is a worker taken
 * out), so a task that submits others (a submitter placed on a worker) returns at once,
 * and the calling thread waits for every task on a latch.  fib is not offered: its
 * parent task would have to wait for its children.
 *
 *   spawn(n)            n empty tasks from the calling thread, one at a time
 *   imbalance(...)      P submitter pthreads, each its share one at a time, late ones
 *                       sleeping first (wl_defs.h's rule and delay)
 *   granularity step    the step's tasks from the calling thread
 *   article(...)        one submitter per worker (foreign 0: a task placed on worker s
 *                       with fnrt_submit_on, the late ones placed at t0 + D by the
 *                       calling thread, so that their worker is free meanwhile as a late
 *                       bthread's is; foreign 1: pthreads), each its share one at a time
 *   spawn_batch(...)    section 4.2: n busy tasks in batches of `batch` (fnrt_submit of
 *                       k at once; 0: one at a time, the baseline) from one submitter or,
 *                       late 1, from one per worker, the last half late (the article's
 *                       form at d = 1/2); from 1: the submitters are tasks on workers
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "atomics.h"
#include "fnrt.h"
#include "ref.h"
#include "timeutil.h"
#include "wl_defs.h"

/* ---- the latch: the calling thread waits for `left` tasks to count down ------------- */

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

/* spin: wait on the count with pauses first (a submitter that keeps its core). */
/* The tasks that will never run (their submitter could not start): count them down. */
static void latch_cancel(struct latch *l, long n)
{
    while (n-- > 0)
        latch_count_down(l);
}

static void latch_wait(struct latch *l, bool spin)
{
    /* acquire: pairs with the tasks' acq_rel decrements */
    while (spin && atomic_load_explicit(&l->left, memory_order_acquire) > 0)
        cpu_relax();
    pthread_mutex_lock(&l->mu);
    while (!l->done)
        pthread_cond_wait(&l->cv, &l->mu);
    pthread_mutex_unlock(&l->mu);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
}

/* The run's answer, its items and the kernel rate, unless it failed (rc). */
static int run_result(wl_run_t *out, int rc, uint64_t sum, long items)
{
    if (rc == 0) {
        out->answer = sum;
        out->items = (double)items;
        wl_counter_add(out, "iters_per_us", wl_iters_per_us());
    }
    return rc;
}

/* The records of n tasks: an array, when the runtime queues pointers to them; none (NULL,
 * and 0) when it copies each task (fnrt_copies): submit_range then fills a reused window,
 * so that a copying runtime's submitter writes no fresh memory per task.  ENOMEM. */
static int task_records(long n, ref_task_t **ts)
{
    *ts = fnrt_copies ? NULL : malloc((size_t)n * sizeof **ts);
    return fnrt_copies || *ts ? 0 : ENOMEM;
}

enum { SUBMIT_WINDOW = 64 }; /* a copying runtime's batches: at most this many at once */

/* Start tasks [first, last), each fn(ctx, i), `batch` at a time (0 or 1: one), their
 * records in ts (task_records') or, ts NULL, in one reused window. */
static void submit_range(ref_task_t *ts, long first, long last, long batch, ref_fn *fn,
                         void *ctx)
{
    ref_task_t window[SUBMIT_WINDOW];
    long k = batch > 1 ? batch : 1;
    if (!ts && k > SUBMIT_WINDOW)
        k = SUBMIT_WINDOW;
    for (long i = first; i < last; i += k) {
        long m = last - i < k ? last - i : k;
        ref_task_t *rec = ts ? &ts[i] : window;
        for (long j = 0; j < m; j++)
            rec[j] = (ref_task_t){.fn = fn, .ctx = ctx, .i = i + j};
        fnrt_submit(rec, m);
    }
}

/* ---- submitters: P of them, the last `late` starting delay_ns after t0 --------------- */

typedef struct subs subs_t;
typedef void subs_share_fn(subs_t *g, long s);

struct subs {
    long count, late;
    uint64_t delay_ns, t0;
    bool on_workers; /* tasks placed on worker s (else pthreads) */
    bool together;   /* pthreads start when the last exists (else at once, t0 before) */
    subs_share_fn *share;
    void *ctx;
    ref_task_t *task;     /* on_workers: the submitter tasks */
    atomic_int *ran_on;   /* on_workers: submitters that ran on each worker */
    atomic_long colocated; /* ... beyond the first on a worker */
    atomic_ullong go;     /* together: t0, once every pthread exists */
    struct subs_thread { pthread_t t; subs_t *g; long s; } *th;
};

static bool subs_is_late(const subs_t *g, long s) { return s >= g->count - g->late; }

/* on_workers: submitter s, a task. */
static void subs_task(void *ctx, long s)
{
    subs_t *g = ctx;
    int w = fnrt_self();
    /* relaxed: a count read after the latch, which orders every task before it */
    if (w >= 0 && atomic_fetch_add_explicit(&g->ran_on[w], 1, memory_order_relaxed) > 0)
        atomic_fetch_add_explicit(&g->colocated, 1, memory_order_relaxed);
    g->share(g, s);
}

static void *subs_thread(void *arg)
{
    struct subs_thread *st = arg;
    subs_t *g = st->g;
    uint64_t t0 = 0;
    if (!g->together)
        t0 = g->t0; /* written before the threads were made */
    else /* acquire: pairs with subs_run's release store */
        while ((t0 = atomic_load_explicit(&g->go, memory_order_acquire)) == 0)
            sched_yield();
    if (subs_is_late(g, st->s))
        sb_sleep_until_ns((int64_t)(t0 + g->delay_ns));
    g->share(g, st->s);
    return NULL;
}

/* Run the submitters; returns once every one has started its share (its tasks may
 * still run).  0 or ENOMEM. */
static int subs_run(subs_t *g)
{
    atomic_init(&g->colocated, 0);
    atomic_init(&g->go, 0);
    g->t0 = wl_now_ns();
    if (g->on_workers) {
        int workers = fnrt_workers();
        g->task = calloc((size_t)g->count, sizeof *g->task);
        g->ran_on = calloc((size_t)workers, sizeof *g->ran_on);
        if (!g->task || !g->ran_on) {
            free(g->task);
            free((void *)g->ran_on);
            return ENOMEM;
        }
        for (long pass = 0; pass < 2; pass++) { /* the early ones, then at D the late */
            if (pass == 1)
                sb_sleep_until_ns((int64_t)(g->t0 + g->delay_ns));
            for (long s = 0; s < g->count; s++)
                if (subs_is_late(g, s) == (pass == 1)) {
                    g->task[s] = (ref_task_t){.fn = subs_task, .ctx = g, .i = s};
                    fnrt_submit_on((int)(s % workers), &g->task[s]);
                }
        }
        return 0;
    }
    g->th = calloc((size_t)g->count, sizeof *g->th);
    if (!g->th)
        return ENOMEM;
    long started = 0;
    for (; started < g->count; started++) {
        g->th[started] = (struct subs_thread){.g = g, .s = started};
        if (pthread_create(&g->th[started].t, NULL, subs_thread, &g->th[started]) != 0)
            break;
    }
    if (g->together) { /* release: pairs with the submitters' acquire loads */
        g->t0 = wl_now_ns();
        atomic_store_explicit(&g->go, g->t0, memory_order_release);
    }
    for (long s = started; s < g->count; s++) { /* no thread to spare: submit from here */
        g->th[s] = (struct subs_thread){.g = g, .s = s};
        subs_thread(&g->th[s]);
    }
    for (long s = 0; s < started; s++)
        pthread_join(g->th[s].t, NULL);
    return 0;
}

/* After the tasks are waited for. */
static long subs_finish(subs_t *g)
{
    /* relaxed: after the latch, which every submitter task's tasks count down */
    long colocated = atomic_load_explicit(&g->colocated, memory_order_relaxed);
    free(g->task);
    free((void *)g->ran_on);
    free(g->th);
    return colocated;
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
    ref_task_t *ts;
    if (task_records(n, &ts) != 0)
        return ENOMEM;
    struct spawn_run r;
    atomic_init(&r.sum, 0);
    latch_init(&r.done, n);
    submit_range(ts, 0, n, 1, spawn_task, &r);
    latch_wait(&r.done, false);
    free(ts);
    out->answer = atomic_load_explicit(&r.sum, memory_order_relaxed); /* after the latch */
    out->items = (double)n;
    return 0;
}

/* ---- imbalance: P submitter threads, each queueing its share one task at a time ---- */

struct imb_run {
    WL_OWN_LINE wl_imbalance_t p; /* the arguments; WL_OWN_LINE: see workload.h */
    uint64_t iters;
    uint64_t *sums;
    ref_task_t *ts;
    struct latch done;
};

static void imb_task(void *ctx, long i)
{
    struct imb_run *r = ctx;
    r->sums[i] = wl_imbalance_task((uint64_t)i, (uint64_t)r->p.tasks, r->iters, r->p.imbalance,
                                   r->p.skew);
    latch_count_down(&r->done);
}

static void imb_share(subs_t *g, long s)
{
    struct imb_run *r = g->ctx;
    long first, last;
    wl_submitter_share(r->p.tasks, r->p.submitters, s, &first, &last);
    submit_range(r->ts, first, last, 1, imb_task, r);
}

int ref_imbalance(const long *args, wl_run_t *out)
{
    struct imb_run r;
    memset(&r, 0, sizeof r);
    if (wl_imbalance_parse(args, &r.p) != 0)
        return EINVAL;
    r.iters = wl_grain_iters(r.p.grain_us);
    subs_t g = {.count = r.p.submitters,
                .late = r.p.late ? r.p.submitters - r.p.submitters / 2 : 0, /* upper half */
                .delay_ns = wl_imbalance_delay_ns(&r.p, fnrt_workers()),
                .share = imb_share, .ctx = &r};
    r.sums = calloc((size_t)r.p.tasks, sizeof *r.sums);
    int rc = task_records(r.p.tasks, &r.ts) == 0 && r.sums ? 0 : ENOMEM;
    if (rc == 0) {
        latch_init(&r.done, r.p.tasks);
        if ((rc = subs_run(&g)) != 0) /* then no task was started */
            latch_cancel(&r.done, r.p.tasks);
        latch_wait(&r.done, false);
        subs_finish(&g);
    }
    uint64_t sum = 0;
    for (long i = 0; i < r.p.tasks; i++)
        sum += r.sums[i];
    free(r.sums);
    free(r.ts);
    if (run_result(out, rc, sum, r.p.tasks) == 0)
        wl_counter_add(out, "late_delay_us", (double)g.delay_ns / 1000.0);
    return rc;
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
    ref_task_t *ts = NULL;
    if (!r.sums || task_records(tasks, &ts) != 0) {
        free(r.sums);
        free(ts);
        return ENOMEM;
    }
    latch_init(&r.done, tasks);
    submit_range(ts, 0, tasks, 1, gran_task, &r);
    latch_wait(&r.done, false);
    uint64_t s = 0;
    for (long i = 0; i < tasks; i++)
        s += r.sums[i];
    free(r.sums);
    free(ts);
    *sum = s;
    return 0;
}

/* ---- the article's experiment and the batching experiment --------------------------- */

/* Both: n tasks of one kernel grain from `subs` submitters (or the calling thread). */
struct grain_run {
    WL_OWN_LINE uint64_t iters; /* WL_OWN_LINE: see workload.h */
    long n, batch;
    bool article;    /* the term: wl_imbalance_task (article), else wl_task_sum */
    uint64_t *terms;
    ref_task_t *ts;
    struct latch done;
};

static void grain_task(void *ctx, long i)
{
    struct grain_run *r = ctx;
    r->terms[i] = r->article
                      ? wl_imbalance_task((uint64_t)i, (uint64_t)r->n, r->iters, 0, 0)
                      : wl_task_sum((uint64_t)i, wl_kernel(r->iters, (uint64_t)i));
    latch_count_down(&r->done);
}

static void grain_share(subs_t *g, long s)
{
    struct grain_run *r = g->ctx;
    long first, last;
    wl_submitter_share(r->n, g->count, s, &first, &last);
    submit_range(r->ts, first, last, r->batch, grain_task, r);
}

/* The run: g NULL: the calling thread submits them all (spin: then spins for the last);
 * else g's submitters.  Fills answer, items and, for a wave, window_s and colocated. */
static int grain_run(struct grain_run *r, subs_t *g, bool spin, bool wave, wl_run_t *out)
{
    r->terms = calloc((size_t)r->n, sizeof *r->terms);
    int rc = task_records(r->n, &r->ts) == 0 && r->terms ? 0 : ENOMEM;
    uint64_t end = 0;
    long colocated = 0;
    if (rc == 0) {
        latch_init(&r->done, r->n);
        if (!g)
            submit_range(r->ts, 0, r->n, r->batch, grain_task, r);
        else if ((rc = subs_run(g)) != 0) /* then no task was started */
            latch_cancel(&r->done, r->n);
        latch_wait(&r->done, spin);
        end = wl_now_ns();
        if (g)
            colocated = subs_finish(g);
    }
    uint64_t sum = 0;
    for (long i = 0; rc == 0 && i < r->n; i++)
        sum += r->terms[i];
    free(r->terms);
    free(r->ts);
    if (run_result(out, rc, sum, r->n) == 0 && wave) {
        wl_counter_add(out, "window_s", end > g->t0 ? (double)(end - g->t0) * 1e-9 : 0.0);
        wl_counter_add(out, "colocated", (double)colocated);
    }
    return rc;
}

int ref_article(const long *args, wl_run_t *out)
{
    int workers = fnrt_workers();
    wl_article_t p;
    if (wl_article_parse(args, workers, &p) != 0)
        return EINVAL;
    struct grain_run r = {.iters = wl_grain_iters(p.grain_us), .n = p.tasks, .batch = 1,
                          .article = true};
    subs_t g = {.count = workers, .late = wl_article_late_count(&p, workers),
                .delay_ns = wl_article_delay_ns(&p, workers), .on_workers = !p.foreign,
                .together = true, .share = grain_share, .ctx = &r};
    int rc = grain_run(&r, &g, false, true, out);
    if (rc == 0) {
        wl_counter_add(out, "late_submitters", (double)g.late);
        wl_counter_add(out, "delay_us", (double)g.delay_ns / 1000.0);
    }
    return rc;
}

int ref_spawn_batch(const long *args, wl_run_t *out)
{
    wl_spawn_batch_t p;
    if (wl_spawn_batch_parse(args, &p))
        return EINVAL;
    int workers = fnrt_workers();
    struct grain_run r = {.iters = wl_grain_iters((double)p.grain_ns / 1000.0), .n = p.n,
                          .batch = p.batch};
    /* one submitter on worker 0 (from 1), or the calling thread (from 0) */
    subs_t g = {.count = p.late ? workers : 1,
                .late = p.late ? wl_spawn_batch_late_count(workers) : 0,
                .delay_ns = p.late ? wl_spawn_batch_delay_ns(&p, workers) : 0,
                .on_workers = p.from_worker, .together = true, .share = grain_share,
                .ctx = &r};
    bool own = !p.late && !p.from_worker;
    return grain_run(&r, own ? NULL : &g, p.spin, p.late, out);
}
