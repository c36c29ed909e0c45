"""The engines of the sweep (harness/driver/engine.py): a map run through a Dask
distributed cluster that the test starts itself (a LocalCluster of two worker processes,
each offering the resource "machine" once) gives SIMULATED results equal to the local
engine's bit for bit (the simulator's output is a function of binary, model, arguments
and seed), runs the measured rounds one per machine, and records which worker ran each
point.  Skipped, with the reason, where Dask distributed cannot be imported."""
import csv
import filecmp
import glob
import json
import os

import pytest

from harness.driver import engine as enginemod
from harness.driver.config import UsageError

from conftest import ROOT, cli, make_fake_root
from test_map import fake_sim_build, map_env, small_map_args

distributed = pytest.importorskip(
    "distributed", reason="Dask distributed is not installed (Debian: python3-distributed)")


@pytest.fixture(scope="module")
def cluster():
    # the workers' processes run the benches with their own environment: the fake bench's
    # knob for the map's argument sets is theirs too
    os.environ["FAKE_BENCH_MAP"] = "1"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True,
                                  resources={enginemod.MACHINE: 1},
                                  dashboard_address=":0") as c:
        yield c
    del os.environ["FAKE_BENCH_MAP"]


def raw_files(run_dir):
    return sorted(os.path.relpath(p, run_dir)
                  for p in glob.glob(os.path.join(run_dir, "raw", "**", "*.json"), recursive=True))


def simulated_runs(map_dir):
    return sorted(os.path.basename(d) for d in glob.glob(os.path.join(map_dir, "*"))
                  if os.path.basename(d).startswith(("sim-", "heldout-")))


def assert_same_simulations(a, b):
    runs = simulated_runs(a)
    assert runs and runs == simulated_runs(b)
    for run in runs:
        files = raw_files(os.path.join(a, run))
        assert files and files == raw_files(os.path.join(b, run))
        for rel in files:
            fa, fb = os.path.join(a, run, rel), os.path.join(b, run, rel)
            assert measured(fa) == measured(fb) if rel.startswith("raw/") else \
                filecmp.cmp(fa, fb, shallow=False), f"{run}/{rel} differs"


def measured(path):
    """A raw file's iterations without what Google Benchmark says of the host there
    (cpu_time: the host thread's real CPU time; the context: the hour, the load)."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    return [{k: v for k, v in e.items() if k != "cpu_time"} for e in doc["benchmarks"]
            if e.get("run_type", "iteration") == "iteration"]


def simulated_cells(map_dir):
    with open(os.path.join(map_dir, "cells.csv"), newline="") as f:
        return [(r["cell"], r["winner"], r["runner_up"], r["margin"], r["flips"])
                for r in csv.DictReader(f) if r["simulated"] == "1"]


def test_a_map_through_dask_equals_the_local_one(cluster, tmp_path):
    root = make_fake_root(tmp_path / "tree")
    env = map_env(fake_sim_build(tmp_path / "build-sim"))
    local, dask = str(tmp_path / "local"), str(tmp_path / "dask")
    p = cli(*small_map_args(local), "--root", root, "--no-plot", env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    p = cli(*small_map_args(dask), "--root", root, "--no-plot", "--engine", "dask",
            "--scheduler", cluster.scheduler_address, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert_same_simulations(local, dask)
    # the SIMULATED cells alike, but for their ranges: widened by the held-out error, which
    # rests on the measured part (timings: never equal twice)
    assert simulated_cells(local) == simulated_cells(dask)
    workers = set(cluster.scheduler_info["workers"])
    settings = json.load(open(os.path.join(dask, "map.json")))
    assert settings["engines"][-1]["engine"] == "dask"
    assert set(settings["engines"][-1]["machines"]) == workers
    # measured: every round on a worker of the cluster, each group on one machine
    status = json.load(open(os.path.join(dask, "measured", "status.json")))
    plan = json.load(open(os.path.join(dask, "measured", "plan.json")))
    by_group = {}
    for p in plan["points"]:
        st = status[p["id"]]
        assert st["ok"] and st["worker"] in workers and st["host"] and "hosts" not in st
        by_group.setdefault((p["workload"], p["workers"]), set()).add(st["worker"])
    assert all(len(w) == 1 for w in by_group.values())
    for run in simulated_runs(dask):
        for st in json.load(open(os.path.join(dask, run, "status.json"))).values():
            assert st["worker"] in workers


def test_the_real_simulator_through_dask_equals_the_local_one(cluster, tmp_path):
    if not os.access(os.path.join(ROOT, "build-sim", "chaselev", "simbench"), os.X_OK):
        pytest.skip("the simulator is not built (make sim)")
    args = ["map", "--no-measured", "--no-build", "--no-plot", "--quiet", "--variants",
            "chaselev,threadpool", "--model", "epyc16:4", "--sim-grains", "100",
            "--sim-forms", "late", "--jobs", "2"]
    local, dask = str(tmp_path / "local"), str(tmp_path / "dask")
    p = cli(*args, "--out", local, timeout=600)
    assert p.returncode == 0, p.stderr
    p = cli(*args, "--out", dask, "--engine", "dask", "--scheduler", cluster.scheduler_address,
            timeout=600)
    assert p.returncode == 0, p.stderr
    assert_same_simulations(local, dask)


def test_measured_rounds_need_a_machine_resource():
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as c:
        engine = enginemod.DaskEngine(c.scheduler_address)
        try:
            with pytest.raises(UsageError, match="resources machine=1"):
                list(engine.run([(None, dict(workload="w", workers=1), 0)], True))
        finally:
            engine.close()


def test_an_engine_is_named_on_the_command_line():
    assert isinstance(enginemod.make_engine("local", None, 3), enginemod.LocalEngine)
    with pytest.raises(UsageError, match="needs --scheduler"):
        enginemod.make_engine("dask", None, 1)
    with pytest.raises(UsageError, match="goes with --engine dask"):
        enginemod.make_engine("local", "tcp://x:1", 1)
