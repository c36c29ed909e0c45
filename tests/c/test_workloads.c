/*
 * test_workloads.c -- every registered workload, at its small `test` sizes (and its
 * `test_more` sets), gives the sequential answer on this variant, with 1 and with 2
 * workers.  Built once per variant by tests/rules.mk, linked with every workload.
 *
 * One parameterized test instance per (workload, argument set, workers).  The runner runs
 * each instance in its own process, so each starts the scheduler afresh with its own
 * worker count.  Parameters are copied into that process: they hold the workload's
 * name, not a pointer.
 *
 * Also: the definitions the reference rows share with the workloads (wl_defs.h: argument
 * names, named imbalance parameters, sequential answers) are the registered workloads'
 * own.
 */
#include "sbtest.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bthread.h"
#include "wl_defs.h"
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

/* wl_defs.h is what the reference rows use in place of the workloads: it must say what
 * the registered workloads say (argument names, answers), with known values. */
typedef struct wl_def_case {
    const char *name;
    const char *arg_names[WL_MAX_ARGS];
    uint64_t (*answer)(const long *args);
} wl_def_case_t;

Test(workloads, shared_definitions_match, .timeout = 60)
{
    static const wl_def_case_t defs[] = {
        {"fib", WL_FIB_ARGS, wl_fib_answer},
        {"granularity", WL_GRANULARITY_ARGS, wl_granularity_answer},
        {"article", WL_ARTICLE_ARGS, wl_article_answer},
        {"imbalance", WL_IMBALANCE_ARGS, wl_imbalance_answer},
        {"spawn", WL_SPAWN_ARGS, wl_spawn_answer},
    };
    for (size_t d = 0; d < sizeof defs / sizeof defs[0]; d++) {
        const workload_t *w = workload_find(defs[d].name);
        cr_assert_not_null(w, "workload %s missing", defs[d].name);
        for (int i = 0; i < WL_MAX_ARGS; i++) {
            cr_assert_eq(!w->arg_names[i], !defs[d].arg_names[i], "%s: argument count", w->name);
            if (w->arg_names[i])
                cr_assert_str_eq(w->arg_names[i], defs[d].arg_names[i], "%s: argument %d",
                                 w->name, i);
        }
        cr_assert_eq(w->sequential(w->test), defs[d].answer(w->test), "%s: answer", w->name);
    }
    cr_assert_eq(wl_fib_answer((const long[]){18}), 2584);
    cr_assert_eq(wl_spawn_answer((const long[]){2000}), 1999000);
    cr_assert_eq(wl_spawn_answer((const long[]){0}), 0);
}

Test(workloads, imbalance_parameters, .timeout = 30)
{
    wl_imbalance_t p;
    cr_assert_eq(wl_imbalance_parse((const long[]){2, 10, 20000, 4, 1, 1}, &p), 0);
    cr_assert(p.imbalance == 2 && p.grain_us == 10 && p.tasks == 20000 && p.submitters == 4 &&
              p.late && p.skew);
    cr_assert_eq(wl_imbalance_parse((const long[]){0, 1, 1, 1, 0, 0}, &p), 0);
    cr_assert(!p.late && !p.skew);
    static const long bad[][WL_MAX_ARGS] = {
        {-1, 10, 100, 1, 0, 0}, /* imbalance < 0 */
        {2, -1, 100, 1, 0, 0},  /* grain < 0 */
        {2, 10, 0, 1, 0, 0},    /* no task */
        {2, 10, 100, 0, 0, 0},  /* no submitter */
        {2, 10, 100, 1, -1, 0}, /* late < 0 */
    };
    const workload_t *w = workload_find("imbalance");
    cr_assert_not_null(w);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(wl_imbalance_parse(bad[i], &p), EINVAL, "bad set %zu accepted", i);
        wl_run_t r;
        memset(&r, 0, sizeof r);
        cr_assert_eq(w->parallel(bad[i], &r), EINVAL, "bad set %zu: parallel() ran", i);
    }
    /* the late delay: half the early half's work at perfect speedup, only when late */
    cr_assert_eq(wl_imbalance_parse((const long[]){2, 10, 1000, 4, 1, 0}, &p), 0);
    cr_assert_eq(wl_imbalance_delay_ns(&p, 2), 1250000u); /* 0.5 * 500 * 10 us / 2 */
    p.late = false;
    cr_assert_eq(wl_imbalance_delay_ns(&p, 2), 0u);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* The article's experiment: arguments refused with a message that names what is wrong
 * (through the workload's check hook, which the harness prints), the late count rounded
 * to the nearest (ties down), and D = d x W / P. */
Test(workloads, article_parameters, .timeout = 30)
{
    const workload_t *w = workload_find("article");
    cr_assert_not_null(w);
    cr_assert_not_null(w->check);
    wl_article_t p;
    cr_assert_null(wl_article_parse((const long[]){50, 50, 100, 1000, 0}, 2, &p));
    cr_assert(p.d == 0.5 && p.late == 0.5 && p.grain_us == 100 && p.tasks == 1000 && !p.foreign);
    static const struct {
        long args[WL_MAX_ARGS];
        int workers;
        const char *names; /* a word the message must contain */
    } bad[] = {
        {{50, 50, 100, 1000, 0}, 0, "worker"},
        {{-1, 50, 100, 1000, 0}, 2, "delay_pct"},
        {{50, -1, 100, 1000, 0}, 2, "late_pct"},
        {{50, 101, 100, 1000, 0}, 2, "late_pct"},
        {{50, 50, -5, 1000, 0}, 2, "grain_us"},
        {{50, 50, 100, 0, 0}, 2, "tasks"},
        {{50, 50, 100, 1000, 2}, 2, "foreign"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *why = w->check(bad[i].args, bad[i].workers);
        cr_assert_not_null(why, "bad set %zu accepted", i);
        cr_assert_not_null(strstr(why, bad[i].names), "set %zu: \"%s\" does not name %s", i,
                           why, bad[i].names);
        if (bad[i].workers > 0) { /* parallel() refuses what check() refuses */
            wl_run_t r;
            memset(&r, 0, sizeof r);
            cr_assert_eq(bthread_setconcurrency(bad[i].workers), 0);
            cr_assert_eq(w->parallel(bad[i].args, &r), EINVAL, "bad set %zu: parallel() ran", i);
        }
    }
    cr_assert_null(w->check((const long[]){0, 0, 0, 1, 1}, 1));
    cr_assert_null(w->check((const long[]){200, 100, 10, 10000, 0}, 64));
    /* late count: the nearest, ties down */
    static const struct { long late_pct; int workers; long late; } counts[] = {
        {50, 2, 1}, {50, 1, 0}, {25, 2, 0}, {75, 2, 1}, {25, 16, 4}, {75, 16, 12},
        {50, 64, 32}, {30, 4, 1}, {40, 4, 2}, {100, 3, 3}, {0, 8, 0},
    };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        cr_assert_null(wl_article_parse((const long[]){50, counts[i].late_pct, 100, 1000, 0},
                                        counts[i].workers, &p));
        cr_assert_eq(wl_article_late_count(&p, counts[i].workers), counts[i].late,
                     "late_pct %ld of %d", counts[i].late_pct, counts[i].workers);
        for (long s = 0; s < counts[i].workers; s++) /* the late ones are the last ones */
            cr_assert_eq(wl_article_is_late(&p, counts[i].workers, s),
                         s >= counts[i].workers - counts[i].late);
    }
    /* D = d x tasks x grain / P: 0.5 x 1000 x 100 us / 2 = 25 ms */
    cr_assert_null(wl_article_parse((const long[]){50, 50, 100, 1000, 0}, 2, &p));
    cr_assert_eq(wl_article_delay_ns(&p, 2), 25000000u);
    cr_assert_eq(wl_article_delay_ns(&p, 16), 3125000u);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* spawn_batch refuses what would hang: a bthread submitter spinning on its own worker
 * never lets that worker run the tasks it queued there when nothing steals */
Test(workloads, spawn_batch_parameters, .timeout = 30)
{
    const workload_t *w = workload_find("spawn_batch");
    cr_assert_not_null(w);
    cr_assert_not_null(w->check);
    static const struct {
        long args[WL_MAX_ARGS];
        const char *names;
    } bad[] = {
        {{0, 0, 0, 100, 0}, "n"},          {{10, -1, 0, 100, 0}, "batch"},
        {{10, 0, 2, 100, 0}, "from"},      {{10, 0, 0, -1, 0}, "grain_ns"},
        {{10, 0, 0, 100, 2}, "spin must"}, {{10, 0, 1, 100, 1}, "spin 1 needs from 0"},
        {{10, 0, 0, 100, 0, 2}, "late must"},
    };
    cr_assert_eq(bthread_setconcurrency(2), 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *why = w->check(bad[i].args, 2);
        cr_assert_not_null(why, "bad set %zu accepted", i);
        cr_assert_not_null(strstr(why, bad[i].names), "set %zu: \"%s\"", i, why);
        wl_run_t r;
        memset(&r, 0, sizeof r);
        cr_assert_eq(w->parallel(bad[i].args, &r), EINVAL, "bad set %zu: parallel() ran", i);
    }
    cr_assert_null(w->check((const long[WL_MAX_ARGS]){10, 0, 0, 100, 1, 0}, 2));
    cr_assert_null(w->check((const long[WL_MAX_ARGS]){10, 4, 1, 100, 0, 1}, 2));
    cr_assert_eq(bthread_shutdown(), 0);
}
