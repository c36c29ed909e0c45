/*
 * test_sched.c -- the scheduler core on every variant: spawn/join at scale, nested
 * spawns, brpc's join semantics, calls from foreign pthreads, errno isolation, every
 * stack type, many bthreads alive at once, shutdown and restart, a running scheduler
 * that grows, the guard page, exit, urgent starts, bthread-local storage, and the
 * statistics that show each stated property of the policy (bthread_get_policy) at work.
 */
#include "sbtest.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "bthread.h"
#include "butex.h"

static _Atomic long counter;

static void *count_one(void *arg)
{
    (void)arg;
    atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    return NULL;
}

static void set_workers(int n) { cr_assert_eq(bthread_setconcurrency(n), 0); }

static bthread_policy_t policy(void)
{
    bthread_policy_t p;
    bthread_get_policy(&p);
    return p;
}

/* ---- spawn and join ----------------------------------------------------------------- */
static void *spawner(void *arg)
{
    long total = (long)(intptr_t)arg;
    enum { BATCH = 1000 };
    bthread_t ids[BATCH];
    for (long done = 0; done < total; done += BATCH) {
        for (int i = 0; i < BATCH; i++)
            cr_assert_eq(bthread_start_background(&ids[i], NULL, count_one, NULL), 0);
        for (int i = 0; i < BATCH; i++)
            cr_assert_eq(bthread_join(ids[i], NULL), 0);
    }
    return NULL;
}

Test(sched, a_million_spawns_and_joins, .timeout = 120)
{
    set_workers(2);
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, spawner, (void *)(intptr_t)1000000), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
    cr_assert_eq(atomic_load(&counter), 1000000);
    cr_assert_eq(bthread_shutdown(), 0);
}

typedef struct fib_arg { int n; long r; } fib_arg_t;

static long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

static void *fib(void *p)
{
    fib_arg_t *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return NULL;
    }
    fib_arg_t x = {a->n - 1, 0}, y = {a->n - 2, 0};
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, fib, &x), 0);
    fib(&y);
    cr_assert_eq(bthread_join(t, NULL), 0);
    a->r = x.r + y.r;
    return NULL;
}

Test(sched, nested_spawn_fib_is_right_on_1_and_2_workers, .timeout = 60)
{
#ifdef SB_UNDER_TSAN
    /* TSan keeps per-fiber state in its own maps; on a variant without inline joins
     * (one shared queue) fib(22) has thousands of blocked bthreads and TSan's maps plus the
     * guarded stacks outgrow vm.max_map_count (TSan then aborts in munmap). */
    const int n = 18;
#else
    const int n = 22;
#endif
    for (int w = 1; w <= 2; w++) {
        set_workers(w);
        fib_arg_t a = {n, 0};
        bthread_t t;
        cr_assert_eq(bthread_start_background(&t, NULL, fib, &a), 0);
        cr_assert_eq(bthread_join(t, NULL), 0);
        cr_assert_eq(a.r, fib_seq(n), "workers=%d fib(%d)=%ld", w, n, a.r);
        cr_assert_eq(bthread_getconcurrency(), w);
        cr_assert_eq(bthread_shutdown(), 0);
    }
}

/* ---- join semantics ----------------------------------------------------------------- */
static void *join_self(void *arg)
{
    *(int *)arg = bthread_join(bthread_self(), NULL);
    return NULL;
}

static void *report_self(void *arg)
{
    *(bthread_t *)arg = bthread_self();
    return NULL;
}

Test(sched, join_semantics_follow_brpc, .timeout = 30)
{
    cr_assert_eq(bthread_join(0, NULL), EINVAL);
    cr_assert_eq(bthread_self(), 0);
    int rc = -1;
    bthread_t t, seen = 0;
    cr_assert_eq(bthread_start_background(&t, NULL, join_self, &rc), 0);
    cr_assert_neq(t, 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
    cr_assert_eq(rc, EINVAL, "joining yourself must be EINVAL, got %d", rc);
    cr_assert_eq(bthread_join(t, NULL), 0, "a stale id joins at once");
    cr_assert_eq(bthread_start_background(&t, NULL, report_self, &seen), 0);
    void *ret = (void *)1;
    cr_assert_eq(bthread_join(t, &ret), 0);
    cr_assert_eq(seen, t);
    cr_assert_null(ret);
    cr_assert(bthread_equal(t, seen));
    /* an id whose slot was never handed out */
    cr_assert_eq(bthread_join((1ull << 32) | 0x7ffffff0u, NULL), EINVAL);
    cr_assert_eq(bthread_start_background(&t, NULL, NULL, NULL), EINVAL);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- foreign pthreads ---------------------------------------------------------------- */
static void *foreign(void *arg)
{
    (void)arg;
    bthread_t ids[100];
    for (int round = 0; round < 100; round++) {
        for (int i = 0; i < 100; i++)
            cr_assert_eq(bthread_start_background(&ids[i], NULL, count_one, NULL), 0);
        for (int i = 0; i < 100; i++)
            cr_assert_eq(bthread_join(ids[i], NULL), 0);
    }
    cr_assert_eq(bthread_self(), 0);
    cr_assert_eq(bthread_yield(), 0); /* yields the pthread */
    return NULL;
}

Test(sched, calls_from_foreign_pthreads, .timeout = 60)
{
    set_workers(2);
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, foreign, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    cr_assert_eq(atomic_load(&counter), 40000);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- errno and yields ---------------------------------------------------------------- */
static void *errno_keeper(void *arg)
{
    int mine = (int)(intptr_t)arg;
    for (int i = 0; i < 20000; i++) {
        errno = mine;
        bthread_yield();
        if (errno != mine)
            return (void *)1;
        atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    }
    return NULL;
}

Test(sched, each_bthread_keeps_its_errno_across_yields, .timeout = 60)
{
    set_workers(2);
    bthread_t t[8];
    for (int i = 0; i < 8; i++)
        bthread_start_background(&t[i], NULL, errno_keeper, (void *)(intptr_t)(100 + i));
    for (int i = 0; i < 8; i++)
        bthread_join(t[i], NULL);
    cr_assert_eq(atomic_load(&counter), 8 * 20000, "an errno leaked between bthreads");
    cr_assert_eq(bthread_shutdown(), 0);
}

/* The lazy start-up runs in the caller's thread (hwloc, mmap, thread creation): the
 * caller's errno is as it was, at the first start and at a growth (brpc's
 * BthreadTest.errno_not_changed; a topology-aware victim order's load of the topology
 * can leave ENOENT). */
Test(sched, the_first_start_leaves_the_callers_errno_alone, .timeout = 30)
{
    errno = 4321;
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, count_one, NULL), 0);
    cr_assert_eq(errno, 4321, "the start-up changed errno to %d", errno);
    cr_assert_eq(bthread_join(t, NULL), 0);
    cr_assert_eq(errno, 4321);
    /* a join from a pthread whose task ends between its check and its wait (the wait's
     * EWOULDBLOCK) leaves errno alone too: many tries make that race likely */
    for (int i = 0; i < 2000; i++) {
        errno = 4323;
        cr_assert_eq(bthread_start_background(&t, NULL, count_one, NULL), 0);
        cr_assert_eq(bthread_join(t, NULL), 0);
        cr_assert_eq(errno, 4323, "join %d changed errno to %d", i, errno);
    }
    errno = 4322;
    (void)bthread_setconcurrency(bthread_getconcurrency() + 1); /* EPERM if fixed: fine */
    cr_assert_eq(errno, 4322, "growing changed errno to %d", errno);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* A bthread that yields while it waits for a task queued on a busy worker must let that
 * task run: a yield that finds nothing ready on its own worker still tries a steal now
 * and then (bthread_yield).  Where tasks stay home (keeps_tasks) nothing moves a task to
 * another worker, by design.  `blocker` starts `yielder`, waits (without yielding) until
 * another worker runs it, then queues `releaser` behind itself and spins until it ran:
 * only the yielder's worker can run it. */
static _Atomic int yielder_running, released, blocker_result;

static bool spin_until(_Atomic int *flag, double seconds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!atomic_load(flag)) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) > seconds)
            return false;
    }
    return true;
}

static void *releaser(void *arg)
{
    (void)arg;
    atomic_store(&released, 1);
    return NULL;
}

static void *yielder(void *arg)
{
    (void)arg;
    atomic_store(&yielder_running, 1);
    while (!atomic_load(&released))
        bthread_yield();
    return NULL;
}

static void *blocker(void *arg)
{
    bthread_t *ids = arg;
    bthread_start_background(&ids[0], NULL, yielder, NULL);
    if (!spin_until(&yielder_running, 20)) {
        atomic_store(&blocker_result, 1);
        return NULL;
    }
    bthread_start_background(&ids[1], NULL, releaser, NULL);
    atomic_store(&blocker_result, spin_until(&released, 20) ? 0 : 2);
    return NULL;
}

Test(sched, a_yielding_bthread_lets_work_queued_on_a_busy_worker_run, .timeout = 60)
{
    if (policy().keeps_tasks)
        cr_skip_test("tasks stay home here (keeps_tasks): none moves to another worker");
    set_workers(2);
    bthread_t b, ids[2];
    atomic_store(&blocker_result, -1);
    cr_assert_eq(bthread_start_background(&b, NULL, blocker, ids), 0);
    cr_assert_eq(bthread_join(b, NULL), 0);
    int rc = atomic_load(&blocker_result);
    cr_assert_eq(rc, 0, "%s", rc == 1 ? "the yielder never started on the other worker"
                                      : "the task queued behind the blocker never ran");
    bthread_join(ids[0], NULL);
    bthread_join(ids[1], NULL);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- stack types ---------------------------------------------------------------------- */
static void *use_stack(void *arg)
{
    size_t bytes = (size_t)(uintptr_t)arg;
    volatile char buf[bytes];
    memset((char *)buf, 7, bytes);
    long s = 0;
    for (size_t i = 0; i < bytes; i += 512)
        s += buf[i];
    atomic_fetch_add(&counter, s > 0);
    return NULL;
}

Test(sched, every_stack_type_runs, .timeout = 30)
{
    set_workers(2);
    const bthread_attr_t *attrs[] = {&BTHREAD_ATTR_PTHREAD, &BTHREAD_ATTR_SMALL,
                                     &BTHREAD_ATTR_NORMAL, &BTHREAD_ATTR_LARGE};
    size_t use[] = {16 << 10, 16 << 10, 512 << 10, 4 << 20};
    for (int i = 0; i < 4; i++) {
        bthread_t t;
        cr_assert_eq(bthread_start_background(&t, attrs[i], use_stack, (void *)(uintptr_t)use[i]), 0);
        bthread_attr_t got;
        if (bthread_getattr(t, &got) == 0)
            cr_assert_eq(got.stack_type, attrs[i]->stack_type);
        cr_assert_eq(bthread_join(t, NULL), 0);
    }
    bthread_attr_t a;
    cr_assert_eq(bthread_attr_init(&a), 0);
    cr_assert_eq(a.stack_type, BTHREAD_STACKTYPE_NORMAL);
    cr_assert_eq(bthread_attr_destroy(&a), 0);
    cr_assert_eq(atomic_load(&counter), 4);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* 64 frames of 1 KiB each, every byte written, reached through a volatile pointer so
 * no compiler can inline, merge or shrink them: twice a small stack, touched from the
 * top down, so the first access past the stack lands on the guard page. */
static int use_frames(int depth);
static int (*volatile use_frames_ptr)(int) = use_frames;

static int use_frames(int depth)
{
    volatile char pad[1024];
    for (size_t i = sizeof pad; i-- > 0;)
        pad[i] = (char)depth;
    if (depth == 0)
        return pad[0];
    return use_frames_ptr(depth - 1) + pad[sizeof pad / 2];
}

static void *overflow(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)use_frames_ptr(64);
}

Test(sched, overflowing_a_stack_hits_the_guard_page, .signal = SIGSEGV, .timeout = 30)
{
    bthread_t t;
    bthread_start_background(&t, &BTHREAD_ATTR_SMALL, overflow, NULL);
    bthread_join(t, NULL);
}

/* ---- many alive at once ---------------------------------------------------------------- */
static void *block_on(void *arg)
{
    _Atomic int *gate = arg;
    atomic_fetch_add(&counter, 1);
    while (atomic_load(gate) == 0)
        butex_wait(gate, 0, NULL);
    return NULL;
}

Test(sched, a_hundred_thousand_bthreads_alive_at_once, .timeout = 120)
{
#ifdef SB_UNDER_TSAN /* sbtest.h: built with -fsanitize=thread */
    cr_skip_test("TSan counts each live bthread's fiber as a thread (at most 8128)");
#endif
    set_workers(2);
    enum { N = 100000 };
    static bthread_t ids[N];
    _Atomic int *gate = butex_create();
    cr_assert_not_null(gate);
    for (int i = 0; i < N; i++)
        cr_assert_eq(bthread_start_background(&ids[i], &BTHREAD_ATTR_SMALL, block_on, gate), 0);
    while (atomic_load(&counter) < N)
        usleep(1000);
    atomic_store(gate, 1);
    butex_wake_all(gate);
    for (int i = 0; i < N; i++)
        cr_assert_eq(bthread_join(ids[i], NULL), 0);
    butex_destroy(gate);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- shutdown and restart --------------------------------------------------------------- */
Test(sched, shutdown_and_restart_with_another_worker_count, .timeout = 60)
{
    for (int w = 1; w <= 3; w++) {
        set_workers(w);
        bthread_t t;
        fib_arg_t a = {15, 0};
        bthread_start_background(&t, NULL, fib, &a);
        bthread_join(t, NULL);
        cr_assert_eq(a.r, 610);
        cr_assert_eq(bthread_getconcurrency(), w);
        if (w > 1) /* running: grows (below), never shrinks */
            cr_assert_eq(bthread_setconcurrency(w - 1), EPERM);
        bthread_worker_stats_t st[8];
        cr_assert_eq(bthread_get_stats(st, 8), w);
        cr_assert_eq(bthread_shutdown(), 0);
        cr_assert_eq(bthread_get_stats(st, 8), 0);
    }
    cr_assert_eq(bthread_setconcurrency(0), EINVAL);
}

static void *block_forever(void *arg)
{
    butex_wait(arg, 0, NULL);
    return NULL;
}

Test(sched, shutdown_refuses_while_bthreads_live, .timeout = 30)
{
    void *b = butex_create();
    bthread_t t;
    bthread_start_background(&t, NULL, block_forever, b);
    usleep(20000);
    cr_assert_eq(bthread_shutdown(), EBUSY);
    atomic_store((_Atomic int *)b, 1);
    butex_wake(b);
    bthread_join(t, NULL);
    butex_destroy(b);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* A background task that has signalled its waiter and is still on its way out (here it
 * sleeps 50 ms after the signal) is let end: the shutdown right after the wait works. */
static void *signal_then_linger(void *arg)
{
    bthread_countdown_signal(arg, 1);
    bthread_usleep(50000);
    return NULL;
}

Test(sched, shutdown_lets_finishing_bthreads_end, .timeout = 30)
{
    for (int i = 0; i < 3; i++) {
        bthread_countdown_t done;
        cr_assert_eq(bthread_countdown_init(&done, 2), 0);
        bthread_t t[2];
        for (int k = 0; k < 2; k++)
            cr_assert_eq(bthread_start_background(&t[k], NULL, signal_then_linger, &done), 0);
        cr_assert_eq(bthread_countdown_wait(&done), 0);
        cr_assert_eq(bthread_countdown_destroy(&done), 0);
        cr_assert_eq(bthread_shutdown(), 0, "round %d", i);
    }
}

/* ---- a running scheduler grows ------------------------------------------------------ */
static int64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

typedef struct start_req { bthread_t *tid; void *(*fn)(void *); void *arg; } start_req_t;
static void *start_from_thread(void *p)
{
    start_req_t *r = p;
    cr_assert_eq(bthread_start_background(r->tid, NULL, r->fn, r->arg), 0);
    return NULL;
}

static void *fan_child(void *p)
{
    int64_t end = mono_ns() + 200000;
    while (mono_ns() < end) {
    }
    atomic_fetch_add((_Atomic long *)p, 1);
    return NULL;
}

static void *start_sixteen(void *p)
{
    start_req_t *r = p;
    for (int i = 0; i < 16; i++)
        start_from_thread(&r[i]);
    return NULL;
}

Test(sched, setconcurrency_grows_a_running_scheduler_never_shrinks, .timeout = 30)
{
    cr_assert_eq(bthread_setconcurrency(2), 0);
    _Atomic long ran = 0;
    bthread_t t[64];
    for (int i = 0; i < 64; i++)
        cr_assert_eq(bthread_start_background(&t[i], NULL, fan_child, &ran), 0);
    for (int i = 0; i < 64; i++)
        bthread_join(t[i], NULL);
    cr_assert_eq(bthread_getconcurrency(), 2);
    if (policy().fixed_workers) { /* e.g. victim orders fixed at start-up (documented) */
        cr_assert_eq(bthread_setconcurrency(4), EPERM);
        cr_assert_eq(bthread_shutdown(), 0);
        return;
    }
    cr_assert_eq(bthread_setconcurrency(4), 0);
    cr_assert_eq(bthread_getconcurrency(), 4);
    cr_assert_eq(bthread_setconcurrency(3), EPERM, "never shrinks");
    cr_assert_eq(bthread_setconcurrency(4), 0);
    cr_assert_eq(bthread_setconcurrency(BTHREAD_MAX_CONCURRENCY + 1), EINVAL);
    for (int round = 0; round < 3; round++) {
        /* from four new pthreads: where a submitter's tasks go to a home worker of its
         * own, each gets the next one */
        pthread_t th[4];
        start_req_t r[64];
        for (int i = 0; i < 64; i++)
            r[i] = (start_req_t){&t[i], fan_child, &ran};
        for (int k = 0; k < 4; k++)
            cr_assert_eq(pthread_create(&th[k], NULL, start_sixteen, &r[16 * k]), 0);
        for (int k = 0; k < 4; k++)
            pthread_join(th[k], NULL);
        for (int i = 0; i < 64; i++)
            bthread_join(t[i], NULL);
    }
    cr_assert_eq(atomic_load(&ran), 4 * 64);
    bthread_worker_stats_t st[8];
    cr_assert_eq(bthread_get_stats(st, 8), 4);
    uint64_t run_new = st[2].tasks_run + st[3].tasks_run + st[2].remote_pops + st[3].remote_pops;
    cr_assert_gt(run_new, 0, "the new workers ran nothing");
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- exit, urgent ------------------------------------------------------------------------ */
static void deep_exit(int depth);
static void (*volatile deep_exit_ptr)(int) = deep_exit; /* real frames, no tail call */

static void deep_exit(int depth)
{
    if (depth <= 0)
        bthread_exit(NULL);
    deep_exit_ptr(depth - 1);
    atomic_fetch_add(&counter, 1000); /* never reached */
}

static void *exiter(void *arg)
{
    (void)arg;
    atomic_fetch_add(&counter, 1);
    deep_exit(10);
    return NULL;
}

static void *spawn_and_join_exiter(void *arg)
{
    (void)arg;
    bthread_t t; /* joined at once: may run inline on this stack */
    bthread_start_background(&t, NULL, exiter, NULL);
    bthread_join(t, NULL);
    atomic_fetch_add(&counter, 1);
    return NULL;
}

Test(sched, bthread_exit_from_nested_calls, .timeout = 30)
{
    set_workers(2);
    bthread_t t[3];
    bthread_start_background(&t[0], NULL, exiter, NULL);
    bthread_start_background(&t[1], &BTHREAD_ATTR_PTHREAD, exiter, NULL);
    bthread_start_background(&t[2], NULL, spawn_and_join_exiter, NULL);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(bthread_join(t[i], NULL), 0);
    cr_assert_eq(atomic_load(&counter), 4);
    cr_assert_eq(bthread_shutdown(), 0);
}

static void *mark(void *arg)
{
    atomic_store((_Atomic int *)arg, 1);
    return NULL;
}

static void *urgent_parent(void *arg)
{
    (void)arg;
    _Atomic int ran = 0;
    bthread_t t;
    bthread_start_urgent(&t, NULL, mark, &ran);
    int seen = atomic_load(&ran); /* urgent: the child ran before we came back */
    bthread_join(t, NULL);
    return (void *)(intptr_t)seen;
}

static void *urgent_check(void *arg)
{
    *(intptr_t *)arg = (intptr_t)urgent_parent(NULL);
    return NULL;
}

Test(sched, start_urgent_runs_the_child_first, .timeout = 30)
{
    set_workers(1);
    intptr_t seen = 0;
    bthread_t t;
    bthread_start_background(&t, NULL, urgent_check, &seen);
    bthread_join(t, NULL);
    cr_assert_eq(seen, 1);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- bthread-local storage ------------------------------------------------------------------ */
static bthread_key_t key;
static _Atomic int destroyed;
static void dtor(void *p)
{
    atomic_fetch_add(&destroyed, 1);
    cr_assert_eq((intptr_t)p % 1000, 7);
}

static void *use_key(void *arg)
{
    intptr_t mine = (intptr_t)arg * 1000 + 7;
    cr_assert_null(bthread_getspecific(key));
    cr_assert_eq(bthread_setspecific(key, (void *)mine), 0);
    for (int i = 0; i < 50; i++) {
        bthread_yield();
        cr_assert_eq(bthread_getspecific(key), (void *)mine);
    }
    return NULL;
}

Test(sched, key_destructors_run_exactly_once_per_bthread, .timeout = 30)
{
    set_workers(2);
    cr_assert_eq(bthread_key_create(&key, dtor), 0);
    bthread_t t[100];
    for (int i = 0; i < 100; i++)
        bthread_start_background(&t[i], NULL, use_key, (void *)(intptr_t)(i + 1));
    for (int i = 0; i < 100; i++)
        bthread_join(t[i], NULL);
    cr_assert_eq(atomic_load(&destroyed), 100);
    cr_assert_eq(bthread_key_delete(key), 0);
    cr_assert_eq(bthread_key_delete(key), EINVAL);
    cr_assert_eq(bthread_setspecific(key, (void *)1), EINVAL);
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- statistics show the policy ------------------------------------------------------------ */
static void *busy_child(void *arg)
{
    (void)arg;
    volatile long x = 0;
    for (long i = 0; i < 200000; i++)
        x = x + i;
    atomic_fetch_add(&counter, 1 + (x < 0));
    return NULL;
}

static void *fan_out(void *arg)
{
    (void)arg;
    bthread_t t[256];
    for (int i = 0; i < 256; i++)
        bthread_start_background(&t[i], NULL, busy_child, NULL);
    for (int i = 0; i < 256; i++)
        bthread_join(t[i], NULL);
    return NULL;
}

/* Each property the policy states, checked against what the workers did on a fan-out.
 * `steals` counts successful takes from another worker: from its run queue, and its
 * runnext slot or queues while its thread is blocked; no worker's thread blocks here,
 * so a policy that does not steal shows none. */
static uint64_t parks_now(void)
{
    bthread_worker_stats_t st[2];
    const int n = bthread_get_stats(st, 2);
    uint64_t parks = 0;
    for (int i = 0; i < n && i < 2; i++)
        parks += st[i].parks;
    return parks;
}

Test(sched, statistics_show_the_policy, .timeout = 60)
{
    set_workers(2);
    const bthread_policy_t p = policy();
    const char *v = bthread_variant_name(); /* for the messages */
    cr_assert_not_null(v);
    for (int round = 0; round < 5; round++) {
        bthread_t t;
        bthread_start_background(&t, NULL, fan_out, NULL);
        bthread_join(t, NULL);
        usleep(2000);
    }
    /* idle workers that sleep in the end do so once the work is done: wait for it */
    for (int64_t end = mono_ns() + 20 * 1000000000ll;
         p.idle_sleeps && parks_now() == 0 && mono_ns() < end;)
        usleep(1000);
    bthread_worker_stats_t st[2];
    cr_assert_eq(bthread_get_stats(st, 2), 2);
    uint64_t steals = st[0].steals + st[1].steals, stolen = st[0].stolen_tasks + st[1].stolen_tasks;
    uint64_t parks = st[0].parks + st[1].parks, run = st[0].tasks_run + st[1].tasks_run;
    uint64_t eparks = st[0].elastic_parks + st[1].elastic_parks;
    uint64_t ewakes = st[0].elastic_wakes + st[1].elastic_wakes;
    cr_assert_eq(run, 5 * 257, "tasks_run %lu", (unsigned long)run);
    if (p.steals)
        cr_assert_gt(steals, 0, "%s steals, and should steal from a fan-out", v);
    else
        cr_assert_eq(steals, 0, "%s does not steal, yet stole", v);
    if (p.steals && p.steal_batch == 1)
        cr_assert_eq(stolen, steals, "%s moves one task per steal", v);
    if (p.steals && p.steal_batch != 1)
        cr_assert_gt(stolen, steals, "%s moves several tasks per steal (batch %d)", v,
                     p.steal_batch);
    if (!p.steals)
        cr_assert_eq(stolen, 0, "%s does not steal, yet moved tasks", v);
    if (p.idle_sleeps)
        cr_assert_gt(parks, 0, "%s's idle workers sleep, yet none parked", v);
    else
        cr_assert_eq(parks, 0, "%s's idle workers never sleep, yet parked", v);
    if (!p.deactivates)
        cr_assert_eq(eparks + ewakes, 0, "%s does not deactivate workers, yet did", v);
    cr_assert_gt(st[0].cpu_ns + st[1].cpu_ns, 0);
    cr_assert_eq(bthread_shutdown(), 0);
}
