/*
 * fiber.h -- tell the sanitizers and valgrind about stack switches.
 *
 * Included only by sched.c, whose jump_to() is the one place that switches stacks, so no
 * caller can forget an annotation.  Each function compiles to nothing in a plain build.
 *
 *   AddressSanitizer: __sanitizer_start_switch_fiber(&save, bottom, size) before the
 *     jump, __sanitizer_finish_switch_fiber(save, ...) on arrival; save == NULL when the
 *     context we leave will never be resumed (its fake stack is then freed).
 *   ThreadSanitizer: one fiber per stack, created with the context; __tsan_switch_to_fiber
 *     right before the jump.
 *   valgrind: stacks are registered by stack.c when they are mapped.
 */
#ifndef SCHEDBENCH_FIBER_H
#define SCHEDBENCH_FIBER_H

#include <stddef.h>

#include "atomics.h" /* SB_ASAN, SB_TSAN */

#if SB_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
static inline void fiber_asan_start(void **save, const void *bottom, size_t size)
{
    __sanitizer_start_switch_fiber(save, bottom, size);
}
static inline void fiber_asan_finish(void **save)
{
    __sanitizer_finish_switch_fiber(save ? *save : NULL, NULL, NULL);
}
/* A stack that gets a fresh context may hold poison of frames that never returned. */
static inline void fiber_asan_fresh_stack(void *lo, size_t size)
{
    __asan_unpoison_memory_region(lo, size);
}
#else
static inline void fiber_asan_start(void **save, const void *bottom, size_t size)
{
    (void)save, (void)bottom, (void)size;
}
static inline void fiber_asan_finish(void **save) { (void)save; }
static inline void fiber_asan_fresh_stack(void *lo, size_t size) { (void)lo, (void)size; }
#endif

#if SB_TSAN
#include <sanitizer/tsan_interface.h>
static inline void *fiber_tsan_current(void) { return __tsan_get_current_fiber(); }
static inline void *fiber_tsan_create(void) { return __tsan_create_fiber(0); }
static inline void fiber_tsan_destroy(void *f)
{
    if (f)
        __tsan_destroy_fiber(f);
}
static inline void fiber_tsan_switch(void *f) { __tsan_switch_to_fiber(f, 0); }
#else
static inline void *fiber_tsan_current(void) { return NULL; }
static inline void *fiber_tsan_create(void) { return NULL; }
static inline void fiber_tsan_destroy(void *f) { (void)f; }
static inline void fiber_tsan_switch(void *f) { (void)f; }
#endif

#endif /* SCHEDBENCH_FIBER_H */
