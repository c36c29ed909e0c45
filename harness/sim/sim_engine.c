/*
 * sim_engine.c -- the simulated machine behind harness/sim/sim.h: threads as contexts
 * on one OS thread, a discrete-event clock, cache lines, the futex, the cost model.
 *
 * Compiled WITHOUT sim.h (it implements it), so pthread_*, clock_gettime and the atomics
 * here are the real ones.  The simulation runs on one OS thread; another thread calling
 * a service (a host beside it: sim_serve, at the end) gets the real one.
 *
 * Time.  Every simulated thread has its own clock (picoseconds, integers: the same run
 * gives the same numbers bit for bit).  The running thread advances its clock by what it
 * is charged.  Every charged access to memory that others may share is a scheduling
 * point: if another runnable thread's clock is earlier (ties: lower thread id), the
 * running one is suspended and the earliest resumes.  So the accesses to shared memory
 * happen in simulated-time order, the program sees a sequentially consistent execution
 * in that order, and contention emerges from the costs: a write or read-modify-write
 * needs the line to itself, and the first read after a write needs its writer to supply
 * it; each such transfer occupies the line (free_at), so eight thieves' CASes on one
 * deque queue up behind each other, and a lock's line bounces between its users.  Reads
 * of a line already shared are served side by side (they wait only for a transfer in
 * flight).
 *
 * Cache lines.  A table maps each touched 64-byte line to its last writer's PU, the PUs
 * that hold a copy, and when the line is free again.  A load by a holder costs a hit
 * (once a transfer still on its way to it has arrived); a load by another PU costs a
 * transfer from the last writer, by topology distance; a store or read-modify-write by
 * the only holder costs a hit, else the transfer from the farthest holder (the
 * invalidations), after which the writer is the only holder.  The stride prefetcher
 * (below) takes off each of those transfers what a prefetch started earlier has covered.
 * Not modelled: the store buffer (a store waits for its line), DRAM misses (a
 * line nobody wrote yet is a hit), plain (non-atomic) loads and stores, instruction
 * execution outside the charged services, and time-sharing of a PU by two threads
 * (each simulated thread has a core of its own; foreign threads sit on PUs beyond the
 * workers', wrapping around).
 *
 * Blocking.  A futex wait blocks the thread until a wake-up (at the waker's time plus
 * the model's wake-up latency) or its timeout.  A thread that slept for at most
 * short_sleep_max is woken at the short-sleep costs (futex_wake_short, and
 * wakeup_latency_short after it), one asleep for longer at futex_wake and wakeup_latency:
 * on the machine measured here a wake-up costs 5-10x more once the sleeper's CPU has
 * stopped polling and halted.  The heap holds runnable threads keyed by
 * their clock and timed waiters keyed by their deadline.  When the running thread
 * blocks or ends and no thread is runnable or has a deadline, the run is stuck for good:
 * a stall, reported with every blocked thread named (exit 3), never a hang.
 *
 * Thread-local storage.  All simulated threads share one OS thread, so on each switch
 * the engine swaps the contents of the executable's TLS block (every __thread variable
 * of the core, the workloads and the driver) and errno.
 */
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fcontext.h"
#include "sim_engine.h"

/* ---- the cost model (ps) ----------------------------------------------------------- */
sim_model_t sim_model;

/* ---- threads ----------------------------------------------------------------------- */
enum { T_RUNNABLE, T_RUNNING, T_BLOCKED, T_DONE };
#define NO_DEADLINE UINT64_MAX
#define SIM_STACK_SIZE (1u << 20)

typedef struct sim_thread {
    int id, pu, state;
    char name[64];
    uint64_t clock, busy; /* ps */
    uint64_t key;         /* heap key: the clock when runnable, the deadline when timed */
    int heap_pos;         /* -1: not in the heap */
    bthread_fcontext_t ctx;
    void *stack;
    void *(*fn)(void *);
    void *arg;
    /* blocking */
    const char *wait_what;
    const void *wait_addr;
    uint64_t wait_since;
    struct sim_thread *fnext; /* futex queue */
    struct sim_thread *wnext; /* a futex_wake's list of woken threads */
    bool woke_briefly;        /* that futex_wake found it asleep for at most short_sleep_max */
    bool in_futex;
    int wake_reason; /* 0 woken, ETIMEDOUT */
    int done_word;   /* 1 once ended: joiners futex-wait on it */
    int saved_errno;
    unsigned char *tls;
} sim_thread_t;

static sim_thread_t **threads;
static int nthreads, cap_threads;
static sim_thread_t *cur;
static bool running;          /* a simulation is under way, on sim_os_thread */
static pthread_t sim_os_thread;
/* Whether the caller is the simulated program.  A host beside the simulation (sim_serve:
 * Google Benchmark on the process's main thread) calls the same code, e.g. a workload's
 * sequential answer: there every service is the real one. */
static inline bool simulating(void)
{
    return running && pthread_equal(pthread_self(), sim_os_thread);
}
static bthread_fcontext_t host_ctx;
static int host_errno;
static unsigned char *host_tls;
static int nworker_pus; /* the first PUs are the workers'; foreign threads come after */
static int nforeign;
static const char *fn_worker_name = "worker_main";
static int nworkers_seen;

/* ---- TLS block of the executable ---------------------------------------------------- */
static unsigned char *tls_block; /* this OS thread's instance */
static const unsigned char *tls_image;
static size_t tls_filesz, tls_memsz;

static int tls_find(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_TLS) {
            tls_block = info->dlpi_tls_data;
            tls_image = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
            tls_filesz = ph->p_filesz;
            tls_memsz = ph->p_memsz;
        }
    }
    return 1; /* the first object is the executable */
}

static unsigned char *tls_new(void)
{
    if (!tls_memsz)
        return NULL;
    unsigned char *b = malloc(tls_memsz);
    if (!b) {
        fprintf(stderr, "simulate: out of memory\n");
        exit(2);
    }
    memcpy(b, tls_image, tls_filesz);
    memset(b + tls_filesz, 0, tls_memsz - tls_filesz);
    return b;
}

/* ---- the heap of runnable (and timed) threads: (key, id) order ------------------------ */
static sim_thread_t **heap;
static int heap_n;

static inline bool before(const sim_thread_t *a, const sim_thread_t *b)
{
    return a->key < b->key || (a->key == b->key && a->id < b->id);
}

static void heap_set(int i, sim_thread_t *t)
{
    heap[i] = t;
    t->heap_pos = i;
}

static void heap_up(int i)
{
    sim_thread_t *t = heap[i];
    while (i > 0 && before(t, heap[(i - 1) / 2])) {
        heap_set(i, heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(i, t);
}

static void heap_down(int i)
{
    sim_thread_t *t = heap[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= heap_n)
            break;
        if (c + 1 < heap_n && before(heap[c + 1], heap[c]))
            c++;
        if (!before(heap[c], t))
            break;
        heap_set(i, heap[c]);
        i = c;
    }
    heap_set(i, t);
}

static void heap_push(sim_thread_t *t, uint64_t key)
{
    t->key = key;
    heap_set(heap_n++, t);
    heap_up(heap_n - 1);
}

static sim_thread_t *heap_pop(void)
{
    sim_thread_t *t = heap[0];
    t->heap_pos = -1;
    if (--heap_n > 0) {
        heap_set(0, heap[heap_n]);
        heap_down(0);
    }
    return t;
}

static void heap_rekey(sim_thread_t *t, uint64_t key)
{
    t->key = key;
    heap_up(t->heap_pos);
    heap_down(t->heap_pos);
}

/* ---- topology ------------------------------------------------------------------------ */
static int pu_of_thread(bool worker)
{
    if (worker)
        return nworkers_seen++ % sim_model.npus;
    return (nworker_pus + nforeign++) % sim_model.npus;
}

/* 0 same PU, 1 same core/L2, 2 same L3, 3 same NUMA node, 4 same package, 5 other */
static inline int distance(int a, int b)
{
    const sim_pu_t *p = &sim_model.pu[a], *q = &sim_model.pu[b];
    if (a == b)
        return 0;
    if (p->core == q->core)
        return 1;
    if (p->l3 == q->l3)
        return 2;
    if (p->numa == q->numa)
        return 3;
    if (p->pack == q->pack)
        return 4;
    return 5;
}

/* ---- statistics of the engine -------------------------------------------------------- */
sim_stats_t sim_stats;

/* ---- switching between simulated threads ---------------------------------------------- */
static void switch_to(sim_thread_t *next)
{
    sim_thread_t *me = cur;
    if (next == me) {
        me->state = T_RUNNING;
        return;
    }
    sim_stats.thread_switches++;
    me->saved_errno = errno;
    if (tls_memsz) {
        memcpy(me->tls, tls_block, tls_memsz);
        memcpy(tls_block, next->tls, tls_memsz);
    }
    cur = next;
    next->state = T_RUNNING;
    errno = next->saved_errno;
    bthread_jump_fcontext(&me->ctx, next->ctx, 0, false);
}

static void stall(void) __attribute__((noreturn));
static void futex_unlink(sim_thread_t *t);

/* The next thread to run, its clock brought up to its key (a wake-up or a timeout). */
static sim_thread_t *pop_next(void)
{
    if (heap_n == 0)
        stall();
    sim_thread_t *t = heap_pop();
    if (t->state == T_BLOCKED) { /* its deadline came first */
        t->wake_reason = ETIMEDOUT;
        if (t->in_futex)
            futex_unlink(t);
    }
    if (t->clock < t->key)
        t->clock = t->key;
    return t;
}

/* A scheduling point: let every thread whose clock is earlier run first. */
static inline void sched_point(void)
{
    sim_thread_t *me = cur;
    if (heap_n && (heap[0]->key < me->clock || (heap[0]->key == me->clock && heap[0]->id < me->id))) {
        me->state = T_RUNNABLE;
        heap_push(me, me->clock);
        switch_to(pop_next());
    }
}

static inline void charge(uint64_t ps)
{
    cur->clock += ps;
    cur->busy += ps;
}

/* Block the running thread until woken or until `deadline`.  Returns 0 or ETIMEDOUT. */
static int block(const char *what, const void *addr, uint64_t deadline)
{
    sim_thread_t *me = cur;
    me->state = T_BLOCKED;
    me->wait_what = what;
    me->wait_addr = addr;
    me->wait_since = me->clock;
    me->wake_reason = 0;
    if (deadline != NO_DEADLINE)
        heap_push(me, deadline);
    switch_to(pop_next());
    return me->wake_reason;
}

/* Make blocked thread t runnable at time `at`. */
static void wake(sim_thread_t *t, uint64_t at)
{
    t->state = T_RUNNABLE;
    t->wake_reason = 0;
    if (t->heap_pos >= 0) {
        if (at < t->key)
            heap_rekey(t, at);
    } else {
        heap_push(t, at);
    }
}

/* ---- the cache-line table ------------------------------------------------------------- */
#define SHARER_WORDS (SIM_MAX_PUS / 64)
typedef struct line {
    uint64_t tag; /* line address + 1; 0 = empty slot */
    uint64_t free_at;  /* the transfer in flight (to to_pu) ends */
    uint64_t wrote_at; /* the last write started */
    int owner;         /* last writer's PU, -1 none */
    int to_pu;         /* the last transfer's destination, -1 none */
    uint64_t sharers[SHARER_WORDS];
} line_t;

static line_t *lines;
static size_t lines_cap, lines_n;

static void lines_grow(void)
{
    size_t ncap = lines_cap ? lines_cap * 2 : (1u << 16);
    line_t *n = calloc(ncap, sizeof *n);
    if (!n) {
        fprintf(stderr, "simulate: out of memory (cache-line table)\n");
        exit(2);
    }
    for (size_t i = 0; i < lines_cap; i++) {
        if (!lines[i].tag)
            continue;
        size_t h = (size_t)(lines[i].tag * 0x9E3779B97F4A7C15ull >> 20) & (ncap - 1);
        while (n[h].tag)
            h = (h + 1) & (ncap - 1);
        n[h] = lines[i];
    }
    free(lines);
    lines = n;
    lines_cap = ncap;
}

static line_t *line_of(uintptr_t addr)
{
    uint64_t tag = (addr >> 6) + 1;
    if (2 * (lines_n + 1) > lines_cap)
        lines_grow();
    size_t h = (size_t)(tag * 0x9E3779B97F4A7C15ull >> 20) & (lines_cap - 1);
    while (lines[h].tag && lines[h].tag != tag)
        h = (h + 1) & (lines_cap - 1);
    line_t *l = &lines[h];
    if (!l->tag) {
        l->tag = tag;
        l->owner = -1;
        l->to_pu = -1;
        lines_n++;
    }
    return l;
}

static inline bool holds(const line_t *l, int pu) { return l->sharers[pu >> 6] >> (pu & 63) & 1; }

/* Does any PU but `pu` hold a copy of l? */
static inline bool shared_beyond(const line_t *l, int pu)
{
    for (int w = 0; w < SHARER_WORDS; w++) {
        uint64_t bits = l->sharers[w];
        if (pu >= 0 && w == pu >> 6)
            bits &= ~(1ull << (pu & 63));
        if (bits)
            return true;
    }
    return false;
}

/* ---- the stride prefetcher --------------------------------------------------------
 * A core's prefetcher notices an instruction that walks memory at a constant stride
 * (a queue's consumer following task slots laid out side by side, a free list handed
 * back in order) and fetches lines ahead of it.  Per PU, a table of access sites (the
 * return address of sim_access: one per atomic in the source), SP_SETS x SP_WAYS, set
 * by the site's low address bits like a hardware table's (and so the same wherever the
 * binary is loaded: it is loaded page-aligned), least recently used replaced, each entry
 * with its site's last line, stride, and the times of its last SP_DEPTH accesses.
 *
 * Once a site has made the same stride twice in a row, each further step along it is
 * predicted: its line was prefetched at the site's access SP_DEPTH steps back (or at
 * the step where the stride was first confirmed, if that is nearer), and the access is
 * charged what is left of the transfer since then, provided the line was last written
 * before then (otherwise the copy fetched early was stale, and the miss costs in
 * full). */
#define SP_SETS 64
#define SP_WAYS 4
#define SP_DEPTH 4       /* lines a stream runs ahead of its instruction */
#define SP_MAX_STRIDE 32 /* lines (2 KiB): a stride beyond it is no walk */

typedef struct sp_entry {
    uintptr_t site; /* 0: empty */
    uint64_t line, used;
    int64_t stride;
    unsigned run;              /* steps in a row at this stride */
    uint64_t at[SP_DEPTH];     /* times of the last accesses, at[0] the latest */
} sp_entry_t;

static sp_entry_t *sp_table; /* [npus][SP_SETS][SP_WAYS], allocated by sim_run */
static uint64_t sp_clock;    /* LRU stamps */

/* Train pu's entry for `site` on an access to `line` at time `now`; returns when the
 * line's prefetch would have started, or UINT64_MAX when the access is not predicted. */
static uint64_t sp_train(int pu, uintptr_t site, uint64_t line, uint64_t now)
{
    sp_entry_t *set = &sp_table[((size_t)pu * SP_SETS + (site >> 2) % SP_SETS) * SP_WAYS];
    sp_entry_t *e = NULL, *victim = &set[0];
    for (int i = 0; i < SP_WAYS; i++) {
        if (set[i].site == site) {
            e = &set[i];
            break;
        }
        if (set[i].used < victim->used)
            victim = &set[i];
    }
    uint64_t issued = UINT64_MAX;
    if (!e) {
        e = victim;
        *e = (sp_entry_t){.site = site, .line = line};
    } else if (line != e->line) {
        int64_t stride = (int64_t)(line - e->line);
        if (stride < -SP_MAX_STRIDE || stride > SP_MAX_STRIDE) {
            e->run = 0;
        } else if (stride == e->stride) {
            /* run 2: the stride is confirmed at this step, so the prefetcher fetches
             * from here on; run 3 is the first step predicted (by the prefetch issued
             * at the step before), run 2 + SP_DEPTH and later ones SP_DEPTH steps ahead */
            e->run++;
            if (e->run >= 3) {
                unsigned back = e->run - 2 < SP_DEPTH ? e->run - 2 : SP_DEPTH;
                issued = e->at[back - 1];
            }
        } else {
            e->run = 1;
        }
        e->stride = stride;
        e->line = line;
    } else {
        e->used = ++sp_clock; /* the same line again: used, but no step */
        return issued;
    }
    memmove(&e->at[1], &e->at[0], (SP_DEPTH - 1) * sizeof e->at[0]);
    e->at[0] = now;
    e->used = ++sp_clock;
    return issued;
}

/* The transfer part of an access at `start` to a line that moves `xfer` and was free
 * from `ready` on, when a prefetch of it was issued at `issued` (UINT64_MAX: none):
 * the prefetch's transfer began once both had come, and only what is left of it is
 * charged, no less than `floor`.  In full when there was no prefetch or the line was
 * written after it (the copy fetched early was stale). */
static inline uint64_t sp_left(const line_t *l, uint64_t xfer, uint64_t issued, uint64_t ready,
                               uint64_t start, uint64_t floor)
{
    if (issued == UINT64_MAX || l->wrote_at > issued)
        return xfer > floor ? xfer : floor;
    uint64_t from = issued > ready ? issued : ready;
    uint64_t left = from + xfer > start ? from + xfer - start : 0;
    if (left < floor)
        left = floor;
    sim_stats.prefetched++;
    sim_stats.prefetch_saved_ps += xfer > left ? xfer - left : 0;
    return left;
}

/* A copy of l still on its way to `pu` (a prefetch's) arrives before an access there at
 * *start can use it. */
static inline void wait_arrival(const line_t *l, int pu, uint64_t *start)
{
    if (l->to_pu == pu && l->free_at > *start)
        *start = l->free_at;
}

/* A transfer of l waits for the one occupying it; returns when l became free. */
static inline uint64_t wait_free(const line_t *l, uint64_t *start)
{
    uint64_t ready = l->free_at;
    if (ready > *start)
        *start = ready;
    return ready;
}

/* Move l to `pu` for a read (write false: a copy joins the holders) or for a write (pu
 * then holds it alone), the access starting at *start; `issued`: when a prefetch of it
 * started (UINT64_MAX: none).  Returns the access's cost; *start moves past any transfer
 * that occupies the line, and a transfer occupies it in turn (until *start + cost) with
 * `pu` as its destination.  `base`: the cost of a write to a line held alone. */
static uint64_t line_move(line_t *l, int pu, bool write, uint64_t base, uint64_t issued,
                          uint64_t *start)
{
    uint64_t cost;
    if (!write) {
        if (holds(l, pu) || l->owner < 0) {
            cost = sim_model.c[SIM_C_LOAD_HIT];
            wait_arrival(l, pu, start);
        } else {
            /* The first read after a write takes the line from its writer, which supplies
             * it once: that transfer occupies the line.  Later reads of the line, shared
             * by then, are served side by side: they wait for a transfer in flight but
             * do not queue behind each other (64 thieves polling one deque's `top` do not
             * each hold it for a whole transfer). */
            bool modified = !shared_beyond(l, l->owner);
            uint64_t ready = wait_free(l, start);
            cost = sp_left(l, sim_model.xfer[distance(l->owner, pu)], issued, ready, *start,
                           sim_model.c[SIM_C_LOAD_HIT]);
            if (modified) {
                l->free_at = *start + cost;
                l->to_pu = pu;
            }
            sim_stats.transfers++;
        }
        l->sharers[pu >> 6] |= 1ull << (pu & 63);
        return cost;
    }
    int far = 0;
    if (l->owner >= 0 && l->owner != pu)
        far = distance(l->owner, pu);
    for (int w = 0; w < SHARER_WORDS; w++) {
        uint64_t bits = l->sharers[w];
        if (w == pu >> 6)
            bits &= ~(1ull << (pu & 63));
        while (bits) {
            int other = w * 64 + __builtin_ctzll(bits);
            bits &= bits - 1;
            int d = distance(other, pu);
            if (d > far)
                far = d;
        }
    }
    cost = base;
    if (far > 0) {
        uint64_t ready = wait_free(l, start);
        cost += sp_left(l, sim_model.xfer[far], issued, ready, *start, 0);
        l->free_at = *start + cost;
        l->to_pu = pu;
        sim_stats.transfers++;
    } else {
        wait_arrival(l, pu, start); /* ours, but maybe still on its way here */
    }
    l->owner = pu;
    l->wrote_at = *start;
    memset(l->sharers, 0, sizeof l->sharers);
    l->sharers[pu >> 6] = 1ull << (pu & 63);
    return cost;
}

void sim_access(uintptr_t addr, enum sim_access_kind kind, int mo)
{
    if (!simulating())
        return;
    uintptr_t site = (uintptr_t)__builtin_return_address(0);
    sched_point();
    sim_thread_t *me = cur;
    sim_stats.accesses++;
    /* the plain instructions around each atomic (the model lacks them otherwise): an
     * instruction-count proxy, calibrated per machine (code_access) */
    charge(sim_model.c[SIM_C_CODE_ACCESS]);
    if (kind == SIM_FENCE) {
        if (mo == memory_order_seq_cst)
            charge(sim_model.c[SIM_C_FENCE]);
        return;
    }
    /* a seq_cst store is a locked instruction (xchg), like a read-modify-write */
    uint64_t base = (kind == SIM_RMW || mo == memory_order_seq_cst) ? sim_model.c[SIM_C_RMW]
                                                                     : sim_model.c[SIM_C_STORE_HIT];
    line_t *l = line_of(addr);
    uint64_t issued = sp_train(me->pu, site, addr >> 6, me->clock);
    uint64_t start = me->clock;
    uint64_t cost = line_move(l, me->pu, kind != SIM_LOAD, base, issued, &start);
    me->busy += (start - me->clock) + cost;
    me->clock = start + cost;
}

/* __builtin_prefetch: the line starts on its way to this PU (for a write: to be held
 * alone), and the thread goes on; its next access to the line waits only for what is
 * left of the transfer.  Issuing it costs a load hit. */
void sim_prefetch(const void *addr, int write)
{
    if (!simulating())
        return;
    sched_point();
    uint64_t start = cur->clock;
    line_t *l = line_of((uintptr_t)addr);
    if (!write || l->owner != cur->pu || shared_beyond(l, cur->pu)) {
        uint64_t wrote = l->wrote_at;
        line_move(l, cur->pu, write, sim_model.c[SIM_C_STORE_HIT], UINT64_MAX, &start);
        l->wrote_at = wrote; /* fetched for a write, not written */
    }
    charge(sim_model.c[SIM_C_LOAD_HIT]);
}

/* ---- charged services ------------------------------------------------------------------ */
void sim_charge_work(enum sim_work_kind kind, uint64_t units)
{
    if (!simulating())
        return;
    uint64_t per = kind == SIM_WORK_KERNEL_ITER  ? sim_model.kernel_iter_ps
                   : kind == SIM_WORK_SHA1_BLOCK ? sim_model.c[SIM_C_SHA1_BLOCK]
                                                 : sim_model.c[SIM_C_UTS_NODE];
    charge(per * units);
    sim_stats.work_ps += per * units;
}

void sim_cpu_relax(void)
{
    if (!simulating()) {
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
        return;
    }
    sched_point();
    charge(sim_model.c[SIM_C_PAUSE]);
}

/* ---- resuming a context gone cold ------------------------------------------------------
 * A context suspended long ago on its PU has left that PU's caches and TLB, and resuming
 * it misses on its stack's top lines and page: what a FIFO pool pays when it cycles
 * through thousands of blocked tasks (fib under `threadpool`), and a LIFO deque does not.
 * The cost is the model's resume_* curve (calibrate: a ring of d contexts on stacks as
 * far apart as the scheduler's, per switch, less a ring of two), taken at d = the number
 * of switches the context's PU made since it was suspended.  That counts switches, not
 * distinct contexts: an overestimate when a few contexts alternate in between.
 *
 * A context is known by its saved stack pointer: the value jump_fcontext stores through
 * its `ofc` argument.  It is there once the jump is done, so the engine keeps the slot
 * (`left`) and reads it back (`settle`) as soon as the PU runs on: in the context the
 * jump resumed, at the PU's next jump (a context that started fresh), when the
 * context's resume comes first (another PU took it), or when the thread ends.  The slot
 * is the scheduler's (a task's or a worker's), alive while its worker runs. */
typedef struct seen {
    uintptr_t sp; /* 0: empty slot */
    uint64_t at;  /* the PU's jump count when the context was suspended */
    int pu;
} seen_t;
static seen_t *seen;
static size_t seen_cap, seen_n;
static bthread_fcontext_t *left[SIM_MAX_PUS]; /* the slot of the PU's last jump, unread */
static uint64_t left_at[SIM_MAX_PUS];         /* the PU's jump count after that jump */
static int nleft;                             /* PUs with a slot unread */
static uint64_t pu_jumps[SIM_MAX_PUS];

static seen_t *seen_slot(seen_t *tab, size_t cap, uintptr_t sp)
{
    size_t h = (size_t)((sp >> 4) * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
    while (tab[h].sp && tab[h].sp != sp)
        h = (h + 1) & (cap - 1);
    return &tab[h];
}

static void seen_put(uintptr_t sp, int pu, uint64_t at)
{
    if (2 * (seen_n + 1) > seen_cap) {
        size_t ncap = seen_cap ? seen_cap * 2 : (1u << 12);
        seen_t *n = calloc(ncap, sizeof *n);
        if (!n) {
            fprintf(stderr, "simulate: out of memory (context table)\n");
            exit(2);
        }
        for (size_t i = 0; i < seen_cap; i++)
            if (seen[i].sp)
                *seen_slot(n, ncap, seen[i].sp) = seen[i];
        free(seen);
        seen = n;
        seen_cap = ncap;
    }
    seen_t *e = seen_slot(seen, seen_cap, sp);
    seen_n += !e->sp;
    *e = (seen_t){.sp = sp, .at = at, .pu = pu};
}

static void settle(int pu)
{
    if (!left[pu])
        return;
    if (*left[pu])
        seen_put((uintptr_t)*left[pu], pu, left_at[pu]);
    left[pu] = NULL;
    nleft--;
}

/* The curve between its points (0 at d = 2, then SIM_RESUME_D), linear in log2(d). */
static uint64_t resume_cost(uint64_t d)
{
    static const long ring[SIM_RESUME_POINTS] = SIM_RESUME_D;
    if (d <= 2)
        return 0;
    double x = log2((double)d), lo = 0, lo_at = 1;
    for (int i = 0; i < SIM_RESUME_POINTS; i++) {
        double hi = (double)sim_model.c[SIM_C_RESUME_16 + i], hi_at = log2((double)ring[i]);
        if (x <= hi_at)
            return (uint64_t)(lo + (hi - lo) * (x - lo_at) / (hi_at - lo_at));
        lo = hi;
        lo_at = hi_at;
    }
    return (uint64_t)lo;
}

/* What resuming the context saved at sp costs. */
static uint64_t cold_cost(uintptr_t sp)
{
    for (int p = 0; nleft > 0 && p < sim_model.npus; p++) /* suspended, not yet read back */
        if (left[p] && (uintptr_t)*left[p] == sp)
            settle(p);
    if (!seen_cap)
        return 0;
    const seen_t *e = seen_slot(seen, seen_cap, sp);
    return e->sp ? resume_cost(pu_jumps[e->pu] - e->at) : 0;
}

intptr_t sim_jump_fcontext(bthread_fcontext_t *ofc, bthread_fcontext_t nfc, intptr_t vp,
                           bool preserve_fpu)
{
    if (!simulating())
        return bthread_jump_fcontext(ofc, nfc, vp, preserve_fpu);
    int pu = cur->pu;
    settle(pu);
    uint64_t cold = cold_cost((uintptr_t)nfc);
    left[pu] = ofc;
    left_at[pu] = ++pu_jumps[pu];
    nleft++;
    charge(sim_model.c[SIM_C_SWITCH] + sim_model.c[SIM_C_CODE_SWITCH] + cold);
    sim_stats.resume_ps += cold;
    sim_stats.task_switches++;
    intptr_t r = bthread_jump_fcontext(ofc, nfc, vp, preserve_fpu);
    if (simulating()) /* resumed, on whichever PU took us: its jump saved what it left */
        settle(cur->pu);
    return r;
}

/* ---- the futex ----------------------------------------------------------------------- */
#define FUTEX_BUCKETS 1024
static struct {
    sim_thread_t *head, *tail;
} fq[FUTEX_BUCKETS];

static inline unsigned fq_hash(const void *a) { return (unsigned)(((uintptr_t)a >> 2) * 2654435761u >> 22) & (FUTEX_BUCKETS - 1); }

static void futex_unlink(sim_thread_t *t)
{
    unsigned h = fq_hash(t->wait_addr);
    sim_thread_t **pp = &fq[h].head, *prev = NULL;
    while (*pp && *pp != t) {
        prev = *pp;
        pp = &(*pp)->fnext;
    }
    if (*pp) {
        *pp = t->fnext;
        if (fq[h].tail == t)
            fq[h].tail = prev;
    }
    t->fnext = NULL;
    t->in_futex = false;
}

static int futex_wait(int *addr, int val, uint64_t deadline, const char *what)
{
    sched_point();
    charge(sim_model.c[SIM_C_SYSCALL]);
    sim_stats.futex_waits++;
    if (*addr != val) {
        errno = EAGAIN;
        return -1;
    }
    sim_thread_t *me = cur;
    unsigned h = fq_hash(addr);
    me->fnext = NULL;
    me->in_futex = true;
    me->wait_addr = addr;
    if (fq[h].tail)
        fq[h].tail->fnext = me;
    else
        fq[h].head = me;
    fq[h].tail = me;
    if (block(what, addr, deadline) == ETIMEDOUT) {
        errno = ETIMEDOUT;
        return -1;
    }
    return 0;
}

/* Has blocked thread t slept for at most short_sleep_max, by the running thread's clock?
 * A waker whose clock is behind t's (it ran later, but at an earlier simulated time) found
 * t asleep for no time at all. */
static bool slept_briefly(const sim_thread_t *t)
{
    uint64_t now = cur->clock, max = sim_model.c[SIM_C_SHORT_SLEEP_MAX];
    return max > 0 && (now <= t->wait_since || now - t->wait_since <= max);
}

static int futex_wake(int *addr, int n)
{
    sched_point();
    sim_thread_t *me = cur;
    unsigned h = fq_hash(addr);
    int woken = 0;
    sim_thread_t *prev = NULL, *list = NULL, **tail = &list;
    for (sim_thread_t *t = fq[h].head, *nx; t && woken < n; t = nx) {
        nx = t->fnext;
        if (t->wait_addr != addr) {
            prev = t;
            continue;
        }
        if (prev)
            prev->fnext = nx;
        else
            fq[h].head = nx;
        if (fq[h].tail == t)
            fq[h].tail = prev;
        t->fnext = NULL;
        t->in_futex = false;
        *tail = t;
        tail = &t->wnext;
        t->wnext = NULL;
        woken++;
    }
    /* The system call costs the short-sleep price only if every thread it wakes slept
     * briefly; each woken thread's latency goes by its own sleep.  Both judged when the
     * call begins (once the call is charged, the clock has moved on). */
    bool all_short = true;
    for (sim_thread_t *t = list; t; t = t->wnext) {
        t->woke_briefly = slept_briefly(t);
        all_short = all_short && t->woke_briefly;
    }
    charge(!woken       ? sim_model.c[SIM_C_SYSCALL]
           : all_short ? sim_model.c[SIM_C_FUTEX_WAKE_SHORT]
                       : sim_model.c[SIM_C_FUTEX_WAKE]);
    /* in queue (FIFO) order, each from the end of the system call plus the latency */
    for (sim_thread_t *t = list, *nx; t; t = nx) {
        nx = t->wnext;
        sim_stats.short_wakes += t->woke_briefly;
        wake(t, me->clock + sim_model.c[t->woke_briefly ? SIM_C_WAKEUP_SHORT : SIM_C_WAKEUP]);
    }
    sim_stats.futex_wakes += (uint64_t)woken;
    return woken;
}

/* ---- public: syscall, clocks, sleeps ------------------------------------------------- */
#define CLOCK_BASE_PS (1000ull * 1000000000000ull) /* simulated time 0 reads as 1000 s */

static inline uint64_t now_ns(void) { return (CLOCK_BASE_PS + cur->clock) / 1000; }
static inline uint64_t ts_ps(const struct timespec *ts) { return ((uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec) * 1000ull; }

long sim_syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (!simulating())
        return syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (nr != SYS_futex) {
        fprintf(stderr, "simulate: system call %ld is not simulated\n", nr);
        abort();
    }
    int *addr = (int *)a[0];
    int op = (int)a[1] & ~FUTEX_PRIVATE_FLAG;
    int val = (int)a[2];
    if (op == FUTEX_WAIT) {
        const struct timespec *rel = (const struct timespec *)a[3];
        uint64_t deadline = rel ? cur->clock + ts_ps(rel) + sim_model.c[SIM_C_SLEEP_SLACK] : NO_DEADLINE;
        return futex_wait(addr, val, deadline, "futex wait");
    }
    if (op == FUTEX_WAKE)
        return futex_wake(addr, val);
    fprintf(stderr, "simulate: futex operation %d is not simulated\n", op);
    abort();
}

static uint64_t total_busy(void)
{
    uint64_t s = 0;
    for (int i = 0; i < nthreads; i++)
        s += threads[i]->busy;
    return s;
}

#define CPUCLOCK_BASE (-1000)

int sim_clock_gettime(clockid_t id, struct timespec *ts)
{
    if (!simulating())
        return clock_gettime(id, ts);
    sched_point();
    charge(sim_model.c[SIM_C_CLOCK]);
    uint64_t ns;
    if (id == CLOCK_PROCESS_CPUTIME_ID)
        ns = total_busy() / 1000;
    else if (id == CLOCK_THREAD_CPUTIME_ID)
        ns = cur->busy / 1000;
    else if (id <= CPUCLOCK_BASE && CPUCLOCK_BASE - id < nthreads)
        ns = threads[CPUCLOCK_BASE - id]->busy / 1000;
    else
        ns = now_ns();
    ts->tv_sec = (time_t)(ns / 1000000000ull);
    ts->tv_nsec = (long)(ns % 1000000000ull);
    return 0;
}

static int sleep_until(uint64_t deadline_ps)
{
    sched_point();
    charge(sim_model.c[SIM_C_SYSCALL]);
    if (deadline_ps > cur->clock)
        block("sleep", NULL, deadline_ps + sim_model.c[SIM_C_SLEEP_SLACK]);
    return 0;
}

int sim_clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem)
{
    if (!simulating())
        return clock_nanosleep(id, flags, req, rem);
    if (flags & TIMER_ABSTIME) {
        uint64_t t = ts_ps(req);
        return sleep_until(t > CLOCK_BASE_PS ? t - CLOCK_BASE_PS : 0);
    }
    return sleep_until(cur->clock + ts_ps(req));
}

int sim_nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (!simulating())
        return nanosleep(req, rem);
    return sleep_until(cur->clock + ts_ps(req));
}

int sim_usleep(useconds_t us)
{
    if (!simulating())
        return usleep(us);
    return sleep_until(cur->clock + (uint64_t)us * 1000000ull);
}

/* Memory mappings: only the stack allocator maps memory in the simulated sources, on a
 * pool miss (its guard's mprotect and the first touch of the new stack's top page are
 * in the same charge). */
void *sim_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (simulating()) {
        sched_point();
        charge(sim_model.c[SIM_C_STACK_MAP]);
        sim_stats.maps++;
    }
    return mmap(addr, len, prot, flags, fd, off);
}

int sim_munmap(void *addr, size_t len)
{
    if (simulating()) {
        sched_point();
        charge(sim_model.c[SIM_C_STACK_UNMAP]);
        sim_stats.unmaps++;
    }
    return munmap(addr, len);
}

int sim_sched_yield(void)
{
    if (!simulating())
        return sched_yield();
    sched_point();
    charge(sim_model.c[SIM_C_YIELD]);
    return 0;
}

int sim_getcpu(void) { return simulating() ? cur->pu : sched_getcpu(); }

/* ---- mutex and condition variable over the simulated futex ---------------------------- */
static inline int *word(void *p) { return (int *)p; }

int sim_mutex_trylock(pthread_mutex_t *m)
{
    if (!simulating())
        return pthread_mutex_trylock(m);
    int *w = word(m);
    sim_access((uintptr_t)w, SIM_RMW, memory_order_acquire);
    if (*w)
        return EBUSY;
    *w = 1;
    return 0;
}

int sim_mutex_lock(pthread_mutex_t *m)
{
    if (!simulating())
        return pthread_mutex_lock(m);
    int *w = word(m);
    sim_access((uintptr_t)w, SIM_RMW, memory_order_acquire); /* cmpxchg 0 -> 1 */
    if (*w == 0) {
        *w = 1;
        return 0;
    }
    for (;;) { /* Drepper's mutex: 2 = locked, maybe waiters */
        sim_access((uintptr_t)w, SIM_RMW, memory_order_acquire);
        int old = *w;
        *w = 2;
        if (old == 0)
            return 0;
        futex_wait(w, 2, NO_DEADLINE, "mutex");
    }
}

int sim_mutex_unlock(pthread_mutex_t *m)
{
    if (!simulating())
        return pthread_mutex_unlock(m);
    int *w = word(m);
    sim_access((uintptr_t)w, SIM_RMW, memory_order_release);
    int old = *w;
    *w = 0;
    if (old == 2)
        futex_wake(w, 1);
    return 0;
}

/* cond: word 0 = sequence, word 1 = waiters */
static int cond_wait(pthread_cond_t *c, pthread_mutex_t *m, uint64_t deadline)
{
    int *w = word(c);
    sim_access((uintptr_t)w, SIM_RMW, memory_order_relaxed);
    w[1]++;
    int seq = w[0];
    sim_mutex_unlock(m);
    int rc = futex_wait(&w[0], seq, deadline, "condition variable");
    int timed_out = rc != 0 && errno == ETIMEDOUT;
    sim_access((uintptr_t)w, SIM_RMW, memory_order_relaxed);
    w[1]--;
    sim_mutex_lock(m);
    return timed_out ? ETIMEDOUT : 0;
}

int sim_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    if (!simulating())
        return pthread_cond_wait(c, m);
    return cond_wait(c, m, NO_DEADLINE);
}

int sim_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime)
{
    if (!simulating())
        return pthread_cond_timedwait(c, m, abstime);
    uint64_t t = ts_ps(abstime);
    uint64_t d = t > CLOCK_BASE_PS ? t - CLOCK_BASE_PS : 0;
    if (d <= cur->clock)
        return ETIMEDOUT;
    return cond_wait(c, m, d + sim_model.c[SIM_C_SLEEP_SLACK]);
}

static int cond_wake(pthread_cond_t *c, int n)
{
    int *w = word(c);
    sim_access((uintptr_t)w, SIM_LOAD, memory_order_relaxed);
    if (w[1] == 0)
        return 0;
    sim_access((uintptr_t)w, SIM_RMW, memory_order_release);
    w[0]++;
    futex_wake(&w[0], n);
    return 0;
}

int sim_cond_signal(pthread_cond_t *c) { return simulating() ? cond_wake(c, 1) : pthread_cond_signal(c); }
int sim_cond_broadcast(pthread_cond_t *c) { return simulating() ? cond_wake(c, INT_MAX) : pthread_cond_broadcast(c); }

int sim_once(pthread_once_t *once, void (*fn)(void))
{
    if (!simulating())
        return pthread_once(once, fn);
    int *w = word(once);
    sim_access((uintptr_t)w, SIM_LOAD, memory_order_acquire);
    if (*w == 0) {
        *w = 1; /* no switch can come between the check and the mark */
        fn();
    }
    return 0;
}

/* ---- threads ---------------------------------------------------------------------------- */
static sim_thread_t *thread_new(const char *name, bool worker)
{
    if (nthreads == cap_threads) {
        cap_threads = cap_threads ? 2 * cap_threads : 64;
        threads = realloc(threads, (size_t)cap_threads * sizeof *threads);
        heap = realloc(heap, (size_t)cap_threads * sizeof *heap);
        if (!threads || !heap) {
            fprintf(stderr, "simulate: out of memory\n");
            exit(2);
        }
    }
    sim_thread_t *t = calloc(1, sizeof *t);
    if (!t) {
        fprintf(stderr, "simulate: out of memory\n");
        exit(2);
    }
    t->id = nthreads;
    threads[nthreads++] = t;
    t->heap_pos = -1;
    t->pu = pu_of_thread(worker);
    t->tls = tls_new();
    snprintf(t->name, sizeof t->name, "%s", name);
    t->stack = mmap(NULL, SIM_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (t->stack == MAP_FAILED) {
        fprintf(stderr, "simulate: cannot map a thread stack: %s\n", strerror(errno));
        exit(2);
    }
    return t;
}

static void thread_finish(void *ret) __attribute__((noreturn));

static void thread_entry(intptr_t unused)
{
    (void)unused;
    sim_thread_t *me = cur;
    void *ret = me->fn(me->arg);
    thread_finish(ret);
}

int sim_thread_create(pthread_t *out, const pthread_attr_t *attr, void *(*fn)(void *), void *arg,
                      const char *fn_name)
{
    if (!simulating())
        return pthread_create(out, attr, fn, arg);
    sched_point();
    charge(sim_model.c[SIM_C_THREAD_CREATE]);
    bool worker = strcmp(fn_name, fn_worker_name) == 0;
    char name[64];
    if (worker)
        snprintf(name, sizeof name, "worker %d", nworkers_seen);
    else
        snprintf(name, sizeof name, "thread %d (%s)", nthreads, fn_name);
    sim_thread_t *t = thread_new(name, worker);
    t->fn = fn;
    t->arg = arg;
    t->clock = cur->clock;
    t->ctx = bthread_make_fcontext((char *)t->stack + SIM_STACK_SIZE, SIM_STACK_SIZE, thread_entry);
    t->state = T_RUNNABLE;
    heap_push(t, t->clock);
    *out = (pthread_t)t->id + 1;
    return 0;
}

static sim_thread_t *thread_of(pthread_t p)
{
    long i = (long)p - 1;
    return i >= 0 && i < nthreads ? threads[i] : NULL;
}

pthread_t sim_thread_self(void) { return simulating() ? (pthread_t)cur->id + 1 : pthread_self(); }

int sim_thread_join(pthread_t p, void **ret)
{
    if (!simulating())
        return pthread_join(p, ret);
    sim_thread_t *t = thread_of(p);
    if (!t)
        return ESRCH;
    while (!t->done_word)
        futex_wait(&t->done_word, 0, NO_DEADLINE, "join");
    if (ret)
        *ret = NULL;
    return 0;
}

static void thread_finish(void *ret)
{
    (void)ret;
    sim_thread_t *me = cur;
    me->done_word = 1;
    settle(me->pu); /* the slot of its last jump may go with it (see seen_t) */
    futex_wake(&me->done_word, INT_MAX);
    me->state = T_DONE;
    if (me->id == 0) { /* main returned: the simulated process ends */
        me->saved_errno = errno;
        if (tls_memsz)
            memcpy(tls_block, host_tls, tls_memsz);
        errno = host_errno;
        running = false;
        bthread_jump_fcontext(&me->ctx, host_ctx, 0, false);
    }
    switch_to(pop_next());
    abort(); /* not reached */
}

void sim_thread_exit(void *ret)
{
    if (!simulating())
        pthread_exit(ret);
    thread_finish(ret);
}

int sim_thread_getattr(pthread_t p, pthread_attr_t *attr)
{
    if (!simulating())
        return pthread_getattr_np(p, attr);
    sim_thread_t *t = thread_of(p);
    if (!t)
        return ESRCH;
    pthread_attr_init(attr);
    pthread_attr_setstack(attr, t->stack, SIM_STACK_SIZE);
    return 0;
}

int sim_thread_getcpuclockid(pthread_t p, clockid_t *cid)
{
    if (!simulating())
        return pthread_getcpuclockid(p, cid);
    sim_thread_t *t = thread_of(p);
    if (!t)
        return ESRCH;
    *cid = (clockid_t)(CPUCLOCK_BASE - t->id);
    return 0;
}

int sim_thread_setname(pthread_t p, const char *name)
{
    if (!simulating())
        return pthread_setname_np(p, name);
    return 0;
}

/* ---- the stall report ------------------------------------------------------------------ */
static void stall(void)
{
    sim_thread_t *me = cur;
    fprintf(stderr, "simulate: stall at simulated time %.3f us: every simulated thread is "
                    "blocked and no event is pending (a lost wake-up?)\n",
            (double)me->clock / 1e6);
    for (int i = 0; i < nthreads; i++) {
        sim_thread_t *t = threads[i];
        if (t->state != T_BLOCKED)
            continue;
        fprintf(stderr, "  stuck: %s on PU %d, blocked in %s (%p) since %.3f us\n", t->name, t->pu,
                t->wait_what ? t->wait_what : "?", t->wait_addr, (double)t->wait_since / 1e6);
    }
    fflush(stderr);
    _exit(SIM_EXIT_STALL);
}

/* ---- running a simulation ---------------------------------------------------------------- */

void sim_run(void *(*fn)(void *), void *arg, int nworker_pus_, uint64_t start_ps)
{
    dl_iterate_phdr(tls_find, NULL);
    if (tls_memsz && !tls_block) {
        fprintf(stderr, "simulate: cannot locate this program's thread-local storage\n");
        exit(2);
    }
    host_tls = tls_new();
    if (tls_memsz)
        memcpy(host_tls, tls_block, tls_memsz);
    host_errno = errno;
    nworker_pus = nworker_pus_;
    if (!sp_table && !(sp_table = calloc((size_t)sim_model.npus * SP_SETS * SP_WAYS, sizeof *sp_table))) {
        fprintf(stderr, "simulate: out of memory (prefetcher tables)\n");
        exit(2);
    }
    sim_thread_t *m = thread_new("main (the benchmark's thread)", false);
    m->fn = fn;
    m->arg = arg;
    m->ctx = bthread_make_fcontext((char *)m->stack + SIM_STACK_SIZE, SIM_STACK_SIZE, thread_entry);
    m->state = T_RUNNING;
    m->clock = start_ps;
    cur = m;
    sim_os_thread = pthread_self();
    running = true;
    if (tls_memsz)
        memcpy(tls_block, m->tls, tls_memsz);
    bthread_jump_fcontext(&host_ctx, m->ctx, 0, false);
    /* back when main has returned */
}

uint64_t sim_now_ps(void) { return running ? cur->clock : 0; }
uint64_t sim_busy_ps(void) { return running ? total_busy() : 0; }
int sim_thread_count(void) { return nthreads; }

/* ---- a simulation beside a host (sim_serve) ----------------------------------------------- */

static struct {
    pthread_t os_thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    void (*fn)(void *); /* the call waiting to run; NULL: none */
    void *arg;
    bool done, ending;
    int nworkers;
    uint64_t start_ps;
} serve = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* The simulated main thread: each call in turn.  Between calls it waits on a real
 * condition variable, which stops the whole simulation in real time and not at all in
 * simulated time (no other simulated thread runs meanwhile). */
static void *serve_main(void *unused)
{
    (void)unused;
    for (;;) {
        pthread_mutex_lock(&serve.mu);
        while (!serve.fn && !serve.ending)
            pthread_cond_wait(&serve.cv, &serve.mu);
        void (*fn)(void *) = serve.fn;
        void *arg = serve.arg;
        pthread_mutex_unlock(&serve.mu);
        if (!fn)
            return NULL;
        fn(arg);
        pthread_mutex_lock(&serve.mu);
        serve.fn = NULL;
        serve.done = true;
        pthread_cond_broadcast(&serve.cv);
        pthread_mutex_unlock(&serve.mu);
    }
}

static void *serve_thread(void *unused)
{
    (void)unused;
    sim_run(serve_main, NULL, serve.nworkers, serve.start_ps);
    return NULL;
}

void sim_serve(int nworkers, uint64_t start_ps)
{
    serve.nworkers = nworkers;
    serve.start_ps = start_ps;
    int rc = pthread_create(&serve.os_thread, NULL, serve_thread, NULL);
    if (rc != 0) {
        fprintf(stderr, "simulate: cannot start the simulation's thread: %s\n", strerror(rc));
        exit(2);
    }
}

void sim_call(void (*fn)(void *), void *arg)
{
    pthread_mutex_lock(&serve.mu);
    serve.fn = fn;
    serve.arg = arg;
    serve.done = false;
    pthread_cond_broadcast(&serve.cv);
    while (!serve.done)
        pthread_cond_wait(&serve.cv, &serve.mu);
    pthread_mutex_unlock(&serve.mu);
}

void sim_serve_end(void)
{
    pthread_mutex_lock(&serve.mu);
    serve.ending = true;
    pthread_cond_broadcast(&serve.cv);
    pthread_mutex_unlock(&serve.mu);
    pthread_join(serve.os_thread, NULL);
}
