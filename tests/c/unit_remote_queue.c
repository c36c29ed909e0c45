/*
 * unit_remote_queue.c -- stress for a worker's remote queue (common/remote_queue.h),
 * built with a first ring of 8 cells that may grow to 64, so that producers grow rings,
 * overflow to the list and come back to the ring all the time.  Six producer threads
 * push numbered tasks, pausing now and then so the list drains; two consumer threads
 * take batches (16 and 8, an owner and a thief) through the queue's try-lock, and a
 * third thread asks rmq_maybe all the time without the lock, as idle workers do,
 * across every ring replacement.  Every task must be taken exactly once, and each
 * producer's tasks in the order it pushed them; a task left behind shows as no progress
 * for 10 s (a failure, not a hang).  SB_STRESS_ITEMS sets the total.
 */
#define REMOTE_RING_FIRST 8u
#define REMOTE_RING_MAX 64u
#include "sbtest.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "remote_queue.h"
#include "timeutil.h"

#define PRODUCERS 6
#define CONSUMERS 2

static remote_queue_t q;
static task_t *tasks;    /* task i: producer i % PRODUCERS, its (i / PRODUCERS)-th push */
static uint64_t n_tasks;
static _Atomic uint8_t *taken_count;
static _Atomic uint64_t taken, progress_ns;
static _Atomic bool poller_stop;
static pthread_mutex_t check_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t next_of[PRODUCERS];     /* under check_mu: the push each producer is at */
static uint64_t out_of_order, twice;   /* under check_mu */

static uint64_t items(void)
{
    const char *e = getenv("SB_STRESS_ITEMS");
    uint64_t n = e ? strtoull(e, NULL, 0) : 3000000ull;
    return n - n % PRODUCERS + PRODUCERS;
}

static void *producer(void *arg)
{
    uint64_t p = (uintptr_t)arg, rng = 0x9E3779B97F4A7C15ull * (p + 1);
    for (uint64_t i = p; i < n_tasks; i += PRODUCERS) {
        rmq_push(&q, &tasks[i]);
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        if (rng % 512 == 0) /* now and then, let the consumers catch up */
            for (unsigned k = 0; k < (rng >> 20) % 2048; k++)
                cpu_relax();
    }
    return NULL;
}

static void *consumer(void *arg)
{
    unsigned max = (uintptr_t)arg;
    task_t *batch[16];
    int64_t deadline_ns = 10 * 1000000000ll;
    unsigned takes = 0;
    while (atomic_load_explicit(&taken, memory_order_relaxed) < n_tasks) {
        /* the check is serialised so that its order is the order of the takes */
        pthread_mutex_lock(&check_mu);
        bool left;
        /* every other take waits for the lock, as a sleeper's last look does */
        unsigned n = rmq_take(&q, max, batch, &left, (++takes & 1) != 0);
        for (unsigned k = 0; k < n; k++) {
            uint64_t i = (uint64_t)(batch[k] - tasks);
            if (atomic_fetch_add_explicit(&taken_count[i], 1, memory_order_relaxed))
                twice++;
            int64_t seq = (int64_t)(i / PRODUCERS);
            if (seq != next_of[i % PRODUCERS])
                out_of_order++;
            next_of[i % PRODUCERS] = seq + 1;
        }
        pthread_mutex_unlock(&check_mu);
        int64_t now = sb_clock_ns(CLOCK_MONOTONIC);
        if (n) {
            atomic_fetch_add_explicit(&taken, n, memory_order_relaxed);
            atomic_store_explicit(&progress_ns, (uint64_t)now, memory_order_relaxed);
        } else if (now - (int64_t)atomic_load_explicit(&progress_ns, memory_order_relaxed) >
                   deadline_ns) {
            break; /* stranded: the assertions below say how many */
        }
    }
    return NULL;
}

/* An idle worker's question, asked without the consumer lock while rings are replaced:
 * under TSan, a poller that reads a new ring without a happens-before to its making is
 * a reported race. */
static void *poller(void *arg)
{
    (void)arg;
    uint64_t yes = 0;
    while (atomic_load_explicit(&taken, memory_order_relaxed) < n_tasks &&
           !atomic_load_explicit(&poller_stop, memory_order_relaxed))
        yes += rmq_maybe(&q);
    return (void *)(uintptr_t)(yes > 0);
}

Test(remote_queue, every_task_once_in_each_producers_order, .timeout = 240)
{
    n_tasks = items();
    tasks = calloc(n_tasks, sizeof *tasks);
    taken_count = calloc(n_tasks, sizeof *taken_count);
    cr_assert(tasks && taken_count);
    cr_assert_eq(rmq_init(&q), 0);
    atomic_store(&progress_ns, (uint64_t)sb_clock_ns(CLOCK_MONOTONIC));
    pthread_t pth[PRODUCERS], cth[CONSUMERS], poll_th;
    cr_assert_eq(pthread_create(&poll_th, NULL, poller, NULL), 0);
    for (uintptr_t c = 0; c < CONSUMERS; c++)
        cr_assert_eq(pthread_create(&cth[c], NULL, consumer, (void *)(uintptr_t)(c ? 8u : 16u)), 0);
    for (uintptr_t p = 0; p < PRODUCERS; p++)
        cr_assert_eq(pthread_create(&pth[p], NULL, producer, (void *)p), 0);
    for (int p = 0; p < PRODUCERS; p++)
        pthread_join(pth[p], NULL);
    for (int c = 0; c < CONSUMERS; c++)
        pthread_join(cth[c], NULL);
    atomic_store(&poller_stop, true);
    void *saw_tasks;
    pthread_join(poll_th, &saw_tasks);
    cr_assert(saw_tasks, "the poller never saw a task");
    uint64_t lost = 0;
    for (uint64_t i = 0; i < n_tasks; i++)
        lost += atomic_load_explicit(&taken_count[i], memory_order_relaxed) == 0;
    cr_assert_eq(lost, 0, "%llu of %llu tasks never taken", (unsigned long long)lost,
                 (unsigned long long)n_tasks);
    cr_assert_eq(twice, 0, "%llu tasks taken twice", (unsigned long long)twice);
    cr_assert_eq(out_of_order, 0, "%llu tasks out of their producer's order",
                 (unsigned long long)out_of_order);
    uint64_t pushes = rmq_counter(&q, remote_pushes), listed = atomic_load(&q.list_pushes);
    cr_assert_eq(pushes, n_tasks, "pushes counted: %llu", (unsigned long long)pushes);
    cr_assert(listed > 0 && listed < n_tasks, "both parts used: %llu of %llu through the list",
              (unsigned long long)listed, (unsigned long long)n_tasks);
    cr_assert_eq(atomic_load(&q.ring)->mask + 1, REMOTE_RING_MAX, "the ring grew");
    cr_assert_not(rmq_maybe(&q), "the queue is empty at the end");
    rmq_fini(&q);
    free(tasks);
    free(taken_count);
}

/* Takes batches of up to 16, `want` tasks in all, checking they are t[from], t[from+1]... */
static void take_in_order(task_t *t, int from, int want)
{
    task_t *batch[16];
    bool left;
    for (int got = 0; got < want;) {
        unsigned max = want - got < 16 ? (unsigned)(want - got) : 16;
        unsigned n = rmq_take(&q, max, batch, &left, false);
        cr_assert(n > 0, "empty after %d of %d", got, want);
        for (unsigned k = 0; k < n; k++, got++)
            cr_assert_eq(batch[k] - t, from + got, "take %d", from + got);
    }
}

Test(remote_queue, one_thread_fifo_across_growth_and_overflow, .timeout = 20)
{
    /* rings of 8, 16, 32 and 64 cells hold the first 120 pushes; 30 go to the list */
    static task_t t[200];
    cr_assert_eq(rmq_init(&q), 0);
    for (int i = 0; i < 150; i++)
        rmq_push(&q, &t[i]);
    cr_assert_eq(atomic_load(&q.list_len), 30);
    cr_assert_eq(rmq_counter(&q, remote_pushes), 150);
    take_in_order(t, 0, 140);
    rmq_push(&q, &t[150]); /* the list still holds 140..149: behind them */
    cr_assert_eq(atomic_load(&q.list_len), 11);
    take_in_order(t, 140, 11);
    cr_assert_not(rmq_maybe(&q));
    for (int i = 151; i < 160; i++) /* the ring again */
        rmq_push(&q, &t[i]);
    cr_assert_eq(atomic_load(&q.list_len), 0);
    take_in_order(t, 151, 9);
    task_t *batch[16];
    bool left;
    cr_assert_eq(rmq_take(&q, 16, batch, &left, false), 0);
    cr_assert_eq(rmq_counter(&q, remote_pushes), 160);
    rmq_fini(&q);
}

/* A producer that claimed the first cell and has not yet written it while later tasks
 * fill the rings and overflow to the list: the take must wait for that cell and return
 * everything in order, not take the list first. */
static task_t late_task[160];
static void *write_claimed_cell(void *arg)
{
    remote_ring_t *r = arg;
    usleep(100 * 1000);
    atomic_store_explicit(&r->cells[0], (uintptr_t)&late_task[0] | rmq_lap(r, 0), memory_order_release);
    return NULL;
}

Test(remote_queue, claimed_cell_not_yet_written_keeps_the_order, .timeout = 20)
{
    cr_assert_eq(rmq_init(&q), 0);
    remote_ring_t *first = atomic_load(&q.ring);
    cr_assert_eq(atomic_fetch_add(&first->tail, 1), 0); /* the slow producer's claim */
    for (int i = 1; i < 150; i++) /* 119 more in the rings, 30 in the list */
        rmq_push(&q, &late_task[i]);
    cr_assert_eq(atomic_load(&q.list_len), 30);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, write_claimed_cell, first), 0);
    take_in_order(late_task, 0, 150);
    pthread_join(th, NULL);
    rmq_fini(&q);
}
