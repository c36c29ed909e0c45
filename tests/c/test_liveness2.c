/*
 * test_liveness2.c -- a runnable task always has a worker that will run it, on every
 * variant where it may move: a task that yields while its worker then blocks, and
 * elastic's deactivated workers.
 *
 * The blocking side waits in poll(2) with a bound (BLOCK_MS) instead of in read(), so a
 * stranded task fails the test after BLOCK_MS rather than hanging until the Criterion
 * timeout: the system call keeps the worker exactly as a read() would.  `affinity` and
 * `static` never move a task by design (their documented trade-off: a task waits for
 * its own worker), so these cases are skipped there.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bthread.h"

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
        while (!atomic_load(&y.z_waiting))
            usleep(1000);
        usleep(20000); /* Z sleeps in sem_wait; both workers idle */
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
