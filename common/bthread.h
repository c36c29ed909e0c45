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
/* The attributes tid was started with; EINVAL once it has ended (or for an id never
 * handed out), so a caller may also ask whether a bthread still runs. */
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
 * alive: those still finishing (a background task that signalled its waiter and is
 * returning) are let end first, and EBUSY comes when the number alive has not fallen
 * for about a second.  The next call starts the scheduler again (with a new worker
 * count, if set). */
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
    X(steal_attempts, W, "other workers' run queues probed by steal rounds")               \
    X(steals, W, "steals that took a task from another worker's run queue")                \
    X(stolen_tasks, W, "tasks moved by those steals (> steals for batch steals)")          \
    X(remote_pops, W, "tasks taken from remote queues (non-workers' tasks, yields, "        \
                      "overflow): its own, or another worker's in a steal round")          \
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
    X(rescues, W, "tasks taken from a worker that could not run them: from another "       \
                  "worker's runnext slot whose owner made no progress, or from the queues " \
                  "of a worker whose thread a wait blocks (variants without stealing)")    \
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

/* What this library's policy does, as its variant binds it (common/policy.h): for
 * programs and tests that depend on a property rather than on a variant's name, so a
 * new variant is judged by what it does.  Each field is 0 or 1 but steal_batch. */
typedef struct bthread_policy_t {
    int steals;        /* idle workers take tasks queued on other workers */
    int steal_batch;   /* the most tasks one steal moves: 1, k, or -1 for half the victim's
                          queue; 0 without stealing */
    int keeps_tasks;   /* a task that ran is made ready again on the worker it last ran on
                          (and no task moves but from a worker a blocked thread holds) */
    int spreads_tasks; /* a worker's new task goes to another worker's queue (round-robin) */
    int one_queue;     /* one FIFO that every worker takes from, whose pushes signal by
                          themselves: BTHREAD_NOSIGNAL and bthread_flush change nothing */
    int runnext;       /* a task woken by a butex on a worker runs next there */
    int idle_sleeps;   /* idle workers sleep in the end (0: they search for ever) */
    int idle_spins;    /* idle workers spin, searching, before they sleep */
    int deactivates;   /* idle workers whose wake-ups find nothing park for good
                          (counted as elastic_parks) */
    int fixed_workers; /* bthread_setconcurrency cannot add workers while running */
} bthread_policy_t;
/* Fills *out.  Any thread; starts nothing. */
void bthread_get_policy(bthread_policy_t *out);

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

/* ==== brpc's once, ids and lists (common/once.c, common/id.c) ========================
 * Names, signatures and return codes as brpc's bthread/bthread.h and bthread/id.h; C++
 * users find brpc's C++ parts (bthread_id_create2, bthread_id_error2, the operators on
 * bthread_id_t, the lock wrappers) in bthread.hpp.  Where the semantics differ from
 * brpc's, the comment says "brpc:". */

/* ---- once ------------------------------------------------------------------------- */

/* A once flag: BTHREAD_ONCE_INIT, or zeroed memory (a global, calloc).  C++14 and later
 * also start a default-constructed one at "not run", as brpc's class does. */
typedef struct bthread_once_t {
#if defined(__cplusplus) && __cplusplus >= 201402L
    int state_ = 0; /* private to common/once.c */
#else
    int state_;
#endif
} bthread_once_t;
#define BTHREAD_ONCE_INIT {0}

/* Run init_routine exactly once per flag, from a bthread or a pthread.  Callers that
 * lose the race wait (a bthread suspends, a pthread sleeps; nobody spins) until the
 * winner's init_routine has returned, and then see everything it wrote.  0; EINVAL for
 * NULL arguments; ENOMEM if the wait could not be set up (init_routine not run by this
 * caller).  As pthread_once and brpc: init_routine must return (no longjmp or C++
 * exception out of it: the flag would stay "running" and its waiters wait forever), and
 * must not call bthread_once on its own flag (deadlock). */
int bthread_once(bthread_once_t *once_control, void (*init_routine)(void));

/* ---- ids: 64-bit handles to lockable data, never reused while a stale copy names them */

/* An id names one entity: data, an on_error callback and a lock.  value =
 * slot << 32 | version; a destroyed id's versions are never handed out again, so a stale
 * copy gets EINVAL from every call (bthread_id_join: 0) and never reaches the entity
 * that reuses the slot.  brpc: versions wrap after 2^32 and could then name a new
 * entity; here a slot whose versions would wrap is retired instead (one slot per ~2^32
 * versions, at most 4M ids alive at once).  Not for heavy contention (as brpc says: it
 * is slower than a mutex). */
typedef struct {
    uint64_t value;
} bthread_id_t;
/* Never returned by bthread_id_create*. */
static const bthread_id_t INVALID_BTHREAD_ID = {0};

/* The most consecutive ids one entity may answer to (bthread_id_create_ranged). */
#define BTHREAD_ID_MAX_RANGE 1024

/* on_error(id, data, error_code) runs when an error is issued to the id
 * (bthread_id_error), with the id locked; it must unlock it (bthread_id_unlock) or
 * destroy it (bthread_id_unlock_and_destroy).  Its return value is the error call's. */
typedef int (*bthread_id_on_error_t)(bthread_id_t id, void *data, int error_code);

/* Create an id for data.  on_error NULL: an error destroys the id.  0, EINVAL (id NULL),
 * ENOMEM. */
int bthread_id_create(bthread_id_t *id, void *data, bthread_id_on_error_t on_error);
/* The same, and *id, *id + 1, ..., *id + range - 1 all name the entity (brpc's way to
 * encode a retry count in the id); on_error gets the value the error was issued to.
 * EINVAL for range outside 1..BTHREAD_ID_MAX_RANGE. */
int bthread_id_create_ranged(bthread_id_t *id, void *data, bthread_id_on_error_t on_error,
                             int range);

/* Lock the id, waiting while another holds it; *pdata (pdata may be NULL) = its data.
 * 0; EINVAL for an id that is not alive (destroyed, never created, or destroyed while
 * this call waited); EPERM once bthread_id_about_to_destroy was called.  Not
 * interruptible (bthread_interrupt makes it wait again), as brpc.  The location string
 * (the macro passes file:line) is kept for bthread_id_describe. */
#define BTHREAD_ID_SYMBOLSTR_(x) #x
#define BTHREAD_ID_SYMBOLSTR(x) BTHREAD_ID_SYMBOLSTR_(x)
#define BTHREAD_ID_HERE __FILE__ ":" BTHREAD_ID_SYMBOLSTR(__LINE__)
#define bthread_id_lock(id, pdata) bthread_id_lock_verbose(id, pdata, BTHREAD_ID_HERE)
int bthread_id_lock_verbose(bthread_id_t id, void **pdata, const char *location);
/* Lock, and widen the id's range to `range` (nothing happens to the range when it is not
 * wider, or outside 1..BTHREAD_ID_MAX_RANGE; brpc also logs those). */
#define bthread_id_lock_and_reset_range(id, pdata, range)                                \
    bthread_id_lock_and_reset_range_verbose(id, pdata, range, BTHREAD_ID_HERE)
int bthread_id_lock_and_reset_range_verbose(bthread_id_t id, void **pdata, int range,
                                            const char *location);
/* 0, EBUSY (held, or about to be destroyed), EINVAL (not alive). */
int bthread_id_trylock(bthread_id_t id, void **pdata);
/* The holder: unlock.  If errors were issued while it was held, the oldest one's
 * on_error runs instead, with the id still locked, and its return value is returned.
 * EINVAL (not alive), EPERM (not locked; brpc also logs it). */
int bthread_id_unlock(bthread_id_t id);
/* The holder: destroy the id.  Pending errors are dropped; every locker waiting gets
 * EINVAL and every joiner returns.  EINVAL, EPERM as unlock. */
int bthread_id_unlock_and_destroy(bthread_id_t id);
/* Wait until the id is destroyed; 0 at once for an id already destroyed.  EINVAL for an
 * id never created (0, a slot or a version never handed out).  Not interruptible. */
int bthread_id_join(bthread_id_t id);
/* Destroy an id that is alive and unlocked (created, never used).  0, EINVAL (not
 * alive), EPERM (locked).  brpc leaves joiners of a cancelled id asleep; here they
 * return, as after any destroy. */
int bthread_id_cancel(bthread_id_t id);
/* Issue error_code to the id: if it is unlocked, lock it and run on_error now (its return
 * value is returned); if it is locked, queue the error for the holder's unlock (0).
 * EINVAL (not alive), ENOMEM (could not queue). */
#define bthread_id_error(id, err) bthread_id_error_verbose(id, err, BTHREAD_ID_HERE)
int bthread_id_error_verbose(bthread_id_t id, int error_code, const char *location);
/* The holder: make every waiting and later bthread_id_lock fail with EPERM (trylock:
 * EBUSY) until the id is unlocked (which cancels this) or destroyed.  0, EINVAL (not
 * alive), EPERM (not locked). */
int bthread_id_about_to_destroy(bthread_id_t id);

/* EXTENSION: the C form of brpc's C++ bthread_id_create2 / bthread_id_error2, whose
 * on_error also gets a text (bthread.hpp builds those on these).  on_error(id, data,
 * error_code, error_text, arg): error_text is "" when the error was issued without one,
 * and lives until on_error returns; arg is the one given at creation.  An id created
 * with a plain on_error ignores a text. */
typedef int (*bthread_id_on_error_text_t)(bthread_id_t id, void *data, int error_code,
                                          const char *error_text, void *arg);
int bthread_id_create_text(bthread_id_t *id, void *data, bthread_id_on_error_text_t on_error,
                           void *arg, int range);
/* error_text NULL is "".  A queued error keeps a copy of the text. */
#define bthread_id_error_text(id, err, text)                                              \
    bthread_id_error_text_verbose(id, err, text, BTHREAD_ID_HERE)
int bthread_id_error_text_verbose(bthread_id_t id, int error_code, const char *error_text,
                                  const char *location);
/* EXTENSION (brpc's internal bthread::id_value and id_status, which its tests read; C++:
 * bthread.hpp offers them under those names).  The id's lock word: its first version
 * while unlocked, first + range when locked (+1 while lockers wait, +2 about to
 * destroy), and the next entity's first version once destroyed; 0 for a slot never handed
 * out.  brpc: "+1" once the holder itself had waited, and a locker on its way to sleep
 * can be lost when another widens the range by one; here a count of the waiting lockers
 * decides the wake-ups (common/id.c). */
uint32_t bthread_id_value(bthread_id_t id);
/* The id's state in words (first id, range, lock state and where it was locked, pending
 * errors, data), or that it is not alive.  Length as snprintf. */
int bthread_id_describe(bthread_id_t id, char *buf, size_t n);

/* ---- lists of ids and of bthreads --------------------------------------------------- */

/* As brpc: NOT thread-safe unless the name says so.  An entry whose id was destroyed (a
 * bthread that ended) is dropped or reused by a later add, so a long-lived list does not
 * grow with ids that are gone.  The fields past impl are unused (brpc keeps them for its
 * ABI). */
typedef struct {
    void *impl;
    unsigned head, size, conflict_head, conflict_size;
} bthread_id_list_t;

/* size and conflict_size are unused (as in brpc).  0. */
int bthread_id_list_init(bthread_id_list_t *list, unsigned size, unsigned conflict_size);
void bthread_id_list_destroy(bthread_id_list_t *list);
/* 0, ENOMEM, EAGAIN (the list already holds 100000 ids that are alive: brpc's bound). */
int bthread_id_list_add(bthread_id_list_t *list, bthread_id_t id);
void bthread_id_list_swap(bthread_id_list_t *dest, bthread_id_list_t *src);
/* Issue error_code to every id of the list that is alive (on_error may run here, in the
 * caller), and empty the list.  0.  To keep a lock's critical section short, swap the
 * list out under the lock and reset the copy outside it, as the two below do. */
int bthread_id_list_reset(bthread_id_list_t *list, int error_code);
/* EINVAL for mutex NULL. */
int bthread_id_list_reset_pthreadsafe(bthread_id_list_t *list, int error_code,
                                      pthread_mutex_t *mutex);
int bthread_id_list_reset_bthreadsafe(bthread_id_list_t *list, int error_code,
                                      bthread_mutex_t *mutex);
/* EXTENSION: the three resets with a text (brpc's C++ bthread_id_list_reset2*). */
int bthread_id_list_reset_text(bthread_id_list_t *list, int error_code, const char *error_text);
int bthread_id_list_reset_text_pthreadsafe(bthread_id_list_t *list, int error_code,
                                           const char *error_text, pthread_mutex_t *mutex);
int bthread_id_list_reset_text_bthreadsafe(bthread_id_list_t *list, int error_code,
                                           const char *error_text, bthread_mutex_t *mutex);

/* Track bthreads and stop or join them all (brpc's bthread_list_*). */
typedef struct {
    void *impl;
    unsigned head, size, conflict_head, conflict_size;
} bthread_list_t;

/* size and conflict_size are unused.  0, ENOMEM. */
int bthread_list_init(bthread_list_t *list, unsigned size, unsigned conflict_size);
void bthread_list_destroy(bthread_list_t *list);
/* 0, EINVAL (list not initialized, or destroyed), ENOMEM, EAGAIN (as the id list). */
int bthread_list_add(bthread_list_t *list, bthread_t tid);
/* bthread_stop every bthread of the list that has not ended.  0, EINVAL. */
int bthread_list_stop(bthread_list_t *list);
/* Join every bthread of the list, and empty it.  0, EINVAL (not initialized or destroyed). */
int bthread_list_join(bthread_list_t *list);

/* ==== end of brpc's once, ids and lists ============================================== */

#ifdef __cplusplus
}
#endif
#endif /* SCHEDBENCH_BTHREAD_H */
