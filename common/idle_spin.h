/*
 * idle_spin.h -- idle workers never sleep: they search again and again, pausing with an
 * exponential backoff (1, 2, 4 ... 128 CPU pauses), then yielding the CPU with
 * sched_yield between searches (backoff() in atomics.h).  A new task is found within
 * one search period without any wake-up system call, so submitters pay nothing; the
 * price is a core per idle worker, burned.  Nothing can be lost: nobody ever sleeps,
 * and the spinners search the runnext slots too, so they are the watchers (sched.c,
 * make_ready_again).
 */
#ifndef SCHEDBENCH_IDLE_SPIN_H
#define SCHEDBENCH_IDLE_SPIN_H

static inline task_t *spin_wait(worker_t *w)
{
    for (unsigned i = 0;; i++) {
        task_t *t = find_work(w);
        if (t || core_stopping())
            return t;
        backoff(i);
    }
}

#define IDLE_SLEEPS 0
#define IDLE_SPINS 1
#define IDLE_WAIT(w) spin_wait(w)
#define IDLE_WAKE(target) ((void)(target))
#define IDLE_WAKE_ALL() ((void)0)
#define IDLE_WATCH() ((void)0)

#endif /* SCHEDBENCH_IDLE_SPIN_H */
