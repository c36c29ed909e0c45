/*
 * rq_wsq.h -- binds the run-queue hooks to a per-worker Chase-Lev deque (wsq.h):
 * push and pop LIFO at the bottom by the owner, one-task steals at the top.
 * A variant that changes one of these includes this header, then #undef-s and
 * redefines that hook (see variants/fair and variants/half).
 */
#ifndef SCHEDBENCH_RQ_WSQ_H
#define SCHEDBENCH_RQ_WSQ_H

#include "wsq.h"

#define RQ_CAPACITY 4096
#define RQ_T wsq_t
#define RQ_INIT(w) wsq_init(&(w)->rq, RQ_CAPACITY)
#define RQ_FINI(w) wsq_fini(&(w)->rq)
#define RQ_PUSH(w, t) wsq_push(&(w)->rq, (t))
#define RQ_POP(w) wsq_pop(&(w)->rq)
#define RQ_STEAL(victim, thief, moved) wsq_steal(&(victim)->rq)
#define RQ_TAKE_BACK(w, t) wsq_take_back(&(w)->rq, (t))
#define RQ_EMPTY(w) (wsq_size(&(w)->rq) == 0)
#define RQ_SIZE(w) wsq_size(&(w)->rq)

#endif /* SCHEDBENCH_RQ_WSQ_H */
