/*
 * test_workloads.c -- every registered workload, at its small `test` sizes (and its
 * `test_more` sets), gives the sequential answer on this variant, with 1 and with 2
 * workers.  Built once per variant by tests/rules.mk, linked with every workload.
 *
 * One parameterized test instance per (workload, argument set, workers).  Criterion runs
 * each instance in its own process, so each starts the scheduler afresh with its own
 * worker count.  Parameters are copied into that process: they hold the workload's
 * name, not a pointer.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bthread.h"
#include "workload.h"

typedef struct wl_case {
    char name[32];
    int set;     /* 0 = test, 1.. = test_more[set - 1] */
    int workers;
} wl_case_t;

static const long *case_args(const workload_t *w, int set)
{
    return set == 0 ? w->test : w->test_more[set - 1];
}

ParameterizedTestParameters(workloads, answer)
{
    static const int workers[] = {1, 2};
    size_t n = 0;
    for (workload_t *w = workload_first(); w; w = w->next)
        n += (size_t)(1 + w->ntest_more) * (sizeof workers / sizeof workers[0]);
    wl_case_t *cases = cr_malloc(n * sizeof *cases);
    size_t i = 0;
    for (workload_t *w = workload_first(); w; w = w->next)
        for (int set = 0; set <= w->ntest_more; set++)
            for (size_t k = 0; k < sizeof workers / sizeof workers[0]; k++) {
                memset(&cases[i], 0, sizeof cases[i]);
                snprintf(cases[i].name, sizeof cases[i].name, "%s", w->name);
                cases[i].set = set;
                cases[i].workers = workers[k];
                i++;
            }
    return cr_make_param_array(wl_case_t, cases, n);
}

/* Twice in a row: the harness calls parallel() many times in one process. */
ParameterizedTest(wl_case_t *c, workloads, answer, .timeout = 60)
{
    workload_t *w = workload_find(c->name);
    cr_assert_not_null(w, "workload %s not registered", c->name);
    const long *args = case_args(w, c->set);
    cr_assert_eq(bthread_setconcurrency(c->workers), 0);
    uint64_t expected = w->sequential(args);
    for (int round = 0; round < 2; round++) {
        wl_run_t r;
        memset(&r, 0, sizeof r);
        int rc = w->parallel(args, &r);
        cr_assert_eq(rc, 0, "%s set %d, %d workers: parallel() returned %d", c->name, c->set,
                     c->workers, rc);
        cr_assert_eq(r.answer, expected,
                     "%s set %d, %d workers, round %d: answer %" PRIu64 ", sequential %" PRIu64,
                     c->name, c->set, c->workers, round, r.answer, expected);
        cr_assert(r.ncounters >= 0 && r.ncounters <= WL_MAX_COUNTERS);
    }
    cr_assert_eq(bthread_getconcurrency(), c->workers);
    /* parallel() must leave no bthread behind, so the scheduler can stop cleanly */
    cr_assert_eq(bthread_shutdown(), 0);
}

/* What the harness and run.py rely on: unique names, argument sets within bounds. */
Test(workloads, registry_is_well_formed, .timeout = 10)
{
    int count = 0;
    for (workload_t *w = workload_first(); w; w = w->next, count++) {
        cr_assert(w->name && w->name[0] && !strchr(w->name, '/'), "bad workload name");
        cr_assert_eq(workload_find(w->name), w, "%s registered twice", w->name);
        if (w->next)
            cr_assert_lt(strcmp(w->name, w->next->name), 0, "registry not in name order");
        cr_assert(w->summary && w->summary[0], "%s: no summary", w->name);
        cr_assert(w->sequential && w->parallel, "%s: missing a function", w->name);
        cr_assert(w->nbench >= 1 && w->nbench <= WL_MAX_SETS, "%s: nbench %d", w->name, w->nbench);
        cr_assert(w->nfull >= 0 && w->nfull <= WL_MAX_SETS, "%s: nfull %d", w->name, w->nfull);
        cr_assert(w->ntest_more >= 0 && w->ntest_more <= WL_MAX_SETS, "%s: ntest_more", w->name);
        int nargs = workload_nargs(w);
        for (int i = 0; i < nargs; i++)
            cr_assert(w->arg_names[i][0] && !strpbrk(w->arg_names[i], "/:"),
                      "%s: bad argument name", w->name);
    }
    /* the first six workloads must be there (the others are checked above) */
    static const char *const mine[] = {"blocked", "fib", "latency", "pingpong", "spawn", "yield"};
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
        cr_assert_not_null(workload_find(mine[i]), "workload %s missing", mine[i]);
    cr_assert_geq(count, 6);
}
