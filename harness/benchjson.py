#!/usr/bin/python3
"""benchjson.py -- two small readers of the Google Benchmark JSON that build/<v>/bench
and build/ref/boost_switch write (stdlib only).

  benchjson.py ratio --name NAME --ours A.json... --ref B.json...
      For NAME: the median over every repetition in every file of cpu_time and real_time
      (ns) on each side, and ours/ref.  Used by `make bench-switch`.

  benchjson.py check [--variant V] [--workers N] [--workloads "a b"] FILE.json
      The run record carries its context keys; every benchmark ran without error; each
      named workload has at least one benchmark; each workload benchmark carries the
      scheduler counters.  Exit status 1 with the reasons otherwise.  Used by
      `make bench-smoke`.
"""
import argparse
import json
import statistics
import sys

TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
CONTEXT_KEYS = ("variant", "workers", "cpu_model", "topology", "compiler", "cflags",
                "git_rev", "sizes")
COUNTERS = ("steals", "steal_attempts", "stolen_tasks", "parks", "switches", "wakeups",
            "remote_pops", "proc_cpu_s", "items_per_second")
HARNESS_PREFIXES = ("switch/", "stack/")


def load(path):
    with open(path) as f:
        return json.load(f)


def runs(doc, name=None):
    """The per-repetition entries (not the aggregates), optionally only NAME's."""
    for b in doc.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration":
            continue
        if name is None or b.get("run_name", b["name"]) == name:
            yield b


def medians(paths, name):
    cpu, real = [], []
    for p in paths:
        for b in runs(load(p), name):
            if b.get("error_occurred"):
                raise SystemExit(f"{p}: {name}: {b.get('error_message')}")
            unit = TO_NS[b.get("time_unit", "ns")]
            cpu.append(b["cpu_time"] * unit)
            real.append(b["real_time"] * unit)
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


def check(doc, variant=None, workers=None, workloads=()):
    """The list of problems in one bench JSON document (empty when it is good)."""
    bad = []
    ctx = doc.get("context", {})
    for k in CONTEXT_KEYS:
        if not ctx.get(k):
            bad.append(f"context: no {k}")
    if variant is not None and ctx.get("variant") != variant:
        bad.append(f"context: variant {ctx.get('variant')!r}, expected {variant!r}")
    if workers is not None and ctx.get("workers") != str(workers):
        bad.append(f"context: workers {ctx.get('workers')!r}, expected {workers}")
    seen = set()
    for b in runs(doc):
        name = b.get("run_name", b["name"])
        if b.get("error_occurred"):
            bad.append(f"{name}: {b.get('error_message')}")
            continue
        if name.startswith(HARNESS_PREFIXES):
            continue
        seen.add(name.split("/")[0])
        missing = [c for c in COUNTERS if c not in b]
        if missing:
            bad.append(f"{name}: no counter {', '.join(missing)}")
    for w in workloads:
        if w not in seen:
            bad.append(f"workload {w}: no benchmark ran")
    return bad


def cmd_check(a):
    bad = check(load(a.file), a.variant, a.workers, a.workloads.split())
    for line in bad:
        print(f"{a.file}: {line}", file=sys.stderr)
    return 1 if bad else 0


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
    a = ap.parse_args(argv)
    return cmd_ratio(a) if a.cmd == "ratio" else cmd_check(a)


if __name__ == "__main__":
    sys.exit(main())
