/*
 * ws.c -- the work-stealing article's own scheduler as reference rows (ws_sched.h over
 * ws_deque.h; the workloads are fn_workloads.c's).  One source, one row per knob
 * setting, chosen at build time (harness/ref/rules.mk):
 *
 *   WS_ROW      the row's name: ws, ws-nosteal, ws-steal4, ws-steal16, ws-steal32,
 *               ws-half
 *   WS_STEAL_K  how many tasks a thief takes in one attempt: 1, 4, 16, 32, -1 (half),
 *               0 (no stealing: the article's traditional per-thread-queue pool)
 *
 * Batch submission is the workload's argument (spawn_batch's `batch`), as for the
 * bthread variants; batch stealing is the scheduler's, as a bthread variant's policy is.
 *
 * Workers.  --workers N starts N worker pthreads; the calling thread submits (or places
 * the submitter tasks) and waits on a latch.  fib is not offered: a task cannot wait for
 * its children without holding its worker (as in pool.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ref.h"
#include "ws_fnrt.h"

#ifndef WS_ROW
#error "build with -DWS_ROW='\"ws\"' -DWS_STEAL_K=1 (harness/ref/rules.mk)"
#endif

#define WS_STR2(x) #x
#define WS_STR(x) WS_STR2(x)

const char ref_variant[] = WS_ROW;
const char ref_runtime[] = "the work-stealing article's scheduler (seed 003, section 3), "
                           "steal_k " WS_STR(WS_STEAL_K);

/* Of bench --policy's words, those this scheduler has: whether and how much a thief
 * takes (-1: half the victim's deque). */
int ref_policy(char *buf, size_t n)
{
    return snprintf(buf, n, "steals=%d steal_batch=%d", WS_STEAL_K != 0, WS_STEAL_K);
}

int ref_init(int workers)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int n = workers > 0 ? workers : online > 0 ? (int)online : 1;
    /* the workers live until the process ends: the bench never stops its scheduler */
    int rc = ws_start(&ws_rt, n, WS_STEAL_K);
    if (rc < 1)
        abort(); /* no worker at all: nothing could ever run */
    return rc;
}

bool ref_supports(const char *workload, const long *args)
{
    (void)args;
    return strcmp(workload, "fib") != 0; /* see the top of this file */
}

int ref_fib(const long *args, wl_run_t *out)
{
    (void)args;
    (void)out;
    return ENOTSUP; /* never registered: ref_supports says no */
}

/* ---- the counters, under the variants' names ------------------------------------------ */

#define WS_COUNTER_NAME(name, what) #name,
static const char *const ws_names[WS_NCOUNTERS] = {WS_COUNTERS(WS_COUNTER_NAME)};
#undef WS_COUNTER_NAME

static const struct drv_ratio ws_ratios[] = {
    {"tasks_per_remote_take", WS_remote_pops, WS_remote_takes},
    {"wakeups_per_task", WS_woken, DRV_ITEMS},
    {"steal_attempts_per_task", WS_steal_attempts, DRV_ITEMS},
    {"tasks_per_steal", WS_stolen_tasks, WS_steals},
    {NULL, 0, 0},
};

static void ws_sum(double *out) { ws_counters_sum(&ws_rt, out); }

const ref_counters_t *ref_counters(void)
{
    static const ref_counters_t c = {WS_NCOUNTERS, ws_names, ws_sum, ws_ratios};
    return &c;
}
