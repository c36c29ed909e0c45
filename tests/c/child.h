/*
 * child.h -- waiting for a forked child within a bound (the fork and limits tests run
 * their checks in children, so that a hang or a crash fails one test, not the suite).
 */
#ifndef SCHEDBENCH_TEST_CHILD_H
#define SCHEDBENCH_TEST_CHILD_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

/* The child's exit status, 128 + its signal, or 200 when it did not end within
 * timeout_s (it is then killed: a deadlock).  Polls, calling pause() between looks: a
 * bthread passes a bthread sleep, so that it does not block its worker for long. */
static inline int child_status_within(pid_t pid, int timeout_s, void (*pause_fn)(void))
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    const int64_t end = (int64_t)(t.tv_sec + timeout_s) * 1000000000 + t.tv_nsec;
    int st = 0;
    while (waitpid(pid, &st, WNOHANG) == 0) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((int64_t)t.tv_sec * 1000000000 + t.tv_nsec > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return 200;
        }
        pause_fn();
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

#endif /* SCHEDBENCH_TEST_CHILD_H */
