/*
 * sched_stats.h -- the scheduler counters the harness reports, one list for the real
 * bench (bench_main.c) and the simulated one (sim/sim_main.c): bthread_get_stats summed
 * over the workers.  A counter added to bthread_worker_stats_t is reported by both once
 * it is named here.  Public API only.
 */
#ifndef SCHEDBENCH_SCHED_STATS_H
#define SCHEDBENCH_SCHED_STATS_H

#include <stdlib.h>
#include <string.h>

#include "bthread.h"

/* X(field): every bthread_worker_stats_t field but cpu_ns (the driver measures the
 * process's CPU time itself). */
#define SCHED_STATS(X)                                                                     \
    X(steals) X(steal_attempts) X(stolen_tasks) X(parks) X(switches) X(wakeups)           \
    X(remote_pops) X(remote_takes) X(remote_pushes) X(woken) X(flushes) X(flushed_tasks) \
    X(elastic_parks) X(elastic_wakes) X(tasks_run)

#define SCHED_STAT_ENUM(f) ST_##f,
enum { SCHED_STATS(SCHED_STAT_ENUM) ST_N };
#undef SCHED_STAT_ENUM

#define SCHED_STAT_NAME(f) #f,
static const char *const sched_stat_names[ST_N] = {SCHED_STATS(SCHED_STAT_NAME)};
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
#define SCHED_STAT_ADD(f) sum[ST_##f] += (double)buf[i].f;
    for (int i = 0; i < n; i++) {
        SCHED_STATS(SCHED_STAT_ADD)
    }
#undef SCHED_STAT_ADD
}

#endif /* SCHEDBENCH_SCHED_STATS_H */
