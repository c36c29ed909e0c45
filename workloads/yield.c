/*
 * yield -- `threads` bthreads each call bthread_yield() `rounds` times: the cost of a
 * switch through the scheduler (requeue the caller, pick the next task, jump).  With
 * more bthreads than workers the yields alternate between tasks; with fewer, a yield
 * may find nothing else ready on its worker, and what it then costs (a look at the
 * queues, a steal attempt, a switch through the main loop) is the variant's choice.
 * Default attributes, as a user would.
 *
 * answer = the number of yields that returned 0, summed over the bthreads
 * (= threads * rounds).  items = the same count.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "bthread.h"
#include "workload.h"

/* One cache line each: bthreads on different workers must not share the line they
 * write on every round, or the benchmark measures false sharing, not the switch. */
#define YIELD_LINE 64
typedef struct yield_task {
    long rounds;
    uint64_t ok; /* yields that returned 0 */
    char pad[YIELD_LINE - sizeof(long) - sizeof(uint64_t)];
} yield_task_t;

static void *yield_entry(void *arg)
{
    yield_task_t *t = arg;
    for (long i = 0; i < t->rounds; i++)
        t->ok += bthread_yield() == 0;
    return NULL;
}

static uint64_t yield_sequential(const long *args) { return (uint64_t)args[0] * (uint64_t)args[1]; }

static int yield_parallel(const long *args, wl_run_t *out)
{
    long threads = args[0];
    yield_task_t *tasks = aligned_alloc(YIELD_LINE, (size_t)threads * sizeof *tasks);
    bthread_t *tids = calloc((size_t)threads, sizeof *tids);
    int rc = (tasks && tids) ? 0 : ENOMEM;
    long started = 0;
    for (; rc == 0 && started < threads; started++) {
        tasks[started] = (yield_task_t){.rounds = args[1]};
        rc = bthread_start_background(&tids[started], NULL, yield_entry, &tasks[started]);
        if (rc != 0)
            break;
    }
    uint64_t total = 0;
    for (long i = 0; i < started; i++) {
        bthread_join(tids[i], NULL);
        total += tasks[i].ok;
    }
    free(tasks);
    free(tids);
    if (rc != 0)
        return rc;
    out->answer = total;
    out->items = (double)total;
    return 0;
}

static workload_t yield = {
    .name = "yield",
    .summary = "bthreads yielding in turn (switch cost through the scheduler)",
    .arg_names = {"threads", "rounds"},
    .bench = {{2, 100000}, {8, 25000}},
    .nbench = 2,
    .full = {{64, 10000}},
    .nfull = 1,
    .test = {4, 1000},
    .sequential = yield_sequential,
    .parallel = yield_parallel,
};
WORKLOAD_REGISTER(yield)
