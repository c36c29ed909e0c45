/*
 * test_cxx_wrappers.c -- bthread.hpp, brpc's C++ wrappers, every variant.
 *
 * sbtest is C, so the checks are C++ functions in test_cxx_wrappers.cpp (built with
 * $(CXX), tests/rules.mk), one per test; each returns NULL when all its checks held,
 * else the first that failed.  This file gives each its process, timeout and name.
 */
#include "sbtest.h"

#include "bthread.h"

const char *cxx_mutex_and_lock_guards(void);
const char *cxx_unique_lock_of_bthread_mutex_t(void);
const char *cxx_condition_variable(void);
const char *cxx_rwlock_and_guards(void);
const char *cxx_countdown_event(void);
const char *cxx_attr_or_and_once(void);
const char *cxx_id_errors_with_text(void);
const char *cxx_id_operators_views_and_list_reset2(void);

static void setup(void) { cr_assert_eq(bthread_setconcurrency(2), 0); }
TestSuite(cxx, .init = setup);

#define CXX_TEST(name, secs)                                                              \
    Test(cxx, name, .timeout = secs)                                                      \
    {                                                                                     \
        const char *failed = cxx_##name();                                                \
        cr_assert_null(failed, "%s", failed);                                             \
    }

CXX_TEST(mutex_and_lock_guards, 60)
CXX_TEST(unique_lock_of_bthread_mutex_t, 10)
CXX_TEST(condition_variable, 60)
CXX_TEST(rwlock_and_guards, 60)
CXX_TEST(countdown_event, 30)
CXX_TEST(attr_or_and_once, 10)
CXX_TEST(id_errors_with_text, 10)
CXX_TEST(id_operators_views_and_list_reset2, 10)
