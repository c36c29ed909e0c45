/*
 * place_affinity.h -- no stealing, and a task stays where it was made: a worker's new
 * task goes to its own queue, a foreign thread's tasks go to that thread's home worker
 * (threads get home workers round-robin at their first submission).  This is the
 * per-thread-queue pool of the work-stealing article ("seven threads idle while the
 * eighth has a pile of tasks"): cheap and local while the load is even, stuck when a
 * submitter or a task tree puts more work on one worker than on the others.  A task
 * that ran stays on its worker: a butex wake, a timer (the timer thread is a foreign
 * thread with a home of its own) or an interrupt makes it ready there (READY_HOME).
 */
#ifndef SCHEDBENCH_PLACE_AFFINITY_H
#define SCHEDBENCH_PLACE_AFFINITY_H

static _Atomic unsigned affinity_next_home;
static __thread int affinity_home = -1;

/* The calling non-worker's home worker (the core pushes there and wakes it). */
static inline worker_t *affinity_target(void)
{
    if (affinity_home < 0) /* relaxed: only spreads threads, orders nothing */
        affinity_home = (int)atomic_fetch_add_explicit(&affinity_next_home, 1,
                                                       memory_order_relaxed);
    return worker_at(affinity_home % worker_count());
}

#define STEALING 0
#define READY_HOME 1
#define REMOTE_TARGET() affinity_target()

#endif /* SCHEDBENCH_PLACE_AFFINITY_H */
