/*
 * engine_probe.c -- a tiny simulated program with a walk the test controls, to check the
 * engine's memory costs exactly (tests/sim/test_sim.py recomputes every cost from the
 * rules harness/sim/README.md documents).  Built like a variant's simbench: with sim.h
 * force-included, linked with the engine (harness/sim/rules.mk).
 *
 *   engine_probe MODEL walk N STRIDE WORK_PS REWRITE AT_PS PREREAD
 *       A writer thread (PU 1) stores to N lines STRIDE lines apart, at time 0.  The main
 *       thread (PU 0) waits until 1 ms, then loads them in order, charging WORK_PS of
 *       work after each load.  REWRITE >= 0: the writer stores to line REWRITE again at
 *       AT_PS; PREREAD 1: main has read that line (from another site) at 0.5 ms, so the
 *       rewrite is a transfer that occupies the line.  Prints each load's start and cost
 *       (ps) and the engine's prefetch counters.
 *   engine_probe MODEL script PU,AT_NS,KIND,LINE[;...]
 *       One thread per PU up to the highest named (main is PU 0, the others are created
 *       in order and get PUs 1, 2, ...); each runs its operations in the order given,
 *       the next one at AT_NS (it must be done with the one before by then).  KIND: L a
 *       relaxed load, S a relaxed store (of the operation's index + 1), X a seq_cst
 *       store, R a relaxed fetch_add, F a seq_cst fence, P and Q __builtin_prefetch for
 *       a read and for a write; on the line's first word as a futex: W wait while it is
 *       0, K wake one, A wake all.  LINE: 0-15, the lines
 *       SCRIPT_GAP lines apart (beyond the stride prefetcher's reach).  Prints each
 *       operation's start, cost and result (a futex call's return value, else 0), in
 *       script order, and the stride prefetcher's counters.
 *
 * Work is charged as kernel iterations: WORK_PS must be a multiple of the model's
 * kernel_iter_ps.
 */
#include <errno.h>
#include <linux/futex.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_engine.h"

#define LINE 64
#define MAX_LINES 4096 /* >= SCRIPT_LINES x SCRIPT_GAP */
#define START_PS 1000000000ull /* 1 ms: the writer is done by then */
#define PREREAD_PS (START_PS / 2)

typedef struct {
    _Atomic long v;
    char pad[LINE - sizeof(long)];
} slot_t;

static _Alignas(LINE) slot_t slots[MAX_LINES];

static struct {
    const char *mode;
    long n, stride, rewrite, preread;
    uint64_t work_ps, at_ps;
} opt;

static void work(uint64_t ps)
{
    if (ps)
        sim_charge_work(SIM_WORK_KERNEL_ITER, ps / sim_model.kernel_iter_ps);
}

/* idle until `at`: a sleep, exact where the model has no timer slack, the sleep's system
 * call fits before `at`, and the times are whole nanoseconds */
static void wait_until(uint64_t at)
{
    uint64_t now = sim_now_ps();
    if (at > now) {
        struct timespec ts = {(time_t)((at - now) / 1000000000000ull),
                              (long)((at - now) % 1000000000000ull / 1000)};
        nanosleep(&ts, NULL);
    }
    if (sim_now_ps() != at) {
        fprintf(stderr, "engine_probe: a sleep until %llu ps ended at %llu ps (the model's "
                        "sleep_slack must be 0, the gap before an operation at least its "
                        "syscall price, every price whole ns)\n",
                (unsigned long long)at, (unsigned long long)sim_now_ps());
        exit(1);
    }
}

static void *writer(void *arg)
{
    (void)arg;
    for (long i = 0; i < opt.n; i++)
        atomic_store_explicit(&slots[i * opt.stride].v, i + 1, memory_order_relaxed);
    if (opt.rewrite >= 0) {
        wait_until(opt.at_ps);
        atomic_store_explicit(&slots[opt.rewrite * opt.stride].v, -1, memory_order_relaxed);
    }
    return NULL;
}

/* ---- script mode ---- */
#define SCRIPT_MAX 64
#define SCRIPT_LINES 16
#define SCRIPT_GAP 40 /* lines: more than the prefetcher's largest stride */
#define SCRIPT_PUS 16
#define SCRIPT_KINDS "LSXRFPQWKA"

static struct op {
    int pu;
    uint64_t at_ps;
    char kind;
    int line;
    uint64_t start, cost;
    long ret;
} ops[SCRIPT_MAX];
static int nops, npu_script;

static void run_ops(int pu)
{
    for (int i = 0; i < nops; i++) {
        struct op *o = &ops[i];
        if (o->pu != pu)
            continue;
        wait_until(o->at_ps);
        _Atomic long *v = &slots[o->line * SCRIPT_GAP].v;
        int *word = (int *)v; /* its low half (x86-64 and aarch64 are little-endian) */
        o->start = sim_now_ps();
        switch (o->kind) {
        case 'L': (void)atomic_load_explicit(v, memory_order_relaxed); break;
        case 'S': atomic_store_explicit(v, i + 1, memory_order_relaxed); break;
        case 'X': atomic_store_explicit(v, i + 1, memory_order_seq_cst); break;
        case 'R': (void)atomic_fetch_add_explicit(v, 1, memory_order_relaxed); break;
        case 'P': __builtin_prefetch(v, 0); break;
        case 'Q': __builtin_prefetch(v, 1); break;
        case 'W': o->ret = syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0); break;
        case 'K': o->ret = syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); break;
        case 'A': o->ret = syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0); break;
        default: atomic_thread_fence(memory_order_seq_cst); break;
        }
        o->cost = sim_now_ps() - o->start;
    }
}

static void *script_thread(void *arg)
{
    run_ops((int)(intptr_t)arg);
    return NULL;
}

static void script(void)
{
    pthread_t t[SCRIPT_PUS];
    for (int pu = 1; pu < npu_script; pu++)
        if (pthread_create(&t[pu], NULL, script_thread, (void *)(intptr_t)pu) != 0) {
            fprintf(stderr, "engine_probe: cannot start a thread\n");
            exit(1);
        }
    run_ops(0);
    for (int pu = 1; pu < npu_script; pu++)
        pthread_join(t[pu], NULL);
    printf("{\"ops\": [");
    for (int i = 0; i < nops; i++)
        printf("%s[%llu, %llu, %ld]", i ? ", " : "", (unsigned long long)ops[i].start,
               (unsigned long long)ops[i].cost, ops[i].ret);
    printf("], ");
}

/* A decimal number in [min, max] at s (digits only: no sign, no space); *end after it. */
static bool parse_num(const char *s, const char **end, long min, long max, long *v)
{
    char *e;
    if (!(*s >= '0' && *s <= '9') && !(*s == '-' && min < 0 && s[1] >= '0' && s[1] <= '9'))
        return false;
    errno = 0;
    *v = strtol(s, &e, 10);
    *end = e;
    return errno == 0 && *v >= min && *v <= max;
}

static bool parse(const char *arg, long min, long max, long *v)
{
    const char *end;
    return parse_num(arg, &end, min, max, v) && *end == '\0';
}

/* "PU,AT_NS,KIND,LINE;..." into ops[]; false if malformed */
static bool parse_script(const char *text)
{
    const char *p = text;
    nops = 0;
    npu_script = 1;
    while (*p) {
        long pu, at, line;
        char kind;
        if (nops == SCRIPT_MAX || !parse_num(p, &p, 0, SCRIPT_PUS - 1, &pu) || *p++ != ',' ||
            !parse_num(p, &p, 0, LONG_MAX / 1000, &at) || *p++ != ',' || !*p ||
            !strchr(SCRIPT_KINDS, kind = *p++) || *p++ != ',' ||
            !parse_num(p, &p, 0, SCRIPT_LINES - 1, &line) || (*p && *p++ != ';'))
            return false;
        ops[nops++] = (struct op){.pu = (int)pu, .at_ps = (uint64_t)at * 1000, .kind = kind,
                                  .line = (int)line};
        if (pu + 1 > npu_script)
            npu_script = (int)pu + 1;
    }
    return nops > 0;
}

/* the stride prefetcher's counters, closing the JSON object */
static void print_counters(void)
{
    printf("\"prefetched\": %llu, \"saved_ps\": %llu}\n", (unsigned long long)sim_stats.prefetched,
           (unsigned long long)sim_stats.prefetch_saved_ps);
}

static void *body(void *arg)
{
    (void)arg;
    if (strcmp(opt.mode, "script") == 0) {
        script();
        print_counters();
        return NULL;
    }
    pthread_t w;
    if (pthread_create(&w, NULL, writer, NULL) != 0) {
        fprintf(stderr, "engine_probe: cannot start the writer\n");
        exit(1);
    }
    if (opt.preread) {
        wait_until(PREREAD_PS);
        (void)atomic_load_explicit(&slots[opt.rewrite * opt.stride].v, memory_order_relaxed);
    }
    wait_until(START_PS);
    printf("{\"loads\": [");
    for (long i = 0; i < opt.n; i++) {
        uint64_t t0 = sim_now_ps();
        long v = atomic_load_explicit(&slots[i * opt.stride].v, memory_order_relaxed);
        uint64_t t1 = sim_now_ps();
        printf("%s[%llu, %llu, %ld]", i ? ", " : "", (unsigned long long)t0,
               (unsigned long long)(t1 - t0), v);
        work(opt.work_ps);
    }
    printf("], ");
    pthread_join(w, NULL);
    print_counters();
    return NULL;
}

int main(int argc, char **argv)
{
    bool walk = argc == 9 && strcmp(argv[2], "walk") == 0;
    bool sc = argc == 4 && strcmp(argv[2], "script") == 0;
    long work = 0, at = 0;
    opt.n = 1;
    opt.stride = 1;
    opt.rewrite = -1;
    bool ok = walk || sc;
    if (walk)
        ok = parse(argv[3], 1, MAX_LINES, &opt.n) && parse(argv[4], 1, MAX_LINES / opt.n, &opt.stride) &&
             parse(argv[5], 0, LONG_MAX, &work) && parse(argv[6], -1, opt.n - 1, &opt.rewrite) &&
             parse(argv[7], 0, LONG_MAX, &at) && parse(argv[8], 0, opt.rewrite >= 0, &opt.preread);
    else if (sc)
        ok = parse_script(argv[3]);
    if (!ok) {
        fprintf(stderr, "usage: engine_probe MODEL walk N STRIDE WORK_PS REWRITE AT_PS PREREAD\n"
                        "       engine_probe MODEL script PU,AT_NS,KIND,LINE[;...]\n"
                        "(N x STRIDE <= %d, REWRITE -1 or below N, PREREAD 0 or, with a "
                        "REWRITE, 1)\n", MAX_LINES);
        return 2;
    }
    opt.mode = argv[2];
    opt.work_ps = (uint64_t)work;
    opt.at_ps = (uint64_t)at;
    sim_model_load(argv[1]);
    if (sim_model.npus < 2 || sim_model.npus < npu_script || sim_model.kernel_iter_ps == 0 ||
        opt.work_ps % sim_model.kernel_iter_ps) {
        fprintf(stderr, "engine_probe: the model needs 2 PUs or more (every PU the script "
                        "names) and a kernel iteration of at least 1 ps, WORK_PS a multiple "
                        "of it\n");
        return 2;
    }
    sim_run(body, NULL, 0, 0);
    return 0;
}
