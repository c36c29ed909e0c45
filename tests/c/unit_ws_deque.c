/*
 * unit_ws_deque.c -- stress for the article's deque (harness/ref/ws_deque.h): one owner
 * pushing in batches of 1 to 64 and popping, three thieves stealing batches (1, 4, 16,
 * 32 and half in turn, one CAS each), every ring starting at 2 slots so that it grows
 * while they steal; at least 10^7 items, and every item must be taken exactly once (a
 * bitmap catches duplicates, count and sum catch losses).  The items go through rounds,
 * each on a fresh deque (a barrier between rounds: a thief never touches a finished
 * one), so growth races with steals in every round.  Each item's takes are counted, and
 * every count must end at 1.  SB_STRESS_ITEMS overrides the item count (make
 * SANITIZE=thread and the qemu build lower it: tests/rules.mk).
 */
#include "sbtest.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "ref/ws_deque.h"

/* items are integers 1..N disguised as pointers */
#define ITEM(i) ((void *)(uintptr_t)(i))
#define INDEX(p) ((uint64_t)(uintptr_t)(p))
#define THIEVES 3
#define ROUNDS 100
#define MAX_BATCH 64
#define MAX_MARGIN 1024

static ws_deque_t q;
static long margin;
static _Atomic unsigned char *takes; /* per item: how often it was taken */
static _Atomic uint64_t lost_races, batch_steals;
static _Atomic bool round_done, all_done;
static pthread_barrier_t turn;

/* relaxed: the counts are read after the joins */
static void take(void *x) { atomic_fetch_add_explicit(&takes[INDEX(x)], 1, memory_order_relaxed); }

static void *thief(void *arg)
{
    static const long ks[] = {1, 4, 16, 32, WS_HALF};
    unsigned next = (unsigned)(uintptr_t)arg;
    void *got[MAX_MARGIN];
    for (;;) {
        /* acquire: pairs with the owner's release stores of the flags, after its drain */
        while (!atomic_load_explicit(&round_done, memory_order_acquire) || ws_size(&q) > 0) {
            long n = ws_steal(&q, ks[next++ % 5], got);
            if (n == WS_LOST)
                atomic_fetch_add_explicit(&lost_races, 1, memory_order_relaxed);
            if (n > 1)
                atomic_fetch_add_explicit(&batch_steals, 1, memory_order_relaxed);
            for (long i = 0; i < n; i++)
                take(got[i]);
        }
        pthread_barrier_wait(&turn); /* the round is over */
        pthread_barrier_wait(&turn); /* the next deque is ready */
        if (atomic_load_explicit(&all_done, memory_order_acquire))
            return NULL;
    }
}

static uint64_t items(void)
{
    const char *e = getenv("SB_STRESS_ITEMS");
    return e ? strtoull(e, NULL, 0) : 10000000ull;
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* One round: items first .. last - 1 through a fresh deque.  The owner keeps the deque
 * short (about a steal's reach: the margin and a few more) so that its pops keep meeting the
 * thieves' batches: pushing batches of 1 to 64, popping runs of up to 64. */
static void owner_round(uint64_t first, uint64_t last, uint64_t *rng)
{
    void *batch[MAX_BATCH];
    uint64_t next = first;
    while (next < last) {
        uint64_t r = xorshift(rng);
        if (r % 2 == 0 && ws_size(&q) < margin + 16) {
            long k = (long)(1 + (r >> 8) % MAX_BATCH);
            if ((uint64_t)k > last - next)
                k = (long)(last - next);
            for (long i = 0; i < k; i++)
                batch[i] = ITEM(next + (uint64_t)i);
            cr_assert(ws_push(&q, batch, k), "push of %ld failed (out of memory)", k);
            next += (uint64_t)k;
        } else {
            for (uint64_t n = 1 + (r >> 8) % MAX_BATCH; n > 0; n--) {
                void *x = ws_pop(&q);
                if (!x)
                    break;
                take(x);
            }
        }
    }
    void *x;
    while ((x = ws_pop(&q)))
        take(x);
}

static void run(long k_margin)
{
    uint64_t n = items();
    margin = k_margin;
    takes = calloc(n + 1, sizeof *takes);
    cr_assert(takes != NULL);
    atomic_store(&lost_races, 0);
    atomic_store(&batch_steals, 0);
    atomic_store(&round_done, false);
    atomic_store(&all_done, false);
    pthread_barrier_init(&turn, NULL, THIEVES + 1);
    cr_assert_eq(ws_deque_init(&q, 2, margin), 0);
    pthread_t th[THIEVES];
    for (int i = 0; i < THIEVES; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, thief, (void *)(uintptr_t)i), 0);
    uint64_t rng = 88172645463325252ull;
    for (int round = 0; round < ROUNDS; round++) {
        owner_round(n * (uint64_t)round / ROUNDS + 1, n * (uint64_t)(round + 1) / ROUNDS + 1, &rng);
        /* release: the thieves' acquire sees the drained deque's last state */
        atomic_store_explicit(&round_done, true, memory_order_release);
        pthread_barrier_wait(&turn); /* every thief saw it empty */
        ws_deque_fini(&q);
        cr_assert_eq(ws_deque_init(&q, 2, margin), 0);
        atomic_store_explicit(&round_done, false, memory_order_relaxed); /* the barrier orders it */
        if (round == ROUNDS - 1)
            atomic_store_explicit(&all_done, true, memory_order_release);
        pthread_barrier_wait(&turn);
    }
    for (int i = 0; i < THIEVES; i++)
        pthread_join(th[i], NULL);
    ws_deque_fini(&q);
    pthread_barrier_destroy(&turn);
    uint64_t lost = 0, twice = 0, first_bad = 0;
    for (uint64_t i = 1; i <= n; i++) {
        unsigned c = atomic_load_explicit(&takes[i], memory_order_relaxed);
        lost += c == 0;
        twice += c > 1;
        if (c != 1 && !first_bad)
            first_bad = i;
    }
    cr_assert(lost == 0 && twice == 0, "of %lu items %lu never taken, %lu taken twice or more "
              "(the first: item %lu)", (unsigned long)n, (unsigned long)lost,
              (unsigned long)twice, (unsigned long)first_bad);
    if (margin > 1) /* the stress did exercise the batch path */
        cr_assert_gt(atomic_load(&batch_steals), 0);
    cr_log_info("margin %ld: %lu batch steals, %lu lost races", margin,
                (unsigned long)atomic_load(&batch_steals), (unsigned long)atomic_load(&lost_races));
    free((void *)takes);
}

/* margin 32: the steals of 1, 4, 16 and 32 (and half, at most 32) race the owner's
 * CAS-free pops beyond the margin and its CAS pops within it */
Test(ws_deque, batch_push_pop_and_batch_steal_take_each_item_once, .timeout = 300)
{
    run(32);
}

/* margin 1: plain Chase-Lev (every steal takes one; the owner's CAS only on the last) */
Test(ws_deque, chase_lev_margin_one_takes_each_item_once, .timeout = 300) { run(1); }

/* margin 1024: half of what a thief sees, up to 1024 in one CAS */
Test(ws_deque, steal_half_takes_each_item_once, .timeout = 300) { run(MAX_MARGIN); }

Test(ws_deque, batches_keep_their_order_and_the_margin_bounds_a_steal, .timeout = 10)
{
    ws_deque_t s;
    void *in[40], *out[64];
    cr_assert_eq(ws_deque_init(&s, 2, 8), 0);
    for (int i = 0; i < 40; i++)
        in[i] = ITEM(i + 1);
    cr_assert(ws_push(&s, in, 40)); /* grows from 2 to 64 slots in one push */
    cr_assert_eq(ws_size(&s), 40);
    cr_assert_eq(ws_steal(&s, 32, out), 8); /* the margin caps it */
    cr_assert_eq(INDEX(out[0]), 1);
    cr_assert_eq(INDEX(out[7]), 8);
    cr_assert_eq(ws_steal(&s, WS_HALF, out), 8); /* half of 32, capped at 8 */
    cr_assert_eq(INDEX(out[0]), 9);
    cr_assert_eq(INDEX(ws_pop(&s)), 40); /* LIFO at the bottom ... */
    for (int i = 39; i > 24; i--)
        cr_assert_eq(INDEX(ws_pop(&s)), i);
    /* ... until 8 are left: then the oldest, by CAS */
    cr_assert_eq(ws_size(&s), 8);
    cr_assert_eq(INDEX(ws_pop(&s)), 17);
    cr_assert_eq(ws_steal(&s, 1, out), 1);
    cr_assert_eq(INDEX(out[0]), 18);
    for (int i = 19; i <= 24; i++)
        cr_assert_eq(INDEX(ws_pop(&s)), i);
    cr_assert_null(ws_pop(&s));
    cr_assert_eq(ws_steal(&s, 4, out), 0);
    ws_deque_fini(&s);
}
