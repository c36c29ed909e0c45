/*
 * fd.c -- bthread_fd_wait / bthread_fd_timedwait: wait for a file descriptor without
 * blocking the worker.
 *
 * One dispatcher pthread blocks in epoll_wait for the whole process.  Each fd number
 * has one butex, created on the fd's first wait and kept until
 * bthread_fd_shutdown_internal(); its value counts the events the dispatcher delivered
 * for that fd.  A bthread waits like this:
 *
 *     seen = value(butex[fd])                      read the counter first,
 *     epoll_ctl(ADD, fd, events|EPOLLONESHOT, ptr = butex[fd])      then arm,
 *     butex_wait(butex[fd], seen, abstime)          and sleep on the old count;
 *     epoll_ctl(DEL, fd)                            disarm on every way out.
 *
 * The dispatcher, for each event: value++ then butex_wake_all.  An event that fires
 * between the ADD and the butex_wait has already changed the value, so the wait returns
 * at once (EWOULDBLOCK): no lost wake-up.  EPOLLONESHOT means one event per
 * registration, so a level-triggered fd that stays ready does not spin the dispatcher.
 *
 * Why a butex per fd that lives until shutdown and not one per call: the dispatcher may
 * already hold an event (returned by epoll_wait) for a waiter that has timed out and
 * left.  With per-call butexes that event would bump a butex that may have been reused
 * for, say, a mutex and corrupt it.  With per-fd butexes a late event only bumps this
 * fd's counter.  The price: such a late event can make the *next* wait on the same fd
 * return 0 although the fd is not ready.  Callers retry their I/O on EAGAIN anyway, as
 * with any readiness API.
 *
 * Whose registration a DEL removes.  epoll keys a registration on the file *and* the
 * number, but EPOLL_CTL_DEL names only the number, and removes the registration of
 * whatever file the number names now.  When a waiter's number is closed and reused (a
 * new pipe, dup2, accept: the everyday server pattern), epoll has dropped the first
 * waiter's registration with the file, and a second bthread may register the new file
 * on the same number; a DEL by the first waiter, leaving on a timeout or an interrupt,
 * would remove the second one's, which then waits for its deadline or forever.  So each
 * number keeps the owner of its live registration (the waiter whose ADD made it; a
 * token unique while it waits), and a waiter leaves with a DEL only while it is still
 * the owner; the ADD that makes a registration and the DEL that removes it run under
 * the number's lock.  A waiter whose registration a reuse replaced leaves without a DEL
 * (epoll dropped its registration with the file, or keeps it while a duplicate holds the
 * file open, see below).  The table costs 24 bytes per fd number (butex, owner, waiter
 * count, lock) and one butex per fd ever waited on.
 *
 * bthread_close (brpc's): close a number that bthreads may wait on.  Under the number's
 * lock it bumps the butex and wakes every bthread waiting on the number (their waits
 * return 0, as brpc's do: the caller's next I/O on the closed number says EBADF),
 * removes the live registration and closes the number.  A plain close() wakes nobody.
 *
 * Limitations (brpc has the same ones):
 *   - one bthread at a time per fd: a second concurrent bthread waiter on the same fd
 *     gets -1 with errno EEXIST (epoll refuses a second ADD).  Plain pthreads have no
 *     such limit (see below).
 *   - closing an fd with close() while a bthread waits on it does not wake the waiter
 *     (epoll drops a closed file silently); it waits until its deadline or an interrupt
 *     (bthread_close wakes it).  If a duplicate keeps the file open, its registration
 *     outlives the waiter (epoll cannot name it by number any more); a later wait on the
 *     same number and file takes that registration over (ADD says EEXIST, nobody waits:
 *     MOD) instead of failing.
 *   - fd numbers must be below FD_MAX (2^20) for the bthread path: EINVAL above.
 *   - a regular file or directory (epoll says EPERM) counts as always ready, as poll(2)
 *     reports it.
 *
 * A plain pthread (bthread_self() == 0) has no worker to keep free: it simply ppoll(2)s
 * the fd, so any number of pthreads may wait on one fd, and the dispatcher is not
 * started for them.
 *
 * Returns 0 when ready, else -1 with errno: ETIMEDOUT, EINTR (bthread_interrupt), EINVAL,
 * EBADF, EEXIST, ENOMEM.  Deadlines are absolute CLOCK_REALTIME, as everywhere in
 * bthread.h.  The dispatcher starts on the first bthread wait and is stopped by
 * bthread_fd_shutdown_internal() (from bthread_shutdown()).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bthread.h"
#include "butex.h"
#include "fd_internal.h"
#include "spinlock.h"
#include "timeutil.h"

/* epoll's event bits are poll's (the pthread path passes them straight to ppoll). */
_Static_assert(EPOLLIN == POLLIN && EPOLLOUT == POLLOUT && EPOLLPRI == POLLPRI &&
                   EPOLLERR == POLLERR && EPOLLHUP == POLLHUP && EPOLLRDHUP == POLLRDHUP &&
                   EPOLLRDNORM == POLLRDNORM && EPOLLWRNORM == POLLWRNORM &&
                   EPOLLRDBAND == POLLRDBAND && EPOLLWRBAND == POLLWRBAND,
               "epoll and poll event bits differ");
#define POLL_EVENT_MASK 0xffffu /* the flags above 16 bits (EPOLLET, ...) are epoll's */

/* ---- the per-fd butex table: two levels, blocks allocated on first use ------------ */

#define FD_BLOCK_BITS 10
#define FD_BLOCK_SIZE (1 << FD_BLOCK_BITS)
#define FD_NBLOCKS 1024
#define FD_MAX (FD_NBLOCKS * FD_BLOCK_SIZE)

/* One fd number's entry.  The butex is made on the number's first wait and lives until
 * shutdown; the rest are zero until then. */
typedef struct fd_entry {
    _Atomic(void *) butex;
    _Atomic(void *) owner; /* the waiter whose ADD made the live registration, or NULL;
                              under lock */
    _Atomic int waiters;   /* bthreads inside fd_wait_bthread on this number */
    spinlock_t lock;       /* an ADD and the owner it sets; the owner's check and DEL */
} fd_entry_t;

typedef struct fd_block {
    fd_entry_t e[FD_BLOCK_SIZE];
} fd_block_t;

static _Atomic(fd_block_t *) fd_table[FD_NBLOCKS];

/* Any thread.  The entry of fd, its block made on first use when `make` (else NULL if
 * it has none), or NULL with errno. */
static fd_entry_t *fd_entry(int fd, bool make)
{
    if (fd >= FD_MAX) {
        errno = EINVAL;
        return NULL;
    }
    _Atomic(fd_block_t *) *bp = &fd_table[fd >> FD_BLOCK_BITS];
    /* acquire: pairs with the release that published the block's initialised slots. */
    fd_block_t *blk = atomic_load_explicit(bp, memory_order_acquire);
    if (!blk && make) {
        fd_block_t *fresh = calloc(1, sizeof *fresh); /* all-zero: every entry empty */
        if (!fresh) {
            errno = ENOMEM;
            return NULL;
        }
        /* release: publishes the initialised slots; acquire on failure: as above. */
        if (atomic_compare_exchange_strong_explicit(bp, &blk, fresh, memory_order_acq_rel,
                                                    memory_order_acquire))
            blk = fresh;
        else
            free(fresh);
    }
    return blk ? &blk->e[fd & (FD_BLOCK_SIZE - 1)] : NULL;
}

/* Any thread.  The butex of an entry, created on first use, or NULL with errno. */
static void *fd_butex(fd_entry_t *e)
{
    /* acquire: the butex was created (value 0) before its pointer was published. */
    void *b = atomic_load_explicit(&e->butex, memory_order_acquire);
    if (!b) {
        void *fresh = butex_create();
        if (!fresh) {
            errno = ENOMEM;
            return NULL;
        }
        /* release/acquire: as for the block. */
        if (atomic_compare_exchange_strong_explicit(&e->butex, &b, fresh,
                                                    memory_order_acq_rel,
                                                    memory_order_acquire))
            b = fresh;
        else
            butex_destroy(fresh); /* another waiter on this fd installed one first */
    }
    return b;
}

/* ---- the dispatcher ---------------------------------------------------------------- */

static pthread_mutex_t fd_start_lock = PTHREAD_MUTEX_INITIALIZER;
/* The epoll fd while the dispatcher runs, else -1.  Written under fd_start_lock. */
static _Atomic int fd_epfd = -1;
static int fd_stopfd = -1; /* eventfd, registered with data.ptr == NULL: "stop" */
static pthread_t fd_thread;

static void *fd_dispatch(void *arg)
{
    const int epfd = (int)(intptr_t)arg;
    struct epoll_event ev[256];
    for (;;) {
        const int n = epoll_wait(epfd, ev, (int)(sizeof ev / sizeof ev[0]), -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            perror("bthread fd dispatcher: epoll_wait"); /* cannot happen with a valid fd */
            abort();
        }
        for (int i = 0; i < n; i++) {
            void *b = ev[i].data.ptr;
            if (!b)
                return NULL; /* the stop eventfd: only written when nobody waits */
            /* relaxed: the butex lock inside butex_wake_all orders this change against
             * the waiter's check of the value. */
            atomic_fetch_add_explicit((_Atomic int *)b, 1, memory_order_relaxed);
            butex_wake_all(b);
        }
    }
}

/* Any thread.  The epoll fd, starting the dispatcher on first use; -1 with errno. */
static int fd_dispatcher(void)
{
    /* acquire: pairs with the release below, so the thread and fds are set up. */
    int ep = atomic_load_explicit(&fd_epfd, memory_order_acquire);
    if (ep >= 0)
        return ep;
    pthread_mutex_lock(&fd_start_lock);
    ep = atomic_load_explicit(&fd_epfd, memory_order_relaxed); /* under the lock */
    if (ep < 0) {
        int err = 0;
        ep = epoll_create1(EPOLL_CLOEXEC);
        fd_stopfd = ep < 0 ? -1 : eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        struct epoll_event stop = {.events = EPOLLIN, .data.ptr = NULL};
        if (ep < 0 || fd_stopfd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd_stopfd, &stop) < 0)
            err = errno;
        if (!err) {
            /* The dispatcher takes no signals: they belong to the application's threads. */
            sigset_t all, old;
            sigfillset(&all);
            pthread_sigmask(SIG_SETMASK, &all, &old);
            err = pthread_create(&fd_thread, NULL, fd_dispatch, (void *)(intptr_t)ep);
            pthread_sigmask(SIG_SETMASK, &old, NULL);
        }
        if (err) {
            if (fd_stopfd >= 0)
                close(fd_stopfd);
            if (ep >= 0)
                close(ep);
            fd_stopfd = ep = -1;
            pthread_mutex_unlock(&fd_start_lock);
            errno = err;
            return -1;
        }
        pthread_setname_np(fd_thread, "bthread_fd");
        atomic_store_explicit(&fd_epfd, ep, memory_order_release); /* see the acquire */
    }
    pthread_mutex_unlock(&fd_start_lock);
    return ep;
}

void bthread_fd_shutdown_internal(void)
{
    pthread_mutex_lock(&fd_start_lock);
    const int ep = atomic_load_explicit(&fd_epfd, memory_order_relaxed); /* under lock */
    if (ep >= 0) {
        const uint64_t one = 1;
        while (write(fd_stopfd, &one, sizeof one) < 0 && errno == EINTR)
            ;
        pthread_join(fd_thread, NULL);
        close(fd_stopfd);
        close(ep);
        fd_stopfd = -1;
        atomic_store_explicit(&fd_epfd, -1, memory_order_relaxed); /* under the lock */
    }
    /* Nobody waits (the caller's precondition) and the dispatcher is gone, so nothing
     * else touches the table: relaxed throughout. */
    for (int i = 0; i < FD_NBLOCKS; i++) {
        fd_block_t *blk = atomic_load_explicit(&fd_table[i], memory_order_relaxed);
        if (!blk)
            continue;
        for (int j = 0; j < FD_BLOCK_SIZE; j++) {
            void *b = atomic_load_explicit(&blk->e[j].butex, memory_order_relaxed);
            if (b)
                butex_destroy(b);
        }
        free(blk);
        atomic_store_explicit(&fd_table[i], NULL, memory_order_relaxed);
    }
    pthread_mutex_unlock(&fd_start_lock);
}

/* ---- waiting ----------------------------------------------------------------------- */

static int fd_wait_pthread(int fd, unsigned events, const struct timespec *abstime);

/* Any thread: is fd ready for events now (poll with a zero timeout)? */
static bool fd_ready_now(int fd, unsigned events)
{
    struct pollfd p = {.fd = fd, .events = (short)(events & POLL_EVENT_MASK)};
    return poll(&p, 1, 0) > 0 && !(p.revents & POLLNVAL);
}

/* A bthread: arm a one-shot registration and sleep on the fd's butex.  A ready fd is
 * ready whatever the deadline, as for a pthread: a deadline already past gets poll's
 * zero-timeout answer, and a wait that times out looks once more. */
static int fd_wait_bthread(int fd, unsigned events, const struct timespec *abstime)
{
    if (abstime && sb_ts_to_ns(abstime) <= sb_clock_ns(CLOCK_REALTIME))
        return fd_wait_pthread(fd, events, abstime);
    const int ep = fd_dispatcher();
    if (ep < 0)
        return -1;
    fd_entry_t *e = fd_entry(fd, true);
    void *b = e ? fd_butex(e) : NULL;
    if (!b)
        return -1;
    /* relaxed: only the dispatcher changes the value, after an event that needs the
     * registration below; butex_wait re-checks it under the butex lock. */
    const int seen = atomic_load_explicit((_Atomic int *)b, memory_order_relaxed);
    struct epoll_event ev = {.events = events | EPOLLONESHOT, .data.ptr = b};
    char me; /* this wait's owner token: an address unique while we wait */
    /* Each waiter counts itself before its ADD and uncounts after leaving, so one whose
     * ADD fails with EEXIST and that then counts only itself knows that no live waiter
     * made the registration (seq_cst; the number's lock orders one waiter's ADD before
     * another's failed one). */
    atomic_fetch_add_explicit(&e->waiters, 1, memory_order_seq_cst);
    spin_lock(&e->lock);
    int err = epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? errno : 0;
    /* EEXIST with nobody else waiting: the leftover of a wait whose fd was closed while
     * a duplicate kept the file open (epoll keys on file and number, and that waiter
     * could not remove it by number); the number names that file again.  Take it over. */
    if (err == EEXIST && atomic_load_explicit(&e->waiters, memory_order_seq_cst) == 1 &&
        epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev) == 0)
        err = 0;
    if (!err) /* relaxed: under the lock */
        atomic_store_explicit(&e->owner, &me, memory_order_relaxed);
    spin_unlock(&e->lock);
    if (err) {
        atomic_fetch_sub_explicit(&e->waiters, 1, memory_order_seq_cst);
        if (err == EPERM)
            return 0; /* a regular file, always ready */
        errno = err;
        return -1;
    }
    if (butex_wait(b, seen, abstime) < 0 && errno != EWOULDBLOCK)
        err = errno; /* ETIMEDOUT, EINTR */
    /* Disarm, only while the live registration is still ours (see the file comment):
     * after a close and a reuse of the number, another waiter's may be the one the
     * number names now. */
    spin_lock(&e->lock);
    if (atomic_load_explicit(&e->owner, memory_order_relaxed) == &me) { /* under the lock */
        epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL); /* ENOENT if the fd was closed meanwhile */
        atomic_store_explicit(&e->owner, NULL, memory_order_relaxed);
    }
    spin_unlock(&e->lock);
    atomic_fetch_sub_explicit(&e->waiters, 1, memory_order_seq_cst); /* see above */
    if (err == ETIMEDOUT && fd_ready_now(fd, events))
        err = 0; /* the event was on its way when the deadline fired */
    if (err) {
        errno = err;
        return -1;
    }
    return 0;
}

/* A plain pthread: ppoll until ready or the deadline. */
static int fd_wait_pthread(int fd, unsigned events, const struct timespec *abstime)
{
    struct pollfd p = {.fd = fd, .events = (short)(events & POLL_EVENT_MASK)};
    for (;;) {
        struct timespec rel, *relp = NULL;
        if (abstime) {
            /* compare before subtracting: a far-past deadline saturates to INT64_MIN */
            int64_t when = sb_ts_to_ns(abstime), now = sb_clock_ns(CLOCK_REALTIME);
            rel = sb_ns_to_ts(when > now ? when - now : 0);
            relp = &rel;
        }
        const int n = ppoll(&p, 1, relp, NULL);
        if (n > 0) {
            if (p.revents & POLLNVAL) {
                errno = EBADF;
                return -1;
            }
            return 0;
        }
        if (n == 0 && relp && relp->tv_sec == 0 && relp->tv_nsec == 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        if (n < 0 && errno != EINTR)
            return -1;
        /* EINTR (a signal), or ppoll returned before the REALTIME deadline: go again. */
    }
}

int bthread_fd_timedwait(int fd, unsigned events, const struct timespec *abstime)
{
    if (fd < 0 || (events & POLL_EVENT_MASK) == 0 ||
        !sb_timespec_valid(abstime)) {
        errno = EINVAL;
        return -1;
    }
    if (bthread_self() == 0)
        return fd_wait_pthread(fd, events, abstime);
    return fd_wait_bthread(fd, events, abstime);
}

int bthread_fd_wait(int fd, unsigned events) { return bthread_fd_timedwait(fd, events, NULL); }

int bthread_close(int fd)
{
    fd_entry_t *e = fd < 0 ? NULL : fd_entry(fd, false);
    if (!e) /* never waited on by a bthread (or out of the table): a plain close */
        return close(fd);
    /* acquire: as in fd_butex */
    void *b = atomic_load_explicit(&e->butex, memory_order_acquire);
    const int ep = atomic_load_explicit(&fd_epfd, memory_order_acquire);
    spin_lock(&e->lock);
    if (b) {
        /* relaxed: butex_wake_all's lock orders it against a waiter's check */
        atomic_fetch_add_explicit((_Atomic int *)b, 1, memory_order_relaxed);
        butex_wake_all(b);
    }
    if (atomic_load_explicit(&e->owner, memory_order_relaxed) && ep >= 0) { /* under lock */
        epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
        atomic_store_explicit(&e->owner, NULL, memory_order_relaxed);
    }
    const int rc = close(fd);
    spin_unlock(&e->lock);
    return rc;
}

int bthread_timed_connect(int sockfd, const struct sockaddr *addr, socklen_t addrlen,
                          const struct timespec *abstime)
{
    if (!abstime && bthread_self() == 0) /* a pthread, no deadline: a plain connect */
        return connect(sockfd, addr, addrlen);
    /* non-blocking for the connect, then as it was (brpc leaves it non-blocking) */
    const int flags = fcntl(sockfd, F_GETFL);
    if (flags < 0)
        return -1;
    if (!(flags & O_NONBLOCK) && fcntl(sockfd, F_SETFL, flags | O_NONBLOCK) < 0)
        return -1;
    int rc = connect(sockfd, addr, addrlen);
    if (rc < 0 && errno == EINPROGRESS) {
        rc = bthread_fd_timedwait(sockfd, EPOLLOUT, abstime);
        int err = 0;
        socklen_t len = sizeof err;
        if (rc == 0 && getsockopt(sockfd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
            rc = -1;
        else if (rc == 0 && err) {
            errno = err;
            rc = -1;
        }
    }
    if (!(flags & O_NONBLOCK)) {
        const int saved = errno;
        (void)fcntl(sockfd, F_SETFL, flags);
        errno = saved;
    }
    return rc;
}

int bthread_connect(int sockfd, const struct sockaddr *addr, socklen_t addrlen)
{
    return bthread_timed_connect(sockfd, addr, addrlen, NULL);
}

void bthread_fd_atfork_child_internal(void)
{
    static const pthread_mutex_t m0 = PTHREAD_MUTEX_INITIALIZER;
    fd_start_lock = m0;
    const int ep = atomic_load_explicit(&fd_epfd, memory_order_relaxed); /* one thread */
    if (ep >= 0) {
        close(fd_stopfd);
        close(ep);
    }
    fd_stopfd = -1;
    atomic_store_explicit(&fd_epfd, -1, memory_order_relaxed);
    for (int i = 0; i < FD_NBLOCKS; i++) {
        fd_block_t *blk = atomic_load_explicit(&fd_table[i], memory_order_relaxed);
        for (int j = 0; blk && j < FD_BLOCK_SIZE; j++) {
            fd_entry_t *e = &blk->e[j];
            spin_init(&e->lock);
            atomic_store_explicit(&e->owner, NULL, memory_order_relaxed);
            atomic_store_explicit(&e->waiters, 0, memory_order_relaxed);
        }
    }
}
