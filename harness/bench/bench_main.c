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
 * What is the variant's own, and only that, is here: starting its workers, its counters,
 * their ratios and its policy's words (sched_stats.h, shared with the simulated bench),
 * its topology line and worker placement (bthread_describe_topology,
 * bthread_worker_placement).  Only the public API
 * (bthread.h): this file is compiled once and linked with every variant's library.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bthread.h"
#include "driver.h"
#include "sched_stats.h"

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
        .policy = sched_policy_words,
        .nstats = ST_N,
        .stat_names = sched_stat_names,
        .stats = sched_stats_sum,
        .ratios = sched_ratios,
    };
    return drv_main(argc, argv, &rt);
}
