"""The policy map (`./run.py map`: policymap.py, mapgrid.py, mapcells.py, mapguide.py,
mapfigs.py, mapreport.py): its forms are the workloads' own parameters and reproduce
their registered argument sets; a small map runs end to end on the fake bench and a fake
simbench (tests/py/fixtures), every cell with its winner, margin, verdict and counters,
the held-out check without the model's in-sample points, the guide generated from the
cells, a figure and a table per pair of axes; a resumed map runs nothing twice."""
import copy
import csv
import glob
import json
import os
import re
import shutil
import subprocess

import pytest

from harness.driver import mapcells, mapgrid, mapguide, policymap

from conftest import FIXTURES, ROOT, cli, has_gnuplot, make_fake_root

SIM_VARIANTS = ("chaselev", "static", "threadpool")


def fake_sim_build(path, variants=SIM_VARIANTS):
    for v in variants:
        dest = os.path.join(path, v, "simbench")
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy(os.path.join(FIXTURES, "fake_simbench.py"), dest)
        os.chmod(dest, 0o755)
        # its policy words are the fake bench's (what --policy prints)
        shutil.copy(os.path.join(FIXTURES, "fake_bench.py"), os.path.dirname(dest))
    return str(path)


def small_map_args(out):
    return ["map", "--out", out, "--model", "epyc16:4", "--sim-grains", "10,100",
            "--sim-forms", "late,foreign,fib", "--jobs", "2", "--repetitions", "4", "--quiet"]


def map_env(sim_build, **more):
    return dict({"SB_SIM_BUILD": sim_build, "FAKE_BENCH_MAP": "1",
                 "SCHEDBENCH_ITERS_PER_US": "100"}, **more)


@pytest.fixture(scope="module")
def small_map(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("map")
    root = make_fake_root(tmp / "tree")
    sim_build = fake_sim_build(tmp / "build-sim")
    out = str(tmp / "map")
    p = cli(*small_map_args(out), "--root", root, env=map_env(sim_build), timeout=300)
    assert p.returncode == 0, p.stderr
    return dict(root=root, sim_build=sim_build, out=out, stderr=p.stderr)


def cells_csv(out):
    with open(os.path.join(out, "cells.csv"), newline="") as f:
        return list(csv.DictReader(f))


# --- the grid --------------------------------------------------------------------------

def workload_args():
    """{workload: [parameter names]} from the workloads' sources (arg_names, or the
    WL_*_ARGS macro of wl_defs.h they use)."""
    defs = open(os.path.join(ROOT, "workloads", "wl_defs.h")).read()
    macros = {m: re.findall(r'"(\w+)"', body)
              for m, body in re.findall(r"#define (WL_\w+_ARGS) \{([^}]*)\}", defs)}
    out = {}
    for path in glob.glob(os.path.join(ROOT, "workloads", "*.c")):
        text = open(path).read()
        m = re.search(r"\.arg_names = (\{[^}]*\}|WL_\w+_ARGS)", text)
        if m:
            body = m.group(1)
            out[os.path.basename(path)[:-2]] = macros[body] if body in macros else \
                re.findall(r'"(\w+)"', body)
    return out


def test_every_form_is_a_workload_with_its_own_parameters():
    """A form fixes, sweeps and sizes parameters its workload has, all of them; every
    entry of what the map cannot express names a workload and a parameter that exist."""
    args = workload_args()
    for f in mapgrid.FORMS:
        assert f.workload in args, f.key
        used = [k for k, _ in f.fixed] + [x for x in (f.grain, f.size) if x]
        assert sorted(used) == sorted(args[f.workload]), f.key
        assert {k for k, _ in f.sim_fixed} <= set(args[f.workload]), f.key
        assert f.metric in ("real_time_s", "window_s", "p50_us", "p99_us")
    params = {p for ps in args.values() for p in ps}
    for what, why in mapgrid.MISSING:
        named = set(re.findall(r"`([\w-]+)`", why))
        assert named & set(args) or "harness/bench" in why, what
        assert named & params or "--args" in why or "harness/bench" in why, what


def registered_listing():
    """The names a real binary lists (the bench with the full sets, else simbench's
    default sets); None when neither is built."""
    bench = os.path.join(ROOT, "build", "chaselev", "bench")
    if os.access(bench, os.X_OK):
        out = subprocess.run([bench, "--workers", "1", "--benchmark_list_tests=true"],
                             capture_output=True, text=True, env=dict(os.environ,
                                                                      SCHEDBENCH_FULL="1"))
        return out.stdout.split()
    sim = os.path.join(ROOT, "build-sim", "chaselev", "simbench")
    if os.access(sim, os.X_OK):
        out = subprocess.run([sim, "--list"], capture_output=True, text=True)
        return [line.split()[2] for line in out.stdout.splitlines()]
    return None


def test_the_forms_reproduce_the_registered_sets_at_their_grains():
    """Each form's rule gives, at 1-2 workers, argument sets the workloads register: the
    measured map is not empty, and it holds a cell of every form but those whose
    registered sets are only in the full listing when only simbench is built."""
    listed = registered_listing()
    if listed is None:
        pytest.skip("no bench or simbench built (make, or make sim)")
    settings = dict(forms=[f.key for f in mapgrid.FORMS], grains=list(mapgrid.GRAINS_NS),
                    workers=[1, 2])
    found = policymap.measured_names(listed, settings)
    forms = {f.key for cells in found.values() for f, _ in cells}
    assert {"late", "none", "skewed", "fib", "uts", "arrival-p99", "arrival-p50"} <= forms
    assert all(g is None or g in mapgrid.GRAINS_NS for cells in found.values() for _, g in cells)


def test_a_form_sizes_its_cells_and_refuses_what_it_cannot_express():
    late = mapgrid.FORM_BY_KEY["late"]
    assert late.params(100000, 2, False)["tasks"] == 1000          # the registered set
    assert late.params(100, 2, False) is None                      # 0.1 us: whole us only
    big = late.params(1000000, 128, True)["tasks"]
    assert big >= mapgrid.MIN_TASKS_PER_WORKER * 128 and big % 128 == 0
    foreign = mapgrid.FORM_BY_KEY["foreign"]
    assert foreign.params(100, 4, True)["grain_ns"] == 100
    assert foreign.params(100, 2, False)["n"] == 20000          # registered; SIMULATED less:
    assert foreign.params(100, 128, True)["n"] == mapgrid.SUBMITTER_SIM_CAP   # starts bind
    assert mapgrid.FORM_BY_KEY["fib"].params(1000, 2, False) is None
    arrival = mapgrid.FORM_BY_KEY["arrival-p99"]
    assert arrival.params(None, 2, False)["probes"] != arrival.params(None, 64, True)["probes"]


def test_the_estimates_add_up():
    f = mapgrid.FORM_BY_KEY["late"]
    one = mapgrid.sim_run_seconds(f, 16)
    assert mapgrid.estimate_sim([(f, 1000, 16)], 10, 6, 0.5, 2) == pytest.approx(one * 10 * 4 / 2)
    points = [dict(workers=2, benchmarks=["a/x:1/real_time", "b/y:2/real_time"], repetitions=3)]
    sec = mapgrid.estimate_measured(points, 10, 0.05, lambda p, b: 0.01 if b[0] == "a" else 1.0)
    assert sec == pytest.approx(3 * (mapgrid.BENCH_START_S + 0.05 + 1.0))


# --- a small map end to end ----------------------------------------------------------------

def test_a_small_map_runs_every_part_into_its_runs(small_map):
    out = small_map["out"]
    settings = json.load(open(os.path.join(out, "map.json")))
    assert settings["engines"][0]["engine"] == "local"
    assert "measured: 4 cells" in small_map["stderr"] and "SIMULATED: 5 cells" in small_map["stderr"]
    plan = json.load(open(os.path.join(out, "measured", "plan.json")))
    names = {b for p in plan["points"] for b in p["benchmarks"]}
    assert names == {"fib/n:25/real_time", mapgrid.bench_name(
        "imbalance", mapgrid.FORM_BY_KEY["skewed"].params(10000, 1, False),
        ["imbalance", "grain_us", "tasks", "submitters", "late", "skew"])}
    assert {p["variant"] for p in plan["points"]} == {"chaselev", "chaselev-aa", "static",
                                                        "threadpool", "tbb"}
    status = json.load(open(os.path.join(out, "measured", "status.json")))
    assert all(s["ok"] and s["host"] for s in status.values())
    ends = sorted(os.path.basename(d) for d in glob.glob(os.path.join(out, "sim-epyc16.*")))
    assert len(ends) == 6
    bands = json.load(open(os.path.join(out, "sim-epyc16", "bands.json")))
    assert len(bands["ends"]) == 6 and bands["points"] and "window_s" in bands["metrics"]
    end_meta = json.load(open(os.path.join(out, ends[0], "meta.json")))
    assert end_meta["band_of"] == "sim-epyc16" and end_meta["band_end"] in bands["ends"]
    held = json.load(open(os.path.join(out, "heldout-here", "plan.json")))
    assert {b for p in held["points"] for b in p["benchmarks"]} == names
    assert held["model"] == "here"


def test_every_cell_has_a_winner_a_margin_a_verdict_and_its_counters(small_map):
    rows = cells_csv(small_map["out"])
    sim = [r for r in rows if r["simulated"] == "1"]
    measured = [r for r in rows if r["simulated"] == "0"]
    assert len(sim) == 5 and len(measured) == 4
    for r in rows:
        assert r["verdict"] in ("robust", "fragile", "undecided")
        assert r["winner"] != r["runner_up"] and float(r["margin"]) > 0
        assert float(r["low"]) <= float(r["margin"]) <= float(r["high"])
        if r["verdict"] == "robust":
            assert float(r["low"]) > 1
        if r["flips"]:               # another variant wins at an end: never robust
            assert r["verdict"] == "fragile"
    assert all(r["winner_CPU_per_wall"] for r in sim)
    assert any(r["winner"] == "tbb" or r["runner_up"] == "tbb" for r in measured)
    assert not any(r["winner"] == "chaselev-aa" for r in rows)


def test_the_held_out_check_leaves_out_the_models_fitted_points(small_map):
    data = mapcells.load_map(small_map["out"],
                             json.load(open(os.path.join(small_map["out"], "map.json"))))
    fitted = mapcells.fitted_points(os.path.join(small_map["out"], "heldout-here"))
    assert fitted                          # here.json fits chaselev's fib(25) at 1 worker
    inside = [r for r in data.heldout if r.in_sample]
    assert [r.cell.id for r in inside] == ["fib/own/1w/here"]
    assert set(data.errors) == {"fib", "skewed"}
    report = open(os.path.join(small_map["out"], "REPORT.md")).read()
    assert "## Held-out check" in report and "`fib/own/1w/here`" in report
    for r in data.heldout:
        assert "tbb" not in r.errors and r.measured_winner in r.errors


def test_the_guide_is_generated_from_the_cells(small_map):
    """Every rule names cells that exist; renaming a winner in the data renames it in
    the rules (no rule text is written by hand)."""
    settings = json.load(open(os.path.join(small_map["out"], "map.json")))
    data = mapcells.load_map(small_map["out"], settings)
    ids = {c.id for c in data.cells}
    found = mapguide.rules(data)
    assert found and all(set(r.evidence) <= ids for r in found)
    renamed = copy.deepcopy(data)
    for c in renamed.cells:
        for side in ("winner", "runner"):
            if getattr(c, side) == "chaselev":
                setattr(c, side, "zz-renamed")
        for d in (c.counters, c.medians):
            if "chaselev" in d:
                d["zz-renamed"] = d.pop("chaselev")
    for r in renamed.heldout:               # their cells are the renamed ones (deepcopy)
        for d in (r.errors, r.predicted):
            if "chaselev" in d:
                d["zz-renamed"] = d.pop("chaselev")
    text = " ".join(r.text + r.title for r in mapguide.rules(renamed))
    assert "chaselev" not in text.replace("chaselev-aa", "")
    report = open(os.path.join(small_map["out"], "REPORT.md")).read()
    for heading in ("## The policy guide", "## Robust cells not won by", "## The figures",
                    "## The grid", "## What the map cannot express", "## The A/A row",
                    "## Every cell"):
        assert heading in report


def test_a_figure_and_a_table_per_pair_of_axes(small_map):
    plots = os.path.join(small_map["out"], "plots")
    manifest = json.load(open(os.path.join(plots, "plots.json")))
    names = {e["name"] for e in manifest["plots"]}
    assert names == {"map_grain_workers", "map_grain_form", "map_form_workers"}
    for e in manifest["plots"]:
        rows = list(csv.reader(open(os.path.join(plots, e["table"]), newline="")))
        assert rows[0][:2] == ["panel", "cell"] and len(rows) > 1
        for row in rows[1:]:
            assert ("SIMULATED" in row[0]) == (row[mapcells.CELL_HEADERS.index("simulated") + 1] == "1")
        gp = open(os.path.join(plots, e["script"])).read()
        assert "SIMULATED" in gp and "measured" in gp
        if has_gnuplot():
            assert sorted(e["files"]) == [e["name"] + ".png", e["name"] + ".svg"], e


def test_a_resumed_map_runs_nothing_twice(small_map, tmp_path):
    out = str(tmp_path / "map")
    shutil.copytree(small_map["out"], out)
    log, sim_log = str(tmp_path / "bench.log"), str(tmp_path / "sim.log")
    env = map_env(small_map["sim_build"], FAKE_BENCH_LOG=log, FAKE_SIMBENCH_LOG=sim_log)
    p = cli("map", "--resume", out, "--root", small_map["root"], "--quiet", "--no-plot",
            env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert not os.path.exists(log) and not os.path.exists(sim_log)
    # one simulated point lost: the resume runs it, and only it
    plan = json.load(open(os.path.join(out, "sim-epyc16", "plan.json")))
    lost = plan["points"][0]
    os.unlink(os.path.join(out, "sim-epyc16", lost["raw"]))
    p = cli("map", "--resume", out, "--root", small_map["root"], "--quiet", "--no-plot",
            env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    ran = [json.loads(line) for line in open(sim_log)]
    assert len(ran) == len(lost["benchmarks"]) and {r[0] for r in ran} == {lost["variant"]}
    assert open(os.path.join(out, "cells.csv")).read() == \
        open(os.path.join(small_map["out"], "cells.csv")).read()


def test_an_estimate_runs_nothing(small_map, tmp_path):
    log = str(tmp_path / "sim.log")
    p = cli("map", "--estimate", "--root", small_map["root"], "--model", "numa128:128",
            "--no-measured", env=map_env(small_map["sim_build"], FAKE_SIMBENCH_LOG=log))
    assert p.returncode == 0, p.stderr
    assert "SIMULATED:" in p.stdout and not os.path.exists(log)
    assert not os.path.exists(os.path.join(small_map["root"], "results"))


def test_a_map_of_uncommitted_code_is_not_published(small_map, tmp_path):
    """--publish prunes every run of the map, or none: a measured run that is not
    publishable (here: not measured in a git checkout) stops it before anything goes."""
    out = str(tmp_path / "map")
    shutil.copytree(small_map["out"], out)
    p = cli("map", "--report", out, "--publish", "--no-plot", "--root", small_map["root"],
            env=map_env(small_map["sim_build"]))
    assert p.returncode == 2 and "the map cannot be published: " in p.stderr
    assert os.path.isdir(os.path.join(out, "measured", "logs"))
    assert os.path.isdir(os.path.join(out, "sim-epyc16", "logs"))


def test_a_cell_prints_its_margin_with_its_own_sign():
    # a measured margin is the Hodges-Lehmann estimate, which can fall below 1 where the
    # winner (lowest median) is within noise of its runner-up: "-1%", never "+-1%"
    from types import SimpleNamespace
    from harness.driver.mapfigs import cell_text
    assert cell_text(SimpleNamespace(margin=1.16, verdict=mapcells.ROBUST)) == "+16%"
    assert cell_text(SimpleNamespace(margin=0.99, verdict=mapcells.FRAGILE)) == "-1%~"
    assert cell_text(SimpleNamespace(margin=12.0, verdict=mapcells.ROBUST)) == "x12"
