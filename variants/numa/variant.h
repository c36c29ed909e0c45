/*
 * numa -- chaselev, but thieves try victims nearest on the machine first (same core or
 * L2, same L3, same NUMA node, same package, the rest; random within a level), and each
 * worker is pinned to one PU, with where it ran read back and recorded.
 */
#include "rq_wsq.h"
#include "victims_numa.h"
#include "idle_park.h"
