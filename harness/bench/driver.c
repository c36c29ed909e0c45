/*
 * driver.c -- the one bench driver (see driver.h): flags, registration, the timed loop
 * with its answer check and counters, and the run record.  Used by every
 * build/<variant>/bench and every build/ref/<r>/bench.
 *
 * Counters, all per iteration (totals divided by the iteration count):
 *   the runtime's own (drv_runtime_t.stats: steals, parks, ... for the variants);
 *   proc_cpu_s -- CPU time of the whole process (workers, timer, the calling thread);
 *   the workload's own counters (wl_run_t.counters), averaged over the iterations;
 * and items_per_second from wl_run_t.items.  Google Benchmark's own cpu_time is the CPU
 * time of the calling (main) thread only, which mostly waits: read proc_cpu_s instead.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Only for BTHREAD_MAX_CONCURRENCY, the --workers bound of every row.  This file calls
 * no bthread function and never names errno (bthread.h redirects errno to
 * bthread_errno_location, which the reference rows do not link). */
#include "bthread.h"
#include "driver.h"
#include "shim.h"
#include <unistd.h>

#include "timeutil.h"
#include "wl_kernel.h"

#define DRV_XSTR(x) #x
#define DRV_STR(x) DRV_XSTR(x)

static const drv_runtime_t *rt;
static int workers_in_use;

/* ---- one benchmark per workload and argument set ------------------------------------ */

typedef struct drv_set {
    const workload_t *w;
    long args[WL_MAX_ARGS];
    bool have_expected;
    uint64_t expected;     /* sequential(args), computed on the first call */
    struct drv_set *next;  /* every registered set, freed after the run */
} drv_set_t;
static drv_set_t *all_sets;

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

/* The most scheduler counters a runtime may report. */
#define STATS_MAX 48

static double process_cpu_s(void) { return (double)sb_clock_ns(CLOCK_PROCESS_CPUTIME_ID) * 1e-9; }

static void set_name(const workload_t *w, const long *args, char *buf, size_t n);

/* SCHEDBENCH_ANSWER_DIR: a directory where each set's sequential answer is kept once
 * computed, one file per set and kernel rate ("<set name>@<iterations per us>", '/'
 * made '+').  A sweep that runs every repetition as a process of its own (run.py's
 * interleaved rounds) then computes a set's sequential answer once, not once a
 * repetition (1.35 s for uts, 1.1 s for imbalance here).  Every run's answer is still
 * checked against it.  The file is written to a temporary name and renamed, so a
 * reader never sees half of one; an unreadable file is computed again. */
static bool answer_path(const drv_set_t *b, char *path, size_t n)
{
    const char *dir = getenv("SCHEDBENCH_ANSWER_DIR");
    if (!dir || !*dir)
        return false;
    char name[256];
    set_name(b->w, b->args, name, sizeof name);
    for (char *c = name; *c; c++)
        if (*c == '/')
            *c = '+';
    return (size_t)snprintf(path, n, "%s/%s@%.17g", dir, name, wl_iters_per_us()) < n;
}

static uint64_t sequential_answer(const drv_set_t *b)
{
    char path[1024];
    bool cached = answer_path(b, path, sizeof path);
    if (cached) {
        FILE *f = fopen(path, "r");
        unsigned long long v;
        int got = f ? fscanf(f, "%llu", &v) : 0;
        if (f)
            fclose(f);
        if (got == 1)
            return (uint64_t)v;
    }
    uint64_t v = b->w->sequential(b->args);
    if (cached) {
        char tmp[1100];
        snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
        FILE *f = fopen(tmp, "w");
        if (f) {
            bool ok = fprintf(f, "%" PRIu64 "\n", v) > 0;
            ok = fclose(f) == 0 && ok;
            if (!ok || rename(tmp, path) != 0)
                remove(tmp);
        }
    }
    return v;
}

/* One parallel() of set b where the runtime runs (drv_runtime_t.call). */
typedef struct parallel_call {
    const drv_set_t *b;
    wl_run_t *r;
    int rc;
} parallel_call_t;

static void parallel_here(void *arg)
{
    parallel_call_t *c = arg;
    c->rc = c->b->w->parallel(c->b->args, c->r);
}

static void in_runtime(void (*fn)(void *), void *arg)
{
    if (rt->call)
        rt->call(fn, arg);
    else
        fn(arg);
}

static void stats_here(void *sum) { rt->stats(sum); }

static void stats_now(double *sum)
{
    if (rt->nstats > 0)
        in_runtime(stats_here, sum);
}

static double cpu_now_s(void) { return rt->cpu_s ? rt->cpu_s() : process_cpu_s(); }

static bool any_failed; /* a set failed (drv_runtime_t.stop is told) */

/* One parallel() into r, checked against the sequential answer; false after marking the
 * benchmark failed. */
static bool run_checked(gb_state *st, const drv_set_t *b, wl_run_t *r)
{
    char msg[256];
    memset(r, 0, sizeof *r);
    parallel_call_t c = {b, r, 0};
    in_runtime(parallel_here, &c);
    if (c.rc != 0)
        snprintf(msg, sizeof msg, "%s: %s failed: %s", b->w->name, rt->variant, strerror(c.rc));
    else if (r->answer != b->expected)
        snprintf(msg, sizeof msg, "%s: wrong answer: %s %" PRIu64 ", sequential %" PRIu64,
                 b->w->name, rt->variant, r->answer, b->expected);
    else
        return true;
    gb_skip_with_error(st, msg);
    any_failed = true;
    return false;
}

static void run_set(gb_state *st, void *arg)
{
    drv_set_t *b = arg;
    char msg[256];
    const char *why = b->w->check ? b->w->check(b->args, workers_in_use) : NULL;
    if (why) { /* a set that cannot work here: say why, run nothing */
        snprintf(msg, sizeof msg, "%s: %s", b->w->name, why);
        gb_skip_with_error(st, msg);
        return;
    }
    wl_run_t r;
    if (!b->have_expected) { /* outside the timed loop */
        b->expected = sequential_answer(b);
        b->have_expected = true;
        if (rt->warm_up && !run_checked(st, b, &r))
            return;
    }
    double st0[STATS_MAX], st1[STATS_MAX];
    counter_sums_t sums = {.n = 0};
    double items = 0;

    stats_now(st0);
    double cpu0 = cpu_now_s();
    while (gb_keep_running(st)) {
        double t0 = rt->now_s ? rt->now_s() : 0;
        if (!run_checked(st, b, &r))
            return;
        if (rt->now_s)
            gb_set_iteration_time(st, rt->now_s() - t0);
        items += r.items;
        sums_add(&sums, &r);
    }
    double cpu1 = cpu_now_s();
    stats_now(st1);

    for (int i = 0; i < rt->nstats; i++)
        gb_counter(st, rt->stat_names[i], st1[i] - st0[i], GB_COUNTER_AVG_ITERATIONS);
    for (const struct drv_ratio *q = rt->ratios; q && q->name; q++) {
        double den = q->den == DRV_ITEMS ? items : st1[q->den] - st0[q->den];
        gb_counter(st, q->name, den > 0 ? (st1[q->num] - st0[q->num]) / den : 0,
                   GB_COUNTER_DEFAULT);
    }
    gb_counter(st, "proc_cpu_s", cpu1 - cpu0, GB_COUNTER_AVG_ITERATIONS);
    gb_counter(st, "items", items, GB_COUNTER_AVG_ITERATIONS);
    if (rt->costs && b->w->span_ns)
        gb_counter(st, "span_s", b->w->span_ns(b->args, workers_in_use, rt->costs) / 1e9,
                   GB_COUNTER_DEFAULT);
    for (int i = 0; i < sums.n; i++)
        gb_counter(st, sums.name[i], sums.sum[i], GB_COUNTER_AVG_ITERATIONS);
    gb_set_items_processed(st, (int64_t)items);
}

/* "<workload>/<arg>:<value>/..." into buf. */
static void set_name(const workload_t *w, const long *args, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "%s", w->name);
    for (int i = 0; i < workload_nargs(w) && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "/%s:%ld", w->arg_names[i], args[i]);
}

static void register_set(const workload_t *w, const long *args)
{
    char name[256];
    set_name(w, args, name, sizeof name);
    if (rt->supports && !rt->supports(w, args)) {
        fprintf(stderr, "bench (%s): %s cannot be expressed here; not registered\n",
                rt->variant, name);
        return;
    }
    drv_set_t *b = calloc(1, sizeof *b);
    if (!b) {
        fprintf(stderr, "bench (%s): out of memory\n", rt->variant);
        exit(2);
    }
    b->w = w;
    memcpy(b->args, args, sizeof b->args);
    b->next = all_sets;
    all_sets = b;
    gb_bench *g = gb_register(name, run_set, b);
    if (rt->now_s)
        gb_use_manual_time(g);
    else
        gb_use_real_time(g);
    gb_time_unit(g, GB_MS);
}

/* "imbalance/imbalance:2/grain_us:10/..." -> the set.  false when its workload is not
 * registered here; exits when the argument names differ from the workload's. */
static bool parse_set(const char *name, const workload_t **wp, long *args)
{
    size_t wlen = strcspn(name, "/");
    const workload_t *w = NULL;
    for (const workload_t *x = workload_first(); x; x = x->next)
        if (strlen(x->name) == wlen && strncmp(x->name, name, wlen) == 0)
            w = x;
    if (!w)
        return false;
    memset(args, 0, WL_MAX_ARGS * sizeof *args);
    const char *p = name + wlen;
    int nargs = workload_nargs(w);
    bool ok = true;
    for (int i = 0; ok && i < nargs; i++) {
        size_t alen = strlen(w->arg_names[i]);
        ok = p[0] == '/' && strncmp(p + 1, w->arg_names[i], alen) == 0 && p[1 + alen] == ':';
        if (ok) {
            char *end;
            args[i] = strtol(p + 2 + alen, &end, 10);
            ok = end != p + 2 + alen && (*end == '/' || *end == 0);
            p = end;
        }
    }
    if (!ok || *p != 0) {
        fprintf(stderr,
                "bench (%s): benchmark %s does not match the arguments of workload %s here; "
                "update harness/ref/ to workloads/%s.c\n",
                rt->variant, name, w->name, w->name);
        exit(2);
    }
    *wp = w;
    return true;
}

/* --set NAME: that one set, whatever its argument values ("/real_time" or
 * "/manual_time" after it is ignored); exits when NAME names no workload here. */
static void register_named(const char *name)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", name);
    static const char *const suffixes[] = {"/real_time", "/manual_time"};
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
        size_t n = strlen(copy), k = strlen(suffixes[i]);
        if (n > k && strcmp(copy + n - k, suffixes[i]) == 0)
            copy[n - k] = 0;
    }
    const workload_t *w;
    long args[WL_MAX_ARGS];
    if (!parse_set(copy, &w, args)) {
        fprintf(stderr, "bench (%s): --set %s: no workload %.*s here (--benchmark_list_tests "
                        "lists the sets)\n", rt->variant, name, (int)strcspn(copy, "/"), copy);
        exit(2);
    }
    register_set(w, args);
}

static void register_sets(drv_sizes_t sizes, char **named, int nnamed)
{
    if (nnamed > 0) {
        for (int i = 0; i < nnamed; i++)
            register_named(named[i]);
        return;
    }
    const char *const *names = rt->sets[sizes];
    if (names) {
        for (size_t i = 0; names[i]; i++) {
            const workload_t *w;
            long args[WL_MAX_ARGS];
            if (parse_set(names[i], &w, args))
                register_set(w, args);
        }
        return;
    }
    for (const workload_t *w = workload_first(); w; w = w->next) {
        if (sizes == DRV_SMOKE) {
            register_set(w, w->test);
            for (int i = 0; i < w->ntest_more; i++)
                register_set(w, w->test_more[i]);
            continue;
        }
        for (int i = 0; i < w->nbench; i++)
            register_set(w, w->bench[i]);
        if (sizes == DRV_FULL)
            for (int i = 0; i < w->nfull; i++)
                register_set(w, w->full[i]);
    }
}

/* ---- the run record (JSON context) -------------------------------------------------- */

static void context_cpu_model(void)
{
    if (rt->cpu_model) {
        gb_add_context("cpu_model", rt->cpu_model);
        return;
    }
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

/* The topology as the runtime describes it and, once its workers run, where each one
 * really is (pinned variants read it back; the others say "not pinned"). */
static void context_topology(void)
{
    char text[256] = "unknown", one[160];
    if (!rt->describe_topology || rt->describe_topology(text, sizeof text) < 0)
        snprintf(text, sizeof text, "unknown");
    gb_add_context("topology", text);
    char placement[2048] = "";
    size_t len = 0;
    for (int i = 0; i < workers_in_use && len < sizeof placement - 1; i++) {
        if (!rt->placement || rt->placement(i, one, sizeof one) < 0)
            snprintf(one, sizeof one, "not pinned");
        len += (size_t)snprintf(placement + len, sizeof placement - len, "%sw%d: %s",
                                i ? "; " : "", i, one);
    }
    gb_add_context("placement", placement);
}

static void add_context(drv_sizes_t sizes)
{
    static const char *const sizes_name[DRV_NSIZES] = {"bench", "full", "smoke"};
    char buf[256];
    gb_add_context("variant", rt->variant);
    if (rt->runtime)
        gb_add_context("runtime", rt->runtime);
    snprintf(buf, sizeof buf, "%d", workers_in_use);
    gb_add_context("workers", buf);
    context_cpu_model();
    context_topology();
    snprintf(buf, sizeof buf, "%s", rt->compiler ? rt->compiler : "unknown");
    buf[strcspn(buf, "\n")] = 0;
    for (size_t n = strlen(buf); n > 0 && buf[n - 1] == ' ';) /* clang's ends in a blank */
        buf[--n] = 0;
    gb_add_context("compiler", buf);
    gb_add_context("cflags", rt->cflags ? rt->cflags : "unknown");
    gb_add_context("git_rev", rt->git_rev ? rt->git_rev : "unknown");
    gb_add_context("sizes", sizes_name[sizes]);
    if (rt->policy && rt->policy(buf, sizeof buf) >= 0)
        gb_add_context("policy", buf);
}

/* ---- main ----------------------------------------------------------------------------- */

static void usage_exit(const char *why)
{
    fprintf(stderr, "bench (%s): %s\nusage: bench [--workers N] [--full | --smoke | "
                    "--set NAME...] [Google Benchmark flags, see --help]\n", rt->variant, why);
    exit(2);
}

int drv_main(int argc, char **argv, const drv_runtime_t *runtime)
{
    rt = runtime;
    if (rt->nstats < 0 || rt->nstats > STATS_MAX) {
        fprintf(stderr, "bench (%s): %d counters, at most %d\n", rt->variant, rt->nstats,
                STATS_MAX);
        return 2;
    }
    /* Take our flags out of argv; the rest goes to Google Benchmark. */
    int workers = 0, out = 1, nnamed = 0;
    char **named = calloc((size_t)argc, sizeof *named); /* the --set names */
    if (!named)
        return 2;
    drv_sizes_t sizes = DRV_BENCH;
    const char *env = getenv("SCHEDBENCH_FULL");
    if (env && strcmp(env, "1") == 0)
        sizes = DRV_FULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        if (strcmp(a, "--workers") == 0) {
            if (++i == argc)
                usage_exit("--workers needs a number");
            val = argv[i];
        } else if (strncmp(a, "--workers=", 10) == 0) {
            val = a + 10;
        } else if (strcmp(a, "--full") == 0) {
            sizes = DRV_FULL;
            continue;
        } else if (strcmp(a, "--smoke") == 0) {
            sizes = DRV_SMOKE;
            continue;
        } else if (strcmp(a, "--set") == 0 || strncmp(a, "--set=", 6) == 0) {
            if (a[5] == 0 && ++i == argc)
                usage_exit("--set needs a benchmark name");
            named[nnamed++] = a[5] ? argv[i] + 6 : argv[i];
            continue;
        } else if (strcmp(a, "--policy") == 0) { /* what run.py plans by; starts nothing */
            char buf[256];
            if (!rt->policy || rt->policy(buf, sizeof buf) < 0)
                snprintf(buf, sizeof buf, "unknown");
            printf("%s\n", buf);
            return 0;
        } else {
            if (strcmp(a, "--help") == 0) /* then Google Benchmark's own help */
                printf("bench [--workers N] [--full | --smoke] [flags below]\n"
                       "  --workers N  worker count, 1 to %d (default: the runtime's)\n"
                       "  --full       also the workloads' full argument sets "
                       "(or SCHEDBENCH_FULL=1)\n"
                       "  --smoke      only the workloads' small test sets\n"
                       "  --set NAME   only this set (\"fib/n:30\"), whatever its values; "
                       "repeatable\n"
                       "  --policy     print what the policy does (name=value words), "
                       "and exit\n\n",
                       BTHREAD_MAX_CONCURRENCY);
            argv[out++] = argv[i];
            continue;
        }
        char *end;
        long n = strtol(val, &end, 10);
        if (*val == 0 || *end != 0 || n < 1 || n > BTHREAD_MAX_CONCURRENCY)
            usage_exit("--workers needs a number from 1 to " DRV_STR(BTHREAD_MAX_CONCURRENCY));
        workers = (int)n;
    }
    argc = out;
    argv[argc] = NULL;
    /* one_iteration: Google Benchmark stops at the first iteration that reaches its
     * minimum time, so a minimum of 0 stops at the first (->Iterations(1) would put
     * "iterations:1" in every name); a caller's --benchmark_min_time, after it, wins. */
    char min_time[] = "--benchmark_min_time=0";
    char **gb_argv = argv;
    if (rt->one_iteration) {
        gb_argv = calloc((size_t)argc + 2, sizeof *gb_argv);
        if (!gb_argv)
            return 2;
        gb_argv[0] = argv[0];
        gb_argv[1] = min_time;
        memcpy(gb_argv + 2, argv + 1, (size_t)(argc - 1) * sizeof *argv);
        argc++;
    }

    /* A listing or the help starts nothing: names do not depend on the workers. */
    bool listing = false;
    for (int i = 1; i < argc; i++)
        listing |= strcmp(gb_argv[i], "--help") == 0 ||
                   (strncmp(gb_argv[i], "--benchmark_list_tests", 22) == 0 &&
                    strcmp(gb_argv[i] + 22, "=false") != 0 && strcmp(gb_argv[i] + 22, "=0") != 0);
    workers_in_use = listing ? (workers ? workers : 1) : rt->start(workers);
    if (workers_in_use < 1)
        return 2;
    register_sets(sizes, named, nnamed);
    free(named);
    add_context(sizes);
    (void)wl_iters_per_us(); /* calibrate once, before anything is timed */
    int rc = gb_main(&argc, gb_argv);
    if (gb_argv != argv)
        free(gb_argv);
    if (rt->stop && !listing) {
        int stop_rc = rt->stop(any_failed);
        rc = rc ? rc : stop_rc;
    }
    while (all_sets) {
        drv_set_t *next = all_sets->next;
        free(all_sets);
        all_sets = next;
    }
    return rc;
}
