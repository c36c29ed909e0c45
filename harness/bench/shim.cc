// shim.cc -- the C API of shim.h, one thin wrapper per Google Benchmark call.
//
// gb_state and gb_bench are never defined: a gb_state * is a benchmark::State * and a
// gb_bench * a benchmark::internal::Benchmark *, cast at the boundary.
#include "shim.h"

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace {

benchmark::State &S(gb_state *st) { return *reinterpret_cast<benchmark::State *>(st); }
benchmark::internal::Benchmark *B(gb_bench *b)
{
    return reinterpret_cast<benchmark::internal::Benchmark *>(b);
}

}  // namespace

extern "C" {

gb_bench *gb_register(const char *name, gb_fn fn, void *arg)
{
    auto *b = benchmark::RegisterBenchmark(
        name, [fn, arg](benchmark::State &st) { fn(reinterpret_cast<gb_state *>(&st), arg); });
    return reinterpret_cast<gb_bench *>(b);
}

void gb_args(gb_bench *b, const int64_t *args, int n)
{
    B(b)->Args(std::vector<int64_t>(args, args + n));
}

void gb_arg_names(gb_bench *b, const char *const *names, int n)
{
    B(b)->ArgNames(std::vector<std::string>(names, names + n));
}

void gb_use_real_time(gb_bench *b) { B(b)->UseRealTime(); }
void gb_use_manual_time(gb_bench *b) { B(b)->UseManualTime(); }
void gb_measure_process_cpu_time(gb_bench *b) { B(b)->MeasureProcessCPUTime(); }
void gb_repetitions(gb_bench *b, int n) { B(b)->Repetitions(n); }
void gb_fixed_iterations(gb_bench *b, int64_t n) { B(b)->Iterations(n); }
void gb_min_time(gb_bench *b, double seconds) { B(b)->MinTime(seconds); }

void gb_time_unit(gb_bench *b, gb_unit_t unit)
{
    static const benchmark::TimeUnit units[] = {benchmark::kNanosecond, benchmark::kMicrosecond,
                                                benchmark::kMillisecond, benchmark::kSecond};
    B(b)->Unit(units[unit]);
}

void gb_add_context(const char *key, const char *value)
{
    benchmark::AddCustomContext(key, value);
}

bool gb_initialize(int *argc, char **argv)
{
    benchmark::Initialize(argc, argv);
    return !benchmark::ReportUnrecognizedArguments(*argc, argv);
}

int gb_run(void)
{
    size_t n = benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return static_cast<int>(n);
}

int gb_main(int *argc, char **argv)
{
    if (!gb_initialize(argc, argv))
        return 1;
    gb_run();
    return 0;
}

bool gb_keep_running(gb_state *st) { return S(st).KeepRunning(); }
bool gb_keep_running_batch(gb_state *st, int64_t n) { return S(st).KeepRunningBatch(n); }
int64_t gb_range(gb_state *st, int i) { return S(st).range(static_cast<size_t>(i)); }
int64_t gb_iterations(gb_state *st) { return S(st).iterations(); }
void gb_pause_timing(gb_state *st) { S(st).PauseTiming(); }
void gb_resume_timing(gb_state *st) { S(st).ResumeTiming(); }
void gb_set_iteration_time(gb_state *st, double seconds) { S(st).SetIterationTime(seconds); }
void gb_set_items_processed(gb_state *st, int64_t items) { S(st).SetItemsProcessed(items); }
void gb_set_label(gb_state *st, const char *label) { S(st).SetLabel(label); }
void gb_skip_with_error(gb_state *st, const char *msg) { S(st).SkipWithError(msg); }
bool gb_error_occurred(gb_state *st) { return S(st).error_occurred(); }

void gb_counter(gb_state *st, const char *name, double value, unsigned flags)
{
    S(st).counters[name] = benchmark::Counter(value, static_cast<benchmark::Counter::Flags>(flags));
}

}  // extern "C"

// The flag values in shim.h are Google Benchmark's; fail the build if they ever drift.
static_assert(GB_COUNTER_RATE == benchmark::Counter::kIsRate, "flag drift");
static_assert(GB_COUNTER_AVG_THREADS == benchmark::Counter::kAvgThreads, "flag drift");
static_assert(GB_COUNTER_ITER_INVARIANT == benchmark::Counter::kIsIterationInvariant,
              "flag drift");
static_assert(GB_COUNTER_AVG_ITERATIONS == benchmark::Counter::kAvgIterations, "flag drift");
static_assert(GB_COUNTER_INVERT == static_cast<unsigned>(benchmark::Counter::kInvert),
              "flag drift");
