/*
 * fib -- the classic spawn/join microbenchmark: fib(n) spawns fib(n-1) as a new bthread,
 * computes fib(n-2) inline, then joins.  Almost no work per task, so the time is the
 * scheduler's: task creation, the owner's push/pop, steals, joins that block.
 *
 * Tasks use BTHREAD_ATTR_SMALL stacks: the recursion inside one task is at most n/2
 * frames deep, and a FIFO-order variant can hold many unfinished tasks at once.
 *
 * items = the bthreads spawned (fib(n+1) - 1 when every spawn succeeds).  A failed spawn
 * is not an error: that subtree runs inline and is not counted.
 */
#include <stdint.h>

#include "bthread.h"
#include "wl_defs.h"
#include "workload.h"

typedef struct fib_task {
    long n;
    uint64_t value;  /* fib(n) */
    uint64_t spawns; /* bthreads started inside this subtree */
} fib_task_t;

static void fib_run(fib_task_t *t);

static void *fib_entry(void *arg)
{
    fib_run(arg);
    return NULL;
}

static void fib_run(fib_task_t *t)
{
    if (t->n < 2) {
        t->value = (uint64_t)t->n;
        t->spawns = 0;
        return;
    }
    fib_task_t child = {.n = t->n - 1};
    fib_task_t inline_part = {.n = t->n - 2};
    bthread_t tid;
    int spawned = bthread_start_background(&tid, &BTHREAD_ATTR_SMALL, fib_entry, &child) == 0;
    if (!spawned)
        fib_run(&child);
    fib_run(&inline_part);
    if (spawned)
        bthread_join(tid, NULL);
    t->value = child.value + inline_part.value;
    t->spawns = child.spawns + inline_part.spawns + (uint64_t)spawned;
}

static int fib_parallel(const long *args, wl_run_t *out)
{
    /* The root is a bthread too, so every join but the last happens inside the
     * scheduler. */
    fib_task_t root = {.n = args[0]};
    bthread_t tid;
    int rc = bthread_start_background(&tid, &BTHREAD_ATTR_SMALL, fib_entry, &root);
    if (rc != 0)
        return rc;
    rc = bthread_join(tid, NULL);
    if (rc != 0)
        return rc;
    out->answer = root.value;
    out->items = (double)root.spawns;
    return 0;
}

static workload_t fib = {
    .name = "fib",
    .summary = "fib(n): spawn fib(n-1), compute fib(n-2) inline, join (spawn/steal cost)",
    .arg_names = WL_FIB_ARGS,
    .bench = {{25}, {30}},
    .nbench = 2,
    .full = {{35}},
    .nfull = 1,
    .test = {18},
    .sequential = wl_fib_answer,
    .parallel = fib_parallel,
};
WORKLOAD_REGISTER(fib)
