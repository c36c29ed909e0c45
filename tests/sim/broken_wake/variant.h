/*
 * A deliberately broken variant for tests/sim/test_sim.py: chaselev whose idle wake-ups
 * are dropped, so workers that parked never learn of new work.  The simulator must
 * report the stall (every simulated thread blocked, no event pending) with the stuck
 * workers named, instead of hanging.  Built only by `make test-sim`, never a variant.
 */
#include "rq_wsq.h"
#include "victims_random.h"
#include "idle_park.h"

#undef IDLE_WAKE
#define IDLE_WAKE(target) ((void)(target)) /* the bug: a wake-up dropped */
