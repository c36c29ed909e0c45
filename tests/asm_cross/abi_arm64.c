/*
 * abi_arm64.c -- bthread_make_fcontext / bthread_jump_fcontext against AAPCS64.
 *
 * The AArch64 twin of tests/c/unit_fcontext.c, cross-compiled with aarch64-linux-gnu-gcc
 * and run under qemu-aarch64 by `make test-asm-cross` (asm/rules.mk).
 *
 * Why not Criterion: Debian ships libcriterion for the host architecture only, and the
 * aarch64 cross toolchain has no arm64 build of it (nor of its dependencies) to link
 * against. So this is a plain program: one line per check, "N passed, M failed" at the
 * end, exit status 1 if anything failed; alarm() bounds the run as Criterion's .timeout
 * would, and the one check that must watch the process end forks a child for it.
 *
 * What a switch must keep, checked by making the other side break it:
 *   - x19-x28, x29 (frame pointer), d8-d15 and sp hold, after the jump returns, what they
 *     held when it was called, although the other context had different values live in
 *     all of them when it jumped back (x30 is checked by the jump returning at all);
 *   - with preserve_fpu, FPCR likewise; without it the other side's change shows through
 *     (so the clobber is real); mixing the flags keeps the current FPCR;
 *   - values pass both ways, including the entry function's argument;
 *   - many contexts interleave, each keeping its own locals;
 *   - an entry function's stack is 16-byte aligned for any sp handed to make, and make
 *     writes nothing above sp;
 *   - returning from the entry function ends the process with status 0 through _exit,
 *     and nothing after the jump that started it runs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fcontext.h"

#if !defined(__aarch64__)
#error "abi_arm64.c is the AArch64 ABI test; build it with aarch64-linux-gnu-gcc"
#endif

static int n_passed, n_failed;

/* Record one check: one line either way, with details on failure. */
#define CHECK(cond, ...)                                                                     \
    do {                                                                                     \
        if (cond) {                                                                          \
            n_passed++;                                                                      \
            printf("ok   ");                                                                 \
        } else {                                                                             \
            n_failed++;                                                                      \
            printf("FAIL ");                                                                 \
        }                                                                                    \
        printf(__VA_ARGS__);                                                                 \
        printf("\n");                                                                        \
    } while (0)

#define STACK_SIZE (64 * 1024)
#define MAX_FIBERS 64

static alignas(64) char stacks[MAX_FIBERS][STACK_SIZE];

static bthread_fcontext_t make_on(int i, void (*fn)(intptr_t))
{
    return bthread_make_fcontext(stacks[i] + STACK_SIZE, STACK_SIZE, fn);
}

/* Hide a value's provenance from the optimizer (see unit_fcontext.c). */
static inline uintptr_t opaque(uintptr_t v)
{
    __asm__ volatile("" : "+r"(v));
    return v;
}

/* ---- callee-saved registers ------------------------------------------------------- */

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

static bthread_fcontext_t gp_main, gp_ctx;
static struct regs gp_ctx_out;
static struct reg_io gp_ctx_io;
static bool gp_fpu;

static void gp_entry(intptr_t vp)
{
    /* Jump back with the other set of values live in every callee-saved register. */
    gp_ctx_io.in = &regs_ctx;
    gp_ctx_io.out = &gp_ctx_out;
    jump_with_regs(&gp_ctx_io, &gp_ctx, gp_main, vp + 1, gp_fpu);
    bthread_jump_fcontext(&gp_ctx, gp_main, 0, false);
    abort();
}

static void check_regs(const struct reg_io *io, const struct regs *want, const char *what)
{
    for (int i = 0; i < 11; i++)
        CHECK(io->out->x[i] == want->x[i], "%s: x%d = %#llx, expected %#llx", what, 19 + i,
              (unsigned long long)io->out->x[i], (unsigned long long)want->x[i]);
    for (int i = 0; i < 8; i++)
        CHECK(io->out->d[i] == want->d[i], "%s: d%d = %#llx, expected %#llx", what, 8 + i,
              (unsigned long long)io->out->d[i], (unsigned long long)want->d[i]);
    CHECK(io->sp_after == io->sp_before, "%s: sp %#llx after the jump, %#llx before", what,
          (unsigned long long)io->sp_after, (unsigned long long)io->sp_before);
}

static void test_callee_saved(bool fpu)
{
    char what[64];
    gp_fpu = fpu;
    gp_ctx = make_on(0, gp_entry);
    struct regs out;
    struct reg_io io = {&regs_main, &out, 0, 0};
    /* Main -> ctx with main's values live; ctx jumps back with its own values live. */
    intptr_t r = jump_with_regs(&io, &gp_main, gp_ctx, 7, fpu);
    snprintf(what, sizeof what, "callee-saved, preserve_fpu=%d, main", fpu);
    CHECK(r == 8, "%s: jump returned %ld, expected 8", what, (long)r);
    check_regs(&io, &regs_main, what);
    /* Main -> ctx with the other values live: ctx must see its own again. */
    memset(&gp_ctx_out, 0, sizeof gp_ctx_out);
    struct reg_io io2 = {&regs_ctx, &out, 0, 0};
    jump_with_regs(&io2, &gp_main, gp_ctx, 0, fpu);
    snprintf(what, sizeof what, "callee-saved, preserve_fpu=%d, context", fpu);
    check_regs(&gp_ctx_io, &regs_ctx, what);
}

/* ---- FPCR ------------------------------------------------------------------------- */

/* Control fields only: AHP(26) DN(25) FZ(24) RMode(23:22) FZ16(19). No trap enables. */
#define FPCR_CONTROL 0x07c80000u
static const uint64_t fpcr_v[4] = {
    1u << 22,                        /* round towards +inf */
    (2u << 22) | (1u << 24),         /* towards -inf, flush to zero */
    (3u << 22) | (1u << 25),         /* towards zero, default NaN */
    (1u << 24) | (1u << 25) | (1u << 26), /* nearest, FZ, DN, AHP */
};

static void set_fpcr(uint64_t v) { __asm__ volatile("msr fpcr, %0" : : "r"(v)); }

static uint64_t get_fpcr(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, fpcr" : "=r"(v));
    return v & FPCR_CONTROL;
}

static bthread_fcontext_t fp_main, fp_ctx;
static bool fp_ctx_flag;
static uint64_t fp_seen[2];

static void fp_entry(intptr_t vp)
{
    (void)vp;
    fp_seen[0] = get_fpcr();
    set_fpcr(fpcr_v[2]); /* clobber before jumping back */
    bthread_jump_fcontext(&fp_ctx, fp_main, 0, fp_ctx_flag);
    fp_seen[1] = get_fpcr();
    bthread_jump_fcontext(&fp_ctx, fp_main, 0, fp_ctx_flag);
    abort();
}

/* main_flag: main's two jumps; ctx_flag: the context's. Returns what main saw between. */
static uint64_t fp_run(bool main_flag, bool ctx_flag)
{
    const uint64_t saved = get_fpcr();
    fp_ctx_flag = ctx_flag;
    memset(stacks[0], 0xff, STACK_SIZE); /* stale bytes for an unsaved slot to expose */
    set_fpcr(fpcr_v[0]);
    fp_ctx = make_on(0, fp_entry); /* the fresh frame holds setting 0 */
    set_fpcr(fpcr_v[1]);
    bthread_jump_fcontext(&fp_main, fp_ctx, 0, main_flag);
    uint64_t seen = get_fpcr();
    set_fpcr(fpcr_v[3]); /* clobber before resuming the context */
    bthread_jump_fcontext(&fp_main, fp_ctx, 0, main_flag);
    set_fpcr(saved);
    return seen;
}

static void test_fpcr(void)
{
    const uint64_t m = FPCR_CONTROL;
    for (int k = 0; k < 4; k++) {
        set_fpcr(fpcr_v[k]);
        CHECK(get_fpcr() == fpcr_v[k], "FPCR setting %d reads back (%#llx): the test can see FPCR",
              k, (unsigned long long)get_fpcr());
    }
    set_fpcr(0);

    uint64_t main_seen = fp_run(true, true);
    CHECK(fp_seen[0] == (fpcr_v[0] & m), "FPCR preserve_fpu: fresh context starts with the creator's (%#llx)",
          (unsigned long long)fp_seen[0]);
    CHECK(main_seen == (fpcr_v[1] & m), "FPCR preserve_fpu: main gets its own back (%#llx)",
          (unsigned long long)main_seen);
    CHECK(fp_seen[1] == (fpcr_v[2] & m), "FPCR preserve_fpu: context gets its own back (%#llx)",
          (unsigned long long)fp_seen[1]);

    main_seen = fp_run(false, false);
    CHECK(fp_seen[0] == (fpcr_v[1] & m), "FPCR without preserve_fpu: flows into a fresh context (%#llx)",
          (unsigned long long)fp_seen[0]);
    CHECK(main_seen == (fpcr_v[2] & m), "FPCR without preserve_fpu: the context's change shows in main (%#llx)",
          (unsigned long long)main_seen);
    CHECK(fp_seen[1] == (fpcr_v[3] & m), "FPCR without preserve_fpu: main's change shows in the context (%#llx)",
          (unsigned long long)fp_seen[1]);

    main_seen = fp_run(true, false);
    CHECK(fp_seen[0] == (fpcr_v[0] & m), "FPCR mixed flags: fresh context starts with the creator's (%#llx)",
          (unsigned long long)fp_seen[0]);
    CHECK(main_seen == (fpcr_v[2] & m), "FPCR mixed flags: resumed by a jump without it, main keeps the current (%#llx)",
          (unsigned long long)main_seen);
    CHECK(fp_seen[1] == (fpcr_v[3] & m), "FPCR mixed flags: suspended without it, the context keeps the current (%#llx)",
          (unsigned long long)fp_seen[1]);
}

/* ---- values both ways ------------------------------------------------------------- */

static bthread_fcontext_t v_main, v_ctx;
static intptr_t v_seen[4];

static void values_entry(intptr_t vp)
{
    v_seen[0] = vp;
    v_seen[1] = bthread_jump_fcontext(&v_ctx, v_main, -1, false);
    v_seen[2] = bthread_jump_fcontext(&v_ctx, v_main, INTPTR_MIN, false);
    v_seen[3] = bthread_jump_fcontext(&v_ctx, v_main, (intptr_t)&v_seen, true);
    bthread_jump_fcontext(&v_ctx, v_main, 0, true);
    abort();
}

static void test_values(void)
{
    v_ctx = make_on(0, values_entry);
    intptr_t r[4];
    r[0] = bthread_jump_fcontext(&v_main, v_ctx, 42, false);
    r[1] = bthread_jump_fcontext(&v_main, v_ctx, INTPTR_MAX, false);
    r[2] = bthread_jump_fcontext(&v_main, v_ctx, 0, true);
    r[3] = bthread_jump_fcontext(&v_main, v_ctx, (intptr_t)&v_ctx, true);
    CHECK(v_seen[0] == 42, "values: entry argument %ld", (long)v_seen[0]);
    CHECK(r[0] == -1 && r[1] == INTPTR_MIN && r[2] == (intptr_t)&v_seen && r[3] == 0,
          "values: context -> main (%ld %ld %ld %ld)", (long)r[0], (long)r[1], (long)r[2],
          (long)r[3]);
    CHECK(v_seen[1] == INTPTR_MAX && v_seen[2] == 0 && v_seen[3] == (intptr_t)&v_ctx,
          "values: main -> context (%ld %ld %ld)", (long)v_seen[1], (long)v_seen[2],
          (long)v_seen[3]);
}

/* ---- many contexts ---------------------------------------------------------------- */

#define RR_ROUNDS 20
static bthread_fcontext_t rr_main, rr_ctx[MAX_FIBERS];
static int rr_errors;

static void rr_entry(intptr_t vp)
{
    const int id = (int)(vp >> 32);
    int64_t sum = 0; /* on this context's own stack */
    intptr_t token = vp & 0xffffffff;
    for (;;) {
        if ((token >> 16) != id)
            rr_errors++;
        sum += token;
        token = bthread_jump_fcontext(&rr_ctx[id], rr_main, (intptr_t)((sum << 8) | id),
                                      false);
    }
}

static void test_round_robin(void)
{
    int64_t expect[MAX_FIBERS] = {0};
    int bad = 0;
    for (int i = 0; i < MAX_FIBERS; i++)
        rr_ctx[i] = make_on(i, rr_entry);
    for (int round = 0; round < RR_ROUNDS; round++) {
        for (int i = 0; i < MAX_FIBERS; i++) {
            intptr_t token = ((intptr_t)i << 16) | round;
            intptr_t vp = round == 0 ? (((intptr_t)i << 32) | token) : token;
            expect[i] += token;
            intptr_t r = bthread_jump_fcontext(&rr_main, rr_ctx[i], vp, (round & 1) != 0);
            if ((r & 0xff) != i || (r >> 8) != expect[i])
                bad++;
        }
    }
    CHECK(bad == 0 && rr_errors == 0,
          "%d contexts x %d rounds round-robin: %d wrong answers, %d misrouted tokens",
          MAX_FIBERS, RR_ROUNDS, bad, rr_errors);
}

#define RING_LAPS 10
static bthread_fcontext_t ring_main, ring_ctx[MAX_FIBERS];
static int ring_errors, ring_hops[MAX_FIBERS];

static void ring_entry(intptr_t vp)
{
    const int id = (int)vp;
    intptr_t count = bthread_jump_fcontext(&ring_ctx[id], ring_main, 0, false);
    for (;;) {
        if (count % MAX_FIBERS != id)
            ring_errors++;
        ring_hops[id]++;
        bthread_fcontext_t next = count + 1 == (intptr_t)MAX_FIBERS * RING_LAPS
                                      ? ring_main
                                      : ring_ctx[(id + 1) % MAX_FIBERS];
        count = bthread_jump_fcontext(&ring_ctx[id], next, count + 1, false);
    }
}

static void test_ring(void)
{
    for (int i = 0; i < MAX_FIBERS; i++) {
        ring_ctx[i] = make_on(i, ring_entry);
        bthread_jump_fcontext(&ring_main, ring_ctx[i], i, false);
    }
    intptr_t end = bthread_jump_fcontext(&ring_main, ring_ctx[0], 0, false);
    int wrong_hops = 0;
    for (int i = 0; i < MAX_FIBERS; i++)
        wrong_hops += ring_hops[i] != RING_LAPS;
    CHECK(end == (intptr_t)MAX_FIBERS * RING_LAPS && ring_errors == 0 && wrong_hops == 0,
          "%d contexts in a ring, %d laps: end %ld, %d out of order, %d wrong hop counts",
          MAX_FIBERS, RING_LAPS, (long)end, ring_errors, wrong_hops);
}

/* ---- alignment -------------------------------------------------------------------- */

static bthread_fcontext_t al_main, al_ctx;
static uintptr_t al_local_mod, al_frame_mod;

static __attribute__((noinline)) void align_probe(void)
{
    alignas(16) volatile char buf[16];
    buf[0] = 1;
    al_local_mod = opaque((uintptr_t)buf) % 16;
}

static void align_entry(intptr_t vp)
{
    (void)vp;
    al_frame_mod = opaque((uintptr_t)__builtin_frame_address(0)) % 16;
    align_probe();
    bthread_jump_fcontext(&al_ctx, al_main, 0, false);
    abort();
}

static void test_alignment(void)
{
    static const int offsets[] = {0, 1, 3, 7, 8, 9, 15, 16, 24};
    for (size_t k = 0; k < sizeof offsets / sizeof offsets[0]; k++) {
        char *top = stacks[0] + STACK_SIZE;
        char *sp = top - 64 - offsets[k];
        memset(sp, 0x5a, (size_t)(top - sp));
        al_local_mod = al_frame_mod = 99;
        al_ctx = bthread_make_fcontext(sp, (size_t)(sp - stacks[0]), align_entry);
        bool frame_ok = (char *)al_ctx < sp && (char *)al_ctx >= sp - 256;
        bthread_jump_fcontext(&al_main, al_ctx, 0, false);
        bool above_ok = true;
        for (char *p = sp; p < top; p++)
            above_ok = above_ok && *p == 0x5a;
        CHECK(frame_ok && al_frame_mod == 0 && al_local_mod == 0 && above_ok,
              "alignment, sp = top - 64 - %d: frame address %% 16 = %d, aligned local %% 16 = "
              "%d, context %s, above sp %s",
              offsets[k], (int)al_frame_mod, (int)al_local_mod,
              frame_ok ? "just below sp" : "OUT OF PLACE", above_ok ? "untouched" : "WRITTEN");
    }
}

/* ---- returning from the entry function ends the process --------------------------- */

static int exit_pipe = -1;

static void write_marker(char c)
{
    ssize_t n;
    do
        n = write(exit_pipe, &c, 1);
    while (n < 0 && errno == EINTR);
}

static void exit_atexit(void) { write_marker('A'); }

static void exit_entry(intptr_t vp) { write_marker((char)vp); }

static void test_exit(void)
{
    int p[2];
    if (pipe(p) != 0) {
        CHECK(0, "finish: pipe: %s", strerror(errno));
        return;
    }
    fflush(stdout); /* the child must not flush our buffered lines again */
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        exit_pipe = p[1];
        atexit(exit_atexit); /* must not run: finish calls _exit, not exit */
        bthread_fcontext_t m, c = make_on(0, exit_entry);
        bthread_jump_fcontext(&m, c, 'E', false);
        write_marker('R'); /* returned to the jumper: must never happen */
        _exit(3);
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
    int st = 0;
    pid_t w;
    do
        w = waitpid(pid, &st, 0);
    while (w < 0 && errno == EINTR);
    CHECK(pid > 0 && w == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "finish: returning from the entry function exits with status 0 (%s %d)",
          WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    CHECK(strcmp(buf, "E") == 0,
          "finish: the entry ran, then _exit: no atexit handler, no return to the jumper "
          "(markers \"%s\", expected \"E\")",
          buf);
}

int main(void)
{
    alarm(120); /* a hang is a failure (SIGALRM ends the run), as a Criterion .timeout */
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_callee_saved(false);
    test_callee_saved(true);
    test_fpcr();
    test_values();
    test_round_robin();
    test_ring();
    test_alignment();
    test_exit();
    printf("%d passed, %d failed\n", n_passed, n_failed);
    return n_failed == 0 ? 0 : 1;
}
