"""refcheck.py -- check one reference row's Google Benchmark JSON (build/ref/<r>/bench).

  python3 -m harness.driver.refcheck [--variant R] [--workers N] [--without WORKLOAD]... FILE.json

The run record carries harness/driver/benchjson.py's context keys plus `runtime`; no benchmark
failed (a wrong answer is a failure); every workload ran at least once, except those
named by --without (which the reference does not register: they must not run either);
each benchmark carries proc_cpu_s and items_per_second.  Scheduler counters (steals,
parks, ...) are not asked for: the reference runtimes do not expose them.  Exit status 1
with the reasons otherwise.  Used by `make refs-smoke`; the check itself is
benchjson.check, the one the variants' bench passes.
"""
import argparse
import sys

from . import benchjson

# The workloads the reference rows implement (harness/ref/ref.h; tests/py/test_docs.py
# checks this list against ref.h and harness/ref/README.md).
WORKLOADS = ("article", "fib", "granularity", "imbalance", "spawn", "spawn_batch")
COUNTERS = ("proc_cpu_s", "items_per_second")


def check(doc, variant=None, workers=None, without=(), source="JSON"):
    """The list of problems in one reference JSON document (empty when it is good)."""
    return benchjson.check(doc, variant, workers, WORKLOADS,
                           keys=benchjson.CONTEXT_KEYS + ("runtime",), counters=COUNTERS,
                           without=without, source=source)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant")
    ap.add_argument("--workers", type=int)
    ap.add_argument("--without", action="append", default=[], choices=WORKLOADS,
                    help="a workload this reference does not offer (repeatable)")
    ap.add_argument("file")
    a = ap.parse_args(argv)
    return benchjson.report(a.file, lambda doc: check(doc, a.variant, a.workers, a.without,
                                                      a.file))


if __name__ == "__main__":
    sys.exit(main())
