// ref_main.cc -- build/ref/<r>/bench: the reference rows (oneTBB, OpenMP, pool) as Google
// Benchmark binaries that read like build/<variant>/bench to run.py.
//
//   build/ref/<r>/bench [--workers N] [--full | --smoke] [--benchmark_* flags...]
//
// The same flags as harness/bench_main.c.  The benchmark names and argument sets are
// not listed here: the build writes them into sets.h from the first variant's
// `bench --benchmark_list_tests` (bench, --full and --smoke lists), so a reference row
// always measures exactly the sets the variants do.  Of those, this binary registers the
// workloads it implements (fib, granularity, imbalance, spawn) and that the runtime can
// express (ref_supports), under the same names ("<workload>/<arg>:<value>/...", and
// Google Benchmark's "/real_time").  If a workload's argument names change, the binary
// refuses to start rather than measure something else.
//
// Every iteration runs the runtime's version once and compares its answer with the
// sequential one (the same definitions as workloads/*.c; computed once, untimed).
// Counters: proc_cpu_s (process CPU time per iteration), items_per_second, and the
// workload's own counters.  There are no scheduler counters (steals, parks, ...): the
// runtimes do not expose them.  Context: variant, runtime, workers, cpu_model,
// topology, compiler, cflags, git_rev, sizes.
#include <benchmark/benchmark.h>
#include <hwloc.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "ref.h"
#include "sets.h" /* generated: ref_sets_bench, ref_sets_full, ref_sets_smoke */
#include "wl_kernel.h"

#ifndef SCHEDBENCH_CFLAGS
#define SCHEDBENCH_CFLAGS "unknown"
#endif
#ifndef SCHEDBENCH_GIT_REV
#define SCHEDBENCH_GIT_REV "unknown"
#endif

namespace {

int g_workers;

// ---- the sequential answers (the definitions of workloads/*.c) ------------------------

uint64_t fib_value(long n) { return n < 2 ? (uint64_t)n : fib_value(n - 1) + fib_value(n - 2); }
uint64_t seq_fib(const long *a) { return fib_value(a[0]); }
uint64_t seq_spawn(const long *a) { return (uint64_t)a[0] * (uint64_t)(a[0] - 1) / 2; }
uint64_t seq_imbalance(const long *a)
{
    return wl_imbalance_checksum(a[2], wl_grain_iters((double)a[1]), (double)a[0], a[5] != 0);
}
uint64_t seq_granularity(const long *a) { return wl_granularity_checksum(a[0]); }

// ---- granularity: the METG sweep around the runtime's ref_granularity_step -------------

int run_granularity(const long *args, wl_run_t *out)
{
    static std::map<long, std::vector<uint64_t>> seq_ns; // per task count, measured once
    long tasks = args[0];
    if (tasks < 1)
        return EINVAL;
    std::vector<uint64_t> &seq = seq_ns[tasks];
    if (seq.empty()) {
        seq.resize(WL_GRAIN_COUNT);
        for (int g = 0; g < WL_GRAIN_COUNT; g++)
            (void)wl_granularity_step(g, tasks, &seq[g]);
    }
    uint64_t wall[WL_GRAIN_COUNT], sum = 0;
    for (int g = 0; g < WL_GRAIN_COUNT; g++) {
        uint64_t iters = wl_grain_iters(wl_grains_us[g]), s = 0;
        uint64_t t0 = wl_now_ns();
        int rc = ref_granularity_step(g, tasks, iters, &s);
        wall[g] = wl_now_ns() - t0;
        if (rc != 0)
            return rc;
        sum += s;
    }
    wl_granularity_result(out, sum, seq.data(), wall, tasks, g_workers);
    return 0;
}

// ---- the workloads this binary knows ---------------------------------------------------

struct RefWorkload {
    const char *name;
    std::vector<std::string> arg_names; // must equal workloads/<name>.c's
    uint64_t (*sequential)(const long *);
    int (*parallel)(const long *, wl_run_t *);
};

const RefWorkload kWorkloads[] = {
    {"fib", {"n"}, seq_fib, ref_fib},
    {"granularity", {"tasks"}, seq_granularity, run_granularity},
    {"imbalance", {"imbalance", "grain_us", "tasks", "submitters", "late", "skew"}, seq_imbalance,
     ref_imbalance},
    {"spawn", {"n"}, seq_spawn, ref_spawn},
};

struct RefSet {
    const RefWorkload *w;
    long args[WL_MAX_ARGS];
    bool have_expected;
    uint64_t expected;
};

double process_cpu_s()
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void run_set(benchmark::State &st, RefSet *b)
{
    if (!b->have_expected) { // outside the timed loop
        b->expected = b->w->sequential(b->args);
        b->have_expected = true;
    }
    std::map<std::string, double> sums; // the workload's counters, summed by name
    double items = 0;
    char msg[256];
    double cpu0 = process_cpu_s();
    for (auto _ : st) {
        wl_run_t r;
        std::memset(&r, 0, sizeof r);
        int rc = b->w->parallel(b->args, &r);
        if (rc != 0) {
            std::snprintf(msg, sizeof msg, "%s: %s failed: %s", b->w->name, ref_variant,
                          std::strerror(rc));
            st.SkipWithError(msg);
            return;
        }
        if (r.answer != b->expected) {
            std::snprintf(msg, sizeof msg,
                          "%s: wrong answer: %s %" PRIu64 ", sequential %" PRIu64, b->w->name,
                          ref_variant, r.answer, b->expected);
            st.SkipWithError(msg);
            return;
        }
        items += r.items;
        for (int i = 0; i < r.ncounters && i < WL_MAX_COUNTERS; i++)
            sums[r.counters[i].name] += r.counters[i].value;
    }
    double cpu1 = process_cpu_s();
    st.counters["proc_cpu_s"] = benchmark::Counter(cpu1 - cpu0, benchmark::Counter::kAvgIterations);
    for (const auto &kv : sums)
        st.counters[kv.first] = benchmark::Counter(kv.second, benchmark::Counter::kAvgIterations);
    st.SetItemsProcessed((int64_t)items);
}

// "imbalance/imbalance:2/grain_us:10/..." -> the set, if this binary implements it.
// Exits when the name's argument names differ from what the reference implements.
bool parse_set(const std::string &name, RefSet *set)
{
    std::vector<std::string> parts;
    for (size_t at = 0;;) {
        size_t slash = name.find('/', at);
        parts.push_back(name.substr(at, slash - at));
        if (slash == std::string::npos)
            break;
        at = slash + 1;
    }
    set->w = nullptr;
    for (const RefWorkload &w : kWorkloads)
        if (parts[0] == w.name)
            set->w = &w;
    if (!set->w)
        return false;
    const std::vector<std::string> &want = set->w->arg_names;
    bool ok = parts.size() == want.size() + 1;
    for (size_t i = 0; ok && i < want.size(); i++) {
        const std::string &p = parts[i + 1];
        size_t colon = p.find(':');
        ok = colon != std::string::npos && p.substr(0, colon) == want[i];
        if (ok) {
            char *end;
            set->args[i] = std::strtol(p.c_str() + colon + 1, &end, 10);
            ok = *end == 0;
        }
    }
    if (!ok) {
        std::fprintf(stderr,
                     "bench (%s): benchmark %s does not match the arguments this reference "
                     "implements for %s; update harness/ref/ to workloads/%s.c\n",
                     ref_variant, name.c_str(), set->w->name, set->w->name);
        std::exit(2);
    }
    return true;
}

// ---- the run record (JSON context) -----------------------------------------------------

std::string cpu_model()
{
    std::ifstream f("/proc/cpuinfo");
    for (std::string line; std::getline(f, line);)
        if (line.compare(0, 10, "model name") == 0) {
            size_t colon = line.find(':');
            size_t v = line.find_first_not_of(" \t", colon + 1);
            if (colon != std::string::npos && v != std::string::npos)
                return line.substr(v);
        }
    return "unknown";
}

std::string topology()
{
    std::string text;
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return "unknown";
    if (hwloc_topology_load(topo) == 0) {
        const std::pair<hwloc_obj_type_t, const char *> kinds[] = {
            {HWLOC_OBJ_PACKAGE, "packages"},
            {HWLOC_OBJ_NUMANODE, "NUMA nodes"},
            {HWLOC_OBJ_CORE, "cores"},
            {HWLOC_OBJ_PU, "PUs"}};
        for (const auto &k : kinds)
            text += (text.empty() ? "" : ", ") +
                    std::to_string(hwloc_get_nbobjs_by_type(topo, k.first)) + " " + k.second;
    }
    hwloc_topology_destroy(topo);
    return text.empty() ? "unknown" : text;
}

void add_context(const char *sizes)
{
    benchmark::AddCustomContext("variant", ref_variant);
    benchmark::AddCustomContext("runtime", ref_runtime);
    benchmark::AddCustomContext("workers", std::to_string(g_workers));
    benchmark::AddCustomContext("cpu_model", cpu_model());
    benchmark::AddCustomContext("topology", topology());
#if defined(__clang__)
    benchmark::AddCustomContext("compiler", "clang " __clang_version__);
#else
    benchmark::AddCustomContext("compiler", "gcc " __VERSION__);
#endif
    benchmark::AddCustomContext("cflags", SCHEDBENCH_CFLAGS);
    benchmark::AddCustomContext("git_rev", SCHEDBENCH_GIT_REV);
    benchmark::AddCustomContext("sizes", sizes);
}

[[noreturn]] void usage_exit(const char *why)
{
    std::fprintf(stderr,
                 "bench (%s): %s\nusage: bench [--workers N] [--full | --smoke] "
                 "[Google Benchmark flags, see --help]\n",
                 ref_variant, why);
    std::exit(2);
}

} // namespace

int main(int argc, char **argv)
{
    int workers = 0, out = 1;
    const char *const *sets = ref_sets_bench;
    const char *sizes = "bench";
    const char *env = std::getenv("SCHEDBENCH_FULL");
    if (env && std::strcmp(env, "1") == 0) {
        sets = ref_sets_full;
        sizes = "full";
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = nullptr;
        if (std::strcmp(a, "--workers") == 0) {
            if (++i == argc)
                usage_exit("--workers needs a number");
            val = argv[i];
        } else if (std::strncmp(a, "--workers=", 10) == 0) {
            val = a + 10;
        } else if (std::strcmp(a, "--full") == 0) {
            sets = ref_sets_full;
            sizes = "full";
            continue;
        } else if (std::strcmp(a, "--smoke") == 0) {
            sets = ref_sets_smoke;
            sizes = "smoke";
            continue;
        } else {
            argv[out++] = argv[i];
            continue;
        }
        char *end;
        long n = std::strtol(val, &end, 10);
        if (*val == 0 || *end != 0 || n < 1 || n > 4096)
            usage_exit("--workers needs a number from 1 to 4096");
        workers = (int)n;
    }
    argc = out;
    argv[argc] = nullptr;

    g_workers = ref_init(workers);
    (void)wl_iters_per_us(); // calibrate once, before anything is timed
    for (size_t i = 0; sets[i]; i++) {
        RefSet *set = new RefSet(); // lives as long as the benchmark
        if (!parse_set(sets[i], set)) {
            delete set;
            continue;
        }
        if (!ref_supports(set->w->name, set->args)) {
            std::fprintf(stderr, "bench (%s): %s cannot be expressed here; not registered\n",
                         ref_variant, sets[i]);
            delete set;
            continue;
        }
        benchmark::RegisterBenchmark(sets[i], [set](benchmark::State &st) { run_set(st, set); })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
    }
    add_context(sizes);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
