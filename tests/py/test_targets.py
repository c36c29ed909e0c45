"""harness/driver/targets.py reads the bench JSON through harness.driver.gbjson: one invocation of
a (fake) bench binary gives each benchmark's wall time in ns and its counters; its record,
RUN/targets.json (harness/driver/targetfile.py), is checked, shown in the report and
refused at publishing when broken or of other code."""
import json
import os
import stat
import shutil
import subprocess

import pytest

from harness.driver import ideal, targetfile, targets
from harness.driver.config import UsageError
from harness.driver.publish import targets_publishable

from conftest import FIXTURES, ROOT, cli


@pytest.fixture
def bench(tmp_path):
    path = tmp_path / "build" / "chaselev" / "bench"
    path.parent.mkdir(parents=True)
    shutil.copy(os.path.join(FIXTURES, "fake_bench.py"), path)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return str(path)


def test_bench_gives_wall_time_and_counters(bench):
    got = targets.bench(bench, 2, "^fib/n:20/", min_time="0.01")
    (name,) = got
    ns, counters = got[name]
    assert name == "fib/n:20/real_time"
    assert ns == pytest.approx(0.5 / 2 ** 0.9 * 1e6, rel=0.05)   # fake_bench's model, in ns
    assert counters["steals"] == 40.0 and "real_time" not in counters


def test_a_wrong_answer_is_an_error(bench, monkeypatch):
    monkeypatch.setenv("FAKE_BENCH_ERROR", "fib")
    monkeypatch.setenv("FAKE_BENCH_ERROR_REP", "0")
    with pytest.raises(RuntimeError, match="wrong answer"):
        targets.bench(bench, 1, "^fib/n:20/")


# --- the record: ./run.py targets RUN writes RUN/targets.json (harness/driver/targetfile.py)

def fake_record(rev, code_dirty=(), revisions=None, **change):
    comparison = dict(comparison="pingpong", what="round trip vs Go", unit="ns",
                      ours=[200.0, 210.0, 190.0], ref=[400.0, 420.0, 380.0], median_ours=200.0,
                      median_ref=400.0, ratio=0.5, target=0.75, lower_is_better=True, met=True)
    comparison.update(change)
    return dict(format=targetfile.FORMAT, rounds=3, started="a", finished="b",
                git=dict(rev=rev, code_dirty=list(code_dirty)), revisions=revisions or {},
                comparisons=[comparison], not_measured=[dict(comparison="blocked",
                                                             why="no Go toolchain")])


def head():
    return subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()


def write_record(run_dir, doc):
    with open(os.path.join(run_dir, targetfile.FILE), "w") as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc))


def test_measure_records_each_comparison_and_what_could_not_be_measured(monkeypatch):
    values = [10.0, 20.0, 11.0, 19.0, 12.0, 21.0]   # ours, theirs, ours, ... then 5.0
    monkeypatch.setattr(targets, "bench", lambda binary, *a, **k: {
        "switch/roundtrip": (values.pop(0) if values else 5.0, {}),
        "yield/threads:2/rounds:100000/real_time": (5.0, {})})
    monkeypatch.setattr(targets.shutil, "which", lambda name: None)   # no Go here
    doc = targets.measure(["switch", "yield"], 3)
    assert targetfile.problem(doc) is None
    (c,) = doc["comparisons"]
    assert c["ours"] == [10.0, 11.0, 12.0] and c["ref"] == [20.0, 19.0, 21.0]
    assert c["ratio"] == pytest.approx(11.0 / 20.0) and "met" not in c
    assert targetfile.round_ratios(c) == pytest.approx([0.5, 11 / 19, 12 / 21])
    assert doc["not_measured"] == [dict(comparison="yield",
                                        why="no Go toolchain (apt-get install golang-go)")]


def test_each_pool_is_compared_by_its_placement_not_its_name():
    # the policy words `bench --policy` prints, for the pools and a stealing variant
    words = dict(steals=0, keeps_tasks=1, spreads_tasks=1)
    assert ideal.placement(words) == "round-robin"
    assert ideal.placement(dict(words, spreads_tasks=0)) == "home"
    assert ideal.placement(dict(words, keeps_tasks=0, one_queue=1)) is None   # one queue
    assert ideal.placement(dict(words, steals=1)) is None


def test_a_stopped_measurement_resumes_keeping_what_it_finished(tmp_path, monkeypatch):
    """./run.py targets RUN after a stop (Ctrl-C) measures only what the stopped one did
    not finish: each comparison is saved as it ends; each bench's output is in the log."""
    rev = head()
    if not rev:
        pytest.skip("not a git checkout")
    monkeypatch.setattr(targets, "git_info", lambda root: dict(rev=rev, code_dirty=[]))
    calls = []

    def fake_bench(binary, workers, name_re, *a, log=None, **k):
        calls.append(binary)
        with open(log, "a") as f:
            f.write(f"ran {binary}\n")
        if "fib" in name_re and len(calls) > 4:
            raise KeyboardInterrupt        # stopped in fib's second comparison
        name = "switch/roundtrip" if "switch" in name_re else "fib/n:30/real_time"
        return {name: (1000.0 + len(calls), {})}
    monkeypatch.setattr(targets, "bench", fake_bench)
    saved = []
    logs = str(tmp_path / "logs")
    with pytest.raises(KeyboardInterrupt):
        targets.measure(["switch", "fib"], 1, log_dir=logs, save=lambda d: saved.append(json.loads(json.dumps(d))))
    partial = saved[-1]
    assert [c["what"] for c in partial["comparisons"]] == [
        "jump_fcontext round trip vs Boost.Context (ns)",
        "fib(30), chaselev vs oneTBB task_group, 1 worker(s)"]
    assert not partial["finished"]
    with open(os.path.join(logs, "switch.log")) as f:
        text = f.read()
    assert text.startswith("ran build/chaselev/bench\n") and "boost_switch" in text
    calls.clear()
    monkeypatch.setattr(targets, "bench", lambda binary, workers, name_re, *a, log=None, **k:
                        calls.append(name_re) or {"fib/n:30/real_time": (7.0, {}),
                                                  "switch/roundtrip": (7.0, {})})
    doc = targets.measure(["switch", "fib"], 1, log_dir=logs, partial=partial)
    assert targetfile.problem(doc) is None
    assert calls == ["^fib/n:30/", "^fib/n:30/"]        # only fib at 2 workers, a side each
    assert [c["ours"] for c in doc["comparisons"]] == [[1001.0], [1003.0 / 1e6], [7.0 / 1e6]]
    # the kept rows take their place in the measuring order (the report's table is in
    # it), and a save before one is reached keeps it all the same
    saved.clear()
    doc = targets.measure(["fib", "switch"], 1, partial=partial,
                          save=lambda d: saved.append(json.loads(json.dumps(d))))
    assert [c["ours"] for c in doc["comparisons"]] == [[1003.0 / 1e6], [7.0 / 1e6], [1001.0]]
    assert [c["ours"] for c in saved[0]["comparisons"]] == [[1003.0 / 1e6], [7.0 / 1e6], [1001.0]]
    # of other rounds (or other code) nothing is kept
    calls.clear()
    targets.measure(["switch"], 2, partial=partial)
    assert len(calls) == 4


def test_an_unknown_comparison_is_named():
    with pytest.raises(UsageError, match="unknown comparison 'nope'"):
        targets.check_only(["fib", "nope"])


def test_no_record_is_none_and_a_broken_one_is_named(tmp_path):
    assert targetfile.read(str(tmp_path)) == (None, None)
    good = fake_record("abc")
    for text, why in ((json.dumps(good)[:80], "unreadable JSON"),
                      (json.dumps(dict(good, format="other")), "not a schedbench-targets/1"),
                      (json.dumps(dict(good, finished=None)), "did not finish"),
                      (json.dumps(fake_record("abc", ours=[1.0, "x"])), "'ours' is not a list"),
                      # damaged numbers: NaN, negative, infinite (refused, never published)
                      (json.dumps(fake_record("abc", ours=[1.0, float("nan")])),
                       "'ours' is not a list of finite positive numbers"),
                      (json.dumps(fake_record("abc", ref=[-5.0])),
                       "'ref' is not a list of finite positive numbers"),
                      (json.dumps(fake_record("abc", target=float("inf"))),
                       "'target' is not a finite positive number"),
                      (json.dumps(fake_record("abc", target=float("nan"))),
                       "'target' is not a finite positive number")):
        write_record(str(tmp_path), text)
        doc, problem = targetfile.read(str(tmp_path))
        assert doc is None and why in problem, (text, problem)
    write_record(str(tmp_path), good)
    assert targetfile.read(str(tmp_path)) == (good, None)


def test_a_record_of_other_code_than_the_run_is_stale():
    if not head():
        pytest.skip("not a git checkout")
    run_git = dict(rev=head())
    assert targetfile.stale(fake_record(head()), run_git) is None
    assert "uncommitted" in targetfile.stale(fake_record(head(), [" M common/sched.c"]), run_git)
    # a binary that says nothing of its revision cannot be checked; a dirty one is stale
    assert targetfile.stale(fake_record(head(), revisions={"b": ["unknown"]}), run_git) is None
    assert "b at" in targetfile.stale(fake_record(head(), revisions={"b": [head()[:7] + "-dirty"]}),
                                      run_git)
    # the revision before the last change to the core measured other code
    last = subprocess.run(["git", "-C", ROOT, "log", "--format=%H", "-n", "1", "--",
                           "common/sched.c"], capture_output=True, text=True).stdout.strip()
    if not last or subprocess.run(["git", "-C", ROOT, "cat-file", "-e", last + "~1"]).returncode:
        pytest.skip("not enough history in this clone")
    before = subprocess.run(["git", "-C", ROOT, "rev-parse", last + "~1"], capture_output=True,
                            text=True).stdout.strip()
    assert "measured code differs" in targetfile.stale(fake_record(before), run_git)


def test_the_report_shows_the_targets_and_names_a_broken_record(small_run):
    root, run_dir = small_run
    write_record(run_dir, fake_record("4f2c1e9d0b7a"))
    p = cli("report", "run_small", "--root", root, "--no-plot")
    assert p.returncode == 0, p.stderr
    with open(os.path.join(run_dir, "REPORT.md")) as f:
        text = f.read()
    assert "## Against what users would pick" in text
    # recomputed from the samples (3 rounds a side: too few for a verdict in a family)
    assert "| round trip vs Go | 200 ns | 400 ns | 0.50x [0.45-0.55] | <= 0.75x | " \
        "undecided (too few repetitions: 3 vs 3) |" in text
    assert "| blocked | not measured |  | no Go toolchain |" in text
    write_record(run_dir, '{"format": "schedbench-targets/1", "compar')
    p = cli("report", "run_small", "--root", root, "--no-plot")
    assert p.returncode == 0, p.stderr
    with open(os.path.join(run_dir, "REPORT.md")) as f:
        text = f.read()
    assert "## Against what users would pick" not in text
    assert "targets record skipped" in text and "unreadable JSON" in text


def test_publish_refuses_a_run_whose_targets_are_broken(small_run):
    _, run_dir = small_run
    write_record(run_dir, "{")
    ok, why = targets_publishable(run_dir, {"git": {"rev": "4f2c1e9d0b7a"}})
    assert not ok and "unreadable JSON" in why and "./run.py targets" in why


def test_the_command_refuses_a_simulated_run_and_an_unknown_comparison(small_run):
    root, run_dir = small_run
    p = cli("targets", "run_small", "--root", root, "--only", "fib,nope")
    assert p.returncode == 2 and "unknown comparison 'nope'" in p.stderr
    with open(os.path.join(run_dir, "meta.json")) as f:
        meta = json.load(f)
    with open(os.path.join(run_dir, "meta.json"), "w") as f:
        json.dump(dict(meta, simulated=True), f)
    p = cli("targets", "run_small", "--root", root, "--no-build")
    assert p.returncode == 2 and "is a simulated run" in p.stderr
    assert not os.path.exists(os.path.join(run_dir, targetfile.FILE))


def test_run_targets_outside_git_keeps_the_sweep_and_says_why(fake_root):
    p = cli("run", "--root", fake_root, "--workloads", "fib", "--workers", "1", "--no-build",
            "--no-plot", "--quiet", "--targets", "2")
    assert p.returncode == 1, p.stderr
    assert "the targets were not measured" in p.stderr and "not measured in a git checkout" in p.stderr
    (run_id,) = os.listdir(os.path.join(fake_root, "results"))
    run_dir = os.path.join(fake_root, "results", run_id)
    assert os.path.exists(os.path.join(run_dir, "results.csv"))     # the sweep is kept
    with open(os.path.join(run_dir, "meta.json")) as f:
        assert json.load(f)["targets_rounds"] == 2                   # a --resume tries again


def test_imbalance_targets_follow_each_scenarios_ideal():
    """The imbalance rows' target is what a perfect balancer gains over the pool's own
    placement of the same tasks (plus 10%), so a balanced scenario asks for parity and a
    single submitter on the per-thread-queue pool for half its time."""
    one = "imbalance/imbalance:0/grain_us:10/tasks:20000/submitters:1/late:0/skew:0/real_time"
    assert ideal.imbalance_target(one, "home") == pytest.approx(0.55)
    assert ideal.imbalance_target(one, "round-robin") == pytest.approx(1.10)
    assert ideal.imbalance_target(one, None) == 1.0          # a balancer: oneTBB
    four = one.replace("imbalance:0", "imbalance:2").replace("submitters:1", "submitters:4")
    assert 1.0 < ideal.imbalance_target(four, "home") <= 1.10   # homes spread the shares
    late = four.replace("late:0", "late:1")
    times = ideal.imbalance_schedule(late, 2)
    assert times["balancer"] == pytest.approx(20005.544 / 2, rel=1e-3)   # the late half fits
    # sizes as workloads/wl_kernel.h makes them (its sum for these 64 tasks, computed in C)
    assert sum(ideal.imbalance_sizes(2, 64, False)) == pytest.approx(77.825624, abs=1e-5)
    assert ideal.imbalance_sizes(2, 4, True) == pytest.approx([0.25, 0.75, 1.25, 1.75])


def test_verdicts_are_recomputed_never_read_from_the_record():
    # the record says "met" for a ratio that misses its target: the table says worse,
    # from the ten rounds' samples; a NaN never renders
    doc = fake_record("abc", ours=[300.0 + i for i in range(10)], ref=[400.0 + i for i in range(10)],
                      ratio=0.1, met=True, target=0.5)
    (row,) = targetfile.table_rows(dict(doc, not_measured=[]))
    assert row[3].startswith("0.75x [") and row[5] == "**worse**", row
    assert "nan" not in " ".join(row)
    assert "0 decided better, 1 worse" in targetfile.summary(doc)
    # better where the whole bracket clears the target
    doc = fake_record("abc", ours=[100.0 + i for i in range(10)], ref=[400.0 + i for i in range(10)])
    assert targetfile.table_rows(doc)[0][5] == "**better**"
    # a SIMULATED row (one run a side) is decided only with the validation error
    sim = fake_record("abc", what="SIMULATED epyc16, 16 workers, from a pthread, chaselev: 32 vs 1",
                      comparison="flush-sim", ours=[6.67], ref=[5.5], target=1.2,
                      lower_is_better=False)
    assert "no band and no validation error" in targetfile.table_rows(sim)[0][5]
    assert targetfile.table_rows(sim, {"spawn_batch": 0.001})[0][5] == "**better**"
    assert targetfile.table_rows(sim, {"spawn_batch": 0.05})[0][5].startswith("undecided")



def test_the_table_keeps_each_comparison_s_rows_together():
    # a resumed measurement's record may hold a comparison's new rows after the next
    # comparison's kept ones: the table shows them together, in the record's order
    doc = fake_record("abc")
    row = doc["comparisons"][0]
    doc["comparisons"] = [dict(row, comparison="spawn", what="a"), dict(row, comparison="flush", what="b"),
                          dict(row, comparison="spawn", what="c")]
    assert [r[0] for r in targetfile.table_rows(doc)[:3]] == ["a", "c", "b"]
