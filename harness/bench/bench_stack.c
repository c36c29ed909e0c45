/*
 * bench_stack.c -- allocating and freeing a bthread stack (common/stack.h).
 *
 *   stack/pooled/class:C    stack_get + stack_put of class C (0 small, 1 normal,
 *                           2 large).  After the first round the stack comes straight
 *                           back from the thread's cache: the path a finished task's
 *                           successor takes.  Counter pool_hit_ratio (stack_get calls
 *                           served from a pool) shows it.
 *   stack/unpooled/class:C  what a pool miss costs: map the class's size plus its
 *                           guard, mprotect the guard, write the top page (where
 *                           stack_get puts the descriptor), unmap.  stack.h has no switch
 *                           to bypass its pools, so this repeats the allocator's miss
 *                           path with the same sizes (stack_class_size,
 *                           stack_guard_size) rather than calling stack_get; the label
 *                           says so.
 *
 * On purpose, this file includes an internal header (stack.h): it benchmarks the stack
 * allocator itself, which the public API does not expose.  The rest of the harness uses
 * only bthread.h.
 */
#include <stdint.h>
#include <sys/mman.h>

#include "shim.h"
#include "stack.h"

static void bm_pooled(gb_state *st, void *arg)
{
    (void)arg;
    enum stack_class cls = (enum stack_class)gb_range(st, 0);
    stack_counters_t c0, c1;
    stack_put(stack_get(cls)); /* warm the cache: the loop measures the pooled path */
    stack_get_counters(&c0);
    while (gb_keep_running(st)) {
        sb_stack_t *s = stack_get(cls);
        if (!s) {
            gb_skip_with_error(st, "stack_get returned NULL");
            return;
        }
        stack_put(s);
    }
    stack_get_counters(&c1);
    double gets = (double)gb_iterations(st);
    gb_counter(st, "pool_hit_ratio", gets > 0 ? (double)(c1.pool_hits - c0.pool_hits) / gets : 0,
               GB_COUNTER_DEFAULT);
}

static void bm_unpooled(gb_state *st, void *arg)
{
    (void)arg;
    enum stack_class cls = (enum stack_class)gb_range(st, 0);
    size_t guard = stack_guard_size(), len = stack_class_size(cls) + guard;
    while (gb_keep_running(st)) {
        char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (m == MAP_FAILED) {
            gb_skip_with_error(st, "mmap failed");
            return;
        }
        if (guard && mprotect(m, guard, PROT_NONE) != 0) {
            munmap(m, len);
            gb_skip_with_error(st, "mprotect failed");
            return;
        }
        *(volatile char *)(m + len - 1) = 1;
        munmap(m, len);
    }
    gb_set_label(st, "mmap+mprotect+touch+munmap, as stack_get/stack_put on a pool miss");
}

static void __attribute__((constructor)) bench_stack_register(void)
{
    static const char *const names[] = {"class"};
    gb_bench *p = gb_register("stack/pooled", bm_pooled, NULL);
    gb_bench *u = gb_register("stack/unpooled", bm_unpooled, NULL);
    for (int64_t c = 0; c < STACK_NCLASS; c++) {
        gb_args(p, &c, 1);
        gb_args(u, &c, 1);
    }
    gb_arg_names(p, names, 1);
    gb_arg_names(u, names, 1);
}
