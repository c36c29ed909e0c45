/*
 * selftest.c -- the framework's own tests, with known outcomes: each name says what
 * must happen (pass_*, fail_*, skip_*).  selftest.sh runs this binary and checks every
 * outcome, the failure lines and the closing counts, so a runner that passed everything
 * (or failed everything) is caught.
 */
#include "sbtest.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- assertions ------------------------------------------------------------------- */

Test(selftest, pass_assertions, .timeout = 10)
{
    int three = 3, a[2] = {1, 2}, b[2] = {1, 2};
    const char *s = "x";
    cr_assert(1 + 1 == 2);
    cr_assert_not(0);
    cr_assert_eq(three, 3);
    cr_assert_eq(sizeof a, 8);
    cr_assert_neq(-1, 1);
    cr_assert_lt(1, 2);
    cr_assert_leq(2, 2);
    cr_assert_gt(2.5, 1.0);
    cr_assert_geq(three, 3u, "with a message %d", 1);
    cr_assert_null(NULL);
    cr_assert_not_null(s);
    cr_assert_eq(s, s);
    cr_assert_str_eq(s, "x");
    cr_assert_arr_eq(a, b, sizeof a);
    cr_expect(1);
    cr_expect_eq(2, 2);
    cr_expect_str_eq(s, "x");
    cr_log_info("a log line from %s\n", "pass_assertions");
}

Test(selftest, fail_assert, .timeout = 10) { cr_assert(0, "custom message %d", 3); }

Test(selftest, fail_assert_eq, .timeout = 10)
{
    int one = 1;
    cr_assert_eq(one, 2);
}

Test(selftest, fail_assert_str_eq, .timeout = 10) { cr_assert_str_eq("abc", "abd"); }

Test(selftest, fail_assert_arr_eq, .timeout = 10)
{
    char x[2] = {1, 2}, y[2] = {1, 3};
    cr_assert_arr_eq(x, y, 2);
}

/* Both expectations report; the test goes on to its end, then fails. */
Test(selftest, fail_expect, .timeout = 10)
{
    cr_expect_eq(1, 2, "first");
    cr_expect(0, "second");
    cr_log_info("after the expectations");
}

static void *assert_in_thread(void *arg)
{
    (void)arg;
    cr_assert_fail("from a thread");
    return NULL;
}

Test(selftest, fail_assert_in_thread, .timeout = 10)
{
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, assert_in_thread, NULL), 0);
    pthread_join(t, NULL);
    sleep(30); /* not reached: the failure ended the process */
}

/* ---- how the test process ends ------------------------------------------------------ */

static void fault(void)
{
    volatile char *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq((void *)p, MAP_FAILED);
    *p = 1;
}

Test(selftest, pass_signal, .signal = SIGSEGV, .timeout = 10) { fault(); }
Test(selftest, fail_signal_missing, .signal = SIGSEGV, .timeout = 10) {}
Test(selftest, fail_unexpected_signal, .timeout = 10) { fault(); }
Test(selftest, pass_exit_code, .exit_code = 3, .timeout = 10) { _exit(3); }
Test(selftest, fail_early_exit, .timeout = 10) { _exit(2); }
Test(selftest, fail_timeout, .timeout = 0.5) { sleep(30); }

/* ---- skips -------------------------------------------------------------------------- */

Test(selftest, skip_by_call, .timeout = 10)
{
    cr_skip_test("skipped on purpose (%d)", 1);
    cr_assert_fail("after cr_skip_test");
}

Test(selftest, skip_in_a_signal_test, .signal = SIGSEGV, .timeout = 10)
{
    cr_skip_test("skipped on purpose");
}

/* ---- fixtures ----------------------------------------------------------------------- */

static char order[8];
static void mark(char c)
{
    size_t n = strlen(order);
    order[n] = c;
    order[n + 1] = '\0';
}
static void suite_init(void) { mark('S'); }
static void test_init(void) { mark('T'); }
static void fini_exit7(void)
{
    fflush(NULL);
    _exit(strcmp(order, "STB") == 0 ? 7 : 8);
}

TestSuite(fixtures, .init = suite_init);

Test(fixtures, pass_suite_init_then_test_init, .init = test_init, .timeout = 10)
{
    cr_assert_str_eq(order, "ST");
}

/* .fini runs after the body: it ends the process with 7, the expected status. */
Test(fixtures, pass_fini_runs_last, .init = test_init, .fini = fini_exit7, .exit_code = 7,
     .timeout = 10)
{
    mark('B');
}

/* ---- parameters --------------------------------------------------------------------- */

ParameterizedTestParameters(params, pass_two_fail_one)
{
    int *values = cr_malloc(3 * sizeof *values);
    values[0] = 10, values[1] = 11, values[2] = 12;
    return cr_make_param_array(int, values, 3);
}

ParameterizedTest(int *v, params, pass_two_fail_one, .timeout = 10)
{
    cr_assert_neq(*v, 11, "parameter %d fails on purpose", *v);
}

/* ---- stderr capture ----------------------------------------------------------------- */

Test(redirect, pass_stderr_captured, .init = cr_redirect_stderr, .timeout = 10)
{
    fprintf(stderr, "hello ");
    fprintf(stderr, "world\n");
    cr_assert_stderr_eq_str("hello world\n");
}

Test(redirect, fail_stderr_differs, .init = cr_redirect_stderr, .timeout = 10)
{
    fprintf(stderr, "hello\n");
    cr_assert_stderr_eq_str("bye\n");
}

/* ---- ThreadSanitizer ---------------------------------------------------------------- */

#ifdef SB_UNDER_TSAN
static int racy;
static void *race(void *arg)
{
    for (int i = 0; i < 1000; i++)
        racy += (int)(intptr_t)arg; /* unsynchronized on purpose */
    return NULL;
}

/* A data race must fail the test (TSan exits 66 with halt_on_error=1). */
Test(tsan, fail_data_race, .timeout = 20)
{
    pthread_t a, b;
    pthread_create(&a, NULL, race, (void *)1);
    pthread_create(&b, NULL, race, (void *)2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
}
#endif
