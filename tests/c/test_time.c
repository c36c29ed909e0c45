/*
 * test_time.c -- sleeps and deadlines, on every variant: thousands of sleeps end and
 * none too early; an interrupt ends a sleep with EINTR; deadlines far in the future
 * (past what a nanosecond count or the timer's range holds) wait instead of timing out,
 * from bthreads and pthreads, in every timed wait; huge sleeps sleep until interrupted.
 */
#include "sbtest.h"
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "bthread.h"

static int64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void set_workers(int n) { cr_assert_eq(bthread_setconcurrency(n), 0); }

/* ---- sleep and interrupt ------------------------------------------------------------ */
static _Atomic long counter;

static void *long_sleep(void *arg)
{
    int rc = bthread_usleep(10 * 1000 * 1000);
    *(int *)arg = rc == -1 ? errno : 0;
    return NULL;
}

Test(time, interrupt_ends_a_sleep_with_eintr, .timeout = 30)
{
    set_workers(2);
    int rc = -1;
    bthread_t t;
    bthread_start_background(&t, NULL, long_sleep, &rc);
    usleep(50000);
    cr_assert_eq(bthread_stopped(t), 0);
    cr_assert_eq(bthread_stop(t), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
    cr_assert_eq(rc, EINTR);
    cr_assert_eq(bthread_stopped(t), 1);
    cr_assert_eq(bthread_interrupt(t), ESRCH);
    cr_assert_eq(bthread_shutdown(), 0);
}

static void *short_sleep(void *arg)
{
    (void)arg;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    cr_assert_eq(bthread_usleep(20000), 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    long us = (b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000;
    cr_assert_geq(us, 20000, "slept %ld us", us);
    atomic_fetch_add(&counter, 1);
    return NULL;
}

Test(time, thousands_of_sleeps_end_and_none_too_early, .timeout = 60)
{
    set_workers(2);
    enum { N = 2000 };
    static bthread_t t[N];
    for (int i = 0; i < N; i++)
        bthread_start_background(&t[i], NULL, short_sleep, NULL);
    for (int i = 0; i < N; i++)
        bthread_join(t[i], NULL);
    cr_assert_eq(atomic_load(&counter), N);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- far-future deadlines wait ------------------------------------------------------ */
typedef struct far {
    bthread_mutex_t m;
    bthread_cond_t c;
    bthread_sem_t sem;
    int pipefd[2];
    time_t sec;
    int cond_rc, sem_rc, fd_rc, lock_rc;
    _Atomic int waiting;
} far_t;

static void *far_waiter(void *p)
{
    far_t *f = p;
    struct timespec dl = {.tv_sec = f->sec, .tv_nsec = 0};
    bthread_mutex_lock(&f->m);
    atomic_store(&f->waiting, 1);
    f->cond_rc = bthread_cond_timedwait(&f->c, &f->m, &dl);
    bthread_mutex_unlock(&f->m);
    f->sem_rc = bthread_sem_timedwait(&f->sem, &dl);
    f->fd_rc = bthread_fd_timedwait(f->pipefd[0], EPOLLIN, &dl) == 0 ? 0 : errno;
    f->lock_rc = bthread_mutex_timedlock(&f->m, &dl);
    if (f->lock_rc == 0)
        bthread_mutex_unlock(&f->m);
    return NULL;
}

static void *far_waiter_pthread(void *p) { return far_waiter(p); }

static void far_deadline_case(time_t sec, bool from_bthread)
{
    far_t f = {.sec = sec};
    bthread_mutex_init(&f.m, NULL);
    bthread_cond_init(&f.c, NULL);
    bthread_sem_init(&f.sem, 0);
    cr_assert_eq(pipe(f.pipefd), 0);
    bthread_t bt;
    pthread_t pt;
    if (from_bthread)
        cr_assert_eq(bthread_start_background(&bt, NULL, far_waiter, &f), 0);
    else
        cr_assert_eq(pthread_create(&pt, NULL, far_waiter_pthread, &f), 0);
    while (!atomic_load(&f.waiting))
        usleep(1000);
    usleep(50000); /* each wait would have ended by now if the deadline had wrapped */
    bthread_mutex_lock(&f.m);
    bthread_cond_signal(&f.c);
    bthread_mutex_unlock(&f.m);
    usleep(50000);
    bthread_sem_post(&f.sem);
    usleep(50000);
    cr_assert_eq(write(f.pipefd[1], "x", 1), 1);
    usleep(50000);
    if (from_bthread)
        bthread_join(bt, NULL);
    else
        pthread_join(pt, NULL);
    cr_assert_eq(f.cond_rc, 0, "cond_timedwait(%ld s) from a %s: %d", (long)sec,
                 from_bthread ? "bthread" : "pthread", f.cond_rc);
    cr_assert_eq(f.sem_rc, 0, "sem_timedwait(%ld s): %d", (long)sec, f.sem_rc);
    cr_assert_eq(f.fd_rc, 0, "fd_timedwait(%ld s): %d", (long)sec, f.fd_rc);
    cr_assert_eq(f.lock_rc, 0, "mutex_timedlock(%ld s): %d", (long)sec, f.lock_rc);
    close(f.pipefd[0]);
    close(f.pipefd[1]);
    bthread_sem_destroy(&f.sem);
    bthread_cond_destroy(&f.c);
    bthread_mutex_destroy(&f.m);
}

Test(time, far_future_deadlines_wait_instead_of_timing_out, .timeout = 30)
{
    cr_assert_eq(bthread_setconcurrency(2), 0);
    const time_t secs[] = {LONG_MAX, 10000000000l, 9223372036l};
    for (unsigned i = 0; i < sizeof secs / sizeof secs[0]; i++) {
        far_deadline_case(secs[i], true);
        far_deadline_case(secs[i], false);
    }
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- huge sleeps sleep -------------------------------------------------------------- */
typedef struct sleeper { uint64_t us; int rc, err; int64_t slept; _Atomic int started; } sleeper_t;

static void *sleeps(void *p)
{
    sleeper_t *s = p;
    atomic_store(&s->started, 1);
    int64_t t0 = mono_ns();
    s->rc = bthread_usleep(s->us);
    s->err = errno;
    s->slept = mono_ns() - t0;
    return NULL;
}

static void on_usr1(int sig) { (void)sig; }

Test(time, huge_sleeps_sleep_until_interrupted, .timeout = 30)
{
    cr_assert_eq(bthread_setconcurrency(2), 0);
    const uint64_t huge[] = {UINT64_MAX, 1ull << 63, 10000000000000000ull, 1ull << 32};
    for (unsigned i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        sleeper_t s = {.us = huge[i]};
        bthread_t t;
        cr_assert_eq(bthread_start_background(&t, NULL, sleeps, &s), 0);
        while (!atomic_load(&s.started)) /* a busy or emulated machine starts it late */
            usleep(1000);
        usleep(50000);
        cr_assert_eq(bthread_interrupt(t), 0);
        bthread_join(t, NULL);
        cr_assert_eq(s.rc, -1, "bthread_usleep(%llu) returned %d", (unsigned long long)huge[i], s.rc);
        cr_assert_eq(s.err, EINTR);
        cr_assert_geq(s.slept, 40000000, "slept only %lld ns", (long long)s.slept);
    }
    /* a pthread: nanosleep ended by a signal (usleep would truncate 2^32 us to 0) */
    struct sigaction sa = {.sa_handler = on_usr1};
    sigemptyset(&sa.sa_mask);
    cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
    for (unsigned i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        sleeper_t s = {.us = huge[i]};
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, sleeps, &s), 0);
        while (!atomic_load(&s.started))
            usleep(1000);
        usleep(50000);
        pthread_kill(th, SIGUSR1);
        pthread_join(th, NULL);
        cr_assert_eq(s.rc, -1, "pthread bthread_usleep(%llu) returned %d",
                     (unsigned long long)huge[i], s.rc);
        cr_assert_geq(s.slept, 40000000, "slept only %lld ns", (long long)s.slept);
    }
    cr_assert_eq(bthread_shutdown(), 0);
}
