/*
 * article -- the work-stealing article's experiment, run as the article ran it (seed 003,
 * section 5): every task does the same work, and the imbalance comes from some
 * submitters starting late.  The baseline it names is a pool whose threads keep queues
 * of their own (`affinity` here); what a perfect balancer would do is known in closed
 * form (wl_defs.h), so every point has an ideal beside it.
 *
 * One submitter per worker (workloads/wl_submitters.h, which the batching experiment
 * shares): with foreign = 0 each is a bthread on a worker of its own that starts its
 * share there with bthread_start_background (only stealing moves it to an idle worker);
 * with foreign = 1 each is a plain pthread (the variant's placement of foreign tasks
 * decides).  A fraction of the submitters (the last ones, wl_article_late_count) first
 * wait D = d x W/P, a late bthread in bthread_usleep with its worker free; the others
 * start at once.  A variant that puts two bthread submitters on one worker and moves
 * neither counts them in `colocated`: that point is not the article's experiment.
 *
 * The experiment's clock, t0, starts when every submitter is in place (the last
 * bthread's arrival at the barrier; the last pthread's creation), and stops when the
 * last task is done: counter `window_s`, what the ideal curves predict.  The iteration's
 * wall time adds the setup of P submitters before t0 (P thread creations: small at 2
 * workers, a noticeable share of a simulated 64-worker run) and the joins after.
 *
 * Completion: one countdown for all tasks, then every task and submitter is joined.
 *
 * args: delay_pct, late_pct, grain_us, tasks, foreign (wl_article_t in wl_defs.h).
 * items = tasks; answer = the sum of the tasks' checksum terms (wl_article_answer).
 * counters: window_s, late_submitters, delay_us (D), colocated.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bthread.h"
#include "timeutil.h"
#include "wl_defs.h"
#include "wl_submitters.h"
#include "workload.h"

typedef struct art_run art_run_t;

typedef struct art_task {
    art_run_t *run;
    uint64_t sum; /* out: wl_imbalance_task(i, ...) */
} art_task_t;

struct art_run {
    WL_OWN_LINE wl_article_t p; /* WL_OWN_LINE: see workload.h */
    int workers;
    uint64_t iters;    /* kernel iterations of a task */
    art_task_t *task;
    bthread_t *tid;
    bthread_countdown_t done;
    wl_subs_t subs;
};

static void *art_task_main(void *arg)
{
    art_task_t *t = arg;
    art_run_t *r = t->run;
    t->sum = wl_imbalance_task((uint64_t)(t - r->task), (uint64_t)r->p.tasks, r->iters, 0, 0);
    bthread_countdown_signal(&r->done, 1);
    return NULL;
}

/* Submitter s's share, started once its time has come. */
static void art_share(wl_subs_t *g, long s, bool on_bthread)
{
    (void)on_bthread;
    art_run_t *r = g->ctx;
    long first, last;
    wl_submitter_share(r->p.tasks, r->workers, s, &first, &last);
    for (long i = first; i < last; i++) {
        int rc = bthread_start_background(&r->tid[i], &BTHREAD_ATTR_SMALL, art_task_main,
                                          &r->task[i]);
        if (rc != 0) { /* count it done so the wait ends; the run reports the error */
            wl_subs_fail(g, rc);
            r->tid[i] = 0;
            bthread_countdown_signal(&r->done, 1);
        }
    }
}

static const char *art_check(const long *args, int workers)
{
    wl_article_t p;
    return wl_article_parse(args, workers, &p);
}

static int art_parallel(const long *args, wl_run_t *out)
{
    art_run_t r;
    memset(&r, 0, sizeof r);
    r.workers = bthread_getconcurrency();
    if (wl_article_parse(args, r.workers, &r.p) != 0)
        return EINVAL;
    r.iters = wl_grain_iters(r.p.grain_us);
    uint64_t delay_ns = wl_article_delay_ns(&r.p, r.workers);
    r.task = calloc((size_t)r.p.tasks, sizeof *r.task);
    r.tid = calloc((size_t)r.p.tasks, sizeof *r.tid);
    int rc = (r.task && r.tid) ? wl_subs_init(&r.subs, r.workers, r.p.foreign,
                                              wl_article_late_count(&r.p, r.workers),
                                              delay_ns, art_share, &r)
                               : ENOMEM;
    if (rc == 0 && (rc = bthread_countdown_init(&r.done, (int)r.p.tasks)) != 0)
        wl_subs_finish(&r.subs);
    if (rc != 0) {
        free(r.task);
        free(r.tid);
        return rc;
    }
    for (long i = 0; i < r.p.tasks; i++)
        r.task[i].run = &r;

    wl_subs_run(&r.subs);
    bthread_countdown_wait(&r.done);
    uint64_t end = wl_now_ns();
    uint64_t t0 = wl_subs_t0(&r.subs);
    rc = wl_subs_finish(&r.subs);
    /* relaxed: after the joins */
    long colocated = atomic_load_explicit(&r.subs.colocated, memory_order_relaxed);
    uint64_t sum = 0;
    for (long i = 0; i < r.p.tasks; i++) {
        if (r.tid[i])
            bthread_join(r.tid[i], NULL);
        sum += r.task[i].sum;
    }
    bthread_countdown_destroy(&r.done);
    free(r.task);
    free(r.tid);
    if (rc != 0)
        return rc;
    out->answer = sum;
    out->items = (double)r.p.tasks;
    wl_counter_add(out, "window_s", t0 && end > t0 ? (double)(end - t0) * 1e-9 : 0.0);
    wl_counter_add(out, "iters_per_us", wl_iters_per_us());
    wl_counter_add(out, "late_submitters", (double)wl_article_late_count(&r.p, r.workers));
    wl_counter_add(out, "delay_us", (double)delay_ns / 1000.0);
    wl_counter_add(out, "colocated", (double)colocated);
    return 0;
}

/* The span: a late submitter's last task cannot end before D plus one task. */
static double art_span_ns(const long *args, int workers, const wl_costs_t *costs)
{
    wl_article_t p;
    if (wl_article_parse(args, workers, &p) != 0)
        return -1;
    double task = costs->iter_ns * (double)wl_grain_iters(p.grain_us);
    return (wl_article_late_count(&p, workers) > 0 ? (double)wl_article_delay_ns(&p, workers)
                                                    : 0.0) + task;
}

/* The quick sweep's sets first (d = 0, 1/2, 1 at 100 us; the foreign form at 1/2), then
 * --full: d over 0..2 at 10 and 100 us, both forms, and a quarter or three quarters of
 * the submitters late. */
static workload_t article = {
    .name = "article",
    .summary = "the work-stealing article's experiment: equal tasks, one submitter per "
               "worker, some of them late",
    .arg_names = WL_ARTICLE_ARGS,
    .bench = {{0, 50, 100, 1000, 0},
              {50, 50, 100, 1000, 0},
              {100, 50, 100, 1000, 0},
              {50, 50, 100, 1000, 1}},
    .nbench = 4,
    .full = {{25, 50, 100, 1000, 0},  {75, 50, 100, 1000, 0},  {200, 50, 100, 1000, 0},
             {0, 50, 100, 1000, 1},   {25, 50, 100, 1000, 1},  {75, 50, 100, 1000, 1},
             {100, 50, 100, 1000, 1}, {200, 50, 100, 1000, 1},
             {0, 50, 10, 10000, 0},   {25, 50, 10, 10000, 0},  {50, 50, 10, 10000, 0},
             {75, 50, 10, 10000, 0},  {100, 50, 10, 10000, 0}, {200, 50, 10, 10000, 0},
             {0, 50, 10, 10000, 1},   {25, 50, 10, 10000, 1},  {50, 50, 10, 10000, 1},
             {75, 50, 10, 10000, 1},  {100, 50, 10, 10000, 1}, {200, 50, 10, 10000, 1},
             {25, 25, 100, 1000, 0},  {50, 25, 100, 1000, 0},  {75, 25, 100, 1000, 0},
             {100, 25, 100, 1000, 0}, {25, 75, 100, 1000, 0},  {50, 75, 100, 1000, 0},
             {75, 75, 100, 1000, 0},  {100, 75, 100, 1000, 0}},
    .nfull = 28,
    .test = {50, 50, 20, 200, 0},
    .test_more = {{100, 50, 20, 200, 1}, {0, 25, 5, 64, 0}, {200, 75, 0, 9, 0}},
    .ntest_more = 3,
    .sequential = wl_article_answer,
    .parallel = art_parallel,
    .span_ns = art_span_ns,
    .check = art_check,
};
WORKLOAD_REGISTER(article)
