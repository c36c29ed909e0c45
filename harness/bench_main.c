/*
 * bench_main.c -- build/<variant>/bench: every workload and harness benchmark, on one
 * scheduler variant, through Google Benchmark (harness/shim.h).
 *
 *   build/<v>/bench [--workers N] [--full | --smoke] [--benchmark_* flags...]
 *
 *   --workers N   the worker count (bthread_setconcurrency before anything starts);
 *                 default: the library's own default.
 *   --full        also register each workload's `full` argument sets (as does the
 *                 environment variable SCHEDBENCH_FULL=1).
 *   --smoke       register each workload's small `test` sets instead (a quick check that
 *                 the harness runs; not for measurement).
 *
 * One benchmark per workload and argument set, named <workload>/<arg>:<value>/...
 * (Google Benchmark appends /real_time).  Every iteration runs parallel() once and
 * compares its answer with sequential(), computed once per set outside the timing; a
 * failure or a wrong answer marks the benchmark as an error naming both values.
 *
 * Counters, all per iteration (totals divided by the iteration count):
 *   steals, steal_attempts, stolen_tasks, parks, switches, wakeups, remote_pops,
 *   remote_takes, remote_pushes, woken, flushes, flushed_tasks, elastic_parks,
 *   elastic_wakes -- deltas of bthread_get_stats summed over the workers;
 *   tasks_per_remote_take, tasks_per_flush, wakeups_per_task (woken per item) -- ratios
 *       of those over the whole run;
 *   proc_cpu_s -- CPU time of the whole process (workers, timer, this thread);
 *   the workload's own counters (wl_run_t.counters), averaged over the iterations;
 * and items_per_second from wl_run_t.items.  Google Benchmark's own cpu_time is the CPU
 * time of the calling (main) thread only, which mostly waits: read proc_cpu_s instead.
 *
 * The JSON context gets: variant, workers, cpu_model, topology, compiler, cflags,
 * git_rev, sizes (bench / full / smoke).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topology.h"

#include "bthread.h"
#include "shim.h"
#include "workload.h"

#define SB_XSTR(x) #x
#define SB_STR(x) SB_XSTR(x)

#ifndef SCHEDBENCH_CFLAGS
#define SCHEDBENCH_CFLAGS "unknown"
#endif
#ifndef SCHEDBENCH_GIT_REV
#define SCHEDBENCH_GIT_REV "unknown"
#endif

/* ---- scheduler statistics ----------------------------------------------------------- */

enum { ST_STEALS, ST_ATTEMPTS, ST_STOLEN, ST_PARKS, ST_SWITCHES, ST_WAKEUPS, ST_REMOTE,
       ST_TAKES, ST_PUSHES, ST_WOKEN, ST_FLUSHES, ST_FLUSHED, ST_EPARKS, ST_EWAKES, ST_N };
static const char *const stat_names[ST_N] = {
    "steals",       "steal_attempts", "stolen_tasks", "parks",         "switches",
    "wakeups",      "remote_pops",    "remote_takes", "remote_pushes", "woken",
    "flushes",      "flushed_tasks",  "elastic_parks", "elastic_wakes"};

/* The counters above summed over all workers (zeros while the scheduler is stopped). */
static void stats_sum(double sum[ST_N])
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
    for (int i = 0; i < n; i++) {
        sum[ST_STEALS] += (double)buf[i].steals;
        sum[ST_ATTEMPTS] += (double)buf[i].steal_attempts;
        sum[ST_STOLEN] += (double)buf[i].stolen_tasks;
        sum[ST_PARKS] += (double)buf[i].parks;
        sum[ST_SWITCHES] += (double)buf[i].switches;
        sum[ST_WAKEUPS] += (double)buf[i].wakeups;
        sum[ST_REMOTE] += (double)buf[i].remote_pops;
        sum[ST_TAKES] += (double)buf[i].remote_takes;
        sum[ST_PUSHES] += (double)buf[i].remote_pushes;
        sum[ST_WOKEN] += (double)buf[i].woken;
        sum[ST_FLUSHES] += (double)buf[i].flushes;
        sum[ST_FLUSHED] += (double)buf[i].flushed_tasks;
        sum[ST_EPARKS] += (double)buf[i].elastic_parks;
        sum[ST_EWAKES] += (double)buf[i].elastic_wakes;
    }
}

static double process_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- one benchmark per workload and argument set ------------------------------------ */

typedef struct wl_bench {
    workload_t *w;
    long args[WL_MAX_ARGS];
    bool have_expected;
    uint64_t expected; /* sequential(args), computed on the first call */
    struct wl_bench *next; /* every registered set, freed after the run */
} wl_bench_t;
static wl_bench_t *all_sets;

/* The workload's own counters, summed by name over the iterations. */
#define SUM_MAX (WL_MAX_COUNTERS * 4)
typedef struct counter_sums {
    int n;
    const char *name[SUM_MAX];
    double sum[SUM_MAX];
} counter_sums_t;

static void sums_add(counter_sums_t *s, const wl_run_t *r)
{
    for (int i = 0; i < r->ncounters && i < WL_MAX_COUNTERS; i++) {
        int j = 0;
        while (j < s->n && strcmp(s->name[j], r->counters[i].name) != 0)
            j++;
        if (j == s->n) {
            if (s->n == SUM_MAX)
                continue;
            s->name[s->n] = r->counters[i].name;
            s->sum[s->n++] = 0;
        }
        s->sum[j] += r->counters[i].value;
    }
}

static void run_workload(gb_state *st, void *arg)
{
    wl_bench_t *b = arg;
    if (!b->have_expected) { /* outside the timed loop */
        b->expected = b->w->sequential(b->args);
        b->have_expected = true;
    }
    double st0[ST_N], st1[ST_N];
    counter_sums_t sums = {.n = 0};
    double items = 0;
    char msg[256];

    stats_sum(st0);
    double cpu0 = process_cpu_s();
    while (gb_keep_running(st)) {
        wl_run_t r;
        memset(&r, 0, sizeof r);
        int rc = b->w->parallel(b->args, &r);
        if (rc != 0) {
            snprintf(msg, sizeof msg, "%s: parallel() failed: %s", b->w->name, strerror(rc));
            gb_skip_with_error(st, msg);
            return;
        }
        if (r.answer != b->expected) {
            snprintf(msg, sizeof msg, "%s: wrong answer: parallel %" PRIu64 ", sequential %" PRIu64,
                     b->w->name, r.answer, b->expected);
            gb_skip_with_error(st, msg);
            return;
        }
        items += r.items;
        sums_add(&sums, &r);
    }
    double cpu1 = process_cpu_s();
    stats_sum(st1);

    for (int i = 0; i < ST_N; i++)
        gb_counter(st, stat_names[i], st1[i] - st0[i], GB_COUNTER_AVG_ITERATIONS);
    /* the ratios that explain submission costs (0 where the denominator is 0) */
#define SB_RATIO(a, b) ((b) > 0 ? (a) / (b) : 0.0)
    gb_counter(st, "tasks_per_remote_take",
               SB_RATIO(st1[ST_REMOTE] - st0[ST_REMOTE], st1[ST_TAKES] - st0[ST_TAKES]), GB_COUNTER_DEFAULT);
    gb_counter(st, "tasks_per_flush",
               SB_RATIO(st1[ST_FLUSHED] - st0[ST_FLUSHED], st1[ST_FLUSHES] - st0[ST_FLUSHES]), GB_COUNTER_DEFAULT);
    gb_counter(st, "wakeups_per_task", SB_RATIO(st1[ST_WOKEN] - st0[ST_WOKEN], items), GB_COUNTER_DEFAULT);
#undef SB_RATIO
    gb_counter(st, "proc_cpu_s", cpu1 - cpu0, GB_COUNTER_AVG_ITERATIONS);
    for (int i = 0; i < sums.n; i++)
        gb_counter(st, sums.name[i], sums.sum[i], GB_COUNTER_AVG_ITERATIONS);
    gb_set_items_processed(st, (int64_t)items);
}

static void register_set(workload_t *w, const long *args)
{
    wl_bench_t *b = calloc(1, sizeof *b);
    if (!b) {
        fprintf(stderr, "bench: out of memory\n");
        exit(2);
    }
    b->w = w;
    b->next = all_sets;
    all_sets = b;
    int nargs = workload_nargs(w);
    memcpy(b->args, args, sizeof b->args);

    char name[256];
    size_t len = (size_t)snprintf(name, sizeof name, "%s", w->name);
    for (int i = 0; i < nargs && len < sizeof name; i++)
        len += (size_t)snprintf(name + len, sizeof name - len, "/%s:%ld", w->arg_names[i], args[i]);

    gb_bench *g = gb_register(name, run_workload, b);
    gb_use_real_time(g);
    gb_time_unit(g, GB_MS);
}

typedef enum sizes { SIZES_BENCH, SIZES_FULL, SIZES_SMOKE } sizes_t;
static const char *const sizes_name[] = {"bench", "full", "smoke"};

static void register_workloads(sizes_t sizes)
{
    for (workload_t *w = workload_first(); w; w = w->next) {
        if (sizes == SIZES_SMOKE) {
            register_set(w, w->test);
            for (int i = 0; i < w->ntest_more; i++)
                register_set(w, w->test_more[i]);
            continue;
        }
        for (int i = 0; i < w->nbench; i++)
            register_set(w, w->bench[i]);
        if (sizes == SIZES_FULL)
            for (int i = 0; i < w->nfull; i++)
                register_set(w, w->full[i]);
    }
}

/* ---- the run record (JSON context) -------------------------------------------------- */

static void context_cpu_model(void)
{
    char line[512], model[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        /* x86: "model name"; aarch64 kernels often give only "CPU part" */
        if (strncmp(line, "model name", 10) == 0) {
            char *v = strchr(line, ':');
            if (v) {
                v += 1 + strspn(v + 1, " \t");
                v[strcspn(v, "\n")] = 0;
                snprintf(model, sizeof model, "%s", v);
            }
            break;
        }
    }
    if (f)
        fclose(f);
    gb_add_context("cpu_model", model);
}

static void *noop(void *arg) { return arg; }

/* The topology summary (common/topology.c, shared with the numa variant) and, once the
 * workers run, where each one really is (pinned variants read it back; others say so). */
static void context_topology(void)
{
    char text[256] = "unknown", one[160];
    bthread_t t;
    if (bthread_start_background(&t, NULL, noop, NULL) == 0) /* starts the workers */
        bthread_join(t, NULL);
    topology_describe(text, sizeof text);
    gb_add_context("topology", text);
    char placement[2048] = "";
    size_t len = 0;
    int n = bthread_getconcurrency();
    for (int i = 0; i < n && len < sizeof placement - 1; i++) {
        if (topology_worker_placement(i, one, sizeof one) < 0)
            snprintf(one, sizeof one, "not pinned");
        len += (size_t)snprintf(placement + len, sizeof placement - len, "%sw%d: %s",
                                i ? "; " : "", i, one);
    }
    gb_add_context("placement", placement);
}

static void add_context(int workers, sizes_t sizes)
{
    char buf[256];
    gb_add_context("variant", bthread_variant_name());
    snprintf(buf, sizeof buf, "%d", workers > 0 ? workers : bthread_getconcurrency());
    gb_add_context("workers", buf);
    context_cpu_model();
    context_topology();
#if defined(__clang__)
    snprintf(buf, sizeof buf, "clang %s", __clang_version__);
#elif defined(__GNUC__)
    snprintf(buf, sizeof buf, "gcc %s", __VERSION__);
#else
    snprintf(buf, sizeof buf, "%s", __VERSION__);
#endif
    buf[strcspn(buf, "\n")] = 0;
    for (size_t n = strlen(buf); n > 0 && buf[n - 1] == ' ';) /* clang's ends in a blank */
        buf[--n] = 0;
    gb_add_context("compiler", buf);
    gb_add_context("cflags", SCHEDBENCH_CFLAGS);
    gb_add_context("git_rev", SCHEDBENCH_GIT_REV);
    gb_add_context("sizes", sizes_name[sizes]);
}

/* ---- main ----------------------------------------------------------------------------- */

static void usage_exit(const char *why)
{
    fprintf(stderr, "bench: %s\nusage: bench [--workers N] [--full | --smoke] "
                    "[Google Benchmark flags, see --help]\n", why);
    exit(2);
}

int main(int argc, char **argv)
{
    /* Take our flags out of argv; the rest goes to Google Benchmark. */
    int workers = 0, out = 1;
    sizes_t sizes = SIZES_BENCH;
    const char *env = getenv("SCHEDBENCH_FULL");
    if (env && strcmp(env, "1") == 0)
        sizes = SIZES_FULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        if (strcmp(a, "--workers") == 0) {
            if (++i == argc)
                usage_exit("--workers needs a number");
            val = argv[i];
        } else if (strncmp(a, "--workers=", 10) == 0) {
            val = a + 10;
        } else if (strcmp(a, "--full") == 0) {
            sizes = SIZES_FULL;
            continue;
        } else if (strcmp(a, "--smoke") == 0) {
            sizes = SIZES_SMOKE;
            continue;
        } else {
            if (strcmp(a, "--help") == 0) /* then Google Benchmark's own help */
                printf("bench [--workers N] [--full | --smoke] [flags below]\n"
                       "  --workers N  worker count (default: the library's)\n"
                       "  --full       also the workloads' full argument sets "
                       "(or SCHEDBENCH_FULL=1)\n"
                       "  --smoke      only the workloads' small test sets\n\n");
            argv[out++] = argv[i];
            continue;
        }
        char *end;
        long n = strtol(val, &end, 10);
        if (*val == 0 || *end != 0 || n < 1 || n > BTHREAD_MAX_CONCURRENCY)
            usage_exit("--workers needs a number from 1 to " SB_STR(BTHREAD_MAX_CONCURRENCY));
        workers = (int)n;
    }
    argc = out;
    argv[argc] = NULL;

    if (workers > 0) {
        int rc = bthread_setconcurrency(workers);
        if (rc != 0) {
            fprintf(stderr, "bench: bthread_setconcurrency(%d): %s\n", workers, strerror(rc));
            return 2;
        }
    }
    register_workloads(sizes);
    add_context(workers, sizes);
    int rc = gb_main(&argc, argv);
    while (all_sets) {
        wl_bench_t *next = all_sets->next;
        free(all_sets);
        all_sets = next;
    }
    return rc;
}
