/*
 * topology.c -- victim orders from the hwloc topology, worker pinning, and the record
 * of where each worker really ran.  See topology.h for the interface and where the
 * topology comes from; victims_numa.h for how the scheduler walks the orders.
 *
 * An order is computed once per worker at start-up (qsort of the other workers by
 * closeness kind, then NUMA distance, then index), so the steal path only reads an
 * array.  Nothing here is on a hot path, and nothing runs unless called: the other
 * variants link this file but never build a table.
 */
#include <errno.h>
#include <hwloc.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topology.h"

#define PLACEMENT_LEN 256
#define LABEL_LEN 128

/* ---- loading ----------------------------------------------------------------------- */
static const char *env_source(void)
{
    const char *s = getenv("SCHEDBENCH_TOPOLOGY");
    return s && *s ? s : NULL;
}

static bool is_xml_path(const char *s)
{
    size_t n = strlen(s);
    return n > 4 && strcmp(s + n - 4, ".xml") == 0;
}

/* The most PUs a synthetic description may have: beyond any machine built, and hwloc
 * takes minutes (hours at 10^9) to build a synthetic topology that large. */
#define SYNTHETIC_MAX_PUS 65536ull

/* The PU count of a synthetic description ("pack:2 core:4 pu:2"): the product of the
 * arities, saturated.  Tokens without a count (attributes) count as 1. */
static unsigned long long synthetic_pus(const char *s)
{
    unsigned long long n = 1;
    while (*s) {
        while (*s == ' ' || *s == '\t')
            s++;
        const char *tok = s;
        while (*s && *s != ' ' && *s != '\t')
            s++;
        const char *colon = memchr(tok, ':', (size_t)(s - tok));
        const char *num = colon ? colon + 1 : tok;
        if (num < s && *num >= '0' && *num <= '9') {
            unsigned long long k = strtoull(num, NULL, 10);
            n = k && n > ULLONG_MAX / k ? ULLONG_MAX : n * k;
        }
    }
    return n;
}

/* source: a synthetic description, an XML path, or NULL for hwloc's default (which
 * itself honours HWLOC_XMLFILE and HWLOC_SYNTHETIC, and silently uses this machine when
 * the XML file cannot be read: that is said here). */
static int topo_load(hwloc_topology_t *out, const char *source)
{
    const char *syn = source && !is_xml_path(source) ? source : NULL;
    const char *env;
    if (!source && (env = getenv("HWLOC_SYNTHETIC")) && *env)
        syn = env;
    if (syn && synthetic_pus(syn) > SYNTHETIC_MAX_PUS) {
        fprintf(stderr, "schedbench: refusing the synthetic topology \"%s\": %llu PUs (at most "
                        "%llu)\n", syn, synthetic_pus(syn), SYNTHETIC_MAX_PUS);
        return -1;
    }
    if (!source && !syn && (env = getenv("HWLOC_XMLFILE")) && *env && access(env, R_OK) != 0)
        fprintf(stderr, "schedbench: HWLOC_XMLFILE=%s cannot be read (%s); hwloc uses this "
                        "machine's topology\n", env, strerror(errno));
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0)
        return -1;
    int rc = 0;
    if (source)
        rc = is_xml_path(source) ? hwloc_topology_set_xml(t, source)
                                 : hwloc_topology_set_synthetic(t, source);
    if (rc == 0)
        rc = hwloc_topology_load(t);
    if (rc != 0) {
        hwloc_topology_destroy(t);
        return -1;
    }
    *out = t;
    return 0;
}

/* Where a loaded topology came from, for humans ("" for this machine). */
static void source_label(hwloc_topology_t t, const char *source, char *buf, size_t n)
{
    const char *env;
    buf[0] = '\0';
    if (hwloc_topology_is_thissystem(t))
        return;
    if (source)
        snprintf(buf, n, "%s %s", is_xml_path(source) ? "XML" : "synthetic", source);
    else if ((env = getenv("HWLOC_XMLFILE")) && *env)
        snprintf(buf, n, "XML %s", env);
    else if ((env = getenv("HWLOC_SYNTHETIC")) && *env)
        snprintf(buf, n, "synthetic %s", env);
    else
        snprintf(buf, n, "not this machine");
}

/* ---- closeness ---------------------------------------------------------------------- */
/* What decides closeness, per PU, looked up once. */
typedef struct pu_info {
    hwloc_obj_t pu, core, l2, l3, package;
    hwloc_obj_t mem;  /* the nearest ancestor that carries memory: its NUMA domain */
    hwloc_obj_t numa; /* that domain's (first) NUMA node, for distances */
} pu_info_t;

typedef struct topo_view {
    int npu;                        /* 0: no topology, every victim is REST */
    pu_info_t *pus;
    struct hwloc_distances_s *dist; /* NUMA latency matrix, or NULL */
    hwloc_topology_t t;
} topo_view_t;

static int view_init(topo_view_t *v, hwloc_topology_t t)
{
    memset(v, 0, sizeof *v);
    int npu = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
    if (npu <= 0)
        return -1;
    v->pus = calloc((size_t)npu, sizeof *v->pus);
    if (!v->pus)
        return -1;
    for (int i = 0; i < npu; i++) {
        pu_info_t *p = &v->pus[i];
        p->pu = hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, (unsigned)i);
        p->core = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE, p->pu);
        p->l2 = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_L2CACHE, p->pu);
        p->l3 = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_L3CACHE, p->pu);
        p->package = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, p->pu);
        hwloc_obj_t o = p->pu->parent;
        while (o && o->memory_arity == 0)
            o = o->parent;
        p->mem = o;
        hwloc_obj_t m = o ? o->memory_first_child : NULL;
        while (m && m->type != HWLOC_OBJ_NUMANODE) /* skip memory-side caches */
            m = m->memory_first_child;
        p->numa = m;
    }
    unsigned nr = 1;
    struct hwloc_distances_s *d = NULL;
    if (hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, &d,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 && nr >= 1)
        v->dist = d;
    v->npu = npu;
    v->t = t;
    return 0;
}

static void view_fini(topo_view_t *v)
{
    if (v->dist)
        hwloc_distances_release(v->t, v->dist);
    free(v->pus);
    memset(v, 0, sizeof *v);
}

static enum topo_kind kind_of(const topo_view_t *v, int a, int b)
{
    if (v->npu == 0)
        return TOPO_REST;
    const pu_info_t *x = &v->pus[a], *y = &v->pus[b];
    if (a == b || (x->core && x->core == y->core) || (x->l2 && x->l2 == y->l2))
        return TOPO_CORE;
    if (x->l3 && x->l3 == y->l3)
        return TOPO_L3;
    if (x->mem && x->mem == y->mem)
        return TOPO_NUMA;
    if (x->package && x->package == y->package)
        return TOPO_PACKAGE;
    return TOPO_REST;
}

/* Latency from a's NUMA node to b's, 0 when unknown. */
static unsigned distance_of(const topo_view_t *v, int a, int b)
{
    if (v->npu == 0 || !v->dist)
        return 0;
    hwloc_obj_t x = v->pus[a].numa, y = v->pus[b].numa;
    hwloc_uint64_t ab, ba;
    if (!x || !y || hwloc_distances_obj_pair_values(v->dist, x, y, &ab, &ba) != 0)
        return 0;
    return ab > UINT_MAX ? UINT_MAX : (unsigned)ab;
}

typedef struct cand {
    int kind;
    unsigned dist;
    int worker;
} cand_t;

static int cand_cmp(const void *pa, const void *pb)
{
    const cand_t *a = pa, *b = pb;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->dist != b->dist)
        return a->dist < b->dist ? -1 : 1;
    return (a->worker > b->worker) - (a->worker < b->worker);
}

/* Worker i sits on PU i % npu.  scratch holds nworkers entries. */
static void compute_order(const topo_view_t *v, int nworkers, int worker, cand_t *scratch,
                          int *order, topo_levels_t *lv)
{
    int npu = v->npu ? v->npu : 1, me = worker % npu, n = 0;
    for (int j = 0; j < nworkers; j++) {
        if (j == worker)
            continue;
        enum topo_kind k = kind_of(v, me, j % npu);
        scratch[n].kind = (int)k;
        scratch[n].dist = k >= TOPO_PACKAGE ? distance_of(v, me, j % npu) : 0;
        scratch[n].worker = j;
        n++;
    }
    qsort(scratch, (size_t)n, sizeof *scratch, cand_cmp);
    memset(lv, 0, sizeof *lv);
    for (int i = 0; i < n; i++) {
        bool fresh = i == 0 || scratch[i].kind != scratch[i - 1].kind ||
                     scratch[i].dist != scratch[i - 1].dist;
        if (fresh && lv->nlevels < TOPO_MAX_LEVELS) { /* else: merge into the last */
            lv->start[lv->nlevels] = i;
            lv->kind[lv->nlevels] = (unsigned char)scratch[i].kind;
            lv->distance[lv->nlevels] = scratch[i].dist;
            lv->nlevels++;
        }
        order[i] = scratch[i].worker;
    }
    lv->start[lv->nlevels] = n;
}

int topology_victim_order(const char *source, int nworkers, int worker, int *order,
                          topo_levels_t *levels)
{
    if (nworkers < 1 || worker < 0 || worker >= nworkers || !levels ||
        (nworkers > 1 && !order))
        return -1;
    if (!source)
        source = env_source();
    hwloc_topology_t t;
    if (topo_load(&t, source) != 0)
        return -1;
    topo_view_t v;
    cand_t *scratch = malloc((size_t)nworkers * sizeof *scratch);
    int rc = -1;
    if (scratch && view_init(&v, t) == 0) {
        compute_order(&v, nworkers, worker, scratch, order, levels);
        view_fini(&v);
        rc = 0;
    }
    free(scratch);
    hwloc_topology_destroy(t);
    return rc;
}

/* ---- the scheduler's table ---------------------------------------------------------- */
/* Written only by table_build, which runs during start-up while no worker of this
 * table runs; workers read it after pthread_create (which orders the build before
 * them).  The lock covers what runs beside workers: placement strings and describe. */
static struct sched_table {
    pthread_mutex_t lock;
    int nworkers;                       /* 0: no table */
    hwloc_topology_t t;                 /* NULL: no topology could be loaded */
    topo_view_t v;
    bool bind;
    char label[LABEL_LEN];              /* source_label() */
    topo_order_t *orders;               /* [nworkers] */
    int *order_mem;                     /* [nworkers][nworkers - 1] */
    char (*placement)[PLACEMENT_LEN];   /* [nworkers]; "" = not recorded */
    _Atomic int bind_failures;
} tab = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void table_free(void) /* under tab.lock */
{
    if (tab.t) {
        view_fini(&tab.v);
        hwloc_topology_destroy(tab.t);
    }
    free(tab.orders);
    free(tab.order_mem);
    free(tab.placement);
    tab.t = NULL;
    tab.orders = NULL;
    tab.order_mem = NULL;
    tab.placement = NULL;
    tab.nworkers = 0;
}

static int table_build(int nworkers) /* under tab.lock */
{
    table_free();
    const char *source = env_source();
    hwloc_topology_t t = NULL;
    if (topo_load(&t, source) == 0 && view_init(&tab.v, t) != 0) {
        hwloc_topology_destroy(t);
        t = NULL;
    }
    if (!t) {
        memset(&tab.v, 0, sizeof tab.v); /* flat order: every victim is REST */
        fprintf(stderr, "schedbench: numa: cannot load the topology%s%s; victims in index "
                        "order, workers not bound\n", source ? " " : "", source ? source : "");
    }
    tab.t = t;
    const char *b = getenv("SCHEDBENCH_BIND");
    bool bind_off = b && strcmp(b, "0") == 0;
    tab.bind = t && hwloc_topology_is_thissystem(t) && !bind_off;
    if (t)
        source_label(t, source, tab.label, sizeof tab.label);
    static bool told; /* the "not bound" line: once per process */
    if (t && !tab.bind && !told) {
        told = true;
        if (tab.label[0])
            fprintf(stderr, "schedbench: numa: victim order from the %s topology; workers "
                            "are not bound\n", tab.label);
        else
            fprintf(stderr, "schedbench: numa: SCHEDBENCH_BIND=0; workers are not bound\n");
    }
    atomic_store_explicit(&tab.bind_failures, 0, memory_order_relaxed); /* no reader yet */
    size_t per = (size_t)(nworkers - 1);
    tab.orders = calloc((size_t)nworkers, sizeof *tab.orders);
    tab.order_mem = malloc((per ? per : 1) * (size_t)nworkers * sizeof *tab.order_mem);
    tab.placement = calloc((size_t)nworkers, sizeof *tab.placement);
    cand_t *scratch = malloc((size_t)nworkers * sizeof *scratch);
    if (!tab.orders || !tab.order_mem || !tab.placement || !scratch) {
        free(scratch);
        table_free();
        return -1;
    }
    for (int i = 0; i < nworkers; i++) {
        int *order = tab.order_mem + per * (size_t)i;
        compute_order(&tab.v, nworkers, i, scratch, order, &tab.orders[i].lv);
        tab.orders[i].order = order;
    }
    free(scratch);
    tab.nworkers = nworkers;
    return 0;
}

const topo_order_t *topology_worker_order(int worker, int nworkers)
{
    if (nworkers < 1 || worker < 0 || worker >= nworkers)
        return NULL;
    pthread_mutex_lock(&tab.lock);
    int rc = tab.nworkers == nworkers ? 0 : table_build(nworkers);
    pthread_mutex_unlock(&tab.lock);
    return rc == 0 ? &tab.orders[worker] : NULL;
}

/* Pin the calling thread to pu, then read back where it runs and where the page under
 * its stack lives.  Writes a placement line into buf. */
static void bind_and_check(const pu_info_t *p, char *buf, size_t n)
{
    hwloc_obj_t pu = p->pu;
    size_t off = 0;
#define APPEND(...)                                                                      \
    do {                                                                                 \
        int k_ = snprintf(buf + off, n - off, __VA_ARGS__);                              \
        off += k_ > 0 ? (size_t)k_ : 0;                                                  \
        if (off >= n)                                                                    \
            off = n - 1;                                                                 \
    } while (0)
    if (hwloc_set_cpubind(tab.t, pu->cpuset, HWLOC_CPUBIND_THREAD) == 0) {
        APPEND("pu L#%u (P#%u), bound", pu->logical_index, pu->os_index);
    } else {
        APPEND("pu L#%u (P#%u), bind failed (%s)", pu->logical_index, pu->os_index,
               strerror(errno));
        /* relaxed: a counter read by describe after the workers started */
        atomic_fetch_add_explicit(&tab.bind_failures, 1, memory_order_relaxed);
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set) {
        APPEND("; read-back: no memory");
        return;
    }
    if (hwloc_get_last_cpu_location(tab.t, set, HWLOC_CPUBIND_THREAD) == 0 &&
        !hwloc_bitmap_iszero(set))
        APPEND("; ran on P#%d%s", hwloc_bitmap_first(set),
               hwloc_bitmap_isincluded(set, pu->cpuset) ? "" : " (not where asked)");
    else
        APPEND("; ran on: unknown (%s)", strerror(errno));
    char probe[64]; /* a live stack page: this thread's stack */
    memset(probe, 0, sizeof probe);
    __asm__ volatile("" : : "r"(probe) : "memory"); /* keep it in memory */
    hwloc_bitmap_zero(set);
    if (hwloc_get_area_memlocation(tab.t, probe, sizeof probe, set,
                                   HWLOC_MEMBIND_BYNODESET) == 0 && !hwloc_bitmap_iszero(set)) {
        bool local = !pu->nodeset || hwloc_bitmap_isincluded(set, pu->nodeset);
        APPEND("; stack on NUMA node %d%s", hwloc_bitmap_first(set), local ? "" : " (remote)");
    } else {
        APPEND("; stack location unsupported (%s)", strerror(errno));
    }
    hwloc_bitmap_free(set);
#undef APPEND
}

void topology_worker_start(int worker)
{
    char buf[PLACEMENT_LEN];
    /* tab is stable while workers run (see struct sched_table) */
    if (worker < 0 || worker >= tab.nworkers)
        return;
    if (!tab.t) {
        snprintf(buf, sizeof buf, "no topology, not bound; started on cpu %d", sched_getcpu());
    } else {
        const pu_info_t *p = &tab.v.pus[worker % tab.v.npu];
        if (tab.bind)
            bind_and_check(p, buf, sizeof buf);
        else
            snprintf(buf, sizeof buf, "pu L#%u (P#%u) of %s, not bound; started on cpu %d",
                     p->pu->logical_index, p->pu->os_index,
                     tab.label[0] ? tab.label : "this machine", sched_getcpu());
    }
    pthread_mutex_lock(&tab.lock);
    if (worker < tab.nworkers)
        snprintf(tab.placement[worker], PLACEMENT_LEN, "%s", buf);
    pthread_mutex_unlock(&tab.lock);
}

int topology_worker_placement(int worker, char *buf, size_t n)
{
    int rc = -1;
    pthread_mutex_lock(&tab.lock);
    if (worker >= 0 && worker < tab.nworkers && tab.placement[worker][0])
        rc = snprintf(buf, n, "%s", tab.placement[worker]);
    pthread_mutex_unlock(&tab.lock);
    return rc;
}

/* ---- the one-line description -------------------------------------------------------- */
static int count_line(char *buf, size_t n, hwloc_topology_t t, const char *label,
                      const char *bound)
{
    static const struct {
        hwloc_obj_type_t type;
        const char *one, *many;
    } kinds[] = {
        {HWLOC_OBJ_PACKAGE, "package", "packages"},
        {HWLOC_OBJ_NUMANODE, "NUMA node", "NUMA nodes"},
        {HWLOC_OBJ_CORE, "core", "cores"},
        {HWLOC_OBJ_PU, "PU", "PUs"},
    };
    char counts[160];
    size_t off = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        int c = hwloc_get_nbobjs_by_type(t, kinds[i].type);
        if (c < 0)
            c = 0;
        int k = snprintf(counts + off, sizeof counts - off, "%s%d %s", i ? ", " : "", c,
                         c == 1 ? kinds[i].one : kinds[i].many);
        if (k > 0 && (size_t)k < sizeof counts - off)
            off += (size_t)k;
    }
    if (label[0])
        return snprintf(buf, n, "%s (%s); bound: %s", counts, label, bound);
    return snprintf(buf, n, "%s; bound: %s", counts, bound);
}

int topology_describe(char *buf, size_t n)
{
    int rc;
    pthread_mutex_lock(&tab.lock);
    if (tab.nworkers && tab.t) {
        /* relaxed: a counter; workers that have not started yet simply are not in it */
        int failed = atomic_load_explicit(&tab.bind_failures, memory_order_relaxed);
        char bound[48];
        if (!tab.bind)
            snprintf(bound, sizeof bound, "no");
        else if (failed)
            snprintf(bound, sizeof bound, "partly (%d of %d failed)", failed, tab.nworkers);
        else
            snprintf(bound, sizeof bound, "yes");
        rc = count_line(buf, n, tab.t, tab.label, bound);
        pthread_mutex_unlock(&tab.lock);
        return rc;
    }
    pthread_mutex_unlock(&tab.lock);
    /* No table (another variant, or not started): describe what would be loaded. */
    const char *source = env_source();
    hwloc_topology_t t;
    if (topo_load(&t, source) != 0)
        return -1;
    char label[LABEL_LEN];
    source_label(t, source, label, sizeof label);
    rc = count_line(buf, n, t, label, "no");
    hwloc_topology_destroy(t);
    return rc;
}
