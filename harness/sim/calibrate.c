/*
 * calibrate.c -- build/sim-calibrate: measure on this machine the costs the simulator
 * charges (harness/sim/sim_engine.h), for harness/driver/calibrate.py, which writes them
 * into a model JSON with the topology.  A real (not simulated) program.
 *
 *   sim-calibrate costs             one `name ns` line per cost of sim_cost_names and
 *                                   kernel_iters_per_us; a loop's cost is the fastest of
 *                                   101 short timed loops, a sampled one (wake-ups, thread
 *                                   creation, sleeps) the 10th percentile of its samples,
 *                                   a ring of cold contexts the median of 3 runs
 *   sim-calibrate pair A B          `xfer A B ns`: one cache-line transfer between PUs A
 *                                   and B (two pinned threads hand a counter back and
 *                                   forth; round trip / 2, the fastest of 101 short runs)
 *
 * Each number is what the engine charges for one event: e.g. wakeup_latency is the time
 * from the end of a futex wake system call to the woken thread running, futex_wake the
 * duration of the system call that wakes a sleeper, syscall one that wakes nobody.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fcontext.h"
#include "sha1.h"
#include "sim_engine.h"
#include "uts_tree.h"
#include "spinlock.h"
#include "wl_kernel.h"

static uint64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}


/* The machine may be shared: interference only ever adds time, so a loop's cost is the
 * fastest of REPS runs, and a sampled cost the 10th percentile of its samples. */
static double lowest(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[0];
}

static double low_pct(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 10];
}

#define REPS 101 /* short loops (~0.1-1 ms), many: the fastest ran undisturbed */
/* ns per iteration of `body`, the fastest of REPS loops of n iterations */
#define TIME_LOOP(n, body)                                                                \
    __extension__({                                                                       \
        double r_[REPS];                                                                  \
        for (int k_ = 0; k_ < REPS; k_++) {                                               \
            uint64_t t0_ = now();                                                         \
            for (long i_ = 0; i_ < (n); i_++) {                                           \
                body;                                                                     \
            }                                                                             \
            r_[k_] = (double)(now() - t0_) / (double)(n);                                 \
        }                                                                                 \
        lowest(r_, REPS);                                                                 \
    })

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (pthread_setaffinity_np(pthread_self(), sizeof s, &s) != 0)
        fprintf(stderr, "sim-calibrate: cannot pin to cpu %d (measuring unpinned)\n", cpu);
}

static long futex(_Atomic int *a, int op, int v)
{
    return syscall(SYS_futex, a, op | FUTEX_PRIVATE_FLAG, v, NULL, NULL, 0);
}

/* ---- the context switch ------------------------------------------------------------- */
static bthread_fcontext_t main_ctx, other_ctx;
static void other_fn(intptr_t v)
{
    (void)v;
    for (;;)
        bthread_jump_fcontext(&other_ctx, main_ctx, 0, false);
}

static double switch_ns(void)
{
    static char stack[65536];
    other_ctx = bthread_make_fcontext(stack + sizeof stack, sizeof stack, other_fn);
    return TIME_LOOP(50000, bthread_jump_fcontext(&main_ctx, other_ctx, 0, false)) / 2;
}

/* ---- resuming a context gone cold ------------------------------------------------------
 * A ring of k contexts, each at the top of its own stack, the stacks as far apart as the
 * scheduler's guarded normal stacks (1 MiB and a guard page: stack.c), each jumping to
 * the next: per switch, the cost of resuming a context last run k switches ago.  Each
 * context's saved pointer sits in a record of its own, as a task's `ctx` in its task_t
 * (a cache line of its own, in an array of such records), which the switch reads.  The
 * first lap faults the pages in and is not timed.  resume_<k> is that less a ring of 2
 * (the plain switch the engine already charges). */
#define RING_RECORD 256 /* bytes per task record (common/core.h's task_t: a few lines) */
typedef struct ring_slot {
    alignas(64) bthread_fcontext_t ctx;
    char pad[RING_RECORD - sizeof(bthread_fcontext_t)];
} ring_slot_t;
static ring_slot_t *ring;
static long ring_k, ring_left;
static void ring_fn(intptr_t me)
{
    for (;;) {
        long next = me + 1 == ring_k ? 0 : me + 1;
        if (next == 0 && --ring_left == 0)
            bthread_jump_fcontext(&ring[me].ctx, main_ctx, 0, false);
        else
            bthread_jump_fcontext(&ring[me].ctx, ring[next].ctx, next, false);
    }
}

static double ring_ns(long k)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), stride = ((size_t)1 << 20) + page;
    char *m = mmap(NULL, (size_t)k * stride, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ring = aligned_alloc(64, (size_t)k * sizeof *ring);
    if (m == MAP_FAILED || !ring) {
        perror("sim-calibrate: ring of contexts");
        exit(1);
    }
    for (long i = 0; i < k; i++)
        ring[i].ctx = bthread_make_fcontext(m + (size_t)(i + 1) * stride - 256, 65536, ring_fn);
    ring_k = k;
    ring_left = 1; /* the untimed lap */
    bthread_jump_fcontext(&main_ctx, ring[0].ctx, 0, false);
    long laps = (1L << 19) / k > 4 ? (1L << 19) / k : 4;
    ring_left = laps;
    uint64_t t0 = now();
    bthread_jump_fcontext(&main_ctx, ring[0].ctx, 0, false);
    double ns = (double)(now() - t0) / (double)(laps * k);
    munmap(m, (size_t)k * stride);
    free(ring);
    return ns;
}

/* Past the caches' reach a ring's time moves with what else the host runs (here 127-454
 * ns per switch at 16k from one run to the next): the median of 3. */
static double ring_median_ns(long k)
{
    double v[3];
    for (int i = 0; i < 3; i++)
        v[i] = ring_ns(k);
    qsort(v, 3, sizeof *v, cmp_d);
    return v[1];
}

/* resume_<d> for each ring size d of the engine's curve (d >= 1024 written as <d/1024>k) */
static void resume_costs(void)
{
    static const long ring[SIM_RESUME_POINTS] = SIM_RESUME_D;
    double base = ring_median_ns(2);
    for (int i = 0; i < SIM_RESUME_POINTS; i++) {
        double extra = ring_median_ns(ring[i]) - base;
        if (ring[i] >= 1024)
            printf("resume_%ldk %.3f\n", ring[i] / 1024, extra > 0 ? extra : 0);
        else
            printf("resume_%ld %.3f\n", ring[i], extra > 0 ? extra : 0);
    }
}

/* ---- futex wake-up latency ------------------------------------------------------------ */
#define WAKES 201
static _Atomic int fword, fstate; /* fstate: 0 idle, 1 sleeper armed, 2 woken */
static _Atomic uint64_t woke_at;
static int nwakes; /* the sleeper's rounds: one per sample */

static void *sleeper(void *arg)
{
    pin((int)(intptr_t)arg);
    for (int i = 0; i < nwakes; i++) {
        atomic_store(&fword, 0);
        atomic_store(&fstate, 1);
        while (atomic_load(&fword) == 0)
            futex(&fword, FUTEX_WAIT, 0);
        atomic_store(&woke_at, now());
        atomic_store(&fstate, 2);
        while (atomic_load(&fstate) != 0)
            ;
    }
    return NULL;
}

/* n wakes of a sleeper on cpu_b from cpu_a: the system call's time (w) and the time from
 * its end to the sleeper running (l), in ns, for the wakes that found it asleep (their
 * count is returned).  Each sleep lasts `sleep_ns` of busy waiting after the sleeper
 * armed itself, or, for sleep_ns < 0, a 200 us nanosleep (with the timer's slack: long
 * enough for any idle CPU to halt). */
static int wake_samples(int cpu_a, int cpu_b, long sleep_ns, int n, double *w, double *l)
{
    pthread_t t;
    nwakes = n;
    pthread_create(&t, NULL, sleeper, (void *)(intptr_t)cpu_b);
    pin(cpu_a);
    int got = 0;
    for (int i = 0; i < n; i++) {
        while (atomic_load(&fstate) != 1)
            ;
        if (sleep_ns < 0) {
            struct timespec d = {0, 200000}; /* let it reach the kernel's sleep */
            nanosleep(&d, NULL);
        } else {
            for (uint64_t t0 = now(); now() - t0 < (uint64_t)sleep_ns;)
                ;
        }
        atomic_store(&fword, 1);
        uint64_t t0 = now();
        long woken = futex(&fword, FUTEX_WAKE, 1);
        uint64_t t1 = now();
        while (atomic_load(&fstate) != 2)
            ;
        if (woken == 1) { /* else it had not gone to sleep yet: no wake-up to time */
            w[got] = (double)(t1 - t0);
            l[got] = (double)(atomic_load(&woke_at) - t1);
            if (l[got] < 0)
                l[got] = 0;
            got++;
        }
        atomic_store(&fstate, 0);
    }
    pthread_join(t, NULL);
    return got;
}

/* A wake-up after a long sleep: futex_wake and wakeup_latency. */
static void wake_costs(int cpu_a, int cpu_b, double *wake, double *latency)
{
    double w[WAKES], l[WAKES];
    int got = wake_samples(cpu_a, cpu_b, -1, WAKES, w, l);
    *wake = got ? low_pct(w, got) : 0;
    *latency = got ? low_pct(l, got) : 0;
}

/* A wake-up after a short sleep, and how long a sleep stays short.  A CPU that has just
 * gone idle polls for a while before it halts (a VM's guest halt polling; on bare metal a
 * shallow idle state first): until then a wake-up is cheap.  The sleeps of the ladder,
 * 41 wakes each: the first (10 us) gives futex_wake_short and wakeup_latency_short (10th
 * percentiles); short_sleep_max is the longest sleep of the ladder's first run whose
 * median wake is nearer futex_wake_short than the long sleep's `wake` (all of the ladder
 * if no step shows). */
#define LADDER_WAKES 41
static void short_wake_costs(int cpu_a, int cpu_b, double wake, double *wake_short,
                             double *latency_short, double *short_max)
{
    static const long ladder_us[] = {10, 20, 50, 75, 100, 125, 150, 175, 200, 300, 500, 1000};
    const int nl = (int)(sizeof ladder_us / sizeof *ladder_us);
    double w[LADDER_WAKES], l[LADDER_WAKES];
    *wake_short = *latency_short = wake;
    *short_max = 0;
    for (int i = 0; i < nl; i++) {
        int got = wake_samples(cpu_a, cpu_b, ladder_us[i] * 1000, LADDER_WAKES, w, l);
        if (got < LADDER_WAKES / 2)
            break;
        if (i == 0) {
            *wake_short = low_pct(w, got);
            *latency_short = low_pct(l, got);
        }
        qsort(w, (size_t)got, sizeof *w, cmp_d);
        if (w[got / 2] - *wake_short > wake - w[got / 2])
            break; /* nearer the long sleep's price: no longer short */
        *short_max = (double)ladder_us[i] * 1000;
    }
}

static void *empty(void *a) { return a; }

static double thread_create_ns(void)
{
    double v[WAKES];
    for (int i = 0; i < WAKES; i++) {
        pthread_t t;
        uint64_t t0 = now();
        pthread_create(&t, NULL, empty, NULL);
        v[i] = (double)(now() - t0);
        pthread_join(t, NULL);
    }
    return low_pct(v, WAKES);
}

static double sleep_slack_ns(void)
{
    double v[51];
    for (int i = 0; i < 51; i++) {
        struct timespec d = {0, 50000};
        uint64_t t0 = now();
        nanosleep(&d, NULL);
        v[i] = (double)(now() - t0) - 50000.0;
    }
    return low_pct(v, 51);
}

/* A fresh stack as common/stack.c maps one on a pool miss (the normal class, 1 MiB, and
 * a one-page guard): mmap, mprotect of the guard, the first touch of the top page
 * (stack_map); and its munmap (stack_unmap).  The median, not the fastest: what a
 * mapping costs varies with the kernel's state (page zeroing, the VMA tree, TLB
 * shootdowns) even on a quiet machine. */
#define MAPS 201
static void stack_map_ns(double *map, double *unmap)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len = ((size_t)1 << 20) + page;
    double v[MAPS], u[MAPS];
    for (int i = 0; i < MAPS; i++) {
        uint64_t t0 = now();
        char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (m == MAP_FAILED || mprotect(m, page, PROT_NONE) != 0) {
            perror("sim-calibrate: mmap/mprotect");
            exit(1);
        }
        *(volatile char *)(m + len - 1) = 1;
        uint64_t t1 = now();
        munmap(m, len);
        v[i] = (double)(t1 - t0);
        u[i] = (double)(now() - t1);
    }
    qsort(v, MAPS, sizeof *v, cmp_d);
    qsort(u, MAPS, sizeof *u, cmp_d);
    *map = v[MAPS / 2];
    *unmap = u[MAPS / 2];
}

/* ---- a cache line between two PUs ------------------------------------------------------ */
#define HANDOFFS 2000
#define PAIR_REPS 101 /* short runs, many: one of them fits between preemptions */
static struct {
    alignas(64) _Atomic long turn;
} line;

static void *pong(void *arg)
{
    pin((int)(intptr_t)arg);
    for (long i = 1; i < 2L * HANDOFFS * PAIR_REPS; i += 2) {
        while (atomic_load_explicit(&line.turn, memory_order_acquire) != i)
            ;
        atomic_store_explicit(&line.turn, i + 1, memory_order_release);
    }
    return NULL;
}

static double pair_ns(int a, int b)
{
    pthread_t t;
    atomic_store(&line.turn, 0);
    pthread_create(&t, NULL, pong, (void *)(intptr_t)b);
    pin(a);
    double r[PAIR_REPS];
    long v = 0;
    for (int k = 0; k < PAIR_REPS; k++) {
        uint64_t t0 = now();
        for (long i = 0; i < HANDOFFS; i++) {
            while (atomic_load_explicit(&line.turn, memory_order_acquire) != v)
                ;
            atomic_store_explicit(&line.turn, v + 1, memory_order_release);
            v += 2;
        }
        r[k] = (double)(now() - t0) / (2.0 * HANDOFFS);
    }
    pthread_join(t, NULL);
    return lowest(r, PAIR_REPS);
}

/* A uts node's whole work: uts_tree.h's sequential count, the code every uts search runs
 * per node, over whole subtrees of T1's depth-3 nodes until at least 20,000 nodes (the
 * first alone has 35,270), per node (the fastest of 51 runs of ~13 ms).  calibrate.py takes one SHA-1 block from it (each
 * node but the root is one uts_child) for the model's uts_node: the child-count draw
 * (two log() calls), the digest's copies and SHA-1's padding around the block. */
static double uts_visit_ns(void)
{
    const uts_params_t *t = uts_find_tree(1);
    uts_stack_t s = {0}, front = {0};
    uts_node_t root;
    uts_root(t, &root);
    if (uts_stack_push(&front, &root) != 0)
        abort();
    for (int depth = 0; depth < 3; depth++) { /* the frontier at depth 3 */
        uts_stack_t next = {0};
        for (size_t j = 0; j < front.n; j++) {
            int k = uts_num_children(t, &front.v[j]);
            for (int i = 0; i < k; i++) {
                uts_node_t child;
                uts_child(&front.v[j], i, &child);
                if (uts_stack_push(&next, &child) != 0)
                    abort();
            }
        }
        free(front.v);
        front = next;
    }
    double r[51];
    for (int k = 0; k < 51; k++) {
        uts_count_t c = {0};
        uint64_t t0 = now();
        for (size_t j = 0; j < front.n && c.nodes < 20000; j++) {
            if (uts_stack_push(&s, &front.v[j]) != 0 || uts_count_stack(t, &s, &c) != 0)
                abort();
        }
        r[k] = (double)(now() - t0) / (double)c.nodes;
    }
    free(s.v);
    free(front.v);
    return lowest(r, 51);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "pair") == 0) {
        int a = atoi(argv[2]), b = atoi(argv[3]);
        printf("xfer %d %d %.3f\n", a, b, pair_ns(a, b));
        return 0;
    }
    if (argc != 2 || strcmp(argv[1], "costs") != 0) {
        fprintf(stderr, "usage: sim-calibrate costs | pair A B\n");
        return 2;
    }
    static _Atomic long x;
    static _Atomic int nobody;
    long sink = 0;
    int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    printf("load_hit %.3f\n", TIME_LOOP(200000, sink += atomic_load_explicit(&x, memory_order_relaxed); __asm__ __volatile__("" ::: "memory")));
    printf("store_hit %.3f\n", TIME_LOOP(200000, atomic_store_explicit(&x, i_, memory_order_relaxed); __asm__ __volatile__("" ::: "memory")));
    printf("rmw %.3f\n", TIME_LOOP(50000, atomic_fetch_add_explicit(&x, 1, memory_order_relaxed)));
    printf("fence %.3f\n", TIME_LOOP(50000, atomic_thread_fence(memory_order_seq_cst)));
    printf("switch %.3f\n", switch_ns());
    resume_costs();
    printf("syscall %.3f\n", TIME_LOOP(1000, futex(&nobody, FUTEX_WAKE, 1)));
    double wake, lat;
    wake_costs(0, ncpu > 1 ? 1 : 0, &wake, &lat);
    printf("futex_wake %.3f\nwakeup_latency %.3f\n", wake, lat);
    double wake_short, lat_short, short_max;
    short_wake_costs(0, ncpu > 1 ? 1 : 0, wake, &wake_short, &lat_short, &short_max);
    printf("futex_wake_short %.3f\nwakeup_latency_short %.3f\nshort_sleep_max %.3f\n",
           wake_short, lat_short, short_max);
    pin(0);
    printf("sched_yield %.3f\n", TIME_LOOP(500, sched_yield()));
    printf("pause %.3f\n", TIME_LOOP(5000, cpu_relax()));
    struct timespec ts;
    printf("clock_read %.3f\n", TIME_LOOP(5000, clock_gettime(CLOCK_MONOTONIC, &ts)));
    printf("thread_create %.3f\n", thread_create_ns());
    printf("sleep_slack %.3f\n", sleep_slack_ns());
    double map, unmap;
    stack_map_ns(&map, &unmap);
    printf("stack_map %.3f\nstack_unmap %.3f\n", map, unmap);
    uint32_t h[5] = {1, 2, 3, 4, 5};
    uint8_t block[SHA1_BLOCK_SIZE] = {0};
    printf("sha1_block %.3f\n", TIME_LOOP(500, sha1_compress(h, block); block[0] = (uint8_t)h[0]));
    printf("uts_visit %.3f\n", uts_visit_ns());
    printf("kernel_iters_per_us %.3f\n", wl_iters_per_us());
    if (sink == 42)
        fprintf(stderr, " ");
    return 0;
}
