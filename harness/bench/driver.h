/*
 * driver.h -- the one bench driver: build/<variant>/bench (harness/bench/bench_main.c) and
 * build/ref/<r>/bench (harness/ref/ref_main.c) and build-sim/<v>/simbench
 * (harness/sim/sim_main.c: the variant in simulated time) are all this driver over a
 * different runtime.  The driver owns everything the two have in common:
 *
 *   - the command line: [--workers N] [--full | --smoke | --set NAME...] [Google
 *     Benchmark flags];
 *   - which argument sets are registered, under which names
 *     ("<workload>/<arg>:<value>/...", Google Benchmark appends "/real_time");
 *   - the timed loop: one parallel() per iteration, its answer checked against the
 *     workload's sequential answer (computed once per set, untimed), counters;
 *   - the run record (the JSON context): variant, runtime, workers, cpu_model, topology,
 *     placement, compiler, cflags, git_rev, sizes.
 *
 * A runtime fills one drv_runtime_t with the few things that differ (how to start N
 * workers, its counters, where its threads run) and calls drv_main().  The workloads come
 * from the registry (workload.h): the bthread bench links workloads/<name>.c, whose
 * workload_t carry the argument sets; a reference row registers its own workload_t per
 * workload it implements (the same names, argument names and sequential answers, from
 * wl_defs.h) and names the sets to run (`sets`, generated from a variant's bench), so
 * both measure the same sets under the same names.
 *
 * C, callable from C and C++.  Everything here runs on the main thread.
 */
#ifndef SCHEDBENCH_DRIVER_H
#define SCHEDBENCH_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --full / --smoke: which of each workload's argument sets run. */
typedef enum drv_sizes { DRV_BENCH, DRV_FULL, DRV_SMOKE, DRV_NSIZES } drv_sizes_t;

/* The compiler of the translation unit that expands it, for the run record. */
#if defined(__clang__)
#define DRV_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define DRV_COMPILER "gcc " __VERSION__
#else
#define DRV_COMPILER "unknown"
#endif

/* What a main was built with, passed by the build (-D, harness/bench/rules.mk and
 * harness/ref/rules.mk); "unknown" when it was not. */
#ifndef SCHEDBENCH_CFLAGS
#define SCHEDBENCH_CFLAGS "unknown"
#endif
#ifndef SCHEDBENCH_GIT_REV
#define SCHEDBENCH_GIT_REV "unknown"
#endif

/* drv_ratio.den: divide by the work items (wl_run_t.items) instead of a counter. */
#define DRV_ITEMS (-1)

typedef struct drv_runtime {
    const char *variant;  /* the row's name: JSON "variant" ("chaselev", "tbb") */
    const char *runtime;  /* JSON "runtime" ("oneTBB 2021.8"), or NULL: not recorded */
    const char *cpu_model; /* JSON "cpu_model"; NULL: /proc/cpuinfo's model name */
    const char *compiler; /* DRV_COMPILER as the runtime's code was compiled */
    const char *cflags;   /* the compiler and flags the runtime was built with */
    const char *git_rev;  /* the revision it was built from ("-dirty": tracked changes) */

    /* Start `workers` workers (0: the runtime's default) before anything is registered;
     * the worker count in use, or -1 after saying why on stderr.  Not called for a
     * listing (--benchmark_list_tests) or --help. */
    int (*start)(int workers);
    /* The topology line for the run record ("1 package, 1 NUMA node, 2 cores, 2 PUs;
     * bound: no").  Length as snprintf, or -1 when unknown.  NULL: "unknown". */
    int (*describe_topology)(char *buf, size_t n);
    /* Where worker i runs ("pu L#1 (P#1), bound; ..."); -1: not recorded ("not
     * pinned").  NULL: no worker is ever pinned. */
    int (*placement)(int worker, char *buf, size_t n);
    /* What the runtime's policy does, as "name=value" words ("steals=1 steal_batch=1
     * ..."): the context's "policy", and what `bench --policy` prints.  Length as
     * snprintf.  NULL: not stated (the reference rows). */
    int (*policy)(char *buf, size_t n);

    /* Scheduler counters: nstats values, summed over the workers, into sum[] (zeros
     * while stopped); per-iteration deltas become counters named stat_names[i].
     * nstats 0: none (a runtime that does not expose any). */
    int nstats;
    const char *const *stat_names;
    void (*stats)(double *sum);
    /* Ratios of those deltas over the whole run, that explain a cost (tasks per remote
     * take, wake-ups per task): counter `name` = delta[num] / delta[den], or / the items
     * done when den is DRV_ITEMS; 0 where the denominator is 0.  NULL-name terminated;
     * NULL: none. */
    const struct drv_ratio { const char *name; int num, den; } *ratios;

    /* The benchmark names to register per size, NULL-terminated ("fib/n:25", without
     * "/real_time"); a name of a workload that is not registered is skipped, one whose
     * argument names differ is an error.  NULL: every registered workload's own sets. */
    const char *const *sets[DRV_NSIZES];
    /* Whether the runtime can express this argument set (NULL: all).  Sets it cannot
     * are not registered, and stderr says so. */
    bool (*supports)(const workload_t *w, const long *args);

/* ---- a runtime in simulated time (build-sim/<v>/simbench); NULL / 0 for a real one ----- */

    /* Run fn(arg) where the runtime's code runs, returning when it has: each parallel()
     * and each reading of the counters (start and stop call it themselves).  NULL: on
     * the calling thread.  The sequential answer, the workload's check and everything
     * else run on the calling thread. */
    void (*call)(void (*fn)(void *), void *arg);
    /* The clocks an iteration is timed with, in seconds: elapsed time (the benchmarks
     * then report it as Google Benchmark's manual time: "/manual_time" ends their names)
     * and the CPU time of every thread (counter proc_cpu_s).  NULL: the wall clock
     * ("/real_time") and the process's CPU time. */
    double (*now_s)(void);
    double (*cpu_s)(void);
    /* One iteration per repetition (--benchmark_repetitions=R: R runs).  false: Google
     * Benchmark decides by --benchmark_min_time. */
    bool one_iteration;
    /* Run each set once, untimed and checked, before its first iteration. */
    bool warm_up;
    /* The costs a workload's span is stated at (workload_t.span_ns): counter span_s, the
     * critical path, per set.  NULL: no span. */
    const wl_costs_t *costs;
    /* Called once after the last benchmark, told whether a set failed (a wrong answer, a
     * failed run): stop the runtime; drv_main's exit status.  NULL: 0 (the JSON says
     * which sets failed). */
    int (*stop)(bool a_set_failed);
} drv_runtime_t;

/* Parse the flags, start the runtime, register, record the context, run Google
 * Benchmark with the remaining flags.  Returns main()'s exit status: 2 for bad usage,
 * else stop's (0 without one). */
int drv_main(int argc, char **argv, const drv_runtime_t *rt);

#ifdef __cplusplus
}
#endif
#endif /* SCHEDBENCH_DRIVER_H */
