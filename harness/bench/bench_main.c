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
 * (sched_stats.h: bthread_get_stats summed over the workers; and the ratios
 * tasks_per_remote_take, tasks_per_flush, wakeups_per_task (woken per item),
 * steal_attempts_per_task, tasks_per_steal) and its
 * topology line and worker placement
 * (bthread_describe_topology, bthread_worker_placement).  Only the public API
 * (bthread.h): this file is compiled once and linked with every variant's library.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bthread.h"
#include "driver.h"
#include "sched_stats.h"

static const struct drv_ratio ratios[] = {
    {"tasks_per_remote_take", ST_remote_pops, ST_remote_takes},
    {"tasks_per_flush", ST_flushed_tasks, ST_flushes},
    {"wakeups_per_task", ST_woken, DRV_ITEMS},
    {"steal_attempts_per_task", ST_steal_attempts, DRV_ITEMS},
    {"tasks_per_steal", ST_stolen_tasks, ST_steals},
    {NULL, 0, 0},
};

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

/* bthread_get_policy as the run record's words (driver.h). */
static int policy_words(char *buf, size_t n)
{
    bthread_policy_t p;
    bthread_get_policy(&p);
    return snprintf(buf, n,
                    "steals=%d steal_batch=%d keeps_tasks=%d spreads_tasks=%d one_queue=%d "
                    "runnext=%d idle_sleeps=%d idle_spins=%d deactivates=%d fixed_workers=%d",
                    p.steals, p.steal_batch, p.keeps_tasks, p.spreads_tasks, p.one_queue,
                    p.runnext, p.idle_sleeps, p.idle_spins, p.deactivates, p.fixed_workers);
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
        .policy = policy_words,
        .nstats = ST_N,
        .stat_names = sched_stat_names,
        .stats = sched_stats_sum,
        .ratios = ratios,
    };
    return drv_main(argc, argv, &rt);
}
