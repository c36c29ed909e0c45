"""Comparing results: B against A per benchmark and worker count, as a ratio of medians
with a Mann-Whitney U test over the repetitions, and the table and notes that say it
(`./run.py compare`); and the report's form of a comparison (Diff): a Hodges-Lehmann
speedup with its interval, p corrected by Holm within a named family."""

import dataclasses
import math

from .fmt import fmt_num, fmt_p, fmt_seconds
from .gbjson import display_name, workload_of
from .rundata import Result
from .stats import hodges_lehmann_ratio, holm, mann_whitney_u, min_attainable_p


@dataclasses.dataclass
class Comparison:
    """B against A for one benchmark at one worker count (wall time per iteration)."""
    benchmark: str
    workers: int
    variant: str           # "x" (same variant in both) or "x -> y"
    a: Result
    b: Result
    p: float = None
    verdict: str = ""

    @property
    def ratio(self):
        """B's median time / A's: below 1, B is faster."""
        return self.b.median() / self.a.median() if self.a.median() else math.nan

    @property
    def significant(self):
        return self.verdict in ("faster", "slower")


def compare_pair(a, b, alpha, variant):
    """Compare two results' wall times: the verdict says how B relates to A."""
    c = Comparison(benchmark=a.benchmark, workers=a.workers, variant=variant, a=a, b=b)
    xa, xb = a.values("real_time_s"), b.values("real_time_s")
    if len(xa) < 2 or len(xb) < 2:
        c.verdict = "too few repetitions"
        return c
    _, c.p, _ = mann_whitney_u(xa, xb)
    if c.p < alpha:
        c.verdict = "faster" if c.ratio < 1 else "slower"
    else:
        c.verdict = "not significant"
    return c


def compare_sides(results_a, variant_a, results_b, variant_b, alpha):
    """Match results of side A and B by (variant, benchmark, workers), or by (benchmark,
    workers) when variants are named, and compare each usable pair.
    Returns (comparisons, problems): problems name pairs that have an error."""
    def keyed(results, variant):
        table = {}
        for r in results:
            if variant and r.variant != variant:
                continue
            key = (r.benchmark, r.workers) if variant else (r.benchmark, r.workers, r.variant)
            table[key] = r
        return table

    ta, tb = keyed(results_a, variant_a), keyed(results_b, variant_b)
    comparisons, problems = [], []
    for key in sorted(set(ta) & set(tb), key=lambda k: (workload_of(k[0]),) + k):
        a, b = ta[key], tb[key]
        label = f"{variant_a} -> {variant_b}" if variant_a else a.variant
        if not (a.usable and b.usable):
            which = " and ".join(s for s, r in (("A", a), ("B", b)) if not r.usable)
            problems.append(f"{key[0]} workers={key[1]} {label}: error in {which}")
            continue
        comparisons.append(compare_pair(a, b, alpha, label))
    return comparisons, problems


def significance_notes(comparisons, alpha):
    """Summary lines: how many differences are significant, and whether the repetitions
    could have shown any."""
    tested = [c for c in comparisons if c.p is not None]
    faster = sum(c.verdict == "faster" for c in tested)
    slower = sum(c.verdict == "slower" for c in tested)
    notes = [f"{faster + slower} of {len(comparisons)} differences are significant "
             f"(two-sided Mann-Whitney U over the repetitions, alpha={alpha:g}): "
             f"{faster} faster, {slower} slower."]
    weak = [c for c in tested
            if min_attainable_p(len(c.a.valid), len(c.b.valid)) >= alpha]
    if weak:
        c = weak[0]
        notes.append(f"Note: {len(weak)} comparison(s) have too few repetitions to reach "
                     f"p < {alpha:g} at all (e.g. {len(c.a.valid)} vs {len(c.b.valid)}: "
                     f"smallest p {min_attainable_p(len(c.a.valid), len(c.b.valid)):.3g}); "
                     "use --repetitions 5 or more (Google Benchmark's compare.py suggests 9).")
    untested = len(comparisons) - len(tested)
    if untested:
        notes.append(f"{untested} comparison(s) had fewer than 2 repetitions on a side.")
    return notes


def comparison_rows(comparisons):
    return [[display_name(c.benchmark), c.workers, c.variant, fmt_seconds(c.a.median()),
             fmt_seconds(c.b.median()), f"{c.ratio:.3f}", fmt_p(c.p), c.verdict]
            for c in comparisons]


COMPARISON_HEADERS = ["benchmark", "workers", "variant", "A median", "B median", "B/A", "p",
                      "B is"]


CONFIDENCE = 0.95


@dataclasses.dataclass
class Diff:
    """One comparison: the speedup of `variant` over `base` on one benchmark."""
    family: str
    base: str
    variant: str
    benchmark: str
    workers: int
    speedup: float
    low: float
    high: float
    confidence: float
    p: float
    n_base: int
    n_variant: int
    p_adj: float = 1.0

    def significant(self, alpha):
        return self.p_adj < alpha

    def text(self, alpha, interval=True):
        star = "*" if self.significant(alpha) else ""
        if not interval:
            return f"{self.speedup:.2f}x{star}"
        return f"{self.speedup:.2f}x{star} [{self.low:.2f}-{self.high:.2f}]"


def diff_of(family, base_result, variant_result, metric="real_time_s"):
    """The Diff of two results (None when either has no usable repetition)."""
    if base_result is None or variant_result is None:
        return None
    if metric != "real_time_s" and not (base_result.summary(metric)["n"]
                                        and variant_result.summary(metric)["n"]):
        metric = "real_time_s"
    xb, xv = base_result.values(metric), variant_result.values(metric)
    hl = hodges_lehmann_ratio(xb, xv, CONFIDENCE)
    if hl is None:
        return None
    p = mann_whitney_u(xb, xv)[1] if len(xb) >= 2 and len(xv) >= 2 else 1.0
    return Diff(family, base_result.variant, variant_result.variant, base_result.benchmark,
                base_result.workers, hl[0], hl[1], hl[2], hl[3], p, len(xb), len(xv))


def correct(diffs):
    """Holm within each family, in place."""
    families = {}
    for d in diffs:
        families.setdefault(d.family, []).append(d)
    for members in families.values():
        for d, p in zip(members, holm([d.p for d in members])):
            d.p_adj = p
    return diffs


DIFF_HEADERS = ["family", "base", "variant", "benchmark", "workers", "speedup", "low", "high",
                "confidence", "p", "p_holm", "n_base", "n_variant"]


def differences_csv(diffs):
    lines = [",".join(DIFF_HEADERS)]
    for d in diffs:
        lines.append(",".join([d.family, d.base, d.variant, display_name(d.benchmark),
                               str(d.workers)] + [fmt_num(x) for x in (
                                   d.speedup, d.low, d.high, d.confidence, d.p, d.p_adj)]
                              + [str(d.n_base), str(d.n_variant)]))
    return "\n".join(lines) + "\n"
