"""The policy map's grid (`./run.py map`, policymap.py): the forms of imbalance and the
workload argument sets that express each, the task grains, the worker counts measured
here and SIMULATED on the machine models, and what running it all costs.

A cell of the map is (form, grain, workers, machine): `here` for a measured cell, a
model for a SIMULATED one.  A form is one workload with some of its parameters fixed;
the grain parameter and the task count vary with the cell (size_of: about `work_ns` of
total work, at least MIN_TASKS_PER_WORKER tasks a worker, at most `cap`).  The rules
reproduce the workloads' registered argument sets at the grains they register, so a
measured cell is simply a registered benchmark whose name the rule gives: the measured
sweep runs the sets a bench lists (its points filter that listing; simbench runs any
set by name, --set), and the measured grid is what they cover (MISSING)."""

import dataclasses
import math
import os
import statistics

from .gbjson import params_of, workload_of

# The grain axis: 0.1 us to 1 ms in half decades (nanoseconds).  The default SIMULATED
# part takes every other value (the decades; SIM_GRAINS_NS), which keeps it near an hour
# with --jobs 2 here (estimate_sim); `--sim-grains all` takes them all.
GRAINS_NS = (100, 300, 1000, 3000, 10000, 30000, 100000, 300000, 1000000)
SIM_GRAINS_NS = (100, 1000, 10000, 100000, 1000000)
MEASURED_WORKERS = (1, 2)
# The machine models and the worker counts SIMULATED on each.
MODELS = (("epyc16", (4, 16)), ("twosocket64", (64,)), ("numa128", (128,)))
MIN_TASKS_PER_WORKER = 8
# A form with one submitter is bound by its starts (a few us each) below a grain of some
# us x P: its simulated time, and the simulation's cost, grow with its task count (every
# idle worker probing all the while: numa at 128 workers costs 100 s of CPU for 20000
# tasks of 1 us), so its SIMULATED cells take at most this many tasks.
SUBMITTER_SIM_CAP = 2000


@dataclasses.dataclass(frozen=True)
class Form:
    """One form of imbalance: a workload with `fixed` parameters; `grain` names its grain
    parameter (None: a task tree, at the workload's own grain) and `size` its task
    count; `metric` is what the cell compares (lower is better)."""
    key: str
    words: str
    workload: str
    fixed: tuple
    grain: str = None
    size: str = None
    work_ns: float = 0.0
    cap: int = 20000
    sim_cap: int = None           # at most this many tasks SIMULATED (default: cap)
    per_worker: bool = False      # the task count a multiple of the workers
    metric: str = "real_time_s"
    sim_fixed: tuple = ()         # parameters a SIMULATED point sets otherwise
    simulate: bool = True         # in the default SIMULATED grid

    def params(self, grain_ns, workers, simulated):
        """{parameter: value} of the cell's argument set, or None where the form cannot
        express the grain (an integer grain in microseconds below 1 us)."""
        out = dict(self.fixed)
        if simulated:
            out.update(self.sim_fixed)
        if self.grain is None:
            return out if grain_ns is None else None
        if grain_ns is None:
            return None
        if self.grain.endswith("_us"):
            if grain_ns % 1000:
                return None
            out[self.grain] = grain_ns // 1000
        else:
            out[self.grain] = grain_ns
        cap = self.sim_cap if simulated and self.sim_cap else self.cap
        tasks = min(cap, max(MIN_TASKS_PER_WORKER * workers, round(self.work_ns / grain_ns)))
        if self.per_worker:
            tasks = -(-tasks // workers) * workers
        out[self.size] = tasks
        return out

    def grain_of(self, params):
        """The grain (ns) of an argument set of this form, None for a tree; raises
        KeyError/ValueError for a set that is not of this form."""
        for k, v in self.fixed:
            if str(params[k]) != str(v):
                raise ValueError(k)
        if self.grain is None:
            return None
        value = int(params[self.grain])
        return value * 1000 if self.grain.endswith("_us") else value


FORMS = (
    Form("none", "no imbalance: equal tasks, one submitter on each worker, none late",
         "article", (("delay_pct", 0), ("late_pct", 50), ("foreign", 0)), "grain_us",
         "tasks", 100e6, per_worker=True, metric="window_s"),
    Form("late", "late submitters: equal tasks, half of the submitters late by d = 0.5 x W/P",
         "article", (("delay_pct", 50), ("late_pct", 50), ("foreign", 0)), "grain_us",
         "tasks", 100e6, per_worker=True, metric="window_s"),
    Form("skewed", "skewed sizes: 0x to 2x the grain, rising along the list, from one "
         "foreign submitter", "imbalance",
         (("imbalance", 2), ("submitters", 1), ("late", 0), ("skew", 1)), "grain_us",
         "tasks", 200e6, sim_cap=SUBMITTER_SIM_CAP),
    Form("foreign", "one foreign submitter: equal tasks from one plain pthread, a wake-up each",
         "spawn_batch", (("batch", 0), ("from", 0), ("spin", 0), ("late", 0)), "grain_ns", "n", 40e6,
         sim_cap=SUBMITTER_SIM_CAP),
    Form("fib", "task tree: fib(25), a task per call, almost no work in each", "fib",
         (("n", 25),)),
    Form("uts", "task tree: UTS T1, uneven subtrees found by stealing", "uts", (("tree", 1),),
         simulate=False),
    Form("arrival-p99", "open arrival into busy workers: tiny tasks from a pthread every "
         "20 us, p99 of their start latency", "latency",
         (("probes", 2000), ("busy", 2), ("gap_us", 20)), metric="p99_us",
         sim_fixed=(("probes", 200),)),
    Form("arrival-p50", "open arrival into busy workers: the same, p50 of the start latency",
         "latency", (("probes", 2000), ("busy", 2), ("gap_us", 20)), metric="p50_us",
         sim_fixed=(("probes", 200),)),
)
FORM_BY_KEY = {f.key: f for f in FORMS}

# What the map cannot express with the workloads as they are, and what would express it:
# the report prints it (tests/py/test_map.py checks that each names a real parameter).
MISSING = (
    ("open arrival at 50% and 90% load",
     "`latency` sends empty probes (no work per task) every `gap_us` whole microseconds "
     "while its `busy` background tasks keep every worker fully loaded: the load cannot be "
     "set.  A `probe_ns` parameter (the work of each probe) and a `gap_ns` one, with "
     "`busy` 0, would set it as probe_ns / (gap_ns x P).  The map's nearest form is "
     "`arrival` (probes into saturated workers, p50 and p99)."),
    ("grains below 1 us for the none, late and skewed forms",
     "`article` and `imbalance` take `grain_us`, a whole number of microseconds; a "
     "`grain_ns` parameter (as `spawn_batch` has) would reach 0.1 us.  Only the `foreign` "
     "form covers the whole grain axis."),
    ("task trees on the grain axis",
     "`fib` takes only `n` (its tasks do almost no work) and `uts` only `tree` (one SHA-1 "
     "per node; UTS's own granularity parameter, the SHA-1 rounds per node, is not one of "
     "its parameters): the trees sit at their own grain.  A per-task work parameter "
     "(`grain_ns`) on either would put them on the grain axis."),
    ("measured cells at any grain",
     "the measured sweep runs the argument sets a bench (harness/bench) lists, a "
     "workload's default, full and test sets, through a filter on that listing: a measured "
     "cell exists where a registered set falls on the grid.  The SIMULATED sweep names "
     "each set it runs (the driver's --set), which the measured one could do too."),
    ("UTS SIMULATED",
     "the `tree` values `uts` registers are the standard UTS trees of 4.1 million nodes "
     "(and a test tree too small for more than a few workers), each node's SHA-1 "
     "computed for real in the simulation: T1 alone would cost more than the rest of the "
     "SIMULATED map; `--sim-forms` adds it.  A mid-size tree (a `tree` value of some "
     "10^5 nodes) would make it affordable."),
)


def bench_name(workload, params, order):
    """The benchmark name of an argument set: 'fib/n:25/real_time' (params in `order`)."""
    return "/".join([workload] + [f"{k}:{params[k]}" for k in order] + ["real_time"])


def arg_order(listing, workload):
    """The workload's parameter names in their order, from a listed benchmark name (a
    simbench listing {workload: [name]} or a list of names)."""
    names = listing.get(workload, []) if isinstance(listing, dict) else \
        [n for n in listing if workload_of(n) == workload]
    return list(params_of(names[0])) if names else None


def form_of(benchmark, forms=FORMS):
    """[(form, grain_ns)] of a benchmark name: every form whose fixed parameters it has."""
    params, out = params_of(benchmark), []
    for f in forms:
        if f.workload != workload_of(benchmark):
            continue
        try:
            out.append((f, f.grain_of(params)))
        except (KeyError, ValueError):
            continue
    return out


def cell_names(forms, grains, workers, order_of, simulated):
    """{benchmark name: (form, grain_ns)} of the cells at one worker count; order_of:
    workload -> its parameter order (None: the workload is not there, its forms left
    out)."""
    out = {}
    for f in forms:
        order = order_of(f.workload)
        if order is None:
            continue
        for g in ([None] if f.grain is None else grains):
            params = f.params(g, workers, simulated)
            if params is None:
                continue
            if set(params) != set(order):
                raise ValueError(f"form {f.key}: parameters {sorted(params)} are not "
                                 f"{f.workload}'s {order}")
            out.setdefault(bench_name(f.workload, params, order), (f, g))
    return out


def grain_words(grain_ns):
    """'0.1 us', '10 us', '1 ms'; 'own' for a tree's."""
    if grain_ns is None:
        return "own"
    if grain_ns >= 1000000:
        return f"{grain_ns / 1e6:g} ms"
    return f"{grain_ns / 1e3:g} us"


def parse_grains(text):
    """'all' | 'decades' | '0.1,1,10' (microseconds) -> grains in ns, sorted."""
    if text in (None, "", "decades"):
        return list(SIM_GRAINS_NS)
    if text == "all":
        return list(GRAINS_NS)
    out = set()
    for part in text.split(","):
        v = float(part)
        if not (v > 0 and math.isfinite(v)):
            raise ValueError(part)
        out.add(int(round(v * 1000)))
    return sorted(out)


def parse_models(items):
    """['epyc16:4,16', 'numa128:128'] -> [(model, (workers...))]; None -> MODELS."""
    if not items:
        return [(m, tuple(w)) for m, w in MODELS]
    out = []
    for item in items:
        name, _, workers = item.partition(":")
        counts = tuple(sorted({int(w) for w in workers.split(",") if w.strip()}))
        if not name or not counts or min(counts) < 1:
            raise ValueError(item)
        out.append((name, counts))
    return out


# --- what it costs --------------------------------------------------------------------

# simbench CPU seconds per run (its warm-up and one repetition) on this 2-core VM, as
# a + b x P + c x P^2 for P workers: every idle worker probes for as long as the run
# lasts, so the cost grows faster than P.  The default line goes through the mean cost
# of a cell of the default grid (article at 1 us and 1 ms, skewed at 1 us, foreign at
# 0.1 us; chaselev, numa, spin and threadpool) timed with `time` on a quiet machine (load
# average about 1): 0.36 s at 16 workers, 1.07 at 64, 3.66 at 128 (0.42 at 4, and all ten
# variants at 128 at 3.0, with the load about 2).  The forms that cost otherwise have their
# own line: uts hashes 4.1 million nodes for real, latency's busy workers poll the clock,
# and arrival-p50 shares arrival-p99's runs.
SIM_RUN_S = (0.31, 0.0, 0.000205)
SIM_RUN_FORM = {"uts": (6.0, 0.25, 0.0), "arrival-p99": (0.35, 0.04, 0.0),
                "arrival-p50": (0.0, 0.0, 0.0)}
# measured: a bench invocation's start (process, topology, the answer's cache) beside
# its iterations, and the fewest iterations Google Benchmark runs
BENCH_START_S = 0.12


def sim_run_seconds(form, workers):
    a, b, c = SIM_RUN_FORM.get(form.key, SIM_RUN_S)
    return a + b * workers + c * workers * workers


def band_share(within):
    """The share of a cell's variants re-simulated at the band's ends, as a trial map
    found it (10 variants on epyc16 at 16 and numa128 at 128 workers: about 60% within
    10% of the winner, 85% within 25%); every variant when within is None."""
    if within is None:
        return 1.0
    return 0.6 if within <= 0.1 else 0.85 if within <= 0.25 else 1.0


def estimate_sim(cells, variants, ends, candidates=1.0, jobs=1):
    """Seconds of the SIMULATED part: every (form, grain, workers) cell of `cells` for
    every variant, once nominal and `ends` times at the band's ends for the share
    `candidates` of the variants; divided over `jobs`.  A form whose points another form
    shares (arrival's two metrics) costs nothing more."""
    cpu = 0.0
    for form, _, workers in cells:
        cpu += sim_run_seconds(form, workers) * variants * (1 + ends * candidates)
    return cpu / max(1, jobs)


def estimate_measured(points, repetitions, min_time, iteration_s):
    """Seconds of the measured part: each point's repetitions are bench invocations, each
    its start and, per benchmark, at least min_time of iterations (iteration_s(point,
    benchmark): one iteration's seconds, from an earlier run or the work it holds)."""
    total = 0.0
    for p in points:
        one = BENCH_START_S + sum(max(min_time, iteration_s(p, b)) for b in p["benchmarks"])
        total += one * p.get("repetitions", repetitions)
    return total


def nominal_iteration_s(point, benchmark):
    """One iteration's seconds from the work its arguments name (tasks x grain, over the
    workers), where no earlier run measured it; 20 ms for a workload without a grain."""
    p = params_of(benchmark)
    tasks = next((float(p[k]) for k in ("tasks", "n", "probes") if k in p), None)
    grain = float(p["grain_us"]) * 1e-6 if "grain_us" in p else \
        float(p["grain_ns"]) * 1e-9 if "grain_ns" in p else \
        float(p["gap_us"]) * 1e-6 if "gap_us" in p else None
    if tasks is None or grain is None:
        return 0.02
    return tasks * grain / (1 if "gap_us" in p else point["workers"]) + 0.005


def earlier_iterations(results_dir):
    """{(workers, benchmark): median seconds of an iteration} over the measured runs under
    results_dir (their raw files), for estimate_measured; the newest run wins."""
    from .rundata import load_run      # a sweep's loader, only when estimating
    out = {}
    runs = sorted(d for d in os.listdir(results_dir)
                  if os.path.isfile(os.path.join(results_dir, d, "plan.json"))
                  and not d.startswith(("sim-", "map-"))) if os.path.isdir(results_dir) else []
    for d in runs:
        try:
            data = load_run(os.path.join(results_dir, d))
        except Exception:           # an unreadable run estimates nothing
            continue
        for r in data.usable():
            if not r.reference:
                out.setdefault((r.workers, r.benchmark), []).append(r.median())
    return {k: statistics.median(v) for k, v in out.items()}
