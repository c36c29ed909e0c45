/*
 * unit_topology.c -- victim orders from hwloc topologies (common/topology.c) and the
 * numa variant's round walk (common/victims_numa.h), without starting a scheduler.
 *
 * Topologies: three synthetic ones (two sockets x two NUMA nodes x two L3 x four cores;
 * one socket with SMT and shared L2; two PUs with more workers than PUs) and
 * fixtures/two_socket_distances.xml: "pack:2 numa:2 l3:1 core:2 pu:2" exported by
 * hwloc 2.9 with a NUMA latency matrix added (hwloc_distances_add_*), since synthetic
 * strings carry no distances.  Its matrix is deliberately lopsided:
 *            node0 node1 node2 node3
 *     node0    10    11    20    22
 *     node1    11    10    22    20
 *     node2    20    22    10    11
 *     node3    22    20    11    10
 * so that the remote socket splits into a near and a far node, differently per node.
 * Each test runs in its own process, so setenv and the module's table do not
 * leak between tests.
 */
#include "sbtest.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"
#include "victims_numa.h"

#define SYN32 "pack:2 numa:2 l3:2 core:4 pu:1"
#define MAXW 64

static void clean_env(void)
{
    unsetenv("SCHEDBENCH_TOPOLOGY");
    unsetenv("SCHEDBENCH_BIND");
    unsetenv("HWLOC_XMLFILE");
    unsetenv("HWLOC_SYNTHETIC");
    unsetenv("HWLOC_THISSYSTEM");
}

/* The fixture, found next to this source file (tests run from the repository root). */
static const char *fixture(void)
{
    static char path[512];
    const char *file = __FILE__, *slash = strrchr(file, '/');
    int dir = slash ? (int)(slash - file) : 1;
    snprintf(path, sizeof path, "%.*s/fixtures/two_socket_distances.xml", dir,
             slash ? file : ".");
    return path;
}

/* order[] is a permutation of the workers other than `worker`; the levels tile it,
 * none empty, kinds never go back, distances never go back within a kind. */
static void check_shape(const int *order, const topo_levels_t *lv, int n, int worker)
{
    int seen[MAXW] = {0};
    for (int i = 0; i < n - 1; i++) {
        cr_assert(order[i] >= 0 && order[i] < n && order[i] != worker,
                  "worker %d: bad victim %d at %d", worker, order[i], i);
        cr_assert_eq(seen[order[i]]++, 0, "worker %d: victim %d twice", worker, order[i]);
    }
    cr_assert_eq(lv->start[0], 0);
    cr_assert_eq(lv->start[lv->nlevels], n - 1, "worker %d: levels cover %d of %d", worker,
                 lv->start[lv->nlevels], n - 1);
    for (int k = 0; k < lv->nlevels; k++) {
        cr_assert_lt(lv->start[k], lv->start[k + 1], "worker %d: level %d empty", worker, k);
        cr_assert_lt(lv->kind[k], TOPO_NKINDS);
        if (k > 0) {
            cr_assert_geq(lv->kind[k], lv->kind[k - 1]);
            if (lv->kind[k] == lv->kind[k - 1])
                cr_assert_gt(lv->distance[k], lv->distance[k - 1]);
        }
    }
}

static void get(const char *src, int n, int worker, int *order, topo_levels_t *lv)
{
    cr_assert_eq(topology_victim_order(src, n, worker, order, lv), 0,
                 "topology_victim_order(%s, %d, %d) failed", src ? src : "NULL", n, worker);
    check_shape(order, lv, n, worker);
}

/* Level k holds exactly the workers lo..hi (inclusive), with this kind and distance. */
static void expect_level(const int *order, const topo_levels_t *lv, int k, int kind,
                         unsigned dist, int lo, int hi)
{
    cr_assert_lt(k, lv->nlevels, "level %d missing (%d levels)", k, lv->nlevels);
    cr_assert_eq(lv->kind[k], kind, "level %d: kind %d, expected %d", k, lv->kind[k], kind);
    cr_assert_eq(lv->distance[k], dist, "level %d: distance %u, expected %u", k,
                 lv->distance[k], dist);
    cr_assert_eq(lv->start[k + 1] - lv->start[k], hi - lo + 1, "level %d: %d members", k,
                 lv->start[k + 1] - lv->start[k]);
    for (int i = lv->start[k]; i < lv->start[k + 1]; i++)
        cr_assert(order[i] >= lo && order[i] <= hi, "level %d holds %d, not in %d..%d", k,
                  order[i], lo, hi);
}

/* As expect_level, for a level given as a list (members needn't be a range). */
static void expect_set(const int *order, const topo_levels_t *lv, int k, int kind,
                       const int *members, int count)
{
    cr_assert_lt(k, lv->nlevels);
    cr_assert_eq(lv->kind[k], kind, "level %d: kind %d, expected %d", k, lv->kind[k], kind);
    cr_assert_eq(lv->start[k + 1] - lv->start[k], count);
    for (int i = lv->start[k]; i < lv->start[k + 1]; i++) {
        bool found = false;
        for (int m = 0; m < count; m++)
            found |= order[i] == members[m];
        cr_assert(found, "level %d holds unexpected worker %d", k, order[i]);
    }
}

/* --- 32 PUs: pack:2 numa:2 l3:2 core:4 pu:1 ------------------------------------------ */
Test(topology, synthetic_two_packages_32_pus, .timeout = 20)
{
    clean_env();
    int order[MAXW];
    topo_levels_t lv;
    get(SYN32, 32, 0, order, &lv);
    cr_assert_eq(lv.nlevels, 4);
    expect_level(order, &lv, 0, TOPO_L3, 0, 1, 3);      /* its L3 */
    expect_level(order, &lv, 1, TOPO_NUMA, 0, 4, 7);    /* its NUMA node's other L3 */
    expect_level(order, &lv, 2, TOPO_PACKAGE, 0, 8, 15); /* its package's other node */
    expect_level(order, &lv, 3, TOPO_REST, 0, 16, 31);  /* the other package */

    get(SYN32, 32, 13, order, &lv);
    cr_assert_eq(lv.nlevels, 4);
    static const int l3_of_13[] = {12, 14, 15};
    expect_set(order, &lv, 0, TOPO_L3, l3_of_13, 3);
    expect_level(order, &lv, 1, TOPO_NUMA, 0, 8, 11);
    expect_level(order, &lv, 2, TOPO_PACKAGE, 0, 0, 7);
    expect_level(order, &lv, 3, TOPO_REST, 0, 16, 31);

    for (int w = 0; w < 32; w++) { /* every worker: the same shape, 3 + 4 + 8 + 16 */
        get(SYN32, 32, w, order, &lv);
        cr_assert_eq(lv.nlevels, 4);
        static const int sizes[] = {3, 4, 8, 16};
        for (int k = 0; k < 4; k++) {
            cr_assert_eq(lv.kind[k], TOPO_L3 + k);
            cr_assert_eq(lv.start[k + 1] - lv.start[k], sizes[k], "worker %d level %d", w, k);
        }
        for (int i = lv.start[3]; i < lv.start[4]; i++) /* REST: the other package */
            cr_assert_neq(order[i] / 16, w / 16);
    }
}

/* --- SMT and a shared L2: pack:1 l3:1 l2:2 core:2 pu:2 --------------------------------- */
Test(topology, synthetic_smt_shared_l2, .timeout = 20)
{
    clean_env();
    int order[MAXW];
    topo_levels_t lv;
    get("pack:1 l3:1 l2:2 core:2 pu:2", 8, 0, order, &lv);
    cr_assert_eq(lv.nlevels, 2);
    expect_level(order, &lv, 0, TOPO_CORE, 0, 1, 3); /* its core's sibling, its L2's core */
    expect_level(order, &lv, 1, TOPO_L3, 0, 4, 7);
    get("pack:1 l3:1 l2:2 core:2 pu:2", 8, 5, order, &lv);
    static const int near5[] = {4, 6, 7};
    expect_set(order, &lv, 0, TOPO_CORE, near5, 3);
    expect_level(order, &lv, 1, TOPO_L3, 0, 0, 3);
}

/* --- more workers than PUs: they wrap around ------------------------------------------ */
Test(topology, more_workers_than_pus_wrap, .timeout = 20)
{
    clean_env();
    int order[MAXW];
    topo_levels_t lv;
    get("pack:1 l3:1 core:2 pu:1", 5, 0, order, &lv); /* worker i on PU i % 2 */
    static const int same_pu[] = {2, 4}, other_pu[] = {1, 3};
    cr_assert_eq(lv.nlevels, 2);
    expect_set(order, &lv, 0, TOPO_CORE, same_pu, 2);
    expect_set(order, &lv, 1, TOPO_L3, other_pu, 2);
    get("pack:1 l3:1 core:2 pu:1", 5, 3, order, &lv);
    static const int with3[] = {1}, others3[] = {0, 2, 4};
    expect_set(order, &lv, 0, TOPO_CORE, with3, 1);
    expect_set(order, &lv, 1, TOPO_L3, others3, 3);
}

/* --- two sockets with a NUMA latency matrix (XML) ------------------------------------- */
static void check_two_socket(const char *src)
{
    int order[MAXW];
    topo_levels_t lv;
    get(src, 16, 0, order, &lv);
    cr_assert_eq(lv.nlevels, 5);
    expect_level(order, &lv, 0, TOPO_CORE, 0, 1, 1);
    expect_level(order, &lv, 1, TOPO_L3, 0, 2, 3);
    expect_level(order, &lv, 2, TOPO_PACKAGE, 11, 4, 7);
    expect_level(order, &lv, 3, TOPO_REST, 20, 8, 11); /* node 2 is nearer to node 0 ... */
    expect_level(order, &lv, 4, TOPO_REST, 22, 12, 15);
    get(src, 16, 5, order, &lv);
    cr_assert_eq(lv.nlevels, 5);
    expect_level(order, &lv, 0, TOPO_CORE, 0, 4, 4);
    expect_level(order, &lv, 1, TOPO_L3, 0, 6, 7);
    expect_level(order, &lv, 2, TOPO_PACKAGE, 11, 0, 3);
    expect_level(order, &lv, 3, TOPO_REST, 20, 12, 15); /* ... and node 3 to node 1 */
    expect_level(order, &lv, 4, TOPO_REST, 22, 8, 11);
    get(src, 16, 9, order, &lv);
    expect_level(order, &lv, 2, TOPO_PACKAGE, 11, 12, 15);
    expect_level(order, &lv, 3, TOPO_REST, 20, 0, 3);
    expect_level(order, &lv, 4, TOPO_REST, 22, 4, 7);
    for (int w = 0; w < 16; w++)
        get(src, 16, w, order, &lv);
}

Test(topology, xml_two_sockets_with_distances_explicit, .timeout = 20)
{
    clean_env();
    check_two_socket(fixture());
}

Test(topology, xml_two_sockets_with_distances_hwloc_env, .timeout = 20)
{
    clean_env();
    cr_assert_eq(setenv("HWLOC_XMLFILE", fixture(), 1), 0);
    check_two_socket(NULL); /* hwloc_topology_load picks HWLOC_XMLFILE up itself */
}

Test(topology, xml_two_sockets_with_distances_our_env, .timeout = 20)
{
    clean_env();
    cr_assert_eq(setenv("SCHEDBENCH_TOPOLOGY", fixture(), 1), 0);
    check_two_socket(NULL);
}

Test(topology, same_shape_without_distances_has_one_remote_level, .timeout = 20)
{
    clean_env();
    int order[MAXW];
    topo_levels_t lv;
    get("pack:2 numa:2 l3:1 core:2 pu:2", 16, 0, order, &lv);
    cr_assert_eq(lv.nlevels, 4);
    expect_level(order, &lv, 2, TOPO_PACKAGE, 0, 4, 7);
    expect_level(order, &lv, 3, TOPO_REST, 0, 8, 15);
}

Test(topology, hwloc_synthetic_env, .timeout = 20)
{
    clean_env();
    cr_assert_eq(setenv("HWLOC_SYNTHETIC", SYN32, 1), 0);
    int order[MAXW];
    topo_levels_t lv;
    get(NULL, 32, 0, order, &lv);
    expect_level(order, &lv, 3, TOPO_REST, 0, 16, 31);
}

/* --- edges ---------------------------------------------------------------------------- */
Test(topology, one_worker_has_no_victims, .timeout = 20)
{
    clean_env();
    topo_levels_t lv;
    int order[1];
    cr_assert_eq(topology_victim_order(SYN32, 1, 0, order, &lv), 0);
    cr_assert_eq(lv.nlevels, 0);
    cr_assert_eq(lv.start[0], 0);
}

Test(topology, bad_arguments_fail, .timeout = 20)
{
    clean_env();
    int order[MAXW];
    topo_levels_t lv;
    cr_assert_eq(topology_victim_order("bogus:3 nonsense", 4, 0, order, &lv), -1);
    cr_assert_eq(topology_victim_order("/nonexistent/topology.xml", 4, 0, order, &lv), -1);
    cr_assert_eq(topology_victim_order(SYN32, 4, 4, order, &lv), -1);
    cr_assert_eq(topology_victim_order(SYN32, 0, 0, order, &lv), -1);
    cr_assert_eq(topology_victim_order(SYN32, 4, -1, order, &lv), -1);
}

Test(topology, this_machine, .timeout = 20)
{
    clean_env();
    int order[MAXW];
    topo_levels_t lv;
    for (int w = 0; w < 9; w++)
        get(NULL, 9, w, order, &lv);
}

/* --- the round walk (victims_numa.h) ---------------------------------------------------- */
Test(topology, round_visits_levels_in_order_each_rotated, .timeout = 20)
{
    clean_env();
    int order[MAXW];
    topo_order_t o = {.order = order};
    get(SYN32, 32, 0, order, &o.lv);
    int first_rest[16] = {0};
    for (uint64_t s = 0; s < 64; s++) {
        victims_numa_iter_t it;
        victims_numa_begin(&it, &o, s * 0x9E3779B97F4A7C15ull + 12345);
        int visit[MAXW], n = 0, v;
        while ((v = victims_numa_next(&it)) >= 0) {
            cr_assert_lt(n, 31, "round longer than the victims");
            visit[n++] = v;
        }
        cr_assert_eq(n, 31);
        cr_assert_eq(victims_numa_next(&it), -1, "a finished round stays finished");
        for (int k = 0; k < o.lv.nlevels; k++) {
            int b = o.lv.start[k], size = o.lv.start[k + 1] - b;
            /* positions b..b+size-1 of the visit are this level, as a rotation of it */
            int rot = -1;
            for (int i = 0; i < size; i++)
                if (order[b + i] == visit[b])
                    rot = i;
            cr_assert_geq(rot, 0, "level %d starts outside the level", k);
            for (int i = 0; i < size; i++)
                cr_assert_eq(visit[b + i], order[b + (rot + i) % size]);
            if (k == 3)
                first_rest[rot]++;
        }
    }
    int distinct = 0;
    for (int i = 0; i < 16; i++)
        distinct += first_rest[i] > 0;
    cr_assert_geq(distinct, 4, "rotation barely varies: %d distinct starts in 64 rounds",
                  distinct);
}

/* --- the scheduler's table, pinning, read-back ----------------------------------------- */
static void *start_worker(void *arg)
{
    topology_worker_start((int)(intptr_t)arg);
    return NULL;
}

static void start_workers(int n)
{
    pthread_t th[MAXW];
    for (int i = 0; i < n; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, start_worker, (void *)(intptr_t)i), 0);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
}

Test(topology, table_matches_pure_function, .timeout = 20)
{
    clean_env();
    cr_assert_eq(setenv("SCHEDBENCH_TOPOLOGY", SYN32, 1), 0);
    int order[MAXW];
    topo_levels_t lv;
    for (int w = 0; w < 40; w++) { /* 40 workers on 32 PUs */
        const topo_order_t *o = topology_worker_order(w, 40);
        cr_assert_not_null(o);
        get(NULL, 40, w, order, &lv);
        cr_assert_eq(o->lv.nlevels, lv.nlevels);
        cr_assert_arr_eq(o->lv.start, lv.start, sizeof lv.start);
        cr_assert_arr_eq(o->order, order, 39 * sizeof(int));
    }
}

/* 10^9 PUs: refused at once (hwloc would take hours), with a flat order instead. */
Test(topology, absurd_synthetic_topology_is_refused, .timeout = 10, .init = cr_redirect_stderr)
{
    clean_env();
    cr_assert_eq(setenv("SCHEDBENCH_TOPOLOGY", "pack:1000 core:1000 pu:1000", 1), 0);
    const topo_order_t *o = topology_worker_order(0, 4);
    cr_assert_not_null(o);
    cr_assert_eq(o->lv.nlevels, 1, "a flat order");
    fflush(stderr);
    cr_assert_stderr_eq_str(
        "schedbench: refusing the synthetic topology \"pack:1000 core:1000 pu:1000\": "
        "1000000000 PUs (at most 65536)\n"
        "schedbench: numa: cannot load the topology pack:1000 core:1000 pu:1000; victims in "
        "index order, workers not bound\n");
}

/* hwloc falls back to this machine silently when HWLOC_XMLFILE cannot be read: say so. */
Test(topology, missing_hwloc_xmlfile_is_reported, .timeout = 10, .init = cr_redirect_stderr)
{
    clean_env();
    cr_assert_eq(setenv("HWLOC_XMLFILE", "/nonexistent/topo.xml", 1), 0);
    cr_assert_not_null(topology_worker_order(0, 2));
    fflush(stderr);
    cr_assert_stderr_eq_str("schedbench: HWLOC_XMLFILE=/nonexistent/topo.xml cannot be read "
                            "(No such file or directory); hwloc uses this machine's topology\n");
}

Test(topology, synthetic_table_is_not_bound_and_says_so_once, .timeout = 20,
     .init = cr_redirect_stderr)
{
    clean_env();
    cr_assert_eq(setenv("SCHEDBENCH_TOPOLOGY", SYN32, 1), 0);
    cr_assert_not_null(topology_worker_order(0, 4));
    cr_assert_not_null(topology_worker_order(0, 6)); /* a rebuild: no second line */
    start_workers(6);
    char buf[256];
    for (int i = 0; i < 6; i++) {
        cr_assert_gt(topology_worker_placement(i, buf, sizeof buf), 0);
        cr_assert(strstr(buf, "not bound"), "placement %d: %s", i, buf);
    }
    cr_assert_eq(topology_worker_placement(6, buf, sizeof buf), -1);
    cr_assert_gt(topology_describe(buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "2 packages, 4 NUMA nodes, 32 cores, 32 PUs (synthetic " SYN32
                          "); bound: no");
    fflush(stderr);
    cr_assert_stderr_eq_str("schedbench: numa: victim order from the synthetic " SYN32
                            " topology; workers are not bound\n");
}

Test(topology, this_machine_binds_and_reads_back, .timeout = 20)
{
    clean_env();
    int n = 3; /* more than this box's PUs, so two share one */
    for (int i = 0; i < n; i++)
        cr_assert_not_null(topology_worker_order(i, n));
    char buf[256];
    cr_assert_eq(topology_worker_placement(0, buf, sizeof buf), -1, "nothing before start");
    start_workers(n);
    for (int i = 0; i < n; i++) {
        cr_assert_gt(topology_worker_placement(i, buf, sizeof buf), 0);
        cr_log_info("worker %d: %s", i, buf);
        cr_assert(strstr(buf, ", bound; ran on P#"), "placement %d: %s", i, buf);
        cr_assert_null(strstr(buf, "not where asked"), "placement %d: %s", i, buf);
        cr_assert(strstr(buf, "stack "), "placement %d: %s", i, buf);
    }
    cr_assert_gt(topology_describe(buf, sizeof buf), 0);
    cr_log_info("%s", buf);
    cr_assert(strstr(buf, "; bound: yes"), "%s", buf);
    cr_assert_null(strstr(buf, "("), "this machine needs no source label: %s", buf);
}

Test(topology, bind_off_by_env, .timeout = 20)
{
    clean_env();
    cr_assert_eq(setenv("SCHEDBENCH_BIND", "0", 1), 0);
    cr_assert_not_null(topology_worker_order(0, 2));
    start_workers(2);
    char buf[256];
    cr_assert_gt(topology_worker_placement(1, buf, sizeof buf), 0);
    cr_assert(strstr(buf, "not bound"), "%s", buf);
    cr_assert_gt(topology_describe(buf, sizeof buf), 0);
    cr_assert(strstr(buf, "; bound: no"), "%s", buf);
}

Test(topology, describe_without_a_table, .timeout = 20)
{
    clean_env();
    char buf[256];
    cr_assert_gt(topology_describe(buf, sizeof buf), 0);
    cr_assert(strstr(buf, " PUs; bound: no") || strstr(buf, " PU; bound: no"), "%s", buf);
    cr_assert_eq(setenv("HWLOC_XMLFILE", fixture(), 1), 0);
    cr_assert_gt(topology_describe(buf, sizeof buf), 0);
    char want[700];
    snprintf(want, sizeof want, "2 packages, 4 NUMA nodes, 8 cores, 16 PUs (XML %s); "
                                "bound: no", fixture());
    cr_assert_str_eq(buf, want);
}
