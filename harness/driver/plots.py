"""The figures of a run, as gnuplot scripts and data (not rendered here): time per
benchmark, speedups over the baselines, the imbalance sweep against the claim's band,
METG, and why a variant wins (steals, parks, CPU per wall)."""

import dataclasses
import math
import re

from .config import (BASELINES, CLAIM_BAND, CLAIM_PARAM, CLAIM_WORKLOAD, PROG,
                     REPRESENTATIVE)
from .fmt import time_unit_for
from .gbjson import display_name, params_of, workload_of
from .rundata import CPU_PER_WALL
from .stats import brent_time, mann_whitney_u


# The figures' rules (plots/README.md): at most MAX_SERIES series a panel, each with a
# colour AND a marker of its own; a log y axis where a panel's values span more than
# LOG_SPAN; nothing clipped (every y range is set from what the panel draws); one variant
# (config.REPRESENTATIVE) drawn plainly and the other stealing variants as the shaded
# range of their medians; titles in words (bench_words), never a raw benchmark name.
MAX_SERIES = 8
LOG_SPAN = 4.0

# One colour and one marker per variant, stable across the plots of a run (assigned in
# display order; styles() moves a series on to the next free pair where two would meet
# in one panel).  Markers are gnuplot point types as (open, filled) pairs: the claim
# figures fill the marker where a difference is significant.
PALETTE = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d",
           "#666666", "#1f78b4", "#17becf", "#6a3d9a", "#e31a1c")
MARKERS = ((6, 7), (4, 5), (8, 9), (12, 13), (10, 11), (14, 15), (1, 1), (2, 2), (3, 3))
ENVELOPE_COLOR = "#9ecae1"          # the other stealing variants' range, shaded


def styles(keys, order):
    """{key: (colour, open point type, filled point type)} for the series of one panel:
    each key its stable pair (by its place in `order`), or the next one whose colour and
    marker no earlier series of the panel has."""
    out, colours, markers = {}, set(), set()
    for k in keys:
        i = order.index(k) if k in order else len(order)
        for step in range(len(PALETTE) * len(MARKERS)):
            c, m = PALETTE[(i + step) % len(PALETTE)], MARKERS[(i + step) % len(MARKERS)]
            if c not in colours and m[0] not in markers:
                break
        out[k] = (c,) + m
        colours.add(c)
        markers.add(m[0])
    return out


def split_variants(variants, plain):
    """(drawn, enveloped): the variants drawn as lines (the representative stealing
    variant and those in `plain`: the pools, the reference rows) and the other stealing
    variants, drawn as the range of their medians (only where there are two or more:
    a range of one is a line)."""
    stealing = [v for v in variants if v not in plain]
    rep = REPRESENTATIVE if REPRESENTATIVE in stealing else (stealing[0] if stealing else None)
    others = [v for v in stealing if v != rep]
    if len(others) < 2:
        return list(variants), []
    return [v for v in variants if v not in others], others


def envelope_rows(curves):
    """[(x, min, max)] of the medians of several curves [(x, median, ...)] at each x."""
    at = {}
    for rows in curves:
        for r in rows:
            if r[1] is not None and math.isfinite(r[1]):
                at.setdefault(r[0], []).append(r[1])
    return [(x, min(v), max(v)) for x, v in sorted(at.items())]


ENVELOPE_LABEL = "other stealing variants: range of medians"


def rows_of(block):
    """The rows of one data block, as lists of strings (no comment lines)."""
    return [line.split() for line in block.splitlines() if line and not line.startswith("#")]


def envelope_label(n):
    return f"other stealing variants ({n}): range of medians"


def log_tics(lo, hi):
    """Tick marks for a log axis from lo to hi: 1-1.5-2-3-5 per decade over small spans,
    1-2-5 over larger, powers of ten over huge ones."""
    span = hi / lo
    steps = (1, 1.5, 2, 3, 5) if span < 30 else (1, 2, 5) if span < 1e3 else (1,)
    tics = []
    for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1):
        tics += [m * 10.0 ** e for m in steps if lo <= m * 10.0 ** e <= hi]
    return tics


def y_axis(values, zero=True):
    """The y axis of a panel drawing `values` (medians, bar ends, bands): log where the
    positive values span more than LOG_SPAN (zero=True: never where one is 0, a bar
    chart's zero has no place on a log axis), else linear from 0; the range always holds
    every value, so nothing is clipped."""
    vals = [v for v in values if v is not None and math.isfinite(v)]
    pos = [v for v in vals if v > 0]
    if pos and max(pos) / min(pos) > LOG_SPAN and not (zero and len(pos) < len(vals)):
        lo, hi = min(pos) / 1.15, max(pos) * 1.15
        return ["set logscale y", f"set yrange [{lo:.4g}:{hi:.4g}]",
                "set ytics (" + ", ".join(f'"{t:g}" {t:g}' for t in log_tics(lo, hi)) + ")",
                "set mytics 1"]
    top = max(vals + [0.0]) * 1.1 or 1.0
    return ["unset logscale y", f"set yrange [0:{top:.4g}]", "set ytics autofreq"]


UNIT_SUFFIXES = {"us": "us", "ns": "ns", "ms": "ms", "s": "s", "pct": "%", "kb": "KiB"}


def param_words(key, value):
    """'grain_us', '10' -> 'grain 10 us'; 'late_pct', '50' -> 'late 50%'."""
    head, _, unit = key.rpartition("_")
    if head and unit in UNIT_SUFFIXES:
        sep = "" if unit == "pct" else " "
        return f"{head.replace('_', ' ')} {value}{sep}{UNIT_SUFFIXES[unit]}"
    return f"{key.replace('_', ' ')} {value}"


def bench_words(benchmark):
    """A benchmark name in words, for titles: 'dag/n:100/grain_us:10/real_time' ->
    'dag, n 100, grain 10 us'."""
    parts = display_name(benchmark).split("/")
    words = [parts[0]]
    for part in parts[1:]:
        key, sep, value = part.partition(":")
        words.append(param_words(key, value) if sep else part)
    return ", ".join(words)


def gp_str(text):
    """A gnuplot double-quoted string literal."""
    text = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + text + '"'


def gp_tic(text, at):
    """One entry of an explicit tic list: gnuplot reads its label as a format string
    (for the tic's value), so a literal % must be doubled ("delay 50%" is a bad format)."""
    return f"{gp_str(str(text).replace('%', '%%'))} {at}"


def gp_num(value):
    """A number in a gnuplot data file; NaN (gnuplot's undefined) when missing."""
    return "NaN" if value is None or not math.isfinite(value) else f"{value:.6g}"


def workers_label(w):
    return f"{w} worker" + ("" if w == 1 else "s")


def safe_name(text):
    """A file-name-safe form of a benchmark name: 'fib/n:30' -> 'fib_n-30'."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text.replace(":", "-")).strip("_") or "plot"


@dataclasses.dataclass
class Plot:
    """One figure: a gnuplot body (settings + plot commands reading `datafile`) and the
    text of its data file.  Rendered as <name>.svg and <name>.png from <name>.gp."""
    name: str
    kind: str              # time, speedup, imbalance, metg, why
    title: str
    body: list             # gnuplot lines
    data: str
    width: int = 900
    height: int = 520
    benchmark: str = ""
    workload: str = ""

    def script(self, terminals):
        """The .gp file: the body once per output format."""
        lines = [f"# {' '.join(self.title.split())}",
                 f"# Written by {PROG} plot; data in {self.name}.dat.  Rerun: gnuplot {self.name}.gp",
                 f"datafile = {gp_str(self.name + '.dat')}"]
        for ext, terminal in terminals:
            lines += ["", terminal.format(w=self.width, h=self.height),
                      f"set output {gp_str(self.name + '.' + ext)}"]
            lines += self.body
            lines.append("unset output")
        return "\n".join(lines) + "\n"


def common_settings(title, xlabel, ylabel):
    return ["reset", "set datafile missing NaN", f"set title {gp_str(title)}",
            f"set xlabel {gp_str(xlabel)}", f"set ylabel {gp_str(ylabel)}",
            "set grid", "set key outside below center horizontal maxrows 3"]


def lines_plot(name, kind, title, xlabel, ylabel, series, extra=(), envelope=None, order=(),
               y_values=(), **kw):
    """A figure with one line (with error bars) per series, and the shaded envelope of
    the series left out (drawn first, under the lines).
    series: [(label, dashed, [(x, y, low, high)])], one data block each, each series
    its colour and marker (styles() by its label's place in `order`);
    envelope: (label, [(x, min, max)]) or None; y_values: further values the y axis
    must hold (a band, the line at 1)."""
    blocks, commands, values = [], [], list(y_values)
    if envelope and envelope[1]:
        blocks.append(f"# {envelope[0]}: x min max\n"
                      + "".join(" ".join(gp_num(v) for v in row) + "\n" for row in envelope[1]))
        commands.append(f"datafile index 0 using 1:2:3 with filledcurves fc rgb "
                        f"{gp_str(ENVELOPE_COLOR)} fs solid 0.5 noborder title {gp_str(envelope[0])}")
        values += [v for row in envelope[1] for v in row[1:]]
    style = styles([label for label, _, _ in series], list(order))
    for label, dashed, rows in series:
        color, pt, _ = style[label]
        blocks.append(f"# {label}: x y low high\n"
                      + "".join(" ".join(gp_num(v) for v in row) + "\n" for row in rows))
        commands.append(f"datafile index {len(blocks) - 1} using 1:2:3:4 with yerrorlines lw 1.5 "
                        f"pt {pt} lc rgb {gp_str(color)}{' dt 2' if dashed else ''} "
                        f"title {gp_str(label)}")
        values += [v for row in rows for v in row[1:]]
    body = common_settings(title, xlabel, ylabel) + list(extra) + y_axis(values)
    body.append("plot " + ", \\\n     ".join(commands))
    return Plot(name=name, kind=kind, title=title, body=body, data="\n\n".join(blocks), **kw)


def histogram_block(categories, groups, values):
    """Histogram data: one row per category, (y low high) per group."""
    lines = ["# category " + " ".join(f"[{g}: y low high]" for g in groups)]
    for cat in categories:
        cells = []
        for g in groups:
            cells += [gp_num(v) for v in values.get((cat, g), (None, None, None))]
        lines.append(gp_str(display_name(cat)) + " " + " ".join(cells))
    return "\n".join(lines) + "\n"


def histogram_commands(index, groups, colors):
    """`plot` arguments drawing data block `index` as clustered bars with error bars."""
    commands = []
    for i, g in enumerate(groups):
        col = 2 + 3 * i
        xtic = ":xtic(1)" if i == 0 else ""
        commands.append(f"datafile index {index} using {col}:{col + 1}:{col + 2}{xtic}"
                        f" lc rgb {gp_str(colors[g])} title {gp_str(g)}")
    return "plot " + ", \\\n     ".join(commands)


HISTOGRAM_STYLE = ["set style data histogram", "set style histogram errorbars gap 1 lw 1",
                   "set style fill solid 0.8 border -1", "set boxwidth 0.9",
                   "set xtics rotate by 30 right",
                   "set offsets 0, 0, graph 0.1, 0", "set grid ytics",
                   "set key outside top center horizontal"]


def histogram_height(labels, plot_height=420):
    """Figure height leaving room for the vertical category labels below the bars."""
    return plot_height + 5 * max((len(display_name(label)) for label in labels), default=0)


def horizontal_line(y):
    return f"set arrow from graph 0, first {y} to graph 1, first {y} nohead dt 2 lc rgb \"#444444\""


def ratio_stats(base, other, metric="real_time_s"):
    """(median, low, high) of base/other: ratio of medians, and the extreme ratios of the
    repetitions' min/max (the spread of a speedup)."""
    b, o = base.summary(metric), other.summary(metric)
    if not b["n"] or not o["n"] or not o["median"] or not o["min"]:
        return None
    return (b["median"] / o["median"], b["min"] / o["max"], b["max"] / o["min"])


class PlotBuilder:
    """Builds every figure of a run (without rendering)."""

    def __init__(self, data):
        self.data = data
        self.table = data.index()
        self.variants = data.variants()
        self.reference = {r.variant: r.reference for r in data.results}
        # drawn as lines: the pools and the reference rows (and the representative)
        self.plain = set(BASELINES) | {v for v, ref in self.reference.items() if ref}
        self.workers = data.workers()
        self.reps = data.plan.get("repetitions")

    def build(self):
        plots = []
        # The speedups over the baselines per benchmark are the heat maps of ClaimPlots
        # (one readable figure per baseline instead of a bar chart of 15 x 12 bars).
        for make in (self.time_plots, self.imbalance_plots, self.metg_plots, self.why_plots):
            plots += make()
        names = set()
        for p in plots:                      # keep file names unique
            base, n = p.name, 2
            while p.name in names:
                p.name, n = f"{base}_{n}", n + 1
            names.add(p.name)
        return plots

    def baselines(self):
        return [b for b in BASELINES if b in self.variants]

    def _workers_axis(self):
        extra = [f"set xtics ({', '.join(str(w) for w in self.workers)})"]
        if self.workers and max(self.workers) > 8:
            extra.append("set logscale x 2")
        if len(self.workers) == 1:
            w = self.workers[0]
            extra.append(f"set xrange [{w - 1}:{w + 1}]")
        elif self.workers and max(self.workers) <= 8:
            extra.append(f"set xrange [{min(self.workers) - 0.2}:{max(self.workers) + 0.2}]")
        return extra

    def time_plots(self):
        """Wall time per iteration vs workers, one line per variant, for each benchmark."""
        plots = []
        reps = f", min-max of {self.reps} repetitions" if self.reps else ", min-max"
        for bench, cells in sorted(self.table.items()):
            top = max(r.median() for r in cells.values())
            unit, scale = time_unit_for(top)
            curves = {}
            for v in self.variants:
                rows = []
                for w in self.workers:
                    r = cells.get((v, w))
                    if r:
                        s = r.summary()
                        rows.append((w, s["median"] / scale, s["min"] / scale, s["max"] / scale))
                if rows:
                    curves[v] = rows
            series, envelope = self._series(curves)
            plots.append(lines_plot(
                f"time_{safe_name(display_name(bench))}", "time",
                f"Which variant is fastest, and does it scale? (wall time, median{reps})\n"
                f"{bench_words(bench)}",
                "workers", f"time per iteration ({unit})", series,
                extra=self._workers_axis(), envelope=envelope, order=self.variants,
                benchmark=bench, workload=workload_of(bench)))
        return plots

    def _series(self, curves):
        """(series, envelope) for lines_plot from {variant: rows}: the representative,
        the pools and the reference rows as lines, the other stealing variants as the
        range of their medians."""
        drawn, others = split_variants(list(curves), self.plain)
        series = [(v, self.reference.get(v), curves[v]) for v in drawn]
        envelope = ((envelope_label(len(others)), envelope_rows([curves[v] for v in others]))
                    if others else None)
        return series, envelope

    def imbalance_plots(self):
        """Task Bench's imbalance sweep: speedup over each baseline vs the imbalance factor,
        one figure per worker count (and per setting of the other parameters), with the
        30-50% band of the claim shaded."""
        groups = {}
        for bench in self.table:
            value = params_of(bench).get(CLAIM_PARAM)
            try:
                x = float(value)
            except (TypeError, ValueError):
                continue
            rest = display_name(re.sub(rf"/{CLAIM_PARAM}:[^/]*", "", bench))
            groups.setdefault(rest, []).append((x, bench))
        plots = []
        lo, hi = CLAIM_BAND
        for base in self.baselines():
            for rest, members in sorted(groups.items()):
                if len({x for x, _ in members}) < 2:
                    continue              # not a sweep: its speedups are in speedup_*
                members.sort()
                for w in self.workers:
                    curves = {}
                    for v in self.variants:
                        if v == base:
                            continue
                        rows = []
                        for x, bench in members:
                            cells = self.table[bench]
                            if (base, w) in cells and (v, w) in cells:
                                rs = ratio_stats(cells[(base, w)], cells[(v, w)])
                                if rs:
                                    rows.append((x,) + rs)
                        if rows:
                            curves[v] = rows
                    if not any(len(rows) > 1 for rows in curves.values()):
                        continue          # no sweep left (e.g. the baseline failed)
                    series, envelope = self._series(curves)
                    title = (f"Does the gain over {base} grow with imbalance? "
                             f"{workers_label(w)}\n{bench_words(rest)}")
                    extra = [f"set object 1 rectangle from graph 0, first {lo} to graph 1, first {hi}"
                             " behind fillcolor rgb \"#d9f0d3\" fillstyle solid 1.0 noborder",
                             f"set label 1 \"30-50% claim\" at graph 0.02, first {(lo + hi) / 2}",
                             horizontal_line(1)]
                    plots.append(lines_plot(
                        f"imbalance_vs_{base}_w{w}_{safe_name(rest)}", "imbalance", title,
                        "imbalance factor", f"{base} time / variant time", series, extra=extra,
                        envelope=envelope, order=self.variants, y_values=(1, lo, hi),
                        benchmark=rest, workload=workload_of(rest)))
        return plots

    def _per_variant_histogram(self, cells, metric):
        """Histogram data of one metric: categories = variants, groups = worker counts."""
        values = {}
        for (v, w), r in cells.items():
            s = r.summary(metric)
            if s["n"]:
                values[(v, workers_label(w))] = (s["median"], s["min"], s["max"])
        cats = [v for v in self.variants if any(k[0] == v for k in values)]
        return cats, values

    def _worker_groups(self):
        groups = [workers_label(w) for w in self.workers]
        colors = {g: PALETTE[i % len(PALETTE)] for i, g in enumerate(groups)}
        return groups, colors

    def metg_plots(self):
        """METG(50%) per variant (benchmarks reporting metg_us), lower is better."""
        plots = []
        groups, colors = self._worker_groups()
        for bench, cells in sorted(self.table.items()):
            cats, values = self._per_variant_histogram(cells, "metg_us")
            if not values:
                continue
            label = bench_words(bench)
            body = (common_settings("Which variant runs the finest tasks efficiently? "
                                    f"METG(50%), lower is better\n{label}", "",
                                    "METG (us)") + HISTOGRAM_STYLE
                    + y_axis([x for v in values.values() for x in v])
                    + [histogram_commands(0, groups, colors)])
            plots.append(Plot(name=f"metg_{safe_name(display_name(bench))}", kind="metg",
                              title=f"{label}: METG per variant", body=body,
                              data=histogram_block(cats, groups, values),
                              height=histogram_height(cats),
                              benchmark=bench, workload=workload_of(bench)))
        return plots

    WHY_PANELS = (("steals", "steals"), ("parks", "parks"),
                  (CPU_PER_WALL, "CPU time / wall time (cores busy)"))

    def why_plots(self):
        """Why a variant wins: steals, parks and CPU time per wall time, per variant."""
        plots = []
        groups, colors = self._worker_groups()
        for bench, cells in sorted(self.table.items()):
            panels = []
            for metric, panel_title in self.WHY_PANELS:
                cats, values = self._per_variant_histogram(cells, metric)
                if values:
                    panels.append((metric, panel_title, cats, values))
            if not panels:
                continue
            label = bench_words(bench)
            body = ["reset", "set datafile missing NaN"] + HISTOGRAM_STYLE + ["set tmargin 5"]
            body.append(f"set multiplot layout 1,{len(panels)} "
                        f"title {gp_str('Why does a variant win? steals, parks, CPU per wall (median, min-max)' + chr(10) + label)}")
            blocks = []
            for i, (metric, panel_title, cats, values) in enumerate(panels):
                blocks.append(histogram_block(cats, groups, values))
                body += [f"set title {gp_str(panel_title)}"] + (["unset key"] if i else [])
                body += y_axis([x for v in values.values() for x in v])
                body.append(histogram_commands(i, groups, colors))
            body.append("unset multiplot")
            plots.append(Plot(name=f"why_{safe_name(display_name(bench))}", kind="why",
                              title=f"{label}: steals, parks, CPU per wall", body=body,
                              data="\n\n".join(blocks), width=max(900, 480 * len(panels)),
                              height=histogram_height(self.variants, 460),
                              benchmark=bench, workload=workload_of(bench)))
        return plots


# --- the claim as curves, and the one-look overview ------------------------------------

def significant(base, other, alpha=0.05):
    """True when the two results' wall times differ at alpha (two-sided Mann-Whitney U)."""
    x, y = base.values("real_time_s"), other.values("real_time_s")
    if len(x) < 2 or len(y) < 2:
        return False
    return mann_whitney_u(x, y)[1] < alpha


def geomean(values):
    values = [v for v in values if v and v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def scenario_label(bench):
    """The claim scenario's parameters, short: 'imbalance 2, grain_us 10, tasks 20000, ...'
    (the report's tables; figure titles use bench_words)."""
    params = params_of(bench)
    return ", ".join(f"{k} {v}" for k, v in params.items()) or display_name(bench)


def short_labels(benchmarks):
    """{benchmark: 'workload k'} numbering each workload's benchmarks, and the key lines
    'workload k = full name' (only where a workload has more than one benchmark)."""
    per_workload, labels, key = {}, {}, []
    for b in benchmarks:
        per_workload.setdefault(workload_of(b), []).append(b)
    for w, members in per_workload.items():
        for i, b in enumerate(members, 1):
            labels[b] = w if len(members) == 1 else f"{w} {i}"
            if len(members) > 1:
                key.append(f"{labels[b]} = {display_name(b)[len(w) + 1:]}")
    return labels, key


class ClaimPlots:
    """The 30-50% claim drawn as curves: for each imbalance scenario (and a summary over
    them) the speedup of every variant over each baseline (BASELINES and the reference
    rows) against the worker count, with the 1.3-1.5x band, error bars from the
    repetitions, a filled marker where the difference is significant (Mann-Whitney U at
    alpha) and, where the run records the work (`work_s`, simulated runs), Brent's bound
    baseline / max(work / P, span) (`span_s`; the work term alone where it is missing).
    The representative variant is drawn, the other stealing variants as the range of
    their medians.  A simulated run given beside a measured one gets panels of its own,
    titled SIMULATED and its model, its lines dashed.  Plus the heat map of variant x benchmark
    speedup over each baseline at the largest worker count."""

    def __init__(self, data, sim=None, alpha=0.05, against=None):
        self.runs = [(data, "")]
        if sim is not None:
            model = sim.meta.get("model") or "model"
            self.runs.append((sim, f"simulated ({model})"))
        elif data.meta.get("simulated"):
            self.runs = [(data, f"simulated ({data.meta.get('model') or 'model'})")]
        self.data, self.alpha = data, alpha
        self.tables = [(d.index(), note) for d, note in self.runs]
        variants = []
        for d, _ in self.runs:
            variants += [v for v in d.variants() if v not in variants]
        refs = {r.variant for d, _ in self.runs for r in d.results if r.reference}
        self.baselines = [b for b in BASELINES if b in variants] + sorted(refs)
        # the heat maps: over each baseline, and over the variant the user compares against
        self.heat_bases = self.baselines + ([against] if against and against in variants
                                            and against not in self.baselines else [])
        self.lines = [v for v in variants if v not in self.baselines]
        self.workers = sorted({w for d, _ in self.runs for w in d.workers()})

    def scenarios(self):
        benches = set()
        for table, _ in self.tables:
            benches |= {b for b in table if workload_of(b) == CLAIM_WORKLOAD}
        return sorted(benches, key=lambda b: [(k, float(v) if re.fullmatch(r"[\d.]+", v) else 0)
                                              for k, v in params_of(b).items()])

    def curve(self, table, bench, base, v, sig=True):
        """[(workers, speedup, low, high, significant, work_bound)] of v over base."""
        rows = []
        cells = table.get(bench, {})
        for w in self.workers:
            if (base, w) not in cells or (v, w) not in cells:
                continue
            rs = ratio_stats(cells[(base, w)], cells[(v, w)])
            if not rs:
                continue
            lb = brent_time(cells[(v, w)].summary("work_s")["median"],
                            cells[(v, w)].summary("span_s")["median"], w)
            bound = cells[(base, w)].median() / lb if lb else None
            rows.append((w,) + rs + (1 if sig and significant(cells[(base, w)], cells[(v, w)],
                                                                 self.alpha) else 0, bound))
        return rows

    def panel_body(self, series, envelope, bound):
        """gnuplot lines of one panel: series [(label, dashed, index)] of the variants
        drawn as lines, envelope (label, index) or None, bound the work bound's index or
        None; the y axis from the values the panel draws (y_axis: log where they span
        more than LOG_SPAN; nothing clipped)."""
        lo, hi = CLAIM_BAND
        body = [f"set object 1 rectangle from graph 0, first {lo} to graph 1, first {hi}"
                " behind fillcolor rgb \"#d9f0d3\" fillstyle solid 1.0 noborder",
                horizontal_line(1)]
        blocks = self._blocks
        values = [1.0, lo, hi]
        commands = []
        if envelope:
            label, index = envelope
            commands.append(f"datafile index {index} using 1:2:3 with filledcurves fc rgb "
                            f"{gp_str(ENVELOPE_COLOR)} fs solid 0.5 noborder title {gp_str(label)}")
            values += [float(v) for r in rows_of(blocks[index]) for v in r[1:]]
        style = styles([label for label, _, _ in series], self.lines)
        for i, (label, dashed, index) in enumerate(series):
            color, pt, filled = style[label]
            line = f"lc rgb {gp_str(color)}{' dt 2' if dashed else ''}"
            # each line a little to the side (x times 1 +- 2.5% steps), so that lines and
            # error bars that coincide stay visible
            x = f"($1*{1 + 0.025 * (i - (len(series) - 1) / 2):.4f})"
            commands.append(f"datafile index {index} using {x}:2:3:4 with yerrorlines lw 1.5 "
                            f"pt {pt} ps 0.9 {line} title {gp_str(label)}")
            commands.append(f"datafile index {index} using {x}:($5 > 0 ? $2 : NaN) with points "
                            f"pt {filled} ps 1.1 lc rgb {gp_str(color)} notitle")
            values += [float(v) for r in rows_of(blocks[index]) for v in r[1:4] + r[5:]]
        if bound is not None:
            commands.append(f"datafile index {bound} using 1:2 with lines lw 1.5 dt 3 "
                            "lc rgb \"#000000\" title \"Brent bound\"")
            values += [float(r[1]) for r in rows_of(blocks[bound])]
        return body + y_axis(values, zero=False) + ["plot " + ", \\\n     ".join(commands)]

    def figure(self, name, title, curves_of, caption_bits):
        """One figure: a panel per baseline and run (the measured run's panels first,
        then the simulated run's, titled SIMULATED).  curves_of(table, base, v) -> rows."""
        blocks, panels, any_bound = [], [], False
        self._blocks = blocks
        seen_workers = set()
        envelope_sizes = set()

        def block(text, rows):
            blocks.append(text + "".join(" ".join(gp_num(x) for x in r) + "\n" for r in rows))
            return len(blocks) - 1

        for (table, note) in self.tables:
            for base in self.baselines:
                curves, bound_rows = {}, {}
                for v in self.lines:
                    rows = curves_of(table, base, v)
                    if rows:
                        curves[v] = rows
                drawn, others = split_variants(list(curves), set())
                series = []
                for v in drawn:
                    rows = curves[v]
                    series.append((v, bool(note), block(
                        f"# {v} over {base} {note}: workers speedup low high significant "
                        "work_bound\n", rows)))
                    seen_workers.update(r[0] for r in rows)
                for v in curves:
                    for r in curves[v]:
                        if r[5]:
                            bound_rows.setdefault(r[0], []).append(r[5])
                envelope = None
                if others:
                    envelope_sizes.add(len(others))
                    envelope = (ENVELOPE_LABEL, block(
                        f"# other stealing variants over {base} {note} ({', '.join(others)}): "
                        "workers min max of their medians\n",
                        envelope_rows([curves[v] for v in others])))
                    seen_workers.update(r[0] for v in others for r in curves[v])
                bound_index = None
                if bound_rows:
                    any_bound = True
                    bound_index = block(f"# work bound {note}: workers bound\n".replace(" :", ":"), [
                        (w, min(bs)) for w, bs in sorted(bound_rows.items())])
                if series:
                    where = f"SIMULATED ({note[len('simulated ('):-1]}): " if note else ""
                    panels.append((f"{where}over {base}", series, envelope, bound_index))
        if not panels:
            return None
        cells = len(panels) + 1                 # + the panel that holds the key
        cols = cells if cells <= 4 else (3 if cells <= 9 else 4)
        rows = (len(panels) + 1 + cols - 1) // cols
        caption = list(caption_bits)
        if envelope_sizes:
            caption.append(f"shaded: the range of the other {'/'.join(map(str, sorted(envelope_sizes)))} "
                           f"stealing variants' medians, {REPRESENTATIVE} drawn")
        caption.append("Brent bound: baseline / max(work/P, span), span = the workload's "
                       "critical path (work/P alone where a run lacks span_s)" if any_bound else
                       "no Brent bound: this run records no work_s (only simulated runs do)")
        height = max(560, 380 * rows + 120)
        ws = sorted(seen_workers)               # the worker counts this figure has
        body = ["reset", "set datafile missing NaN", "set grid",
                f"set xtics ({', '.join(str(w) for w in ws)})"]
        if ws[-1] > 8:
            body += ["set logscale x 2", f"set xrange [{ws[0] * 0.8}:{ws[-1] * 1.25}]"]
        else:
            body.append(f"set xrange [{ws[0] - 0.3}:{ws[-1] + 0.3}]")
        # the caption in lines that fit the figure's width (about 9 pixels a character)
        text, line = [title], ""
        for bit in caption:
            if line and len(line) + len(bit) + 2 > 400 * cols // 10:
                text.append(line + ";")
                line = ""
            line = f"{line}; {bit}" if line else bit
        text.append(line)
        body += [f"set multiplot layout {rows},{cols} title {gp_str(chr(10).join(text))}"
                 f" font \",13\" margins 0.05,0.98,{75 / height:.3f},{1 - (100 + 20 * len(text)) / height:.3f}"
                 f" spacing 0.06,{110 / height:.3f}",
                 "set xlabel \"workers\"", "set ylabel \"speedup (x)\""]
        for panel_title, series, envelope, bound_index in panels:
            body.append(f"set title {gp_str(panel_title)}")
            body.append("unset key")
            body += self.panel_body(series, envelope, bound_index)
        # the key: a panel of its own, every series once (with an undefined point)
        keyed, entries = set(), []
        style = styles([v for v in self.lines
                        if any(label == v for _, series, _, _ in panels for label, _, _ in series)],
                       self.lines)
        for v, (color, pt, _) in style.items():
            keyed.add(v)
            entries.append(f"NaN with linespoints lw 2 pt {pt} lc rgb {gp_str(color)} "
                           f"title {gp_str(v)}")
        for _, series, envelope, bound_index in panels:
            if envelope and "envelope" not in keyed:
                keyed.add("envelope")
                entries.append(f"NaN with boxes fc rgb {gp_str(ENVELOPE_COLOR)} fs solid 0.5 "
                               f"noborder title {gp_str(ENVELOPE_LABEL)}")
            if bound_index is not None and "bound" not in keyed:
                keyed.add("bound")
                entries.append("NaN with lines lw 1.5 dt 3 lc rgb \"#000000\" "
                               "title \"Brent bound\"")
        if any(" 1 " in f" {line} " for b in blocks for line in b.splitlines()[1:]
               if len(line.split()) == 6 and line.split()[4] == "1"):
            entries.append("NaN with points pt 7 ps 1.3 lc rgb \"#444444\" title "
                           "\"filled: significant\"")
        body += ["unset title", "unset xlabel", "unset ylabel", "unset border", "unset tics",
                 "unset grid", "unset object 1", "unset arrow", "unset logscale x",
                 "unset logscale y", "set xrange [0:1]", "set yrange [0:1]",
                 f"set key center center vertical maxrows {len(entries)}"
                 " font \",10\"",
                 "plot " + ", \\\n     ".join(entries)]
        body.append("unset multiplot")
        return Plot(name=name, kind="claim", title=title, body=body, data="\n\n".join(blocks),
                    width=400 * cols, height=height, workload=CLAIM_WORKLOAD)

    def build(self):
        plots = []
        scenarios = self.scenarios()
        reps = self.data.plan.get("repetitions")
        bars = f"bars: min-max of {reps} repetitions" if reps else "bars: min-max"
        marks = f"filled: significant (Mann-Whitney, alpha {self.alpha:g})"
        for i, bench in enumerate(scenarios, 1):
            p = self.figure(f"claim_{i}_{safe_name(display_name(bench))}",
                            f"Does a variant beat the pools by 30-50%? "
                            f"{bench_words(bench).split(', ', 1)[-1]}",
                            lambda t, base, v, b=bench: self.curve(t, b, base, v),
                            ["green band: 1.3-1.5x", bars, marks])
            if p:
                p.benchmark = bench
                plots.append(p)
        imbalanced = [b for b in scenarios if params_of(b).get(CLAIM_PARAM) not in ("0", None)]

        def summary(table, base, v):
            rows = []
            per = [self.curve(table, b, base, v, sig=False) for b in imbalanced]
            for w in self.workers:
                at = [r for rows_b in per for r in rows_b if r[0] == w]
                if len(at) == len([b for b in imbalanced if b in table]) and at:
                    rows.append((w, geomean([r[1] for r in at]), geomean([r[2] for r in at]),
                                 geomean([r[3] for r in at]), 0, None))
            return rows

        if len(imbalanced) > 1:
            p = self.figure("claim_summary",
                            f"Does a variant beat the pools by 30-50% under imbalance? "
                            f"geometric mean over {len(imbalanced)} scenarios",
                            summary, ["green band: 1.3-1.5x", "bars: geometric means of the "
                                      "min-max ratios", "no significance marks (a mean)"])
            if p:
                plots.append(p)
        plots += self.heatmaps()
        return plots

    def heatmaps(self):
        """Variant x benchmark speedup over each baseline (and over --against) at the
        largest worker count of the measured run, as a colour map: log2 scale centred
        at 1 (blue slower, red faster), the range set by the data, the value written in
        each cell, '*' where significant after Holm's correction over the map, and
        missing cells hatched grey with 'n/a'.  Rows are labelled by their parameters
        (short) and grouped by workload."""
        from .compare import correct, diff_of
        table = self.tables[0][0]
        workers = max(self.data.workers()) if self.data.workers() else None
        plots = []
        benches = sorted(table)
        for base in self.heat_bases:
            cols = [v for v in self.data.variants() if v != base]
            rows = [b for b in benches if (base, workers) in table[b]]
            if not rows or not cols:
                continue
            diffs = {}
            for b in rows:
                for v in cols:
                    d = diff_of("heat", table[b][(base, workers)], table[b].get((v, workers)))
                    if d:
                        diffs[(b, v)] = d
            correct(list(diffs.values()))
            span = max([abs(math.log2(d.speedup)) for d in diffs.values()] + [1.0])
            span = min(8.0, math.ceil(span))           # 2^8 = 256x: fib reaches 216x
            lines, labels_gp, missing = [], [], []
            for y, b in enumerate(rows):
                cells = []
                for x, v in enumerate(cols):
                    d = diffs.get((b, v))
                    cells.append(gp_num(math.log2(d.speedup) if d else None))
                    if d:
                        star = "*" if d.significant(self.alpha) else ""
                        s = d.speedup
                        text = f"{s:.2f}{star}" if s < 10 else f"{s:.0f}{star}"
                        labels_gp.append(f"set label {len(labels_gp) + 1} {gp_str(text)} at {x},{y} "
                                         "center font \",9\" front")
                    else:
                        missing.append((x, y))
                lines.append(" ".join(cells))
            for i, (x, y) in enumerate(missing):
                labels_gp.append(f"set object {i + 10} rectangle from {x - 0.5},{y - 0.5} to "
                                 f"{x + 0.5},{y + 0.5} fc rgb \"#bdbdbd\" fs pattern 4 "
                                 "border lc rgb \"#bdbdbd\" front")
                labels_gp.append(f"set label {len(labels_gp) + 1} \"n/a\" at {x},{y} center "
                                 "font \",8\" front")
            title = (f"Which variant is faster than {base}, on which benchmark? speedup at "
                     f"{workers_label(workers)} (* significant after Holm's correction, "
                     f"alpha {self.alpha:g})")
            height = 170 + 24 * len(rows)
            ylabels = [row_label(b) for b in rows]
            label_px = 40 + 6.5 * max(len(t) for t in ylabels)
            width = int(label_px + 80 * len(cols) + 230)
            tics = ", ".join(f"{gp_str(tick_label(2.0 ** k))} {k}"
                             for k in range(-int(span), int(span) + 1))
            body = ["reset", "set datafile missing NaN", f"set title {gp_str(title)}",
                    "unset key", "set view map", "set tics scale 0", "set xtics rotate by 30 right",
                    f"set xtics ({', '.join(gp_tic(v, i) for i, v in enumerate(cols))})",
                    f"set ytics ({', '.join(gp_tic(t, i) for i, t in enumerate(ylabels))})"
                    " font \",9\"",
                    f"set xrange [-0.5:{len(cols) - 0.5}]", f"set yrange [{len(rows) - 0.5}:-0.5]",
                    f"set cbrange [{-span}:{span}]", f"set cbtics ({tics})",
                    "set cblabel \"speedup over " + base + " (log scale; grey: not measured)\"",
                    heat_palette(span),
                    f"set lmargin at screen {label_px / width:.4f}",
                    f"set rmargin at screen {1 - 200 / width:.4f}", "set bmargin 7"]
            body += labels_gp
            body.append("plot datafile matrix using 1:2:3 with image")
            plots.append(Plot(name=f"heatmap_vs_{base}", kind="heatmap", title=title, body=body,
                              data="\n".join(lines) + "\n", width=width, height=height))
        return plots


def heat_palette(span):
    """The heat map's colours over log2 speedups -span..span: more shades near 1 than
    far from it, so that 1.4x shows beside 200x."""
    stops = [(-span, "#053061"), (-2, "#4393c3"), (-0.5, "#d1e5f0"), (0, "#f7f7f7"),
             (0.5, "#fddbc7"), (2, "#d6604d"), (span, "#67001f")]
    stops = [(x, c) for x, c in stops if abs(x) < span or abs(x) == span]
    stops = [stops[0]] + [st for st in stops[1:-1] if abs(st[0]) < span] + [stops[-1]]
    return "set palette defined (" + ", ".join(f"{x:g} {gp_str(c)}" for x, c in stops) + ")"


def tick_label(x):
    """2.0 -> '2', 0.25 -> '1/4', 256 -> '256'."""
    return f"{x:g}" if x >= 1 else f"1/{1 / x:g}"


def row_label(benchmark):
    """A heat map row: 'workload: k v, k v' with the parameters, short."""
    name = display_name(benchmark)
    wl = workload_of(name)
    params = params_of(name)
    text = ", ".join(param_words(k, v) for k, v in params.items())
    text = text if len(text) <= 72 else text[:71] + "~"
    return f"{wl}: {text}" if text else wl


def simulated_speedup_plots(med, model):
    """A simulated run's figures (plots/README.md, sim_speedup_<benchmark>): per benchmark
    with at least two worker counts, the SIMULATED speedup over the same variant's
    1-worker time against the worker count, drawn by the rules of the measured figures
    (the representative variant and the pools as lines, the other stealing variants as
    the shaded range of their medians), with the representative's bound from Brent's
    lower bound on the time, T1 / max(work / P, span) (dashed; work = the run's charged
    task bodies, span = the workload's critical path, or the work term alone where the
    workload does not state its span).  Titles say SIMULATED and the model.
    med: rundata.medians() of the run; model: the machine model's name."""
    out = []
    for b in sorted({k[2] for k in med}):
        variants = sorted({k[0] for k in med if k[2] == b and (k[0], 1, b) in med})
        workers = sorted({k[1] for k in med if k[2] == b})
        if len(workers) < 2 or not variants:
            continue
        what = ("Brent bound" if all("span_s" in r for k, r in med.items() if k[2] == b)
                else "work bound")
        curves, bounds = {}, {}
        for v in variants:
            t1 = med[(v, 1, b)]["time_s"]
            rows, bound = [], []
            for n in workers:
                r = med.get((v, n, b))
                if not r:
                    continue
                s = t1 / r["time_s"]
                rows.append((n, s, s, s))
                lb = brent_time(r.get("work_s"), r.get("span_s"), n)
                bound.append((n, t1 / lb if lb else float("nan")))
            curves[v], bounds[v] = rows, bound
        drawn, others = split_variants(variants, set(BASELINES))
        rep = next((v for v in drawn if v not in BASELINES), None)
        series = [(v, False, curves[v]) for v in drawn]
        envelope = ((envelope_label(len(others)), envelope_rows([curves[v] for v in others]))
                    if others else None)
        bound = [r for r in bounds.get(rep, []) if r[1] == r[1]]
        name = "sim_speedup_" + re.sub(r"[^A-Za-z0-9_.-]+", "_", display_name(b))
        title = (f"SIMULATED on model {model}: {bench_words(b)}\n"
                 "speedup over the same variant at 1 worker"
                 + (f"; dashed: {rep}'s {what}, T1 / "
                    + ("max(work/P, span)" if what == "Brent bound" else "(work/P)")
                    if bound else ""))
        p = lines_plot(name, "sim_speedup", title, "workers", "speedup (simulated)", series,
                       extra=["set logscale x 2",
                              f"set xtics ({', '.join(str(n) for n in workers)})",
                              f"set xrange [{workers[0] * 0.85:g}:{workers[-1] * 1.15:g}]"],
                       envelope=envelope, order=variants,
                       y_values=[r[1] for r in bound], width=900, height=640,
                       benchmark=b, workload=b.split("/", 1)[0])
        if bound:
            index = len(p.data.split("\n\n\n"))
            p.data += ("\n\n# " + f"{rep} {what}: workers bound\n"
                       + "".join(f"{n} {gp_num(x)}\n" for n, x in bound))
            p.body[-1] += (f", \\\n     datafile index {index} using 1:2 with lines lw 1.5 dt 2 "
                           f"lc rgb \"#000000\" title \"{rep}: {what}\"")
        out.append(p)
    return out
