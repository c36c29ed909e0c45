/*
 * unit_ws_rows.c -- the reference rows' workloads (harness/ref/fn_workloads.c) on the
 * article's scheduler (ws_sched.h), as the ws rows' benches run them, at their test
 * sizes: every answer equals the sequential one, with and without stealing, from
 * pthreads and from tasks on the workers.  The reference binaries are not built under
 * the sanitizers (harness/ref/rules.mk); this test is how their concurrent code is
 * checked under ThreadSanitizer (make SANITIZE=thread test-unit).
 */
#include "sbtest.h"

#include "ref/fn_workloads.c"
#include "ref/ws_fnrt.h"

typedef struct wl_case {
    int (*run)(const long *args, wl_run_t *out);
    uint64_t (*answer)(const long *args);
    long args[WL_MAX_ARGS];
} wl_case_t;

static int granularity_step_sum(const long *args, wl_run_t *out)
{
    uint64_t sum = 0;
    int rc = ref_granularity_step((int)args[0], args[1], wl_grain_iters(1.0), &sum);
    out->answer = sum;
    return rc;
}

static uint64_t granularity_step_answer(const long *args)
{
    uint64_t sum = 0, iters = wl_grain_iters(1.0);
    for (long i = 0; i < args[1]; i++)
        sum += wl_granularity_task((int)args[0], (uint64_t)i, iters);
    return sum;
}

static void every_workload(long steal_k)
{
    static const wl_case_t cases[] = {
        {ref_spawn, wl_spawn_answer, {3000}},
        {ref_imbalance, wl_imbalance_answer, {2, 5, 200, 3, 1, 0}},
        {ref_imbalance, wl_imbalance_answer, {0, 2, 100, 2, 0, 1}},
        {granularity_step_sum, granularity_step_answer, {6, 300}},
        {ref_article, wl_article_answer, {50, 50, 20, 200, 0}},
        {ref_article, wl_article_answer, {100, 50, 20, 200, 1}},
        {ref_spawn_batch, wl_spawn_batch_answer, {3000, 16, 0, 100, 0, 0}},
        {ref_spawn_batch, wl_spawn_batch_answer, {3000, 0, 1, 100, 0, 0}},
        {ref_spawn_batch, wl_spawn_batch_answer, {2000, 32, 0, 100, 1, 0}},
        {ref_spawn_batch, wl_spawn_batch_answer, {3000, 4, 1, 250, 0, 1}},
        {ref_spawn_batch, wl_spawn_batch_answer, {2000, 0, 0, 0, 0, 1}},
    };
    cr_assert_eq(ws_start(&ws_rt, 3, steal_k), 3);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        wl_run_t out = {0};
        cr_assert_eq(cases[c].run(cases[c].args, &out), 0, "case %zu", c);
        cr_assert_eq(out.answer, cases[c].answer(cases[c].args), "case %zu: wrong answer", c);
    }
    ws_stop(&ws_rt);
}

Test(ws_rows, answers_without_stealing, .timeout = 120) { every_workload(WS_NOSTEAL); }
Test(ws_rows, answers_stealing_one, .timeout = 120) { every_workload(1); }
Test(ws_rows, answers_stealing_half, .timeout = 120) { every_workload(WS_HALF); }
