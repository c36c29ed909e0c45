/*
 * test_once.c -- bthread_once (common/once.c), every variant.
 *
 * What must hold: the routine runs exactly once per flag, whoever races for it (bthreads
 * and pthreads together); every caller returns only after the routine has returned, and
 * then sees what it wrote (plain writes: TSan checks the order); losers wait without
 * holding their worker, so a routine that needs another bthread to run finishes even on
 * one worker; flags that share a wait bucket do not disturb each other.
 *
 * Nothing sleeps to let something happen: a test that needs a state (the routine
 * entered, every loser arrived) waits for it on a countdown or by checking a counter.
 */
#include "sbtest.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "bthread.h"

#include "thread_checks.h"

static void setup(void) { cr_assert_eq(bthread_setconcurrency(2), 0); }
TestSuite(once, .init = setup);

/* Run fn(arg) on nb bthreads and np pthreads, and join them all. */
static void run_mixed(int nb, int np, void *(*fn)(void *), void *arg)
{
    bthread_t bt[256];
    pthread_t pt[16];
    cr_assert(nb <= 256 && np <= 16);
    for (int i = 0; i < nb; i++)
        cr_assert_eq(bthread_start_background(&bt[i], NULL, fn, arg), 0);
    for (int i = 0; i < np; i++)
        cr_assert_eq(pthread_create(&pt[i], NULL, fn, arg), 0);
    for (int i = 0; i < nb; i++)
        cr_assert_eq(bthread_join(bt[i], NULL), 0);
    for (int i = 0; i < np; i++)
        cr_assert_eq(pthread_join(pt[i], NULL), 0);
}

/* ---- one flag, many callers ------------------------------------------------------- */

static bthread_once_t g_flag = BTHREAD_ONCE_INIT;
static _Atomic int g_runs;
static int g_payload[64]; /* plain: written by the routine, read by every caller */
static _Atomic int g_returned; /* set by the routine as its very last step */

static void init_payload(void)
{
    /* relaxed: a count checked after the joins. */
    atomic_fetch_add_explicit(&g_runs, 1, memory_order_relaxed);
    for (int i = 0; i < 64; i++)
        g_payload[i] = i * i;
    bthread_yield(); /* give the losers a chance to arrive while it runs */
    /* relaxed: the callers must see it through bthread_once's own ordering. */
    atomic_store_explicit(&g_returned, 1, memory_order_relaxed);
}

static void *call_once_and_check(void *unused)
{
    (void)unused;
    CHECK(bthread_once(&g_flag, init_payload) == 0);
    CHECK(atomic_load_explicit(&g_returned, memory_order_relaxed) == 1);
    for (int i = 0; i < 64; i++)
        CHECK(g_payload[i] == i * i);
    return NULL;
}

Test(once, runs_once_for_racing_bthreads_and_pthreads, .timeout = 30)
{
    run_mixed(200, 8, call_once_and_check, NULL);
    assert_no_failures();
    cr_assert_eq(atomic_load(&g_runs), 1);
    /* Later calls return at once and do not run it again. */
    call_once_and_check(NULL);
    assert_no_failures();
    cr_assert_eq(atomic_load(&g_runs), 1);
}

Test(once, rejects_null_arguments, .timeout = 10)
{
    bthread_once_t o = BTHREAD_ONCE_INIT;
    cr_assert_eq(bthread_once(NULL, init_payload), EINVAL);
    cr_assert_eq(bthread_once(&o, NULL), EINVAL);
    cr_assert_eq(atomic_load(&g_runs), 0);
}

/* ---- losers wait until the routine returns ---------------------------------------- */

/* The routine blocks until every loser has arrived and been told to go on: if a loser
 * returned before the routine did, it would see `returned` still 0. */
static bthread_once_t g_slow_flag = BTHREAD_ONCE_INIT;
static bthread_countdown_t g_entered, g_release;
static _Atomic int g_arrived;
static _Atomic int g_slow_returned;

static void slow_init(void)
{
    CHECK(bthread_countdown_signal(&g_entered, 1) == 0);
    CHECK(bthread_countdown_wait(&g_release) == 0);
    /* relaxed: as g_returned. */
    atomic_store_explicit(&g_slow_returned, 1, memory_order_relaxed);
}

static void *slow_winner(void *unused)
{
    (void)unused;
    CHECK(bthread_once(&g_slow_flag, slow_init) == 0);
    return NULL;
}

static void *slow_loser(void *unused)
{
    (void)unused;
    /* relaxed: a count the releaser polls. */
    atomic_fetch_add_explicit(&g_arrived, 1, memory_order_relaxed);
    CHECK(bthread_once(&g_slow_flag, slow_init) == 0);
    CHECK(atomic_load_explicit(&g_slow_returned, memory_order_relaxed) == 1);
    return NULL;
}

/* A bthread that lets the routine finish once all `n` losers have arrived.  It yields
 * while it waits for them: with one worker it runs only if the losers gave the worker
 * up, that is, if they sleep in bthread_once instead of spinning on it. */
static void *releaser(void *n)
{
    while (atomic_load_explicit(&g_arrived, memory_order_relaxed) < (int)(intptr_t)n)
        bthread_yield();
    CHECK(bthread_countdown_signal(&g_release, 1) == 0);
    return NULL;
}

static void losers_wait_for_the_routine(int workers)
{
    cr_assert_eq(bthread_setconcurrency(workers), 0);
    cr_assert_eq(bthread_countdown_init(&g_entered, 1), 0);
    cr_assert_eq(bthread_countdown_init(&g_release, 1), 0);
    enum { NB = 50, NP = 4 };
    /* The winner is a pthread, so that on one worker the worker is free for losers. */
    pthread_t w;
    cr_assert_eq(pthread_create(&w, NULL, slow_winner, NULL), 0);
    cr_assert_eq(bthread_countdown_wait(&g_entered), 0); /* it runs the routine now */
    bthread_t lb[NB], rel;
    pthread_t lp[NP];
    for (int i = 0; i < NB; i++)
        cr_assert_eq(bthread_start_background(&lb[i], NULL, slow_loser, NULL), 0);
    for (int i = 0; i < NP; i++)
        cr_assert_eq(pthread_create(&lp[i], NULL, slow_loser, NULL), 0);
    cr_assert_eq(bthread_start_background(&rel, NULL, releaser, (void *)(intptr_t)(NB + NP)),
                 0);
    for (int i = 0; i < NB; i++)
        cr_assert_eq(bthread_join(lb[i], NULL), 0);
    for (int i = 0; i < NP; i++)
        cr_assert_eq(pthread_join(lp[i], NULL), 0);
    cr_assert_eq(bthread_join(rel, NULL), 0);
    cr_assert_eq(pthread_join(w, NULL), 0);
    assert_no_failures();
    cr_assert_eq(atomic_load(&g_slow_returned), 1);
    bthread_countdown_destroy(&g_entered);
    bthread_countdown_destroy(&g_release);
}

Test(once, losers_wait_until_the_routine_returns, .timeout = 30)
{
    losers_wait_for_the_routine(2);
}

/* One worker: the releaser can only run if the 50 losing bthreads gave the worker up. */
Test(once, waiting_losers_leave_their_worker_free, .timeout = 30)
{
    losers_wait_for_the_routine(1);
}

/* ---- the routine may block and start bthreads ------------------------------------- */

static bthread_once_t g_nested_flag = BTHREAD_ONCE_INIT;
static _Atomic int g_child_ran;
static bthread_once_t g_inner_flag = BTHREAD_ONCE_INIT;
static _Atomic int g_inner_runs;

static void inner_init(void) { atomic_fetch_add_explicit(&g_inner_runs, 1, memory_order_relaxed); }

static void *child(void *unused)
{
    (void)unused;
    CHECK(bthread_once(&g_inner_flag, inner_init) == 0); /* another flag, inside a routine */
    atomic_store_explicit(&g_child_ran, 1, memory_order_relaxed);
    return NULL;
}

static void nested_init(void)
{
    bthread_t t;
    CHECK(bthread_start_background(&t, NULL, child, NULL) == 0);
    CHECK(bthread_join(t, NULL) == 0);
    CHECK(bthread_usleep(1000) == 0); /* a routine that sleeps: brpc's test does 2 s */
}

static void *call_nested(void *unused)
{
    (void)unused;
    CHECK(bthread_once(&g_nested_flag, nested_init) == 0);
    CHECK(atomic_load_explicit(&g_child_ran, memory_order_relaxed) == 1);
    return NULL;
}

Test(once, routine_may_block_and_use_other_flags, .timeout = 30)
{
    run_mixed(100, 4, call_nested, NULL);
    assert_no_failures();
    cr_assert_eq(atomic_load(&g_inner_runs), 1);
}

/* ---- many flags at once: shared wait buckets --------------------------------------- */

#define NFLAGS 1000
static bthread_once_t g_flags[NFLAGS]; /* zeroed: as good as BTHREAD_ONCE_INIT */
static _Atomic int g_flag_runs[NFLAGS];
static _Atomic int g_next_flag;
/* Which flag the routine now running belongs to (a routine takes no argument): set by
 * the caller in bthread-local storage just before bthread_once.  Not a _Thread_local: a
 * bthread that blocked in an earlier bthread_once may go on on another worker, and the
 * compiler may keep using the first worker's address of a thread-local (bthread.h says
 * the same of errno). */
static bthread_key_t g_flag_key;

static void count_flag_run(void)
{
    const int i = (int)(intptr_t)bthread_getspecific(g_flag_key);
    atomic_fetch_add_explicit(&g_flag_runs[i], 1, memory_order_relaxed);
    bthread_yield();
}

/* Each caller walks every flag from its own starting point, so callers race on all of
 * them, in different orders. */
static void *walk_flags(void *unused)
{
    (void)unused;
    const int start = atomic_fetch_add_explicit(&g_next_flag, 97, memory_order_relaxed);
    for (int k = 0; k < NFLAGS; k++) {
        const int i = (start + k) % NFLAGS;
        CHECK(bthread_setspecific(g_flag_key, (void *)(intptr_t)i) == 0);
        CHECK(bthread_once(&g_flags[i], count_flag_run) == 0);
        CHECK(atomic_load_explicit(&g_flag_runs[i], memory_order_relaxed) == 1);
    }
    return NULL;
}

Test(once, many_flags_raced_by_many_callers_each_run_once, .timeout = 60)
{
    cr_assert_eq(bthread_key_create(&g_flag_key, NULL), 0);
    run_mixed(16, 4, walk_flags, NULL);
    assert_no_failures();
    for (int i = 0; i < NFLAGS; i++)
        cr_assert_eq(atomic_load(&g_flag_runs[i]), 1, "flag %d", i);
}
