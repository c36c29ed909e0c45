/*
 * test_ids.c -- bthread ids, on every variant: an id is issued once, ever.  A stale id
 * (its task ended) joins at once and reaches no other task: a stop or interrupt through
 * an id that ends meanwhile never reaches the task that reuses its slot; an id never
 * issued is EINVAL, whatever its bits; a slot whose versions run out retires instead of
 * wrapping; a restart keeps every old id stale.
 *
 * SCHEDBENCH_TEST_FIRST_VERSION (common/sched.c) starts the slots of new chunks near the
 * end of their versions, so a slot's last versions are reached in a few starts instead
 * of 2^32.  sbtest runs each test in a process of its own, so the setting stays there.
 */
#include "sbtest.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "bthread.h"

static void *nop(void *arg) { return arg; }

static uint32_t version_of(bthread_t t) { return (uint32_t)(t >> 32); }
static uint32_t slot_of(bthread_t t) { return (uint32_t)t; }

/* From a bthread on one worker: start and join one child at a time.  The child runs
 * inline in its joiner or on the worker, and its slot goes back to the worker's free
 * cache first, so the same slot is taken again by the next start until it retires. */
#define CYCLES 24
static void *cycle(void *arg)
{
    bthread_t *ids = arg;
    for (int i = 0; i < CYCLES; i++) {
        cr_assert_eq(bthread_start_background(&ids[i], NULL, nop, NULL), 0);
        cr_assert_eq(bthread_join(ids[i], NULL), 0);
    }
    return NULL;
}

static void run_cycles(bthread_t *ids)
{
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, cycle, ids), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
}

/* Every id in ids is stale: joins at once, cannot be interrupted or stopped, reads as
 * stopped. */
static void assert_all_stale(const bthread_t *ids, int n)
{
    for (int i = 0; i < n; i++) {
        cr_assert_eq(bthread_join(ids[i], NULL), 0, "id %d", i);
        cr_assert_eq(bthread_interrupt(ids[i]), ESRCH, "id %d", i);
        cr_assert_eq(bthread_stop(ids[i]), EINVAL, "id %d", i); /* as before: see butex.c */
        cr_assert_eq(bthread_stopped(ids[i]), 1, "id %d", i);
    }
}

/* The property: per slot, versions only grow, and a slot that handed out version
 * 2^32 - 1 hands out nothing more.  Before slots retired, the version wrapped to 1 and
 * 2^32 - 2 cycles later a live task had an old id again. */
Test(ids, a_slot_retires_after_its_last_version_instead_of_wrapping, .timeout = 30)
{
    cr_assert_eq(setenv("SCHEDBENCH_TEST_FIRST_VERSION", "4294967290", 1), 0);
    cr_assert_eq(bthread_setconcurrency(1), 0);
    bthread_t ids[CYCLES];
    run_cycles(ids);
    int reached_last = 0;
    for (int i = 0; i < CYCLES; i++) {
        cr_assert_geq(version_of(ids[i]), 4294967290u, "id %d: version %u", i,
                      version_of(ids[i]));
        for (int j = 0; j < i; j++) {
            cr_assert_neq(ids[i], ids[j], "ids %d and %d are equal", j, i);
            if (slot_of(ids[j]) == slot_of(ids[i])) {
                cr_assert_gt(version_of(ids[i]), version_of(ids[j]),
                             "slot %u went from version %u back to %u", slot_of(ids[i]),
                             version_of(ids[j]), version_of(ids[i]));
                cr_assert_neq(version_of(ids[j]), UINT32_MAX,
                              "slot %u was used again after its last version",
                              slot_of(ids[i]));
            }
        }
        reached_last += version_of(ids[i]) == UINT32_MAX;
    }
    cr_assert_geq(reached_last, 2, "the cycles should run through two slots' versions");
    assert_all_stale(ids, CYCLES);
    cr_assert_eq(bthread_shutdown(), 0);

    /* after a restart: the retired slots stay retired, the old ids stay stale */
    bthread_t again[CYCLES];
    run_cycles(again);
    assert_all_stale(ids, CYCLES);
    for (int i = 0; i < CYCLES; i++)
        for (int j = 0; j < CYCLES; j++)
            cr_assert_neq(again[i], ids[j], "an id from before the restart was issued again");
    cr_assert_eq(bthread_shutdown(), 0);
}

/* Ids no slot ever issued are EINVAL whatever their bits: past the pool's largest slot,
 * in a chunk never made, or a version ahead of the slot's (the top of the range too,
 * which a comparison of versions as serial numbers took for ended). */
Test(ids, ids_never_issued_are_einval_whatever_their_bits, .timeout = 30)
{
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, nop, NULL), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
    const uint64_t slot = slot_of(t), version = version_of(t);
    const bthread_t never[] = {
        ~0ull,                         /* (bthread_t)-1 */
        0xffffffff00000000ull | slot,  /* the top version of a live slot */
        0x8000000000000000ull | slot,  /* half the serial range ahead */
        (version + 1) << 32 | slot,    /* the next version, not yet issued */
        (version + 2) << 32 | slot,
        1ull << 32 | 0x7ffffff0u,      /* a slot past every chunk */
        0xffffffffull << 32 | 0xffffffffu,
        1ull << 32 | (slot + 16384u * 200u), /* a chunk never made */
    };
    for (unsigned i = 0; i < sizeof never / sizeof never[0]; i++) {
        cr_assert_eq(bthread_join(never[i], NULL), EINVAL, "id %#llx",
                     (unsigned long long)never[i]);
        cr_assert_eq(bthread_interrupt(never[i]), EINVAL, "id %#llx",
                     (unsigned long long)never[i]);
        cr_assert_eq(bthread_stop(never[i]), EINVAL, "id %#llx",
                     (unsigned long long)never[i]);
    }
    cr_assert_eq(bthread_join(0, NULL), EINVAL);
    cr_assert_eq(bthread_join(t, NULL), 0, "the ended id itself is stale, not invalid");
    cr_assert_eq(bthread_shutdown(), 0);
    /* after a shutdown, before any restart grows the chunk again: the same answers */
    cr_assert_eq(bthread_join(t, NULL), 0);
    for (unsigned i = 0; i < sizeof never / sizeof never[0]; i++)
        cr_assert_eq(bthread_join(never[i], NULL), EINVAL, "after shutdown: id %#llx",
                     (unsigned long long)never[i]);
}

/* An id one or a few versions ahead of an ended one, on the same slot: never issued. */
Test(ids, ids_never_handed_out_are_invalid, .timeout = 20)
{
    cr_assert_eq(bthread_setconcurrency(2), 0);
    bthread_t t;
    cr_assert_eq(bthread_start_background(&t, NULL, nop, NULL), 0);
    cr_assert_eq(bthread_join(t, NULL), 0);
    uint64_t slot = (uint32_t)t, version = t >> 32;
    cr_assert_eq(bthread_join(t, NULL), 0, "an ended id joins at once");
    for (uint64_t ahead = 1; ahead < 4; ahead++) {
        bthread_t never = (version + ahead) << 32 | slot;
        cr_assert_eq(bthread_join(never, NULL), EINVAL, "version +%llu", (unsigned long long)ahead);
        cr_assert_eq(bthread_interrupt(never), EINVAL);
    }
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- a stale stop or interrupt never reaches the slot's next task ------------------- */
#define STALE_SECONDS sb_rounds(3, 1) /* fewer under an emulator (sbtest.h) */
#define STOPPERS 4 /* more than the cores: each is often preempted mid-stop */
#define SHORT_YIELDS 4

static _Atomic bthread_t stale_target; /* the latest published id (it ends at once) */
static _Atomic int stale_done;
static _Atomic long stale_stopped_seen, stale_eintr_seen, fresh_runs;

/* Alive a little while after its id is published, so that a stop often finds it alive
 * and then, preempted, lands after it ended. */
static void *ends_soon(void *p)
{
    (void)p;
    for (int i = 0; i < SHORT_YIELDS; i++)
        bthread_yield();
    return NULL;
}

/* A task whose id nobody ever sees: nobody may stop or interrupt it. */
static void *fresh(void *p)
{
    (void)p;
    for (int i = 0; i < SHORT_YIELDS; i++) /* a wider window for a stale stop to land */
        bthread_yield();
    if (bthread_stopped(bthread_self()))
        atomic_fetch_add(&stale_stopped_seen, 1);
    if (bthread_usleep(1) != 0) /* a pending interrupt returns EINTR at once */
        atomic_fetch_add(&stale_eintr_seen, 1);
    if (bthread_stopped(bthread_self()))
        atomic_fetch_add(&stale_stopped_seen, 1);
    atomic_fetch_add(&fresh_runs, 1);
    return NULL;
}

/* Starts short tasks and publishes their ids, then fresh tasks that, started from the
 * same worker, usually take the slot the short one just gave back (a LIFO cache). */
static void *churner(void *p)
{
    (void)p;
    while (!atomic_load(&stale_done)) {
        bthread_t s, f[4];
        cr_assert_eq(bthread_start_background(&s, NULL, ends_soon, NULL), 0);
        atomic_store(&stale_target, s);
        bthread_join(s, NULL);
        for (int i = 0; i < 4; i++)
            cr_assert_eq(bthread_start_background(&f[i], NULL, fresh, NULL), 0);
        for (int i = 0; i < 4; i++)
            bthread_join(f[i], NULL);
    }
    return NULL;
}

static void *stopper(void *p)
{
    long k = (long)(intptr_t)p;
    while (!atomic_load(&stale_done)) {
        bthread_t t = atomic_load(&stale_target);
        if (!t)
            continue;
        if (k & 1)
            bthread_interrupt(t);
        else
            bthread_stop(t);
    }
    return NULL;
}

/* Every loop is bounded (STALE_SECONDS), so a failure is an assertion, not a hang. */
Test(ids, a_stale_stop_never_reaches_the_task_that_reuses_the_slot, .timeout = 30)
{
    cr_assert_eq(bthread_setconcurrency(2), 0);
    bthread_t ch[2];
    for (int i = 0; i < 2; i++)
        cr_assert_eq(bthread_start_background(&ch[i], NULL, churner, NULL), 0);
    pthread_t st[STOPPERS];
    for (long i = 0; i < STOPPERS; i++)
        cr_assert_eq(pthread_create(&st[i], NULL, stopper, (void *)(intptr_t)i), 0);
    struct timespec d = {(time_t)STALE_SECONDS, 0};
    while (nanosleep(&d, &d) != 0 && errno == EINTR) {
    }
    atomic_store(&stale_done, 1);
    for (int i = 0; i < STOPPERS; i++)
        pthread_join(st[i], NULL);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(bthread_join(ch[i], NULL), 0);
    cr_assert_gt(atomic_load(&fresh_runs), 0);
    cr_expect_eq(atomic_load(&stale_stopped_seen), 0,
                 "%ld of %ld never-published tasks saw bthread_stopped(self) == 1",
                 atomic_load(&stale_stopped_seen), atomic_load(&fresh_runs));
    cr_expect_eq(atomic_load(&stale_eintr_seen), 0,
                 "%ld of %ld never-published tasks got an EINTR nobody sent them",
                 atomic_load(&stale_eintr_seen), atomic_load(&fresh_runs));
    cr_assert_eq(bthread_shutdown(), 0);
}

/* ---- ids stay unique across shutdown and restart ------------------------------------ */
static bthread_sem_t restart_sem;
static _Atomic int long_rc = -1, long_stopped = -1; /* -1: still waiting */

static void *long_task(void *p)
{
    (void)p;
    int rc = bthread_sem_wait(&restart_sem); /* until the test posts; EINTR: interrupted */
    atomic_store(&long_stopped, bthread_stopped(bthread_self()));
    atomic_store(&long_rc, rc);
    return NULL;
}

Test(ids, ids_from_before_a_shutdown_stay_stale_after_the_restart, .timeout = 20)
{
    cr_assert_eq(bthread_setconcurrency(2), 0);
    bthread_t old;
    cr_assert_eq(bthread_start_background(&old, NULL, nop, NULL), 0);
    cr_assert_eq(bthread_join(old, NULL), 0);
    cr_assert_eq(bthread_shutdown(), 0);

    cr_assert_eq(bthread_sem_init(&restart_sem, 0), 0);
    bthread_t fresh_id;
    cr_assert_eq(bthread_start_background(&fresh_id, NULL, long_task, NULL), 0);
    cr_assert_neq(fresh_id, old, "the restarted scheduler handed out the old id again");
    /* the old id is stale: as any ended id (bthread.h), and the new task is untouched */
    cr_assert_eq(bthread_stop(old), EINVAL);
    cr_assert_eq(bthread_interrupt(old), ESRCH);
    cr_assert_eq(bthread_stopped(old), 1);
    cr_assert_eq(bthread_join(old, NULL), 0); /* at once: the new task waits on us */
    cr_assert_eq(atomic_load(&long_rc), -1, "the new task was woken through the old id");
    cr_assert_eq(bthread_stopped(fresh_id), 0);
    cr_assert_eq(bthread_sem_post(&restart_sem), 0);
    cr_assert_eq(bthread_join(fresh_id, NULL), 0);
    cr_assert_eq(atomic_load(&long_rc), 0, "the new task's sem_wait returned %d",
                 atomic_load(&long_rc));
    cr_assert_eq(atomic_load(&long_stopped), 0, "the new task saw itself stopped");
    cr_assert_eq(bthread_sem_destroy(&restart_sem), 0);
    cr_assert_eq(bthread_shutdown(), 0);
}
