/*
 * soak.c -- a long mixed load on one variant (make soak; not part of make test).
 *
 *   build/<v>/soak [seconds]        (default 30; SOAK_SECONDS in make soak)
 *
 * Rounds of 2,000 bthreads, started by three foreign pthreads at once, each bthread
 * doing one of: compute and yield; a timed cond wait (a pthread broadcasts now and
 * then); a timed semaphore wait (a pthread posts now and then); a sleep that a pthread
 * may interrupt; bthread-local values under a stable key (whose destructor sleeps for
 * every other value) and under keys that another pthread deletes and re-creates; a timed
 * wait on its own pipe, written by a child bthread after a random delay; a semaphore
 * ping-pong that plays until a task it started has run (runnext must not starve the run
 * queue); a child that ends at once and whose id a pthread keeps stopping, then a fresh
 * child in its slot that must never see itself stopped or interrupted; a mutex-protected
 * counter.  After each round it checks that every bthread ran exactly once, that every
 * wait ended (started == ended), that the stable key's destructor ran once per value and
 * that the counter is exact.
 * An alarm ends a hung run: the process dies with SIGALRM, a failure.  Exit 0 = passed.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "bthread.h"

#define JOBS 2000
#define STARTERS 3
#define KINDS 9

typedef struct job {
    int kind;
    uint64_t seed;
    _Atomic int ran;
    _Atomic bthread_t tid;
} job_t;

static job_t jobs[JOBS];
static bthread_mutex_t mu;
static bthread_cond_t cv;
static bthread_sem_t sem;
static bthread_key_t stable_key;
static _Atomic uint64_t churn_key; /* index << 32 | version */
static _Atomic long waits_started, waits_ended, values_set, dtor_runs, counter, expected;
static _Atomic int stop_helpers;
static _Atomic bthread_t stale_child; /* an id that ends at once; a helper stops it */
static long failures;

#define CHECK(c)                                                                          \
    do {                                                                                  \
        if (!(c)) {                                                                       \
            fprintf(stderr, "soak: %s:%d: check failed: %s\n", __FILE__, __LINE__, #c);     \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static struct timespec in_us(long us)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    long ns = t.tv_nsec + us * 1000;
    t.tv_sec += ns / 1000000000;
    t.tv_nsec = ns % 1000000000;
    return t;
}

/* Blocks for every other value: the task may end on another worker than it began. */
static void stable_dtor(void *p)
{
    if (((job_t *)p - jobs) & 1)
        bthread_usleep(10);
    atomic_fetch_add(&dtor_runs, 1);
}
static void churn_dtor(void *p) { (void)p; }

static void *writer(void *p)
{
    int *fds = p;
    bthread_usleep((unsigned)(fds[2] % 2000));
    CHECK(write(fds[1], "x", 1) == 1);
    return NULL;
}

typedef struct pingpong {
    bthread_sem_t ping, pong;
    _Atomic int third_ran, done;
} pingpong_t;

static void *ponger(void *p)
{
    pingpong_t *pp = p;
    for (;;) {
        CHECK(bthread_sem_wait(&pp->pong) == 0);
        if (atomic_load(&pp->done))
            return NULL;
        CHECK(bthread_sem_post(&pp->ping) == 0);
    }
}

static void *third(void *p)
{
    atomic_store(&((pingpong_t *)p)->third_ran, 1);
    return NULL;
}

static void *ends_at_once(void *p)
{
    (void)p;
    return NULL;
}

/* Its id is never published: nobody may stop or interrupt it. */
static void *unpublished(void *p)
{
    (void)p;
    bthread_yield();
    CHECK(!bthread_stopped(bthread_self()));
    CHECK(bthread_usleep(1) == 0);
    return NULL;
}

static void *run_job(void *p)
{
    job_t *j = p;
    CHECK(atomic_fetch_add(&j->ran, 1) == 0);
    uint64_t s = j->seed;
    switch (j->kind) {
    case 0: /* compute and yield */
        for (int i = 0; i < 3; i++)
            bthread_yield();
        break;
    case 1: { /* timed cond wait */
        struct timespec dl = in_us((long)(rnd(&s) % 2000));
        atomic_fetch_add(&waits_started, 1);
        bthread_mutex_lock(&mu);
        int rc = bthread_cond_timedwait(&cv, &mu, &dl);
        bthread_mutex_unlock(&mu);
        CHECK(rc == 0 || rc == ETIMEDOUT);
        atomic_fetch_add(&waits_ended, 1);
        break;
    }
    case 2: { /* timed semaphore wait */
        struct timespec dl = in_us((long)(rnd(&s) % 2000));
        atomic_fetch_add(&waits_started, 1);
        int rc = bthread_sem_timedwait(&sem, &dl);
        CHECK(rc == 0 || rc == ETIMEDOUT);
        atomic_fetch_add(&waits_ended, 1);
        break;
    }
    case 3: { /* an interruptible sleep */
        atomic_fetch_add(&waits_started, 1);
        int rc = bthread_usleep(rnd(&s) % 3000);
        CHECK(rc == 0 || errno == EINTR);
        atomic_fetch_add(&waits_ended, 1);
        break;
    }
    case 4: { /* keys: a stable one and a churned one */
        CHECK(bthread_setspecific(stable_key, j) == 0);
        atomic_fetch_add(&values_set, 1);
        uint64_t k = atomic_load(&churn_key);
        bthread_setspecific((bthread_key_t){(uint32_t)(k >> 32), (uint32_t)k}, j);
        if (rnd(&s) & 1)
            bthread_usleep(100);
        break;
    }
    case 5: { /* an fd wait */
        int fds[3];
        CHECK(pipe(fds) == 0);
        fds[2] = (int)(rnd(&s) % 1000000);
        bthread_t w;
        CHECK(bthread_start_background(&w, NULL, writer, fds) == 0);
        atomic_fetch_add(&waits_started, 1);
        for (;;) {
            struct timespec dl = in_us(500);
            if (bthread_fd_timedwait(fds[0], EPOLLIN, &dl) == 0)
                break;
            CHECK(errno == ETIMEDOUT || errno == EINTR);
        }
        atomic_fetch_add(&waits_ended, 1);
        char c;
        CHECK(read(fds[0], &c, 1) == 1);
        CHECK(bthread_join(w, NULL) == 0);
        close(fds[0]);
        close(fds[1]);
        break;
    }
    case 6: { /* a ping-pong that waits for a task it started (the alarm ends a hang) */
        pingpong_t pp = {.third_ran = 0};
        CHECK(bthread_sem_init(&pp.ping, 0) == 0);
        CHECK(bthread_sem_init(&pp.pong, 0) == 0);
        bthread_t b, c;
        CHECK(bthread_start_background(&b, NULL, ponger, &pp) == 0);
        CHECK(bthread_start_background(&c, NULL, third, &pp) == 0);
        while (!atomic_load(&pp.third_ran)) {
            CHECK(bthread_sem_post(&pp.pong) == 0);
            CHECK(bthread_sem_wait(&pp.ping) == 0);
        }
        atomic_store(&pp.done, 1);
        CHECK(bthread_sem_post(&pp.pong) == 0);
        CHECK(bthread_join(b, NULL) == 0);
        CHECK(bthread_join(c, NULL) == 0);
        bthread_sem_destroy(&pp.ping);
        bthread_sem_destroy(&pp.pong);
        break;
    }
    case 7: { /* stale stops: the next task in the slot is never hit */
        bthread_t a, b;
        CHECK(bthread_start_background(&a, NULL, ends_at_once, NULL) == 0);
        atomic_store(&stale_child, a);
        CHECK(bthread_join(a, NULL) == 0);
        CHECK(bthread_stop(a) == EINVAL);
        CHECK(bthread_start_background(&b, NULL, unpublished, NULL) == 0);
        CHECK(bthread_join(b, NULL) == 0);
        break;
    }
    default: /* a mutex-protected counter */
        bthread_mutex_lock(&mu);
        atomic_store_explicit(&counter, atomic_load_explicit(&counter, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        bthread_mutex_unlock(&mu);
        atomic_fetch_add(&expected, 1);
        break;
    }
    return NULL;
}

static void *starter(void *p)
{
    long k = (long)(intptr_t)p;
    for (long i = k; i < JOBS; i += STARTERS) {
        bthread_t t;
        int rc;
        while ((rc = bthread_start_background(&t, NULL, run_job, &jobs[i])) == EAGAIN)
            usleep(1000);
        CHECK(rc == 0);
        atomic_store(&jobs[i].tid, t);
    }
    return NULL;
}

/* Helpers beside the rounds: broadcasts, posts, interrupts, key churn. */
static void *helper(void *p)
{
    long which = (long)(intptr_t)p;
    uint64_t s = 0x9E3779B97F4A7C15ull + (uint64_t)which;
    while (!atomic_load(&stop_helpers)) {
        switch (which) {
        case 0:
            bthread_mutex_lock(&mu);
            bthread_cond_broadcast(&cv);
            bthread_mutex_unlock(&mu);
            break;
        case 1:
            bthread_sem_post(&sem);
            break;
        case 2: {
            bthread_t t = atomic_load(&jobs[rnd(&s) % JOBS].tid);
            if (t)
                bthread_interrupt(t);
            for (int k = 0; k < 16 && (t = atomic_load(&stale_child)); k++)
                bthread_stop(t); /* ended, or about to: must reach nobody else */
            break;
        }
        default: {
            uint64_t k = atomic_load(&churn_key);
            bthread_key_delete((bthread_key_t){(uint32_t)(k >> 32), (uint32_t)k});
            bthread_key_t nk;
            CHECK(bthread_key_create(&nk, churn_dtor) == 0);
            atomic_store(&churn_key, (uint64_t)nk.index << 32 | nk.version);
        }
        }
        usleep(200 + rnd(&s) % 300);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long seconds = argc > 1 ? strtol(argv[1], NULL, 10) : 30;
    if (seconds < 1) {
        fprintf(stderr, "usage: soak [seconds >= 1]\n");
        return 2;
    }
    alarm((unsigned)seconds + 120); /* a hang ends the run with SIGALRM */
    CHECK(bthread_setconcurrency(2) == 0);
    CHECK(bthread_mutex_init(&mu, NULL) == 0);
    CHECK(bthread_cond_init(&cv, NULL) == 0);
    CHECK(bthread_sem_init(&sem, 0) == 0);
    CHECK(bthread_key_create(&stable_key, stable_dtor) == 0);
    bthread_key_t ck;
    CHECK(bthread_key_create(&ck, churn_dtor) == 0);
    atomic_store(&churn_key, (uint64_t)ck.index << 32 | ck.version);
    pthread_t helpers[4];
    for (long i = 0; i < 4; i++)
        CHECK(pthread_create(&helpers[i], NULL, helper, (void *)(intptr_t)i) == 0);
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long rounds = 0;
    uint64_t seed = (uint64_t)t0.tv_nsec | 1;
    do {
        for (int i = 0; i < JOBS; i++) {
            jobs[i].kind = (int)(rnd(&seed) % KINDS);
            jobs[i].seed = rnd(&seed) | 1;
            atomic_store(&jobs[i].ran, 0);
            atomic_store(&jobs[i].tid, 0);
        }
        pthread_t st[STARTERS];
        for (long k = 0; k < STARTERS; k++)
            CHECK(pthread_create(&st[k], NULL, starter, (void *)(intptr_t)k) == 0);
        for (int k = 0; k < STARTERS; k++)
            pthread_join(st[k], NULL);
        for (int i = 0; i < JOBS; i++)
            CHECK(bthread_join(atomic_load(&jobs[i].tid), NULL) == 0);
        for (int i = 0; i < JOBS; i++)
            if (atomic_load(&jobs[i].ran) != 1) {
                fprintf(stderr, "soak: round %ld: job %d ran %d times\n", rounds, i,
                        atomic_load(&jobs[i].ran));
                failures++;
            }
        rounds++;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - t0.tv_sec < seconds && !failures);
    atomic_store(&stop_helpers, 1);
    for (int i = 0; i < 4; i++)
        pthread_join(helpers[i], NULL);
    long ws = atomic_load(&waits_started), we = atomic_load(&waits_ended);
    long vs = atomic_load(&values_set), dr = atomic_load(&dtor_runs);
    if (ws != we) {
        fprintf(stderr, "soak: %ld waits started, %ld ended\n", ws, we);
        failures++;
    }
    if (vs != dr) {
        fprintf(stderr, "soak: %ld values set under the stable key, %ld destructor calls\n", vs,
                dr);
        failures++;
    }
    if (atomic_load(&counter) != atomic_load(&expected)) {
        fprintf(stderr, "soak: counter %ld, expected %ld\n", atomic_load(&counter),
                atomic_load(&expected));
        failures++;
    }
    if (bthread_shutdown() != 0)
        failures++;
    printf("soak %s: %ld rounds, %ld bthreads, %ld waits, %ld destructor calls: %s\n",
           bthread_variant_name(), rounds, rounds * JOBS, we, dr, failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
