/*
 * test_wakeups.c -- a runnable task always has a worker that will run it, on every
 * variant: a bthread woken by a waker that then blocks in a system call, sleeps or
 * computes; a ping-pong through the runnext slot does not starve the worker's run
 * queue; a task that yields while its worker then blocks; workers parked for good (a
 * policy that deactivates idle workers) while the one active worker blocks; and, where
 * tasks stay home, a woken task resumes on its own worker.
 *
 * What a case expects is read from the policy (bthread_get_policy), never from a
 * variant's name.  Where tasks stay home (keeps_tasks), a task waits for its own worker
 * by design (the documented trade-off), so the cases that need it to move elsewhere are
 * skipped there.  The blocking side waits in poll(2) with a bound (BLOCK_MS) instead of
 * in read() where it can, so a stranded task fails the test after BLOCK_MS rather than
 * hanging until the test's timeout: the system call keeps the worker exactly as a
 * read() would.  Every loop is bounded (a deadline well above what a pass needs), so a
 * failure is an assertion, not a hang; nothing here decides on a time measurement.
 */
#include "sbtest.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bthread.h"
#include "butex.h"

#include "thread_checks.h"

#define BLOCK_MS 2000 /* how long a blocked worker waits for the stranded task */

static int64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static bthread_policy_t policy(void)
{
    bthread_policy_t p;
    bthread_get_policy(&p);
    return p;
}

/* A task that ran is made ready again on its own worker, and never moves (by design). */
static bool keeps_tasks(void) { return policy().keeps_tasks; }

/* The worker thread running the caller now.  glibc declares pthread_self() const, so a
 * compiler may reuse one call's result across a switch to another worker: this cannot
 * be folded (the asm hides the value's origin). */
static __attribute__((noinline)) pthread_t current_thread(void)
{
    pthread_t t = pthread_self();
    __asm__ __volatile__("" : "+r"(t));
    return t;
}

/* Keep the worker for ms milliseconds without a switch. */
static void compute_ms(int64_t ms)
{
    const int64_t end = mono_ns() + ms * 1000000;
    while (mono_ns() < end) {
    }
}

/* Block the calling worker in poll(2) until fd is readable (at most BLOCK_MS), then read
 * one byte.  Returns true if the byte came in time. */
static bool block_worker_until_readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n;
    while ((n = poll(&p, 1, BLOCK_MS)) < 0 && errno == EINTR) {
    }
    char c;
    return n == 1 && read(fd, &c, 1) == 1;
}

typedef struct start_req { bthread_t *tid; void *(*fn)(void *); void *arg; } start_req_t;
static void *start_from_thread(void *p)
{
    start_req_t *r = p;
    cr_assert_eq(bthread_start_background(r->tid, NULL, r->fn, r->arg), 0);
    return NULL;
}

/* ---- a woken bthread is never stranded behind its waker ---------------------------- */
enum block_kind { BLOCK_READ, BLOCK_NANOSLEEP, BLOCK_COMPUTE };

typedef struct strand {
    enum block_kind kind;
    bthread_sem_t sem;
    int pipefd[2];            /* blocking: the waker reads, the woken writes */
    _Atomic int b_ready, b_done, a_same, a_done;
    _Atomic(pthread_t) b_thread;
    bool b_done_seen_by_a;    /* written by A only */
} strand_t;

static void *woken_b(void *p)
{
    strand_t *s = p;
    atomic_store(&s->b_thread, current_thread());
    atomic_store(&s->b_ready, 1);
    cr_assert_eq(bthread_sem_wait(&s->sem), 0);
    atomic_store(&s->b_done, 1);
    if (s->kind == BLOCK_READ)
        cr_assert_eq(write(s->pipefd[1], "x", 1), 1);
    return NULL;
}

/* The waker: wakes B, then keeps its worker (a system call, a sleep, or computing). */
static void *waker_a(void *p)
{
    strand_t *s = p;
    /* Where tasks stay home, B is made ready on its own worker: on that worker B would
     * wait for A by design, so the caller places A again.  Where tasks move, B goes to
     * A's worker (its runnext slot, or the one shared queue) either way. */
    if (keeps_tasks() && pthread_equal(current_thread(), atomic_load(&s->b_thread))) {
        atomic_store(&s->a_same, 1);
        return NULL;
    }
    while (!butex_waiting(s->sem.butex)) /* B sleeps in sem_wait */
        bthread_usleep(1000);
    cr_assert_eq(bthread_sem_post(&s->sem), 0);
    switch (s->kind) {
    case BLOCK_READ: { /* a deadlock unless another worker runs B */
        char c;
        cr_assert_eq(read(s->pipefd[0], &c, 1), 1);
        break;
    }
    case BLOCK_NANOSLEEP: {
        struct timespec d = {0, 300 * 1000000};
        while (nanosleep(&d, &d) != 0 && errno == EINTR) {
        }
        break;
    }
    case BLOCK_COMPUTE: {
        int64_t end = mono_ns() + 2000000000;
        while (!atomic_load(&s->b_done) && mono_ns() < end) {
        }
        break;
    }
    }
    s->b_done_seen_by_a = atomic_load(&s->b_done);
    atomic_store(&s->a_done, 1);
    return NULL;
}

/* Start A on another worker than B where placement allows it: where new tasks spread,
 * the main thread's starts go round-robin; where tasks stay home, a new pthread's
 * starts go to its own home worker (the next one). */
static void run_strand(enum block_kind kind)
{
    cr_assert_eq(bthread_setconcurrency(2), 0);
    strand_t s = {.kind = kind};
    cr_assert_eq(bthread_sem_init(&s.sem, 0), 0);
    cr_assert_eq(pipe(s.pipefd), 0);
    bthread_t b, a;
    cr_assert_eq(bthread_start_background(&b, NULL, woken_b, &s), 0);
    while (!atomic_load(&s.b_ready))
        usleep(1000);
    for (int attempt = 0;; attempt++) {
        cr_assert_lt(attempt, 16, "could not place the waker on another worker");
        atomic_store(&s.a_same, 0);
        if (attempt % 2 == 0) {
            cr_assert_eq(bthread_start_background(&a, NULL, waker_a, &s), 0);
        } else {
            start_req_t r = {&a, waker_a, &s};
            pthread_t th;
            cr_assert_eq(pthread_create(&th, NULL, start_from_thread, &r), 0);
            pthread_join(th, NULL);
        }
        cr_assert_eq(bthread_join(a, NULL), 0);
        if (!atomic_load(&s.a_same))
            break;
    }
    cr_assert_eq(bthread_join(b, NULL), 0);
    cr_assert(s.b_done_seen_by_a, "the woken bthread waited for its waker's worker");
    bthread_sem_destroy(&s.sem);
    close(s.pipefd[0]);
    close(s.pipefd[1]);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* A woken bthread left behind its waker's blocked worker is a deadlock (the test's
 * timeout fails it). */
Test(wakeups, woken_bthread_runs_while_waker_blocks_in_read, .timeout = 20)
{
    run_strand(BLOCK_READ);
}

Test(wakeups, woken_bthread_runs_while_waker_sleeps_in_nanosleep, .timeout = 20)
{
    run_strand(BLOCK_NANOSLEEP);
}

Test(wakeups, woken_bthread_runs_while_waker_computes, .timeout = 20)
{
    run_strand(BLOCK_COMPUTE);
}

/* ---- where tasks stay home: a task that ran resumes on its own worker ---------------- */
typedef struct stay {
    bthread_mutex_t m;
    bthread_cond_t c;
    _Atomic int moved, turn;
} stay_t;

static void *stays_home(void *p)
{
    stay_t *s = p;
    pthread_t home = current_thread();
    for (int i = 0; i < 100; i++) {
        bthread_usleep(100); /* woken by the timer thread */
        if (!pthread_equal(current_thread(), home))
            atomic_fetch_add(&s->moved, 1);
        bthread_interrupt(bthread_self()); /* requeued by its own wait: EINTR at once */
        bthread_usleep(100000);
        if (!pthread_equal(current_thread(), home))
            atomic_fetch_add(&s->moved, 1);
        /* woken by the other task, which runs on the other worker */
        bthread_mutex_lock(&s->m);
        atomic_fetch_add(&s->turn, 1);
        bthread_cond_broadcast(&s->c);
        while (atomic_load(&s->turn) < 2 * (i + 1))
            bthread_cond_wait(&s->c, &s->m);
        bthread_mutex_unlock(&s->m);
        if (!pthread_equal(current_thread(), home))
            atomic_fetch_add(&s->moved, 1);
    }
    return NULL;
}

Test(wakeups, a_woken_task_resumes_on_its_own_worker_where_tasks_stay_home, .timeout = 30)
{
    if (!keeps_tasks())
        cr_skip_test("this policy moves tasks between workers (keeps_tasks 0)");
    cr_assert_eq(bthread_setconcurrency(2), 0);
    stay_t s = {0};
    bthread_mutex_init(&s.m, NULL);
    bthread_cond_init(&s.c, NULL);
    bthread_t t[2];
    start_req_t r[2] = {{&t[0], stays_home, &s}, {&t[1], stays_home, &s}};
    for (int i = 0; i < 2; i++) { /* two submitters: two home workers, however placed */
        if (i == 0) {
            start_from_thread(&r[0]);
        } else {
            pthread_t th;
            cr_assert_eq(pthread_create(&th, NULL, start_from_thread, &r[1]), 0);
            pthread_join(th, NULL);
        }
    }
    for (int i = 0; i < 2; i++)
        cr_assert_eq(bthread_join(t[i], NULL), 0);
    cr_assert_eq(atomic_load(&s.moved), 0, "%d resumptions on another worker",
                 atomic_load(&s.moved));
    bthread_cond_destroy(&s.c);
    bthread_mutex_destroy(&s.m);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- runnext does not starve the run queue ------------------------------------------ */
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

Test(wakeups, a_pingpong_does_not_starve_the_run_queue_on_one_worker, .timeout = 30)
{
    pingpong_waits_for_a_third_task(1);
}

Test(wakeups, a_pingpong_does_not_starve_the_run_queue_on_two_workers, .timeout = 30)
{
    pingpong_waits_for_a_third_task(2);
}

/* ---- a yield that requeues makes sure someone looks ---------------------------------- */
static void *noop(void *p)
{
    atomic_store((_Atomic int *)p, 1);
    return NULL;
}

typedef struct yielder {
    bthread_sem_t sem;
    int pipefd[2];
    _Atomic int z_waiting, noop_ran, z_got;
} yielder_t;

/* Z: waits for Y's post, then blocks its worker on a pipe only Y writes. */
static void *z_blocks(void *p)
{
    yielder_t *y = p;
    atomic_store(&y->z_waiting, 1);
    CHECK(bthread_sem_wait(&y->sem) == 0);
    atomic_store(&y->z_got, block_worker_until_readable(y->pipefd[0]));
    return NULL;
}

/* Y: lets the other worker settle into idling while this one runs, posts (Z goes to
 * this worker's runnext slot), yields (Z runs here, Y is requeued), then writes. */
static void *y_yields(void *p)
{
    yielder_t *y = p;
    bthread_t t;
    CHECK(bthread_start_background(&t, NULL, noop, (void *)&y->noop_ran) == 0);
    for (int64_t end = mono_ns() + 1000000000; !atomic_load(&y->noop_ran) && mono_ns() < end;) {
    }
    compute_ms(10); /* the other worker ran the no-op (or we did) and idles again */
    CHECK(bthread_sem_post(&y->sem) == 0);
    bthread_yield();
    CHECK(write(y->pipefd[1], "y", 1) == 1);
    CHECK(bthread_join(t, NULL) == 0);
    return NULL;
}

/* The failure this catches: Y waits in the blocked worker's queue while the other
 * worker idles. */
Test(wakeups, yield_wakes_an_idle_worker_for_the_requeued_task, .timeout = 30)
{
    if (keeps_tasks())
        cr_skip_test("tasks stay home here (keeps_tasks): Y cannot leave its worker by design");
    cr_assert_eq(bthread_setconcurrency(2), 0);
    for (int round = 0; round < 8; round++) {
        yielder_t y = {0};
        cr_assert_eq(bthread_sem_init(&y.sem, 0), 0);
        cr_assert_eq(pipe(y.pipefd), 0);
        bthread_t z, t;
        cr_assert_eq(bthread_start_background(&z, NULL, z_blocks, &y), 0);
        while (!butex_waiting(y.sem.butex)) /* Z sleeps in sem_wait */
            usleep(1000);
        usleep(20000); /* and both workers idle */
        cr_assert_eq(bthread_start_background(&t, NULL, y_yields, &y), 0);
        cr_assert_eq(bthread_join(t, NULL), 0);
        cr_assert_eq(bthread_join(z, NULL), 0);
        assert_no_failures();
        cr_assert(atomic_load(&y.z_got), "round %d: the yielded task was stranded", round);
        bthread_sem_destroy(&y.sem);
        close(y.pipefd[0]);
        close(y.pipefd[1]);
    }
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- a worker parked for good is never outside every wake-up path --------------------- */

static uint64_t deactivated_now(void)
{
    bthread_worker_stats_t st[8];
    const int n = bthread_get_stats(st, 8);
    uint64_t parks = 0, wakes = 0;
    for (int i = 0; i < n && i < 8; i++) {
        parks += st[i].elastic_parks;
        wakes += st[i].elastic_wakes;
    }
    return parks - wakes;
}

static const char *stats_line(void)
{
    static char buf[256];
    bthread_worker_stats_t st[8];
    const int n = bthread_get_stats(st, 8);
    int k = 0;
    for (int i = 0; i < n && i < 8; i++)
        k += snprintf(buf + k, sizeof buf - (size_t)k, "w%d run %lu parks %lu eparks %lu ewakes %lu; ", i,
                      (unsigned long)st[i].tasks_run, (unsigned long)st[i].parks,
                      (unsigned long)st[i].elastic_parks, (unsigned long)st[i].elastic_wakes);
    return buf;
}

static void *child(void *p)
{
    (void)p;
    return NULL;
}

/* Fork-join rounds on one worker: the child, started unsignalled, is joined at once
 * (run inline), and the flush after it wakes the other worker for a task that has
 * already run; the parent computes meanwhile, so the woken worker finds nothing: a
 * wasted wake-up a round, whatever the OS schedules first, until (where the policy
 * deactivates idle workers) it parks for good. */
static void *fork_join_phase(void *p)
{
    (void)p;
    bthread_attr_t quiet = BTHREAD_ATTR_NORMAL;
    quiet.flags |= BTHREAD_NOSIGNAL;
    for (int round = 0; round < 300 && deactivated_now() == 0; round++) {
        bthread_t c;
        CHECK(bthread_start_background(&c, &quiet, child, NULL) == 0);
        CHECK(bthread_join(c, NULL) == 0);
        bthread_flush();
        compute_ms(2);
    }
    return NULL;
}

/* Two workers; where the policy deactivates idle workers, one is then parked for good. */
static void start_with_one_worker_parked_for_good(void)
{
    cr_assert_eq(bthread_setconcurrency(2), 0);
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, fork_join_phase, NULL), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
    assert_no_failures();
    if (policy().deactivates)
        cr_assert_gt(deactivated_now(), 0, "no worker parked for good (%s)", stats_line());
}

typedef struct stranded {
    bthread_sem_t sem;
    sem_t os_sem;     /* a pthread semaphore: waiting on it blocks the worker */
    int pipefd[2];
    _Atomic int b_waiting, t_sleeping, got;
} stranded_t;

/* B: woken by A into A's worker's runnext slot, then writes the pipe A blocks on. */
static void *runnext_b(void *p)
{
    stranded_t *s = p;
    atomic_store(&s->b_waiting, 1);
    CHECK(bthread_sem_wait(&s->sem) == 0);
    CHECK(write(s->pipefd[1], "b", 1) == 1);
    return NULL;
}

static void *runnext_a(void *p)
{
    stranded_t *s = p;
    CHECK(bthread_sem_post(&s->sem) == 0);
    atomic_store(&s->got, block_worker_until_readable(s->pipefd[0]));
    return NULL;
}

/* The failure this catches (with a worker parked for good): B waits in the slot of the
 * only active worker, blocked in a system call, while the deactivated worker sleeps. */
Test(wakeups, woken_task_runs_while_the_active_worker_blocks, .timeout = 60)
{
    if (keeps_tasks())
        cr_skip_test("tasks stay home here (keeps_tasks): B cannot leave its worker by design");
    start_with_one_worker_parked_for_good();
    stranded_t s = {0};
    cr_assert_eq(bthread_sem_init(&s.sem, 0), 0);
    cr_assert_eq(pipe(s.pipefd), 0);
    bthread_t a, b;
    cr_assert_eq(bthread_start_background(&b, NULL, runnext_b, &s), 0);
    while (!butex_waiting(s.sem.butex)) /* B sleeps in sem_wait */
        usleep(1000);
    cr_assert_eq(bthread_start_background(&a, NULL, runnext_a, &s), 0);
    cr_assert_eq(bthread_join(a, NULL), 0);
    cr_assert_eq(bthread_join(b, NULL), 0);
    assert_no_failures();
    cr_assert(atomic_load(&s.got), "the woken task waited for the blocked worker");
    bthread_sem_destroy(&s.sem);
    close(s.pipefd[0]);
    close(s.pipefd[1]);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* T: sleeps (the timer thread wakes it: a non-worker's wake-up), then releases U. */
static void *timer_woken_t(void *p)
{
    stranded_t *s = p;
    atomic_store(&s->t_sleeping, 1);
    bthread_usleep(50000);
    CHECK(sem_post(&s->os_sem) == 0);
    return NULL;
}

/* U: blocks its worker on what only T releases (as on a pthread mutex T holds). */
static void *blocks_on_t(void *p)
{
    stranded_t *s = p;
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += BLOCK_MS / 1000;
    int rc;
    while ((rc = sem_timedwait(&s->os_sem, &dl)) != 0 && errno == EINTR) {
    }
    atomic_store(&s->got, rc == 0);
    return NULL;
}

/* The failure this catches (with a worker parked for good): the timer puts T on the
 * only active worker's queue, whose worker U blocks, while the deactivated worker
 * sleeps. */
Test(wakeups, timer_woken_task_runs_while_the_active_worker_blocks, .timeout = 60)
{
    if (keeps_tasks())
        cr_skip_test("tasks stay home here (keeps_tasks): T cannot leave its worker by design");
    start_with_one_worker_parked_for_good();
    stranded_t s = {0};
    cr_assert_eq(sem_init(&s.os_sem, 0, 0), 0);
    bthread_t t, u;
    cr_assert_eq(bthread_start_background(&t, NULL, timer_woken_t, &s), 0);
    while (!atomic_load(&s.t_sleeping))
        usleep(1000);
    cr_assert_eq(bthread_start_background(&u, NULL, blocks_on_t, &s), 0);
    cr_assert_eq(bthread_join(u, NULL), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
    assert_no_failures();
    cr_assert(atomic_load(&s.got), "the timer-woken task waited for the blocked worker");
    sem_destroy(&s.os_sem);
    cr_assert_eq(bthread_shutdown(), 0);
}
