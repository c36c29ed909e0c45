"""harness/driver/refcheck.py: what `make refs-smoke` accepts and rejects in a reference
row's Google Benchmark JSON."""
import copy
import json

from harness.driver import refcheck

GOOD = {
    "context": {
        "variant": "tbb", "runtime": "oneTBB 2021.8", "workers": "2", "cpu_model": "x",
        "topology": "1 packages", "compiler": "gcc 12", "cflags": "-O2", "git_rev": "abc",
        "sizes": "smoke",
    },
    "benchmarks": [
        {"name": f"{w}/n:1/real_time", "run_name": f"{w}/n:1/real_time",
         "run_type": "iteration", "real_time": 1.0, "cpu_time": 1.0, "time_unit": "ms",
         "proc_cpu_s": 0.1, "items_per_second": 10.0}
        for w in refcheck.WORKLOADS
    ],
}


def test_good_document_passes():
    assert refcheck.check(GOOD, "tbb", 2) == []


def test_wrong_variant_and_workers_are_reported():
    bad = refcheck.check(GOOD, "omp", 4)
    assert any("variant" in b for b in bad)
    assert any("workers" in b for b in bad)


def test_missing_context_key_is_reported():
    doc = copy.deepcopy(GOOD)
    del doc["context"]["runtime"]
    assert refcheck.check(doc) == ["context: no runtime"]


def test_error_and_missing_workload_are_reported():
    doc = copy.deepcopy(GOOD)
    granularity = refcheck.WORKLOADS.index("granularity")
    doc["benchmarks"][granularity]["error_occurred"] = True
    doc["benchmarks"][granularity]["error_message"] = "granularity: wrong answer"
    bad = refcheck.check(doc)
    assert any("wrong answer" in b for b in bad)
    assert any(b.startswith("workload granularity") for b in bad)


def test_missing_counter_is_reported():
    doc = copy.deepcopy(GOOD)
    spawn = refcheck.WORKLOADS.index("spawn")
    del doc["benchmarks"][spawn]["proc_cpu_s"]
    assert refcheck.check(doc) == ["spawn/n:1/real_time: no counter proc_cpu_s"]


def test_cli_exit_status(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(GOOD))
    assert refcheck.main([str(good), "--variant", "tbb", "--workers", "2"]) == 0
    assert refcheck.main([str(good), "--variant", "omp"]) == 1


def test_without_drops_and_forbids_a_workload():
    doc = copy.deepcopy(GOOD)
    assert refcheck.check(doc, without=("fib",)) == [
        "workload fib: ran, but the reference does not offer it"]
    doc["benchmarks"] = [b for b in doc["benchmarks"] if not b["name"].startswith("fib/")]
    assert refcheck.check(doc) == ["workload fib: no benchmark ran"]
    assert refcheck.check(doc, without=("fib",)) == []
