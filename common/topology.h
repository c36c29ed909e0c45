/*
 * topology.h -- the machine's shape (hwloc) as victim orders, worker pinning and a
 * record of where workers really run.  Used by the numa variant (victims_numa.h) and by
 * the harness (topology_describe, topology_worker_placement); compiled into every
 * variant's library, but nothing here runs unless called.
 *
 * Where the topology comes from, first match wins:
 *   1. SCHEDBENCH_TOPOLOGY: a synthetic description ("pack:2 numa:2 l3:2 core:4 pu:1")
 *      or, if it ends in ".xml", an hwloc XML file;
 *   2. hwloc's own HWLOC_XMLFILE / HWLOC_SYNTHETIC (hwloc_topology_load honours them);
 *   3. the machine itself.
 * Workers are pinned (one per PU, in hwloc's logical order, wrapping around when there
 * are more workers than PUs) only when the topology is this machine's and
 * SCHEDBENCH_BIND is not "0".
 */
#ifndef SCHEDBENCH_TOPOLOGY_H
#define SCHEDBENCH_TOPOLOGY_H

#include <stddef.h>

/* How close a victim is to the thief, nearest first.  A pair gets the first kind that
 * holds: same core or same L2 (a worker on the same PU counts), same L3, same NUMA
 * node, same package, anything else. */
enum topo_kind { TOPO_CORE, TOPO_L3, TOPO_NUMA, TOPO_PACKAGE, TOPO_REST, TOPO_NKINDS };

#define TOPO_MAX_LEVELS 32

/* A victim order cut into levels.  Empty levels are left out.  With a NUMA latency
 * matrix, the PACKAGE and REST levels are split further by distance between the two
 * workers' NUMA nodes (nearest first); levels beyond TOPO_MAX_LEVELS merge into the
 * last one. */
typedef struct topo_levels {
    int nlevels;
    int start[TOPO_MAX_LEVELS + 1];     /* level k is order[start[k] .. start[k+1]) */
    unsigned char kind[TOPO_MAX_LEVELS];  /* enum topo_kind */
    unsigned distance[TOPO_MAX_LEVELS];   /* NUMA latency between the nodes; 0 = unknown */
} topo_levels_t;

/* One worker's victims: the nworkers - 1 other workers, nearest level first. */
typedef struct topo_order {
    const int *order;
    topo_levels_t lv;
} topo_order_t;

/* Pure: the victim order of `worker` among `nworkers` on the topology `source` (as
 * SCHEDBENCH_TOPOLOGY above; NULL = the scheduler's choice: SCHEDBENCH_TOPOLOGY, hwloc's
 * variables, the machine).  order[] gets nworkers - 1 entries.  Loads the topology and
 * frees it again; starts nothing, binds nothing.  0, or -1 (bad source, bad arguments,
 * no memory). */
int topology_victim_order(const char *source, int nworkers, int worker, int *order,
                          topo_levels_t *levels);

/* The scheduler's table (numa variant): built on the first call for a given nworkers,
 * for all workers at once, and kept (a later call with another nworkers rebuilds it:
 * call only while no worker runs, i.e. during start-up).  Prints one line to stderr if
 * workers will not be bound.  NULL only when out of memory. */
const topo_order_t *topology_worker_order(int worker, int nworkers);

/* On worker `worker`'s own thread as it starts (after topology_worker_order): pin it
 * to its PU when binding is on, then read back where the thread runs and where its
 * stack's memory lives, and record that (topology_worker_placement). */
void topology_worker_start(int worker);

/* One line about the topology for the run record, e.g. "1 package, 1 NUMA node,
 * 2 cores, 2 PUs; bound: yes".  The table's topology if there is one, else the one
 * SCHEDBENCH_TOPOLOGY / hwloc would give now (then bound: no).  Returns the length
 * snprintf would write, or -1 if hwloc cannot load a topology.  Any thread. */
int topology_describe(char *buf, size_t n);

/* Where worker `worker` asked to run and where it ran, e.g. "pu L#1 (P#1), bound; ran
 * on P#1; stack on NUMA node 0".  Length as snprintf, or -1 if nothing was recorded
 * (not the numa variant, or that worker has not started).  Any thread. */
int topology_worker_placement(int worker, char *buf, size_t n);

#endif /* SCHEDBENCH_TOPOLOGY_H */
