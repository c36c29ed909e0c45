/*
 * unit_fcontext.c -- bthread_make_fcontext / bthread_jump_fcontext against the ABI.
 *
 * What a switch must keep, checked by making the other side break it:
 *   - every callee-saved general register (x86-64: rbx rbp r12-r15) holds, after the
 *     jump returns, what it held when the jump was called, although the other context
 *     had different values live in all of them when it jumped back;
 *   - with preserve_fpu, MXCSR and the x87 control word likewise, while without it the
 *     other side's change shows through (so the clobber is real);
 *   - values pass both ways, including the entry function's argument;
 *   - many contexts interleave, each keeping its own locals;
 *   - an entry function's stack is 16-byte aligned, for any sp handed to make;
 *   - returning from the entry function ends the process with status 0 through _exit,
 *     and nothing after the jump that started it runs.
 * The register checks are x86-64 only (inline asm); the AArch64 ones, run under
 * qemu-user, are tests/asm_cross/abi_arm64.c. The rest is portable.
 *
 * Nothing here asserts on a context's own stack: failures found there are recorded and
 * asserted on the test's main stack, so that a report never depends on the switch under
 * test having worked.
 *
 * Sanitizers: the switches below are raw (the scheduler core annotates its own in
 * common/). Under ASan/TSan the helpers in fiber_switch() tell the runtime about each
 * switch, as any user of raw stack switching must.
 */
#include "sbtest.h"

#include <errno.h>
#include <signal.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fcontext.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

/* ---- sanitizer annotations -------------------------------------------------------- */

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FC_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define FC_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FC_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define FC_TSAN 1
#endif
#ifdef FC_ASAN
#include <sanitizer/asan_interface.h>
#endif
#ifdef FC_TSAN
#include <sanitizer/tsan_interface.h>
#endif

/* One execution: a context plus what the sanitizers need to know about its stack.
 * The main fiber (the test's own stack) has lo = NULL until ASan tells us its bounds. */
struct fiber {
    bthread_fcontext_t fc;
    void *lo;
    size_t size;
#ifdef FC_TSAN
    void *tsan;
#endif
};

#ifdef FC_ASAN
/* Before a switch: tell ASan which stack comes next. */
static void *asan_before(const struct fiber *to)
{
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, to->lo, to->size);
    return fake;
}
/* After a switch, on the resumed side: tell ASan we arrived, and learn the bounds of
 * the stack we came from (how the main fiber's bounds become known). */
static void asan_after(void *fake, struct fiber *from)
{
    const void *lo = NULL;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(fake, &lo, &size);
    if (from != NULL && from->lo == NULL) {
        from->lo = (void *)lo;
        from->size = size;
    }
}
#endif

static void fiber_init_main(struct fiber *f)
{
    memset(f, 0, sizeof *f);
#ifdef FC_TSAN
    f->tsan = __tsan_get_current_fiber();
#endif
}

static void fiber_make(struct fiber *f, char *lo, size_t size, char *sp,
                       void (*fn)(intptr_t))
{
    memset(f, 0, sizeof *f);
    f->lo = lo;
    f->size = size;
#ifdef FC_ASAN
    /* A reused stack still carries the shadow of the frames abandoned on it. */
    ASAN_UNPOISON_MEMORY_REGION(lo, size);
#endif
    f->fc = bthread_make_fcontext(sp, size, fn);
#ifdef FC_TSAN
    f->tsan = __tsan_create_fiber(0);
#endif
}

/* The annotations around a switch, split so that the register test can wrap its own
 * inline-asm call of bthread_jump_fcontext. */
struct sw_state {
    void *fake; /* ASan's fake stack of the fiber being left */
};

static inline void sw_before(struct sw_state *s, struct fiber *to)
{
    s->fake = NULL;
    (void)to;
#ifdef FC_ASAN
    s->fake = asan_before(to);
#endif
#ifdef FC_TSAN
    __tsan_switch_to_fiber(to->tsan, 0);
#endif
}

/* Back on the stack that sw_before left. */
static inline void sw_after(struct sw_state *s)
{
#ifdef FC_ASAN
    asan_after(s->fake, NULL);
#endif
    (void)s;
}

/* The first code an entry function runs on its new stack. */
static inline void fiber_entered(struct fiber *prev)
{
#ifdef FC_ASAN
    asan_after(NULL, prev);
#else
    (void)prev;
#endif
}

static intptr_t fiber_switch(struct fiber *from, struct fiber *to, intptr_t vp, bool fpu)
{
    struct sw_state s;
    sw_before(&s, to);
    intptr_t r = bthread_jump_fcontext(&from->fc, to->fc, vp, fpu);
    sw_after(&s);
    return r;
}

/* ---- stacks ------------------------------------------------------------------------ */

#define STACK_SIZE (64 * 1024)
#define MAX_FIBERS 64

static alignas(64) char stacks[MAX_FIBERS][STACK_SIZE];

static void make_on(struct fiber *f, int i, void (*fn)(intptr_t))
{
    fiber_make(f, stacks[i], STACK_SIZE, stacks[i] + STACK_SIZE, fn);
}

/* Hide a value's provenance from the optimizer, so that e.g. the alignment of a local
 * is computed from the real address at run time, not from what the compiler assumed. */
static inline uintptr_t opaque(uintptr_t v)
{
    __asm__ volatile("" : "+r"(v));
    return v;
}

/* ---- values both ways -------------------------------------------------------------- */

static struct fiber v_main, v_ctx;
static intptr_t v_seen[8];
static int v_nseen;

static void values_entry(intptr_t vp)
{
    fiber_entered(&v_main);
    v_seen[v_nseen++] = vp; /* the first jump's vp arrives as the argument */
    intptr_t got = fiber_switch(&v_ctx, &v_main, -1, false);
    v_seen[v_nseen++] = got;
    got = fiber_switch(&v_ctx, &v_main, INTPTR_MIN, false);
    v_seen[v_nseen++] = got;
    got = fiber_switch(&v_ctx, &v_main, (intptr_t)&v_seen, true);
    v_seen[v_nseen++] = got;
    fiber_switch(&v_ctx, &v_main, 0, false);
    abort(); /* never resumed again */
}

Test(fcontext, values_pass_both_ways, .timeout = 10)
{
    fiber_init_main(&v_main);
    make_on(&v_ctx, 0, values_entry);

    cr_assert_eq(fiber_switch(&v_main, &v_ctx, 42, false), -1);
    cr_assert_eq(fiber_switch(&v_main, &v_ctx, INTPTR_MAX, false), INTPTR_MIN);
    cr_assert_eq(fiber_switch(&v_main, &v_ctx, 0, true), (intptr_t)&v_seen);
    cr_assert_eq(fiber_switch(&v_main, &v_ctx, (intptr_t)&v_ctx, false), 0);

    cr_assert_eq(v_nseen, 4);
    cr_assert_eq(v_seen[0], 42);
    cr_assert_eq(v_seen[1], INTPTR_MAX);
    cr_assert_eq(v_seen[2], 0);
    cr_assert_eq(v_seen[3], (intptr_t)&v_ctx);
}

/* ---- many contexts, round-robin from main and in a ring ---------------------------- */

#define RR_ROUNDS 40

static struct fiber rr_main, rr_ctx[MAX_FIBERS];
static int rr_errors;

/* Context i answers each token with the running sum of the tokens it has received,
 * kept in a local on its own stack, tagged with its id. */
static void rr_entry(intptr_t vp)
{
    fiber_entered(&rr_main);
    const int id = (int)(vp >> 32);
    int64_t sum = 0;
    intptr_t token = vp & 0xffffffff;
    for (;;) {
        if ((token >> 16) != id) /* token = id << 16 | round: routed to the wrong context? */
            rr_errors++;
        sum += token;
        token = fiber_switch(&rr_ctx[id], &rr_main, (intptr_t)((sum << 8) | id), false);
    }
}

Test(fcontext, many_contexts_round_robin, .timeout = 10)
{
    fiber_init_main(&rr_main);
    for (int i = 0; i < MAX_FIBERS; i++)
        make_on(&rr_ctx[i], i, rr_entry);

    int64_t expect[MAX_FIBERS] = {0};
    for (int round = 0; round < RR_ROUNDS; round++) {
        for (int i = 0; i < MAX_FIBERS; i++) {
            intptr_t token = ((intptr_t)i << 16) | round;
            intptr_t vp = round == 0 ? (((intptr_t)i << 32) | token) : token;
            expect[i] += token;
            intptr_t r = fiber_switch(&rr_main, &rr_ctx[i], vp, (round & 1) != 0);
            cr_assert_eq(r & 0xff, i, "round %d: answer from context %d, expected %d", round,
                         (int)(r & 0xff), i);
            cr_assert_eq(r >> 8, expect[i], "round %d context %d: sum %lld, expected %lld",
                         round, i, (long long)(r >> 8), (long long)expect[i]);
        }
    }
    cr_assert_eq(rr_errors, 0);
}

/* Each context jumps straight to the next: no return to main between hops. */
#define RING_LAPS 25
static struct fiber ring_main, ring_ctx[MAX_FIBERS];
static int ring_errors;
static int ring_hops[MAX_FIBERS];

static void ring_entry(intptr_t vp)
{
    /* Started by main with its id; every later vp is the hop counter. */
    const int id = (int)vp;
    fiber_entered(&ring_main);
    intptr_t count = fiber_switch(&ring_ctx[id], &ring_main, 0, false);
    for (;;) {
        if (count % MAX_FIBERS != id)
            ring_errors++;
        ring_hops[id]++;
        struct fiber *next = count + 1 == (intptr_t)MAX_FIBERS * RING_LAPS
                                 ? &ring_main
                                 : &ring_ctx[(id + 1) % MAX_FIBERS];
        count = fiber_switch(&ring_ctx[id], next, count + 1, false);
    }
}

Test(fcontext, many_contexts_ring, .timeout = 10)
{
    fiber_init_main(&ring_main);
    for (int i = 0; i < MAX_FIBERS; i++) {
        make_on(&ring_ctx[i], i, ring_entry);
        cr_assert_eq(fiber_switch(&ring_main, &ring_ctx[i], i, false), 0);
    }
    intptr_t end = fiber_switch(&ring_main, &ring_ctx[0], 0, false);
    cr_assert_eq(end, (intptr_t)MAX_FIBERS * RING_LAPS);
    cr_assert_eq(ring_errors, 0);
    for (int i = 0; i < MAX_FIBERS; i++)
        cr_assert_eq(ring_hops[i], RING_LAPS, "context %d hopped %d times", i, ring_hops[i]);
}

/* ---- stack alignment and the frame's footprint ------------------------------------- */

static struct fiber al_main, al_ctx;
static uintptr_t al_local_mod, al_frame_mod;

static __attribute__((noinline)) void align_probe(void)
{
    /* The compiler places this at a 16-byte boundary assuming an ABI-aligned stack; if
     * the entry's stack was misaligned, so is this address. */
    alignas(16) volatile char buf[16];
    buf[0] = 1;
    al_local_mod = opaque((uintptr_t)buf) % 16;
}

static void align_entry(intptr_t vp)
{
    (void)vp;
    fiber_entered(&al_main);
    /* The frame address is the entry rsp - 16 on x86-64 (return address + saved rbp)
     * and the entry sp on AArch64 (x29 points at the saved x29/x30 pair at sp - 16):
     * either way 0 mod 16 when the ABI holds. */
    al_frame_mod = opaque((uintptr_t)__builtin_frame_address(0)) % 16;
    align_probe();
    fiber_switch(&al_ctx, &al_main, 0, false);
    abort();
}

Test(fcontext, entry_stack_is_aligned_for_any_sp, .timeout = 10)
{
    fiber_init_main(&al_main);
    /* sp need not be aligned; make rounds it down. Above sp nothing may be written. */
    static const int offsets[] = {0, 1, 3, 7, 8, 9, 15, 16, 24};
    for (size_t k = 0; k < sizeof offsets / sizeof offsets[0]; k++) {
        char *sp = stacks[0] + STACK_SIZE - 64 - offsets[k];
        memset(sp, 0x5a, (size_t)(stacks[0] + STACK_SIZE - sp));
        al_local_mod = al_frame_mod = 99;
        fiber_make(&al_ctx, stacks[0], (size_t)(sp - stacks[0]), sp, align_entry);
        cr_assert_lt((char *)al_ctx.fc, sp);
        cr_assert_geq((char *)al_ctx.fc, sp - 256, "the frame is larger than expected");
        fiber_switch(&al_main, &al_ctx, 0, false);
        cr_assert_eq(al_frame_mod, 0, "sp offset %d: frame address %% 16 = %d", offsets[k],
                     (int)al_frame_mod);
        cr_assert_eq(al_local_mod, 0, "sp offset %d: aligned local %% 16 = %d", offsets[k],
                     (int)al_local_mod);
        for (char *p = sp; p < stacks[0] + STACK_SIZE; p++)
            cr_assert_eq(*p, 0x5a, "sp offset %d: byte %td above sp was written", offsets[k],
                         p - sp);
    }
}

/* ---- returning from the entry function ends the process ---------------------------- */

static int exit_pipe = -1;

static void write_marker(char c)
{
    ssize_t n;
    do
        n = write(exit_pipe, &c, 1);
    while (n < 0 && errno == EINTR);
}

static void exit_atexit(void) { write_marker('A'); }

static void exit_entry(intptr_t vp)
{
    fiber_entered(NULL);
    write_marker((char)vp); /* proves the entry function ran, with its argument */
    /* return: to finish, which must _exit(0) */
}

/* Runs in a forked child; its exit status and its markers are the result. */
static void exit_child(void)
{
    struct fiber m, c;
    fiber_init_main(&m);
    atexit(exit_atexit); /* must not run: finish calls _exit, not exit */
    make_on(&c, 0, exit_entry);
    fiber_switch(&m, &c, 'E', false);
    write_marker('R'); /* returned to the jumper: must never happen */
    _exit(3);
}

Test(fcontext, entry_return_exits_with_status_0, .timeout = 10)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        close(p[0]);
        exit_pipe = p[1];
        exit_child();
    }
    close(p[1]);
    char buf[16] = {0};
    size_t len = 0;
    for (;;) {
        ssize_t n = read(p[0], buf + len, sizeof buf - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(p[0]);
    int st;
    pid_t w;
    do
        w = waitpid(pid, &st, 0);
    while (w < 0 && errno == EINTR);
    cr_assert_eq(w, pid);
    cr_assert(WIFEXITED(st), "the child did not exit normally (signal %d)",
              WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    cr_assert_eq(WEXITSTATUS(st), 0);
    /* E: the entry ran with its argument; no A (atexit ran), no R (the jump returned). */
    cr_assert_str_eq(buf, "E");
}

/* The runner's own view of the same: the test process ends with status 0 from inside
 * the entry function, so the body's end (which would fail) is never reached. */
static void exit_entry_plain(intptr_t vp) { (void)vp; }

Test(fcontext, entry_return_exit_code, .exit_code = 0, .timeout = 10)
{
    struct fiber m, c;
    fiber_init_main(&m);
    make_on(&c, 0, exit_entry_plain);
    fiber_switch(&m, &c, 0, false);
    cr_assert_fail("bthread_jump_fcontext returned after the entry function returned");
}

/* ---- x86-64: callee-saved registers and FP control state -------------------------- */

#if defined(__x86_64__)

struct gpregs {
    uint64_t rbx, rbp, r12, r13, r14, r15;
};

struct reg_io {
    const struct gpregs *in;
    struct gpregs *out;
};

/* Call bthread_jump_fcontext(ofc, nfc, vp, fpu) with in's values live in every
 * callee-saved register, and store into out what those registers hold when the call
 * returns. Written so the compiler's own use of these registers never matters: rbp is
 * saved by hand (it may be the frame pointer), the rest are declared clobbered, and the
 * call steps over the red zone on a 16-byte aligned stack. */
static __attribute__((noinline)) intptr_t jump_with_regs(const struct gpregs *in,
                                                         struct gpregs *out,
                                                         bthread_fcontext_t *ofc,
                                                         bthread_fcontext_t nfc, intptr_t vp,
                                                         bool fpu)
{
    struct reg_io io = {in, out};
    uintptr_t rdi = (uintptr_t)ofc, rsi = (uintptr_t)nfc, rdx = (uintptr_t)vp, rcx = fpu;
    uintptr_t rax = (uintptr_t)&io;
    __asm__ volatile(
        "movq   %%rsp, %%r11\n\t"          /* r11 = the compiler's rsp */
        "subq   $128, %%rsp\n\t"           /* step over the red zone */
        "andq   $-16, %%rsp\n\t"           /* align for the call */
        "pushq  %%r11\n\t"                 /* keep the compiler's rsp */
        "pushq  %%rbp\n\t"                 /* and its rbp */
        "pushq  %%rax\n\t"                 /* keep &io, twice to stay aligned */
        "pushq  %%rax\n\t"
        "movq   0(%%rax), %%rax\n\t"       /* rax = in */
        "movq   0x00(%%rax), %%rbx\n\t"    /* load the test values */
        "movq   0x08(%%rax), %%rbp\n\t"
        "movq   0x10(%%rax), %%r12\n\t"
        "movq   0x18(%%rax), %%r13\n\t"
        "movq   0x20(%%rax), %%r14\n\t"
        "movq   0x28(%%rax), %%r15\n\t"
        "call   bthread_jump_fcontext\n\t" /* rdi, rsi, rdx, rcx set by the constraints */
        "movq   0(%%rsp), %%rcx\n\t"       /* rcx = &io (rax holds the result) */
        "movq   8(%%rcx), %%rcx\n\t"       /* rcx = out */
        "movq   %%rbx, 0x00(%%rcx)\n\t"    /* store what survived */
        "movq   %%rbp, 0x08(%%rcx)\n\t"
        "movq   %%r12, 0x10(%%rcx)\n\t"
        "movq   %%r13, 0x18(%%rcx)\n\t"
        "movq   %%r14, 0x20(%%rcx)\n\t"
        "movq   %%r15, 0x28(%%rcx)\n\t"
        "addq   $16, %%rsp\n\t"            /* drop &io */
        "popq   %%rbp\n\t"                 /* the compiler's rbp */
        "popq   %%rsp\n\t"                 /* the compiler's rsp */
        : "+D"(rdi), "+S"(rsi), "+d"(rdx), "+c"(rcx), "+a"(rax)
        :
        : "rbx", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "memory", "cc",
          "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
          "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "st", "st(1)", "st(2)",
          "st(3)", "st(4)", "st(5)", "st(6)", "st(7)");
    (void)io;
    return (intptr_t)rax;
}

/* Switch with annotations around jump_with_regs. */
static intptr_t switch_with_regs(struct fiber *from, struct fiber *to, const struct gpregs *in,
                                 struct gpregs *out, intptr_t vp, bool fpu)
{
    struct sw_state s;
    sw_before(&s, to);
    intptr_t r = jump_with_regs(in, out, &from->fc, to->fc, vp, fpu);
    sw_after(&s);
    return r;
}

static const struct gpregs regs_main = {
    0x1111111111111111u, 0x2222222222222222u, 0x3333333333333333u,
    0x4444444444444444u, 0x5555555555555555u, 0x6666666666666666u,
};
static const struct gpregs regs_ctx = {
    0xa1a1a1a1a1a1a1a1u, 0xb2b2b2b2b2b2b2b2u, 0xc3c3c3c3c3c3c3c3u,
    0xd4d4d4d4d4d4d4d4u, 0xe5e5e5e5e5e5e5e5u, 0xf6f6f6f6f6f6f6f6u,
};

static struct fiber gp_main, gp_ctx;
static struct gpregs gp_ctx_out;
static bool gp_fpu;

static void gp_entry(intptr_t vp)
{
    fiber_entered(&gp_main);
    /* Jump back with the other set of values live in every callee-saved register. */
    switch_with_regs(&gp_ctx, &gp_main, &regs_ctx, &gp_ctx_out, vp + 1, gp_fpu);
    fiber_switch(&gp_ctx, &gp_main, 0, false);
    abort();
}

static void check_gp(const struct gpregs *got, const struct gpregs *want, const char *side)
{
    static const char *const names[] = {"rbx", "rbp", "r12", "r13", "r14", "r15"};
    const uint64_t *g = &got->rbx, *w = &want->rbx;
    for (int i = 0; i < 6; i++)
        cr_expect_eq(g[i], w[i], "%s: %s = %#llx after the switch, expected %#llx", side,
                     names[i], (unsigned long long)g[i], (unsigned long long)w[i]);
}

static void gp_round_trip(bool fpu)
{
    fiber_init_main(&gp_main);
    gp_fpu = fpu;
    make_on(&gp_ctx, 0, gp_entry);
    struct gpregs out;
    /* Main -> ctx with main's values live; ctx jumps back with its own values live. */
    cr_assert_eq(switch_with_regs(&gp_main, &gp_ctx, &regs_main, &out, 7, fpu), 8);
    check_gp(&out, &regs_main, "main");
    /* Main -> ctx with the other values live: ctx must see its own again. */
    memset(&gp_ctx_out, 0, sizeof gp_ctx_out);
    cr_assert_eq(switch_with_regs(&gp_main, &gp_ctx, &regs_ctx, &out, 0, fpu), 0);
    check_gp(&gp_ctx_out, &regs_ctx, "context");
}

Test(fcontext_x86_64, callee_saved_registers_survive, .timeout = 10) { gp_round_trip(false); }

Test(fcontext_x86_64, callee_saved_registers_survive_preserve_fpu, .timeout = 10)
{
    gp_round_trip(true);
}

/* MXCSR: compare the control bits (6..15), not the sticky exception flags (0..5). */
#define MXCSR_CONTROL 0xffc0u
/* All exceptions masked, with different rounding / FTZ / DAZ. */
static const unsigned mxcsr_v[4] = {0x1f80u | 0x2000u, 0x1f80u | 0x4000u | 0x8000u,
                                    0x1f80u | 0x6000u | 0x0040u, 0x1f80u | 0x8000u | 0x0040u};
/* All exceptions masked, with different precision and rounding control. */
static const uint16_t x87cw_v[4] = {0x027f, 0x0f7f, 0x047f, 0x0b7f};

static void set_fp_control(int k)
{
    _mm_setcsr(mxcsr_v[k]);
    uint16_t cw = x87cw_v[k];
    __asm__ volatile("fldcw %0" : : "m"(cw));
}

static unsigned get_mxcsr(void) { return _mm_getcsr() & MXCSR_CONTROL; }

static uint16_t get_x87cw(void)
{
    uint16_t cw;
    __asm__ volatile("fnstcw %0" : "=m"(cw));
    return cw;
}

static struct fiber fp_main, fp_ctx;
static bool fp_ctx_flag; /* preserve_fpu for the context's jumps back */
static unsigned fp_seen_mxcsr[2];
static uint16_t fp_seen_cw[2];

static void fp_entry(intptr_t vp)
{
    (void)vp;
    fiber_entered(&fp_main);
    fp_seen_mxcsr[0] = get_mxcsr();
    fp_seen_cw[0] = get_x87cw();
    set_fp_control(2); /* clobber before jumping back */
    fiber_switch(&fp_ctx, &fp_main, 0, fp_ctx_flag);
    fp_seen_mxcsr[1] = get_mxcsr();
    fp_seen_cw[1] = get_x87cw();
    fiber_switch(&fp_ctx, &fp_main, 0, fp_ctx_flag);
    abort();
}

static const unsigned mxcsr_default = 0x1f80u;
static const uint16_t x87cw_default = 0x037f;

Test(fcontext_x86_64, fp_control_survives_with_preserve_fpu, .timeout = 10)
{
    fiber_init_main(&fp_main);
    fp_ctx_flag = true;
    set_fp_control(0);
    make_on(&fp_ctx, 0, fp_entry); /* the fresh frame holds setting 0 */
    set_fp_control(1);
    fiber_switch(&fp_main, &fp_ctx, 0, true);
    unsigned mx = get_mxcsr();
    uint16_t cw = get_x87cw();
    set_fp_control(3); /* clobber before resuming the context */
    fiber_switch(&fp_main, &fp_ctx, 0, true);
    _mm_setcsr(mxcsr_default);
    __asm__ volatile("fldcw %0" : : "m"(x87cw_default));

    /* A fresh context starts with its creator's control state from make time. */
    cr_expect_eq(fp_seen_mxcsr[0], mxcsr_v[0] & MXCSR_CONTROL, "fresh: MXCSR %#x", fp_seen_mxcsr[0]);
    cr_expect_eq(fp_seen_cw[0], x87cw_v[0], "fresh: x87 CW %#x", fp_seen_cw[0]);
    /* Each side gets back its own, although the other changed it before jumping. */
    cr_expect_eq(mx, mxcsr_v[1] & MXCSR_CONTROL, "main: MXCSR %#x", mx);
    cr_expect_eq(cw, x87cw_v[1], "main: x87 CW %#x", cw);
    cr_expect_eq(fp_seen_mxcsr[1], mxcsr_v[2] & MXCSR_CONTROL, "context: MXCSR %#x",
                 fp_seen_mxcsr[1]);
    cr_expect_eq(fp_seen_cw[1], x87cw_v[2], "context: x87 CW %#x", fp_seen_cw[1]);
}

/* Without preserve_fpu the control state belongs to the thread and flows across the
 * switch: the other side's change shows, which is what makes the test above real. */
Test(fcontext_x86_64, fp_control_flows_without_preserve_fpu, .timeout = 10)
{
    fiber_init_main(&fp_main);
    fp_ctx_flag = false;
    set_fp_control(0);
    make_on(&fp_ctx, 0, fp_entry);
    set_fp_control(1);
    fiber_switch(&fp_main, &fp_ctx, 0, false);
    unsigned mx = get_mxcsr();
    uint16_t cw = get_x87cw();
    set_fp_control(3);
    fiber_switch(&fp_main, &fp_ctx, 0, false);
    _mm_setcsr(mxcsr_default);
    __asm__ volatile("fldcw %0" : : "m"(x87cw_default));

    cr_expect_eq(fp_seen_mxcsr[0], mxcsr_v[1] & MXCSR_CONTROL);
    cr_expect_eq(fp_seen_cw[0], x87cw_v[1]);
    cr_expect_eq(mx, mxcsr_v[2] & MXCSR_CONTROL);
    cr_expect_eq(cw, x87cw_v[2]);
    cr_expect_eq(fp_seen_mxcsr[1], mxcsr_v[3] & MXCSR_CONTROL);
    cr_expect_eq(fp_seen_cw[1], x87cw_v[3]);
}

/* Flags may differ between the two jumps of a pair. A context suspended without
 * preserve_fpu has nothing saved, so resuming it with preserve_fpu keeps the current
 * state rather than loading stale stack bytes (filled with 0xff here: as MXCSR, reserved
 * bits, which ldmxcsr refuses with a fault). */
Test(fcontext_x86_64, fp_control_mixed_flags, .timeout = 10)
{
    fiber_init_main(&fp_main);
    fp_ctx_flag = false;
    memset(stacks[0], 0xff, STACK_SIZE);
    set_fp_control(0);
    make_on(&fp_ctx, 0, fp_entry);
    set_fp_control(1);
    fiber_switch(&fp_main, &fp_ctx, 0, true); /* saves main; fresh: restores setting 0 */
    unsigned mx = get_mxcsr();                /* the context jumped back with false */
    uint16_t cw = get_x87cw();
    set_fp_control(3);
    fiber_switch(&fp_main, &fp_ctx, 0, true); /* the context's slot is unsaved */
    _mm_setcsr(mxcsr_default);
    __asm__ volatile("fldcw %0" : : "m"(x87cw_default));

    cr_expect_eq(fp_seen_mxcsr[0], mxcsr_v[0] & MXCSR_CONTROL);
    cr_expect_eq(fp_seen_cw[0], x87cw_v[0]);
    cr_expect_eq(mx, mxcsr_v[2] & MXCSR_CONTROL, "main: MXCSR %#x", mx);
    cr_expect_eq(cw, x87cw_v[2], "main: x87 CW %#x", cw);
    cr_expect_eq(fp_seen_mxcsr[1], mxcsr_v[3] & MXCSR_CONTROL, "context: MXCSR %#x",
                 fp_seen_mxcsr[1]);
    cr_expect_eq(fp_seen_cw[1], x87cw_v[3], "context: x87 CW %#x", fp_seen_cw[1]);
}

#endif /* __x86_64__ */
