/*
 * test_sync.c -- mutex, cond, rwlock, sem and countdown (common/sync.c), every variant.
 *
 * Each test runs in its own process (the runner forks) on 2 workers, and mixes bthreads
 * with plain pthreads, since every primitive must work from both.  Threads never call
 * cr_assert: they record failures with CHECK, and the test's main thread asserts at the
 * end, once they are joined.
 *
 * Timing bound for timed waits: a wait with a deadline returns ETIMEDOUT no earlier than
 * the deadline (CLOCK_REALTIME, as given) and at most LATE_MS after it -- generous for a
 * noisy shared VM.  Everything else checks exact counts, never speed.
 *
 * Lost wake-up stress: the ping-pong tests and the racing tests below count the
 * wait/wake hand-offs they perform and log the totals (cr_log_info; --verbose shows it).
 * The largest does 4 * 10^6 cond hand-offs (SB_STRESS_ITEMS overrides that number).
 */
#include "sbtest.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bthread.h"
#include "butex.h"

#define LATE_MS 200

/* ---- helpers --------------------------------------------------------------------- */

#include "thread_checks.h"

static void setup(void) { cr_assert_eq(bthread_setconcurrency(2), 0); }

static int64_t ns_of(const struct timespec *t)
{
    return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}
static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return ns_of(&t);
}
static struct timespec deadline_in_us(int64_t us)
{
    const int64_t at = now_ns() + us * 1000;
    return (struct timespec){.tv_sec = at / 1000000000, .tv_nsec = at % 1000000000};
}
static struct timespec deadline_in_ms(int64_t ms) { return deadline_in_us(ms * 1000); }
/* The documented bound: not before the deadline, at most LATE_MS after it. */
static int ended_in_bound(const struct timespec *dl)
{
    const int64_t late = now_ns() - ns_of(dl);
    return late >= 0 && late <= (int64_t)LATE_MS * 1000000;
}

/* Run fn(args[i]) on nb bthreads then np pthreads, and join them all. */
static void run_mixed(int nb, int np, void *(*fn)(void *), void *args, size_t argsize)
{
    bthread_t bt[64];
    pthread_t pt[64];
    cr_assert(nb <= 64 && np <= 64);
    char *a = args;
    for (int i = 0; i < nb; i++)
        cr_assert_eq(bthread_start_background(&bt[i], NULL, fn, a + (size_t)i * argsize), 0);
    for (int i = 0; i < np; i++)
        cr_assert_eq(pthread_create(&pt[i], NULL, fn, a + (size_t)(nb + i) * argsize), 0);
    for (int i = 0; i < nb; i++)
        cr_assert_eq(bthread_join(bt[i], NULL), 0);
    for (int i = 0; i < np; i++)
        cr_assert_eq(pthread_join(pt[i], NULL), 0);
}

/* Run fn(arg) in a bthread and wait for it (for checks that must run on a bthread). */
static void in_bthread(void *(*fn)(void *), void *arg)
{
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, fn, arg), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

TestSuite(sync, .init = setup);

/* ---- mutex ----------------------------------------------------------------------- */

typedef struct mx_shared {
    bthread_mutex_t m;
    long counter; /* plain: the mutex is what protects it */
    _Atomic int inside;
    int iters;
} mx_shared_t;
typedef struct mx_arg {
    mx_shared_t *s;
    int id;
} mx_arg_t;

static void *mx_worker(void *p)
{
    mx_arg_t *a = p;
    mx_shared_t *s = a->s;
    for (int i = 0; i < s->iters; i++) {
        /* Every way in: lock, trylock (spinning with yield), timedlock (far deadline). */
        switch ((i + a->id) % 3) {
        case 0:
            CHECK(bthread_mutex_lock(&s->m) == 0);
            break;
        case 1: {
            int rc;
            while ((rc = bthread_mutex_trylock(&s->m)) == EBUSY)
                bthread_yield();
            CHECK(rc == 0);
            break;
        }
        default: {
            const struct timespec dl = deadline_in_ms(60000);
            CHECK(bthread_mutex_timedlock(&s->m, &dl) == 0);
        }
        }
        /* relaxed: a counter of occupants, checked only for exclusion. */
        CHECK(atomic_fetch_add_explicit(&s->inside, 1, memory_order_relaxed) == 0);
        s->counter++;
        atomic_fetch_sub_explicit(&s->inside, 1, memory_order_relaxed);
        CHECK(bthread_mutex_unlock(&s->m) == 0);
    }
    return NULL;
}

Test(sync, mutex_exclusion_bthreads_and_pthreads, .timeout = 60)
{
    mx_shared_t s = {.iters = 40000};
    cr_assert_eq(bthread_mutex_init(&s.m, NULL), 0);
    mx_arg_t args[6];
    for (int i = 0; i < 6; i++)
        args[i] = (mx_arg_t){&s, i};
    run_mixed(4, 2, mx_worker, args, sizeof args[0]);
    assert_no_failures();
    cr_assert_eq(s.counter, 6L * s.iters);
    cr_assert_eq(bthread_mutex_destroy(&s.m), 0);
}

static void *mx_semantics(void *unused)
{
    (void)unused;
    bthread_mutex_t m;
    CHECK(bthread_mutex_init(&m, NULL) == 0);
    CHECK(bthread_mutex_trylock(&m) == 0);
    CHECK(bthread_mutex_trylock(&m) == EBUSY); /* not recursive */
    struct timespec dl = deadline_in_ms(50);
    CHECK(bthread_mutex_timedlock(&m, &dl) == ETIMEDOUT);
    CHECK(ended_in_bound(&dl));
    dl = deadline_in_ms(-10); /* already past */
    CHECK(bthread_mutex_timedlock(&m, &dl) == ETIMEDOUT);
    CHECK(ended_in_bound(&dl));
    const struct timespec bad = {.tv_sec = 0, .tv_nsec = 1000000000L};
    CHECK(bthread_mutex_timedlock(&m, &bad) == EINVAL);
    CHECK(bthread_mutex_unlock(&m) == 0);
    CHECK(bthread_mutex_unlock(&m) == EPERM); /* not locked */
    dl = deadline_in_ms(-10);
    CHECK(bthread_mutex_timedlock(&m, &dl) == 0); /* free: a past deadline is fine */
    CHECK(bthread_mutex_unlock(&m) == 0);
    CHECK(bthread_mutex_destroy(&m) == 0);
    CHECK(bthread_mutex_lock(NULL) == EINVAL);
    return NULL;
}

Test(sync, mutex_trylock_timedlock, .timeout = 20)
{
    mx_semantics(NULL);    /* from a pthread */
    in_bthread(mx_semantics, NULL);
    assert_no_failures();
}

typedef struct mx_handover {
    bthread_mutex_t m;
    _Atomic int released;
    int64_t release_at_ns;
} mx_handover_t;

static void *mx_timed_waiter(void *p)
{
    mx_handover_t *h = p;
    const struct timespec dl = deadline_in_ms(5000);
    CHECK(bthread_mutex_timedlock(&h->m, &dl) == 0);
    /* acquire: pairs with the release store made before the unlock. */
    CHECK(atomic_load_explicit(&h->released, memory_order_acquire) == 1);
    CHECK(bthread_mutex_unlock(&h->m) == 0);
    return NULL;
}

/* timedlock gets the mutex when it is released before the deadline. */
Test(sync, mutex_timedlock_acquires_on_unlock, .timeout = 20)
{
    mx_handover_t h = {0};
    cr_assert_eq(bthread_mutex_init(&h.m, NULL), 0);
    cr_assert_eq(bthread_mutex_lock(&h.m), 0);
    bthread_t b;
    pthread_t p;
    cr_assert_eq(bthread_start_background(&b, NULL, mx_timed_waiter, &h), 0);
    cr_assert_eq(pthread_create(&p, NULL, mx_timed_waiter, &h), 0);
    bthread_usleep(30000);
    atomic_store_explicit(&h.released, 1, memory_order_release); /* see the acquire */
    cr_assert_eq(bthread_mutex_unlock(&h.m), 0);
    cr_assert_eq(bthread_join(b, NULL), 0);
    cr_assert_eq(pthread_join(p, NULL), 0);
    assert_no_failures();
    cr_assert_eq(bthread_mutex_destroy(&h.m), 0);
}

/* ---- cond ------------------------------------------------------------------------ */

#define PC_ITEMS 100000
#define PC_CAP 16
#define PC_PRODUCERS 2 /* 1 bthread + 1 pthread */
#define PC_CONSUMERS 3 /* 2 bthreads + 1 pthread */

typedef struct pc_shared {
    bthread_mutex_t m;
    bthread_cond_t not_empty, not_full;
    int buf[PC_CAP];
    int head, count, producers_done;
    _Atomic unsigned char seen[PC_ITEMS];
    _Atomic uint64_t sum, consumed;
} pc_shared_t;
typedef struct pc_arg {
    pc_shared_t *s;
    int id;
} pc_arg_t;

static void *pc_producer(void *p)
{
    pc_arg_t *a = p;
    pc_shared_t *s = a->s;
    for (int v = 1 + a->id; v <= PC_ITEMS; v += PC_PRODUCERS) {
        CHECK(bthread_mutex_lock(&s->m) == 0);
        while (s->count == PC_CAP)
            CHECK(bthread_cond_wait(&s->not_full, &s->m) == 0);
        s->buf[(s->head + s->count++) % PC_CAP] = v;
        CHECK(bthread_cond_signal(&s->not_empty) == 0);
        CHECK(bthread_mutex_unlock(&s->m) == 0);
    }
    CHECK(bthread_mutex_lock(&s->m) == 0);
    if (++s->producers_done == PC_PRODUCERS)
        CHECK(bthread_cond_broadcast(&s->not_empty) == 0);
    CHECK(bthread_mutex_unlock(&s->m) == 0);
    return NULL;
}

static void *pc_consumer(void *p)
{
    pc_shared_t *s = ((pc_arg_t *)p)->s;
    uint64_t sum = 0, n = 0;
    for (;;) {
        CHECK(bthread_mutex_lock(&s->m) == 0);
        while (s->count == 0 && s->producers_done < PC_PRODUCERS)
            CHECK(bthread_cond_wait(&s->not_empty, &s->m) == 0);
        if (s->count == 0) {
            CHECK(bthread_mutex_unlock(&s->m) == 0);
            break;
        }
        const int v = s->buf[s->head];
        s->head = (s->head + 1) % PC_CAP;
        s->count--;
        CHECK(bthread_cond_signal(&s->not_full) == 0);
        CHECK(bthread_mutex_unlock(&s->m) == 0);
        CHECK(v >= 1 && v <= PC_ITEMS);
        if (v >= 1 && v <= PC_ITEMS) /* relaxed: checked after join */
            atomic_fetch_add_explicit(&s->seen[v - 1], 1, memory_order_relaxed);
        sum += (uint64_t)v;
        n++;
    }
    atomic_fetch_add_explicit(&s->sum, sum, memory_order_relaxed); /* after join */
    atomic_fetch_add_explicit(&s->consumed, n, memory_order_relaxed);
    return NULL;
}

static void *pc_role(void *p)
{
    return ((pc_arg_t *)p)->id < PC_PRODUCERS ? pc_producer(p) : pc_consumer(p);
}

Test(sync, cond_producer_consumer_checksum, .timeout = 60)
{
    pc_shared_t *s = calloc(1, sizeof *s);
    cr_assert(s);
    cr_assert_eq(bthread_mutex_init(&s->m, NULL), 0);
    cr_assert_eq(bthread_cond_init(&s->not_empty, NULL), 0);
    cr_assert_eq(bthread_cond_init(&s->not_full, NULL), 0);
    /* Roles by index: run_mixed starts bthreads first.  bthreads: producer 0, consumers;
     * pthreads: producer 1, a consumer.  Ids 0..1 produce, 2..4 consume. */
    pc_arg_t args[5] = {{s, 0}, {s, 2}, {s, 3}, {s, 1}, {s, 4}};
    run_mixed(3, 2, pc_role, args, sizeof args[0]);
    assert_no_failures();
    cr_assert_eq(s->consumed, PC_ITEMS);
    cr_assert_eq(s->sum, (uint64_t)PC_ITEMS * (PC_ITEMS + 1) / 2);
    for (int i = 0; i < PC_ITEMS; i++)
        cr_assert_eq(s->seen[i], 1, "item %d consumed %d times", i + 1, s->seen[i]);
    cr_assert_eq(bthread_cond_destroy(&s->not_full), 0);
    cr_assert_eq(bthread_cond_destroy(&s->not_empty), 0);
    cr_assert_eq(bthread_mutex_destroy(&s->m), 0);
    free(s);
}

#define BC_BTHREADS 40
#define BC_PTHREADS 4
#define BC_ROUNDS 20

typedef struct bc_shared {
    bthread_mutex_t m;
    bthread_cond_t c;
    int arrived, generation, woke;
} bc_shared_t;

static void *bc_waiter(void *p)
{
    bc_shared_t *s = *(bc_shared_t **)p;
    CHECK(bthread_mutex_lock(&s->m) == 0);
    s->arrived++;
    const int gen = s->generation;
    while (s->generation == gen)
        CHECK(bthread_cond_wait(&s->c, &s->m) == 0);
    s->woke++;
    CHECK(bthread_mutex_unlock(&s->m) == 0);
    return NULL;
}

/* One broadcast wakes every waiter (requeued onto the mutex, woken one by one). */
Test(sync, cond_broadcast_wakes_all, .timeout = 60)
{
    bc_shared_t s = {0};
    cr_assert_eq(bthread_mutex_init(&s.m, NULL), 0);
    cr_assert_eq(bthread_cond_init(&s.c, NULL), 0);
    bc_shared_t *argv[BC_BTHREADS + BC_PTHREADS];
    for (int i = 0; i < BC_BTHREADS + BC_PTHREADS; i++)
        argv[i] = &s;
    for (int round = 0; round < BC_ROUNDS; round++) {
        bthread_t bt[BC_BTHREADS];
        pthread_t pt[BC_PTHREADS];
        for (int i = 0; i < BC_BTHREADS; i++)
            cr_assert_eq(bthread_start_background(&bt[i], NULL, bc_waiter, &argv[i]), 0);
        for (int i = 0; i < BC_PTHREADS; i++)
            cr_assert_eq(pthread_create(&pt[i], NULL, bc_waiter, &argv[i]), 0);
        /* Once all have arrived (under the mutex), all are inside cond_wait. */
        for (;;) {
            cr_assert_eq(bthread_mutex_lock(&s.m), 0);
            if (s.arrived == (round + 1) * (BC_BTHREADS + BC_PTHREADS))
                break;
            cr_assert_eq(bthread_mutex_unlock(&s.m), 0);
            bthread_usleep(1000);
        }
        s.generation++;
        cr_assert_eq(bthread_cond_broadcast(&s.c), 0); /* exactly one broadcast */
        cr_assert_eq(bthread_mutex_unlock(&s.m), 0);
        for (int i = 0; i < BC_BTHREADS; i++)
            cr_assert_eq(bthread_join(bt[i], NULL), 0);
        for (int i = 0; i < BC_PTHREADS; i++)
            cr_assert_eq(pthread_join(pt[i], NULL), 0);
        cr_assert_eq(s.woke, (round + 1) * (BC_BTHREADS + BC_PTHREADS));
    }
    assert_no_failures();
    cr_assert_eq(bthread_cond_destroy(&s.c), 0);
    cr_assert_eq(bthread_mutex_destroy(&s.m), 0);
}

static void *cond_timed_semantics(void *unused)
{
    (void)unused;
    bthread_mutex_t m, other;
    bthread_cond_t c;
    CHECK(bthread_mutex_init(&m, NULL) == 0);
    CHECK(bthread_mutex_init(&other, NULL) == 0);
    CHECK(bthread_cond_init(&c, NULL) == 0);
    CHECK(bthread_mutex_lock(&m) == 0);
    struct timespec dl = deadline_in_ms(50);
    CHECK(bthread_cond_timedwait(&c, &m, &dl) == ETIMEDOUT);
    CHECK(ended_in_bound(&dl));
    CHECK(bthread_mutex_trylock(&m) == EBUSY); /* re-locked on return */
    dl = deadline_in_ms(-5);
    CHECK(bthread_cond_timedwait(&c, &m, &dl) == ETIMEDOUT);
    CHECK(ended_in_bound(&dl));
    CHECK(bthread_mutex_unlock(&m) == 0);
    /* The cond is bound to m by its first wait: another mutex is refused. */
    CHECK(bthread_mutex_lock(&other) == 0);
    dl = deadline_in_ms(50);
    CHECK(bthread_cond_timedwait(&c, &other, &dl) == EINVAL);
    CHECK(bthread_mutex_unlock(&other) == 0);
    /* Waiting without holding the mutex is refused. */
    CHECK(bthread_cond_timedwait(&c, &m, &dl) == EPERM);
    CHECK(bthread_cond_destroy(&c) == 0);
    CHECK(bthread_mutex_destroy(&other) == 0);
    CHECK(bthread_mutex_destroy(&m) == 0);
    return NULL;
}

Test(sync, cond_timedwait_times_out, .timeout = 20)
{
    cond_timed_semantics(NULL);
    in_bthread(cond_timed_semantics, NULL);
    assert_no_failures();
}

typedef struct cs_shared {
    bthread_mutex_t m;
    bthread_cond_t c;
    int flag;
} cs_shared_t;

static void *cs_signaller(void *p)
{
    cs_shared_t *s = p;
    bthread_usleep(20000);
    CHECK(bthread_mutex_lock(&s->m) == 0);
    s->flag = 1;
    CHECK(bthread_cond_signal(&s->c) == 0);
    CHECK(bthread_mutex_unlock(&s->m) == 0);
    return NULL;
}

static void *cs_waiter(void *p)
{
    cs_shared_t *s = p;
    const struct timespec dl = deadline_in_ms(10000);
    CHECK(bthread_mutex_lock(&s->m) == 0);
    while (!s->flag) {
        const int rc = bthread_cond_timedwait(&s->c, &s->m, &dl);
        CHECK(rc == 0);
        if (rc)
            break;
    }
    CHECK(bthread_mutex_unlock(&s->m) == 0);
    return NULL;
}

/* A timed wait that is signalled before its deadline returns 0 (bthread and pthread). */
Test(sync, cond_timedwait_signalled, .timeout = 30)
{
    for (int waiter_is_bthread = 0; waiter_is_bthread < 2; waiter_is_bthread++) {
        cs_shared_t s = {.flag = 0};
        cr_assert_eq(bthread_mutex_init(&s.m, NULL), 0);
        cr_assert_eq(bthread_cond_init(&s.c, NULL), 0);
        bthread_t b;
        pthread_t p;
        if (waiter_is_bthread) {
            cr_assert_eq(bthread_start_background(&b, NULL, cs_waiter, &s), 0);
            cr_assert_eq(pthread_create(&p, NULL, cs_signaller, &s), 0);
        } else {
            cr_assert_eq(bthread_start_background(&b, NULL, cs_signaller, &s), 0);
            cr_assert_eq(pthread_create(&p, NULL, cs_waiter, &s), 0);
        }
        cr_assert_eq(bthread_join(b, NULL), 0);
        cr_assert_eq(pthread_join(p, NULL), 0);
        cr_assert_eq(s.flag, 1);
        cr_assert_eq(bthread_cond_destroy(&s.c), 0);
        cr_assert_eq(bthread_mutex_destroy(&s.m), 0);
    }
    assert_no_failures();
}

/* ---- rwlock ---------------------------------------------------------------------- */

typedef struct rw_shared {
    bthread_rwlock_t rw;
    bthread_countdown_t all_in;
    _Atomic int readers_in, writers_in;
    long counter; /* written by writers only, under the write lock */
    int iters;
    _Atomic int writer_done;
} rw_shared_t;
typedef struct rw_arg {
    rw_shared_t *s;
    int id;
} rw_arg_t;

static void *rw_reader_meets_others(void *p)
{
    rw_shared_t *s = ((rw_arg_t *)p)->s;
    CHECK(bthread_rwlock_rdlock(&s->rw) == 0);
    /* Every reader waits, holding the read lock, until all readers hold it. */
    CHECK(bthread_countdown_signal(&s->all_in, 1) == 0);
    const struct timespec dl = deadline_in_ms(10000);
    CHECK(bthread_countdown_timedwait(&s->all_in, &dl) == 0);
    CHECK(bthread_rwlock_unlock(&s->rw) == 0);
    return NULL;
}

Test(sync, rwlock_readers_share, .timeout = 30)
{
    rw_shared_t s = {0};
    cr_assert_eq(bthread_rwlock_init(&s.rw, NULL), 0);
    cr_assert_eq(bthread_countdown_init(&s.all_in, 5), 0);
    rw_arg_t args[5];
    for (int i = 0; i < 5; i++)
        args[i] = (rw_arg_t){&s, i};
    run_mixed(4, 1, rw_reader_meets_others, args, sizeof args[0]);
    assert_no_failures();
    cr_assert_eq(bthread_rwlock_trywrlock(&s.rw), 0); /* all readers left */
    cr_assert_eq(bthread_rwlock_unlock(&s.rw), 0);
    cr_assert_eq(bthread_countdown_destroy(&s.all_in), 0);
    cr_assert_eq(bthread_rwlock_destroy(&s.rw), 0);
}

static void *rw_mixed_role(void *p)
{
    rw_arg_t *a = p;
    rw_shared_t *s = a->s;
    const int writer = a->id % 2;
    for (int i = 0; i < s->iters; i++) {
        const int how = (i + a->id) % 3; /* plain, try (spin), timed (far deadline) */
        const struct timespec dl = deadline_in_ms(60000);
        int rc;
        if (writer) {
            if (how == 0)
                rc = bthread_rwlock_wrlock(&s->rw);
            else if (how == 1)
                while ((rc = bthread_rwlock_trywrlock(&s->rw)) == EBUSY)
                    bthread_yield();
            else
                rc = bthread_rwlock_timedwrlock(&s->rw, &dl);
            CHECK(rc == 0);
            /* relaxed: occupancy counters checked for exclusion only. */
            CHECK(atomic_fetch_add_explicit(&s->writers_in, 1, memory_order_relaxed) == 0);
            CHECK(atomic_load_explicit(&s->readers_in, memory_order_relaxed) == 0);
            s->counter++;
            atomic_fetch_sub_explicit(&s->writers_in, 1, memory_order_relaxed);
        } else {
            if (how == 0)
                rc = bthread_rwlock_rdlock(&s->rw);
            else if (how == 1)
                while ((rc = bthread_rwlock_tryrdlock(&s->rw)) == EBUSY)
                    bthread_yield();
            else
                rc = bthread_rwlock_timedrdlock(&s->rw, &dl);
            CHECK(rc == 0);
            atomic_fetch_add_explicit(&s->readers_in, 1, memory_order_relaxed);
            CHECK(atomic_load_explicit(&s->writers_in, memory_order_relaxed) == 0);
            const long c1 = s->counter;
            bthread_yield(); /* stay a while: a writer must not get in meanwhile */
            CHECK(s->counter == c1);
            atomic_fetch_sub_explicit(&s->readers_in, 1, memory_order_relaxed);
        }
        CHECK(bthread_rwlock_unlock(&s->rw) == 0);
    }
    return NULL;
}

Test(sync, rwlock_writers_exclusive, .timeout = 60)
{
    rw_shared_t s = {.iters = 10000};
    cr_assert_eq(bthread_rwlock_init(&s.rw, NULL), 0);
    /* bthreads: ids 0..5 (3 writers, 3 readers); pthreads: ids 6, 7 (reader, writer). */
    rw_arg_t args[8];
    for (int i = 0; i < 8; i++)
        args[i] = (rw_arg_t){&s, i};
    run_mixed(6, 2, rw_mixed_role, args, sizeof args[0]);
    assert_no_failures();
    cr_assert_eq(s.counter, 4L * s.iters);
    cr_assert_eq(bthread_rwlock_destroy(&s.rw), 0);
}

static void *rw_semantics(void *unused)
{
    (void)unused;
    bthread_rwlock_t rw;
    CHECK(bthread_rwlock_init(&rw, NULL) == 0);
    CHECK(bthread_rwlock_tryrdlock(&rw) == 0);
    CHECK(bthread_rwlock_rdlock(&rw) == 0);
    CHECK(bthread_rwlock_trywrlock(&rw) == EBUSY);
    struct timespec dl = deadline_in_ms(50);
    CHECK(bthread_rwlock_timedwrlock(&rw, &dl) == ETIMEDOUT);
    CHECK(ended_in_bound(&dl));
    CHECK(bthread_rwlock_tryrdlock(&rw) == 0); /* the timed-out writer backed out */
    for (int i = 0; i < 3; i++)
        CHECK(bthread_rwlock_unlock(&rw) == 0);
    CHECK(bthread_rwlock_unlock(&rw) == EPERM); /* not held */
    CHECK(bthread_rwlock_trywrlock(&rw) == 0);
    CHECK(bthread_rwlock_tryrdlock(&rw) == EBUSY);
    CHECK(bthread_rwlock_trywrlock(&rw) == EBUSY);
    dl = deadline_in_ms(50);
    CHECK(bthread_rwlock_timedrdlock(&rw, &dl) == ETIMEDOUT);
    CHECK(ended_in_bound(&dl));
    dl = deadline_in_ms(50);
    CHECK(bthread_rwlock_timedwrlock(&rw, &dl) == ETIMEDOUT);
    CHECK(ended_in_bound(&dl));
    CHECK(bthread_rwlock_unlock(&rw) == 0);
    CHECK(bthread_rwlock_rdlock(&rw) == 0);
    CHECK(bthread_rwlock_unlock(&rw) == 0);
    CHECK(bthread_rwlock_destroy(&rw) == 0);
    return NULL;
}

Test(sync, rwlock_try_and_timed, .timeout = 20)
{
    rw_semantics(NULL);
    in_bthread(rw_semantics, NULL);
    assert_no_failures();
}

static void *rw_writer_once(void *p)
{
    rw_shared_t *s = p;
    CHECK(bthread_rwlock_wrlock(&s->rw) == 0);
    atomic_store_explicit(&s->writer_done, 1, memory_order_relaxed); /* read after join */
    CHECK(bthread_rwlock_unlock(&s->rw) == 0);
    return NULL;
}

/* Writer preference: once a writer waits, new readers are turned away. */
Test(sync, rwlock_waiting_writer_blocks_new_readers, .timeout = 20)
{
    rw_shared_t s = {0};
    cr_assert_eq(bthread_rwlock_init(&s.rw, NULL), 0);
    cr_assert_eq(bthread_rwlock_rdlock(&s.rw), 0);
    bthread_t w;
    cr_assert_eq(bthread_start_background(&w, NULL, rw_writer_once, &s), 0);
    int turned_away = 0;
    for (int i = 0; i < 2000 && !turned_away; i++) {
        const int rc = bthread_rwlock_tryrdlock(&s.rw);
        if (rc == EBUSY)
            turned_away = 1;
        else {
            cr_assert_eq(rc, 0);
            cr_assert_eq(bthread_rwlock_unlock(&s.rw), 0);
            bthread_usleep(1000);
        }
    }
    cr_assert(turned_away, "a waiting writer did not block new readers within 2 s");
    cr_assert_eq(atomic_load_explicit(&s.writer_done, memory_order_relaxed), 0);
    cr_assert_eq(bthread_rwlock_unlock(&s.rw), 0);
    cr_assert_eq(bthread_join(w, NULL), 0);
    cr_assert_eq(atomic_load_explicit(&s.writer_done, memory_order_relaxed), 1);
    assert_no_failures();
    cr_assert_eq(bthread_rwlock_destroy(&s.rw), 0);
}

/* ---- semaphore ------------------------------------------------------------------- */

static void *sem_semantics(void *unused)
{
    (void)unused;
    bthread_sem_t s;
    CHECK(bthread_sem_init(&s, 3) == 0);
    for (int i = 0; i < 3; i++)
        CHECK(bthread_sem_trywait(&s) == 0);
    CHECK(bthread_sem_trywait(&s) == EAGAIN);
    CHECK(bthread_sem_post_n(&s, 2) == 0);
    CHECK(bthread_sem_wait(&s) == 0);
    CHECK(bthread_sem_trywait(&s) == 0);
    CHECK(bthread_sem_trywait(&s) == EAGAIN);
    struct timespec dl = deadline_in_ms(50);
    CHECK(bthread_sem_timedwait(&s, &dl) == ETIMEDOUT);
    CHECK(ended_in_bound(&dl));
    CHECK(bthread_sem_post(&s) == 0);
    dl = deadline_in_ms(-5);
    CHECK(bthread_sem_timedwait(&s, &dl) == 0); /* a token: no wait, no timeout */
    CHECK(bthread_sem_destroy(&s) == 0);
    CHECK(bthread_sem_init(&s, 1u << 30) == EINVAL); /* above the maximum count */
    return NULL;
}

Test(sync, sem_counts, .timeout = 20)
{
    sem_semantics(NULL);
    in_bthread(sem_semantics, NULL);
    assert_no_failures();
}

#define SEM_TAKERS 6 /* 4 bthreads + 2 pthreads */
#define SEM_TAKES 5000

typedef struct sem_shared {
    bthread_sem_t s;
    _Atomic int taken;
} sem_shared_t;

static void *sem_taker(void *p)
{
    sem_shared_t *s = *(sem_shared_t **)p;
    for (int i = 0; i < SEM_TAKES; i++) {
        CHECK(bthread_sem_wait(&s->s) == 0);
        atomic_fetch_add_explicit(&s->taken, 1, memory_order_relaxed); /* after join */
    }
    return NULL;
}

static void *sem_poster(void *p)
{
    sem_shared_t *s = *(sem_shared_t **)p;
    int posted = 0, k = 0;
    while (posted < SEM_TAKERS * SEM_TAKES) {
        const int n = (k++ % 4 == 0 && posted + 3 <= SEM_TAKERS * SEM_TAKES) ? 3 : 1;
        CHECK((n == 1 ? bthread_sem_post(&s->s) : bthread_sem_post_n(&s->s, 3)) == 0);
        posted += n;
        if (k % 64 == 0)
            bthread_yield();
    }
    return NULL;
}

Test(sync, sem_every_token_taken_once, .timeout = 60)
{
    sem_shared_t s = {0};
    cr_assert_eq(bthread_sem_init(&s.s, 0), 0);
    sem_shared_t *argv[SEM_TAKERS];
    bthread_t bt[4];
    pthread_t pt[2], poster;
    for (int i = 0; i < SEM_TAKERS; i++)
        argv[i] = &s;
    for (int i = 0; i < 4; i++)
        cr_assert_eq(bthread_start_background(&bt[i], NULL, sem_taker, &argv[i]), 0);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(pthread_create(&pt[i], NULL, sem_taker, &argv[4 + i]), 0);
    cr_assert_eq(pthread_create(&poster, NULL, sem_poster, &argv[0]), 0);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(bthread_join(bt[i], NULL), 0);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(pthread_join(pt[i], NULL), 0);
    cr_assert_eq(pthread_join(poster, NULL), 0);
    assert_no_failures();
    cr_assert_eq(s.taken, SEM_TAKERS * SEM_TAKES);
    cr_assert_eq(bthread_sem_trywait(&s.s), EAGAIN); /* not one token too many */
    cr_assert_eq(bthread_sem_destroy(&s.s), 0);
}

#define BURST_SLEEPERS 10 /* 8 bthreads + 2 pthreads */
#define BURST_ROUNDS 20

static void *sem_burst_sleeper(void *p)
{
    sem_shared_t *s = *(sem_shared_t **)p;
    CHECK(bthread_sem_wait(&s->s) == 0);
    atomic_fetch_add_explicit(&s->taken, 1, memory_order_relaxed); /* after join */
    return NULL;
}

/* All takers asleep, then single posts in a burst: the first post wakes one sleeper and
 * clears the waiters mark, so the later posts must still reach the other sleepers
 * (a semaphore that wakes only on the mark strands tokens here and hangs). */
Test(sync, sem_burst_of_posts_wakes_every_sleeper, .timeout = 60)
{
    sem_shared_t s = {0};
    cr_assert_eq(bthread_sem_init(&s.s, 0), 0);
    sem_shared_t *argv[BURST_SLEEPERS];
    for (int i = 0; i < BURST_SLEEPERS; i++)
        argv[i] = &s;
    for (int round = 0; round < BURST_ROUNDS; round++) {
        bthread_t bt[8];
        pthread_t pt[2];
        for (int i = 0; i < 8; i++)
            cr_assert_eq(bthread_start_background(&bt[i], NULL, sem_burst_sleeper, &argv[i]),
                         0);
        for (int i = 0; i < 2; i++)
            cr_assert_eq(pthread_create(&pt[i], NULL, sem_burst_sleeper, &argv[8 + i]), 0);
        bthread_usleep(20000); /* let them all fall asleep */
        for (int i = 0; i < BURST_SLEEPERS; i++)
            cr_assert_eq(bthread_sem_post(&s.s), 0);
        for (int i = 0; i < 8; i++)
            cr_assert_eq(bthread_join(bt[i], NULL), 0);
        for (int i = 0; i < 2; i++)
            cr_assert_eq(pthread_join(pt[i], NULL), 0);
        cr_assert_eq(s.taken, (round + 1) * BURST_SLEEPERS);
        cr_assert_eq(bthread_sem_trywait(&s.s), EAGAIN);
    }
    assert_no_failures();
    cr_assert_eq(bthread_sem_destroy(&s.s), 0);
}

/* ---- countdown ------------------------------------------------------------------- */

typedef struct cd_shared {
    bthread_countdown_t c;
    _Atomic int signalled, returned;
} cd_shared_t;

static void *cd_waiter(void *p)
{
    cd_shared_t *s = *(cd_shared_t **)p;
    CHECK(bthread_countdown_wait(&s->c) == 0);
    /* acquire: pairs with the signallers' release increments below. */
    CHECK(atomic_load_explicit(&s->signalled, memory_order_acquire) == 3);
    atomic_fetch_add_explicit(&s->returned, 1, memory_order_relaxed); /* after join */
    return NULL;
}

static void *cd_signaller(void *p)
{
    cd_shared_t *s = *(cd_shared_t **)p;
    bthread_usleep(10000);
    /* release: ordered before the countdown's own release in signal. */
    atomic_fetch_add_explicit(&s->signalled, 1, memory_order_release);
    CHECK(bthread_countdown_signal(&s->c, 1) == 0);
    return NULL;
}

static void *cd_role(void *p)
{
    cd_shared_t **a = p;
    return (a[1] != NULL) ? cd_signaller(p) : cd_waiter(p);
}

Test(sync, countdown, .timeout = 30)
{
    cd_shared_t s = {0};
    cr_assert_eq(bthread_countdown_init(&s.c, 3), 0);
    struct timespec dl = deadline_in_ms(50);
    cr_assert_eq(bthread_countdown_timedwait(&s.c, &dl), ETIMEDOUT);
    cr_assert(ended_in_bound(&dl));
    /* args are pairs {shared, role}: role non-NULL = signaller.  Bthreads: 4 waiters,
     * 2 signallers; pthreads: 1 waiter, 1 signaller. */
    cd_shared_t *args[8][2] = {{&s, NULL}, {&s, NULL}, {&s, NULL}, {&s, NULL},
                               {&s, &s},   {&s, &s},   {&s, NULL}, {&s, &s}};
    run_mixed(6, 2, cd_role, args, sizeof args[0]);
    assert_no_failures();
    cr_assert_eq(s.returned, 5);
    cr_assert_eq(bthread_countdown_wait(&s.c), 0); /* at 0: returns at once */
    cr_assert_eq(bthread_countdown_add_count(&s.c, 2), 0);
    dl = deadline_in_ms(-5);
    cr_assert_eq(bthread_countdown_timedwait(&s.c, &dl), ETIMEDOUT);
    cr_assert_eq(bthread_countdown_signal(&s.c, 2), 0);
    cr_assert_eq(bthread_countdown_timedwait(&s.c, &dl), 0);
    cr_assert_eq(bthread_countdown_signal(&s.c, -1), EINVAL);
    cr_assert_eq(bthread_countdown_add_count(&s.c, -1), EINVAL);
    cr_assert_eq(bthread_countdown_destroy(&s.c), 0);
    cr_assert_eq(bthread_countdown_init(&s.c, -1), EINVAL);
}

/* ---- lost wake-up stress --------------------------------------------------------- */

/* Ping-pong: two parties take turns through one mutex and two conds.  Every turn is a
 * hand-off the other side sleeps for (or, racing, finds already done), so a lost wake-up
 * hangs the test (bounded by .timeout).  Several pairs at once keep both workers busy,
 * so most hand-offs go through the wait/wake path at its cheapest: that is how the
 * suite reaches millions of wait/wake pairs in a few seconds.  The single pairs are the slow,
 * truly cross-thread kind (a parked worker or a futex on every hand-off). */
typedef struct pp_pair {
    bthread_mutex_t m;
    bthread_cond_t c[2];
    int turn;
    long rounds;
    long waits[2]; /* cond_wait calls, per side (under m) */
} pp_pair_t;
typedef struct pp_arg {
    pp_pair_t *s;
    int side;
} pp_arg_t;

static void *pp_side(void *p)
{
    pp_arg_t *a = p;
    pp_pair_t *s = a->s;
    const int me = a->side;
    for (long i = 0; i < s->rounds; i++) {
        CHECK(bthread_mutex_lock(&s->m) == 0);
        while (s->turn != me) {
            CHECK(bthread_cond_wait(&s->c[me], &s->m) == 0);
            s->waits[me]++;
        }
        s->turn = !me;
        CHECK(bthread_cond_signal(&s->c[!me]) == 0);
        CHECK(bthread_mutex_unlock(&s->m) == 0);
    }
    return NULL;
}

/* npairs pairs; in each pair side 1 is a pthread if `side1_pthread`.  Returns the
 * number of cond waits. */
static long ping_pong(int npairs, int side1_pthread, long rounds)
{
    pp_pair_t *pairs = calloc((size_t)npairs, sizeof *pairs);
    pp_arg_t *args = calloc((size_t)npairs * 2, sizeof *args);
    bthread_t *bt = calloc((size_t)npairs * 2, sizeof *bt);
    pthread_t *pt = calloc((size_t)npairs, sizeof *pt);
    cr_assert(pairs && args && bt && pt);
    for (int i = 0; i < npairs; i++) {
        pairs[i].rounds = rounds;
        cr_assert_eq(bthread_mutex_init(&pairs[i].m, NULL), 0);
        cr_assert_eq(bthread_cond_init(&pairs[i].c[0], NULL), 0);
        cr_assert_eq(bthread_cond_init(&pairs[i].c[1], NULL), 0);
    }
    for (int i = 0; i < npairs * 2; i++) {
        args[i] = (pp_arg_t){&pairs[i / 2], i % 2};
        if (i % 2 && side1_pthread)
            cr_assert_eq(pthread_create(&pt[i / 2], NULL, pp_side, &args[i]), 0);
        else
            cr_assert_eq(bthread_start_background(&bt[i], NULL, pp_side, &args[i]), 0);
    }
    for (int i = 0; i < npairs * 2; i++) {
        if (i % 2 && side1_pthread)
            cr_assert_eq(pthread_join(pt[i / 2], NULL), 0);
        else
            cr_assert_eq(bthread_join(bt[i], NULL), 0);
    }
    assert_no_failures();
    long waits = 0;
    for (int i = 0; i < npairs; i++) {
        cr_assert_eq(pairs[i].turn, 0); /* 2 * rounds hand-offs, an even number */
        waits += pairs[i].waits[0] + pairs[i].waits[1];
        cr_assert_eq(bthread_cond_destroy(&pairs[i].c[1]), 0);
        cr_assert_eq(bthread_cond_destroy(&pairs[i].c[0]), 0);
        cr_assert_eq(bthread_mutex_destroy(&pairs[i].m), 0);
    }
    free(pt);
    free(bt);
    free(args);
    free(pairs);
    return waits;
}

Test(sync, stress_pingpong_bthread_pthread, .timeout = 120)
{
    const long rounds = sb_rounds(100000, 20000); /* fewer under an emulator (sbtest.h) */
    const long waits = ping_pong(1, 1, rounds);
    cr_log_info("ping-pong bthread<->pthread: %ld hand-offs, %ld cond waits\n", 2 * rounds,
                waits);
}

Test(sync, stress_pingpong_bthread_bthread, .timeout = 120)
{
    const long rounds = sb_rounds(200000, 40000); /* fewer under an emulator (sbtest.h) */
    const long waits = ping_pong(1, 0, rounds);
    cr_log_info("ping-pong bthread<->bthread: %ld hand-offs, %ld cond waits\n", 2 * rounds,
                waits);
}

/* 4 * 10^6 hand-offs; SB_STRESS_ITEMS overrides the count (the TSan build sets it
 * lower).  1-10 s on an idle 2-core machine, the slowest variants under the load of two
 * busy jobs about 25 times that (10^7 took 101 s of its 120 s there): sized to stay well
 * inside the timeout on a loaded machine. */
static long stress_handoffs(void)
{
    const char *e = getenv("SB_STRESS_ITEMS");
    const long n = e ? strtol(e, NULL, 0) : 4000000L;
    return n > 16 ? n : 16;
}

Test(sync, stress_pingpong_4M_handoffs, .timeout = 300)
{
    const int npairs = 8;
    const long rounds = stress_handoffs() / (2 * npairs); /* 250000 by default */
    const long waits = ping_pong(npairs, 0, rounds);
    cr_log_info("ping-pong %d bthread pairs: %ld hand-offs, %ld cond waits\n", npairs,
                2 * npairs * rounds, waits);
    /* Not a speed check: with 16 bthreads on 2 workers a side can only find its turn
     * already taken if the other side ran in between, so most hand-offs must wait. */
    cr_assert_geq(waits, npairs * rounds, "only %ld of %ld hand-offs waited", waits,
                  2 * npairs * rounds);
}

/* Timeouts and interrupts racing wakes.  Items go through a mutex+cond queue and a
 * semaphore.  "Strict" consumers wait without deadline and are never interrupted: if
 * a timed-out or interrupted waiter swallowed the wake meant for them, they would hang.
 * "Noisy" consumers wait with deadlines of 0-50 us and are interrupted at random. */
#define RACE_ITEMS 200000
#define RACE_STRICT 2 /* bthreads */
#define RACE_NOISY 2  /* bthreads */

typedef struct race_shared {
    bthread_mutex_t m;
    bthread_cond_t c;
    bthread_sem_t sem;
    long queued;     /* items put and not yet taken, under m */
    long produced;   /* under m */
    int done;        /* producers finished, under m */
    _Atomic long taken_cond, taken_sem;
    _Atomic long timeouts, interrupts_seen;
    _Atomic int stop_interrupter;
    bthread_t noisy[RACE_NOISY];
    _Atomic long interrupts_sent;
} race_shared_t;
typedef struct race_arg {
    race_shared_t *s;
    int id;
} race_arg_t;

static void *race_producer(void *p)
{
    race_shared_t *s = ((race_arg_t *)p)->s;
    uint64_t rnd = 88172645463325252ull + (uint64_t)((race_arg_t *)p)->id;
    for (int i = 0; i < RACE_ITEMS / 2; i++) {
        CHECK(bthread_mutex_lock(&s->m) == 0);
        s->queued++;
        s->produced++;
        CHECK(bthread_cond_signal(&s->c) == 0);
        CHECK(bthread_mutex_unlock(&s->m) == 0);
        CHECK(bthread_sem_post(&s->sem) == 0);
        if (xorshift(&rnd) % 8 == 0)
            bthread_yield();
    }
    CHECK(bthread_mutex_lock(&s->m) == 0);
    s->done++;
    CHECK(bthread_cond_broadcast(&s->c) == 0);
    CHECK(bthread_mutex_unlock(&s->m) == 0);
    return NULL;
}

static void *race_consumer(void *p)
{
    race_arg_t *a = p;
    race_shared_t *s = a->s;
    const int noisy = a->id >= RACE_STRICT;
    uint64_t rnd = 0x9E3779B97F4A7C15ull * (uint64_t)(a->id + 1);
    for (;;) {
        /* One item from the cond queue. */
        CHECK(bthread_mutex_lock(&s->m) == 0);
        while (s->queued == 0 && s->done < 2) {
            if (noisy) {
                const struct timespec dl = deadline_in_us((int64_t)(xorshift(&rnd) % 50));
                const int rc = bthread_cond_timedwait(&s->c, &s->m, &dl);
                CHECK(rc == 0 || rc == ETIMEDOUT);
                if (rc == ETIMEDOUT) /* relaxed: statistics, read after join */
                    atomic_fetch_add_explicit(&s->timeouts, 1, memory_order_relaxed);
            } else {
                CHECK(bthread_cond_wait(&s->c, &s->m) == 0);
            }
        }
        const int got = s->queued > 0;
        if (got)
            s->queued--;
        CHECK(bthread_mutex_unlock(&s->m) == 0);
        if (!got)
            break;
        atomic_fetch_add_explicit(&s->taken_cond, 1, memory_order_relaxed); /* stats */
        /* And one token from the semaphore (each item posted exactly one). */
        if (noisy) {
            int rc;
            do {
                const struct timespec dl = deadline_in_us((int64_t)(xorshift(&rnd) % 50));
                rc = bthread_sem_timedwait(&s->sem, &dl);
                CHECK(rc == 0 || rc == ETIMEDOUT);
            } while (rc == ETIMEDOUT);
        } else {
            CHECK(bthread_sem_wait(&s->sem) == 0);
        }
        atomic_fetch_add_explicit(&s->taken_sem, 1, memory_order_relaxed); /* stats */
    }
    return NULL;
}

static void *race_interrupter(void *p)
{
    race_shared_t *s = p;
    uint64_t rnd = 2463534242ull;
    /* relaxed: a stop flag; the join orders everything else. */
    while (!atomic_load_explicit(&s->stop_interrupter, memory_order_relaxed)) {
        bthread_interrupt(s->noisy[xorshift(&rnd) % RACE_NOISY]);
        atomic_fetch_add_explicit(&s->interrupts_sent, 1, memory_order_relaxed);
        usleep(50); /* do not take a whole core of this 2-core machine */
    }
    return NULL;
}

Test(sync, stress_timeouts_and_interrupts_race_wakes, .timeout = 120)
{
    race_shared_t *s = calloc(1, sizeof *s);
    cr_assert(s);
    cr_assert_eq(bthread_mutex_init(&s->m, NULL), 0);
    cr_assert_eq(bthread_cond_init(&s->c, NULL), 0);
    cr_assert_eq(bthread_sem_init(&s->sem, 0), 0);
    race_arg_t cargs[RACE_STRICT + RACE_NOISY], pargs[2] = {{s, 1}, {s, 2}};
    bthread_t consumers[RACE_STRICT + RACE_NOISY], producer_b;
    pthread_t producer_p, interrupter;
    for (int i = 0; i < RACE_STRICT + RACE_NOISY; i++) {
        cargs[i] = (race_arg_t){s, i};
        cr_assert_eq(bthread_start_background(&consumers[i], NULL, race_consumer, &cargs[i]),
                     0);
        if (i >= RACE_STRICT)
            s->noisy[i - RACE_STRICT] = consumers[i];
    }
    cr_assert_eq(pthread_create(&interrupter, NULL, race_interrupter, s), 0);
    cr_assert_eq(bthread_start_background(&producer_b, NULL, race_producer, &pargs[0]), 0);
    cr_assert_eq(pthread_create(&producer_p, NULL, race_producer, &pargs[1]), 0);
    cr_assert_eq(bthread_join(producer_b, NULL), 0);
    cr_assert_eq(pthread_join(producer_p, NULL), 0);
    for (int i = 0; i < RACE_STRICT + RACE_NOISY; i++)
        cr_assert_eq(bthread_join(consumers[i], NULL), 0);
    atomic_store_explicit(&s->stop_interrupter, 1, memory_order_relaxed);
    cr_assert_eq(pthread_join(interrupter, NULL), 0);
    assert_no_failures();
    cr_assert_eq(s->produced, RACE_ITEMS);
    cr_assert_eq(s->taken_cond, RACE_ITEMS);
    cr_assert_eq(s->taken_sem, RACE_ITEMS);
    cr_assert_eq(bthread_sem_trywait(&s->sem), EAGAIN);
    cr_log_info("race: %d items via cond and sem, %ld timeouts, %ld interrupts sent\n",
                RACE_ITEMS, (long)s->timeouts, (long)s->interrupts_sent);
    cr_assert_eq(bthread_sem_destroy(&s->sem), 0);
    cr_assert_eq(bthread_cond_destroy(&s->c), 0);
    cr_assert_eq(bthread_mutex_destroy(&s->m), 0);
    free(s);
}

/* Mutex lockers interrupted at random and timing out at random, beside strict lockers:
 * exclusion and the exact count must survive, and nobody may be left asleep. */
typedef struct mr_shared {
    bthread_mutex_t m;
    long counter;
    _Atomic int inside;
    _Atomic long acquired, timeouts;
    _Atomic int stop;
    bthread_t victims[4];
} mr_shared_t;
typedef struct mr_arg {
    mr_shared_t *s;
    int id;
} mr_arg_t;

#define MR_ITERS 50000

static void *mr_locker(void *p)
{
    mr_arg_t *a = p;
    mr_shared_t *s = a->s;
    uint64_t rnd = 0x2545F4914F6CDD1Dull * (uint64_t)(a->id + 1);
    for (int i = 0; i < MR_ITERS; i++) {
        if (a->id % 2) { /* timed, with deadlines of 0-30 us: retry until acquired */
            int rc;
            for (;;) {
                const struct timespec dl = deadline_in_us((int64_t)(xorshift(&rnd) % 30));
                rc = bthread_mutex_timedlock(&s->m, &dl);
                if (rc != ETIMEDOUT)
                    break;
                atomic_fetch_add_explicit(&s->timeouts, 1, memory_order_relaxed); /* stats */
            }
            CHECK(rc == 0);
        } else {
            CHECK(bthread_mutex_lock(&s->m) == 0);
        }
        /* relaxed: occupancy counter for the exclusion check only. */
        CHECK(atomic_fetch_add_explicit(&s->inside, 1, memory_order_relaxed) == 0);
        s->counter++;
        if (xorshift(&rnd) % 16 == 0)
            bthread_yield(); /* hold it a while so that others queue up */
        atomic_fetch_sub_explicit(&s->inside, 1, memory_order_relaxed);
        CHECK(bthread_mutex_unlock(&s->m) == 0);
    }
    return NULL;
}

static void *mr_interrupter(void *p)
{
    mr_shared_t *s = p;
    uint64_t rnd = 88172645463325252ull;
    while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) { /* relaxed: a flag */
        bthread_interrupt(s->victims[xorshift(&rnd) % 4]);
        usleep(50); /* do not take a whole core of this 2-core machine */
    }
    return NULL;
}

Test(sync, stress_mutex_timeouts_and_interrupts, .timeout = 120)
{
    mr_shared_t s = {0};
    cr_assert_eq(bthread_mutex_init(&s.m, NULL), 0);
    mr_arg_t args[6];
    bthread_t bt[4];
    pthread_t pt[2], intr;
    for (int i = 0; i < 6; i++)
        args[i] = (mr_arg_t){&s, i};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(bthread_start_background(&bt[i], NULL, mr_locker, &args[i]), 0);
        s.victims[i] = bt[i];
    }
    for (int i = 0; i < 2; i++)
        cr_assert_eq(pthread_create(&pt[i], NULL, mr_locker, &args[4 + i]), 0);
    cr_assert_eq(pthread_create(&intr, NULL, mr_interrupter, &s), 0);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(bthread_join(bt[i], NULL), 0);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(pthread_join(pt[i], NULL), 0);
    atomic_store_explicit(&s.stop, 1, memory_order_relaxed);
    cr_assert_eq(pthread_join(intr, NULL), 0);
    assert_no_failures();
    cr_assert_eq(s.counter, 6L * MR_ITERS);
    cr_assert_eq(bthread_mutex_trylock(&s.m), 0); /* left unlocked */
    cr_assert_eq(bthread_mutex_unlock(&s.m), 0);
    cr_log_info("mutex race: %ld acquisitions, %ld timeouts\n", 6L * MR_ITERS,
                (long)s.timeouts);
    cr_assert_eq(bthread_mutex_destroy(&s.m), 0);
}

/* ---- destroying what is held or waited on ------------------------------------------ */

typedef struct misuse {
    bthread_mutex_t m;
    bthread_cond_t c;
    int rc;
} misuse_t;

static void *timed_cond_waiter(void *p)
{
    misuse_t *s = p;
    const struct timespec dl = deadline_in_ms(300);
    CHECK(bthread_mutex_lock(&s->m) == 0);
    s->rc = bthread_cond_timedwait(&s->c, &s->m, &dl);
    CHECK(bthread_mutex_unlock(&s->m) == 0);
    return NULL;
}

typedef struct innocent {
    bthread_mutex_t *m;
    int rc;
} innocent_t;

static void *innocent_locker(void *p)
{
    innocent_t *a = p;
    const struct timespec dl = deadline_in_ms(10000);
    a->rc = bthread_mutex_timedlock(a->m, &dl);
    if (a->rc == 0)
        CHECK(bthread_mutex_unlock(a->m) == 0);
    return NULL;
}

static void wait_queued(void *butex)
{
    while (!butex_waiting(butex))
        usleep(1000); /* bounded by the test's timeout */
}

/* A cond destroyed under a timed waiter: refused (EBUSY), so its wait object is not
 * recycled into the next mutex made, where the waiter's timeout unlinked it from that
 * mutex's list and an innocent waiter there was never woken (reproduced before the
 * check: the innocent lock timed out).  Then a held mutex with a waiter. */
static void cond_destroyed_under_a_timed_waiter(int waiter_is_bthread)
{
    misuse_t s;
    CHECK(bthread_mutex_init(&s.m, NULL) == 0);
    CHECK(bthread_cond_init(&s.c, NULL) == 0);
    bthread_t wb;
    pthread_t wp;
    if (waiter_is_bthread)
        CHECK(bthread_start_background(&wb, NULL, timed_cond_waiter, &s) == 0);
    else
        CHECK(pthread_create(&wp, NULL, timed_cond_waiter, &s) == 0);
    wait_queued(s.c.seq);
    CHECK(bthread_cond_destroy(&s.c) == EBUSY);
    bthread_mutex_t m2; /* takes the memory a wrongly destroyed cond would have freed */
    CHECK(bthread_mutex_init(&m2, NULL) == 0);
    CHECK(bthread_mutex_lock(&m2) == 0);
    innocent_t in = {.m = &m2};
    bthread_t ib;
    CHECK(bthread_start_background(&ib, NULL, innocent_locker, &in) == 0);
    wait_queued(m2.butex);
    if (waiter_is_bthread)
        CHECK(bthread_join(wb, NULL) == 0); /* it times out meanwhile */
    else
        CHECK(pthread_join(wp, NULL) == 0);
    CHECK(s.rc == ETIMEDOUT);
    CHECK(bthread_mutex_destroy(&m2) == EBUSY); /* locked, with a waiter */
    CHECK(bthread_mutex_unlock(&m2) == 0);
    CHECK(bthread_join(ib, NULL) == 0);
    CHECK(in.rc == 0);
    CHECK(bthread_mutex_destroy(&m2) == 0);
    CHECK(bthread_cond_destroy(&s.c) == 0);
    CHECK(bthread_mutex_destroy(&s.m) == 0);
}

typedef struct sem_waiter_arg {
    bthread_sem_t *s;
    bthread_countdown_t *c;
} sem_waiter_arg_t;

static void *sem_then_countdown_waiter(void *p)
{
    sem_waiter_arg_t *a = p;
    CHECK(bthread_sem_wait(a->s) == 0);
    CHECK(bthread_countdown_wait(a->c) == 0);
    return NULL;
}

Test(sync, destroying_a_held_or_waited_on_primitive_is_refused, .timeout = 60)
{
    cond_destroyed_under_a_timed_waiter(1);
    cond_destroyed_under_a_timed_waiter(0);
    /* a locked mutex, a read-held rwlock, a sem and a countdown with waiters */
    bthread_mutex_t m;
    cr_assert_eq(bthread_mutex_init(&m, NULL), 0);
    cr_assert_eq(bthread_mutex_lock(&m), 0);
    cr_assert_eq(bthread_mutex_destroy(&m), EBUSY);
    cr_assert_eq(bthread_mutex_unlock(&m), 0);
    cr_assert_eq(bthread_mutex_destroy(&m), 0);
    bthread_rwlock_t rw;
    cr_assert_eq(bthread_rwlock_init(&rw, NULL), 0);
    cr_assert_eq(bthread_rwlock_rdlock(&rw), 0);
    cr_assert_eq(bthread_rwlock_destroy(&rw), EBUSY);
    cr_assert_eq(bthread_rwlock_unlock(&rw), 0);
    cr_assert_eq(bthread_rwlock_wrlock(&rw), 0);
    cr_assert_eq(bthread_rwlock_destroy(&rw), EBUSY);
    cr_assert_eq(bthread_rwlock_unlock(&rw), 0);
    cr_assert_eq(bthread_rwlock_destroy(&rw), 0);
    bthread_sem_t sem;
    bthread_countdown_t cd;
    cr_assert_eq(bthread_sem_init(&sem, 0), 0);
    cr_assert_eq(bthread_countdown_init(&cd, 1), 0);
    sem_waiter_arg_t a = {&sem, &cd};
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, sem_then_countdown_waiter, &a), 0);
    wait_queued(sem.butex);
    cr_assert_eq(bthread_sem_destroy(&sem), EBUSY);
    cr_assert_eq(bthread_sem_post(&sem), 0);
    wait_queued(cd.butex);
    cr_assert_eq(bthread_countdown_destroy(&cd), EBUSY);
    cr_assert_eq(bthread_countdown_signal(&cd, 1), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
    cr_assert_eq(bthread_sem_destroy(&sem), 0);
    cr_assert_eq(bthread_countdown_destroy(&cd), 0);
    assert_no_failures();
}

typedef struct bx_waiter {
    void *b;
    int rc, err;
} bx_waiter_t;

static void *timed_butex_waiter(void *p)
{
    bx_waiter_t *w = p;
    const struct timespec dl = deadline_in_ms(10000);
    w->rc = butex_wait(w->b, 0, &dl);
    w->err = errno;
    return NULL;
}

/* butex_destroy itself, under a waiter (brpc leaves this undefined): the waiter is
 * woken at once, so it is on no list of whatever the memory becomes next. */
Test(sync, a_destroyed_butex_wakes_its_waiters, .timeout = 30)
{
    bx_waiter_t w = {.b = butex_create()};
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, timed_butex_waiter, &w), 0);
    wait_queued(w.b);
    const int64_t t0 = now_ns();
    butex_destroy(w.b);
    cr_assert_eq(bthread_join(t, NULL), 0);
    cr_assert_eq(w.rc, 0, "errno %d", w.err);
    cr_assert_lt(now_ns() - t0, 5000000000LL, "woken at its deadline, not by the destroy");
}

/* A countdown's last signaller wakes after the waiter it released may have destroyed
 * the countdown, and the memory may already be another butex: such a late wake, on a
 * pooled butex and on a reused one, wakes nobody and leaves the reused one working. */
Test(sync, a_late_wake_on_a_destroyed_or_reused_butex_is_harmless, .timeout = 30)
{
    void *a = butex_create(), *b = butex_create();
    cr_assert(a && b);
    butex_destroy(a);
    butex_destroy(b); /* two in the pool: each one's neighbour is a pooled butex */
    cr_assert_eq(butex_wake(a), 0);
    cr_assert_eq(butex_wake_all(b), 0);
    cr_assert_eq(butex_wake_n(a, 3), 0);
    cr_assert_eq(butex_waiting(b), 0);

    bx_waiter_t w = {.b = butex_create()}; /* most likely a or b again */
    cr_assert_not_null(w.b);
    cr_assert_eq(*(int *)w.b, 0, "a reused butex starts at 0");
    cr_assert_eq(butex_wake_all(w.b), 0, "a late wake on the reused butex wakes nobody");
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, timed_butex_waiter, &w), 0);
    wait_queued(w.b);
    cr_assert_eq(butex_wake(w.b), 1);
    cr_assert_eq(bthread_join(t, NULL), 0);
    cr_assert_eq(w.rc, 0, "errno %d", w.err);
    butex_destroy(w.b);
}
