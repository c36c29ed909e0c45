/*
 * dag -- a 2-D wavefront task graph run by dependency counters (a DependencyTask
 * scheme): cell (i, j) of an n x n grid may run once its left (i, j-1) and upper
 * (i-1, j) neighbours have finished.  Each cell holds a counter of unfinished
 * predecessors; the task that finishes a cell decrements its successors' counters, and
 * whoever brings a counter to zero makes that cell runnable.  Parallelism grows along
 * the anti-diagonals and shrinks again: ramp-up, steady state and drain in one run.
 *
 * Every cell that becomes ready is started as a bthread of its own (n * n bthreads in
 * all), by the task that finished its last predecessor: dependency-triggered spawns,
 * one at each step of the wavefront.  (Continuing inline with one ready successor, as
 * oneTBB's task bypass does, turns the grid into n row pipelines with n bthreads and
 * leaves the scheduler little to do.)  If a start fails, the cell is kept on a local
 * list and run by the finisher itself, so the graph always completes.
 *
 * Each cell computes value = kernel(grain_us, seed(left value, up value, i, j)): a cell
 * that ran before a predecessor finished would read a 0 and change the checksum, so the
 * answer (sum of every cell's checksum term, equal to the row-major sequential sweep's)
 * checks that every dependency was respected.
 *
 * Completion: each bthread signals one countdown with the number of cells it ran, after
 * storing the ids of the bthreads it started; the caller then joins those ids.
 * args: n (grid side), grain_us.  items = cells.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "bthread.h"
#include "wl_kernel.h"
#include "workload.h"

typedef struct dag_run dag_run_t;

typedef struct dag_cell {
    dag_run_t *run;
    uint64_t value;
    bthread_t tid;                /* the bthread started for this cell, or 0 */
    struct dag_cell *next_local;  /* link in a runner's list of cells it could not start */
    atomic_int deps;              /* predecessors not finished yet */
} dag_cell_t;

struct dag_run {
    WL_OWN_LINE long n; /* WL_OWN_LINE: see workload.h */
    uint64_t iters;
    dag_cell_t *cell; /* row-major, n * n */
    bthread_countdown_t done;
};

static inline uint64_t dag_value(uint64_t left, uint64_t up, long i, long j, uint64_t iters)
{
    uint64_t seed = wl_mix64(left) ^ (up * 0x9e3779b97f4a7c15ull) ^
                    ((uint64_t)i << 32 | (uint64_t)j);
    return wl_kernel(iters, seed);
}

static void *dag_main(void *arg)
{
    dag_cell_t *c = arg, *local = NULL;
    dag_run_t *r = c->run;
    const long n = r->n;
    int ran = 0;
    while (c) {
        long k = c - r->cell, i = k / n, j = k % n;
        uint64_t left = j > 0 ? r->cell[k - 1].value : 0;
        uint64_t up = i > 0 ? r->cell[k - n].value : 0;
        c->value = dag_value(left, up, i, j, r->iters);
        ran++;

        dag_cell_t *succ[2];
        int nsucc = 0;
        if (j + 1 < n)
            succ[nsucc++] = &r->cell[k + 1];
        if (i + 1 < n)
            succ[nsucc++] = &r->cell[k + n];
        for (int s = 0; s < nsucc; s++) {
            /* acq_rel: the release half publishes c->value to whoever runs the
             * successor; the acquire half, when this was the last predecessor, makes the
             * other predecessor's value (released by its own decrement) visible here,
             * and so to the successor we start (starting orders it after) or run. */
            if (atomic_fetch_sub_explicit(&succ[s]->deps, 1, memory_order_acq_rel) != 1)
                continue;
            if (bthread_start_background(&succ[s]->tid, &BTHREAD_ATTR_SMALL, dag_main,
                                         succ[s]) != 0) {
                succ[s]->tid = 0; /* no task to spare: run it here */
                succ[s]->next_local = local;
                local = succ[s];
            }
        }
        c = local;
        if (local)
            local = local->next_local;
    }
    /* Last: the ids stored above are visible to the caller once the count hits 0. */
    bthread_countdown_signal(&r->done, ran);
    return NULL;
}

static uint64_t dag_sequential(const long *args)
{
    long n = args[0];
    uint64_t iters = wl_grain_iters((double)args[1]), sum = 0;
    uint64_t *row = calloc((size_t)(n > 0 ? n : 1), sizeof *row); /* the row above */
    if (!row)
        return 0; /* never a checksum in practice: the parallel run reports ENOMEM */
    for (long i = 0; i < n; i++) {
        uint64_t left = 0;
        for (long j = 0; j < n; j++) {
            uint64_t v = dag_value(left, row[j], i, j, iters);
            sum += wl_task_sum((uint64_t)(i * n + j), v);
            row[j] = left = v;
        }
    }
    free(row);
    return sum;
}

static int dag_parallel(const long *args, wl_run_t *out)
{
    long n = args[0];
    if (n < 1 || n > 46340 || args[1] < 0) /* n * n must fit the countdown's int */
        return EINVAL;
    dag_run_t r = {.n = n, .iters = wl_grain_iters((double)args[1])};
    r.cell = calloc((size_t)(n * n), sizeof *r.cell);
    if (!r.cell)
        return ENOMEM;
    int rc = bthread_countdown_init(&r.done, (int)(n * n));
    if (rc != 0) {
        free(r.cell);
        return rc;
    }
    for (long k = 0; k < n * n; k++) {
        r.cell[k].run = &r;
        atomic_init(&r.cell[k].deps, (k / n > 0) + (k % n > 0));
    }
    rc = bthread_start_background(&r.cell[0].tid, &BTHREAD_ATTR_SMALL, dag_main, &r.cell[0]);
    if (rc == 0) {
        bthread_countdown_wait(&r.done);
        for (long k = 0; k < n * n; k++)
            if (r.cell[k].tid)
                bthread_join(r.cell[k].tid, NULL);
    }
    bthread_countdown_destroy(&r.done);
    if (rc == 0) {
        uint64_t sum = 0, started = 0;
        for (long k = 0; k < n * n; k++) {
            sum += wl_task_sum((uint64_t)k, r.cell[k].value);
            started += r.cell[k].tid != 0;
        }
        out->answer = sum;
        out->items = (double)(n * n);
        wl_counter_add(out, "bthreads", (double)started);
        wl_counter_add(out, "iters_per_us", wl_iters_per_us());
    }
    free(r.cell);
    return rc;
}

/* The span: a path from (0, 0) to (n-1, n-1) through 2n - 1 cells, all of one grain. */
static double dag_span_ns(const long *args, int workers, const wl_costs_t *costs)
{
    (void)workers;
    if (args[0] < 1 || args[1] < 0)
        return -1;
    return (double)(2 * args[0] - 1) * (double)wl_grain_iters((double)args[1]) * costs->iter_ns;
}

static workload_t dag = {
    .name = "dag",
    .summary = "2-D wavefront task graph run by dependency counters (DependencyTask)",
    .arg_names = {"n", "grain_us"},
    .bench = {{100, 10}, {300, 1}},
    .nbench = 2,
    .full = {{1000, 1}, {30, 1000}},
    .nfull = 2,
    .test = {24, 2},
    .sequential = dag_sequential,
    .parallel = dag_parallel,
    .span_ns = dag_span_ns,
};
WORKLOAD_REGISTER(dag)
