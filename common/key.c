/*
 * key.c -- bthread-local storage (bthread_key_*).
 *
 * A key is {index, version}.  The registry holds each index's current version and
 * destructor; deleting a key bumps the version, so values stored under the old key read
 * as NULL and their destructors are not run (as pthread keys).  Each bthread has a
 * keytable (allocated at its first setspecific): per index, the value and the version it
 * was stored under.  Plain pthreads get a thread-local table; its destructors do not run
 * at thread exit (a documented limitation).  At task exit the destructors run, in
 * rounds, up to PTHREAD_DESTRUCTOR_ITERATIONS times, for values set by destructors.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define MAX_KEYS 1024

typedef void (*dtor_fn)(void *);

typedef struct key_entry {
    uint32_t version;
    void *data;
} key_entry_t;

typedef struct keytable {
    uint32_t cap;
    key_entry_t e[];
} keytable_t;

static struct {
    pthread_mutex_t lock;
    uint32_t nkeys;                 /* indexes handed out so far */
    _Atomic uint32_t version[MAX_KEYS]; /* even = free, odd = in use */
    _Atomic(dtor_fn) dtor[MAX_KEYS];
    uint32_t free_list[MAX_KEYS];
    uint32_t nfree;
} reg = {.lock = PTHREAD_MUTEX_INITIALIZER};

static __thread keytable_t *tls_table; /* for plain pthreads */

int bthread_key_create(bthread_key_t *key, void (*destructor)(void *))
{
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
    /* release: a destructor reader that loads this pointer (acquire) then sees the even
     * version the last delete stored, so it cannot pair it with an older key's value
     * (see key_run_destructors) */
    atomic_store_explicit(&reg.dtor[i], destructor, memory_order_release);
    uint32_t v = atomic_load_explicit(&reg.version[i], memory_order_relaxed) + 1; /* odd */
    /* release: a reader that sees the version sees the destructor */
    atomic_store_explicit(&reg.version[i], v, memory_order_release);
    pthread_mutex_unlock(&reg.lock);
    key->index = i;
    key->version = v;
    return 0;
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
    reg.free_list[reg.nfree++] = key.index;
    pthread_mutex_unlock(&reg.lock);
    return 0;
}

static keytable_t **table_slot(void)
{
    task_t *t = core_current();
    return t ? (keytable_t **)&t->keytable : &tls_table;
}

int bthread_setspecific(bthread_key_t key, void *data)
{
    if (!key_valid(key))
        return EINVAL;
    keytable_t **slot = table_slot();
    keytable_t *kt = *slot;
    if (!kt || kt->cap <= key.index) {
        uint32_t cap = kt ? kt->cap : 0, ncap = cap ? cap : 8;
        while (ncap <= key.index)
            ncap *= 2;
        keytable_t *n = realloc(kt, sizeof *n + ncap * sizeof(key_entry_t));
        if (!n)
            return ENOMEM;
        memset(&n->e[cap], 0, (ncap - cap) * sizeof(key_entry_t));
        n->cap = ncap;
        *slot = kt = n;
    }
    kt->e[key.index].version = key.version;
    kt->e[key.index].data = data;
    return 0;
}

void *bthread_getspecific(bthread_key_t key)
{
    if (!key_valid(key))
        return NULL;
    keytable_t *kt = *table_slot();
    if (!kt || kt->cap <= key.index || kt->e[key.index].version != key.version)
        return NULL;
    return kt->e[key.index].data;
}

void key_run_destructors(task_t *t)
{
    keytable_t *kt = t->keytable;
    for (int round = 0; kt && round < PTHREAD_DESTRUCTOR_ITERATIONS; round++) {
        bool any = false;
        for (uint32_t i = 0; i < kt->cap; i++) {
            key_entry_t *e = &kt->e[i];
            if (!e->data)
                continue;
            void *data = e->data;
            e->data = NULL;
            /* The destructor of e's key, read without the lock, seqlock-style: version,
             * destructor, version again.  If the key is deleted and the index re-created
             * in between, the acquire load of the new destructor makes the later version
             * load see the change (key_create's release), so a value never reaches
             * another key's destructor. */
            if (atomic_load_explicit(&reg.version[i], memory_order_acquire) != e->version)
                continue; /* the key was deleted */
            dtor_fn d = atomic_load_explicit(&reg.dtor[i], memory_order_acquire);
            if (atomic_load_explicit(&reg.version[i], memory_order_relaxed) != e->version)
                continue; /* deleted meanwhile */
            if (d) {
                d(data);
                any = true;
                kt = t->keytable; /* a destructor may have grown the table */
            }
        }
        if (!any)
            break;
    }
    free(t->keytable);
    t->keytable = NULL;
}
