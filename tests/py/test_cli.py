"""Bad input: one clear line on stderr and exit code 2, never a traceback."""
import os

import pytest

from harness.driver.cli import main

from conftest import cli, make_fake_root


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
