/*
 * test_keys.c -- bthread-local storage beyond one bthread, on every variant: values a
 * plain pthread set have their destructors run when it exits (as brpc's, through
 * thread_atexit), destructors with an argument (bthread_key_create2), keytable pools
 * (values kept across the bthreads of a pool, destructed with the pool), a destructor
 * that blocks ends its task cleanly, and keys deleted and created again meanwhile never
 * hand a value to another key's destructor.
 */
#include "sbtest.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "bthread.h"

static _Atomic int destructed, destructed_with_arg, bad_arg;
static bthread_key_t key, key2;
static const char the_arg[] = "arg";

static void dtor(void *p)
{
    (void)p;
    atomic_fetch_add(&destructed, 1);
}

static void dtor2(void *p, const void *arg)
{
    (void)p;
    if (arg != the_arg)
        atomic_fetch_add(&bad_arg, 1);
    atomic_fetch_add(&destructed_with_arg, 1);
}

static void *set_both(void *p)
{
    cr_assert_eq(bthread_setspecific(key, p), 0);
    cr_assert_eq(bthread_setspecific(key2, p), 0);
    cr_assert_eq(bthread_getspecific(key), p);
    return NULL;
}

/* brpc's KeyTest.use_one_key_in_different_threads: bthreads and pthreads alike (the
 * pthreads' destructors ran never: 256 calls where 512 were due). */
Test(keys, destructors_run_when_a_pthread_exits_as_when_a_bthread_ends, .timeout = 30)
{
    cr_assert_eq(bthread_key_create(&key, dtor), 0);
    cr_assert_eq(bthread_key_create2(&key2, dtor2, the_arg), 0);
    enum { N = 16 };
    pthread_t p[N];
    bthread_t b[N];
    for (int i = 0; i < N; i++) {
        cr_assert_eq(pthread_create(&p[i], NULL, set_both, (void *)(intptr_t)(i + 1)), 0);
        cr_assert_eq(bthread_start_background(&b[i], NULL, set_both, (void *)(intptr_t)(i + 1)), 0);
    }
    for (int i = 0; i < N; i++) {
        cr_assert_eq(pthread_join(p[i], NULL), 0);
        cr_assert_eq(bthread_join(b[i], NULL), 0);
    }
    cr_assert_eq(atomic_load(&destructed), 2 * N);
    cr_assert_eq(atomic_load(&destructed_with_arg), 2 * N);
    cr_assert_eq(atomic_load(&bad_arg), 0);
    cr_assert_eq(bthread_key_delete(key), 0);
    cr_assert_eq(bthread_key_delete(key2), 0);
}

/* A destructor that sets a value again gets another round (brpc's KeyTest.set_in_dtor),
 * at a pthread's exit too; and it may use a bthread mutex. */
static bthread_mutex_t dtor_mutex;
static _Atomic int rounds;
static void dtor_sets_again(void *p)
{
    cr_assert_eq(bthread_mutex_lock(&dtor_mutex), 0);
    const int r = atomic_fetch_add(&rounds, 1);
    cr_assert_eq(bthread_mutex_unlock(&dtor_mutex), 0);
    if ((intptr_t)p < 3)
        cr_assert_eq(bthread_setspecific(key, (void *)((intptr_t)p + 1)), 0);
    (void)r;
}

static void *set_one(void *p)
{
    cr_assert_eq(bthread_setspecific(key, p), 0);
    return NULL;
}

Test(keys, a_destructor_that_sets_a_value_gets_another_round, .timeout = 30)
{
    cr_assert_eq(bthread_mutex_init(&dtor_mutex, NULL), 0);
    cr_assert_eq(bthread_key_create(&key, dtor_sets_again), 0);
    pthread_t p;
    cr_assert_eq(pthread_create(&p, NULL, set_one, (void *)(intptr_t)1), 0);
    cr_assert_eq(pthread_join(p, NULL), 0);
    cr_assert_eq(atomic_load(&rounds), 3, "values 1, 2, 3 each destructed once");
    bthread_t b;
    cr_assert_eq(bthread_start_background(&b, NULL, set_one, (void *)(intptr_t)1), 0);
    cr_assert_eq(bthread_join(b, NULL), 0);
    cr_assert_eq(atomic_load(&rounds), 6);
    cr_assert_eq(bthread_key_delete(key), 0);
}

/* ---- keytable pools ---------------------------------------------------------------- */

typedef struct pooled {
    void *seen;    /* what getspecific found first */
    void *set;     /* what it sets then (NULL: nothing) */
} pooled_t;

static void *pooled_task(void *p)
{
    pooled_t *a = p;
    a->seen = bthread_getspecific(key);
    if (a->set)
        cr_assert_eq(bthread_setspecific(key, a->set), 0);
    return NULL;
}

static void run_pooled(bthread_keytable_pool_t *pool, pooled_t *a)
{
    bthread_attr_t attr = BTHREAD_ATTR_NORMAL;
    attr.keytable_pool = pool;
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, &attr, pooled_task, a), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
}

static size_t pool_free(bthread_keytable_pool_t *pool)
{
    bthread_keytable_pool_stat_t st;
    cr_assert_eq(bthread_keytable_pool_getstat(pool, &st), 0);
    return st.nfree;
}

static void *make_value(const void *arg) { return (void *)arg; }

Test(keys, a_keytable_pool_keeps_values_across_its_bthreads, .timeout = 30)
{
    cr_assert_eq(bthread_setconcurrency(2), 0);
    cr_assert_eq(bthread_key_create(&key, dtor), 0);
    bthread_keytable_pool_t pool;
    cr_assert_eq(bthread_keytable_pool_init(&pool), 0);
    pooled_t first = {.set = (void *)11};
    run_pooled(&pool, &first);
    cr_assert_null(first.seen, "an empty pool lends nothing");
    cr_assert_eq(atomic_load(&destructed), 0, "a pooled table keeps its values");
    cr_assert_eq(pool_free(&pool), 1);
    pooled_t second = {0};
    run_pooled(&pool, &second);
    cr_assert_eq(second.seen, (void *)11, "the next bthread of the pool borrows the table");
    cr_assert_eq(pool_free(&pool), 1);
    /* reserve: tables made with a constructor's value */
    bthread_keytable_pool_reserve(&pool, 4, key, make_value, (void *)22);
    cr_assert_eq(pool_free(&pool), 4);
    /* a bthread without the pool never sees its values */
    pooled_t plain = {0};
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, pooled_task, &plain), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
    cr_assert_null(plain.seen);
    /* destroying the pool destructs what it holds; later ends destruct at once */
    cr_assert_eq(bthread_keytable_pool_destroy(&pool), 0);
    cr_assert_eq(atomic_load(&destructed), 4);
    cr_assert_eq(pool_free(&pool), 0);
    pooled_t late = {.set = (void *)33};
    run_pooled(&pool, &late);
    cr_assert_eq(atomic_load(&destructed), 5);
    cr_assert_eq(bthread_key_delete(key), 0);
    cr_assert_eq(bthread_keytable_pool_init(NULL), EINVAL);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- a key destructor that blocks --------------------------------------------------- */
static int64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static bthread_key_t sleepy_key;
static _Atomic long sleepy_dtors;

static void sleepy_dtor(void *data)
{
    (void)data;
    bthread_usleep(50); /* the task may resume on another worker */
    atomic_fetch_add(&sleepy_dtors, 1);
}

static void *sets_sleepy_key(void *p)
{
    (void)p;
    cr_assert_eq(bthread_setspecific(sleepy_key, (void *)1), 0);
    return NULL;
}

Test(keys, key_destructor_that_blocks_ends_its_task_cleanly, .timeout = 60)
{
    cr_assert_eq(bthread_setconcurrency(2), 0);
    cr_assert_eq(bthread_key_create(&sleepy_key, sleepy_dtor), 0);
    /* under the sanitizers each fresh stack costs a TSan fiber (~1 ms): fewer tasks */
    enum { BATCH = 1000 };
    const int N = SB_SANITIZED ? 2000 : 20000;
    static bthread_t ids[BATCH];
    for (int done = 0; done < N; done += BATCH) {
        for (int i = 0; i < BATCH; i++)
            cr_assert_eq(bthread_start_background(&ids[i], NULL, sets_sleepy_key, NULL), 0);
        for (int i = 0; i < BATCH; i++)
            cr_assert_eq(bthread_join(ids[i], NULL), 0);
    }
    cr_assert_eq(atomic_load(&sleepy_dtors), N);
    cr_assert_eq(bthread_key_delete(sleepy_key), 0);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- a destructor never receives another key's data --------------------------------- */
enum { PAIRS = 8 };                          /* more calls per task: more chances */
static _Atomic uint64_t churn_key[PAIRS][2]; /* index << 32 | version of keys A and B */
static const char tag[2] = {'A', 'B'};
static _Atomic long wrong_data, right_data;
static _Atomic int churn_stop;

static void dtor_a(void *d) { atomic_fetch_add(d == &tag[0] ? &right_data : &wrong_data, 1); }
static void dtor_b(void *d) { atomic_fetch_add(d == &tag[1] ? &right_data : &wrong_data, 1); }

static bthread_key_t key_of(uint64_t packed)
{
    return (bthread_key_t){.index = (uint32_t)(packed >> 32), .version = (uint32_t)packed};
}
static uint64_t pack(bthread_key_t k) { return (uint64_t)k.index << 32 | k.version; }

/* Delete both keys and create them again in the order that swaps their indexes, so a
 * value of key A left in a table sits at the index key B now owns. */
static void *churner(void *p)
{
    (void)p;
    for (unsigned n = 0; !atomic_load(&churn_stop); n++) {
        _Atomic uint64_t *k = churn_key[n % PAIRS];
        bthread_key_t a = key_of(atomic_load(&k[0])), b = key_of(atomic_load(&k[1]));
        bthread_key_delete(b);
        bthread_key_delete(a);
        cr_assert_eq(bthread_key_create(&b, dtor_b), 0); /* gets a's old index */
        cr_assert_eq(bthread_key_create(&a, dtor_a), 0);
        atomic_store(&k[0], pack(a));
        atomic_store(&k[1], pack(b));
    }
    return NULL;
}

static void *sets_both_keys(void *p)
{
    (void)p;
    for (int p = 0; p < PAIRS; p++)
        for (int k = 0; k < 2; k++)
            bthread_setspecific(key_of(atomic_load(&churn_key[p][k])), (void *)&tag[k]);
    return NULL;
}

Test(keys, key_churn_never_hands_a_value_to_another_keys_destructor, .timeout = 90)
{
    cr_assert_eq(bthread_setconcurrency(2), 0);
    for (int p = 0; p < PAIRS; p++) {
        bthread_key_t a, b;
        cr_assert_eq(bthread_key_create(&a, dtor_a), 0);
        cr_assert_eq(bthread_key_create(&b, dtor_b), 0);
        atomic_store(&churn_key[p][0], pack(a));
        atomic_store(&churn_key[p][1], pack(b));
    }
    pthread_t ch;
    cr_assert_eq(pthread_create(&ch, NULL, churner, NULL), 0);
    enum { BATCH = 1000 };
    static bthread_t ids[BATCH];
    /* seconds of churn: fewer under a sanitizer or an emulator (sb_rounds) */
    int64_t end = mono_ns() + sb_rounds(SB_SANITIZED ? 2 : 4, 1) * 1000000000ll;
    while (mono_ns() < end) {
        for (int i = 0; i < BATCH; i++)
            cr_assert_eq(bthread_start_background(&ids[i], NULL, sets_both_keys, NULL), 0);
        for (int i = 0; i < BATCH; i++)
            cr_assert_eq(bthread_join(ids[i], NULL), 0);
    }
    atomic_store(&churn_stop, 1);
    pthread_join(ch, NULL);
    cr_assert_gt(atomic_load(&right_data), 0);
    cr_assert_eq(atomic_load(&wrong_data), 0, "%ld destructor calls got another key's data",
                 atomic_load(&wrong_data));
    cr_assert_eq(bthread_shutdown(), 0);
}
