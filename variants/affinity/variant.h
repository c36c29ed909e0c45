/*
 * affinity (baseline) -- per-worker queues, never stolen, and tasks stay on the worker
 * (or the submitting thread's home worker) that made them: the per-thread-queue pool.
 */
#include "rq_wsq.h"
#include "idle_park.h"
#include "place_affinity.h"
