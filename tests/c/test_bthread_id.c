/*
 * test_bthread_id.c -- bthread_id_* and bthread_id_list_* (common/id.c), every variant.
 *
 * The semantics, one test each: the version arithmetic brpc's users observe (lock word
 * = first version, +range when locked, +range+3 once destroyed), ranged ids, what a stale
 * or never-created id answers, errors run in place or queued for the holder's unlock (in
 * order), about_to_destroy, cancel, join, the error texts, lock_and_reset_range, and the
 * id lists.  Then the stress tests, from bthreads and pthreads together: a lock that
 * excludes, with errors interleaved and counted (nothing lost); ids destroyed while
 * lockers, error issuers and joiners race on them (everyone ends, nobody gets a wrong
 * answer); and a churn of create/destroy that checks that no id is handed out twice
 * while alive, that a slot's versions only grow, and that a stale id stays dead after
 * its slot is reused.
 *
 * A test that needs a waiter to be asleep waits for the state that shows it (the lock
 * word says contended), never for time to pass.
 */
#include "sbtest.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bthread.h"

#include "thread_checks.h"

static void setup(void) { cr_assert_eq(bthread_setconcurrency(2), 0); }
TestSuite(bthread_id, .init = setup);
TestSuite(bthread_id_list, .init = setup);
TestSuite(bthread_id_stress, .init = setup);

static uint32_t version(bthread_id_t id) { return (uint32_t)id.value; }
static bthread_id_t plus(bthread_id_t id, uint64_t k) { return (bthread_id_t){id.value + k}; }

/* Start fn(arg) on nb bthreads and np pthreads (ids into bt / pt). */
static void start_mixed(int nb, int np, bthread_t *bt, pthread_t *pt, void *(*fn)(void *),
                        void *arg)
{
    for (int i = 0; i < nb; i++)
        cr_assert_eq(bthread_start_background(&bt[i], NULL, fn, arg), 0);
    for (int i = 0; i < np; i++)
        cr_assert_eq(pthread_create(&pt[i], NULL, fn, arg), 0);
}
static void join_mixed(int nb, int np, bthread_t *bt, pthread_t *pt)
{
    for (int i = 0; i < nb; i++)
        cr_assert_eq(bthread_join(bt[i], NULL), 0);
    for (int i = 0; i < np; i++)
        cr_assert_eq(pthread_join(pt[i], NULL), 0);
}

/* Wait until id's lock word says contended: some locker marked it and sleeps (or is
 * about to; either way it is inside bthread_id_lock). */
static void wait_contended(bthread_id_t id, uint32_t range)
{
    while (bthread_id_value(id) != version(id) + range + 1)
        bthread_yield();
}

/* An on_error that records what it got and destroys the id. */
typedef struct seen_error {
    bthread_id_t id;
    int code, calls;
    void *data;
} seen_error_t;

static int record_and_destroy(bthread_id_t id, void *data, int error_code)
{
    seen_error_t *s = data;
    s->id = id;
    s->code = error_code;
    s->calls++;
    return bthread_id_unlock_and_destroy(id);
}

/* ---- the basics ------------------------------------------------------------------- */

static void *basics(void *unused)
{
    (void)unused;
    int x = 0;
    bthread_id_t id;
    CHECK(bthread_id_create(&id, &x, NULL) == 0);
    CHECK(id.value != 0);
    const uint32_t v = version(id);
    CHECK(bthread_id_value(id) == v); /* unlocked: the first version */
    void *data = NULL;
    CHECK(bthread_id_trylock(id, &data) == 0 && data == &x);
    CHECK(bthread_id_value(id) == v + 1); /* locked */
    CHECK(bthread_id_trylock(id, NULL) == EBUSY);
    CHECK(bthread_id_cancel(id) == EPERM); /* locked: not "never used" */
    CHECK(bthread_id_unlock(id) == 0);
    CHECK(bthread_id_value(id) == v);
    CHECK(bthread_id_unlock(id) == EPERM);             /* not locked */
    CHECK(bthread_id_unlock_and_destroy(id) == EPERM); /* not locked */
    CHECK(bthread_id_about_to_destroy(id) == EPERM);   /* not locked */
    data = NULL;
    CHECK(bthread_id_lock(id, &data) == 0 && data == &x);
    CHECK(bthread_id_unlock_and_destroy(id) == 0);
    CHECK(bthread_id_value(id) == v + 4); /* the next entity's first version */
    /* Stale: every call says so; join returns at once. */
    CHECK(bthread_id_lock(id, NULL) == EINVAL);
    CHECK(bthread_id_trylock(id, NULL) == EINVAL);
    CHECK(bthread_id_unlock(id) == EINVAL);
    CHECK(bthread_id_unlock_and_destroy(id) == EINVAL);
    CHECK(bthread_id_error(id, EBADF) == EINVAL);
    CHECK(bthread_id_about_to_destroy(id) == EINVAL);
    CHECK(bthread_id_cancel(id) == EINVAL);
    CHECK(bthread_id_join(id) == 0);
    return NULL;
}

Test(bthread_id, lock_unlock_destroy_and_the_versions_brpc_shows, .timeout = 10)
{
    basics(NULL);
    bthread_t b;
    cr_assert_eq(bthread_start_background(&b, NULL, basics, NULL), 0);
    cr_assert_eq(bthread_join(b, NULL), 0);
    assert_no_failures();
}

Test(bthread_id, ranged_ids_name_one_entity, .timeout = 10)
{
    seen_error_t seen = {0};
    bthread_id_t id;
    cr_assert_eq(bthread_id_create_ranged(&id, &seen, NULL, 0), EINVAL);
    cr_assert_eq(bthread_id_create_ranged(&id, &seen, NULL, BTHREAD_ID_MAX_RANGE + 1), EINVAL);
    cr_assert_eq(bthread_id_create_ranged(NULL, &seen, NULL, 1), EINVAL);
    cr_assert_eq(bthread_id_create_ranged(&id, &seen, record_and_destroy, 3), 0);
    const uint32_t v = version(id);
    for (int k = 0; k < 3; k++)
        cr_assert_eq(bthread_id_value(plus(id, k)), v);
    cr_assert_eq(bthread_id_trylock(plus(id, 1), NULL), 0);
    cr_assert_eq(bthread_id_value(id), v + 3);           /* locked: first + range */
    cr_assert_eq(bthread_id_trylock(plus(id, 2), NULL), EBUSY); /* the same entity */
    cr_assert_eq(bthread_id_trylock(plus(id, 3), NULL), EINVAL); /* past the range */
    cr_assert_eq(bthread_id_unlock(plus(id, 2)), 0); /* any of its ids unlocks it */
    /* on_error gets the very id the error was issued to. */
    cr_assert_eq(bthread_id_error(plus(id, 2), EBADF), 0);
    cr_assert_eq(seen.calls, 1);
    cr_assert_eq(seen.code, EBADF);
    cr_assert_eq(seen.id.value, plus(id, 2).value);
    cr_assert_eq(bthread_id_value(id), v + 6); /* first + range + 3 */
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(bthread_id_error(plus(id, k), EBADF), EINVAL);
        cr_assert_eq(bthread_id_join(plus(id, k)), 0);
    }
    cr_assert_eq(seen.calls, 1);
}

Test(bthread_id, ids_never_created_are_invalid, .timeout = 10)
{
    cr_assert_eq(bthread_id_join(INVALID_BTHREAD_ID), EINVAL);
    cr_assert_eq(bthread_id_lock(INVALID_BTHREAD_ID, NULL), EINVAL);
    const bthread_id_t far = {(uint64_t)0xfffff000u << 32 | 1}; /* a slot never made */
    cr_assert_eq(bthread_id_join(far), EINVAL);
    cr_assert_eq(bthread_id_trylock(far, NULL), EINVAL);
    cr_assert_eq(bthread_id_error(far, 1), EINVAL);
    cr_assert_eq(bthread_id_value(far), 0);
    bthread_id_t id;
    cr_assert_eq(bthread_id_create(&id, NULL, NULL), 0);
    /* A version of a living slot that was never handed out: ahead of its range. */
    const bthread_id_t ahead = plus(id, 5);
    cr_assert_eq(bthread_id_join(ahead), EINVAL);
    cr_assert_eq(bthread_id_lock(ahead, NULL), EINVAL);
    cr_assert_eq(bthread_id_cancel(ahead), EINVAL);
    cr_assert_eq(bthread_id_cancel(id), 0);
    char buf[160];
    cr_assert_gt(bthread_id_describe(id, buf, sizeof buf), 0);
    cr_assert(strstr(buf, "not alive"), "%s", buf);
}

/* ---- errors ------------------------------------------------------------------------ */

typedef struct error_log {
    int codes[300];
    int n;
    int unlock_rc; /* what on_error's unlock answered, the last time */
} error_log_t;

static int log_and_unlock(bthread_id_t id, void *data, int error_code)
{
    error_log_t *l = data;
    l->codes[l->n++] = error_code;
    return l->unlock_rc = bthread_id_unlock(id);
}

Test(bthread_id, errors_run_in_place_or_queue_for_the_holder_in_order, .timeout = 10)
{
    error_log_t log = {.n = 0};
    bthread_id_t id;
    cr_assert_eq(bthread_id_create(&id, &log, log_and_unlock), 0);
    const uint32_t v = version(id);
    int code = 0;
    for (int i = 0; i < 100; i++) /* unlocked: each runs now, and unlocks */
        cr_assert_eq(bthread_id_error(id, code++), 0);
    cr_assert_eq(log.n, 100);
    cr_assert_eq(bthread_id_trylock(id, NULL), 0);
    for (int i = 0; i < 100; i++) /* locked: queued */
        cr_assert_eq(bthread_id_error(id, code++), 0);
    cr_assert_eq(log.n, 100);
    char buf[256];
    cr_assert_gt(bthread_id_describe(id, buf, sizeof buf), 0);
    cr_assert(strstr(buf, "100 pending errors"), "%s", buf);
    /* The holder's unlock runs the oldest, whose on_error unlocks, which runs the next... */
    cr_assert_eq(bthread_id_unlock(id), 0);
    cr_assert_eq(log.n, 200);
    cr_assert_eq(bthread_id_value(id), v); /* and at last it is unlocked */
    for (int i = 0; i < 200; i++)
        cr_assert_eq(log.codes[i], i);
    /* Errors queued when the holder destroys the id are dropped. */
    cr_assert_eq(bthread_id_lock(id, NULL), 0);
    for (int i = 0; i < 10; i++)
        cr_assert_eq(bthread_id_error(id, code++), 0);
    cr_assert_eq(bthread_id_unlock_and_destroy(id), 0);
    cr_assert_eq(log.n, 200);
}

Test(bthread_id, default_on_error_destroys, .timeout = 10)
{
    bthread_id_t id;
    cr_assert_eq(bthread_id_create(&id, NULL, NULL), 0);
    cr_assert_eq(bthread_id_error(id, EBADF), 0);
    cr_assert_eq(bthread_id_value(id), version(id) + 4);
    cr_assert_eq(bthread_id_lock(id, NULL), EINVAL);
    /* The same when the error waited for the holder. */
    cr_assert_eq(bthread_id_create(&id, NULL, NULL), 0);
    cr_assert_eq(bthread_id_lock(id, NULL), 0);
    cr_assert_eq(bthread_id_error(id, EBADF), 0);
    cr_assert_eq(bthread_id_unlock(id), 0); /* runs the error, which destroys */
    cr_assert_eq(bthread_id_join(id), 0);
    cr_assert_eq(bthread_id_trylock(id, NULL), EINVAL);
}

typedef struct text_log {
    char text[64];
    int code, calls;
    void *arg;
} text_log_t;

static int log_text_and_unlock(bthread_id_t id, void *data, int error_code,
                               const char *error_text, void *arg)
{
    text_log_t *l = data;
    strncpy(l->text, error_text, sizeof l->text - 1);
    l->code = error_code;
    l->arg = arg;
    l->calls++;
    return bthread_id_unlock(id);
}

Test(bthread_id, error_texts_reach_on_error, .timeout = 10)
{
    text_log_t log = {.calls = 0};
    int tag;
    bthread_id_t id;
    cr_assert_eq(bthread_id_create_text(&id, &log, log_text_and_unlock, &tag, 1), 0);
    cr_assert_eq(bthread_id_error_text(id, 7, "in place"), 0);
    cr_assert_str_eq(log.text, "in place");
    cr_assert(log.code == 7 && log.arg == &tag && log.calls == 1);
    cr_assert_eq(bthread_id_lock(id, NULL), 0);
    char queued[] = "queued";
    cr_assert_eq(bthread_id_error_text(id, 8, queued), 0);
    queued[0] = 'Q'; /* the queue kept its own copy */
    cr_assert_eq(bthread_id_unlock(id), 0);
    cr_assert_str_eq(log.text, "queued");
    cr_assert_eq(log.code, 8);
    cr_assert_eq(bthread_id_error(id, 9), 0); /* without a text: "" */
    cr_assert_str_eq(log.text, "");
    cr_assert_eq(log.calls, 3);
    cr_assert_eq(bthread_id_lock(id, NULL), 0);
    cr_assert_eq(bthread_id_unlock_and_destroy(id), 0);
    /* A plain on_error ignores a text. */
    seen_error_t seen = {0};
    cr_assert_eq(bthread_id_create(&id, &seen, record_and_destroy), 0);
    cr_assert_eq(bthread_id_error_text(id, 10, "ignored"), 0);
    cr_assert(seen.calls == 1 && seen.code == 10);
}

/* ---- about_to_destroy, cancel, reset_range ----------------------------------------- */

typedef struct lock_attempt {
    bthread_id_t id;
    int expect;
} lock_attempt_t;

static void *lock_expecting(void *p)
{
    lock_attempt_t *a = p;
    const int rc = bthread_id_lock(a->id, NULL);
    CHECK(rc == a->expect);
    if (rc == 0)
        CHECK(bthread_id_unlock(a->id) == 0);
    return NULL;
}

/* Lock a new id, start 3 bthreads and 2 pthreads that lock it too, wait until one of
 * them sleeps, apply `act` to the id, and check that every locker got `expect` (woken
 * with it, or finding it so).  Returns the id. */
static bthread_id_t lockers_meet(int (*act)(bthread_id_t), int expect)
{
    bthread_id_t id;
    cr_assert_eq(bthread_id_create(&id, NULL, NULL), 0);
    cr_assert_eq(bthread_id_lock(id, NULL), 0);
    lock_attempt_t a = {.id = id, .expect = expect};
    bthread_t bt[3];
    pthread_t pt[2];
    start_mixed(3, 2, bt, pt, lock_expecting, &a);
    wait_contended(id, 1);
    cr_assert_eq(act(id), 0);
    join_mixed(3, 2, bt, pt);
    assert_no_failures();
    return id;
}

Test(bthread_id, about_to_destroy_fails_waiting_and_later_lockers, .timeout = 10)
{
    const bthread_id_t id = lockers_meet(bthread_id_about_to_destroy, EPERM);
    cr_assert_eq(bthread_id_trylock(id, NULL), EBUSY);
    cr_assert_eq(bthread_id_value(id), version(id) + 3); /* locked + 2 */
    char buf[256];
    cr_assert_gt(bthread_id_describe(id, buf, sizeof buf), 0);
    cr_assert(strstr(buf, "about to destroy"), "%s", buf);
    cr_assert_eq(bthread_id_unlock_and_destroy(id), 0);
}

Test(bthread_id, unlock_cancels_about_to_destroy, .timeout = 10)
{
    bthread_id_t id;
    cr_assert_eq(bthread_id_create(&id, NULL, NULL), 0);
    cr_assert_eq(bthread_id_lock(id, NULL), 0);
    cr_assert_eq(bthread_id_about_to_destroy(id), 0);
    cr_assert_eq(bthread_id_unlock(id), 0);
    lock_attempt_t a = {.id = id, .expect = 0};
    bthread_t bt[2];
    pthread_t pt[2];
    start_mixed(2, 2, bt, pt, lock_expecting, &a);
    join_mixed(2, 2, bt, pt);
    assert_no_failures();
    cr_assert_eq(bthread_id_lock(id, NULL), 0);
    cr_assert_eq(bthread_id_unlock_and_destroy(id), 0);
}

typedef struct joiner_arg {
    bthread_id_t id;
    _Atomic int arrived;
    _Atomic int destroyed; /* set by the destroyer before it destroys */
    int expect;
} joiner_arg_t;

static void *joiner(void *p)
{
    joiner_arg_t *j = p;
    atomic_fetch_add_explicit(&j->arrived, 1, memory_order_relaxed);
    CHECK(bthread_id_join(j->id) == j->expect);
    /* relaxed: the id's destruction orders it (the destroyer set it first). */
    CHECK(atomic_load_explicit(&j->destroyed, memory_order_relaxed) == 1);
    return NULL;
}

/* Start 3 bthreads and 2 pthreads that join a new id, wait until each is about to join,
 * and apply `end` to the id: it must end it, and set *destroyed just before.  Every
 * joiner checks that it returned after that.  Returns the id. */
static bthread_id_t joiners_meet(int (*end)(bthread_id_t id, _Atomic int *destroyed))
{
    bthread_id_t id;
    cr_assert_eq(bthread_id_create(&id, NULL, NULL), 0);
    joiner_arg_t j = {.id = id, .expect = 0};
    bthread_t bt[3];
    pthread_t pt[2];
    start_mixed(3, 2, bt, pt, joiner, &j);
    while (atomic_load(&j.arrived) < 5)
        bthread_yield();
    cr_assert_eq(end(id, &j.destroyed), 0);
    join_mixed(3, 2, bt, pt);
    assert_no_failures();
    return id;
}

static int cancel_it(bthread_id_t id, _Atomic int *destroyed)
{
    /* relaxed: the joiners read it after the id's end, which orders it. */
    atomic_store_explicit(destroyed, 1, memory_order_relaxed);
    return bthread_id_cancel(id);
}

Test(bthread_id, cancel_ends_an_unused_id_and_its_joiners, .timeout = 10)
{
    const bthread_id_t id = joiners_meet(cancel_it);
    cr_assert_eq(bthread_id_value(id), version(id) + 4);
    cr_assert_eq(bthread_id_lock(id, NULL), EINVAL);
}

/* Lock and unlock (which ends no join), then lock and destroy. */
static int use_then_destroy(bthread_id_t id, _Atomic int *destroyed)
{
    cr_assert_eq(bthread_id_lock(id, NULL), 0);
    cr_assert_eq(bthread_id_unlock(id), 0);
    cr_assert_eq(bthread_id_lock(id, NULL), 0);
    atomic_store_explicit(destroyed, 1, memory_order_relaxed); /* as cancel_it */
    return bthread_id_unlock_and_destroy(id);
}

Test(bthread_id, join_waits_for_the_destroy, .timeout = 10)
{
    joiners_meet(use_then_destroy);
}

Test(bthread_id, lock_and_reset_range_widens_only, .timeout = 10)
{
    bthread_id_t id;
    cr_assert_eq(bthread_id_create(&id, NULL, NULL), 0);
    const uint32_t v = version(id);
    cr_assert_eq(bthread_id_trylock(plus(id, 4), NULL), EINVAL);
    cr_assert_eq(bthread_id_lock_and_reset_range(id, NULL, 5), 0);
    cr_assert_eq(bthread_id_value(id), v + 5);
    cr_assert_eq(bthread_id_trylock(plus(id, 4), NULL), EBUSY); /* now one of its ids */
    cr_assert_eq(bthread_id_unlock(plus(id, 4)), 0);
    cr_assert_eq(bthread_id_lock_and_reset_range(id, NULL, 2), 0); /* narrower: no change */
    cr_assert_eq(bthread_id_value(id), v + 5);
    cr_assert_eq(bthread_id_unlock(id), 0);
    cr_assert_eq(bthread_id_lock_and_reset_range(id, NULL, BTHREAD_ID_MAX_RANGE + 1), 0);
    cr_assert_eq(bthread_id_value(id), v + 5); /* out of bounds: no change */
    char buf[256];
    cr_assert_gt(bthread_id_describe(id, buf, sizeof buf), 0);
    cr_assert(strstr(buf, "range 5") && strstr(buf, "locked at tests/c/test_bthread_id.c:"), "%s",
              buf);
    cr_assert_eq(bthread_id_unlock_and_destroy(id), 0);
    cr_assert_eq(bthread_id_value(id), v + 8);
}

Test(bthread_id, destroy_wakes_waiting_lockers_with_einval, .timeout = 10)
{
    const bthread_id_t id = lockers_meet(bthread_id_unlock_and_destroy, EINVAL);
    cr_assert_eq(bthread_id_join(id), 0);
}

/* ---- id lists ---------------------------------------------------------------------- */

static int count_and_destroy(bthread_id_t id, void *data, int error_code)
{
    CHECK(error_code == EBADF);
    ++*(int *)data;
    return bthread_id_unlock_and_destroy(id);
}

Test(bthread_id_list, reset_errors_every_living_id_once, .timeout = 10)
{
    enum { N = 16 };
    bthread_id_list_t list;
    cr_assert_eq(bthread_id_list_init(&list, 32, 32), 0);
    bthread_id_t ids[N];
    int hits[N] = {0};
    joiner_arg_t j[N];
    pthread_t pt[N];
    for (int i = 0; i < N; i++) {
        cr_assert_eq(bthread_id_create(&ids[i], &hits[i], count_and_destroy), 0);
        cr_assert_eq(bthread_id_list_add(&list, ids[i]), 0);
        j[i] = (joiner_arg_t){.id = ids[i], .expect = 0, .destroyed = 1};
        cr_assert_eq(pthread_create(&pt[i], NULL, joiner, &j[i]), 0);
    }
    /* Two end before the reset: it must skip them. */
    cr_assert_eq(bthread_id_cancel(ids[3]), 0);
    cr_assert_eq(bthread_id_error(ids[7], EBADF), 0);
    cr_assert_eq(bthread_id_list_reset(&list, EBADF), 0);
    for (int i = 0; i < N; i++) {
        cr_assert_eq(pthread_join(pt[i], NULL), 0);
        cr_assert_eq(hits[i], i == 3 ? 0 : 1, "id %d", i);
    }
    assert_no_failures();
    cr_assert_eq(bthread_id_list_reset(&list, EBADF), 0); /* emptied: nothing more */
    for (int i = 0; i < N; i++)
        cr_assert_eq(hits[i], i == 3 ? 0 : 1);
    bthread_id_list_destroy(&list);
    cr_assert_eq(bthread_id_list_reset(&list, EBADF), 0); /* destroyed: nothing to do */
}

static int keep_text(bthread_id_t id, void *data, int error_code, const char *error_text,
                     void *arg)
{
    (void)error_code;
    (void)arg;
    strncpy(data, error_text, 31);
    return bthread_id_unlock_and_destroy(id);
}

Test(bthread_id_list, thread_safe_resets_and_swap, .timeout = 10)
{
    pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
    bthread_mutex_t bm;
    cr_assert_eq(bthread_mutex_init(&bm, NULL), 0);
    bthread_id_list_t a, b;
    cr_assert_eq(bthread_id_list_init(&a, 0, 0), 0);
    cr_assert_eq(bthread_id_list_init(&b, 0, 0), 0);
    cr_assert_eq(bthread_id_list_reset_pthreadsafe(&a, 1, NULL), EINVAL);
    cr_assert_eq(bthread_id_list_reset_bthreadsafe(&a, 1, NULL), EINVAL);
    cr_assert_eq(bthread_id_list_reset_pthreadsafe(&a, 1, &pm), 0); /* empty */
    char t1[32] = "", t2[32] = "", t3[32] = "";
    bthread_id_t i1, i2, i3;
    cr_assert_eq(bthread_id_create_text(&i1, t1, keep_text, NULL, 1), 0);
    cr_assert_eq(bthread_id_create_text(&i2, t2, keep_text, NULL, 1), 0);
    cr_assert_eq(bthread_id_create_text(&i3, t3, keep_text, NULL, 1), 0);
    cr_assert_eq(bthread_id_list_add(&a, i1), 0);
    cr_assert_eq(bthread_id_list_add(&b, i2), 0);
    bthread_id_list_swap(&a, &b); /* a: i2, b: i1 */
    cr_assert_eq(bthread_id_list_reset_text_pthreadsafe(&a, 1, "first", &pm), 0);
    cr_assert_str_eq(t2, "first");
    cr_assert_str_eq(t1, "");
    cr_assert_eq(bthread_id_list_add(&b, i3), 0);
    cr_assert_eq(bthread_id_list_reset_text_bthreadsafe(&b, 1, "second", &bm), 0);
    cr_assert_str_eq(t1, "second");
    cr_assert_str_eq(t3, "second");
    bthread_id_list_destroy(&a);
    bthread_id_list_destroy(&b);
    cr_assert_eq(bthread_mutex_destroy(&bm), 0);
}

/* A list keeps up with ids that come and go: gone ones make room, and it holds at most
 * 100000 living ones. */
Test(bthread_id_list, gone_ids_make_room_and_living_ones_are_bounded, .timeout = 60)
{
    bthread_id_list_t list;
    cr_assert_eq(bthread_id_list_init(&list, 0, 0), 0);
    int hits = 0;
    bthread_id_t keep;
    cr_assert_eq(bthread_id_create(&keep, &hits, count_and_destroy), 0);
    cr_assert_eq(bthread_id_list_add(&list, keep), 0);
    for (int i = 0; i < 200000; i++) { /* twice the bound, each gone before the next */
        bthread_id_t id;
        cr_assert_eq(bthread_id_create(&id, NULL, NULL), 0);
        cr_assert_eq(bthread_id_list_add(&list, id), 0, "add %d", i);
        cr_assert_eq(bthread_id_cancel(id), 0);
    }
    cr_assert_eq(bthread_id_list_reset(&list, EBADF), 0);
    cr_assert_eq(hits, 1);
    enum { BOUND = 100000 };
    bthread_id_t *live = malloc(BOUND * sizeof *live);
    cr_assert(live);
    for (int i = 0; i < BOUND; i++) {
        cr_assert_eq(bthread_id_create(&live[i], NULL, NULL), 0);
        cr_assert_eq(bthread_id_list_add(&list, live[i]), 0, "add %d", i);
    }
    bthread_id_t extra;
    cr_assert_eq(bthread_id_create(&extra, NULL, NULL), 0);
    cr_assert_eq(bthread_id_list_add(&list, extra), EAGAIN);
    cr_assert_eq(bthread_id_cancel(live[0]), 0); /* one gone: room again */
    cr_assert_eq(bthread_id_list_add(&list, extra), 0);
    cr_assert_eq(bthread_id_list_reset(&list, EBADF), 0); /* default on_error destroys */
    for (int i = 0; i < BOUND; i++)
        cr_assert_eq(bthread_id_trylock(live[i], NULL), EINVAL);
    cr_assert_eq(bthread_id_trylock(extra, NULL), EINVAL);
    bthread_id_list_destroy(&list);
    free(live);
}

/* ---- stress ------------------------------------------------------------------------ */

/* One id; lockers (lock and trylock) and error issuers from bthreads and pthreads.  The
 * counter is plain: the id's lock is all that protects it.  Every lock and every error
 * that returned 0 is counted once: nothing lost, nothing run twice. */
#define SHARED_ITERS 50000

typedef struct shared_id {
    bthread_id_t id;
    long counter;           /* under the id's lock */
    _Atomic int inside;     /* occupants: must never exceed 1 */
    _Atomic long locks, errors; /* successful calls, counted by the callers */
    _Atomic int next_role;
} shared_id_t;

static void critical_section(shared_id_t *s)
{
    /* relaxed: a count of occupants, checked only for exclusion. */
    CHECK(atomic_fetch_add_explicit(&s->inside, 1, memory_order_relaxed) == 0);
    s->counter++;
    atomic_fetch_sub_explicit(&s->inside, 1, memory_order_relaxed);
}

static int count_error_and_unlock(bthread_id_t id, void *data, int error_code)
{
    (void)error_code;
    critical_section(data);
    return bthread_id_unlock(id);
}

static void *shared_worker(void *p)
{
    shared_id_t *s = p;
    const int role = atomic_fetch_add_explicit(&s->next_role, 1, memory_order_relaxed);
    for (int i = 0; i < SHARED_ITERS; i++) {
        switch ((role + i) % 3) {
        case 0: {
            void *data = NULL;
            CHECK(bthread_id_lock(s->id, &data) == 0 && data == s);
            critical_section(s);
            CHECK(bthread_id_unlock(s->id) == 0);
            atomic_fetch_add_explicit(&s->locks, 1, memory_order_relaxed);
            break;
        }
        case 1: {
            int rc;
            while ((rc = bthread_id_trylock(s->id, NULL)) == EBUSY)
                bthread_yield();
            CHECK(rc == 0);
            critical_section(s);
            CHECK(bthread_id_unlock(s->id) == 0);
            atomic_fetch_add_explicit(&s->locks, 1, memory_order_relaxed);
            break;
        }
        default:
            CHECK(bthread_id_error(s->id, i) == 0);
            atomic_fetch_add_explicit(&s->errors, 1, memory_order_relaxed);
        }
    }
    return NULL;
}

Test(bthread_id_stress, lock_excludes_and_no_error_is_lost, .timeout = 120)
{
    shared_id_t s = {.counter = 0};
    cr_assert_eq(bthread_id_create(&s.id, &s, count_error_and_unlock), 0);
    joiner_arg_t j = {.id = s.id, .expect = 0};
    bthread_t jb;
    cr_assert_eq(bthread_start_background(&jb, NULL, joiner, &j), 0);
    bthread_t bt[4];
    pthread_t pt[2];
    start_mixed(4, 2, bt, pt, shared_worker, &s);
    join_mixed(4, 2, bt, pt);
    /* Every queued error ran before the lock became free again. */
    cr_assert_eq(bthread_id_lock(s.id, NULL), 0);
    cr_assert_eq(s.counter, atomic_load(&s.locks) + atomic_load(&s.errors));
    cr_assert_eq(atomic_load(&s.locks) + atomic_load(&s.errors), 6L * SHARED_ITERS);
    atomic_store_explicit(&j.destroyed, 1, memory_order_relaxed);
    cr_assert_eq(bthread_id_unlock_and_destroy(s.id), 0);
    cr_assert_eq(bthread_join(jb, NULL), 0);
    assert_no_failures();
    cr_log_info("%ld locks, %ld errors", atomic_load(&s.locks), atomic_load(&s.errors));
}

/* Two lockers (a bthread and a pthread) that widen the range by one at every
 * acquisition.  Each widening moves the lock word's values (locked = first + range), so
 * the new "locked" is the old "contended" that the other locker, on its way to sleep,
 * may still hold.  A lock whose wake-up depends on that value can let it sleep under a
 * holder that does not know of it, and with two lockers nobody else comes to wake it: a
 * hang.  The count must be exact. */
#define WIDEN_ROUNDS 200

typedef struct widening {
    bthread_id_t id;
    long counter; /* under the id's lock */
    _Atomic int range;
} widening_t;

static void *widen_and_count(void *p)
{
    widening_t *w = p;
    for (int i = 0; i < BTHREAD_ID_MAX_RANGE / 2 - 1; i++) {
        const int r = 1 + atomic_fetch_add_explicit(&w->range, 1, memory_order_relaxed);
        CHECK(bthread_id_lock_and_reset_range(w->id, NULL, r) == 0);
        w->counter++;
        CHECK(bthread_id_unlock(w->id) == 0);
    }
    return NULL;
}

Test(bthread_id_stress, widening_the_range_loses_no_sleeper, .timeout = 120)
{
    for (int round = 0; round < WIDEN_ROUNDS; round++) {
        widening_t w = {.counter = 0, .range = 1};
        cr_assert_eq(bthread_id_create(&w.id, NULL, NULL), 0);
        bthread_t bt[1];
        pthread_t pt[1];
        start_mixed(1, 1, bt, pt, widen_and_count, &w);
        join_mixed(1, 1, bt, pt);
        cr_assert_eq(w.counter, 2L * (BTHREAD_ID_MAX_RANGE / 2 - 1));
        cr_assert_eq(bthread_id_lock(w.id, NULL), 0);
        cr_assert_eq(bthread_id_unlock_and_destroy(w.id), 0);
    }
    assert_no_failures();
}

/* Rounds of: an id, and lockers, error issuers and joiners racing on it until one error
 * (the kill) destroys it.  Everyone must end, lockers and issuers must see only 0 then
 * EINVAL, and the kill's on_error must run exactly once. */
#define KILL_ROUNDS 1000
#define KILL_CODE 12345

typedef struct victim {
    bthread_id_t id;
    _Atomic int kills, handled;
    _Atomic int joined;
} victim_t;

static int maybe_kill(bthread_id_t id, void *data, int error_code)
{
    victim_t *v = data;
    if (error_code == KILL_CODE) {
        atomic_fetch_add_explicit(&v->kills, 1, memory_order_relaxed);
        return bthread_id_unlock_and_destroy(id);
    }
    atomic_fetch_add_explicit(&v->handled, 1, memory_order_relaxed);
    return bthread_id_unlock(id);
}

static void *victim_locker(void *p)
{
    victim_t *v = p;
    for (int i = 0;; i++) {
        const int rc = bthread_id_lock(v->id, NULL);
        if (rc == EINVAL)
            return NULL;
        CHECK(rc == 0);
        CHECK(bthread_id_unlock(v->id) == 0);
        if (i % 8 == 7)
            bthread_yield();
    }
}

static void *victim_issuer(void *p)
{
    victim_t *v = p;
    for (int i = 0;; i++) {
        const int rc = bthread_id_error(v->id, i == 50 ? KILL_CODE : 1);
        if (rc == EINVAL)
            return NULL;
        CHECK(rc == 0);
        if (i % 8 == 7)
            bthread_yield();
    }
}

static void *victim_joiner(void *p)
{
    victim_t *v = p;
    CHECK(bthread_id_join(v->id) == 0);
    atomic_fetch_add_explicit(&v->joined, 1, memory_order_relaxed);
    return NULL;
}

Test(bthread_id_stress, destroy_races_lockers_issuers_and_joiners, .timeout = 120)
{
    const int rounds = (int)sb_rounds(KILL_ROUNDS, KILL_ROUNDS / 5); /* sbtest.h */
    for (int round = 0; round < rounds; round++) {
        victim_t v = {.kills = 0};
        cr_assert_eq(bthread_id_create(&v.id, &v, maybe_kill), 0);
        bthread_t bt[5];
        pthread_t pt[2];
        cr_assert_eq(bthread_start_background(&bt[0], NULL, victim_locker, &v), 0);
        cr_assert_eq(bthread_start_background(&bt[1], NULL, victim_locker, &v), 0);
        cr_assert_eq(bthread_start_background(&bt[2], NULL, victim_issuer, &v), 0);
        cr_assert_eq(bthread_start_background(&bt[3], NULL, victim_joiner, &v), 0);
        cr_assert_eq(bthread_start_background(&bt[4], NULL, victim_joiner, &v), 0);
        cr_assert_eq(pthread_create(&pt[0], NULL, victim_locker, &v), 0);
        cr_assert_eq(pthread_create(&pt[1], NULL, round % 2 ? victim_issuer : victim_joiner,
                                    &v),
                     0);
        join_mixed(5, 2, bt, pt);
        cr_assert_eq(atomic_load(&v.kills), 1, "round %d", round);
        cr_assert_eq(bthread_id_lock(v.id, NULL), EINVAL);
    }
    assert_no_failures();
}

/* Create/destroy churn from bthreads and pthreads.  A registry by slot holds the id
 * that is alive there: a create must find its slot empty (no id handed out twice while
 * alive), a slot's versions must grow, and the id destroyed last round must stay dead. */
#define CHURN_SLOTS 4096
#define CHURN_ROUNDS 50000

static _Atomic uint64_t g_alive_in_slot[CHURN_SLOTS];
static _Atomic uint32_t g_last_version[CHURN_SLOTS];

static void *churn(void *unused)
{
    (void)unused;
    bthread_id_t old = INVALID_BTHREAD_ID;
    for (int i = 0; i < CHURN_ROUNDS; i++) {
        bthread_id_t id;
        CHECK(bthread_id_create_ranged(&id, NULL, NULL, 1 + i % 4) == 0);
        const uint32_t slot = (uint32_t)(id.value >> 32);
        CHECK(slot < CHURN_SLOTS);
        if (slot >= CHURN_SLOTS)
            return NULL;
        uint64_t none = 0;
        /* relaxed: the slot is handed out again only after its destroy, which orders
         * the destroyer's clearing before this (the library's free list). */
        CHECK(atomic_compare_exchange_strong_explicit(&g_alive_in_slot[slot], &none, id.value,
                                                      memory_order_relaxed,
                                                      memory_order_relaxed));
        const uint32_t last = atomic_load_explicit(&g_last_version[slot], memory_order_relaxed);
        CHECK(version(id) > last);
        atomic_store_explicit(&g_last_version[slot], version(id), memory_order_relaxed);
        if (old.value) { /* last round's id: dead, whoever holds its slot now */
            const int rc = bthread_id_trylock(old, NULL);
            CHECK(rc == EINVAL);
            if (rc == 0) /* it wrongly names a living entity: give it back, go on */
                bthread_id_unlock(old);
            if (rc == EINVAL) { /* (a join of a living entity could wait for us) */
                CHECK(bthread_id_error(old, 1) == EINVAL);
                CHECK(bthread_id_join(old) == 0);
            }
        }
        CHECK(bthread_id_lock(plus(id, (uint64_t)(i % (1 + i % 4))), NULL) == 0);
        CHECK(atomic_exchange_explicit(&g_alive_in_slot[slot], 0, memory_order_relaxed) ==
              id.value);
        if (i % 2) {
            CHECK(bthread_id_unlock_and_destroy(id) == 0);
        } else {
            CHECK(bthread_id_error(id, 1) == 0); /* locked: queued for our unlock */
            CHECK(bthread_id_unlock(id) == 0);   /* runs it: the default on_error destroys */
        }
        old = id;
        if (i % 64 == 63)
            bthread_yield();
    }
    return NULL;
}

Test(bthread_id_stress, no_id_is_handed_out_twice_while_alive, .timeout = 120)
{
    bthread_t bt[4];
    pthread_t pt[2];
    start_mixed(4, 2, bt, pt, churn, NULL);
    join_mixed(4, 2, bt, pt);
    assert_no_failures();
}
