/*
 * sim_model.c -- read a machine model for the engine.
 *
 * The file is the flat form that harness/driver/simmodel.py writes from a model JSON
 * (harness/machines/<name>.json, where every number carries its source): one
 * `key value` per line, every key below exactly once, costs in nanoseconds.
 *
 *   name epyc16
 *   topology pack:1 numa:1 l3:2 core:8 pu:1     (hwloc's synthetic form, top down)
 *   load_hit 0.5   ... every name of sim_cost_names ...
 *   xfer_core 10   xfer_l3 40   xfer_numa 100   xfer_package 130   xfer_remote 200
 *   kernel_iters_per_us 600
 *
 * Any error (unknown or repeated key, missing key, a number that is not a finite value
 * >= 0, a topology that is not understood or has more than SIM_MAX_PUS PUs) is printed
 * with the file and line, and the program exits with status 2.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_engine.h"

const char *const sim_cost_names[SIM_C_N] = {
    "load_hit", "store_hit", "rmw",          "fence",        "switch",
    "syscall",  "futex_wake", "wakeup_latency", "sched_yield", "pause",
    "clock_read", "thread_create", "sleep_slack", "sha1_block", "code_access",
    "code_switch", "stack_map", "stack_unmap", "uts_node", "resume_16",
    "resume_128", "resume_1k", "resume_4k", "resume_16k", "resume_32k",
    "futex_wake_short", "wakeup_latency_short", "short_sleep_max",
};
static const char *const xfer_names[6] = {NULL, "xfer_core", "xfer_l3", "xfer_numa",
                                          "xfer_package", "xfer_remote"};

static void fail(const char *path, int line, const char *fmt, const char *arg)
{
    fprintf(stderr, "simulate: %s", path);
    if (line)
        fprintf(stderr, ":%d", line);
    fprintf(stderr, ": ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    exit(2);
}

/* hwloc synthetic levels, top down; each PU's ids at core/L2, L3, NUMA, package level. */
static int parse_topology(const char *desc)
{
    enum { L_PACK, L_NUMA, L_L3, L_L2, L_CORE, L_PU, L_N };
    static const char *const names[L_N][4] = {
        {"pack", "package", "socket", NULL}, {"numa", "node", "numanode", NULL},
        {"l3", "l3cache", NULL, NULL},       {"l2", "l2cache", NULL, NULL},
        {"core", NULL, NULL, NULL},          {"pu", NULL, NULL, NULL}};
    long count[L_N];
    for (int k = 0; k < L_N; k++)
        count[k] = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", desc);
    int last = -1;
    for (char *tok = strtok(buf, " \t"); tok; tok = strtok(NULL, " \t")) {
        char *colon = strchr(tok, ':');
        if (!colon)
            return -1;
        *colon = 0;
        int lv = -1;
        for (int k = 0; k < L_N && lv < 0; k++)
            for (int j = 0; j < 4 && names[k][j]; j++)
                if (strcasecmp(tok, names[k][j]) == 0)
                    lv = k;
        char *end;
        long n = strtol(colon + 1, &end, 10);
        if (lv <= last || *end || n < 1 || n > SIM_MAX_PUS)
            return -1; /* unknown level, out of order, or a bad count */
        count[lv] = n;
        last = lv;
    }
    long npus = 1;
    for (int k = 0; k < L_N; k++)
        if (count[k]) {
            npus *= count[k];
            if (npus > SIM_MAX_PUS)
                return -2;
        }
    if (last < 0)
        return -1;
    /* span[k] = PUs under one object of level k */
    long span[L_N];
    long below = 1;
    for (int k = L_N - 1; k >= 0; k--) {
        span[k] = count[k] ? below : 0;
        if (count[k])
            below *= count[k];
    }
    for (long p = 0; p < npus; p++) {
        long id[L_N];
        for (int k = 0; k < L_N; k++)
            id[k] = span[k] ? p / span[k] : -1;
        /* a missing level inherits the next one up (no L3 level: the NUMA node's) */
        long pack = id[L_PACK] >= 0 ? id[L_PACK] : 0;
        long numa = id[L_NUMA] >= 0 ? id[L_NUMA] : pack;
        long l3 = id[L_L3] >= 0 ? id[L_L3] : numa;
        long core = id[L_L2] >= 0 ? id[L_L2] : id[L_CORE] >= 0 ? id[L_CORE] : p;
        sim_model.pu[p] = (sim_pu_t){.core = (int)core, .l3 = (int)l3, .numa = (int)numa, .pack = (int)pack};
    }
    sim_model.npus = (int)npus;
    return 0;
}

void sim_model_load(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        fail(path, 0, "cannot open the model: %s", strerror(errno));
    enum { K_NAME = SIM_C_N, K_TOPO, K_XFER0, K_RATE = K_XFER0 + 5, K_N };
    int seen[K_N] = {0};
    char line[512];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n')
            line[--len] = 0;
        if (len == 0 || line[0] == '#')
            continue;
        char *sp = strchr(line, ' ');
        if (!sp)
            fail(path, lineno, "expected `key value`, got \"%s\"", line);
        *sp = 0;
        const char *key = line, *val = sp + 1;
        int k = -1;
        if (strcmp(key, "name") == 0)
            k = K_NAME;
        else if (strcmp(key, "topology") == 0)
            k = K_TOPO;
        else if (strcmp(key, "kernel_iters_per_us") == 0)
            k = K_RATE;
        for (int i = 0; i < SIM_C_N && k < 0; i++)
            if (strcmp(key, sim_cost_names[i]) == 0)
                k = i;
        for (int i = 1; i < 6 && k < 0; i++)
            if (strcmp(key, xfer_names[i]) == 0)
                k = K_XFER0 + i - 1;
        if (k < 0)
            fail(path, lineno, "unknown key \"%s\"", key);
        if (seen[k]++)
            fail(path, lineno, "key \"%s\" given twice", key);
        if (k == K_NAME) {
            snprintf(sim_model.name, sizeof sim_model.name, "%s", val);
            continue;
        }
        if (k == K_TOPO) {
            snprintf(sim_model.topology, sizeof sim_model.topology, "%s", val);
            int rc = parse_topology(val);
            if (rc == -2)
                fail(path, lineno, "topology \"%s\" has more PUs than the simulator's 256", val);
            if (rc != 0)
                fail(path, lineno, "topology \"%s\" is not an hwloc synthetic description "
                                   "(levels pack numa l3 l2 core pu, top down, as kind:count)", val);
            continue;
        }
        char *end;
        errno = 0;
        double v = strtod(val, &end);
        if (errno || end == val || *end || !isfinite(v) || v < 0 || v > 1e12)
            fail(path, lineno, "\"%s\" is not a finite number >= 0", val);
        if (k == K_RATE) {
            if (v < 1e-3)
                fail(path, lineno, "kernel_iters_per_us must be > 0, got %s", val);
            sim_model.kernel_iters_per_us = v;
            sim_model.kernel_iter_ps = (uint64_t)llround(1e6 / v);
        } else if (k >= K_XFER0) {
            sim_model.xfer[k - K_XFER0 + 1] = (uint64_t)llround(v * 1000);
        } else {
            sim_model.c[k] = (uint64_t)llround(v * 1000);
        }
    }
    fclose(f);
    for (int k = 0; k < K_N; k++)
        if (!seen[k]) {
            const char *n = k == K_NAME ? "name" : k == K_TOPO ? "topology"
                          : k == K_RATE ? "kernel_iters_per_us"
                          : k >= K_XFER0 ? xfer_names[k - K_XFER0 + 1] : sim_cost_names[k];
            fail(path, 0, "missing key \"%s\"", n);
        }
}
