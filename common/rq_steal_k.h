/*
 * rq_steal_k.h -- binds RQ_STEAL to a thief that takes up to STEAL_BATCH tasks of the
 * victim's Chase-Lev deque in one visit (wsq_steal_k: at most half of it, one CAS per
 * task): the work-stealing article's batch stealing (section 4.2).  A variant defines
 * STEAL_BATCH, includes rq_wsq.h, then this header (variants/steal4, steal16, steal32).
 */
#ifndef SCHEDBENCH_RQ_STEAL_K_H
#define SCHEDBENCH_RQ_STEAL_K_H

#include "rq_wsq.h"

#ifndef STEAL_BATCH
#error "define STEAL_BATCH (the most tasks a thief takes in one visit, policy.h) before rq_steal_k.h"
#endif

/* A task the thief's own queue has no room for goes to its remote queue. */
static inline void steal_k_overflow(void *thief, struct task *t) { spill(thief, t); }

#undef RQ_STEAL
#define RQ_STEAL(victim, thief, moved) \
    wsq_steal_k(&(victim)->rq, &(thief)->rq, STEAL_BATCH, (moved), steal_k_overflow, (thief))

#endif /* SCHEDBENCH_RQ_STEAL_K_H */
