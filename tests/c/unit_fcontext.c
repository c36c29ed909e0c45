/*
 * unit_fcontext.c -- bthread_make_fcontext / bthread_jump_fcontext against the ABI.
 *
 * What a switch must keep, checked by making the other side break it:
 *   - every callee-saved register (x86-64: rbx rbp r12-r15; AArch64: x19-x28, x29,
 *     d8-d15, and sp) holds, after the jump returns, what it held when the jump was
 *     called, although the other context had different values live in all of them when
 *     it jumped back (x30 is checked by the jump returning at all);
 *   - with preserve_fpu, the FP control state (x86-64: MXCSR and the x87 control word;
 *     AArch64: FPCR) likewise, while without it the other side's change shows through
 *     (so the clobber is real); mixing the flags keeps the current state;
 *   - values pass both ways, including the entry function's argument;
 *   - many contexts interleave, each keeping its own locals;
 *   - an entry function's stack is 16-byte aligned, for any sp handed to make;
 *   - returning from the entry function ends the process with status 0 through _exit,
 *     and nothing after the jump that started it runs.
 * The register and FP control checks are inline asm, one section per architecture
 * (x86-64 natively; AArch64 in the aarch64 build, under qemu-user on an x86-64 host);
 * an architecture without its section does not build. The rest is portable.
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

#elif defined(__aarch64__)

/* ---- AArch64: callee-saved registers, sp and FPCR ---------------------------------- */

struct regs {
    uint64_t x[11]; /* x19 .. x29 */
    uint64_t d[8];  /* d8 .. d15 (as bits) */
};

struct reg_io {
    const struct regs *in;
    struct regs *out;
    uint64_t sp_before, sp_after;
};

/* Call bthread_jump_fcontext(ofc, nfc, vp, fpu) with in's values live in x19-x29 and
 * d8-d15, and store into out what those registers hold when the call returns; record sp
 * on both sides of the call. x29/x30 are kept by hand (x29 may be the frame pointer);
 * everything else the call may change is declared clobbered. */
static __attribute__((noinline)) intptr_t jump_with_regs(struct reg_io *io,
                                                         bthread_fcontext_t *ofc,
                                                         bthread_fcontext_t nfc, intptr_t vp,
                                                         bool fpu)
{
    register uintptr_t x0 __asm__("x0") = (uintptr_t)ofc;
    register uintptr_t x1 __asm__("x1") = (uintptr_t)nfc;
    register uintptr_t x2 __asm__("x2") = (uintptr_t)vp;
    register uintptr_t x3 __asm__("x3") = fpu;
    register uintptr_t x4 __asm__("x4") = (uintptr_t)io;
    __asm__ volatile(
        "stp  x29, x30, [sp, #-32]!\n\t" /* keep the compiler's x29, x30 */
        "str  x4, [sp, #16]\n\t"         /* keep io across the call */
        "ldr  x5, [x4]\n\t"              /* x5 = in */
        "ldp  x19, x20, [x5, #0]\n\t"    /* load the test values */
        "ldp  x21, x22, [x5, #16]\n\t"
        "ldp  x23, x24, [x5, #32]\n\t"
        "ldp  x25, x26, [x5, #48]\n\t"
        "ldp  x27, x28, [x5, #64]\n\t"
        "ldr  x29, [x5, #80]\n\t"
        "ldp  d8, d9, [x5, #88]\n\t"
        "ldp  d10, d11, [x5, #104]\n\t"
        "ldp  d12, d13, [x5, #120]\n\t"
        "ldp  d14, d15, [x5, #136]\n\t"
        "mov  x6, sp\n\t"
        "str  x6, [x4, #16]\n\t" /* io->sp_before */
        "bl   bthread_jump_fcontext\n\t"
        "mov  x6, sp\n\t"
        "ldr  x4, [sp, #16]\n\t" /* x4 = io (x0 holds the result) */
        "str  x6, [x4, #24]\n\t" /* io->sp_after */
        "ldr  x5, [x4, #8]\n\t"  /* x5 = out */
        "stp  x19, x20, [x5, #0]\n\t" /* store what survived */
        "stp  x21, x22, [x5, #16]\n\t"
        "stp  x23, x24, [x5, #32]\n\t"
        "stp  x25, x26, [x5, #48]\n\t"
        "stp  x27, x28, [x5, #64]\n\t"
        "str  x29, [x5, #80]\n\t"
        "stp  d8, d9, [x5, #88]\n\t"
        "stp  d10, d11, [x5, #104]\n\t"
        "stp  d12, d13, [x5, #120]\n\t"
        "stp  d14, d15, [x5, #136]\n\t"
        "ldp  x29, x30, [sp], #32\n\t" /* the compiler's x29, x30 */
        : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4)
        :
        : "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15", "x16",
          "x17", "x18", "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28",
          "x30", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11",
          "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23",
          "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31", "memory", "cc");
    return (intptr_t)x0;
}

/* Switch with annotations around jump_with_regs. */
static intptr_t switch_with_regs(struct fiber *from, struct fiber *to, struct reg_io *io,
                                 intptr_t vp, bool fpu)
{
    struct sw_state s;
    sw_before(&s, to);
    intptr_t r = jump_with_regs(io, &from->fc, to->fc, vp, fpu);
    sw_after(&s);
    return r;
}

static const struct regs regs_main = {
    {0x1919191919191919u, 0x2020202020202020u, 0x2121212121212121u, 0x2222222222222222u,
     0x2323232323232323u, 0x2424242424242424u, 0x2525252525252525u, 0x2626262626262626u,
     0x2727272727272727u, 0x2828282828282828u, 0x2929292929292929u},
    {0x0808080808080808u, 0x0909090909090909u, 0x1010101010101010u, 0x1111111111111111u,
     0x1212121212121212u, 0x1313131313131313u, 0x1414141414141414u, 0x1515151515151515u},
};
static const struct regs regs_ctx = {
    {0xa19a19a19a19a190u, 0xa20a20a20a20a200u, 0xa21a21a21a21a210u, 0xa22a22a22a22a220u,
     0xa23a23a23a23a230u, 0xa24a24a24a24a240u, 0xa25a25a25a25a250u, 0xa26a26a26a26a260u,
     0xa27a27a27a27a270u, 0xa28a28a28a28a280u, 0xa29a29a29a29a290u},
    {0xd08d08d08d08d080u, 0xd09d09d09d09d090u, 0xd10d10d10d10d100u, 0xd11d11d11d11d110u,
     0xd12d12d12d12d120u, 0xd13d13d13d13d130u, 0xd14d14d14d14d140u, 0xd15d15d15d15d150u},
};

static struct fiber gp_main, gp_ctx;
static struct regs gp_ctx_out;
static struct reg_io gp_ctx_io;
static bool gp_fpu;

static void gp_entry(intptr_t vp)
{
    fiber_entered(&gp_main);
    /* Jump back with the other set of values live in every callee-saved register. */
    gp_ctx_io.in = &regs_ctx;
    gp_ctx_io.out = &gp_ctx_out;
    switch_with_regs(&gp_ctx, &gp_main, &gp_ctx_io, vp + 1, gp_fpu);
    fiber_switch(&gp_ctx, &gp_main, 0, false);
    abort();
}

static void check_regs(const struct reg_io *io, const struct regs *want, const char *side)
{
    for (int i = 0; i < 11; i++)
        cr_expect_eq(io->out->x[i], want->x[i], "%s: x%d = %#llx after the switch, expected %#llx",
                     side, 19 + i, (unsigned long long)io->out->x[i],
                     (unsigned long long)want->x[i]);
    for (int i = 0; i < 8; i++)
        cr_expect_eq(io->out->d[i], want->d[i], "%s: d%d = %#llx after the switch, expected %#llx",
                     side, 8 + i, (unsigned long long)io->out->d[i],
                     (unsigned long long)want->d[i]);
    cr_expect_eq(io->sp_after, io->sp_before, "%s: sp after the jump differs from before", side);
}

static void gp_round_trip(bool fpu)
{
    fiber_init_main(&gp_main);
    gp_fpu = fpu;
    make_on(&gp_ctx, 0, gp_entry);
    struct regs out;
    /* Main -> ctx with main's values live; ctx jumps back with its own values live. */
    struct reg_io io = {&regs_main, &out, 0, 0};
    cr_assert_eq(switch_with_regs(&gp_main, &gp_ctx, &io, 7, fpu), 8);
    check_regs(&io, &regs_main, "main");
    /* Main -> ctx with the other values live: ctx must see its own again. */
    memset(&gp_ctx_out, 0, sizeof gp_ctx_out);
    struct reg_io io2 = {&regs_ctx, &out, 0, 0};
    cr_assert_eq(switch_with_regs(&gp_main, &gp_ctx, &io2, 0, fpu), 0);
    check_regs(&gp_ctx_io, &regs_ctx, "context");
}

Test(fcontext_aarch64, callee_saved_registers_survive, .timeout = 10) { gp_round_trip(false); }

Test(fcontext_aarch64, callee_saved_registers_survive_preserve_fpu, .timeout = 10)
{
    gp_round_trip(true);
}

/* FPCR's control fields only: AHP(26) DN(25) FZ(24) RMode(23:22) FZ16(19). No trap
 * enables. */
#define FPCR_CONTROL 0x07c80000u
static const uint64_t fpcr_v[4] = {
    1u << 22,                             /* round towards +inf */
    (2u << 22) | (1u << 24),              /* towards -inf, flush to zero */
    (3u << 22) | (1u << 25),              /* towards zero, default NaN */
    (1u << 24) | (1u << 25) | (1u << 26), /* nearest, FZ, DN, AHP */
};

static void set_fpcr(uint64_t v) { __asm__ volatile("msr fpcr, %0" : : "r"(v)); }

static uint64_t get_fpcr(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, fpcr" : "=r"(v));
    return v & FPCR_CONTROL;
}

static struct fiber fp_main, fp_ctx;
static bool fp_ctx_flag; /* preserve_fpu for the context's jumps back */
static uint64_t fp_seen[2];

static void fp_entry(intptr_t vp)
{
    (void)vp;
    fiber_entered(&fp_main);
    fp_seen[0] = get_fpcr();
    set_fpcr(fpcr_v[2]); /* clobber before jumping back */
    fiber_switch(&fp_ctx, &fp_main, 0, fp_ctx_flag);
    fp_seen[1] = get_fpcr();
    fiber_switch(&fp_ctx, &fp_main, 0, fp_ctx_flag);
    abort();
}

/* main_flag: main's two jumps; ctx_flag: the context's. Returns what main saw between. */
static uint64_t fp_run(bool main_flag, bool ctx_flag)
{
    fiber_init_main(&fp_main);
    fp_ctx_flag = ctx_flag;
    memset(stacks[0], 0xff, STACK_SIZE); /* stale bytes for an unsaved slot to expose */
    set_fpcr(fpcr_v[0]);
    make_on(&fp_ctx, 0, fp_entry); /* the fresh frame holds setting 0 */
    set_fpcr(fpcr_v[1]);
    fiber_switch(&fp_main, &fp_ctx, 0, main_flag);
    uint64_t seen = get_fpcr();
    set_fpcr(fpcr_v[3]); /* clobber before resuming the context */
    fiber_switch(&fp_main, &fp_ctx, 0, main_flag);
    set_fpcr(0);
    return seen;
}

Test(fcontext_aarch64, fpcr_settings_read_back, .timeout = 10)
{
    for (int k = 0; k < 4; k++) {
        set_fpcr(fpcr_v[k]);
        cr_expect_eq(get_fpcr(), fpcr_v[k], "FPCR setting %d does not read back: the test "
                     "cannot see FPCR", k);
    }
    set_fpcr(0);
}

Test(fcontext_aarch64, fpcr_survives_with_preserve_fpu, .timeout = 10)
{
    uint64_t main_seen = fp_run(true, true);
    /* A fresh context starts with its creator's FPCR from make time; each side gets
     * back its own, although the other changed it before jumping. */
    cr_expect_eq(fp_seen[0], fpcr_v[0] & FPCR_CONTROL, "fresh: FPCR");
    cr_expect_eq(main_seen, fpcr_v[1] & FPCR_CONTROL, "main: FPCR");
    cr_expect_eq(fp_seen[1], fpcr_v[2] & FPCR_CONTROL, "context: FPCR");
}

/* Without preserve_fpu FPCR belongs to the thread and flows across the switch. */
Test(fcontext_aarch64, fpcr_flows_without_preserve_fpu, .timeout = 10)
{
    uint64_t main_seen = fp_run(false, false);
    cr_expect_eq(fp_seen[0], fpcr_v[1] & FPCR_CONTROL, "fresh: FPCR");
    cr_expect_eq(main_seen, fpcr_v[2] & FPCR_CONTROL, "main: FPCR");
    cr_expect_eq(fp_seen[1], fpcr_v[3] & FPCR_CONTROL, "context: FPCR");
}

/* A context suspended without preserve_fpu has nothing saved: resuming it with
 * preserve_fpu keeps the current FPCR rather than loading stale stack bytes. */
Test(fcontext_aarch64, fpcr_mixed_flags, .timeout = 10)
{
    uint64_t main_seen = fp_run(true, false);
    cr_expect_eq(fp_seen[0], fpcr_v[0] & FPCR_CONTROL, "fresh: FPCR");
    cr_expect_eq(main_seen, fpcr_v[2] & FPCR_CONTROL, "main: FPCR (resumed by a jump without it)");
    cr_expect_eq(fp_seen[1], fpcr_v[3] & FPCR_CONTROL, "context: FPCR (suspended without it)");
}

#else
#error "unit_fcontext.c: no register checks for this architecture (add a section)"
#endif /* __x86_64__, __aarch64__ */
