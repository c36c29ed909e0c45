/*
 * unit_wsq.c -- stress for the Chase-Lev deque (common/wsq.h): one owner pushing and
 * popping, several thieves stealing (one at a time and by halves), at least 10^7 items;
 * every item must be taken exactly once (a bitmap catches duplicates, count and sum
 * catch losses).  SB_STRESS_ITEMS overrides the item count.
 */
#include "sbtest.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "wsq.h"

struct task; /* items are integers 1..N disguised as pointers */
#define ITEM(i) ((struct task *)(uintptr_t)(i))
#define INDEX(p) ((uint64_t)(uintptr_t)(p))

static wsq_t q;
static _Atomic uint64_t *seen; /* bitmap */
static _Atomic uint64_t taken, sum;
static _Atomic bool done;
static _Atomic uint64_t dups;

static void take(struct task *x)
{
    uint64_t i = INDEX(x);
    uint64_t bit = 1ull << (i & 63);
    if (atomic_fetch_or_explicit(&seen[i >> 6], bit, memory_order_relaxed) & bit)
        atomic_fetch_add_explicit(&dups, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&taken, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&sum, i, memory_order_relaxed);
}

static void no_overflow(void *ctx, struct task *x)
{
    (void)ctx;
    take(x); /* the thief's own queue is private here: just count it */
}

static void *thief(void *arg)
{
    bool half = (intptr_t)arg;
    wsq_t mine;
    wsq_init(&mine, 1024);
    while (!atomic_load_explicit(&done, memory_order_acquire) || wsq_size(&q) > 0) {
        struct task *x;
        if (half) {
            unsigned moved = 0;
            x = wsq_steal_half(&q, &mine, &moved, no_overflow, NULL);
            struct task *y;
            while ((y = wsq_pop(&mine)))
                take(y);
        } else {
            x = wsq_steal(&q);
        }
        if (x)
            take(x);
    }
    wsq_fini(&mine);
    return NULL;
}

static uint64_t items(void)
{
    const char *e = getenv("SB_STRESS_ITEMS");
    return e ? strtoull(e, NULL, 0) : 10000000ull;
}

static void run(int nthieves, bool half)
{
    uint64_t n = items();
    cr_assert_eq(wsq_init(&q, 256), 0);
    seen = calloc(n / 64 + 2, sizeof *seen);
    atomic_store(&taken, 0);
    atomic_store(&sum, 0);
    atomic_store(&dups, 0);
    atomic_store(&done, false);
    pthread_t th[8];
    for (int i = 0; i < nthieves; i++)
        pthread_create(&th[i], NULL, thief, (void *)(intptr_t)half);
    uint64_t pushed = 0, rng = 88172645463325252ull;
    while (pushed < n) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        if (rng % 3 != 0) { /* push mostly, pop sometimes: both ends race */
            if (wsq_push(&q, ITEM(pushed + 1)))
                pushed++;
            else if ((rng >> 8) & 1) {
                struct task *x = wsq_pop(&q);
                if (x)
                    take(x);
            }
        } else {
            struct task *x = wsq_pop(&q);
            if (x)
                take(x);
        }
    }
    struct task *x;
    while ((x = wsq_pop(&q)))
        take(x);
    atomic_store_explicit(&done, true, memory_order_release);
    for (int i = 0; i < nthieves; i++)
        pthread_join(th[i], NULL);
    cr_assert_eq(atomic_load(&dups), 0, "items taken twice: %lu", (unsigned long)dups);
    cr_assert_eq(atomic_load(&taken), n, "taken %lu of %lu", (unsigned long)taken, (unsigned long)n);
    cr_assert_eq(atomic_load(&sum), n * (n + 1) / 2);
    wsq_fini(&q);
    free(seen);
}

Test(wsq, owner_and_three_thieves_take_each_item_once, .timeout = 240) { run(3, false); }
Test(wsq, half_stealing_takes_each_item_once, .timeout = 240) { run(2, true); }

Test(wsq, full_queue_refuses_push, .timeout = 10)
{
    wsq_t s;
    cr_assert_eq(wsq_init(&s, 4), 0);
    for (int i = 1; i <= 4; i++)
        cr_assert(wsq_push(&s, ITEM(i)));
    cr_assert_not(wsq_push(&s, ITEM(5)));
    cr_assert_eq(INDEX(wsq_pop(&s)), 4);  /* LIFO at the bottom */
    cr_assert_eq(INDEX(wsq_steal(&s)), 1); /* FIFO at the top */
    cr_assert(wsq_take_back(&s, ITEM(3)));
    cr_assert_not(wsq_take_back(&s, ITEM(7)));
    cr_assert_eq(wsq_size(&s), 1);
    wsq_fini(&s);
}
