/*
 * spin -- chaselev, but idle workers spin (pause with backoff, then sched_yield) and
 * never park: no wake-up system calls at all, one core burned per idle worker.
 */
#include "rq_wsq.h"
#include "victims_random.h"
#include "idle_spin.h"
