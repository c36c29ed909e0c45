/*
 * spawn_batch -- brpc's batch API: n busy tasks of grain_ns each (wl_kernel.h's loop),
 * started in batches of `batch` with BTHREAD_NOSIGNAL and a bthread_flush() after each
 * batch (batch 0: every task started plainly, one wake-up signal each: the per-task
 * baseline), from a foreign pthread (from 0) or from a bthread on a worker (from 1).
 * The work-stealing article's claim (seed 003, 4.2): batches of 16-32 gain over 20% for
 * tasks under 1 us.
 *
 * How the submitter waits for the last task decides what it costs the workers: with
 * spin 0 it blocks (bthread_countdown_wait: its core is free while the workers run);
 * with spin 1 it spins on a counter of finished tasks, as a submitting thread that keeps
 * its core does (spin 1 only from a pthread: a bthread spinning on its worker would keep
 * that worker from ever running the tasks it queued there, on a variant without stealing).
 * A spinning pthread submitter beside P workers on P cores takes a core
 * from them; with P workers on P + 1 cores it has one of its own.
 *
 * args: n, batch, from, grain_ns, spin.  answer = the sum of every task's wl_task_sum
 * term.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bthread.h"
#include "wl_kernel.h"
#include "workload.h"

typedef struct batch_run {
    WL_OWN_LINE long n, batch; /* WL_OWN_LINE: see workload.h */
    bool spin;       /* the submitter spins on `finished` instead of blocking */
    atomic_long finished;
    uint64_t iters;
    uint64_t *terms; /* task i's wl_task_sum term */
    bthread_t *tids;
    bthread_countdown_t done;
    int rc;          /* the submitter's first failure */
} batch_run_t;

typedef struct batch_task {
    batch_run_t *run;
    long i;
} batch_task_t;

static void *batch_task(void *arg)
{
    batch_task_t *bt = arg;
    batch_run_t *r = bt->run;
    r->terms[bt->i] = wl_task_sum((uint64_t)bt->i, wl_kernel(r->iters, (uint64_t)bt->i));
    /* release: the spinning submitter's acquire load sees the term written */
    atomic_fetch_add_explicit(&r->finished, 1, memory_order_release);
    bthread_countdown_signal(&r->done, 1);
    return NULL;
}

static inline void batch_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* The submission loop: on the harness thread (from 0) or in a bthread (from 1). */
static void *batch_submit(void *arg)
{
    batch_run_t *r = arg;
    batch_task_t *bts = (batch_task_t *)(r->tids + r->n); /* after the ids: one block */
    bthread_attr_t attr = BTHREAD_ATTR_NORMAL;
    if (r->batch > 0)
        attr.flags |= BTHREAD_NOSIGNAL;
    long started = 0;
    for (long i = 0; i < r->n; i++) {
        bts[i] = (batch_task_t){.run = r, .i = i};
        int rc = bthread_start_background(&r->tids[i], &attr, batch_task, &bts[i]);
        if (rc != 0) {
            r->rc = rc;
            break;
        }
        started++;
        if (r->batch > 0 && started % r->batch == 0)
            bthread_flush();
    }
    if (r->batch > 0)
        bthread_flush(); /* the last, partial batch */
    if (started < r->n) /* the tasks never started will never signal */
        bthread_countdown_signal(&r->done, (int)(r->n - started));
    if (r->spin) /* acquire: pairs with each task's release increment */
        while (atomic_load_explicit(&r->finished, memory_order_acquire) < started)
            batch_pause();
    bthread_countdown_wait(&r->done); /* at once after a spin; it orders the terms too */
    for (long i = 0; i < started; i++) /* none outlives the run (see spawn) */
        bthread_join(r->tids[i], NULL);
    return NULL;
}

static uint64_t batch_sequential(const long *args)
{
    uint64_t iters = wl_grain_iters((double)args[3] / 1000.0), sum = 0;
    for (long i = 0; i < args[0]; i++)
        sum += wl_task_sum((uint64_t)i, wl_kernel(iters, (uint64_t)i));
    return sum;
}

static const char *batch_check(const long *args, int workers)
{
    (void)workers;
    long n = args[0], batch = args[1], from = args[2], grain_ns = args[3], spin = args[4];
    if (n < 1 || n > (1L << 24))
        return "n must be 1..2^24 tasks";
    if (batch < 0)
        return "batch must be >= 0";
    if (from != 0 && from != 1)
        return "from must be 0 (a pthread) or 1 (a bthread)";
    if (grain_ns < 0)
        return "grain_ns must be >= 0";
    if (spin != 0 && spin != 1)
        return "spin must be 0 or 1";
    if (spin && from) /* it would starve its own worker's queue where nothing steals */
        return "spin 1 needs from 0: a bthread spinning on its worker keeps it from its queue";
    return NULL;
}

static int batch_parallel(const long *args, wl_run_t *out)
{
    long n = args[0], batch = args[1], from = args[2], grain_ns = args[3], spin = args[4];
    if (batch_check(args, 0))
        return EINVAL;
    batch_run_t r = {.n = n, .batch = batch, .spin = spin != 0,
                     .iters = wl_grain_iters((double)grain_ns / 1000.0)};
    atomic_init(&r.finished, 0);
    r.terms = calloc((size_t)n, sizeof *r.terms);
    r.tids = malloc((size_t)n * (sizeof *r.tids + sizeof(batch_task_t)));
    if (!r.terms || !r.tids) {
        free(r.terms);
        free(r.tids);
        return ENOMEM;
    }
    int rc = bthread_countdown_init(&r.done, (int)n);
    if (rc == 0) {
        if (from == 0) {
            batch_submit(&r);
        } else {
            bthread_t sub;
            rc = bthread_start_background(&sub, NULL, batch_submit, &r);
            if (rc == 0)
                bthread_join(sub, NULL);
        }
        bthread_countdown_destroy(&r.done);
    }
    if (rc == 0)
        rc = r.rc;
    uint64_t sum = 0;
    for (long i = 0; i < n; i++)
        sum += r.terms[i];
    free(r.terms);
    free(r.tids);
    if (rc != 0)
        return rc;
    out->answer = sum;
    out->items = (double)n;
    wl_counter_add(out, "iters_per_us", wl_iters_per_us());
    return 0;
}

/* The span: independent tasks of one grain. */
static double batch_span_ns(const long *args, int workers, const wl_costs_t *costs)
{
    (void)workers;
    if (args[0] < 1 || args[3] < 0)
        return -1;
    return (double)wl_grain_iters((double)args[3] / 1000.0) * costs->iter_ns;
}

/* The sweep: batch 0 (per-task signal), 1, 4, 16, 32, 64; from a foreign pthread and
 * from a worker; tasks of 0.1, 0.5, 1 and 10 us (n sized for ~10-40 ms per run); the
 * submitter blocking, and (from a pthread) spinning. */
static const long batch_sizes[] = {0, 1, 4, 16, 32, 64};
static const long batch_grains_ns[] = {100, 500, 1000, 10000};

static workload_t spawn_batch = {
    .name = "spawn_batch",
    .summary = "tasks started in NOSIGNAL batches + bthread_flush, from a pthread or a worker",
    .arg_names = {"n", "batch", "from", "grain_ns", "spin"},
    /* by default the article's case: 0.5 us tasks, per-task signal vs batches of 32, the
     * submitter blocking or spinning */
    .bench = {{20000, 0, 0, 500, 0}, {20000, 32, 0, 500, 0}, {20000, 0, 1, 500, 0},
              {20000, 32, 1, 500, 0}, {20000, 0, 0, 500, 1}, {20000, 32, 0, 500, 1}},
    .nbench = 6,
    .test = {3000, 16, 0, 100, 0},
    .test_more = {{3000, 0, 0, 100, 0}, {3000, 1, 1, 100, 0}, {3000, 64, 1, 500, 0},
                  {500, 7, 0, 0, 0}, {3000, 32, 0, 100, 1}, {2000, 0, 0, 100, 1}},
    .ntest_more = 6,
    .sequential = batch_sequential,
    .parallel = batch_parallel,
    .span_ns = batch_span_ns,
    .check = batch_check,
};

/* full: every combination not already in bench (filled before registering) */
static void __attribute__((constructor)) workload_register_spawn_batch(void)
{
    int k = 0;
    for (size_t g = 0; g < sizeof batch_grains_ns / sizeof batch_grains_ns[0]; g++)
        for (long from = 0; from <= 1; from++)
            for (size_t b = 0; b < sizeof batch_sizes / sizeof batch_sizes[0]; b++) {
                long grain = batch_grains_ns[g], bs = batch_sizes[b];
                if (grain == 500 && (bs == 0 || bs == 32))
                    continue; /* in bench */
                /* a spinning submitter: from a pthread, per-task signal or batches of 32 */
                long spins = from == 0 && (bs == 0 || bs == 32) ? 2 : 1;
                for (long spin = 0; spin < spins; spin++) {
                    long set[WL_MAX_ARGS] = {grain >= 10000 ? 4000 : 20000, bs, from, grain,
                                             spin};
                    if (k == WL_MAX_SETS) { /* a programming error: raise WL_MAX_SETS */
                        fprintf(stderr, "spawn_batch: more than %d full sets\n", WL_MAX_SETS);
                        abort();
                    }
                    memcpy(spawn_batch.full[k++], set, sizeof set);
                }
            }
    spawn_batch.nfull = k;
    workload_register(&spawn_batch);
}
