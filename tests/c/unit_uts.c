/*
 * unit_uts.c -- the UTS generator (workloads/uts_tree.h) against the published trees.
 *
 * The node, leaf and depth counts of T1 and T3 are those of the UTS distribution's
 * sample_trees.sh; matching all three exercises SHA-1, the seed and child encodings,
 * the uniform, and both child-count distributions.  About 1.5 s each, sequentially.
 */
#include "sbtest.h"

#include "uts_tree.h"

static void check_published(long id)
{
    const uts_params_t *t = uts_find_tree(id);
    cr_assert_not_null(t);
    cr_assert_gt(t->nodes, 0);
    uts_count_t c;
    cr_assert_eq(uts_count_tree(t, &c), 0, "out of memory");
    cr_expect_eq(c.nodes, t->nodes, "%s: %llu nodes, published %llu", t->name,
                 (unsigned long long)c.nodes, (unsigned long long)t->nodes);
    cr_expect_eq(c.leaves, t->leaves, "%s: %llu leaves, published %llu", t->name,
                 (unsigned long long)c.leaves, (unsigned long long)t->leaves);
    cr_expect_eq(c.max_depth, t->depth, "%s: depth %d, published %d", t->name, c.max_depth,
                 t->depth);
}

Test(uts, t1_geometric_fixed, .timeout = 60) { check_published(1); }
Test(uts, t3_binomial, .timeout = 60) { check_published(3); }

/* The generator is a pure function of the digest: the same child twice is the same node,
 * siblings differ, and the uniform stays in [0, 1). */
Test(uts, children_are_deterministic, .timeout = 5)
{
    uts_node_t root, a, b, c;
    uts_root(uts_find_tree(1), &root);
    uts_child(&root, 3, &a);
    uts_child(&root, 3, &b);
    uts_child(&root, 4, &c);
    cr_expect(memcmp(a.digest, b.digest, SHA1_DIGEST_SIZE) == 0);
    cr_expect(memcmp(a.digest, c.digest, SHA1_DIGEST_SIZE) != 0);
    cr_expect_eq(a.height, 1);
    double u = uts_uniform(&a);
    cr_expect(u >= 0.0 && u < 1.0);
}

/* The root is SHA1(16 zero bytes ++ seed big-endian): rebuilt by hand here. */
Test(uts, root_encoding, .timeout = 5)
{
    uint8_t msg[20] = {0}, want[SHA1_DIGEST_SIZE];
    msg[18] = 0x01; /* seed 0x0102 = 258 */
    msg[19] = 0x02;
    sha1(want, msg, sizeof msg);
    uts_params_t t = *uts_find_tree(1);
    t.root_seed = 258;
    uts_node_t root;
    uts_root(&t, &root);
    cr_expect(memcmp(root.digest, want, SHA1_DIGEST_SIZE) == 0);
    cr_expect_eq(root.height, 0);
}

/* A geometric FIXED tree stops at depth gen_mx; a binomial root has floor(b0) children. */
Test(uts, shape_limits, .timeout = 5)
{
    const uts_params_t *t1 = uts_find_tree(1), *t3 = uts_find_tree(3);
    uts_node_t n;
    uts_root(t1, &n);
    n.height = t1->gen_mx;
    cr_expect_eq(uts_num_children(t1, &n), 0);
    uts_root(t3, &n);
    cr_expect_eq(uts_num_children(t3, &n), 2000);
}
