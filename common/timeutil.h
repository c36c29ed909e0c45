/*
 * timeutil.h -- the one place that turns a struct timespec into nanoseconds and back,
 * reads a clock, and sleeps until a deadline.  Header-only; C11 and C++17 (the reference
 * rows include it through workloads/wl_kernel.h).  Any thread; no state.
 *
 * Deadlines in the public API (bthread_*_timedwait) are CLOCK_REALTIME timespecs, as in
 * POSIX; the workloads and the harness time with CLOCK_MONOTONIC.  Nanosecond counts are
 * int64_t: +-292 years either side of the epoch.
 */
#ifndef SCHEDBENCH_TIMEUTIL_H
#define SCHEDBENCH_TIMEUTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define SB_NS_PER_S 1000000000L

/* Saturated to the int64_t range: a far-future deadline (tv_sec = LONG_MAX, 10^10)
 * stays in the far future instead of wrapping into the past, and a far-past one stays
 * past.  tv_nsec must be in [0, 10^9) (sb_timespec_valid). */
static inline int64_t sb_ts_to_ns(const struct timespec *t)
{
    if (t->tv_sec >= INT64_MAX / SB_NS_PER_S)
        return INT64_MAX;
    if (t->tv_sec <= INT64_MIN / SB_NS_PER_S)
        return INT64_MIN;
    return (int64_t)t->tv_sec * SB_NS_PER_S + t->tv_nsec;
}

/* ns must not be negative (a time since an epoch or a relative wait). */
static inline struct timespec sb_ns_to_ts(int64_t ns)
{
    struct timespec t;
    t.tv_sec = (time_t)(ns / SB_NS_PER_S);
    t.tv_nsec = (long)(ns % SB_NS_PER_S);
    return t;
}

/* The clock's time in nanoseconds (CLOCK_MONOTONIC, CLOCK_REALTIME, a CPU-time clock). */
static inline int64_t sb_clock_ns(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return sb_ts_to_ns(&t);
}

/* The nanoseconds of a deadline are in range (POSIX: EINVAL otherwise).  NULL is fine. */
static inline bool sb_timespec_valid(const struct timespec *t)
{
    return !t || (t->tv_nsec >= 0 && t->tv_nsec < SB_NS_PER_S);
}

/* Block the calling thread until CLOCK_MONOTONIC reaches ns (at once if it has);
 * a signal does not end the sleep early. */
static inline void sb_sleep_until_ns(int64_t ns)
{
    if (ns < 0)
        return;
    struct timespec t = sb_ns_to_ts(ns);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
        ;
}

#endif /* SCHEDBENCH_TIMEUTIL_H */
