/*
 * sched_stats.h -- the scheduler counters the harness reports, for the real bench
 * (bench_main.c) and the simulated one (harness/sim/sim_main.c): bthread_get_stats summed over
 * the workers.  The names and their order are bthread.h's BTHREAD_WORKER_COUNTERS, the
 * one list; cpu_ns is not among them (the driver measures the process's CPU time
 * itself).  Public API only.
 */
#ifndef SCHEDBENCH_SCHED_STATS_H
#define SCHEDBENCH_SCHED_STATS_H

#include <stdlib.h>
#include <string.h>

#include "bthread.h"

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

#endif /* SCHEDBENCH_SCHED_STATS_H */
