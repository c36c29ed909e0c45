/*
 * check_compat/criterion/criterion.h -- the subset of Criterion's API that our C tests
 * use, implemented on the Check framework, for the ThreadSanitizer build only.
 *
 * Why: Criterion 2.4 cannot start under TSan (boxfort maps its inheritable arena at
 * random addresses, which TSan's shadow reservations cover: "Could not initialize
 * inheritable arena", Snaipe/Criterion#274).  Check forks one plain child per test and
 * works under TSan, so with -Itests/c/check_compat first on the include path the same
 * test sources build against this header and tests/c/check_compat/runner.c instead of
 * libcriterion.  Normal and ASan builds keep the real Criterion.
 *
 * What maps to what:
 *   Test(suite, name, .timeout, .signal, .exit_code, .init, .fini, .description,
 *        .disabled)          one Check TCase per test (its own timeout), forked child
 *   TestSuite(name, ...)    suite-wide .init/.fini/.timeout/... as Criterion: suite init,
 *                           then test init; test fini, then suite fini
 *   ParameterizedTest       one Check loop iteration per parameter
 *   cr_assert_*             failure ends the test process through Check (_exit(1))
 *   cr_expect_*             failure is printed and counted; the test fails at its end
 *   cr_skip_test            the test ends and is reported as skipped, not as passed
 *   cr_log_*                printed to the original stderr
 * Not supported (no test uses them): theories, cr_assert with a non-literal format,
 * .fini after a failed cr_assert (the test process ends at the failure), and a test
 * whose .exit_code is 1 (Check cannot tell it from a failed assertion).
 *
 * SB_UNDER_TSAN is defined when the test is built with -fsanitize=thread, so that a
 * test which cannot run under TSan can skip or scale itself with a printed reason.
 */
#ifndef SB_CHECK_COMPAT_CRITERION_H
#define SB_CHECK_COMPAT_CRITERION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define SB_CHECK_COMPAT 1
#if defined(__SANITIZE_THREAD__)
#define SB_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SB_UNDER_TSAN 1
#endif
#endif

/* Criterion's parameter array (criterion/parameterized.h builds it). */
struct criterion_test_params {
    size_t size;
    void *params;
    size_t length;
    void (*cleanup)(struct criterion_test_params *);
};

/* One Test() / ParameterizedTest(): the fields after `next` are Criterion's options. */
struct sbcc_test {
    const char *suite, *name, *file;
    int line;
    void (*fn)(void);                             /* Test() */
    void (*pfn)(void *);                          /* ParameterizedTest() */
    struct criterion_test_params (*params)(void); /* ParameterizedTestParameters() */
    struct sbcc_test *next;
    double timeout; /* seconds; 0 = none */
    int signal;     /* the signal that must end the test, 0 = none */
    int exit_code;  /* the exit status the test must end with */
    void (*init)(void);
    void (*fini)(void);
    const char *description;
    bool disabled;
};

/* TestSuite(): defaults for every test of the suite. */
struct sbcc_suite {
    const char *name;
    struct sbcc_suite *next;
    double timeout;
    int signal;
    int exit_code;
    void (*init)(void);
    void (*fini)(void);
    const char *description;
    bool disabled;
};

/* runner.c */
void sbcc_register_test(struct sbcc_test *t);
void sbcc_register_suite(struct sbcc_suite *s);
void sbcc_fail_(int fatal, const char *file, int line, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void sbcc_skip_(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
void sbcc_log_(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *sbcc_what_cmp_(char *buf, size_t n, const char *expr, const char *a, const char *b);
char *sbcc_what_str_(char *buf, size_t n, const char *expr, const char *a, const char *b);
void sbcc_val_i_(char *buf, long long v);
void sbcc_val_u_(char *buf, unsigned long long v);
void sbcc_val_f_(char *buf, long double v);
void sbcc_val_p_(char *buf, const volatile void *v);

/* sbcc_fn_<suite>_<name> and friends: one identifier per test, per role. */
#define SBCC_ID_(Prefix, Suite, Name) Prefix##_##Suite##_##Name

/* ---- tests and suites ------------------------------------------------------------ */

/* A constructor puts each test on the runner's list; the runner orders them by line. */
#define Test(Suite, Name, ...)                                                            \
    static void SBCC_ID_(sbcc_fn, Suite, Name)(void);                                     \
    static struct sbcc_test SBCC_ID_(sbcc_test, Suite, Name) = {                          \
        .suite = #Suite, .name = #Name, .file = __FILE__, .line = __LINE__,               \
        .fn = SBCC_ID_(sbcc_fn, Suite, Name), __VA_ARGS__};                              \
    __attribute__((constructor)) static void SBCC_ID_(sbcc_reg, Suite, Name)(void)        \
    {                                                                                     \
        sbcc_register_test(&SBCC_ID_(sbcc_test, Suite, Name));                            \
    }                                                                                     \
    static void SBCC_ID_(sbcc_fn, Suite, Name)(void)

/* Ends in a definition so that the caller's `;` closes it. */
#define TestSuite(Name, ...)                                                              \
    static struct sbcc_suite sbcc_suite_##Name;                                           \
    __attribute__((constructor)) static void sbcc_sreg_##Name(void)                       \
    {                                                                                     \
        sbcc_register_suite(&sbcc_suite_##Name);                                          \
    }                                                                                     \
    static struct sbcc_suite sbcc_suite_##Name = {.name = #Name, __VA_ARGS__}

/* ---- assertions ------------------------------------------------------------------ *
 * Every macro takes Criterion's optional printf-style message.  `" " __VA_ARGS__` makes
 * the format a literal that is never empty (-Wformat-zero-length); the runner drops
 * the leading blank. */

#define sbcc_cond_(Fatal, Ok, What, ...)                                                  \
    do {                                                                                  \
        if (!(Ok))                                                                        \
            sbcc_fail_((Fatal), __FILE__, __LINE__, (What), " " __VA_ARGS__);             \
    } while (0)

/* The value of one operand, printed by type into a 48-byte buffer. */
#define sbcc_val_(Buf, X)                                                                 \
    _Generic((X),                                                                         \
        _Bool: sbcc_val_u_, char: sbcc_val_i_, signed char: sbcc_val_i_,                  \
        unsigned char: sbcc_val_u_, short: sbcc_val_i_, unsigned short: sbcc_val_u_,      \
        int: sbcc_val_i_, unsigned int: sbcc_val_u_, long: sbcc_val_i_,                   \
        unsigned long: sbcc_val_u_, long long: sbcc_val_i_,                               \
        unsigned long long: sbcc_val_u_, float: sbcc_val_f_, double: sbcc_val_f_,         \
        long double: sbcc_val_f_, default: sbcc_val_p_)((Buf), (X))

/* Each operand is evaluated once and compared with the operator Criterion uses, under
 * the same usual arithmetic conversions.  -Wsign-compare is off here only because an
 * operand copied into a variable is no longer a constant: `size == 3` must not warn;
 * the real-Criterion build of the same source still checks it. */
#define sbcc_op_(Fatal, A, Op, B, ...)                                                    \
    do {                                                                                  \
        _Pragma("GCC diagnostic push")                                                    \
        _Pragma("GCC diagnostic ignored \"-Wsign-compare\"")                              \
        __auto_type sbcc_a_ = (A);                                                        \
        __auto_type sbcc_b_ = (B);                                                        \
        if (!(sbcc_a_ Op sbcc_b_)) {                                                      \
            char sbcc_va_[48], sbcc_vb_[48], sbcc_w_[512];                                \
            sbcc_val_(sbcc_va_, sbcc_a_);                                                 \
            sbcc_val_(sbcc_vb_, sbcc_b_);                                                 \
            sbcc_fail_((Fatal), __FILE__, __LINE__,                                       \
                       sbcc_what_cmp_(sbcc_w_, sizeof sbcc_w_, #A " " #Op " " #B,         \
                                      sbcc_va_, sbcc_vb_),                                \
                       " " __VA_ARGS__);                                                  \
        }                                                                                 \
        _Pragma("GCC diagnostic pop")                                                     \
    } while (0)

#define sbcc_str_(Fatal, A, Op, B, ...)                                                   \
    do {                                                                                  \
        const char *sbcc_a_ = (A), *sbcc_b_ = (B);                                        \
        if (!(strcmp(sbcc_a_, sbcc_b_) Op 0)) {                                           \
            char sbcc_w_[1024];                                                           \
            sbcc_fail_((Fatal), __FILE__, __LINE__,                                       \
                       sbcc_what_str_(sbcc_w_, sizeof sbcc_w_, #A " " #Op " " #B,         \
                                      sbcc_a_, sbcc_b_),                                  \
                       " " __VA_ARGS__);                                                  \
        }                                                                                 \
    } while (0)

#define sbcc_arr_(Fatal, A, Op, B, Size, ...)                                             \
    sbcc_cond_(Fatal, memcmp((A), (B), (Size)) Op 0,                                      \
               "(" #A ")[0.." #Size "] " #Op " (" #B ")[0.." #Size "] is false",          \
               __VA_ARGS__)

#define cr_assert(C, ...) sbcc_cond_(1, (C), "the expression (" #C ") is false", __VA_ARGS__)
#define cr_expect(C, ...) sbcc_cond_(0, (C), "the expression (" #C ") is false", __VA_ARGS__)
#define cr_assert_not(C, ...)                                                             \
    sbcc_cond_(1, !(C), "the expression (" #C ") is true", __VA_ARGS__)
#define cr_expect_not(C, ...)                                                             \
    sbcc_cond_(0, !(C), "the expression (" #C ") is true", __VA_ARGS__)
#define cr_assert_fail(...)                                                               \
    sbcc_cond_(1, 0, "the conditions for this assertion were not met", __VA_ARGS__)
#define cr_expect_fail(...)                                                               \
    sbcc_cond_(0, 0, "the conditions for this expectation were not met", __VA_ARGS__)

#define cr_assert_null(P, ...) sbcc_cond_(1, (P) == NULL, "(" #P ") is not NULL", __VA_ARGS__)
#define cr_expect_null(P, ...) sbcc_cond_(0, (P) == NULL, "(" #P ") is not NULL", __VA_ARGS__)
#define cr_assert_not_null(P, ...)                                                        \
    sbcc_cond_(1, (P) != NULL, "(" #P ") is NULL", __VA_ARGS__)
#define cr_expect_not_null(P, ...)                                                        \
    sbcc_cond_(0, (P) != NULL, "(" #P ") is NULL", __VA_ARGS__)

#define cr_assert_eq(A, B, ...) sbcc_op_(1, A, ==, B, __VA_ARGS__)
#define cr_expect_eq(A, B, ...) sbcc_op_(0, A, ==, B, __VA_ARGS__)
#define cr_assert_neq(A, B, ...) sbcc_op_(1, A, !=, B, __VA_ARGS__)
#define cr_expect_neq(A, B, ...) sbcc_op_(0, A, !=, B, __VA_ARGS__)
#define cr_assert_lt(A, B, ...) sbcc_op_(1, A, <, B, __VA_ARGS__)
#define cr_expect_lt(A, B, ...) sbcc_op_(0, A, <, B, __VA_ARGS__)
#define cr_assert_leq(A, B, ...) sbcc_op_(1, A, <=, B, __VA_ARGS__)
#define cr_expect_leq(A, B, ...) sbcc_op_(0, A, <=, B, __VA_ARGS__)
#define cr_assert_gt(A, B, ...) sbcc_op_(1, A, >, B, __VA_ARGS__)
#define cr_expect_gt(A, B, ...) sbcc_op_(0, A, >, B, __VA_ARGS__)
#define cr_assert_geq(A, B, ...) sbcc_op_(1, A, >=, B, __VA_ARGS__)
#define cr_expect_geq(A, B, ...) sbcc_op_(0, A, >=, B, __VA_ARGS__)

#define cr_assert_str_eq(A, B, ...) sbcc_str_(1, A, ==, B, __VA_ARGS__)
#define cr_expect_str_eq(A, B, ...) sbcc_str_(0, A, ==, B, __VA_ARGS__)
#define cr_assert_str_neq(A, B, ...) sbcc_str_(1, A, !=, B, __VA_ARGS__)
#define cr_expect_str_neq(A, B, ...) sbcc_str_(0, A, !=, B, __VA_ARGS__)
#define cr_assert_str_empty(S, ...) sbcc_cond_(1, (S)[0] == '\0', #S " is not empty", __VA_ARGS__)
#define cr_expect_str_empty(S, ...) sbcc_cond_(0, (S)[0] == '\0', #S " is not empty", __VA_ARGS__)
#define cr_assert_str_not_empty(S, ...) sbcc_cond_(1, (S)[0] != '\0', #S " is empty", __VA_ARGS__)
#define cr_expect_str_not_empty(S, ...) sbcc_cond_(0, (S)[0] != '\0', #S " is empty", __VA_ARGS__)

#define cr_assert_arr_eq(A, B, Size, ...) sbcc_arr_(1, A, ==, B, Size, __VA_ARGS__)
#define cr_expect_arr_eq(A, B, Size, ...) sbcc_arr_(0, A, ==, B, Size, __VA_ARGS__)
#define cr_assert_arr_neq(A, B, Size, ...) sbcc_arr_(1, A, !=, B, Size, __VA_ARGS__)
#define cr_expect_arr_neq(A, B, Size, ...) sbcc_arr_(0, A, !=, B, Size, __VA_ARGS__)

/* Ends the test now; it is counted as skipped, with this reason printed. */
#define cr_skip_test(...) sbcc_skip_(__FILE__, __LINE__, " " __VA_ARGS__)

/* Criterion's shared-memory allocator: the runner builds parameters before it forks,
 * so the ordinary heap is inherited by every test process. */
#define cr_malloc(Size) malloc(Size)
#define cr_calloc(N, Size) calloc((N), (Size))
#define cr_realloc(P, Size) realloc((P), (Size))
#define cr_free(P) free(P)

#include "logging.h"

#endif /* SB_CHECK_COMPAT_CRITERION_H */
