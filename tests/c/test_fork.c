/*
 * test_fork.c -- fork() while the scheduler runs, on every variant: the child starts
 * with no scheduler (its first bthread call starts one of its own), the parent's
 * bthreads do not exist there (their ids read as ended), and the parent goes on
 * untouched (common/sched.c, the fork contract).
 *
 * Each child reports by its exit status; the parent bounds its time (a hung child is
 * killed and fails the test).  Skipped under qemu-user, which aborts in the child of a
 * multithreaded guest as soon as that child creates a thread (its translator's
 * "assertion failed: (cpu == current_cpu)"; seen with qemu 7.2 on a plain
 * pthread_create after such a fork), and every child here starts a scheduler.
 */
#include "sbtest.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bthread.h"
#include "child.h"

/* tests/rules.mk sets SB_EMULATED when the tests run under an emulator. */
static void skip_if_emulated(void)
{
    if (getenv("SB_EMULATED"))
        cr_skip_test("%s aborts when the child of a multithreaded process creates a thread",
                     getenv("SB_EMULATED"));
}

/* A bthread may wait for its child: it sleeps as a bthread between looks. */
static void nap(void) { bthread_usleep(2000); }
static int child_status(pid_t pid, int timeout_s) { return child_status_within(pid, timeout_s, nap); }

static _Atomic long counted;

static void *count(void *p)
{
    (void)p;
    atomic_fetch_add(&counted, 1);
    return NULL;
}

static void *fib(void *p)
{
    long n = (long)(intptr_t)p;
    if (n < 2)
        return (void *)(intptr_t)n;
    bthread_t a;
    if (bthread_start_background(&a, NULL, fib, (void *)(intptr_t)(n - 1)) != 0)
        return (void *)(intptr_t)-1000000;
    long y = (long)(intptr_t)fib((void *)(intptr_t)(n - 2));
    bthread_join(a, NULL);
    return (void *)(intptr_t)y; /* not the sum: join keeps no value; counted below */
}

typedef struct fd_arg {
    int fd, rc;
} fd_arg_t;

static void *waits_readable(void *p)
{
    fd_arg_t *a = p;
    a->rc = bthread_fd_wait(a->fd, EPOLLIN);
    return NULL;
}

static void *sleeps(void *p)
{
    (void)p;
    bthread_usleep(2000);
    return NULL;
}

/* What a child checks: the parent's bthread `parents` reads as ended; new bthreads run
 * (spawns, a sleep on the timer, an fd wait on the dispatcher); the scheduler shuts down.
 * Returns 0, or the number of the first check that failed. */
static int child_checks(bthread_t parents)
{
    if (bthread_self() != 0)
        return 1;
    if (parents && (bthread_join(parents, NULL) != 0 || bthread_interrupt(parents) != ESRCH))
        return 2;
    bthread_t t[100];
    for (int i = 0; i < 100; i++)
        if (bthread_start_background(&t[i], NULL, count, NULL) != 0)
            return 3;
    for (int i = 0; i < 100; i++)
        if (bthread_join(t[i], NULL) != 0)
            return 4;
    if (atomic_load(&counted) < 100)
        return 5;
    if (bthread_start_background(&t[0], NULL, fib, (void *)(intptr_t)15) != 0 ||
        bthread_join(t[0], NULL) != 0)
        return 6;
    if (bthread_start_background(&t[0], NULL, sleeps, NULL) != 0 ||
        bthread_join(t[0], NULL) != 0)
        return 7;
    int p[2];
    if (pipe2(p, O_NONBLOCK) != 0)
        return 8;
    fd_arg_t a = {.fd = p[0], .rc = -2};
    if (bthread_start_background(&t[0], NULL, waits_readable, &a) != 0)
        return 9;
    if (write(p[1], "f", 1) != 1 || bthread_join(t[0], NULL) != 0 || a.rc != 0)
        return 10;
    close(p[0]);
    close(p[1]);
    if (bthread_shutdown() != 0)
        return 11;
    return 0;
}

static bthread_sem_t parked;

static void *waits_on_sem(void *p)
{
    (void)p;
    bthread_sem_wait(&parked);
    return NULL;
}

/* Busy bthreads while forking: starts, joins and a mutex hand-off in flight. */
static _Atomic int busy_stop;
static bthread_mutex_t busy_mutex;

static void *busy(void *p)
{
    (void)p;
    while (!atomic_load_explicit(&busy_stop, memory_order_relaxed)) {
        bthread_t c;
        if (bthread_start_background(&c, NULL, count, NULL) == 0)
            bthread_join(c, NULL);
        bthread_mutex_lock(&busy_mutex);
        bthread_mutex_unlock(&busy_mutex);
        bthread_yield(); /* lets what waits on its worker run (variants without stealing) */
    }
    return NULL;
}

Test(fork, a_child_forked_while_the_scheduler_runs_starts_its_own, .timeout = 120)
{
#ifdef SB_UNDER_TSAN /* sbtest.h: built with -fsanitize=thread */
    cr_skip_test("ThreadSanitizer cannot start threads in the child of a multi-threaded fork "
                 "(it dies there: die_after_fork)");
#endif
    skip_if_emulated();
    cr_assert_eq(bthread_setconcurrency(2), 0);
    cr_assert_eq(bthread_sem_init(&parked, 0), 0);
    cr_assert_eq(bthread_mutex_init(&busy_mutex, NULL), 0);
    bthread_t waiter, b[4];
    cr_assert_eq(bthread_start_background(&waiter, NULL, waits_on_sem, NULL), 0);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(bthread_start_background(&b[i], NULL, busy, NULL), 0);
    /* a timer and an fd dispatcher running in the parent too */
    bthread_t s;
    cr_assert_eq(bthread_start_background(&s, NULL, sleeps, NULL), 0);
    cr_assert_eq(bthread_join(s, NULL), 0);
    for (int round = 0; round < 10; round++) {
        fflush(NULL);
        pid_t pid = fork();
        cr_assert_neq(pid, -1);
        if (pid == 0)
            _exit(child_checks(waiter));
        int st = child_status(pid, 30);
        cr_assert_eq(st, 0, "round %d: child failed check %d (200: hung)", round, st);
    }
    atomic_store(&busy_stop, 1);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(bthread_join(b[i], NULL), 0);
    cr_assert_eq(bthread_sem_post(&parked), 0); /* the parent's own bthread is fine */
    cr_assert_eq(bthread_join(waiter, NULL), 0);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* Forked inside a bthread: the child's one thread runs on that bthread's stack as a
 * plain pthread. */
static void *forks(void *p)
{
    int *status = p;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        _exit(child_checks(0));
    *status = pid < 0 ? 300 : child_status(pid, 30);
    return NULL;
}

Test(fork, a_child_forked_inside_a_bthread_starts_its_own, .timeout = 60)
{
#ifdef SB_UNDER_TSAN /* sbtest.h: built with -fsanitize=thread */
    cr_skip_test("ThreadSanitizer cannot start threads in the child of a multi-threaded fork "
                 "(it dies there: die_after_fork)");
#endif
    skip_if_emulated();
    cr_assert_eq(bthread_setconcurrency(2), 0);
    int status = -1;
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, forks, &status), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
    cr_assert_eq(status, 0, "child failed check %d (200: hung)", status);
    /* and after a shutdown in the parent: a fresh start in the child as well */
    cr_assert_eq(bthread_shutdown(), 0);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0)
        _exit(child_checks(0));
    cr_assert_eq(child_status(pid, 30), 0);
}
