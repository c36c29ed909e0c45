/*
 * latency -- submit-to-start latency of tasks sent from a foreign pthread while every
 * worker is busy: where starvation and unfairness show.
 *
 * `busy` background bthreads per worker spin in chunks of about 50 us of CPU work and
 * yield between chunks.  The caller (a foreign pthread: the harness's main thread)
 * then submits `probes` tiny tasks, one every `gap_us` microseconds; each probe records
 * the time it started, and its latency is start - submit.  When every probe has run the
 * background tasks are told to stop and are joined.
 *
 * A scheduler that never looks at its remote queue while local work exists would starve
 * the probes forever; so that the run stays bounded, each background task also stops
 * after a deadline (1 s + probes * gap_us * 4), and such starvation shows as latencies
 * of about that deadline.
 *
 * answer = the number of probes that ran (= probes).  items = probes.
 * Counters: p50_us, p99_us, p999_us, max_us (nearest-rank percentiles of this run).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "bthread.h"
#include "timeutil.h"
#include "workload.h"

#define LAT_CHUNK_NS 50000 /* one chunk of background work */

typedef struct lat_run {
    WL_OWN_LINE _Atomic int stop; /* set when every probe has run; WL_OWN_LINE: workload.h */
    uint64_t deadline_ns;    /* background tasks stop here at the latest */
    _Atomic uint64_t ran;    /* probes that ran */
    bthread_countdown_t done;
} lat_run_t;

typedef struct lat_probe {
    lat_run_t *run;
    uint64_t submit_ns;
    uint64_t start_ns;
    bthread_t tid;
} lat_probe_t;

static uint64_t now_ns(void) { return (uint64_t)sb_clock_ns(CLOCK_MONOTONIC); }

static void *lat_background(void *arg)
{
    lat_run_t *r = arg;
    /* relaxed: a late look at the flag only costs one more chunk */
    while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
        uint64_t t = now_ns();
        if (t >= r->deadline_ns)
            break;
        while (now_ns() - t < LAT_CHUNK_NS)
            ; /* the work: CPU time, no memory traffic */
        bthread_yield();
    }
    return NULL;
}

static void *lat_probe_task(void *arg)
{
    lat_probe_t *p = arg;
    p->start_ns = now_ns();
    /* relaxed: a count; countdown_signal/wait order it for the reader */
    atomic_fetch_add_explicit(&p->run->ran, 1, memory_order_relaxed);
    bthread_countdown_signal(&p->run->done, 1);
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile q (0 < q <= 1) of sorted v[0..n). */
static double pct_us(const uint64_t *v, long n, double q)
{
    long rank = (long)(q * (double)n + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return (double)v[rank - 1] / 1000.0;
}

static uint64_t lat_sequential(const long *args) { return (uint64_t)args[0]; }

static int lat_parallel(const long *args, wl_run_t *out)
{
    long probes = args[0], busy = args[1] * bthread_getconcurrency(), gap_ns = args[2] * 1000;
    lat_run_t run;
    atomic_init(&run.stop, 0);
    atomic_init(&run.ran, 0);
    run.deadline_ns = now_ns() + 1000000000u + (uint64_t)probes * (uint64_t)gap_ns * 4;
    lat_probe_t *p = calloc((size_t)probes, sizeof *p);
    bthread_t *bg = calloc(busy > 0 ? (size_t)busy : 1, sizeof *bg);
    uint64_t *lat = calloc((size_t)probes, sizeof *lat);
    int rc = (p && bg && lat) ? 0 : ENOMEM;
    if (rc == 0)
        rc = bthread_countdown_init(&run.done, (int)probes);
    if (rc != 0) {
        free(p);
        free(bg);
        free(lat);
        return rc;
    }

    long nbg = 0;
    for (; nbg < busy; nbg++)
        if ((rc = bthread_start_background(&bg[nbg], NULL, lat_background, &run)) != 0)
            break;

    long sent = 0;
    uint64_t next = now_ns();
    for (; rc == 0 && sent < probes; sent++) {
        while (now_ns() < next)
            ; /* pace the submissions; a sleep would be far coarser than gap_us */
        p[sent].run = &run;
        p[sent].submit_ns = now_ns();
        if ((rc = bthread_start_background(&p[sent].tid, NULL, lat_probe_task, &p[sent])) != 0)
            break;
        next += (uint64_t)gap_ns;
    }
    if (sent < probes)
        bthread_countdown_signal(&run.done, (int)(probes - sent));
    bthread_countdown_wait(&run.done);
    /* relaxed: the background tasks need no data from here, only the flag */
    atomic_store_explicit(&run.stop, 1, memory_order_relaxed);
    for (long i = 0; i < sent; i++)
        bthread_join(p[i].tid, NULL);
    for (long i = 0; i < nbg; i++)
        bthread_join(bg[i], NULL);
    bthread_countdown_destroy(&run.done);

    if (rc == 0) {
        for (long i = 0; i < probes; i++)
            lat[i] = p[i].start_ns - p[i].submit_ns;
        qsort(lat, (size_t)probes, sizeof *lat, cmp_u64);
        out->answer = atomic_load_explicit(&run.ran, memory_order_relaxed); /* after joins */
        out->items = (double)probes;
        wl_counter_add(out, "p50_us", pct_us(lat, probes, 0.50));
        wl_counter_add(out, "p99_us", pct_us(lat, probes, 0.99));
        wl_counter_add(out, "p999_us", pct_us(lat, probes, 0.999));
        wl_counter_add(out, "max_us", (double)lat[probes - 1] / 1000.0);
    }
    free(p);
    free(bg);
    free(lat);
    return rc;
}

static workload_t latency = {
    .name = "latency",
    .summary = "submit-to-start latency percentiles of foreign-thread tasks, workers busy",
    .arg_names = {"probes", "busy", "gap_us"},
    .bench = {{2000, 2, 20}},
    .nbench = 1,
    .full = {{20000, 2, 20}, {2000, 8, 20}},
    .nfull = 2,
    .test = {50, 1, 20},
    .sequential = lat_sequential,
    .parallel = lat_parallel,
};
WORKLOAD_REGISTER(latency)
