/*
 * victims_numa.h -- victims in order of closeness on the machine (hwloc), nearest first.
 *
 * What it does.  Each worker is pinned to one PU, in hwloc's logical order (worker i on
 * PU i mod #PUs), as its thread starts.  At start-up topology.c computes, per worker,
 * the other workers cut into levels: those sharing its core or L2, then its L3, then
 * its NUMA node, then its package, then the rest; with a NUMA latency matrix the last
 * two are cut again by distance.  A steal round walks the levels in that order; inside
 * a level it starts at a random rotation (one worker_random() per round, stepped per
 * level), so every level member is tried once per round and two thieves of the same
 * level rarely queue up behind the same victim.
 *
 * The trade.  A task stolen from a neighbour finds its data in a shared cache or at
 * least in local memory, and steal traffic stays off the interconnect while a near
 * victim has work.  The price: work far away is found last (a whole near level is
 * tried first, so on a large machine a lone busy worker on another socket is reached
 * after every local miss), near workers are hit harder than far ones, and pinning
 * takes the OS scheduler's freedom to move a worker off a busy core.  brpc's random
 * order (victims_random.h) spreads the load evenly and knows nothing of the machine.
 *
 * Rejected: a fixed order per worker (all thieves of one level would hammer its first
 * member); a random permutation per round (shuffling costs O(n) per round where a
 * rotation costs one multiply per level); weighting far levels by probability instead
 * of ordering them (no level would ever be "done", so a round has no fixed end).
 *
 * Reading the orders costs nothing on the steal path but a few loads: they are
 * computed once (topology_worker_order) and are read-only while workers run.  A
 * synthetic or XML topology (SCHEDBENCH_TOPOLOGY, HWLOC_SYNTHETIC, HWLOC_XMLFILE) gives
 * the orders of that machine on this one; workers are then not bound (stderr says so).
 *
 * Binds VICTIM_STATE_T / VICTIM_SETUP / VICTIM_ITER_T / VICTIM_BEGIN / VICTIM_NEXT and
 * WORKER_ON_START (pinning and the placement read-back) for variant.h.  Uses the core's
 * worker_index(), worker_count() and worker_random() (sched.c).
 */
#ifndef SCHEDBENCH_VICTIMS_NUMA_H
#define SCHEDBENCH_VICTIMS_NUMA_H

#include <stdint.h>

#include "topology.h"

typedef const topo_order_t *victims_numa_state_t;

typedef struct victims_numa_iter {
    const int *order, *start;
    int nlevels, level;
    int base, size, pos, left; /* the current level: order[base .. base + size) */
    uint64_t r;
} victims_numa_iter_t;

/* Start a round over o with the random word r.  Owner only (the thief's own iterator). */
static inline void victims_numa_begin(victims_numa_iter_t *it, const topo_order_t *o,
                                      uint64_t r)
{
    it->order = o->order;
    it->start = o->lv.start;
    it->nlevels = o->lv.nlevels;
    it->level = -1;
    it->left = 0;
    it->r = r;
}

/* The next victim's index, or -1 when the round is over. */
static inline int victims_numa_next(victims_numa_iter_t *it)
{
    while (it->left == 0) {
        if (it->level + 1 >= it->nlevels)
            return -1;
        it->level++;
        it->base = it->start[it->level];
        it->size = it->start[it->level + 1] - it->base;
        it->left = it->size;
        /* one LCG step per level: a fresh rotation from the round's random word */
        it->r = it->r * 6364136223846793005ull + 1442695040888963407ull;
        it->pos = it->size > 0 ? (int)((it->r >> 33) % (uint64_t)it->size) : 0;
    }
    it->left--;
    int v = it->order[it->base + it->pos];
    if (++it->pos == it->size)
        it->pos = 0;
    return v;
}

/* Start-up, before the workers start: fetch worker i's order from the shared table. */
static inline int victims_numa_setup(victims_numa_state_t *s, int i, int n)
{
    *s = topology_worker_order(i, n);
    return *s ? 0 : -1;
}

#define VICTIM_STATE_T victims_numa_state_t
#define VICTIM_SETUP(w) victims_numa_setup(&(w)->victims, worker_index(w), worker_count())
#define VICTIM_ITER_T victims_numa_iter_t
#define VICTIM_BEGIN(w, it) victims_numa_begin((it), (w)->victims, worker_random(w))
#define VICTIM_NEXT(w, it) victims_numa_next(it)
#define WORKER_ON_START(w) topology_worker_start(worker_index(w))
/* The orders (and the pinning) are built for the start-up worker count, so
 * bthread_setconcurrency cannot add workers to a running numa scheduler (EPERM). */
#define VICTIM_FIXED_COUNT 1

#endif /* SCHEDBENCH_VICTIMS_NUMA_H */
