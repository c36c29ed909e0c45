/*
 * omp.c -- the OpenMP reference row: the workloads of ref.h on OpenMP tasks, built with
 * gcc -fopenmp (libgomp, as Debian ships it; clang would target LLVM's libomp instead).
 *
 * Workers.  Every run opens a parallel region of N threads (num_threads(N), dynamic
 * adjustment off); libgomp keeps the threads between regions.  One thread of the team
 * creates the tasks (`single`) and the whole team, that thread included, runs them;
 * the region's closing barrier waits for every task.
 *
 * Where OpenMP differs from the other rows:
 *   - spawn: tasks cannot come from outside the team, so the submitter is the team
 *     thread inside `single` (it runs tasks too, once it has created them all).
 *   - imbalance: submitters s = 0..P-1 are spread over the team (omp for,
 *     schedule(static, 1), nowait); each creates its share's tasks.  late = 1 is not
 *     offered: a late submitter would have to be a team thread that sleeps, taking a
 *     worker out of the run, which is not what the other rows measure.
 */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"
#include "wl_defs.h"

#define REF_STR2(x) #x
#define REF_STR(x) REF_STR2(x)

const char ref_variant[] = "omp";
const char ref_runtime[] = "libgomp, OpenMP " REF_STR(_OPENMP);

static int omp_workers;

int ref_init(int workers)
{
    omp_set_dynamic(0);
    omp_workers = workers > 0 ? workers : omp_get_max_threads();
    return omp_workers;
}

bool ref_supports(const char *workload, const long *args)
{
    wl_imbalance_t p;
    return !(strcmp(workload, "imbalance") == 0 && wl_imbalance_parse(args, &p) == 0 && p.late);
}

static uint64_t fib_task(long n, uint64_t *spawns)
{
    if (n < 2)
        return (uint64_t)n;
    uint64_t x = 0, sx = 0, sy = 0;
#pragma omp task shared(x, sx) firstprivate(n)
    x = fib_task(n - 1, &sx);
    uint64_t y = fib_task(n - 2, &sy);
#pragma omp taskwait
    *spawns += sx + sy + 1;
    return x + y;
}

int ref_fib(const long *args, wl_run_t *out)
{
    uint64_t v = 0, spawns = 0;
#pragma omp parallel num_threads(omp_workers)
#pragma omp single
    v = fib_task(args[0], &spawns);
    out->answer = v;
    out->items = (double)spawns;
    return 0;
}

int ref_spawn(const long *args, wl_run_t *out)
{
    long n = args[0];
    if (n < 1)
        return EINVAL;
    /* A plain shared variable, as OpenMP code writes it; not on a line of its own
     * (WL_OWN_LINE, workload.h) as the other rows' runs are: so placed, this row's
     * spawn ran 1.7x slower at 2 workers (5 alternating rounds), so it keeps the
     * faster layout (libgomp's creating thread runs tasks itself once its queue is
     * long, and a slower consumer makes that happen sooner: likely, not verified). */
    uint64_t sum = 0;
#pragma omp parallel num_threads(omp_workers)
#pragma omp single
    for (long i = 0; i < n; i++) {
#pragma omp task firstprivate(i) shared(sum)
        {
#pragma omp atomic
            sum += (uint64_t)i;
        }
    }
    out->answer = sum; /* the region's barrier completed every task */
    out->items = (double)n;
    return 0;
}

int ref_imbalance(const long *args, wl_run_t *out)
{
    wl_imbalance_t p;
    if (wl_imbalance_parse(args, &p) != 0 || p.late) /* late: see ref_supports */
        return EINVAL;
    const double imbalance = p.imbalance;
    const long tasks = p.tasks, submitters = p.submitters;
    const int skew = p.skew;
    uint64_t iters = wl_grain_iters(p.grain_us);
    uint64_t *sums = calloc((size_t)tasks, sizeof *sums);
    if (!sums)
        return ENOMEM;
#pragma omp parallel num_threads(omp_workers)
    {
#pragma omp for schedule(static, 1) nowait
        for (long s = 0; s < submitters; s++) {
            long first, last;
            wl_submitter_share(tasks, submitters, s, &first, &last);
            for (long i = first; i < last; i++) {
#pragma omp task firstprivate(i)
                sums[i] = wl_imbalance_task((uint64_t)i, (uint64_t)tasks, iters, imbalance, skew);
            }
        }
    }
    uint64_t sum = 0;
    for (long i = 0; i < tasks; i++)
        sum += sums[i];
    free(sums);
    out->answer = sum;
    out->items = (double)tasks;
    wl_counter_add(out, "iters_per_us", wl_iters_per_us());
    wl_counter_add(out, "late_delay_us", 0);
    return 0;
}

int ref_granularity_step(int g, long tasks, uint64_t iters, uint64_t *sum)
{
    uint64_t *sums = calloc((size_t)tasks, sizeof *sums);
    if (!sums)
        return ENOMEM;
#pragma omp parallel num_threads(omp_workers)
#pragma omp single
    for (long i = 0; i < tasks; i++) {
#pragma omp task firstprivate(i)
        sums[i] = wl_granularity_task(g, (uint64_t)i, iters);
    }
    uint64_t s = 0;
    for (long i = 0; i < tasks; i++)
        s += sums[i];
    free(sums);
    *sum = s;
    return 0;
}
