"""The 30-50% claim's figures and the one-look overview (plots/README.md): per imbalance
scenario the speedup of every variant over each pool and reference row against the
worker count (claim_<k>_<scenario>), the same at the largest worker count for every
scenario side by side (claim_summary: one point per scenario, never a mean across
unlike scenarios), and the heat map of every variant x benchmark over a baseline.  Every
speedup drawn with a bar, every filled marker and every star is a compare.Comparison of
the run (families.py)."""

import math
import re

from . import compare as cmp
from . import families
from .config import CLAIM_BAND, CLAIM_WORKLOAD, REPRESENTATIVE
from .gbjson import display_name, params_of, workload_of
from .plots import (ENVELOPE_COLOR, ENVELOPE_LABEL, Plot, envelope_rows, gp_num, gp_str,
                    gp_tic, horizontal_line, param_words, rows_of, safe_name,
                    split_variants, styles, workers_label, y_axis, bench_words)
from .roles import Roles
from .stats import brent_time

def scenario_label(bench):
    """The claim scenario's parameters, short: 'imbalance 2, grain_us 10, tasks 20000, ...'
    (the report's tables; figure titles use bench_words)."""
    params = params_of(bench)
    return ", ".join(f"{k} {v}" for k, v in params.items()) or display_name(bench)


class ClaimPlots:
    """The 30-50% claim drawn as curves: for each imbalance scenario (and a summary over
    them) the speedup of every variant over each baseline (the pools, roles.py, and the
    reference rows) against the worker count, with the 1.3-1.5x band, the comparisons' brackets as
    bars, a filled marker where the verdict is decided and, where the run records the work (`work_s`, simulated runs), Brent's bound
    baseline / max(work / P, span) (`span_s`; the work term alone where it is missing).
    The representative variant is drawn, the other stealing variants as the range of
    their medians.  A simulated run given beside a measured one gets panels of its own,
    titled SIMULATED and its model, its lines dashed.  Plus the heat map of variant x benchmark
    speedup over each baseline at the largest worker count."""

    def __init__(self, data, sim=None, against=None):
        self.runs = [(data, "")]
        if sim is not None:
            model = sim.meta.get("model") or "model"
            self.runs.append((sim, f"simulated ({model})"))
        elif data.meta.get("simulated"):
            self.runs = [(data, f"simulated ({data.meta.get('model') or 'model'})")]
        self.data = data
        self.comparisons = families.of(data, against)
        self.tables = [(d.index(), note) for d, note in self.runs]
        variants = []
        for d, _ in self.runs:
            variants += [v for v in d.variants() if v not in variants]
        refs = {r.variant for d, _ in self.runs for r in d.results if r.reference}
        self.roles = Roles.merged([d.roles(beside=data) if d is not data else d.roles()
                                   for d, _ in self.runs])
        # a reference row of the batching experiment alone is neither base nor line
        variants = [v for v in variants if v not in refs or v not in self.roles.batch_only()]
        self.pools = self.roles.pools(variants)
        self.baselines = self.pools + sorted(refs & set(variants))
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
        """[(workers, speedup, low, high, decided, work_bound)] of v over base: the
        measured run's comparisons (family `imbalance vs <base>`: the bracket, 1 where
        the verdict is decided), a SIMULATED run's ratio of medians (no bracket)."""
        rows = []
        cells = table.get(bench, {})
        measured = table is self.tables[0][0] and not self.runs[0][0].meta.get("simulated")
        for w in self.workers:
            if (base, w) not in cells or (v, w) not in cells:
                continue
            b, r = cells[(base, w)], cells[(v, w)]
            if measured:
                c = self.comparisons.get(families.imbalance_family(base), bench, base, v, w)
            else:
                c = cmp.simulated("SIMULATED claim", b.median() / r.median())
            if not c:
                continue
            lb = brent_time(r.summary("work_s")["median"], r.summary("span_s")["median"], w)
            bound = b.median() / lb if lb else None
            rows.append((w, c.ratio, c.low, c.high, 1 if sig and c.decided else 0, bound))
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
                        f"# {v} over {base} {note}: workers speedup low high decided "
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
                           "\"filled: decided\"")
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
        bars = f"bars: {cmp.BRACKET}"
        marks = "filled: decided (the bar clears 1)"
        for i, bench in enumerate(scenarios, 1):
            counts = {w for table, _ in self.tables for (_, w) in table.get(bench, {})}
            if len(counts) < 2:
                continue        # one worker count: a row of the report's table, no curve
            p = self.figure(f"claim_{i}_{safe_name(display_name(bench))}",
                            f"Does a variant beat the pools by 30-50%? "
                            f"{bench_words(bench).split(', ', 1)[-1]}",
                            lambda t, base, v, b=bench: self.curve(t, b, base, v),
                            ["green band: 1.3-1.5x", bars, marks])
            if p:
                p.benchmark = bench
                plots.append(p)
        p = self.summary(scenarios)
        if p:
            plots.append(p)
        plots += self.heatmaps()
        return plots

    def summary(self, scenarios):
        """claim_summary: every scenario side by side at the measured run's largest worker
        count, one panel per pool: the representative's speedup with its bracket (filled
        where decided), the other stealing variants' range of estimates, the other pools
        and the reference rows as points; one point per scenario (numbered, the caption
        names them), no mean across them."""
        table = self.tables[0][0]
        top = max(self.data.workers()) if self.data.workers() else None
        scen = [b for b in scenarios if any(w == top for (_, w) in table.get(b, {}))]
        if not scen or top is None:
            return None
        varying = [k for k in params_of(scen[0])
                   if len({params_of(b).get(k) for b in scen}) > 1]
        names = [", ".join(param_words(k, params_of(b).get(k, "")) for k in varying)
                 or display_name(b) for b in scen]
        blocks, panels, keyed = [], [], []
        order = self.lines + self.baselines
        for base in self.pools:
            comps = {(b, v): self.comparisons.get(families.imbalance_family(base), b, base, v, top)
                     for b in scen for v in order}
            comps = {k: c for k, c in comps.items() if c}
            if not comps:
                continue
            drawn, others = split_variants([v for v in self.lines if any(k[1] == v for k in comps)],
                                           set())
            series = []
            for v in drawn + [b for b in self.baselines if b != base]:
                rows = [(i + 1, c.ratio, c.low, c.high, int(c.decided))
                        for i, b in enumerate(scen) for c in [comps.get((b, v))] if c]
                if rows:
                    blocks.append(f"# {v} over {base}: scenario speedup low high decided\n"
                                  + "".join(" ".join(gp_num(x) for x in r) + "\n" for r in rows))
                    series.append((v, len(blocks) - 1))
                    keyed += [v] if v not in keyed else []
            env = [(i + 1, min(vals), max(vals)) for i, b in enumerate(scen)
                   for vals in [[comps[(b, v)].ratio for v in others if (b, v) in comps]] if vals]
            env_index = None
            if env:
                blocks.append(f"# other stealing variants over {base}: scenario min max\n"
                              + "".join(" ".join(gp_num(x) for x in r) + "\n" for r in env))
                env_index = len(blocks) - 1
            panels.append((base, series, env_index))
        if not panels:
            return None
        lo, hi = CLAIM_BAND
        n = len(panels)
        title = (f"Does a variant beat the pools by 30-50%? every imbalance scenario at "
                 f"{workers_label(top)}, one point each (no mean across scenarios)\n"
                 f"bars: {cmp.BRACKET}; filled: decided; light blue: the other stealing "
                 "variants' range\n" + "\n".join(f"{i + 1}: {t}" for i, t in enumerate(names)))
        top_h = 60 + 18 * (2 + len(names))
        height = 560 + top_h
        key_h = 90 / height
        body = ["reset", "set datafile missing NaN", "set grid ytics",
                f"set multiplot title {gp_str(title)} font \",11\"",
                f"set xrange [0.4:{len(scen) + 0.6}]",
                f"set xtics ({', '.join(f'{i + 1}' for i in range(len(scen)))})",
                "set xlabel \"scenario (the numbers above)\"", "unset key"]
        values = [1.0, lo, hi] + [float(v) for blk in blocks for r in rows_of(blk)
                                  for v in r[1:4]]
        axis = y_axis(values, zero=False)
        style = styles(keyed, order)
        for k, (base, series, env_index) in enumerate(panels):
            body += [f"set origin {k / n:.4f}, {key_h:.4f}",
                     f"set size {1 / n:.4f}, {1 - key_h - top_h / height:.4f}",
                     f"set title {gp_str('over ' + base + ' (' + self.roles.short(base) + ')')}",
                     "set ylabel \"speedup over the pool (x)\"" if k == 0 else "unset ylabel",
                     f"set object 1 rectangle from graph 0, first {lo} to graph 1, first {hi}"
                     " behind fillcolor rgb \"#d9f0d3\" fillstyle solid 1.0 noborder",
                     horizontal_line(1)] + axis
            cmds = []
            if env_index is not None:
                cmds.append(f"datafile index {env_index} using 1:(($2+$3)/2):2:3 with yerrorbars "
                            f"lw 8 pt -1 lc rgb {gp_str(ENVELOPE_COLOR)} notitle")
            for j, (v, index) in enumerate(series):
                color, pt, filled = style[v]
                x = f"($1+{0.1 * (j - (len(series) - 1) / 2):.3f})"
                cmds.append(f"datafile index {index} using {x}:2:3:4 with yerrorbars pt {pt} "
                            f"ps 1.1 lc rgb {gp_str(color)} notitle")
                cmds.append(f"datafile index {index} using {x}:($5 > 0 ? $2 : NaN) with points "
                            f"pt {filled} ps 1.2 lc rgb {gp_str(color)} notitle")
            body.append("plot " + ", \\\n     ".join(cmds))
        entries = [f"NaN with points pt {style[v][1]} ps 1.2 lc rgb {gp_str(style[v][0])} "
                   f"title {gp_str(v)}" for v in keyed]
        entries.append(f"NaN with boxes fc rgb {gp_str(ENVELOPE_COLOR)} fs solid 0.5 noborder "
                       f"title {gp_str(ENVELOPE_LABEL)}")
        body += ["set origin 0, 0", f"set size 1, {key_h:.4f}", "unset title", "unset xlabel",
                 "unset ylabel", "unset border", "unset tics", "unset grid", "unset object 1",
                 "unset arrow", "unset logscale y", "set xrange [0:1]", "set yrange [0:1]",
                 "set key center center horizontal maxrows 2 font \",10\"",
                 "plot " + ", \\\n     ".join(entries), "unset multiplot"]
        return Plot(name="claim_summary", kind="claim", title=title, body=body,
                    data="\n\n".join(blocks), width=max(900, 460 * n), height=height,
                    workload=CLAIM_WORKLOAD)

    def heatmaps(self):
        """Variant x benchmark speedup over each baseline (and over --against) at the
        largest worker count of the measured run (family `all vs <base>, N workers`), as
        a colour map: log2 scale centred at 1 (blue slower, red faster), clipped at
        HEAT_CLIP either way (marked on the scale) so that 0.9 and 1.1 stay apart, the
        value written in each cell (white on the dark ends), '*' where the verdict is
        decided, and missing cells hatched grey with 'n/a'.  Rows carry their whole
        parameters."""
        table = self.tables[0][0]
        workers = max(self.data.workers()) if self.data.workers() else None
        plots = []
        benches = sorted(table)
        span = math.log2(HEAT_CLIP)
        for base in self.heat_bases:
            cols = [v for v in self.data.variants() if v != base]
            rows = [b for b in benches if (base, workers) in table[b]]
            family = families.all_family(base, workers)
            diffs = {(b, v): self.comparisons.get(family, b, base, v, workers)
                     for b in rows for v in cols}
            diffs = {k: d for k, d in diffs.items() if d}
            if not rows or not cols or not diffs:
                continue
            lines, labels_gp, missing = [], [], []
            for y, b in enumerate(rows):
                cells = []
                for x, v in enumerate(cols):
                    d = diffs.get((b, v))
                    if d:
                        shade = max(-span, min(span, math.log2(d.ratio)))
                        cells.append(gp_num(shade))
                        star = "*" if d.decided else ""
                        s = d.ratio
                        text = f"{s:.2f}{star}" if s < 9.995 else f"{s:.0f}{star}"
                        ink = "#ffffff" if abs(shade) > 0.6 * span else "#000000"
                        labels_gp.append(f"set label {len(labels_gp) + 1} {gp_str(text)} at {x},{y} "
                                         f"center font \",9\" tc rgb {gp_str(ink)} front")
                    else:
                        cells.append(gp_num(None))
                        missing.append((x, y))
                lines.append(" ".join(cells))
            for i, (x, y) in enumerate(missing):
                labels_gp.append(f"set object {i + 10} rectangle from {x - 0.5},{y - 0.5} to "
                                 f"{x + 0.5},{y + 0.5} fc rgb \"#bdbdbd\" fs pattern 4 "
                                 "border lc rgb \"#bdbdbd\" front")
                labels_gp.append(f"set label {len(labels_gp) + 1} \"n/a\" at {x},{y} center "
                                 "font \",8\" front")
            m = len(self.comparisons.family(family))
            title = (f"Which variant is faster than {base}, on which benchmark? speedup at "
                     f"{workers_label(workers)}\n* decided: the 95% family-wise interval "
                     f"over the {m} comparisons of '{family}' excludes 1")
            height = 170 + 24 * len(rows)
            ylabels = [row_label(b) for b in rows]
            label_px = 40 + 6.5 * max(len(t) for t in ylabels)
            width = int(label_px + 80 * len(cols) + 260)
            ticks = [1 / HEAT_CLIP, 0.8, 0.9, 1.0, 1.1, 1.25, HEAT_CLIP]
            tics = ", ".join(f"{gp_str(tick_label(t, clipped=t in (HEAT_CLIP, 1 / HEAT_CLIP)))} "
                             f"{math.log2(t):.4f}" for t in ticks)
            body = ["reset", "set datafile missing NaN", f"set title {gp_str(title)}",
                    "unset key", "set view map", "set tics scale 0", "set xtics rotate by 30 right",
                    f"set xtics ({', '.join(gp_tic(v, i) for i, v in enumerate(cols))})",
                    f"set ytics ({', '.join(gp_tic(t, i) for i, t in enumerate(ylabels))})"
                    " font \",9\"",
                    f"set xrange [-0.5:{len(cols) - 0.5}]", f"set yrange [{len(rows) - 0.5}:-0.5]",
                    f"set cbrange [{-span}:{span}]", f"set cbtics ({tics})",
                    "set cblabel \"speedup over " + base + " (log scale, clipped at "
                    f"{tick_label(1 / HEAT_CLIP)} and {HEAT_CLIP:g}; grey: not measured)\"",
                    heat_palette(span),
                    f"set lmargin at screen {label_px / width:.4f}",
                    f"set rmargin at screen {1 - 230 / width:.4f}", "set bmargin 7"]
            body += labels_gp
            body.append("plot datafile matrix using 1:2:3 with image")
            plots.append(Plot(name=f"heatmap_vs_{base}", kind="heatmap", title=title, body=body,
                              data="\n".join(lines) + "\n", width=width, height=height))
        return plots


HEAT_CLIP = 2.0   # the heat map's colours stop at 1/2 and 2x: 0.9 and 1.1 differ visibly


def heat_palette(span):
    """The heat map's colours over log2 speedups -span..span: most of the change between
    0.8x and 1.25x, so that 0.9 and 1.1 read apart."""
    stops = [(-span, "#053061"), (math.log2(0.8), "#4393c3"), (math.log2(0.95), "#d1e5f0"),
             (0, "#f7f7f7"), (math.log2(1.05), "#fddbc7"), (math.log2(1.25), "#d6604d"),
             (span, "#67001f")]
    return "set palette defined (" + ", ".join(f"{x:.4f} {gp_str(c)}" for x, c in stops) + ")"


def tick_label(x, clipped=False):
    """2.0 -> '2', 0.25 -> '1/4', 0.9 -> '0.9'; clipped: '<= 1/2', '>= 2'."""
    text = f"{x:g}" if x >= 0.75 else f"1/{1 / x:g}"
    return (("<= " if x < 1 else ">= ") + text) if clipped else text


def row_label(benchmark):
    """A heat map row: 'workload: k v, k v' with every parameter (never cut: two rows
    that differ only at the end must read apart)."""
    name = display_name(benchmark)
    wl = workload_of(name)
    text = ", ".join(param_words(k, v) for k, v in params_of(name).items())
    # no %: gnuplot reads a tic label as a format and cuts one with a % short
    text = text.replace("%", " pct")
    return f"{wl}: {text}" if text else wl
