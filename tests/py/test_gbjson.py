"""Parsing Google Benchmark JSON: entries, units, counters, errors, bad files, names."""
import json
import math
import os

import pytest

from harness.driver import gbjson, rundata

from conftest import FIXTURES

RAW = os.path.join(FIXTURES, "run_small", "raw")


def parse_text(text, source):
    """(context, [Entry]) of Google Benchmark JSON text, as load_gb_file reads a file."""
    return gbjson.parse_gb_doc(gbjson.parse_gb_text(text, source), source)


def test_entries_units_counters_and_context():
    context, entries = gbjson.load_gb_file(os.path.join(RAW, "chaselev", "workers-2.json"))
    assert context["variant"] == "chaselev" and context["workers"] == "2"
    assert context["cpu_model"] == "AMD EPYC 7B13"
    # 4 benchmarks x 3 repetitions; the mean/median/stddev/cv aggregates are not entries
    assert len(entries) == 12
    fib = [e for e in entries if e.benchmark == "fib/n:20/real_time"]
    assert [e.repetition for e in fib] == [0, 1, 2]
    assert fib[0].real_s == pytest.approx(5.3e-3)        # 5.3 ms
    assert fib[0].cpu_s == pytest.approx(0.212e-3)
    assert fib[0].counters["steals"] == 38
    assert fib[0].counters["proc_cpu_s"] == pytest.approx(0.00954)
    # Google Benchmark's own fields are not counters
    for field in ("repetitions", "family_index", "iterations", "threads", "repetition_index"):
        assert field not in fib[0].counters
    granularity = [e for e in entries if e.benchmark.startswith("granularity/")]
    assert [e.counters["metg_us"] for e in granularity] == [3.5, 3.4, 3.6]


def test_error_entry_is_kept_as_error():
    _, entries = gbjson.load_gb_file(os.path.join(RAW, "static", "workers-2.json"))
    errors = [e for e in entries if e.error]
    assert len(errors) == 1
    assert errors[0].benchmark.startswith("imbalance/imbalance:2/")
    assert errors[0].repetition == 1
    assert "wrong answer" in errors[0].error


def test_truncated_file_is_named():
    path = os.path.join(RAW, "threadpool", "workers-2-killed.json")
    with pytest.raises(gbjson.BadResultFile) as e:
        gbjson.load_gb_file(path)
    assert path in str(e.value) and "truncated" in str(e.value)


def test_non_json_file_is_named():
    path = os.path.join(RAW, "static", "workers-1-crashed.json")
    with pytest.raises(gbjson.BadResultFile) as e:
        gbjson.load_gb_file(path)
    assert path in str(e.value) and "not JSON" in str(e.value)


@pytest.mark.parametrize("doc", [
    {"context": {}},                                          # no benchmarks
    {"benchmarks": 3},                                         # not a list
    {"benchmarks": ["fib"]},                                   # entry not an object
    {"benchmarks": [{"name": "fib/n:1", "run_type": "iteration", "time_unit": "ns"}]},
    {"benchmarks": [{"name": "fib/n:1", "real_time": 1, "cpu_time": 1, "time_unit": "ps"}]},
    [1, 2],
])
def test_wrong_shapes_raise_bad_result_file(doc):
    with pytest.raises(gbjson.BadResultFile):
        parse_text(json.dumps(doc), "x.json")


def test_non_finite_counters_survive_parsing():
    text = ('{"benchmarks": [{"name": "a/x:1", "run_type": "iteration", "real_time": 2,'
            ' "cpu_time": 1, "time_unit": "us", "p99_us": NaN, "steals": Infinity}]}')
    _, (entry,) = parse_text(text, "x.json")
    assert entry.real_s == pytest.approx(2e-6)
    assert math.isnan(entry.counters["p99_us"])
    r = rundata.Result("v", False, 1, entry.benchmark, "x.json", [entry])
    assert r.values("p99_us") == [] and r.values("steals") == []   # never a number


def test_names():
    name = "imbalance/imbalance:2/grain_us:100/submitters:2/real_time"
    assert gbjson.workload_of(name) == "imbalance"
    assert gbjson.params_of(name) == {"imbalance": "2", "grain_us": "100", "submitters": "2"}
    assert gbjson.display_name(name) == "imbalance/imbalance:2/grain_us:100/submitters:2"
    assert gbjson.display_name("fib") == "fib"


@pytest.mark.parametrize("fields, words", [
    ('"real_time": NaN, "cpu_time": 1', ["real_time = nan"]),
    ('"real_time": 2, "cpu_time": NaN', ["cpu_time = nan"]),
    ('"real_time": Infinity, "cpu_time": -Infinity', ["real_time = inf", "cpu_time = -inf"]),
    ('"real_time": 0, "cpu_time": 0', ["real_time = 0"]),
])
def test_a_time_that_is_not_a_measurement_is_an_error(fields, words):
    """Google Benchmark can write NaN: the repetition is kept, as an error that says so."""
    text = ('{"benchmarks": [{"name": "a/x:1", "run_type": "iteration", "time_unit": "us",'
            ' "iterations": Infinity, "repetition_index": NaN, ' + fields + '}]}')
    _, (entry,) = parse_text(text, "x.json")
    assert entry.error.startswith("no valid measurement: ")
    for word in words:
        assert word in entry.error
    assert (entry.iterations, entry.repetition) == (0, 0)


@pytest.mark.parametrize("unit", ['["ms"]', '{"a": 1}', "3"])
def test_a_time_unit_that_is_not_a_name_is_refused(unit):
    text = ('{"benchmarks": [{"name": "a/x:1", "real_time": 1, "cpu_time": 1,'
            ' "time_unit": ' + unit + '}]}')
    with pytest.raises(gbjson.BadResultFile):
        parse_text(text, "x.json")
