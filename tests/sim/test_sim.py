"""Tests of the simulator (harness/sim): `make test-sim` builds build-sim/ first.

Every test runs small simulated workloads (seconds in all) and checks exact outcomes:
determinism bit for bit, every task run exactly once, a 1-worker run's CPU time equal to
the sum of its charged costs, a dropped wake-up reported as a stall with the stuck
threads named, and bad input refused with exit status 2.  tests/sim/engine_probe.c, a
simulated program without a scheduler, lays out accesses for the tests that recompute
the engine's costs to the picosecond: line transfers and their queueing, the stride
prefetcher, futex waits and wakes.
"""
import json
import os
import random
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from harness.driver import simmodel as modelmod  # noqa: E402
from harness.driver import validate  # noqa: E402

MODELS = os.path.join(ROOT, "tests", "sim", "models")
PY = sys.executable
TIMEOUT = 120


def simbench(variant):
    path = os.path.join(ROOT, os.environ.get("SB_SIM_BUILD", "build-sim"), variant, "simbench")
    assert os.path.exists(path), "run `make sim` first (%s)" % path
    return path


def variants():
    out = subprocess.run(["make", "-s", "--no-print-directory", "list-variants"], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout.split()
    assert out
    return out


@pytest.fixture(scope="module")
def flat(tmp_path_factory):
    """name -> the flat form of tests/sim/models/<name>.json."""
    d = tmp_path_factory.mktemp("models")
    out = {}
    for f in os.listdir(MODELS):
        m = modelmod.load(os.path.join(MODELS, f))
        p = d / (m["name"] + ".flat")
        p.write_text(modelmod.flatten(m))
        out[m["name"]] = str(p)
    return out


_arg_names = {}


def set_name(variant, workload, args):
    """The benchmark name of `workload` with the values "a,b,..." (the argument names
    from simbench's own listing)."""
    if variant not in _arg_names:
        out = subprocess.run([simbench(variant), "--benchmark_list_tests"], check=True,
                             capture_output=True, text=True, timeout=TIMEOUT).stdout
        for line in out.split():
            wl, *params = line.split("/")[:-1]
            _arg_names.setdefault(variant, {}).setdefault(wl, [x.split(":")[0] for x in params])
    names = _arg_names[variant][workload]
    values = args.split(",")
    assert len(values) == len(names), (workload, names, args)
    return "/".join([workload] + ["%s:%s" % nv for nv in zip(names, values)])


# what Google Benchmark's context says of the host and the hour, not of the simulation
HOST_CONTEXT = ("date", "host_name", "executable", "num_cpus", "mhz_per_cpu",
                "cpu_scaling_enabled", "caches", "load_avg", "library_build_type")


def measured(path):
    """A raw file's iterations without what they say of the host (cpu_time)."""
    doc = json.loads(open(path).read())
    return [{k: v for k, v in b.items() if k != "cpu_time"} for b in doc["benchmarks"]
            if b.get("run_type") == "iteration"]


def run(variant, model, workers, workload, args, reps=2, seed=1, check=True, env=None):
    """simbench on one set, reps repetitions; stdout is its JSON with the iterations
    alone (no aggregates) and without what it says of the host (the context's host keys,
    cpu_time), so that two runs compare as text."""
    name = set_name(variant, workload, args)
    p = subprocess.run([simbench(variant), "--model", model, "--workers", str(workers),
                        "--set", name, "--benchmark_repetitions=%d" % reps,
                        "--benchmark_format=json", "--seed", str(seed)],
                       capture_output=True, text=True, timeout=TIMEOUT, env=env)
    if check:
        assert p.returncode == 0, p.stderr
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        return p
    doc["context"] = {k: v for k, v in doc["context"].items() if k not in HOST_CONTEXT}
    # cpu_time is Google Benchmark's: the host thread's real CPU time, which mostly
    # waits (the simulated CPU time is proc_cpu_s)
    doc["benchmarks"] = [{k: v for k, v in b.items() if k != "cpu_time"}
                         for b in doc["benchmarks"] if b.get("run_type") == "iteration"]
    p.stdout = json.dumps(doc, indent=1)
    return p


def test_determinism_bit_for_bit(flat):
    # also from another environment: one variable more or fewer once moved every later
    # heap object within its cache line (setenv's copy of the array) and changed the run
    more = dict(os.environ, SB_DETERMINISM_PROBE="1")
    for v in ("chaselev", "adaptive", "numa"):
        a = run(v, flat["test8"], 4, "imbalance", "2,5,400,3,1,0", seed=7).stdout
        b = run(v, flat["test8"], 4, "imbalance", "2,5,400,3,1,0", seed=7).stdout
        c = run(v, flat["test8"], 4, "imbalance", "2,5,400,3,1,0", seed=7, env=more).stdout
        d = run(v, flat["test8"], 4, "imbalance", "2,5,400,3,1,0", seed=7, env={}).stdout
        assert a == b, v
        assert a == c == d, v + ": the environment changed the simulated run"
        doc = json.loads(a)
        assert doc["context"]["simulated"] == "true" and doc["context"]["model"] == "test8"
        assert doc["context"]["address_layout"] == "fixed"


def test_determinism_does_not_depend_on_where_memory_is_mapped(flat):
    # with address-space randomization on, about one run in three of this point moved a
    # line transfer; simbench turns it off for itself (fixed_layout in sim_main.c)
    runs = {run("threadpool", flat["test8"], 2, "fib", "25", reps=1).stdout for _ in range(6)}
    assert len(runs) == 1


def test_every_task_runs_exactly_once(flat):
    for v in variants():
        doc = json.loads(run(v, flat["test8"], 4, "imbalance", "2,5,400,3,1,0").stdout)
        for b in doc["benchmarks"]:
            assert not b.get("error_occurred"), (v, b)
            assert b["tasks_run"] == 400, (v, b["tasks_run"])
        doc = json.loads(run(v, flat["test8"], 3, "fib", "15").stdout)
        for b in doc["benchmarks"]:
            assert b["tasks_run"] == b["items"] + 1, (v, b)  # the root, then one per spawn


def test_one_worker_cpu_time_is_the_sum_of_charges(flat):
    # unitcost charges only the switch (1 us) and the kernel (10 ns per iteration): the
    # CPU time of a 1-worker run is tasks x grain + switches x 1 us, exactly.
    tasks, grain_us = 100, 5
    doc = json.loads(run("chaselev", flat["unitcost"], 1, "imbalance",
                         "0,%d,%d,1,0,0" % (grain_us, tasks), reps=3).stdout)
    for b in doc["benchmarks"]:
        expect_ns = tasks * grain_us * 1000 + b["switches"] * 1000
        assert abs(b["proc_cpu_s"] * 1e9 - expect_ns) < 1e-3, (b["proc_cpu_s"], expect_ns)
        assert abs(b["work_s"] * 1e9 - tasks * grain_us * 1000) < 1e-3
        assert b["real_time"] * 1e6 <= expect_ns + 1e-3  # wall never exceeds the one CPU


def test_span_is_the_critical_path_and_bounds_the_time(flat):
    # unitcost: 10 ns per kernel iteration, so a grain of g us is exactly g us of work.
    # dag n x n: 2n-1 cells on the longest path; imbalance 0 (equal tasks): one task;
    # late = 1 puts the late wave's delay in front of its tasks.  Brent: T_P >= span.
    n, g = 6, 5
    doc = json.loads(run("chaselev", flat["unitcost"], 2, "dag", "%d,%d" % (n, g)).stdout)
    for b in doc["benchmarks"]:
        assert abs(b["span_s"] * 1e9 - (2 * n - 1) * g * 1000) < 1e-3, b["span_s"]
        assert b["real_time"] * 1e6 >= b["span_s"] * 1e9
        assert b["real_time"] * 1e6 >= b["work_s"] * 1e9 / 2
    doc = json.loads(run("chaselev", flat["unitcost"], 2, "imbalance", "0,%d,40,1,0,0" % g).stdout)
    for b in doc["benchmarks"]:
        assert abs(b["span_s"] * 1e9 - g * 1000) < 1e-3, b["span_s"]
    doc = json.loads(run("chaselev", flat["unitcost"], 2, "imbalance", "0,%d,40,2,1,0" % g).stdout)
    for b in doc["benchmarks"]:
        assert b["span_s"] * 1e9 > g * 1000 + 1, b["span_s"]      # the delay is on the path
        assert b["real_time"] * 1e6 >= b["span_s"] * 1e9
    # uts: the job tree's critical path, replayed with the real split points (test8: a
    # SHA-1 block is 500 ns).  At least the deepest leaf's chain of digests (max_depth
    # + 1 blocks, each made after its parent's), at most all the work, and below the
    # simulated time on 4 workers; the same on every variant (the splits never depend
    # on timing)
    spans = set()
    for v in ("chaselev", "threadpool"):
        doc = json.loads(run(v, flat["test8"], 4, "uts", "0").stdout)
        for b in doc["benchmarks"]:
            span_ns = b["span_s"] * 1e9
            assert (b["max_depth"] + 1) * 500 <= span_ns < b["work_s"] * 1e9, (span_ns, b)
            assert b["real_time"] * 1e6 >= span_ns
            spans.add(b["span_s"])
    assert len(spans) == 1, spans
    # fib states no span: none is reported (the bound is then the work term alone); and
    # on unitcost it takes no simulated time at all, which must still be valid JSON
    doc = json.loads(run("chaselev", flat["unitcost"], 2, "fib", "10").stdout)
    assert all("span_s" not in b and b["real_time"] == 0 for b in doc["benchmarks"])


def test_with_free_scheduling_and_enough_workers_the_time_is_the_span(tmp_path):
    # An independent check of the stated spans: on test8 with every cost but the work
    # made negligible (1 ps), 8 workers run every ready job of the small uts tree and
    # every cell of a 6x6 dag wavefront at once, so the simulated time is the critical
    # path itself.  A span that dropped a hand-over's offset (uts) or a cell (dag)
    # would sit well below it.
    # uts charges a node's visit too (uts_node, 250 ns here): the span must hold it, and
    # the work is exactly one block and one visit per node (the root's digest is the
    # block no child made).
    m = modelmod.load(os.path.join(MODELS, "test8.json"))
    for k, c in m["costs_ns"].items():
        if k not in ("sha1_block",) and c["value"]:
            c["value"] = 0.001
    m["costs_ns"]["uts_node"]["value"] = 250.0
    path = tmp_path / "free.flat"
    path.write_text(modelmod.flatten(m))
    for wl, args in (("uts", "0"), ("dag", "6,5")):
        doc = json.loads(run("chaselev", str(path), 8, wl, args, reps=1).stdout)
        for b in doc["benchmarks"]:
            ratio = b["real_time"] * 1e-3 / b["span_s"]
            assert 1.0 <= ratio < 1.01, (wl, ratio)
            if wl == "uts":
                assert abs(b["work_s"] * 1e9 - b["items"] * (500 + 250)) < 1e-3, b


def flat_with(tmp_path, model, **costs_ns):
    """A test model with some costs changed, flattened for simbench: its path."""
    m = modelmod.load(os.path.join(MODELS, model + ".json"))
    for name, value in costs_ns.items():
        m["costs_ns"][name] = {"value": value, "source": "test"}
    path = tmp_path / ("%s-%s.flat" % (model, "-".join("%s%g" % kv for kv in sorted(costs_ns.items()))))
    path.write_text(modelmod.flatten(m))
    return str(path)


def test_code_costs_are_charged_per_access_and_per_switch(flat, tmp_path):
    # unitcost charges only the switch (1 us per jump) and the kernel (10 ns per
    # iteration); with the two scheduler-code costs added, a 1-worker run's CPU time is
    # exactly work + jumps x (1 us + code_switch) + accesses x code_access, the run's own
    # counts (the counts themselves may differ between the two models by an access or
    # so: the costs move the main thread's and the worker's interleaving)
    path = flat_with(tmp_path, "unitcost", code_access=3.0, code_switch=500.0)
    args = "0,5,100,1,0,0"
    base = json.loads(run("chaselev", flat["unitcost"], 1, "imbalance", args, reps=1).stdout)
    code = json.loads(run("chaselev", str(path), 1, "imbalance", args, reps=1).stdout)
    for b0, b1 in zip(base["benchmarks"], code["benchmarks"]):
        assert b1["sim_accesses"] > 0 and b1["sim_jumps"] > 0
        work_ns = 100 * 5 * 1000
        assert abs(b0["proc_cpu_s"] * 1e9 - (work_ns + b0["sim_jumps"] * 1000.0)) < 1e-3
        expect_ns = work_ns + b1["sim_jumps"] * 1500.0 + b1["sim_accesses"] * 3.0
        assert abs(b1["proc_cpu_s"] * 1e9 - expect_ns) < 1e-3, (b1["proc_cpu_s"], expect_ns)


def test_fresh_stacks_are_charged_and_a_fifo_pool_maps_more(flat, tmp_path):
    # a stack pool miss costs stack_map (mmap, guard, first touch) and its munmap
    # stack_unmap: a 1-worker run's CPU time on unitcost plus these two is exactly
    # jumps x 1 us + maps x stack_map + unmaps x stack_unmap, the run's own counts; and fib
    # on the global FIFO queue (threadpool) holds a breadth-first front of suspended
    # parents, each on its own stack, where the LIFO deque (chaselev) goes depth first
    # (fib(25): a front past what the stack pool keeps after the warm-up run)
    path = flat_with(tmp_path, "unitcost", stack_map=7000.0, stack_unmap=3000.0)
    maps = {}
    for v in ("chaselev", "threadpool"):
        doc = json.loads(run(v, str(path), 1, "fib", "25", reps=1).stdout)
        b = doc["benchmarks"][0]
        expect_ns = b["sim_jumps"] * 1000.0 + b["sim_maps"] * 7000.0 + b["sim_unmaps"] * 3000.0
        assert abs(b["proc_cpu_s"] * 1e9 - expect_ns) < 1e-3, (v, b["proc_cpu_s"], expect_ns)
        maps[v] = b["sim_maps"]
    assert maps["threadpool"] > 10 * max(maps["chaselev"], 1), maps


def test_dropped_wakeup_is_a_stall_naming_the_stuck_threads(flat):
    # article: the late submitters' tasks come 1 ms after the others', long after the
    # workers ran dry, searched (PARK_SEARCH_NS) and parked: their wake-up is dropped.
    p = run("_broken_wake", flat["test8"], 2, "article", "100,50,100,20,1", check=False)
    assert p.returncode == 3, p.stderr
    assert "stall" in p.stderr
    for who in ("worker 0", "worker 1", "main"):
        assert "stuck: " + who in p.stderr, p.stderr


def test_simbench_bad_model_file_exit_2(tmp_path, flat):
    good = open(flat["test8"]).read()
    cases = {
        "unknown key": good + "bogus 1\n",
        "missing key": "\n".join(l for l in good.splitlines() if not l.startswith("rmw ")),
        "bad number": good.replace("\nrmw 5.0", "\nrmw five"),
        "bad topology": good.replace("topology pack:1", "topology socks:1"),
    }
    for what, text in cases.items():
        f = tmp_path / "m.flat"
        f.write_text(text)
        p = run("chaselev", str(f), 2, "fib", "10", check=False)
        assert p.returncode == 2, (what, p.stderr)
        assert "simulate:" in p.stderr, (what, p.stderr)
    p = run("chaselev", flat["test8"], 9, "fib", "10", check=False)  # 8 PUs
    assert p.returncode == 2 and "8 PUs" in p.stderr
    p = run("chaselev", str(tmp_path / "none.flat"), 2, "fib", "10", check=False)
    assert p.returncode == 2 and "cannot open" in p.stderr


def cli(*args):
    return subprocess.run([PY, "-m", "harness.sim", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=TIMEOUT)


def test_cli_bad_input_exit_2(tmp_path):
    p = cli("simulate", "--machine", "no-such-machine", "--workers", "1")
    assert p.returncode == 2 and "unknown machine model" in p.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    p = cli("simulate", "--machine", str(bad), "--workers", "1")
    assert p.returncode == 2 and "not a readable JSON model" in p.stderr
    doc = json.load(open(os.path.join(MODELS, "test8.json")))
    del doc["costs_ns"]["rmw"]
    bad.write_text(json.dumps(doc))
    p = cli("simulate", "--machine", str(bad), "--workers", "1")
    assert p.returncode == 2 and "costs_ns.rmw is missing" in p.stderr
    doc = json.load(open(os.path.join(MODELS, "test8.json")))
    doc["costs_ns"]["rmw"]["source"] = ""
    bad.write_text(json.dumps(doc))
    p = cli("simulate", "--machine", str(bad), "--workers", "1")
    assert p.returncode == 2 and "no source" in p.stderr
    p = cli("simulate", "--machine", os.path.join(MODELS, "test8.json"), "--workers", "4,16")
    assert p.returncode == 2 and "8 PUs" in p.stderr


def test_shipped_models_are_valid():
    names = modelmod.available()
    for want in ("here", "epyc16", "twosocket64", "numa128"):
        assert want in names
    assert modelmod.load("epyc16")["npus"] == 16
    assert modelmod.load("twosocket64")["npus"] == 64
    assert modelmod.load("numa128")["npus"] == 128


def test_simulate_writes_a_run_marked_simulated(tmp_path):
    out = tmp_path / "run"
    p = cli("simulate", "--machine", os.path.join(MODELS, "test8.json"), "--workers", "1,4",
            "--variants", "chaselev,threadpool", "--workloads", "fib", "--reps", "2",
            "--out", str(out))
    assert p.returncode == 0, p.stderr
    meta = json.load(open(out / "meta.json"))
    assert meta["simulated"] is True and meta["model"] == "test8"
    plan = json.load(open(out / "plan.json"))
    assert len(plan["points"]) == 4
    raw = json.load(open(out / "raw" / "chaselev" / "workers-4" / "fib.json"))
    assert raw["context"]["simulated"] == "true"
    assert not os.path.isabs(raw["context"]["executable"])
    assert "SIMULATED" in (out / "SIMULATED.md").read_text()


def test_a_stopped_simulated_sweep_is_finished_by_resume(tmp_path):
    """The simulated sweep is the driver's (sweep.execute_plan): stopped after its first
    point (the others' raw files and records gone), `simulate --resume` runs the rest
    only, and the run is the one an uninterrupted sweep writes."""
    out = tmp_path / "run"
    p = cli("simulate", "--machine", os.path.join(MODELS, "test8.json"), "--workers", "1,2",
            "--variants", "chaselev,threadpool", "--workloads", "fib", "--reps", "1",
            "--jobs", "2", "--out", str(out))
    assert p.returncode == 0, p.stderr
    plan = json.load(open(out / "plan.json"))
    raws = [out / pt["raw"] for pt in plan["points"]]
    whole = [measured(r) for r in raws]
    kept = os.stat(raws[0])
    status = json.load(open(out / "status.json"))
    (out / "status.json").write_text(json.dumps({plan["points"][0]["id"]:
                                                 status[plan["points"][0]["id"]]}))
    for r in raws[1:]:
        r.unlink()
    p = cli("simulate", "--resume", str(out), "--jobs", "2", "--reps", "5")
    assert p.returncode == 0, p.stderr
    assert "1 of 4 points already done" in p.stderr
    assert "ignored with --resume (the sweep keeps its plan): --reps" in p.stderr
    assert os.stat(raws[0]).st_mtime_ns == kept.st_mtime_ns
    assert [measured(r) for r in raws] == whole
    status = json.load(open(out / "status.json"))
    assert sorted(status) == sorted(pt["id"] for pt in plan["points"])
    assert all(s["ok"] for s in status.values())
    meta = json.load(open(out / "meta.json"))
    assert len(meta["resumed"]) == 1 and meta["finished"]
    assert list(meta)[-1] == "bench_context"


def test_kendall_tau():
    assert validate.kendall_tau([1, 2, 3], [10, 20, 30]) == 1.0
    assert validate.kendall_tau([1, 2, 3], [30, 20, 10]) == -1.0
    assert abs(validate.kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]) - 2 / 3) < 1e-12


def test_error_beyond_the_measured_range():
    assert validate.beyond_range(1.5, 1.0, 2.0) == 0.0  # inside
    assert validate.beyond_range(1.0, 1.0, 2.0) == 0.0 and validate.beyond_range(2.0, 1.0, 2.0) == 0.0
    assert abs(validate.beyond_range(3.0, 1.0, 2.0) - 0.5) < 1e-12  # 50 % above the slowest
    assert abs(validate.beyond_range(0.5, 1.0, 2.0) + 0.5) < 1e-12  # 50 % below the fastest
    rows = [{"variant": "a", "workers": 1, "benchmark": "b/x", "measured_s": 1.0,
             "predicted_s": p, "error": p - 1.0, "measured_min_s": 0.8, "measured_max_s": 1.2,
             "beyond_range": validate.beyond_range(p, 0.8, 1.2)} for p in (1.1, 2.4)]
    s = validate.summarize(rows)
    assert s["within_range"] == 1
    assert abs(s["worst_beyond_range"] - 1.0) < 1e-12  # 2.4 / 1.2 - 1
    assert abs(s["median_spread"] - 0.5) < 1e-12  # 1.2 / 0.8 - 1
    assert s["per_workload"]["b"]["within"] == 1 and abs(s["per_workload"]["b"]["worst"] - 1.4) < 1e-12


def test_validate_reports_the_hosts_drift_on_the_fit_points():
    row = lambda v, w, b, m: {"variant": v, "workers": w, "benchmark": b, "measured_s": m,
                              "predicted_s": 1.0, "error": 1.0 / m - 1}
    rows = [row("chaselev", 1, "fib/n:25", 1.5), row("chaselev", 2, "fib/n:25", 0.8),
            row("fair", 1, "yield/x", 3.0)]
    machine = {"code_fit": {"variant": "chaselev", "workers": 1,
                            "measured_s": {"fib/n:25": 1.0, "yield/x": 2.0}}}
    points = validate.drift(rows, machine)
    assert [(n, s, r["measured_s"]) for n, s, r in points] == [("fib/n:25", 1.0, 1.5)]
    text = "\n".join(validate.drift_section(points, machine))
    assert "| fib/n:25 | 1000.000 ms | 1500.000 ms | +50.0 % | -33.3 % |" in text
    assert "unknown" in "\n".join(validate.drift_section(validate.drift(rows, {}), {}))


def test_simulate_builds_only_after_the_model_and_workers_are_known_good():
    """The command line's `make sim` (simulate's build callback) runs once the input is
    known good: bad input is refused at once, before any build."""
    from harness.driver import simulate as simmod
    calls = []

    class Built(Exception):
        pass

    def build():
        calls.append(1)
        raise Built()

    with pytest.raises(modelmod.ModelError):
        simmod.simulate("no-such-machine", None, None, [1], build=build)
    with pytest.raises(modelmod.ModelError):
        simmod.simulate(os.path.join(MODELS, "test8.json"), None, None, [16], build=build)
    assert calls == []
    with pytest.raises(Built):
        simmod.simulate(os.path.join(MODELS, "test8.json"), None, None, [1, 8], build=build)
    assert calls == [1]


def test_calibrate_refuses_a_tool_older_than_itself(tmp_path):
    """A build/sim-calibrate that prints no uts_visit (built before it existed) is a clear
    error, not a traceback; `calibrate` itself runs `make sim` first unless --no-build."""
    from harness.driver import calibrate
    tool = tmp_path / "old-calibrate"
    tool.write_text("#!/bin/sh\necho 'sha1_block 300.0'\necho 'kernel_iters_per_us 600.0'\n")
    tool.chmod(0o755)
    with pytest.raises(modelmod.ModelError, match="printed no uts_visit"):
        calibrate.run(str(tool), "x", str(tmp_path), echo=lambda *a: None)
    assert not (tmp_path / "x.json").exists()


def test_a_context_gone_cold_costs_its_resume_curve(tmp_path):
    # unitcost charges only the switch (1 us per jump); with a resume_* curve added, a
    # context resumed d switches after it left its PU costs the curve at d (linear in
    # log2 d between the points), and the CPU time is exactly jumps x 1 us + that charge.
    # On threadpool's global FIFO queue, 64 bthreads yielding take turns: d = 64, whose
    # cost lies 2/3 of the way from resume_16 to resume_128 (100 + 2/3 x 100 ns); two
    # bthreads never go cold (d = 1)
    path = flat_with(tmp_path, "unitcost", resume_16=100.0, resume_128=200.0,
                     resume_1k=300.0, resume_4k=400.0, resume_16k=500.0, resume_32k=600.0)
    per_jump = {}
    for args in ("2,1000", "64,200"):
        b = json.loads(run("threadpool", path, 1, "yield", args, reps=1).stdout)["benchmarks"][0]
        resume_ns = b["sim_resume_s"] * 1e9
        assert abs(b["proc_cpu_s"] * 1e9 - (b["sim_jumps"] * 1000.0 + resume_ns)) < 1e-3, b
        per_jump[args] = resume_ns / b["sim_jumps"]
    assert per_jump["2,1000"] == 0, per_jump
    # a few jumps of the start and the end (into and out of the worker's own context) are
    # not part of the ring: within 2 %
    assert abs(per_jump["64,200"] - (100 + 200.0 / 3)) < 0.02 * (100 + 200.0 / 3), per_jump


def test_a_strided_walk_across_cores_is_prefetched(flat):
    # spawn at 1 worker: the worker walks the task slots that the submitter (on another
    # PU) wrote, side by side in their chunk, so the stride prefetcher starts many of
    # those transfers early (about one a task in four), and what it saves is at most
    # what they would have cost.
    # fib at 1 worker moves no line between cores: nothing to prefetch.
    xfer_max = max(v["value"] for k, v in json.load(open(os.path.join(MODELS, "test8.json")))
                   ["costs_ns"].items() if k.startswith("xfer_"))
    doc = json.loads(run("chaselev", flat["test8"], 1, "spawn", "20000", reps=1).stdout)
    b = doc["benchmarks"][0]
    assert b["sim_prefetched"] > 0.15 * 20000, (b, doc["context"])
    assert 0 < b["sim_prefetch_saved_s"] * 1e9 <= b["sim_prefetched"] * xfer_max, b
    b = json.loads(run("chaselev", flat["test8"], 1, "fib", "15", reps=1).stdout)["benchmarks"][0]
    assert b["sim_prefetched"] == 0 and b["sim_prefetch_saved_s"] == 0, b


PROBE_START_PS = 10 ** 9  # tests/sim/engine_probe.c: main's loads start at 1 ms
SP_DEPTH, SP_MAX_STRIDE = 4, 32  # harness/sim/README.md, "Prefetching"


def probe(model, *args):
    path = os.path.join(ROOT, os.environ.get("SB_SIM_BUILD", "build-sim"), "_probe",
                        "engine_probe")
    assert os.path.exists(path), "run `make test-sim` first (%s)" % path
    p = subprocess.run([path, model] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def walk_costs(n, stride, work, xfer, hit, rewrite=-1, rewrite_at=None, preread=False):
    """The documented rule, recomputed: a load site that has stepped by the same stride
    (at most SP_MAX_STRIDE lines) twice in a row is predicted from its third step on; the
    line's prefetch was issued at the site's access min(step - 2, SP_DEPTH) steps back,
    and the load is charged what is left of the transfer since the later of that issue
    and the line's last transfer's end, at least a hit -- in full if the line was written
    after the prefetch was issued.  The line `rewrite`, written again at rewrite_at: after
    a read elsewhere (preread) that write is itself a transfer, which the load waits for.
    Returns the loads' (start, cost: the wait included) and the prefetch counters."""
    starts, costs, prefetched, saved = [], [], 0, 0
    t = PROBE_START_PS
    for k in range(n):
        ready = rewrite_at + xfer if k == rewrite and preread else 0
        begin = max(t, ready)
        cost = xfer
        if k >= 3 and stride <= SP_MAX_STRIDE:
            issued = starts[k - min(k - 2, SP_DEPTH)]
            if not (k == rewrite and rewrite_at > issued):
                cost = max(hit, max(issued, ready) + xfer - begin)
                prefetched += 1
                saved += xfer - cost
        starts.append(t)
        costs.append(begin - t + cost)
        t = begin + cost + work
    return starts, costs, prefetched, saved


def probe_model(tmp_path, xfer, hit):
    return flat_with(tmp_path, "unitcost", load_hit=hit / 1000.0, **{
        "xfer_" + d: xfer / 1000.0 for d in ("core", "l3", "numa", "package", "remote")})


def check_walk(model, xfer, hit, n, stride, work, rewrite=-1, at=0, preread=False):
    out = probe(model, "walk", n, stride, work, rewrite, at, int(preread))
    starts, costs, prefetched, saved = walk_costs(n, stride, work, xfer, hit, rewrite, at,
                                                  preread)
    case = (n, stride, work, rewrite, at, preread, out)
    assert [s for s, _, _ in out["loads"]] == starts, case
    assert [c for _, c, _ in out["loads"]] == costs, case
    assert [v for _, _, v in out["loads"]] == [-1 if i == rewrite else i + 1 for i in range(n)]
    assert (out["prefetched"], out["saved_ps"]) == (prefetched, saved), case
    return costs


def test_the_stride_prefetcher_charges_exactly_what_its_rule_says(tmp_path):
    # engine_probe: a writer on another PU stores to n lines `stride` apart; then one load
    # site walks them, `work` between loads.  Every load's start and cost is the rule's,
    # to the picosecond: three loads in full, then a stream whose lead grows to SP_DEPTH
    # steps; a stride beyond SP_MAX_STRIDE is no walk
    xfer, hit = 100000, 1000
    model = probe_model(tmp_path, xfer, hit)
    for n, stride, work in ((40, 1, 10000), (40, 1, 0), (24, 3, 30000), (12, SP_MAX_STRIDE, 0),
                            (12, SP_MAX_STRIDE + 1, 10000)):
        costs = check_walk(model, xfer, hit, n, stride, work)
        assert (min(costs) < xfer) == (stride <= SP_MAX_STRIDE), costs
    # The issue time of each step, as the lead grows (steps 3..8): the line written again
    # just before, at, or just after the prefetch's issue -- only after is the early copy
    # stale (the first two are predicted, the third costs in full)
    for k in range(3, 9):
        starts, _, _, _ = walk_costs(20, 1, 10000, xfer, hit)
        issued = starts[k - min(k - 2, SP_DEPTH)]
        for at, stale in ((issued - 1000, False), (issued, False), (issued + 1000, True)):
            costs = check_walk(model, xfer, hit, 20, 1, 10000, k, at)
            assert (costs[k] == xfer) == stale, (k, at, costs)
    # A line in transfer when its prefetch was issued (written after a read elsewhere,
    # before the issue): the prefetch's transfer starts when that one ends
    k = 12
    starts, _, _, _ = walk_costs(20, 1, 10000, xfer, hit)
    issued = starts[k - SP_DEPTH]
    at = issued - xfer // 2
    costs = check_walk(model, xfer, hit, 20, 1, 10000, k, at, preread=True)
    assert costs[k] == at + 2 * xfer - starts[k] > xfer, (costs, starts)


def probe_model8(tmp_path):
    """test8 (8 PUs: 2 NUMA nodes of 2 L3s of 2 cores) with free sleeps and thread starts
    and whole-ns hits, so that engine_probe's threads run each operation exactly when the
    script says (a sleep's resolution is 1 ns)."""
    return flat_with(tmp_path, "test8", **PROBE8)


PROBE8 = {"syscall": 0, "sleep_slack": 0, "thread_create": 0, "load_hit": 1,
               "store_hit": 1}


def costs8(changed=PROBE8):
    """test8's costs in ps, with those of probe_model8 (or `changed`) changed"""
    m = modelmod.load(os.path.join(MODELS, "test8.json"))
    c = {k: round(v["value"] * 1000) for k, v in m["costs_ns"].items()}
    c.update({k: v * 1000 for k, v in changed.items()})
    return c


def distance8(a, b):
    """pack:1 numa:2 l3:2 core:2 pu:1: PU p is core p, L3 p // 2, NUMA node p // 4"""
    if a == b:
        return None
    return "xfer_l3" if a // 2 == b // 2 else "xfer_numa" if a // 4 == b // 4 else "xfer_package"


def script_costs(ops, c):
    """The line rules of harness/sim/README.md, recomputed for engine_probe's script mode
    (no code costs; no stride prefetch: the lines lie beyond its reach): returns each
    operation's (start, cost), the wait for the line included.  Accesses take effect in
    the order they are issued (the engine runs the thread with the earliest clock).
    - A load of a line this PU holds (or nobody wrote) is a hit.  Else the line comes from
      its last writer, after any transfer that occupies it; the first read after a write
      occupies the line for its transfer, later reads of the shared line do not (they
      are served side by side).
    - A store (a seq_cst store or a read-modify-write: at the rmw price) to a line others
      hold waits for a transfer that occupies it, then pays the transfer from the
      farthest holder, which occupies the line; then this PU alone holds it.
    - A prefetch (P: for a read, Q: for a write, unless this PU already holds the line
      alone) moves the line by the same rules but costs the thread only a hit; an
      access to a line still on its way to this PU waits for it to arrive."""
    lines = {}
    out = [None] * len(ops)
    for i in sorted(range(len(ops)), key=lambda i: (ops[i][1], ops[i][0])):
        pu, at, kind, line = ops[i]
        at *= 1000
        st = lines.setdefault(line, {"owner": None, "holders": set(), "free_at": 0, "to": None})
        if kind == "F":
            out[i] = (at, c["fence"])
        elif kind in "PQ":
            if kind == "P" or not (st["owner"] == pu and st["holders"] <= {pu}):
                line_move(st, pu, "L" if kind == "P" else "S", at, c)
            out[i] = (at, c["load_hit"])
        else:
            start, cost = line_move(st, pu, kind, at, c)
            out[i] = (at, start - at + cost)
    return out


def line_move(st, pu, kind, start, c):
    """One access of script_costs to line state `st`: (its start after any wait, cost)"""
    if kind == "L":
        if pu in st["holders"] or st["owner"] is None:
            if st["to"] == pu:  # on its way here
                start = max(start, st["free_at"])
            cost = c["load_hit"]
        else:
            modified = st["holders"] <= {st["owner"]}
            start = max(start, st["free_at"])
            cost = max(c[distance8(st["owner"], pu)], c["load_hit"])
            if modified:
                st["free_at"], st["to"] = start + cost, pu
        st["holders"].add(pu)
        return start, cost
    cost = c["store_hit"] if kind == "S" else c["rmw"]
    others = (st["holders"] | ({st["owner"]} if st["owner"] is not None else set())) - {pu}
    if others:
        far = max((distance8(o, pu) for o in others),
                  key=lambda d: ["xfer_l3", "xfer_numa", "xfer_package"].index(d))
        start = max(start, st["free_at"])
        cost += c[far]
        st["free_at"], st["to"] = start + cost, pu
    elif st["to"] == pu:  # ours, but maybe still on its way here
        start = max(start, st["free_at"])
    st["owner"], st["holders"] = pu, {pu}
    return start, cost


def run_script(model, ops):
    text = ";".join("%d,%d,%s,%d" % op for op in ops)
    return [tuple(x[:2]) for x in probe(model, "script", text)["ops"]]


def test_line_transfers_queue_and_share_as_documented(tmp_path):
    # the cost of each access by topology distance, and contention emerging from the
    # line's occupancy: PU 1 writes line 0 (1 ns); PU 0 reads it (a transfer within the
    # L3, 40 ns, which occupies the line); PUs 2 and 3 read it during that transfer: they
    # wait for it, then are served side by side (each 100 ns across the NUMA node, both
    # done at 2140 ns); PU 5 writes it (invalidating PUs 0-3: the farthest, across the
    # package, 1 + 150 ns); PU 4's read-modify-write queues behind that transfer (a lock
    # handed over: 141 ns of wait, then 5 + 40 ns); a fence and a seq_cst store on a
    # fresh line cost their prices
    # (PU 1's own read during PU 0's transfer is a hit: that transfer is not on its way
    # to PU 1).  Prefetches: PU 0 prefetches line 2 (written by PU 4) and loads it 20 ns
    # later, waiting for the rest of the 150 ns transfer; it prefetches line 3 (written
    # by PU 5) for a write and stores to it 10 ns later, waiting likewise (1 + 150 ns
    # from the prefetch)
    model = probe_model8(tmp_path)
    ops = [(1, 1000, "S", 0), (0, 2000, "L", 0), (1, 2005, "L", 0), (2, 2010, "L", 0),
           (3, 2020, "L", 0), (5, 3000, "S", 0), (4, 3010, "R", 0), (0, 4000, "F", 1),
           (0, 4100, "X", 1),
           (4, 4500, "S", 2), (0, 5000, "P", 2), (0, 5020, "L", 2),
           (5, 5500, "S", 3), (0, 6000, "Q", 3), (0, 6010, "S", 3)]
    got = run_script(model, ops)
    assert [c for _, c in got] == [1000, 40000, 1000, 130000, 120000, 151000, 186000, 8000,
                                   5000, 1000, 1000, 131000, 1000, 1000, 142000], got
    assert got == script_costs(ops, costs8())


def random_script(seed):
    """8 PUs, 3 lines, 60 operations: every thread's next operation 2 us after its last
    began (time for any queue of transfers to drain), each thread offset by a distinct
    multiple of 5 ns so that they interleave and contend; one in four a prefetch
    followed 21 ns later by an access to the same line (it may wait for the arrival)"""
    rnd = random.Random(seed)
    offsets = [5 * k for k in rnd.sample(range(1, 390), 8)]
    ops, slots = [], [0] * 8
    while len(ops) < 60:
        pu, line = rnd.randrange(8), rnd.randrange(3)
        slots[pu] += 1
        at = slots[pu] * 2000 + offsets[pu]
        if rnd.random() < 0.25:
            ops.append((pu, at, rnd.choice("PQ"), line))
            ops.append((pu, at + 21, rnd.choice("LSR"), line))
        else:
            ops.append((pu, at, rnd.choice("LLLSXRF"), line))
    return ops


def test_random_access_scripts_cost_what_the_line_rules_say(tmp_path):
    # seeded random scripts (random_script): every start and cost as the rules say
    model, c = probe_model8(tmp_path), costs8()
    for seed in range(12):
        ops = random_script(seed)
        assert run_script(model, ops) == script_costs(ops, c), (seed, ops)


def test_futex_waits_and_wakes_cost_as_documented(tmp_path):
    # engine_probe's futex operations on test8 (system call 300 ns; a wake 1.5 us and the
    # woken thread running 5 us after it, or 0.3 + 1 us when the sleeper had slept at most
    # short_sleep_max = 20 us, counted from the end of its wait's system call; a wake that
    # finds nobody costs a system call).  Each wait's cost runs to its thread running again
    changed = dict(PROBE8)
    del changed["syscall"]
    model = flat_with(tmp_path, "test8", **changed)
    c = costs8(changed)
    sc, wake, lat = c["syscall"], c["futex_wake"], c["wakeup_latency"]
    wake_s, lat_s, short = c["futex_wake_short"], c["wakeup_latency_short"], c["short_sleep_max"]
    assert sc == 300 * 1000 and 0 < wake_s < wake and 0 < lat_s < lat and short == 20000 * 1000
    ops = [(1, 1000, "W", 5), (2, 1200, "K", 5),                    # woken while entering
           (3, 3000, "W", 5), (2, 60000, "K", 5),                   # after 56.7 us: long
           (2, 70000, "K", 5),                                      # nobody waits
           (4, 80000, "S", 6), (5, 81000, "W", 6),                  # the word moved: EAGAIN
           (1, 90000, "W", 7), (3, 90100, "W", 7),                  # two sleepers, FIFO
           (2, 200000, "K", 7), (2, 210000, "K", 7),
           (1, 300000, "W", 8), (3, 310000, "W", 8), (2, 325000, "A", 8),  # long + short
           (4, 400000, "W", 9), (2, 420300, "K", 9),                # slept 20 us: short
           (5, 500000, "W", 10), (2, 520301, "K", 10)]              # 20 us + 1 ns: long
    out = probe(model, "script", ";".join("%d,%d,%s,%d" % op for op in ops))["ops"]
    ns = 1000
    expect = [
        (1000 * ns, 1200 * ns + wake_s + lat_s - 1000 * ns, 0), (1200 * ns, wake_s, 1),
        (3000 * ns, 60000 * ns + wake + lat - 3000 * ns, 0), (60000 * ns, wake, 1),
        (70000 * ns, sc, 0),
        (80000 * ns, c["store_hit"], 0), (81000 * ns, sc, -1),
        (90000 * ns, 200000 * ns + wake + lat - 90000 * ns, 0),
        (90100 * ns, 210000 * ns + wake + lat - 90100 * ns, 0),
        (200000 * ns, wake, 1), (210000 * ns, wake, 1),
        # slept 24.7 us (long) and 14.7 us (short): the call costs the long price, each
        # sleeper runs after its own latency
        (300000 * ns, 325000 * ns + wake + lat - 300000 * ns, 0),
        (310000 * ns, 325000 * ns + wake + lat_s - 310000 * ns, 0),
        (325000 * ns, wake, 2),
        (400000 * ns, 420300 * ns + wake_s + lat_s - 400000 * ns, 0), (420300 * ns, wake_s, 1),
        (500000 * ns, 520301 * ns + wake + lat - 500000 * ns, 0), (520301 * ns, wake, 1)]
    assert [tuple(x) for x in out] == expect, out


def test_a_builtin_prefetch_starts_the_transfer_and_the_thread_goes_on(tmp_path):
    # __builtin_prefetch costs a hit and starts the line's transfer (PU 1 wrote it); the
    # load `work` later waits only for what is left of it, then pays a hit.  Not a stride
    # prefetcher's catch: its counters stay at 0
    xfer, hit = 100000, 1000
    model = probe_model(tmp_path, xfer, hit)
    t = PROBE_START_PS // 1000
    for work in (0, 30000, 90000, 200000):
        ops = [(1, 1000, "S", 0), (0, t, "P", 0), (0, t + (hit + work) // 1000, "L", 0)]
        out = probe(model, "script", ";".join("%d,%d,%s,%d" % op for op in ops))
        assert out["ops"][1][:2] == [PROBE_START_PS, hit], out
        assert out["ops"][2][0] == PROBE_START_PS + hit + work, out
        assert out["ops"][2][1] == max(0, xfer - hit - work) + hit, (work, out)
        assert (out["prefetched"], out["saved_ps"]) == (0, 0), out


def test_a_wake_after_a_short_sleep_costs_the_short_prices(tmp_path):
    # unitcost charges only the switch (1 us per jump); with futex wake prices added, a
    # run's CPU time is exactly jumps x 1 us + each waking system call's price.  Under
    # `static` at 2 workers every pingpong turn hands the game to the other worker,
    # asleep since its own turn ended (microseconds): each wake-up is short when
    # short_sleep_max is a second, long when it is 0 (no discount), and so are the
    # wakers' system calls; the shorter latency makes the run faster in simulated time.
    long_ns, short_ns = 2000.0, 500.0
    runs = {}
    for smax in (0.0, 1e9):
        path = flat_with(tmp_path, "unitcost", futex_wake=long_ns, futex_wake_short=short_ns,
                         wakeup_latency=50000.0, wakeup_latency_short=700.0,
                         short_sleep_max=smax)
        b = json.loads(run("static", path, 2, "pingpong", "0,200", reps=1).stdout)["benchmarks"][0]
        assert not b.get("error_occurred"), b
        assert b["sim_wakes"] >= 200, b
        assert b["sim_short_wakes"] == (b["sim_wakes"] if smax else 0), b
        price = short_ns if smax else long_ns
        wakes_ns = b["proc_cpu_s"] * 1e9 - b["sim_jumps"] * 1000.0
        calls = round(wakes_ns / price)
        assert abs(wakes_ns - calls * price) < 1e-3, (smax, b)
        assert calls == b["sim_wakes"], (smax, calls, b)  # each call wakes one thread here
        runs[smax] = b["real_time"]
    assert runs[1e9] < runs[0.0], runs


def test_a_measured_run_gets_its_simulated_companion(tmp_path):
    """`./run.py run --sim MODEL`'s last step: the run's imbalance scenarios on every
    variant it measured, at 1, 2, 4, ... up to the model's PUs, beside the run."""
    from harness.driver import companion, rundata, simulate as simmod
    bench = "imbalance/imbalance:2/grain_us:1000/tasks:64/submitters:1/late:0/skew:0/real_time"
    real = tmp_path / "results" / "real"
    for v in ("chaselev", "threadpool"):
        for w in (1, 2):
            doc = {"context": {"variant": v, "workers": str(w)},
                   "benchmarks": [{"name": bench, "run_name": bench, "run_type": "iteration",
                                   "repetitions": 1, "repetition_index": 0, "threads": 1,
                                   "iterations": 1, "real_time": 70.0 / w, "cpu_time": 1.0,
                                   "time_unit": "ms"},
                                  {"name": "fib/n:20/real_time", "run_name": "fib/n:20/real_time",
                                   "run_type": "iteration", "repetitions": 1,
                                   "repetition_index": 0, "threads": 1, "iterations": 1,
                                   "real_time": 1.0, "cpu_time": 1.0, "time_unit": "ms"}]}
            path = real / "raw" / v / ("workers-%d" % w) / "imbalance.json"
            path.parent.mkdir(parents=True)
            path.write_text(json.dumps(doc))
    assert companion.companion_workers(8) == [1, 2, 4, 8]
    assert companion.companion_workers(12) == [1, 2, 4, 8, 12]
    run_dir, failed = companion.companion(str(real), os.path.join(MODELS, "test8.json"), jobs=2,
                                       echo=lambda *a, **k: None)
    assert failed == []
    assert os.path.dirname(run_dir) == str(tmp_path / "results")
    assert os.path.basename(run_dir).startswith("sim-test8-")
    meta = json.load(open(os.path.join(run_dir, "meta.json")))
    assert meta["simulated"] is True and meta["run_id"] == os.path.basename(run_dir)
    med = rundata.medians(run_dir)
    assert sorted(med) == [(v, w, bench) for v in ("chaselev", "threadpool") for w in (1, 2, 4, 8)]
    with pytest.raises(simmod.SimError, match="no imbalance or article scenario"):
        os.unlink(real / "raw" / "chaselev" / "workers-1" / "imbalance.json")
        for p in real.glob("raw/*/*/imbalance.json"):
            doc = json.loads(p.read_text())
            doc["benchmarks"] = doc["benchmarks"][1:]
            p.write_text(json.dumps(doc))
        companion.companion(str(real), os.path.join(MODELS, "test8.json"))


def test_a_band_re_simulates_the_point_at_the_ends_of_each_stated_range(tmp_path):
    # a model that states the wake-up range x0.25..x4 and leaves the others at the
    # default: the article's point (whose late submitters sleep) is re-simulated six times
    doc = json.load(open(os.path.join(MODELS, "test8.json")))
    doc["uncertainty"] = {"wake": {"low": 0.25, "high": 4, "source": "a test range"}}
    model = tmp_path / "banded.json"
    model.write_text(json.dumps(doc))
    out = tmp_path / "run"
    p = cli("simulate", "--machine", str(model), "--workers", "4", "--variants", "chaselev",
            "--workloads", "article", "--filter", "delay_pct:50/late_pct:50/grain_us:100/"
            "tasks:1000/foreign:0", "--reps", "1", "--bands", "top", "--out", str(out))
    assert p.returncode == 0, p.stderr
    bands = json.load(open(out / "bands.json"))
    assert bands["ends"] == ["xfer x0.5", "xfer x2", "wake x0.25", "wake x4", "code x0.5",
                             "code x2"]
    assert bands["ranges"]["wake"][:2] == [0.25, 4] and bands["ranges"]["xfer"][:2] == [0.5, 2]
    assert not bands["failed"]
    (key, ends), = bands["points"].items()
    assert key.startswith("chaselev/4/article/delay_pct:50/")
    # article's window (what its speedups are of) is kept at every end too, inside the wall
    windows = bands["metrics"]["window_s"][key]
    assert set(windows) == set(ends) and all(0 < windows[e] < ends[e] for e in ends)
    # each end is the same point on a model with that group's costs scaled: the flat
    # files say so, and dearer wake-ups cost time (the late submitters sleep)
    flat4 = (out / "model.wake_x4.flat").read_text()
    base = modelmod.load(str(model))["costs_ns"]["futex_wake"]["value"]
    assert "futex_wake %r" % (base * 4) in flat4
    assert ends["wake x4"] > ends["wake x0.25"]
    doc = json.load(open(out / "raw" / "chaselev" / "workers-4" / "article.json"))
    nominal = [b["real_time"] * 1e-3 for b in doc["benchmarks"] if b["run_type"] == "iteration"]
    assert min(ends.values()) <= nominal[0] * 1.5 and max(ends.values()) >= nominal[0] / 1.5


def test_a_model_range_is_checked():
    doc = json.load(open(os.path.join(MODELS, "test8.json")))
    for bad, why in (({"wake": {"low": 2, "high": 3, "source": "x"}}, "low <= 1 <= high"),
                     ({"wake": {"low": 0.5, "high": 2}}, "no source"),
                     ({"nope": {"low": 0.5, "high": 2, "source": "x"}}, "unknown uncertainty")):
        doc["uncertainty"] = bad
        with pytest.raises(modelmod.ModelError, match=why):
            modelmod.check(doc)


def test_the_search_before_parking_lasts_a_time_not_a_count_of_rounds(flat, tmp_path):
    # 2 workers, one task of 2 ms: the other worker searches, then parks for the rest.
    # Its search is measured on the clock (idle_park.h PARK_SEARCH_NS, 80 us; adaptive's
    # spin ADAPTIVE_SPIN_NS, 180 us), so a pause 4x dearer (every round dearer) leaves the
    # CPU time burned within one round of the same; counted in rounds it moved by 75 us
    # (chaselev) and 226 us (adaptive)
    cheap = flat_with(tmp_path, "test8", pause=10.0)
    dear = flat_with(tmp_path, "test8", pause=40.0)
    work_us, searched_us = 2000.0, {"adaptive": 180.0}
    for v in ("chaselev", "fair", "half", "numa", "elastic", "affinity", "static", "adaptive"):
        cpu = []
        for path in (cheap, dear):
            doc = json.loads(run(v, path, 2, "imbalance", "0,2000,1,1,0,0", reps=1).stdout)
            b = doc["benchmarks"][-1]
            assert b["parks"] >= 1, (v, b["parks"])
            cpu.append(b["proc_cpu_s"] * 1e6)
        assert cpu[0] - work_us >= searched_us.get(v, 80.0), (v, cpu)
        assert abs(cpu[1] - cpu[0]) < 5.0, (v, cpu)  # one round at most (128 pauses)
