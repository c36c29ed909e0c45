/*
 * id.c -- brpc's bthread_id_*: versioned 64-bit handles to lockable data; and the lists
 * of ids and of bthreads that may end (bthread_id_list_*, bthread_list_*).
 *
 * An id is (slot << 32 | version).  A slot is an entity: data, an on_error callback, a
 * queue of pending errors, and two butexes.  Slots live in chunks that are never freed
 * (type-stable, as butexes are), so any id, however stale, can be looked up safely; the
 * version says whether it still names the slot's current entity.  The versions of one
 * entity, as in brpc (the numbers are the protocol its users and tests observe):
 *
 *     first_ver .. locked_ver - 1   the ids that name it (locked_ver = first_ver + range)
 *     locked_ver                    lock word: locked
 *     locked_ver + 1                lock word: locked, and someone waits (contended)
 *     locked_ver + 2                lock word: locked, about to be destroyed
 *     locked_ver + 3                the next entity's first_ver (its end)
 *
 * The lock word (lock_bx's value) is first_ver while unlocked; join_bx's value is
 * first_ver while the entity lives and its end once destroyed.  Destroying sets both to
 * the end, and first_ver = locked_ver = end, so no version of the old entity matches
 * any more, and the next entity in the slot starts at that end: versions only grow.  A
 * slot whose next entity could reach 2^32 is retired instead of reused (brpc wraps to 1
 * and could hand an old id's version out again), so a stale id never names a new entity.
 *
 * Locking.  Every field of a slot, and every change of its two words, is under the
 * slot's spin lock (`lock`; short sections, no call out while held).  The words are
 * butexes only so that lockers and joiners can sleep on them, and they follow sync.c's
 * rule: change the word (under `lock`), release `lock`, then wake; a sleeper reads the
 * word under `lock`, releases it, and butex_wait()s on exactly that value, which the
 * butex re-checks under its own lock.
 *   - lock: unlocked -> take it (contended if others sleep); locked -> count ourselves
 *     in `sleepers`, mark it contended, sleep; about to destroy -> EPERM.
 *   - unlock: a pending error keeps the lock and runs on_error; otherwise back to
 *     first_ver, and one sleeper is woken if `sleepers` says there is one.
 *   - destroy: both words to the end, every sleeper woken; they find their version dead
 *     (EINVAL for lockers, 0 for joiners), even if the slot holds a new entity by then.
 * Why a count and not the word's value (brpc wakes when the word says contended): the
 * values move when a lock widens the range (locked = first + range), so widening by one
 * makes the new "locked" equal the old "contended".  A locker that read the old value
 * and is on its way into butex_wait then falls asleep under a holder whose word says
 * uncontended, and nothing wakes it (the widening test of test_bthread_id.c hangs so).
 * With the count, any unlock after a locker counted itself wakes one sleeper; a wake-up
 * that comes before that locker is queued finds the word changed (unlock sets
 * first_ver), or a new holder that also sees the count, so each unlock passes the lock
 * on.  A locker that was counted for an entity that is destroyed meanwhile leaves the
 * count when it comes back, so the slot's next entity sees at most a spurious wake-up.
 * The slot lock is also the lock's memory order: the holder's writes to the data are
 * released when it unlocks the slot after storing first_ver, and acquired by the next
 * locker that takes the slot lock; the words themselves are therefore relaxed.
 *
 * Differences from brpc, each said in bthread.h: no wrap of versions (retired slots),
 * cancel wakes joiners, EINVAL from join for an id never created, the lock word says
 * contended while lockers sleep (brpc: once the holder had slept), and the error text is
 * a C string (bthread.hpp turns it into brpc's std::string).
 *
 * Lists (brpc's ListOfABAFreeId keeps blocks and scatters conflicts): here a growing
 * array.  When it is full, an add first drops the entries whose id is gone, and grows
 * only if more than half are alive, so adds stay amortized O(1) and a list that only
 * ever holds a few live ids stays small.  Versioned ids make "gone" exact.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomics.h"
#include "bthread.h"
#include "butex.h"
#include "spinlock.h"

/* ---- slots ------------------------------------------------------------------------- */

typedef struct pending_error {
    struct pending_error *next;
    bthread_id_t id; /* the value it was issued to (a ranged entity has several) */
    int error_code;
    const char *location;
    char text[]; /* "" when issued without one */
} pending_error_t;

typedef struct id_slot {
    spinlock_t lock;     /* everything below, and every change of the two words */
    uint32_t first_ver;  /* 0 = never used (no version matches) */
    uint32_t locked_ver; /* == first_ver while no entity lives here */
    uint32_t next_free;  /* free list: index + 1 of the next free slot (table.lock) */
    uint32_t sleepers;   /* lockers between "going to sleep" and "back under the lock" */
    void *lock_bx;       /* the lock word (the header's table); NULL until first used */
    void *join_bx;       /* first_ver while alive, the end once destroyed */
    void *data;
    bthread_id_on_error_t on_error;           /* one of these two is set */
    bthread_id_on_error_text_t on_error_text;
    void *on_error_arg;
    const char *lock_location; /* where the holder locked it, for describe */
    pending_error_t *pending_head, *pending_tail;
} __attribute__((aligned(CACHELINE))) id_slot_t;

#define CHUNK_SHIFT 10
#define CHUNK_SLOTS (1u << CHUNK_SHIFT)
#define MAX_CHUNKS (1u << 12) /* 4M slots */
/* A slot is reused only if its next entity's end (first + BTHREAD_ID_MAX_RANGE + 3)
 * stays below 2^32. */
#define LAST_REUSABLE_VER (UINT32_MAX - (BTHREAD_ID_MAX_RANGE + 3))

/* Chunks are created under table.lock and never freed. */
static _Atomic(id_slot_t *) chunks[MAX_CHUNKS];
static struct {
    spinlock_t lock;    /* free list and growth */
    uint32_t free_head; /* index + 1 of the first free slot, 0: none */
    uint32_t nslots;    /* slots handed out at least once */
} table = {SPINLOCK_INIT, 0, 0};

static inline uint32_t slot_index(bthread_id_t id) { return (uint32_t)(id.value >> 32); }
static inline uint32_t version_of(bthread_id_t id) { return (uint32_t)id.value; }
static inline bthread_id_t make_id(uint32_t index, uint32_t version)
{
    return (bthread_id_t){(uint64_t)index << 32 | version};
}

static inline uint32_t contended_ver(const id_slot_t *s) { return s->locked_ver + 1; }
static inline uint32_t unlockable_ver(const id_slot_t *s) { return s->locked_ver + 2; }
static inline uint32_t end_ver(const id_slot_t *s) { return s->locked_ver + 3; }
/* Under s->lock: does version v name the slot's living entity? */
static inline bool alive(const id_slot_t *s, uint32_t v)
{
    return v >= s->first_ver && v < s->locked_ver;
}

/* The words: changed under s->lock, relaxed (the header: the slot lock orders them). */
static inline uint32_t word_get(void *bx)
{
    return (uint32_t)atomic_load_explicit((_Atomic int *)bx, memory_order_relaxed);
}
static inline void word_set(void *bx, uint32_t v)
{
    atomic_store_explicit((_Atomic int *)bx, (int)v, memory_order_relaxed);
}

/* Any thread: the slot an id points into, or NULL if that slot was never made. */
static id_slot_t *slot_of(bthread_id_t id)
{
    const uint32_t i = slot_index(id);
    if ((i >> CHUNK_SHIFT) >= MAX_CHUNKS)
        return NULL;
    /* acquire: pairs with the release store that published the zeroed chunk. */
    id_slot_t *c = atomic_load_explicit(&chunks[i >> CHUNK_SHIFT], memory_order_acquire);
    return c ? &c[i & (CHUNK_SLOTS - 1)] : NULL;
}

/* Any thread: a free slot, exclusively the caller's until it publishes an id; NULL if
 * the table is full or out of memory. */
static id_slot_t *slot_take(uint32_t *index)
{
    spin_lock(&table.lock);
    if (table.free_head) {
        const uint32_t i = table.free_head - 1;
        id_slot_t *s = slot_of(make_id(i, 0));
        table.free_head = s->next_free;
        spin_unlock(&table.lock);
        *index = i;
        return s;
    }
    const uint32_t i = table.nslots;
    if ((i & (CHUNK_SLOTS - 1)) == 0) { /* the first slot of a chunk not made yet */
        if ((i >> CHUNK_SHIFT) >= MAX_CHUNKS) {
            spin_unlock(&table.lock);
            return NULL;
        }
        id_slot_t *c = aligned_alloc(CACHELINE, CHUNK_SLOTS * sizeof(id_slot_t));
        if (!c) {
            spin_unlock(&table.lock);
            return NULL;
        }
        memset(c, 0, CHUNK_SLOTS * sizeof(id_slot_t)); /* zero: SPINLOCK_INIT, unused */
        /* release: lookups (slot_of) see the zeroed slots. */
        atomic_store_explicit(&chunks[i >> CHUNK_SHIFT], c, memory_order_release);
    }
    table.nslots = i + 1;
    spin_unlock(&table.lock);
    *index = i;
    return slot_of(make_id(i, 0));
}

/* Any thread, for a slot no id names any more (destroyed, or never published). */
static void slot_give_back(uint32_t index, id_slot_t *s)
{
    spin_lock(&table.lock);
    s->next_free = table.free_head;
    table.free_head = index + 1;
    spin_unlock(&table.lock);
}

/* Under s->lock: the word of a lock just taken, contended while others sleep. */
static inline uint32_t taken_word(const id_slot_t *s)
{
    return s->sleepers ? contended_ver(s) : s->locked_ver;
}

/* Any thread: the id's slot, its lock taken, if the id is alive; else NULL (EINVAL). */
static id_slot_t *lock_alive(bthread_id_t id)
{
    id_slot_t *s = slot_of(id);
    if (!s)
        return NULL;
    spin_lock(&s->lock);
    if (alive(s, version_of(id)))
        return s;
    spin_unlock(&s->lock);
    return NULL;
}

/* The holder's calls: the slot, its lock taken, if the id is alive and locked; else
 * NULL and *rc = EINVAL (not alive) or EPERM (not locked; brpc also logs it). */
static id_slot_t *lock_held(bthread_id_t id, int *rc)
{
    id_slot_t *s = lock_alive(id);
    if (!s) {
        *rc = EINVAL;
        return NULL;
    }
    if (word_get(s->lock_bx) == s->first_ver) {
        spin_unlock(&s->lock);
        *rc = EPERM;
        return NULL;
    }
    return s;
}

/* ---- create ------------------------------------------------------------------------ */

static int id_create(bthread_id_t *id, void *data, bthread_id_on_error_t on_error,
                     bthread_id_on_error_text_t on_error_text, void *arg, int range)
{
    if (!id || range < 1 || range > BTHREAD_ID_MAX_RANGE)
        return EINVAL;
    uint32_t index;
    id_slot_t *s = slot_take(&index);
    if (!s)
        return ENOMEM;
    /* A slot's butexes are made by its first entity and kept for every later one.  Made
     * outside the slot lock (they may allocate); stale ids look at them only when their
     * version is alive, which it cannot be before the versions are set below. */
    void *lock_bx = NULL, *join_bx = NULL;
    spin_lock(&s->lock);
    const bool fresh = s->lock_bx == NULL;
    spin_unlock(&s->lock);
    if (fresh && (!(lock_bx = butex_create()) || !(join_bx = butex_create()))) {
        butex_destroy(lock_bx);
        slot_give_back(index, s);
        return ENOMEM;
    }
    spin_lock(&s->lock);
    if (fresh) {
        s->lock_bx = lock_bx;
        s->join_bx = join_bx;
    }
    const uint32_t v = s->first_ver ? s->first_ver : 1; /* versions start at 1: id != 0 */
    s->first_ver = v;
    s->locked_ver = v + (uint32_t)range;
    word_set(s->lock_bx, v);
    word_set(s->join_bx, v);
    s->data = data;
    s->on_error = on_error;
    s->on_error_text = on_error_text;
    s->on_error_arg = arg;
    s->lock_location = NULL;
    spin_unlock(&s->lock);
    *id = make_id(index, v);
    return 0;
}

/* brpc's default on_error: destroy the id. */
static int destroy_on_error(bthread_id_t id, void *data, int error_code)
{
    (void)data;
    (void)error_code;
    return bthread_id_unlock_and_destroy(id);
}

int bthread_id_create(bthread_id_t *id, void *data, bthread_id_on_error_t on_error)
{
    return id_create(id, data, on_error ? on_error : destroy_on_error, NULL, NULL, 1);
}

int bthread_id_create_ranged(bthread_id_t *id, void *data, bthread_id_on_error_t on_error,
                             int range)
{
    return id_create(id, data, on_error ? on_error : destroy_on_error, NULL, NULL, range);
}

int bthread_id_create_text(bthread_id_t *id, void *data, bthread_id_on_error_text_t on_error,
                           void *arg, int range)
{
    if (!on_error)
        return id_create(id, data, destroy_on_error, NULL, NULL, range);
    return id_create(id, data, NULL, on_error, arg, range);
}

/* ---- lock, unlock, destroy --------------------------------------------------------- */

int bthread_id_lock_and_reset_range_verbose(bthread_id_t id, void **pdata, int range,
                                            const char *location)
{
    id_slot_t *s = lock_alive(id);
    if (!s)
        return EINVAL;
    const uint32_t v = version_of(id);
    while (alive(s, v)) {
        const uint32_t w = word_get(s->lock_bx);
        if (w == s->first_ver) {
            if (range > 0 && range <= BTHREAD_ID_MAX_RANGE &&
                s->first_ver + (uint32_t)range > s->locked_ver)
                s->locked_ver = s->first_ver + (uint32_t)range;
            word_set(s->lock_bx, taken_word(s));
            s->lock_location = location;
            void *data = s->data;
            spin_unlock(&s->lock);
            if (pdata)
                *pdata = data;
            return 0;
        }
        if (w == unlockable_ver(s)) {
            spin_unlock(&s->lock);
            return EPERM;
        }
        const uint32_t expected = contended_ver(s);
        word_set(s->lock_bx, expected);
        s->sleepers++;
        void *bx = s->lock_bx;
        spin_unlock(&s->lock);
        int rc = 0; /* woken, interrupted, or the word moved on: look again */
        if (butex_wait(bx, (int)expected, NULL) != 0 && errno != EWOULDBLOCK &&
            errno != EINTR)
            rc = errno;
        spin_lock(&s->lock);
        s->sleepers--;
        if (rc != 0) {
            spin_unlock(&s->lock);
            return rc;
        }
    }
    spin_unlock(&s->lock);
    return EINVAL;
}

int bthread_id_lock_verbose(bthread_id_t id, void **pdata, const char *location)
{
    return bthread_id_lock_and_reset_range_verbose(id, pdata, 0, location);
}

int bthread_id_trylock(bthread_id_t id, void **pdata)
{
    id_slot_t *s = lock_alive(id);
    if (!s)
        return EINVAL;
    if (word_get(s->lock_bx) != s->first_ver) {
        spin_unlock(&s->lock);
        return EBUSY;
    }
    word_set(s->lock_bx, taken_word(s));
    s->lock_location = NULL;
    void *data = s->data;
    spin_unlock(&s->lock);
    if (pdata)
        *pdata = data;
    return 0;
}

/* The callback an error runs, read under the slot lock and called after it. */
typedef struct error_call {
    bthread_id_on_error_t on_error;
    bthread_id_on_error_text_t on_error_text;
    void *arg, *data;
} error_call_t;

static inline error_call_t error_call_of(const id_slot_t *s)
{
    return (error_call_t){s->on_error, s->on_error_text, s->on_error_arg, s->data};
}

static int run_error(error_call_t c, bthread_id_t id, int error_code, const char *text)
{
    if (c.on_error)
        return c.on_error(id, c.data, error_code);
    return c.on_error_text(id, c.data, error_code, text ? text : "", c.arg);
}

int bthread_id_unlock(bthread_id_t id)
{
    int rc;
    id_slot_t *s = lock_held(id, &rc);
    if (!s)
        return rc;
    pending_error_t *e = s->pending_head;
    if (e) { /* the holder now runs the oldest pending error, still holding the lock */
        if (!(s->pending_head = e->next))
            s->pending_tail = NULL;
        s->lock_location = e->location;
        const error_call_t c = error_call_of(s);
        spin_unlock(&s->lock);
        rc = run_error(c, e->id, e->error_code, e->text);
        free(e);
        return rc;
    }
    const bool wake = s->sleepers != 0; /* the header: a count, not the word's value */
    word_set(s->lock_bx, s->first_ver);
    void *bx = s->lock_bx;
    spin_unlock(&s->lock);
    if (wake)
        butex_wake(bx); /* the slot may hold a new entity by now: a spurious wake-up */
    return 0;
}

/* Under s->lock, which it releases: end the living entity (both words to its end, so no
 * version of it matches), wake every sleeper, drop its pending errors, and give the slot
 * back, unless its versions are used up (the header: retired). */
static void end_entity_and_unlock(id_slot_t *s, uint32_t index)
{
    const uint32_t end = end_ver(s);
    word_set(s->lock_bx, end);
    word_set(s->join_bx, end);
    s->first_ver = s->locked_ver = end;
    pending_error_t *dropped = s->pending_head;
    s->pending_head = s->pending_tail = NULL;
    s->data = NULL;
    spin_unlock(&s->lock);
    butex_wake_all(s->lock_bx); /* lockers find their version dead: EINVAL */
    butex_wake_all(s->join_bx);
    while (dropped) {
        pending_error_t *next = dropped->next;
        free(dropped);
        dropped = next;
    }
    if (end <= LAST_REUSABLE_VER)
        slot_give_back(index, s);
}

int bthread_id_unlock_and_destroy(bthread_id_t id)
{
    int rc;
    id_slot_t *s = lock_held(id, &rc);
    if (!s)
        return rc;
    end_entity_and_unlock(s, slot_index(id));
    return 0;
}

int bthread_id_cancel(bthread_id_t id)
{
    id_slot_t *s = lock_alive(id);
    if (!s)
        return EINVAL;
    if (word_get(s->lock_bx) != s->first_ver) {
        spin_unlock(&s->lock);
        return EPERM;
    }
    /* No errors are pending: they queue only while the id is locked. */
    end_entity_and_unlock(s, slot_index(id));
    return 0;
}

int bthread_id_join(bthread_id_t id)
{
    id_slot_t *s = slot_of(id);
    if (!s)
        return EINVAL;
    const uint32_t v = version_of(id);
    for (;;) {
        spin_lock(&s->lock);
        /* Versions at or past locked_ver were never handed out as ids (lock states, or
         * the future); below first_ver, they named an entity that ended. */
        if (v == 0 || v >= s->locked_ver) {
            spin_unlock(&s->lock);
            return EINVAL;
        }
        if (v < s->first_ver) {
            spin_unlock(&s->lock);
            return 0;
        }
        const uint32_t expected = word_get(s->join_bx);
        void *bx = s->join_bx;
        spin_unlock(&s->lock);
        if (butex_wait(bx, (int)expected, NULL) != 0 && errno != EWOULDBLOCK &&
            errno != EINTR)
            return errno;
    }
}

/* ---- errors ------------------------------------------------------------------------ */

int bthread_id_error_text_verbose(bthread_id_t id, int error_code, const char *error_text,
                                  const char *location)
{
    pending_error_t *e = NULL; /* made only once the id is found locked */
    for (;;) {
        id_slot_t *s = lock_alive(id);
        if (!s) {
            free(e);
            return EINVAL;
        }
        if (word_get(s->lock_bx) == s->first_ver) { /* unlocked: lock it, run on_error */
            word_set(s->lock_bx, taken_word(s));
            s->lock_location = location;
            const error_call_t c = error_call_of(s);
            spin_unlock(&s->lock);
            free(e);
            return run_error(c, id, error_code, error_text);
        }
        if (e) { /* locked: the holder's unlock runs it */
            if (s->pending_tail)
                s->pending_tail->next = e;
            else
                s->pending_head = e;
            s->pending_tail = e;
            spin_unlock(&s->lock);
            return 0;
        }
        spin_unlock(&s->lock);
        const size_t len = error_text ? strlen(error_text) : 0;
        if (!(e = malloc(sizeof *e + len + 1)))
            return ENOMEM;
        *e = (pending_error_t){.id = id, .error_code = error_code, .location = location};
        memcpy(e->text, error_text ? error_text : "", len + 1);
    }
}

int bthread_id_error_verbose(bthread_id_t id, int error_code, const char *location)
{
    return bthread_id_error_text_verbose(id, error_code, NULL, location);
}

int bthread_id_about_to_destroy(bthread_id_t id)
{
    int rc;
    id_slot_t *s = lock_held(id, &rc);
    if (!s)
        return rc;
    const bool wake = s->sleepers != 0;
    word_set(s->lock_bx, unlockable_ver(s));
    void *bx = s->lock_bx;
    spin_unlock(&s->lock);
    if (wake)
        butex_wake_all(bx); /* they find it about to be destroyed: EPERM */
    return 0;
}

/* ---- looking at an id -------------------------------------------------------------- */

uint32_t bthread_id_value(bthread_id_t id)
{
    id_slot_t *s = slot_of(id);
    if (!s)
        return 0;
    spin_lock(&s->lock);
    const uint32_t w = s->lock_bx ? word_get(s->lock_bx) : 0;
    spin_unlock(&s->lock);
    return w;
}

int bthread_id_describe(bthread_id_t id, char *buf, size_t n)
{
    /* A copy under the lock; at most SHOWN pending errors are named. */
    enum { SHOWN = 4 };
    int shown_code[SHOWN];
    const char *shown_location[SHOWN];
    id_slot_t *s = lock_alive(id);
    if (!s)
        return snprintf(buf, n, "invalid id %llu (not alive)", (unsigned long long)id.value);
    const uint32_t first = s->first_ver, range = s->locked_ver - s->first_ver;
    const uint32_t w = word_get(s->lock_bx);
    const bool contended = w == contended_ver(s), unlockable = w == unlockable_ver(s);
    const char *where = s->lock_location;
    void *data = s->data;
    size_t npending = 0;
    for (pending_error_t *e = s->pending_head; e; e = e->next, npending++)
        if (npending < SHOWN) {
            shown_code[npending] = e->error_code;
            shown_location[npending] = e->location;
        }
    spin_unlock(&s->lock);
    size_t len = 0;
#define PUT(...)                                                                          \
    do {                                                                                  \
        const int k = snprintf(buf ? buf + (len < n ? len : n) : NULL,                    \
                               len < n ? n - len : 0, __VA_ARGS__);                       \
        if (k < 0)                                                                        \
            return -1;                                                                    \
        len += (size_t)k;                                                                 \
    } while (0)
    PUT("first id %llu, range %u, ", (unsigned long long)make_id(slot_index(id), first).value,
        range);
    if (w == first)
        PUT("unlocked");
    else
        PUT("locked at %s (%s)", where ? where : "(trylock)",
            contended ? "contended" : unlockable ? "about to destroy" : "uncontended");
    PUT(", %zu pending error%s", npending, npending == 1 ? "" : "s");
    for (size_t i = 0; i < npending && i < SHOWN; i++)
        PUT("%s%d at %s", i ? ", " : ": ", shown_code[i],
            shown_location[i] ? shown_location[i] : "?");
    PUT(", data %p", data);
#undef PUT
    return (int)len;
}

/* ---- lists of ids that may end ----------------------------------------------------- */

#define LIST_MAX_ENTRIES 100000 /* brpc's bound on an id list */

typedef struct id_array {
    size_t n, cap;
    uint64_t *v;
} id_array_t;

/* Not thread-safe (the list's owner).  Append x; when full, first drop the entries that
 * `gone` says ended, and grow only if more than half are left (the header), up to
 * LIST_MAX_ENTRIES entries: EAGAIN when that many are alive. */
static int array_add(id_array_t *a, uint64_t x, bool (*gone)(uint64_t))
{
    if (a->n == a->cap) {
        size_t k = 0;
        for (size_t i = 0; i < a->n; i++)
            if (!gone(a->v[i]))
                a->v[k++] = a->v[i];
        a->n = k;
        if (k == LIST_MAX_ENTRIES)
            return EAGAIN;
        if ((k > a->cap / 2 || a->cap == 0) && a->cap < LIST_MAX_ENTRIES) {
            size_t cap = a->cap ? 2 * a->cap : 16;
            if (cap > LIST_MAX_ENTRIES)
                cap = LIST_MAX_ENTRIES;
            uint64_t *v = realloc(a->v, cap * sizeof *v);
            if (!v)
                return ENOMEM;
            a->v = v;
            a->cap = cap;
        }
    }
    a->v[a->n++] = x;
    return 0;
}

static void array_free(id_array_t *a)
{
    if (a) {
        free(a->v);
        free(a);
    }
}

static bool id_gone(uint64_t x)
{
    id_slot_t *s = lock_alive((bthread_id_t){x});
    if (s)
        spin_unlock(&s->lock);
    return s == NULL;
}

int bthread_id_list_init(bthread_id_list_t *list, unsigned size, unsigned conflict_size)
{
    (void)size;
    (void)conflict_size;
    if (!list)
        return EINVAL;
    *list = (bthread_id_list_t){.impl = NULL}; /* made by the first add, as brpc */
    return 0;
}

void bthread_id_list_destroy(bthread_id_list_t *list)
{
    if (list) {
        array_free(list->impl);
        list->impl = NULL;
    }
}

int bthread_id_list_add(bthread_id_list_t *list, bthread_id_t id)
{
    if (!list)
        return EINVAL;
    if (!list->impl && !(list->impl = calloc(1, sizeof(id_array_t))))
        return ENOMEM;
    return array_add(list->impl, id.value, id_gone);
}

void bthread_id_list_swap(bthread_id_list_t *dest, bthread_id_list_t *src)
{
    void *t = dest->impl;
    dest->impl = src->impl;
    src->impl = t;
}

int bthread_id_list_reset_text(bthread_id_list_t *list, int error_code, const char *error_text)
{
    id_array_t *a = list ? list->impl : NULL;
    if (!a)
        return 0;
    /* An id that ended meanwhile answers EINVAL: skipped, as brpc's list skips it. */
    for (size_t i = 0; i < a->n; i++)
        bthread_id_error_text_verbose((bthread_id_t){a->v[i]}, error_code, error_text,
                                      BTHREAD_ID_HERE);
    a->n = 0;
    return 0;
}

int bthread_id_list_reset(bthread_id_list_t *list, int error_code)
{
    return bthread_id_list_reset_text(list, error_code, NULL);
}

/* Swap the list out under the caller's lock, reset the copy outside it. */
typedef void (*lock_fn)(void *mutex);
static int reset_swapped(bthread_id_list_t *list, int error_code, const char *error_text,
                         void *mutex, lock_fn lock, lock_fn unlock)
{
    if (!mutex)
        return EINVAL;
    if (!list || !list->impl) /* brpc reads impl without the lock too */
        return 0;
    bthread_id_list_t tmp;
    bthread_id_list_init(&tmp, 0, 0);
    lock(mutex);
    bthread_id_list_swap(&tmp, list);
    unlock(mutex);
    const int rc = bthread_id_list_reset_text(&tmp, error_code, error_text);
    bthread_id_list_destroy(&tmp);
    return rc;
}

static void plock(void *m) { pthread_mutex_lock(m); }
static void punlock(void *m) { pthread_mutex_unlock(m); }
static void block(void *m) { bthread_mutex_lock(m); }
static void bunlock(void *m) { bthread_mutex_unlock(m); }

int bthread_id_list_reset_text_pthreadsafe(bthread_id_list_t *list, int error_code,
                                           const char *error_text, pthread_mutex_t *mutex)
{
    return reset_swapped(list, error_code, error_text, mutex, plock, punlock);
}

int bthread_id_list_reset_text_bthreadsafe(bthread_id_list_t *list, int error_code,
                                           const char *error_text, bthread_mutex_t *mutex)
{
    return reset_swapped(list, error_code, error_text, mutex, block, bunlock);
}

int bthread_id_list_reset_pthreadsafe(bthread_id_list_t *list, int error_code,
                                      pthread_mutex_t *mutex)
{
    return reset_swapped(list, error_code, NULL, mutex, plock, punlock);
}

int bthread_id_list_reset_bthreadsafe(bthread_id_list_t *list, int error_code,
                                      bthread_mutex_t *mutex)
{
    return reset_swapped(list, error_code, NULL, mutex, block, bunlock);
}

/* ---- lists of bthreads ------------------------------------------------------------- */

/* A bthread has ended once its id no longer answers bthread_getattr. */
static bool tid_gone(uint64_t tid)
{
    bthread_attr_t attr;
    return bthread_getattr((bthread_t)tid, &attr) != 0;
}

int bthread_list_init(bthread_list_t *list, unsigned size, unsigned conflict_size)
{
    (void)size;
    (void)conflict_size;
    if (!list)
        return EINVAL;
    *list = (bthread_list_t){.impl = calloc(1, sizeof(id_array_t))};
    return list->impl ? 0 : ENOMEM;
}

void bthread_list_destroy(bthread_list_t *list)
{
    if (list) {
        array_free(list->impl);
        list->impl = NULL;
    }
}

int bthread_list_add(bthread_list_t *list, bthread_t tid)
{
    if (!list || !list->impl)
        return EINVAL;
    return array_add(list->impl, tid, tid_gone);
}

int bthread_list_stop(bthread_list_t *list)
{
    id_array_t *a = list ? list->impl : NULL;
    if (!a)
        return EINVAL;
    for (size_t i = 0; i < a->n; i++)
        bthread_stop((bthread_t)a->v[i]); /* one that ended answers EINVAL: nothing to do */
    return 0;
}

int bthread_list_join(bthread_list_t *list)
{
    id_array_t *a = list ? list->impl : NULL;
    if (!a)
        return EINVAL;
    for (size_t i = 0; i < a->n; i++)
        bthread_join((bthread_t)a->v[i], NULL);
    a->n = 0;
    return 0;
}
