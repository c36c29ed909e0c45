"""Median and spread; the Mann-Whitney U test against hand-computed values."""
import math

import pytest

from harness.driver import stats


def test_summarize_odd():
    s = stats.summarize([3.0, 1.0, 2.0])
    assert s == dict(n=3, median=2.0, min=1.0, max=3.0, q1=1.5, q3=2.5)


def test_summarize_even_inclusive_quartiles():
    # inclusive quartiles of 1,2,3,4 sit at positions 0.75 and 2.25: 1.75 and 3.25
    s = stats.summarize([4.0, 1.0, 3.0, 2.0])
    assert (s["median"], s["q1"], s["q3"]) == (2.5, 1.75, 3.25)


def test_summarize_skips_missing_and_non_finite():
    s = stats.summarize([1.0, None, math.nan, math.inf, 5.0])
    assert (s["n"], s["median"], s["min"], s["max"]) == (2, 3.0, 1.0, 5.0)
    assert stats.summarize([])["n"] == 0 and stats.summarize([])["median"] is None
    one = stats.summarize([7.0])
    assert one["q1"] == one["q3"] == one["median"] == 7.0


def test_null_distribution_of_u_for_3_and_3():
    # U = 0..9 for m = n = 3: partitions of U into at most 3 parts of at most 3,
    # counted by hand: 1 1 2 3 3 3 3 2 1 1 (sum 20 = C(6, 3))
    assert stats._u_counts(3, 3) == (1, 1, 2, 3, 3, 3, 3, 2, 1, 1)
    assert sum(stats._u_counts(5, 4)) == math.comb(9, 4)


def test_exact_p_complete_separation():
    # every y above every x: U = 0, P(U <= 0) = 1/20, two-sided p = 2/20
    u, p, method = stats.mann_whitney_u([1, 2, 3], [4, 5, 6])
    assert (u, method) == (0, "exact") and p == pytest.approx(0.1)
    u, p, _ = stats.mann_whitney_u([4, 5, 6], [1, 2, 3])
    assert u == 9 and p == pytest.approx(0.1)
    # five against five: 2 / C(10, 5) = 2/252
    _, p, _ = stats.mann_whitney_u([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert p == pytest.approx(2 / 252)


def test_exact_p_interleaved():
    # x = 1 3 5, y = 2 4 6: U = (3>2) + (5>2) + (5>4) = 3; P(U <= 3) = 7/20, so p = 0.7
    u, p, _ = stats.mann_whitney_u([1, 3, 5], [2, 4, 6])
    assert u == 3 and p == pytest.approx(0.7)


def test_normal_approximation_with_ties():
    # x = 1 2 2 3, y = 2 3 4 5.  U = 0 + 0.5 + 0.5 + 1.5 = 2.5, mean 8.
    # Ties in the pooled sample: a run of three 2s and two 3s: sum(t^3 - t) = 24 + 6 = 30.
    # var = 16/12 * (9 - 30/56) = 11.2857; z = (|2.5 - 8| - 0.5) / sqrt(var) = 1.48835
    # p = erfc(z / sqrt 2) = 0.13666
    u, p, method = stats.mann_whitney_u([1, 2, 2, 3], [2, 3, 4, 5])
    assert (u, method) == (2.5, "normal")
    assert p == pytest.approx(0.13666, abs=2e-4)


def test_normal_approximation_for_large_samples():
    x, y = list(range(25)), list(range(100, 125))
    u, p, method = stats.mann_whitney_u(x, y)
    # U = 0, mean 312.5, var = 625 * 51 / 12; z = 312 / 51.54 = 6.053
    assert (u, method) == (0, "normal")
    assert p == pytest.approx(math.erfc(312 / math.sqrt(625 * 51 / 12) / math.sqrt(2)))
    assert p < 1e-8


def test_identical_samples_are_not_different():
    assert stats.mann_whitney_u([1.0, 1.0], [1.0, 1.0])[1] == 1.0
    assert stats.mann_whitney_u([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])[1] == 1.0


def test_min_attainable_p():
    assert stats.min_attainable_p(3, 3) == pytest.approx(0.1)
    assert stats.min_attainable_p(4, 4) == pytest.approx(2 / 70)
    assert stats.min_attainable_p(0, 3) == 1.0


def test_empty_sample_is_refused():
    with pytest.raises(ValueError):
        stats.mann_whitney_u([], [1.0])


def test_hodges_lehmann_ratio_and_its_interval_by_hand():
    # base 4, 6, 8 over other 2, 3, 4: the 9 pairwise ratios, sorted:
    # 1, 4/3, 1.5, 2, 2, 2, 8/3, 3, 4 -> median 2.  For 3 against 3, P(U < 1) = P(U = 0)
    # = 1/20 > 0.025: no tail can be cut, k = 1, the interval is the whole range, at the
    # achieved confidence 1 - 2 x 1/20 = 0.9.
    est, lo, hi, conf = stats.hodges_lehmann_ratio([4, 6, 8], [2, 3, 4])
    assert est == pytest.approx(2.0) and (lo, hi) == (pytest.approx(1.0), pytest.approx(4.0))
    assert conf == pytest.approx(0.9)
    # five against five: P(U < 3) = 4/252 <= 0.025 < P(U < 4) = 7/252, so k = 3: the 3rd
    # smallest and largest of the 25 pairwise ratios, confidence 1 - 8/252
    base, other = [10, 11, 12, 13, 14], [5, 6, 7, 8, 9]
    ratios = sorted(b / o for b in base for o in other)
    est, lo, hi, conf = stats.hodges_lehmann_ratio(base, other)
    assert lo == pytest.approx(ratios[2]) and hi == pytest.approx(ratios[22])
    assert conf == pytest.approx(1 - 8 / 252)
    # the estimate is the median of the pairwise ratios (on logs: the geometric middle)
    logs = sorted(math.log(b) - math.log(o) for b in base for o in other)
    assert est == pytest.approx(math.exp(logs[12]))
    assert stats.hodges_lehmann_ratio([], [1.0]) is None
    assert stats.hodges_lehmann_ratio([1.0, -1.0], [0.0]) is None


def test_hodges_lehmann_interval_against_scipy_where_present():
    scipy_stats = pytest.importorskip("scipy.stats")
    # the interval's ends are where the U test of (base / r) against other turns
    # significant: just inside them scipy's exact two-sided p is above 2 P(U < k)
    base, other = [10.0, 11.5, 12.2, 13.1, 14.9], [5.2, 6.1, 7.4, 8.8, 9.3]
    est, lo, hi, conf = stats.hodges_lehmann_ratio(base, other)
    for r in (lo * 1.001, hi * 0.999, est):
        p = scipy_stats.mannwhitneyu([b / r for b in base], other, method="exact").pvalue
        assert p > 1 - conf - 1e-12
