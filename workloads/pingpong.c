/*
 * pingpong -- two bthreads pass a token back and forth `rounds` times each: the cost of
 * a blocking hand-off (wait, wake, switch, and a cross-worker wake-up when the two sit on
 * different workers).
 *
 *   mode 0: bthread_mutex + bthread_cond.  A player waits on the condition until the
 *           turn is its own, increments the token, passes the turn, signals.
 *   mode 1: one raw butex whose value is the turn (0 or 1).  A player waits while the
 *           value is the other player's, increments the token, stores the other
 *           player's number (release) and wakes the butex.
 *
 * answer = the final token (= 2 * rounds).  items = the hand-offs (= 2 * rounds).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "bthread.h"
#include "butex.h"
#include "workload.h"

typedef struct pp_game {
    long rounds;
    uint64_t token; /* touched only by the player whose turn it is */
    /* mode 0 */
    bthread_mutex_t mu;
    bthread_cond_t cv;
    int turn; /* under mu */
    /* mode 1: the butex's value is the turn */
    void *butex;
} pp_game_t;

typedef struct pp_player {
    pp_game_t *game;
    int me; /* 0 or 1 */
} pp_player_t;

static void *pp_cond_player(void *arg)
{
    pp_player_t *p = arg;
    pp_game_t *g = p->game;
    for (long i = 0; i < g->rounds; i++) {
        bthread_mutex_lock(&g->mu);
        while (g->turn != p->me)
            bthread_cond_wait(&g->cv, &g->mu);
        g->token++;
        g->turn = 1 - p->me;
        bthread_cond_signal(&g->cv);
        bthread_mutex_unlock(&g->mu);
    }
    return NULL;
}

static void *pp_butex_player(void *arg)
{
    pp_player_t *p = arg;
    pp_game_t *g = p->game;
    _Atomic int *turn = (_Atomic int *)g->butex;
    for (long i = 0; i < g->rounds; i++) {
        /* acquire: pairs with the other player's release store of the turn, so its
         * token increment is visible before ours */
        while (atomic_load_explicit(turn, memory_order_acquire) != p->me)
            butex_wait(g->butex, 1 - p->me, NULL);
        g->token++;
        /* release: publishes our token increment to the player that reads this turn */
        atomic_store_explicit(turn, 1 - p->me, memory_order_release);
        butex_wake(g->butex);
    }
    return NULL;
}

static uint64_t pp_sequential(const long *args)
{
    uint64_t token = 0;
    for (long i = 0; i < args[1]; i++)
        token += 2; /* one hand-off each way per round */
    return token;
}

static int pp_parallel(const long *args, wl_run_t *out)
{
    long mode = args[0];
    pp_game_t g = {.rounds = args[1]};
    int rc;
    if (mode == 0) {
        if ((rc = bthread_mutex_init(&g.mu, NULL)) != 0)
            return rc;
        if ((rc = bthread_cond_init(&g.cv, NULL)) != 0) {
            bthread_mutex_destroy(&g.mu);
            return rc;
        }
    } else if (mode == 1) {
        g.butex = butex_create();
        if (!g.butex)
            return ENOMEM;
        /* relaxed: no player runs yet; bthread_start_background publishes it */
        atomic_store_explicit((_Atomic int *)g.butex, 0, memory_order_relaxed);
    } else {
        return EINVAL;
    }
    void *(*fn)(void *) = mode == 0 ? pp_cond_player : pp_butex_player;
    pp_player_t players[2] = {{&g, 0}, {&g, 1}};
    bthread_t tids[2];
    int started = 0;
    for (; started < 2; started++) {
        rc = bthread_start_background(&tids[started], NULL, fn, &players[started]);
        if (rc != 0)
            break;
    }
    if (started == 1) /* a lone player would wait forever: play its partner, then fail */
        fn(&players[1]);
    for (int i = 0; i < started; i++)
        bthread_join(tids[i], NULL);
    if (mode == 0) {
        bthread_cond_destroy(&g.cv);
        bthread_mutex_destroy(&g.mu);
    } else {
        butex_destroy(g.butex);
    }
    if (started < 2)
        return rc;
    out->answer = g.token;
    out->items = (double)g.token;
    return 0;
}

static workload_t pingpong = {
    .name = "pingpong",
    .summary = "two bthreads pass a token: mode 0 mutex+cond, mode 1 raw butex",
    .arg_names = {"mode", "rounds"},
    .bench = {{0, 100000}, {1, 100000}},
    .nbench = 2,
    .nfull = 0,
    .test = {0, 1000},
    .test_more = {{1, 1000}},
    .ntest_more = 1,
    .sequential = pp_sequential,
    .parallel = pp_parallel,
};
WORKLOAD_REGISTER(pingpong)
