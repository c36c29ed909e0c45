/*
 * half -- chaselev, but a thief takes half of the victim's queue in one visit (Go's
 * runqgrab, Tokio): fewer trips to a victim when work is scarce and lumpy, at the cost
 * of moving tasks that the victim might have run hot.  See wsq_steal_half for why it
 * is one CAS per task here.
 */
#include "rq_wsq.h"
#include "victims_random.h"
#include "idle_park.h"

static inline void half_overflow(void *thief, struct task *t) { spill(thief, t); }

#define STEAL_BATCH STEAL_HALF
#undef RQ_STEAL
#define RQ_STEAL(victim, thief, moved) \
    wsq_steal_half(&(victim)->rq, &(thief)->rq, (moved), half_overflow, (thief))
