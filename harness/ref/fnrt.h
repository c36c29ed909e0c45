/*
 * fnrt.h -- a function-pointer task runtime: the reference rows whose task is a function
 * and its argument (pool.c, the textbook pool; ws.c, the work-stealing article's own
 * scheduler) implement these few calls, and fn_workloads.c writes ref.h's workloads once
 * over them (spawn, imbalance, granularity, article, spawn_batch).  A task is never
 * copied by the runtime that queues a pointer to it: it lives in the workload's array
 * until it has run.  C only.
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
