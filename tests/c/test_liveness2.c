/*
 * test_liveness2.c -- a runnable task always has a worker that will run it, on every
 * variant where it may move: a task that yields while its worker then blocks, and
 * elastic's deactivated workers.
 *
 * The blocking side waits in poll(2) with a bound (BLOCK_MS) instead of in read(), so a
 * stranded task fails the test after BLOCK_MS rather than hanging until the test's
 * timeout: the system call keeps the worker exactly as a read() would.  `affinity` and
 * `static` never move a task by design (their documented trade-off: a task waits for
 * its own worker), so these cases are skipped there.
 */
#include "sbtest.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bthread.h"
#include "butex.h"

#include "thread_checks.h"

#define BLOCK_MS 2000 /* how long a blocked worker waits for the stranded task */

static bool variant_is(const char *name) { return !strcmp(bthread_variant_name(), name); }

/* Tasks never move in these (by design). */
static bool keeps_tasks(void) { return variant_is("static") || variant_is("affinity"); }

static int64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
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

static void *noop(void *p)
{
    atomic_store((_Atomic int *)p, 1);
    return NULL;
}

/* ---- a yield that requeues makes sure someone looks ---------------------------------- */

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

/* Before the fix: Y waits in the blocked worker's queue while the other one idles. */
Test(liveness2, yield_wakes_an_idle_worker_for_the_requeued_task, .timeout = 30)
{
    if (keeps_tasks())
        return; /* Y cannot leave its worker by design */
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

/* ---- elastic: a deactivated worker is never outside every wake-up path ---------------- */

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
 * wasted wake-up a round, whatever the OS schedules first, until (elastic) it parks for
 * good. */
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

/* Two workers; on elastic, one is then parked for good. */
static void start_with_one_worker_parked_for_good(void)
{
    cr_assert_eq(bthread_setconcurrency(2), 0);
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, fork_join_phase, NULL), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
    assert_no_failures();
    if (variant_is("elastic"))
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

/* Before the fix (elastic): B waits in the slot of the only active worker, blocked in a
 * system call, while the deactivated worker sleeps. */
Test(liveness2, woken_task_runs_while_the_active_worker_blocks, .timeout = 60)
{
    if (keeps_tasks())
        return; /* B cannot leave its worker by design */
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

/* Before the fix (elastic): the timer puts T on the only active worker's queue, whose
 * worker U blocks, while the deactivated worker sleeps. */
Test(liveness2, timer_woken_task_runs_while_the_active_worker_blocks, .timeout = 60)
{
    if (keeps_tasks())
        return; /* T cannot leave its worker by design */
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
