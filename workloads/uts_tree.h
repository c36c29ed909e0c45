/*
 * uts_tree.h -- the Unbalanced Tree Search (UTS) tree generator, header-only.
 *
 * UTS (Olivier et al., LCPC 2006) defines a tree implicitly: every node is a 20-byte
 * SHA-1 digest, its children are derived from that digest, and the number of children is
 * drawn from a distribution fed by the digest.  The whole tree is fixed by a handful of
 * parameters, so a traversal's node count checks the traversal exactly.  This file
 * follows the benchmark's definitions (uts.c, rng/brg_sha1.c of the UTS distribution):
 *
 *   root        = SHA1(16 zero bytes ++ root_seed as 4 bytes big-endian)
 *   child i     = SHA1(parent digest (20 bytes) ++ i as 4 bytes big-endian)
 *   rand(node)  = last 4 digest bytes as a big-endian uint32, & 0x7fffffff
 *   u(node)     = rand / 2^31, a uniform in [0, 1)
 *
 *   binomial (-t 0):  the root has floor(b0) children; any other node has m children
 *                     when u < q, else none.
 *   geometric (-t 1): expected branching b_i at depth i from the shape -a (0 linear
 *                     decrease, 1 exponential decrease, 2 cyclic, 3 fixed), p = 1/(1+b_i),
 *                     children = floor(log(1 - u) / log(1 - p)); the root uses b0.
 *   Any node but a binomial root has at most UTS_MAX_CHILDREN (100) children.
 *
 * The arithmetic is done in double with libm's log/pow/sin, as the original does; the
 * published counts (table below) are reproduced exactly, which tests/c/unit_uts.c checks
 * for T1 and T3.  (The hybrid type -t 2, tree T4, is not implemented.)
 *
 * Everything here is pure and reentrant: any thread may expand any node.
 */
#ifndef SCHEDBENCH_UTS_TREE_H
#define SCHEDBENCH_UTS_TREE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "sha1.h"

#define UTS_MAX_CHILDREN 100

enum uts_type { UTS_BIN = 0, UTS_GEO = 1 };
enum uts_shape { UTS_LINEAR = 0, UTS_EXPDEC = 1, UTS_CYCLIC = 2, UTS_FIXED = 3 };

typedef struct uts_params {
    int id;             /* the workload's "tree" argument */
    const char *name;   /* "T1" */
    int type;           /* -t: enum uts_type */
    int shape;          /* -a: enum uts_shape (geometric only) */
    int gen_mx;         /* -d: depth limit / period of the shape (geometric only) */
    double b0;          /* -b: root branching (binomial), expected branching (geometric) */
    int root_seed;      /* -r */
    double q;           /* -q: probability of a non-leaf (binomial only) */
    int m;              /* -m: children of a non-leaf (binomial only) */
    uint64_t nodes;     /* the published tree size; 0 = none published */
    uint64_t leaves;    /* the published leaf count; 0 = none published */
    int depth;          /* the published depth (root = 0); -1 = none published */
} uts_params_t;

/* The standard trees (UTS sample_trees.sh: size, depth, leaves) and one tiny test tree. */
static const uts_params_t uts_trees[] = {
    /* id  name   type     shape        d   b0    r    q         m  nodes  leaves  depth */
    {0, "tiny", UTS_BIN, 0, 0, 200, 42, 0.12, 8, 0, 0, -1},
    {1, "T1", UTS_GEO, UTS_FIXED, 10, 4, 19, 0, 0, 4130071, 3305118, 10},
    {2, "T2", UTS_GEO, UTS_CYCLIC, 16, 6, 502, 0, 0, 4117769, 2342762, 81},
    {3, "T3", UTS_BIN, 0, 0, 2000, 42, 0.124875, 8, 4112897, 3599034, 1572},
    {5, "T5", UTS_GEO, UTS_LINEAR, 20, 4, 34, 0, 0, 4147582, 2181318, 20},
    {11, "T1L", UTS_GEO, UTS_FIXED, 13, 4, 29, 0, 0, 102181082, 81746377, 13},
    {22, "T2L", UTS_GEO, UTS_CYCLIC, 23, 7, 220, 0, 0, 96793510, 53791152, 67},
    {33, "T3L", UTS_BIN, 0, 0, 2000, 7, 0.200014, 5, 111345631, 89076904, 17844},
};

static inline const uts_params_t *uts_find_tree(long id)
{
    for (size_t i = 0; i < sizeof uts_trees / sizeof uts_trees[0]; i++)
        if (uts_trees[i].id == id)
            return &uts_trees[i];
    return NULL;
}

typedef struct uts_node {
    uint8_t digest[SHA1_DIGEST_SIZE];
    int32_t height; /* root = 0 */
} uts_node_t;

static inline void uts_put_be32(uint8_t *p, uint32_t v) { sha1_store_be32(p, v); }

static inline void uts_root(const uts_params_t *t, uts_node_t *root)
{
    uint8_t seed[20] = {0};
    uts_put_be32(seed + 16, (uint32_t)t->root_seed);
    sha1(root->digest, seed, sizeof seed);
    root->height = 0;
}

static inline void uts_child(const uts_node_t *parent, int i, uts_node_t *child)
{
    uint8_t msg[SHA1_DIGEST_SIZE + 4];
    memcpy(msg, parent->digest, SHA1_DIGEST_SIZE);
    uts_put_be32(msg + SHA1_DIGEST_SIZE, (uint32_t)i);
    sha1(child->digest, msg, sizeof msg);
    child->height = parent->height + 1;
}

/* The node's uniform in [0, 1): the last 4 digest bytes, top bit cleared, / 2^31. */
static inline double uts_uniform(const uts_node_t *n)
{
    uint32_t r = sha1_load_be32(n->digest + 16) & 0x7fffffffu;
    return (double)r / 2147483648.0;
}

/* The expected branching factor of a geometric tree at this depth. */
static inline double uts_geo_branching(const uts_params_t *t, int depth)
{
    if (depth == 0)
        return t->b0;
    switch (t->shape) {
    case UTS_EXPDEC:
        return t->b0 * pow((double)depth, -log(t->b0) / log((double)t->gen_mx));
    case UTS_CYCLIC:
        if (depth > 5 * t->gen_mx)
            return 0.0;
        return pow(t->b0, sin(2.0 * 3.141592653589793 * (double)depth / (double)t->gen_mx));
    case UTS_FIXED:
        return depth < t->gen_mx ? t->b0 : 0.0;
    case UTS_LINEAR:
    default:
        return t->b0 * (1.0 - (double)depth / (double)t->gen_mx);
    }
}

static inline int uts_num_children(const uts_params_t *t, const uts_node_t *n)
{
    int k;
    if (t->type == UTS_BIN) {
        if (n->height == 0)
            return (int)floor(t->b0); /* the one node exempt from UTS_MAX_CHILDREN */
        k = uts_uniform(n) < t->q ? t->m : 0;
    } else {
        double p = 1.0 / (1.0 + uts_geo_branching(t, n->height));
        k = (int)floor(log(1.0 - uts_uniform(n)) / log(1.0 - p));
    }
    return k > UTS_MAX_CHILDREN ? UTS_MAX_CHILDREN : k;
}

/* ---- the sequential traversal --------------------------------------------------------- */

typedef struct uts_count {
    uint64_t nodes;
    uint64_t leaves;
    int max_depth;
} uts_count_t;

/* A growable stack of nodes (an explicit stack: T3L is 17844 levels deep). */
typedef struct uts_stack {
    uts_node_t *v;
    size_t n, cap;
} uts_stack_t;

/* 0, or -1 when out of memory. */
static inline int uts_stack_push(uts_stack_t *s, const uts_node_t *node)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        uts_node_t *v = (uts_node_t *)realloc(s->v, cap * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = *node;
    return 0;
}

/* Count one node into *c (every search does, the sequential one below and the jobs'
 * in uts.c); returns its number of children. */
static inline int uts_visit(const uts_params_t *t, const uts_node_t *node, uts_count_t *c)
{
#ifdef SB_SIM
    sim_charge_work(SIM_WORK_UTS_NODE, 1); /* simulated time: the node's work but SHA-1 */
#endif
    int k = uts_num_children(t, node);
    c->nodes++;
    c->leaves += k == 0;
    if (node->height > c->max_depth)
        c->max_depth = node->height;
    return k;
}

/* Count the subtree under every node on s, depth first, emptying s.  0, or -1 when out
 * of memory (the counts are then partial). */
static inline int uts_count_stack(const uts_params_t *t, uts_stack_t *s, uts_count_t *c)
{
    while (s->n > 0) {
        uts_node_t node = s->v[--s->n];
        int k = uts_visit(t, &node, c);
        for (int i = 0; i < k; i++) {
            uts_node_t child;
            uts_child(&node, i, &child);
            if (uts_stack_push(s, &child) != 0)
                return -1;
        }
    }
    return 0;
}

/* The whole tree, sequentially.  0, or -1 when out of memory. */
static inline int uts_count_tree(const uts_params_t *t, uts_count_t *c)
{
    uts_stack_t s = {0};
    uts_node_t root;
    c->nodes = c->leaves = 0;
    c->max_depth = 0;
    uts_root(t, &root);
    int rc = uts_stack_push(&s, &root) == 0 ? uts_count_stack(t, &s, c) : -1;
    free(s.v);
    return rc;
}

#endif /* SCHEDBENCH_UTS_TREE_H */
