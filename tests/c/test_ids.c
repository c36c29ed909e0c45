/*
 * test_ids.c -- bthread ids, on every variant: an id is issued once, ever.  A stale id
 * (its task ended) joins at once and reaches no other task; an id never issued is
 * EINVAL, whatever its bits; a slot whose versions run out retires instead of wrapping;
 * a restart keeps every old id stale.
 *
 * SCHEDBENCH_TEST_FIRST_VERSION (common/sched.c) starts the slots of new chunks near the
 * end of their versions, so a slot's last versions are reached in a few starts instead
 * of 2^32.  sbtest runs each test in a process of its own, so the setting stays there.
 */
#include "sbtest.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

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
