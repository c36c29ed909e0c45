/*
 * thread_checks.h -- assertions for code that runs on bthreads and pthreads.
 *
 * Checks made on bthreads and other threads are recorded with CHECK(cond), and the
 * test's thread calls assert_no_failures() after it has joined the others: one report,
 * with the count and the first failure, once every thread is done.
 */
#ifndef SCHEDBENCH_TEST_THREAD_CHECKS_H
#define SCHEDBENCH_TEST_THREAD_CHECKS_H

#include "sbtest.h"
#include <stdatomic.h>

static _Atomic int g_failures;
static _Atomic(const char *) g_first_failure;

static void note_failure(const char *what)
{
    const char *none = NULL;
    /* relaxed: only read after the threads are joined (join orders it). */
    atomic_compare_exchange_strong_explicit(&g_first_failure, &none, what,
                                            memory_order_relaxed, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_failures, 1, memory_order_relaxed);
}
#define STR2(x) #x
#define STR(x) STR2(x)
#define CHECK(c)                                                                         \
    do {                                                                                 \
        if (!(c))                                                                        \
            note_failure(__FILE__ ":" STR(__LINE__) ": " #c);                            \
    } while (0)

static void assert_no_failures(void)
{
    const int n = atomic_load_explicit(&g_failures, memory_order_relaxed);
    const char *first = atomic_load_explicit(&g_first_failure, memory_order_relaxed);
    cr_assert_eq(n, 0, "%d failed checks in threads, first: %s", n, first ? first : "?");
}

#endif /* SCHEDBENCH_TEST_THREAD_CHECKS_H */
