/*
 * bench_main.c -- build/<variant>/bench: every workload and harness benchmark, on one
 * scheduler variant, through the bench driver (driver.h) and Google Benchmark.
 *
 *   build/<v>/bench [--workers N] [--full | --smoke] [--benchmark_* flags...]
 *
 *   --workers N   the worker count, 1 to BTHREAD_MAX_CONCURRENCY (bthread_setconcurrency
 *                 before anything starts); default: the library's own default.
 *   --full        also register each workload's `full` argument sets (as does the
 *                 environment variable SCHEDBENCH_FULL=1).
 *   --smoke       register each workload's small `test` sets instead (a quick check that
 *                 the harness runs; not for measurement).
 *
 * What is the variant's own, and only that, is here: starting its workers, its counters
 * (bthread_get_stats, summed over the workers: steals, steal_attempts, stolen_tasks,
 * parks, switches, wakeups, remote_pops, remote_takes, remote_pushes, woken, flushes,
 * flushed_tasks, elastic_parks, elastic_wakes; and the ratios tasks_per_remote_take,
 * tasks_per_flush, wakeups_per_task (woken per item)) and its topology line and worker placement
 * (bthread_describe_topology, bthread_worker_placement).  Only the public API
 * (bthread.h): this file is compiled once and linked with every variant's library.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bthread.h"
#include "driver.h"

enum { ST_STEALS, ST_ATTEMPTS, ST_STOLEN, ST_PARKS, ST_SWITCHES, ST_WAKEUPS, ST_REMOTE,
       ST_TAKES, ST_PUSHES, ST_WOKEN, ST_FLUSHES, ST_FLUSHED, ST_EPARKS, ST_EWAKES, ST_N };
static const char *const stat_names[ST_N] = {
    "steals",       "steal_attempts", "stolen_tasks", "parks",         "switches",
    "wakeups",      "remote_pops",    "remote_takes", "remote_pushes", "woken",
    "flushes",      "flushed_tasks",  "elastic_parks", "elastic_wakes"};
static const struct drv_ratio ratios[] = {
    {"tasks_per_remote_take", ST_REMOTE, ST_TAKES},
    {"tasks_per_flush", ST_FLUSHED, ST_FLUSHES},
    {"wakeups_per_task", ST_WOKEN, DRV_ITEMS},
    {NULL, 0, 0},
};

/* The counters above summed over all workers (zeros while the scheduler is stopped). */
static void stats_sum(double *sum)
{
    static bthread_worker_stats_t *buf;
    static int cap;
    int n;
    while ((n = bthread_get_stats(buf, cap)) > cap) {
        free(buf);
        cap = n;
        buf = malloc((size_t)cap * sizeof *buf);
        if (!buf) {
            cap = 0;
            n = 0;
            break;
        }
    }
    memset(sum, 0, ST_N * sizeof sum[0]);
    for (int i = 0; i < n; i++) {
        sum[ST_STEALS] += (double)buf[i].steals;
        sum[ST_ATTEMPTS] += (double)buf[i].steal_attempts;
        sum[ST_STOLEN] += (double)buf[i].stolen_tasks;
        sum[ST_PARKS] += (double)buf[i].parks;
        sum[ST_SWITCHES] += (double)buf[i].switches;
        sum[ST_WAKEUPS] += (double)buf[i].wakeups;
        sum[ST_REMOTE] += (double)buf[i].remote_pops;
        sum[ST_TAKES] += (double)buf[i].remote_takes;
        sum[ST_PUSHES] += (double)buf[i].remote_pushes;
        sum[ST_WOKEN] += (double)buf[i].woken;
        sum[ST_FLUSHES] += (double)buf[i].flushes;
        sum[ST_FLUSHED] += (double)buf[i].flushed_tasks;
        sum[ST_EPARKS] += (double)buf[i].elastic_parks;
        sum[ST_EWAKES] += (double)buf[i].elastic_wakes;
    }
}

static void *noop(void *arg) { return arg; }

/* Set the worker count, then start the workers (one bthread does), so that the run
 * record can say where they run. */
static int start(int workers)
{
    int rc = workers > 0 ? bthread_setconcurrency(workers) : 0;
    if (rc != 0) {
        fprintf(stderr, "bench: bthread_setconcurrency(%d): %s\n", workers, strerror(rc));
        return -1;
    }
    bthread_t t;
    if ((rc = bthread_start_background(&t, NULL, noop, NULL)) != 0 ||
        (rc = bthread_join(t, NULL)) != 0) {
        fprintf(stderr, "bench: cannot start the scheduler: %s\n", strerror(rc));
        return -1;
    }
    return bthread_getconcurrency();
}

int main(int argc, char **argv)
{
    drv_runtime_t rt = {
        .variant = bthread_variant_name(),
        .compiler = DRV_COMPILER,
        .cflags = SCHEDBENCH_CFLAGS,
        .git_rev = SCHEDBENCH_GIT_REV,
        .start = start,
        .describe_topology = bthread_describe_topology,
        .placement = bthread_worker_placement,
        .nstats = ST_N,
        .stat_names = stat_names,
        .stats = stats_sum,
        .ratios = ratios,
    };
    return drv_main(argc, argv, &rt);
}
