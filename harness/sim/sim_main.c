/*
 * sim_main.c -- build-sim/<v>/simbench: one workload's argument set on variant <v>, in
 * simulated time on a machine model, written as Google Benchmark JSON like a real run.
 *
 *   simbench --model FILE --workers N --workload NAME --args A,B,... [--reps R]
 *            [--seed S] [--out FILE]
 *   simbench --list        every workload's default argument sets, one per line:
 *                          <name> <set-index> <benchmark name> <a,b,...>
 *
 * FILE is a flat model (harness/driver/simmodel.py writes it from a model JSON in harness/machines/).
 * The reference answer is computed first, for real (sequential()).  Then the simulated
 * program's main thread sets the concurrency, runs parallel() once to warm up (starts
 * the workers), and R timed repetitions; each must give the reference answer.  Each
 * repetition is one "iteration" entry: real_time = simulated elapsed time of the main
 * thread, and the counters of a real bench (steals, parks, ..., proc_cpu_s = simulated
 * CPU time of every thread), plus tasks_run (tasks ended, summed over workers) and
 * work_s (the task bodies' charged work: the work term of the Brent bound) and, for a
 * workload that states it (workload_t.span_ns), span_s (its critical path at the model's
 * costs: the span term).
 * Exit status: 0; 1 if a run failed or gave a wrong answer; 2 for bad input;
 * 3 for a stall (every simulated thread blocked: see sim_engine.c).
 * The output is a function of (binary, model, arguments, seed) only: bit for bit (also
 * of no environment variable: see export_settings; nor of where the kernel maps memory:
 * see fixed_layout).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <unistd.h>

#include "bthread.h"
#include "sched_stats.h"
#include "sim_engine.h"
#include "workload.h"

#ifndef VARIANT_LABEL
#define VARIANT_LABEL "unknown"
#endif

static struct {
    const char *model_path, *workload, *out;
    int workers, reps;
    long args[WL_MAX_ARGS];
    int nargs;
    unsigned long seed;
} opt = {.reps = 5};
static bool layout_fixed; /* fixed_layout's answer */

static void usage_exit(const char *msg, const char *arg)
{
    fprintf(stderr, "simbench: ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, "\nusage: simbench --model FILE --workers N --workload NAME --args A,B,... "
                    "[--reps R] [--seed S] [--out FILE] | --list\n");
    exit(2);
}

static long parse_long(const char *s, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end)
        usage_exit("%s is not an integer", what);
    return v;
}

typedef struct rep {
    double real_ns, cpu_ns, main_cpu_ns, work_ns, items, accesses, jumps, maps, unmaps;
    double resume_s; /* charged for resuming cold contexts */
    double wakes, short_wakes; /* threads woken by a futex wake; of them, after a short sleep */
    double prefetched, prefetch_saved_s; /* transfers a prefetch covered; the time it saved */
    double st[ST_N];
    wl_run_t run;
} rep_t;

static workload_t *wl;
static uint64_t expected;
static double span_ns = -1; /* the workload's span at the model's costs; < 0: unknown */
static rep_t *reps;
static int failed;
static char fail_msg[256];

static bool one_run(wl_run_t *r)
{
    memset(r, 0, sizeof *r);
    int rc = wl->parallel(opt.args, r);
    if (rc != 0) {
        snprintf(fail_msg, sizeof fail_msg, "%s: parallel() failed: %s", wl->name, strerror(rc));
        return false;
    }
    if (r->answer != expected) {
        snprintf(fail_msg, sizeof fail_msg, "%s: wrong answer: parallel %" PRIu64 ", sequential %" PRIu64,
                 wl->name, r->answer, expected);
        return false;
    }
    return true;
}

static double thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *simulated_main(void *unused)
{
    (void)unused;
    if (bthread_setconcurrency(opt.workers) != 0) {
        snprintf(fail_msg, sizeof fail_msg, "bthread_setconcurrency(%d) failed", opt.workers);
        failed = 1;
        return NULL;
    }
    wl_run_t warm;
    if (!one_run(&warm)) { /* also starts the workers */
        failed = 1;
        return NULL;
    }
    for (int i = 0; i < opt.reps && !failed; i++) {
        rep_t *p = &reps[i];
        double s0[ST_N], s1[ST_N];
        sched_stats_sum(s0);
        uint64_t busy0 = sim_busy_ps(), work0 = sim_stats.work_ps, t0 = sim_now_ps();
        uint64_t acc0 = sim_stats.accesses, jumps0 = sim_stats.task_switches;
        uint64_t maps0 = sim_stats.maps, unmaps0 = sim_stats.unmaps, resume0 = sim_stats.resume_ps;
        uint64_t wakes0 = sim_stats.futex_wakes, short0 = sim_stats.short_wakes;
        uint64_t pf0 = sim_stats.prefetched, saved0 = sim_stats.prefetch_saved_ps;
        double m0 = thread_cpu_ns();
        if (!one_run(&p->run)) {
            failed = 1;
            break;
        }
        uint64_t t1 = sim_now_ps();
        p->main_cpu_ns = thread_cpu_ns() - m0;
        p->real_ns = (double)(t1 - t0) / 1e3;
        p->cpu_ns = (double)(sim_busy_ps() - busy0) / 1e3;
        p->work_ns = (double)(sim_stats.work_ps - work0) / 1e3;
        p->accesses = (double)(sim_stats.accesses - acc0);
        p->jumps = (double)(sim_stats.task_switches - jumps0);
        p->maps = (double)(sim_stats.maps - maps0);
        p->unmaps = (double)(sim_stats.unmaps - unmaps0);
        p->resume_s = (double)(sim_stats.resume_ps - resume0) / 1e12;
        p->wakes = (double)(sim_stats.futex_wakes - wakes0);
        p->short_wakes = (double)(sim_stats.short_wakes - short0);
        p->prefetched = (double)(sim_stats.prefetched - pf0);
        p->prefetch_saved_s = (double)(sim_stats.prefetch_saved_ps - saved0) / 1e12;
        sched_stats_sum(s1);
        for (int k = 0; k < ST_N; k++)
            p->st[k] = s1[k] - s0[k];
    }
    if (bthread_shutdown() != 0 && !failed) {
        snprintf(fail_msg, sizeof fail_msg, "bthread_shutdown failed: bthreads left behind");
        failed = 1;
    }
    return NULL;
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
    fputc('"', f);
}

static void bench_name(char *name, size_t n)
{
    size_t len = (size_t)snprintf(name, n, "%s", wl->name);
    for (int i = 0; i < opt.nargs && len < n; i++)
        len += (size_t)snprintf(name + len, n - len, "/%s:%ld", wl->arg_names[i], opt.args[i]);
    if (len < n)
        snprintf(name + len, n - len, "/real_time");
}

static void write_json(FILE *f)
{
    char name[256];
    bench_name(name, sizeof name);
    fprintf(f, "{\n  \"context\": {\n");
    fprintf(f, "    \"simulated\": true,\n    \"model\": ");
    json_str(f, sim_model.name);
    fprintf(f, ",\n    \"topology\": ");
    char topo[320];
    snprintf(topo, sizeof topo, "simulated: synthetic %s (%d PUs)", sim_model.topology, sim_model.npus);
    json_str(f, topo);
    fprintf(f, ",\n    \"cpu_model\": ");
    char cpu[128];
    snprintf(cpu, sizeof cpu, "simulated %s", sim_model.name);
    json_str(f, cpu);
    fprintf(f, ",\n    \"variant\": \"%s\",\n    \"workers\": \"%d\",\n", VARIANT_LABEL, opt.workers);
    fprintf(f, "    \"seed\": %lu,\n    \"num_cpus\": %d,\n", opt.seed, sim_model.npus);
    fprintf(f, "    \"compiler\": \"simulation build\",\n    \"cflags\": \"-DSB_SIM\",\n");
    fprintf(f, "    \"git_rev\": \"%s\",\n    \"sizes\": \"bench\",\n", SCHEDBENCH_GIT_REV);
    fprintf(f, "    \"placement\": \"simulated: worker i on PU i\",\n");
    fprintf(f, "    \"address_layout\": \"%s\",\n", layout_fixed ? "fixed" : "randomized");
    fprintf(f, "    \"sim_accesses\": %" PRIu64 ",\n    \"sim_transfers\": %" PRIu64 ",\n",
            sim_stats.accesses, sim_stats.transfers);
    fprintf(f, "    \"sim_thread_switches\": %" PRIu64 ",\n    \"sim_threads\": %d\n  },\n",
            sim_stats.thread_switches, sim_thread_count());
    fprintf(f, "  \"benchmarks\": [");
    for (int i = 0; i < opt.reps; i++) {
        rep_t *p = &reps[i];
        fprintf(f, "%s\n    {\n      \"name\": ", i ? "," : "");
        json_str(f, name);
        fprintf(f, ",\n      \"run_name\": ");
        json_str(f, name);
        fprintf(f, ",\n      \"run_type\": \"iteration\",\n      \"repetitions\": %d,\n"
                   "      \"repetition_index\": %d,\n      \"threads\": 1,\n      \"iterations\": 1,\n",
                opt.reps, i);
        if (failed) {
            fprintf(f, "      \"error_occurred\": true,\n      \"error_message\": ");
            json_str(f, fail_msg);
            fprintf(f, "\n    }");
            continue;
        }
        fprintf(f, "      \"real_time\": %.9g,\n      \"cpu_time\": %.9g,\n      \"time_unit\": \"ms\",\n",
                p->real_ns / 1e6, p->main_cpu_ns / 1e6);
        if (p->real_ns > 0) /* a model that charges nothing a run does: no rate (JSON has no inf) */
            fprintf(f, "      \"items_per_second\": %.9g,\n", p->run.items / (p->real_ns / 1e9));
        for (int k = 0; k < ST_N; k++)
            fprintf(f, "      \"%s\": %.17g,\n", sched_stat_names[k], p->st[k]);
        for (int k = 0; k < p->run.ncounters; k++)
            fprintf(f, "      \"%s\": %.17g,\n", p->run.counters[k].name, p->run.counters[k].value);
        fprintf(f, "      \"items\": %.17g,\n", p->run.items);
        fprintf(f, "      \"work_s\": %.17g,\n", p->work_ns / 1e9);
        if (span_ns >= 0)
            fprintf(f, "      \"span_s\": %.17g,\n", span_ns / 1e9);
        fprintf(f, "      \"sim_accesses\": %.17g,\n      \"sim_jumps\": %.17g,\n", p->accesses,
                p->jumps);
        fprintf(f, "      \"sim_maps\": %.17g,\n      \"sim_unmaps\": %.17g,\n", p->maps,
                p->unmaps);
        fprintf(f, "      \"sim_resume_s\": %.17g,\n", p->resume_s);
        fprintf(f, "      \"sim_wakes\": %.17g,\n      \"sim_short_wakes\": %.17g,\n", p->wakes,
                p->short_wakes);
        fprintf(f, "      \"sim_prefetched\": %.17g,\n      \"sim_prefetch_saved_s\": %.17g,\n",
                p->prefetched, p->prefetch_saved_s);
        fprintf(f, "      \"proc_cpu_s\": %.17g\n    }", p->cpu_ns / 1e9);
    }
    fprintf(f, "\n  ]\n}\n");
}

static void list_sets(void)
{
    for (workload_t *w = workload_first(); w; w = w->next) {
        wl = w;
        opt.nargs = workload_nargs(w);
        for (int s = 0; s < w->nbench; s++) {
            memcpy(opt.args, w->bench[s], sizeof opt.args);
            char name[256];
            bench_name(name, sizeof name);
            printf("%s %d %s ", w->name, s, name);
            for (int i = 0; i < opt.nargs; i++)
                printf("%s%ld", i ? "," : "", opt.args[i]);
            printf("\n");
        }
    }
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
    const char *args = NULL;
    layout_fixed = fixed_layout(argv);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--list") == 0) {
            list_sets();
            return 0;
        }
        if (i + 1 >= argc)
            usage_exit("%s needs a value", a);
        const char *v = argv[++i];
        if (strcmp(a, "--model") == 0)
            opt.model_path = v;
        else if (strcmp(a, "--workers") == 0)
            opt.workers = (int)parse_long(v, "--workers");
        else if (strcmp(a, "--workload") == 0)
            opt.workload = v;
        else if (strcmp(a, "--args") == 0)
            args = v;
        else if (strcmp(a, "--reps") == 0)
            opt.reps = (int)parse_long(v, "--reps");
        else if (strcmp(a, "--seed") == 0)
            opt.seed = (unsigned long)parse_long(v, "--seed");
        else if (strcmp(a, "--out") == 0)
            opt.out = v;
        else
            usage_exit("unknown option %s", a);
    }
    if (!opt.model_path || !opt.workload || !args || opt.workers == 0)
        usage_exit("%s", "--model, --workers, --workload and --args are required");
    if (opt.reps < 1 || opt.reps > 1000)
        usage_exit("%s", "--reps must be 1..1000");
    sim_model_load(opt.model_path);
    if (opt.workers < 1 || opt.workers > sim_model.npus) {
        fprintf(stderr, "simbench: --workers %d: the model %s has %d PUs (1..%d workers)\n",
                opt.workers, sim_model.name, sim_model.npus, sim_model.npus);
        return 2;
    }
    wl = workload_find(opt.workload);
    if (!wl)
        usage_exit("unknown workload %s", opt.workload);
    opt.nargs = workload_nargs(wl);
    char *copy = strdup(args), *save = NULL;
    int n = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == opt.nargs)
            usage_exit("too many --args for %s", wl->name);
        opt.args[n++] = parse_long(tok, "an --args value");
    }
    free(copy);
    if (n != opt.nargs)
        usage_exit("--args: %s takes a value for each of its arguments", wl->name);
    const char *why = wl->check ? wl->check(opt.args, opt.workers) : NULL;
    if (why) {
        fprintf(stderr, "simbench: %s: %s\n", wl->name, why);
        return 2;
    }

    /* The kernel's rate decides only how much real compute the simulator does; the
     * simulated time is the nominal grain either way (sim_charge_work). */
    static char rate[64], topology[sizeof "SCHEDBENCH_TOPOLOGY=" + sizeof sim_model.topology];
    snprintf(rate, sizeof rate, "SCHEDBENCH_ITERS_PER_US=%.17g", sim_model.kernel_iters_per_us);
    snprintf(topology, sizeof topology, "SCHEDBENCH_TOPOLOGY=%s", sim_model.topology);
    char *settings[] = {rate, topology /* numa: the model's victim order */,
                        "SCHEDBENCH_BIND=0"};
    export_settings(settings, (int)(sizeof settings / sizeof *settings));
    expected = wl->sequential(opt.args);
    if (wl->span_ns) {
        const wl_costs_t costs = {.iter_ns = (double)sim_model.kernel_iter_ps / 1e3,
                                  .sha1_ns = (double)sim_model.c[SIM_C_SHA1_BLOCK] / 1e3,
                                  .uts_node_ns = (double)sim_model.c[SIM_C_UTS_NODE] / 1e3};
        span_ns = wl->span_ns(opt.args, opt.workers, &costs);
    }

    reps = calloc((size_t)opt.reps, sizeof *reps);
    if (!reps)
        return 2;
    /* The seed is where the simulated clock starts (ns): the workers' random victim
     * orders are seeded from the clock (sched.c), so it picks one of the possible runs. */
    sim_run(simulated_main, NULL, opt.workers, (uint64_t)opt.seed * 1000u);

    FILE *f = opt.out ? fopen(opt.out, "w") : stdout;
    if (!f) {
        fprintf(stderr, "simbench: cannot write %s: %s\n", opt.out, strerror(errno));
        return 2;
    }
    write_json(f);
    if (f != stdout)
        fclose(f);
    if (failed)
        fprintf(stderr, "simbench: %s\n", fail_msg);
    return failed ? 1 : 0;
}
