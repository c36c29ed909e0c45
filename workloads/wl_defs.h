/*
 * wl_defs.h -- what a workload *is*, apart from how it runs: its argument names, its
 * arguments as named parameters (checked once, here), and its sequential answer.  One
 * definition serves the bthread workloads (workloads/<name>.c), the reference rows
 * (harness/ref/, which run the same workloads on oneTBB, OpenMP and a pthread pool and
 * cannot link the workloads themselves) and the tests.  Header-only, C11 and C++17.
 *
 * The workloads that the reference rows also implement are here (fib, spawn,
 * granularity, imbalance, article, spawn_batch); the article's parameters and ideal
 * times run.py's report shares in words (harness/driver/article.py).  The work of a
 * task (kernel, imbalance rule, granularity sweep) is in wl_kernel.h.
 */
#ifndef SCHEDBENCH_WL_DEFS_H
#define SCHEDBENCH_WL_DEFS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "wl_kernel.h"

/* ---- fib(n): spawn fib(n-1), compute fib(n-2), join ------------------------------- */

#define WL_FIB_ARGS {"n"}

/* fib(n) the slow way, as the parallel version computes it: the speedup denominator. */
static inline uint64_t wl_fib_value(long n)
{
    return n < 2 ? (uint64_t)n : wl_fib_value(n - 1) + wl_fib_value(n - 2);
}
static inline uint64_t wl_fib_answer(const long *args) { return wl_fib_value(args[0]); }

/* ---- spawn(n): n tiny tasks from one submitting thread; task i adds i ------------ */

#define WL_SPAWN_ARGS {"n"}

static inline uint64_t wl_spawn_answer(const long *args)
{
    uint64_t sum = 0;
    for (long i = 0; i < args[0]; i++)
        sum += (uint64_t)i;
    return sum; /* n(n-1)/2 */
}

/* ---- granularity(tasks): the METG sweep (wl_kernel.h) ------------------------------ */

#define WL_GRANULARITY_ARGS {"tasks"}

static inline uint64_t wl_granularity_answer(const long *args)
{
    return wl_granularity_checksum(args[0]);
}

/* ---- imbalance(...): Task Bench load imbalance from P submitters ------------------- */

#define WL_IMBALANCE_ARGS {"imbalance", "grain_us", "tasks", "submitters", "late", "skew"}

/* The imbalance workload's arguments, by name (args[] in WL_IMBALANCE_ARGS order). */
typedef struct wl_imbalance {
    double imbalance; /* task sizes spread over (1 +- imbalance/2) x the grain */
    double grain_us;  /* the nominal task, in microseconds of kernel */
    long tasks;
    long submitters;  /* threads that submit contiguous shares of the tasks */
    bool late;        /* the upper half of the submitters start late (wl_late_delay_us) */
    bool skew;        /* sizes rise along the list instead of being hashed */
} wl_imbalance_t;

/* args -> *p: 0, or EINVAL when an argument is out of range (negative imbalance or grain,
 * fewer than one task or submitter, late < 0). */
static inline int wl_imbalance_parse(const long *args, wl_imbalance_t *p)
{
    p->imbalance = (double)args[0];
    p->grain_us = (double)args[1];
    p->tasks = args[2];
    p->submitters = args[3];
    p->late = args[4] != 0;
    p->skew = args[5] != 0;
    if (args[0] < 0 || args[1] < 0 || args[2] < 1 || args[3] < 1 || args[4] < 0)
        return EINVAL;
    return 0;
}

/* The answer: every task's checksum term, summed on the calling thread (0 for bad args,
 * which the parallel versions reject with EINVAL). */
static inline uint64_t wl_imbalance_answer(const long *args)
{
    wl_imbalance_t p;
    if (wl_imbalance_parse(args, &p) != 0)
        return 0;
    return wl_imbalance_checksum(p.tasks, wl_grain_iters(p.grain_us), p.imbalance, p.skew);
}

/* How long the late submitters wait after the start, in ns (0 unless p->late). */
static inline uint64_t wl_imbalance_delay_ns(const wl_imbalance_t *p, int workers)
{
    if (!p->late)
        return 0;
    return (uint64_t)(1000.0 * wl_late_delay_us(p->tasks, p->submitters, p->grain_us, workers));
}

/* ---- article(...): the work-stealing article's experiment --------------------------
 *
 * Equal tasks, one submitter per worker, some submitters late (seed 003, section 5).
 * With P workers, W = tasks x grain the total work and a fraction f of the submitters
 * starting D = d x W/P late, a pool whose workers keep their own queues takes D + W/P
 * and a perfect balancer max(W/P, D + f W/P): the ideal speedup is
 * (1 + d) / max(1, d + f), 1.5x at d = 1/2 with f = 1/2 (harness/driver/article.py
 * draws it beside the measured points). */

#define WL_ARTICLE_ARGS {"delay_pct", "late_pct", "grain_us", "tasks", "foreign"}

typedef struct wl_article {
    double d;        /* the late submitters' delay in units of W/P (delay_pct / 100) */
    double late;     /* the fraction of the submitters that start late (late_pct / 100) */
    double grain_us; /* every task: this many microseconds of kernel */
    long tasks;      /* W = tasks x grain_us, shared out evenly over the submitters */
    bool foreign;    /* 0: each submitter is a bthread on its own worker; 1: a pthread */
} wl_article_t;

/* args -> *p for a run on `workers` workers: NULL, or why they cannot work (one line). */
static inline const char *wl_article_parse(const long *args, int workers, wl_article_t *p)
{
    p->d = (double)args[0] / 100.0;
    p->late = (double)args[1] / 100.0;
    p->grain_us = (double)args[2];
    p->tasks = args[3];
    p->foreign = args[4] != 0;
    if (workers < 1)
        return "needs at least one worker";
    if (args[0] < 0)
        return "delay_pct must be >= 0 (the late submitters' delay, in % of W/P)";
    if (args[1] < 0 || args[1] > 100)
        return "late_pct must be within 0..100 (the % of the submitters that start late)";
    if (args[2] < 0)
        return "grain_us must be >= 0";
    if (args[3] < 1 || args[3] > INT32_MAX)
        return "tasks must be within 1..2^31-1";
    if (args[4] != 0 && args[4] != 1)
        return "foreign must be 0 (bthread submitters) or 1 (pthread submitters)";
    return 0;
}

/* How many of the `workers` submitters start late: f x P rounded to the nearest count,
 * ties down (so 1/2 of one submitter is none, and 1/4 of two is none). */
static inline long wl_article_late_count(const wl_article_t *p, int workers)
{
    double x = p->late * (double)workers;
    long n = (long)x;
    return x - (double)n > 0.5 ? n + 1 : n;
}

/* The late submitters are the last ones: s >= P - late count. */
static inline bool wl_article_is_late(const wl_article_t *p, int workers, long s)
{
    return s >= (long)workers - wl_article_late_count(p, workers);
}

/* D = d x W / P, in nanoseconds. */
static inline uint64_t wl_article_delay_ns(const wl_article_t *p, int workers)
{
    return (uint64_t)(p->d * (double)p->tasks * p->grain_us * 1000.0 / (double)workers);
}

/* The answer: every task's checksum term (all tasks equal: imbalance 0). */
static inline uint64_t wl_article_answer(const long *args)
{
    wl_article_t p;
    if (wl_article_parse(args, 1, &p) != 0)
        return 0;
    return wl_imbalance_checksum(p.tasks, wl_grain_iters(p.grain_us), 0, false);
}

/* ---- spawn_batch(...): section 4.2's batching experiment ---------------------------
 *
 * n busy tasks of grain_ns each (wl_kernel), started `batch` at a time: one publication
 * and at most one wake-up per batch (bthread: BTHREAD_NOSIGNAL and bthread_flush; the
 * reference rows: their batch submit); batch 0 starts each task on its own, with its own
 * wake-up (the per-task baseline, k = 1).  The submitters are tasks on workers (from 1)
 * or plain pthreads (from 0).  late 0: one submitter; late 1: the article's experiment
 * at its peak, one submitter per worker with a contiguous share, the last half of them
 * (wl_article_late_count at f = 1/2) D = W / 2P late (d = 1/2; W = n x grain).  spin 1:
 * one pthread submitter that spins for the last task instead of blocking. */

#define WL_SPAWN_BATCH_ARGS {"n", "batch", "from", "grain_ns", "spin", "late"}

typedef struct wl_spawn_batch {
    long n;           /* tasks */
    long batch;       /* tasks per publication; 0: each on its own (the baseline) */
    bool from_worker; /* the submitters are tasks on workers (else pthreads) */
    long grain_ns;    /* every task's work */
    bool spin;        /* the one pthread submitter spins for the last task */
    bool late;        /* one submitter per worker, the last half late by D */
} wl_spawn_batch_t;

/* args -> *p: NULL, or why they cannot work (one line). */
static inline const char *wl_spawn_batch_parse(const long *args, wl_spawn_batch_t *p)
{
    p->n = args[0];
    p->batch = args[1];
    p->from_worker = args[2] != 0;
    p->grain_ns = args[3];
    p->spin = args[4] != 0;
    p->late = args[5] != 0;
    if (args[0] < 1 || args[0] > (1L << 24))
        return "n must be 1..2^24 tasks";
    if (args[1] < 0)
        return "batch must be >= 0";
    if (args[2] != 0 && args[2] != 1)
        return "from must be 0 (a pthread) or 1 (a task on a worker)";
    if (args[3] < 0)
        return "grain_ns must be >= 0";
    if (args[4] != 0 && args[4] != 1)
        return "spin must be 0 or 1";
    if (args[5] != 0 && args[5] != 1)
        return "late must be 0 (one submitter) or 1 (one per worker, half of them late)";
    if (args[4] && (args[2] || args[5])) /* a task spinning on its worker keeps it from
                                           * its queue, forever where nothing steals */
        return "spin 1 needs from 0 and late 0: one pthread submitter";
    return 0;
}

/* The answer: every task's checksum term. */
static inline uint64_t wl_spawn_batch_answer(const long *args)
{
    uint64_t iters = wl_grain_iters((double)args[3] / 1000.0), sum = 0;
    for (long i = 0; i < args[0]; i++)
        sum += wl_task_sum((uint64_t)i, wl_kernel(iters, (uint64_t)i));
    return sum;
}

/* How many of `workers` submitters start late (late 1): half, as the article's f = 1/2. */
static inline long wl_spawn_batch_late_count(int workers)
{
    const wl_article_t half = {0.0, 0.5, 0.0, 0, false}; /* d, late, grain, tasks, foreign */
    return wl_article_late_count(&half, workers);
}

/* D = W / 2P in nanoseconds (late 1). */
static inline uint64_t wl_spawn_batch_delay_ns(const wl_spawn_batch_t *p, int workers)
{
    return (uint64_t)(0.5 * (double)p->n * (double)p->grain_ns / (double)workers);
}

#endif /* SCHEDBENCH_WL_DEFS_H */
