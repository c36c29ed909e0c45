/*
 * spawn -- n tiny tasks submitted one by one from a single foreign pthread (the thread
 * that calls parallel(): the harness's main thread, never a worker), so every task takes
 * the remote-submission path.  Measures tasks per second through that path, including
 * waking idle workers.
 *
 * Task i adds i to a shared sum and signals a countdown event; the submitter waits on
 * the event, the end of the measured work.  It joins none of them, as a user of
 * background tasks does not join them: a task touches nothing of the run after its signal (the
 * countdown's butex is type-stable memory, butex.h), so one still on its way out when
 * the run returns is harmless.  answer = the sum of the task ids = n(n-1)/2.  Tasks use
 * default attributes (NULL), as a user would.
 *
 * The array of ids and arguments is kept from one run to the next (spawn_array), as the
 * plain pool keeps its grown ring (harness/ref/ring_pool.h): freed and allocated again,
 * its 16 MB for 10^6 tasks came back from malloc as fresh pages in the first runs, and
 * their first-touch faults (about 6000) outweighed the starts being measured.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "bthread.h"
#include "wl_defs.h"
#include "workload.h"

typedef struct spawn_run {
    WL_OWN_LINE _Atomic uint64_t sum; /* WL_OWN_LINE: see workload.h */
    bthread_countdown_t done;
} spawn_run_t;

typedef struct spawn_slot {
    spawn_run_t *run;
    uint64_t id;
} spawn_slot_t;

static void *spawn_task(void *arg)
{
    spawn_slot_t *s = arg;
    /* relaxed: only the total matters; countdown_signal/wait order it for the reader */
    atomic_fetch_add_explicit(&s->run->sum, s->id, memory_order_relaxed);
    bthread_countdown_signal(&s->run->done, 1);
    return NULL;
}

/* The array kept between runs (see the top), and its length; a run takes it over with
 * an exchange, so concurrent runs each get an array of their own. */
static struct spawn_array {
    long n;
    spawn_slot_t slots[];
} *_Atomic spawn_kept;

static struct spawn_array *spawn_array_get(long n)
{
    struct spawn_array *a = atomic_exchange_explicit(&spawn_kept, NULL, memory_order_acquire);
    if (a && a->n >= n)
        return a;
    free(a);
    if (n < 0 || (size_t)n > (SIZE_MAX - sizeof *a) / sizeof a->slots[0])
        return NULL; /* no such size: ENOMEM */
    a = malloc(sizeof *a + (size_t)n * sizeof a->slots[0]);
    if (a)
        a->n = n;
    return a;
}

/* Keep a for the next run (release: its contents before the next taker's acquire); an
 * array kept meanwhile by a concurrent run is freed. */
static void spawn_array_put(struct spawn_array *a)
{
    free(atomic_exchange_explicit(&spawn_kept, a, memory_order_acq_rel));
}

static int spawn_parallel(const long *args, wl_run_t *out)
{
    long n = args[0];
    struct spawn_array *a = spawn_array_get(n);
    if (!a)
        return ENOMEM;
    spawn_slot_t *slots = a->slots;
    spawn_run_t run;
    atomic_init(&run.sum, 0);
    int rc = bthread_countdown_init(&run.done, (int)n);
    if (rc != 0) {
        spawn_array_put(a);
        return rc;
    }
    long started = 0;
    for (long i = 0; i < n; i++) {
        slots[i] = (spawn_slot_t){.run = &run, .id = (uint64_t)i};
        bthread_t tid;
        rc = bthread_start_background(&tid, NULL, spawn_task, &slots[i]);
        if (rc != 0)
            break;
        started++;
    }
    if (started < n) /* the tasks never started will never signal */
        bthread_countdown_signal(&run.done, (int)(n - started));
    bthread_countdown_wait(&run.done);
    bthread_countdown_destroy(&run.done);
    spawn_array_put(a);
    if (rc != 0)
        return rc;
    /* relaxed: countdown_wait returned, so every task's add happened before */
    out->answer = atomic_load_explicit(&run.sum, memory_order_relaxed);
    out->items = (double)n;
    return 0;
}

static workload_t spawn = {
    .name = "spawn",
    .summary = "n tiny tasks submitted from one foreign pthread (remote-queue path)",
    .arg_names = WL_SPAWN_ARGS,
    .bench = {{100000}},
    .nbench = 1,
    .full = {{1000000}},
    .nfull = 1,
    .test = {2000},
    .sequential = wl_spawn_answer,
    .parallel = spawn_parallel,
};
WORKLOAD_REGISTER(spawn)
