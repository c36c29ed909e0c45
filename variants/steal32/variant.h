/*
 * steal32 -- chaselev, but a thief takes up to 32 tasks of the victim's queue in one visit
 * (at most half of it): the work-stealing article's batch stealing (section 4.2) at
 * k = 32, beside chaselev (1), steal4, steal16, steal32 and half (no bound).
 */
#define STEAL_BATCH 32
#include "rq_wsq.h"
#include "rq_steal_k.h"
#include "victims_random.h"
#include "idle_park.h"
