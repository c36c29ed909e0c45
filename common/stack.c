/*
 * stack.c -- guarded, pooled stacks (see stack.h for the contract and the fallback).
 *
 * Layout of one guarded stack (addresses grow upward):
 *
 *   map                      limit                                  top   map+map_len
 *   | guard (PROT_NONE) ...  | usable stack, grows down <-----------| sb_stack_t |
 *
 * The descriptor sits in the top bytes; the context frame starts just below it.
 */
#include "stack.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <valgrind/valgrind.h>

#include "spinlock.h" /* and atomics.h: CACHELINE */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels answer EINVAL */
#endif

#define SLAB_BYTES (64u << 20)
#define DEFAULT_MAX_MAP_COUNT 65530 /* Linux's vm.max_map_count when it cannot be read */
#define MIN_MAP_RESERVE 4096        /* maps always left to the rest of the process */
#define FRAME_ALIGN 16              /* the ABI's stack alignment at a call (x86-64, arm64) */
#define TLS_CACHE_MAX 16 /* stacks per class a thread keeps for itself */
/* Shared-list bounds.  Generous on purpose: unmapping a stack costs a TLB shootdown
 * across every core the process runs on (measured: 30% of the time of releasing 10^5
 * blocked bthreads went to munmap's cross-core calls), while a pooled stack costs only
 * the pages it touched (usually one).  32768 small stacks = 1 GiB of address space. */
static const size_t shared_max[STACK_NCLASS] = {32768, 1024, 64};
static const size_t default_size[STACK_NCLASS] = {32u << 10, 1u << 20, 8u << 20};
static const char *const size_env[STACK_NCLASS] = {
    "SCHEDBENCH_STACK_SMALL", "SCHEDBENCH_STACK_NORMAL", "SCHEDBENCH_STACK_LARGE"};

/* Configuration, read once (ensure_config) and forgotten by stack_shutdown(), so the
 * next start-up reads the environment again.  A pthread_once_t cannot be re-armed
 * (assigning PTHREAD_ONCE_INIT to a used one is undefined), hence a flag and a mutex. */
static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool configured;
static size_t page_size, guard_size, class_size[STACK_NCLASS];
static uint64_t map_budget;
static bool populate; /* the kernel has MADV_POPULATE_WRITE (Linux 5.14) */

/* Shared state, under `lock`: bounded free lists and the current slab per class. */
static spinlock_t lock = SPINLOCK_INIT;
static sb_stack_t *shared[STACK_NCLASS];
static size_t nshared[STACK_NCLASS];
static char *slab_cur[STACK_NCLASS], *slab_end[STACK_NCLASS];
typedef struct slab {
    void *map;
    size_t len;
} slab_t;
static slab_t *slab_list; /* every slab, for stack_shutdown */
static size_t nslabs, slab_cap;
static sb_stack_t *reserved[STACK_NCLASS]; /* the reserves while free (stack_reserve) */
static bool has_reserve[STACK_NCLASS];     /* made, free or not */
static atomic_bool scarce;                 /* see stack_scarce */

/* Counters: relaxed, they are statistics.  live_guarded is the map budget's account. */
static _Atomic uint64_t c_mapped, c_unmapped, c_slab_stacks, c_pool_hits, c_failures;
static _Atomic uint64_t live_guarded;
static _Atomic int warned;

/* Fault injection (tests). */
static _Atomic unsigned inject_mmap, inject_mprotect;
static _Atomic bool inject_slab;
static _Atomic uint64_t budget_override;

static __thread sb_stack_t *tls_cache[STACK_NCLASS];
static __thread unsigned tls_count[STACK_NCLASS];

/* The largest size the variables accept: far above any real stack, and small enough
 * that rounding and adding the guard cannot wrap. */
#define ENV_SIZE_MAX (1ull << 40)

static size_t env_size(const char *name, size_t dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 0);
    /* strtoull accepts "-1" (as ULLONG_MAX): refuse any sign */
    if (*end || strchr(v, '-') || errno == ERANGE) {
        fprintf(stderr, "schedbench: ignoring %s=%s (not a byte count); using %zu\n", name, v,
                dflt);
        return dflt;
    }
    if (x > ENV_SIZE_MAX) {
        fprintf(stderr, "schedbench: ignoring %s=%s (more than %llu bytes); using %zu\n", name,
                v, ENV_SIZE_MAX, dflt);
        return dflt;
    }
    return (size_t)x;
}

static size_t round_pages(size_t n) { return (n + page_size - 1) & ~(page_size - 1); }

static void configure(void)
{
    page_size = (size_t)sysconf(_SC_PAGESIZE);
    /* an empty range: 0 where the advice is known, EINVAL where it is not */
    populate = madvise(NULL, 0, MADV_POPULATE_WRITE) == 0;
    guard_size = round_pages(env_size("SCHEDBENCH_STACK_GUARD", page_size));
    for (int c = 0; c < STACK_NCLASS; c++) {
        size_t s = env_size(size_env[c], default_size[c]);
        if (s < 2 * page_size)
            s = 2 * page_size;
        class_size[c] = round_pages(s);
    }
    /* Two maps per guarded stack; keep a quarter of the limit (at least MIN_MAP_RESERVE
     * maps) for the rest of the process. */
    long max_maps = DEFAULT_MAX_MAP_COUNT;
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f) {
        if (fscanf(f, "%ld", &max_maps) != 1)
            max_maps = DEFAULT_MAX_MAP_COUNT;
        fclose(f);
    }
    long reserve = max_maps / 4 > MIN_MAP_RESERVE ? max_maps / 4 : MIN_MAP_RESERVE;
    map_budget = max_maps > reserve ? (uint64_t)(max_maps - reserve) / 2 : 0;
}

static void ensure_config(void)
{
    /* acquire: pairs with the release below, so the configuration is visible */
    if (atomic_load_explicit(&configured, memory_order_acquire))
        return;
    pthread_mutex_lock(&config_lock);
    if (!atomic_load_explicit(&configured, memory_order_relaxed)) { /* the lock orders it */
        configure();
        /* release: the configuration is written before anyone sees the flag set */
        atomic_store_explicit(&configured, true, memory_order_release);
    }
    pthread_mutex_unlock(&config_lock);
}

size_t stack_class_size(enum stack_class cls)
{
    ensure_config();
    return class_size[cls];
}

size_t stack_guard_size(void)
{
    ensure_config();
    return guard_size;
}

static uint64_t budget(void)
{
    uint64_t o = atomic_load_explicit(&budget_override, memory_order_relaxed);
    return o ? o : map_budget;
}

/* Take one from a counter of injected failures; true = fail this call. */
static bool take_injected(_Atomic unsigned *n)
{
    unsigned v = atomic_load_explicit(n, memory_order_relaxed);
    while (v > 0)
        if (atomic_compare_exchange_weak_explicit(n, &v, v - 1, memory_order_relaxed,
                                                  memory_order_relaxed))
            return true;
    return false;
}

/* Make the top page of a new stack resident (the descriptor and the first frames go
 * there) with one madvise rather than a first-touch fault.  On this VM a fault on a
 * fresh page costs 16-21 us, and MADV_POPULATE_WRITE of the page followed by the same
 * touch 14-17 us (200,000 pages 16 KiB apart, three alternating rounds): the guest's
 * fault goes, the hypervisor's own first-touch cost stays.  On bare metal both are well
 * under a microsecond.  Only that one page: the rest of the stack stays untouched until
 * used.  Failure changes nothing (the touch then faults, as without it); errno is kept. */
static void populate_top_page(char *hi)
{
    if (!populate)
        return;
    int e = errno;
    (void)madvise(hi - page_size, page_size, MADV_POPULATE_WRITE);
    errno = e;
}

/* Fill the descriptor at the top of [lo, hi) and register the stack with valgrind. */
static sb_stack_t *init_descriptor(char *lo, char *hi, enum stack_class cls, void *map,
                                   size_t map_len, bool guarded)
{
    populate_top_page(hi);
    /* the descriptor on a line of its own; the frame below it, ABI-aligned */
    uintptr_t d = ((uintptr_t)hi - sizeof(sb_stack_t)) & ~(uintptr_t)(CACHELINE - 1);
    sb_stack_t *s = (sb_stack_t *)d;
    memset(s, 0, sizeof *s);
    s->top = (void *)(d & ~(uintptr_t)(FRAME_ALIGN - 1));
    s->limit = lo;
    s->size = (size_t)((char *)s->top - lo);
    s->map = map;
    s->map_len = map_len;
    s->cls = cls;
    s->guarded = guarded;
    s->valgrind_id = VALGRIND_STACK_REGISTER(lo, s->top);
    return s;
}

static void warn_fallback(const char *why, int err)
{
    if (atomic_exchange_explicit(&warned, 1, memory_order_relaxed))
        return;
    fprintf(stderr,
            "schedbench: guarded stacks exhausted (%s: %s; vm.max_map_count allows about %llu "
            "guarded stacks here); falling back to unguarded stacks carved from %u MiB slabs\n",
            why, strerror(err), (unsigned long long)budget(), SLAB_BYTES >> 20);
}

/* One stack in its own map, with a guard.  NULL with errno on failure. */
static sb_stack_t *map_guarded(enum stack_class cls)
{
    size_t len = class_size[cls] + guard_size;
    if (take_injected(&inject_mmap)) {
        errno = ENOMEM;
        return NULL;
    }
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    if (guard_size) {
        int rc = take_injected(&inject_mprotect) ? (errno = ENOMEM, -1)
                                                 : mprotect(m, guard_size, PROT_NONE);
        if (rc != 0) {
            int e = errno;
            munmap(m, len);
            errno = e;
            return NULL;
        }
    }
    atomic_fetch_add_explicit(&c_mapped, 1, memory_order_relaxed);
    return init_descriptor(m + guard_size, m + len, cls, m, len, guard_size > 0);
}

/* Remember a slab for stack_shutdown.  Under `lock`. */
static bool record_slab(void *m, size_t len)
{
    if (nslabs == slab_cap) {
        size_t cap = slab_cap ? 2 * slab_cap : 32;
        slab_t *l = realloc(slab_list, cap * sizeof *l);
        if (!l)
            return false;
        slab_list = l;
        slab_cap = cap;
    }
    slab_list[nslabs++] = (slab_t){.map = m, .len = len};
    return true;
}

/* One unguarded stack carved from the class's current slab (the fallback). */
static sb_stack_t *carve_from_slab(enum stack_class cls)
{
    size_t sz = class_size[cls];
    spin_lock(&lock);
    if (slab_end[cls] - slab_cur[cls] < (ptrdiff_t)sz) {
        size_t len = sz > SLAB_BYTES ? sz : SLAB_BYTES;
        void *m = MAP_FAILED;
        if (!atomic_load_explicit(&inject_slab, memory_order_relaxed))
            m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED || !record_slab(m, len)) {
            if (m != MAP_FAILED)
                munmap(m, len);
            spin_unlock(&lock);
            errno = ENOMEM;
            return NULL;
        }
        slab_cur[cls] = m;
        slab_end[cls] = (char *)m + len;
    }
    char *lo = slab_cur[cls];
    slab_cur[cls] += sz;
    spin_unlock(&lock);
    atomic_fetch_add_explicit(&c_slab_stacks, 1, memory_order_relaxed);
    return init_descriptor(lo, lo + sz, cls, NULL, 0, false);
}

sb_stack_t *stack_map_new(enum stack_class cls)
{
    ensure_config();
    atomic_fetch_add_explicit(&live_guarded, 1, memory_order_relaxed);
    sb_stack_t *s = map_guarded(cls);
    if (!s) {
        int e = errno;
        atomic_fetch_sub_explicit(&live_guarded, 1, memory_order_relaxed);
        errno = e;
    }
    return s;
}

/* A new stack: guarded while the map budget lasts, else from a slab.  NULL: neither. */
static sb_stack_t *make_stack(enum stack_class cls)
{
    if (atomic_fetch_add_explicit(&live_guarded, 1, memory_order_relaxed) < budget()) {
        sb_stack_t *s = map_guarded(cls);
        if (s)
            return s;
        warn_fallback(guard_size ? "mmap/mprotect failed" : "mmap failed", errno);
    } else {
        warn_fallback("map budget reached", ENOMEM);
    }
    atomic_fetch_sub_explicit(&live_guarded, 1, memory_order_relaxed);
    return carve_from_slab(cls);
}

sb_stack_t *stack_get(enum stack_class cls)
{
    ensure_config();
    sb_stack_t *s = tls_cache[cls];
    if (s) { /* the thread's own cache: no lock, no system call */
        tls_cache[cls] = s->next;
        tls_count[cls]--;
        atomic_fetch_add_explicit(&c_pool_hits, 1, memory_order_relaxed);
        return s;
    }
    spin_lock(&lock);
    s = shared[cls];
    if (s) {
        shared[cls] = s->next;
        nshared[cls]--;
    }
    spin_unlock(&lock);
    if (s) {
        atomic_fetch_add_explicit(&c_pool_hits, 1, memory_order_relaxed);
        return s;
    }
    s = make_stack(cls);
    if (s) {
        if (atomic_load_explicit(&scarce, memory_order_relaxed)) /* relaxed: a hint */
            atomic_store_explicit(&scarce, false, memory_order_relaxed);
        return s;
    }
    /* Nothing could be made: the reserve, if it is free */
    atomic_store_explicit(&scarce, true, memory_order_relaxed);
    spin_lock(&lock);
    s = reserved[cls];
    reserved[cls] = NULL;
    spin_unlock(&lock);
    if (!s) {
        atomic_fetch_add_explicit(&c_failures, 1, memory_order_relaxed);
        errno = ENOMEM;
    }
    return s;
}

int stack_reserve(void)
{
    ensure_config();
    for (int c = 0; c < STACK_NCLASS; c++) {
        spin_lock(&lock);
        bool have = has_reserve[c];
        spin_unlock(&lock);
        if (have)
            continue;
        sb_stack_t *s = make_stack((enum stack_class)c);
        if (!s)
            return ENOMEM;
        s->reserve = true;
        spin_lock(&lock);
        reserved[c] = s;
        has_reserve[c] = true;
        spin_unlock(&lock);
    }
    return 0;
}

bool stack_scarce(void) { return atomic_load_explicit(&scarce, memory_order_relaxed); }

static void unmap_one(sb_stack_t *s)
{
    VALGRIND_STACK_DEREGISTER(s->valgrind_id);
    atomic_fetch_sub_explicit(&live_guarded, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c_unmapped, 1, memory_order_relaxed);
    munmap(s->map, s->map_len);
}

void stack_unmap(sb_stack_t *s) { unmap_one(s); }

void stack_put(sb_stack_t *s)
{
    if (!s)
        return;
    enum stack_class cls = s->cls;
    if (s->reserve) { /* back where it waits for the next shortage */
        spin_lock(&lock);
        reserved[cls] = s;
        spin_unlock(&lock);
        return;
    }
    /* relaxed: a hint; while stacks are scarce, none waits in this thread's cache */
    if (tls_count[cls] < TLS_CACHE_MAX && !atomic_load_explicit(&scarce, memory_order_relaxed)) {
        s->next = tls_cache[cls];
        tls_cache[cls] = s;
        tls_count[cls]++;
        return;
    }
    spin_lock(&lock);
    if (nshared[cls] < shared_max[cls] || !s->map) { /* slab stacks are always kept */
        s->next = shared[cls];
        shared[cls] = s;
        nshared[cls]++;
        s = NULL;
    }
    spin_unlock(&lock);
    if (s)
        unmap_one(s);
}

void stack_flush_thread_cache(void)
{
    for (int c = 0; c < STACK_NCLASS; c++) {
        sb_stack_t *s = tls_cache[c];
        tls_cache[c] = NULL;
        tls_count[c] = 0;
        while (s) {
            sb_stack_t *n = s->next;
            spin_lock(&lock);
            s->next = shared[c];
            shared[c] = s;
            nshared[c]++;
            spin_unlock(&lock);
            s = n;
        }
    }
}

void stack_shutdown(void)
{
    stack_flush_thread_cache();
    spin_lock(&lock);
    for (int c = 0; c < STACK_NCLASS; c++) {
        sb_stack_t *s = shared[c];
        shared[c] = NULL;
        nshared[c] = 0;
        while (s) {
            sb_stack_t *n = s->next;
            if (s->map)
                unmap_one(s);
            else
                VALGRIND_STACK_DEREGISTER(s->valgrind_id);
            s = n;
        }
        slab_cur[c] = slab_end[c] = NULL;
        sb_stack_t *r = reserved[c]; /* free: no stack is in use (stack.h) */
        reserved[c] = NULL;
        has_reserve[c] = false;
        if (r && r->map)
            unmap_one(r);
        else if (r)
            VALGRIND_STACK_DEREGISTER(r->valgrind_id);
    }
    atomic_store_explicit(&scarce, false, memory_order_relaxed);
    for (size_t i = 0; i < nslabs; i++)
        munmap(slab_list[i].map, slab_list[i].len);
    free(slab_list);
    slab_list = NULL;
    nslabs = slab_cap = 0;
    spin_unlock(&lock);
    atomic_store_explicit(&warned, 0, memory_order_relaxed);
    /* re-read the environment next time; relaxed under the lock: ensure_config rechecks
     * under it too, and no stack is in use while this runs (stack.h) */
    pthread_mutex_lock(&config_lock);
    atomic_store_explicit(&configured, false, memory_order_relaxed);
    pthread_mutex_unlock(&config_lock);
}

void stack_get_counters(stack_counters_t *out)
{
    ensure_config();
    out->mapped = atomic_load_explicit(&c_mapped, memory_order_relaxed);
    out->unmapped = atomic_load_explicit(&c_unmapped, memory_order_relaxed);
    out->slab_stacks = atomic_load_explicit(&c_slab_stacks, memory_order_relaxed);
    out->slabs = nslabs;
    out->pool_hits = atomic_load_explicit(&c_pool_hits, memory_order_relaxed);
    out->failures = atomic_load_explicit(&c_failures, memory_order_relaxed);
    out->map_budget = budget();
}

void stack_test_inject(unsigned fail_mmap, unsigned fail_mprotect, bool slab_fail)
{
    atomic_store_explicit(&inject_mmap, fail_mmap, memory_order_relaxed);
    atomic_store_explicit(&inject_mprotect, fail_mprotect, memory_order_relaxed);
    atomic_store_explicit(&inject_slab, slab_fail, memory_order_relaxed);
}

void stack_test_set_budget(uint64_t b) { atomic_store_explicit(&budget_override, b, memory_order_relaxed); }

void stack_atfork_child(void)
{
    static const pthread_mutex_t m0 = PTHREAD_MUTEX_INITIALIZER;
    spin_init(&lock);
    config_lock = m0;
    for (int c = 0; c < STACK_NCLASS; c++)
        has_reserve[c] = reserved[c] != NULL; /* one handed out is gone with its task */
    atomic_store_explicit(&scarce, false, memory_order_relaxed);
}
