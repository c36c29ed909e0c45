/*
 * adaptive -- chaselev, but idle workers spin a while before they park, with at most
 * half of them spinning at once (Go, Tokio): most wake-up system calls disappear under
 * steady load, and an idle machine still sleeps.
 */
#include "rq_wsq.h"
#include "victims_random.h"
#include "idle_adaptive.h"
