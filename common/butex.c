/*
 * butex.c -- wait lists for bthreads and pthreads (butex.h), interrupts and sleeps.
 *
 * A waiting bthread is put on the butex's list by the "remained" callback that runs
 * after it has switched away (wait_remained), under the butex lock and only if the value
 * still equals `expected`.  A waker takes a waiter off the list under the same lock.  So
 * either the waker changed the value before the check (the waiter is not queued and
 * returns EWOULDBLOCK) or the waiter is on the list when the waker looks: no lost wake-up.
 *
 * Whoever removes a waiter from its list (waker, timer, interrupter) owns its wake-up;
 * the others find it gone (container == NULL) and do nothing.  A waiter lives on its
 * waiting thread's stack, so after waking it nobody touches it again, with two guarded
 * exceptions: the timer callback, which the waiter cancels with timer_del (that returns
 * only after a running callback finished), and an interrupter, which holds the task's
 * wait_lock, which the waiter takes once more before it returns.
 *
 * Lock order: task.wait_lock, then a butex lock; two butex locks in address order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "butex.h"
#include "core.h"
#include "timeutil.h"

/* ---- the list ------------------------------------------------------------------------ */
void butex_init_embedded(butex_t *b, int value)
{
    atomic_init(&b->value, value);
    atomic_init(&b->lock.v, 0);
    b->head.prev = b->head.next = &b->head;
}

/* The waiter whose link l is (its first member). */
static inline butex_waiter_t *waiter_of(butex_link_t *l) { return (butex_waiter_t *)l; }

static void list_add_tail(butex_t *b, butex_waiter_t *w)
{
    w->link.prev = b->head.prev;
    w->link.next = &b->head;
    b->head.prev->next = &w->link;
    b->head.prev = &w->link;
    atomic_store_explicit(&w->container, b, memory_order_relaxed); /* under b's lock */
}

static void list_del(butex_waiter_t *w)
{
    w->link.prev->next = w->link.next;
    w->link.next->prev = w->link.prev;
    w->link.next = w->link.prev = NULL;
    atomic_store_explicit(&w->container, NULL, memory_order_relaxed); /* under the lock */
}

/* Lock the butex w waits on, or return NULL if w is on no list any more. */
static butex_t *lock_container(butex_waiter_t *w)
{
    for (;;) {
        /* relaxed: rechecked under the lock, which orders everything that matters */
        butex_t *b = atomic_load_explicit(&w->container, memory_order_relaxed);
        if (!b)
            return NULL;
        spin_lock(&b->lock);
        if (atomic_load_explicit(&w->container, memory_order_relaxed) == b)
            return b;
        spin_unlock(&b->lock); /* requeued meanwhile: follow it */
    }
}

/* w is off every list and the lock is released: wake its thread.  w may be gone as soon
 * as this returns (or, for a bthread, as soon as core_ready runs). */
static void wake_waiter(butex_waiter_t *w)
{
    task_t *t = w->task;
    if (t) {
        core_ready_woken(t);
    } else {
        /* release: the reason written before is visible to the waiter (a plain mov on
         * x86-64, where stores stay in order anyway; stlr on aarch64, which needs it) */
        atomic_store_explicit(&w->futex, 1, memory_order_release);
        futex_wake_private(&w->futex, 1); /* may hit a dead frame: a spurious wake at most */
    }
}

/* ---- create / destroy: type-stable memory --------------------------------------------- */
/* A freed butex keeps its lock and its (empty) list, and the pool's link lies beside it,
 * so a late wake on a destroyed butex (a countdown's last signaller, which wakes after
 * the waiter it released has destroyed the countdown) takes a working lock and finds no
 * waiter, on the free list and after the memory is reused alike. */
typedef struct pooled_butex {
    butex_t b; /* first: the pointer handed out is the pooled one's */
    struct pooled_butex *free_next;
} pooled_butex_t;

static spinlock_t free_lock = SPINLOCK_INIT;
static pooled_butex_t *free_list;

void *butex_create(void)
{
    spin_lock(&free_lock);
    pooled_butex_t *pb = free_list;
    if (pb)
        free_list = pb->free_next;
    spin_unlock(&free_lock);
    if (pb) {
        /* the lock and the list stay as they are: a late waker may hold the one and
         * look at the other right now */
        atomic_store_explicit(&pb->b.value, 0, memory_order_relaxed);
        return &pb->b;
    }
    pb = aligned_alloc(CACHELINE, (sizeof(pooled_butex_t) + CACHELINE - 1) / CACHELINE * CACHELINE);
    if (!pb) {
        errno = ENOMEM;
        return NULL;
    }
    butex_init_embedded(&pb->b, 0);
    return &pb->b;
}

/* Waiters still on a destroyed butex (a misuse: a destroy while somebody waits) are
 * woken first (their wait returns 0, a spurious wake-up), so none of them is left on the
 * list of the object this memory becomes next: a timed waiter that timed out there would
 * unlink itself from that object's list and cut its waiters off. */
void butex_destroy(void *p)
{
    if (!p)
        return;
    pooled_butex_t *pb = p;
    butex_wake_all(&pb->b);
    spin_lock(&free_lock);
    pb->free_next = free_list;
    free_list = pb;
    spin_unlock(&free_lock);
}

void butex_atfork_child(void) { spin_init(&free_lock); }

int butex_waiting(void *p)
{
    butex_t *b = p;
    spin_lock(&b->lock);
    const int waited_on = b->head.next != &b->head;
    spin_unlock(&b->lock);
    return waited_on;
}

/* ---- wake ----------------------------------------------------------------------------- */
/* Take up to n waiters (skipping `except`) off b into a private chain (through
 * link.next). */
static butex_waiter_t *take_waiters(butex_t *b, size_t n, bthread_t except, int *count)
{
    butex_link_t *chain = NULL, **tail = &chain;
    *count = 0;
    for (butex_link_t *l = b->head.next, *nx; l != &b->head && (size_t)*count < n; l = nx) {
        butex_waiter_t *w = waiter_of(l);
        nx = l->next;
        if (except && w->task && core_tid(w->task) == except)
            continue;
        list_del(w);
        w->reason = 0;
        *tail = &w->link;
        tail = &w->link.next;
        (*count)++;
    }
    *tail = NULL;
    return chain ? waiter_of(chain) : NULL;
}

static void wake_chain(butex_waiter_t *w)
{
    while (w) {
        butex_link_t *nx = w->link.next; /* read before w may vanish */
        wake_waiter(w);
        w = nx ? waiter_of(nx) : NULL;
    }
}

static int wake_some(void *p, size_t n, bthread_t except)
{
    butex_t *b = p;
    int count;
    spin_lock(&b->lock);
    if (b->head.next == &b->head) {
        spin_unlock(&b->lock);
        return 0;
    }
    butex_waiter_t *chain = take_waiters(b, n, except, &count);
    spin_unlock(&b->lock);
    wake_chain(chain);
    return count;
}

int butex_wake(void *b) { return wake_some(b, 1, 0); }
int butex_wake_n(void *b, size_t n) { return wake_some(b, n, 0); }
int butex_wake_all(void *b) { return wake_some(b, (size_t)-1, 0); }
int butex_wake_except(void *b, bthread_t excluded) { return wake_some(b, (size_t)-1, excluded); }

int butex_requeue(void *p1, void *p2)
{
    butex_t *b = p1, *b2 = p2;
    if (b == b2)
        return butex_wake(b);
    butex_t *first = b < b2 ? b : b2, *second = b < b2 ? b2 : b;
    spin_lock(&first->lock);
    spin_lock(&second->lock);
    int count;
    butex_waiter_t *chain = take_waiters(b, 1, 0, &count);
    while (b->head.next != &b->head) { /* the rest move to b2 */
        butex_waiter_t *w = waiter_of(b->head.next);
        list_del(w);
        list_add_tail(b2, w);
    }
    spin_unlock(&second->lock);
    spin_unlock(&first->lock);
    wake_chain(chain);
    return count;
}

/* ---- wait ----------------------------------------------------------------------------- */
static int64_t realtime_ns(void) { return sb_clock_ns(CLOCK_REALTIME); }

static void timeout_cb(void *arg)
{
    butex_waiter_t *w = arg;
    butex_t *b = lock_container(w);
    if (!b)
        return; /* woken (or interrupted) first */
    list_del(w);
    w->reason = ETIMEDOUT;
    spin_unlock(&b->lock);
    wake_waiter(w);
}

/* Runs on the next context, after the waiting bthread left its stack. */
static void wait_remained(void *arg)
{
    butex_waiter_t *w = arg;
    task_t *t = w->task;
    butex_t *b = atomic_load_explicit(&w->container, memory_order_relaxed);
    spin_lock(&t->wait_lock);
    /* relaxed: bthread_interrupt sets the flag under wait_lock, which we hold now, so
     * the lock orders it; load first, the exchange (a locked RMW) only when set */
    if (atomic_load_explicit(&t->interrupted, memory_order_relaxed) &&
        atomic_exchange_explicit(&t->interrupted, false, memory_order_relaxed)) {
        w->reason = EINTR;
    } else {
        spin_lock(&b->lock);
        if (atomic_load_explicit(&b->value, memory_order_relaxed) != w->expected) {
            w->reason = EWOULDBLOCK;
        } else {
            list_add_tail(b, w);
            t->waiter = w;
            if (w->abstime) {
                w->timer = timer_add(w->abstime, timeout_cb, w);
                if (!w->timer) {
                    list_del(w);
                    t->waiter = NULL;
                    w->reason = ENOMEM;
                }
            }
        }
        spin_unlock(&b->lock);
    }
    bool queued = t->waiter != NULL;
    spin_unlock(&t->wait_lock);
    if (!queued)
        core_ready(t);
}

static int wait_pthread(butex_t *b, butex_waiter_t *w)
{
    spin_lock(&b->lock);
    if (atomic_load_explicit(&b->value, memory_order_relaxed) != w->expected) {
        spin_unlock(&b->lock);
        return EWOULDBLOCK;
    }
    list_add_tail(b, w);
    spin_unlock(&b->lock);
    /* acquire: pairs with wake_waiter's release */
    while (atomic_load_explicit(&w->futex, memory_order_acquire) == 0) {
        struct timespec rel, *relp = NULL;
        if (w->abstime) {
            int64_t deadline = sb_ts_to_ns(w->abstime), now = realtime_ns();
            int64_t left = deadline > now ? deadline - now : 0; /* no overflow */
            if (left <= 0) {
                butex_t *c = lock_container(w);
                if (c) {
                    list_del(w);
                    spin_unlock(&c->lock);
                    return ETIMEDOUT;
                }
                /* a waker took us off the list: wait for its store */
                for (unsigned r = 0; atomic_load_explicit(&w->futex, memory_order_acquire) == 0; r++)
                    backoff(r);
                break;
            }
            rel = sb_ns_to_ts(left);
            relp = &rel;
        }
        futex_wait_private(&w->futex, 0, relp);
    }
    return w->reason;
}

int butex_wait(void *p, int expected, const struct timespec *abstime)
{
    butex_t *b = p;
    if (atomic_load_explicit(&b->value, memory_order_relaxed) != expected) {
        errno = EWOULDBLOCK;
        return -1;
    }
    if (abstime && sb_ts_to_ns(abstime) <= realtime_ns()) {
        errno = ETIMEDOUT;
        return -1;
    }
    butex_waiter_t w;
    memset(&w, 0, sizeof w);
    w.expected = expected;
    w.abstime = abstime;
    atomic_init(&w.container, b);
    atomic_init(&w.futex, 0);
    task_t *t = core_current_suspendable();
    int reason;
    if (!t) {
        core_worker_blocks(true); /* a worker's thread: its queues are lent meanwhile */
        reason = wait_pthread(b, &w);
        core_worker_blocks(false);
    } else {
        w.task = t;
        core_suspend(wait_remained, &w);
        /* resumed: an interrupter may still hold a pointer to w until we pass here */
        spin_lock(&t->wait_lock);
        t->waiter = NULL;
        spin_unlock(&t->wait_lock);
        if (w.timer)
            timer_del(w.timer);
        reason = w.reason;
    }
    if (reason) {
        errno = reason;
        return -1;
    }
    return 0;
}

/* ---- interrupt, stop, sleep ----------------------------------------------------------- */
/* Interrupt tid (and mark it stopped, for bthread_stop).  The version check and the
 * writes are one step with respect to slot reuse: core_task_lock holds the task's
 * wait_lock, under which task_end moves the version (as brpc checks the version under
 * the task's version lock), so a stale id reaches nobody. */
static int interrupt_task(bthread_t tid, bool stop)
{
    bool invalid;
    task_t *t = core_task_lock(tid, &invalid);
    if (!t)
        return stop || invalid ? EINVAL : ESRCH;
    /* relaxed, ordered by wait_lock: a waiter that takes wait_lock after our unlock sees
     * the flags; one that took it before is queued (we take it off) or not waiting */
    if (stop)
        atomic_store_explicit(&t->stopped, true, memory_order_relaxed);
    atomic_store_explicit(&t->interrupted, true, memory_order_relaxed);
    butex_waiter_t *w = t->waiter;
    bool wake = false;
    if (w) {
        butex_t *b = lock_container(w);
        if (b) {
            list_del(w);
            w->reason = EINTR;
            atomic_store_explicit(&t->interrupted, false, memory_order_relaxed); /* consumed */
            spin_unlock(&b->lock);
            wake = true;
        }
    }
    spin_unlock(&t->wait_lock);
    if (wake)
        core_ready(t);
    return 0;
}

int bthread_interrupt(bthread_t tid) { return interrupt_task(tid, false); }

int bthread_stop(bthread_t tid) { return interrupt_task(tid, true); }

int bthread_stopped(bthread_t tid)
{
    task_t *self = core_current();
    /* the caller itself is alive while it asks: no lock (relaxed: a flag) */
    if (self && core_tid(self) == tid)
        return atomic_load_explicit(&self->stopped, memory_order_relaxed);
    task_t *t = core_task_lock(tid, NULL); /* else we might read the slot's next task */
    if (!t)
        return 1;
    int stopped = atomic_load_explicit(&t->stopped, memory_order_relaxed);
    spin_unlock(&t->wait_lock);
    return stopped;
}

/* Any length: the deadline saturates (a sleep of 2^63 us or more lasts until the end
 * of time, or an interrupt); a pthread sleeps in nanosleep, which takes seconds (usleep
 * would truncate to useconds_t). */
int bthread_usleep(uint64_t us)
{
    if (!core_current_suspendable()) {
        struct timespec rel = {.tv_sec = (time_t)(us / 1000000),
                               .tv_nsec = (long)(us % 1000000) * 1000};
        core_worker_blocks(true); /* as in butex_wait */
        int rc = nanosleep(&rel, NULL);
        core_worker_blocks(false);
        return rc;
    }
    butex_t sleeper;
    butex_init_embedded(&sleeper, 0);
    int64_t now = realtime_ns();
    int64_t when = us >= (uint64_t)(INT64_MAX - now) / 1000 ? INT64_MAX : now + (int64_t)us * 1000;
    struct timespec abs = sb_ns_to_ts(when);
    if (butex_wait(&sleeper, 0, &abs) == 0 || errno == ETIMEDOUT)
        return 0;
    return -1; /* errno = EINTR (interrupted or stopped) */
}
