/*
 * sim.h -- the seam of the simulation build: force-included (-include) ahead of every
 * source of build-sim/<v>/ (common/ and workloads/ sources, harness/sim/sim_main.c), so the
 * unchanged core and variant.h components run in simulated time.  Nothing in common/
 * or variants/ knows about it.
 *
 * It first includes the system headers that declare the machine-facing services, then
 * renames each service to its simulated version (sim_engine.c):
 *
 *   service                               simulated as
 *   pthread_create / join / exit / self   simulated threads: contexts (asm/fcontext) on
 *                                         one OS thread, run in simulated-time order
 *   pthread_mutex_* / pthread_cond_*      a futex mutex / sequence condvar over charged
 *   pthread_once                          atomics and the simulated futex
 *   syscall(SYS_futex, ...)               wait: block until a wake event (+ wake-up
 *                                         latency) or the timeout; wake: the system call
 *   mmap, munmap                          the real call, charged: a fresh mapping as
 *                                         stack.c makes one on a pool miss (mmap,
 *                                         mprotect of the guard, the first touch of the
 *                                         top page: stack_map), an unmap (stack_unmap)
 *   clock_gettime, (clock_)nanosleep,     the simulated clock (per-thread CPU clocks
 *   usleep, sched_yield, sched_getcpu     are the thread's charged busy time)
 *   atomic_*_explicit, atomic_thread_fence   charged by cache line (a transfer by
 *                                         topology distance from the last writer, less
 *                                         what the stride prefetcher started early), a
 *                                         scheduling point, then the real operation
 *   __builtin_prefetch                    the line starts on its way; the thread goes on
 *   bthread_jump_fcontext                 the real switch, charged (and, when the context
 *                                         resumed has gone cold, the model's resume_* curve)
 *
 * Every other instruction is free in simulated time; task bodies are charged through
 * sim_charge_work() (wl_kernel.h: the busy-loop kernel's nominal grain; sha1.h: one
 * SHA-1 block).  Outside a simulation (before sim_run, e.g. the sequential reference
 * answer) every service falls through to the real one.
 */
#ifndef SCHEDBENCH_SIM_H
#define SCHEDBENCH_SIM_H

#ifndef SB_SIM
#error "harness/sim/sim.h is force-included only by the simulation build (make sim)"
#endif

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fcontext.h"

#ifdef __cplusplus
#error "the simulation build is C only"
#endif

#include "sim_api.h"

/* ---- the renames ------------------------------------------------------------------- */
#define pthread_create(t, attr, fn, arg) sim_thread_create((t), (attr), (fn), (arg), #fn)
#define pthread_join sim_thread_join
#define pthread_exit sim_thread_exit
#define pthread_self sim_thread_self
#define pthread_getattr_np sim_thread_getattr
#define pthread_getcpuclockid sim_thread_getcpuclockid
#define pthread_setname_np sim_thread_setname
#define pthread_once sim_once
#define pthread_mutex_lock sim_mutex_lock
#define pthread_mutex_trylock sim_mutex_trylock
#define pthread_mutex_unlock sim_mutex_unlock
#define pthread_cond_wait sim_cond_wait
#define pthread_cond_timedwait sim_cond_timedwait
#define pthread_cond_signal sim_cond_signal
#define pthread_cond_broadcast sim_cond_broadcast
#define clock_gettime sim_clock_gettime
#define clock_nanosleep sim_clock_nanosleep
#define nanosleep sim_nanosleep
#define usleep sim_usleep
#define sched_yield sim_sched_yield
#define sched_getcpu sim_getcpu
#define syscall sim_syscall
#define mmap sim_mmap
#define munmap sim_munmap
#define bthread_jump_fcontext sim_jump_fcontext
/* sched.c's prefetches: the line starts on its way, the thread goes on */
#define __builtin_prefetch(...) SIM_PREFETCH_(__VA_ARGS__, 0, 3)
#define SIM_PREFETCH_(addr, rw, ...) sim_prefetch((const void *)(addr), (rw))
/* spinlock.h's pause: charged (the model's pause latency) and a scheduling point */
#define __builtin_ia32_pause sim_cpu_relax

/* ---- atomics: charge, then the real operation --------------------------------------
 * The operands are evaluated first (they may hold atomics of their own), then the access
 * is charged (which may run other simulated threads first), then the operation runs.
 * With one OS thread the real operation needs no atomicity; it keeps the C11 types. */
#if defined(__clang__)
#define SIM_RLOAD(p, mo) __c11_atomic_load((p), (mo))
#define SIM_RSTORE(p, v, mo) __c11_atomic_store((p), (v), (mo))
#define SIM_RXCHG(p, v, mo) __c11_atomic_exchange((p), (v), (mo))
#define SIM_RCAS(p, e, d, s, f) __c11_atomic_compare_exchange_strong((p), (e), (d), (s), (f))
#define SIM_RFETCH(op, p, v, mo) __c11_atomic_fetch_##op((p), (v), (mo))
#else
#define SIM_RLOAD(p, mo) __atomic_load_n((p), (mo))
#define SIM_RSTORE(p, v, mo) __atomic_store_n((p), (v), (mo))
#define SIM_RXCHG(p, v, mo) __atomic_exchange_n((p), (v), (mo))
#define SIM_RCAS(p, e, d, s, f) __atomic_compare_exchange_n((p), (e), (d), 0, (s), (f))
#define SIM_RFETCH(op, p, v, mo) __atomic_fetch_##op((p), (v), (mo))
#endif

#undef atomic_load_explicit
#undef atomic_store_explicit
#undef atomic_exchange_explicit
#undef atomic_compare_exchange_strong_explicit
#undef atomic_compare_exchange_weak_explicit
#undef atomic_fetch_add_explicit
#undef atomic_fetch_sub_explicit
#undef atomic_fetch_or_explicit
#undef atomic_fetch_and_explicit
#undef atomic_fetch_xor_explicit
#undef atomic_thread_fence

#define atomic_load_explicit(p, mo)                                                       \
    __extension__({                                                                       \
        __auto_type sim_p_ = (p);                                                         \
        sim_access((uintptr_t)sim_p_, SIM_LOAD, (mo));                                               \
        SIM_RLOAD(sim_p_, (mo));                                                          \
    })
#define atomic_store_explicit(p, v, mo)                                                   \
    __extension__({                                                                       \
        __auto_type sim_p_ = (p);                                                         \
        __auto_type sim_v_ = (v);                                                         \
        sim_access((uintptr_t)sim_p_, SIM_STORE, (mo));                                              \
        SIM_RSTORE(sim_p_, sim_v_, (mo));                                                 \
    })
#define atomic_exchange_explicit(p, v, mo)                                                \
    __extension__({                                                                       \
        __auto_type sim_p_ = (p);                                                         \
        __auto_type sim_v_ = (v);                                                         \
        sim_access((uintptr_t)sim_p_, SIM_RMW, (mo));                                                \
        SIM_RXCHG(sim_p_, sim_v_, (mo));                                                  \
    })
#define atomic_compare_exchange_strong_explicit(p, e, d, s, f)                            \
    __extension__({                                                                       \
        __auto_type sim_p_ = (p);                                                         \
        __auto_type sim_e_ = (e);                                                         \
        __auto_type sim_d_ = (d);                                                         \
        sim_access((uintptr_t)sim_p_, SIM_RMW, (s));                                                 \
        SIM_RCAS(sim_p_, sim_e_, sim_d_, (s), (f));                                       \
    })
/* a weak CAS never fails spuriously here (allowed: weak may, need not) */
#define atomic_compare_exchange_weak_explicit(p, e, d, s, f)                              \
    atomic_compare_exchange_strong_explicit(p, e, d, s, f)
#define SIM_FETCH_OP(op, p, v, mo)                                                        \
    __extension__({                                                                       \
        __auto_type sim_p_ = (p);                                                         \
        __auto_type sim_v_ = (v);                                                         \
        sim_access((uintptr_t)sim_p_, SIM_RMW, (mo));                                                \
        SIM_RFETCH(op, sim_p_, sim_v_, (mo));                                             \
    })
#define atomic_fetch_add_explicit(p, v, mo) SIM_FETCH_OP(add, p, v, mo)
#define atomic_fetch_sub_explicit(p, v, mo) SIM_FETCH_OP(sub, p, v, mo)
#define atomic_fetch_or_explicit(p, v, mo) SIM_FETCH_OP(or, p, v, mo)
#define atomic_fetch_and_explicit(p, v, mo) SIM_FETCH_OP(and, p, v, mo)
#define atomic_fetch_xor_explicit(p, v, mo) SIM_FETCH_OP(xor, p, v, mo)
#define atomic_thread_fence(mo) sim_access(0, SIM_FENCE, (mo))

#endif /* SCHEDBENCH_SIM_H */
