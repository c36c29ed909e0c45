// tbb.cc -- the oneTBB reference row (Debian's libtbb-dev, oneTBB 2021.x): the
// workloads of ref.h on task_group, parallel_for and task_arena, written the way a
// oneTBB user would write them.
//
// Workers.  N threads do tasks, as N bthread workers do:
//   - fib, granularity and imbalance run inside `g_arena` (N slots, one of them kept for
//     the external thread that enters it): the caller works beside N-1 TBB workers, as
//     oneTBB code does.  A bthread caller instead waits while N workers run.
//   - spawn submits with task_arena::enqueue into `g_foreign` (N slots, none for external
//     threads): the caller only submits, N TBB workers run the tasks.
// global_control allows N TBB worker threads in the process (its limit counts the main
// thread too, hence N + 1).
//
// imbalance: each of the P submitter threads enters g_arena and runs tbb::parallel_for
// (auto_partitioner) over its share; late submitters sleep first.  When more
// submitters than free slots arrive, oneTBB runs the extra ones' work on the arena's
// threads while they wait, so no more than N threads work.
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/version.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "ref.h"
#include "timeutil.h"
#include "wl_defs.h"

#define REF_STR2(x) #x
#define REF_STR(x) REF_STR2(x)

extern "C" {
const char ref_variant[] = "tbb";
const char ref_runtime[] = "oneTBB " REF_STR(TBB_VERSION_MAJOR) "." REF_STR(TBB_VERSION_MINOR);
}

namespace {

int g_workers;
std::unique_ptr<tbb::global_control> g_control;
std::unique_ptr<tbb::task_arena> g_arena;   // N slots, 1 kept for the external caller
std::unique_ptr<tbb::task_arena> g_foreign; // N slots, all for TBB workers

uint64_t fib_tg(long n, uint64_t *spawns)
{
    if (n < 2)
        return (uint64_t)n;
    uint64_t x = 0, sx = 0, sy = 0;
    tbb::task_group g;
    g.run([&] { x = fib_tg(n - 1, &sx); });
    uint64_t y = fib_tg(n - 2, &sy);
    g.wait();
    *spawns += sx + sy + 1;
    return x + y;
}

} // namespace

extern "C" int ref_init(int workers)
{
    g_workers = workers > 0 ? workers : tbb::info::default_concurrency();
    g_control = std::make_unique<tbb::global_control>(
        tbb::global_control::max_allowed_parallelism, (size_t)g_workers + 1);
    g_arena = std::make_unique<tbb::task_arena>(g_workers, 1);
    g_foreign = std::make_unique<tbb::task_arena>(g_workers, 0);
    g_arena->initialize();
    g_foreign->initialize();
    return g_workers;
}

extern "C" bool ref_supports(const char *, const long *) { return true; }

extern "C" int ref_fib(const long *args, wl_run_t *out)
{
    uint64_t spawns = 0, v = 0;
    g_arena->execute([&] { v = fib_tg(args[0], &spawns); });
    out->answer = v;
    out->items = (double)spawns;
    return 0;
}

extern "C" int ref_spawn(const long *args, wl_run_t *out)
{
    long n = args[0];
    if (n < 1)
        return EINVAL;
    struct {
        WL_OWN_LINE std::atomic<uint64_t> sum; // WL_OWN_LINE: see workload.h
        std::atomic<long> left;
    } c;
    c.sum.store(0, std::memory_order_relaxed); // before the tasks: enqueue orders it
    c.left.store(n, std::memory_order_relaxed);
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    for (long i = 0; i < n; i++)
        g_foreign->enqueue([&, i] {
            // relaxed: only the total matters; the last task's acq_rel decrement and the
            // mutex order every add before the caller's read.
            c.sum.fetch_add((uint64_t)i, std::memory_order_relaxed);
            if (c.left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                std::lock_guard<std::mutex> lock(m); // notify under the lock: the caller
                done = true;                         // cannot return (and destroy m, cv)
                cv.notify_one();                     // before we are done with them
            }
        });
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return done; });
    out->answer = c.sum.load(std::memory_order_relaxed);
    out->items = (double)n;
    return 0;
}

extern "C" int ref_imbalance(const long *args, wl_run_t *out)
{
    wl_imbalance_t p;
    if (wl_imbalance_parse(args, &p) != 0)
        return EINVAL;
    const long tasks = p.tasks, submitters = p.submitters;
    const double imbalance = p.imbalance;
    const int skew = p.skew;
    uint64_t iters = wl_grain_iters(p.grain_us);
    uint64_t delay_ns = wl_imbalance_delay_ns(&p, g_workers);
    std::vector<uint64_t> sums((size_t)tasks);
    uint64_t start = wl_now_ns();
    auto submit = [&](long s) {
        if (wl_submitter_is_late(s, submitters, p.late))
            sb_sleep_until_ns((int64_t)(start + delay_ns));
        long first, last;
        wl_submitter_share(tasks, submitters, s, &first, &last);
        g_arena->execute([&] {
            tbb::parallel_for(tbb::blocked_range<long>(first, last),
                              [&](const tbb::blocked_range<long> &r) {
                                  for (long i = r.begin(); i != r.end(); ++i)
                                      sums[(size_t)i] = wl_imbalance_task(
                                          (uint64_t)i, (uint64_t)tasks, iters, imbalance, skew);
                              });
        });
    };
    std::vector<std::thread> threads;
    try {
        for (long s = 0; s < submitters; s++)
            threads.emplace_back(submit, s);
    } catch (const std::system_error &) {
        for (long s = (long)threads.size(); s < submitters; s++)
            submit(s); // no thread to spare: submit that share from here
    }
    for (auto &t : threads)
        t.join();
    uint64_t sum = 0;
    for (uint64_t v : sums)
        sum += v;
    out->answer = sum;
    out->items = (double)tasks;
    wl_counter_add(out, "iters_per_us", wl_iters_per_us());
    wl_counter_add(out, "late_delay_us", (double)delay_ns / 1000.0);
    return 0;
}

extern "C" int ref_granularity_step(int g, long tasks, uint64_t iters, uint64_t *sum)
{
    std::vector<uint64_t> sums((size_t)tasks);
    g_arena->execute([&] {
        tbb::task_group tg;
        for (long i = 0; i < tasks; i++)
            tg.run([&, i] { sums[(size_t)i] = wl_granularity_task(g, (uint64_t)i, iters); });
        tg.wait();
    });
    uint64_t s = 0;
    for (uint64_t v : sums)
        s += v;
    *sum = s;
    return 0;
}
