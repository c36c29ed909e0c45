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
 * args: imbalance, grain_us, tasks, submitters, late, skew.  items = tasks; answer = the
 * sum of the tasks' checksum terms (wl_imbalance_task).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "bthread.h"
#include "wl_kernel.h"
#include "workload.h"

typedef struct imb_run imb_run_t;

typedef struct imb_task {
    imb_run_t *run;
    uint64_t sum; /* out: wl_imbalance_task(i, ...) */
} imb_task_t;

struct imb_run {
    long tasks, submitters, late;
    int skew;
    double imbalance;
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
    t->sum = wl_imbalance_task((uint64_t)(t - r->task), (uint64_t)r->tasks, r->iters,
                               r->imbalance, r->skew);
    bthread_countdown_signal(&r->done, 1);
    return NULL;
}

static void imb_sleep_until(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static void *imb_submitter_main(void *arg)
{
    imb_submitter_t *sub = arg;
    imb_run_t *r = sub->run;
    long first, last;
    wl_submitter_share(r->tasks, r->submitters, sub->s, &first, &last);
    if (wl_submitter_is_late(sub->s, r->submitters, r->late))
        imb_sleep_until(r->start_ns + r->delay_ns);
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

static uint64_t imb_sequential(const long *args)
{
    return wl_imbalance_checksum(args[2], wl_grain_iters((double)args[1]), (double)args[0],
                                 args[5] != 0);
}

static int imb_parallel(const long *args, wl_run_t *out)
{
    imb_run_t r = {
        .imbalance = (double)args[0],
        .tasks = args[2],
        .submitters = args[3],
        .late = args[4],
        .skew = args[5] != 0,
    };
    if (args[0] < 0 || args[1] < 0 || r.tasks < 1 || r.tasks > INT32_MAX || r.submitters < 1 ||
        r.late < 0)
        return EINVAL;
    r.iters = wl_grain_iters((double)args[1]);
    r.delay_ns = r.late ? (uint64_t)(1000.0 * wl_late_delay_us(r.tasks, r.submitters,
                                                               (double)args[1],
                                                               bthread_getconcurrency()))
                        : 0;
    atomic_init(&r.err, 0);
    r.task = calloc((size_t)r.tasks, sizeof *r.task);
    r.tid = calloc((size_t)r.tasks, sizeof *r.tid);
    imb_submitter_t *sub = calloc((size_t)r.submitters, sizeof *sub);
    int rc = (r.task && r.tid && sub) ? bthread_countdown_init(&r.done, (int)r.tasks) : ENOMEM;
    if (rc != 0) {
        free(r.task);
        free(r.tid);
        free(sub);
        return rc;
    }
    for (long i = 0; i < r.tasks; i++)
        r.task[i].run = &r;

    r.start_ns = wl_now_ns();
    long started = 0;
    for (; started < r.submitters; started++) {
        sub[started].run = &r;
        sub[started].s = started;
        rc = pthread_create(&sub[started].thread, NULL, imb_submitter_main, &sub[started]);
        if (rc != 0)
            break;
    }
    if (rc != 0) {
        /* Submit the missing shares from here, so every task still runs and the
         * countdown ends; then report the error. */
        for (long s = started; s < r.submitters; s++) {
            sub[s].run = &r;
            sub[s].s = s;
            imb_submitter_main(&sub[s]);
        }
    }
    bthread_countdown_wait(&r.done);
    for (long s = 0; s < started; s++)
        pthread_join(sub[s].thread, NULL);
    uint64_t sum = 0;
    for (long i = 0; i < r.tasks; i++) {
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
    out->items = (double)r.tasks;
    wl_counter_add(out, "iters_per_us", wl_iters_per_us());
    wl_counter_add(out, "late_delay_us", (double)r.delay_ns / 1000.0);
    return 0;
}

static workload_t imbalance = {
    .name = "imbalance",
    .summary = "Task Bench load imbalance: uneven independent tasks from foreign submitters",
    .arg_names = {"imbalance", "grain_us", "tasks", "submitters", "late", "skew"},
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
    .sequential = imb_sequential,
    .parallel = imb_parallel,
};
WORKLOAD_REGISTER(imbalance)
