/*
 * imbalance -- independent tasks of uneven size (Task Bench's load-imbalance kernel),
 * submitted from foreign pthreads: the remote-queue path, then balancing.
 *
 * Task i busy-computes round((1 + (u_i - 0.5) * imbalance) * iters) kernel iterations,
 * u_i in [0, 1) a fixed hash of i, iters = grain_us worth of the kernel (calibrated once
 * per process; see workloads/wl_kernel.h, shared with the oneTBB / OpenMP references).
 * With imbalance 2 the tasks range over 0x..2x of the grain, mean 1x.
 *
 * `submitters` plain pthreads each start a contiguous share of the tasks with
 * bthread_start_background.  With late = 1 the upper half of them begin only after a
 * delay (half the early half's work at perfect speedup), so work arrives in two waves:
 * what a scheduler does with tasks that land while its workers are busy, or asleep,
 * shows here.  Completion: one bthread_countdown for all tasks, then every task is joined
 * (cheap: they have finished) so that none is left behind.
 *
 * skew = 1 replaces the hashed u_i by (i + 1/2) / tasks: the same sizes, rising along the
 * list (a "skewed task list"), so that a contiguous split of the list is unbalanced; how
 * much that costs a variant depends on where it places tasks it cannot steal.
 *
 * args: imbalance, grain_us, tasks, submitters, late, skew (wl_imbalance_t in wl_defs.h,
 * shared with the reference rows).  items = tasks; answer = the sum of the tasks'
 * checksum terms (wl_imbalance_task, wl_imbalance_answer).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bthread.h"
#include "timeutil.h"
#include "wl_defs.h"
#include "workload.h"

typedef struct imb_run imb_run_t;

typedef struct imb_task {
    imb_run_t *run;
    uint64_t sum; /* out: wl_imbalance_task(i, ...) */
} imb_task_t;

struct imb_run {
    WL_OWN_LINE wl_imbalance_t p; /* the arguments; WL_OWN_LINE: see workload.h */
    uint64_t iters;    /* kernel iterations of a nominal task */
    uint64_t start_ns; /* when the run began (wl_now_ns) */
    uint64_t delay_ns; /* how long late submitters wait after start_ns */
    imb_task_t *task;
    bthread_t *tid;
    bthread_countdown_t done;
    atomic_int err; /* the first failure to start a task; 0 if none */
};

typedef struct imb_submitter {
    imb_run_t *run;
    long s;
    pthread_t thread;
} imb_submitter_t;

static void *imb_task_main(void *arg)
{
    imb_task_t *t = arg;
    imb_run_t *r = t->run;
    t->sum = wl_imbalance_task((uint64_t)(t - r->task), (uint64_t)r->p.tasks, r->iters,
                               r->p.imbalance, r->p.skew);
    bthread_countdown_signal(&r->done, 1);
    return NULL;
}

static void *imb_submitter_main(void *arg)
{
    imb_submitter_t *sub = arg;
    imb_run_t *r = sub->run;
    long first, last;
    wl_submitter_share(r->p.tasks, r->p.submitters, sub->s, &first, &last);
    if (wl_submitter_is_late(sub->s, r->p.submitters, r->p.late))
        sb_sleep_until_ns((int64_t)(r->start_ns + r->delay_ns));
    for (long i = first; i < last; i++) {
        int rc = bthread_start_background(&r->tid[i], &BTHREAD_ATTR_SMALL, imb_task_main,
                                          &r->task[i]);
        if (rc != 0) {
            /* Count the task as done so the wait ends; the run reports the error.
             * Relaxed: read only after this thread is joined. */
            int zero = 0;
            atomic_compare_exchange_strong_explicit(&r->err, &zero, rc, memory_order_relaxed,
                                                    memory_order_relaxed);
            r->tid[i] = 0;
            bthread_countdown_signal(&r->done, 1);
        }
    }
    return NULL;
}

static int imb_parallel(const long *args, wl_run_t *out)
{
    imb_run_t r;
    memset(&r, 0, sizeof r);
    if (wl_imbalance_parse(args, &r.p) != 0 || r.p.tasks > INT32_MAX) /* countdown: int */
        return EINVAL;
    r.iters = wl_grain_iters(r.p.grain_us);
    r.delay_ns = wl_imbalance_delay_ns(&r.p, bthread_getconcurrency());
    atomic_init(&r.err, 0);
    r.task = calloc((size_t)r.p.tasks, sizeof *r.task);
    r.tid = calloc((size_t)r.p.tasks, sizeof *r.tid);
    imb_submitter_t *sub = calloc((size_t)r.p.submitters, sizeof *sub);
    int rc = (r.task && r.tid && sub) ? bthread_countdown_init(&r.done, (int)r.p.tasks) : ENOMEM;
    if (rc != 0) {
        free(r.task);
        free(r.tid);
        free(sub);
        return rc;
    }
    for (long i = 0; i < r.p.tasks; i++)
        r.task[i].run = &r;

    r.start_ns = wl_now_ns();
    long started = 0;
    for (; started < r.p.submitters; started++) {
        sub[started].run = &r;
        sub[started].s = started;
        rc = pthread_create(&sub[started].thread, NULL, imb_submitter_main, &sub[started]);
        if (rc != 0)
            break;
    }
    if (rc != 0) {
        /* Submit the missing shares from here, so every task still runs and the
         * countdown ends; then report the error. */
        for (long s = started; s < r.p.submitters; s++) {
            sub[s].run = &r;
            sub[s].s = s;
            imb_submitter_main(&sub[s]);
        }
    }
    bthread_countdown_wait(&r.done);
    for (long s = 0; s < started; s++)
        pthread_join(sub[s].thread, NULL);
    uint64_t sum = 0;
    for (long i = 0; i < r.p.tasks; i++) {
        if (r.tid[i])
            bthread_join(r.tid[i], NULL);
        sum += r.task[i].sum;
    }
    bthread_countdown_destroy(&r.done);
    if (rc == 0)
        rc = atomic_load_explicit(&r.err, memory_order_relaxed); /* after the joins */
    free(r.task);
    free(r.tid);
    free(sub);
    if (rc != 0)
        return rc;
    out->answer = sum;
    out->items = (double)r.p.tasks;
    wl_counter_add(out, "iters_per_us", wl_iters_per_us());
    wl_counter_add(out, "late_delay_us", (double)r.delay_ns / 1000.0);
    return 0;
}

/* The span: tasks are independent, so the longest task, after its submitter's delay
 * (late = 1: the upper half of the submitters start late). */
static double imb_span_ns(const long *args, int workers, const wl_costs_t *costs)
{
    double iter_ns = costs->iter_ns;
    wl_imbalance_t p;
    if (wl_imbalance_parse(args, &p) != 0)
        return -1;
    uint64_t base = wl_grain_iters(p.grain_us);
    double delay = (double)wl_imbalance_delay_ns(&p, workers), span = 0;
    for (long s = 0; s < p.submitters; s++) {
        long first, last;
        wl_submitter_share(p.tasks, p.submitters, s, &first, &last);
        double start = wl_submitter_is_late(s, p.submitters, p.late) ? delay : 0;
        for (long i = first; i < last; i++) {
            double end = start + iter_ns * (double)wl_imbalance_task_iters(
                                               (uint64_t)i, (uint64_t)p.tasks, base,
                                               p.imbalance, p.skew);
            if (end > span)
                span = end;
        }
    }
    return span;
}

static workload_t imbalance = {
    .name = "imbalance",
    .summary = "Task Bench load imbalance: uneven independent tasks from foreign submitters",
    .arg_names = WL_IMBALANCE_ARGS,
    .bench = {{0, 10, 20000, 1, 0, 0},
              {2, 10, 20000, 1, 0, 0},
              {2, 10, 20000, 1, 0, 1},
              {2, 10, 20000, 4, 0, 0},
              {2, 10, 20000, 4, 1, 0},
              {2, 1000, 64, 1, 0, 0}},
    .nbench = 6,
    .full = {{1, 10, 20000, 1, 0, 0},
             {2, 10, 20000, 4, 1, 1},
             {2, 100, 4000, 8, 1, 0},
             {2, 1, 200000, 4, 0, 0}},
    .nfull = 4,
    .test = {2, 5, 400, 3, 1, 0},
    .test_more = {{2, 5, 400, 2, 0, 1}, {0, 1, 300, 1, 0, 0}},
    .ntest_more = 2,
    .sequential = wl_imbalance_answer,
    .parallel = imb_parallel,
    .span_ns = imb_span_ns,
};
WORKLOAD_REGISTER(imbalance)
