"""targets.py -- the issues' performance targets, measured side by side in one run.

Each comparison runs both sides in alternating rounds (ours, theirs, ours, theirs, ...)
so that machine noise falls on both, and records every round's value: the verdict is
the report's (targetfile.comparisons: the ratio with its bracket against the target).  Nothing here is
a test: it prints numbers, never passes or fails on them.  Standard library only.

    ./run.py targets RUN [--rounds N] [--only NAME,...]   writes RUN/targets.json, which
                                                          the report and README show
    python3 -m harness.driver.targets [--rounds N] [--only NAME,...] [--json OUT]

Every binary is the tree's build (make all refs; make sim for flush-sim; golang-go for
the Go rows); a comparison that cannot be run is recorded as not measured, with why.

Comparisons (issue: target):
  switch      ours vs Boost.Context fcontext round trip        (2: <= 1.0x)
  fib         fib(30), chaselev vs oneTBB task_group, 1 and 2 workers   (3: <= 1.0x)
  yield       yield round trip vs Go runtime.Gosched, GOMAXPROCS=1      (3: <= 0.5x)
  spawn       tasks/s from one foreign pthread vs the plain pthread pool, 2 workers, every
              stealing variant                    (3: >= 1.0x; 12: chaselev >= 1.0x, all >= 0.8x)
  flush       NOSIGNAL + bthread_flush in batches of 32 vs one signal per task, 0.5 us
              tasks, from a pthread and from a worker, chaselev and half; the same batch
              on the article's scheduler (ws)                            (12: >= 1.2x)
  flush-sim   the same at 16 workers, SIMULATED on the epyc16 model (make sim): the case
              the target is about, where starts find workers idle   (12: >= 1.2x)
  article-ws  the article's own scheduler stealing (ws) vs its no-steal mode
              (ws-nosteal), the article's case (d = 0.5, 100 us tasks), 2 workers, tasks
              per second over the experiment's window   (42: within 5% of the ideal
              1.50x, >= 1.425x)
  task-cost   a task's cost: 10^5 empty tasks started one at a time from a worker, 1
              worker, ws vs chaselev, ns per task        (42: <= 0.2x: a function-pointer
              pool should cost a fifth of a bthread or less)
  pingpong    mutex+cond round trip vs Go unbuffered channels, 1 and 2  (4: <= 0.75x)
  imbalance   chaselev vs static, affinity and oneTBB at 2 workers, each scenario
              (6: oneTBB <= 1.0x; a pool without stealing: within 10% of what a
              perfect balancer gains over it, from the tasks' sizes and placement)
  blocked     10^6 blocked bthreads vs 10^6 goroutines: time and RSS    (4: <= 1.0x, <= 1.5x)
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

if not __package__:   # started as a file, so the package import below cannot work
    sys.exit("harness/driver/targets.py: run it from the repository root as "
             "python3 -m harness.driver.targets")

from . import simmodel, simulate, targetfile  # noqa: E402
from .build import Build  # noqa: E402
from .config import ROOT, UsageError  # noqa: E402
from .files import atomic_write_json, atomic_write_text  # noqa: E402
from .gbjson import BadResultFile, load_gb_file  # noqa: E402
from .fmt import now_iso  # noqa: E402
from .machine import git_info  # noqa: E402
from .plan import simulated_listing  # noqa: E402

GO_DIR = os.path.join(ROOT, "harness", "ref", "go")

# binary (relative to ROOT) -> the git revisions its JSON contexts recorded, for the
# record's check that every binary was built from the measured revision; measure()
# starts it afresh
SEEN_REVISIONS = {}


def bench(binary, workers, name_re, min_time="0.3", env=None, full=False):
    """One bench invocation; {benchmark name: (real ns, {counter: value})} of its entries."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "b.json")
        cmd = [os.path.join(ROOT, binary)] + (["--workers", str(workers)] if workers else []) + [
               f"--benchmark_filter={name_re}", f"--benchmark_min_time={min_time}",
               f"--benchmark_out={out}", "--benchmark_out_format=json"]
        e = dict(os.environ, **(env or {}))
        if full:
            e["SCHEDBENCH_FULL"] = "1"
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=e,
                       check=True, timeout=900)
        try:
            context, entries = load_gb_file(out)
        except BadResultFile as err:
            raise RuntimeError(str(err)) from None
    SEEN_REVISIONS.setdefault(binary, set()).add(str(context.get("git_rev") or "unknown"))
    res = {}
    for entry in entries:
        if entry.error is not None:
            raise RuntimeError(f"{binary}: {entry.benchmark}: {entry.error}")
        res[entry.benchmark] = (entry.real_s * 1e9, entry.counters)
    return res


def go_bench(pattern, procs, benchtime="1s"):
    """Go's testing benchmarks: {name: (ns/op, {metric: value})}."""
    if not shutil.which("go"):
        raise RuntimeError("no Go toolchain (apt-get install golang-go)")
    env = dict(os.environ, GO111MODULE="off", GOMAXPROCS=str(procs),
               GOCACHE=os.path.join(tempfile.gettempdir(), "schedbench-gocache"))
    p = subprocess.run(["go", "test", "-run", "xxx", "-bench", pattern, f"-benchtime={benchtime}",
                        "-cpu", str(procs)], cwd=GO_DIR, env=env, capture_output=True,
                       text=True, check=True, timeout=900)
    res = {}
    for line in p.stdout.splitlines():
        m = re.match(r"(Benchmark\w+)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op(.*)", line)
        if m:
            extra = dict((k, float(v)) for v, k in re.findall(r"([\d.]+) (\w+)", m.group(3)))
            res[m.group(1)] = (float(m.group(2)), extra)
    return res


def rounds_of(n, ours, theirs):
    """Alternate the two measurements n times; lists of their values."""
    a, b = [], []
    for _ in range(n):
        a.append(ours())
        b.append(theirs())
    return a, b


def report(results, name, what, a, b, unit, target, lower_is_better=True):
    """Record one comparison's rounds (and print its medians: the verdict needs the
    whole family, and is the report's)."""
    ma, mb = statistics.median(a), statistics.median(b)
    ratio = ma / mb if mb else float("nan")
    print(f"{name:10s} {what:58s} ours {ma:12.1f} {unit:5s} ref {mb:12.1f} {unit:5s} "
          f"ratio of medians {ratio:6.3f} (target {'<=' if lower_is_better else '>='} "
          f"{target}; verdict in the report)", flush=True)
    results.append(dict(comparison=name, what=what, ours=a, ref=b, unit=unit,
                        median_ours=ma, median_ref=mb, ratio=ratio, target=target,
                        lower_is_better=lower_is_better))


def do_switch(n, results):
    name = "switch/roundtrip"
    a, b = rounds_of(n, lambda: bench("build/chaselev/bench", 1, f"^{name}$")[name][0],
                     lambda: bench("build/ref/boost_switch", None, f"^{name}$")[name][0])
    report(results, "switch", "jump_fcontext round trip vs Boost.Context (ns)", a, b, "ns", 1.0)


def do_fib(n, results):
    for w in (1, 2):
        name = "fib/n:30/real_time"
        a, b = rounds_of(n, lambda: bench("build/chaselev/bench", w, "^fib/n:30/")[name][0] / 1e6,
                         lambda: bench("build/ref/tbb/bench", w, "^fib/n:30/")[name][0] / 1e6)
        report(results, "fib", f"fib(30), chaselev vs oneTBB task_group, {w} worker(s)", a, b,
               "ms", 1.0)


def do_yield(n, results):
    name = "yield/threads:2/rounds:100000/real_time"
    # ours: 2 bthreads x 100000 yields each; Go: ns/op = one Gosched by each of two goroutines
    a, b = rounds_of(n, lambda: bench("build/chaselev/bench", 1, "^yield/threads:2/")[name][0] / 200000,
                     lambda: go_bench("Gosched", 1)["BenchmarkGosched"][0] / 2)
    report(results, "yield", "one yield, 2 bthreads on 1 worker vs Go Gosched (GOMAXPROCS=1)",
           a, b, "ns", 0.5)


def stealing_variants():
    """The built variants whose policy steals (`bench --policy`), in make's order."""
    build = Build(ROOT)
    return [v for v in build.variants if build.policy(v).get("steals")]


def do_spawn(n, results):
    name = "spawn/n:100000/real_time"
    for v in stealing_variants():
        a, b = rounds_of(n, lambda: bench(f"build/{v}/bench", 2, "^spawn/")[name][1]["items_per_second"] / 1e6,
                         lambda: bench("build/ref/pool/bench", 2, "^spawn/")[name][1]["items_per_second"] / 1e6)
        report(results, "spawn", f"tasks/s from one pthread, {v} vs pthread pool, 2 workers", a, b,
               "M/s", 1.0 if v == "chaselev" else 0.8, lower_is_better=False)
    # the steady state: 10^6 starts (a --full set), where start-up costs no longer count
    name = "spawn/n:1000000/real_time"
    for w in (1, 2):
        a, b = rounds_of(n, lambda: bench("build/chaselev/bench", w, "^spawn/n:1000000/", "0.3",
                                          full=True)[name][1]["items_per_second"] / 1e6,
                         lambda: bench("build/ref/pool/bench", w, "^spawn/n:1000000/", "0.3",
                                       full=True)[name][1]["items_per_second"] / 1e6)
        report(results, "spawn", f"10^6 tasks/s from one pthread, chaselev vs pthread pool, "
               f"{w} worker(s)", a, b, "M/s", 1.0, lower_is_better=False)


def flush_name(batch, frm):
    return f"spawn_batch/n:20000/batch:{batch}/from:{frm}/grain_ns:500/spin:0/late:0/real_time"


def do_flush(n, results, env):
    for v in ("chaselev", "half", "ref/ws"):
        for frm, who in ((0, "a pthread"), (1, "a worker")):
            def rate(batch):
                name = flush_name(batch, frm)
                return bench(f"build/{v}/bench", 2, "^" + re.escape(name) + "$", "0.3",
                             env)[name][1]["items_per_second"] / 1e6
            a, b = rounds_of(n, lambda: rate(32), lambda: rate(0))
            report(results, "flush", f"0.5 us tasks from {who}, {v.split('/')[-1]}: batches of 32 "
                   "vs one at a time", a, b, "M/s", 1.2, lower_is_better=False)


def sim_bench(variant, machine, workers, name):
    """One simulated point: (simulated ns, {counter: value}) of benchmark `name` (its
    workload's argument set) on build-sim/<variant>/simbench.  Deterministic: one run."""
    wl = name.split("/")[0]
    sets = simulated_listing(simulate.binary(variant)).get(wl, [])
    args = next((a for b, a in sets if b == name), None)
    if args is None:
        raise RuntimeError(f"simbench {variant}: no argument set {name}")
    with tempfile.TemporaryDirectory() as tmp:
        flat, out = os.path.join(tmp, "model.flat"), os.path.join(tmp, "b.json")
        atomic_write_text(flat, simmodel.flatten(simmodel.load(machine)))
        subprocess.run([simulate.binary(variant), "--model", flat, "--workers", str(workers),
                        "--workload", wl, "--args", args, "--reps", "1", "--out", out],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=900)
        _, entries = load_gb_file(out)
    e = next(e for e in entries if e.benchmark == name)
    return e.real_s * 1e9, e.counters


def do_flush_sim(results):
    for v in ("chaselev", "half"):
        for frm, who in ((0, "a pthread"), (1, "a worker")):
            def rate(batch):
                return 20000 / sim_bench(v, "epyc16", 16, flush_name(batch, frm))[0] * 1e3
            report(results, "flush-sim", f"SIMULATED epyc16, 16 workers, from {who}, {v}: 32 vs 1",
                   [rate(32)], [rate(0)], "M/s", 1.2, lower_is_better=False)


def do_article_ws(n, results, env):
    name = "article/delay_pct:50/late_pct:50/grain_us:100/tasks:1000/foreign:0/real_time"

    def rate(row):   # thousands of tasks per second over the window
        window = bench(f"build/ref/{row}/bench", 2, "^" + re.escape(name) + "$", "0.3",
                       env)[name][1]["window_s"]
        return 1000 / window / 1e3
    a, b = rounds_of(n, lambda: rate("ws"), lambda: rate("ws-nosteal"))
    report(results, "article-ws", "the article's scheduler, stealing (ws) vs its no-steal mode "
           "(ws-nosteal): d = 0.5, 100 us tasks, 2 workers, over the window (ideal 1.50x)",
           a, b, "k/s", 1.425, lower_is_better=False)


def do_task_cost(n, results):
    name = "spawn_batch/n:100000/batch:0/from:1/grain_ns:0/spin:0/late:0/real_time"
    pat = "^" + re.escape(name) + "$"
    a, b = rounds_of(n, lambda: bench("build/ref/ws/bench", 1, pat, "0.3", full=True)[name][0] / 1e5,
                     lambda: bench("build/chaselev/bench", 1, pat, "0.3", full=True)[name][0] / 1e5)
    report(results, "task-cost", "a task's cost, 10^5 empty tasks from a worker, 1 worker: the "
           "article's scheduler (ws) vs chaselev", a, b, "ns", 0.2)


def do_pingpong(n, results):
    name = "pingpong/mode:0/rounds:100000/real_time"
    for w in (1, 2):
        a, b = rounds_of(n, lambda: bench("build/chaselev/bench", w, "^pingpong/mode:0/")[name][0] / 100000,
                         lambda: go_bench("ChanPingPong", w)["BenchmarkChanPingPong"][0])
        report(results, "pingpong", f"mutex+cond round trip vs Go channels, {w} worker(s)", a, b,
               "ns", 0.75)


# ---- the imbalance rows' targets: what a perfect balancer gains over each pool ------
# The workload's task sizes and submitters (workloads/wl_kernel.h: wl_uniform, the
# shares, the late start), in units of the grain, so that each scenario's target is the
# gain it allows: a balanced one none, one submitter on the per-thread-queue pool 2x.
IMBALANCE_SEED = 0x1B873593
IMBALANCE_SLACK = 1.10   # a target is the ideal ratio plus 10% for the scheduler's costs
M64 = (1 << 64) - 1


def _mix64(x):
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def imbalance_sizes(imbalance, tasks, skew):
    """Task i's size in grains (wl_imbalance_task_iters, before rounding to iterations)."""
    seed = _mix64(IMBALANCE_SEED)
    sizes = []
    for i in range(tasks):
        u = (i + 0.5) / tasks if skew else (_mix64((i * 0x9E3779B97F4A7C15 + seed) & M64) >> 11) / 2.0**53
        sizes.append(max(0.0, 1 + (u - 0.5) * imbalance))
    return sizes


def imbalance_schedule(set_name, workers):
    """{placement: makespan in grains} for an imbalance set on `workers`: 'balancer' a
    perfect one (each task, in release order, to the worker free first); 'static' each
    submitter's tasks round-robin from worker 0 (place_static.h); 'affinity' each
    submitter's tasks on its home, homes round-robin (place_affinity.h)."""
    p = {k: float(v) for k, v in re.findall(r"(\w+):(\d+)", set_name)}
    tasks, subs = int(p["tasks"]), int(p["submitters"])
    sizes = imbalance_sizes(p["imbalance"], tasks, bool(p.get("skew")))
    late = bool(p.get("late")) and subs > 1
    delay = 0.5 * (tasks * (subs // 2) / subs) / workers if late else 0.0   # wl_late_delay_us
    jobs = []   # (release, size, static worker, affinity worker), in release order
    for s in range(subs):
        first, last = tasks * s // subs, tasks * (s + 1) // subs
        release = delay if late and s >= subs // 2 else 0.0
        jobs += [(release, sizes[i], k % workers, s % workers) for k, i in enumerate(range(first, last))]
    jobs.sort(key=lambda j: j[0])
    free = [0.0] * workers
    for release, size, _, _ in jobs:
        w = min(range(workers), key=free.__getitem__)
        free[w] = max(free[w], release) + size
    out = {"balancer": max(free)}
    for name, col in (("static", 2), ("affinity", 3)):
        free = [0.0] * workers
        for job in jobs:
            free[job[col]] = max(free[job[col]], job[0]) + job[1]
        out[name] = max(free)
    return out


def imbalance_target(set_name, ref, workers=2):
    """The target ratio (ours / theirs, time) against a reference: par with oneTBB, which
    balances too; against a pool without stealing, the ideal ratio plus the slack."""
    if ref == "tbb":
        return 1.0
    times = imbalance_schedule(set_name, workers)
    return round(times["balancer"] / times[ref] * IMBALANCE_SLACK, 3)


def do_imbalance(n, results, env):
    sets = [m for m in bench("build/chaselev/bench", 2, "^imbalance/", "0.01", env)]
    for s in sets:
        pat = "^" + re.escape(s) + "$"
        for other in ("build/static/bench", "build/affinity/bench", "build/ref/tbb/bench"):
            try:
                a, b = rounds_of(n, lambda: bench("build/chaselev/bench", 2, pat, "0.2", env)[s][0] / 1e6,
                                 lambda: bench(other, 2, pat, "0.2", env)[s][0] / 1e6)
            except KeyError:
                continue  # the reference does not offer this set
            ref = other.split("/")[-2]
            report(results, "imbalance", f"{s.replace('/real_time', '')} vs {ref}", a, b, "ms",
                   imbalance_target(s, ref))


def do_blocked(results):
    name = "blocked/n:1000000/real_time"
    ours = bench("build/chaselev/bench", 2, "^blocked/n:1000000/", "0.01", full=True)[name][1]
    go = go_bench("Blocked1M", 2, "1x")["BenchmarkBlocked1M"]
    report(results, "blocked", "10^6 blocked: create+block+release+join (s), 2 workers",
           [ours["total_s"]], [go[0] / 1e9], "s", 1.0)
    report(results, "blocked", "10^6 blocked: peak RSS (MiB), 2 workers",
           [ours["peak_rss_mb"]], [go[1].get("peak_rss_mb", float("nan"))], "MiB", 1.5)


# Ten rounds a side: the fewest with which a comparison can be decided in the family of
# the targets (compare.py; with 5, the smallest p is 0.0079 against 0.05 / 43 needed).
TARGET_ROUNDS = 10

# each comparison: its function, called with (rounds, results, env); in the order measured
MEASURES = {
    "switch": lambda n, res, env: do_switch(n, res),
    "fib": lambda n, res, env: do_fib(n, res),
    "yield": lambda n, res, env: do_yield(n, res),
    "spawn": lambda n, res, env: do_spawn(n, res),
    "flush": do_flush,
    "flush-sim": lambda n, res, env: do_flush_sim(res),
    "article-ws": do_article_ws,
    "task-cost": lambda n, res, env: do_task_cost(n, res),
    "pingpong": lambda n, res, env: do_pingpong(n, res),
    "imbalance": do_imbalance,
    "blocked": lambda n, res, env: do_blocked(res),
}
KNOWN = tuple(MEASURES)


def check_only(only):
    """The comparisons named (a list); UsageError naming an unknown one."""
    for what in only:
        if what not in KNOWN:
            raise UsageError(f"unknown comparison {what!r} (known: {', '.join(KNOWN)})")
    return only


def measure(only, rounds):
    """Run the named comparisons (check_only's list) in `rounds` alternating rounds: the
    targets.json record (harness/driver/targetfile.py)."""
    SEEN_REVISIONS.clear()
    doc = dict(format=targetfile.FORMAT, rounds=rounds, started=now_iso(), finished=None,
               git=git_info(ROOT), only=list(only))
    results, not_measured = [], []
    env = {"SCHEDBENCH_ITERS_PER_US": os.environ.get("SCHEDBENCH_ITERS_PER_US", "")}
    for what in only:
        try:
            if what in ("imbalance", "flush", "article-ws") and not env["SCHEDBENCH_ITERS_PER_US"]:
                rate = bench("build/chaselev/bench", 1, "^imbalance/imbalance:0/", "0.01")
                env["SCHEDBENCH_ITERS_PER_US"] = repr(next(iter(rate.values()))[1]["iters_per_us"])
            MEASURES[what](rounds, results, env)
        except (OSError, RuntimeError, KeyError, StopIteration, subprocess.SubprocessError) as e:
            why = str(e) or type(e).__name__
            print(f"{what:10s} could not be measured: {why}", flush=True)
            not_measured.append(dict(comparison=what, why=why))
    doc.update(finished=now_iso(), comparisons=results, not_measured=not_measured,
               revisions={b: sorted(r) for b, r in sorted(SEEN_REVISIONS.items())})
    return doc


def write_into_run(run_dir, doc):
    """Keep the record as the run's targets.json (atomically: a crash leaves the old one)."""
    atomic_write_json(os.path.join(run_dir, targetfile.FILE), doc, sort_keys=False)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=TARGET_ROUNDS)
    p.add_argument("--only", default=",".join(KNOWN))
    p.add_argument("--json", help="also write the record (targets.json's format) here")
    a = p.parse_args()
    if a.rounds < 1:
        p.error("--rounds must be at least 1")
    try:
        only = check_only(a.only.split(","))
    except UsageError as e:
        p.error(str(e))
    doc = measure(only, a.rounds)
    if a.json:
        atomic_write_json(a.json, doc, sort_keys=False)


if __name__ == "__main__":
    main()
