/*
 * policy.h -- the contract between the scheduler core (sched.c) and a variant's policy:
 * the services the core offers the policy components, the hooks a variant.h binds, what
 * each hook means, who calls it and its default.  sched.c includes this header, and it
 * includes the variant's variant.h between the two halves.  variants/README.md has the
 * same hooks as a table (tests/py/test_docs.py checks that the two name the same hooks)
 * and the worked example of adding a variant.
 *
 * A variant picks one component per axis; each component is a header in common/:
 *   run queue     rq_wsq.h (Chase-Lev deque), rq_global.h (one locked FIFO)
 *   victim order  victims_random.h, victims_numa.h
 *   idling        idle_park.h, idle_spin.h, idle_adaptive.h, idle_elastic.h
 *   placement     place_static.h, place_affinity.h (and the defaults below)
 * Each component binds the hooks of its own axis, with one exception where one mechanism
 * serves two: rq_global.h's mutex and condition variable are the queue and the idling at
 * once (its IDLE_* hooks wait on the queue's condition variable).  An idling that needs
 * to know more (elastic: which workers may receive foreign tasks, how long run queues
 * stay) says it through idle hooks the core calls (IDLE_INACTIVE, IDLE_PUSHED,
 * IDLE_POPPED) and reads the core's services (run_queue_size), never by rebinding
 * another axis's hooks.
 *
 * Every hook is a macro or a static inline function: nothing on the hot path goes through
 * a function pointer.  A hook that reads another worker's fields must be a macro: struct
 * worker is complete only after variant.h (it holds RQ_T and VICTIM_STATE_T).
 *
 * Who calls the hooks, in short:
 *   the owner (the worker's own thread): RQ_PUSH, RQ_POP, RQ_EMPTY, RQ_TAKE_BACK,
 *     IDLE_WAIT, IDLE_BACKLOG, IDLE_WATCH, IDLE_POPPED, VICTIM_BEGIN / VICTIM_NEXT,
 *     VICTIM_STOLE, WORKER_ON_START
 *   a thief (another worker): RQ_STEAL on the victim's queue
 *   any thread that makes a task ready: SPAWN_TARGET (a worker), REMOTE_TARGET or
 *     REMOTE_SUBMIT (a non-worker), IDLE_INACTIVE, IDLE_PUSHED, IDLE_WAKE
 *   start-up and shutdown, under the core's lock: RQ_INIT, RQ_FINI, VICTIM_SETUP,
 *     IDLE_SETUP, IDLE_TEARDOWN, IDLE_WAKE_ALL
 *
 * Not hooks: remote_queue.h's REMOTE_RING_FIRST and REMOTE_RING_MAX, ring sizes its unit
 * test builds smaller (tests/py/test_docs.py checks that every name a header in common/
 * lets a variant.h define is named here).
 *
 * What still needs an edit of sched.c, and why.  The three switches STEALING,
 * READY_HOME and RUNNEXT decide where a task that becomes ready again goes (make_ready,
 * make_ready_again, flush_unsignalled, bthread_yield) and whether a steal round exists
 * at all: that is the core's wake-up protocol, whose lost-wake-up arguments are written
 * beside that code, so a policy chooses among them with a constant rather than replacing
 * them.  A new axis that changes how a ready task is published (a new kind of slot, a
 * new wake-up rule) needs the core; a new queue, victim order, idling or placement does
 * not.
 */
#ifndef SCHEDBENCH_POLICY_H
#define SCHEDBENCH_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"

/* ---- 1. What the core offers the components ------------------------------------------
 * Defined in sched.c; a component calls these and nothing else of the core's. */

/* A non-blocking search for work, as the main loop does it before idling: runnext, own
 * queue, remote queue, then a steal round.  Owner only.  NULL when nothing was found. */
static task_t *find_work(worker_t *w);
/* find_work as the last look before a worker sleeps until woken (park_wait's recheck,
 * after its announcement): a remote queue that another consumer is taking from is
 * waited for, not passed over, so the look sees every task published before it began.
 * Owner only. */
static task_t *find_work_last_look(worker_t *w);
/* w's index, 0 .. worker_count() - 1. */
static inline __attribute__((unused)) int worker_index(const worker_t *w);
/* Workers with a thread now (acquire: every worker below it is set up).  Grows while
 * running (bthread_setconcurrency), never shrinks before shutdown. */
static inline __attribute__((unused)) int worker_count(void);
/* The worker with index i (i < worker_count()). */
static inline __attribute__((unused)) worker_t *worker_at(int i);
/* True once shutdown began: an idle worker must return NULL from IDLE_WAIT. */
static inline __attribute__((unused)) bool core_stopping(void);
/* True when w's remote queue may hold a task (a cheap, racy look for idlers). */
static inline __attribute__((unused)) bool worker_remote_maybe(worker_t *w);
/* The default placement of a non-worker's task: round-robin from a start per thread,
 * skipping workers the idling keeps inactive (IDLE_INACTIVE). */
static inline __attribute__((unused)) worker_t *remote_target_rr(void);
/* w's run queue length, RQ_SIZE: an estimate any thread may read. */
static inline __attribute__((unused)) long run_queue_size(worker_t *w);
/* A task that did not fit w's run queue: onto w's remote queue (an overflow). */
static inline __attribute__((unused)) void spill(worker_t *w, task_t *t);
/* The owner's pseudo-random number (xorshift64*). */
static inline __attribute__((unused)) uint64_t worker_random(worker_t *w);
/* True when an idle worker should watch the runnext slots (some slot may hold a task
 * only another worker can rescue): the parking lot's watcher role. */
static inline __attribute__((unused)) bool core_watch_wanted(void);
/* The watcher's look: a task stuck in another worker's runnext slot past its grace
 * period, taken, or NULL.  Owner only. */
static inline __attribute__((unused)) task_t *runnext_rescue(worker_t *w);
/* Counters (BTHREAD_WORKER_COUNTERS in bthread.h) a component keeps: w parked; w was
 * woken from a park; a wake-up was sent from this thread (counted on its worker, if any);
 * elastic: w deactivated (park) or was reactivated; and w's tasks_run, read. */
static inline __attribute__((unused)) void stat_park(worker_t *w);
static inline __attribute__((unused)) void stat_woken(worker_t *w);
static inline __attribute__((unused)) void stat_wakeup(void);
static inline __attribute__((unused)) void stat_elastic(worker_t *w, bool park);
static inline __attribute__((unused)) uint64_t stat_tasks_run(worker_t *w);

/* ---- 2. The variant binds the hooks --------------------------------------------------- */
#include "variant.h"

/* ---- 3. The hooks: meaning, caller, default -------------------------------------------
 * Required hooks have no default: a variant.h without one stops at an #error naming it. */

/* RQ_T: the per-worker run queue's type, a field of struct worker.
 * RQ_INIT(w) -> int (0 = ok) / RQ_FINI(w): set up / tear down w's queue, at start-up and
 * shutdown. */
#ifndef RQ_T
#error "variant.h defines no RQ_T (the per-worker run queue type): see common/policy.h"
#endif
#if !defined(RQ_INIT) || !defined(RQ_FINI)
#error "variant.h defines no RQ_INIT / RQ_FINI (set up and tear down a worker's run queue): see common/policy.h"
#endif
/* RQ_PUSH(w, t) -> bool: the owner pushes a new or woken task; false = full, and the core
 * spills t to w's remote queue. */
#ifndef RQ_PUSH
#error "variant.h defines no RQ_PUSH (the owner pushes a task): see common/policy.h"
#endif
/* RQ_POP(w) -> task_t *: the owner takes its next task (NULL when empty). */
#ifndef RQ_POP
#error "variant.h defines no RQ_POP (the owner takes its next task): see common/policy.h"
#endif
/* STEALING: 1 = thieves take from other workers' queues (a steal round runs when a worker
 * finds nothing of its own); 0 = nobody ever takes another worker's task (static,
 * affinity), and wake-ups then go to the worker that holds the task. */
#ifndef STEALING
#define STEALING 1
#endif
/* RQ_STEAL(victim, thief, &moved) -> task_t *: called by a thief on the victim's queue;
 * returns the task to run.  The core presets moved to 1; a steal that moves a batch
 * into the thief's queue (half) sets it to the tasks taken.  Any thread may call it. */
#if STEALING && !defined(RQ_STEAL)
#error "variant.h defines no RQ_STEAL (a thief takes from a victim; or #define STEALING 0): see common/policy.h"
#endif
/* VICTIM_ITER_T, VICTIM_BEGIN(w, &it), VICTIM_NEXT(w, &it) -> int: the victim order of
 * one steal round, owner only.  A round calls VICTIM_BEGIN three times: a pass over the
 * victims' run queues, one over their remote queues, one over a stuck owner's runnext
 * slot.  VICTIM_NEXT returns worker indexes until it returns -1, which ends that pass;
 * it never returns the caller's own index.  A victim's queue length, where wanted, is
 * wsq_size (rq_wsq.h), the estimate any thread may read. */
#if STEALING && (!defined(VICTIM_ITER_T) || !defined(VICTIM_BEGIN) || !defined(VICTIM_NEXT))
#error "variant.h defines no VICTIM_ITER_T / VICTIM_BEGIN / VICTIM_NEXT (the victim order of a steal round): see common/policy.h"
#endif
/* VICTIM_STATE_T / VICTIM_SETUP(w) -> int: per-worker victim data, a field of struct
 * worker, set up (under the core's lock) before any worker starts. */
#ifndef VICTIM_STATE_T
#define VICTIM_STATE_T char
#endif
#ifndef VICTIM_SETUP
#define VICTIM_SETUP(w) 0
#endif
/* VICTIM_STOLE(w, v): the steal round of w found work at victim v (its run queue, its
 * remote queue or its runnext slot), which ends the round: an order that adapts (last
 * victim first, say) learns it here.  Owner only.  Default: nothing. */
#ifndef VICTIM_STOLE
#define VICTIM_STOLE(w, v) ((void)0)
#endif
/* VICTIM_FIXED_COUNT: 1 = victim orders are built for the start-up worker count, so
 * bthread_setconcurrency cannot grow a running scheduler (numa). */
#ifndef VICTIM_FIXED_COUNT
#define VICTIM_FIXED_COUNT 0
#endif
/* IDLE_WAIT(w) -> task_t *: the owner found nothing; search, spin or park until it has a
 * task (returned) or the core stops (NULL).  IDLE_WAKE(target): a task was made ready;
 * wake an idle worker (target, or any when target is NULL).  IDLE_WAKE_ALL(): shutdown
 * wakes every idle worker. */
#if !defined(IDLE_WAIT) || !defined(IDLE_WAKE) || !defined(IDLE_WAKE_ALL)
#error "variant.h defines no IDLE_WAIT / IDLE_WAKE / IDLE_WAKE_ALL (what an idle worker does, how it is woken): see common/policy.h"
#endif
/* IDLE_SETUP(n) -> int / IDLE_TEARDOWN(): the idling's global state, for up to n workers,
 * at start-up and shutdown.  IDLE_SETUP makes all of it new, locks included: a fork()
 * child starts its scheduler from the parent's state as the fork found it. */
#ifndef IDLE_SETUP
#define IDLE_SETUP(n) 0
#endif
#ifndef IDLE_TEARDOWN
#define IDLE_TEARDOWN() ((void)0)
#endif
/* IDLE_BACKLOG(w): the owner's remote take left tasks behind a full batch; another worker
 * may want them. */
#ifndef IDLE_BACKLOG
#define IDLE_BACKLOG(w) IDLE_WAKE(NULL)
#endif
/* RUNNEXT: 1 = a task woken by a butex on a worker goes to that worker's runnext slot and
 * runs next there, without a wake-up (sched.c, "Runnext and the watcher"). */
#ifndef RUNNEXT
#define RUNNEXT 1
#endif
/* IDLE_WATCH(): the owner left a task in its runnext slot; make sure an idle worker will
 * look (park_watch, adaptive_watch; spinners look anyway). */
#ifndef IDLE_WATCH
#define IDLE_WATCH() IDLE_WAKE(NULL)
#endif
/* READY_HOME: 1 = a task that ran is made ready again on the worker it last ran on, its
 * home (the no-steal baselines: a timer or an interrupt from elsewhere does not move it
 * either). */
#ifndef READY_HOME
#define READY_HOME 0
#endif
/* RQ_TAKE_BACK(w, t) -> bool: the owner reclaims t, queued here and not started, to run
 * it inline in the task that joins it.  Default: never. */
#ifndef RQ_TAKE_BACK
#define RQ_TAKE_BACK(w, t) false
#endif
/* RQ_EMPTY(w) -> bool: the owner's cheap emptiness test; a yield with nothing else ready
 * here then goes to the run queue.  true for one FIFO that every worker takes from.
 * Default: unknown, so yields go behind the remote queue. */
#ifndef RQ_EMPTY
#define RQ_EMPTY(w) false
#endif
/* SPAWN_TARGET(w) -> worker_t *: which worker gets a task made on worker w.  Default: w. */
#ifndef SPAWN_TARGET
#define SPAWN_TARGET(w) (w)
#endif
/* REMOTE_TARGET() -> worker_t *: which worker's remote queue gets a task from a
 * non-worker thread; the core pushes and wakes.  Default: round-robin. */
#ifndef REMOTE_TARGET
#define REMOTE_TARGET() remote_target_rr()
#endif
/* REMOTE_SUBMIT(t): optional; when defined, the variant takes non-workers' tasks itself,
 * placing and signalling them (threadpool: its global queue), and REMOTE_TARGET is not
 * used.  sched.c tests it with #ifdef. */
/* IDLE_PUSHED(target): a task was just pushed onto another worker's remote queue; the
 * idling may have to bring target back (elastic: if it parked for good).  Any thread. */
#ifndef IDLE_PUSHED
#define IDLE_PUSHED(target) ((void)0)
#endif
/* IDLE_INACTIVE(w) -> bool: w takes no foreign task now (elastic: parked for good); the
 * default REMOTE_TARGET skips such workers.  Any thread; a hint (IDLE_PUSHED catches a
 * race).  Default: never. */
#ifndef IDLE_INACTIVE
#define IDLE_INACTIVE(w) false
#endif
/* IDLE_POPPED(w): the owner just took a task from its run queue (RQ_POP); the idling may
 * watch the queue's length (elastic: run_queue_size, to bring workers back while queues
 * stay long).  Default: nothing. */
#ifndef IDLE_POPPED
#define IDLE_POPPED(w) ((void)0)
#endif
/* RQ_SIZE(w) -> long: the run queue's length, an estimate any thread may read
 * (run_queue_size).  Default: 0, unknown. */
#ifndef RQ_SIZE
#define RQ_SIZE(w) ((void)(w), 0L)
#endif
/* ---- What the policy does, said by its components (bthread_get_policy) -----------
 * Constants that describe behaviour the hooks above implement, for programs and tests
 * that depend on a property rather than a name.  The tests check each against what the
 * scheduler then does (tests/c/test_sched.c's statistics test), so a component that
 * states one wrongly fails there.
 *   STEAL_BATCH        the most tasks one RQ_STEAL moves: 1 (default), k, or STEAL_HALF
 *   IDLE_SLEEPS        1 (default): idle workers sleep in the end; 0: they never do
 *   IDLE_SPINS         1: idle workers spin, searching, before they sleep (default 0)
 *   IDLE_DEACTIVATES   1: an idle worker may park for good (default 0)
 *   SPREADS_TASKS      1: SPAWN_TARGET sends a worker's new task elsewhere (default 0) */
#define STEAL_HALF (-1)
#ifndef STEAL_BATCH
#define STEAL_BATCH 1
#endif
#ifndef IDLE_SLEEPS
#define IDLE_SLEEPS 1
#endif
#ifndef IDLE_SPINS
#define IDLE_SPINS 0
#endif
#ifndef IDLE_DEACTIVATES
#define IDLE_DEACTIVATES 0
#endif
#ifndef SPREADS_TASKS
#define SPREADS_TASKS 0
#endif
/* WORKER_ON_START(w): first thing on each worker's thread (numa: pin it). */
#ifndef WORKER_ON_START
#define WORKER_ON_START(w) ((void)0)
#endif

#endif /* SCHEDBENCH_POLICY_H */
