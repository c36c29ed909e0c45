/*
 * static (baseline) -- per-worker queues, new tasks placed round-robin, never stolen.
 */
#include "rq_wsq.h"
#include "place_static.h"
#include "idle_park.h"
