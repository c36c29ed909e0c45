/*
 * timer.c -- one timer thread for timed butex waits and bthread_usleep.
 *
 * Timers live in a slot array (a free list, grown by doubling: no allocation per timer
 * once warm) and a binary min-heap of slot numbers ordered by deadline (CLOCK_REALTIME,
 * as the butex API's abstime).  An id is version << 32 | slot, so timer_del of a timer
 * that already ran and whose slot was reused does nothing.
 *
 * Cancel vs. fire: the timer thread takes a due timer off the heap and records it as
 * `running` under the lock, then runs it unlocked.  timer_del finds a timer either still
 * in the heap (removed: it will never run) or running (waits until it has returned) or
 * gone.  So when timer_del returns, the callback is not running and never will, and the
 * waiter it points to may leave its stack.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "timer.h"
#include "timeutil.h"

typedef struct timer_slot {
    int64_t when; /* ns, CLOCK_REALTIME */
    void (*fn)(void *);
    void *arg;
    uint32_t version;
    int heap_pos; /* -1 when not in the heap */
    int next_free;
} timer_slot_t;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;      /* the thread waits here for the earliest deadline */
    pthread_cond_t done;      /* timer_del waits here for a running callback */
    timer_slot_t *slots;
    int *heap;
    int nslots, cap, nheap, free_head;
    uint64_t running;         /* id of the callback running now, 0 = none */
    bool started, stop;
    pthread_t thread;
} tm = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
        .done = PTHREAD_COND_INITIALIZER, .free_head = -1};

static bool earlier(int a, int b) { return tm.slots[tm.heap[a]].when < tm.slots[tm.heap[b]].when; }

static void heap_swap(int a, int b)
{
    int t = tm.heap[a];
    tm.heap[a] = tm.heap[b];
    tm.heap[b] = t;
    tm.slots[tm.heap[a]].heap_pos = a;
    tm.slots[tm.heap[b]].heap_pos = b;
}

static void sift_up(int i)
{
    while (i > 0 && earlier(i, (i - 1) / 2)) {
        heap_swap(i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void sift_down(int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < tm.nheap && earlier(l, m))
            m = l;
        if (r < tm.nheap && earlier(r, m))
            m = r;
        if (m == i)
            return;
        heap_swap(i, m);
        i = m;
    }
}

static void heap_remove(int pos)
{
    int last = --tm.nheap;
    tm.slots[tm.heap[pos]].heap_pos = -1;
    if (pos != last) {
        tm.heap[pos] = tm.heap[last];
        tm.slots[tm.heap[pos]].heap_pos = pos;
        sift_down(pos);
        sift_up(pos);
    }
}

static void free_slot(int s)
{
    tm.slots[s].version++;
    tm.slots[s].next_free = tm.free_head;
    tm.free_head = s;
}

static void *timer_main(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&tm.lock);
    while (!tm.stop) {
        if (tm.nheap == 0) {
            pthread_cond_wait(&tm.cond, &tm.lock);
            continue;
        }
        int s = tm.heap[0];
        int64_t when = tm.slots[s].when;
        if (when > sb_clock_ns(CLOCK_REALTIME)) {
            struct timespec abs = sb_ns_to_ts(when);
            pthread_cond_timedwait(&tm.cond, &tm.lock, &abs);
            continue;
        }
        heap_remove(0);
        void (*fn)(void *) = tm.slots[s].fn;
        void *arg = tm.slots[s].arg;
        tm.running = (uint64_t)tm.slots[s].version << 32 | (uint32_t)s;
        free_slot(s);
        pthread_mutex_unlock(&tm.lock);
        fn(arg);
        pthread_mutex_lock(&tm.lock);
        tm.running = 0;
        pthread_cond_broadcast(&tm.done);
    }
    pthread_mutex_unlock(&tm.lock);
    return NULL;
}

static bool grow(void)
{
    int cap = tm.cap ? 2 * tm.cap : 256;
    timer_slot_t *s = realloc(tm.slots, (size_t)cap * sizeof *s);
    if (!s)
        return false;
    tm.slots = s;
    int *h = realloc(tm.heap, (size_t)cap * sizeof *h);
    if (!h)
        return false;
    tm.heap = h;
    tm.cap = cap;
    return true;
}

uint64_t timer_add(const struct timespec *abstime, void (*fn)(void *), void *arg)
{
    pthread_mutex_lock(&tm.lock);
    if (!tm.started) {
        tm.stop = false;
        if (pthread_create(&tm.thread, NULL, timer_main, NULL) != 0) {
            pthread_mutex_unlock(&tm.lock);
            return 0;
        }
        tm.started = true;
    }
    int s = tm.free_head;
    if (s >= 0) {
        tm.free_head = tm.slots[s].next_free;
    } else {
        if (tm.nslots == tm.cap && !grow()) {
            pthread_mutex_unlock(&tm.lock);
            return 0;
        }
        s = tm.nslots++;
        tm.slots[s].version = 1;
    }
    timer_slot_t *t = &tm.slots[s];
    t->when = sb_ts_to_ns(abstime);
    t->fn = fn;
    t->arg = arg;
    t->heap_pos = tm.nheap;
    tm.heap[tm.nheap++] = s;
    sift_up(t->heap_pos);
    if (t->heap_pos == 0) /* a new earliest deadline */
        pthread_cond_signal(&tm.cond);
    uint64_t id = (uint64_t)t->version << 32 | (uint32_t)s;
    pthread_mutex_unlock(&tm.lock);
    return id;
}

int timer_del(uint64_t id)
{
    int s = (int)(uint32_t)id;
    uint32_t version = (uint32_t)(id >> 32);
    int rc = 1;
    pthread_mutex_lock(&tm.lock);
    if (s < tm.nslots && tm.slots[s].version == version && tm.slots[s].heap_pos >= 0) {
        heap_remove(tm.slots[s].heap_pos);
        free_slot(s);
        rc = 0;
    } else {
        while (tm.running == id)
            pthread_cond_wait(&tm.done, &tm.lock);
    }
    pthread_mutex_unlock(&tm.lock);
    return rc;
}

void timer_shutdown(void)
{
    pthread_mutex_lock(&tm.lock);
    if (!tm.started) {
        pthread_mutex_unlock(&tm.lock);
        return;
    }
    tm.stop = true;
    pthread_cond_signal(&tm.cond);
    pthread_mutex_unlock(&tm.lock);
    pthread_join(tm.thread, NULL);
    pthread_mutex_lock(&tm.lock);
    free(tm.slots);
    free(tm.heap);
    tm.slots = NULL;
    tm.heap = NULL;
    tm.nslots = tm.cap = tm.nheap = 0;
    tm.free_head = -1;
    tm.started = false;
    pthread_mutex_unlock(&tm.lock);
}

void timer_atfork_child(void)
{
    static const pthread_mutex_t m0 = PTHREAD_MUTEX_INITIALIZER;
    static const pthread_cond_t c0 = PTHREAD_COND_INITIALIZER;
    tm.lock = m0; /* another thread of the parent may have held it */
    tm.cond = c0;
    tm.done = c0;
    tm.nslots = tm.nheap = 0;
    tm.free_head = -1;
    tm.running = 0;
    tm.started = tm.stop = false;
}
