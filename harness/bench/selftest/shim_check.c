/*
 * shim_check.c -- exercises every call of harness/bench/shim.h with fixed iteration
 * counts and manual times, so that `python3 -m harness.driver.benchjson shimcheck` can
 * compare the JSON Google Benchmark writes with exact expected values (`make test-shim`).
 *
 * Each benchmark re-checks its own arguments and iteration count and reports a mismatch
 * as an error; the Python side then expects exactly one error, the deliberate one.
 */
#include <stdio.h>
#include <time.h>

#include "shim.h"

#define ITERS 10

/* Arguments, counters of every flag, items, label, manual time of 1 ms per iteration. */
static void bm_manual(gb_state *st, void *arg)
{
    if (arg != (void *)&bm_manual || gb_range(st, 0) != 3 || gb_range(st, 1) != 4) {
        gb_skip_with_error(st, "wrong arg or ranges");
        return;
    }
    while (gb_keep_running(st))
        gb_set_iteration_time(st, 0.001);
    if (gb_iterations(st) != ITERS) {
        gb_skip_with_error(st, "wrong iteration count");
        return;
    }
    gb_counter(st, "plain", 7, GB_COUNTER_DEFAULT);
    gb_counter(st, "rate", 5, GB_COUNTER_RATE);                      /* 5 / 0.01 s = 500 */
    gb_counter(st, "avg", 100, GB_COUNTER_AVG_ITERATIONS);            /* 100 / 10 = 10 */
    gb_counter(st, "invariant", 2, GB_COUNTER_ITER_INVARIANT);        /* 2 * 10 = 20 */
    gb_counter(st, "inv_avg", 100, GB_COUNTER_AVG_ITERATIONS | GB_COUNTER_INVERT); /* 0.1 */
    gb_counter(st, "replaced", 1, GB_COUNTER_DEFAULT);
    gb_counter(st, "replaced", 2, GB_COUNTER_DEFAULT);                /* the last one wins */
    gb_set_items_processed(st, 50);                                   /* 5000 per second */
    gb_set_label(st, "hello");
}

/* Batches: 64 fixed iterations in batches of 8 = 8 calls that return true. */
static void bm_batch(gb_state *st, void *arg)
{
    (void)arg;
    int calls = 0;
    while (gb_keep_running_batch(st, 8))
        calls++;
    gb_counter(st, "batches", calls, GB_COUNTER_DEFAULT);
}

/* Paused time is not measured: each iteration sleeps 50 ms with the timer paused. */
static void bm_pause(gb_state *st, void *arg)
{
    (void)arg;
    while (gb_keep_running(st)) {
        gb_pause_timing(st);
        nanosleep(&(struct timespec){.tv_nsec = 50 * 1000 * 1000}, NULL);
        gb_resume_timing(st);
    }
}

static void bm_skip(gb_state *st, void *arg)
{
    (void)arg;
    gb_skip_with_error(st, "deliberate");
    if (!gb_error_occurred(st))
        fprintf(stderr, "shim_check: gb_error_occurred is false after a skip\n");
}

static void bm_reps(gb_state *st, void *arg)
{
    (void)arg;
    while (gb_keep_running(st)) {
    }
}

int main(int argc, char **argv)
{
    static const char *const names[] = {"a", "b"};
    gb_bench *b = gb_register("shim/manual", bm_manual, (void *)&bm_manual);
    gb_args(b, (const int64_t[]){3, 4}, 2);
    gb_arg_names(b, names, 2);
    gb_use_manual_time(b);
    gb_fixed_iterations(b, ITERS);
    gb_time_unit(b, GB_MS);

    b = gb_register("shim/batch", bm_batch, NULL);
    gb_fixed_iterations(b, 64);

    b = gb_register("shim/pause", bm_pause, NULL);
    gb_use_real_time(b);
    gb_measure_process_cpu_time(b);
    gb_fixed_iterations(b, 3);
    gb_time_unit(b, GB_MS);

    gb_register("shim/skip", bm_skip, NULL);

    b = gb_register("shim/reps", bm_reps, NULL);
    gb_repetitions(b, 3);
    gb_min_time(b, 0.001);
    gb_time_unit(b, GB_US);

    gb_add_context("shim_ctx", "value");
    return gb_main(&argc, argv);
}
