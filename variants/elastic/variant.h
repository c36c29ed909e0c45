/*
 * elastic -- chaselev, but the number of active workers adapts (the work-stealing
 * article, 4.3): a worker whose wake-ups keep finding nothing parks for good, and is
 * woken again when run queues stay long (thresholds in idle_elastic.h).
 */
#include "rq_wsq.h"
#include "victims_random.h"
#include "idle_elastic.h"
