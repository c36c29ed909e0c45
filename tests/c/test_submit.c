/*
 * test_submit.c -- submission from outside the workers and brpc's batch API, on every
 * variant: every task that many foreign threads start (plain, NOSIGNAL + bthread_flush)
 * runs exactly once; bthread_flush from a worker, from a foreign thread, with nothing
 * pending, with the scheduler stopped and with a count left from before a shutdown;
 * NOSIGNAL with an urgent start; and that workers parked for good (a policy that
 * deactivates idle workers) strand no task (nothing waits on their queues, even while
 * the one active worker only runs bthreads that yield to each other, and one worker's
 * long queue brings them back).  What a count must be is read from the policy
 * (bthread_get_policy): one self-signalling queue flushes nothing, tasks spread over
 * workers flush once per target, only a deactivating policy parks workers for good.
 */
#include "sbtest.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bthread.h"
#include "thread_checks.h"

#ifdef SB_UNDER_TSAN
#define SCALE 10 /* TSan: a tenth of the tasks */
#else
#define SCALE 1
#endif

static void set_workers(int n) { cr_assert_eq(bthread_setconcurrency(n), 0); }

static bthread_policy_t policy(void)
{
    bthread_policy_t p;
    bthread_get_policy(&p);
    return p;
}

/* Summed statistics of every worker. */
typedef struct totals {
    uint64_t run, flushes, flushed, eparks, ewakes, pushes, remote_pops;
} totals_t;

static totals_t totals(void)
{
    bthread_worker_stats_t st[8];
    int n = bthread_get_stats(st, 8);
    totals_t t = {0};
    for (int i = 0; i < n && i < 8; i++) {
        t.run += st[i].tasks_run;
        t.flushes += st[i].flushes;
        t.flushed += st[i].flushed_tasks;
        t.eparks += st[i].elastic_parks;
        t.ewakes += st[i].elastic_wakes;
        t.pushes += st[i].remote_pushes;
        t.remote_pops += st[i].remote_pops;
    }
    return t;
}

/* ---- every task from many foreign threads runs exactly once --------------------------- */
typedef struct hit_run {
    _Atomic uint8_t *hits; /* one per task: how many times it ran */
    long per_thread;
    bthread_countdown_t done;
} hit_run_t;

typedef struct hit_arg {
    hit_run_t *run;
    long i;
} hit_arg_t;

static void *hit(void *arg)
{
    hit_arg_t *a = arg;
    /* relaxed: read after countdown_wait / join, which order it */
    atomic_fetch_add_explicit(&a->run->hits[a->i], 1, memory_order_relaxed);
    bthread_countdown_signal(&a->run->done, 1);
    return NULL;
}

typedef struct submitter {
    hit_run_t *run;
    int s;
    hit_arg_t *args;
    bthread_t *tids;
} submitter_t;

/* Thread s starts its share in a pattern of its own: plain starts, NOSIGNAL batches of
 * 1..64 with a flush after each, and NOSIGNAL runs ended by a plain start. */
static void *submit_share(void *p)
{
    submitter_t *sub = p;
    hit_run_t *r = sub->run;
    bthread_attr_t quiet = BTHREAD_ATTR_NORMAL;
    quiet.flags |= BTHREAD_NOSIGNAL;
    long base = sub->s * r->per_thread;
    for (long k = 0; k < r->per_thread; k++) {
        long i = base + k;
        sub->args[k] = (hit_arg_t){.run = r, .i = i};
        int mode = (int)((k / 97 + sub->s) % 3);
        long batch = 1 + (k / 97) % 64;
        CHECK(bthread_start_background(&sub->tids[k], mode ? &quiet : NULL, hit, &sub->args[k]) == 0);
        if (mode == 1 && (k + 1) % batch == 0)
            bthread_flush();
    }
    bthread_flush();
    for (long k = 0; k < r->per_thread; k++)
        CHECK(bthread_join(sub->tids[k], NULL) == 0);
    return NULL;
}

static void many_foreign_threads(int workers, int threads, long per_thread)
{
    set_workers(workers);
    hit_run_t r = {.per_thread = per_thread};
    long n = threads * per_thread;
    r.hits = calloc((size_t)n, sizeof *r.hits);
    cr_assert_not_null(r.hits);
    cr_assert_eq(bthread_countdown_init(&r.done, (int)n), 0);
    submitter_t subs[8];
    pthread_t th[8];
    for (int s = 0; s < threads; s++) {
        subs[s] = (submitter_t){.run = &r, .s = s,
                                .args = malloc((size_t)per_thread * sizeof(hit_arg_t)),
                                .tids = malloc((size_t)per_thread * sizeof(bthread_t))};
        cr_assert(subs[s].args && subs[s].tids);
        cr_assert_eq(pthread_create(&th[s], NULL, submit_share, &subs[s]), 0);
    }
    for (int s = 0; s < threads; s++)
        pthread_join(th[s], NULL);
    cr_assert_eq(bthread_countdown_wait(&r.done), 0);
    assert_no_failures();
    long wrong = 0, first = -1;
    for (long i = 0; i < n; i++)
        if (atomic_load_explicit(&r.hits[i], memory_order_relaxed) != 1) {
            wrong++;
            if (first < 0)
                first = i;
        }
    cr_assert_eq(wrong, 0, "%ld of %ld tasks did not run exactly once (first: %ld ran %d times)",
                 wrong, n, first, first < 0 ? 0 : (int)r.hits[first]);
    for (int s = 0; s < threads; s++) {
        free(subs[s].args);
        free(subs[s].tids);
    }
    bthread_countdown_destroy(&r.done);
    free(r.hits);
    cr_assert_eq(bthread_shutdown(), 0);
}

Test(submit, every_task_from_eight_foreign_threads_runs_once_on_2_workers, .timeout = 120)
{
    many_foreign_threads(2, 8, 40000 / SCALE);
}

Test(submit, every_task_from_four_foreign_threads_runs_once_on_3_workers, .timeout = 120)
{
    many_foreign_threads(3, 4, 40000 / SCALE);
}

/* ---- bthread_flush ---------------------------------------------------------------------- */
static _Atomic long ran;

static void *count_one(void *arg)
{
    (void)arg;
    atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
    return NULL;
}

Test(submit, flush_with_the_scheduler_stopped_does_nothing, .timeout = 30)
{
    bthread_flush(); /* nothing started: must not start the scheduler */
    bthread_worker_stats_t st[1];
    cr_assert_eq(bthread_get_stats(st, 1), 0, "bthread_flush started the scheduler");
    bthread_flush();
    cr_assert_eq(bthread_get_stats(st, 1), 0);
}

Test(submit, flush_from_a_foreign_thread_wakes_for_its_tasks, .timeout = 30)
{
    set_workers(2);
    bthread_t warm;
    cr_assert_eq(bthread_start_background(&warm, NULL, count_one, NULL), 0);
    cr_assert_eq(bthread_join(warm, NULL), 0);
    usleep(20000); /* let the workers park */
    totals_t before = totals();
    bthread_flush(); /* nothing pending: a no-op */
    totals_t same = totals();
    cr_assert_eq(same.flushes, before.flushes, "a flush with nothing pending counted");
    bthread_attr_t quiet = BTHREAD_ATTR_NORMAL;
    quiet.flags |= BTHREAD_NOSIGNAL;
    enum { N = 100 };
    bthread_t t[N];
    for (int i = 0; i < N; i++)
        cr_assert_eq(bthread_start_background(&t[i], &quiet, count_one, NULL), 0);
    bthread_flush();
    for (int i = 0; i < N; i++)
        cr_assert_eq(bthread_join(t[i], NULL), 0);
    totals_t after = totals();
    if (!policy().one_queue) { /* one shared queue signals itself: no flush counted */
        cr_assert_eq(after.flushes - before.flushes, 1);
        cr_assert_eq(after.flushed - before.flushed, N);
        cr_assert_eq(after.pushes - before.pushes, N, "all on remote queues");
    }
    bthread_flush(); /* again: nothing pending */
    cr_assert_eq(totals().flushes, after.flushes);
    cr_assert_eq(atomic_load(&ran), N + 1);
    cr_assert_eq(bthread_shutdown(), 0);
}

static void *start_quiet_and_flush(void *arg)
{
    (void)arg;
    bthread_attr_t quiet = BTHREAD_ATTR_NORMAL;
    quiet.flags |= BTHREAD_NOSIGNAL;
    enum { N = 64 };
    bthread_t t[N];
    for (int i = 0; i < N; i++)
        CHECK(bthread_start_background(&t[i], &quiet, count_one, NULL) == 0);
    bthread_flush();
    bthread_flush(); /* nothing pending now */
    for (int i = 0; i < N; i++)
        CHECK(bthread_join(t[i], NULL) == 0);
    return NULL;
}

Test(submit, flush_from_a_worker_wakes_for_its_tasks, .timeout = 30)
{
    set_workers(2);
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, start_quiet_and_flush, NULL), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
    assert_no_failures();
    cr_assert_eq(atomic_load(&ran), 64);
    totals_t tt = totals();
    if (policy().spreads_tasks) /* tasks spread over workers: one flush per target change */
        cr_assert_geq(tt.flushes, 1);
    else
        cr_assert_eq(tt.flushes, 1, "one flush had tasks, got %lu", (unsigned long)tt.flushes);
    cr_assert_eq(tt.flushed, 64);
    cr_assert_eq(bthread_shutdown(), 0);
}

static _Atomic int quiet_done;

static void *set_quiet_done(void *arg)
{
    (void)arg;
    atomic_store(&quiet_done, 1);
    return NULL;
}

static void *yield_until_quiet_done(void *arg)
{
    (void)arg;
    while (!atomic_load(&quiet_done))
        bthread_yield();
    return NULL;
}

Test(submit, a_count_left_before_shutdown_is_dropped, .timeout = 30)
{
    set_workers(1);
    /* a busy bthread keeps the worker searching, so the unflushed task still runs */
    bthread_t busy, q;
    cr_assert_eq(bthread_start_background(&busy, NULL, yield_until_quiet_done, NULL), 0);
    bthread_attr_t quiet = BTHREAD_ATTR_NORMAL;
    quiet.flags |= BTHREAD_NOSIGNAL;
    cr_assert_eq(bthread_start_background(&q, &quiet, set_quiet_done, NULL), 0);
    cr_assert_eq(bthread_join(busy, NULL), 0); /* no flush: this thread's count stays 1 */
    cr_assert_eq(bthread_join(q, NULL), 0);
    cr_assert_eq(bthread_shutdown(), 0);
    bthread_flush(); /* stopped: nothing to do, and the count is not kept */
    bthread_worker_stats_t st[1];
    cr_assert_eq(bthread_get_stats(st, 1), 0);
    set_workers(2);
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, count_one, NULL), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
    bthread_flush(); /* the old count is gone: nothing flushed */
    if (!policy().one_queue)
        cr_assert_eq(totals().flushes, 0);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- NOSIGNAL with an urgent start ------------------------------------------------------ */
static _Atomic int child_ran;

static void *mark_child(void *arg)
{
    (void)arg;
    atomic_store(&child_ran, 1);
    return NULL;
}

static void *urgent_quiet_parent(void *arg)
{
    int *seen = arg;
    bthread_attr_t quiet = BTHREAD_ATTR_NORMAL;
    quiet.flags |= BTHREAD_NOSIGNAL;
    bthread_t c;
    CHECK(bthread_start_urgent(&c, &quiet, mark_child, NULL) == 0);
    *seen = atomic_load(&child_ran); /* the child ran first */
    bthread_flush();                 /* the caller's unsignalled requeue counts here */
    CHECK(bthread_join(c, NULL) == 0);
    return NULL;
}

Test(submit, nosignal_with_an_urgent_start_requeues_the_caller_unsignalled, .timeout = 30)
{
    set_workers(1);
    int seen = -1;
    bthread_t p;
    cr_assert_eq(bthread_start_background(&p, NULL, urgent_quiet_parent, &seen), 0);
    cr_assert_eq(bthread_join(p, NULL), 0);
    assert_no_failures();
    cr_assert_eq(seen, 1, "the urgent child did not run before its parent resumed");
    if (!policy().one_queue) {
        totals_t t = totals();
        cr_assert_eq(t.flushes, 1, "flushes %lu", (unsigned long)t.flushes);
        cr_assert_eq(t.flushed, 1, "the requeued caller is the one unsignalled task");
    }
    /* from a pthread, urgent is background: NOSIGNAL applies to the new task */
    atomic_store(&child_ran, 0);
    bthread_attr_t quiet = BTHREAD_ATTR_NORMAL;
    quiet.flags |= BTHREAD_NOSIGNAL;
    bthread_t c;
    cr_assert_eq(bthread_start_urgent(&c, &quiet, mark_child, NULL), 0);
    bthread_flush();
    cr_assert_eq(bthread_join(c, NULL), 0);
    cr_assert_eq(atomic_load(&child_ran), 1);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- workers parked for good strand nothing -------------------------------------------- */
/* Bursts of NOSIGNAL tasks on one queue, each flushed: the flush wakes several sleepers,
 * the first takes the whole burst, the others wake for nothing (wasted wake-ups).  Where
 * the policy deactivates idle workers the loop ends once `want` are parked for good; the
 * other policies show over all BURSTS that none is (fewer under an emulator, sbtest.h). */
#define BURSTS sb_rounds(2000, 400)
static void provoke_deactivations(int want, int rounds)
{
    bthread_attr_t quiet = BTHREAD_ATTR_NORMAL;
    quiet.flags |= BTHREAD_NOSIGNAL;
    for (int r = 0; r < rounds && totals().eparks - totals().ewakes < (uint64_t)want; r++) {
        bthread_t t[4];
        for (int i = 0; i < 4; i++)
            cr_assert_eq(bthread_start_background(&t[i], &quiet, count_one, NULL), 0);
        bthread_flush();
        for (int i = 0; i < 4; i++)
            cr_assert_eq(bthread_join(t[i], NULL), 0);
        usleep(500);
    }
}

static void *fan_out(void *arg)
{
    long n = (long)(intptr_t)arg;
    bthread_t *t = malloc((size_t)n * sizeof *t);
    CHECK(t != NULL);
    for (long i = 0; t && i < n; i++)
        CHECK(bthread_start_background(&t[i], NULL, count_one, NULL) == 0);
    for (long i = 0; t && i < n; i++)
        CHECK(bthread_join(t[i], NULL) == 0);
    free(t);
    return NULL;
}

Test(parked_for_good, workers_parked_for_good_strand_no_task, .timeout = 120)
{
    set_workers(4);
    const bool deactivates = policy().deactivates;
    long expect = 0;
    provoke_deactivations(3, (int)BURSTS);
    uint64_t parked = totals().eparks;
    if (deactivates)
        cr_assert_geq(parked, 1, "no worker deactivated after %ld wasteful bursts", BURSTS);
    expect = atomic_load(&ran);
    /* 1: tasks placed round-robin on the remote queues (of the active workers only, where
     * some are parked for good) */
    pthread_t th;
    hit_run_t r = {.per_thread = 20000 / SCALE};
    long n = r.per_thread;
    r.hits = calloc((size_t)n, sizeof *r.hits);
    cr_assert_not_null(r.hits);
    cr_assert_eq(bthread_countdown_init(&r.done, (int)n), 0);
    submitter_t sub = {.run = &r, .s = 0, .args = malloc((size_t)n * sizeof(hit_arg_t)),
                       .tids = malloc((size_t)n * sizeof(bthread_t))};
    cr_assert(sub.args && sub.tids);
    cr_assert_eq(pthread_create(&th, NULL, submit_share, &sub), 0);
    pthread_join(th, NULL);
    cr_assert_eq(bthread_countdown_wait(&r.done), 0);
    for (long i = 0; i < n; i++)
        cr_assert_eq(atomic_load_explicit(&r.hits[i], memory_order_relaxed), 1, "task %ld", i);
    /* 2: all the work on one worker's queue after the others parked for good */
    provoke_deactivations(3, (int)BURSTS);
    uint64_t wakes_before = totals().ewakes;
    bthread_t f;
    long fan = 20000 / SCALE;
    cr_assert_eq(bthread_start_background(&f, NULL, fan_out, (void *)(intptr_t)fan), 0);
    cr_assert_eq(bthread_join(f, NULL), 0);
    assert_no_failures();
    expect += fan;
    totals_t t = totals();
    cr_log_info("%s: deactivations %lu, reactivations %lu (%lu during the fan-out)",
                bthread_variant_name(), (unsigned long)t.eparks, (unsigned long)t.ewakes,
                (unsigned long)(t.ewakes - wakes_before));
    if (deactivates) {
        cr_assert_geq(t.eparks, 2, "deactivations: %lu", (unsigned long)t.eparks);
        if (t.eparks > t.ewakes) /* somebody was parked for good during the fan-out */
            cr_assert_gt(t.ewakes, wakes_before, "a long queue reactivated nobody");
    } else {
        cr_assert_eq(t.eparks + t.ewakes, 0, "a policy that does not deactivate workers did");
    }
    cr_assert_geq(atomic_load(&ran), expect);
    free(sub.args);
    free(sub.tids);
    free(r.hits);
    bthread_countdown_destroy(&r.done);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- a parked-for-good worker's queue, while the active worker only yields ------------- */
/* Two bthreads on one worker yield to each other until the two tasks a pthread starts
 * have run.  A yield switches to work on its own worker and steals only when it finds
 * none there, so a worker with two yielders never looks at other workers' queues: a
 * task placed on a parked-for-good worker's remote queue then waits for ever (it hung
 * sync/rwlock_writers_exclusive in CI, with a writer woken from a pthread).
 * The yielders give up after YIELD_WAIT_S and report it, so a stranded task is a failure,
 * not a hang. */
#define YIELD_WAIT_S 10

typedef struct yield_pair {
    _Atomic int arrived;
    bthread_t y[2];
    _Atomic int gave_up;
} yield_pair_t;

static void *wait_yielding(void *arg)
{
    yield_pair_t *p = arg;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (atomic_load(&p->arrived) < 2) {
        bthread_yield();
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > YIELD_WAIT_S) {
            atomic_store(&p->gave_up, 1);
            break;
        }
    }
    return NULL;
}

static void *start_yielders(void *arg) /* both go to this worker's own queue */
{
    yield_pair_t *p = arg;
    for (int i = 0; i < 2; i++)
        CHECK(bthread_start_background(&p->y[i], NULL, wait_yielding, p) == 0);
    return NULL;
}

static void *arrive(void *arg)
{
    atomic_fetch_add(&((yield_pair_t *)arg)->arrived, 1);
    return NULL;
}

/* On one worker, round after round: start a child (the start wakes the other, sleeping
 * worker), take it back at once for an inline join, then stay busy for a while without a
 * switch, so that the woken worker finds nothing and sleeps again: a wasted wake-up each
 * round, until a worker is parked for good (where the policy deactivates idle workers)
 * or WASTE_ROUNDS are done. */
#define WASTE_ROUNDS sb_rounds(1000, 200) /* fewer under an emulator (sbtest.h) */
static void *waste_wakeups(void *arg)
{
    int *rounds = arg;
    for (; *rounds < WASTE_ROUNDS && totals().eparks <= totals().ewakes; ++*rounds) {
        bthread_t c;
        CHECK(bthread_start_background(&c, NULL, count_one, NULL) == 0);
        CHECK(bthread_join(c, NULL) == 0);
        struct timespec t0, now;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do
            clock_gettime(CLOCK_MONOTONIC, &now);
        while ((now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec) < 2000000L);
    }
    return NULL;
}

Test(parked_for_good, a_parked_for_good_workers_queue_is_served_while_the_others_yield, .timeout = 60)
{
    set_workers(2);
    const bool deactivates = policy().deactivates;
    bthread_t s, a[2];
    int rounds = 0;
    cr_assert_eq(bthread_start_background(&s, NULL, waste_wakeups, &rounds), 0);
    cr_assert_eq(bthread_join(s, NULL), 0);
    if (deactivates)
        cr_assert_gt(totals().eparks, totals().ewakes, "no worker parked for good (%d rounds)",
                     rounds);
    yield_pair_t p = {0};
    cr_assert_eq(bthread_start_background(&s, NULL, start_yielders, &p), 0);
    cr_assert_eq(bthread_join(s, NULL), 0);
    /* round-robin placement from this pthread: one of two lands on each worker's queue,
     * unless the variant places them elsewhere */
    for (int i = 0; i < 2; i++)
        cr_assert_eq(bthread_start_background(&a[i], NULL, arrive, &p), 0);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(bthread_join(p.y[i], NULL), 0);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(bthread_join(a[i], NULL), 0);
    assert_no_failures();
    cr_assert_eq(atomic_load(&p.gave_up), 0, "a task waited %d s behind two yielders",
                 YIELD_WAIT_S);
    cr_assert_eq(atomic_load(&p.arrived), 2);
    cr_assert_eq(bthread_shutdown(), 0);
}
