/*
 * ring_pool.h -- the textbook thread pool: N pthreads take function-pointer tasks from
 * one FIFO ring buffer under one mutex; an idle worker sleeps on one condition variable
 * and a submit signals it when some worker sleeps.  The ring doubles when full (no
 * allocation per task: what a C programmer writes once a malloc per task shows in a
 * profile).  No stealing, no per-worker queues, no task-local waits.
 *
 *   ring_pool_start(p, workers, cap)  workers threads, a ring of cap slots (rounded up
 *                                      to a power of two); the number started, or -errno
 *   ring_pool_submit(p, fn, ctx, i)   queue fn(ctx, i); ENOMEM when the ring cannot
 *                                      grow (the task is not queued), else 0
 *   ring_pool_stop(p)                 run every queued task, end and join the threads
 *
 * Header-only so that the reference (pool.c) and its unit test (tests/c/unit_ring_pool.c)
 * compile the same code.
 */
#ifndef SB_RING_POOL_H
#define SB_RING_POOL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef void ring_pool_fn(void *ctx, long i);

typedef struct {
    ring_pool_fn *fn;
    void *ctx;
    long i;
} ring_task_t;

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t nonempty;
    ring_task_t *buf; /* cap slots, a power of two; tasks at head .. head + count - 1 */
    size_t cap, head, count;
    int sleeping;  /* workers in cond_wait */
    bool stopping; /* ring_pool_stop: workers end once the ring is empty */
    int workers;
    pthread_t *threads;
} ring_pool_t;

static inline void *ring_pool_worker(void *arg)
{
    ring_pool_t *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->count == 0 && !p->stopping) {
            p->sleeping++;
            pthread_cond_wait(&p->nonempty, &p->mu);
            p->sleeping--;
        }
        if (p->count == 0) /* stopping and drained */
            break;
        ring_task_t t = p->buf[p->head];
        p->head = (p->head + 1) & (p->cap - 1);
        p->count--;
        pthread_mutex_unlock(&p->mu);
        t.fn(t.ctx, t.i);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static inline int ring_pool_start(ring_pool_t *p, int workers, size_t cap)
{
    if (workers < 1)
        return -EINVAL;
    size_t c = 16;
    while (c < cap)
        c <<= 1;
    memset(p, 0, sizeof *p);
    p->buf = malloc(c * sizeof *p->buf);
    p->threads = malloc((size_t)workers * sizeof *p->threads);
    if (!p->buf || !p->threads) {
        free(p->buf);
        free(p->threads);
        return -ENOMEM;
    }
    p->cap = c;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->nonempty, NULL);
    for (int w = 0; w < workers; w++) {
        int rc = pthread_create(&p->threads[w], NULL, ring_pool_worker, p);
        if (rc != 0) {
            if (w == 0) {
                pthread_cond_destroy(&p->nonempty);
                pthread_mutex_destroy(&p->mu);
                free(p->buf);
                free(p->threads);
                return -rc;
            }
            break; /* fewer threads than asked: the caller learns how many */
        }
        p->workers = w + 1;
    }
    return p->workers;
}

/* Doubles the ring, unwrapping it so the tasks start at slot 0.  Under mu. */
static inline int ring_pool_grow(ring_pool_t *p)
{
    ring_task_t *nb = malloc(2 * p->cap * sizeof *nb);
    if (!nb)
        return ENOMEM;
    size_t first = p->cap - p->head; /* head .. end of the old ring */
    if (first > p->count)
        first = p->count;
    memcpy(nb, p->buf + p->head, first * sizeof *nb);
    memcpy(nb + first, p->buf, (p->count - first) * sizeof *nb);
    free(p->buf);
    p->buf = nb;
    p->head = 0;
    p->cap *= 2;
    return 0;
}

static inline int ring_pool_submit(ring_pool_t *p, ring_pool_fn *fn, void *ctx, long i)
{
    pthread_mutex_lock(&p->mu);
    if (p->count == p->cap && ring_pool_grow(p) != 0) {
        pthread_mutex_unlock(&p->mu);
        return ENOMEM;
    }
    p->buf[(p->head + p->count) & (p->cap - 1)] = (ring_task_t){fn, ctx, i};
    p->count++;
    if (p->sleeping > 0)
        pthread_cond_signal(&p->nonempty);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

static inline void ring_pool_stop(ring_pool_t *p)
{
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_broadcast(&p->nonempty);
    pthread_mutex_unlock(&p->mu);
    for (int w = 0; w < p->workers; w++)
        pthread_join(p->threads[w], NULL);
    pthread_cond_destroy(&p->nonempty);
    pthread_mutex_destroy(&p->mu);
    free(p->buf);
    free(p->threads);
    p->buf = NULL;
    p->threads = NULL;
    p->workers = 0;
}

#endif /* SB_RING_POOL_H */
