/*
 * sim_api.h -- the simulated machine-facing services (sim_engine.c), declared for
 * sim.h (which renames the real services to these) and for the engine itself.
 */
#ifndef SCHEDBENCH_SIM_API_H
#define SCHEDBENCH_SIM_API_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "fcontext.h"

/* ---- the services (sim_engine.c) --------------------------------------------------- */
enum sim_access_kind { SIM_LOAD, SIM_STORE, SIM_RMW, SIM_FENCE };
/* A scheduling point, then the charge of one access to addr's cache line by the running
 * simulated thread (mo: the C11 memory order). */
void sim_access(uintptr_t addr, enum sim_access_kind kind, int mo);
/* __builtin_prefetch(addr, write): start the line's transfer, do not wait for it. */
void sim_prefetch(const void *addr, int write);

enum sim_work_kind { SIM_WORK_KERNEL_ITER, SIM_WORK_SHA1_BLOCK, SIM_WORK_UTS_NODE };
/* Charge `units` of task-body work of a kind the cost model prices. */
void sim_charge_work(enum sim_work_kind kind, uint64_t units);

int sim_thread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg,
                      const char *fn_name);
int sim_thread_join(pthread_t t, void **ret);
void sim_thread_exit(void *ret) __attribute__((noreturn));
pthread_t sim_thread_self(void);
int sim_thread_getattr(pthread_t t, pthread_attr_t *attr);
int sim_thread_getcpuclockid(pthread_t t, clockid_t *cid);
int sim_thread_setname(pthread_t t, const char *name);
int sim_once(pthread_once_t *once, void (*fn)(void));
int sim_mutex_lock(pthread_mutex_t *m);
int sim_mutex_trylock(pthread_mutex_t *m);
int sim_mutex_unlock(pthread_mutex_t *m);
int sim_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
int sim_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime);
int sim_cond_signal(pthread_cond_t *c);
int sim_cond_broadcast(pthread_cond_t *c);
int sim_clock_gettime(clockid_t id, struct timespec *ts);
int sim_clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem);
int sim_nanosleep(const struct timespec *req, struct timespec *rem);
int sim_usleep(useconds_t us);
int sim_sched_yield(void);
int sim_getcpu(void);
long sim_syscall(long nr, ...);
void *sim_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int sim_munmap(void *addr, size_t len);
void sim_cpu_relax(void);
intptr_t sim_jump_fcontext(bthread_fcontext_t *ofc, bthread_fcontext_t nfc, intptr_t vp,
                           bool preserve_fpu);

#endif /* SCHEDBENCH_SIM_API_H */
