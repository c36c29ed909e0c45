/*
 * unit_ws.c -- the article's scheduler (harness/ref/ws_sched.h), the reference rows' ws*:
 * every task runs exactly once, in every stealing setting the rows use, from workers and
 * from other threads, in batches; and no wake-up is lost (a task submitted while every
 * worker sleeps runs).  Run by make test-unit, and under ThreadSanitizer by make
 * SANITIZE=thread test-unit.
 */
#include "sbtest.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "ref/ws_sched.h"

#define WORKERS 3
#define SUBMITTERS 2

static ws_sched_t s;
static _Atomic uint64_t *seen; /* one bit per task */
static _Atomic long ran, dups;

static void mark(void *ctx, long i)
{
    (void)ctx;
    uint64_t bit = 1ull << (i & 63);
    /* relaxed: counts read once `ran` says every task ran (acquire below) */
    if (atomic_fetch_or_explicit(&seen[i >> 6], bit, memory_order_relaxed) & bit)
        atomic_fetch_add_explicit(&dups, 1, memory_order_relaxed);
    /* release: pairs with wait_ran's acquire */
    atomic_fetch_add_explicit(&ran, 1, memory_order_release);
}

static void wait_ran(long n)
{
    int64_t give_up = sb_clock_ns(CLOCK_MONOTONIC) + 60 * SB_NS_PER_S;
    while (atomic_load_explicit(&ran, memory_order_acquire) < n) {
        cr_assert_lt(sb_clock_ns(CLOCK_MONOTONIC), give_up, "%ld of %ld tasks ran in 60 s",
                     (long)atomic_load(&ran), n);
        sched_yield();
    }
}

/* A share of the tasks, submitted in batches of 1 to 40 (a task on a worker, or a
 * foreign thread). */
typedef struct share {
    ref_task_t *ts;
    long first, last;
} share_t;

static void submit_share(share_t *sh)
{
    long k = 1;
    for (long i = sh->first; i < sh->last; i += k) {
        k = 1 + i % 40;
        if (k > sh->last - i)
            k = sh->last - i;
        for (long j = i; j < i + k; j++)
            sh->ts[j] = (ref_task_t){.fn = mark, .ctx = NULL, .i = j};
        ws_submit(&s, &sh->ts[i], k);
    }
}

static void submitter_task(void *ctx, long i)
{
    (void)i;
    submit_share(ctx);
    mark(NULL, ((share_t *)ctx)->last); /* the submitter is a task too */
}

static void *submitter_thread(void *arg)
{
    submit_share(arg);
    return NULL;
}

static void each_task_once(long steal_k)
{
    long n = 200000;
    const char *e = getenv("SB_STRESS_ITEMS");
    if (e) /* scaled down under TSan and qemu */
        n = strtol(e, NULL, 0) / 50 > 1000 ? strtol(e, NULL, 0) / 50 : 1000;
    cr_assert_eq(ws_start(&s, WORKERS, steal_k), WORKERS);
    ref_task_t *ts = calloc((size_t)n + SUBMITTERS + 1, sizeof *ts);
    seen = calloc((size_t)n / 64 + 2, sizeof *seen);
    cr_assert(ts && seen);
    atomic_store(&ran, 0);
    atomic_store(&dups, 0);
    /* half from foreign threads, half from submitter tasks on the workers */
    share_t sh[2 * SUBMITTERS];
    long per = n / (2 * SUBMITTERS + 1); /* each share keeps one index for its submitter */
    pthread_t th[SUBMITTERS];
    for (int k = 0; k < 2 * SUBMITTERS; k++)
        sh[k] = (share_t){.ts = ts, .first = k * (per + 1), .last = k * (per + 1) + per};
    for (int k = 0; k < SUBMITTERS; k++)
        cr_assert_eq(pthread_create(&th[k], NULL, submitter_thread, &sh[k]), 0);
    ref_task_t subs[SUBMITTERS];
    for (int k = 0; k < SUBMITTERS; k++) {
        subs[k] = (ref_task_t){.fn = submitter_task, .ctx = &sh[SUBMITTERS + k], .i = 0};
        ws_submit_on(&s, k, &subs[k]);
    }
    for (int k = 0; k < SUBMITTERS; k++)
        pthread_join(th[k], NULL);
    long total = 2 * SUBMITTERS * per + SUBMITTERS;
    wait_ran(total);
    cr_assert_eq(atomic_load(&dups), 0, "tasks run twice: %ld", (long)dups);
    double c[WS_NCOUNTERS];
    ws_counters_sum(&s, c);
    /* a worker counts a task after it returns: each may still be one behind */
    cr_assert_geq(c[WS_tasks_run], (double)(total - WORKERS), "tasks_run %g", c[WS_tasks_run]);
    if (steal_k != WS_NOSTEAL && steal_k != 1)
        cr_log_info("steal_k %ld: %g steals took %g tasks", steal_k, c[WS_steals],
                    c[WS_stolen_tasks]);
    if (steal_k == WS_NOSTEAL)
        cr_assert_eq(c[WS_steal_attempts], 0);
    ws_stop(&s);
    free(ts);
    free(seen);
}

Test(ws, every_task_runs_once_without_stealing, .timeout = 120) { each_task_once(WS_NOSTEAL); }
Test(ws, every_task_runs_once_stealing_one, .timeout = 120) { each_task_once(1); }
Test(ws, every_task_runs_once_stealing_16, .timeout = 120) { each_task_once(16); }
Test(ws, every_task_runs_once_stealing_half, .timeout = 120) { each_task_once(WS_HALF); }

/* While every worker sleeps, one task from a foreign thread to worker round % 3: it runs,
 * round after round (the wake-up protocol at the top of ws_sched.h). */
static void wake_rounds(long steal_k)
{
    cr_assert_eq(ws_start(&s, WORKERS, steal_k), WORKERS);
    seen = calloc(8, sizeof *seen);
    atomic_store(&ran, 0);
    ref_task_t t;
    for (long round = 0; round < 40; round++) {
        int64_t give_up = sb_clock_ns(CLOCK_MONOTONIC) + 10 * SB_NS_PER_S;
        /* relaxed: a wait for the announcements, which the protocol alone orders */
        while (atomic_load_explicit(&s.sleepers, memory_order_relaxed) < WORKERS) {
            cr_assert_lt(sb_clock_ns(CLOCK_MONOTONIC), give_up, "the workers never slept");
            sched_yield();
        }
        long before = atomic_load_explicit(&ran, memory_order_relaxed);
        t = (ref_task_t){.fn = mark, .i = 0};
        ws_submit_on(&s, (int)(round % WORKERS), &t);
        wait_ran(before + 1);
        atomic_store(&seen[0], 0);
    }
    ws_stop(&s);
    free(seen);
}

Test(ws, no_wake_up_is_lost_without_stealing, .timeout = 120) { wake_rounds(WS_NOSTEAL); }
Test(ws, no_wake_up_is_lost_stealing, .timeout = 120) { wake_rounds(4); }
