#!/usr/bin/python3
"""refcheck.py -- check one reference row's Google Benchmark JSON (build/ref/<r>/bench).

  refcheck.py [--variant R] [--workers N] [--without WORKLOAD]... FILE.json

The run record carries benchjson.py's context keys plus `runtime`; no benchmark failed
(a wrong answer is a failure); every workload ran at least once, except those named by
--without (which the reference does not register: they must not run either); each
benchmark carries proc_cpu_s and items_per_second.  Scheduler counters (steals, parks,
...) are not asked for: the reference runtimes do not expose them.  Exit status 1 with
the reasons otherwise.  Used by `make refs-smoke`.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchjson  # noqa: E402  (harness/benchjson.py: the JSON reader the variants use)

WORKLOADS = ("fib", "granularity", "imbalance", "spawn")
COUNTERS = ("proc_cpu_s", "items_per_second")


def check(doc, variant=None, workers=None, without=()):
    """The list of problems in one reference JSON document (empty when it is good)."""
    bad = benchjson.check_context(doc, benchjson.CONTEXT_KEYS + ("runtime",), variant, workers)
    seen = set()
    for b in benchjson.runs(doc):
        name = b.get("run_name", b["name"])
        if b.get("error_occurred"):
            bad.append(f"{name}: {b.get('error_message')}")
            continue
        seen.add(name.split("/")[0])
        missing = [c for c in COUNTERS if c not in b]
        if missing:
            bad.append(f"{name}: no counter {', '.join(missing)}")
    for w in WORKLOADS:
        if w in without and w in seen:
            bad.append(f"workload {w}: ran, but the reference does not offer it")
        elif w not in without and w not in seen:
            bad.append(f"workload {w}: no benchmark ran")
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant")
    ap.add_argument("--workers", type=int)
    ap.add_argument("--without", action="append", default=[], choices=WORKLOADS,
                    help="a workload this reference does not offer (repeatable)")
    ap.add_argument("file")
    a = ap.parse_args(argv)
    bad = check(benchjson.load(a.file), a.variant, a.workers, a.without)
    for line in bad:
        print(f"{a.file}: {line}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
