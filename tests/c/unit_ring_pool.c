/*
 * unit_ring_pool.c -- the textbook pool of the reference row (harness/ref/ring_pool.h):
 * every task runs exactly once (a bitmap catches duplicates, count and sum catch losses)
 * under 8 concurrent submitters; the ring grows from its smallest size while full and
 * wrapped; stop runs every queued task before the threads end.
 */
#include "sbtest.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "ref/ring_pool.h"

#define SUBMITTERS 8
#define PER_SUBMITTER 50000L
#define TOTAL (SUBMITTERS * PER_SUBMITTER)

static _Atomic uint64_t seen[TOTAL / 64 + 1];
static _Atomic uint64_t ran, sum, dups;

static void mark(void *ctx, long i)
{
    (void)ctx;
    uint64_t bit = 1ull << (i & 63);
    if (atomic_fetch_or_explicit(&seen[i >> 6], bit, memory_order_relaxed) & bit)
        atomic_fetch_add_explicit(&dups, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&sum, (uint64_t)i, memory_order_relaxed);
    atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
}

static ring_pool_t pool;

static void *submitter(void *arg)
{
    long s = (long)(intptr_t)arg;
    for (long k = 0; k < PER_SUBMITTER; k++)
        cr_assert_eq(ring_pool_submit(&pool, mark, NULL, s * PER_SUBMITTER + k), 0);
    return NULL;
}

static void reset(void)
{
    for (size_t w = 0; w < sizeof seen / sizeof seen[0]; w++)
        atomic_store(&seen[w], 0);
    atomic_store(&ran, 0);
    atomic_store(&sum, 0);
    atomic_store(&dups, 0);
}

static void expect_each_once(long n)
{
    cr_assert_eq(atomic_load(&dups), 0, "%llu tasks ran twice",
                 (unsigned long long)atomic_load(&dups));
    cr_assert_eq(atomic_load(&ran), (uint64_t)n, "ran %llu of %ld",
                 (unsigned long long)atomic_load(&ran), n);
    cr_assert_eq(atomic_load(&sum), (uint64_t)n * (uint64_t)(n - 1) / 2);
}

Test(ring_pool, every_task_once_under_8_submitters, .timeout = 60)
{
    reset();
    cr_assert_eq(ring_pool_start(&pool, 3, 1), 3); /* the smallest ring: it must grow */
    pthread_t t[SUBMITTERS];
    for (long s = 0; s < SUBMITTERS; s++)
        cr_assert_eq(pthread_create(&t[s], NULL, submitter, (void *)(intptr_t)s), 0);
    for (long s = 0; s < SUBMITTERS; s++)
        pthread_join(t[s], NULL);
    ring_pool_stop(&pool); /* runs what is still queued, then joins */
    expect_each_once(TOTAL);
}

/* a task that blocks until released keeps the one worker busy while the ring fills,
 * wraps and grows: the order and contents must survive each doubling */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_open;
static long order[5000], norder;

static void gate(void *ctx, long i)
{
    (void)ctx;
    (void)i;
    pthread_mutex_lock(&gate_mu);
    while (!gate_open)
        pthread_cond_wait(&gate_cv, &gate_mu);
    pthread_mutex_unlock(&gate_mu);
}

static void record(void *ctx, long i)
{
    (void)ctx;
    order[norder++] = i; /* one worker: no race */
}

Test(ring_pool, growth_keeps_fifo_order, .timeout = 30)
{
    norder = 0;
    gate_open = 0;
    cr_assert_eq(ring_pool_start(&pool, 1, 16), 1);
    cr_assert_eq(ring_pool_submit(&pool, gate, NULL, -1), 0);
    /* the worker is held by the gate: the ring doubles several times from 16 */
    for (long i = 0; i < 5000; i++)
        cr_assert_eq(ring_pool_submit(&pool, record, NULL, i), 0);
    cr_assert_geq(pool.cap, 5001);
    pthread_mutex_lock(&gate_mu);
    gate_open = 1;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
    ring_pool_stop(&pool);
    cr_assert_eq(norder, 5000);
    for (long i = 0; i < 5000; i++)
        cr_assert_eq(order[i], i, "task %ld ran at place %ld", order[i], i);
}

/* growth of a wrapped ring: the worker takes some tasks first, so head is not 0 when
 * the ring doubles */
Test(ring_pool, growth_of_a_wrapped_ring, .timeout = 30)
{
    norder = 0;
    gate_open = 0;
    cr_assert_eq(ring_pool_start(&pool, 1, 16), 1);
    for (long i = 0; i < 10; i++) /* run at once: the gate is not queued yet */
        cr_assert_eq(ring_pool_submit(&pool, record, NULL, i), 0);
    cr_assert_eq(ring_pool_submit(&pool, gate, NULL, -1), 0);
    for (;;) { /* wait until the worker holds the gate: head has moved past 10 */
        pthread_mutex_lock(&pool.mu);
        size_t left = pool.count;
        pthread_mutex_unlock(&pool.mu);
        if (left == 0)
            break;
        sched_yield();
    }
    for (long i = 10; i < 100; i++) /* wraps at 16, then grows twice */
        cr_assert_eq(ring_pool_submit(&pool, record, NULL, i), 0);
    pthread_mutex_lock(&gate_mu);
    gate_open = 1;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
    ring_pool_stop(&pool);
    cr_assert_eq(norder, 100);
    for (long i = 0; i < 100; i++)
        cr_assert_eq(order[i], i, "task %ld ran at place %ld", order[i], i);
}

Test(ring_pool, stop_runs_every_queued_task, .timeout = 30)
{
    reset();
    cr_assert_eq(ring_pool_start(&pool, 2, 64), 2);
    for (long i = 0; i < 1000; i++)
        cr_assert_eq(ring_pool_submit(&pool, mark, NULL, i), 0);
    ring_pool_stop(&pool);
    expect_each_once(1000);
    cr_assert_eq(ring_pool_start(&pool, 0, 16), -EINVAL);
}
