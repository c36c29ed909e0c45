"""The sweep against a fake build tree: raw files, merge, meta, the seeded shuffle,
resume after a kill, failures, timeouts, progress, Ctrl-C, the pinned kernel rate."""
import contextlib
import errno
import glob
import io
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from harness.driver import build, plan, proc, rundata, sweep

from conftest import RUN_PY, cli

# variants x workloads x workers + tbb x (fib, imbalance) x workers + chaselev's A/A twin
ALL_POINTS = 3 * 3 * 2 + 1 * 2 * 2 + 3 * 2


def run_sweep(root, *extra, env=None):
    return cli("run", "--root", root, "--workers", "1,2", "--no-plot", "--quiet", *extra, env=env)


def only_run(root):
    (run_dir,) = glob.glob(os.path.join(root, "results", "*"))
    return run_dir


def invocations(log):
    with open(log) as f:
        return [json.loads(line) for line in f]


def test_sweep_writes_raw_csv_meta_and_plan(fake_root):
    p = run_sweep(fake_root, "--seed", "3")
    assert p.returncode == 0, p.stderr
    run_dir = only_run(fake_root)
    plan = json.load(open(os.path.join(run_dir, "plan.json")))
    assert len(plan["points"]) == ALL_POINTS
    assert (plan["seed"], plan["repetitions"], plan["min_time"]) == (3, 10, 0.02)
    assert plan["version"] == 2 and plan["interleave"]["per_round"] == 1
    assert "shuffled per round" in plan["interleave"]["order"]
    # one worker runs the imbalance workload's first set only (nothing to balance)
    assert [p["benchmarks"] for p in plan["points"] if p["id"] == "chaselev/workers-1/imbalance"] \
        == [["imbalance/imbalance:0/grain_us:100/submitters:2/real_time"]]
    twins = [p for p in plan["points"] if p.get("twin_of")]
    assert len(twins) == 6 and {p["variant"] for p in twins} == {"chaselev-aa"}
    for point in plan["points"]:
        assert os.path.exists(os.path.join(run_dir, point["raw"])), point["id"]
        assert os.path.exists(os.path.join(run_dir, point["log"]))
    refs = [p for p in plan["points"] if p["reference"]]
    assert {p["workload"] for p in refs} == {"fib", "imbalance"}
    assert all(p["binary"] == os.path.join("build", "ref", "tbb", "bench") for p in refs)
    status = json.load(open(os.path.join(run_dir, "status.json")))
    assert all(s["ok"] for s in status.values()) and len(status) == ALL_POINTS
    meta = json.load(open(os.path.join(run_dir, "meta.json")))
    for key in ("cpu_model", "cpus_usable", "kernel", "git", "command", "started", "finished",
                "bench_context"):
        assert key in meta, key
    assert meta["references"] == ["tbb"]
    assert meta["bench_context"]["chaselev"]["cpu_model"] == "Fake CPU @ 2.40GHz"
    assert "--seed 3" in meta["command"]
    data = rundata.load_run(run_dir)
    assert not data.skipped
    assert {r.variant for r in data.results if r.reference} == {"tbb"}
    assert all(len(r.valid) == 10 for r in data.results)
    # every raw file holds its ten rounds, numbered 0..9, each its own bench invocation
    assert sorted(e.repetition for e in data.results[0].entries) == list(range(10))
    assert {r.variant for r in data.results} >= {"chaselev", "chaselev-aa"}
    assert "chaselev-aa" not in data.variants() and data.twins() == {"chaselev-aa": "chaselev"}
    with open(os.path.join(run_dir, "results.csv")) as f:
        assert f.read() == rundata.results_csv(data.results)
    assert os.path.exists(os.path.join(run_dir, "samples.csv"))


def test_bench_invocation_and_filter_come_from_the_listing(fake_root, tmp_path):
    log = str(tmp_path / "bench.log")
    p = run_sweep(fake_root, "--variants", "static", "--workers", "2", "--filter", "n:20",
                  "--repetitions", "3", "--min-time", "0.01", env={"FAKE_BENCH_LOG": log})
    assert p.returncode == 0, p.stderr
    # only fib has an n:20 benchmark: one point, its filter names the instance exactly;
    # its 3 repetitions are 3 rounds, each an invocation of its own
    assert invocations(log) == 3 * [{"variant": "static", "workers": 2,
                                     "filter": "^(fib/n:20/real_time)$"}]
    run_dir = only_run(fake_root)
    (log_file,) = glob.glob(os.path.join(run_dir, "logs", "static", "workers-2", "*.log"))
    text = open(log_file).read()
    assert text.count("$ ./build/static/bench") == 3       # each round's command, appended
    command = text.splitlines()[0]
    for flag in ("--workers 2", "--benchmark_repetitions=1", "--benchmark_min_time=0.01",
                 "--benchmark_out_format=json", "--benchmark_out="):
        assert flag in command


def test_whole_workload_filter_and_full_sets(fake_root):
    p = run_sweep(fake_root, "--variants", "static", "--workloads", "fib", "--workers", "1",
                  "--full", "--min-time", "0.01")
    assert p.returncode == 0, p.stderr
    plan = json.load(open(os.path.join(only_run(fake_root), "plan.json")))
    (point,) = plan["points"]
    assert point["filter"] == "^fib(/.*)?$"
    assert "fib/n:30/real_time" in point["benchmarks"]        # the full sweep's extra set
    assert plan["repetitions"] == 10 and plan["full"] is True


def test_point_order_is_shuffled_by_the_recorded_seed(fake_root):
    tree = build.Build(fake_root)
    targets = plan.select_targets(tree, None, no_build=True)
    listed = [p["id"] for p in plan.plan_points(tree, targets, None, [1, 2], None, False)]

    def order(seed):
        ids = list(listed)
        random.Random(seed).shuffle(ids)
        return ids

    assert order(11) == order(11)
    assert order(11) != listed and sorted(order(11)) == sorted(listed)
    # the sweep records the seed and runs the points in that seed's order
    p = run_sweep(fake_root, "--seed", "11", "--workloads", "granularity", "--workers", "2")
    assert p.returncode == 0, p.stderr
    recorded = json.load(open(os.path.join(only_run(fake_root), "plan.json")))
    ids = [i for i in listed if i.endswith("/workers-2/granularity")]
    random.Random(11).shuffle(ids)
    assert recorded["seed"] == 11
    assert [pt["id"] for pt in recorded["points"]] == ids


def test_resume_after_kill_reruns_nothing_finished(fake_root, tmp_path):
    log = str(tmp_path / "bench.log")
    p = run_sweep(fake_root, "--variants", "chaselev,static", "--repetitions", "3",
                  env={"FAKE_BENCH_LOG": log, "FAKE_BENCH_KILL_PARENT_AT": "5"})
    assert p.returncode == -signal.SIGKILL
    run_dir = only_run(fake_root)
    first = invocations(log)
    assert len(first) == 5
    plan_doc = json.load(open(os.path.join(run_dir, "plan.json")))
    units = sweep.schedule(plan_doc)
    # 3 variants (chaselev, its twin, static) x 3 workloads x 2 worker counts x 3 rounds
    assert len(units) == 3 * 3 * 2 * 3
    kept = sum(sweep.rounds_done(run_dir, plan_doc, p) for p in plan_doc["points"])
    assert kept == 4                       # the 5th round died with the sweep: 4 kept
    p = cli("run", "--root", fake_root, "--resume", "latest", "--no-plot", "--quiet",
            env={"FAKE_BENCH_LOG": log})
    assert p.returncode == 0, p.stderr
    assert f"4 of {len(units)} rounds of the 18 points already done" in p.stderr
    second = invocations(log)[5:]
    assert len(second) == len(units) - 4            # nothing finished is run again
    # the rounds ran in the recorded schedule's order, the first four before the kill
    order = [(p["variant"] if not p.get("twin_of") else "chaselev", p["workers"], p["filter"])
             for p, _ in units]
    key = lambda inv: (inv["variant"], inv["workers"], inv["filter"])
    assert [key(i) for i in first] == order[:5] and [key(i) for i in second] == order[4:]
    assert all(len(r.valid) == 3 for r in rundata.load_run(run_dir).results)
    plan = json.load(open(os.path.join(run_dir, "plan.json")))
    for point in plan["points"]:
        assert os.path.exists(os.path.join(run_dir, point["raw"]))
    leftovers = [f for f in glob.glob(os.path.join(run_dir, "**", ".*"), recursive=True)]
    assert leftovers == []
    meta = json.load(open(os.path.join(run_dir, "meta.json")))
    assert len(meta["resumed"]) == 1 and "finished" in meta


def test_resume_of_a_finished_run_runs_nothing(fake_root, tmp_path):
    assert run_sweep(fake_root, "--variants", "chaselev", "--workloads", "fib").returncode == 0
    log = str(tmp_path / "bench.log")
    p = cli("run", "--root", fake_root, "--resume", os.path.basename(only_run(fake_root)),
            "--no-plot", "--quiet", "--variants", "static", env={"FAKE_BENCH_LOG": log})
    assert p.returncode == 0, p.stderr
    assert not os.path.exists(log)
    assert "ignored with --resume" in p.stderr and "--variants" in p.stderr


def test_failed_points_are_reported_and_retried_on_resume(fake_root, tmp_path):
    p = run_sweep(fake_root, "--variants", "static,threadpool", "--workloads", "fib,granularity",
                  "--repetitions", "2", env={"FAKE_BENCH_CRASH": "^static/2$"})
    assert p.returncode == 1
    assert "failed: static/workers-2/fib: exit status 3: Segmentation fault (pretend)" in p.stderr
    assert "Traceback" not in p.stderr
    run_dir = only_run(fake_root)
    assert not os.path.exists(os.path.join(run_dir, "raw", "static", "workers-2", "fib.json"))
    log_text = open(os.path.join(run_dir, "logs", "static", "workers-2", "fib.log")).read()
    assert "Segmentation fault" in log_text
    log = str(tmp_path / "bench.log")
    p = cli("run", "--root", fake_root, "--resume", "latest", "--no-plot", "--quiet",
            env={"FAKE_BENCH_LOG": log})
    assert p.returncode == 0, p.stderr
    # each failed point is tried once (its round 1 failed: no round 2 in that sweep),
    # then run whole on resume: 2 points x 2 rounds
    assert sorted((i["variant"], i["workers"]) for i in invocations(log)) == \
        4 * [("static", 2)]


def test_a_hanging_point_times_out(fake_root):
    p = run_sweep(fake_root, "--variants", "static", "--workloads", "granularity",
                  "--timeout", "0.5", env={"FAKE_BENCH_HANG": "^static/2$"})
    assert p.returncode == 1
    assert "failed: static/workers-2/granularity: timed out after 0.5 s" in p.stderr
    status = json.load(open(os.path.join(only_run(fake_root), "status.json")))
    assert status["static/workers-1/granularity"]["ok"]
    assert not status["static/workers-2/granularity"]["ok"]


def test_wrong_answers_exit_1_and_are_named(fake_root):
    p = run_sweep(fake_root, "--variants", "static", "--workloads", "imbalance",
                  env={"FAKE_BENCH_ERROR": "imbalance:2", "FAKE_BENCH_ERROR_REP": "0"})
    assert p.returncode == 1
    assert "WRONG ANSWER" in p.stderr and "wrong answer: got 41" in p.stderr
    # imbalance:2 at 2 workers (one worker runs the first set only)
    assert "1 benchmark(s) with errors" in p.stderr


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_on_a_terminal_and_off():
    points = [dict(variant="chaselev", workers=w, workload="fib") for w in (1, 2, 3)]
    ok = dict(ok=True, errors=0, message="", seconds=2.0)
    tty = FakeTTY()
    progress = sweep.Progress(total=4, done=1, durations=[1.0], stream=tty)
    progress.start(points[0])
    assert "[2/4] chaselev workers=1 fib" in tty.getvalue()
    assert "ETA 0:03" in tty.getvalue()                 # 1 s per point, 3 left
    progress.finish(points[0], ok)
    progress.start(points[1])
    assert "[3/4]" in tty.getvalue() and "ETA 0:03" in tty.getvalue()   # mean 1.5 s x 2
    progress.finish(points[1], dict(ok=False, errors=0, message="exit status 3", seconds=1.0))
    assert "FAILED (1.0 s): exit status 3\n" in tty.getvalue()
    plain = io.StringIO()
    progress = sweep.Progress(total=1, done=0, durations=[], stream=plain)
    progress.start(points[2])
    progress.finish(points[2], ok)
    progress.close()
    assert plain.getvalue() == "[1/1] chaselev workers=3 fib: ok (2.0 s)\n"


class FakeBackend:
    """A sweep backend (sweep.BenchBackend's contract) that runs nothing: each point
    writes one benchmark's JSON to the temporary file it is given, or fails (`fail`: the
    point ids, exit status 3); the `stop_at`-th call is stopped by a Ctrl-C; `seconds` a
    point takes; it counts the points that ran at once."""

    def __init__(self, fail=(), stop_at=None, seconds=0.0):
        self.calls, self.fail, self.stop_at, self.seconds = [], set(fail), stop_at, seconds
        self.running = self.most = 0
        self.lock = threading.Lock()

    def run(self, plan, point, out_path, log):
        with self.lock:
            self.calls.append(point["id"])
            if len(self.calls) == self.stop_at:
                raise KeyboardInterrupt
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(self.seconds)
        with self.lock:
            self.running -= 1
        log.write(f"fake {point['id']}\n")
        if point["id"] in self.fail:
            return 3, "exit status 3: pretend"
        name = point["benchmarks"][0]
        with open(out_path, "w") as f:
            json.dump({"context": {"variant": point["variant"]}, "benchmarks": [
                {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1,
                 "repetition_index": 0, "threads": 1, "iterations": 1, "real_time": 1.0,
                 "cpu_time": 1.0, "time_unit": "ms"}]}, f)
        return 0, ""


def fake_plan(variants=("a", "b", "c"), workers=(1, 2)):
    points = [plan.make_point(plan.Target(v, False, "x"), "x", w, "fib", ["fib/n:20/real_time"])
              for v in variants for w in workers]
    return {"repetitions": 1, "points": points}


def test_execute_plan_runs_a_backend_and_resumes_it(tmp_path, capsys):
    """The bookkeeping of a sweep is the backend's to share: a raw file per point by a
    checked rename, its log, status.json; a stop keeps every finished point and no
    temporary file; a second call runs only what is left, a third the failed point."""
    run_dir, fake = str(tmp_path), fake_plan()
    ids = [p["id"] for p in fake["points"]]
    backend = FakeBackend(stop_at=4)
    with pytest.raises(KeyboardInterrupt):
        sweep.execute_plan(backend, run_dir, fake, quiet=True)
    assert backend.calls == ids[:4]
    done = sorted(glob.glob(os.path.join(run_dir, "raw", "**", "*.json"), recursive=True))
    assert done == sorted(os.path.join(run_dir, p["raw"]) for p in fake["points"][:3])
    assert glob.glob(os.path.join(run_dir, "**", ".*"), recursive=True) == []
    assert sorted(rundata.read_status(run_dir)) == sorted(ids[:3])

    backend = FakeBackend(fail=[ids[4]])
    status = sweep.execute_plan(backend, run_dir, fake, quiet=True)
    assert backend.calls == ids[3:]
    assert "3 of 6 points already done" in capsys.readouterr().err
    assert status == rundata.read_status(run_dir)
    assert [i for i in ids if not status[i]["ok"]] == [ids[4]]
    assert status[ids[4]]["rc"] == 3 and status[ids[4]]["message"] == "exit status 3: pretend"
    assert status[ids[5]]["rc"] == 0 and status[ids[5]]["errors"] == 0
    assert not os.path.exists(os.path.join(run_dir, fake["points"][4]["raw"]))
    assert open(os.path.join(run_dir, fake["points"][4]["log"])).read() == f"fake {ids[4]}\n"

    backend = FakeBackend()
    status = sweep.execute_plan(backend, run_dir, fake, quiet=True)
    assert backend.calls == [ids[4]] and all(s["ok"] for s in status.values())


@pytest.mark.parametrize("jobs,simulated", [(1, True), (3, True), (3, False)])
def test_execute_plan_runs_jobs_points_at_once(tmp_path, jobs, simulated):
    """jobs > 1 (a simulated sweep's --jobs) runs that many points of a simulated plan at
    a time; a measured plan's rounds (timings) run one at a time whatever jobs says; the
    records are the same, each naming the host that ran it."""
    backend = FakeBackend(seconds=0.2)
    fake = dict(fake_plan(), simulated=simulated)
    status = sweep.execute_plan(backend, str(tmp_path), fake, quiet=True, jobs=jobs)
    assert sorted(backend.calls) == sorted(p["id"] for p in fake["points"])
    assert all(s["ok"] for s in status.values()) and len(status) == 6
    assert all(s["host"] == socket.gethostname() for s in status.values())
    assert backend.most == 1 if jobs == 1 or not simulated else 1 < backend.most <= jobs


def default_stop_signals():
    """In the child before run.py starts: SIGINT, SIGTERM and SIGHUP at their defaults.
    Whoever started the tests may have left them ignored (nohup ignores SIGHUP, a
    non-interactive shell's background job SIGINT), and run.py keeps an ignored signal
    ignored, by design: the signal these tests send would then do nothing."""
    for signum in proc.STOP_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)


def start_hanging_sweep(root, log, *extra, env=None):
    """./run.py run of static at 1 and 2 workers in the background (its own session),
    returned once its static/2 point hangs: (the Popen of run.py, the hanging bench's pid).
    The caller ends the session (end_session)."""
    full_env = dict(os.environ, FAKE_BENCH_LOG=log, FAKE_BENCH_LOG_PID="1",
                    FAKE_BENCH_HANG="^static/2$", **(env or {}))
    full_env.pop("MAKEFLAGS", None)
    proc = subprocess.Popen([sys.executable, RUN_PY, "run", "--root", root, "--workers",
                             "1,2", "--variants", "static", "--no-plot", "--quiet", *extra],
                            stderr=subprocess.PIPE, text=True, env=full_env,
                            start_new_session=True, preexec_fn=default_stop_signals)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:          # wait for the hanging point to start
        hanging = [i for i in invocations(log) if i["workers"] == 2] \
            if os.path.exists(log) else []
        if hanging:
            return proc, hanging[0]["pid"]
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    end_session(proc)
    pytest.fail(f"the sweep never reached its hanging point: {proc.stderr.read()}")


def end_session(proc):
    """Kill what is left of a start_hanging_sweep session (a bench it orphaned too)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)


def alive(pid):
    """True while the process exists (a zombie included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(fake_root, tmp_path):
    log = str(tmp_path / "bench.log")
    proc, _ = start_hanging_sweep(fake_root, log)
    try:
        os.killpg(proc.pid, signal.SIGINT)           # what Ctrl-C on a terminal does
        _, err = proc.communicate(timeout=30)
    finally:
        end_session(proc)
    assert proc.returncode == 130, err
    run_id = os.path.basename(only_run(fake_root))
    assert "interrupted; continue with: " in err and f"run --resume {run_id}" in err
    assert "Traceback" not in err
    run_dir = only_run(fake_root)
    assert glob.glob(os.path.join(run_dir, "**", ".*"), recursive=True) == []
    kept = sum(len(r.entries) for r in rundata.load_run(run_dir).results)
    assert kept == len(invocations(log)) - 1      # every round but the interrupted one


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_end_the_bench_too(fake_root, tmp_path, signum):
    log = str(tmp_path / "bench.log")
    proc, bench = start_hanging_sweep(fake_root, log)
    try:
        proc.send_signal(signum)                     # to run.py alone, as `kill PID` does
        _, err = proc.communicate(timeout=30)
        bench_left = alive(bench)       # run.py kills and reaps it before it exits
    finally:
        end_session(proc)
    assert not bench_left, "the bench outlived run.py"
    assert proc.returncode == 128 + signum, err
    name = signal.Signals(signum).name
    run_id = os.path.basename(only_run(fake_root))
    assert f"interrupted by {name}; continue with: " in err and f"run --resume {run_id}" in err
    assert "Traceback" not in err
    run_dir = only_run(fake_root)
    assert glob.glob(os.path.join(run_dir, "**", ".*"), recursive=True) == []
    kept = sum(len(r.entries) for r in rundata.load_run(run_dir).results)
    assert kept == len(invocations(log)) - 1      # every finished round is kept


def test_a_stop_signal_waits_out_a_deferred_step_and_an_ignored_one_stays_ignored():
    seen = []
    safety = signal.signal(signal.SIGTERM, lambda *_: seen.append("unhandled"))
    hup = signal.signal(signal.SIGHUP, signal.SIG_IGN)      # as under nohup
    try:
        with proc.stop_signals_interrupt():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            with pytest.raises(proc.Interrupted) as e:
                with proc.signals_deferred():        # e.g. Popen, then keeping its handle
                    os.kill(os.getpid(), signal.SIGTERM)
                    seen.append("the step went on")
            assert (e.value.signum, e.value.exit_status) == (signal.SIGTERM, 143)
            assert e.value.describe() == "interrupted by SIGTERM"
        os.kill(os.getpid(), signal.SIGTERM)                # the handler before is back
    finally:
        signal.signal(signal.SIGTERM, safety)
        signal.signal(signal.SIGHUP, hup)
    assert seen == ["the step went on", "unhandled"]


def test_a_bench_killed_by_a_signal_is_recorded_as_a_signal_death(fake_root):
    p = run_sweep(fake_root, "--variants", "static", "--workloads", "fib",
                  env={"FAKE_BENCH_SIGKILL": "^static/2$"})
    assert p.returncode == 1
    assert "failed: static/workers-2/fib: killed by signal 9 (SIGKILL) (log: " in p.stderr
    run_dir = only_run(fake_root)
    status = json.load(open(os.path.join(run_dir, "status.json")))["static/workers-2/fib"]
    assert (status["ok"], status["rc"]) == (False, -signal.SIGKILL)
    assert status["message"] == "killed by signal 9 (SIGKILL)"
    with open(os.path.join(run_dir, "logs", "static", "workers-2", "fib.log")) as f:
        assert "Library was built as DEBUG" in f.read()   # the output stays in the log


def test_kernel_rate_is_calibrated_once_and_pinned_for_every_point(fake_root, tmp_path,
                                                                  monkeypatch):
    monkeypatch.delenv("SCHEDBENCH_ITERS_PER_US")
    log = str(tmp_path / "bench.log")
    p = run_sweep(fake_root, "--seed", "3", "--variants", "chaselev,static", "--repetitions", "1",
                  "--workloads", "imbalance", env={"FAKE_BENCH_LOG": log, "FAKE_BENCH_LOG_RATE": "1"})
    assert p.returncode == 0, p.stderr
    with open(os.path.join(only_run(fake_root), "plan.json")) as f:
        assert json.load(f)["iters_per_us"] == 123.5
    calls = invocations(log)
    assert calls[0] == {"variant": "chaselev", "workers": 1, "rate": None,
                        "filter": "^imbalance/imbalance:0/"}  # the one calibration run
    assert len(calls) == 1 + 3 * 2        # chaselev, its A/A twin, static x 2 worker counts
    assert all(c["rate"] == "123.5" for c in calls[1:])


def test_a_given_kernel_rate_is_used_and_a_bad_one_refused(fake_root, monkeypatch):
    monkeypatch.setenv("SCHEDBENCH_ITERS_PER_US", "77")
    p = run_sweep(fake_root, "--seed", "3", "--variants", "chaselev", "--workloads", "imbalance")
    assert p.returncode == 0, p.stderr
    with open(os.path.join(only_run(fake_root), "plan.json")) as f:
        assert json.load(f)["iters_per_us"] == 77.0
    monkeypatch.setenv("SCHEDBENCH_ITERS_PER_US", "fast")
    p = run_sweep(fake_root, "--variants", "chaselev", "--workloads", "imbalance")
    assert p.returncode == 2
    assert "SCHEDBENCH_ITERS_PER_US" in p.stderr
    assert len(glob.glob(os.path.join(fake_root, "results", "*"))) == 1  # no stray run


def test_a_run_in_use_is_locked_against_a_second_sweep_and_publish(fake_root, tmp_path):
    proc, _ = start_hanging_sweep(fake_root, str(tmp_path / "bench.log"))
    try:
        run_dir = only_run(fake_root)
        first_files = sorted(glob.glob(os.path.join(run_dir, "**", ".*"), recursive=True))
        second_log = str(tmp_path / "second.log")
        for how in (["run", "--resume", os.path.basename(run_dir)],
                    ["run", "--out", run_dir, "--variants", "chaselev"],
                    ["publish", run_dir]):
            p = cli(*how, "--root", fake_root, *(["--no-plot"] if how[0] == "run" else []),
                    env={"FAKE_BENCH_LOG": second_log}, timeout=60)
            assert p.returncode == 2, (how, p.stderr)
            assert p.stderr.count("\n") == 1, p.stderr        # one line
            assert f"{run_dir} is in use by another run.py (pid {proc.pid})" in p.stderr
        assert not os.path.exists(second_log)                 # no bench ran
        # the first sweep's lock and temporary files are untouched
        assert sorted(glob.glob(os.path.join(run_dir, "**", ".*"), recursive=True)) == \
            first_files
        assert any(f.endswith(".tmp") for f in first_files)
    finally:
        end_session(proc)                                     # SIGKILL: its lock file stays
    p = cli("run", "--root", fake_root, "--resume", "latest", "--no-plot", "--quiet")
    assert p.returncode == 0, p.stderr                        # ... but no longer locks
    assert glob.glob(os.path.join(run_dir, "**", ".*"), recursive=True) == []


@pytest.mark.parametrize("failing", ["plan.json", "meta.json"])
@pytest.mark.parametrize("where", ["results", "new --out", "empty --out"])
def test_a_full_disk_leaves_no_half_made_run(fake_root, tmp_path, monkeypatch, capsys,
                                             failing, where):
    from harness.driver.cli import main
    parent = tmp_path / "runs"
    parent.mkdir()
    out = str(parent / "out")
    if where == "empty --out":
        os.mkdir(out)
    args = ["run", "--root", fake_root, "--workers", "1", "--variants", "chaselev",
            "--workloads", "fib", "--no-plot", "--quiet"] + \
        (["--out", out] if where != "results" else [])
    real_fsync = os.fsync

    def fsync(fd):                  # the disk fills up while `failing` is written
        if os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).startswith(f".{failing}."):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)
    monkeypatch.setattr(os, "fsync", fsync)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and err.count("run.py: error: ") == 1, err
    # no run directory, nor anything half made beside it: absent, or empty as it was
    results = os.path.join(fake_root, "results")
    if where == "results":
        assert not os.path.isdir(results) or os.listdir(results) == []
    else:
        assert os.listdir(parent) == (["out"] if where == "empty --out" else [])
        assert not os.path.exists(out) or os.listdir(out) == []
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert main(args) == 0, capsys.readouterr().err           # the same sweep, space again
    run_dir = out if where != "results" else only_run(fake_root)
    assert rundata.load_run(run_dir).usable()


def test_the_schedule_interleaves_every_variant_of_a_point_round_by_round():
    points = [plan.make_point(plan.Target(v, False, "x"), "x", w, wl, ["b"], repetitions=r)
              for wl, r in (("fib", 4), ("uts", 3)) for w in (1, 2) for v in "abc"]
    doc = {"seed": 5, "repetitions": 4, "points": points, "interleave": sweep.interleave()}
    units = sweep.schedule(doc)
    assert len(units) == 3 * 2 * 4 + 3 * 2 * 3          # one unit per repetition
    groups = [(p["workload"], p["workers"]) for p, _ in units]
    # a group runs whole before the next: four groups, each in one stretch
    assert [g for i, g in enumerate(groups) if i == 0 or g != groups[i - 1]] == \
        [("fib", 1), ("fib", 2), ("uts", 1), ("uts", 2)]
    orders = []
    for g in {("fib", 1)}:
        rounds = [[p["variant"] for p, r in units if (p["workload"], p["workers"]) == g and r == k]
                  for k in range(4)]
        assert all(sorted(r) == ["a", "b", "c"] for r in rounds)     # each member once
        orders = ["".join(r) for r in rounds]
    assert len(set(orders)) > 1                                       # shuffled per round
    assert sweep.schedule(doc) == units                               # from plan.json alone
    # two repetitions a round: half the invocations, the last round the remainder
    doc["interleave"] = sweep.interleave(2)
    assert len(sweep.schedule(doc)) == 3 * 2 * 2 + 3 * 2 * 2
    # a plan from before interleaving runs each point whole, in its order
    old = {"repetitions": 4, "points": points}
    assert sweep.schedule(old) == [(p, 0) for p in points]


def test_per_round_runs_several_repetitions_an_invocation(fake_root, tmp_path):
    log = str(tmp_path / "bench.log")
    p = run_sweep(fake_root, "--variants", "static", "--workloads", "fib", "--workers", "1",
                  "--repetitions", "5", "--per-round", "2", env={"FAKE_BENCH_LOG": log})
    assert p.returncode == 0, p.stderr
    assert len(invocations(log)) == 3                   # 2 + 2 + 1
    data = rundata.load_run(only_run(fake_root))
    assert sorted(e.repetition for e in data.results[0].entries) == [0, 1, 2, 3, 4]
