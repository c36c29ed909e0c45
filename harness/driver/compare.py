"""The one comparison of the driver: a ratio of two samples, its interval, its test, its
family's correction and its verdict.  REPORT.md's tables, README's answer block, the
figures (bars, filled markers, the heat map's stars), the targets table,
differences.csv and `./run.py compare` all read Comparison objects made here; nothing
else estimates a ratio or decides a difference.

The estimate.  A comparison asks how x relates to y (x / y: a speedup is base time /
variant time, a target ratio ours / theirs) from the repetitions of each.  The ratio is
the Hodges-Lehmann estimate of the shift between log x and log y: the median of the
m x n pairwise ratios x_i / y_j.  Chosen over a bootstrap of the ratio of medians
because it needs no seed and no resampling (the same samples give the same digits
everywhere), it is robust to an outlying repetition, and its interval is exact and
distribution-free: the one that inverts the Mann-Whitney U test, so the bracket, the
p-value and the verdict can never disagree (stats.hodges_lehmann_ratio).

The interval and the family.  Every comparison belongs to a named family (the
comparisons one table or figure states, families.py names them); with m comparisons in
its family, each interval is at the level 1 - ALPHA / m (Bonferroni), so that all m
brackets of a family hold their true ratios together with probability at least
1 - ALPHA = 95%.  A bracket therefore means one thing everywhere: the family's
simultaneous 95% interval.  Bonferroni rather than Holm's step-down: Holm's corrected
p-values have no matching intervals, and a verdict here is read off the bracket.

The test.  The two-sided Mann-Whitney U test of x / t against y at the threshold t
(exact without ties up to stats.EXACT_MAX_TOTAL samples, else the normal approximation);
p_adj = min(1, m p) is its Bonferroni correction: p_adj < ALPHA exactly when the
bracket excludes t (without ties).

The verdict.  better: the whole bracket lies on the good side of the threshold (above
it, or below it for a ratio where lower is better); worse: the whole bracket on the
other side; undecided: the bracket holds the threshold, or the repetitions are too few
for the family's level (the interval is then the whole range of pairwise ratios at a
lower confidence, and decides nothing).  Undecided at the threshold 1 reads "no
measurable difference".

A SIMULATED comparison (simulated()) has no repetitions to test: its ratio is of
simulated medians, its bracket is the sensitivity band of the model's uncertain costs
widened by the simulator's measured error for that workload, and its verdict is read off
that bracket the same way."""

import csv
import dataclasses
import io
import math

from .fmt import fmt_num, fmt_seconds
from .gbjson import display_name, workload_of
from .stats import hodges_lehmann_ratio, mann_whitney_u, min_attainable_p

ALPHA = 0.05            # the family-wise error rate: brackets are simultaneous 95%
BETTER, WORSE, UNDECIDED = "better", "worse", "undecided"
# What a bracket is, in words: every table header and caption quotes it.
BRACKET = "95% simultaneous interval over its family (Hodges-Lehmann, Bonferroni)"
BRACKET_SHORT = "[95% family-wise interval]"
SIM_BRACKET = ("SIMULATED: (sensitivity band of the model's uncertain costs, widened by the "
               "simulator's validation error)")


def positive(values):
    return [v for v in values if v is not None and math.isfinite(v) and v > 0]


@dataclasses.dataclass
class Comparison:
    """x against y: the ratio x / y, its bracket and its verdict against `threshold`.
    `labels` name what was compared (benchmark, workers, base, variant, ...); x and y are
    the repetitions' values (empty for a SIMULATED comparison)."""
    family: str
    x: list
    y: list
    threshold: float = 1.0
    higher_is_better: bool = True
    labels: dict = dataclasses.field(default_factory=dict)
    simulated: bool = False
    ratio: float = math.nan
    low: float = math.nan
    high: float = math.nan
    level: float = 1 - ALPHA           # the level asked of this bracket (1 - ALPHA / m)
    achieved: float = 0.0              # the level the repetitions allow (<= level: undecided)
    p: float = 1.0                     # two-sided U test at the threshold
    m: int = 1                         # the family's size
    note: str = ""                     # a SIMULATED bracket's sources, in words

    def __getattr__(self, name):        # c.benchmark, c.workers, c.base, c.variant, ...
        labels = self.__dict__.get("labels") or {}
        if name in labels:
            return labels[name]
        raise AttributeError(name)

    @property
    def p_adj(self):
        return min(1.0, self.p * self.m)

    @property
    def decidable(self):
        """The repetitions can reach the family's level (a SIMULATED comparison: it has a
        band or a validation error to make a range of)."""
        return self.achieved >= (1.0 if self.simulated else self.level - 1e-12)

    @property
    def verdict(self):
        if not self.decidable or not (math.isfinite(self.low) and math.isfinite(self.high)):
            return UNDECIDED
        above, below = self.low > self.threshold, self.high < self.threshold
        if above or below:
            return BETTER if above == self.higher_is_better else WORSE
        return UNDECIDED

    @property
    def decided(self):
        return self.verdict != UNDECIDED

    def bracket(self):
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            return ""
        return f"[{self.low:.2f}-{self.high:.2f}]"

    def text(self):
        """'1.49x [1.46-1.53]' (a SIMULATED one 'SIMULATED 1.48x (1.44-1.53)')."""
        if self.simulated:
            return f"SIMULATED {self.ratio:.2f}x" + (f" ({self.low:.2f}-{self.high:.2f})"
                                                    if self.low != self.high else "")
        return f"{self.ratio:.2f}x {self.bracket()}".rstrip()

    def verdict_words(self):
        """The verdict as a table cell says it: 'no measurable difference' for an
        undecided comparison with 1, 'too few repetitions' where the level is out of
        reach."""
        if self.verdict != UNDECIDED:
            return self.verdict
        if not self.decidable and self.simulated:
            return "undecided (SIMULATED: no band and no validation error to make a range of)"
        if not self.decidable:
            return f"undecided (too few repetitions: {len(self.x)} vs {len(self.y)})"
        if self.threshold == 1.0:
            return "no measurable difference"
        return "undecided"

    def cell(self):
        """A table cell: the number, its bracket and the verdict word when decided."""
        words = {BETTER: " **better**", WORSE: " **worse**"}.get(self.verdict, "")
        return self.text() + words


def compare(family, x, y, threshold=1.0, higher_is_better=True, **labels):
    """A measured comparison of the samples x and y (positive values: times, rates); its
    bracket is set when its family is closed (close()).  None when a side has no usable
    value."""
    x, y = positive(x), positive(y)
    if not x or not y:
        return None
    return Comparison(family, x, y, threshold, higher_is_better, labels)


def simulated(family, ratio, band=None, error=None, threshold=1.0, higher_is_better=True,
              note="", **labels):
    """A SIMULATED comparison: the ratio of simulated medians; its bracket the band
    (low, high) of the model's uncertain costs (None: the point alone) widened by the
    validation error `error` (a fraction, None when not measured)."""
    lo, hi = band if band else (ratio, ratio)
    lo, hi = min(lo, ratio), max(hi, ratio)
    known = error is not None and math.isfinite(error)
    if known:
        lo, hi = lo * (1 - abs(error)), hi * (1 + abs(error))
    # a point alone, without a band or a measured error, is no range: it decides nothing
    return Comparison(family, [], [], threshold, higher_is_better, labels, simulated=True,
                      ratio=ratio, low=lo, high=hi, achieved=1.0 if band or known else 0.0,
                      note=note)


def close(comparisons):
    """Set every measured comparison's family size, bracket and test (in place): each of
    the m members of a family gets its interval at 1 - ALPHA / m.  Returns the list."""
    sizes = {}
    for c in comparisons:
        if c is not None and not c.simulated:
            sizes[c.family] = sizes.get(c.family, 0) + 1
    for c in comparisons:
        if c is None or c.simulated:
            continue
        c.m = sizes[c.family]
        c.level = 1 - ALPHA / c.m
        c.ratio, c.low, c.high, c.achieved = hodges_lehmann_ratio(c.x, c.y, c.level)
        t = c.threshold
        c.p = mann_whitney_u([v / t for v in c.x], c.y)[1] if len(c.x) > 1 and len(c.y) > 1 \
            else 1.0
    return comparisons


def smallest_p(n):
    """The smallest two-sided p the exact test can give with n repetitions a side."""
    return min_attainable_p(n, n)


def families_summary(comparisons):
    """{family: (members, decided, the level of its brackets)} in order of appearance."""
    out = {}
    for c in comparisons:
        if c.simulated:
            continue
        n, dec, _ = out.get(c.family, (0, 0, c.level))
        out[c.family] = (n + 1, dec + c.decided, c.level)
    return out


# --- differences.csv: every measured comparison a report states -----------------------

DIFF_HEADERS = ["family", "family_size", "base", "variant", "benchmark", "workers", "metric",
                "ratio", "low", "high", "level", "achieved_level", "threshold",
                "higher_is_better", "p", "p_adjusted", "verdict", "n_x", "n_y"]


def differences_csv(comparisons):
    """differences.csv (csv module: a family name with a comma is quoted)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(DIFF_HEADERS)
    for c in comparisons:
        if c.simulated:
            continue
        lab = c.labels
        w.writerow([c.family, c.m, lab.get("base", ""), lab.get("variant", ""),
                    display_name(lab.get("benchmark", "")), lab.get("workers", ""),
                    lab.get("metric", "real_time_s")]
                   + [fmt_num(v) for v in (c.ratio, c.low, c.high, c.level, c.achieved,
                                           c.threshold)]
                   + [int(c.higher_is_better), fmt_num(c.p), fmt_num(c.p_adj), c.verdict,
                      len(c.x), len(c.y)])
    return out.getvalue()


# --- ./run.py compare: B against A per benchmark and worker count --------------------

def compare_sides(results_a, variant_a, results_b, variant_b):
    """Match results of side A and B by (variant, benchmark, workers), or by (benchmark,
    workers) when variants are named, and compare each usable pair: B's time / A's time
    (lower: B is faster), one family.  Returns (comparisons, problems): problems name
    pairs that have an error."""
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
        c = compare("B vs A", b.values("real_time_s"), a.values("real_time_s"),
                    higher_is_better=False, benchmark=a.benchmark, workers=a.workers,
                    variant=label, a=a, b=b)
        if c:
            comparisons.append(c)
    return close(comparisons), problems


COMPARISON_HEADERS = ["benchmark", "workers", "variant", "A median", "B median",
                      "B/A " + BRACKET_SHORT, "p (Bonferroni)", "B is"]


def comparison_rows(comparisons):
    words = {BETTER: "faster", WORSE: "slower"}
    return [[display_name(c.benchmark), c.workers, c.variant, fmt_seconds(c.a.median()),
             fmt_seconds(c.b.median()), c.text(), f"{c.p_adj:.3g}",
             words.get(c.verdict, c.verdict_words())] for c in comparisons]


def significance_notes(comparisons, simulated=False):
    """Summary lines: how many differences are decided, the family's level, and whether
    the repetitions could decide any (the advice names simulate's --reps for a SIMULATED
    side, run's --repetitions else)."""
    faster = sum(c.verdict == BETTER for c in comparisons)
    slower = sum(c.verdict == WORSE for c in comparisons)
    m = len(comparisons)
    notes = [f"{faster + slower} of {m} differences are decided ({faster} faster, {slower} "
             f"slower); B/A brackets: {BRACKET} over all {m} comparisons"
             + (f", each at {1 - ALPHA / m:.4g}" if m else "") + "."]
    weak = [c for c in comparisons if not c.decidable]
    if weak:
        c = weak[0]
        notes.append(f"Note: {len(weak)} comparison(s) have too few repetitions to reach the "
                     f"family's level at all (e.g. {len(c.x)} vs {len(c.y)}: smallest p "
                     f"{min_attainable_p(len(c.x), len(c.y)):.3g}, needed "
                     f"{ALPHA / c.m:.3g}); use {'--reps' if simulated else '--repetitions'} 10 or more.")
    return notes
