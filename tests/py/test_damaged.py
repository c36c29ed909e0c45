"""run.py on damaged data (corrupt compressed files, deeply nested JSON, numbers that are
not finite, positive or representable): every command refuses it with a message that
names the file, never a traceback, and never marks such a run publishable."""
import glob
import gzip
import json
import math
import os
import shutil

import pytest

from harness.driver import simmodel, targetfile
from harness.driver.files import temp_name

from conftest import cli
from test_publish import mark_clean, sweep

DEEP = "[" * 200000 + "]" * 200000          # a 400 kB bracket nest


def bad_gzip(path):
    """A .json.gz whose header is right and whose deflate data is not."""
    with open(path, "wb") as f:
        f.write(gzip.compress(b'{"context": {}, "benchmarks": []}')[:10] + b"\xff" * 40)


@pytest.mark.parametrize("command", [["report", "run_small", "--no-plot"],
                                     ["compare", "run_small", "run_small"],
                                     ["plot", "run_small"],
                                     ["publish", "run_small", "--prune-only"]])
def test_invalid_deflate_data_is_named_not_a_traceback(small_run, command):
    if command[0] == "plot" and not shutil.which("gnuplot"):
        pytest.skip("gnuplot not installed")
    root, run_dir = small_run
    raw = os.path.join(run_dir, "raw", "chaselev", "workers-1.json")
    os.unlink(raw)
    bad_gzip(raw + ".gz")
    p = cli(*command, "--root", root)
    assert "Traceback" not in p.stderr and "zlib" not in p.stderr.split("damaged gzip")[0]
    assert "workers-1.json.gz: damaged gzip data" in p.stderr + p.stdout, p.stderr
    if command[0] == "publish":
        meta = json.load(open(os.path.join(run_dir, "meta.json")))
        assert meta["publishable"] is False and "raw file" in p.stdout


def test_deeply_nested_json_is_refused_with_its_name(small_run, tmp_path):
    root, run_dir = small_run
    with open(os.path.join(run_dir, "plan.json"), "w") as f:
        f.write(DEEP)
    p = cli("report", "run_small", "--root", root, "--no-plot")
    assert "Traceback" not in p.stderr and "plan.json" in p.stderr
    assert "nested too deeply" in p.stderr
    # a raw file nested so: skipped, named
    with open(os.path.join(run_dir, "raw", "static", "workers-2.json"), "w") as f:
        f.write(DEEP)
    p = cli("report", "run_small", "--root", root, "--no-plot")
    assert "Traceback" not in p.stderr and "workers-2.json: not JSON a reader can take" in p.stderr
    # a machine model: flatten and simulate --machine refuse it, naming the file
    model = tmp_path / "deep.json"
    model.write_text(DEEP)
    for command in (["flatten", str(model)], ["simulate", "--machine", str(model), "--no-build"]):
        p = cli(*command)
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        assert "deep.json: not a readable JSON model: nested too deeply" in p.stderr
    with pytest.raises(simmodel.ModelError, match="nested too deeply"):
        simmodel.load(str(model))


def test_simulate_resume_of_a_deeply_nested_plan_is_refused(tmp_path):
    run_dir = tmp_path / "sim-x"
    run_dir.mkdir()
    (run_dir / "plan.json").write_text(DEEP)
    (run_dir / "meta.json").write_text(json.dumps({"simulated": True, "run_id": "sim-x"}))
    p = cli("simulate", "--resume", str(run_dir))
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "plan.json is unusable" in p.stderr


def clean_run(fake_root):
    run_dir, _ = sweep(fake_root)
    mark_clean(run_dir)
    return run_dir


def edit_raw(run_dir, change):
    path = os.path.join(run_dir, "raw", "chaselev", "workers-2", "fib.json")
    doc = json.load(open(path))
    change(doc)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def first_iteration(doc):
    return next(e for e in doc["benchmarks"] if e.get("run_type") == "iteration")


@pytest.mark.parametrize("damage, why", [
    ("truncated", "truncated"),
    ("negative", "no valid measurement: real_time = -"),
    ("nan", "no valid measurement: real_time = nan"),
    ("duplicate", "has repetition 0 twice"),
])
def test_publish_refuses_a_damaged_run(fake_root, damage, why):
    run_dir = clean_run(fake_root)
    path = os.path.join(run_dir, "raw", "chaselev", "workers-2", "fib.json")
    if damage == "truncated":
        text = open(path).read()
        with open(path, "w") as f:
            f.write(text[: len(text) // 2])
    elif damage == "negative":
        edit_raw(run_dir, lambda d: first_iteration(d).update(real_time=-5.0))
    elif damage == "nan":
        edit_raw(run_dir, lambda d: first_iteration(d).update(real_time=math.nan))
    else:
        edit_raw(run_dir, lambda d: d["benchmarks"].append(dict(first_iteration(d))))
    p = cli("publish", "--root", fake_root, os.path.basename(run_dir))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "not publishable" in p.stderr and why in p.stderr, p.stderr
    assert "fib.json" in p.stderr
    meta = json.load(open(os.path.join(run_dir, "meta.json")))
    assert meta.get("published") is None and os.path.isdir(os.path.join(run_dir, "logs"))


def test_an_undamaged_run_still_publishes(fake_root):
    run_dir = clean_run(fake_root)
    p = cli("publish", "--root", fake_root, os.path.basename(run_dir))
    assert p.returncode == 0, p.stderr
    assert json.load(open(os.path.join(run_dir, "meta.json")))["publishable"] is True


@pytest.mark.parametrize("field, value", [("ours", [float("nan")]), ("ref", [-5.0]),
                                          ("target", float("inf")), ("target", float("nan"))])
def test_a_targets_record_with_damaged_numbers_is_refused(small_run, field, value):
    root, run_dir = small_run
    doc = dict(format=targetfile.FORMAT, rounds=3, started="a", finished="b",
               git=dict(rev="abc", code_dirty=[]), revisions={}, not_measured=[],
               comparisons=[dict(comparison="pingpong", what="round trip vs Go", unit="ns",
                                 ours=[200.0, 210.0], ref=[400.0, 420.0], median_ours=200.0,
                                 median_ref=400.0, ratio=0.5, target=0.75,
                                 lower_is_better=True, met=True)])
    doc["comparisons"][0][field] = value
    with open(os.path.join(run_dir, targetfile.FILE), "w") as f:
        json.dump(doc, f)
    p = cli("report", "run_small", "--root", root, "--no-plot")
    assert p.returncode == 0 and "Traceback" not in p.stderr
    text = open(os.path.join(run_dir, "REPORT.md")).read()
    assert "nanx" not in text and "infx" not in text and "-5.00x" not in text
    assert "## Against what users would pick" not in text
    assert "targets record skipped" in text and "finite positive" in text


def model_doc(cost):
    doc = json.load(open(simmodel.model_path("epyc16")))
    doc["costs_ns"]["syscall"]["value"] = cost
    return doc


def test_costs_the_simulated_clock_cannot_hold_are_refused(tmp_path):
    simmodel.check(model_doc(1e6))                    # a slow syscall: fine
    for cost in (1e10, 1e11, float("inf")):
        with pytest.raises(simmodel.ModelError, match="costs_ns.syscall"):
            simmodel.check(model_doc(cost))
    # an uncertain cost at the top of its range must fit too: its band re-simulates it
    doc = json.load(open(simmodel.model_path("epyc16")))
    doc["costs_ns"]["futex_wake"]["value"] = 6e8
    doc["uncertainty"] = {"wake": {"low": 0.5, "high": 2.0, "source": "test"}}
    with pytest.raises(simmodel.ModelError, match="high end of uncertainty.wake"):
        simmodel.check(doc)
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(model_doc(1e10)))
    p = cli("flatten", str(path))
    assert p.returncode == 2 and "simulated clock" in p.stderr and "huge.json" in p.stderr


def test_a_legal_long_out_name_is_not_refused(fake_root, tmp_path):
    name = "r" * 250                                   # NAME_MAX is 255: legal
    p = cli("run", "--root", fake_root, "--workers", "1", "--workloads", "fib", "--variants",
            "static", "--repetitions", "1", "--no-plot", "--quiet", "--out", tmp_path / name)
    assert p.returncode == 0, p.stderr
    assert os.path.exists(tmp_path / name / "plan.json")
    assert len(os.fsencode(temp_name(name))) <= 255
    assert len(os.fsencode(temp_name("\u00e9" * 127))) <= 255     # cut at a character
    assert glob.glob(str(tmp_path / ".*")) == []
