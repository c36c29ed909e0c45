"""harness/driver/benchjson.py: the JSON checks of `make bench-smoke` and `make test-shim`, and the
ratio of `make bench-switch`, all read through harness.driver.gbjson."""
import copy
import json

import pytest

from harness.driver import benchjson

COUNTERS = {c: 1.0 for c in benchjson.COUNTERS}
GOOD = {
    "context": {"variant": "chaselev", "workers": "2", "cpu_model": "x", "topology": "t",
                "compiler": "gcc", "cflags": "-O2", "git_rev": "abc", "sizes": "smoke"},
    "benchmarks": [
        dict(name=f"{w}/n:1/real_time", run_name=f"{w}/n:1/real_time", run_type="iteration",
             real_time=2.0, cpu_time=1.0, time_unit="ms", **COUNTERS)
        for w in ("fib", "spawn")] + [
        # the harness's own benchmarks carry no scheduler counters
        dict(name="switch/roundtrip", run_type="iteration", real_time=10.0, cpu_time=10.0,
             time_unit="ns")],
}


def test_good_document_passes():
    assert benchjson.check(GOOD, "chaselev", 2, ["fib", "spawn"]) == []


def test_problems_are_named():
    doc = copy.deepcopy(GOOD)
    del doc["context"]["sizes"]
    doc["benchmarks"][0]["real_time"] = float("nan")
    del doc["benchmarks"][1]["parks"]
    assert benchjson.check(doc, "chaselev", 2, ["fib", "spawn", "uts"]) == [
        "context: no sizes",
        "fib/n:1/real_time: no valid measurement: real_time = nan",
        "spawn/n:1/real_time: no counter parks",
        "workload fib: no benchmark ran",
        "workload uts: no benchmark ran"]


@pytest.mark.parametrize("doc", [[], {"benchmarks": 3}, {"benchmarks": [{"name": "a"}]}])
def test_a_document_of_the_wrong_shape_is_a_problem_not_a_crash(doc):
    bad = benchjson.check(doc)
    assert bad and bad[-1].startswith("JSON: ")


def test_cli_names_the_file_once(tmp_path, capsys):
    good, half = tmp_path / "good.json", tmp_path / "half.json"
    good.write_text(json.dumps(GOOD))
    half.write_text(json.dumps(GOOD)[:100])
    assert benchjson.main(["check", "--variant", "chaselev", "--workers", "2",
                           "--workloads", "fib spawn", str(good)]) == 0
    assert benchjson.main(["check", str(half)]) == 1
    assert benchjson.main(["shimcheck", str(half)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith(f"{half}: truncated") for line in err)


def test_ratio_takes_medians_over_every_file(tmp_path, capsys):
    def doc(times_ns):
        return {"benchmarks": [
            dict(name="switch/roundtrip", run_name="switch/roundtrip", run_type="iteration",
                 repetition_index=i, real_time=t / 1000, cpu_time=t / 1000, time_unit="us")
            for i, t in enumerate(times_ns)] + [
            dict(name="switch/roundtrip_median", run_name="switch/roundtrip",
                 run_type="aggregate", aggregate_name="median", real_time=99.0,
                 cpu_time=99.0, time_unit="us")]}
    paths = []
    for name, times in (("o1", [10, 12]), ("o2", [11]), ("r1", [20, 22, 21])):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc(times)))
        paths.append(str(path))
    assert benchjson.main(["ratio", "--name", "switch/roundtrip", "--ours", paths[0],
                           paths[1], "--ref", paths[2]]) == 0
    out = capsys.readouterr().out
    assert "medians over 3 (ours) and 3 (ref) repetitions" in out
    assert "ratio ours/ref: cpu 0.524x  real 0.524x" in out          # 11 / 21
    with pytest.raises(SystemExit, match="no runs of switch/other"):
        benchjson.medians(paths, "switch/other")


def test_sched_counters_come_from_the_one_list_in_bthread_h(tmp_path):
    names = benchjson.sched_counters()
    assert names[:3] == ("tasks_run", "switches", "steal_attempts")
    assert {"elastic_parks", "tasks_run"} <= set(names) and "cpu_ns" not in names
    assert len(set(names)) == len(names)
    header = tmp_path / "bthread.h"
    header.write_text("#define BTHREAD_WORKER_COUNTERS(X) \\\n    X(a, W, \"one\") \\\n"
                      "    BTHREAD_VARIANT_COUNTERS(X) \\\n    X(d, Q, \"four\")\n"
                      "#define BTHREAD_VARIANT_COUNTERS(X) X(b, W, \"2\") X(c, WQ, \"3\")\n")
    assert benchjson.sched_counters(str(header)) == ("a", "b", "c", "d")
    header.write_text("struct s { int steals; };\n")
    with pytest.raises(SystemExit, match="no BTHREAD_WORKER_COUNTERS"):
        benchjson.sched_counters(str(header))
