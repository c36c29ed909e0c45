/*
 * sched_stats.h -- what the real bench (bench_main.c) and the simulated one
 * (harness/sim/sim_main.c) tell the driver about a bthread runtime: the scheduler
 * counters (bthread_get_stats summed over the workers), the ratios of them that explain
 * a cost, and the policy's words (bthread_get_policy).  The names and their order are bthread.h's BTHREAD_WORKER_COUNTERS, the
 * one list; cpu_ns is not among them (the driver measures the process's CPU time
 * itself).  Public API only.
 */
#ifndef SCHEDBENCH_SCHED_STATS_H
#define SCHEDBENCH_SCHED_STATS_H

#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "bthread.h"
#include "driver.h"

#define SCHED_STAT_ENUM(f, kept, what) ST_##f,
enum { BTHREAD_WORKER_COUNTERS(SCHED_STAT_ENUM) ST_N };
#undef SCHED_STAT_ENUM

#define SCHED_STAT_NAME(f, kept, what) #f,
static const char *const sched_stat_names[ST_N] = {BTHREAD_WORKER_COUNTERS(SCHED_STAT_NAME)};
#undef SCHED_STAT_NAME

/* The counters summed over all workers into sum[ST_N] (zeros while the scheduler is
 * stopped, or when no buffer can be had). */
static inline void sched_stats_sum(double *sum)
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
#define SCHED_STAT_ADD(f, kept, what) sum[ST_##f] += (double)buf[i].f;
    for (int i = 0; i < n; i++) {
        BTHREAD_WORKER_COUNTERS(SCHED_STAT_ADD)
    }
#undef SCHED_STAT_ADD
}

/* tasks per remote take, per flush; wake-ups and steal attempts per item done; tasks
 * per steal (drv_ratio). */
static const struct drv_ratio sched_ratios[] = {
    {"tasks_per_remote_take", ST_remote_pops, ST_remote_takes},
    {"tasks_per_flush", ST_flushed_tasks, ST_flushes},
    {"wakeups_per_task", ST_woken, DRV_ITEMS},
    {"steal_attempts_per_task", ST_steal_attempts, DRV_ITEMS},
    {"tasks_per_steal", ST_stolen_tasks, ST_steals},
    {NULL, 0, 0},
};

/* bthread_get_policy as the run record's words (drv_runtime_t.policy). */
static inline int sched_policy_words(char *buf, size_t n)
{
    bthread_policy_t p;
    bthread_get_policy(&p);
    return snprintf(buf, n,
                    "steals=%d steal_batch=%d keeps_tasks=%d spreads_tasks=%d one_queue=%d "
                    "runnext=%d idle_sleeps=%d idle_spins=%d deactivates=%d fixed_workers=%d",
                    p.steals, p.steal_batch, p.keeps_tasks, p.spreads_tasks, p.one_queue,
                    p.runnext, p.idle_sleeps, p.idle_spins, p.deactivates, p.fixed_workers);
}

#endif /* SCHEDBENCH_SCHED_STATS_H */
