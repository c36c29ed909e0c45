"""Planning a sweep: the quick sweep's share of the argument sets, the filter, other
benchmark families, all from the (fake) bench binaries' own listings; a simulated
sweep's points by the same rules."""
import pytest

from harness.driver import build, plan
from harness.driver.config import UsageError
from harness.driver.gbjson import params_of


def test_quick_selection():
    listed = [
        "imbalance/imbalance:0/grain_us:10/tasks:20000/submitters:1/late:0/real_time",
        "imbalance/imbalance:2/grain_us:10/tasks:20000/submitters:1/late:0/real_time",
        "imbalance/imbalance:2/grain_us:10/tasks:20000/submitters:4/late:0/real_time",
        "imbalance/imbalance:2/grain_us:1000/tasks:64/submitters:1/late:0/real_time",
        "imbalance/imbalance:4/grain_us:10/tasks:20000/submitters:1/late:0/real_time"]
    assert plan.quick_selection(listed) == listed  # the claim's workload: every set
    other = [x.replace("imbalance/", "dag/", 1) for x in listed]
    assert plan.quick_selection(other) == [other[0], other[1], other[4]]
    assert plan.quick_selection(["uts/tree:1/real_time", "uts/tree:3/real_time"]) == \
        ["uts/tree:1/real_time"]
    assert plan.quick_selection(["switch/roundtrip"]) == ["switch/roundtrip"]
    # one worker has nothing to balance: the scenario workloads' first set alone
    assert plan.quick_selection(listed, workers=1) == listed[:1]
    assert plan.quick_selection(other, workers=1) == [other[0], other[1], other[4]]


def test_the_quick_sweep_takes_every_swept_d_of_the_article():
    art = "article/delay_pct:{}/late_pct:50/grain_us:100/tasks:1000/foreign:{}/real_time"
    listed = [art.format(0, 0), art.format(50, 0), art.format(100, 0), art.format(50, 1)]
    full = [art.format(25, 0), art.format(200, 0), art.format(25, 1),
            art.format(50, 0).replace("late_pct:50", "late_pct:25")]
    got = plan.quick_selection(listed, full, workers=2)
    assert got == listed + [art.format(25, 0), art.format(200, 0)]
    assert plan.quick_selection(listed, full, workers=1) == listed[:1]


def test_quick_all_sets_and_filter_choose_the_sets(fake_root):
    tree = build.Build(fake_root)
    targets = plan.select_targets(tree, ["chaselev"], no_build=True)

    def fib(**kw):
        point, twin = plan.plan_points(tree, list(targets), ["fib"], [1], kw.get("flt"),
                                       kw.get("full", False), kw.get("all_sets", False))
        # chaselev's A/A twin: the same binary and filter under its own label
        assert twin["twin_of"] == "chaselev" and twin["variant"] == "chaselev-aa"
        assert (twin["binary"], twin["filter"]) == (point["binary"], point["filter"])
        assert twin["raw"] == "raw/chaselev-aa/workers-1/fib.json"
        return point["benchmarks"], point["filter"]

    assert fib() == (["fib/n:20/real_time"], "^(fib/n:20/real_time)$")
    assert fib(all_sets=True) == (["fib/n:20/real_time", "fib/n:25/real_time"], "^fib(/.*)?$")
    assert fib(flt="n:25") == (["fib/n:25/real_time"], "^(fib/n:25/real_time)$")
    assert fib(full=True)[0] == ["fib/n:20/real_time", "fib/n:25/real_time",
                                 "fib/n:30/real_time"]


def test_other_benchmark_families_run_only_when_named(fake_root):
    tree = build.Build(fake_root)
    targets = plan.select_targets(tree, ["chaselev"], no_build=True)
    default = plan.plan_points(tree, list(targets), None, [1], None, False)
    assert sorted(p["workload"] for p in default if "twin_of" not in p) == \
        ["fib", "granularity", "imbalance"]
    (switch, _) = plan.plan_points(tree, list(targets), ["switch"], [1], None, False)
    assert switch["benchmarks"] == ["switch/roundtrip"]


def test_a_run_brings_even_built_binaries_up_to_date(fake_root, monkeypatch):
    """make runs for every chosen binary, built or not (it is incremental): a commit since
    the last build then rebuilds the revision each bench records, so a run never measures
    binaries that say they are older than the tree.  --no-build calls no make at all."""
    tree = build.Build(fake_root)
    calls = []
    monkeypatch.setattr(tree, "make", lambda targets, **kw: calls.append(list(targets)) or True)
    targets = plan.select_targets(tree, ["chaselev", "tbb"], no_build=False)
    assert [t.name for t in targets] == ["chaselev", "tbb"]
    assert calls == [["build/chaselev/bench"], ["build/ref/tbb/bench"]]
    calls.clear()
    plan.select_targets(tree, None, no_build=True)
    assert calls == []


def test_a_variant_that_fails_to_build_stops_the_run_and_a_reference_is_skipped(fake_root,
                                                                                monkeypatch):
    """A failed make must not leave an older binary to be measured: a variant's failure
    is an error; a reference nobody asked for by name is skipped with a warning, one asked
    for by name is an error."""
    import pytest
    from harness.driver.config import UsageError
    tree = build.Build(fake_root)
    monkeypatch.setattr(tree, "make", lambda targets, **kw: "build/ref/tbb/bench" not in targets)
    assert [t.name for t in plan.select_targets(tree, None, no_build=False)] == \
        ["chaselev", "static", "threadpool"]
    with pytest.raises(UsageError, match="tbb/bench failed"):
        plan.select_targets(tree, ["tbb"], no_build=False)
    monkeypatch.setattr(tree, "make", lambda targets, **kw: False)
    with pytest.raises(UsageError, match="may predate the tree"):
        plan.select_targets(tree, ["chaselev"], no_build=False)


SIM_LISTING = {
    "fib": ["fib/n:25/real_time", "fib/n:30/real_time"],
    "imbalance": ["imbalance/imbalance:0/grain_us:10/real_time",
                  "imbalance/imbalance:2/grain_us:10/real_time"],
    "uts": ["uts/tree:1/real_time"]}


def test_a_simulated_plan_takes_the_sets_by_the_sweeps_rules():
    """simulate.py's points come from plan.py: one per variant x workers x workload, in
    that order; each workload's first set, every set of the claim's workloads, or all
    sets, a filter's, a real run's (like); each point names its simbench and its sets."""
    targets = [plan.Target("chaselev", False, "/sim/chaselev/simbench"),
               plan.Target("static", False, "/sim/static/simbench")]
    points = plan.simulated_points(targets, SIM_LISTING, None, [1, 4], "epyc16")
    assert [p["id"] for p in points] == [
        f"{v}/workers-{w}/{wl}" for v in ("chaselev", "static") for w in (1, 4)
        for wl in ("fib", "imbalance", "uts")]
    # the fields in plan.json's order (a simulated plan is written unsorted)
    assert points[1] == {
        "id": "chaselev/workers-1/imbalance", "variant": "chaselev", "reference": False,
        "workers": 1, "workload": "imbalance", "binary": "/sim/chaselev/simbench",
        "benchmarks": ["imbalance/imbalance:0/grain_us:10/real_time",
                       "imbalance/imbalance:2/grain_us:10/real_time"],
        "filter": None, "simulated": True, "model": "epyc16",
        "raw": "raw/chaselev/workers-1/imbalance.json",
        "log": "logs/chaselev/workers-1/imbalance.log"}
    assert list(points[1]) == ["id", "variant", "reference", "workers", "workload", "binary",
                               "benchmarks", "filter", "simulated", "model", "raw",
                               "log"]

    def sets(**kw):
        return {p["workload"]: [",".join(params_of(b).values()) for b in p["benchmarks"]]
                for p in plan.simulated_points(targets[:1], SIM_LISTING, kw.pop("workloads", None),
                                               [2], "m", **kw)}

    assert sets() == {"fib": ["25"], "imbalance": ["0,10", "2,10"], "uts": ["1"]}
    assert sets(all_sets=True)["fib"] == ["25", "30"]
    assert sets(name_filter="n:30|tree") == {"fib": ["30"], "uts": ["1"]}
    assert sets(like={"fib/n:30/real_time", "imbalance/imbalance:2/grain_us:10/real_time"},
                workloads=["imbalance", "fib"]) == {"fib": ["30"], "imbalance": ["2,10"]}
    with pytest.raises(UsageError, match="unknown workload 'dag'"):
        sets(workloads=["fib", "dag"])
    with pytest.raises(UsageError, match="--filter: bad regular expression"):
        sets(name_filter="(")


def test_a_simulated_listing_is_read_from_simbench(tmp_path):
    fake = tmp_path / "simbench"
    # the driver's listing: names as Google Benchmark ends them (manual time), keyed
    # as the measured sets are
    fake.write_text("#!/bin/sh\n[ \"$1\" = --benchmark_list_tests ] || exit 2\n"
                    "printf 'fib/n:25/manual_time\\nfib/n:30/manual_time\\n"
                    "uts/tree:1/manual_time\\n'\n")
    fake.chmod(0o755)
    assert plan.simulated_listing(str(fake)) == {
        "fib": ["fib/n:25/real_time", "fib/n:30/real_time"],
        "uts": ["uts/tree:1/real_time"]}
