/*
 * sim_engine.h -- the simulated machine's model and the engine's entry points, for the
 * driver (sim_main.c) and the model reader (sim_model.c).  The services the simulated
 * program calls are in sim_api.h.
 */
#ifndef SCHEDBENCH_SIM_ENGINE_H
#define SCHEDBENCH_SIM_ENGINE_H

#include <stdint.h>

#include "sim_api.h"

#define SIM_MAX_PUS 256
#define SIM_EXIT_STALL 3

/* The charged costs, in picoseconds; names as in the model file (sim_model.c). */
enum sim_cost {
    SIM_C_LOAD_HIT,     /* an atomic load of a line this PU holds */
    SIM_C_STORE_HIT,    /* a plain atomic store to a line this PU holds alone */
    SIM_C_RMW,          /* a locked read-modify-write (and a seq_cst store), line held */
    SIM_C_FENCE,        /* a seq_cst fence */
    SIM_C_SWITCH,       /* one jump_fcontext */
    SIM_C_SYSCALL,      /* a system call that does not wake anybody (futex wait entry...) */
    SIM_C_FUTEX_WAKE,   /* a futex wake system call that wakes somebody asleep for long */
    SIM_C_WAKEUP,       /* from such a wake to the woken thread running */
    SIM_C_YIELD,        /* sched_yield */
    SIM_C_PAUSE,        /* one spin-loop pause */
    SIM_C_CLOCK,        /* one clock_gettime */
    SIM_C_THREAD_CREATE,/* pthread_create, charged to the creator */
    SIM_C_SLEEP_SLACK,  /* added to every timed sleep and timeout (timer slack) */
    SIM_C_SHA1_BLOCK,   /* one SHA-1 block compression (uts) */
    SIM_C_CODE_ACCESS,  /* the scheduler's own plain code, per charged atomic access */
    SIM_C_CODE_SWITCH,  /* the scheduler's own plain code, per switch (the switch path) */
    SIM_C_STACK_MAP,    /* a fresh mapping (a stack on a pool miss): mmap, mprotect of its
                           guard, the first touch of its top page */
    SIM_C_STACK_UNMAP,  /* munmap of such a mapping */
    SIM_C_UTS_NODE,     /* a uts node's work besides its SHA-1 block (the child-count draw:
                           two log() calls; the digest's copies and padding) */
    /* resuming a context that last ran on its PU d switches ago, beyond what a switch
     * between two contexts costs (its stack's lines and page have left the PU's caches
     * and TLB): at d = 16, 128, 1k, 4k, 16k, 32k; interpolated in log2(d) between them,
     * 0 at d <= 2, the 32k value beyond */
    SIM_C_RESUME_16,
    SIM_C_RESUME_128,
    SIM_C_RESUME_1K,
    SIM_C_RESUME_4K,
    SIM_C_RESUME_16K,
    SIM_C_RESUME_32K,
    /* a wake-up after a short sleep: a thread asleep for at most short_sleep_max is
     * woken at these costs instead of futex_wake and wakeup_latency (a CPU that has
     * just gone idle is still polling, or in a shallow idle state: no halt to exit, in a
     * VM no exit to the host).  short_sleep_max 0: every wake-up costs the long ones. */
    SIM_C_FUTEX_WAKE_SHORT,
    SIM_C_WAKEUP_SHORT,
    SIM_C_SHORT_SLEEP_MAX,
    SIM_C_N
};

/* The ring sizes d behind SIM_C_RESUME_16 ... SIM_C_RESUME_32K, in order: calibrate.c
 * times a ring of each size; the engine interpolates between them. */
#define SIM_RESUME_D {16, 128, 1024, 4096, 16384, 32768}
#define SIM_RESUME_POINTS (SIM_C_RESUME_32K - SIM_C_RESUME_16 + 1)

typedef struct sim_pu {
    int core, l3, numa, pack;
} sim_pu_t;

typedef struct sim_model {
    char name[64];
    char topology[256];
    int npus;
    sim_pu_t pu[SIM_MAX_PUS];
    uint64_t c[SIM_C_N];
    uint64_t xfer[6];        /* [distance]: 0 unused (same PU), core, l3, numa, package, remote */
    double kernel_iters_per_us;
    uint64_t kernel_iter_ps; /* 1e6 / kernel_iters_per_us, rounded */
} sim_model_t;

extern sim_model_t sim_model;

typedef struct sim_stats {
    uint64_t accesses, transfers, thread_switches, task_switches, futex_waits, futex_wakes;
    uint64_t short_wakes; /* threads woken at the short-sleep costs (of futex_wakes) */
    uint64_t maps, unmaps; /* charged mmap / munmap calls (stacks on a pool miss) */
    uint64_t resume_ps;    /* charged for resuming contexts gone cold (SIM_C_RESUME_*) */
    uint64_t prefetched;   /* transfers the stride prefetcher had started before the access
                              (the code's own __builtin_prefetch is not counted) */
    uint64_t prefetch_saved_ps; /* the transfer time they did not charge */
    uint64_t work_ps; /* charged task-body work (kernel, SHA-1) */
} sim_stats_t;
extern sim_stats_t sim_stats;

/* Read the model file into sim_model; on any error print it and exit(2). */
void sim_model_load(const char *path);
extern const char *const sim_cost_names[SIM_C_N];

/* Run fn(arg) as the simulated program's main thread, its clock starting at start_ps;
 * returns when it returns.  The first nworkers PUs belong to the workers, other threads
 * get the PUs after them (wrapping around). */
void sim_run(void *(*fn)(void *), void *arg, int nworkers, uint64_t start_ps);
/* The simulated program beside a host: sim_serve starts a simulation on an OS thread
 * of its own (its own heap arena too, so what the host allocates moves nothing the
 * simulated program touches), whose main thread runs each sim_call(fn, arg) in turn;
 * sim_call returns once fn has.  sim_serve_end makes main return (the program must have
 * stopped its other threads) and waits for the simulation to end.  The host's own calls
 * of simulated code run for real.  One simulation per process. */
void sim_serve(int nworkers, uint64_t start_ps);
void sim_call(void (*fn)(void *), void *arg);
void sim_serve_end(void);
/* The simulated main thread's clock (ps) and the CPU time of all threads (ps), as of the
 * last sim_call (from the host), or now (inside the simulation). */
uint64_t sim_now_ps(void);
uint64_t sim_busy_ps(void);
int sim_thread_count(void);

#endif /* SCHEDBENCH_SIM_ENGINE_H */
