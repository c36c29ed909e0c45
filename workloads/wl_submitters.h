/*
 * wl_submitters.h -- one submitter per worker, the last ones late: the work-stealing
 * article's way of making imbalance (seed 003, section 5), shared by its experiment
 * (article.c) and the late-submitter form of the batching experiment (spawn_batch.c).
 * Header-only, against common/bthread.h.
 *
 * With foreign = 0 each submitter is a bthread running on a worker of its own, and what
 * it starts goes to that worker's queue: the path on which nothing but stealing can move
 * work to an idle worker.  With foreign = 1 each is a plain pthread (the remote-queue
 * path, where the variant's placement of foreign tasks decides).  The last `late`
 * submitters first wait D = delay_ns; the others start their share at once.  A late
 * bthread submitter sleeps with bthread_usleep, so its worker is free meanwhile, as the
 * core of a late thread in the article's pool is.
 *
 * Placement of bthread submitters: P starter pthreads start one submitter each (a new
 * foreign thread's first task goes to a worker of its own: the core spreads new threads
 * round-robin, affinity gives each a home worker, threadpool's idle workers take from
 * one queue).  The submitters then meet at a spin barrier: all P spinning at once is the
 * proof that each runs on a worker of its own.  One that does not see all P within
 * WL_SUBS_MEET_NS goes on, and counts itself in `colocated`: that variant put two
 * submitters on one worker and moved neither, so its point is not the article's
 * experiment (the report says so).  Pthread submitters wait until the last one exists.
 *
 * The clock, t0, starts when every submitter is in place (the last bthread's arrival at
 * the barrier; the last pthread's creation).
 *
 *   wl_subs_init(g, P, foreign, late, delay_ns, share, ctx)   (0, or ENOMEM)
 *   wl_subs_run(g)      start them; returns when every submitter pthread has ended (a
 *                       bthread submitter may still be running: wait for the tasks)
 *   wl_subs_t0(g)       the start time (after the tasks are waited for)
 *   wl_subs_finish(g)   join the submitter bthreads, free; the first failure (an errno
 *                       value) or 0
 * share(g, s, on_bthread) starts submitter s's tasks; a failure to start one is
 * recorded with wl_subs_fail.
 */
#ifndef SCHEDBENCH_WL_SUBMITTERS_H
#define SCHEDBENCH_WL_SUBMITTERS_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "bthread.h"
#include "timeutil.h"
#include "wl_kernel.h"

/* How long a bthread submitter waits for the others at the barrier: far above what a
 * wake-up or a steal takes (microseconds to a millisecond), far below a run. */
#define WL_SUBS_MEET_NS 100000000ull

typedef struct wl_subs wl_subs_t;
typedef void wl_subs_share_fn(wl_subs_t *g, long s, bool on_bthread);

typedef struct wl_sub {
    wl_subs_t *g;
    long s;
    pthread_t thread; /* the starter (foreign = 0) or the submitter (foreign = 1) */
    bthread_t tid;    /* the submitter bthread (foreign = 0); 0 if it could not start */
} wl_sub_t;

struct wl_subs {
    int workers;       /* P: one submitter each */
    bool foreign;
    long late;         /* the last `late` submitters start delay_ns after t0 */
    uint64_t delay_ns;
    wl_subs_share_fn *share;
    void *ctx;         /* the workload's run */
    wl_sub_t *sub;
    atomic_long arrived;   /* bthread submitters at the barrier */
    atomic_ullong t0;      /* when the last one arrived (0: not yet) */
    atomic_long colocated; /* submitters that gave up waiting at the barrier */
    atomic_int err;        /* the first failure to start a task or submitter; 0 if none */
};

static inline void wl_subs_fail(wl_subs_t *g, int rc)
{
    int zero = 0; /* relaxed: read only after every thread is joined */
    atomic_compare_exchange_strong_explicit(&g->err, &zero, rc, memory_order_relaxed,
                                            memory_order_relaxed);
}

static inline void wl_subs_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* The barrier of the bthread submitters: returns the experiment's start time. */
static inline uint64_t wl_subs_meet(wl_subs_t *g)
{
    /* acq_rel: the last arrival's t0 store is ordered after every arrival it counted */
    long n = atomic_fetch_add_explicit(&g->arrived, 1, memory_order_acq_rel) + 1;
    uint64_t t0;
    if (n == g->workers) {
        t0 = wl_now_ns();
        /* release: pairs with the waiters' acquire load below */
        atomic_store_explicit(&g->t0, t0, memory_order_release);
        return t0;
    }
    uint64_t give_up = wl_now_ns() + WL_SUBS_MEET_NS;
    for (unsigned spin = 1;; spin++) {
        t0 = atomic_load_explicit(&g->t0, memory_order_acquire);
        if (t0 != 0)
            return t0;
        wl_subs_pause();
        if (spin % 64 == 0 && wl_now_ns() > give_up) {
            /* relaxed: a count read after the joins */
            atomic_fetch_add_explicit(&g->colocated, 1, memory_order_relaxed);
            return wl_now_ns();
        }
    }
}

/* Submitter s: wait for its start, then start its share. */
static inline void wl_subs_submit(wl_subs_t *g, long s, uint64_t t0, bool on_bthread)
{
    if (s >= (long)g->workers - g->late) {
        int64_t until = (int64_t)(t0 + g->delay_ns);
        if (on_bthread) {
            int64_t left;
            while ((left = until - (int64_t)wl_now_ns()) > 0)
                bthread_usleep((uint64_t)(left + 999) / 1000);
        } else {
            sb_sleep_until_ns(until);
        }
    }
    g->share(g, s, on_bthread);
}

static inline void *wl_subs_bthread(void *arg)
{
    wl_sub_t *sub = arg;
    wl_subs_submit(sub->g, sub->s, wl_subs_meet(sub->g), true);
    return NULL;
}

/* foreign = 0: a starter pthread, whose one task is the submitter bthread. */
static inline void *wl_subs_starter(void *arg)
{
    wl_sub_t *sub = arg;
    int rc = bthread_start_background(&sub->tid, &BTHREAD_ATTR_NORMAL, wl_subs_bthread, sub);
    if (rc != 0) { /* submit from here; the others need not wait for this one */
        wl_subs_fail(sub->g, rc);
        sub->tid = 0;
        wl_subs_submit(sub->g, sub->s, wl_subs_meet(sub->g), false);
    }
    return NULL;
}

/* foreign = 1: a submitter pthread; it starts when the last one has been created. */
static inline void *wl_subs_pthread(void *arg)
{
    wl_sub_t *sub = arg;
    uint64_t t0;
    /* acquire: pairs with wl_subs_run's release store of t0 */
    while ((t0 = atomic_load_explicit(&sub->g->t0, memory_order_acquire)) == 0)
        sched_yield();
    wl_subs_submit(sub->g, sub->s, t0, false);
    return NULL;
}

static inline int wl_subs_init(wl_subs_t *g, int workers, bool foreign, long late,
                               uint64_t delay_ns, wl_subs_share_fn *share, void *ctx)
{
    g->workers = workers;
    g->foreign = foreign;
    g->late = late;
    g->delay_ns = delay_ns;
    g->share = share;
    g->ctx = ctx;
    atomic_init(&g->arrived, 0);
    atomic_init(&g->t0, 0);
    atomic_init(&g->colocated, 0);
    atomic_init(&g->err, 0);
    g->sub = calloc((size_t)workers, sizeof *g->sub);
    return g->sub ? 0 : ENOMEM;
}

static inline void wl_subs_run(wl_subs_t *g)
{
    void *(*body)(void *) = g->foreign ? wl_subs_pthread : wl_subs_starter;
    bool inline_part = false; /* a submitter's part done here: no thread for it */
    for (long s = 0; s < g->workers; s++) {
        g->sub[s].g = g;
        g->sub[s].s = s;
        int c = pthread_create(&g->sub[s].thread, NULL, body, &g->sub[s]);
        if (c != 0) { /* do its part from here, below; the run reports the error */
            wl_subs_fail(g, c);
            g->sub[s].thread = pthread_self();
            inline_part = true;
        }
    }
    if (g->foreign) /* release: pairs with the submitters' acquire loads */
        atomic_store_explicit(&g->t0, wl_now_ns(), memory_order_release);
    if (inline_part)
        for (long s = 0; s < g->workers; s++)
            if (pthread_equal(g->sub[s].thread, pthread_self()))
                body(&g->sub[s]);
    for (long s = 0; s < g->workers; s++)
        if (!pthread_equal(g->sub[s].thread, pthread_self()))
            pthread_join(g->sub[s].thread, NULL);
}

/* After the tasks are waited for (which orders every submitter's t0 store before it). */
static inline uint64_t wl_subs_t0(wl_subs_t *g)
{
    return atomic_load_explicit(&g->t0, memory_order_acquire);
}

static inline int wl_subs_finish(wl_subs_t *g)
{
    for (long s = 0; s < g->workers; s++)
        if (g->sub[s].tid)
            bthread_join(g->sub[s].tid, NULL);
    free(g->sub);
    g->sub = NULL;
    return atomic_load_explicit(&g->err, memory_order_relaxed); /* after the joins */
}

#endif /* SCHEDBENCH_WL_SUBMITTERS_H */
