"""Loading a run directory (fixtures/run_small) and merging its raw files into
results.csv and samples.csv."""
import csv
import io
import os

import pytest

from harness.driver import rundata

from conftest import FIXTURES

RAW = os.path.join(FIXTURES, "run_small", "raw")


@pytest.fixture
def data():
    return rundata.load_run(os.path.join(FIXTURES, "run_small"))


def rows_of(text):
    return list(csv.DictReader(io.StringIO(text)))


def pick(rows, **want):
    found = [r for r in rows if all(r[k] == str(v) for k, v in want.items())]
    assert len(found) == 1, want
    return found[0]


def test_results_csv_median_and_spread(data):
    text = rundata.results_csv(data.results)
    assert text.splitlines()[0].split(",") == rundata.RESULT_COLUMNS
    rows = rows_of(text)
    r = pick(rows, variant="chaselev", workers=2, benchmark="fib/n:20/real_time",
             metric="real_time_s")
    assert r["n"] == "3" and r["errors"] == "0" and r["reference"] == "0"
    assert r["workload"] == "fib"
    # repetitions 5.3, 5.1, 5.6 ms: median 5.3, min 5.1, max 5.6, quartiles 5.2 and 5.45
    got = [float(r[k]) for k in ("median", "min", "max", "q1", "q3")]
    assert got == pytest.approx([5.3e-3, 5.1e-3, 5.6e-3, 5.2e-3, 5.45e-3])
    steals = pick(rows, variant="chaselev", workers=2, benchmark="fib/n:20/real_time",
                  metric="steals")
    assert float(steals["median"]) == 41
    util = pick(rows, variant="chaselev", workers=2, benchmark="fib/n:20/real_time",
                metric="proc_cpu_per_wall")
    assert float(util["median"]) == pytest.approx(1.8)


def test_results_csv_reports_errors_and_keeps_valid_repetitions(data):
    rows = rows_of(rundata.results_csv(data.results))
    r = pick(rows, variant="static", workers=2, metric="real_time_s",
             benchmark="imbalance/imbalance:2/grain_us:100/submitters:2/real_time")
    assert r["errors"] == "1" and "wrong answer" in r["error_message"]
    assert r["n"] == "2" and float(r["median"]) == pytest.approx(15.4e-3)


def test_every_result_and_metric_has_a_row(data):
    rows = rows_of(rundata.results_csv(data.results))
    assert {(r["variant"], r["workers"], r["benchmark"]) for r in rows} == \
        {(r.variant, str(r.workers), r.benchmark) for r in data.results}
    assert all(len(r) == len(rundata.RESULT_COLUMNS) for r in rows)


def test_samples_csv_has_every_repetition(data):
    rows = rows_of(rundata.samples_csv(data.results))
    assert rows and list(rows[0]) == rundata.SAMPLE_COLUMNS
    times = [r for r in rows if r["metric"] == "real_time_s" and r["variant"] == "chaselev"
             and r["workers"] == "2" and r["benchmark"] == "fib/n:20/real_time"]
    assert [float(r["value"]) for r in times] == pytest.approx([5.3e-3, 5.1e-3, 5.6e-3])
    flagged = [r for r in rows if r["error"]]
    assert {r["repetition"] for r in flagged} == {"1"}
    assert all("wrong answer" in r["error"] for r in flagged)


def test_load_run_skips_bad_files_with_a_warning(capsys):
    data = rundata.load_run(os.path.join(FIXTURES, "run_small"))
    err = capsys.readouterr().err
    assert "workers-2-killed.json" in err and "workers-1-crashed.json" in err
    assert err.count("warning: skipping") == 2
    assert len(data.skipped) == 2
    # 3 variants x 2 worker counts x 4 benchmarks, none lost to the bad files
    assert len(data.results) == 24
    assert data.variants() == ["chaselev", "static", "threadpool"]
    assert data.workers() == [1, 2]
    bad = [r for r in data.results if r.errors]
    assert [(r.variant, r.workers) for r in bad] == [("static", 2)]
    assert not bad[0].usable and len(bad[0].valid) == 2


def test_variant_and_workers_come_from_the_context(tmp_path):
    """The file's location says nothing: a file named like another point still counts
    for the variant and worker count its context names."""
    src = os.path.join(RAW, "chaselev", "workers-2.json")
    dest = tmp_path / "r" / "raw" / "static" / "workers-1.json"
    dest.parent.mkdir(parents=True)
    dest.write_text(open(src).read())
    data = rundata.load_run(str(tmp_path / "r"))
    assert {(r.variant, r.workers) for r in data.results} == {("chaselev", 2)}


def test_a_simulated_plan_needs_no_min_time():
    plan = {"repetitions": 3, "min_time": None, "points": []}
    assert rundata.plan_problem(plan) == "no min_time"
    assert rundata.plan_problem(dict(plan, simulated=True)) is None
    assert rundata.plan_problem(dict(plan, simulated=True, min_time="x")) == "no min_time"
    point = dict(id="v/workers-1/fib", variant="v", reference=False, workers=1, workload="fib",
                 binary="build-sim/v/simbench", benchmarks=["fib/n:20/real_time"],
                 filter=None, raw="raw/v/workers-1/fib.json", log="logs/v/workers-1/fib.log")
    assert rundata.plan_problem(dict(plan, points=[point])) == "no min_time"
    assert rundata.plan_problem(dict(plan, simulated=True, points=[point])) is None
    real = dict(plan, min_time=0.1, points=[point])
    assert rundata.plan_problem(real) == "point 0 has no filter"
