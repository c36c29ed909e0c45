"""`compare` on fixtures/run_small, and the verdicts of compare_pair."""
import pytest

from harness.driver import compare, gbjson, rundata

from conftest import cli


def test_compare_variants_of_one_run(small_run, tmp_path):
    root, _ = small_run
    out = tmp_path / "cmp.md"
    p = cli("compare", "run_small:static", "run_small:chaselev", "--root", root,
            "--workloads", "fib", "--out", out)
    assert p.returncode == 0, p.stderr
    line = next(l for l in p.stdout.splitlines() if l.startswith("fib/n:20") and "  2  " in l)
    # 5.3 / 7.0 = 0.757; U = 0 with 3 vs 3 repetitions: exact p = 0.1
    assert "static -> chaselev" in line and "0.757" in line and "0.1 " in line
    assert "not significant" in line
    assert "too few repetitions" in p.stdout
    assert "| fib/n:20 | 2 | static -> chaselev |" in out.read_text()


def test_compare_run_against_itself(small_run):
    root, run_dir = small_run
    p = cli("compare", "run_small", run_dir, "--root", root, "--workers", "2")
    assert p.returncode == 0, p.stderr
    table = [l for l in p.stdout.splitlines() if "/" in l and "  2  " in l]
    assert len(table) == 11                 # 12 results at 2 workers, 1 with an error
    assert all(" 1.000 " in l and "not significant" in l for l in table)
    assert "not compared: imbalance/imbalance:2/grain_us:100/submitters:2/real_time" \
        " workers=2 static: error in A and B" in p.stdout


def test_comparison_verdicts():
    def result(times):
        entries = [gbjson.Entry("b/x:1", i, t, t, 1, {}) for i, t in enumerate(times)]
        return rundata.Result("v", False, 2, "b/x:1", "f", entries)

    slow, fast = result([10, 11, 12, 13, 14]), result([5, 6, 7, 8, 9])
    c = compare.compare_pair(slow, fast, 0.05, "v")
    assert c.verdict == "faster" and c.p == pytest.approx(2 / 252)
    assert c.ratio == pytest.approx(7 / 12)
    assert compare.compare_pair(fast, slow, 0.05, "v").verdict == "slower"
    assert compare.compare_pair(result([1]), fast, 0.05, "v").verdict == "too few repetitions"
