"""benchjson.py -- the checks and the ratio that make runs on the Google Benchmark JSON
that build/<v>/bench, build/ref/<r>/bench and build/ref/boost_switch write.  They read
it through gbjson, the reader run.py uses (stdlib only).  Run from the
repository root:

  python3 -m harness.driver.benchjson ratio --name NAME --ours A.json... --ref B.json...
      For NAME: the median over every repetition in every file of cpu_time and real_time
      (ns) on each side, and ours/ref.  Used by `make bench-switch`.

  python3 -m harness.driver.benchjson check [--variant V] [--workers N] [--workloads "a b"] FILE.json
      The run record carries its context keys; every benchmark ran without error; each
      named workload has at least one benchmark; each workload benchmark carries the
      scheduler counters.  Exit status 1 with the reasons otherwise.  Used by
      `make bench-smoke`.

  python3 -m harness.driver.benchjson shimcheck FILE.json
      The JSON of build/harness-selftest/shim_check matches the exact values that
      harness/bench/selftest/shim_check.c sets up (counter flags, manual time, arguments,
      label, skip, repetitions, context).  Used by `make test-shim`.
"""
import argparse
import os
import re
import statistics
import sys

from .config import ROOT
from .gbjson import BadResultFile, load_gb_doc, parse_gb_doc

CONTEXT_KEYS = ("variant", "workers", "cpu_model", "topology", "compiler", "cflags",
                "git_rev", "sizes")


def sched_counters(header=os.path.join(ROOT, "common", "bthread.h")):
    """The names of bthread.h's BTHREAD_WORKER_COUNTERS, in order: the one list of the
    scheduler counters, from which the C side makes the stats struct, the counting and
    the bench JSON.  An X-list may name another (BTHREAD_VARIANT_COUNTERS(X)); its
    entries stand in its place."""
    with open(header, encoding="utf-8") as f:
        text = f.read().replace("\\\n", " ")
    lists = {m.group(1): m.group(2) for m in
             re.finditer(r"^#define (BTHREAD_\w*COUNTERS)\(X\)(.*)$", text, re.M)}

    def names(body):
        out = []
        for m in re.finditer(r"\b(?:X\((\w+),|(BTHREAD_\w*COUNTERS)\(X\))", body):
            out += [m.group(1)] if m.group(1) else names(lists[m.group(2)])
        return out

    if "BTHREAD_WORKER_COUNTERS" not in lists:
        raise SystemExit(f"{header}: no BTHREAD_WORKER_COUNTERS list")
    return tuple(names(lists["BTHREAD_WORKER_COUNTERS"]))


# What every workload benchmark carries: the scheduler counters, the ratios the bench
# derives from them (harness/bench/bench_main.c), the process CPU time and the throughput.
COUNTERS = sched_counters() + ("tasks_per_remote_take", "tasks_per_flush",
                               "wakeups_per_task", "proc_cpu_s", "items_per_second")
HARNESS_PREFIXES = ("switch/", "stack/")


def medians(paths, name):
    """Medians of NAME's cpu_time and real_time (ns) over every repetition in the files,
    and how many repetitions there were."""
    cpu, real = [], []
    for p in paths:
        try:
            _, entries = parse_gb_doc(load_gb_doc(p), p)
        except BadResultFile as e:
            raise SystemExit(str(e)) from None
        for e in entries:
            if e.benchmark != name:
                continue
            if e.error is not None:
                raise SystemExit(f"{p}: {name}: {e.error}")
            cpu.append(e.cpu_s * 1e9)
            real.append(e.real_s * 1e9)
    if not cpu:
        raise SystemExit(f"no runs of {name} in {' '.join(paths)}")
    return statistics.median(cpu), statistics.median(real), len(cpu)


def cmd_ratio(a):
    oc, orl, on = medians(a.ours, a.name)
    rc, rr, rn = medians(a.ref, a.name)
    print(f"{a.name}: medians over {on} (ours) and {rn} (ref) repetitions")
    print(f"  ours  cpu {oc:8.2f} ns  real {orl:8.2f} ns  ({oc / 2:.2f} ns per switch)")
    print(f"  ref   cpu {rc:8.2f} ns  real {rr:8.2f} ns  ({rc / 2:.2f} ns per switch)")
    print(f"  ratio ours/ref: cpu {oc / rc:.3f}x  real {orl / rr:.3f}x")
    return 0


def check_context(doc, keys=CONTEXT_KEYS, variant=None, workers=None):
    """Problems with the run record: missing keys, another variant or worker count."""
    bad = []
    ctx = doc.get("context", {}) if isinstance(doc, dict) else {}
    ctx = ctx if isinstance(ctx, dict) else {}
    for k in keys:
        if not ctx.get(k):
            bad.append(f"context: no {k}")
    if variant is not None and ctx.get("variant") != variant:
        bad.append(f"context: variant {ctx.get('variant')!r}, expected {variant!r}")
    if workers is not None and ctx.get("workers") != str(workers):
        bad.append(f"context: workers {ctx.get('workers')!r}, expected {workers}")
    return bad


def check(doc, variant=None, workers=None, workloads=(), keys=CONTEXT_KEYS,
          counters=COUNTERS, without=(), source="JSON"):
    """The list of problems in one bench JSON document (empty when it is good): the
    context `keys`; no benchmark failed; every workload in `workloads` ran and none in
    `without`; every benchmark but the harness's own carries `counters`."""
    bad = check_context(doc, keys, variant, workers)
    try:
        _, entries = parse_gb_doc(doc, source)
    except BadResultFile as e:
        return bad + [str(e)]
    seen = set()
    for e in entries:
        if e.error is not None:
            bad.append(f"{e.benchmark}: {e.error}")
            continue
        if e.benchmark.startswith(HARNESS_PREFIXES):
            continue
        seen.add(e.benchmark.split("/")[0])
        missing = [c for c in counters if c not in e.counters]
        if missing:
            bad.append(f"{e.benchmark}: no counter {', '.join(missing)}")
    for w in without:
        if w in seen:
            bad.append(f"workload {w}: ran, but the reference does not offer it")
    for w in workloads:
        if w not in seen and w not in without:
            bad.append(f"workload {w}: no benchmark ran")
    return bad


def report(path, check_doc):
    """Print the problems check_doc finds in the file at path; exit status 0 or 1."""
    try:
        bad = check_doc(load_gb_doc(path))
    except BadResultFile as e:
        bad = [str(e)]
    for line in bad:
        print(f"{path}: {line}" if not line.startswith(path) else line, file=sys.stderr)
    return 1 if bad else 0


def shimcheck(doc):
    """Problems in the JSON of harness/bench/selftest/shim_check.c (empty when it is good)."""
    bad = []
    by_name = {}
    for b in doc.get("benchmarks", []) if isinstance(doc, dict) else []:
        if isinstance(b, dict):
            by_name.setdefault(b.get("name"), []).append(b)

    def one(name):
        got = by_name.get(name, [])
        if len(got) != 1:
            bad.append(f"{name}: {len(got)} entries, expected 1")
            return {}
        return got[0]

    def near(name, key, want, got):
        if got is None or abs(got - want) > 1e-9 * max(1.0, abs(want)):
            bad.append(f"{name}: {key} = {got}, expected {want}")

    if doc.get("context", {}).get("shim_ctx") != "value":
        bad.append("context: shim_ctx missing")
    n = "shim/manual/a:3/b:4/iterations:10/manual_time"
    m = one(n)
    if m:
        if m.get("error_occurred"):
            bad.append(f"{n}: {m.get('error_message')}")
        for key, want in (("iterations", 10), ("real_time", 1.0), ("plain", 7), ("rate", 500),
                          ("avg", 10), ("invariant", 20), ("inv_avg", 0.1), ("replaced", 2),
                          ("items_per_second", 5000)):
            near(n, key, want, m.get(key))
        if m.get("label") != "hello" or m.get("time_unit") != "ms":
            bad.append(f"{n}: label {m.get('label')!r}, time_unit {m.get('time_unit')!r}")
    n = "shim/batch/iterations:64"
    b = one(n)
    if b:
        near(n, "iterations", 64, b.get("iterations"))
        near(n, "batches", 8, b.get("batches"))
    n = "shim/pause/iterations:3/process_time/real_time"
    p = one(n)
    if p and not (p.get("time_unit") == "ms" and p.get("real_time", 1e9) < 25):
        bad.append(f"{n}: {p.get('real_time')} {p.get('time_unit')} per iteration: the 50 ms "
                   "paused sleep was timed")
    n = "shim/skip"
    k = one(n)
    if k and not (k.get("error_occurred") and k.get("error_message") == "deliberate"):
        bad.append(f"{n}: no error recorded")
    reps = [b for b in doc.get("benchmarks", [])
            if b.get("run_name") == "shim/reps/min_time:0.001/repeats:3"]
    kinds = sorted(b.get("aggregate_name", "") for b in reps
                   if b.get("run_type") == "aggregate")
    if sum(b.get("run_type") == "iteration" for b in reps) != 3 or kinds != [
            "cv", "mean", "median", "stddev"]:
        bad.append(f"shim/reps: {len(reps)} entries {kinds}, expected 3 runs + 4 aggregates")
    return bad


def cmd_shimcheck(a):
    return report(a.file, shimcheck)


def cmd_check(a):
    return report(a.file, lambda doc: check(doc, a.variant, a.workers, a.workloads.split(),
                                            source=a.file))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("ratio")
    r.add_argument("--name", required=True)
    r.add_argument("--ours", nargs="+", required=True)
    r.add_argument("--ref", nargs="+", required=True)
    c = sub.add_parser("check")
    c.add_argument("--variant")
    c.add_argument("--workers", type=int)
    c.add_argument("--workloads", default="")
    c.add_argument("file")
    s = sub.add_parser("shimcheck")
    s.add_argument("file")
    a = ap.parse_args(argv)
    return {"ratio": cmd_ratio, "check": cmd_check, "shimcheck": cmd_shimcheck}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
