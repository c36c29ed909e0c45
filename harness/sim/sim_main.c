/*
 * sim_main.c -- build-sim/<v>/simbench: variant <v> in simulated time on a machine
 * model, through the bench driver (harness/bench/driver.h) as build/<v>/bench runs it
 * for real: the same sets and names, flags, listing, answer checks, counters and Google
 * Benchmark JSON.
 *
 *   simbench --model FILE [--seed S] [--workers N] [--set NAME... | --full | --smoke]
 *            [--benchmark_repetitions=R] [Google Benchmark flags]
 *
 * FILE is a flat model (harness/driver/simmodel.py writes it from a model JSON in
 * harness/machines/); --workers defaults to the model's PUs.  The simulated program runs
 * on an OS thread of its own (sim_serve); Google Benchmark and the driver run on the
 * main thread and hand it each parallel().  Per set: the sequential answer (for real),
 * one warm-up run (it also starts the workers), then one iteration per repetition,
 * each checked against that answer.  An iteration's time is the simulated main
 * thread's elapsed time (manual time: names end in "/manual_time"); its counters are a
 * real bench's (steals, parks, ..., proc_cpu_s = simulated CPU time of every thread;
 * Google Benchmark's cpu_time is the host thread's, real and mostly waiting),
 * plus work_s (the task bodies' charged work: the work term of the Brent bound), span_s
 * (for a workload that states it, workload_t.span_ns: its critical path at the model's
 * costs, the span term) and the engine's sim_* counts.
 * Exit status: 0; 1 if a run failed or gave a wrong answer; 2 for bad input; 3 for a
 * stall (every simulated thread blocked: see sim_engine.c).
 * The measurements are a function of (binary, model, arguments, seed) only, bit for bit:
 * of no environment variable (export_settings), nor of where the kernel maps memory
 * (fixed_layout), nor of what the host allocates (the simulation's thread has a heap
 * arena of its own).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <unistd.h>

#include "bthread.h"
#include "driver.h"
#include "sched_stats.h"
#include "shim.h"
#include "sim_engine.h"
#include "workload.h"

#ifndef VARIANT_LABEL
#define VARIANT_LABEL "unknown"
#endif

static unsigned long seed;
static wl_costs_t costs;

/* The engine's counts after the scheduler's, each a delta per iteration. */
#define SIM_COUNTERS(X)                                                            \
    X(work_s, (double)sim_stats.work_ps / 1e12)                                     \
    X(sim_accesses, (double)sim_stats.accesses)                                     \
    X(sim_jumps, (double)sim_stats.task_switches)                                   \
    X(sim_maps, (double)sim_stats.maps)                                             \
    X(sim_unmaps, (double)sim_stats.unmaps)                                         \
    X(sim_resume_s, (double)sim_stats.resume_ps / 1e12)                             \
    X(sim_wakes, (double)sim_stats.futex_wakes)                                     \
    X(sim_short_wakes, (double)sim_stats.short_wakes)                               \
    X(sim_prefetched, (double)sim_stats.prefetched)                                 \
    X(sim_prefetch_saved_s, (double)sim_stats.prefetch_saved_ps / 1e12)
#define SIM_COUNT(name, value) +1
enum { NSTATS = ST_N SIM_COUNTERS(SIM_COUNT) };
#undef SIM_COUNT
static const char *stat_names[NSTATS];

static void sim_counts(double *v)
{
    int i = 0;
#define SIM_VALUE(name, value) v[i++] = (value);
    SIM_COUNTERS(SIM_VALUE)
#undef SIM_VALUE
}

/* In the simulation (drv_runtime_t.call), whose main thread reads the scheduler's
 * counters as a program would, at a cost: the engine's counts leave out what every
 * reading so far cost, so a delta between two readings is the run's alone.  (The
 * elapsed and CPU times leave it out by being read outside it.) */
static void stats(double *sum)
{
    static double readings[NSTATS - ST_N]; /* what the readings so far added */
    double before[NSTATS - ST_N];
    sim_counts(before);
    sched_stats_sum(sum);
    sim_counts(sum + ST_N);
    for (int i = 0; i < NSTATS - ST_N; i++) {
        readings[i] += sum[ST_N + i] - before[i];
        sum[ST_N + i] -= readings[i];
    }
}

static double now_s(void) { return (double)sim_now_ps() / 1e12; }
static double cpu_s(void) { return (double)sim_busy_ps() / 1e12; }

static int set_concurrency_rc;
static void set_concurrency(void *workers) { set_concurrency_rc = bthread_setconcurrency(*(int *)workers); }

/* The seed is where the simulated clock starts (ns): the workers' random victim orders
 * are seeded from the clock (sched.c), so it picks one of the possible runs. */
static int start(int workers)
{
    if (sim_model.npus == 0) {
        fprintf(stderr, "simbench: --model FILE is required (a flat machine model: "
                        "./run.py flatten MACHINE)\n");
        return -1;
    }
    if (workers == 0)
        workers = sim_model.npus;
    if (workers > sim_model.npus) {
        fprintf(stderr, "simbench: --workers %d: the model %s has %d PUs (1..%d workers)\n",
                workers, sim_model.name, sim_model.npus, sim_model.npus);
        return -1;
    }
    sim_serve(workers, (uint64_t)seed * 1000u);
    sim_call(set_concurrency, &workers);
    if (set_concurrency_rc != 0) {
        fprintf(stderr, "simbench: bthread_setconcurrency(%d) failed: %s\n", workers,
                strerror(set_concurrency_rc));
        return -1;
    }
    return workers;
}

static int shutdown_rc;
static void shut_down(void *unused)
{
    (void)unused;
    shutdown_rc = bthread_shutdown();
}

static int stop(bool a_set_failed)
{
    sim_call(shut_down, NULL);
    sim_serve_end();
    if (shutdown_rc != 0)
        fprintf(stderr, "simbench: bthread_shutdown failed: bthreads left behind\n");
    return a_set_failed || shutdown_rc != 0;
}

static int describe_topology(char *buf, size_t n)
{
    return snprintf(buf, n, "simulated: synthetic %s (%d PUs)", sim_model.topology,
                    sim_model.npus);
}

static int placement(int worker, char *buf, size_t n)
{
    return snprintf(buf, n, "simulated PU %d", worker);
}

/* Put NAME=value settings into the environment, where the library reads them (getenv),
 * without touching the heap.  setenv() would copy the environment array with malloc, and
 * its size depends on how many variables the caller's environment has: every later heap
 * object then sits at another offset in its cache line, the engine charges other
 * sharing, and the same seed gave another run from another shell (uts on twosocket64 at
 * 16 workers: 97.7 or 110.3 ms with one variable more or less).  So the new array is a
 * mapping of its own, and the strings are the caller's (static). */
static void export_settings(char **defs, int ndefs)
{
    extern char **environ;
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **env = mmap(NULL, (n + (size_t)ndefs + 1) * sizeof *env, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (env == MAP_FAILED) {
        fprintf(stderr, "simbench: cannot map the environment: %s\n", strerror(errno));
        exit(2);
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool replaced = false;
        for (int d = 0; d < ndefs && !replaced; d++) {
            size_t len = (size_t)(strchr(defs[d], '=') - defs[d]) + 1;
            replaced = strncmp(environ[i], defs[d], len) == 0;
        }
        if (!replaced)
            env[k++] = environ[i];
    }
    for (int d = 0; d < ndefs; d++)
        env[k++] = defs[d];
    env[k] = NULL;
    environ = env;
}

/* Addresses decide which accesses share a cache line, where a stride walks and which
 * slot a table gives a line, so a run is a function of its inputs only if memory is laid
 * out the same way each time: with address-space randomization, one run in three of a
 * 2-worker fib on threadpool differed from the others by a line transfer.  So simbench
 * turns randomization off for itself and starts again (what `setarch -R` does), before
 * anything is simulated.  Where the kernel refuses (a seccomp profile may), it goes on
 * with a note; the context's address_layout says which.  Returns true: fixed. */
static bool fixed_layout(char **argv)
{
    int cur = personality(0xffffffff);
    if (cur != -1 && (cur & ADDR_NO_RANDOMIZE))
        return true;
    if (cur != -1 && personality((unsigned long)cur | ADDR_NO_RANDOMIZE) != -1) {
        execv("/proc/self/exe", argv);
        personality((unsigned long)cur); /* exec failed: back as we were */
    }
    fprintf(stderr, "simbench: cannot turn address randomization off (%s): a rerun may "
                    "differ in its last digits\n", strerror(errno));
    return false;
}

int main(int argc, char **argv)
{
    bool layout_fixed = fixed_layout(argv);
    const char *model_path = NULL;
    int out = 1;
    for (int i = 1; i < argc; i++) { /* ours out of argv; the rest is the driver's */
        const char *a = argv[i];
        bool model = strcmp(a, "--model") == 0;
        if (!model && strcmp(a, "--seed") != 0) {
            argv[out++] = argv[i];
            continue;
        }
        if (++i == argc) {
            fprintf(stderr, "simbench: %s needs a value\n", a);
            return 2;
        }
        char *end;
        errno = 0;
        unsigned long v = model ? 0 : strtoul(argv[i], &end, 10);
        if (!model && (errno || end == argv[i] || *end || argv[i][0] == '-')) {
            fprintf(stderr, "simbench: --seed %s is not a number\n", argv[i]);
            return 2;
        }
        if (model)
            model_path = argv[i];
        else
            seed = v;
    }
    argc = out;
    argv[argc] = NULL;
    if (model_path) {
        sim_model_load(model_path);
        /* The kernel's rate decides only how much real compute the simulator does; the
         * simulated time is the nominal grain either way (sim_charge_work). */
        static char rate[64], topology[sizeof "SCHEDBENCH_TOPOLOGY=" + sizeof sim_model.topology];
        snprintf(rate, sizeof rate, "SCHEDBENCH_ITERS_PER_US=%.17g", sim_model.kernel_iters_per_us);
        snprintf(topology, sizeof topology, "SCHEDBENCH_TOPOLOGY=%s", sim_model.topology);
        char *settings[] = {rate, topology /* numa: the model's victim order */,
                            "SCHEDBENCH_BIND=0"};
        export_settings(settings, (int)(sizeof settings / sizeof *settings));
        costs = (wl_costs_t){.iter_ns = (double)sim_model.kernel_iter_ps / 1e3,
                             .sha1_ns = (double)sim_model.c[SIM_C_SHA1_BLOCK] / 1e3,
                             .uts_node_ns = (double)sim_model.c[SIM_C_UTS_NODE] / 1e3};
        char buf[320];
        gb_add_context("simulated", "true");
        gb_add_context("model", sim_model.name);
        snprintf(buf, sizeof buf, "%lu", seed);
        gb_add_context("seed", buf);
        snprintf(buf, sizeof buf, "%d", sim_model.npus);
        gb_add_context("simulated_pus", buf);
        gb_add_context("address_layout", layout_fixed ? "fixed" : "randomized");
    }
    int k = 0;
    for (; k < ST_N; k++)
        stat_names[k] = sched_stat_names[k];
#define SIM_NAME(name, value) stat_names[k++] = #name;
    SIM_COUNTERS(SIM_NAME)
#undef SIM_NAME
    char cpu[160];
    snprintf(cpu, sizeof cpu, "simulated %s", sim_model.name);
    drv_runtime_t rt = {
        .variant = VARIANT_LABEL,
        .cpu_model = cpu,
        .compiler = DRV_COMPILER,
        .cflags = SCHEDBENCH_CFLAGS,
        .git_rev = SCHEDBENCH_GIT_REV,
        .start = start,
        .describe_topology = describe_topology,
        .placement = placement,
        .policy = sched_policy_words,
        .nstats = NSTATS,
        .stat_names = stat_names,
        .stats = stats,
        .ratios = sched_ratios,
        .call = sim_call,
        .now_s = now_s,
        .cpu_s = cpu_s,
        .one_iteration = true,
        .warm_up = true,
        .costs = &costs,
        .stop = stop,
    };
    return drv_main(argc, argv, &rt);
}
