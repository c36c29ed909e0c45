/*
 * uts -- Unbalanced Tree Search: count the nodes of a tree that is generated while it
 * is searched (workloads/uts_tree.h: SHA-1 node generator, the standard UTS trees).
 * The subtree sizes are wildly uneven and unknown in advance, so the run time is set by
 * how fast idle workers find the remaining work: a test of stealing.
 *
 * Parallel version (fork-join with eager splitting).  A job is a bthread that searches
 * depth first from a few start nodes with an explicit stack (T3 is 1572 levels deep, T3L
 * 17844: no recursion).  Every UTS_SPLIT_EVERY nodes it expands, if at least two nodes
 * wait on its stack, it hands the oldest of them (the bottom of the stack, nearest the
 * root, so likely the largest subtrees; at most UTS_SPLIT_MAX) to a new job.  When its
 * stack runs dry it joins the jobs it started and adds their counts to its own: partial
 * counts travel up the join tree, with no shared counter.  The split points depend only
 * on the nodes a job has expanded, never on timing, so every variant runs the very same
 * jobs (counter `jobs`: 48260 for T1, 47184 for T3): only their scheduling differs.
 *
 * Why not one bthread per subtree above a cutoff depth: on the binomial trees (T3, T3L)
 * the root's 2000 subtrees are almost all a single node and a few hold nearly the whole
 * tree, so no depth cutoff gives balanced work; splitting by work done does.
 *
 * tree = 1 (T1), 2 (T2), 3 (T3), 5 (T5), 11 (T1L), 22 (T2L), 33 (T3L), 0 (a 4649-node
 * binomial tree for `make test`).  items = nodes; answer = the node count.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bthread.h"
#include "uts_tree.h"
#include "workload.h"

#define UTS_SPLIT_EVERY 64 /* nodes a job expands between two offers of work */
#define UTS_SPLIT_MAX 64   /* nodes one offer hands over, at most */

typedef struct uts_job {
    const uts_params_t *tree;
    uts_node_t *start; /* the nodes to search from (owned: freed by the job) */
    size_t nstart;
    uts_count_t count; /* out: this job's subtree, its children's included */
    uint64_t spawns;   /* out: jobs started under this one */
    int err;           /* out: 0 or ENOMEM / a bthread_start error */
} uts_job_t;

/* The job's own stack: live nodes in v[lo, hi); pop at hi, hand over from lo. */
typedef struct uts_deque {
    uts_node_t *v;
    size_t lo, hi, cap;
} uts_deque_t;

static int uts_deque_push(uts_deque_t *d, const uts_node_t *node)
{
    if (d->hi == d->cap) {
        if (d->lo >= d->cap / 2) { /* half the array handed over: slide down (amortized) */
            memmove(d->v, d->v + d->lo, (d->hi - d->lo) * sizeof *d->v);
            d->hi -= d->lo;
            d->lo = 0;
        }
        if (d->hi == d->cap) {
            size_t cap = d->cap ? 2 * d->cap : 256;
            uts_node_t *v = realloc(d->v, cap * sizeof *v);
            if (!v)
                return -1;
            d->v = v;
            d->cap = cap;
        }
    }
    d->v[d->hi++] = *node;
    return 0;
}

typedef struct uts_children {
    bthread_t *tid;
    uts_job_t **job;
    size_t n, cap;
} uts_children_t;

static void *uts_job_main(void *arg);

/* A search's own work so far, in the units uts charges: SHA-1 blocks (one per child
 * generated) and node visits (uts_visit). */
typedef struct uts_work {
    uint64_t blocks, nodes;
} uts_work_t;

/* How a search hands the k nodes at the bottom of its stack (nodes[0..k)) to a new job,
 * after `done` of its own work: 0 when handed over, else the nodes stay. */
typedef int (*uts_split_fn)(void *ctx, const uts_node_t *nodes, size_t k, uts_work_t done);

/* A job's search, shared by the real job and the span's replay (uts_span_ns), so both
 * split at the very same points: depth first from the nodes in d, offering the bottom
 * of the stack every UTS_SPLIT_EVERY nodes.  Counts into *c; returns the work it did,
 * or sets *err on ENOMEM. */
static uts_work_t uts_search(const uts_params_t *t, uts_deque_t *d, uts_count_t *c, int *err,
                             uts_split_fn split, void *ctx)
{
    uts_work_t w = {0, 0};
    unsigned since_split = 0;
    while (d->hi > d->lo) {
        uts_node_t node = d->v[--d->hi];
        int k = uts_visit(t, &node, c);
        w.nodes++;
        for (int i = 0; i < k; i++) {
            uts_node_t child;
            uts_child(&node, i, &child);
            w.blocks++;
            if (uts_deque_push(d, &child) != 0) {
                *err = ENOMEM;
                d->lo = d->hi; /* give up this subtree; the error fails the run */
                break;
            }
        }
        if (++since_split >= UTS_SPLIT_EVERY && d->hi - d->lo >= 2) {
            since_split = 0;
            size_t n = (d->hi - d->lo) / 2;
            if (n > UTS_SPLIT_MAX)
                n = UTS_SPLIT_MAX;
            /* A failed hand-over (no memory, no task slot) keeps the nodes here: the
             * count stays right, only the parallelism is lost. */
            if (split(ctx, d->v + d->lo, n, w) == 0)
                d->lo += n;
        }
    }
    return w;
}

struct uts_job_ctx {
    uts_job_t *self;
    uts_children_t *ch;
};

/* The real hand-over: a new job (a bthread) searches from a copy of the nodes.  0, or
 * an errno value. */
static int uts_split(void *arg, const uts_node_t *nodes, size_t k, uts_work_t done)
{
    (void)done;
    struct uts_job_ctx *x = arg;
    uts_job_t *self = x->self;
    uts_children_t *ch = x->ch;
    if (ch->n == ch->cap) {
        size_t cap = ch->cap ? 2 * ch->cap : 16;
        bthread_t *tid = realloc(ch->tid, cap * sizeof *tid);
        if (!tid)
            return ENOMEM;
        ch->tid = tid;
        uts_job_t **job = realloc(ch->job, cap * sizeof *job);
        if (!job)
            return ENOMEM;
        ch->job = job;
        ch->cap = cap;
    }
    uts_job_t *j = calloc(1, sizeof *j);
    uts_node_t *start = malloc(k * sizeof *start);
    if (!j || !start) {
        free(j);
        free(start);
        return ENOMEM;
    }
    memcpy(start, nodes, k * sizeof *start);
    j->tree = self->tree;
    j->start = start;
    j->nstart = k;
    int rc = bthread_start_background(&ch->tid[ch->n], &BTHREAD_ATTR_SMALL, uts_job_main, j);
    if (rc != 0) {
        free(start);
        free(j);
        return rc;
    }
    ch->job[ch->n++] = j;
    return 0;
}

static void *uts_job_main(void *arg)
{
    uts_job_t *self = arg;
    const uts_params_t *t = self->tree;
    uts_deque_t d = {.v = self->start, .lo = 0, .hi = self->nstart, .cap = self->nstart};
    uts_children_t ch = {0};
    uts_count_t c = {0};
    self->start = NULL;
    struct uts_job_ctx x = {.self = self, .ch = &ch};
    (void)uts_search(t, &d, &c, &self->err, uts_split, &x);
    free(d.v);

    uint64_t spawns = ch.n;
    for (size_t i = 0; i < ch.n; i++) {
        uts_job_t *j = ch.job[i];
        int rc = bthread_join(ch.tid[i], NULL);
        if (rc != 0 && !self->err)
            self->err = rc;
        c.nodes += j->count.nodes;
        c.leaves += j->count.leaves;
        if (j->count.max_depth > c.max_depth)
            c.max_depth = j->count.max_depth;
        spawns += j->spawns;
        if (j->err && !self->err)
            self->err = j->err;
        free(j);
    }
    free(ch.tid);
    free(ch.job);
    self->count = c;
    self->spawns = spawns;
    return NULL;
}

static uint64_t uts_sequential(const long *args)
{
    const uts_params_t *t = uts_find_tree(args[0]);
    uts_count_t c;
    if (!t || uts_count_tree(t, &c) != 0)
        return 0; /* never a node count: the parallel run reports the error */
    return c.nodes;
}

static int uts_parallel(const long *args, wl_run_t *out)
{
    const uts_params_t *t = uts_find_tree(args[0]);
    if (!t)
        return EINVAL;
    uts_job_t root = {.tree = t, .nstart = 1};
    root.start = malloc(sizeof *root.start);
    if (!root.start)
        return ENOMEM;
    uts_root(t, root.start);
    bthread_t tid;
    int rc = bthread_start_background(&tid, &BTHREAD_ATTR_SMALL, uts_job_main, &root);
    if (rc != 0) {
        free(root.start);
        return rc;
    }
    rc = bthread_join(tid, NULL);
    if (rc == 0)
        rc = root.err;
    if (rc != 0)
        return rc;
    out->answer = root.count.nodes;
    out->items = (double)root.count.nodes;
    wl_counter_add(out, "leaves", (double)root.count.leaves);
    wl_counter_add(out, "max_depth", (double)root.count.max_depth);
    wl_counter_add(out, "jobs", (double)(root.spawns + 1));
    return 0;
}

/* ---- the span (Brent's bound in simulated runs) ----------------------------------------
 * Every job of a run, replayed one after another with the real job's search and split
 * points (uts_search).  A job handed over after some of its parent's own work can start
 * no earlier than that, and a parent ends only after its children (the joins at its
 * end), so the run's span is the latest (start + own work) over all jobs, plus the
 * root's digest (one block), computed before the root job starts.  The work is what uts
 * charges: SHA-1 blocks and node visits, at the model's costs. */
typedef struct uts_pending {
    uts_node_t *start;
    size_t n;
    double at; /* earliest start, ns */
} uts_pending_t;

typedef struct uts_replay {
    uts_pending_t *v; /* jobs not replayed yet (a stack: depth first, as the search) */
    size_t n, cap;
    double at; /* the start of the job being replayed */
    const wl_costs_t *costs;
} uts_replay_t;

static double uts_work_ns(uts_work_t w, const wl_costs_t *costs)
{
    return (double)w.blocks * costs->sha1_ns + (double)w.nodes * costs->uts_node_ns;
}

static int uts_replay_push(uts_replay_t *r, const uts_node_t *nodes, size_t k, double at)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 256;
        uts_pending_t *v = realloc(r->v, cap * sizeof *v);
        if (!v)
            return ENOMEM;
        r->v = v;
        r->cap = cap;
    }
    uts_node_t *start = malloc(k * sizeof *start);
    if (!start)
        return ENOMEM;
    memcpy(start, nodes, k * sizeof *start);
    r->v[r->n++] = (uts_pending_t){.start = start, .n = k, .at = at};
    return 0;
}

static int uts_replay_split(void *arg, const uts_node_t *nodes, size_t k, uts_work_t done)
{
    uts_replay_t *r = arg;
    return uts_replay_push(r, nodes, k, r->at + uts_work_ns(done, r->costs));
}

static double uts_span_ns(const long *args, int workers, const wl_costs_t *costs)
{
    (void)workers;
    const uts_params_t *t = uts_find_tree(args[0]);
    if (!t)
        return -1;
    uts_replay_t r = {.costs = costs};
    uts_node_t root;
    uts_root(t, &root);
    int err = uts_replay_push(&r, &root, 1, 0);
    double span = 0;
    while (r.n > 0 && !err) {
        uts_pending_t p = r.v[--r.n];
        uts_deque_t d = {.v = p.start, .lo = 0, .hi = p.n, .cap = p.n};
        uts_count_t c = {0};
        r.at = p.at;
        double end = p.at + uts_work_ns(uts_search(t, &d, &c, &err, uts_replay_split, &r), costs);
        if (end > span)
            span = end;
        free(d.v);
    }
    while (r.n > 0)
        free(r.v[--r.n].start);
    free(r.v);
    return err ? -1 : span + costs->sha1_ns;
}

static workload_t uts = {
    .name = "uts",
    .summary = "Unbalanced Tree Search (SHA-1 generator): count a T1/T3 tree, eager splitting",
    .arg_names = {"tree"},
    .bench = {{1}, {3}},
    .nbench = 2,
    .full = {{2}, {5}, {11}, {33}},
    .nfull = 4,
    .test = {0},
    .sequential = uts_sequential,
    .parallel = uts_parallel,
    .span_ns = uts_span_ns,
};
WORKLOAD_REGISTER(uts)
