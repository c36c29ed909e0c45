/*
 * workload.h -- how a workload describes itself to the benchmark harness and the tests.
 *
 * A workload is one file, workloads/<name>.c, written in plain C against
 * common/bthread.h (and common/butex.h) only, so it runs unchanged on every variant
 * (common/timeutil.h, header-only clock helpers, is the one other header it may use).
 * What the reference rows share with a workload (argument names, named parameters,
 * sequential answer) is in workloads/wl_defs.h; the work of a task in wl_kernel.h.  It
 * fills one workload_t and registers it with WORKLOAD_REGISTER(); the build links every
 * workloads/<name>.c into build/<v>/bench and into the workload tests, and both walk the
 * registry.  Nothing else lists workloads by hand.
 *
 * Every workload has a sequential version that gives the expected answer (and the
 * speedup denominator); the parallel run reports its answer and the harness / tests
 * compare the two.  A wrong answer fails `make test` and marks the benchmark an error.
 */
#ifndef SCHEDBENCH_WORKLOAD_H
#define SCHEDBENCH_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#define WL_MAX_ARGS 6
#define WL_MAX_COUNTERS 8
#define WL_MAX_SETS 128

/* ---- a run's shared state: on lines of its own ------------------------------------ */
/* A run keeps what its tasks read and write (the arguments, a sum, a count) in the
 * frame of the function that submits them.  Left there as it falls, it shares a line
 * with the frames of the calls that start the tasks (each call writes its return
 * address and saved registers just below), so every task's access misses on a line
 * that the submitter wrote a moment before, and the submitter's next call misses in
 * turn: a cross-core round trip per task that the scheduler under test did not cause.
 * WL_OWN_LINE on a run struct's first member gives the struct whole lines
 * (workloads and the reference rows alike). */
#define WL_LINE_BYTES 64
#ifdef __cplusplus
#define WL_OWN_LINE alignas(WL_LINE_BYTES)
#else
#define WL_OWN_LINE _Alignas(WL_LINE_BYTES)
#endif

typedef struct wl_counter {
    const char *name; /* e.g. "p99_us"; a string literal */
    double value;
} wl_counter_t;

/* What one parallel run reports. */
typedef struct wl_run {
    uint64_t answer;  /* compared with workload_t.sequential() of the same args */
    double items;     /* work items done (tasks, nodes): becomes items_per_second */
    int ncounters;    /* extra measurements (latency percentiles, RSS, METG, ...) */
    wl_counter_t counters[WL_MAX_COUNTERS];
} wl_run_t;

static inline void wl_counter_add(wl_run_t *r, const char *name, double value)
{
    if (r->ncounters < WL_MAX_COUNTERS) {
        r->counters[r->ncounters].name = name;
        r->counters[r->ncounters].value = value;
        r->ncounters++;
    }
}

/* The charged work's costs a span is measured in (simulated runs: the model's). */
typedef struct wl_costs {
    double iter_ns;     /* one wl_kernel.h iteration */
    double sha1_ns;     /* one SHA-1 block (sha1_compress) */
    double uts_node_ns; /* a uts node's work besides its SHA-1 block (uts_visit) */
} wl_costs_t;

typedef struct workload {
    const char *name;                      /* "fib": the benchmark name's first part */
    const char *summary;                   /* one line for --benchmark_list_tests / docs */
    const char *arg_names[WL_MAX_ARGS];    /* "n", "imbalance", ...; NULL-terminated */
    long bench[WL_MAX_SETS][WL_MAX_ARGS];  /* argument sets benchmarked by default */
    int nbench;
    long full[WL_MAX_SETS][WL_MAX_ARGS];   /* extra sets for run.py --full (may be 0) */
    int nfull;
    long test[WL_MAX_ARGS];                /* one small set `make test` checks */
    long test_more[WL_MAX_SETS][WL_MAX_ARGS]; /* optional further small sets it checks */
    int ntest_more;                        /* (e.g. one per mode); 0 = only `test` */
    /* The reference answer, computed without bthreads. */
    uint64_t (*sequential)(const long *args);
    /* The measured run, on bthreads.  0, or an errno value on failure (the harness and
     * the tests report it).  Must leave no bthread behind. */
    int (*parallel)(const long *args, wl_run_t *out);
    /* Optional (NULL: not known): the span of one run, in nanoseconds, for Brent's bound
     * T_P >= max(work / P, span) that simulated runs draw.  The longest chain of charged
     * work (at the model's wl_costs_t) in which each piece must wait for the one before
     * it, plus any wait the workload puts on that chain itself (a late wave's delay,
     * which may depend on `workers`).  Computed from the workload's structure, with no
     * bthreads; the scheduler's costs are not in it. */
    double (*span_ns)(const long *args, int workers, const struct wl_costs *costs);
    /* Optional (NULL: any set that parallel() accepts is fine): NULL when `args` can run
     * on `workers` workers, else why not, in one line the harness prints instead of
     * running (parallel() refuses such sets with EINVAL). */
    const char *(*check)(const long *args, int workers);
    struct workload *next; /* registry link, set by workload_register() */
} workload_t;

void workload_register(workload_t *w);
workload_t *workload_first(void);          /* registry, in name order */
workload_t *workload_find(const char *name);
/* How many arguments w takes: the non-NULL entries of arg_names. */
int workload_nargs(const workload_t *w);

#define WORKLOAD_REGISTER(w)                                                             \
    static void __attribute__((constructor)) workload_register_##w(void)                  \
    {                                                                                     \
        workload_register(&(w));                                                          \
    }

#endif /* SCHEDBENCH_WORKLOAD_H */
