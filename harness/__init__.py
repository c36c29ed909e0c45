"""schedbench's Python tools: the run.py driver (harness.driver) and the checks of the
bench binaries' Google Benchmark JSON that make calls (harness.benchjson,
harness.ref.refcheck), plus harness.targets.  Standard library only; run from the
repository root (`python3 -m harness.benchjson ...`)."""
