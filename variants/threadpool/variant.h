/*
 * threadpool (baseline) -- the traditional thread pool: one global mutex+condvar queue
 * shared by all workers, no per-worker queues, no stealing.
 */
#include "rq_global.h"
