"""harness/realcheck.sh, the one-go check of the simulator's predictions on a bigger
machine.  Its real run takes minutes (it was run at 1,2 workers on the 2-core VM); here
only what needs no sweep: worker counts the machine cannot run are refused before
anything runs."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_worker_counts_beyond_the_usable_cpus_are_refused_before_any_work(tmp_path):
    out = tmp_path / "check"
    p = subprocess.run(["sh", os.path.join(ROOT, "harness", "realcheck.sh"), str(out), "100000"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert "none of the worker counts 100000 fits" in p.stderr
    assert os.listdir(out) == ["realcheck.log"] and not (out / "realcheck.log").read_text()


def test_a_used_output_folder_is_refused_before_any_work(tmp_path):
    run = tmp_path / "check" / "run"
    run.mkdir(parents=True)
    (run / "meta.json").write_text("{}")
    p = subprocess.run(["sh", os.path.join(ROOT, "harness", "realcheck.sh"), "check"],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert p.returncode == 2 and "is not empty" in p.stderr, p.stderr
    assert sorted(os.listdir(tmp_path / "check")) == ["run"]    # relative to the caller
