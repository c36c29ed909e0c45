/*
 * spawn_batch -- section 4.2's batching experiment on brpc's batch API: n busy tasks of
 * grain_ns each (wl_kernel.h's loop), started in batches of `batch` with
 * BTHREAD_NOSIGNAL and a bthread_flush() after each batch (batch 0: every task started
 * plainly, one wake-up signal each: the per-task baseline), by submitters that are
 * bthreads on workers (from 1) or plain pthreads (from 0); late 0: one submitter, late 1:
 * one per worker, the last half late by D = W / 2P (wl_submitters.h, as the article's
 * experiment at its peak).  The work-stealing article's claim (seed 003, 4.2): batches
 * of 16-32 gain over 20% for tasks under 1 us.  The definition (arguments, answer, what
 * cannot run) is wl_defs.h's, which the reference rows share.
 *
 * How one pthread submitter (late 0, from 0) waits for the last task decides what it
 * costs the workers: with spin 0 it blocks (bthread_countdown_wait: its core is free
 * while the workers run); with spin 1 it spins on a counter of finished tasks, as a
 * submitting thread that keeps its core does.  A spinning pthread submitter beside P
 * workers on P cores takes a core from them; with P workers on P + 1 cores it has one
 * of its own.  A bthread submitter (late 0, from 1) waits for the tasks in a countdown.
 *
 * args: n, batch, from, grain_ns, spin, late.  answer = the sum of every task's
 * wl_task_sum term.  counters: iters_per_us; late 1 also window_s (from every submitter
 * in place to the last task done) and colocated (as the article's).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bthread.h"
#include "wl_defs.h"
#include "wl_submitters.h"
#include "workload.h"

typedef struct batch_task batch_task_t;

typedef struct batch_run {
    WL_OWN_LINE wl_spawn_batch_t p; /* WL_OWN_LINE: see workload.h */
    atomic_long finished;
    uint64_t iters;
    uint64_t *terms; /* task i's wl_task_sum term */
    bthread_t *tids;
    batch_task_t *bts;
    bthread_countdown_t done;
    wl_subs_t subs; /* late 1 */
    atomic_int rc;  /* the first failure to start a task */
} batch_run_t;

struct batch_task {
    batch_run_t *run;
    long i;
};

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

/* Start tasks [first, last) in batches; the countdown is signalled for any that could
 * not start.  How many started. */
static long batch_start(batch_run_t *r, long first, long last)
{
    bthread_attr_t attr = BTHREAD_ATTR_NORMAL;
    if (r->p.batch > 0)
        attr.flags |= BTHREAD_NOSIGNAL;
    long started = 0;
    for (long i = first; i < last; i++) {
        r->bts[i] = (batch_task_t){.run = r, .i = i};
        int rc = bthread_start_background(&r->tids[i], &attr, batch_task, &r->bts[i]);
        if (rc != 0) {
            int zero = 0; /* relaxed: read after every submitter is joined */
            atomic_compare_exchange_strong_explicit(&r->rc, &zero, rc, memory_order_relaxed,
                                                    memory_order_relaxed);
            r->tids[i] = 0; /* never joined (the rest are 0 from calloc) */
            break;
        }
        started++;
        if (r->p.batch > 0 && started % r->p.batch == 0)
            bthread_flush();
    }
    if (r->p.batch > 0)
        bthread_flush(); /* the last, partial batch */
    if (started < last - first) /* the tasks never started will never signal */
        bthread_countdown_signal(&r->done, (int)(last - first - started));
    return started;
}

static inline void batch_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* late 0: the one submitter, on the harness thread (from 0) or in a bthread (from 1). */
static void *batch_submit(void *arg)
{
    batch_run_t *r = arg;
    long started = batch_start(r, 0, r->p.n);
    if (r->p.spin) /* acquire: pairs with each task's release increment */
        while (atomic_load_explicit(&r->finished, memory_order_acquire) < started)
            batch_pause();
    bthread_countdown_wait(&r->done); /* at once after a spin; it orders the terms too */
    return NULL;
}

/* late 1: submitter s's share, once its time has come. */
static void batch_share(wl_subs_t *g, long s, bool on_bthread)
{
    (void)on_bthread;
    batch_run_t *r = g->ctx;
    long first, last;
    wl_submitter_share(r->p.n, g->workers, s, &first, &last);
    batch_start(r, first, last);
}

static const char *batch_check(const long *args, int workers)
{
    (void)workers;
    wl_spawn_batch_t p;
    return wl_spawn_batch_parse(args, &p);
}

static int batch_parallel(const long *args, wl_run_t *out)
{
    batch_run_t r;
    memset(&r, 0, sizeof r);
    if (wl_spawn_batch_parse(args, &r.p))
        return EINVAL;
    long n = r.p.n;
    int workers = bthread_getconcurrency();
    r.iters = wl_grain_iters((double)r.p.grain_ns / 1000.0);
    atomic_init(&r.finished, 0);
    atomic_init(&r.rc, 0);
    r.terms = calloc((size_t)n, sizeof *r.terms);
    r.tids = calloc((size_t)n, sizeof *r.tids);
    r.bts = malloc((size_t)n * sizeof *r.bts);
    int rc = r.terms && r.tids && r.bts ? bthread_countdown_init(&r.done, (int)n) : ENOMEM;
    if (rc == 0 && r.p.late &&
        (rc = wl_subs_init(&r.subs, workers, !r.p.from_worker,
                           wl_spawn_batch_late_count(workers),
                           wl_spawn_batch_delay_ns(&r.p, workers), batch_share, &r)) != 0)
        bthread_countdown_destroy(&r.done);
    if (rc != 0) {
        free(r.terms);
        free(r.tids);
        free(r.bts);
        return rc;
    }
    uint64_t t0 = 0, end = 0;
    long colocated = 0;
    if (r.p.late) {
        wl_subs_run(&r.subs);
        bthread_countdown_wait(&r.done);
        end = wl_now_ns();
        t0 = wl_subs_t0(&r.subs);
        rc = wl_subs_finish(&r.subs);
        /* relaxed: after the joins */
        colocated = atomic_load_explicit(&r.subs.colocated, memory_order_relaxed);
    } else if (!r.p.from_worker) {
        batch_submit(&r);
    } else {
        bthread_t sub;
        rc = bthread_start_background(&sub, NULL, batch_submit, &r);
        if (rc == 0)
            bthread_join(sub, NULL);
    }
    for (long i = 0; i < n; i++) /* none outlives the run (see spawn) */
        if (r.tids[i])
            bthread_join(r.tids[i], NULL);
    bthread_countdown_destroy(&r.done);
    if (rc == 0) /* relaxed: after the joins */
        rc = atomic_load_explicit(&r.rc, memory_order_relaxed);
    uint64_t sum = 0;
    for (long i = 0; i < n; i++)
        sum += r.terms[i];
    free(r.terms);
    free(r.tids);
    free(r.bts);
    if (rc != 0)
        return rc;
    out->answer = sum;
    out->items = (double)n;
    wl_counter_add(out, "iters_per_us", wl_iters_per_us());
    if (r.p.late) {
        wl_counter_add(out, "window_s", t0 && end > t0 ? (double)(end - t0) * 1e-9 : 0.0);
        wl_counter_add(out, "colocated", (double)colocated);
    }
    return 0;
}

/* The span: independent tasks of one grain, plus D for a late wave. */
static double batch_span_ns(const long *args, int workers, const wl_costs_t *costs)
{
    wl_spawn_batch_t p;
    if (wl_spawn_batch_parse(args, &p))
        return -1;
    double task = (double)wl_grain_iters((double)p.grain_ns / 1000.0) * costs->iter_ns;
    return (p.late && wl_spawn_batch_late_count(workers) > 0
                ? (double)wl_spawn_batch_delay_ns(&p, workers) : 0.0) + task;
}

/* The sweep (section 4.2): tasks of 0.1, 0.25, 0.5 and 1 us and 10 us as the control
 * (n sized for ~2-40 ms of work a run); batch 0 (the per-task baseline) and batches of
 * 4, 16, 32 and 64; from a pthread and from a worker; one submitter and the late wave.
 * Default: all of those with the submitter blocking, and a spinning pthread at 0.5 us
 * (baseline and 32); the first set is the article's case's baseline.  --full adds
 * batches of 1 (NOSIGNAL + a flush after every task), the spinning pthread at every
 * grain, and 10^5 empty tasks from a worker one at a time (a task's cost: the targets'
 * per-task comparison).  The quick sweep runs the whole grid only on the rows of the batching question
 * (harness/driver/config.py, BATCH_*). */
static const long batch_sizes[] = {0, 4, 16, 32, 64};
static const long batch_grains_ns[] = {500, 100, 250, 1000, 10000};
#define BATCH_N(grain) ((grain) >= 10000 ? 4000 : 20000)

static workload_t spawn_batch = {
    .name = "spawn_batch",
    .summary = "tasks started in NOSIGNAL batches + bthread_flush, by one submitter or one "
               "per worker (half late), from a pthread or a worker",
    .arg_names = WL_SPAWN_BATCH_ARGS,
    .test = {3000, 16, 0, 100, 0, 0},
    .test_more = {{3000, 0, 0, 100, 0, 0}, {3000, 1, 1, 100, 0, 0}, {3000, 64, 1, 500, 0, 0},
                  {500, 7, 0, 0, 0, 0}, {3000, 32, 0, 100, 1, 0}, {2000, 0, 0, 100, 1, 0},
                  {3000, 0, 1, 100, 0, 1}, {3000, 32, 0, 250, 0, 1}, {2000, 4, 1, 0, 0, 1}},
    .ntest_more = 9,
    .sequential = wl_spawn_batch_answer,
    .parallel = batch_parallel,
    .span_ns = batch_span_ns,
    .check = batch_check,
};

static void batch_add(long (*sets)[WL_MAX_ARGS], int *count, long n, long batch, long from,
                      long grain, long spin, long late)
{
    if (*count == WL_MAX_SETS) { /* a programming error: raise WL_MAX_SETS */
        fprintf(stderr, "spawn_batch: more than %d sets\n", WL_MAX_SETS);
        abort();
    }
    long set[WL_MAX_ARGS] = {n, batch, from, grain, spin, late};
    memcpy(sets[(*count)++], set, sizeof set);
}

/* The sets, filled before registering. */
static void __attribute__((constructor)) workload_register_spawn_batch(void)
{
    int nb = 0, nf = 0;
    for (size_t g = 0; g < sizeof batch_grains_ns / sizeof batch_grains_ns[0]; g++) {
        long grain = batch_grains_ns[g], n = BATCH_N(grain);
        for (long late = 0; late <= 1; late++)
            for (long from = 0; from <= 1; from++) {
                for (size_t b = 0; b < sizeof batch_sizes / sizeof batch_sizes[0]; b++)
                    batch_add(spawn_batch.bench, &nb, n, batch_sizes[b], from, grain, 0, late);
                batch_add(spawn_batch.full, &nf, n, 1, from, grain, 0, late);
            }
        for (long bs = 0; bs <= 32; bs += 32) /* the spinning pthread: 0 and 32 */
            batch_add(grain == 500 ? spawn_batch.bench : spawn_batch.full,
                      grain == 500 ? &nb : &nf, n, bs, 0, grain, 1, 0);
    }
    batch_add(spawn_batch.full, &nf, 100000, 0, 1, 0, 0, 0);
    spawn_batch.nbench = nb;
    spawn_batch.nfull = nf;
    workload_register(&spawn_batch);
}
