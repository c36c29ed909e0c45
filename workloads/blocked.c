/*
 * blocked -- n bthreads block on one event and are released together: what it costs to
 * hold many blocked tasks (create time, memory) and to wake them all.
 *
 * Each task (BTHREAD_ATTR_SMALL) signals an "arrived" countdown, waits on a butex until
 * its value turns 1, then signals a "finished" countdown.  The caller creates all n,
 * waits until all have arrived, so that all n are blocked at once, releases them with
 * one store and butex_wake_all, waits until all have finished, and joins them (so none
 * outlives the run).  answer = the sum of the ids of the tasks that got through
 * (= n(n-1)/2).
 *
 * Counters (per run, averaged over iterations by the harness):
 *   create_s       wall time to create the n tasks;
 *   total_s        wall time from the first create until every task has finished
 *                  (create, block, release, run; not the joins);
 *   rss_blocked_mb resident set size (VmRSS) while all n are blocked;
 *   peak_rss_mb    peak resident set size (VmHWM).  Before each run the peak is reset by
 *                  writing "5" to /proc/self/clear_refs (Linux >= 4.0), so this is the
 *                  peak of this run; where the reset is refused it is the peak of the
 *                  whole process so far, and the counter peak_rss_is_lifetime is 1.
 * Stacks are pooled by the core, so after the first iteration the pages of earlier runs'
 * stacks may still be resident: both RSS figures include them.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bthread.h"
#include "butex.h"
#include "timeutil.h"
#include "workload.h"

typedef struct blocked_run {
    WL_OWN_LINE void *gate; /* a butex: 0 = closed, 1 = open; WL_OWN_LINE: see workload.h */
    bthread_countdown_t arrived, finished;
    _Atomic uint64_t sum;
} blocked_run_t;

typedef struct blocked_slot {
    blocked_run_t *run;
    uint64_t id;
    bthread_t tid;
} blocked_slot_t;

static void *blocked_task(void *arg)
{
    blocked_slot_t *s = arg;
    blocked_run_t *r = s->run;
    bthread_countdown_signal(&r->arrived, 1);
    /* acquire: pairs with the release store that opens the gate */
    while (atomic_load_explicit((_Atomic int *)r->gate, memory_order_acquire) == 0)
        butex_wait(r->gate, 0, NULL);
    /* relaxed: only the total matters; the joins order it before the caller's read */
    atomic_fetch_add_explicit(&r->sum, s->id, memory_order_relaxed);
    bthread_countdown_signal(&r->finished, 1);
    return NULL;
}

static double now_s(void) { return (double)sb_clock_ns(CLOCK_MONOTONIC) * 1e-9; }

/* A "VmXXX:   1234 kB" line of /proc/self/status, in MiB; -1 if absent. */
static double status_mb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    double mb = -1;
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            mb = (double)strtoull(line + klen + 1, NULL, 10) / 1024.0;
            break;
        }
    }
    fclose(f);
    return mb;
}

/* Reset VmHWM to the current RSS; false if the kernel refused. */
static bool reset_peak_rss(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return false;
    bool ok = fputs("5", f) >= 0;
    ok = (fclose(f) == 0) && ok;
    return ok;
}

static uint64_t blocked_sequential(const long *args)
{
    uint64_t n = (uint64_t)args[0];
    uint64_t sum = 0;
    for (uint64_t i = 0; i < n; i++)
        sum += i;
    return sum;
}

static int blocked_parallel(const long *args, wl_run_t *out)
{
    long n = args[0];
    bool peak_reset = reset_peak_rss();
    blocked_run_t run;
    atomic_init(&run.sum, 0);
    blocked_slot_t *slots = malloc((size_t)n * sizeof *slots);
    run.gate = butex_create();
    int rc = (slots && run.gate) ? 0 : ENOMEM;
    if (rc == 0)
        rc = bthread_countdown_init(&run.arrived, (int)n);
    if (rc == 0 && (rc = bthread_countdown_init(&run.finished, (int)n)) != 0)
        bthread_countdown_destroy(&run.arrived);
    if (rc != 0) {
        if (run.gate)
            butex_destroy(run.gate);
        free(slots);
        return rc;
    }
    /* relaxed: no task runs yet; bthread_start_background publishes it */
    atomic_store_explicit((_Atomic int *)run.gate, 0, memory_order_relaxed);

    double t0 = now_s();
    long started = 0;
    for (; started < n; started++) {
        slots[started] = (blocked_slot_t){.run = &run, .id = (uint64_t)started};
        rc = bthread_start_background(&slots[started].tid, &BTHREAD_ATTR_SMALL, blocked_task,
                                      &slots[started]);
        if (rc != 0)
            break;
    }
    double t1 = now_s();
    if (started < n) { /* those never started will never arrive nor finish */
        bthread_countdown_signal(&run.arrived, (int)(n - started));
        bthread_countdown_signal(&run.finished, (int)(n - started));
    }
    bthread_countdown_wait(&run.arrived);
    double rss_blocked = status_mb("VmRSS");

    /* release: the tasks' acquire loads of the gate see everything before this store */
    atomic_store_explicit((_Atomic int *)run.gate, 1, memory_order_release);
    butex_wake_all(run.gate);
    bthread_countdown_wait(&run.finished);
    double t2 = now_s();
    for (long i = 0; i < started; i++)
        bthread_join(slots[i].tid, NULL);

    bthread_countdown_destroy(&run.finished);
    bthread_countdown_destroy(&run.arrived);
    butex_destroy(run.gate);
    free(slots);
    if (rc != 0)
        return rc;
    out->answer = atomic_load_explicit(&run.sum, memory_order_relaxed); /* after the joins */
    out->items = (double)n;
    wl_counter_add(out, "create_s", t1 - t0);
    wl_counter_add(out, "total_s", t2 - t0);
    wl_counter_add(out, "rss_blocked_mb", rss_blocked);
    wl_counter_add(out, "peak_rss_mb", status_mb("VmHWM"));
    wl_counter_add(out, "peak_rss_is_lifetime", peak_reset ? 0.0 : 1.0);
    return 0;
}

static workload_t blocked = {
    .name = "blocked",
    .summary = "n bthreads block on one butex and are released together (create, RSS)",
    .arg_names = {"n"},
    .bench = {{10000}, {100000}},
    .nbench = 2,
    .full = {{1000000}},
    .nfull = 1,
    .test = {1000},
    .sequential = blocked_sequential,
    .parallel = blocked_parallel,
};
WORKLOAD_REGISTER(blocked)
