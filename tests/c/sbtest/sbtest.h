/*
 * sbtest.h -- the C tests' framework: Criterion's spelling, our own small runner
 * (sbtest.c), the same in every build (gcc, clang, ASan, TSan, aarch64 under qemu-user).
 *
 *   Test(suite, name, .timeout = 10, .signal = SIGSEGV, .exit_code = 0, .init, .fini)
 *   TestSuite(suite, .init = f)       f runs before every test of the suite (before .init)
 *   ParameterizedTestParameters(suite, name) { return cr_make_param_array(T, array, n); }
 *   ParameterizedTest(T *p, suite, name, .timeout = 60) { ... }  one run per element
 *   cr_assert*(...)   on failure: one line (file:line, the expression, both values,
 *                     the optional printf-style message), and the test process ends
 *   cr_expect*(...)   the same line, the test goes on and fails at its end
 *   cr_skip_test(fmt, ...)  ends the test; it counts as skipped
 *   SB_UNDER_TSAN (defined in a TSan build), SB_SANITIZED (1 under ASan or TSan, else 0)
 *   sb_rounds(native, emulated)   fewer rounds of a race under an emulator
 *   cr_redirect_stderr (a .init) + cr_assert_stderr_eq_str(s): what the test wrote to stderr
 *
 * Every test runs in its own forked process, so a crash, an exit, a sanitizer's report
 * (TSan ends the process with status 66) or a hang fails that test alone.  A failure
 * may be reported from any thread.  The runner's options and environment: sbtest.c.
 */
#ifndef SBTEST_H
#define SBTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_THREAD__)
#define SB_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SB_UNDER_TSAN 1
#endif
#endif

/* SB_SANITIZED: 1 under ASan or TSan (their shadow memory shares the address space). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(SB_UNDER_TSAN)
#define SB_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SB_SANITIZED 1
#endif
#endif
#ifndef SB_SANITIZED
#define SB_SANITIZED 0
#endif

/* How many rounds a race or stress loop runs: `native`, or `emulated` under an emulator
 * (SB_EMULATED, set by tests/rules.mk for qemu-user).  qemu-user runs every guest load
 * and store as a host one, in the host's order, so a longer race finds nothing more
 * there; what emulation checks is the other architecture's code (asm/README.md). */
static inline long sb_rounds(long native, long emulated)
{
    return getenv("SB_EMULATED") ? emulated : native;
}

struct sbt_params {
    size_t size;    /* of one element */
    void *params;   /* the array, allocated by the generator (cr_malloc) */
    size_t length;
};

struct sbt_test {
    const char *suite, *name, *file;
    int line;
    void (*fn)(void);                             /* Test() */
    void (*pfn)(void *);                          /* ParameterizedTest() */
    struct sbt_params (*params)(void);            /* its generator */
    struct sbt_test *next;
    double timeout; /* seconds; 0: the runner's default */
    int signal;     /* the signal that must end the test; 0: none */
    int exit_code;  /* the status it must exit with */
    void (*init)(void), (*fini)(void);
};

struct sbt_suite {
    const char *name;
    struct sbt_suite *next;
    void (*init)(void);
};

void sbt_add_test(struct sbt_test *t);
void sbt_add_suite(struct sbt_suite *s);
void sbt_fail(bool fatal, const char *file, int line, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void sbt_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void sbt_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *sbt_stderr(void);
void cr_redirect_stderr(void);
/* "expr: left a, right b" into w[1024]; quote: a and b are strings, to quote and escape */
const char *sbt_what(char *w, const char *expr, const char *a, const char *b, bool quote);
void sbt_val_i(char *b, size_t n, long long v);
void sbt_val_u(char *b, size_t n, unsigned long long v);
void sbt_val_f(char *b, size_t n, long double v);
void sbt_val_p(char *b, size_t n, const volatile void *v);

#define SBT_ID(P, S, N) sbt_##P##_##S##_##N
/* A constructor puts every test on the runner's list before main. */
#define SBT_REGISTER(S, N, ...)                                                           \
    static struct sbt_test SBT_ID(t, S, N) = {.suite = #S, .name = #N, .file = __FILE__,  \
                                              .line = __LINE__, __VA_ARGS__};             \
    __attribute__((constructor)) static void SBT_ID(reg, S, N)(void)                      \
    {                                                                                     \
        sbt_add_test(&SBT_ID(t, S, N));                                                   \
    }

#define Test(S, N, ...)                                                                   \
    static void SBT_ID(fn, S, N)(void);                                                   \
    SBT_REGISTER(S, N, .fn = SBT_ID(fn, S, N), __VA_ARGS__)                               \
    static void SBT_ID(fn, S, N)(void)

/* Ends in a definition, so that the caller's `;` closes it. */
#define TestSuite(S, ...)                                                                 \
    static struct sbt_suite sbt_suite_##S;                                                \
    __attribute__((constructor)) static void sbt_sreg_##S(void)                           \
    {                                                                                     \
        sbt_add_suite(&sbt_suite_##S);                                                    \
    }                                                                                     \
    static struct sbt_suite sbt_suite_##S = {.name = #S, __VA_ARGS__}

#define ParameterizedTestParameters(S, N) static struct sbt_params SBT_ID(gen, S, N)(void)
#define ParameterizedTest(Param, S, N, ...)                                               \
    ParameterizedTestParameters(S, N);                                                    \
    static void SBT_ID(fn, S, N)(Param);                                                  \
    static void SBT_ID(pfn, S, N)(void *p) { SBT_ID(fn, S, N)(p); }                       \
    SBT_REGISTER(S, N, .pfn = SBT_ID(pfn, S, N), .params = SBT_ID(gen, S, N),              \
                 __VA_ARGS__)                                                             \
    static void SBT_ID(fn, S, N)(Param)
#define cr_make_param_array(T, Array, Len)                                                \
    ((struct sbt_params){.size = sizeof(T), .params = (Array), .length = (Len)})
/* The generator runs in the runner before it forks, so plain malloc serves every test;
 * the runner frees the array after the last. */
#define cr_malloc(Size) malloc(Size)

/* ---- assertions: Fatal = 1 (cr_assert) or 0 (cr_expect); the optional message is a
 * literal format; `" " __VA_ARGS__` keeps it a literal, never empty, when there is none
 * (the runner drops the blank). */

#define sbt_check(Fatal, Ok, What, ...)                                                   \
    do {                                                                                  \
        if (!(Ok))                                                                        \
            sbt_fail((Fatal), __FILE__, __LINE__, (What), " " __VA_ARGS__);                \
    } while (0)

#define sbt_val(B, X)                                                                     \
    _Generic((X), _Bool: sbt_val_u, char: sbt_val_i, signed char: sbt_val_i,              \
        unsigned char: sbt_val_u, short: sbt_val_i, unsigned short: sbt_val_u,            \
        int: sbt_val_i, unsigned: sbt_val_u, long: sbt_val_i, unsigned long: sbt_val_u,   \
        long long: sbt_val_i, unsigned long long: sbt_val_u, float: sbt_val_f,            \
        double: sbt_val_f, long double: sbt_val_f, default: sbt_val_p)((B), sizeof(B), (X))

/* Each operand is evaluated once.  -Wsign-compare is off inside: an operand copied into
 * a variable is no longer a constant, and `size == 3` must not warn. */
#define sbt_cmp(Fatal, A, Op, B, ...)                                                     \
    do {                                                                                  \
        _Pragma("GCC diagnostic push")                                                    \
        _Pragma("GCC diagnostic ignored \"-Wsign-compare\"")                              \
        __auto_type sbt_a = (A);                                                          \
        __auto_type sbt_b = (B);                                                          \
        if (!(sbt_a Op sbt_b)) {                                                          \
            char sbt_va[48], sbt_vb[48], sbt_w[1024];                                     \
            sbt_val(sbt_va, sbt_a);                                                       \
            sbt_val(sbt_vb, sbt_b);                                                       \
            sbt_fail((Fatal), __FILE__, __LINE__,                                         \
                     sbt_what(sbt_w, #A " " #Op " " #B, sbt_va, sbt_vb, false),           \
                     " " __VA_ARGS__);                                                    \
        }                                                                                 \
        _Pragma("GCC diagnostic pop")                                                     \
    } while (0)

#define sbt_str(Fatal, Expr, A, B, ...)                                                   \
    do {                                                                                  \
        const char *sbt_a = (A), *sbt_b = (B);                                            \
        if (!sbt_a || strcmp(sbt_a, sbt_b) != 0) {                                        \
            char sbt_w[1024];                                                             \
            sbt_fail((Fatal), __FILE__, __LINE__, sbt_what(sbt_w, Expr, sbt_a, sbt_b, true),   \
                     " " __VA_ARGS__);                                                    \
        }                                                                                 \
    } while (0)

#define cr_assert(C, ...) sbt_check(1, (C), #C, __VA_ARGS__)
#define cr_expect(C, ...) sbt_check(0, (C), #C, __VA_ARGS__)
#define cr_assert_not(C, ...) sbt_check(1, !(C), "!(" #C ")", __VA_ARGS__)
#define cr_assert_fail(...) sbt_check(1, 0, "cr_assert_fail", __VA_ARGS__)
#define cr_assert_null(P, ...) sbt_check(1, (P) == NULL, #P " == NULL", __VA_ARGS__)
#define cr_assert_not_null(P, ...) sbt_check(1, (P) != NULL, #P " != NULL", __VA_ARGS__)
#define cr_assert_eq(A, B, ...) sbt_cmp(1, A, ==, B, __VA_ARGS__)
#define cr_expect_eq(A, B, ...) sbt_cmp(0, A, ==, B, __VA_ARGS__)
#define cr_assert_neq(A, B, ...) sbt_cmp(1, A, !=, B, __VA_ARGS__)
#define cr_assert_lt(A, B, ...) sbt_cmp(1, A, <, B, __VA_ARGS__)
#define cr_assert_leq(A, B, ...) sbt_cmp(1, A, <=, B, __VA_ARGS__)
#define cr_assert_gt(A, B, ...) sbt_cmp(1, A, >, B, __VA_ARGS__)
#define cr_assert_geq(A, B, ...) sbt_cmp(1, A, >=, B, __VA_ARGS__)
#define cr_assert_str_eq(A, B, ...) sbt_str(1, #A " == " #B, A, B, __VA_ARGS__)
#define cr_expect_str_eq(A, B, ...) sbt_str(0, #A " == " #B, A, B, __VA_ARGS__)
#define cr_assert_stderr_eq_str(S, ...)                                                   \
    sbt_str(1, "stderr == " #S, sbt_stderr(), S, __VA_ARGS__)
#define cr_assert_arr_eq(A, B, Size, ...)                                                 \
    sbt_check(1, memcmp((A), (B), (Size)) == 0,                                           \
              "(" #A ")[0.." #Size "] == (" #B ")[0.." #Size "]", __VA_ARGS__)

#define cr_skip_test(...) sbt_skip(" " __VA_ARGS__)
#define cr_log_info(...) sbt_log(__VA_ARGS__)

#endif /* SBTEST_H */
