/*
 * fd_internal.h -- the scheduler core's handle on common/fd.c (not a public header).
 */
#ifndef SCHEDBENCH_FD_INTERNAL_H
#define SCHEDBENCH_FD_INTERNAL_H

/* Stop the epoll dispatcher thread if it runs, close its descriptors and destroy the
 * per-fd butexes.  For bthread_shutdown(): call it while butexes can still be destroyed
 * (before the butex pool is freed).  No thread may be inside bthread_fd_wait.
 * Idempotent; the next bthread_fd_wait from a bthread starts a new dispatcher. */
void bthread_fd_shutdown_internal(void);

#endif /* SCHEDBENCH_FD_INTERNAL_H */
