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

Comparisons, each with its target (ours / theirs):
  switch      ours vs Boost.Context fcontext round trip                 <= 1.0x
  fib         fib(30), chaselev vs oneTBB task_group, 1 and 2 workers   <= 1.0x
  yield       yield round trip vs Go runtime.Gosched, GOMAXPROCS=1      <= 0.5x
  spawn       tasks/s from one foreign pthread vs the plain pthread pool: 10^5 tasks at
              2 workers, every stealing variant (chaselev >= 1.0x, the others >= 0.8x);
              10^6 tasks, the steady state: chaselev at 1 and 2 workers >= 1.0x, every
              other stealing variant at 2 workers >= 0.9x
  flush       NOSIGNAL + bthread_flush in batches of 32 vs one signal per task, 0.5 us
              tasks, from a pthread and from a worker, chaselev and half; the same batch
              on the article's scheduler (ws)                            >= 1.2x
  flush-sim   the same at 16 workers, SIMULATED on the epyc16 model (make sim): the case
              the target is about, where starts find workers idle       >= 1.2x
  article-ws  the article's own scheduler stealing (ws) vs its no-steal mode
              (ws-nosteal), the article's case (d = 0.5, 100 us tasks), 2 workers, tasks
              per second over the experiment's window: within 5% of the ideal 1.50x,
              >= 1.425x
  task-cost   a task's cost: 10^5 empty tasks started one at a time from a worker, 1
              worker, ws vs chaselev, ns per task: <= 0.2x (a function-pointer pool
              should cost a fifth of a bthread or less)
  pingpong    mutex+cond round trip vs Go unbuffered channels, 1 and 2  <= 0.75x
  imbalance   chaselev vs each pool that keeps tasks where it placed them (by its
              policy: bench --policy) and oneTBB at 2 workers, each scenario: oneTBB
              <= 1.0x; a pool without stealing within 10% of what a perfect balancer
              gains over it, from the tasks' sizes and placement (ideal.py)
  blocked     10^6 blocked bthreads vs 10^6 goroutines: time <= 1.0x, RSS <= 1.5x
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
from .ideal import imbalance_target, placement  # noqa: E402
from .build import Build  # noqa: E402
from .commands import bench_argv, simbench_argv  # noqa: E402
from .config import ARTICLE_DESIGN_POOL, ARTICLE_DESIGN_STEALING, REPRESENTATIVE, ROOT, UsageError  # noqa: E402
from .files import atomic_write_json, atomic_write_text  # noqa: E402
from .gbjson import BadResultFile, load_gb_file  # noqa: E402
from .fmt import now_iso  # noqa: E402
from .machine import git_info  # noqa: E402

GO_DIR = os.path.join(ROOT, "harness", "ref", "go")
OURS = f"build/{REPRESENTATIVE}/bench"
WS, WS_NOSTEAL = (f"build/ref/{r}/bench" for r in (ARTICLE_DESIGN_STEALING, ARTICLE_DESIGN_POOL))
POOL = "build/ref/pool/bench"      # the textbook mutex+condvar pool
TBB = "build/ref/tbb/bench"
PARTIAL = "targets.partial.json"   # a stopped measurement's comparisons, for its resumption

# binary (relative to ROOT) -> the git revisions its JSON contexts recorded, for the
# record's check that every binary was built from the measured revision; measure()
# starts it afresh (or from the stopped measurement it resumes)
SEEN_REVISIONS = {}


def _output(log):
    """Where a child's output goes: appended to the log file, else nowhere."""
    return open(log, "a", encoding="utf-8") if log else open(os.devnull, "w", encoding="utf-8")


def run_logged(cmd, log, env=None, cwd=None, capture=False):
    """Run cmd (check=True); its stderr, and its stdout unless captured, appended to log
    after its command line.  Returns its stdout when captured."""
    with _output(log) as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        p = subprocess.run(cmd, stdout=subprocess.PIPE if capture else f, stderr=f, env=env,
                           cwd=cwd, text=True, timeout=900)
        if capture:
            f.write(p.stdout)
    if p.returncode != 0:
        raise subprocess.CalledProcessError(p.returncode, cmd)
    return p.stdout


def bench(binary, workers, name_re, min_time="0.3", env=None, full=False, log=None):
    """One bench invocation; {benchmark name: (real ns, {counter: value})} of its entries."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "b.json")
        e = dict(os.environ, **(env or {}))
        if full:
            e["SCHEDBENCH_FULL"] = "1"
        run_logged(bench_argv(os.path.join(ROOT, binary), out, name_re, workers, min_time),
                   log, env=e)
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


def go_bench(pattern, procs, benchtime="1s", log=None):
    """Go's testing benchmarks: {name: (ns/op, {metric: value})}."""
    if not shutil.which("go"):
        raise RuntimeError("no Go toolchain (apt-get install golang-go)")
    env = dict(os.environ, GO111MODULE="off", GOMAXPROCS=str(procs),
               GOCACHE=os.path.join(tempfile.gettempdir(), "schedbench-gocache"))
    out = run_logged(["go", "test", "-run", "xxx", "-bench", pattern, f"-benchtime={benchtime}",
                      "-cpu", str(procs)], log, env=env, cwd=GO_DIR, capture=True)
    res = {}
    for line in out.splitlines():
        m = re.match(r"(Benchmark\w+)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op(.*)", line)
        if m:
            extra = dict((k, float(v)) for v, k in re.findall(r"([\d.]+) (\w+)", m.group(3)))
            res[m.group(1)] = (float(m.group(2)), extra)
    return res


def sim_bench(variant, machine, workers, name, log=None):
    """One simulated point: (simulated ns, {counter: value}) of benchmark `name` (its
    workload's argument set) on build-sim/<variant>/simbench.  Deterministic: one run."""
    with tempfile.TemporaryDirectory() as tmp:
        flat, out = os.path.join(tmp, "model.flat"), os.path.join(tmp, "b.json")
        atomic_write_text(flat, simmodel.flatten(simmodel.load(machine)))
        run_logged(simbench_argv(simulate.binary(variant), flat, workers, name, 1, out=out), log)
        _, entries = load_gb_file(out)
    e = next(e for e in entries if e.benchmark == name)
    return e.real_s * 1e9, e.counters


def rounds_of(n, ours, theirs):
    """Alternate the two measurements n times; lists of their values."""
    a, b = [], []
    for _ in range(n):
        a.append(ours())
        b.append(theirs())
    return a, b


class Session:
    """One measurement of the targets: its rounds, the benches' environment, where their
    output goes (log_dir/<comparison>.log, or nowhere), the comparisons recorded so far
    (those of a stopped measurement it resumes take their place in the measuring order
    when it reaches them) and `save`, called with the record after each comparison so
    that a stop loses at most the one being measured."""

    def __init__(self, rounds, env, log_dir=None, kept=(), save=None):
        self.rounds, self.env, self.log_dir, self.save = rounds, env, log_dir, save
        self.results = []
        self.kept = {(c["comparison"], c["what"]): c for c in kept}
        self.comparison = None     # the one being measured: its log's name
        self._policies = None

    def log(self):
        if not self.log_dir:
            return None
        os.makedirs(self.log_dir, exist_ok=True)
        return os.path.join(self.log_dir, f"{self.comparison}.log")

    def bench(self, binary, workers, name_re, min_time="0.3", full=False):
        return bench(binary, workers, name_re, min_time, self.env, full, log=self.log())

    def go(self, pattern, procs, benchtime="1s"):
        return go_bench(pattern, procs, benchtime, log=self.log())

    def sim(self, variant, machine, workers, name):
        return sim_bench(variant, machine, workers, name, log=self.log())

    def policies(self):
        """{variant: its policy's properties} of the built variants (`bench --policy`), in
        make's order: the comparisons choose their variants by these, never by name."""
        if self._policies is None:
            build = Build(ROOT)
            self._policies = {v: build.policy(v) for v in build.variants}
        return self._policies

    def compare(self, what, ours, theirs, unit, target, lower_is_better=True, rounds=None):
        """Measure ours and theirs in alternating rounds and record them, unless the
        stopped measurement this one resumes recorded them already."""
        kept = self.kept.pop((self.comparison, what), None)
        if kept:
            print(f"{self.comparison:10s} {what}: kept from the stopped measurement", flush=True)
            self.results.append(kept)
            return
        a, b = rounds_of(rounds or self.rounds, ours, theirs)
        report(self.results, self.comparison, what, a, b, unit, target, lower_is_better)
        if self.save:
            self.save(self.recorded())

    def recorded(self):
        """The comparisons in the order measured, then the kept ones not reached (yet)."""
        return self.results + list(self.kept.values())


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


def do_switch(t):
    name = "switch/roundtrip"
    t.compare("jump_fcontext round trip vs Boost.Context (ns)",
              lambda: t.bench(OURS, 1, f"^{name}$")[name][0],
              lambda: t.bench("build/ref/boost_switch", None, f"^{name}$")[name][0], "ns", 1.0)


def do_fib(t):
    name = "fib/n:30/real_time"
    for w in (1, 2):
        t.compare(f"fib(30), {REPRESENTATIVE} vs oneTBB task_group, {w} worker(s)",
                  lambda: t.bench(OURS, w, "^fib/n:30/")[name][0] / 1e6,
                  lambda: t.bench(TBB, w, "^fib/n:30/")[name][0] / 1e6, "ms", 1.0)


def do_yield(t):
    name = "yield/threads:2/rounds:100000/real_time"
    # ours: 2 bthreads x 100000 yields each; Go: ns/op = one Gosched by each of two goroutines
    t.compare("one yield, 2 bthreads on 1 worker vs Go Gosched (GOMAXPROCS=1)",
              lambda: t.bench(OURS, 1, "^yield/threads:2/")[name][0] / 200000,
              lambda: t.go("Gosched", 1)["BenchmarkGosched"][0] / 2, "ns", 0.5)


def do_spawn(t):
    def rate(binary, workers, n, full=False):    # millions of tasks per second
        name = f"spawn/n:{n}/real_time"
        return t.bench(binary, workers, f"^spawn/n:{n}/", full=full)[name][1][
            "items_per_second"] / 1e6
    stealing = [v for v, p in t.policies().items() if p.get("steals")]
    for v in stealing:
        t.compare(f"tasks/s from one pthread, {v} vs pthread pool, 2 workers",
                  lambda: rate(f"build/{v}/bench", 2, 100000), lambda: rate(POOL, 2, 100000),
                  "M/s", 1.0 if v == REPRESENTATIVE else 0.8, lower_is_better=False)
    # the steady state: 10^6 starts (a --full set), where start-up costs no longer count;
    # every stealing variant at 2 workers, where the idling and stealing policies differ
    for v, w in [(REPRESENTATIVE, 1)] + [(v, 2) for v in stealing]:
        t.compare(f"10^6 tasks/s from one pthread, {v} vs pthread pool, {w} worker(s)",
                  lambda: rate(f"build/{v}/bench", w, 1000000, True),
                  lambda: rate(POOL, w, 1000000, True),
                  "M/s", 1.0 if v == REPRESENTATIVE else 0.9, lower_is_better=False)


def flush_name(batch, frm):
    return f"spawn_batch/n:20000/batch:{batch}/from:{frm}/grain_ns:500/spin:0/late:0/real_time"


def flush_variants(t):
    """The representative variant and those stealing half a queue (steal_batch -1)."""
    return [REPRESENTATIVE] + [v for v, p in t.policies().items()
                               if p.get("steal_batch") == -1 and v != REPRESENTATIVE]


def do_flush(t):
    for v in flush_variants(t) + ["ref/" + ARTICLE_DESIGN_STEALING]:
        for frm, who in ((0, "a pthread"), (1, "a worker")):
            def rate(batch):
                name = flush_name(batch, frm)
                return t.bench(f"build/{v}/bench", 2, "^" + re.escape(name) + "$")[name][1][
                    "items_per_second"] / 1e6
            t.compare(f"0.5 us tasks from {who}, {v.split('/')[-1]}: batches of 32 vs one at a time",
                      lambda: rate(32), lambda: rate(0), "M/s", 1.2, lower_is_better=False)


def do_flush_sim(t):
    for v in flush_variants(t):
        for frm, who in ((0, "a pthread"), (1, "a worker")):
            def rate(batch):
                return 20000 / t.sim(v, "epyc16", 16, flush_name(batch, frm))[0] * 1e3
            t.compare(f"SIMULATED epyc16, 16 workers, from {who}, {v}: 32 vs 1",
                      lambda: rate(32), lambda: rate(0), "M/s", 1.2, lower_is_better=False,
                      rounds=1)


def do_article_ws(t):
    name = "article/delay_pct:50/late_pct:50/grain_us:100/tasks:1000/foreign:0/real_time"

    def rate(binary):   # thousands of tasks per second over the window
        window = t.bench(binary, 2, "^" + re.escape(name) + "$")[name][1]["window_s"]
        return 1000 / window / 1e3
    t.compare("the article's scheduler, stealing (ws) vs its no-steal mode (ws-nosteal): "
              "d = 0.5, 100 us tasks, 2 workers, over the window (ideal 1.50x)",
              lambda: rate(WS), lambda: rate(WS_NOSTEAL), "k/s", 1.425, lower_is_better=False)


def do_task_cost(t):
    name = "spawn_batch/n:100000/batch:0/from:1/grain_ns:0/spin:0/late:0/real_time"
    pat = "^" + re.escape(name) + "$"
    t.compare(f"a task's cost, 10^5 empty tasks from a worker, 1 worker: the article's "
              f"scheduler (ws) vs {REPRESENTATIVE}",
              lambda: t.bench(WS, 1, pat, full=True)[name][0] / 1e5,
              lambda: t.bench(OURS, 1, pat, full=True)[name][0] / 1e5, "ns", 0.2)


def do_pingpong(t):
    name = "pingpong/mode:0/rounds:100000/real_time"
    for w in (1, 2):
        t.compare(f"mutex+cond round trip vs Go channels, {w} worker(s)",
                  lambda: t.bench(OURS, w, "^pingpong/mode:0/")[name][0] / 100000,
                  lambda: t.go("ChanPingPong", w)["BenchmarkChanPingPong"][0], "ns", 0.75)


def do_imbalance(t):
    sets = list(t.bench(OURS, 2, "^imbalance/", "0.01"))
    # each pool that keeps tasks where it placed them, and oneTBB (a balancer)
    others = [(f"build/{v}/bench", v, placement(p)) for v, p in t.policies().items()
              if placement(p)] + [(TBB, "tbb", None)]
    for s in sets:
        pat = "^" + re.escape(s) + "$"
        for binary, ref, place in others:
            try:
                t.compare(f"{s.replace('/real_time', '')} vs {ref}",
                          lambda: t.bench(OURS, 2, pat, "0.2")[s][0] / 1e6,
                          lambda: t.bench(binary, 2, pat, "0.2")[s][0] / 1e6, "ms",
                          imbalance_target(s, place))
            except KeyError:
                continue  # the reference does not offer this set


def do_blocked(t):
    name = "blocked/n:1000000/real_time"
    ours = t.bench(OURS, 2, "^blocked/n:1000000/", "0.01", full=True)[name][1]
    go = t.go("Blocked1M", 2, "1x")["BenchmarkBlocked1M"]
    t.compare("10^6 blocked: create+block+release+join (s), 2 workers",
              lambda: ours["total_s"], lambda: go[0] / 1e9, "s", 1.0, rounds=1)
    t.compare("10^6 blocked: peak RSS (MiB), 2 workers", lambda: ours["peak_rss_mb"],
              lambda: go[1].get("peak_rss_mb", float("nan")), "MiB", 1.5, rounds=1)


# Ten rounds a side: the fewest with which a comparison can be decided in the family of
# the targets (compare.py; with 5, the smallest p is 0.0079 against 0.05 / 43 needed).
TARGET_ROUNDS = 10

# each comparison, in the order measured: its function, called with the Session
MEASURES = {
    "switch": do_switch,
    "fib": do_fib,
    "yield": do_yield,
    "spawn": do_spawn,
    "flush": do_flush,
    "flush-sim": do_flush_sim,
    "article-ws": do_article_ws,
    "task-cost": do_task_cost,
    "pingpong": do_pingpong,
    "imbalance": do_imbalance,
    "blocked": do_blocked,
}
KNOWN = tuple(MEASURES)
NEED_ITERS = ("imbalance", "flush", "article-ws")   # their kernels' iterations per us


def check_only(only):
    """The comparisons named (a list); UsageError naming an unknown one."""
    for what in only:
        if what not in KNOWN:
            raise UsageError(f"unknown comparison {what!r} (known: {', '.join(KNOWN)})")
    return only


def resumable(partial, rounds, git):
    """The comparisons a stopped measurement recorded in `partial` (its record, or None)
    that this one may keep: those of the same rounds and the same measured code
    (targetfile.stale against the tree now); [] otherwise."""
    if not isinstance(partial, dict) or partial.get("rounds") != rounds:
        return []
    if targetfile.stale(partial, git):
        return []
    kept = partial.get("comparisons")
    if not isinstance(kept, list) or any(targetfile.comparison_problem(c) for c in kept):
        return []
    return kept


def measure(only, rounds, log_dir=None, partial=None, save=None):
    """Run the named comparisons (check_only's list) in `rounds` alternating rounds: the
    targets.json record (harness/driver/targetfile.py).  Each bench's output goes to
    log_dir; `save` gets the record so far (unfinished) after each comparison; a stopped
    measurement's record (`partial`) gives the comparisons kept, when resumable."""
    git = git_info(ROOT)
    kept = resumable(partial, rounds, git)
    SEEN_REVISIONS.clear()
    env = {"SCHEDBENCH_ITERS_PER_US": os.environ.get("SCHEDBENCH_ITERS_PER_US", "")}
    if kept:
        for b, revs in (partial.get("revisions") or {}).items():
            SEEN_REVISIONS.setdefault(b, set()).update(revs)
        env.update(partial.get("env") or {})
        print(f"targets: resuming: {len(kept)} comparison(s) kept from the stopped "
              f"measurement", flush=True)
    doc = dict(format=targetfile.FORMAT, rounds=rounds, started=now_iso(), finished=None,
               git=git, only=list(only), env=env)

    def record(results, not_measured=()):
        doc.update(comparisons=list(results), not_measured=list(not_measured),
                   revisions={b: sorted(r) for b, r in sorted(SEEN_REVISIONS.items())})
        return doc

    t = Session(rounds, env, log_dir, [c for c in kept if c["comparison"] in only],
                save=(lambda results: save(record(results))) if save else None)
    not_measured = []
    for what in only:
        t.comparison = what
        try:
            if what in NEED_ITERS and not env["SCHEDBENCH_ITERS_PER_US"]:
                rate = t.bench(OURS, 1, "^imbalance/imbalance:0/", "0.01")
                env["SCHEDBENCH_ITERS_PER_US"] = repr(next(iter(rate.values()))[1]["iters_per_us"])
            MEASURES[what](t)
        except (OSError, RuntimeError, KeyError, StopIteration, subprocess.SubprocessError) as e:
            why = str(e) or type(e).__name__
            print(f"{what:10s} could not be measured: {why}", flush=True)
            not_measured.append(dict(comparison=what, why=why))
    record(t.recorded(), not_measured)
    doc["finished"] = now_iso()
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
