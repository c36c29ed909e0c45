/*
 * ref_main.c -- build/ref/<r>/bench: a reference row (oneTBB, OpenMP, pool, ws) as the same
 * bench driver as build/<variant>/bench (harness/bench/driver.h), over a runtime that
 * implements ref.h instead of the scheduler.
 *
 *   build/ref/<r>/bench [--workers N] [--full | --smoke] [--benchmark_* flags...]
 *
 * The same flags, answer checks, counters and JSON context as the variants' bench (the
 * driver's), with `runtime` added and no scheduler counters (the runtimes expose none).
 * The benchmark names and argument sets are not listed here: the build writes them into
 * sets.h from the first variant's `bench --benchmark_list_tests` (bench, --full and
 * --smoke lists), so a reference row always measures exactly the sets the variants do.
 * Of those, it registers the workloads below (fib, granularity, imbalance, spawn; article
 * and spawn_batch where the runtime defines them) that the runtime can express
 * (ref_supports).  Their argument names and sequential answers
 * are the workloads' own (workloads/wl_defs.h); if a listed set's argument names differ,
 * the binary refuses to start rather than measure something else.
 *
 * The reference rows have no scheduler, so the topology line comes from
 * common/topology.c linked on its own (hwloc only, no scheduler core): the same
 * function, and so the same line, as the variants' bthread_describe_topology.
 */
#include <stddef.h>

#include "driver.h"
#include "ref.h"
#include "sets.h" /* generated: ref_sets_bench, ref_sets_full, ref_sets_smoke */
#include "topology.h"
#include "wl_defs.h"

static int ref_workers;

/* granularity: the workload's sweep (wl_granularity_run) over the runtime's step. */
static int ref_step(void *ctx, int g, long tasks, uint64_t iters, uint64_t *sum)
{
    (void)ctx;
    return ref_granularity_step(g, tasks, iters, sum);
}

static int ref_granularity(const long *args, wl_run_t *out)
{
    return wl_granularity_run(args[0], ref_workers, ref_step, NULL, out);
}

/* The workloads this binary knows: the names, argument names and answers of
 * workloads/<name>.c, the runtime's parallel versions.  No argument sets of their own. */
static workload_t ref_fib_wl = {.name = "fib", .summary = "fib(n)", .arg_names = WL_FIB_ARGS,
                                .sequential = wl_fib_answer, .parallel = ref_fib};
static workload_t ref_granularity_wl = {.name = "granularity", .summary = "METG(50%)",
                                        .arg_names = WL_GRANULARITY_ARGS,
                                        .sequential = wl_granularity_answer,
                                        .parallel = ref_granularity};
static workload_t ref_imbalance_wl = {.name = "imbalance", .summary = "load imbalance",
                                      .arg_names = WL_IMBALANCE_ARGS,
                                      .sequential = wl_imbalance_answer,
                                      .parallel = ref_imbalance};
static workload_t ref_spawn_wl = {.name = "spawn", .summary = "n tiny tasks",
                                  .arg_names = WL_SPAWN_ARGS, .sequential = wl_spawn_answer,
                                  .parallel = ref_spawn};
static const char *ref_article_check(const long *args, int workers)
{
    wl_article_t p;
    return wl_article_parse(args, workers, &p);
}
static const char *ref_spawn_batch_check(const long *args, int workers)
{
    (void)workers;
    wl_spawn_batch_t p;
    return wl_spawn_batch_parse(args, &p);
}
static workload_t ref_article_wl = {.name = "article", .summary = "the article's experiment",
                                    .arg_names = WL_ARTICLE_ARGS,
                                    .sequential = wl_article_answer, .check = ref_article_check};
static workload_t ref_spawn_batch_wl = {.name = "spawn_batch", .summary = "batch submission",
                                        .arg_names = WL_SPAWN_BATCH_ARGS,
                                        .sequential = wl_spawn_batch_answer,
                                        .check = ref_spawn_batch_check};
WORKLOAD_REGISTER(ref_fib_wl)
WORKLOAD_REGISTER(ref_granularity_wl)
WORKLOAD_REGISTER(ref_imbalance_wl)
WORKLOAD_REGISTER(ref_spawn_wl)

/* The optional workloads, where the runtime defines them (ref.h). */
static void __attribute__((constructor)) ref_register_optional(void)
{
    if (ref_article) {
        ref_article_wl.parallel = ref_article;
        workload_register(&ref_article_wl);
    }
    if (ref_spawn_batch) {
        ref_spawn_batch_wl.parallel = ref_spawn_batch;
        workload_register(&ref_spawn_batch_wl);
    }
}

static int start(int workers)
{
    ref_workers = ref_init(workers);
    return ref_workers;
}

static bool supports(const workload_t *w, const long *args) { return ref_supports(w->name, args); }

int main(int argc, char **argv)
{
    drv_runtime_t rt = {
        .variant = ref_variant,
        .runtime = ref_runtime,
        .compiler = DRV_COMPILER,
        .cflags = SCHEDBENCH_CFLAGS,
        .git_rev = SCHEDBENCH_GIT_REV,
        .start = start,
        .describe_topology = topology_describe,
        .placement = NULL, /* the runtimes do not pin their threads */
        .sets = {ref_sets_bench, ref_sets_full, ref_sets_smoke},
        .supports = supports,
        .policy = ref_policy, /* NULL where the runtime states none */
    };
    const ref_counters_t *c = ref_counters ? ref_counters() : NULL;
    if (c) {
        rt.nstats = c->n;
        rt.stat_names = c->names;
        rt.stats = c->sum;
        rt.ratios = c->ratios;
    }
    return drv_main(argc, argv, &rt);
}
