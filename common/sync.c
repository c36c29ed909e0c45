/*
 * sync.c -- mutex, condition variable, rwlock, semaphore and countdown on the butex.
 *
 * Every primitive here is a few atomic words that live in butex values (butex.h: the
 * value is the first member, so a butex pointer is an `_Atomic int *`) plus butex_wait
 * / butex_wake on those same words.  Nothing here knows whether the caller is a bthread
 * or a pthread: butex_wait suspends only the calling bthread, or puts a pthread to sleep
 * on a futex.  Built on butex.h and bthread.h only.
 *
 * Why no wake-up is lost.  butex_wait(b, expected) re-checks the value under the
 * butex's own lock and enqueues the waiter in the same critical section; butex_wake
 * takes that lock too.  So a waker that changes the value *before* it calls butex_wake
 * either makes the wait return EWOULDBLOCK or finds the waiter queued.  Every protocol
 * below therefore follows one rule: change the word first, wake second, and sleep only
 * on the exact value that was observed to need sleeping.
 *
 * Mutex (Drepper, "Futexes are tricky", mutex #3; brpc's bthread_mutex_t does the same).
 * The value is 0 (free), LOCKED, or LOCKED|CONTENDED.  lock = CAS 0 -> LOCKED; on
 * failure, exchange the value to LOCKED|CONTENDED and sleep while the old value had
 * LOCKED.  unlock = exchange to 0, and butex_wake only if CONTENDED was set, so an
 * uncontended lock/unlock pair is two atomic instructions and no butex call.  A thread
 * that has slept once always re-acquires as LOCKED|CONTENDED: it cannot know whether
 * others still sleep, so its unlock must wake one (at worst one spurious wake).
 * No spinning: on a 2-core VM the holder is usually not running.  Not recursive, no
 * owner check beyond "unlock of a free mutex returns EPERM".  Waits are not
 * interruptible (bthread_interrupt makes the waiter re-check and sleep again).
 *
 * Condition variable.  `seq` is a butex whose value counts signals.  wait reads seq
 * while holding the mutex, unlocks, sleeps while seq is unchanged, and re-locks as
 * CONTENDED.  signal = seq++ then wake one.  broadcast = seq++ then butex_requeue: one
 * waiter is woken, the rest are moved onto the mutex's butex, so they are woken one at a
 * time by successive unlocks instead of all at once fighting for the mutex (no thundering
 * herd).  That chain works because every waiter re-locks as CONTENDED: the first woken
 * one marks the mutex contended, so its unlock wakes the next requeued waiter, and so on.
 * The first wait binds the cond to its mutex (the requeue target); waiting with another
 * mutex returns EINVAL.  A wait that is interrupted returns 0 (a spurious wake-up, which
 * callers must tolerate anyway); a timed wait that times out returns ETIMEDOUT and, as
 * POSIX allows, may have consumed a concurrent signal.
 *
 * Rwlock: writer-preferring.  state (a butex) holds the active reader count and a WRITER
 * bit; wr_butex is a mutex (the protocol above) that queues writers, so at most one
 * writer at a time deals with `state`; rd_butex is a generation word readers sleep on.
 *   rdlock: CAS readers+1 while WRITER is clear; otherwise sleep on rd_butex.
 *   wrlock: lock wr_butex; set WRITER (from now on no new reader gets in); sleep on
 *           state until the reader count drains to 0.  The last reader to leave while
 *           WRITER is set wakes it.
 *   unlock (writer): clear WRITER, bump rd_butex's generation and wake all readers if any
 *           sleep there, unlock wr_butex.
 * A writer that is waiting blocks new readers, so writers never starve; a continuous
 * stream of writers can starve readers (the next writer may set WRITER before the woken
 * readers run).  A timed-out writer clears WRITER and wakes the readers it held back.
 *
 * Semaphore.  The value is the count plus a WAITERS bit, the mutex idea generalised:
 * post adds to the count and clears WAITERS, and calls butex_wake_n only if WAITERS was
 * set; a waiter sets WAITERS before it sleeps.  With more than one token the mutex's
 * argument is not enough: after a post has cleared WAITERS and woken A, further posts
 * see no WAITERS and wake nobody, although B may still sleep.  So a waiter that has
 * slept (a) keeps WAITERS set when it takes a token, so the next post wakes, and (b)
 * passes the baton: if it leaves the count above 0, it wakes one more sleeper.  The
 * invariant: whenever tokens are left and someone sleeps, some woken waiter is on its
 * way to take one.  Waits are not interruptible.
 *
 * Countdown.  The value is the count; signal subtracts and wakes all when it reaches
 * <= 0; waiters sleep on the exact count they saw and return when it is <= 0.
 *
 * Timed waits take an absolute CLOCK_REALTIME deadline, as pthread's do.  Return values
 * are errno codes as in pthread (0, EBUSY, EAGAIN, ETIMEDOUT, EINVAL, EPERM, ENOMEM).
 *
 * Robustness against a wake that races a timeout: if the butex ever reported ETIMEDOUT
 * for a waiter that a wake had already picked, that wake would be lost to the others.
 * Each timed path therefore makes one last attempt after ETIMEDOUT (mutex: exchange to
 * LOCKED|CONTENDED; sem: take a token if there is one; rwlock writer: check the drain)
 * and succeeds if it can, so a token is never left stranded beside sleeping waiters.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>

#include "bthread.h"
#include "butex.h"
#include "timeutil.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* The value word of a butex (butex.h guarantees it is the first member). */
static inline _Atomic int *word(void *butex) { return (_Atomic int *)butex; }

/* POSIX: EINVAL for a deadline whose nanoseconds are out of range. */
static inline int bad_abstime(const struct timespec *abstime) { return !sb_timespec_valid(abstime); }

/* butex_wait and report the errno that ends a wait: 0 for "woken, interrupted or the
 * value already moved on" (the caller re-checks its word), else ETIMEDOUT (or whatever
 * else the butex reports). */
static inline int wait_on(void *butex, int expected, const struct timespec *abstime)
{
    if (butex_wait(butex, expected, abstime) == 0)
        return 0;
    const int e = errno;
    return (e == EWOULDBLOCK || e == EINTR) ? 0 : e;
}

/* ---- mutex ----------------------------------------------------------------------- */

#define MUTEX_LOCKED 1
#define MUTEX_CONTENDED 2 /* only ever together with LOCKED */

/* Any thread.  Acquire `b` as LOCKED|CONTENDED, sleeping while it is held. */
static int mutex_lock_contended(void *b, const struct timespec *abstime)
{
    _Atomic int *v = word(b);
    /* acquire: on success we enter the critical section the last unlock released. */
    while (atomic_exchange_explicit(v, MUTEX_LOCKED | MUTEX_CONTENDED,
                                    memory_order_acquire) & MUTEX_LOCKED) {
        const int rc = wait_on(b, MUTEX_LOCKED | MUTEX_CONTENDED, abstime);
        if (UNLIKELY(rc != 0)) {
            /* Last attempt (see the header): if the mutex is free now we take it; if
             * not, we have at least left it marked contended, so the holder's unlock
             * wakes one of the sleepers. */
            if (!(atomic_exchange_explicit(v, MUTEX_LOCKED | MUTEX_CONTENDED,
                                           memory_order_acquire) & MUTEX_LOCKED))
                return 0;
            return rc;
        }
    }
    return 0;
}

/* Any thread. */
static inline int mutex_trylock_word(void *b)
{
    int expected = 0;
    /* acquire on success: pairs with the release exchange in mutex_unlock_word. */
    return atomic_compare_exchange_strong_explicit(word(b), &expected, MUTEX_LOCKED,
                                                   memory_order_acquire,
                                                   memory_order_relaxed)
               ? 0
               : EBUSY;
}

static inline int mutex_lock_word(void *b, const struct timespec *abstime)
{
    if (LIKELY(mutex_trylock_word(b) == 0))
        return 0;
    if (UNLIKELY(bad_abstime(abstime)))
        return EINVAL;
    return mutex_lock_contended(b, abstime);
}

/* The holder only. */
static inline int mutex_unlock_word(void *b)
{
    /* release: publishes the critical section to the next acquirer. */
    const int prev = atomic_exchange_explicit(word(b), 0, memory_order_release);
    if (UNLIKELY(prev & MUTEX_CONTENDED))
        butex_wake(b);
    return (prev & MUTEX_LOCKED) ? 0 : EPERM;
}

int bthread_mutex_init(bthread_mutex_t *m, const bthread_mutexattr_t *attr)
{
    (void)attr;
    if (!m)
        return EINVAL;
    m->butex = butex_create(); /* value 0: unlocked */
    return m->butex ? 0 : ENOMEM;
}

/* Every destroy below refuses (EBUSY, as glibc for a locked mutex) an object that is
 * held or waited on, and then leaves it intact: destroying it would recycle its butex
 * into the next object created, where a waiter that later times out would unlink itself
 * from that object's wait list and cut off its innocent waiters. */
int bthread_mutex_destroy(bthread_mutex_t *m)
{
    if (!m || !m->butex)
        return EINVAL;
    /* relaxed: a destroy racing a lock is the caller's bug; this catches the plain case */
    if (atomic_load_explicit(word(m->butex), memory_order_relaxed) != 0 ||
        butex_waiting(m->butex))
        return EBUSY;
    butex_destroy(m->butex);
    m->butex = NULL;
    return 0;
}

int bthread_mutex_trylock(bthread_mutex_t *m)
{
    if (UNLIKELY(!m || !m->butex))
        return EINVAL;
    return mutex_trylock_word(m->butex);
}

int bthread_mutex_lock(bthread_mutex_t *m)
{
    if (UNLIKELY(!m || !m->butex))
        return EINVAL;
    return mutex_lock_word(m->butex, NULL);
}

int bthread_mutex_timedlock(bthread_mutex_t *m, const struct timespec *abstime)
{
    if (UNLIKELY(!m || !m->butex))
        return EINVAL;
    return mutex_lock_word(m->butex, abstime);
}

int bthread_mutex_unlock(bthread_mutex_t *m)
{
    if (UNLIKELY(!m || !m->butex))
        return EINVAL;
    return mutex_unlock_word(m->butex);
}

/* ---- condition variable ---------------------------------------------------------- */

/* The cond's bound mutex is read by broadcast possibly without the mutex held, so it is
 * accessed atomically.  bthread.h keeps the field a plain pointer (the header is also
 * compiled as C++); an _Atomic pointer has the same size and alignment here. */
_Static_assert(sizeof(_Atomic(bthread_mutex_t *)) == sizeof(bthread_mutex_t *) &&
                   _Alignof(_Atomic(bthread_mutex_t *)) == _Alignof(bthread_mutex_t *),
               "atomic pointer layout");
static inline _Atomic(bthread_mutex_t *) *cond_mutex(bthread_cond_t *c)
{
    return (_Atomic(bthread_mutex_t *) *)&c->m;
}

int bthread_cond_init(bthread_cond_t *c, const bthread_condattr_t *attr)
{
    (void)attr;
    if (!c)
        return EINVAL;
    c->seq = butex_create();
    if (!c->seq)
        return ENOMEM;
    /* relaxed: the cond is not shared yet; publishing it is the caller's business. */
    atomic_store_explicit(cond_mutex(c), NULL, memory_order_relaxed);
    return 0;
}

int bthread_cond_destroy(bthread_cond_t *c)
{
    if (!c || !c->seq)
        return EINVAL;
    if (butex_waiting(c->seq))
        return EBUSY; /* a waiter (see bthread_mutex_destroy) */
    butex_destroy(c->seq);
    c->seq = NULL;
    atomic_store_explicit(cond_mutex(c), NULL, memory_order_relaxed); /* not shared now */
    return 0;
}

int bthread_cond_signal(bthread_cond_t *c)
{
    if (UNLIKELY(!c || !c->seq))
        return EINVAL;
    /* release: orders the caller's predicate update before the new seq for a waiter
     * that reads seq without the mutex (the butex lock orders the rest). */
    atomic_fetch_add_explicit(word(c->seq), 1, memory_order_release);
    butex_wake(c->seq);
    return 0;
}

int bthread_cond_broadcast(bthread_cond_t *c)
{
    if (UNLIKELY(!c || !c->seq))
        return EINVAL;
    atomic_fetch_add_explicit(word(c->seq), 1, memory_order_release); /* as in signal */
    /* acquire: pairs with the binding CAS, so m->butex (written at init) is visible. */
    bthread_mutex_t *m = atomic_load_explicit(cond_mutex(c), memory_order_acquire);
    if (m)
        butex_requeue(c->seq, m->butex); /* wake one, move the rest onto the mutex */
    else
        butex_wake_all(c->seq); /* no waiter has bound a mutex: nobody can be waiting */
    return 0;
}

static int cond_wait_impl(bthread_cond_t *c, bthread_mutex_t *m,
                          const struct timespec *abstime)
{
    if (UNLIKELY(!c || !c->seq || !m || !m->butex))
        return EINVAL;
    if (UNLIKELY(bad_abstime(abstime)))
        return EINVAL;
    /* relaxed: we hold m, and every signal that must wake us comes after we release m
     * (or after a predicate change we saw under m); the butex re-checks under its lock. */
    const int seq = atomic_load_explicit(word(c->seq), memory_order_relaxed);
    bthread_mutex_t *bound = atomic_load_explicit(cond_mutex(c), memory_order_relaxed);
    if (UNLIKELY(bound != m)) {
        if (bound != NULL)
            return EINVAL;
        /* release: publishes m (and its butex field) to broadcast's acquire load. */
        if (!atomic_compare_exchange_strong_explicit(cond_mutex(c), &bound, m,
                                                     memory_order_release,
                                                     memory_order_relaxed) &&
            bound != m)
            return EINVAL;
    }
    const int unlocked = mutex_unlock_word(m->butex);
    if (UNLIKELY(unlocked != 0))
        return unlocked; /* EPERM: the caller did not hold m */
    const int rc = wait_on(c->seq, seq, abstime);
    /* Always re-lock as CONTENDED: after a broadcast other waiters may be queued on the
     * mutex's butex, and only an unlock that sees CONTENDED wakes them. */
    mutex_lock_contended(m->butex, NULL);
    return rc;
}

int bthread_cond_wait(bthread_cond_t *c, bthread_mutex_t *m)
{
    return cond_wait_impl(c, m, NULL);
}

int bthread_cond_timedwait(bthread_cond_t *c, bthread_mutex_t *m,
                           const struct timespec *abstime)
{
    return cond_wait_impl(c, m, abstime);
}

/* ---- rwlock ---------------------------------------------------------------------- */

#define RW_WRITER (1 << 30)        /* a writer holds the lock or waits for readers */
#define RW_READERS (RW_WRITER - 1) /* active reader count */
#define RD_SLEEPERS 1              /* rd_butex: some reader sleeps; the rest is a gen */

int bthread_rwlock_init(bthread_rwlock_t *rw, const bthread_rwlockattr_t *attr)
{
    (void)attr;
    if (!rw)
        return EINVAL;
    rw->state = butex_create();
    rw->wr_butex = butex_create();
    rw->rd_butex = butex_create();
    if (!rw->state || !rw->wr_butex || !rw->rd_butex) {
        if (rw->state)
            butex_destroy(rw->state);
        if (rw->wr_butex)
            butex_destroy(rw->wr_butex);
        if (rw->rd_butex)
            butex_destroy(rw->rd_butex);
        rw->state = rw->wr_butex = rw->rd_butex = NULL;
        return ENOMEM;
    }
    return 0;
}

int bthread_rwlock_destroy(bthread_rwlock_t *rw)
{
    if (!rw || !rw->state)
        return EINVAL;
    /* held (readers, a writer, or a queued writer holding wr_butex), or waited on: the
     * three butexes are checked before any is destroyed (relaxed: as for the mutex) */
    if (atomic_load_explicit(word(rw->state), memory_order_relaxed) != 0 ||
        atomic_load_explicit(word(rw->wr_butex), memory_order_relaxed) != 0 ||
        butex_waiting(rw->state) || butex_waiting(rw->wr_butex) ||
        butex_waiting(rw->rd_butex))
        return EBUSY;
    butex_destroy(rw->state);
    butex_destroy(rw->wr_butex);
    butex_destroy(rw->rd_butex);
    rw->state = rw->wr_butex = rw->rd_butex = NULL;
    return 0;
}

/* Any thread: let every reader sleeping on rd_butex re-check `state`.  Called after
 * WRITER was cleared. */
static void rw_wake_readers(bthread_rwlock_t *rw)
{
    _Atomic int *g = word(rw->rd_butex);
    int old = atomic_load_explicit(g, memory_order_relaxed);
    int next;
    do /* new generation, RD_SLEEPERS cleared: everyone sleeping now gets woken */
        next = (int)(((unsigned)old & ~(unsigned)RD_SLEEPERS) + 2u);
    /* release: the cleared WRITER bit is visible to a reader whose acquire load of the
     * generation sees this value (rw_rdlock's sleep check). */
    while (!atomic_compare_exchange_weak_explicit(g, &old, next, memory_order_release,
                                                  memory_order_relaxed));
    if (old & RD_SLEEPERS)
        butex_wake_all(rw->rd_butex);
}

/* The writer (holder of wr_butex with WRITER set): give the lock up. */
static void rw_release_writer(bthread_rwlock_t *rw)
{
    /* release: publishes the write section to readers that CAS the count up. */
    atomic_fetch_and_explicit(word(rw->state), ~RW_WRITER, memory_order_release);
    rw_wake_readers(rw);
    mutex_unlock_word(rw->wr_butex);
}

static int rw_rdlock(bthread_rwlock_t *rw, const struct timespec *abstime, int try_only)
{
    if (UNLIKELY(!rw || !rw->state))
        return EINVAL;
    _Atomic int *st = word(rw->state);
    _Atomic int *g = word(rw->rd_butex);
    int s = atomic_load_explicit(st, memory_order_relaxed);
    for (;;) {
        if (!(s & RW_WRITER)) {
            if (UNLIKELY((s & RW_READERS) == RW_READERS))
                return EAGAIN; /* reader count would overflow */
            /* acquire: pairs with the writer's release of WRITER. */
            if (atomic_compare_exchange_weak_explicit(st, &s, s + 1, memory_order_acquire,
                                                      memory_order_relaxed))
                return 0;
            continue;
        }
        if (try_only)
            return EBUSY;
        if (UNLIKELY(bad_abstime(abstime)))
            return EINVAL;
        /* Mark ourselves as a sleeper in the generation word, then re-check WRITER.
         * acquire on the generation: if the writer already cleared WRITER and bumped
         * the generation, the re-load of state below sees WRITER clear. */
        int gen = atomic_load_explicit(g, memory_order_acquire);
        if (!(gen & RD_SLEEPERS) &&
            !atomic_compare_exchange_strong_explicit(g, &gen, gen | RD_SLEEPERS,
                                                     memory_order_acquire,
                                                     memory_order_acquire)) {
            s = atomic_load_explicit(st, memory_order_relaxed);
            continue; /* the generation moved: re-check from the top */
        }
        gen |= RD_SLEEPERS;
        s = atomic_load_explicit(st, memory_order_relaxed);
        if (!(s & RW_WRITER))
            continue;
        const int rc = wait_on(rw->rd_butex, gen, abstime);
        s = atomic_load_explicit(st, memory_order_relaxed);
        if (UNLIKELY(rc != 0) && (s & RW_WRITER))
            return rc; /* ETIMEDOUT: nothing to undo, we never counted ourselves */
    }
}

static int rw_wrlock(bthread_rwlock_t *rw, const struct timespec *abstime, int try_only)
{
    if (UNLIKELY(!rw || !rw->state))
        return EINVAL;
    _Atomic int *st = word(rw->state);
    if (try_only) {
        if (mutex_trylock_word(rw->wr_butex) != 0)
            return EBUSY;
        /* We hold wr_butex, so WRITER is clear and only readers can be in state. */
        int expected = 0;
        /* acquire: pairs with the last reader's release decrement. */
        if (atomic_compare_exchange_strong_explicit(st, &expected, RW_WRITER,
                                                    memory_order_acquire,
                                                    memory_order_relaxed))
            return 0;
        mutex_unlock_word(rw->wr_butex);
        return EBUSY;
    }
    int rc = mutex_lock_word(rw->wr_butex, abstime);
    if (rc != 0)
        return rc;
    /* acquire: when no reader is active we own the lock at once. */
    int s = atomic_fetch_or_explicit(st, RW_WRITER, memory_order_acquire) | RW_WRITER;
    while (s & RW_READERS) {
        /* Only readers leave now; the last one wakes us (the value changes each time). */
        rc = wait_on(rw->state, s, abstime);
        /* acquire: pairs with the readers' release decrements. */
        s = atomic_load_explicit(st, memory_order_acquire);
        if (UNLIKELY(rc != 0) && (s & RW_READERS)) {
            rw_release_writer(rw); /* undo: let the readers we held back in */
            return rc;
        }
    }
    return 0;
}

int bthread_rwlock_rdlock(bthread_rwlock_t *rw) { return rw_rdlock(rw, NULL, 0); }
int bthread_rwlock_tryrdlock(bthread_rwlock_t *rw) { return rw_rdlock(rw, NULL, 1); }
int bthread_rwlock_timedrdlock(bthread_rwlock_t *rw, const struct timespec *abstime)
{
    return rw_rdlock(rw, abstime, 0);
}
int bthread_rwlock_wrlock(bthread_rwlock_t *rw) { return rw_wrlock(rw, NULL, 0); }
int bthread_rwlock_trywrlock(bthread_rwlock_t *rw) { return rw_wrlock(rw, NULL, 1); }
int bthread_rwlock_timedwrlock(bthread_rwlock_t *rw, const struct timespec *abstime)
{
    return rw_wrlock(rw, abstime, 0);
}

/* A reader or the writer.  Which one is decided by the count: a holding reader counts
 * itself (so it is >= 1), and while a writer holds the lock the count is 0 and no reader
 * can raise it. */
int bthread_rwlock_unlock(bthread_rwlock_t *rw)
{
    if (UNLIKELY(!rw || !rw->state))
        return EINVAL;
    _Atomic int *st = word(rw->state);
    const int s = atomic_load_explicit(st, memory_order_relaxed); /* own state: see above */
    if (s & RW_READERS) {
        /* release: publishes the read section before a writer's acquire of the drain. */
        const int prev = atomic_fetch_sub_explicit(st, 1, memory_order_release);
        if (prev == (RW_WRITER | 1))
            butex_wake(rw->state); /* last reader out, a writer waits for the drain */
        return 0;
    }
    if (s & RW_WRITER) {
        rw_release_writer(rw);
        return 0;
    }
    return EPERM;
}

/* ---- semaphore ------------------------------------------------------------------- */

#define SEM_WAITERS (1 << 30)
#define SEM_COUNT (SEM_WAITERS - 1)

int bthread_sem_init(bthread_sem_t *s, unsigned value)
{
    if (!s || value > (unsigned)SEM_COUNT)
        return EINVAL;
    s->butex = butex_create();
    if (!s->butex)
        return ENOMEM;
    /* relaxed: not shared yet. */
    atomic_store_explicit(word(s->butex), (int)value, memory_order_relaxed);
    return 0;
}

int bthread_sem_destroy(bthread_sem_t *s)
{
    if (!s || !s->butex)
        return EINVAL;
    if (butex_waiting(s->butex))
        return EBUSY; /* see bthread_mutex_destroy */
    butex_destroy(s->butex);
    s->butex = NULL;
    return 0;
}

/* Take one token if there is one.  `keep` is SEM_WAITERS for a thread that has slept
 * (others may still sleep, so the next post must wake), else 0.  A thread that has
 * slept also passes the baton (see the header) when it leaves tokens behind. */
static inline int sem_take(void *b, int *s, int keep)
{
    _Atomic int *v = word(b);
    while (*s & SEM_COUNT) {
        /* acquire: pairs with the poster's release. */
        if (atomic_compare_exchange_weak_explicit(v, s, (*s - 1) | keep,
                                                  memory_order_acquire,
                                                  memory_order_relaxed)) {
            if (keep && (*s & SEM_COUNT) > 1)
                butex_wake(b);
            return 1;
        }
    }
    return 0;
}

int bthread_sem_trywait(bthread_sem_t *sem)
{
    if (UNLIKELY(!sem || !sem->butex))
        return EINVAL;
    int s = atomic_load_explicit(word(sem->butex), memory_order_relaxed);
    return sem_take(sem->butex, &s, 0) ? 0 : EAGAIN;
}

static int sem_wait_impl(bthread_sem_t *sem, const struct timespec *abstime)
{
    if (UNLIKELY(!sem || !sem->butex))
        return EINVAL;
    _Atomic int *v = word(sem->butex);
    int s = atomic_load_explicit(v, memory_order_relaxed);
    int keep = 0;
    for (;;) {
        if (sem_take(sem->butex, &s, keep))
            return 0;
        if (UNLIKELY(bad_abstime(abstime)))
            return EINVAL;
        /* Count is 0: announce a sleeper (relaxed: the butex lock orders the wait). */
        if (!(s & SEM_WAITERS) &&
            !atomic_compare_exchange_weak_explicit(v, &s, s | SEM_WAITERS,
                                                   memory_order_relaxed,
                                                   memory_order_relaxed))
            continue;
        const int rc = wait_on(sem->butex, SEM_WAITERS, abstime);
        keep = SEM_WAITERS;
        s = atomic_load_explicit(v, memory_order_relaxed);
        if (UNLIKELY(rc != 0))
            return sem_take(sem->butex, &s, keep) ? 0 : rc; /* last attempt: header */
    }
}

int bthread_sem_wait(bthread_sem_t *s) { return sem_wait_impl(s, NULL); }
int bthread_sem_timedwait(bthread_sem_t *s, const struct timespec *abstime)
{
    return sem_wait_impl(s, abstime);
}

int bthread_sem_post_n(bthread_sem_t *sem, unsigned n)
{
    if (UNLIKELY(!sem || !sem->butex))
        return EINVAL;
    if (n == 0)
        return 0;
    _Atomic int *v = word(sem->butex);
    int s = atomic_load_explicit(v, memory_order_relaxed);
    int next;
    do {
        if ((unsigned)(SEM_COUNT - (s & SEM_COUNT)) < n)
            return EOVERFLOW;
        next = (s & SEM_COUNT) + (int)n; /* WAITERS cleared: we wake the sleepers */
        /* release: publishes what the poster did before posting to the taker. */
    } while (!atomic_compare_exchange_weak_explicit(v, &s, next, memory_order_release,
                                                    memory_order_relaxed));
    if (s & SEM_WAITERS) {
        if (n == 1)
            butex_wake(sem->butex);
        else
            butex_wake_n(sem->butex, n);
    }
    return 0;
}

int bthread_sem_post(bthread_sem_t *s) { return bthread_sem_post_n(s, 1); }

/* ---- countdown ------------------------------------------------------------------- */

int bthread_countdown_init(bthread_countdown_t *c, int initial_count)
{
    if (!c || initial_count < 0)
        return EINVAL;
    c->butex = butex_create();
    if (!c->butex)
        return ENOMEM;
    /* relaxed: not shared yet. */
    atomic_store_explicit(word(c->butex), initial_count, memory_order_relaxed);
    return 0;
}

int bthread_countdown_destroy(bthread_countdown_t *c)
{
    if (!c || !c->butex)
        return EINVAL;
    if (butex_waiting(c->butex))
        return EBUSY; /* see bthread_mutex_destroy */
    butex_destroy(c->butex);
    c->butex = NULL;
    return 0;
}

int bthread_countdown_signal(bthread_countdown_t *c, int sig)
{
    if (UNLIKELY(!c || !c->butex || sig < 0))
        return EINVAL;
    /* Copy the pointer first: once the count reaches 0 a waiter may return and destroy
     * *c; the butex itself is type-stable memory (butex.h), so waking it stays safe. */
    void *b = c->butex;
    /* release: what the signaller did is visible to a waiter that sees the count <= 0. */
    const int prev = atomic_fetch_sub_explicit(word(b), sig, memory_order_release);
    if (prev > 0 && prev - sig <= 0)
        butex_wake_all(b);
    return 0;
}

int bthread_countdown_add_count(bthread_countdown_t *c, int v)
{
    if (UNLIKELY(!c || !c->butex || v < 0))
        return EINVAL;
    /* relaxed: adding work publishes nothing; waiters only care about reaching 0. */
    atomic_fetch_add_explicit(word(c->butex), v, memory_order_relaxed);
    return 0;
}

static int countdown_wait_impl(bthread_countdown_t *c, const struct timespec *abstime)
{
    if (UNLIKELY(!c || !c->butex))
        return EINVAL;
    if (UNLIKELY(bad_abstime(abstime)))
        return EINVAL;
    _Atomic int *v = word(c->butex);
    for (;;) {
        /* acquire: pairs with the release in signal. */
        const int n = atomic_load_explicit(v, memory_order_acquire);
        if (n <= 0)
            return 0;
        const int rc = wait_on(c->butex, n, abstime);
        if (UNLIKELY(rc != 0))
            return atomic_load_explicit(v, memory_order_acquire) <= 0 ? 0 : rc;
    }
}

int bthread_countdown_wait(bthread_countdown_t *c) { return countdown_wait_impl(c, NULL); }
int bthread_countdown_timedwait(bthread_countdown_t *c, const struct timespec *abstime)
{
    return countdown_wait_impl(c, abstime);
}
