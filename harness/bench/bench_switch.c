/*
 * bench_switch.c -- the raw context switch (asm/fcontext.h), no scheduler involved.
 *
 *   switch/roundtrip        main -> coroutine -> main with bthread_jump_fcontext,
 *                           preserve_fpu = true (MXCSR and x87 control word saved, as
 *                           Boost.Context's fcontext does by default; the like-for-like
 *                           row for harness/ref/boost_switch.cc, which registers the
 *                           same name).
 *   switch/roundtrip_nofpu  the same with preserve_fpu = false (what the core uses).
 *
 * On purpose, this file uses asm/fcontext.h (the switch itself, below the public API).
 *
 * Time per iteration = one round trip = two switches.  The loop runs in batches of 64
 * round trips so that the loop's own call overhead stays small against a switch.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "fcontext.h"
#include "shim.h"

#define SW_STACK (64u << 10)
#define SW_BATCH 64

typedef struct sw_pair {
    bthread_fcontext_t main_ctx, co_ctx;
    bool fpu;
} sw_pair_t;

/* The coroutine: bounce straight back, forever (its stack is dropped, never resumed). */
static void sw_entry(intptr_t vp)
{
    sw_pair_t *p = (sw_pair_t *)vp;
    for (;;)
        bthread_jump_fcontext(&p->co_ctx, p->main_ctx, 0, p->fpu);
}

static void bm_roundtrip(gb_state *st, void *arg)
{
    bool fpu = arg != NULL;
    void *stack = mmap(NULL, SW_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stack == MAP_FAILED) {
        gb_skip_with_error(st, "switch: mmap of the coroutine stack failed");
        return;
    }
    sw_pair_t p = {.fpu = fpu};
    p.co_ctx = bthread_make_fcontext((char *)stack + SW_STACK, SW_STACK, sw_entry);
    /* first entry: hands the coroutine its pair, it jumps straight back */
    bthread_jump_fcontext(&p.main_ctx, p.co_ctx, (intptr_t)&p, fpu);
    while (gb_keep_running_batch(st, SW_BATCH))
        for (int i = 0; i < SW_BATCH; i++)
            bthread_jump_fcontext(&p.main_ctx, p.co_ctx, 0, fpu);
    munmap(stack, SW_STACK);
}

static void __attribute__((constructor)) bench_switch_register(void)
{
    gb_register("switch/roundtrip", bm_roundtrip, (void *)1);
    gb_register("switch/roundtrip_nofpu", bm_roundtrip, NULL);
}
