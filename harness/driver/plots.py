"""The figures of a run, as gnuplot scripts and data (not rendered here): the figure rules
and helpers every figure module shares, time per benchmark, the imbalance sweep against
the claim's band, METG, why a variant wins (steals, parks, CPU per wall).  A simulated
run's speedups are simfigs.py's, the claim figures and the heat maps claimfigs.py's, the
article's article.py's; every ratio drawn with a bar is a compare.Comparison
(families.py)."""

import dataclasses
import math
import re

from .config import CLAIM_BAND, CLAIM_PARAM, PROG, REPRESENTATIVE
from .fmt import time_unit_for
from .gbjson import display_name, params_of, workload_of
from . import families
from .compare import BRACKET
from .families import imbalance_family
from .rundata import CPU_PER_WALL


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
    """A gnuplot double-quoted string literal (a backtick, which gnuplot would run as a
    shell command, becomes a quote)."""
    text = str(text).replace("`", "'")
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
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


class PlotBuilder:
    """Builds every figure of a run (without rendering)."""

    def __init__(self, data):
        self.data = data
        self.table = data.index()
        self.variants = data.variants()
        self.reference = {r.variant: r.reference for r in data.results}
        # drawn as lines: the pools and the reference rows (and the representative)
        self.pools = data.roles().pools(self.variants)
        self.plain = set(self.pools) | {v for v, ref in self.reference.items() if ref}
        self.workers = data.workers()
        self.reps = data.plan.get("repetitions")
        self.comparisons = families.of(data)

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
        return list(self.pools)

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
                            c = self.comparisons.get(imbalance_family(base), bench, base, v, w)
                            if c:
                                rows.append((x, c.ratio, c.low, c.high))
                        if rows:
                            curves[v] = rows
                    if not any(len(rows) > 1 for rows in curves.values()):
                        continue          # no sweep left (e.g. the baseline failed)
                    series, envelope = self._series(curves)
                    title = (f"Does the gain over {base} grow with imbalance? "
                             f"{workers_label(w)}\n{bench_words(rest)}; bars: {BRACKET}")
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
