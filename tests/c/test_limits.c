/*
 * test_limits.c -- running out, on every variant: memory and thread exhaustion fail
 * cleanly.  When no stack can be made a task still runs on the reserve stack; exhausted
 * stacks fail starts with EAGAIN while every started task runs; worker threads that
 * cannot start are reported, not fatal; a frame larger than the guard page faults
 * instead of jumping it.
 *
 * Tests that need an address-space limit run it in a forked child (setrlimit in the
 * child only); the parent bounds the child's time and reads its exit status.  They are
 * skipped under the sanitizers, whose shadow memory does not fit such limits, and under
 * an emulator, whose own reservations share the limit.
 */
#include "sbtest.h"
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bthread.h"
#include "child.h"
#include "stack.h" /* stack_test_inject */

/* ---- a child process under an address-space limit --------------------------------- */
static long vm_size_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024;
}

/* In a child only: let the address space grow by headroom bytes from here. */
static bool limit_as(long headroom)
{
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = (rlim_t)(vm_size_bytes() + headroom);
    return setrlimit(RLIMIT_AS, &rl) == 0;
}

static void nap(void) { usleep(10000); }

/* Run fn in a child whose address space may grow by `headroom` bytes (0: fn sets its
 * own limit); fn's return value is the child's exit status.  The child is killed after
 * timeout_s.  Returns the status (0 = passed), or 128 + signal. */
static int in_limited_child(int (*fn)(void), long headroom, int timeout_s)
{
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        if (headroom && !limit_as(headroom))
            _exit(99);
        _exit(fn());
    }
    return child_status_within(pid, timeout_s, nap); /* 200: timed out, a deadlock */
}

/* An address-space limit cannot be set for the tested code alone where something else
 * shares its process: a sanitizer's shadow memory, or qemu-user's own reservations
 * (tests/rules.mk sets SB_EMULATED there).  Such a test is skipped, saying why. */
static void skip_if_address_space_is_shared(void)
{
    if (SB_SANITIZED)
        cr_skip_test("a sanitizer's shadow memory does not fit an RLIMIT_AS");
    if (getenv("SB_EMULATED"))
        cr_skip_test("RLIMIT_AS would limit the emulator (%s), not the tested code", getenv("SB_EMULATED"));
}

/* ---- stacks exhausted: no task runs on a worker's own stack ------------------------ */
static struct {
    bthread_mutex_t m;
    bthread_cond_t c;
    int go;
    _Atomic long ran;
} ex;

static void *waits_for_go(void *p)
{
    (void)p;
    bthread_mutex_lock(&ex.m);
    while (!ex.go)
        bthread_cond_wait(&ex.c, &ex.m);
    bthread_mutex_unlock(&ex.m);
    atomic_fetch_add(&ex.ran, 1);
    return NULL;
}

static int exhaust_stacks(void)
{
    if (bthread_setconcurrency(2) != 0)
        return 1;
    bthread_mutex_init(&ex.m, NULL);
    bthread_cond_init(&ex.c, NULL);
    enum { MAX = 20000 };
    static bthread_t ids[MAX];
    long started = 0;
    int rc = 0;
    while (started < MAX &&
           (rc = bthread_start_background(&ids[started], NULL, waits_for_go, NULL)) == 0) {
        started++;
        if (started % 64 == 0)
            usleep(1000); /* let the workers give them stacks */
    }
    if (started == MAX || rc != EAGAIN)
        return 2; /* the limit never bit, or a wrong error */
    bthread_mutex_lock(&ex.m);
    ex.go = 1;
    bthread_cond_broadcast(&ex.c);
    bthread_mutex_unlock(&ex.m);
    for (long i = 0; i < started; i++)
        if (bthread_join(ids[i], NULL) != 0)
            return 3;
    if (atomic_load(&ex.ran) != started)
        return 4;
    return 0;
}

/* No stack can be made at all (every mmap fails, no slab either) while no task holds
 * one: started tasks still run, one after another, on the reserve stack the start-up
 * set aside; a task that waits meanwhile is run when the reserve comes back; starts
 * fail with EAGAIN while one waits.  Without the reserve, the first task would wait
 * forever for a stack nobody gives back (the join hangs). */
static void *waits_for_sem(void *p)
{
    bthread_sem_wait(p);
    return NULL;
}

static void *returns_at_once(void *p) { return p; }

static int no_stack_can_be_made(void)
{
    if (bthread_setconcurrency(2) != 0)
        return 1;
    /* start the scheduler with a task that needs no stack: none is made or cached */
    bthread_t t0;
    if (bthread_start_background(&t0, &BTHREAD_ATTR_PTHREAD, returns_at_once, NULL) != 0 ||
        bthread_join(t0, NULL) != 0)
        return 7;
    stack_test_inject(1u << 30, 0, true);
    for (int i = 0; i < 10; i++) {
        bthread_t t;
        if (bthread_start_background(&t, NULL, returns_at_once, NULL) != 0 ||
            bthread_join(t, NULL) != 0)
            return 2;
    }
    bthread_sem_t sem;
    bthread_sem_init(&sem, 0);
    bthread_t a, b;
    if (bthread_start_background(&a, NULL, waits_for_sem, &sem) != 0)
        return 3; /* a holds the reserve, blocked */
    if (bthread_start_background(&b, NULL, waits_for_sem, &sem) != 0)
        return 4; /* b: no stack, waits for one */
    /* starts succeed until a worker has found no stack for b (or for one of these),
     * then fail with EAGAIN */
    enum { MANY = 100000 };
    static bthread_t c[MANY];
    int n = 0, rc;
    while (n < MANY && (rc = bthread_start_background(&c[n], NULL, returns_at_once, NULL)) == 0) {
        n++;
        usleep(100);
    }
    if (n == MANY || rc != EAGAIN)
        return 5;
    bthread_sem_post_n(&sem, 2);
    if (bthread_join(a, NULL) != 0 || bthread_join(b, NULL) != 0)
        return 6;
    for (int i = 0; i < n; i++) /* each on the reserve in turn */
        if (bthread_join(c[i], NULL) != 0)
            return 8;
    return 0;
}

Test(limits, a_task_never_waits_for_a_stack_that_no_task_holds, .timeout = 60)
{
    int st = in_limited_child(no_stack_can_be_made, 0, 30);
    cr_assert_eq(st, 0, "child status %d (200: hung)", st);
}

Test(limits, exhausted_stacks_fail_starts_and_every_started_task_runs, .timeout = 60)
{
    skip_if_address_space_is_shared();
    /* 1 MiB stacks: about 150 fit in 192 MiB beside two 8 MiB worker stacks */
    int st = in_limited_child(exhaust_stacks, 192l << 20, 40);
    cr_assert_eq(st, 0, "child status %d (200: deadlock)", st);
}

/* ---- worker threads that cannot start ---------------------------------------------- */
static void *nop(void *p) { return p; }

/* At start-up: the workers that started run, and nothing aborts.  The workers' stacks
 * and arenas take the headroom, and a start either runs its task or returns EAGAIN:
 * never a task that waits forever for a stack nobody holds (without a reserve per stack
 * class, the join hung in 3-4 of 6 runs). */
static int too_many_workers_at_start(void)
{
    if (bthread_setconcurrency(200) != 0)
        return 1;
    bthread_t t;
    int rc = bthread_start_background(&t, NULL, nop, NULL);
    if (rc != 0 && rc != EAGAIN)
        return 3;
    if (rc == 0 && bthread_join(t, NULL) != 0)
        return 5;
    int n = bthread_getconcurrency();
    return n >= 1 && n < 200 ? 0 : 4;
}

/* Growing a running scheduler: EAGAIN (EPERM where the worker count is fixed), and the
 * workers it has keep running tasks. */
static int too_many_workers_later(void)
{
    if (bthread_setconcurrency(2) != 0)
        return 1;
    bthread_t t;
    if (bthread_start_background(&t, NULL, nop, NULL) != 0 || bthread_join(t, NULL) != 0)
        return 2;
    if (!limit_as(64l << 20))
        return 99;
    bthread_policy_t pol;
    bthread_get_policy(&pol);
    int rc = bthread_setconcurrency(200);
    if (rc != (pol.fixed_workers ? EPERM : EAGAIN)) /* EPERM: a fixed count never grows */
        return 3;
    int n = bthread_getconcurrency();
    if (n < 2 || n >= 200)
        return 4;
    if (bthread_start_background(&t, NULL, nop, NULL) != 0 || bthread_join(t, NULL) != 0)
        return 5;
    return 0;
}

Test(limits, workers_that_cannot_start_are_reported_not_fatal, .timeout = 60)
{
    skip_if_address_space_is_shared();
    /* each worker thread reserves an 8 MiB stack: a few fit in 64 MiB */
    int st = in_limited_child(too_many_workers_at_start, 64l << 20, 40);
    cr_assert_eq(st, 0, "at start-up: child status %d (134: abort)", st);
    st = in_limited_child(too_many_workers_later, 0, 40);
    cr_assert_eq(st, 0, "growing: child status %d", st);
}

/* ---- a frame larger than the guard page does not jump it ---------------------------- */
static bthread_sem_t clash_go;

static __attribute__((noinline)) void touch_ends(volatile char *p, size_t n)
{
    p[0] = 1; /* the lowest byte first: below the guard */
    p[n - 1] = p[0];
}

static __attribute__((noinline)) void big_frame(void)
{
    char buf[48 << 10]; /* more than a whole small stack plus its guard */
    __asm__ __volatile__("" : : "r"(buf) : "memory"); /* it escapes: a real frame */
    touch_ends(buf, sizeof buf);
}

static void *overflows_by_a_big_frame(void *p)
{
    (void)p;
    bthread_sem_wait(&clash_go);
    big_frame();
    return NULL;
}

static void *holds_the_stack_below(void *p)
{
    (void)p;
    bthread_usleep(10 * 1000000);
    return NULL;
}

/* The overflowing task's stack is mapped first, so the next small stack usually lies
 * right below its guard: without -fstack-clash-protection the frame lands there quietly.
 * With it, the compiler probes each page on the way down and faults on the guard. */
Test(limits, a_frame_larger_than_the_guard_faults, .signal = SIGSEGV, .timeout = 20)
{
#ifndef SB_STACK_CLASH_PROTECTION
    cr_skip_test("this compiler has no -fstack-clash-protection (the Makefile's probe)");
#endif
    cr_assert_eq(bthread_setconcurrency(2), 0);
    bthread_sem_init(&clash_go, 0);
    bthread_t a, b;
    bthread_attr_t small = BTHREAD_ATTR_SMALL;
    cr_assert_eq(bthread_start_background(&a, &small, overflows_by_a_big_frame, NULL), 0);
    usleep(20000);
    cr_assert_eq(bthread_start_background(&b, &small, holds_the_stack_below, NULL), 0);
    usleep(20000);
    bthread_sem_post(&clash_go);
    bthread_join(a, NULL);
    bthread_stop(b);
    bthread_join(b, NULL);
}
