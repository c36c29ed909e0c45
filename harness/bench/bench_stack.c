/*
 * bench_stack.c -- allocating and freeing a bthread stack (common/stack.h).
 *
 *   stack/pooled/class:C    stack_get + stack_put of class C (0 small, 1 normal,
 *                           2 large).  After the first round the stack comes straight
 *                           back from the thread's cache: the path a finished task's
 *                           successor takes.  Counter pool_hit_ratio (stack_get calls
 *                           served from a pool) shows it.
 *   stack/unpooled/class:C  what a pool miss costs: stack.h's miss path alone
 *                           (stack_map_new: map the class's size plus its guard,
 *                           mprotect the guard, populate and write the top page with the
 *                           descriptor; stack_unmap), the code stack_get and stack_put
 *                           run when their pools are empty or full.
 *
 * On purpose, this file includes an internal header (stack.h): it benchmarks the stack
 * allocator itself, which the public API does not expose.  The rest of the harness uses
 * only bthread.h.
 */
#include <stdint.h>

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
    while (gb_keep_running(st)) {
        sb_stack_t *s = stack_map_new(cls);
        if (!s) {
            gb_skip_with_error(st, "stack_map_new returned NULL");
            return;
        }
        stack_unmap(s);
    }
    gb_set_label(st, "stack_map_new+stack_unmap: the pool-miss path of stack_get/stack_put");
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
