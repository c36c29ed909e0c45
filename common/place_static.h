/*
 * place_static.h -- no stealing: each new task goes to the next worker in round-robin
 * order and only that worker runs it (the "static" split a thread-pool user gets from
 * per-thread queues).  Placing on another worker uses that worker's remote queue and
 * wakes that worker (a targeted wake).  Under load imbalance a worker with long tasks
 * keeps its queue while others idle: the effect work stealing removes.  Once placed, a
 * task stays: woken, interrupted or timed out, it is made ready on the worker it last
 * ran on (READY_HOME, sched.c), never on the waker's.
 */
#ifndef SCHEDBENCH_PLACE_STATIC_H
#define SCHEDBENCH_PLACE_STATIC_H

static __thread unsigned static_rr;

static inline worker_t *static_next(worker_t *w)
{
    (void)w;
    return worker_at((int)(static_rr++ % (unsigned)worker_count()));
}

#define STEALING 0
#define READY_HOME 1
#define SPAWN_TARGET(w) static_next(w)
#define SPREADS_TASKS 1

#endif /* SCHEDBENCH_PLACE_STATIC_H */
