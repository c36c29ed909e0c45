#!/usr/bin/env python3
"""run.py -- measure every scheduler variant, keep the results, compare, plot, report.

    ./run.py run                      quick sweep: every variant x workload x workers 1..nproc,
                                      each workload's first argument set (and the imbalance
                                      sweep), 5 repetitions
    ./run.py run --full               the real sweep: every argument set (with the workloads'
                                      `full` sets), 10 repetitions, longer runs
    ./run.py run --resume latest      finish a sweep that was interrupted
    ./run.py list [--benchmarks]      the variants, references and workloads the build has
    ./run.py plot RUN                 gnuplot SVG + PNG into plots/<run-id>/
    ./run.py compare RUN_A RUN_B      per-benchmark ratio of medians, Mann-Whitney U test
    ./run.py report RUN               results/<run-id>/REPORT.md

RUN is a run id under results/, 'latest', or a path to a run directory; compare also
accepts RUN:VARIANT to compare two variants (of one run or of two).

The names of variants and workloads are asked from the build (`make list-variants`,
`make list-workloads`, `make list-references`) and from each benchmark binary's own
listing (`--benchmark_list_tests`); this file keeps no list of them.  The formats of the
files written here are described in results/README.md and plots/README.md.

Python 3 standard library only, plus gnuplot for the plots.  Exit codes: 0 success,
1 the sweep ran but some points failed or reported wrong answers, 2 bad input or a
missing tool (one line on stderr), 130 interrupted.
"""

import argparse
import concurrent.futures
import contextlib
import csv
import dataclasses
import datetime
import functools
import io
import itertools
import json
import math
import os
import platform
import random
import re
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

PROG = "run.py"
EXIT_FAILED = 1   # the sweep ran, but some points failed or gave wrong answers
EXIT_USAGE = 2    # bad input or a missing tool
EXIT_INTERRUPTED = 130

# The two baselines of the 30-50% claim ("work stealing beats a thread pool by 30-50%"):
# speedups are drawn over each of them when the run has it.
BASELINES = ("threadpool", "static", "affinity")
CLAIM_BAND = (1.3, 1.5)

# Sweep presets: (repetitions, --benchmark_min_time seconds, per-point timeout seconds).
# Five repetitions is the fewest with which the exact two-sided Mann-Whitney test can
# reach p < 0.01 (four: 0.029); most workload iterations last longer than min_time.
QUICK = dict(repetitions=5, min_time=0.05, timeout=300)
FULL = dict(repetitions=10, min_time=0.5, timeout=1800)
# Environment variable set for the bench binary (listing and runs) under --full: the
# harness then also registers each workload's extra argument sets (workload_t.full).
FULL_ENV = "SCHEDBENCH_FULL"
# The busy-loop kernel of imbalance, dag and granularity turns microseconds into
# iterations with a rate each process calibrates for itself; a sweep measures it once
# and pins it for every point, so every variant runs exactly the same work.
ITERS_ENV = "SCHEDBENCH_ITERS_PER_US"
CALIBRATION_FILTER = "^imbalance/imbalance:0/"
KERNEL_WORKLOADS = ("imbalance", "dag", "granularity")  # users of workloads/wl_kernel.h
# The quick sweep runs each workload's first listed argument set, plus the sets that
# differ from it only in this parameter: the imbalance factor of the 30-50% claim; and
# every set of the claim's own workload (its scenarios are cheap and are the point).
CLAIM_PARAM = "imbalance"
CLAIM_WORKLOAD = "imbalance"


# ============================================================================================
# Small utilities
# ============================================================================================

class UsageError(Exception):
    """Bad input or a missing tool: reported as one line on stderr, exit code 2."""


def warn(message):
    """One warning line on stderr."""
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def atomic_write_text(path, text):
    """Write text to path so that readers see the old file or the new one, never half.

    The data goes to a temporary file in the same directory (a dot-name ending in .tmp,
    which no loader picks up), is fsync'ed, then renamed over path with os.replace.
    """
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                               dir=directory)
    try:
        # mkstemp makes the file 0600; give it the mode open() would (0666 less the umask)
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_json(path, obj):
    """atomic_write_text of obj as indented, key-sorted JSON."""
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


def read_json(path):
    """The parsed JSON file, or None when it is absent or unreadable (with a warning)."""
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        warn(f"skipping {path}: {e}")
        return None


def fmt_duration(seconds):
    """12 -> '0:12', 3725 -> '1:02:05'."""
    seconds = int(round(max(0.0, seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


TIME_UNITS = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))


def time_unit_for(seconds):
    """The (name, scale) of the largest unit in which `seconds` is at least 1."""
    for name, scale in TIME_UNITS:
        if seconds >= scale:
            return name, scale
    return TIME_UNITS[-1]


def fmt_seconds(seconds):
    """0.0123 -> '12.3 ms'."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    name, scale = time_unit_for(abs(seconds))
    return f"{seconds / scale:.3g} {name}"


def parse_name_list(text, option):
    """'a,b, c' -> ['a', 'b', 'c'] (order kept, duplicates dropped)."""
    names = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if part not in names:
            names.append(part)
    if not names:
        raise UsageError(f"{option} needs at least one name")
    return names


def parse_workers(text):
    """'1,2,4' or '1-4' or '1-4,8' -> sorted list of distinct positive ints."""
    counts = set()
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise UsageError(f"--workers: '{part}' is not a count or a range like 1-4")
        lo = int(m.group(1))
        hi = int(m.group(2) or lo)
        if lo < 1 or hi < lo:
            raise UsageError(f"--workers: '{part}' is not a range of counts >= 1")
        counts.update(range(lo, hi + 1))
    return sorted(counts)


def usable_cpus():
    """CPUs this process may run on (honours affinity masks and cpusets)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_workers(ncpu):
    """1..ncpu on small machines; powers of two plus ncpu beyond 8 CPUs."""
    if ncpu <= 8:
        return list(range(1, ncpu + 1))
    counts = {ncpu}
    p = 1
    while p < ncpu:
        counts.add(p)
        p *= 2
    return sorted(counts)


def check_unknown(names, known, what):
    """UsageError naming the first of `names` that is not in `known`."""
    for name in names:
        if name not in known:
            listing = ", ".join(sorted(known)) or "none"
            raise UsageError(f"unknown {what} '{name}' (known: {listing})")


def run_capture(cmd, timeout=60, env=None, cwd=None):
    """(returncode, stdout, stderr) of a command; (None, '', reason) if it cannot start."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                           cwd=cwd, errors="replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, "", str(e)
    return p.returncode, p.stdout, p.stderr


def last_line(text, default="no output"):
    """The last non-empty line of text (for one-line error messages)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else default


# ============================================================================================
# The build: names from make, binaries under build/
# ============================================================================================

class Build:
    """The source tree at `root`: asks make for names, finds the benchmark binaries."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self._lists = {}

    def _make_env(self):
        # A parent make (`make run`) passes its flags and jobserver down; the listing
        # targets want neither.
        env = dict(os.environ)
        for key in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
            env.pop(key, None)
        return env

    def make_list(self, target, optional=False):
        """The lines `make -s <target>` prints.  An optional target that fails (an older
        build without it) gives an empty list; a required one raises UsageError."""
        if target not in self._lists:
            cmd = ["make", "-s", "--no-print-directory", "-C", self.root, target]
            rc, out, err = run_capture(cmd, timeout=120, env=self._make_env())
            if rc != 0:
                if not optional:
                    raise UsageError(f"`make {target}` in {self.root} failed: {last_line(err)}")
                out = ""
            self._lists[target] = [line.strip() for line in out.splitlines() if line.strip()]
        return self._lists[target]

    @property
    def variants(self):
        return self.make_list("list-variants")

    @property
    def references(self):
        return self.make_list("list-references", optional=True)

    @property
    def workloads(self):
        return self.make_list("list-workloads")

    def binary(self, name, reference):
        """build/<variant>/bench, or build/ref/<name>/bench for a reference."""
        if reference:
            return os.path.join(self.root, "build", "ref", name, "bench")
        return os.path.join(self.root, "build", name, "bench")

    def make(self, targets):
        """Run `make <targets>` with its output on the terminal; True on success."""
        cmd = ["make", "-s", "--no-print-directory", "-C", self.root] + list(targets)
        print(f"{PROG}: building: make {' '.join(targets)}", file=sys.stderr)
        try:
            return subprocess.run(cmd, env=self._make_env()).returncode == 0
        except OSError as e:
            raise UsageError(f"cannot run make: {e}") from e

    def list_benchmarks(self, binary, full):
        """The benchmark names the binary lists (`--benchmark_list_tests`), in its order."""
        env = dict(os.environ)
        if full:
            env[FULL_ENV] = "1"
        cmd = [binary, "--workers", "1", "--benchmark_list_tests=true"]
        rc, out, err = run_capture(cmd, timeout=120, env=env, cwd=self.root)
        if rc != 0:
            raise UsageError(f"{os.path.relpath(binary, self.root)} --benchmark_list_tests "
                             f"failed: {last_line(err or out)}")
        return [line.strip() for line in out.splitlines() if line.strip()]


# ============================================================================================
# Google Benchmark JSON
# ============================================================================================

# Keys of a Google Benchmark entry that are not user counters.
GB_FIELDS = frozenset("""
    name family_index per_family_instance_index run_name run_type repetitions
    repetition_index threads iterations real_time cpu_time time_unit aggregate_name
    aggregate_unit error_occurred error_message label big_o rms complexity_n
""".split())
GB_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


class BadResultFile(Exception):
    """A result file that cannot be used (not JSON, truncated, wrong shape)."""


@dataclasses.dataclass
class Entry:
    """One per-repetition measurement of one benchmark (a Google Benchmark "iteration"
    entry); aggregates (mean, median, ...) are recomputed from these, not read."""
    benchmark: str        # run_name, e.g. "fib/n:30/real_time"
    repetition: int
    real_s: float         # wall time per iteration, seconds
    cpu_s: float          # CPU time per iteration, seconds (as Google Benchmark measured)
    iterations: int
    counters: dict        # user counters: name -> float
    error: str = None     # error_message when error_occurred (a wrong answer)


def workload_of(benchmark):
    """'imbalance/imbalance:2/grain_us:100' -> 'imbalance'."""
    return benchmark.split("/", 1)[0]


GB_NAME_SUFFIXES = ("real_time", "manual_time", "process_time")


def display_name(benchmark):
    """The name without the suffixes Google Benchmark appends for the timing mode:
    'fib/n:30/real_time' -> 'fib/n:30' (for titles, tables and file names)."""
    parts = benchmark.split("/")
    while len(parts) > 1 and parts[-1] in GB_NAME_SUFFIXES:
        parts.pop()
    return "/".join(parts)


def params_of(benchmark):
    """The 'key:value' parts of a benchmark name after the workload, as a dict."""
    params = {}
    for part in benchmark.split("/")[1:]:
        key, sep, value = part.partition(":")
        if sep:
            params[key] = value
    return params


def _number(value):
    """value as a float if it is a JSON number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def parse_entry(raw):
    """An Entry from one element of "benchmarks", or None for aggregates.
    Raises ValueError when the element does not have the expected fields."""
    if not isinstance(raw, dict):
        raise ValueError("an entry is not an object")
    if raw.get("run_type", "iteration") != "iteration":
        return None
    name = raw.get("run_name") or raw.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("an entry has no name")
    scale = GB_TIME_UNITS.get(raw.get("time_unit", "ns"))
    real, cpu = _number(raw.get("real_time")), _number(raw.get("cpu_time"))
    error = None
    if raw.get("error_occurred"):
        error = str(raw.get("error_message") or "error_occurred")
    elif scale is None or real is None or cpu is None:
        raise ValueError(f"entry {name} lacks real_time/cpu_time/time_unit")
    counters = {}
    for key, value in raw.items():
        number = _number(value)
        if key not in GB_FIELDS and number is not None:
            counters[key] = number
    return Entry(benchmark=name,
                 repetition=int(_number(raw.get("repetition_index")) or 0),
                 real_s=real * scale if real is not None and scale else math.nan,
                 cpu_s=cpu * scale if cpu is not None and scale else math.nan,
                 iterations=int(_number(raw.get("iterations")) or 0),
                 counters=counters, error=error)


def parse_gb_json(text, source):
    """(context dict, [Entry]) of a Google Benchmark JSON output.
    Raises BadResultFile naming `source` for anything unusable."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        what = "truncated" if text.strip() and e.pos >= len(text.rstrip()) else "not JSON"
        raise BadResultFile(f"{source}: {what} ({e})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise BadResultFile(f"{source}: no \"benchmarks\" list (not Google Benchmark JSON)")
    context = doc.get("context") if isinstance(doc.get("context"), dict) else {}
    entries = []
    for raw in doc["benchmarks"]:
        try:
            entry = parse_entry(raw)
        except ValueError as e:
            raise BadResultFile(f"{source}: {e}") from None
        if entry is not None:
            entries.append(entry)
    return context, entries


def load_gb_file(path):
    """parse_gb_json of a file; BadResultFile also for unreadable files."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise BadResultFile(f"{path}: {e.strerror}") from None
    return parse_gb_json(text, path)


# ============================================================================================
# Statistics: median and spread, Mann-Whitney U
# ============================================================================================

def summarize(values):
    """n, median, min, max and quartiles (inclusive method) of the finite values;
    None for the statistics when there are none."""
    xs = sorted(v for v in values if v is not None and math.isfinite(v))
    if not xs:
        return dict(n=0, median=None, min=None, max=None, q1=None, q3=None)
    if len(xs) == 1:
        q1 = q3 = xs[0]
    else:
        q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    return dict(n=len(xs), median=statistics.median(xs), min=xs[0], max=xs[-1], q1=q1, q3=q3)


@functools.lru_cache(maxsize=None)
def _u_counts(m, n):
    """How many of the C(m+n, m) orderings of m x's and n y's give U = 0, 1, ..., m*n
    (U = pairs with x > y).  The largest of all values is either an x (it beats all n y's)
    or a y (it beats nothing), which gives the recurrence."""
    if m == 0 or n == 0:
        return (1,)
    with_x_top = _u_counts(m - 1, n)   # contributes n
    with_y_top = _u_counts(m, n - 1)   # contributes 0
    counts = [0] * (m * n + 1)
    for u, c in enumerate(with_x_top):
        counts[u + n] += c
    for u, c in enumerate(with_y_top):
        counts[u] += c
    return tuple(counts)


EXACT_MAX_TOTAL = 40  # exact distribution up to this many samples (and no ties)


def mann_whitney_u(x, y):
    """Two-sided Mann-Whitney U test of samples x and y.

    Returns (U, p, method): U counts the pairs with x > y (ties count one half).  Without
    ties and with at most EXACT_MAX_TOTAL samples the p-value is exact (the null
    distribution enumerated by _u_counts); otherwise it is the normal approximation with
    the tie correction of the variance and a continuity correction of 0.5.
    """
    m, n = len(x), len(y)
    if m == 0 or n == 0:
        raise ValueError("mann_whitney_u needs two non-empty samples")
    u = sum((xi > yj) + 0.5 * (xi == yj) for xi in x for yj in y)
    pooled = sorted(list(x) + list(y))
    ties = [len(list(group)) for _, group in itertools.groupby(pooled)]
    has_ties = any(t > 1 for t in ties)
    if not has_ties and m + n <= EXACT_MAX_TOTAL:
        counts = _u_counts(m, n)
        total = math.comb(m + n, m)
        k = int(u)
        p_low = sum(counts[:k + 1]) / total    # P(U <= u)
        p_high = sum(counts[k:]) / total       # P(U >= u)
        return u, min(1.0, 2.0 * min(p_low, p_high)), "exact"
    big_n = m + n
    mean = m * n / 2.0
    tie_term = sum(t ** 3 - t for t in ties) / (big_n * (big_n - 1))
    var = m * n / 12.0 * ((big_n + 1) - tie_term)
    if var <= 0:
        return u, 1.0, "normal"   # every value equal: no evidence of a difference
    z = max(0.0, abs(u - mean) - 0.5) / math.sqrt(var)
    return u, min(1.0, math.erfc(z / math.sqrt(2.0))), "normal"


def min_attainable_p(m, n):
    """The smallest two-sided p the exact test can give for sample sizes m and n."""
    if m == 0 or n == 0:
        return 1.0
    return min(1.0, 2.0 / math.comb(m + n, m))


# ============================================================================================
# Results: one Result per (variant, workers, benchmark); a RunData per results/<run-id>/
# ============================================================================================

# The derived metric: process CPU seconds per wall second (how many cores a variant kept
# busy), from the proc_cpu_s counter and real_time of the same repetition.
CPU_PER_WALL = "proc_cpu_per_wall"


@dataclasses.dataclass
class Result:
    """All repetitions of one benchmark at one (variant, workers) point."""
    variant: str
    reference: bool
    workers: int
    benchmark: str
    source: str                    # the raw file it came from (relative to the run)
    entries: list = dataclasses.field(default_factory=list)

    @property
    def workload(self):
        return workload_of(self.benchmark)

    @property
    def params(self):
        return params_of(self.benchmark)

    @property
    def valid(self):
        """The repetitions without an error."""
        return [e for e in self.entries if e.error is None]

    @property
    def errors(self):
        return [e.error for e in self.entries if e.error is not None]

    @property
    def usable(self):
        """True when it may be plotted or compared: no error, at least one repetition."""
        return not self.errors and bool(self.valid)

    def metrics(self):
        """The metric names this result has, in CSV order."""
        counters = sorted({k for e in self.valid for k in e.counters})
        names = ["real_time_s", "cpu_time_s"] + counters
        if "proc_cpu_s" in counters:
            names.append(CPU_PER_WALL)
        return names

    def values(self, metric):
        """The metric's value in each valid repetition that has it."""
        out = []
        for e in self.valid:
            if metric == "real_time_s":
                v = e.real_s
            elif metric == "cpu_time_s":
                v = e.cpu_s
            elif metric == CPU_PER_WALL:
                c = e.counters.get("proc_cpu_s")
                v = c / e.real_s if c is not None and e.real_s > 0 else None
            else:
                v = e.counters.get(metric)
            if v is not None and math.isfinite(v):
                out.append(v)
        return out

    def summary(self, metric="real_time_s"):
        return summarize(self.values(metric))

    def median(self, metric="real_time_s"):
        return self.summary(metric)["median"]


@dataclasses.dataclass
class RunData:
    """What one run directory holds, loaded and checked."""
    run_dir: str
    meta: dict
    plan: dict
    status: dict
    results: list                  # [Result], sorted
    skipped: list                  # [(path, reason)]: files that could not be used
    contexts: dict                 # variant -> the JSON context of its first raw file

    @property
    def run_id(self):
        return os.path.basename(os.path.normpath(self.run_dir))

    def usable(self):
        return [r for r in self.results if r.usable]

    def failed_points(self):
        return {pid: st for pid, st in self.status.items() if not st.get("ok")}

    def variants(self):
        """Variant names in display order: variants, then references."""
        seen = {}
        for r in self.results:
            seen.setdefault(r.variant, r.reference)
        return sorted(seen, key=lambda v: (seen[v], v))

    def workers(self):
        return sorted({r.workers for r in self.results})

    def index(self):
        """{benchmark: {(variant, workers): Result}} over usable results."""
        table = {}
        for r in self.usable():
            table.setdefault(r.benchmark, {})[(r.variant, r.workers)] = r
        return table


def result_sort_key(r):
    return (r.workload, r.benchmark, r.reference, r.variant, r.workers)


def context_flag(value):
    return str(value).strip().lower() in ("1", "true", "yes")


def load_run(run_dir):
    """Load results/<run-id>/: meta.json, plan.json, status.json and every raw/**/*.json.
    A file that cannot be used is named in a warning and skipped, never fatal."""
    if not os.path.isdir(run_dir):
        raise UsageError(f"{run_dir} is not a run directory")
    meta = read_json(os.path.join(run_dir, "meta.json")) or {}
    plan = read_json(os.path.join(run_dir, "plan.json")) or {}
    status = read_json(os.path.join(run_dir, "status.json")) or {}
    if not isinstance(meta, dict):
        meta = {}
    points = plan.get("points", []) if isinstance(plan, dict) else []
    by_raw = {p.get("raw"): p for p in points if isinstance(p, dict)}
    references = set(meta.get("references", []))
    results, skipped, contexts = {}, [], {}
    raw_dir = os.path.join(run_dir, "raw")
    for path in sorted(glob_json(raw_dir)):
        rel = os.path.relpath(path, run_dir)
        try:
            context, entries = load_gb_file(path)
            point = by_raw.get(rel, {})
            variant = context.get("variant") or point.get("variant")
            workers = int(context.get("workers") or point.get("workers") or 0)
            if not variant or workers < 1:
                raise BadResultFile(f"{path}: no variant/workers in its context")
        except (BadResultFile, ValueError, TypeError) as e:
            reason = str(e) if isinstance(e, BadResultFile) else f"{path}: {e}"
            warn(f"skipping {reason}")
            skipped.append((rel, reason))
            continue
        reference = (bool(point.get("reference")) or context_flag(context.get("reference", ""))
                     or variant in references)
        contexts.setdefault(variant, context)
        for entry in entries:
            key = (variant, workers, entry.benchmark)
            if key not in results:
                results[key] = Result(variant, reference, workers, entry.benchmark, rel)
            results[key].entries.append(entry)
    return RunData(run_dir=run_dir, meta=meta, plan=plan if isinstance(plan, dict) else {},
                   status=status if isinstance(status, dict) else {},
                   results=sorted(results.values(), key=result_sort_key),
                   skipped=skipped, contexts=contexts)


def glob_json(directory):
    """Every *.json file under directory (temporary dot-files excluded)."""
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(".json") and not name.startswith("."):
                yield os.path.join(dirpath, name)


def filter_results(data, variants=None, workloads=None, workers=None):
    """The run's results restricted to the given names/counts (each None = all).
    Names the run does not have are an error (exit 2)."""
    if variants:
        check_unknown(variants, set(data.variants()), "variant in this run")
    if workloads:
        check_unknown(workloads, {r.workload for r in data.results}, "workload in this run")
    if workers:
        check_unknown(workers, set(data.workers()), "worker count in this run")
    data.results = [r for r in data.results
                    if (not variants or r.variant in variants)
                    and (not workloads or r.workload in workloads)
                    and (not workers or r.workers in workers)]
    return data


def fmt_num(value):
    """A CSV number: '' for missing, 12 significant digits otherwise."""
    if value is None:
        return ""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return f"{value:.12g}"


RESULT_COLUMNS = ["variant", "reference", "workers", "workload", "benchmark", "metric", "n",
                  "median", "min", "max", "q1", "q3", "errors", "error_message"]
SAMPLE_COLUMNS = ["variant", "reference", "workers", "workload", "benchmark", "repetition",
                  "metric", "value", "error"]


def results_csv(results):
    """results.csv: one row per (variant, workers, benchmark, metric), median and spread
    over the repetitions without error; `errors` counts the repetitions that failed."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(RESULT_COLUMNS)
    for r in results:
        errors = r.errors
        for metric in r.metrics():
            s = r.summary(metric)
            w.writerow([r.variant, int(r.reference), r.workers, r.workload, r.benchmark, metric,
                        s["n"], fmt_num(s["median"]), fmt_num(s["min"]), fmt_num(s["max"]),
                        fmt_num(s["q1"]), fmt_num(s["q3"]), len(errors),
                        errors[0] if errors else ""])
    return out.getvalue()


def samples_csv(results):
    """samples.csv: every repetition's value of every metric (errored ones flagged)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(SAMPLE_COLUMNS)
    for r in results:
        for e in sorted(r.entries, key=lambda e: e.repetition):
            values = [("real_time_s", e.real_s), ("cpu_time_s", e.cpu_s)]
            values += sorted(e.counters.items())
            for metric, value in values:
                w.writerow([r.variant, int(r.reference), r.workers, r.workload, r.benchmark,
                            e.repetition, metric, fmt_num(value), e.error or ""])
    return out.getvalue()


def runs_base(root):
    return os.path.join(root, "results")


def resolve_run(spec, root):
    """A run directory from a run id, 'latest', or a path."""
    base = runs_base(root)
    if spec == "latest":
        return latest_run(base)
    for candidate in (spec, os.path.join(base, spec)):
        if os.path.isdir(candidate) and (os.path.exists(os.path.join(candidate, "meta.json"))
                                         or os.path.isdir(os.path.join(candidate, "raw"))):
            return os.path.abspath(candidate)
    raise UsageError(f"no run '{spec}' (not a run directory, nor an id under {base})")


def latest_run(base):
    """The run under base whose meta.json says it started last."""
    best = None
    if os.path.isdir(base):
        for name in os.listdir(base):
            meta_path = os.path.join(base, name, "meta.json")
            if os.path.isfile(meta_path):
                meta = read_json(meta_path)
                started = meta.get("started", "") if isinstance(meta, dict) else ""
                key = (started, os.path.getmtime(meta_path))
                if best is None or key > best[0]:
                    best = (key, os.path.join(base, name))
    if best is None:
        raise UsageError(f"no runs under {base} yet ('latest' has nothing to name)")
    return os.path.abspath(best[1])


# ============================================================================================
# The sweep: plan the points, run them (resumable), merge
# ============================================================================================

@dataclasses.dataclass
class Target:
    """One benchmark binary: a variant, or a reference implementation (tbb, omp)."""
    name: str
    reference: bool
    binary: str


def select_targets(build, names, no_build):
    """The binaries to measure: the named variants/references (all when names is None),
    building missing ones with make unless no_build.  A reference that was not asked for
    by name and is not built is skipped with a warning."""
    variants, references = build.variants, build.references
    if names:
        check_unknown(names, set(variants) | set(references), "variant")
    chosen = names or variants + [r for r in references if r not in variants]
    targets = [Target(n, n not in variants, build.binary(n, n not in variants)) for n in chosen]

    def missing():
        return [t for t in targets if not os.access(t.binary, os.X_OK)]

    if missing() and not no_build:
        paths = [os.path.relpath(t.binary, build.root) for t in missing() if not t.reference]
        if paths:
            build.make(paths)
        if any(t.reference for t in missing()):
            build.make(["refs"])
    for t in missing():
        rel = os.path.relpath(t.binary, build.root)
        if t.reference and not names:
            warn(f"reference '{t.name}' is not built ({rel}); skipped")
            targets.remove(t)
        else:
            raise UsageError(f"{rel} is not built (try `make {'refs' if t.reference else 'all'}`)")
    return targets


def gb_regex_escape(text):
    """Escape a literal for Google Benchmark's (POSIX extended) filter regex."""
    return re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", text)


def gb_filter(workload, chosen, listed):
    """The --benchmark_filter selecting `chosen` among the workload's `listed` names."""
    if list(chosen) == list(listed):
        return f"^{gb_regex_escape(workload)}(/.*)?$"
    return "^(" + "|".join(gb_regex_escape(n) for n in chosen) + ")$"


def group_by_workload(names):
    """{workload: [names]} keeping the listing's order."""
    groups = {}
    for name in names:
        groups.setdefault(workload_of(name), []).append(name)
    return groups


def quick_selection(listed):
    """The quick sweep's share of one workload's listed argument sets: the first, and
    those that differ from it only in CLAIM_PARAM (so the imbalance sweep stays whole);
    every set of CLAIM_WORKLOAD."""
    if listed and listed[0].split("/", 1)[0] == CLAIM_WORKLOAD:
        return list(listed)
    first = params_of(listed[0])
    chosen = []
    for name in listed:
        params = params_of(name)
        differ = {k for k in set(params) | set(first) if params.get(k) != first.get(k)}
        if differ <= {CLAIM_PARAM}:
            chosen.append(name)
    return chosen


def plan_points(build, targets, workloads, workers, name_filter, full, all_sets=False):
    """The sweep's points: one per (binary, workload, workers), each one bench invocation
    whose filter comes from the binary's own listing.  Unknown workloads raise; no
    workloads means those of `make list-workloads`.  The argument sets: all listed ones
    with full, all_sets or a name filter, else quick_selection's."""
    listings = {}
    for t in list(targets):
        try:
            listings[t.name] = build.list_benchmarks(t.binary, full)
        except UsageError as e:
            if not t.reference:
                raise
            warn(f"reference '{t.name}' skipped: {e}")
            targets.remove(t)
    # The default is the build's workloads; other benchmark families a binary lists
    # (the harness's switch/stack micro-benchmarks) run when named.
    known = set(build.workloads) | {workload_of(n) for ns in listings.values() for n in ns}
    if workloads:
        check_unknown(workloads, known, "workload")
    else:
        workloads = build.workloads
    try:
        regex = re.compile(name_filter) if name_filter else None
    except re.error as e:
        raise UsageError(f"--filter: bad regular expression: {e}") from None
    points = []
    for t in targets:
        for workload, listed in group_by_workload(listings[t.name]).items():
            if workloads and workload not in workloads:
                continue
            if regex:
                chosen = [n for n in listed if regex.search(n)]
            else:
                chosen = listed if full or all_sets else quick_selection(listed)
            if not chosen:
                continue
            sub = os.path.join("ref", t.name) if t.reference else t.name
            for w in workers:
                where = os.path.join(sub, f"workers-{w}", workload)
                points.append(dict(
                    id=f"{'ref/' if t.reference else ''}{t.name}/workers-{w}/{workload}",
                    variant=t.name, reference=t.reference, workers=w, workload=workload,
                    binary=os.path.relpath(t.binary, build.root), benchmarks=chosen,
                    filter=gb_filter(workload, chosen, listed),
                    raw=os.path.join("raw", where + ".json"),
                    log=os.path.join("logs", where + ".log")))
    if not points:
        raise UsageError("nothing to run: the selection matches no benchmark")
    return points


def bench_command(root, plan, point, out_path):
    """The bench invocation of one point."""
    return [os.path.join(root, point["binary"]),
            "--workers", str(point["workers"]),
            f"--benchmark_filter={point['filter']}",
            f"--benchmark_repetitions={plan['repetitions']}",
            f"--benchmark_out={out_path}",
            "--benchmark_out_format=json",
            f"--benchmark_min_time={plan['min_time']!r}"]


def point_done(run_dir, point):
    """True when the point's raw file is in place and parses (atomic renames mean a file
    that exists is complete; a damaged one is rerun)."""
    path = os.path.join(run_dir, point["raw"])
    if not os.path.exists(path):
        return False
    try:
        load_gb_file(path)
        return True
    except BadResultFile as e:
        warn(f"{e}: the point will be rerun")
        return False


def run_point(root, run_dir, plan, point):
    """Run one point.  The bench writes a temporary file that is checked and then renamed
    into raw/; its console output goes to logs/.  Returns the point's status record."""
    raw = os.path.join(run_dir, point["raw"])
    log = os.path.join(run_dir, point["log"])
    for d in (os.path.dirname(raw), os.path.dirname(log)):
        os.makedirs(d, exist_ok=True)
    tmp = os.path.join(os.path.dirname(raw), f".{os.path.basename(raw)}.{os.getpid()}.tmp")
    log_tmp = os.path.join(os.path.dirname(log), f".{os.path.basename(log)}.{os.getpid()}.tmp")
    cmd = bench_command(root, plan, point, tmp)
    env = dict(os.environ)
    if plan.get("full"):
        env[FULL_ENV] = "1"
    if plan.get("iters_per_us"):
        env[ITERS_ENV] = repr(plan["iters_per_us"])
    status = dict(ok=False, rc=None, errors=0, message="")
    started = time.monotonic()
    try:
        with open(log_tmp, "w", encoding="utf-8") as logf:
            logf.write("$ " + shlex.join(cmd) + "\n")
            logf.flush()
            try:
                status["rc"], timed_out = run_with_timeout(cmd, logf, env, root,
                                                           plan.get("timeout"))
                if timed_out:
                    status["rc"] = None
                    status["message"] = f"timed out after {plan.get('timeout')} s"
            except OSError as e:
                status["message"] = f"cannot run {point['binary']}: {e.strerror}"
        os.replace(log_tmp, log)
        if status["rc"] == 0:
            finish_point(tmp, raw, status)
        elif status["rc"] is not None:
            with open(log, encoding="utf-8", errors="replace") as f:
                status["message"] = f"exit status {status['rc']}: {last_line(f.read())}"
    finally:
        for path in (tmp, log_tmp):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
    status["seconds"] = round(time.monotonic() - started, 3)
    status["finished"] = now_iso()
    return status


def run_with_timeout(cmd, out, env, cwd, timeout):
    """Run cmd with stdout and stderr to the file out; kill it after timeout seconds.
    Returns (returncode, timed_out).  (A timer thread instead of Popen.wait(timeout),
    which polls with sleeps.)"""
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    fired = threading.Event()

    def kill():
        fired.set()
        proc.kill()

    timer = threading.Timer(timeout, kill) if timeout else None
    if timer:
        timer.start()
    try:
        return proc.wait(), fired.is_set()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        if timer:
            timer.cancel()


def finish_point(tmp, raw, status):
    """Check the bench's JSON and move it into place (fills in status)."""
    try:
        _, entries = load_gb_file(tmp)
    except BadResultFile as e:
        status["message"] = str(e)
        return
    if not entries:
        status["message"] = "no benchmark ran (the filter matched nothing)"
        return
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, raw)
    status["ok"] = True
    status["errors"] = sum(1 for e in entries if e.error is not None)
    if status["errors"]:
        first = next(e for e in entries if e.error is not None)
        status["message"] = f"{status['errors']} repetition(s) failed: {first.benchmark}: {first.error}"


def now_iso():
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


class Progress:
    """'point k of n, elapsed, ETA' on a terminal (one rewritten line), one line per
    finished point otherwise; failures are always printed."""

    def __init__(self, total, done, durations, quiet=False, stream=None):
        self.total, self.done = total, done
        self.durations = list(durations)
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.quiet = quiet
        self.started = time.monotonic()

    def _eta(self):
        if not self.durations:
            return "?"
        mean = sum(self.durations) / len(self.durations)
        return fmt_duration(mean * (self.total - self.done))

    def _label(self, point):
        return f"{point['variant']} workers={point['workers']} {point['workload']}"

    def start(self, point):
        if self.tty and not self.quiet:
            elapsed = fmt_duration(time.monotonic() - self.started)
            self.stream.write(f"\r\x1b[K[{self.done + 1}/{self.total}] {self._label(point)}"
                              f"  elapsed {elapsed}  ETA {self._eta()}")
            self.stream.flush()

    def finish(self, point, status):
        self.done += 1
        self.durations.append(status["seconds"])
        problem = status["message"] if (not status["ok"] or status["errors"]) else ""
        if problem or (not self.tty and not self.quiet):
            what = "FAILED" if not status["ok"] else ("WRONG ANSWER" if status["errors"] else "ok")
            line = (f"[{self.done}/{self.total}] {self._label(point)}: {what}"
                    f" ({status['seconds']:.1f} s){': ' + problem if problem else ''}")
            self.stream.write(("\r\x1b[K" if self.tty else "") + line + "\n")
            self.stream.flush()

    def close(self):
        if self.tty and not self.quiet:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def remove_stale_temporaries(run_dir):
    """Temporary files left by a sweep that was killed (dot-names ending in .tmp)."""
    for sub in ("raw", "logs"):
        for dirpath, _, filenames in os.walk(os.path.join(run_dir, sub)):
            for name in filenames:
                if name.startswith(".") and name.endswith(".tmp"):
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.join(dirpath, name))


def execute_plan(root, run_dir, plan, quiet=False):
    """Run every point of the plan that has no valid raw file yet, in the plan's
    (shuffled) order, recording each in status.json.  Returns the status dict."""
    remove_stale_temporaries(run_dir)
    status_path = os.path.join(run_dir, "status.json")
    status = read_json(status_path) or {}
    points = plan["points"]
    todo = []
    for p in points:
        if not point_done(run_dir, p):
            todo.append(p)
        elif not status.get(p["id"], {}).get("ok"):
            # killed between the raw file's rename and the status write
            status[p["id"]] = dict(ok=True, rc=0, errors=0, message="recovered on resume")
    if len(todo) < len(points):
        print(f"{PROG}: {len(points) - len(todo)} of {len(points)} points already done",
              file=sys.stderr)
    durations = [s["seconds"] for s in status.values() if isinstance(s, dict) and s.get("seconds")]
    progress = Progress(len(points), len(points) - len(todo), durations, quiet)
    try:
        for point in todo:
            progress.start(point)
            status[point["id"]] = run_point(root, run_dir, plan, point)
            atomic_write_json(status_path, status)
            progress.finish(point, status[point["id"]])
    finally:
        progress.close()
    return status


# ============================================================================================
# The machine record (meta.json)
# ============================================================================================

def cpu_model():
    """The CPU's model name from /proc/cpuinfo (or what platform knows)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware", "cpu model"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def topology_summary():
    """hwloc's console view of the machine (without I/O devices), or None."""
    for tool in ("hwloc-ls", "lstopo-no-graphics"):
        if shutil.which(tool):
            rc, out, _ = run_capture([tool, "--of", "console", "--no-io"], timeout=30)
            if rc == 0 and out.strip():
                return out[:20000]
    return None


def compiler_version():
    cc = os.environ.get("CC", "cc")
    rc, out, _ = run_capture([cc, "--version"], timeout=30)
    return out.splitlines()[0].strip() if rc == 0 and out.strip() else None


def git_info(root):
    rc, out, _ = run_capture(["git", "-C", root, "rev-parse", "HEAD"], timeout=30)
    rev = out.strip() if rc == 0 else None
    rc, out, _ = run_capture(["git", "-C", root, "status", "--porcelain"], timeout=30)
    return dict(rev=rev, dirty=bool(out.strip()) if rc == 0 else None)


def machine_meta(root):
    """What the run was measured on and with."""
    uname = os.uname()
    return dict(
        host=socket.gethostname(),
        cpu_model=cpu_model(),
        cpus_online=os.cpu_count(),
        cpus_usable=usable_cpus(),
        topology=topology_summary(),
        kernel=f"{uname.sysname} {uname.release} {uname.version} {uname.machine}",
        compiler=compiler_version(),
        build_env={k: os.environ[k] for k in ("CC", "CXX", "OPT", "EXTRA_CFLAGS", "CFLAGS")
                   if k in os.environ},
        git=git_info(root),
        python=sys.version.split()[0],
    )


def bench_context_summary(contexts):
    """The per-variant parts of the bench JSON contexts worth keeping in meta.json."""
    drop = {"date", "executable", "load_avg", "workers"}
    return {v: {k: c[k] for k in sorted(c) if k not in drop} for v, c in contexts.items()}


# ============================================================================================
# Plots: a gnuplot script and its data per plot, rendered to SVG and PNG
# ============================================================================================

# One colour per variant, stable across the plots of a run (assigned in display order).
PALETTE = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d",
           "#666666", "#1f78b4", "#b15928", "#6a3d9a", "#e31a1c")


def gp_str(text):
    """A gnuplot double-quoted string literal."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def gp_num(value):
    """A number in a gnuplot data file; NaN (gnuplot's undefined) when missing."""
    return "NaN" if value is None or not math.isfinite(value) else f"{value:.6g}"


def workers_label(w):
    return f"{w} worker" + ("" if w == 1 else "s")


def safe_name(text):
    """A file-name-safe form of a benchmark name: 'fib/n:30' -> 'fib_n-30'."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text.replace(":", "-")).strip("_") or "plot"


@dataclasses.dataclass
class Plot:
    """One figure: a gnuplot body (settings + plot commands reading `datafile`) and the
    text of its data file.  Rendered as <name>.svg and <name>.png from <name>.gp."""
    name: str
    kind: str              # time, speedup, imbalance, metg, why
    title: str
    body: list             # gnuplot lines
    data: str
    width: int = 900
    height: int = 520
    benchmark: str = ""
    workload: str = ""

    def script(self, terminals):
        """The .gp file: the body once per output format."""
        lines = [f"# {self.title}",
                 f"# Written by {PROG} plot; data in {self.name}.dat.  Rerun: gnuplot {self.name}.gp",
                 f"datafile = {gp_str(self.name + '.dat')}"]
        for ext, terminal in terminals:
            lines += ["", terminal.format(w=self.width, h=self.height),
                      f"set output {gp_str(self.name + '.' + ext)}"]
            lines += self.body
            lines.append("unset output")
        return "\n".join(lines) + "\n"


def common_settings(title, xlabel, ylabel):
    return ["reset", "set datafile missing NaN", f"set title {gp_str(title)}",
            f"set xlabel {gp_str(xlabel)}", f"set ylabel {gp_str(ylabel)}",
            "set grid", "set key outside right top"]


def lines_plot(name, kind, title, xlabel, ylabel, series, extra=(), **kw):
    """A figure with one line (with error bars) per series.
    series: [(label, color, dashed, [(x, y, low, high)])], one data block each."""
    blocks, commands = [], []
    for i, (label, color, dashed, rows) in enumerate(series):
        blocks.append(f"# {label}: x y low high\n"
                      + "".join(" ".join(gp_num(v) for v in row) + "\n" for row in rows))
        commands.append(f"datafile index {i} using 1:2:3:4 with yerrorlines lw 1.5 pt {i % 12 + 1}"
                        f" lc rgb {gp_str(color)}{' dt 2' if dashed else ''} title {gp_str(label)}")
    body = common_settings(title, xlabel, ylabel) + list(extra)
    body.append("plot " + ", \\\n     ".join(commands))
    return Plot(name=name, kind=kind, title=title, body=body, data="\n\n".join(blocks), **kw)


def histogram_block(categories, groups, values):
    """Histogram data: one row per category, (y low high) per group."""
    lines = ["# category " + " ".join(f"[{g}: y low high]" for g in groups)]
    for cat in categories:
        cells = []
        for g in groups:
            cells += [gp_num(v) for v in values.get((cat, g), (None, None, None))]
        lines.append(gp_str(display_name(cat)) + " " + " ".join(cells))
    return "\n".join(lines) + "\n"


def histogram_commands(index, groups, colors):
    """`plot` arguments drawing data block `index` as clustered bars with error bars."""
    commands = []
    for i, g in enumerate(groups):
        col = 2 + 3 * i
        xtic = ":xtic(1)" if i == 0 else ""
        commands.append(f"datafile index {index} using {col}:{col + 1}:{col + 2}{xtic}"
                        f" lc rgb {gp_str(colors[g])} title {gp_str(g)}")
    return "plot " + ", \\\n     ".join(commands)


HISTOGRAM_STYLE = ["set style data histogram", "set style histogram errorbars gap 1 lw 1",
                   "set style fill solid 0.8 border -1", "set boxwidth 0.9",
                   "set xtics rotate by 90 right", "set yrange [0:*]",
                   "set offsets 0, 0, graph 0.1, 0", "set grid ytics",
                   "set key outside top center horizontal"]


def histogram_height(labels, plot_height=420):
    """Figure height leaving room for the vertical category labels below the bars."""
    return plot_height + 8 * max((len(display_name(label)) for label in labels), default=0)


def horizontal_line(y):
    return f"set arrow from graph 0, first {y} to graph 1, first {y} nohead dt 2 lc rgb \"#444444\""


def ratio_stats(base, other, metric="real_time_s"):
    """(median, low, high) of base/other: ratio of medians, and the extreme ratios of the
    repetitions' min/max (the spread of a speedup)."""
    b, o = base.summary(metric), other.summary(metric)
    if not b["n"] or not o["n"] or not o["median"] or not o["min"]:
        return None
    return (b["median"] / o["median"], b["min"] / o["max"], b["max"] / o["min"])


class PlotBuilder:
    """Builds every figure of a run (without rendering)."""

    def __init__(self, data):
        self.data = data
        self.table = data.index()
        self.variants = data.variants()
        self.reference = {r.variant: r.reference for r in data.results}
        self.colors = {v: PALETTE[i % len(PALETTE)] for i, v in enumerate(self.variants)}
        self.workers = data.workers()
        self.reps = data.plan.get("repetitions")

    def build(self):
        plots = []
        for make in (self.time_plots, self.speedup_plots, self.imbalance_plots,
                     self.metg_plots, self.why_plots):
            plots += make()
        names = set()
        for p in plots:                      # keep file names unique
            base, n = p.name, 2
            while p.name in names:
                p.name, n = f"{base}_{n}", n + 1
            names.add(p.name)
        return plots

    def baselines(self):
        return [b for b in BASELINES if b in self.variants]

    def _workers_axis(self):
        extra = [f"set xtics ({', '.join(str(w) for w in self.workers)})"]
        if self.workers and max(self.workers) > 8:
            extra.append("set logscale x 2")
        if len(self.workers) == 1:
            w = self.workers[0]
            extra.append(f"set xrange [{w - 1}:{w + 1}]")
        return extra

    def time_plots(self):
        """Wall time per iteration vs workers, one line per variant, for each benchmark."""
        plots = []
        reps = f", min-max of {self.reps} repetitions" if self.reps else ", min-max"
        for bench, cells in sorted(self.table.items()):
            top = max(r.median() for r in cells.values())
            unit, scale = time_unit_for(top)
            series = []
            for v in self.variants:
                rows = []
                for w in self.workers:
                    r = cells.get((v, w))
                    if r:
                        s = r.summary()
                        rows.append((w, s["median"] / scale, s["min"] / scale, s["max"] / scale))
                if rows:
                    series.append((v, self.colors[v], self.reference.get(v), rows))
            plots.append(lines_plot(
                f"time_{safe_name(display_name(bench))}", "time",
                f"{display_name(bench)}: wall time (median{reps})",
                "workers", f"time per iteration ({unit})", series,
                extra=self._workers_axis() + ["set yrange [0:*]"],
                benchmark=bench, workload=workload_of(bench)))
        return plots

    def speedup_plots(self):
        """Speedup of every variant over each baseline, all benchmarks, per worker count."""
        plots = []
        for base in self.baselines():
            for w in self.workers:
                cats = [b for b, cells in sorted(self.table.items()) if (base, w) in cells]
                groups = [v for v in self.variants if v != base
                          and any((v, w) in self.table[b] for b in cats)]
                if not cats or not groups:
                    continue
                values = {}
                for b in cats:
                    for v in groups:
                        if (v, w) in self.table[b]:
                            values[(b, v)] = ratio_stats(self.table[b][(base, w)],
                                                         self.table[b][(v, w)])
                body = (common_settings(f"speedup over {base}, {workers_label(w)} (ratio of median"
                                        " times; bars: min-max; log scale)", "",
                                        f"{base} time / variant time")
                        + HISTOGRAM_STYLE
                        # ratios span 1/100 .. 100 across workloads: a log axis keeps the
                        # 1.3-1.5x differences readable next to the 100x ones
                        + ["set logscale y 2", "set yrange [*:*]", "set format y '%g'"]
                        + [horizontal_line(1)]
                        + [histogram_commands(0, groups, self.colors)])
                plots.append(Plot(name=f"speedup_vs_{base}_w{w}", kind="speedup",
                                  title=f"speedup over {base}, {workers_label(w)}", body=body,
                                  data=histogram_block(cats, groups, values),
                                  width=min(4000, max(900, 120 + len(cats) * (14 * len(groups) + 24))),
                                  height=histogram_height(cats)))
        return plots

    def imbalance_plots(self):
        """Task Bench's imbalance sweep: speedup over each baseline vs the imbalance factor,
        one figure per worker count (and per setting of the other parameters), with the
        30-50% band of the claim shaded."""
        groups = {}
        for bench in self.table:
            value = params_of(bench).get(CLAIM_PARAM)
            try:
                x = float(value)
            except (TypeError, ValueError):
                continue
            rest = display_name(re.sub(rf"/{CLAIM_PARAM}:[^/]*", "", bench))
            groups.setdefault(rest, []).append((x, bench))
        plots = []
        lo, hi = CLAIM_BAND
        for base in self.baselines():
            for rest, members in sorted(groups.items()):
                if len({x for x, _ in members}) < 2:
                    continue              # not a sweep: its speedups are in speedup_*
                members.sort()
                for w in self.workers:
                    series, top = [], hi
                    for v in self.variants:
                        if v == base:
                            continue
                        rows = []
                        for x, bench in members:
                            cells = self.table[bench]
                            if (base, w) in cells and (v, w) in cells:
                                rs = ratio_stats(cells[(base, w)], cells[(v, w)])
                                if rs:
                                    rows.append((x,) + rs)
                                    top = max(top, rs[2])
                        if rows:
                            series.append((v, self.colors[v], self.reference.get(v), rows))
                    if not any(len(rows) > 1 for _, _, _, rows in series):
                        continue          # no sweep left (e.g. the baseline failed)
                    title = f"{rest}: speedup over {base} vs imbalance, {workers_label(w)}"
                    extra = [f"set object 1 rectangle from graph 0, first {lo} to graph 1, first {hi}"
                             " behind fillcolor rgb \"#d9f0d3\" fillstyle solid 1.0 noborder",
                             f"set label 1 \"30-50% claim\" at graph 0.02, first {(lo + hi) / 2}",
                             horizontal_line(1), f"set yrange [0:{top * 1.1:.3g}]"]
                    plots.append(lines_plot(
                        f"imbalance_vs_{base}_w{w}_{safe_name(rest)}", "imbalance", title,
                        "imbalance factor", f"{base} time / variant time", series, extra=extra,
                        benchmark=rest, workload=workload_of(rest)))
        return plots

    def _per_variant_histogram(self, cells, metric):
        """Histogram data of one metric: categories = variants, groups = worker counts."""
        values = {}
        for (v, w), r in cells.items():
            s = r.summary(metric)
            if s["n"]:
                values[(v, workers_label(w))] = (s["median"], s["min"], s["max"])
        cats = [v for v in self.variants if any(k[0] == v for k in values)]
        return cats, values

    def _worker_groups(self):
        groups = [workers_label(w) for w in self.workers]
        colors = {g: PALETTE[i % len(PALETTE)] for i, g in enumerate(groups)}
        return groups, colors

    def metg_plots(self):
        """METG(50%) per variant (benchmarks reporting metg_us), lower is better."""
        plots = []
        groups, colors = self._worker_groups()
        for bench, cells in sorted(self.table.items()):
            cats, values = self._per_variant_histogram(cells, "metg_us")
            if not values:
                continue
            label = display_name(bench)
            body = (common_settings(f"{label}: METG(50%) per variant (lower is better)", "",
                                    "METG (us)") + HISTOGRAM_STYLE
                    + [histogram_commands(0, groups, colors)])
            plots.append(Plot(name=f"metg_{safe_name(label)}", kind="metg",
                              title=f"{label}: METG per variant", body=body,
                              data=histogram_block(cats, groups, values),
                              height=histogram_height(cats),
                              benchmark=bench, workload=workload_of(bench)))
        return plots

    WHY_PANELS = (("steals", "steals"), ("parks", "parks"),
                  (CPU_PER_WALL, "CPU time / wall time (cores busy)"))

    def why_plots(self):
        """Why a variant wins: steals, parks and CPU time per wall time, per variant."""
        plots = []
        groups, colors = self._worker_groups()
        for bench, cells in sorted(self.table.items()):
            panels = []
            for metric, panel_title in self.WHY_PANELS:
                cats, values = self._per_variant_histogram(cells, metric)
                if values:
                    panels.append((metric, panel_title, cats, values))
            if not panels:
                continue
            label = display_name(bench)
            body = ["reset", "set datafile missing NaN"] + HISTOGRAM_STYLE + ["set tmargin 4"]
            body.append(f"set multiplot layout 1,{len(panels)} "
                        f"title {gp_str(label + ': why a variant wins (median, min-max)')}")
            blocks = []
            for i, (metric, panel_title, cats, values) in enumerate(panels):
                blocks.append(histogram_block(cats, groups, values))
                body += [f"set title {gp_str(panel_title)}"] + (["unset key"] if i else [])
                body.append(histogram_commands(i, groups, colors))
            body.append("unset multiplot")
            plots.append(Plot(name=f"why_{safe_name(label)}", kind="why",
                              title=f"{label}: steals, parks, CPU per wall", body=body,
                              data="\n\n".join(blocks), width=max(900, 480 * len(panels)),
                              height=histogram_height(self.variants, 460),
                              benchmark=bench, workload=workload_of(bench)))
        return plots


class Gnuplot:
    """The gnuplot executable and the output terminals it has (svg, pngcairo or png)."""

    def __init__(self):
        exe = os.environ.get("GNUPLOT") or "gnuplot"
        self.exe = shutil.which(exe)
        if not self.exe:
            raise UsageError(f"gnuplot not found ('{exe}'): install gnuplot-nox "
                             "(apt-get install gnuplot-nox) or set GNUPLOT")
        rc, out, err = run_capture([self.exe, "-e", 'set print "-"; print GPVAL_TERMINALS'])
        available = set(out.split()) if rc == 0 else set()
        self.terminals = []
        if "svg" in available:
            self.terminals.append(("svg", "set terminal svg size {w},{h} dynamic noenhanced"
                                          " background \"#ffffff\""))
        if "pngcairo" in available:
            self.terminals.append(("png", "set terminal pngcairo size {w},{h} noenhanced"
                                          " background \"#ffffff\""))
        elif "png" in available:
            self.terminals.append(("png", "set terminal png size {w},{h} noenhanced truecolor"
                                          " background \"#ffffff\""))
        if not self.terminals:
            raise UsageError(f"{self.exe} has neither the svg nor the png terminal"
                             f" ({last_line(err, 'no terminal list')})")

    def render(self, directory, plot):
        """Run the plot's script in directory; None on success, else the error line."""
        rc, _, err = run_capture([self.exe, plot.name + ".gp"], timeout=120, cwd=directory)
        if rc != 0:
            return last_line(err, f"gnuplot exit status {rc}")
        return None


def plots_dir(root, run_id):
    return os.path.join(root, "plots", run_id)


def write_plots(data, out_dir, gnuplot):
    """Write every plot's .dat and .gp into out_dir, render them, and write plots.json
    (the manifest the report reads).  Returns the manifest."""
    os.makedirs(out_dir, exist_ok=True)
    manifest_path = os.path.join(out_dir, "plots.json")
    old = read_json(manifest_path) or {}
    for entry in old.get("plots", []) if isinstance(old, dict) else []:
        for f in entry.get("files", []) + [entry.get("script", ""), entry.get("data", "")]:
            if f and os.path.basename(f) == f:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(out_dir, f))
    plots = PlotBuilder(data).build()
    for p in plots:
        atomic_write_text(os.path.join(out_dir, p.name + ".dat"), p.data)
        atomic_write_text(os.path.join(out_dir, p.name + ".gp"), p.script(gnuplot.terminals))
    workers = min(4, usable_cpus())
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        failures = list(pool.map(lambda p: gnuplot.render(out_dir, p), plots))
    entries = []
    for p, failure in zip(plots, failures):
        if failure:
            warn(f"gnuplot failed on {os.path.join(out_dir, p.name + '.gp')}: {failure}")
        files = [f"{p.name}.{ext}" for ext, _ in gnuplot.terminals
                 if os.path.exists(os.path.join(out_dir, f"{p.name}.{ext}"))]
        entries.append(dict(name=p.name, kind=p.kind, title=p.title, benchmark=p.benchmark,
                            workload=p.workload, script=p.name + ".gp", data=p.name + ".dat",
                            files=files, error=failure))
    manifest = dict(run_id=data.run_id, run_dir=os.path.abspath(data.run_dir),
                    written=now_iso(), plots=entries)
    atomic_write_json(manifest_path, manifest)
    return manifest


# ============================================================================================
# Comparisons: ratio of medians, Mann-Whitney U over the repetitions
# ============================================================================================

@dataclasses.dataclass
class Comparison:
    """B against A for one benchmark at one worker count (wall time per iteration)."""
    benchmark: str
    workers: int
    variant: str           # "x" (same variant in both) or "x -> y"
    a: Result
    b: Result
    p: float = None
    verdict: str = ""

    @property
    def ratio(self):
        """B's median time / A's: below 1, B is faster."""
        return self.b.median() / self.a.median() if self.a.median() else math.nan

    @property
    def significant(self):
        return self.verdict in ("faster", "slower")


def compare_pair(a, b, alpha, variant):
    """Compare two results' wall times: the verdict says how B relates to A."""
    c = Comparison(benchmark=a.benchmark, workers=a.workers, variant=variant, a=a, b=b)
    xa, xb = a.values("real_time_s"), b.values("real_time_s")
    if len(xa) < 2 or len(xb) < 2:
        c.verdict = "too few repetitions"
        return c
    _, c.p, _ = mann_whitney_u(xa, xb)
    if c.p < alpha:
        c.verdict = "faster" if c.ratio < 1 else "slower"
    else:
        c.verdict = "not significant"
    return c


def compare_sides(results_a, variant_a, results_b, variant_b, alpha):
    """Match results of side A and B by (variant, benchmark, workers), or by (benchmark,
    workers) when variants are named, and compare each usable pair.
    Returns (comparisons, problems): problems name pairs that have an error."""
    def keyed(results, variant):
        table = {}
        for r in results:
            if variant and r.variant != variant:
                continue
            key = (r.benchmark, r.workers) if variant else (r.benchmark, r.workers, r.variant)
            table[key] = r
        return table

    ta, tb = keyed(results_a, variant_a), keyed(results_b, variant_b)
    comparisons, problems = [], []
    for key in sorted(set(ta) & set(tb), key=lambda k: (workload_of(k[0]),) + k):
        a, b = ta[key], tb[key]
        label = f"{variant_a} -> {variant_b}" if variant_a else a.variant
        if not (a.usable and b.usable):
            which = " and ".join(s for s, r in (("A", a), ("B", b)) if not r.usable)
            problems.append(f"{key[0]} workers={key[1]} {label}: error in {which}")
            continue
        comparisons.append(compare_pair(a, b, alpha, label))
    return comparisons, problems


def significance_notes(comparisons, alpha):
    """Summary lines: how many differences are significant, and whether the repetitions
    could have shown any."""
    tested = [c for c in comparisons if c.p is not None]
    faster = sum(c.verdict == "faster" for c in tested)
    slower = sum(c.verdict == "slower" for c in tested)
    notes = [f"{faster + slower} of {len(comparisons)} differences are significant "
             f"(two-sided Mann-Whitney U over the repetitions, alpha={alpha:g}): "
             f"{faster} faster, {slower} slower."]
    weak = [c for c in tested
            if min_attainable_p(len(c.a.valid), len(c.b.valid)) >= alpha]
    if weak:
        c = weak[0]
        notes.append(f"Note: {len(weak)} comparison(s) have too few repetitions to reach "
                     f"p < {alpha:g} at all (e.g. {len(c.a.valid)} vs {len(c.b.valid)}: "
                     f"smallest p {min_attainable_p(len(c.a.valid), len(c.b.valid)):.3g}); "
                     "use --repetitions 5 or more (Google Benchmark's compare.py suggests 9).")
    untested = len(comparisons) - len(tested)
    if untested:
        notes.append(f"{untested} comparison(s) had fewer than 2 repetitions on a side.")
    return notes


def format_table(headers, rows, markdown=False):
    """An aligned text table, or a Markdown one."""
    rows = [[str(c) for c in row] for row in rows]
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        return "\n".join(lines) + "\n"
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines) + "\n"


def fmt_p(p):
    return "-" if p is None else f"{p:.3g}"


def comparison_rows(comparisons):
    return [[display_name(c.benchmark), c.workers, c.variant, fmt_seconds(c.a.median()),
             fmt_seconds(c.b.median()), f"{c.ratio:.3f}", fmt_p(c.p), c.verdict]
            for c in comparisons]


COMPARISON_HEADERS = ["benchmark", "workers", "variant", "A median", "B median", "B/A", "p",
                      "B is"]


# ============================================================================================
# REPORT.md
# ============================================================================================

class Report:
    """The Markdown report of one run: machine, problems, the 30-50% claim, per-workload
    tables with their plots, significant differences against the baselines."""

    def __init__(self, data, manifest, alpha, path, root):
        self.data, self.alpha, self.path = data, alpha, path
        self.manifest = manifest or {}
        self.plot_dir = plots_dir(root, data.run_id)
        self.variants = data.variants()
        self.workers = data.workers()

    # --- helpers -----------------------------------------------------------------------

    def plots(self, kind=None, workload=None):
        return [p for p in self.manifest.get("plots", [])
                if p.get("files") and (kind is None or p.get("kind") == kind)
                and (workload is None or p.get("workload") == workload)]

    def plot_link(self, entry, embed=True):
        """Markdown for one plot: the SVG embedded (or linked), the PNG linked."""
        rel = lambda f: os.path.relpath(os.path.join(self.plot_dir, f),
                                        os.path.dirname(os.path.abspath(self.path)))
        files = entry["files"]
        svg = next((f for f in files if f.endswith(".svg")), files[0])
        others = ", ".join(f"[{f.rsplit('.', 1)[1]}]({rel(f)})" for f in files if f != svg)
        head = f"![{entry['title']}]({rel(svg)})" if embed else f"[{entry['title']}]({rel(svg)})"
        return head + (f" ({others})" if others else "")

    def cell(self, r):
        if r is None:
            return ""
        if r.errors:
            return "ERROR"
        s = r.summary()
        if not s["n"]:
            return ""
        return f"{fmt_seconds(s['median'])} [{fmt_seconds(s['min'])}-{fmt_seconds(s['max'])}]"

    def baseline_comparisons(self, base):
        """Every variant against one baseline of the same run."""
        out = []
        for v in self.variants:
            if v != base:
                cs, _ = compare_sides(self.data.results, base, self.data.results, v, self.alpha)
                out += cs
        return out

    # --- sections ----------------------------------------------------------------------

    def header(self):
        m, plan, d = self.data.meta, self.data.plan, self.data
        git = m.get("git") or {}
        rev = (git.get("rev") or "unknown") + (" (with uncommitted changes)" if git.get("dirty") else "")
        points = plan.get("points", [])
        ok = sum(1 for p in points if d.status.get(p["id"], {}).get("ok"))
        rows = [("started", m.get("started", "?")), ("finished", m.get("finished", "not finished")),
                ("command", f"`{m.get('command', '?')}`"),
                ("CPU", f"{m.get('cpu_model', '?')} ({m.get('cpus_usable', '?')} usable of "
                        f"{m.get('cpus_online', '?')} online)"),
                ("kernel", m.get("kernel", "?")), ("compiler", m.get("compiler", "?")),
                ("git revision", rev),
                ("sweep", f"{'full' if plan.get('full') else 'quick'}: "
                          f"{plan.get('repetitions', '?')} repetitions, min time "
                          f"{plan.get('min_time', '?')} s per repetition, seed {plan.get('seed', '?')}, "
                          f"{ok} of {len(points)} points done"),
                ("variants", ", ".join(self.variants)), ("workers", ", ".join(map(str, self.workers)))]
        out = [f"# schedbench run {d.run_id}", "",
               "Times are wall time per iteration: the median over the repetitions, "
               "[min-max] beside it.  Raw data: `raw/`, `results.csv`, `samples.csv` "
               "(formats in results/README.md).", "",
               format_table(["", ""], rows, markdown=True)]
        if m.get("topology"):
            out += ["<details><summary>topology (hwloc)</summary>", "", "```",
                    m["topology"].rstrip(), "```", "", "</details>", ""]
        return out

    def problems(self):
        out = ["## Problems", ""]
        for pid, st in sorted(self.data.failed_points().items()):
            out.append(f"- point `{pid}` failed: {st.get('message', '?')}")
        for r in self.data.results:
            if r.errors:
                out.append(f"- wrong answer / error: `{r.benchmark}` on {r.variant} with "
                           f"{r.workers} workers: {r.errors[0]} ({len(r.errors)} of "
                           f"{len(r.entries)} repetitions; not plotted)")
        for path, reason in self.data.skipped:
            out.append(f"- unreadable result file skipped: {reason}")
        done = {pid for pid, st in self.data.status.items() if st.get("ok")}
        missing = [p["id"] for p in self.data.plan.get("points", []) if p["id"] not in done
                   and p["id"] not in self.data.status]
        if missing:
            out.append(f"- {len(missing)} point(s) not run yet (resume with "
                       f"`./run.py run --resume {self.data.run_id}`)")
        if len(out) == 2:
            out.append("None: every point ran, no wrong answers, no unreadable files.")
        return out + [""]

    def claim(self):
        """The imbalance workload's speedups over the baselines against the 30-50% band."""
        benches = sorted({r.benchmark for r in self.data.usable() if CLAIM_PARAM in r.params})
        bases = [b for b in BASELINES if b in self.variants]
        if not benches or not bases:
            return []
        lo, hi = CLAIM_BAND
        out = ["## The 30-50% claim (imbalance workload)", "",
               f"Speedup = baseline median time / variant median time; `*` = significant at "
               f"alpha={self.alpha:g}.  The claim is a speedup of {lo:.2f}-{hi:.2f}x over a "
               "traditional thread pool.", ""]
        for base in bases:
            comps = {(c.benchmark, c.workers, c.variant.split(" -> ")[1]): c
                     for c in self.baseline_comparisons(base) if c.benchmark in benches}
            cols = [v for v in self.variants if v != base]
            rows, counts = [], dict(below=0, band=0, above=0)
            for bench in benches:
                for w in self.workers:
                    cells = []
                    for v in cols:
                        c = comps.get((bench, w, v))
                        if c is None:
                            cells.append("")
                            continue
                        speedup = 1.0 / c.ratio
                        if w > 1:
                            counts["below" if speedup < lo else "band" if speedup <= hi
                                   else "above"] += 1
                        cells.append(f"{speedup:.2f}x{'*' if c.significant else ''}")
                    if any(cells):
                        rows.append([display_name(bench), w] + cells)
            if not rows:
                continue
            out += [f"Over `{base}`, with 2 or more workers: {counts['band']} in the band, "
                    f"{counts['above']} above {hi:.2f}x, {counts['below']} below {lo:.2f}x "
                    "(variant x benchmark cells).", "",
                    format_table(["benchmark", "workers"] + cols, rows, markdown=True)]
        for p in self.plots("imbalance"):
            out.append(self.plot_link(p))
            out.append("")
        return out

    def workloads(self):
        out = []
        for workload in sorted({r.workload for r in self.data.results}):
            results = [r for r in self.data.results if r.workload == workload]
            cells = {(r.benchmark, r.variant, r.workers): r for r in results}
            rows = []
            for bench in sorted({r.benchmark for r in results}):
                for v in self.variants:
                    row = [self.cell(cells.get((bench, v, w))) for w in self.workers]
                    if any(row):
                        rows.append([display_name(bench), v + (" (reference)" if any(
                            r.reference for r in results if r.variant == v) else "")] + row)
            out += [f"## {workload}", "",
                    format_table(["benchmark", "variant"] + [workers_label(w) for w in self.workers],
                                 rows, markdown=True)]
            for kind in ("time", "metg"):
                for p in self.plots(kind, workload):
                    out += [self.plot_link(p), ""]
            why = self.plots("why", workload)
            if why:
                out += ["Why: " + "; ".join(self.plot_link(p, embed=False) for p in why), ""]
        return out

    def significance(self):
        out = []
        for base in [b for b in BASELINES if b in self.variants]:
            comps = self.baseline_comparisons(base)
            if not comps:
                continue
            sig = [c for c in comps if c.significant]
            rows = [[display_name(c.benchmark), c.workers, c.variant.split(" -> ")[1],
                     f"{1.0 / c.ratio:.3f}x",
                     fmt_p(c.p)] for c in sig]
            out += [f"## Significant differences against `{base}`", ""]
            out += [" ".join(significance_notes(comps, self.alpha)), ""]
            if rows:
                out.append(format_table(["benchmark", "workers", "variant", f"speedup over {base}",
                                         "p"], rows, markdown=True))
            for p in self.plots("speedup"):
                if f"_vs_{base}_" in p["name"]:
                    out += [self.plot_link(p), ""]
        return out

    def render(self):
        parts = self.header() + self.problems() + self.claim() + self.workloads() + self.significance()
        if not self.manifest.get("plots"):
            parts += ["", f"(No plots: run `./run.py plot {self.data.run_id}`.)"]
        return "\n".join(parts).rstrip() + "\n"


# ============================================================================================
# Commands
# ============================================================================================

def finalize_run(run_dir):
    """Merge the raw files into results.csv and samples.csv, note the end in meta.json."""
    data = load_run(run_dir)
    atomic_write_text(os.path.join(run_dir, "results.csv"), results_csv(data.results))
    atomic_write_text(os.path.join(run_dir, "samples.csv"), samples_csv(data.results))
    meta = dict(data.meta)
    meta["finished"] = now_iso()
    meta["bench_context"] = bench_context_summary(data.contexts)
    atomic_write_json(os.path.join(run_dir, "meta.json"), meta)
    data.meta = meta
    return data


def new_run_dir(out, root):
    """The directory of a new run: --out, or results/<date-time>."""
    if out:
        path = out
    else:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        path, n = os.path.join(runs_base(root), stamp), 2
        while os.path.exists(path):
            path, n = os.path.join(runs_base(root), f"{stamp}-{n}"), n + 1
    os.makedirs(path, exist_ok=True)
    return os.path.abspath(path)


def run_spec(run_dir, root):
    """How to name run_dir on the command line: its id when it is under results/."""
    if os.path.dirname(os.path.abspath(run_dir)) == os.path.abspath(runs_base(root)):
        return os.path.basename(run_dir)
    return run_dir


def command_line():
    return shlex.join([sys.argv[0]] + sys.argv[1:]) if sys.argv else PROG


def calibrate_kernel(root, targets):
    """The kernel rate (iterations per microsecond) to pin for the whole sweep: the
    user's SCHEDBENCH_ITERS_PER_US, else what one short run of the first variant's bench
    reports (counter iters_per_us); None when no bench reports it."""
    if os.environ.get(ITERS_ENV):
        try:
            value = float(os.environ[ITERS_ENV])
        except ValueError:
            raise UsageError(f"{ITERS_ENV}={os.environ[ITERS_ENV]!r} is not a number")
        if not (value > 0 and math.isfinite(value)):
            raise UsageError(f"{ITERS_ENV} must be a positive number")
        return value
    target = next((t for t in targets if not t.reference), None)
    if target is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "calibrate.json")
        cmd = [os.path.join(root, target.binary), "--workers", "1",
               f"--benchmark_filter={CALIBRATION_FILTER}", "--benchmark_min_time=0.01",
               f"--benchmark_out={out}", "--benchmark_out_format=json"]
        try:
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=120, check=False)
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError, subprocess.SubprocessError):
            return None
    rates = [b.get("iters_per_us") for b in doc.get("benchmarks", [])]
    rates = [r for r in rates if isinstance(r, (int, float)) and r > 0]
    return float(rates[0]) if rates else None


def start_run(args, build):
    """Plan a new sweep and record it (meta.json, plan.json); returns (run_dir, plan)."""
    preset = FULL if args.full else QUICK
    reps = args.repetitions if args.repetitions is not None else preset["repetitions"]
    min_time = args.min_time if args.min_time is not None else preset["min_time"]
    timeout = args.timeout if args.timeout is not None else preset["timeout"]
    if reps < 1:
        raise UsageError("--repetitions must be at least 1")
    if not (min_time > 0 and math.isfinite(min_time)):
        raise UsageError("--min-time must be a positive number of seconds")
    if timeout <= 0:
        raise UsageError("--timeout must be positive")
    variants = parse_name_list(args.variants, "--variants") if args.variants else None
    workloads = parse_name_list(args.workloads, "--workloads") if args.workloads else None
    workers = parse_workers(args.workers) if args.workers else default_workers(usable_cpus())
    if args.out and os.path.isdir(args.out) and os.listdir(args.out):
        raise UsageError(f"{args.out} exists and is not empty (use --resume {args.out} to continue it)")
    targets = select_targets(build, variants, args.no_build)
    points = plan_points(build, targets, workloads, workers, args.filter, args.full,
                         args.all_sets)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 32)
    random.Random(seed).shuffle(points)
    rate = (calibrate_kernel(build.root, targets)
            if any(p["workload"] in KERNEL_WORKLOADS for p in points) else None)
    run_dir = new_run_dir(args.out, build.root)
    plan = dict(version=1, seed=seed, full=args.full, all_sets=args.all_sets or args.full,
                repetitions=reps, min_time=min_time,
                timeout=timeout, workers=workers, filter=args.filter, points=points,
                iters_per_us=rate)
    meta = machine_meta(build.root)
    meta.update(run_id=os.path.basename(run_dir), started=now_iso(), command=command_line(),
                variants=[t.name for t in targets if not t.reference],
                references=[t.name for t in targets if t.reference],
                workloads=sorted({p["workload"] for p in points}))
    atomic_write_json(os.path.join(run_dir, "meta.json"), meta)
    atomic_write_json(os.path.join(run_dir, "plan.json"), plan)
    return run_dir, plan


SELECTION_OPTIONS = ("variants", "workloads", "workers", "repetitions", "min_time", "full",
                     "all_sets", "filter", "out", "seed", "timeout")


def resume_run(args, build):
    """The run directory and stored plan of a sweep to continue."""
    run_dir = resolve_run(args.resume, build.root)
    plan = read_json(os.path.join(run_dir, "plan.json"))
    if not isinstance(plan, dict) or not isinstance(plan.get("points"), list):
        raise UsageError(f"{run_dir} has no usable plan.json: it cannot be resumed")
    given = [o for o in SELECTION_OPTIONS if getattr(args, o) not in (None, False)]
    if given:
        warn("ignored with --resume (the sweep keeps its plan): "
             + ", ".join("--" + o.replace("_", "-") for o in given))
    meta_path = os.path.join(run_dir, "meta.json")
    meta = read_json(meta_path) or {}
    meta.setdefault("resumed", []).append(dict(at=now_iso(), command=command_line()))
    atomic_write_json(meta_path, meta)
    return run_dir, plan


def make_plots_and_report(data, root, alpha, plots=True, report_path=None):
    """Plots (when gnuplot is there; otherwise a warning) and REPORT.md; returns the
    report's path."""
    manifest = None
    if plots:
        try:
            manifest = write_plots(data, plots_dir(root, data.run_id), Gnuplot())
        except UsageError as e:
            warn(f"{e}; the report has no plots")
    else:
        manifest = read_json(os.path.join(plots_dir(root, data.run_id), "plots.json"))
    path = report_path or os.path.join(data.run_dir, "REPORT.md")
    atomic_write_text(path, Report(data, manifest, alpha, path, root).render())
    return path


def cmd_run(args):
    build = Build(args.root)
    run_dir, plan = resume_run(args, build) if args.resume else start_run(args, build)
    run_id = os.path.basename(run_dir)
    print(f"{PROG}: run {run_id}: {len(plan['points'])} points, {plan['repetitions']} "
          f"repetitions each -> {os.path.relpath(run_dir)}", file=sys.stderr)
    try:
        status = execute_plan(build.root, run_dir, plan, args.quiet)
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted; continue with: {sys.argv[0]} run --resume "
              f"{run_spec(run_dir, build.root)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    data = finalize_run(run_dir)
    failed = [p["id"] for p in plan["points"] if not status.get(p["id"], {}).get("ok")]
    logs = {p["id"]: p["log"] for p in plan["points"]}
    wrong = [r for r in data.results if r.errors]
    print(f"{PROG}: {len(plan['points']) - len(failed)} of {len(plan['points'])} points ok, "
          f"{len(wrong)} benchmark(s) with errors; {os.path.relpath(run_dir)}/results.csv",
          file=sys.stderr)
    for pid in failed:
        print(f"{PROG}: failed: {pid}: {status.get(pid, {}).get('message', '?')} "
              f"(log: {os.path.join(os.path.relpath(run_dir), logs[pid])})",
              file=sys.stderr)
    if not args.no_plot:
        path = make_plots_and_report(data, build.root, args.alpha)
        print(f"{PROG}: report: {os.path.relpath(path)}", file=sys.stderr)
    return EXIT_FAILED if failed or wrong else 0


def cmd_list(args):
    build = Build(args.root)
    sections = [("variants", build.variants, False), ("references", build.references, True),
                ("workloads", build.workloads, None)]
    for title, names, reference in sections:
        print(f"{title}:")
        for name in names:
            note = ""
            if reference is not None and not os.access(build.binary(name, reference), os.X_OK):
                note = "  (not built)"
            print(f"  {name}{note}")
            if args.benchmarks and reference is not None and not note:
                for bench in build.list_benchmarks(build.binary(name, reference), args.full):
                    print(f"    {bench}")
    return 0


def load_selected(args, spec):
    """load_run of a RUN argument with the --variants/--workloads/--workers filters."""
    data = load_run(resolve_run(spec, args.root))
    return filter_results(
        data,
        variants=parse_name_list(args.variants, "--variants") if args.variants else None,
        workloads=parse_name_list(args.workloads, "--workloads") if args.workloads else None,
        workers=parse_workers(args.workers) if args.workers else None)


def cmd_plot(args):
    gnuplot = Gnuplot()
    data = load_selected(args, args.run)
    if not data.usable():
        raise UsageError(f"{data.run_dir} has no usable results to plot")
    out = args.out or plots_dir(args.root, data.run_id)
    manifest = write_plots(data, out, gnuplot)
    bad = [p for p in manifest["plots"] if p.get("error")]
    print(f"{PROG}: {len(manifest['plots']) - len(bad)} plots "
          f"({', '.join(ext for ext, _ in gnuplot.terminals)}) in {os.path.relpath(out)}")
    return EXIT_FAILED if bad else 0


def split_run_spec(spec, root):
    """'RUN' or 'RUN:VARIANT' -> (run_dir, variant or None)."""
    head, sep, tail = spec.rpartition(":")
    if sep and head and tail:
        try:
            return resolve_run(head, root), tail
        except UsageError:
            pass
    return resolve_run(spec, root), None


def cmd_compare(args):
    sides = []
    for spec in (args.run_a, args.run_b):
        run_dir, variant = split_run_spec(spec, args.root)
        data = load_selected(args, run_dir)
        if variant:
            check_unknown([variant], set(data.variants()), f"variant in {data.run_id}")
        sides.append((data, variant))
    (da, va), (db, vb) = sides
    if bool(va) != bool(vb):
        va, vb = va or vb, vb or va
    comparisons, problems = compare_sides(da.results, va, db.results, vb, args.alpha)
    if not comparisons and not problems:
        raise UsageError("the two sides have no benchmark in common")
    lines = [f"A = {da.run_dir}{f' ({va})' if va else ''}",
             f"B = {db.run_dir}{f' ({vb})' if vb else ''}", ""]
    text = "\n".join(lines) + format_table(COMPARISON_HEADERS, comparison_rows(comparisons))
    notes = significance_notes(comparisons, args.alpha) + [f"not compared: {p}" for p in problems]
    print(text + "\n" + "\n".join(notes))
    if args.out:
        md = ("\n".join(f"- {line}" for line in lines if line) + "\n\n"
              + format_table(COMPARISON_HEADERS, comparison_rows(comparisons), markdown=True)
              + "\n" + "\n\n".join(notes) + "\n")
        atomic_write_text(args.out, md)
    return 0


def cmd_report(args):
    data = load_selected(args, args.run)
    path = make_plots_and_report(data, args.root, args.alpha, plots=not args.no_plot,
                                 report_path=args.out)
    print(f"{PROG}: report: {os.path.relpath(path)}")
    return 0


# ============================================================================================
# Command line
# ============================================================================================

class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit code 2 through UsageError)."""

    def error(self, message):
        raise UsageError(f"{message} (see {self.prog} --help)")


def add_filters(p):
    p.add_argument("--variants", metavar="LIST", help="only these variants (comma-separated)")
    p.add_argument("--workloads", metavar="LIST", help="only these workloads (comma-separated)")
    p.add_argument("--workers", metavar="LIST", help="only these worker counts, e.g. 1,2 or 1-4")


def alpha_type(text):
    value = float(text)
    if not 0 < value < 1:
        raise ValueError(text)
    return value


alpha_type.__name__ = "significance level"


def build_parser():
    common = Parser(add_help=False)
    common.add_argument("--root", default=os.path.dirname(os.path.abspath(__file__)),
                        help="the source tree with the Makefile, build/, results/, plots/ "
                             "(default: run.py's directory)")
    parser = Parser(prog=PROG, description=__doc__.split("\n\n")[0], allow_abbrev=False,
                    formatter_class=argparse.RawDescriptionHelpFormatter,
                    epilog="Run `%(prog)s COMMAND --help` for a command's options.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("run", parents=[common], allow_abbrev=False,
                       help="sweep variants x workloads x workers into results/<run-id>/")
    add_filters(p)
    p.add_argument("--repetitions", type=int, metavar="N",
                   help=f"repetitions per benchmark (quick {QUICK['repetitions']}, full {FULL['repetitions']})")
    p.add_argument("--min-time", type=float, metavar="S",
                   help=f"--benchmark_min_time per repetition (quick {QUICK['min_time']}, full {FULL['min_time']})")
    p.add_argument("--full", action="store_true",
                   help="the full sweep: the workloads' extra argument sets, more repetitions and time")
    p.add_argument("--all-sets", action="store_true",
                   help="every default argument set, not only the quick sweep's share")
    p.add_argument("--filter", metavar="REGEX",
                   help="the listed benchmarks whose name matches (Python re)")
    p.add_argument("--out", metavar="DIR", help="the run directory (default results/<date-time>)")
    p.add_argument("--resume", metavar="RUN", help="continue run RUN (an id, 'latest' or a path)")
    p.add_argument("--seed", type=int, help="seed of the point order (default: random, recorded)")
    p.add_argument("--timeout", type=float, metavar="S", help="limit per point in seconds")
    p.add_argument("--no-build", action="store_true", help="do not run make for missing binaries")
    p.add_argument("--no-plot", action="store_true", help="skip the plots and REPORT.md at the end")
    p.add_argument("--alpha", type=alpha_type, default=0.05, help="significance level (0.05)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("list", parents=[common], allow_abbrev=False,
                       help="the variants, references and workloads of the build")
    p.add_argument("--benchmarks", action="store_true", help="also each binary's benchmarks")
    p.add_argument("--full", action="store_true", help="with --benchmarks: the full sweep's set")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("plot", parents=[common], allow_abbrev=False,
                       help="gnuplot SVG and PNG figures into plots/<run-id>/")
    p.add_argument("run", metavar="RUN", help="run id, 'latest' or a run directory")
    add_filters(p)
    p.add_argument("--out", metavar="DIR", help="output directory (default plots/<run-id>)")
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser("compare", parents=[common], allow_abbrev=False,
                       help="B against A: ratio of medians and Mann-Whitney U per benchmark")
    p.add_argument("run_a", metavar="RUN_A", help="RUN or RUN:VARIANT")
    p.add_argument("run_b", metavar="RUN_B", help="RUN or RUN:VARIANT")
    add_filters(p)
    p.add_argument("--alpha", type=alpha_type, default=0.05, help="significance level (0.05)")
    p.add_argument("--out", metavar="FILE", help="also write the comparison as Markdown")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("report", parents=[common], allow_abbrev=False,
                       help="write results/<run-id>/REPORT.md (and its plots)")
    p.add_argument("run", metavar="RUN", help="run id, 'latest' or a run directory")
    add_filters(p)
    p.add_argument("--alpha", type=alpha_type, default=0.05, help="significance level (0.05)")
    p.add_argument("--out", metavar="FILE", help="report path (default results/<run-id>/REPORT.md)")
    p.add_argument("--no-plot", action="store_true", help="use existing plots, do not redraw")
    p.set_defaults(func=cmd_report)
    return parser


def main(argv=None):
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        return args.func(args)
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")
        return 0


if __name__ == "__main__":
    sys.exit(main())
