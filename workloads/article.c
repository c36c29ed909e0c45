/*
 * article -- the work-stealing article's experiment, run as the article ran it (seed 003,
 * section 5): every task does the same work, and the imbalance comes from some
 * submitters starting late.  The baseline it names is a pool whose threads keep queues
 * of their own (`affinity` here); what a perfect balancer would do is known in closed
 * form (wl_defs.h), so every point has an ideal beside it.
 *
 * One submitter per worker.  With foreign = 0 each submitter is a bthread running on a
 * worker of its own, and starts its share of the tasks there with
 * bthread_start_background: a worker's new task goes to its own queue, the path on
 * which nothing but stealing can move work to an idle worker.  With foreign = 1 each is
 * a plain pthread (the remote-queue path, where the variant's placement of foreign
 * tasks decides).  A fraction of the submitters (the last ones, wl_article_late_count)
 * first sleep D = d x W/P; an early submitter starts its share at once.  A late bthread
 * submitter sleeps with bthread_usleep, so its worker is free meanwhile, as the core of
 * a late thread in the article's pool is.
 *
 * Placement of bthread submitters: P starter pthreads start one submitter each (a new
 * foreign thread's first task goes to a worker of its own: the core spreads new
 * threads round-robin, affinity gives each a home worker, threadpool's idle workers take
 * from one queue).  The submitters then meet at a spin barrier: all P spinning at once
 * is the proof that each runs on a worker of its own.  One that does not see all P
 * within ARTICLE_MEET_NS goes on, and counts itself in `colocated`: that variant put two
 * submitters on one worker and moved neither, so its point is not the article's
 * experiment (the report says so).  Pthread submitters wait until the last one exists.
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
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bthread.h"
#include "timeutil.h"
#include "wl_defs.h"
#include "workload.h"

/* How long a bthread submitter waits for the others at the barrier: far above what a
 * wake-up or a steal takes (microseconds to a millisecond), far below a run. */
#define ARTICLE_MEET_NS 100000000ull

typedef struct art_run art_run_t;

typedef struct art_task {
    art_run_t *run;
    uint64_t sum; /* out: wl_imbalance_task(i, ...) */
} art_task_t;

typedef struct art_sub {
    art_run_t *run;
    long s;
    pthread_t thread; /* the starter (foreign = 0) or the submitter (foreign = 1) */
    bthread_t tid;    /* the submitter bthread (foreign = 0); 0 if it could not start */
} art_sub_t;

struct art_run {
    WL_OWN_LINE wl_article_t p; /* WL_OWN_LINE: see workload.h */
    int workers;
    uint64_t iters;    /* kernel iterations of a task */
    uint64_t delay_ns; /* D */
    art_task_t *task;
    bthread_t *tid;
    art_sub_t *sub;
    bthread_countdown_t done;
    atomic_long arrived;   /* bthread submitters at the barrier */
    atomic_ullong t0;      /* when the last one arrived (0: not yet) */
    atomic_long colocated; /* submitters that gave up waiting at the barrier */
    atomic_int err;        /* the first failure to start a task or submitter; 0 if none */
};

static void art_fail(art_run_t *r, int rc)
{
    int zero = 0; /* relaxed: read only after every thread is joined */
    atomic_compare_exchange_strong_explicit(&r->err, &zero, rc, memory_order_relaxed,
                                            memory_order_relaxed);
}

static void *art_task_main(void *arg)
{
    art_task_t *t = arg;
    art_run_t *r = t->run;
    t->sum = wl_imbalance_task((uint64_t)(t - r->task), (uint64_t)r->p.tasks, r->iters, 0, 0);
    bthread_countdown_signal(&r->done, 1);
    return NULL;
}

static inline void art_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* The barrier of the bthread submitters: returns the experiment's start time. */
static uint64_t art_meet(art_run_t *r)
{
    /* acq_rel: the last arrival's t0 store is ordered after every arrival it counted */
    long n = atomic_fetch_add_explicit(&r->arrived, 1, memory_order_acq_rel) + 1;
    uint64_t t0;
    if (n == r->workers) {
        t0 = wl_now_ns();
        /* release: pairs with the waiters' acquire load below */
        atomic_store_explicit(&r->t0, t0, memory_order_release);
        return t0;
    }
    uint64_t give_up = wl_now_ns() + ARTICLE_MEET_NS;
    for (unsigned spin = 1;; spin++) {
        t0 = atomic_load_explicit(&r->t0, memory_order_acquire);
        if (t0 != 0)
            return t0;
        art_pause();
        if (spin % 64 == 0 && wl_now_ns() > give_up) {
            /* relaxed: a count read after the joins */
            atomic_fetch_add_explicit(&r->colocated, 1, memory_order_relaxed);
            return wl_now_ns();
        }
    }
}

/* Submitter s: wait for its start, then start its share. */
static void art_submit(art_run_t *r, long s, uint64_t t0, bool on_bthread)
{
    long first, last;
    wl_submitter_share(r->p.tasks, r->workers, s, &first, &last);
    if (wl_article_is_late(&r->p, r->workers, s)) {
        int64_t until = (int64_t)(t0 + r->delay_ns);
        if (on_bthread) {
            int64_t left;
            while ((left = until - (int64_t)wl_now_ns()) > 0)
                bthread_usleep((uint64_t)(left + 999) / 1000);
        } else {
            sb_sleep_until_ns(until);
        }
    }
    for (long i = first; i < last; i++) {
        int rc = bthread_start_background(&r->tid[i], &BTHREAD_ATTR_SMALL, art_task_main,
                                          &r->task[i]);
        if (rc != 0) { /* count it done so the wait ends; the run reports the error */
            art_fail(r, rc);
            r->tid[i] = 0;
            bthread_countdown_signal(&r->done, 1);
        }
    }
}

static void *art_submitter_bthread(void *arg)
{
    art_sub_t *sub = arg;
    art_submit(sub->run, sub->s, art_meet(sub->run), true);
    return NULL;
}

/* foreign = 0: a starter pthread, whose one task is the submitter bthread. */
static void *art_starter(void *arg)
{
    art_sub_t *sub = arg;
    int rc = bthread_start_background(&sub->tid, &BTHREAD_ATTR_NORMAL, art_submitter_bthread,
                                      sub);
    if (rc != 0) { /* submit from here; the others need not wait for this one */
        art_fail(sub->run, rc);
        sub->tid = 0;
        art_submit(sub->run, sub->s, art_meet(sub->run), false);
    }
    return NULL;
}

/* foreign = 1: a submitter pthread; it starts when the last one has been created. */
static void *art_submitter_pthread(void *arg)
{
    art_sub_t *sub = arg;
    uint64_t t0;
    /* acquire: pairs with art_parallel's release store of t0 */
    while ((t0 = atomic_load_explicit(&sub->run->t0, memory_order_acquire)) == 0)
        sched_yield();
    art_submit(sub->run, sub->s, t0, false);
    return NULL;
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
    r.delay_ns = wl_article_delay_ns(&r.p, r.workers);
    atomic_init(&r.arrived, 0);
    atomic_init(&r.t0, 0);
    atomic_init(&r.colocated, 0);
    atomic_init(&r.err, 0);
    r.task = calloc((size_t)r.p.tasks, sizeof *r.task);
    r.tid = calloc((size_t)r.p.tasks, sizeof *r.tid);
    r.sub = calloc((size_t)r.workers, sizeof *r.sub);
    int rc = (r.task && r.tid && r.sub) ? bthread_countdown_init(&r.done, (int)r.p.tasks)
                                        : ENOMEM;
    if (rc != 0) {
        free(r.task);
        free(r.tid);
        free(r.sub);
        return rc;
    }
    for (long i = 0; i < r.p.tasks; i++)
        r.task[i].run = &r;

    void *(*body)(void *) = r.p.foreign ? art_submitter_pthread : art_starter;
    bool inline_part = false; /* a submitter's part done here: no thread for it */
    for (long s = 0; s < r.workers; s++) {
        r.sub[s].run = &r;
        r.sub[s].s = s;
        int c = pthread_create(&r.sub[s].thread, NULL, body, &r.sub[s]);
        if (c != 0) { /* do its part from here, below; the run reports the error */
            art_fail(&r, c);
            r.sub[s].thread = pthread_self();
            inline_part = true;
        }
    }
    if (r.p.foreign) /* release: pairs with the submitters' acquire loads */
        atomic_store_explicit(&r.t0, wl_now_ns(), memory_order_release);
    if (inline_part)
        for (long s = 0; s < r.workers; s++)
            if (pthread_equal(r.sub[s].thread, pthread_self()))
                body(&r.sub[s]);
    for (long s = 0; s < r.workers; s++)
        if (!pthread_equal(r.sub[s].thread, pthread_self()))
            pthread_join(r.sub[s].thread, NULL);
    bthread_countdown_wait(&r.done);
    uint64_t end = wl_now_ns();
    /* acquire: the countdown ordered every submitter's t0 store before this */
    uint64_t t0 = atomic_load_explicit(&r.t0, memory_order_acquire);
    uint64_t sum = 0;
    for (long s = 0; s < r.workers; s++)
        if (r.sub[s].tid)
            bthread_join(r.sub[s].tid, NULL);
    for (long i = 0; i < r.p.tasks; i++) {
        if (r.tid[i])
            bthread_join(r.tid[i], NULL);
        sum += r.task[i].sum;
    }
    bthread_countdown_destroy(&r.done);
    rc = atomic_load_explicit(&r.err, memory_order_relaxed); /* after the joins */
    free(r.task);
    free(r.tid);
    free(r.sub);
    if (rc != 0)
        return rc;
    out->answer = sum;
    out->items = (double)r.p.tasks;
    wl_counter_add(out, "window_s", t0 && end > t0 ? (double)(end - t0) * 1e-9 : 0.0);
    wl_counter_add(out, "iters_per_us", wl_iters_per_us());
    wl_counter_add(out, "late_submitters", (double)wl_article_late_count(&r.p, r.workers));
    wl_counter_add(out, "delay_us", (double)r.delay_ns / 1000.0);
    wl_counter_add(out, "colocated",
                   (double)atomic_load_explicit(&r.colocated, memory_order_relaxed));
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
