/*
 * fd_internal.h -- the scheduler core's handle on common/fd.c (not a public header; the
 * one declaration, included by core.h).
 */
#ifndef SCHEDBENCH_FD_INTERNAL_H
#define SCHEDBENCH_FD_INTERNAL_H

/* Stop the epoll dispatcher thread if it runs, close its descriptors and destroy the
 * per-fd butexes.  For bthread_shutdown(): call it while butexes can still be destroyed
 * (before the butex pool is freed).  No thread may be inside bthread_fd_wait.
 * Idempotent; the next bthread_fd_wait from a bthread starts a new dispatcher.
 * Weak: the core calls it only when fd.c is linked (a program that never waits on a
 * descriptor does not pull fd.c, and its thread, out of libbthread.a). */
void bthread_fd_shutdown_internal(void) __attribute__((weak));
/* In the child of a fork(): the dispatcher thread does not exist there, and its epoll
 * instance is the parent's (shared): close the child's descriptors of it and forget the
 * registrations, so the next wait starts a dispatcher of the child's own. */
void bthread_fd_atfork_child_internal(void) __attribute__((weak));

#endif /* SCHEDBENCH_FD_INTERNAL_H */
