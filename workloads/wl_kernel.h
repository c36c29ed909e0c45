/*
 * wl_kernel.h -- the busy-compute kernel and task-cost rules shared by the CPU-bound
 * workloads (imbalance, dag, granularity) and by the reference rows in harness/ref/
 * (oneTBB, OpenMP), so every implementation does exactly the same work per task.
 * Header-only, C11 and C++17.
 *
 * The kernel is a serial chain of xor-shift / multiply / add on one 64-bit word: no
 * closed form, nothing to vectorize, and its result feeds the workload's checksum, so it
 * cannot be optimized away.  A task's size is given in microseconds ("grain_us") and
 * turned into iterations with a rate calibrated once per process (wl_iters_per_us), or
 * taken from the environment variable SCHEDBENCH_ITERS_PER_US so that several
 * binaries (the variants' benches and the references) can be made to do identical work.
 *
 * Task Bench's load-imbalance rule: a task of nominal size `iters` does
 *     round((1 + (u - 0.5) * imbalance) * iters)
 * iterations, u in [0, 1) a deterministic hash of (task index, seed); imbalance 2 spreads
 * tasks uniformly over 0x..2x of the nominal size with the same mean.  The imbalance
 * workload can also skew the list instead: u = (i + 1/2) / tasks, the same spread of
 * sizes but rising along the list, so a contiguous split of the list is unbalanced.
 */
#ifndef SCHEDBENCH_WL_KERNEL_H
#define SCHEDBENCH_WL_KERNEL_H

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "timeutil.h" /* common/: header-only clock helpers */
#include "workload.h" /* wl_run_t, wl_counter_add */

/* splitmix64's finalizer: a bijective 64-bit mix. */
static inline uint64_t wl_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* A uniform in [0, 1) fixed by (index, seed): the top 53 bits of a mix. */
static inline double wl_uniform(uint64_t index, uint64_t seed)
{
    uint64_t h = wl_mix64(index * 0x9e3779b97f4a7c15ull + wl_mix64(seed));
    return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

/* The kernel: `iters` dependent steps from `seed`.  Pure; cost linear in iters. */
static inline uint64_t wl_kernel(uint64_t iters, uint64_t seed)
{
#ifdef SB_SIM
    sim_charge_work(SIM_WORK_KERNEL_ITER, iters); /* simulated time: the nominal grain */
#endif
    uint64_t x = wl_mix64(seed) | 1;
    for (uint64_t i = 0; i < iters; i++) {
        x ^= x >> 29;
        x *= 0x9e3779b97f4a7c15ull;
        x += i;
    }
    return x;
}

/* Make v count as used here, so the computation of v is neither dropped nor moved past
 * this point (an empty asm that claims to read v and memory; benchmark::DoNotOptimize). */
static inline void wl_keep(uint64_t v) { __asm__ __volatile__("" : : "r"(v) : "memory"); }
/* v, but unknown to the compiler from here on: what is computed from it cannot be moved
 * above this point (above a timestamp taken just before). */
static inline uint64_t wl_opaque(uint64_t v)
{
    __asm__ __volatile__("" : "+r"(v) : : "memory");
    return v;
}

static inline uint64_t wl_now_ns(void) { return (uint64_t)sb_clock_ns(CLOCK_MONOTONIC); }

/* One process-wide cache (a weak definition: every translation unit that includes this
 * header shares it).  Written and read only by the thread that sets up runs. */
__attribute__((weak)) double wl_iters_per_us_cache;

/* Kernel iterations per microsecond on this machine: SCHEDBENCH_ITERS_PER_US if set,
 * else the fastest of a few timed runs (a few ms, once per process).
 * Call from the harness / main thread only, before timing: not thread-safe. */
static inline double wl_iters_per_us(void)
{
    if (wl_iters_per_us_cache > 0)
        return wl_iters_per_us_cache;
    const char *env = getenv("SCHEDBENCH_ITERS_PER_US");
    double rate = env ? strtod(env, NULL) : 0;
    if (!(rate > 0)) {
        const uint64_t n = 1000000;
        uint64_t best = UINT64_MAX;
        wl_keep(wl_kernel(n / 10, 1)); /* warm up: frequency, caches */
        for (int r = 0; r < 5; r++) {
            uint64_t t0 = wl_now_ns();
            wl_keep(wl_kernel(n, wl_opaque((uint64_t)r)));
            uint64_t dt = wl_now_ns() - t0;
            if (dt < best)
                best = dt;
        }
        rate = (double)n * 1000.0 / (double)(best ? best : 1);
    }
    wl_iters_per_us_cache = rate;
    return rate;
}

/* Iterations for a task of grain_us microseconds (at least 1). */
static inline uint64_t wl_grain_iters(double grain_us)
{
    double it = grain_us * wl_iters_per_us();
    return it < 1 ? 1 : (uint64_t)llround(it);
}

/* Task Bench's load-imbalance rule (above); never negative. */
static inline uint64_t wl_imbalance_iters(uint64_t iters, double imbalance, uint64_t task,
                                          uint64_t seed)
{
    double u = wl_uniform(task, seed);
    double f = (1.0 + (u - 0.5) * imbalance) * (double)iters;
    return f <= 0 ? 0 : (uint64_t)llround(f);
}

/* A task's contribution to a checksum: summed over tasks (order-free) and tied to the
 * task index, so a task run twice, skipped, or swapped with another changes the sum. */
static inline uint64_t wl_task_sum(uint64_t task, uint64_t result)
{
    return wl_mix64(result ^ wl_mix64(task + 0x632be59bd9b4e019ull));
}

/* ---- the imbalance workload's definition (workloads/imbalance.c, harness/ref/) ------- */

#define WL_IMBALANCE_SEED 0x1b873593u

/* Task i of `tasks` in the imbalance workload: its checksum term.  skew 0: u hashed
 * (Task Bench); skew 1: u = (i + 1/2) / tasks, sizes rising along the list. */
static inline uint64_t wl_imbalance_task_iters(uint64_t i, uint64_t tasks, uint64_t base_iters,
                                               double imbalance, int skew)
{
    if (skew) {
        double u = ((double)i + 0.5) / (double)tasks;
        double f = (1.0 + (u - 0.5) * imbalance) * (double)base_iters;
        return f <= 0 ? 0 : (uint64_t)llround(f);
    }
    return wl_imbalance_iters(base_iters, imbalance, i, WL_IMBALANCE_SEED);
}

static inline uint64_t wl_imbalance_task(uint64_t i, uint64_t tasks, uint64_t base_iters,
                                         double imbalance, int skew)
{
    uint64_t it = wl_imbalance_task_iters(i, tasks, base_iters, imbalance, skew);
    return wl_task_sum(i, wl_kernel(it, i));
}

/* The imbalance workload's answer: every task's term, summed on the calling thread. */
static inline uint64_t wl_imbalance_checksum(long tasks, uint64_t base_iters, double imbalance,
                                             int skew)
{
    uint64_t sum = 0;
    for (long i = 0; i < tasks; i++)
        sum += wl_imbalance_task((uint64_t)i, (uint64_t)tasks, base_iters, imbalance, skew);
    return sum;
}

/* Submitter s of P submits tasks [first, last): contiguous equal shares. */
static inline void wl_submitter_share(long tasks, long submitters, long s, long *first,
                                      long *last)
{
    *first = tasks * s / submitters;
    *last = tasks * (s + 1) / submitters;
}

/* With late = 1 the upper half of the submitters (s >= P/2) start this long after the
 * others: half the time the early half's work takes at perfect speedup on `workers`
 * workers, so the late tasks arrive while the early ones are still running.  (With one
 * submitter there is no early half and the delay is 0.) */
static inline double wl_late_delay_us(long tasks, long submitters, double grain_us, int workers)
{
    long early = submitters / 2;
    double early_tasks = (double)tasks * (double)early / (double)submitters;
    return 0.5 * early_tasks * grain_us / (workers > 0 ? workers : 1);
}

static inline int wl_submitter_is_late(long s, long submitters, long late)
{
    return late && s >= submitters / 2;
}

/* ---- the granularity workload's definition (Task Bench METG) ---------------------- */

/* The grains swept, in microseconds, coarse to fine. */
#define WL_GRAIN_COUNT 7
static const double wl_grains_us[WL_GRAIN_COUNT] = {1000, 300, 100, 30, 10, 3, 1};
/* The efficiency counter reported for each grain. */
static const char *const wl_grain_eff_names[WL_GRAIN_COUNT] = {
    "eff_1000us", "eff_300us", "eff_100us", "eff_30us", "eff_10us", "eff_3us", "eff_1us"};

/* Task i of the sweep step with grain index g: its checksum term. */
static inline uint64_t wl_granularity_task(int g, uint64_t i, uint64_t iters)
{
    uint64_t id = (uint64_t)g << 40 | i;
    return wl_task_sum(id, wl_kernel(iters, id));
}

/* Sweep step g on the calling thread: its checksum; *ns gets the time it took. */
static inline uint64_t wl_granularity_step(int g, long tasks, uint64_t *ns)
{
    uint64_t iters = wl_grain_iters(wl_grains_us[g]), sum = 0;
    uint64_t t0 = wl_now_ns();
    iters = wl_opaque(iters);
    for (long i = 0; i < tasks; i++)
        sum += wl_granularity_task(g, (uint64_t)i, iters);
    wl_keep(sum); /* callers that want only *ns must still pay for the loop */
    *ns = wl_now_ns() - t0;
    return sum;
}

/* The granularity workload's answer: every step's checksum. */
static inline uint64_t wl_granularity_checksum(long tasks)
{
    uint64_t sum = 0, ns;
    for (int g = 0; g < WL_GRAIN_COUNT; g++)
        sum += wl_granularity_step(g, tasks, &ns);
    return sum;
}

/* METG(50%) from one sweep: step g ran `tasks` tasks in wall_ns[g] on `workers` workers,
 * and the same tasks took seq_ns[g] on one thread.  efficiency = seq / (wall * workers);
 * granularity = wall * workers / tasks (us).  Returns the granularity of the finest step
 * still at >= 50% efficiency, taken as measured (no interpolation; the steps run coarse
 * to fine and the walk stops at the first that fails), or -1 when even the coarsest
 * step is below 50%.  eff[] gets every step's efficiency. */
static inline double wl_metg(const uint64_t *seq_ns, const uint64_t *wall_ns, long tasks,
                             int workers, double *eff)
{
    double metg = -1;
    int passing = 1;
    for (int g = 0; g < WL_GRAIN_COUNT; g++) {
        double par = (double)wall_ns[g] * (double)workers;
        eff[g] = par > 0 ? (double)seq_ns[g] / par : 0;
        if (passing && eff[g] >= 0.5)
            metg = par / 1000.0 / (double)tasks;
        else
            passing = 0;
    }
    return metg;
}

/* The granularity workload's result from one sweep, the same for the bthread workload
 * and the reference runtimes: answer, items, metg_us and each step's efficiency. */
static inline void wl_granularity_result(wl_run_t *out, uint64_t sum, const uint64_t *seq_ns,
                                         const uint64_t *wall_ns, long tasks, int workers)
{
    double eff[WL_GRAIN_COUNT];
    double metg = wl_metg(seq_ns, wall_ns, tasks, workers, eff);
    out->answer = sum;
    out->items = (double)tasks * WL_GRAIN_COUNT;
    wl_counter_add(out, "metg_us", metg);
    for (int g = 0; g < WL_GRAIN_COUNT; g++)
        wl_counter_add(out, wl_grain_eff_names[g], eff[g]);
}

/* One step of the sweep on the runtime measured: tasks i = 0..tasks-1, each
 * wl_granularity_task(g, i, iters), started by one task and waited for; *sum = the sum
 * of their terms.  0, or an errno value. */
typedef int wl_granularity_step_fn(void *ctx, int g, long tasks, uint64_t iters,
                                   uint64_t *sum);

/* The sequential times of the last task count measured (one per process, shared by
 * every translation unit like wl_iters_per_us_cache; the thread that sets up runs). */
typedef struct wl_granularity_seq {
    long tasks;
    uint64_t ns[WL_GRAIN_COUNT];
} wl_granularity_seq_t;
__attribute__((weak)) wl_granularity_seq_t wl_granularity_seq_cache;

/* The granularity workload's parallel run, the same for the bthread workload and the
 * reference runtimes: the sequential times (measured at the first run with this task
 * count, then kept), every step through `step`, each timed from the caller, then
 * wl_granularity_result.  0, or the first step's error. */
static inline int wl_granularity_run(long tasks, int workers, wl_granularity_step_fn *step,
                                     void *ctx, wl_run_t *out)
{
    wl_granularity_seq_t *seq = &wl_granularity_seq_cache;
    if (tasks < 1)
        return EINVAL;
    if (seq->tasks != tasks) {
        for (int g = 0; g < WL_GRAIN_COUNT; g++)
            (void)wl_granularity_step(g, tasks, &seq->ns[g]);
        seq->tasks = tasks;
    }
    uint64_t wall_ns[WL_GRAIN_COUNT], sum = 0;
    for (int g = 0; g < WL_GRAIN_COUNT; g++) {
        uint64_t iters = wl_grain_iters(wl_grains_us[g]), s = 0;
        uint64_t t0 = wl_now_ns();
        int rc = step(ctx, g, tasks, iters, &s);
        wall_ns[g] = wl_now_ns() - t0;
        if (rc != 0)
            return rc;
        sum += s;
    }
    wl_granularity_result(out, sum, seq->ns, wall_ns, tasks, workers);
    return 0;
}

#endif /* SCHEDBENCH_WL_KERNEL_H */
