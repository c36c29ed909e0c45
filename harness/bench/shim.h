/*
 * shim.h -- a small C API over Google Benchmark (libbenchmark 1.7.x).
 *
 * Google Benchmark is C++; the workloads and the harness are C.  This header exposes the
 * part of it a scheduler benchmark needs, one C function per C++ call, with the same
 * meaning (the comment names the C++ call each one wraps):
 *
 *     static void bm_thing(gb_state *st, void *arg)
 *     {
 *         long n = (long)gb_range(st, 0);     // this run's argument 0
 *         while (gb_keep_running(st)) {       // the timed loop
 *             do_thing(n);
 *         }
 *         gb_counter(st, "bytes", 8.0 * n * gb_iterations(st), GB_COUNTER_RATE);
 *     }
 *
 *     int main(int argc, char **argv)
 *     {
 *         gb_bench *b = gb_register("thing", bm_thing, NULL);
 *         gb_args(b, (int64_t[]){1000}, 1);
 *         gb_arg_names(b, (const char *[]){"n"}, 1);   // name "thing/n:1000"
 *         gb_add_context("variant", "x");              // into the JSON "context"
 *         return gb_main(&argc, argv);                 // parse flags, run, report
 *     }
 *
 * Everything runs on the thread that calls gb_main(): Google Benchmark's own threading
 * (->Threads(n)) is deliberately not offered; the schedulers bring their own workers.
 *
 * Contract: gb_register/gb_args/... and gb_add_context before gb_main (or
 * gb_initialize + gb_run); gb_keep_running and the other gb_state calls only inside a
 * benchmark function, on its state.
 */
#ifndef SCHEDBENCH_SHIM_H
#define SCHEDBENCH_SHIM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gb_state gb_state; /* a benchmark::State, opaque */
typedef struct gb_bench gb_bench; /* a benchmark::internal::Benchmark, opaque */
typedef void (*gb_fn)(gb_state *st, void *arg);

/* ---- registering (before gb_run) ----------------------------------------------------- */

/* RegisterBenchmark(name, fn): arg is passed to every call of fn.  name is copied. */
gb_bench *gb_register(const char *name, gb_fn fn, void *arg);
/* ->Args({...}): add one argument set; call once per set (n <= 16). */
void gb_args(gb_bench *b, const int64_t *args, int n);
/* ->ArgNames({...}): the names shown as "name/arg:value". */
void gb_arg_names(gb_bench *b, const char *const *names, int n);
/* ->UseRealTime(): decide iterations and rates on wall time, not the main thread's CPU
 * time (what a benchmark whose work runs on other threads wants).  Google Benchmark
 * then appends "/real_time" to the reported name. */
void gb_use_real_time(gb_bench *b);
/* ->UseManualTime(): the function reports each iteration's time with
 * gb_set_iteration_time(); "/manual_time" is appended to the name. */
void gb_use_manual_time(gb_bench *b);
/* ->MeasureProcessCPUTime(): cpu_time is the whole process's CPU time (all workers),
 * not the calling thread's. */
void gb_measure_process_cpu_time(gb_bench *b);
/* ->Repetitions(n): repeat the whole measurement n times (mean/median/stddev/cv). */
void gb_repetitions(gb_bench *b, int n);
/* ->Iterations(n): a fixed iteration count instead of the automatic one. */
void gb_fixed_iterations(gb_bench *b, int64_t n);
/* ->MinTime(s): run for at least s seconds per repetition. */
void gb_min_time(gb_bench *b, double seconds);

typedef enum gb_unit { GB_NS, GB_US, GB_MS, GB_S } gb_unit_t;
/* ->Unit(u): the time unit of the report. */
void gb_time_unit(gb_bench *b, gb_unit_t unit);

/* AddCustomContext(key, value): one more string in the JSON "context" object. */
void gb_add_context(const char *key, const char *value);

/* ---- running ------------------------------------------------------------------------- */

/* Initialize(argc, argv): consume Google Benchmark's --benchmark_* flags.  Returns false
 * (after printing the offender) if an argument is left that nobody understood. */
bool gb_initialize(int *argc, char **argv);
/* RunSpecifiedBenchmarks() then Shutdown(); returns how many benchmarks ran. */
int gb_run(void);
/* gb_initialize + gb_run: 0 on success, 1 on an unknown argument. */
int gb_main(int *argc, char **argv);

/* ---- inside a benchmark function ------------------------------------------------------ */

/* KeepRunning(): true while another timed iteration is wanted; the timer starts at the
 * first call and stops when it returns false. */
bool gb_keep_running(gb_state *st);
/* KeepRunningBatch(n): as gb_keep_running, but n iterations at a time (for loops of a
 * few nanoseconds, where a call per iteration would be measured too). */
bool gb_keep_running_batch(gb_state *st, int64_t n);
/* range(i): argument i of the current argument set. */
int64_t gb_range(gb_state *st, int i);
/* iterations(): iterations run so far (the total, once the loop has ended). */
int64_t gb_iterations(gb_state *st);
/* PauseTiming() / ResumeTiming(): exclude a stretch of an iteration (costly: ~1 us). */
void gb_pause_timing(gb_state *st);
void gb_resume_timing(gb_state *st);
/* SetIterationTime(s): this iteration's time, for gb_use_manual_time benchmarks. */
void gb_set_iteration_time(gb_state *st, double seconds);
/* SetItemsProcessed(n): total items over all iterations -> "items_per_second". */
void gb_set_items_processed(gb_state *st, int64_t items);
/* SetLabel(s): a free-form string shown beside the result. */
void gb_set_label(gb_state *st, const char *label);
/* SkipWithError(msg): mark this benchmark failed with msg.  Inside the loop the current
 * iteration still finishes; leave the loop (break) afterwards. */
void gb_skip_with_error(gb_state *st, const char *msg);
bool gb_error_occurred(gb_state *st);

/* Counter flags: the values of benchmark::Counter::Flags, combinable with |. */
#define GB_COUNTER_DEFAULT 0u              /* the value as given */
#define GB_COUNTER_RATE (1u << 0)          /* divided by the benchmark's time (s) */
#define GB_COUNTER_AVG_THREADS (1u << 1)   /* divided by the thread count (1 here) */
#define GB_COUNTER_ITER_INVARIANT (1u << 2) /* multiplied by the iteration count */
#define GB_COUNTER_AVG_ITERATIONS (1u << 3) /* divided by the iteration count */
#define GB_COUNTER_INVERT (1u << 31)       /* 1/x, applied last */
/* counters[name] = Counter(value, flags); a second call with the same name replaces it.
 * Usually set once after the loop, with the total and GB_COUNTER_AVG_ITERATIONS. */
void gb_counter(gb_state *st, const char *name, double value, unsigned flags);

#ifdef __cplusplus
}
#endif
#endif /* SCHEDBENCH_SHIM_H */
