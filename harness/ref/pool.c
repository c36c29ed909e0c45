/*
 * pool.c -- the plain thread-pool reference row: what a C programmer writes without a
 * task runtime, the textbook pool of ring_pool.h.  N pthreads share one FIFO ring buffer
 * of function-pointer tasks guarded by one mutex; an idle worker sleeps on one condition
 * variable, and submit signals it only when some worker is asleep.  No allocation per
 * task, no work stealing, no per-worker queues, no task-local waits.
 *
 * Workers.  --workers N starts N pool threads; the calling thread only submits and
 * waits (on a latch: an atomic countdown plus a mutex/condvar for the last task).  The
 * workloads are fn_workloads.c's, over the few calls of fnrt.h below; a task is copied
 * into the ring by value.  The article's experiment and the batching experiment are not
 * registered for this row (ref_supports): the textbook pool has no batch submission and
 * no per-thread queues to make the article's imbalance with.
 *
 * fib is not offered: a task that blocks waiting for its children holds a pool thread,
 * and with a fixed number of threads a deep enough tree has every thread waiting on
 * children that no thread is left to run -- a deadlock, not a slow result.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fnrt.h"
#include "ref.h"
#include "ring_pool.h"

const char ref_variant[] = "pool";
const char ref_runtime[] = "pthread mutex+condvar pool";

static ring_pool_t pool;

int ref_init(int workers)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int n = workers > 0 ? workers : online > 0 ? (int)online : 1;
    /* the threads live until the process ends: the bench never stops its pool */
    if (ring_pool_start(&pool, n, 4096) < 1)
        abort(); /* no pool at all: nothing could ever run */
    return pool.workers;
}

bool ref_supports(const char *workload, const long *args)
{
    (void)args; /* fib: see the top of this file; article, spawn_batch: see Workers */
    return strcmp(workload, "fib") != 0 && strcmp(workload, "article") != 0 &&
           strcmp(workload, "spawn_batch") != 0;
}

int ref_fib(const long *args, wl_run_t *out)
{
    (void)args;
    (void)out;
    return ENOTSUP; /* never registered: ref_supports says no */
}

/* ---- the function-pointer runtime (fnrt.h) ---------------------------------------- */

const bool fnrt_copies = true; /* the ring holds (fn, ctx, i) by value */

int fnrt_workers(void) { return pool.workers; }

/* One task at a time (the textbook pool has no batches); when the ring cannot grow the
 * caller runs the task itself. */
void fnrt_submit(ref_task_t *ts, long k)
{
    for (long j = 0; j < k; j++)
        if (ring_pool_submit(&pool, ts[j].fn, ts[j].ctx, ts[j].i) != 0)
            ts[j].fn(ts[j].ctx, ts[j].i);
}

void fnrt_submit_on(int w, ref_task_t *t)
{
    (void)w; /* one queue */
    fnrt_submit(t, 1);
}

int fnrt_self(void) { return -1; }
