/*
 * test_list.c -- bthread_list_* (brpc's lists of bthreads to stop and join;
 * common/id.c), every variant.
 *
 * Join waits for every bthread of the list; a list not initialized or destroyed answers
 * EINVAL; stop interrupts the list's sleepers and marks them stopped; bthreads that
 * ended make room for new entries, so a long-lived list does not grow with them.
 */
#include "sbtest.h"
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "bthread.h"

#include "thread_checks.h"

static void setup(void) { cr_assert_eq(bthread_setconcurrency(2), 0); }
TestSuite(list, .init = setup);

static _Atomic int g_done;

/* A list of n bthreads running fn(arg). */
static void start_listed(bthread_list_t *list, int n, void *(*fn)(void *), void *arg)
{
    cr_assert_eq(bthread_list_init(list, 0, 0), 0);
    for (int i = 0; i < n; i++) {
        bthread_t t;
        cr_assert_eq(bthread_start_urgent(&t, NULL, fn, arg), 0);
        cr_assert_eq(bthread_list_add(list, t), 0);
    }
}

static void *sleep_then_count(void *us)
{
    bthread_usleep((uint64_t)(uintptr_t)us); /* the task's work: brpc's test sleeps too */
    atomic_fetch_add_explicit(&g_done, 1, memory_order_relaxed);
    return NULL;
}

Test(list, join_waits_for_every_bthread, .timeout = 20)
{
    enum { N = 10 };
    bthread_list_t list;
    start_listed(&list, N, sleep_then_count, (void *)10000);
    cr_assert_eq(bthread_list_join(&list), 0);
    cr_assert_eq(atomic_load(&g_done), N);
    cr_assert_eq(bthread_list_join(&list), 0); /* emptied by the join */
    bthread_list_destroy(&list);
}

Test(list, a_destroyed_list_is_invalid, .timeout = 20)
{
    bthread_list_t list;
    start_listed(&list, 1, sleep_then_count, (void *)1000);
    cr_assert_eq(bthread_list_join(&list), 0);
    bthread_list_destroy(&list);
    cr_assert_eq(bthread_list_join(&list), EINVAL);
    cr_assert_eq(bthread_list_stop(&list), EINVAL);
    cr_assert_eq(bthread_list_add(&list, bthread_self() + 1), EINVAL);
    cr_assert_eq(bthread_list_join(NULL), EINVAL);
}

static void *sleep_until_stopped(void *unused)
{
    (void)unused;
    /* An hour: only bthread_list_stop ends it within the test's timeout. */
    CHECK(bthread_usleep(3600ull * 1000000) == -1);
    CHECK(bthread_stopped(bthread_self()) == 1);
    atomic_fetch_add_explicit(&g_done, 1, memory_order_relaxed);
    return NULL;
}

Test(list, stop_interrupts_and_marks_every_bthread, .timeout = 20)
{
    enum { N = 8 };
    bthread_list_t list;
    start_listed(&list, N, sleep_until_stopped, NULL);
    /* A stop before a bthread sleeps still counts: it is marked, and bthread_usleep of
     * a stopped bthread returns at once (bthread.h). */
    cr_assert_eq(bthread_list_stop(&list), 0);
    cr_assert_eq(bthread_list_join(&list), 0);
    assert_no_failures();
    cr_assert_eq(atomic_load(&g_done), N);
    bthread_list_destroy(&list);
}

static void *count_one(void *unused)
{
    (void)unused;
    atomic_fetch_add_explicit(&g_done, 1, memory_order_relaxed);
    return NULL;
}

/* 100000 short bthreads through one list: those that ended make room (the list stays
 * far below brpc's bound of 100000 living entries, which would refuse the rest). */
Test(list, ended_bthreads_make_room, .timeout = 60)
{
    bthread_list_t list;
    cr_assert_eq(bthread_list_init(&list, 0, 0), 0);
    enum { N = 100000 };
    for (int i = 0; i < N; i++) {
        bthread_t t;
        cr_assert_eq(bthread_start_background(&t, NULL, count_one, NULL), 0);
        cr_assert_eq(bthread_list_add(&list, t), 0, "add %d", i);
        if (i % 1000 == 999) /* let them end as we go */
            while (atomic_load(&g_done) < i - 500)
                bthread_yield();
    }
    cr_assert_eq(bthread_list_join(&list), 0);
    cr_assert_eq(atomic_load(&g_done), N);
    bthread_list_destroy(&list);
}
