/*
 * chaselev -- brpc's own choices: the reference variant.
 *   run queue:   Chase-Lev deque, the owner pops LIFO at the bottom
 *   victims:     random start, coprime stride over all workers
 *   steal size:  one task
 *   idling:      parking lot (futex per worker, wake only when someone sleeps)
 */
#include "wsq.h"
#include "victims_random.h"
#include "idle_park.h"

#define RQ_CAPACITY 4096
#define RQ_T wsq_t
#define RQ_INIT(w) wsq_init(&(w)->rq, RQ_CAPACITY)
#define RQ_FINI(w) wsq_fini(&(w)->rq)
#define RQ_PUSH(w, t) wsq_push(&(w)->rq, (t))
#define RQ_POP(w) wsq_pop(&(w)->rq)
#define RQ_STEAL(victim, thief, moved) wsq_steal(&(victim)->rq)
#define RQ_TAKE_BACK(w, t) wsq_take_back(&(w)->rq, (t))
