"""Planning a sweep: the quick sweep's share of the argument sets, the filter, other
benchmark families, all from the (fake) bench binaries' own listings."""
from harness.driver import build, plan


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


def test_quick_all_sets_and_filter_choose_the_sets(fake_root):
    tree = build.Build(fake_root)
    targets = plan.select_targets(tree, ["chaselev"], no_build=True)

    def fib(**kw):
        (point,) = plan.plan_points(tree, list(targets), ["fib"], [1], kw.get("flt"),
                                   kw.get("full", False), kw.get("all_sets", False))
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
    assert sorted(p["workload"] for p in default) == ["fib", "granularity", "imbalance"]
    (switch,) = plan.plan_points(tree, list(targets), ["switch"], [1], None, False)
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
