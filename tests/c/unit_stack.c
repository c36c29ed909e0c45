/*
 * unit_stack.c -- the guarded-stack allocator (common/stack.h): the guard page faults,
 * stacks are reused from the pools, and every failure path (mmap, mprotect, the map
 * budget, slabs) is taken by fault injection, never by exhausting the real machine.
 */
#include "sbtest.h"
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "stack.h"

Test(stack, sizes_are_page_aligned_with_defaults, .timeout = 10)
{
    cr_assert_eq(stack_class_size(STACK_SMALL), 32u << 10);
    cr_assert_eq(stack_class_size(STACK_NORMAL), 1u << 20);
    cr_assert_eq(stack_class_size(STACK_LARGE), 8u << 20);
    cr_assert_eq(stack_guard_size(), 4096u);
    sb_stack_t *s = stack_get(STACK_SMALL);
    cr_assert_not_null(s);
    cr_assert(s->guarded);
    cr_assert_eq((uintptr_t)s->limit % 4096, 0);
    cr_assert_eq((uintptr_t)s->top % 16, 0);
    memset(s->limit, 0xab, s->size); /* the whole usable range is writable */
    stack_put(s);
}

Test(stack, overriding_sizes_by_environment, .timeout = 10)
{
    setenv("SCHEDBENCH_STACK_SMALL", "65536", 1);
    setenv("SCHEDBENCH_STACK_GUARD", "0", 1);
    cr_assert_eq(stack_class_size(STACK_SMALL), 65536u);
    cr_assert_eq(stack_guard_size(), 0u);
    sb_stack_t *s = stack_get(STACK_SMALL);
    cr_assert_not(s->guarded);
    stack_put(s);
}

/* Sizes that cannot work (a sign, past 2^40 bytes, not a number) get the default and a
 * message; "-1" used to wrap to a huge size and crash the allocator. */
Test(stack, absurd_sizes_by_environment_get_the_default, .timeout = 10)
{
    setenv("SCHEDBENCH_STACK_SMALL", "-1", 1);
    setenv("SCHEDBENCH_STACK_NORMAL", "9223372036854775808", 1); /* 2^63 */
    setenv("SCHEDBENCH_STACK_LARGE", "18446744073709551615", 1); /* 2^64 - 1 */
    setenv("SCHEDBENCH_STACK_GUARD", "-4096", 1);
    cr_assert_eq(stack_class_size(STACK_SMALL), 32u << 10);
    cr_assert_eq(stack_class_size(STACK_NORMAL), 1u << 20);
    cr_assert_eq(stack_class_size(STACK_LARGE), 8u << 20);
    cr_assert_eq(stack_guard_size(), 4096u);
    for (int c = 0; c < STACK_NCLASS; c++) {
        sb_stack_t *s = stack_get((enum stack_class)c);
        cr_assert_not_null(s);
        memset(s->limit, 0xab, 4096);
        stack_put(s);
    }
}

Test(stack, touching_the_guard_page_faults, .signal = SIGSEGV, .timeout = 10)
{
    sb_stack_t *s = stack_get(STACK_SMALL);
    volatile char *below = (char *)s->limit - 1;
    *below = 1; /* must fault */
}

Test(stack, freed_stack_is_reused_without_a_new_map, .timeout = 10)
{
    sb_stack_t *a = stack_get(STACK_NORMAL);
    stack_counters_t c0, c1;
    stack_get_counters(&c0);
    stack_put(a);
    sb_stack_t *b = stack_get(STACK_NORMAL);
    stack_get_counters(&c1);
    cr_assert_eq(a, b);
    cr_assert_eq(c1.mapped, c0.mapped);
    cr_assert_eq(c1.pool_hits, c0.pool_hits + 1);
    stack_put(b);
}

Test(stack, mmap_failure_falls_back_to_an_unguarded_slab_stack, .timeout = 10)
{
    stack_test_inject(1, 0, false);
    sb_stack_t *s = stack_get(STACK_SMALL);
    cr_assert_not_null(s);
    cr_assert_not(s->guarded);
    cr_assert_null(s->map);
    stack_counters_t c;
    stack_get_counters(&c);
    cr_assert_eq(c.slab_stacks, 1);
    memset(s->limit, 1, s->size);
    stack_put(s);
}

Test(stack, mprotect_failure_falls_back_and_unmaps, .timeout = 10)
{
    stack_test_inject(0, 1, false);
    sb_stack_t *s = stack_get(STACK_SMALL);
    cr_assert_not_null(s);
    cr_assert_not(s->guarded);
    stack_counters_t c;
    stack_get_counters(&c);
    cr_assert_eq(c.mapped, 0);
}

Test(stack, map_budget_switches_to_slabs_and_logs_once, .timeout = 20)
{
    stack_test_set_budget(4);
    sb_stack_t *s[100];
    for (int i = 0; i < 100; i++) {
        s[i] = stack_get(STACK_SMALL);
        cr_assert_not_null(s[i]);
        cr_assert_eq(s[i]->guarded, i < 4);
    }
    stack_counters_t c;
    stack_get_counters(&c);
    cr_assert_eq(c.mapped, 4);
    cr_assert_eq(c.slab_stacks, 96);
    cr_assert_eq(c.slabs, 1); /* 64 MiB / 32 KiB = 2048 stacks per slab */
}

Test(stack, no_memory_at_all_returns_enomem, .timeout = 10)
{
    stack_test_inject(1, 0, true);
    errno = 0;
    sb_stack_t *s = stack_get(STACK_LARGE);
    cr_assert_null(s);
    cr_assert_eq(errno, ENOMEM);
    stack_counters_t c;
    stack_get_counters(&c);
    cr_assert_eq(c.failures, 1);
}

/* The miss path alone (bench_stack.c's stack/unpooled): a guarded stack of its own map,
 * never from a pool, unmapped again; a failure is NULL with errno and no slab. */
Test(stack, the_miss_path_maps_and_unmaps_a_guarded_stack_of_its_own, .timeout = 10)
{
    sb_stack_t *pooled = stack_get(STACK_SMALL);
    stack_put(pooled); /* a pooled stack that the miss path must not hand out */
    stack_counters_t c0, c1;
    stack_get_counters(&c0);
    sb_stack_t *s = stack_map_new(STACK_SMALL);
    cr_assert_not_null(s);
    cr_assert_neq(s, pooled);
    cr_assert(s->guarded);
    cr_assert_eq(s->cls, STACK_SMALL);
    memset(s->limit, 0xab, s->size);
    stack_unmap(s);
    stack_get_counters(&c1);
    cr_assert_eq(c1.mapped, c0.mapped + 1);
    cr_assert_eq(c1.unmapped, c0.unmapped + 1);
    cr_assert_eq(c1.pool_hits, c0.pool_hits);
    stack_test_inject(1, 0, false);
    errno = 0;
    cr_assert_null(stack_map_new(STACK_SMALL));
    cr_assert_eq(errno, ENOMEM);
    stack_get_counters(&c0);
    cr_assert_eq(c0.slab_stacks, 0);
    cr_assert_eq(c0.mapped, c1.mapped);
}

Test(stack, shutdown_returns_everything, .timeout = 10)
{
    sb_stack_t *a = stack_get(STACK_SMALL), *b = stack_get(STACK_LARGE);
    stack_put(a);
    stack_put(b);
    stack_shutdown();
    stack_counters_t c;
    stack_get_counters(&c);
    cr_assert_eq(c.mapped, c.unmapped);
}
