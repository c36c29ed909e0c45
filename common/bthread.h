/*
 * bthread.h -- the public API of every schedbench variant.
 *
 * A C subset of brpc's bthread/bthread.h: the same names, signatures and return
 * conventions (0 on success or an errno value), so C code written against brpc's
 * bthread compiles unchanged.  Every function may be called from a bthread or from a
 * plain pthread (the main thread, a foreign thread).  The scheduler starts lazily on the
 * first call, or explicitly with bthread_setconcurrency().
 *
 * Differences from brpc, all deliberate:
 *   - any worker count from 1 to BTHREAD_MAX_CONCURRENCY is allowed (a research harness
 *     needs 1; brpc refuses fewer than 4, BTHREAD_MIN_CONCURRENCY).  A program needs at
 *     least one more worker than the bthreads that may busy-wait at once without
 *     yielding or blocking (brpc's BthreadTest.sanity, two bthreads spinning until a
 *     third stops them, needs 3), and BTHREAD_STACKTYPE_PTHREAD bthreads each hold a
 *     worker while they block;
 *   - fork() while the scheduler runs: the child starts with no scheduler; its first
 *     bthread call starts one of its own.  The forking thread is a plain pthread there
 *     (even if it forked inside a bthread), the parent's bthreads do not exist (their
 *     ids read as ended: join returns 0, interrupt ESRCH) and their memory stays unused.
 *     brpc leaves a child of a running scheduler undefined;
 *   - destroying a held or waited-on mutex, cond, rwlock, semaphore or countdown
 *     returns EBUSY and changes nothing (brpc: undefined);
 *   - every id never handed out is EINVAL, whatever its bits, and an id is never issued
 *     twice (a slot whose 32-bit versions run out retires);
 *   - bthread_getattr reports no keytable_pool;
 *   - the variants that never move a task (static, affinity) lend the queues of a
 *     worker whose thread a BTHREAD_STACKTYPE_PTHREAD bthread blocks to the other
 *     workers until it returns (brpc's workers steal anyway);
 *   - the functions marked EXTENSION below do not exist in brpc.
 */
#ifndef SCHEDBENCH_BTHREAD_H
#define SCHEDBENCH_BTHREAD_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Each bthread has its own errno, but a bthread may move between worker threads at any
 * blocking call, and glibc declares __errno_location() const, so a compiler may reuse the
 * address of the old worker's errno after the call.  As brpc does, errno is redirected
 * to a function the compiler must call again each time. */
int *bthread_errno_location(void);
#undef errno
#define errno (*bthread_errno_location())

/* A 64-bit id: version << 32 | slot.  Never 0; a stale id never names a reused slot. */
typedef uint64_t bthread_t;

typedef unsigned bthread_stacktype_t;
#define BTHREAD_STACKTYPE_UNKNOWN 0u
#define BTHREAD_STACKTYPE_PTHREAD 1u /* run on the worker's own stack (no switch away) */
#define BTHREAD_STACKTYPE_SMALL 2u   /* 32 KiB by default */
#define BTHREAD_STACKTYPE_NORMAL 3u  /* 1 MiB by default */
#define BTHREAD_STACKTYPE_LARGE 4u   /* 8 MiB by default */

typedef unsigned bthread_attrflags_t;
/* As brpc: queue the task at once but wake no idle worker for it; bthread_flush() (or
 * a later start without the flag, from the same thread) wakes workers for all of them.
 * Until then a worker runs them only when it looks anyway (the starting worker, or one
 * already awake), so a thread that starts NOSIGNAL tasks and waits for them must flush
 * first.  With bthread_start_urgent from a bthread the flag applies, as in brpc, to the
 * caller, which is requeued without a wake-up (and counts for the next flush). */
#define BTHREAD_NOSIGNAL 1u

struct bthread_keytable_pool_t;
typedef struct bthread_attr_t {
    bthread_stacktype_t stack_type;
    bthread_attrflags_t flags;
    /* As brpc: a bthread with a pool hands its bthread-local values (its keytable) back
     * to the pool when it ends, instead of running their destructors, and a later
     * bthread of the pool borrows them (see bthread_keytable_pool_init below).
     * bthread_getattr reports NULL here: the pool is not kept once the table is used. */
    struct bthread_keytable_pool_t *keytable_pool;
} bthread_attr_t;

static const bthread_attr_t BTHREAD_ATTR_PTHREAD = {BTHREAD_STACKTYPE_PTHREAD, 0, NULL};
static const bthread_attr_t BTHREAD_ATTR_SMALL = {BTHREAD_STACKTYPE_SMALL, 0, NULL};
static const bthread_attr_t BTHREAD_ATTR_NORMAL = {BTHREAD_STACKTYPE_NORMAL, 0, NULL};
static const bthread_attr_t BTHREAD_ATTR_LARGE = {BTHREAD_STACKTYPE_LARGE, 0, NULL};

/* ---- tasks ---------------------------------------------------------------------- */

/* Create a bthread running fn(arg) and run it at once; the caller is requeued.
 * From a plain pthread this is the same as bthread_start_background. */
int bthread_start_urgent(bthread_t *tid, const bthread_attr_t *attr, void *(*fn)(void *),
                         void *arg);
/* Create a bthread running fn(arg); the caller goes on. */
int bthread_start_background(bthread_t *tid, const bthread_attr_t *attr,
                             void *(*fn)(void *), void *arg);
/* brpc's bthread_flush: wake workers for the tasks the calling thread started with
 * BTHREAD_NOSIGNAL since its last flush (one wake-up per task, at most one per worker).
 * Any thread.  In a bthread, the count belongs to the worker it runs on (as brpc's
 * TaskGroup): tasks started before the bthread moved to another worker are not flushed
 * by it, but they sit on a worker that is awake.  Does nothing when nothing is pending,
 * and when the scheduler is not running (it does not start it). */
void bthread_flush(void);
/* Wait for tid to finish.  EINVAL for 0, for an id never handed out, and for joining
 * yourself; a finished (stale) id returns 0 at once.  As in brpc, return values are not
 * kept: *ret (when ret is not NULL) is set to NULL. */
int bthread_join(bthread_t tid, void **ret);
bthread_t bthread_self(void); /* 0 outside a bthread */
int bthread_equal(bthread_t t1, bthread_t t2);
void bthread_exit(void *retval) __attribute__((__noreturn__));
/* From a bthread: requeue the caller and run another task that is ready on its worker;
 * with none, return at once (every 64th such call first tries to steal one).  From a
 * pthread: sched_yield. */
int bthread_yield(void);
/* Any length: from a bthread the deadline saturates (2^63 us and up sleep until
 * interrupted); from a pthread it is a nanosleep (-1 with errno EINTR on a signal). */
int bthread_usleep(uint64_t microseconds);
int bthread_interrupt(bthread_t tid); /* wake tid from a butex wait / sleep with EINTR */
int bthread_stop(bthread_t tid);      /* mark stopped, then interrupt */
int bthread_stopped(bthread_t tid);   /* 1 if stopped or not alive, else 0 */

int bthread_attr_init(bthread_attr_t *attr);
int bthread_attr_destroy(bthread_attr_t *attr);
int bthread_getattr(bthread_t tid, bthread_attr_t *attr);

/* EXTENSION: the most workers a scheduler runs: bthread_setconcurrency's upper bound,
 * and the --workers bound of every bench binary (variants and reference rows alike,
 * harness/bench/driver.c). */
#define BTHREAD_MAX_CONCURRENCY 1024

/* The running worker count; before start-up, the count it will start with. */
int bthread_getconcurrency(void);
/* Before start-up: the worker count to start with.  While running: add workers up to num
 * (as brpc, it only grows); EPERM if num is below the running count (or, on the numa
 * variant, whose victim orders are fixed at start-up, for any change); EAGAIN if not every
 * new worker thread could be created (those that could run).  EINVAL outside
 * 1..BTHREAD_MAX_CONCURRENCY. */
int bthread_setconcurrency(int num);

/* ---- synchronization (common/sync.c) --------------------------------------------- */
/* Every *_destroy refuses an object that is held or has a waiter with EBUSY (glibc's
 * answer for a locked mutex) and leaves it intact; brpc leaves that case undefined. */

typedef struct bthread_mutexattr_t { int unused; } bthread_mutexattr_t;
typedef struct bthread_condattr_t { int unused; } bthread_condattr_t;
typedef struct bthread_rwlockattr_t { int unused; } bthread_rwlockattr_t;

typedef struct bthread_mutex_t { void *butex; } bthread_mutex_t;
typedef struct bthread_cond_t { bthread_mutex_t *m; void *seq; } bthread_cond_t;
typedef struct bthread_rwlock_t { void *state; void *wr_butex; void *rd_butex; } bthread_rwlock_t;
typedef struct bthread_sem_t { void *butex; } bthread_sem_t;
/* EXTENSION (a C form of brpc's C++ CountdownEvent). */
typedef struct bthread_countdown_t { void *butex; } bthread_countdown_t;

int bthread_mutex_init(bthread_mutex_t *m, const bthread_mutexattr_t *attr);
int bthread_mutex_destroy(bthread_mutex_t *m);
int bthread_mutex_trylock(bthread_mutex_t *m);
int bthread_mutex_lock(bthread_mutex_t *m);
int bthread_mutex_timedlock(bthread_mutex_t *m, const struct timespec *abstime);
int bthread_mutex_unlock(bthread_mutex_t *m);

int bthread_cond_init(bthread_cond_t *c, const bthread_condattr_t *attr);
int bthread_cond_destroy(bthread_cond_t *c);
int bthread_cond_signal(bthread_cond_t *c);
int bthread_cond_broadcast(bthread_cond_t *c);
int bthread_cond_wait(bthread_cond_t *c, bthread_mutex_t *m);
int bthread_cond_timedwait(bthread_cond_t *c, bthread_mutex_t *m,
                           const struct timespec *abstime);

int bthread_rwlock_init(bthread_rwlock_t *rw, const bthread_rwlockattr_t *attr);
int bthread_rwlock_destroy(bthread_rwlock_t *rw);
int bthread_rwlock_rdlock(bthread_rwlock_t *rw);
int bthread_rwlock_tryrdlock(bthread_rwlock_t *rw);
int bthread_rwlock_timedrdlock(bthread_rwlock_t *rw, const struct timespec *abstime);
int bthread_rwlock_wrlock(bthread_rwlock_t *rw);
int bthread_rwlock_trywrlock(bthread_rwlock_t *rw);
int bthread_rwlock_timedwrlock(bthread_rwlock_t *rw, const struct timespec *abstime);
int bthread_rwlock_unlock(bthread_rwlock_t *rw);

int bthread_sem_init(bthread_sem_t *s, unsigned value);
int bthread_sem_destroy(bthread_sem_t *s);
int bthread_sem_trywait(bthread_sem_t *s);
int bthread_sem_wait(bthread_sem_t *s);
int bthread_sem_timedwait(bthread_sem_t *s, const struct timespec *abstime);
int bthread_sem_post(bthread_sem_t *s);
int bthread_sem_post_n(bthread_sem_t *s, unsigned n);

int bthread_countdown_init(bthread_countdown_t *c, int initial_count);
int bthread_countdown_destroy(bthread_countdown_t *c);
int bthread_countdown_signal(bthread_countdown_t *c, int sig); /* count -= sig, wake at 0 */
int bthread_countdown_add_count(bthread_countdown_t *c, int v);
int bthread_countdown_wait(bthread_countdown_t *c);
int bthread_countdown_timedwait(bthread_countdown_t *c, const struct timespec *abstime);

/* ---- bthread-local storage (common/key.c) ----------------------------------------- */

/* As brpc's: a bthread's values have their destructors run when it ends; a plain
 * pthread's (and a value set outside any bthread) when the thread exits, not when it
 * returns from main (exit() runs no pthread key destructors either). */
typedef struct bthread_key_t { uint32_t index; uint32_t version; } bthread_key_t;
int bthread_key_create(bthread_key_t *key, void (*destructor)(void *data));
/* brpc's: a destructor with an argument of its own. */
int bthread_key_create2(bthread_key_t *key, void (*destructor)(void *data, const void *arg),
                        const void *destructor_arg);
int bthread_key_delete(bthread_key_t key);
int bthread_setspecific(bthread_key_t key, void *data);
void *bthread_getspecific(bthread_key_t key);

/* Keytable pools (brpc's): bthreads started with attr.keytable_pool = pool keep their
 * values in tables the pool recycles.  A bthread of the pool that has set no value of
 * its own borrows a table from the pool at its first bthread_getspecific; when it ends,
 * its table goes back to the pool with its values (no destructor runs).  Destroying the
 * pool runs the destructors of the tables it holds, and of tables handed back later. */
typedef struct bthread_keytable_pool_t {
    pthread_mutex_t mutex;
    void *free_keytables;
    int destroyed;
} bthread_keytable_pool_t;
typedef struct bthread_keytable_pool_stat_t { size_t nfree; } bthread_keytable_pool_stat_t;
int bthread_keytable_pool_init(bthread_keytable_pool_t *pool);
int bthread_keytable_pool_destroy(bthread_keytable_pool_t *pool);
int bthread_keytable_pool_getstat(bthread_keytable_pool_t *pool,
                                  bthread_keytable_pool_stat_t *stat);
/* Make tables until the pool holds nfree, each with ctor(ctor_args) stored under key
 * (a NULL from ctor ends it). */
void bthread_keytable_pool_reserve(bthread_keytable_pool_t *pool, size_t nfree,
                                   bthread_key_t key, void *ctor(const void *args),
                                   const void *ctor_args);

/* ---- file descriptors (common/fd.c) ------------------------------------------------ */

/* Wait until fd has one of the epoll events (EPOLLIN, EPOLLOUT, ...) without blocking the
 * worker.  0, or -1 with errno (ETIMEDOUT, EINTR, EINVAL). */
int bthread_fd_wait(int fd, unsigned events);
int bthread_fd_timedwait(int fd, unsigned events, const struct timespec *abstime);
/* connect(2) without blocking the worker: the socket is non-blocking for the connect
 * (and as it was afterwards), and an EINPROGRESS connect waits for EPOLLOUT and reports
 * SO_ERROR.  0, or -1 with errno (ETIMEDOUT past abstime, CLOCK_REALTIME).  From a plain
 * pthread without a deadline: connect(2) itself. */
int bthread_connect(int sockfd, const struct sockaddr *addr, socklen_t addrlen);
int bthread_timed_connect(int sockfd, const struct sockaddr *addr, socklen_t addrlen,
                          const struct timespec *abstime);
/* close(2) for a descriptor bthreads may wait on: wakes every bthread waiting on fd
 * (its wait returns 0, and its next I/O on the number says EBADF), then closes it.  A
 * plain close() wakes nobody: the waiter waits for its deadline or an interrupt. */
int bthread_close(int fd);

/* ---- EXTENSIONS (not in brpc) ----------------------------------------------------- */

/* Stop and join the workers and the timer thread, free every pool.  No bthread may be
 * alive.  The next call starts the scheduler again (with a new worker count, if set). */
int bthread_shutdown(void);

/* Per-worker counters, summed by the caller where wanted.  Cheap: each worker writes
 * only its own cache line.
 *
 * The one list of them, X(name, kept, what it counts): the struct below, the core's
 * counting (common/sched.c), the bench JSON and the simulated bench
 * (harness/bench/sched_stats.h) and the Python reader (harness.driver.benchjson reads
 * this list) all come from it, so a counter added here is counted, reported and checked
 * everywhere.  `kept` says where the core keeps it: W on the worker's own line (its
 * thread alone writes it), Q on the line of the worker's remote queue (any thread that
 * pushes there writes it), WQ on both (summed).  The order is the struct's, and the
 * core's: switches and tasks_run, which thieves read to see a worker's progress, share
 * the first line. */
#define BTHREAD_WORKER_COUNTERS(X)                                                        \
    X(tasks_run, W, "tasks that ran to completion on this worker")                        \
    X(switches, W, "context switches into a task")                                         \
    X(steal_attempts, W, "victims probed")                                                 \
    X(steals, W, "successful steals")                                                      \
    X(stolen_tasks, W, "tasks moved by those steals (> steals for batch steals)")          \
    X(remote_pops, W, "tasks taken from remote (non-worker) submission queues")            \
    X(remote_takes, W, "batches those were taken in (remote_pops / remote_takes = tasks "  \
                       "per take)")                                                        \
    X(remote_pushes, Q, "tasks pushed to this worker's remote queue, by any thread")       \
    X(parks, W, "times the worker went to sleep")                                          \
    X(wakeups, W, "wake-ups this worker sent to sleeping workers")                         \
    X(woken, W, "times this worker was woken from a park, by any thread (woken / "        \
                "tasks_run = wake-ups per task)")                                          \
    X(flushes, WQ, "bthread_flush calls that had tasks to flush: on this worker, or from " \
                   "non-workers for tasks queued here")                                    \
    X(flushed_tasks, WQ, "the NOSIGNAL tasks those flushes signalled")                     \
    BTHREAD_VARIANT_COUNTERS(X)
/* Counters that one variant alone keeps (zero under every other), named for it. */
#define BTHREAD_VARIANT_COUNTERS(X)                                                       \
    X(elastic_parks, W, "elastic: times this worker deactivated (parked for good)")        \
    X(elastic_wakes, W, "elastic: times this worker was reactivated")

typedef struct bthread_worker_stats_t {
#define BTHREAD_COUNTER_FIELD_(name, kept, what) uint64_t name;
    BTHREAD_WORKER_COUNTERS(BTHREAD_COUNTER_FIELD_)
#undef BTHREAD_COUNTER_FIELD_
    uint64_t cpu_ns; /* thread CPU time of the worker (not a counter: read at the call) */
} bthread_worker_stats_t;
/* Fills up to max entries, returns the worker count (may exceed max), 0 when stopped. */
int bthread_get_stats(bthread_worker_stats_t *out, int max);
/* The variant this library was built as ("chaselev", "fair", ...). */
const char *bthread_variant_name(void);

/* The machine's shape as the scheduler sees it, one line for a run record, e.g.
 * "1 package, 1 NUMA node, 2 cores, 2 PUs; bound: no".  A variant that pins its workers
 * (numa) describes the topology its victim orders come from and whether binding worked
 * ("bound: yes", "partly (1 of 4 failed)"); the others, the topology hwloc loads now
 * (SCHEDBENCH_TOPOLOGY, HWLOC_XMLFILE / HWLOC_SYNTHETIC, else this machine).  Length as
 * snprintf, or -1 if hwloc cannot load a topology.  Any thread; starts nothing. */
int bthread_describe_topology(char *buf, size_t n);
/* Where worker `worker` asked to run and where it ran, e.g. "pu L#1 (P#1), bound; ran on
 * P#1; stack on NUMA node 0".  Length as snprintf, or -1 if nothing was recorded (a
 * variant that does not pin, or that worker has not started).  Any thread. */
int bthread_worker_placement(int worker, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* SCHEDBENCH_BTHREAD_H */
