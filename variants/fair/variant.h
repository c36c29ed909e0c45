/*
 * fair -- chaselev, but the owner takes FIFO from the top of its own queue, the way a
 * thief does (brpc's BTHREAD_FAIR_WSQ).  Older tasks run first: fairer latency, colder
 * caches, and the owner's takes now contend with thieves on the same CAS.
 */
#include "rq_wsq.h"
#include "victims_random.h"
#include "idle_park.h"

#undef RQ_POP
#define RQ_POP(w) wsq_steal(&(w)->rq)
