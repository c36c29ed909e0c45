/*
 * check_compat/criterion/parameterized.h -- Criterion's parameterized tests for the
 * TSan build (see criterion.h beside it).
 *
 *   ParameterizedTestParameters(suite, name) { ... return cr_make_param_array(T, a, n); }
 *   ParameterizedTest(T *p, suite, name, .timeout = ...) { ... }
 *
 * The runner calls the generator once, before any test process is forked, and runs one
 * Check loop iteration (its own process and timeout) per element, passing its address.
 */
#ifndef SB_CHECK_COMPAT_PARAMETERIZED_H
#define SB_CHECK_COMPAT_PARAMETERIZED_H

#include "criterion.h"

/* As Criterion: the fields after .size are positional (array, length[, cleanup]). */
#define cr_make_param_array(Type, ...)                                                    \
    ((struct criterion_test_params){.size = sizeof(Type), __VA_ARGS__})

#define ParameterizedTestParameters(Suite, Name)                                          \
    static struct criterion_test_params SBCC_ID_(sbcc_gen, Suite, Name)(void)

/* Param is the test function's parameter declaration, e.g. `my_case_t *c`. */
#define ParameterizedTest(Param, Suite, Name, ...)                                        \
    static struct criterion_test_params SBCC_ID_(sbcc_gen, Suite, Name)(void);            \
    static void SBCC_ID_(sbcc_fn, Suite, Name)(Param);                                    \
    static void SBCC_ID_(sbcc_pfn, Suite, Name)(void *p)                                  \
    {                                                                                     \
        SBCC_ID_(sbcc_fn, Suite, Name)(p);                                                \
    }                                                                                     \
    static struct sbcc_test SBCC_ID_(sbcc_test, Suite, Name) = {                          \
        .suite = #Suite, .name = #Name, .file = __FILE__, .line = __LINE__,               \
        .pfn = SBCC_ID_(sbcc_pfn, Suite, Name), .params = SBCC_ID_(sbcc_gen, Suite, Name),\
        __VA_ARGS__};                                                                     \
    __attribute__((constructor)) static void SBCC_ID_(sbcc_reg, Suite, Name)(void)        \
    {                                                                                     \
        sbcc_register_test(&SBCC_ID_(sbcc_test, Suite, Name));                            \
    }                                                                                     \
    static void SBCC_ID_(sbcc_fn, Suite, Name)(Param)

#endif /* SB_CHECK_COMPAT_PARAMETERIZED_H */
