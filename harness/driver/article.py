"""The work-stealing article's experiment (workloads/article.c) read back from a run: the
ideal curves, the measured and simulated points, the claim figure and the answers.

The experiment (seed 003, section 5): every task does the same work, and the imbalance
comes from some submitters starting late.  With P workers, W the total work and a
fraction f of the submitters late by D = d x W/P, a pool whose workers keep their own
queues (`affinity`) takes D + W/P, a perfect balancer max(W/P, D + f x W/P): the ideal
speedup (1 + d) / max(1, d + f) peaks at d = 1 - f, where it is 2 - f: 1.5x for f = 1/2
(f is the late share of the P submitters as counted, late_count / P).  Times are the
workload's `window_s` (from every submitter in place to the last task done), which is
what the ideal predicts; a run without it falls back on the wall time."""

import dataclasses
import math

from . import compare as cmp
from . import families
from .config import ARTICLE_WORKLOAD, REPRESENTATIVE
from .gbjson import params_of
from .plots import LOG_SPAN, Plot, gp_num, gp_str, workers_label, y_axis
from .rundata import band_description, load_bands
from .validate import errors_beside


METRIC = families.ARTICLE_METRIC
# the other pools' (colour, gnuplot point type), in roles.POOL_KINDS order
POOL_MARKS = (("#d95f02", 9), ("#7570b3", 13), ("#1b9e77", 5))


def late_count(late_fraction, workers):
    """How many of `workers` submitters start late: the nearest count, ties down (as
    wl_article_late_count in workloads/wl_defs.h)."""
    x = late_fraction * workers
    n = math.floor(x)
    return n + 1 if x - n > 0.5 else n


def ideal_times(d, late_fraction, workers):
    """(pool, balancer): the two ideal times in units of W/P."""
    k = late_count(late_fraction, workers)
    if k == 0 or d <= 0:
        return 1.0, 1.0
    f = k / workers
    return 1.0 + d, max(1.0, d + f)


def ideal_speedup(d, late_fraction, workers):
    """The perfect balancer's speedup over the per-thread-queue pool."""
    pool, balancer = ideal_times(d, late_fraction, workers)
    return pool / balancer


@dataclasses.dataclass(frozen=True)
class Setting:
    """Everything of an article benchmark but its delay d."""
    late_pct: int
    grain_us: int
    tasks: int
    foreign: bool

    @property
    def late_fraction(self):
        return self.late_pct / 100.0

    def label(self):
        return (f"{'one pthread' if self.foreign else 'one bthread'} submitter per worker, "
                f"{self.late_pct}% of them late; {self.tasks} tasks of {self.grain_us} us")

    def key(self):
        """Sort order: bthread submitters first, half late first, coarse grain first."""
        return (self.foreign, abs(self.late_pct - 50), self.late_pct, -self.grain_us, self.tasks)


def setting_of(benchmark):
    """(Setting, d) of an article benchmark name, or None."""
    p = params_of(benchmark)
    try:
        return (Setting(int(p["late_pct"]), int(p["grain_us"]), int(p["tasks"]),
                        p["foreign"] != "0"), int(p["delay_pct"]) / 100.0)
    except (KeyError, ValueError):
        return None


def settings(table):
    """{Setting: {d: benchmark}} of a run's index, sorted by Setting.key."""
    out = {}
    for bench in table:
        if bench.split("/", 1)[0] != ARTICLE_WORKLOAD:
            continue
        sd = setting_of(bench)
        if sd:
            out.setdefault(sd[0], {})[sd[1]] = bench
    return dict(sorted(out.items(), key=lambda kv: kv[0].key()))



def shared_metric(a, b):
    """What a ratio of a and b is of: the window where both report it, else wall time."""
    return families.metric_of(a, b)


class Panel:
    """One run (measured or simulated) at one worker count, for one Setting."""

    def __init__(self, data, setting, benches, workers, label, simulated, roles=None):
        self.data, self.setting, self.benches = data, setting, benches
        self.workers, self.label, self.simulated = workers, label, simulated
        self.table = data.index()
        self._bands = {}  # metric -> load_bands(...), read when first asked
        refs = {r.variant for r in data.results if r.reference}
        self.roles = roles or data.roles()
        self.pool = self.roles.article_pool(data.variants())    # the article's own pool
        self.stealing = [v for v in data.variants() if not self.roles.is_pool(v) and v not in refs]

    def cell(self, variant, d):
        return self.table.get(self.benches.get(d), {}).get((variant, self.workers))

    def comparison(self, variant, d, base=None):
        """The compare.Comparison of variant over base at d: a measured run's from its
        `article` family (families.py), a SIMULATED one's from its medians, its band and
        the simulator's validation error for the article workload; None when a side is
        missing.  base None: the article's pool."""
        base = base or self.pool
        b, v = self.cell(base, d), self.cell(variant, d)
        if b is None or v is None:
            return None
        bench = self.benches.get(d)
        if not self.simulated:
            return families.of(self.data).get("article", bench, base, variant, self.workers)
        metric = shared_metric(b, v)
        ratio = b.summary(metric)["median"] / v.summary(metric)["median"]
        return cmp.simulated("SIMULATED article", ratio, self.band(variant, d, base),
                             self.validation_error(), benchmark=bench, base=base,
                             variant=variant, workers=self.workers)

    def validation_error(self):
        """The median |error| of the article workload in the newest validation of this
        machine's model beside the run (results/validation/, validate.recorded_errors),
        or None where it was not measured."""
        return errors_beside(self.data.run_dir).get(ARTICLE_WORKLOAD)

    def speedup(self, variant, d, base=None):
        """(ratio, low, high) of base time / variant time at d: the comparison's estimate
        and bracket; None without one."""
        c = self.comparison(variant, d, base)
        return (c.ratio, c.low, c.high) if c else None

    def curve(self, variant, base=None):
        rows = []
        for d in sorted(self.benches):
            s = self.speedup(variant, d, base)
            if s:
                rows.append((d,) + s)
        return rows

    def bands(self, metric):
        if not self.simulated:
            return {}
        if metric not in self._bands:
            self._bands[metric] = load_bands(self.data.run_dir, metric)
        return self._bands[metric]

    def band(self, variant, d, base=None):
        """(low, high) of the SIMULATED speedup over base at d with the model's uncertain
        costs at the ends of their ranges (the sensitivity band), the point itself
        included; in the speedup's own metric (the window where both report it), so that
        the band is about the number it stands beside.  None without a band in that
        metric."""
        base = base or self.pool
        b, v = self.cell(base, d), self.cell(variant, d)
        if b is None or v is None:
            return None
        metric = shared_metric(b, v)
        bands, bench = self.bands(metric), self.benches.get(d)
        eb = bands.get((base, self.workers, bench), {})
        ev = bands.get((variant, self.workers, bench), {})
        ratios = [eb[e] / ev[e] for e in sorted(set(eb) & set(ev)) if ev[e] > 0]
        if not ratios:
            return None
        ratios.append(b.summary(metric)["median"] / v.summary(metric)["median"])
        return min(ratios), max(ratios)

    def ideal(self, d):
        return ideal_speedup(d, self.setting.late_fraction, self.workers)

    def stolen_share(self, variant, d):
        r = self.cell(variant, d)
        if r is None:
            return None
        stolen = r.summary("stolen_tasks")["median"]
        return None if stolen is None else stolen / self.setting.tasks

    def colocated(self, variant, d):
        r = self.cell(variant, d)
        return None if r is None else r.summary("colocated")["median"]

    def representative(self):
        if REPRESENTATIVE in self.stealing:
            return REPRESENTATIVE
        return self.stealing[0] if self.stealing else None

    def peak_d(self):
        """The swept d closest to where the ideal speedup peaks (the article's case)."""
        ds = sorted(self.benches)
        return max(ds, key=lambda d: (round(self.ideal(d), 9), -d)) if ds else None


def panels(data, sims, setting):
    """The figure's panels: the measured run at its largest worker count, then each
    simulated run at its own."""
    out = []
    for run, simulated in [(data, False)] + [(s, True) for s in sims]:
        table_settings = settings(run.index())
        if setting not in table_settings:
            continue
        ws = sorted({w for b in table_settings[setting].values()
                     for (_, w) in run.index().get(b, {})})
        if not ws:
            continue
        w = max(ws)
        model = run.meta.get("model") or "model"
        label = (f"SIMULATED: {model}, {workers_label(w)}" if simulated
                 else f"measured here, {workers_label(w)}")
        out.append(Panel(run, setting, table_settings[setting], w, label, simulated,
                         run.roles(beside=data) if simulated else None))
    return out


def figure(name, setting, panel_list, reps):
    """Speedup over the per-thread-queue pool against d, one panel per run: the ideal
    curve, the representative stealing variant with its spread, the other stealing
    variants as the envelope of their medians, the two other pools."""
    blocks, bodies, top, bottom = [], [], 1.6, 0.9
    for p in panel_list:
        rep = p.representative()
        dmax = max(p.benches)
        steps = 200
        ideal = [(dmax * i / steps, p.ideal(dmax * i / steps)) for i in range(steps + 1)]
        series = []                               # (kind, label, color, index)

        def block(comment, rows):
            blocks.append(f"# {comment}\n" + "".join(" ".join(gp_num(x) for x in r) + "\n"
                                                     for r in rows))
            return len(blocks) - 1

        others = [v for v in p.stealing if v != rep]
        env = []
        for d in sorted(p.benches):
            vals = [s[0] for s in (p.speedup(v, d) for v in others) if s]
            if vals:
                env.append((d, min(vals), max(vals)))
        if env:
            series.append(("envelope", f"other stealing variants ({len(others)}): "
                           "range of medians", "#9ecae1", block("envelope: d min max", env)))
        series.append(("ideal", "ideal: a perfect balancer", "#000000",
                       block("ideal: d speedup", ideal)))
        if rep:
            band = [(d,) + p.band(rep, d) for d in sorted(p.benches) if p.band(rep, d)]
            if band:                          # a SIMULATED point's band, under its line
                series.append(("band", f"{rep}: SIMULATED sensitivity band",
                               "#fdae6b", block(f"{rep} band: d low high", band)))
                top = max([top] + [r[2] for r in band])
                bottom = min([bottom] + [r[1] for r in band])
            rows = p.curve(rep)
            if rows:
                series.append(("main", rep, "#08519c", block(f"{rep}: d median low high", rows)))
                top = max([top] + [r[3] for r in rows if math.isfinite(r[3])])
        # the pools on top of the variants, each a little to one side of its d and with
        # a marker of its own, so that a pool at the variants' speedup stays visible
        others = [v for v in p.roles.pools(p.data.variants()) if v != p.pool]
        for i, (pool, (color, pt)) in enumerate(zip(others, POOL_MARKS)):
            shift = (0.025 if i % 2 else -0.025) * (1 + i // 2) * max(p.benches)
            rows = [(r[0] + shift,) + tuple(r[1:]) for r in p.curve(pool)]
            if rows:
                series.append((f"pool pt {pt}", f"{p.roles.words(pool)} ({pool})", color,
                               block(f"{pool}: d (shifted {shift:+.3g}) median low high", rows)))
                top = max([top] + [r[3] for r in rows if math.isfinite(r[3])])
                bottom = min([bottom] + [r[2] for r in rows if math.isfinite(r[2])])
        top = max([top] + [e[2] for e in env])
        bottom = min([bottom] + [e[1] for e in env]
                     + [r[2] for kind, _, _, _ in series if kind == "main"
                        for r in p.curve(rep) if math.isfinite(r[2])])
        bodies.append((p, series))
    if not bodies:
        return None
    first = bodies[0][0]
    # every point inside the axes: nothing is clipped, so nothing needs a mark
    ymax = math.ceil(top * 10 + 0.5) / 10
    ymin = math.floor(bottom * 10 - 0.5) / 10
    reps = min((len(r.valid) for p, _ in bodies if not p.simulated
                for cells in p.table.values() for r in cells.values()
                if r.benchmark in p.benches.values()), default=reps)
    bands = sorted({band_description(p.data.run_dir) for p, _ in bodies if p.simulated} - {None})
    caption = "\n".join([setting.label(),
                         f"bars: {cmp.BRACKET}, {reps}+ repetitions a side",
                         "SIMULATED bars: the sensitivity band widened by the validation error"]
                        + [b.replace("sensitivity: ", "sensitivity band: ") for b in bands[:1]])
    n = len(bodies)
    width, height = 460 * n + 40, 700
    # the panels side by side, the key once in a strip of its own below them
    key_h = 0.13
    body = ["reset", "set datafile missing NaN", "set grid",
            "set multiplot title "
            + gp_str("Does work stealing reproduce the article's 30-50%? speedup over "
                     f"{first.roles.words(first.pool)} ({first.pool})\n{caption}")
            + " font \",12\"",
            "set xlabel \"d: the late submitters' delay, in units of W/P\"",
            horizontal_line(1), "unset key",
            # linear where the question is the 1.0-1.5 range, log where the points span
            # more than 4x (plots.y_axis); the axis holds every point
            ] + (y_axis([bottom, top]) if top / max(bottom, 1e-9) > LOG_SPAN
                 else [f"set yrange [{max(ymin, 0.0):.2f}:{ymax:.2f}]"])
    keyed = {}
    for i, (p, series) in enumerate(bodies):
        body += [f"set origin {i / n:.4f}, {key_h}", f"set size {1 / n:.4f}, {0.82 - key_h:.4f}",
                 f"set title {gp_str(p.label)}",
                 "set ylabel " + gp_str(f"{first.pool} time / variant time") if i == 0
                 else "unset ylabel",
                 "set xrange [-0.05:%s]" % gp_num(max(p.benches) + 0.05)]
        commands = []
        for kind, label, color, index in series:
            if kind in ("envelope", "band"):
                style = (f"with filledcurves fc rgb {gp_str(color)} fs solid "
                         f"{0.5 if kind == 'envelope' else 0.45} noborder")
                commands.append(f"datafile index {index} using 1:2:3 {style}")
            elif kind == "ideal":
                style = f"with lines lw 2 dt 4 lc rgb {gp_str(color)}"
                commands.append(f"datafile index {index} using 1:2 {style}")
            elif kind == "main":
                style = f"with yerrorlines lw 2.5 pt 7 ps 1.1 lc rgb {gp_str(color)}"
                commands.append(f"datafile index {index} using 1:2:3:4 {style}")
            else:
                style = (f"with yerrorlines lw 1.5 dt 2 pt {kind.split()[-1]} ps 1.4 "
                         f"lc rgb {gp_str(color)}")
                commands.append(f"datafile index {index} using 1:2:3:4 {style}")
            keyed.setdefault(label, style)
        body.append("plot " + ", \\\n     ".join(commands))
    body += ["set origin 0, 0", f"set size 1, {key_h}", "unset title", "unset xlabel",
             "unset ylabel", "unset border", "unset tics", "unset grid", "unset arrow",
             "unset logscale x", "unset logscale y", "set xrange [0:1]", "set yrange [0:1]",
             "set key center center horizontal maxrows 3 font \",10\" samplen 3 width 2",
             "plot " + ", \\\n     ".join(
                 f"NaN {style.replace('filledcurves', 'boxes')} title {gp_str(label)}"
                 for label, style in keyed.items())]
    body.append("unset multiplot")
    return Plot(name=name, kind="article", title="the article's experiment: " + setting.label(),
                body=body, data="\n\n".join(blocks), width=width, height=height,
                workload=ARTICLE_WORKLOAD)


def horizontal_line(y):
    return (f"set arrow 1 from graph 0, first {y} to graph 1, first {y} nohead dt 2 "
            "lc rgb \"#888888\"")


def figures(data, sims):
    """Every article figure of a run and its simulated companions: one per setting that
    sweeps d (a setting measured at one d alone is a row of the report's table, not a
    curve)."""
    out = []
    reps = data.plan.get("repetitions")
    for i, setting in enumerate(settings(data.index())):
        if len(settings(data.index())[setting]) < 2:
            continue
        name = "article" if i == 0 else (f"article_{'pthread' if setting.foreign else 'bthread'}"
                                         f"_late{setting.late_pct}_grain{setting.grain_us}")
        p = figure(name, setting, panels(data, sims, setting), reps)
        if p:
            out.append(p)
    return out


def first_setting(run):
    """The article setting the answers use: bthread submitters, half late, coarsest
    grain (the quick sweep's), or None."""
    s = [k for k in settings(run.index()) if not k.foreign]
    return s[0] if s else None

