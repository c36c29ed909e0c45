/*
 * core.h -- what the scheduler core (sched.c) offers the rest of common/ (butex.c,
 * key.c), and what it needs back from them.  Internal: users include bthread.h.  Only
 * sched.c includes variant.h, so the worker's layout (which depends on the variant's
 * queue) is private to sched.c.
 *
 * Dependencies inside common/:
 *   timer.c, fd.c     leaves: the core and butex.c use them (timer.h, fd_internal.h);
 *                     they use nothing of the core (fd.c only the public API).
 *   butex.c <-> sched.c, key.c <-> sched.c: a cycle, on purpose.  A butex wait must
 *                     suspend and ready tasks (core_suspend, core_ready), and the core
 *                     joins a task by waiting on the butex embedded in it (join_bx) and
 *                     runs its bthread-local destructors when it ends
 *                     (key_run_destructors).  Breaking it would mean a second wait list
 *                     in the core for joins, or an exit hook through a function pointer
 *                     on every task end; both cost more than the cycle, which is
 *                     confined to the declarations in this header.
 */
#ifndef SCHEDBENCH_CORE_H
#define SCHEDBENCH_CORE_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "bthread.h"
#include "fcontext.h"
#include "fd_internal.h" /* the leaves the core uses, one way: fd.c, timer.c */
#include "spinlock.h"
#include "stack.h"
#include "timer.h"

typedef struct task task_t;
typedef struct worker worker_t;
typedef struct butex butex_t;
typedef struct butex_waiter butex_waiter_t;

/* A link of a butex's circular waiter list, under the butex's lock. */
typedef struct butex_link {
    struct butex_link *prev, *next;
} butex_link_t;

/* A waiter on a butex: lives on the waiting bthread's (or pthread's) stack. */
struct butex_waiter {
    butex_link_t link;             /* first: a waiter's link is the waiter (butex.c) */
    _Atomic(butex_t *) container;  /* the butex it waits on (requeue moves it); NULL once
                                      removed from every list */
    task_t *task;                  /* NULL: a pthread waiter, which sleeps on `futex` */
    _Atomic int futex;             /* pthread waiter: 0 waiting, 1 woken */
    int reason;                    /* 0 woken, EWOULDBLOCK, ETIMEDOUT, EINTR */
    int expected;
    const struct timespec *abstime;
    uint64_t timer;                /* timer id, 0 = none */
};

/* A butex: the value first, so users may treat butex_create()'s pointer as an int. */
struct butex {
    _Atomic int value;
    spinlock_t lock;
    butex_link_t head; /* circular list sentinel: a link, not a whole waiter, so that a
                          butex in a task slot (join_bx) costs 24 bytes, not 72 */
};

void butex_init_embedded(butex_t *b, int value); /* a butex inside another object */

/* Task metadata.  Lives in a pool slot that is never freed before bthread_shutdown(), so
 * a stale pointer reached through an old id reads a valid (reused) object; the version
 * in join_bx tells whether the id is still alive. */
struct task {
    /* -- one cache line: everything bthread_start_* writes.  A task is usually created on
     * one core and run (and ended) on another, so each line the creator writes is a
     * cross-core transfer (~0.23 us here); the fields below it are reset by task_end on
     * the worker, where the line is already local. */
    alignas(CACHELINE) void *(*fn)(void *);
    void *arg;
    sb_stack_t *stack;           /* NULL until first run (lazy) */
    _Atomic(task_t *) next;      /* link for queues and the free list (atomic: a remote
                                    queue's consumer reads it while a producer links) */
    void *keytable;              /* bthread-local storage (key.c): a table, NULL, or
                                    until its first use a pool (KEY_POOL_TAG) */
    butex_waiter_t *waiter;      /* current butex wait, under wait_lock (butex.c) */
    _Atomic uint32_t version;    /* this incarnation; join_bx.value == version while alive.
                                    Relaxed everywhere: core_task_of may read it while the
                                    slot is reused (see there) */
    uint32_t slot;
    bthread_stacktype_t stack_type;
    unsigned attr_flags;
    /* -- run-time state, written by workers ------------------------------------------ */
    alignas(CACHELINE) bthread_fcontext_t ctx; /* saved context while switched out */
    void *exit_frame;            /* bthread_exit's way out when not on its own stack */
    butex_t join_bx;             /* 24 bytes: the whole slot is two lines */
    int home;                    /* the worker it last ran on (READY_HOME variants) */
    int saved_errno;
    spinlock_t wait_lock;        /* the version moves under it (core_task_lock) */
    _Atomic int joiners;         /* joiners announced under wait_lock; task_end wakes if > 0 */
    bool borrowed_stack;         /* running inline on its joiner's stack */
    _Atomic bool interrupted;    /* set by bthread_interrupt/_stop under wait_lock */
    _Atomic bool stopped;        /* set by bthread_stop under wait_lock */
#if SB_ASAN
    void *asan_fake_stack;       /* AddressSanitizer fiber bookkeeping (fiber.h) */
#endif
};

/* ---- services of sched.c ---------------------------------------------------------- */
/* Start the scheduler if it is not running: 0, or an errno value (said on stderr). */
int core_ensure_started(void);
/* The running bthread, or NULL on a plain pthread. */
task_t *core_current(void);
/* The running bthread if it can suspend (has its own stack), else NULL: callers then
 * block the thread (a pthread, or a PTHREAD-stack task) on a futex. */
task_t *core_current_suspendable(void);
/* Make t runnable: into the calling worker's queue, or a remote queue from a pthread. */
void core_ready(task_t *t);
/* Make a task woken by a butex runnable (see sched.c: the runnext slot). */
void core_ready_woken(task_t *t);
/* The calling thread blocks in a wait (true) or returns from it (false): a worker's
 * thread lends its queues to the other workers meanwhile, where they do not steal
 * (sched.c).  Nothing on a plain pthread. */
void core_worker_blocks(bool blocking);
/* Suspend the running bthread; fn(arg) runs right after the switch, on whatever runs
 * next (the "remained" callback), and typically publishes the task to a wait list. */
void core_suspend(void (*fn)(void *), void *arg);
/* The task an id names while that id is alive, else NULL.  *invalid is set when the id
 * never named a slot. */
task_t *core_task_of(bthread_t tid, bool *invalid);
/* As core_task_of, but the task is returned with its wait_lock held: task_end moves the
 * version under that lock, so until the caller unlocks, the incarnation cannot end and
 * its slot cannot be reused.  A write through an id under this lock reaches the task it
 * named or, once that ended, none (never the task that reuses the slot). */
task_t *core_task_lock(bthread_t tid, bool *invalid);
static inline bthread_t core_tid(const task_t *t)
{
    return (uint64_t)atomic_load_explicit(&t->version, memory_order_relaxed) << 32 | t->slot;
}

/* futex helpers (private futexes). */
int futex_wait_private(_Atomic int *addr, int expected, const struct timespec *rel);
int futex_wake_private(_Atomic int *addr, int n);

/* In the child of a fork() (sched.c's atfork handler): key.c's and butex.c's locks as
 * new, since a parent's thread may have held them. */
void key_atfork_child(void);
void butex_atfork_child(void);
/* key.c: run the destructors of t's bthread-local values, or hand its table back to
 * its keytable pool (at task exit). */
void key_run_destructors(task_t *t);
/* What a new task's table slot holds: NULL, or its keytable pool tagged with bit 0 (its
 * first bthread_getspecific borrows a table from the pool; key.c). */
#define KEY_POOL_TAG ((uintptr_t)1)
static inline void *key_initial_table(bthread_keytable_pool_t *pool)
{
    return pool ? (void *)((uintptr_t)pool | KEY_POOL_TAG) : NULL;
}

/* Monotonic clock in ns (vDSO, no system call). */
uint64_t core_now_ns(void);

#endif /* SCHEDBENCH_CORE_H */
