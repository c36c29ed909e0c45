/*
 * ref.h -- what one reference runtime (oneTBB, OpenMP, a pthread pool, the work-stealing
 * article's scheduler) provides to the
 * reference main (ref_main.c), which runs it under the same bench driver as the variants
 * (harness/bench/driver.h).  Each runtime is one file, harness/ref/<r>.c or .cc, implementing
 * the functions below; the result is build/ref/<r>/bench, whose benchmark names,
 * argument sets, flags and JSON match build/<variant>/bench, so run.py plots it as one
 * more row.
 *
 * The workloads are re-implemented on the runtime's own idioms but do the same work with
 * the same kernels (workloads/wl_kernel.h), read their arguments the same way and give
 * the same answers (workloads/wl_defs.h) as the C workloads:
 *   fib(n)         spawn fib(n-1), compute fib(n-2), join;  answer fib(n), items = spawns
 *   spawn(n)       n tiny tasks from one submitting thread;  answer n(n-1)/2, items = n
 *   imbalance(...) Task Bench imbalance tasks from P submitters (wl_imbalance_parse);
 *                  answer/items as workloads/imbalance.c
 *   granularity(tasks)  METG sweep; answer/items/counters as workloads/granularity.c
 *                  (the sweep is shared, wl_granularity_run: a runtime runs one step,
 *                  ref_granularity_step)
 *   article(...)   the article's experiment (wl_article_parse); answer/items/counters as
 *                  workloads/article.c
 *   spawn_batch(...)  section 4.2's batching experiment (wl_spawn_batch_parse); as
 *                  workloads/spawn_batch.c
 * The last two, and the counters, are optional: only the function-pointer runtimes
 * (fn_workloads.c) define them, and ref_main.c registers them where they are defined
 * (weak references: a runtime that leaves one out needs no stub).
 * No reference links the scheduler: a row is the runtime, the driver, and nothing else.
 */
#ifndef SCHEDBENCH_REF_H
#define SCHEDBENCH_REF_H

#include <stdbool.h>
#include <stdint.h>

#include "driver.h"   /* struct drv_ratio */
#include "workload.h" /* wl_run_t, wl_counter_add (data types only: no registry) */

#ifdef __cplusplus
extern "C" {
#endif

extern const char ref_variant[]; /* "tbb": the JSON context's variant, the row's name */
extern const char ref_runtime[]; /* "oneTBB 2021.8": the JSON context's runtime */

/* Start the runtime with `workers` threads doing tasks (0: the runtime's default).
 * Called once, before anything else; returns the worker count in use. */
int ref_init(int workers);

/* Whether this runtime can express the argument set faithfully; sets it cannot are not
 * registered (and the bench says so on stderr). */
bool ref_supports(const char *workload, const long *args);

/* One measured run each: 0, or an errno value.  Must leave no task running. */
int ref_fib(const long *args, wl_run_t *out);
int ref_spawn(const long *args, wl_run_t *out);
int ref_imbalance(const long *args, wl_run_t *out);
/* One step of the granularity sweep (the sweep, its timing and METG are ref_main.cc's):
 * tasks i = 0..tasks-1, each wl_granularity_task(g, i, iters), started by one task and
 * waited for; *sum = the sum of their terms. */
int ref_granularity_step(int g, long tasks, uint64_t iters, uint64_t *sum);

/* Optional (see the top). */
int ref_article(const long *args, wl_run_t *out) __attribute__((weak));
int ref_spawn_batch(const long *args, wl_run_t *out) __attribute__((weak));

/* Optional: the runtime's scheduler counters for the run record, named as the variants'
 * where they mean the same (drv_runtime_t's nstats, stat_names, stats, ratios). */
typedef struct ref_counters {
    int n;
    const char *const *names;
    void (*sum)(double *out); /* n values, summed over the workers */
    const struct drv_ratio *ratios;
} ref_counters_t;
const ref_counters_t *ref_counters(void) __attribute__((weak));

/* Optional: what the runtime's policy does, in the words of `bench --policy` that it
 * has ("steals=1 steal_batch=4"; drv_runtime_t.policy): run.py reads a row's part in
 * the batching experiment from them (roles.py).  Length as snprintf. */
int ref_policy(char *buf, size_t n) __attribute__((weak));

#ifdef __cplusplus
}
#endif
#endif /* SCHEDBENCH_REF_H */
