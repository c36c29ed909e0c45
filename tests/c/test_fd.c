/*
 * test_fd.c -- bthread_fd_wait / bthread_fd_timedwait (common/fd.c), every variant.
 *
 * Each test runs in its own process on 2 workers.  Threads record failures with CHECK
 * and the test's main thread asserts (cr_assert must not longjmp off a bthread's stack).
 * Timed waits must end no earlier than their deadline and at most LATE_MS after it.
 */
#include "sbtest.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bthread.h"
#include "fd_internal.h"

#define LATE_MS 200

#include "thread_checks.h"

static void setup(void) { cr_assert_eq(bthread_setconcurrency(2), 0); }
TestSuite(fd, .init = setup);

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}
static struct timespec deadline_in_ms(int64_t ms)
{
    const int64_t at = now_ns() + ms * 1000000;
    return (struct timespec){.tv_sec = at / 1000000000, .tv_nsec = at % 1000000000};
}
static int ended_in_bound(const struct timespec *dl)
{
    const int64_t late = now_ns() - ((int64_t)dl->tv_sec * 1000000000 + dl->tv_nsec);
    return late >= 0 && late <= (int64_t)LATE_MS * 1000000;
}

static void make_pair(int fds[2], int use_pipe)
{
    if (use_pipe)
        cr_assert_eq(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0, "pipe2: %s", strerror(errno));
    else
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds),
                     0, "socketpair: %s", strerror(errno));
}

/* Is fd registered for EPOLLIN in one of this process's epoll instances (the
 * dispatcher's)?  Read from /proc/self/fdinfo, so a test waits for the state it needs
 * (a bthread armed on fd) instead of sleeping and hoping. */
static int fd_armed(int fd)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 0;
    int found = 0;
    struct dirent *de;
    while (!found && (de = readdir(d))) {
        char path[300], link[64];
        snprintf(path, sizeof path, "/proc/self/fd/%s", de->d_name);
        const ssize_t n = readlink(path, link, sizeof link - 1);
        if (n < 0)
            continue;
        link[n] = 0;
        if (strcmp(link, "anon_inode:[eventpoll]") != 0)
            continue;
        snprintf(path, sizeof path, "/proc/self/fdinfo/%s", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        char line[256];
        while (!found && fgets(line, sizeof line, f)) {
            int tfd;
            unsigned events;
            if (sscanf(line, "tfd: %d events: %x", &tfd, &events) == 2 && tfd == fd &&
                (events & EPOLLIN))
                found = 1;
        }
        fclose(f);
    }
    closedir(d);
    return found;
}

static void wait_armed(int fd)
{
    while (!fd_armed(fd))
        usleep(1000); /* bounded by the test's timeout */
}

/* Read one byte from a non-blocking fd, waiting with bthread_fd_wait while empty.
 * Returns the byte, or -1.  *waits counts the waits that were needed. */
static int read_byte_waiting(int fd, const struct timespec *abstime, long *waits)
{
    for (;;) {
        unsigned char c;
        const ssize_t r = read(fd, &c, 1);
        if (r == 1)
            return c;
        if (r == 0 || (errno != EAGAIN && errno != EINTR))
            return -1;
        if (bthread_fd_timedwait(fd, EPOLLIN, abstime) != 0)
            return -1;
        ++*waits;
    }
}

/* ---- one waiter ------------------------------------------------------------------ */

typedef struct one_arg {
    int fd;
    int got;
    long waits;
} one_arg_t;

static void *one_reader(void *p)
{
    one_arg_t *a = p;
    const struct timespec dl = deadline_in_ms(10000);
    a->got = read_byte_waiting(a->fd, &dl, &a->waits);
    return NULL;
}

/* A bthread and a pthread each wait on a pipe; a late write wakes them. */
Test(fd, pipe_write_wakes_waiter, .timeout = 20)
{
    int pb[2], pp[2];
    make_pair(pb, 1);
    make_pair(pp, 1);
    one_arg_t ab = {.fd = pb[0]}, ap = {.fd = pp[0]};
    bthread_t b;
    pthread_t p;
    cr_assert_eq(bthread_start_background(&b, NULL, one_reader, &ab), 0);
    cr_assert_eq(pthread_create(&p, NULL, one_reader, &ap), 0);
    wait_armed(pb[0]); /* the bthread waits */
    cr_assert_eq(write(pb[1], "x", 1), 1);
    cr_assert_eq(write(pp[1], "y", 1), 1);
    cr_assert_eq(bthread_join(b, NULL), 0);
    cr_assert_eq(pthread_join(p, NULL), 0);
    cr_assert_eq(ab.got, 'x');
    cr_assert_eq(ap.got, 'y');
    cr_assert_geq(ab.waits, 1); /* it really waited (the write came after it armed) */
    for (int i = 0; i < 2; i++) {
        close(pb[i]);
        close(pp[i]);
    }
}

/* ---- thousands of waiters ---------------------------------------------------------- */

#define MANY_BTHREADS 2000
#define MANY_PTHREADS 8
#define MANY (MANY_BTHREADS + MANY_PTHREADS)

typedef struct many_shared {
    int rd[MANY], wr[MANY];
    int got[MANY];
    _Atomic int started;
    _Atomic long waits;
} many_shared_t;
typedef struct many_arg {
    many_shared_t *s;
    int i;
} many_arg_t;

static void *many_reader(void *p)
{
    many_arg_t *a = p;
    many_shared_t *s = a->s;
    /* release: the writer starts after seeing everyone started (stats only, really). */
    atomic_fetch_add_explicit(&s->started, 1, memory_order_release);
    const struct timespec dl = deadline_in_ms(30000);
    long waits = 0;
    s->got[a->i] = read_byte_waiting(s->rd[a->i], &dl, &waits);
    atomic_fetch_add_explicit(&s->waits, waits, memory_order_relaxed); /* after join */
    return NULL;
}

static void *many_writer(void *p)
{
    many_shared_t *s = p;
    /* acquire: pairs with the readers' increments. */
    while (atomic_load_explicit(&s->started, memory_order_acquire) < MANY)
        usleep(1000);
    usleep(20000); /* let them reach their waits */
    /* Write in a scrambled order (i * 7919 mod MANY visits every index: 7919 is prime
     * and does not divide MANY). */
    for (long k = 0; k < MANY; k++) {
        const int i = (int)((k * 7919) % MANY);
        const unsigned char c = (unsigned char)(i % 251);
        CHECK(write(s->wr[i], &c, 1) == 1);
    }
    return NULL;
}

Test(fd, thousands_of_bthreads_each_on_its_own_fd, .timeout = 90)
{
    /* 2 fds per waiter, plus the harness's: make sure the soft limit allows it. */
    struct rlimit rl;
    cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    const rlim_t need = 2 * MANY + 64;
    if (rl.rlim_cur < need) {
        if (rl.rlim_max < need)
            cr_skip_test("RLIMIT_NOFILE hard limit %lu < %lu", (unsigned long)rl.rlim_max,
                         (unsigned long)need);
        rl.rlim_cur = need;
        cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
    }
    many_shared_t *s = calloc(1, sizeof *s);
    many_arg_t *args = calloc(MANY, sizeof *args);
    bthread_t *bt = calloc(MANY_BTHREADS, sizeof *bt);
    cr_assert(s && args && bt);
    for (int i = 0; i < MANY; i++) {
        int fds[2];
        make_pair(fds, i % 2); /* pipes and socketpairs alternate */
        s->rd[i] = fds[0];
        s->wr[i] = fds[1];
        args[i] = (many_arg_t){s, i};
    }
    pthread_t pt[MANY_PTHREADS], writer;
    for (int i = 0; i < MANY_BTHREADS; i++)
        cr_assert_eq(bthread_start_background(&bt[i], &BTHREAD_ATTR_SMALL, many_reader,
                                              &args[i]),
                     0);
    for (int i = 0; i < MANY_PTHREADS; i++)
        cr_assert_eq(pthread_create(&pt[i], NULL, many_reader, &args[MANY_BTHREADS + i]), 0);
    cr_assert_eq(pthread_create(&writer, NULL, many_writer, s), 0);
    for (int i = 0; i < MANY_BTHREADS; i++)
        cr_assert_eq(bthread_join(bt[i], NULL), 0);
    for (int i = 0; i < MANY_PTHREADS; i++)
        cr_assert_eq(pthread_join(pt[i], NULL), 0);
    cr_assert_eq(pthread_join(writer, NULL), 0);
    assert_no_failures();
    for (int i = 0; i < MANY; i++)
        cr_assert_eq(s->got[i], i % 251, "waiter %d got %d", i, s->got[i]);
    cr_log_info("%d waiters, %ld fd waits\n", MANY, (long)s->waits);
    cr_assert_geq(s->waits, MANY / 2); /* most of them really waited */
    for (int i = 0; i < MANY; i++) {
        close(s->rd[i]);
        close(s->wr[i]);
    }
    free(bt);
    free(args);
    free(s);
}

/* ---- deadlines, interrupts, errors --------------------------------------------------- */

static void *timed_semantics(void *unused)
{
    (void)unused;
    int fds[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) == 0);
    struct timespec dl = deadline_in_ms(50);
    errno = 0;
    CHECK(bthread_fd_timedwait(fds[0], EPOLLIN, &dl) == -1);
    CHECK(errno == ETIMEDOUT);
    CHECK(ended_in_bound(&dl));
    dl = deadline_in_ms(-5); /* already past, nothing to read */
    CHECK(bthread_fd_timedwait(fds[0], EPOLLIN, &dl) == -1 && errno == ETIMEDOUT);
    CHECK(ended_in_bound(&dl));
    /* The timed-out wait left no registration behind: the fd can be waited on again. */
    CHECK(write(fds[1], "z", 1) == 1);
    dl = deadline_in_ms(5000);
    CHECK(bthread_fd_timedwait(fds[0], EPOLLIN, &dl) == 0);
    /* Writable at once. */
    CHECK(bthread_fd_timedwait(fds[1], EPOLLOUT, &dl) == 0);
    CHECK(bthread_fd_wait(fds[1], EPOLLOUT) == 0);
    /* Bad arguments. */
    CHECK(bthread_fd_wait(-1, EPOLLIN) == -1 && errno == EINVAL);
    CHECK(bthread_fd_wait(fds[0], 0) == -1 && errno == EINVAL);
    const struct timespec bad = {.tv_sec = 0, .tv_nsec = -1};
    CHECK(bthread_fd_timedwait(fds[0], EPOLLIN, &bad) == -1 && errno == EINVAL);
    close(fds[0]);
    close(fds[1]);
    CHECK(bthread_fd_timedwait(fds[0], EPOLLIN, &dl) == -1 && errno == EBADF);
    /* A regular file is always ready (as poll(2) says). */
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (f) {
        CHECK(bthread_fd_wait(fileno(f), EPOLLIN) == 0);
        fclose(f);
    }
    return NULL;
}

Test(fd, timedwait_errors_and_readiness, .timeout = 20)
{
    timed_semantics(NULL); /* pthread: poll(2) */
    bthread_t b;
    cr_assert_eq(bthread_start_background(&b, NULL, timed_semantics, NULL), 0);
    cr_assert_eq(bthread_join(b, NULL), 0);
    assert_no_failures();
}

/* A readable fd with a deadline that is past, now, or about to pass. */
static void *ready_with_expiring_deadlines(void *unused)
{
    (void)unused;
    int fds[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) == 0);
    CHECK(write(fds[1], "r", 1) == 1);
    int ready = 0;
    for (int i = 0; i < 200; i++) {
        const struct timespec dl = deadline_in_ms(i % 3 - 1); /* -1, 0, +1 ms */
        ready += bthread_fd_timedwait(fds[0], EPOLLIN, &dl) == 0;
    }
    const struct timespec epoch = {0, 0};
    ready += bthread_fd_timedwait(fds[0], EPOLLIN, &epoch) == 0;
    CHECK(ready == 201);
    close(fds[0]);
    close(fds[1]);
    return NULL;
}

/* Ready is ready whatever the caller and the deadline, as poll with a zero timeout says. */
Test(fd, ready_fd_with_expired_deadline_is_ready_for_every_caller, .timeout = 20)
{
    ready_with_expiring_deadlines(NULL); /* pthread: ppoll */
    assert_no_failures();
    bthread_t b;
    cr_assert_eq(bthread_start_background(&b, NULL, ready_with_expiring_deadlines, NULL), 0);
    cr_assert_eq(bthread_join(b, NULL), 0);
    assert_no_failures();
}

typedef struct intr_arg {
    int fd;
    int rc, err;
    _Atomic int entered;
} intr_arg_t;

static void *intr_waiter(void *p)
{
    intr_arg_t *a = p;
    atomic_store_explicit(&a->entered, 1, memory_order_relaxed); /* a hint only */
    const struct timespec dl = deadline_in_ms(10000);
    a->rc = bthread_fd_timedwait(a->fd, EPOLLIN, &dl);
    a->err = errno;
    return NULL;
}

/* bthread_interrupt ends a bthread's fd wait with EINTR (and unregisters it). */
Test(fd, interrupt_ends_wait, .timeout = 20)
{
    int fds[2];
    make_pair(fds, 0);
    intr_arg_t a = {.fd = fds[0]};
    bthread_t b;
    cr_assert_eq(bthread_start_background(&b, NULL, intr_waiter, &a), 0);
    wait_armed(fds[0]);
    const int64_t t0 = now_ns();
    cr_assert_eq(bthread_interrupt(b), 0);
    cr_assert_eq(bthread_join(b, NULL), 0);
    cr_assert_eq(a.rc, -1);
    cr_assert_eq(a.err, EINTR, "errno %d", a.err);
    cr_assert_lt(now_ns() - t0, 5000000000LL); /* long before its deadline */
    /* Re-waitable afterwards. */
    a.entered = 0;
    cr_assert_eq(write(fds[1], "q", 1), 1);
    cr_assert_eq(bthread_start_background(&b, NULL, intr_waiter, &a), 0);
    cr_assert_eq(bthread_join(b, NULL), 0);
    cr_assert_eq(a.rc, 0);
    close(fds[0]);
    close(fds[1]);
}

typedef struct dup_shared {
    int fd;
    int rc[2], err[2];
    _Atomic int returned;
} dup_shared_t;
typedef struct dup_arg {
    dup_shared_t *s;
    int i;
} dup_arg_t;

static void *dup_waiter(void *p)
{
    dup_arg_t *a = p;
    const struct timespec dl = deadline_in_ms(10000);
    a->s->rc[a->i] = bthread_fd_timedwait(a->s->fd, EPOLLIN, &dl);
    a->s->err[a->i] = errno;
    /* release: the main thread reads rc/err after seeing this. */
    atomic_fetch_add_explicit(&a->s->returned, 1, memory_order_release);
    return NULL;
}

/* The documented limit: one bthread waiter per fd at a time; the second gets EEXIST. */
Test(fd, second_bthread_waiter_on_same_fd_gets_eexist, .timeout = 20)
{
    int fds[2];
    make_pair(fds, 0);
    dup_shared_t s = {.fd = fds[0]};
    dup_arg_t args[2] = {{&s, 0}, {&s, 1}};
    bthread_t b[2];
    for (int i = 0; i < 2; i++)
        cr_assert_eq(bthread_start_background(&b[i], NULL, dup_waiter, &args[i]), 0);
    /* The refused one returns at once; the other waits for the write. */
    for (int i = 0; i < 5000 && atomic_load_explicit(&s.returned, memory_order_acquire) == 0;
         i++)
        bthread_usleep(1000);
    cr_assert_eq(atomic_load_explicit(&s.returned, memory_order_acquire), 1);
    cr_assert_eq(write(fds[1], "e", 1), 1);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(bthread_join(b[i], NULL), 0);
    const int refused = s.rc[0] == -1 ? 0 : 1;
    cr_assert_eq(s.rc[refused], -1);
    cr_assert_eq(s.err[refused], EEXIST, "errno %d", s.err[refused]);
    cr_assert_eq(s.rc[!refused], 0);
    close(fds[0]);
    close(fds[1]);
}

/* A bthread's wait on an fd that is closed meanwhile while a duplicate keeps the file
 * open leaves its registration in epoll (keyed on file and number; the waiter's DEL
 * fails on the closed number).  Once the number names that file again, later waits on
 * it still work: none fails with EEXIST, and a real wait is woken by the data. */
Test(fd, leftover_registration_of_a_closed_fd_never_blocks_later_waits, .timeout = 20)
{
#ifdef SB_UNDER_TSAN /* sbtest.h: built with -fsanitize=thread */
    cr_skip_test("TSan reports closing an fd that another thread waits on, the case tested");
#endif
    int fds[2];
    make_pair(fds, 0);
    const int num = fds[0];
    intr_arg_t a = {.fd = num};
    bthread_t b;
    cr_assert_eq(bthread_start_background(&b, NULL, intr_waiter, &a), 0);
    wait_armed(num);
    const int keep = dup(num);
    cr_assert_geq(keep, 0);
    cr_assert_eq(close(num), 0);
    cr_assert_eq(bthread_interrupt(b), 0); /* the close alone does not wake it */
    cr_assert_eq(bthread_join(b, NULL), 0);
    cr_assert_eq(a.rc, -1);
    cr_assert_eq(a.err, EINTR, "errno %d", a.err);
    cr_assert_eq(dup2(keep, num), num); /* the same number names the same file again */
    cr_assert_eq(close(keep), 0);
    for (int round = 0; round < 3; round++) {
        a.entered = 0;
        cr_assert_eq(bthread_start_background(&b, NULL, intr_waiter, &a), 0);
        bthread_usleep(20000); /* usually asleep in the wait by now */
        cr_assert_eq(write(fds[1], "l", 1), 1);
        cr_assert_eq(bthread_join(b, NULL), 0);
        cr_assert_eq(a.rc, 0, "round %d: errno %d", round, a.err);
        char c;
        cr_assert_eq(read(num, &c, 1), 1);
    }
    close(num);
    close(fds[1]);
}

static void *wait_readable(void *p)
{
    const int fd = *(int *)p;
    const struct timespec dl = deadline_in_ms(10000);
    CHECK(bthread_fd_timedwait(fd, EPOLLIN, &dl) == 0);
    return NULL;
}

/* bthread_fd_shutdown_internal stops the dispatcher; the next wait starts a new one. */
Test(fd, dispatcher_restarts_after_shutdown, .timeout = 20)
{
    for (int round = 0; round < 3; round++) {
        int fds[2];
        make_pair(fds, round % 2);
        bthread_t b;
        cr_assert_eq(bthread_start_background(&b, NULL, wait_readable, &fds[0]), 0);
        bthread_usleep(10000);
        cr_assert_eq(write(fds[1], "r", 1), 1);
        cr_assert_eq(bthread_join(b, NULL), 0);
        bthread_fd_shutdown_internal(); /* nobody waits now */
        bthread_fd_shutdown_internal(); /* idempotent */
        close(fds[0]);
        close(fds[1]);
    }
    assert_no_failures();
}

/* The same through the public API: bthread_shutdown() stops the dispatcher with the
 * scheduler, and a restarted scheduler waits on fds again. */
Test(fd, works_across_bthread_shutdown, .timeout = 30)
{
    for (int round = 0; round < 2; round++) {
        int fds[2];
        make_pair(fds, round % 2);
        bthread_t b;
        cr_assert_eq(bthread_start_background(&b, NULL, wait_readable, &fds[0]), 0);
        bthread_usleep(10000);
        cr_assert_eq(write(fds[1], "s", 1), 1);
        cr_assert_eq(bthread_join(b, NULL), 0);
        cr_assert_eq(bthread_shutdown(), 0);
        cr_assert_eq(bthread_setconcurrency(2), 0);
        close(fds[0]);
        close(fds[1]);
    }
    assert_no_failures();
}

/* ---- a number closed and reused while a bthread waits on it ------------------------ */

typedef struct reuse_arg {
    int fd;
    int64_t deadline_ms; /* from the start; 0: none */
    int rc, err;
    int64_t returned_ns;
} reuse_arg_t;

static void *reuse_waiter(void *p)
{
    reuse_arg_t *a = p;
    const struct timespec dl = deadline_in_ms(a->deadline_ms);
    a->rc = bthread_fd_timedwait(a->fd, EPOLLIN, a->deadline_ms ? &dl : NULL);
    a->err = errno;
    a->returned_ns = now_ns();
    return NULL;
}

/* A waits on number N; N is closed and names a new pipe; B waits on N.  When A leaves
 * (its deadline, or an interrupt) it must not remove B's registration: B is woken by
 * the data on the new pipe, not at its deadline.  Before the owner check, A's DEL on
 * the number removed B's registration (3/3 runs, every variant). */
static void reused_number_keeps_the_new_waiter(int interrupt_a)
{
    int p1[2], p2[2];
    make_pair(p1, 1);
    const int num = p1[0];
    reuse_arg_t a = {.fd = num, .deadline_ms = interrupt_a ? 20000 : 300};
    bthread_t ta, tb;
    cr_assert_eq(bthread_start_background(&ta, NULL, reuse_waiter, &a), 0);
    wait_armed(num);
    make_pair(p2, 1); /* while num is open, so p2's numbers differ from it */
    cr_assert_eq(close(num), 0); /* epoll drops A's registration with the file */
    close(p1[1]);
    cr_assert_eq(dup2(p2[0], num), num); /* the number names the new pipe */
    cr_assert_eq(close(p2[0]), 0);
    reuse_arg_t b = {.fd = num, .deadline_ms = 20000};
    cr_assert_eq(bthread_start_background(&tb, NULL, reuse_waiter, &b), 0);
    wait_armed(num); /* B's registration */
    if (interrupt_a)
        cr_assert_eq(bthread_interrupt(ta), 0);
    cr_assert_eq(bthread_join(ta, NULL), 0);
    cr_assert_eq(a.rc, -1);
    cr_assert_eq(a.err, interrupt_a ? EINTR : ETIMEDOUT, "A's errno %d", a.err);
    cr_assert(fd_armed(num), "A's leaving removed B's registration");
    const int64_t wrote = now_ns();
    cr_assert_eq(write(p2[1], "n", 1), 1);
    cr_assert_eq(bthread_join(tb, NULL), 0);
    cr_assert_eq(b.rc, 0, "B's errno %d", b.err);
    cr_assert_lt(b.returned_ns - wrote, 10000000000LL,
                 "B was woken at its deadline, not by the data");
    close(num);
    close(p2[1]);
}

Test(fd, a_timed_out_waiter_leaves_a_reused_numbers_new_waiter_armed, .timeout = 60)
{
#ifdef SB_UNDER_TSAN
    cr_skip_test("TSan reports closing an fd that another thread waits on, the case tested");
#endif
    reused_number_keeps_the_new_waiter(0);
}

Test(fd, an_interrupted_waiter_leaves_a_reused_numbers_new_waiter_armed, .timeout = 60)
{
#ifdef SB_UNDER_TSAN
    cr_skip_test("TSan reports closing an fd that another thread waits on, the case tested");
#endif
    reused_number_keeps_the_new_waiter(1);
}

/* bthread_close wakes the bthread waiting on the number (brpc's bthread_close), whose
 * next read then says EBADF; a plain close does not (the documented limitation). */
Test(fd, bthread_close_wakes_the_waiter, .timeout = 30)
{
#ifdef SB_UNDER_TSAN
    cr_skip_test("TSan reports closing an fd that another thread waits on, the case tested");
#endif
    int fds[2];
    make_pair(fds, 0);
    reuse_arg_t a = {.fd = fds[0]}; /* no deadline: only the close can end it */
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, reuse_waiter, &a), 0);
    wait_armed(fds[0]);
    cr_assert_eq(bthread_close(fds[0]), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
    cr_assert_eq(a.rc, 0, "errno %d", a.err);
    char c;
    cr_assert_eq(read(fds[0], &c, 1), -1);
    cr_assert_eq(errno, EBADF);
    cr_assert(!fd_armed(fds[0]), "the registration outlived the close");
    cr_assert_eq(bthread_close(-1), -1);
    cr_assert_eq(errno, EBADF);
    close(fds[1]);
}

/* ---- bthread_connect ---------------------------------------------------------------- */

typedef struct conn_arg {
    struct sockaddr_in addr;
    int fd, rc, err, flags_before, flags_after;
} conn_arg_t;

static void *connector(void *p)
{
    conn_arg_t *a = p;
    a->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    a->flags_before = fcntl(a->fd, F_GETFL);
    const struct timespec dl = deadline_in_ms(10000);
    a->rc = bthread_timed_connect(a->fd, (struct sockaddr *)&a->addr, sizeof a->addr, &dl);
    a->err = errno;
    a->flags_after = fcntl(a->fd, F_GETFL);
    return NULL;
}

/* From a bthread: a connect to a listening socket succeeds and leaves the socket as
 * blocking as it was; one to a closed port fails with ECONNREFUSED. */
Test(fd, bthread_connect_connects_and_reports_refusal, .timeout = 30)
{
    const int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert_geq(ls, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    cr_assert_eq(bind(ls, (struct sockaddr *)&addr, sizeof addr), 0);
    cr_assert_eq(listen(ls, 4), 0);
    cr_assert_eq(getsockname(ls, (struct sockaddr *)&addr, &len), 0);
    conn_arg_t a = {.addr = addr};
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, connector, &a), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
    cr_assert_eq(a.rc, 0, "errno %d", a.err);
    cr_assert_eq(a.flags_after, a.flags_before, "the socket's flags changed");
    const int c = accept(ls, NULL, NULL);
    cr_assert_geq(c, 0);
    close(c);
    close(a.fd);
    close(ls); /* now nothing listens on the port */
    conn_arg_t r = {.addr = addr};
    cr_assert_eq(bthread_start_background(&t, NULL, connector, &r), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
    cr_assert_eq(r.rc, -1);
    cr_assert_eq(r.err, ECONNREFUSED, "errno %d", r.err);
    close(r.fd);
    /* from this pthread, without a deadline: a plain connect */
    const int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert_eq(bthread_connect(s, (struct sockaddr *)&addr, sizeof addr), -1);
    cr_assert_eq(errno, ECONNREFUSED);
    close(s);
}
