/*
 * granularity -- Task Bench's METG(50%): the smallest task granularity at which the
 * scheduler still keeps half of its workers' time on useful work.
 *
 * One run sweeps the grains of wl_grains_us (1000, 300, 100, 30, 10, 3, 1 us of kernel
 * per task), coarse to fine.  At each grain the same number of independent tasks is
 * started by one root bthread and joined by it; the step's wall time is measured from
 * the caller.  The same tasks run once on one thread to give the sequential time (done
 * at the first run with a given task count and kept for the process: it is the
 * denominator, not the measurement).  Then, per step,
 *     efficiency  = sequential time / (wall time * workers)
 *     granularity = wall time * workers / tasks               (us per task)
 * and metg_us = the granularity of the finest step still at >= 50% efficiency, walking
 * from the coarsest and stopping at the first step below (no interpolation; -1 when even
 * the coarsest step is below 50%).  Counters: metg_us and eff_<grain>us per step.
 * wl_granularity_run() and wl_metg() in wl_kernel.h do the sweep and this arithmetic
 * for the references too.
 *
 * args: tasks (per step).  items = all tasks of the sweep; answer = the sum of every
 * task's checksum term.
 */
#include <errno.h>
#include <stdlib.h>

#include "bthread.h"
#include "wl_defs.h"
#include "workload.h"

typedef struct gran_step gran_step_t;

typedef struct gran_task {
    const gran_step_t *step;
    uint64_t sum; /* out: wl_granularity_task(g, i, iters) */
} gran_task_t;

struct gran_step {
    WL_OWN_LINE int g; /* WL_OWN_LINE: see workload.h */
    uint64_t iters;
    long tasks;
    gran_task_t *task;
    bthread_t *tid;
};

static void *gran_task_main(void *arg)
{
    gran_task_t *t = arg;
    const gran_step_t *st = t->step;
    t->sum = wl_granularity_task(st->g, (uint64_t)(t - st->task), st->iters);
    return NULL;
}

/* The root: start every task of the step, then join them all. */
static void *gran_root_main(void *arg)
{
    gran_step_t *st = arg;
    for (long i = 0; i < st->tasks; i++) {
        if (bthread_start_background(&st->tid[i], &BTHREAD_ATTR_SMALL, gran_task_main,
                                     &st->task[i]) != 0) {
            st->tid[i] = 0; /* no task to spare: run it here */
            gran_task_main(&st->task[i]);
        }
    }
    for (long i = 0; i < st->tasks; i++)
        if (st->tid[i])
            bthread_join(st->tid[i], NULL);
    return NULL;
}

/* One step on bthreads: the root starts every task and joins them (wl_granularity_run
 * times it from here). */
static int gran_step(void *ctx, int g, long tasks, uint64_t iters, uint64_t *sum)
{
    gran_step_t *st = ctx;
    st->g = g;
    st->iters = iters;
    bthread_t root;
    int rc = bthread_start_background(&root, &BTHREAD_ATTR_SMALL, gran_root_main, st);
    if (rc == 0)
        rc = bthread_join(root, NULL);
    uint64_t s = 0;
    for (long i = 0; i < tasks; i++)
        s += st->task[i].sum;
    *sum = s;
    return rc;
}

static int gran_parallel(const long *args, wl_run_t *out)
{
    long tasks = args[0];
    if (tasks < 1)
        return EINVAL;
    gran_step_t st = {.tasks = tasks};
    st.task = calloc((size_t)tasks, sizeof *st.task);
    st.tid = calloc((size_t)tasks, sizeof *st.tid);
    int rc = st.task && st.tid ? 0 : ENOMEM;
    for (long i = 0; rc == 0 && i < tasks; i++)
        st.task[i].step = &st;
    if (rc == 0)
        rc = wl_granularity_run(tasks, bthread_getconcurrency(), gran_step, &st, out);
    free(st.task);
    free(st.tid);
    return rc;
}

static workload_t granularity = {
    .name = "granularity",
    .summary = "Task Bench METG(50%): efficiency of independent tasks from 1000 us to 1 us",
    .arg_names = WL_GRANULARITY_ARGS,
    .bench = {{500}},
    .nbench = 1,
    .full = {{2000}},
    .nfull = 1,
    .test = {40},
    .sequential = wl_granularity_answer,
    .parallel = gran_parallel,
};
WORKLOAD_REGISTER(granularity)
