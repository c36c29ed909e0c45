"""`compare` on fixtures/run_small, and the one comparison object (harness/driver/compare.py):
its estimate, its family-wise bracket, its test and its three-valued verdict."""
import math
import random

import pytest

from harness.driver import compare, gbjson, rundata, stats

from conftest import cli


def test_compare_variants_of_one_run(small_run, tmp_path):
    root, _ = small_run
    out = tmp_path / "cmp.md"
    p = cli("compare", "run_small:static", "run_small:chaselev", "--root", root,
            "--workloads", "fib", "--out", out)
    assert p.returncode == 0, p.stderr
    line = next(l for l in p.stdout.splitlines() if l.startswith("fib/n:20") and "  2  " in l)
    # 5.3 / 7.0 = 0.757 (3 vs 3 repetitions): no verdict is possible with so few
    assert "static -> chaselev" in line and "0.76x [" in line
    assert "undecided (too few repetitions: 3 vs 3)" in line
    assert "too few repetitions to reach the family's level" in p.stdout
    assert "| fib/n:20 | 2 | static -> chaselev |" in out.read_text()


def test_compare_run_against_itself(small_run):
    root, run_dir = small_run
    p = cli("compare", "run_small", run_dir, "--root", root, "--workers", "2")
    assert p.returncode == 0, p.stderr
    table = [l for l in p.stdout.splitlines() if "/" in l and "  2  " in l]
    assert len(table) == 11                 # 12 results at 2 workers, 1 with an error
    assert all(" 1.00x [" in l and "undecided" in l for l in table)
    assert "not compared: imbalance/imbalance:2/grain_us:100/submitters:2/real_time" \
        " workers=2 static: error in A and B" in p.stdout


def result(times):
    entries = [gbjson.Entry("b/x:1", i, t, t, 1, {}) for i, t in enumerate(times)]
    return rundata.Result("v", False, 2, "b/x:1", "f", entries)


def test_comparison_verdicts():
    slow = result([10, 11, 12, 13, 14, 15, 16, 17, 18, 19])
    fast = result([5, 6, 7, 8, 9, 5.5, 6.5, 7.5, 8.5, 9.5])
    (c,), _ = compare.compare_sides([slow], "v", [fast], "v")
    assert c.verdict == compare.BETTER and c.p == pytest.approx(2 / math.comb(20, 10))
    (c,), _ = compare.compare_sides([fast], "v", [slow], "v")
    assert c.verdict == compare.WORSE
    (c,), _ = compare.compare_sides([result([1])], "v", [fast], "v")
    assert c.verdict == compare.UNDECIDED and "too few repetitions" in c.verdict_words()


def close_one(x, y, m=1, **kw):
    """One comparison closed in a family of m (the others copies of it)."""
    comps = [compare.compare("f", x, y, **kw) for _ in range(m)]
    return compare.close(comps)[0]


def test_a_synthetic_a_a_decides_nothing_and_a_known_shift_is_found():
    # A/A: 200 families-worth of pairs drawn from one distribution; the family-wise
    # level says at most 5% of families hold a decided comparison (the family here is
    # one comparison: about 5% of them, never many); with 40 pairs in a family, 0-1
    rng = random.Random(41)
    decided = 0
    for _ in range(200):
        x = [rng.lognormvariate(0, 0.05) for _ in range(10)]
        y = [rng.lognormvariate(0, 0.05) for _ in range(10)]
        decided += close_one(x, y).decided
    assert decided <= 20            # 5% of 200 expected; far fewer than a shift gives
    family = [compare.compare("aa", [rng.lognormvariate(0, 0.05) for _ in range(10)],
                              [rng.lognormvariate(0, 0.05) for _ in range(10)])
              for _ in range(40)]
    assert sum(c.decided for c in compare.close(family)) == 0
    # a known shift: y 20% faster (x / y = 1.2); found, its bracket holds 1.2 and not 1
    x = [1.2 * rng.lognormvariate(0, 0.02) for _ in range(10)]
    y = [rng.lognormvariate(0, 0.02) for _ in range(10)]
    c = close_one(x, y, m=40)
    assert c.verdict == compare.BETTER and c.low < 1.2 < c.high and c.low > 1.0
    assert c.ratio == pytest.approx(1.2, rel=0.03)
    # against a threshold: decided above 1.1, undecided at 1.2, worse than 1.4
    assert close_one(x, y, threshold=1.1).verdict == compare.BETTER
    assert close_one(x, y, threshold=1.2).verdict == compare.UNDECIDED
    assert close_one(x, y, threshold=1.4).verdict == compare.WORSE
    # lower is better (a time ratio ours / theirs): the same bracket, the other word
    assert close_one(x, y, higher_is_better=False).verdict == compare.WORSE


def test_the_bracket_is_the_family_wise_level():
    # the bracket of one in a family of m is the Hodges-Lehmann interval at 1 - 0.05/m,
    # and p_adj = m p; the bracket excludes 1 exactly when p_adj < 0.05 (no ties)
    rng = random.Random(7)
    x = [1.05 * rng.lognormvariate(0, 0.03) for _ in range(10)]
    y = [rng.lognormvariate(0, 0.03) for _ in range(10)]
    for m in (1, 10, 100):
        c = close_one(x, y, m=m)
        est, lo, hi, achieved = stats.hodges_lehmann_ratio(x, y, 1 - 0.05 / m)
        assert (c.ratio, c.low, c.high, c.m) == (est, lo, hi, m)
        assert c.p_adj == pytest.approx(min(1.0, m * stats.mann_whitney_u(x, y)[1]))
        assert (c.low > 1 or c.high < 1) == (c.p_adj <= 0.05)


def test_the_procedures_agree_with_scipy_where_present():
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = random.Random(3)
    for shift in (1.0, 1.03, 1.2):
        x = [shift * rng.lognormvariate(0, 0.05) for _ in range(10)]
        y = [rng.lognormvariate(0, 0.05) for _ in range(12)]
        ours = stats.mann_whitney_u(x, y)
        theirs = scipy_stats.mannwhitneyu(x, y, alternative="two-sided", method="exact")
        assert ours[0] == theirs.statistic and ours[1] == pytest.approx(theirs.pvalue)
        c = close_one(x, y, m=5)
        # just inside the bracket's ends the shifted U test is not significant at the
        # bracket's achieved level; the Hodges-Lehmann estimate is the median log ratio
        for r in (c.low * 1.0001, c.high * 0.9999):
            p = scipy_stats.mannwhitneyu([v / r for v in x], y, method="exact").pvalue
            assert p > 1 - c.achieved - 1e-12
        logs = [math.log(a) - math.log(b) for a in x for b in y]
        assert math.log(c.ratio) == pytest.approx(sorted(logs)[len(logs) // 2 - 1] / 2
                                                  + sorted(logs)[len(logs) // 2] / 2)


def test_a_simulated_comparison_reads_its_range():
    c = compare.simulated("s", 1.5, band=(1.4, 1.6), error=0.1)
    assert (c.low, c.high) == (pytest.approx(1.26), pytest.approx(1.76))
    assert c.verdict == compare.BETTER and c.text() == "SIMULATED 1.50x (1.26-1.76)"
    assert compare.simulated("s", 1.05, band=(0.95, 1.1)).verdict == compare.UNDECIDED
    alone = compare.simulated("s", 1.5)
    assert alone.verdict == compare.UNDECIDED and "no band" in alone.verdict_words()


def test_differences_csv_quotes_what_has_a_comma():
    import csv
    import io
    c = close_one([1.0, 1.1, 1.2], [1.0, 1.05, 1.1])
    c.family = "all vs threadpool, 2 workers"
    c.labels.update(base="threadpool", variant="chaselev", benchmark="fib/n:20", workers=2)
    rows = list(csv.reader(io.StringIO(compare.differences_csv([c]))))
    assert len(rows) == 2 and all(len(r) == len(compare.DIFF_HEADERS) for r in rows)
    assert rows[1][0] == "all vs threadpool, 2 workers"
