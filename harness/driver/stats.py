"""Statistics of repetitions: median and spread, the two-sided Mann-Whitney U test
(exact for small samples without ties, normal approximation otherwise) and the
Hodges-Lehmann ratio with the interval that inverts it; compare.py builds the driver's
one comparison from them."""

import functools
import itertools
import math
import statistics


def summarize(values):
    """n, median, min, max and quartiles (inclusive method) of the finite values;
    None for the statistics when there are none."""
    xs = sorted(v for v in values if v is not None and math.isfinite(v))
    if not xs:
        return dict(n=0, median=None, min=None, max=None, q1=None, q3=None)
    if len(xs) == 1:
        q1 = q3 = xs[0]
    else:
        q1, _, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    return dict(n=len(xs), median=statistics.median(xs), min=xs[0], max=xs[-1], q1=q1, q3=q3)


@functools.lru_cache(maxsize=None)
def _u_counts(m, n):
    """How many of the C(m+n, m) orderings of m x's and n y's give U = 0, 1, ..., m*n
    (U = pairs with x > y).  The largest of all values is either an x (it beats all n y's)
    or a y (it beats nothing), which gives the recurrence."""
    if m == 0 or n == 0:
        return (1,)
    with_x_top = _u_counts(m - 1, n)   # contributes n
    with_y_top = _u_counts(m, n - 1)   # contributes 0
    counts = [0] * (m * n + 1)
    for u, c in enumerate(with_x_top):
        counts[u + n] += c
    for u, c in enumerate(with_y_top):
        counts[u] += c
    return tuple(counts)


EXACT_MAX_TOTAL = 40  # exact distribution up to this many samples (and no ties)


def mann_whitney_u(x, y):
    """Two-sided Mann-Whitney U test of samples x and y.

    Returns (U, p, method): U counts the pairs with x > y (ties count one half).  Without
    ties and with at most EXACT_MAX_TOTAL samples the p-value is exact (the null
    distribution enumerated by _u_counts); otherwise it is the normal approximation with
    the tie correction of the variance and a continuity correction of 0.5.
    """
    m, n = len(x), len(y)
    if m == 0 or n == 0:
        raise ValueError("mann_whitney_u needs two non-empty samples")
    u = sum((xi > yj) + 0.5 * (xi == yj) for xi in x for yj in y)
    pooled = sorted(list(x) + list(y))
    ties = [len(list(group)) for _, group in itertools.groupby(pooled)]
    has_ties = any(t > 1 for t in ties)
    if not has_ties and m + n <= EXACT_MAX_TOTAL:
        counts = _u_counts(m, n)
        total = math.comb(m + n, m)
        k = int(u)
        p_low = sum(counts[:k + 1]) / total    # P(U <= u)
        p_high = sum(counts[k:]) / total       # P(U >= u)
        return u, min(1.0, 2.0 * min(p_low, p_high)), "exact"
    big_n = m + n
    mean = m * n / 2.0
    tie_term = sum(t ** 3 - t for t in ties) / (big_n * (big_n - 1))
    var = m * n / 12.0 * ((big_n + 1) - tie_term)
    if var <= 0:
        return u, 1.0, "normal"   # every value equal: no evidence of a difference
    z = max(0.0, abs(u - mean) - 0.5) / math.sqrt(var)
    return u, min(1.0, math.erfc(z / math.sqrt(2.0))), "normal"


def min_attainable_p(m, n):
    """The smallest two-sided p the exact test can give for sample sizes m and n."""
    if m == 0 or n == 0:
        return 1.0
    return min(1.0, 2.0 / math.comb(m + n, m))


def brent_time(work_s, span_s, workers):
    """Brent's lower bound on the time on `workers` processors: max(work / P, span);
    work / P alone where the span is unknown (None).  None without the work."""
    if not work_s:
        return None
    return max(work_s / workers, span_s or 0.0)


def _u_cdf_below(k, m, n):
    """P(U <= k - 1) under the null hypothesis (no ties): exact up to EXACT_MAX_TOTAL
    samples, else the normal approximation."""
    if k <= 0:
        return 0.0
    if m + n <= EXACT_MAX_TOTAL:
        return sum(_u_counts(m, n)[:k]) / math.comb(m + n, m)
    mean, sd = m * n / 2.0, math.sqrt(m * n * (m + n + 1) / 12.0)
    return 0.5 * math.erfc(-((k - 0.5 - mean) / sd) / math.sqrt(2.0))


def hodges_lehmann_ratio(base, other, confidence=0.95):
    """The ratio base / other of two samples of positive times, as the Hodges-Lehmann
    estimate of the shift between their logarithms (the median of the m x n pairwise log
    ratios), with the distribution-free interval that inverts the Mann-Whitney test: the
    k-th smallest and largest pairwise ratios, k the largest with P(U < k) <= (1 -
    confidence) / 2 (at least 1: with few repetitions the interval is the whole range
    and its confidence lower).  Returns (ratio, low, high, achieved confidence), or None
    when a side has no positive value."""
    lb = [math.log(v) for v in base if v is not None and v > 0 and math.isfinite(v)]
    lo = [math.log(v) for v in other if v is not None and v > 0 and math.isfinite(v)]
    if not lb or not lo:
        return None
    m, n = len(lb), len(lo)
    diffs = sorted(a - b for a in lb for b in lo)
    est = statistics.median(diffs)
    tail = (1.0 - confidence) / 2.0
    k = 1
    while k < m * n // 2 and _u_cdf_below(k + 1, m, n) <= tail:
        k += 1
    achieved = 1.0 - 2.0 * _u_cdf_below(k, m, n)
    return math.exp(est), math.exp(diffs[k - 1]), math.exp(diffs[m * n - k]), achieved
