/*
 * rq_global.h -- the traditional thread pool: one global FIFO queue under one mutex,
 * idle workers wait on one condition variable.  No per-worker queues, no stealing; every
 * push and pop by every worker takes the same lock, which is the cost work stealing
 * avoids.  It is also the idler: the condition variable is the parking lot, signalled
 * under the lock by each push when a worker waits (so no wake-up is lost: the waiter
 * checks the queue under the same lock before it waits).
 */
#ifndef SCHEDBENCH_RQ_GLOBAL_H
#define SCHEDBENCH_RQ_GLOBAL_H

#include <pthread.h>

static struct global_queue {
    alignas(CACHELINE) pthread_mutex_t lock; /* a line of its own: no other global's writes */
    pthread_cond_t cond;
    task_t *head, *tail;
    int waiting;
} gq = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

/* At every start-up: an empty queue and a new lock (a fork() child starts from the
 * parent's, which a thread gone there may hold). */
static inline int gq_setup(void)
{
    static const pthread_mutex_t m0 = PTHREAD_MUTEX_INITIALIZER;
    static const pthread_cond_t c0 = PTHREAD_COND_INITIALIZER;
    gq.lock = m0;
    gq.cond = c0;
    gq.head = gq.tail = NULL;
    gq.waiting = 0;
    return 0;
}

static inline bool gq_push(task_t *t)
{
    t->next = NULL;
    pthread_mutex_lock(&gq.lock);
    if (gq.tail)
        gq.tail->next = t;
    else
        gq.head = t;
    gq.tail = t;
    if (gq.waiting)
        pthread_cond_signal(&gq.cond);
    pthread_mutex_unlock(&gq.lock);
    return true;
}

static inline task_t *gq_take_locked(void)
{
    task_t *t = gq.head;
    if (t) {
        gq.head = t->next;
        if (!gq.head)
            gq.tail = NULL;
    }
    return t;
}

static inline task_t *gq_pop(void)
{
    pthread_mutex_lock(&gq.lock);
    task_t *t = gq_take_locked();
    pthread_mutex_unlock(&gq.lock);
    return t;
}

static inline task_t *gq_wait(worker_t *w)
{
    pthread_mutex_lock(&gq.lock);
    task_t *t;
    while (!(t = gq_take_locked()) && !core_stopping()) {
        gq.waiting++;
        stat_park(w);
        pthread_cond_wait(&gq.cond, &gq.lock);
        gq.waiting--;
    }
    pthread_mutex_unlock(&gq.lock);
    return t;
}

static inline void gq_wake_all(void)
{
    pthread_mutex_lock(&gq.lock);
    pthread_cond_broadcast(&gq.cond);
    pthread_mutex_unlock(&gq.lock);
}

#define STEALING 0
#define RUNNEXT 0 /* no per-worker slot either: woken tasks go to the global queue */
#define RQ_T char /* no per-worker queue */
#define RQ_INIT(w) 0
#define RQ_FINI(w) ((void)0)
#define RQ_PUSH(w, t) gq_push(t)
#define RQ_POP(w) gq_pop()
#define RQ_EMPTY(w) true /* FIFO: a yield may always queue behind the rest, where all look */
#define RQ_STEAL(victim, thief, moved) NULL
#define REMOTE_SUBMIT(t) ((void)gq_push(t))
#define IDLE_SETUP(n) gq_setup()
#define IDLE_WAIT(w) gq_wait(w)
#define IDLE_WAKE(target) ((void)(target)) /* gq_push signals by itself */
#define IDLE_WAKE_ALL() gq_wake_all()

#endif /* SCHEDBENCH_RQ_GLOBAL_H */
