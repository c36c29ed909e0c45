"""Bad input: one clear line on stderr and exit code 2, never a traceback."""
import json
import os

import pytest

from harness.driver.cli import main

from conftest import cli, has_gnuplot, make_fake_root


def one_line_error(p, *words):
    assert p.returncode == 2, (p.returncode, p.stderr)
    # warnings may name unusable files first; then exactly one error line
    lines = [l for l in p.stderr.strip().splitlines() if not l.startswith("run.py: warning: ")]
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("run.py: error: ")
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.mark.parametrize("args, words", [
    (["run", "--variants", "nope"], ["unknown variant 'nope'", "chaselev"]),
    (["run", "--variants", "chaselev,tbb,nope"], ["unknown variant 'nope'"]),
    (["run", "--workloads", "fib,nope"], ["unknown workload 'nope'"]),
    (["run", "--frobnicate"], ["unrecognized arguments: --frobnicate"]),
    (["run", "--workers", "0"], ["--workers"]),
    (["run", "--workers", "two"], ["--workers"]),
    (["run", "--repetitions", "0"], ["--repetitions"]),
    (["run", "--repetitions", "x"], ["--repetitions"]),
    (["run", "--min-time", "-1"], ["--min-time"]),
    (["run", "--filter", "fib(("], ["--filter"]),
    (["run", "--resume", "no-such-run"], ["no run 'no-such-run'"]),
    (["run", "--sim", "nosuch"], ["--sim nosuch", "unknown machine model 'nosuch'", "epyc16"]),
    (["run", "--resume", "latest"], ["no runs under"]),
    (["plot", "no-such-run"], ["no run 'no-such-run'"]),
    (["report", "latest"], ["no runs under"]),
    (["compare", "a"], ["RUN_B"]),
    (["bogus"], ["invalid choice: 'bogus'"]),
])
def test_bad_input(fake_root, capsys, args, words):
    # in-process (fast); the exit code of the real process is checked below
    code = main(args + ["--root", fake_root] if args[0] != "bogus" else args)
    one_line_error(FakeProcess(code, capsys.readouterr().err), *words)


class FakeProcess:
    def __init__(self, returncode, stderr):
        self.returncode, self.stderr = returncode, stderr


@pytest.mark.parametrize("args", [["run", "--variants", "nope"], ["run", "--frobnicate"]])
def test_bad_input_exit_status_of_the_process(fake_root, args):
    one_line_error(cli(*args, "--root", fake_root), args[-1])


def test_no_command_is_usage(fake_root):
    p = cli()
    assert p.returncode == 2 and "usage:" in p.stderr


def test_existing_out_directory_is_refused(fake_root, tmp_path):
    out = tmp_path / "taken"
    out.mkdir()
    (out / "something").write_text("x")
    one_line_error(cli("run", "--root", fake_root, "--out", out), "exists and is not empty")


def test_build_without_list_targets(tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    one_line_error(cli("run", "--root", root), "make list-variants", "failed")


def test_unbuilt_variant_is_named(fake_root):
    os.unlink(os.path.join(fake_root, "build", "static", "bench"))
    one_line_error(cli("run", "--root", fake_root, "--variants", "static", "--no-build"),
                   "build/static/bench is not built")


def test_missing_gnuplot(small_run):
    root, _ = small_run
    one_line_error(cli("plot", "run_small", "--root", root,
                       env={"GNUPLOT": "gnuplot-that-does-not-exist"}),
                   "gnuplot not found", "gnuplot-nox")


def test_unknown_names_in_plot_and_compare(small_run):
    root, _ = small_run
    one_line_error(cli("compare", "run_small:nope", "run_small:static", "--root", root),
                   "unknown variant in run_small 'nope'")
    one_line_error(cli("report", "run_small", "--root", root, "--workloads", "uts"),
                   "unknown workload in this run 'uts'")
    one_line_error(cli("report", "run_small", "--root", root, "--workers", "1,3"),
                   "unknown worker count in this run '3' (known: 1, 2)")


def test_list_asks_the_build(tmp_path):
    root = make_fake_root(tmp_path / "old", references=False)  # no list-references target
    p = cli("list", "--root", root)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["variants:", "chaselev", "static", "threadpool",
                                "references:", "workloads:", "fib", "granularity", "imbalance"]
    p = cli("list", "--root", make_fake_root(tmp_path / "new"), "--benchmarks")
    assert p.returncode == 0, p.stderr
    assert "references:\n  tbb\n    fib/n:20/real_time" in p.stdout
    assert "    granularity/tasks:1000/real_time" in p.stdout


def test_unbuilt_reference_is_skipped_when_not_asked_for(fake_root):
    os.unlink(os.path.join(fake_root, "build", "ref", "tbb", "bench"))
    p = cli("run", "--root", fake_root, "--workloads", "granularity", "--workers", "1",
            "--no-build", "--no-plot", "--quiet")
    assert p.returncode == 0, p.stderr
    assert "reference 'tbb' is not built" in p.stderr


# --- outputs that cannot be written, damaged run files: one line, exit 2 -------------------

@pytest.fixture
def regular_file(tmp_path):
    path = tmp_path / "a-file"
    path.write_text("x")
    return path


def test_run_out_that_is_a_file_or_under_one(fake_root, regular_file):
    one_line_error(cli("run", "--root", fake_root, "--out", regular_file, "--no-plot"),
                   f"--out {regular_file} is not a directory")
    one_line_error(cli("run", "--root", fake_root, "--out", regular_file / "run", "--no-plot"),
                   "cannot be created", "is not a directory")


def test_run_out_under_proc(fake_root):
    one_line_error(cli("run", "--root", fake_root, "--out", "/proc/schedbench-run",
                       "--workloads", "fib", "--workers", "1", "--no-plot", "--quiet"),
                   "/proc/schedbench-run")
    assert not os.path.exists(os.path.join(fake_root, "results"))


def test_plot_report_compare_out_that_cannot_be_written(small_run, regular_file, tmp_path):
    root, _ = small_run
    one_line_error(cli("plot", "run_small", "--root", root, "--out", regular_file),
                   "is not a directory")
    one_line_error(cli("report", "run_small", "--root", root, "--no-plot", "--out", tmp_path),
                   "is a directory")
    one_line_error(cli("compare", "run_small", "run_small", "--root", root,
                       "--out", regular_file / "cmp.md"), "is not a directory")
    for args in (["report", "run_small", "--no-plot"], ["compare", "run_small", "run_small"]):
        one_line_error(cli(*args, "--root", root, "--out", "/proc/schedbench/out.md"),
                       "/proc/schedbench")


@pytest.mark.skipif(not has_gnuplot(), reason="gnuplot is not installed")
def test_plot_out_under_proc(small_run):
    root, _ = small_run
    one_line_error(cli("plot", "run_small", "--root", root, "--out", "/proc/schedbench-plots"),
                   "/proc/schedbench-plots")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def test_damaged_run_files_are_named_and_skipped(small_run):
    root, run_dir = small_run
    junk = {"plan.json": '{"points": [{"id": 1}], "repetitions": 3, "min_time": 0.1}',
            "status.json": '{"x": 1, "y": [2]}',
            "meta.json": '{"git": "abc", "topology": 3, "references": 5, "started": 7}'}
    for name, text in junk.items():
        write(os.path.join(run_dir, name), text)
    write(os.path.join(root, "plots", "run_small", "plots.json"),
          '{"plots": [3, {"name": "x", "files": "y"}]}')
    p = cli("report", "run_small", "--root", root, "--no-plot")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "plan.json: point 0 has no id" in p.stderr
    assert "status.json: ignoring records that are not objects" in p.stderr
    assert "| fib/n:20 | 5.3 ms |" in open(os.path.join(run_dir, "REPORT.md")).read()
    p = cli("run", "--root", root, "--resume", "run_small", "--no-plot")
    one_line_error(p, "cannot be resumed", "plan.json is unusable (point 0 has no id)")


@pytest.mark.parametrize("plan", ['{"points": [', '[]', '{"points": []}'])
def test_resume_of_a_run_without_a_usable_plan(small_run, plan):
    root, run_dir = small_run
    write(os.path.join(run_dir, "plan.json"), plan)
    one_line_error(cli("run", "--root", root, "--resume", run_dir, "--no-plot"),
                   "cannot be resumed")


def test_a_simulated_run_is_not_resumed_as_a_real_sweep(small_run):
    root, run_dir = small_run
    plan = json.load(open(os.path.join(run_dir, "plan.json")))
    plan.update(simulated=True, model="epyc16", min_time=None)
    write(os.path.join(run_dir, "plan.json"), json.dumps(plan))
    one_line_error(cli("run", "--root", root, "--resume", run_dir, "--no-plot"),
                   f"cannot be resumed: it is a simulated run (./run.py simulate --resume {run_dir})")


def test_a_measured_run_is_not_resumed_as_a_simulated_sweep(small_run):
    _, run_dir = small_run
    one_line_error(cli("simulate", "--resume", run_dir),
                   f"cannot be resumed: it is a measured run (./run.py run --resume {run_dir})")


def test_a_simulated_sweep_wants_a_model_and_a_new_directory(tmp_path):
    one_line_error(cli("simulate", "--workers", "2"), "--machine is required (or --resume RUN)")
    out = tmp_path / "taken"
    out.mkdir()
    (out / "old.txt").write_text("a file")
    one_line_error(cli("simulate", "--machine", "epyc16", "--out", out),
                   f"{out} exists and is not empty (use --resume {out} to continue it)")


def test_latest_with_a_meta_json_of_the_wrong_shape(small_run):
    root, run_dir = small_run
    write(os.path.join(run_dir, "meta.json"), '{"started": 12}')
    write(os.path.join(root, "results", "other", "meta.json"), '["not", "an", "object"]')
    p = cli("report", "latest", "--root", root, "--no-plot")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "results/other/REPORT.md" in p.stdout          # the newer of the two


@pytest.mark.parametrize("args, words", [
    (["simulate", "--machine", "nosuch", "--workers", "2"], "unknown machine model"),
    (["simulate", "--machine", "epyc16", "--workers", "300"], "16 PUs"),
])
def test_simulated_commands_are_forwarded_with_their_errors(capsys, args, words):
    """run.py's commands in simulated time: bad input there is one line and exit 2, as
    everywhere else."""
    assert main(args) == 2
    assert words in capsys.readouterr().err


def test_help_lists_the_simulated_commands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for name in ("calibrate", "simulate", "validate"):
        assert name in out
    assert "SIMULATED" in out


def test_a_bad_sim_model_is_refused_before_the_sweep(fake_root):
    one_line_error(cli("run", "--root", fake_root, "--sim", "nosuch", "--workloads", "fib"),
                   "--sim nosuch")
    assert not os.path.exists(os.path.join(fake_root, "results"))
