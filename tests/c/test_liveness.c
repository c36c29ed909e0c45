/*
 * test_liveness.c -- the edges of issue 32, on every variant: a stop or interrupt
 * through an id that ends meanwhile never reaches the task that reuses its slot; a
 * ping-pong through the runnext slot does not starve the worker's run queue; ids from
 * before bthread_shutdown stay stale after the restart.
 *
 * Every loop is bounded (a deadline well above what a pass needs), so a failure is an
 * assertion, not a hang; nothing here decides on a time measurement.
 */
#include "sbtest.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "bthread.h"

static int64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* ---- 2. a stale stop or interrupt never reaches the slot's next task -------------- */
#define STALE_SECONDS 3
#define STOPPERS 4 /* more than the cores: each is often preempted mid-stop */
#define SHORT_YIELDS 4

static _Atomic bthread_t stale_target; /* the latest published id (it ends at once) */
static _Atomic int stale_done;
static _Atomic long stale_stopped_seen, stale_eintr_seen, fresh_runs;

static void *ends_at_once(void *p)
{
    (void)p;
    return NULL;
}

/* Alive a little while after its id is published, so that a stop often finds it alive
 * and then, preempted, lands after it ended. */
static void *ends_soon(void *p)
{
    (void)p;
    for (int i = 0; i < SHORT_YIELDS; i++)
        bthread_yield();
    return NULL;
}

/* A task whose id nobody ever sees: nobody may stop or interrupt it. */
static void *fresh(void *p)
{
    (void)p;
    for (int i = 0; i < SHORT_YIELDS; i++) /* a wider window for a stale stop to land */
        bthread_yield();
    if (bthread_stopped(bthread_self()))
        atomic_fetch_add(&stale_stopped_seen, 1);
    if (bthread_usleep(1) != 0) /* a pending interrupt returns EINTR at once */
        atomic_fetch_add(&stale_eintr_seen, 1);
    if (bthread_stopped(bthread_self()))
        atomic_fetch_add(&stale_stopped_seen, 1);
    atomic_fetch_add(&fresh_runs, 1);
    return NULL;
}

/* Starts short tasks and publishes their ids, then fresh tasks that, started from the
 * same worker, usually take the slot the short one just gave back (a LIFO cache). */
static void *churner(void *p)
{
    (void)p;
    while (!atomic_load(&stale_done)) {
        bthread_t s, f[4];
        cr_assert_eq(bthread_start_background(&s, NULL, ends_soon, NULL), 0);
        atomic_store(&stale_target, s);
        bthread_join(s, NULL);
        for (int i = 0; i < 4; i++)
            cr_assert_eq(bthread_start_background(&f[i], NULL, fresh, NULL), 0);
        for (int i = 0; i < 4; i++)
            bthread_join(f[i], NULL);
    }
    return NULL;
}

static void *stopper(void *p)
{
    long k = (long)(intptr_t)p;
    while (!atomic_load(&stale_done)) {
        bthread_t t = atomic_load(&stale_target);
        if (!t)
            continue;
        if (k & 1)
            bthread_interrupt(t);
        else
            bthread_stop(t);
    }
    return NULL;
}

Test(liveness, a_stale_stop_never_reaches_the_task_that_reuses_the_slot, .timeout = 30)
{
    cr_assert_eq(bthread_setconcurrency(2), 0);
    bthread_t ch[2];
    for (int i = 0; i < 2; i++)
        cr_assert_eq(bthread_start_background(&ch[i], NULL, churner, NULL), 0);
    pthread_t st[STOPPERS];
    for (long i = 0; i < STOPPERS; i++)
        cr_assert_eq(pthread_create(&st[i], NULL, stopper, (void *)(intptr_t)i), 0);
    struct timespec d = {STALE_SECONDS, 0};
    while (nanosleep(&d, &d) != 0 && errno == EINTR) {
    }
    atomic_store(&stale_done, 1);
    for (int i = 0; i < STOPPERS; i++)
        pthread_join(st[i], NULL);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(bthread_join(ch[i], NULL), 0);
    cr_assert_gt(atomic_load(&fresh_runs), 0);
    cr_expect_eq(atomic_load(&stale_stopped_seen), 0,
                 "%ld of %ld never-published tasks saw bthread_stopped(self) == 1",
                 atomic_load(&stale_stopped_seen), atomic_load(&fresh_runs));
    cr_expect_eq(atomic_load(&stale_eintr_seen), 0,
                 "%ld of %ld never-published tasks got an EINTR nobody sent them",
                 atomic_load(&stale_eintr_seen), atomic_load(&fresh_runs));
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- 4. runnext does not starve the run queue ------------------------------------- */
/* Two bthreads hand a turn back and forth through semaphores (each wake-up goes to the
 * waker's runnext slot); the pinger starts a third task from its worker and plays on
 * until that task has run.  With one worker nothing can steal it: only the worker's own
 * pick order lets it run.  The deadline turns an endless ping-pong into a failure. */
#define PINGPONG_DEADLINE_NS (3 * 1000000000ll)

typedef struct pingpong {
    bthread_sem_t ping, pong;
    _Atomic int third_ran, done;
    long rounds;
    bool ran_during; /* the third task ran while the ping-pong went on (pinger only) */
} pingpong_t;

static void *third(void *p)
{
    atomic_store(&((pingpong_t *)p)->third_ran, 1);
    return NULL;
}

static void *ponger(void *p)
{
    pingpong_t *pp = p;
    for (;;) {
        cr_assert_eq(bthread_sem_wait(&pp->pong), 0);
        if (atomic_load(&pp->done))
            return NULL;
        cr_assert_eq(bthread_sem_post(&pp->ping), 0);
    }
}

static void *pinger(void *p)
{
    pingpong_t *pp = p;
    bthread_t b, c = 0;
    cr_assert_eq(bthread_start_background(&b, NULL, ponger, pp), 0);
    int64_t end = mono_ns() + PINGPONG_DEADLINE_NS;
    for (pp->rounds = 0; !atomic_load(&pp->third_ran) && mono_ns() < end; pp->rounds++) {
        if (pp->rounds == 10) /* the ping-pong is in full swing */
            cr_assert_eq(bthread_start_background(&c, NULL, third, pp), 0);
        cr_assert_eq(bthread_sem_post(&pp->pong), 0);
        cr_assert_eq(bthread_sem_wait(&pp->ping), 0);
    }
    pp->ran_during = atomic_load(&pp->third_ran); /* before the join below runs it */
    atomic_store(&pp->done, 1);
    cr_assert_eq(bthread_sem_post(&pp->pong), 0);
    cr_assert_eq(bthread_join(b, NULL), 0);
    if (c)
        cr_assert_eq(bthread_join(c, NULL), 0);
    return NULL;
}

static void pingpong_waits_for_a_third_task(int workers)
{
    cr_assert_eq(bthread_setconcurrency(workers), 0);
    pingpong_t pp = {.third_ran = 0};
    cr_assert_eq(bthread_sem_init(&pp.ping, 0), 0);
    cr_assert_eq(bthread_sem_init(&pp.pong, 0), 0);
    bthread_t a;
    cr_assert_eq(bthread_start_background(&a, NULL, pinger, &pp), 0);
    cr_assert_eq(bthread_join(a, NULL), 0);
    cr_assert(pp.ran_during,
              "a task started during a ping-pong never ran (%ld round trips, %d worker(s))",
              pp.rounds, workers);
    cr_assert_eq(bthread_sem_destroy(&pp.ping), 0);
    cr_assert_eq(bthread_sem_destroy(&pp.pong), 0);
    cr_assert_eq(bthread_shutdown(), 0);
}

Test(liveness, a_pingpong_does_not_starve_the_run_queue_on_one_worker, .timeout = 30)
{
    pingpong_waits_for_a_third_task(1);
}

Test(liveness, a_pingpong_does_not_starve_the_run_queue_on_two_workers, .timeout = 30)
{
    pingpong_waits_for_a_third_task(2);
}

/* ---- 5. ids stay unique across shutdown and restart ------------------------------- */
static bthread_sem_t restart_sem;
static _Atomic int long_rc = -1, long_stopped = -1; /* -1: still waiting */

static void *long_task(void *p)
{
    (void)p;
    int rc = bthread_sem_wait(&restart_sem); /* until the test posts; EINTR: interrupted */
    atomic_store(&long_stopped, bthread_stopped(bthread_self()));
    atomic_store(&long_rc, rc);
    return NULL;
}

Test(liveness, ids_from_before_a_shutdown_stay_stale_after_the_restart, .timeout = 20)
{
    cr_assert_eq(bthread_setconcurrency(2), 0);
    bthread_t old;
    cr_assert_eq(bthread_start_background(&old, NULL, ends_at_once, NULL), 0);
    cr_assert_eq(bthread_join(old, NULL), 0);
    cr_assert_eq(bthread_shutdown(), 0);

    cr_assert_eq(bthread_sem_init(&restart_sem, 0), 0);
    bthread_t fresh_id;
    cr_assert_eq(bthread_start_background(&fresh_id, NULL, long_task, NULL), 0);
    cr_assert_neq(fresh_id, old, "the restarted scheduler handed out the old id again");
    /* the old id is stale: as any ended id (bthread.h), and the new task is untouched */
    cr_assert_eq(bthread_stop(old), EINVAL);
    cr_assert_eq(bthread_interrupt(old), ESRCH);
    cr_assert_eq(bthread_stopped(old), 1);
    cr_assert_eq(bthread_join(old, NULL), 0); /* at once: the new task waits on us */
    cr_assert_eq(atomic_load(&long_rc), -1, "the new task was woken through the old id");
    cr_assert_eq(bthread_stopped(fresh_id), 0);
    cr_assert_eq(bthread_sem_post(&restart_sem), 0);
    cr_assert_eq(bthread_join(fresh_id, NULL), 0);
    cr_assert_eq(atomic_load(&long_rc), 0, "the new task's sem_wait returned %d",
                 atomic_load(&long_rc));
    cr_assert_eq(atomic_load(&long_stopped), 0, "the new task saw itself stopped");
    cr_assert_eq(bthread_sem_destroy(&restart_sem), 0);
    cr_assert_eq(bthread_shutdown(), 0);
}
