/*
 * key.c -- bthread-local storage (bthread_key_*) and keytable pools
 * (bthread_keytable_pool_*), with brpc's semantics.
 *
 * A key is {index, version}.  The registry holds each index's current version and
 * destructor; deleting a key bumps the version, so values stored under the old key read
 * as NULL and their destructors are not run (as pthread keys).  Each bthread has a
 * keytable (made at its first setspecific): per index, the value and the version it was
 * stored under.  Plain pthreads (and a worker's own context) have a thread-local table.
 *
 * Destructors run, in rounds (up to PTHREAD_DESTRUCTOR_ITERATIONS, for values that
 * destructors set again), when a bthread ends, and when a plain pthread exits: the first
 * table a pthread makes registers a pthread key whose destructor runs the table's
 * destructors, as brpc does with thread_atexit.  (A thread that returns from main runs
 * none: exit() runs no pthread key destructors either.)
 *
 * Keytable pools (bthread_attr_t.keytable_pool): a bthread started with a pool hands
 * its table, values and all, back to the pool when it ends, instead of running the
 * destructors; a later bthread of the same pool that finds no value of its own borrows a
 * table from the pool at its first bthread_getspecific (brpc's: setspecific makes a new
 * table and never borrows, so it cannot overwrite and leak a pooled value).  Destroying
 * the pool runs the destructors of the tables it holds; tables handed back later are
 * destructed at once.  Until its first use, a pooled bthread's table slot holds the pool
 * pointer tagged with bit 0 (POOL_TAG), so the task record needs no field of its own.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define MAX_KEYS 1024

typedef void (*dtor_fn)(void *);
typedef void (*dtor2_fn)(void *, const void *);

typedef struct key_entry {
    uint32_t version;
    void *data;
} key_entry_t;

typedef struct keytable {
    struct keytable *next;           /* on a pool's free list */
    bthread_keytable_pool_t *pool;   /* where it goes when its bthread ends, or NULL */
    uint32_t cap;
    key_entry_t e[];
} keytable_t;

#define POOL_TAG KEY_POOL_TAG /* a table slot holding a pool, not a table (core.h) */
_Static_assert(_Alignof(bthread_keytable_pool_t) >= 2, "a pool pointer leaves bit 0 free");

static struct {
    pthread_mutex_t lock;
    uint32_t nkeys;                 /* indexes handed out so far */
    _Atomic uint32_t version[MAX_KEYS]; /* even = free, odd = in use */
    _Atomic(dtor_fn) dtor[MAX_KEYS];
    _Atomic(dtor2_fn) dtor2[MAX_KEYS];   /* bthread_key_create2's, with its argument */
    _Atomic(const void *) dtor_arg[MAX_KEYS];
    uint32_t free_list[MAX_KEYS];
    uint32_t nfree;
} reg = {.lock = PTHREAD_MUTEX_INITIALIZER};

static __thread void *tls_table; /* plain pthreads: a keytable_t (never tagged) */

static int key_create(bthread_key_t *key, dtor_fn d, dtor2_fn d2, const void *arg)
{
    if (!key)
        return EINVAL;
    pthread_mutex_lock(&reg.lock);
    uint32_t i;
    if (reg.nfree)
        i = reg.free_list[--reg.nfree];
    else if (reg.nkeys < MAX_KEYS)
        i = reg.nkeys++;
    else {
        pthread_mutex_unlock(&reg.lock);
        return EAGAIN;
    }
    /* release: a destructor reader that loads these (acquire) then sees the even
     * version the last delete stored, so it cannot pair them with an older key's value
     * (see run_destructors) */
    atomic_store_explicit(&reg.dtor_arg[i], arg, memory_order_release);
    atomic_store_explicit(&reg.dtor2[i], d2, memory_order_release);
    atomic_store_explicit(&reg.dtor[i], d, memory_order_release);
    uint32_t v = atomic_load_explicit(&reg.version[i], memory_order_relaxed) + 1; /* odd */
    /* release: a reader that sees the version sees the destructor */
    atomic_store_explicit(&reg.version[i], v, memory_order_release);
    pthread_mutex_unlock(&reg.lock);
    key->index = i;
    key->version = v;
    return 0;
}

int bthread_key_create(bthread_key_t *key, void (*destructor)(void *))
{
    return key_create(key, destructor, NULL, NULL);
}

int bthread_key_create2(bthread_key_t *key, void (*destructor)(void *, const void *),
                        const void *destructor_arg)
{
    return key_create(key, NULL, destructor, destructor_arg);
}

static bool key_valid(bthread_key_t key)
{
    return key.index < MAX_KEYS && (key.version & 1) &&
           atomic_load_explicit(&reg.version[key.index], memory_order_acquire) == key.version;
}

int bthread_key_delete(bthread_key_t key)
{
    pthread_mutex_lock(&reg.lock);
    if (!key_valid(key)) {
        pthread_mutex_unlock(&reg.lock);
        return EINVAL;
    }
    atomic_store_explicit(&reg.version[key.index], key.version + 1, memory_order_release);
    atomic_store_explicit(&reg.dtor[key.index], NULL, memory_order_release);
    atomic_store_explicit(&reg.dtor2[key.index], NULL, memory_order_release);
    reg.free_list[reg.nfree++] = key.index;
    pthread_mutex_unlock(&reg.lock);
    return 0;
}

/* ---- tables ------------------------------------------------------------------------ */

/* The destructors of a plain pthread's table run at its exit through this key. */
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static void run_destructors(void **slot);
static void pthread_exiting(void *unused)
{
    (void)unused;
    run_destructors(&tls_table);
}
static void make_exit_key(void) { (void)pthread_key_create(&exit_key, pthread_exiting); }

/* The calling context's table slot: the running bthread's, else this thread's. */
static void **table_slot(void)
{
    task_t *t = core_current();
    return t ? &t->keytable : &tls_table;
}

static bthread_keytable_pool_t *pool_of_tag(void *v)
{
    return (uintptr_t)v & POOL_TAG ? (bthread_keytable_pool_t *)((uintptr_t)v & ~POOL_TAG)
                                   : NULL;
}

/* A table from the pool, or NULL. */
static keytable_t *borrow(bthread_keytable_pool_t *pool)
{
    pthread_mutex_lock(&pool->mutex);
    keytable_t *kt = pool->free_keytables;
    if (kt)
        pool->free_keytables = kt->next;
    pthread_mutex_unlock(&pool->mutex);
    return kt;
}

/* The table in *slot, grown to hold index; made (for `pool`) when there is none.  NULL:
 * no memory. */
static keytable_t *table_for(void **slot, uint32_t index)
{
    bthread_keytable_pool_t *pool = pool_of_tag(*slot);
    keytable_t *kt = pool ? NULL : *slot;
    if (kt && kt->cap > index)
        return kt;
    uint32_t cap = kt ? kt->cap : 0, ncap = cap ? cap : 8;
    while (ncap <= index)
        ncap *= 2;
    keytable_t *n = realloc(kt, sizeof *n + ncap * sizeof(key_entry_t));
    if (!n)
        return NULL;
    if (!kt) {
        n->next = NULL;
        n->pool = pool;
        if (slot == &tls_table) { /* a plain pthread's first table: destructors at exit */
            pthread_once(&exit_key_once, make_exit_key);
            (void)pthread_setspecific(exit_key, (void *)1);
        }
    }
    memset(&n->e[cap], 0, (ncap - cap) * sizeof(key_entry_t));
    n->cap = ncap;
    *slot = n;
    return n;
}

int bthread_setspecific(bthread_key_t key, void *data)
{
    if (!key_valid(key))
        return EINVAL;
    keytable_t *kt = table_for(table_slot(), key.index);
    if (!kt)
        return ENOMEM;
    kt->e[key.index].version = key.version;
    kt->e[key.index].data = data;
    return 0;
}

void *bthread_getspecific(bthread_key_t key)
{
    if (!key_valid(key))
        return NULL;
    void **slot = table_slot();
    bthread_keytable_pool_t *pool = pool_of_tag(*slot);
    if (pool) { /* a pooled bthread's first look: a table from its pool, if any */
        keytable_t *kt = borrow(pool);
        if (!kt)
            return NULL;
        *slot = kt;
    }
    keytable_t *kt = *slot;
    if (!kt || kt->cap <= key.index || kt->e[key.index].version != key.version)
        return NULL;
    return kt->e[key.index].data;
}

/* Run the destructors of the table in *slot, in rounds, then free it and clear *slot.
 * *slot is the running context's own slot (a destructor's get/setspecific reach the
 * table being destructed). */
static void run_destructors(void **slot)
{
    for (int round = 0; *slot && round < PTHREAD_DESTRUCTOR_ITERATIONS; round++) {
        bool any = false;
        for (uint32_t i = 0; i < ((keytable_t *)*slot)->cap; i++) {
            key_entry_t *e = &((keytable_t *)*slot)->e[i];
            if (!e->data)
                continue;
            void *data = e->data;
            const uint32_t version = e->version;
            e->data = NULL;
            /* The destructor of e's key, read without the lock, seqlock-style: version,
             * destructor, version again.  If the key is deleted and the index re-created
             * in between, the acquire load of the new destructor makes the later version
             * load see the change (key_create's release), so a value never reaches
             * another key's destructor. */
            if (atomic_load_explicit(&reg.version[i], memory_order_acquire) != version)
                continue; /* the key was deleted */
            dtor_fn d = atomic_load_explicit(&reg.dtor[i], memory_order_acquire);
            dtor2_fn d2 = atomic_load_explicit(&reg.dtor2[i], memory_order_acquire);
            const void *arg = atomic_load_explicit(&reg.dtor_arg[i], memory_order_acquire);
            if (atomic_load_explicit(&reg.version[i], memory_order_relaxed) != version)
                continue; /* deleted meanwhile */
            if (d || d2) {
                if (d2)
                    d2(data, arg);
                else
                    d(data);
                any = true; /* a destructor may have grown the table: re-read *slot */
            }
        }
        if (!any)
            break;
    }
    free(*slot);
    *slot = NULL;
}

/* A table going back to its pool, or destructed when the pool is gone.  *slot is the
 * running context's slot, holding kt. */
static void return_table(void **slot, keytable_t *kt)
{
    bthread_keytable_pool_t *pool = kt->pool;
    pthread_mutex_lock(&pool->mutex);
    if (!pool->destroyed) {
        kt->next = pool->free_keytables;
        pool->free_keytables = kt;
        pthread_mutex_unlock(&pool->mutex);
        *slot = NULL;
        return;
    }
    pthread_mutex_unlock(&pool->mutex);
    run_destructors(slot);
}

void key_run_destructors(task_t *t)
{
    void **slot = &t->keytable;
    if (pool_of_tag(*slot)) { /* pooled, and never used: nothing to keep */
        *slot = NULL;
        return;
    }
    keytable_t *kt = *slot;
    if (kt->pool)
        return_table(slot, kt);
    else
        run_destructors(slot);
}

/* ---- keytable pools -------------------------------------------------------------- */

int bthread_keytable_pool_init(bthread_keytable_pool_t *pool)
{
    if (!pool)
        return EINVAL;
    pthread_mutex_init(&pool->mutex, NULL);
    pool->free_keytables = NULL;
    pool->destroyed = 0;
    return 0;
}

/* Destruct a chain of tables in the caller's own table slot (so that destructors that
 * call get/setspecific reach the table being destructed), then restore the slot. */
static void destruct_chain(keytable_t *kt)
{
    void **slot = table_slot();
    void *mine = *slot;
    while (kt) {
        keytable_t *next = kt->next;
        *slot = kt;
        run_destructors(slot);
        kt = next;
    }
    *slot = mine;
}

int bthread_keytable_pool_destroy(bthread_keytable_pool_t *pool)
{
    if (!pool)
        return EINVAL;
    pthread_mutex_lock(&pool->mutex);
    keytable_t *kt = pool->free_keytables;
    pool->free_keytables = NULL;
    pool->destroyed = 1;
    pthread_mutex_unlock(&pool->mutex);
    destruct_chain(kt);
    /* The mutex stays initialised: a bthread of the pool still running hands its table
     * back through it (and finds the pool destroyed), as in brpc. */
    return 0;
}

int bthread_keytable_pool_getstat(bthread_keytable_pool_t *pool,
                                  bthread_keytable_pool_stat_t *stat)
{
    if (!pool || !stat)
        return EINVAL;
    size_t n = 0;
    pthread_mutex_lock(&pool->mutex);
    for (keytable_t *kt = pool->free_keytables; kt; kt = kt->next)
        n++;
    pthread_mutex_unlock(&pool->mutex);
    stat->nfree = n;
    return 0;
}

void bthread_keytable_pool_reserve(bthread_keytable_pool_t *pool, size_t nfree,
                                   bthread_key_t key, void *ctor(const void *),
                                   const void *ctor_args)
{
    bthread_keytable_pool_stat_t st;
    if (!pool || !ctor || !key_valid(key) || bthread_keytable_pool_getstat(pool, &st) != 0)
        return;
    for (size_t i = st.nfree; i < nfree; i++) {
        void *slot = NULL;
        keytable_t *kt = table_for(&slot, key.index);
        if (!kt)
            break;
        kt->pool = pool;
        void *data = ctor(ctor_args);
        kt->e[key.index].version = key.version;
        kt->e[key.index].data = data;
        pthread_mutex_lock(&pool->mutex);
        if (pool->destroyed) {
            pthread_mutex_unlock(&pool->mutex);
            destruct_chain(kt);
            break;
        }
        kt->next = pool->free_keytables;
        pool->free_keytables = kt;
        pthread_mutex_unlock(&pool->mutex);
        if (!data) /* as brpc: a constructor that fails ends the reservation */
            break;
    }
}

void key_atfork_child(void)
{
    static const pthread_mutex_t m0 = PTHREAD_MUTEX_INITIALIZER;
    reg.lock = m0; /* keys stay; the parent's bthreads' tables are forgotten */
}
