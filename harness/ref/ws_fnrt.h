/*
 * ws_fnrt.h -- fnrt.h's calls over one article's scheduler, `ws_rt` (ws_sched.h), for
 * fn_workloads.c.  Included once per program: by ws.c, the reference rows, and by the
 * test of their workloads (tests/c/unit_ws_rows.c).
 */
#ifndef SCHEDBENCH_WS_FNRT_H
#define SCHEDBENCH_WS_FNRT_H

#include "fnrt.h"
#include "ws_sched.h"

static ws_sched_t ws_rt;

const bool fnrt_copies = false; /* its deques hold pointers to the records */

int fnrt_workers(void) { return ws_rt.n; }
void fnrt_submit(ref_task_t *ts, long k) { ws_submit(&ws_rt, ts, k); }
void fnrt_submit_on(int w, ref_task_t *t) { ws_submit_on(&ws_rt, w, t); }

int fnrt_self(void)
{
    ws_worker_t *w = ws_self(&ws_rt);
    return w ? w->index : -1;
}

#endif /* SCHEDBENCH_WS_FNRT_H */
