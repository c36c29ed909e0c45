/*
 * fnrt.h -- a function-pointer task runtime: the reference rows whose task is a function
 * and its argument (pool.c, the textbook pool; ws.c, the work-stealing article's own
 * scheduler) implement these few calls, and fn_workloads.c writes ref.h's workloads once
 * over them (spawn, imbalance, granularity, article, spawn_batch).  A runtime either
 * copies each task as it is submitted (fnrt_copies: the pool's ring of values), and the
 * workload then fills one small reused window, or queues a pointer to it (the article's
 * scheduler), and the task then lives in the workload's array until it has run: neither
 * pays for the other's way.  C only.
 */
#ifndef SCHEDBENCH_FNRT_H
#define SCHEDBENCH_FNRT_H

#include <stdbool.h>

/* A task: fn(ctx, i). */
typedef void ref_fn(void *ctx, long i);
typedef struct ref_task {
    ref_fn *fn;
    void *ctx;
    long i;
    struct ref_task *next; /* the runtime's, while the task waits in a list */
} ref_task_t;

/* true: fnrt_submit and fnrt_submit_on copy every task before they return, so the caller
 * may reuse its records at once; false: a task's record must stay put until it has run. */
extern const bool fnrt_copies;

/* The worker count in use (ref_init's). */
int fnrt_workers(void);

/* Start ts[0 .. k-1] (k >= 1) as one batch: one publication and at most one wake-up (the
 * article's batch submission, section 4.2; a runtime without batches starts them one by
 * one).  Called by a worker (from a task): onto that worker's own queue; by any other
 * thread: to that thread's home worker.  Any thread. */
void fnrt_submit(ref_task_t *ts, long k);

/* Start t on worker w (0 <= w < fnrt_workers()); called by a thread that is not a worker
 * (the article's submitters, one per worker; a runtime with one queue ignores w). */
void fnrt_submit_on(int w, ref_task_t *t);

/* The calling thread's worker index, or -1 (not a worker, or a runtime that cannot say). */
int fnrt_self(void);

#endif /* SCHEDBENCH_FNRT_H */
