/*
 * chaselev -- brpc's own choices, the reference variant.
 *   run queue:  Chase-Lev deque, the owner pops LIFO at the bottom   (rq_wsq.h)
 *   victims:    random start, coprime stride over all workers         (victims_random.h)
 *   steal size: one task
 *   idling:     parking lot, one futex per worker                     (idle_park.h)
 */
#include "rq_wsq.h"
#include "victims_random.h"
#include "idle_park.h"
