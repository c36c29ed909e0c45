"""The policy map's figures (plots/<map-id>/): one figure per pair of the map's axes
(task grain, form of imbalance, workers), a panel per value of the third, measured and
SIMULATED cells in panels of their own (plots/README.md).  In every panel a cell is a
box: its colour the winner's, its shade the margin over the runner-up (pale: within a
few percent; full: MARGIN_FULL or more), its text the margin in percent, marked `~`
where the verdict is fragile (the winner changes within its band or interval) and `?`
where it is undecided.  Each figure has its table, <name>.csv (the csv module), with
every cell it draws, and its .gp and .dat as every figure of the driver (gnuplot.py)."""

import concurrent.futures
import csv
import io
import os

from .files import atomic_write_json, atomic_write_text, ensure_dir
from .fmt import now_iso
from .gnuplot import Gnuplot, write_scripts
from .mapcells import CELL_HEADERS, FRAGILE, UNDECIDED, cell_row
from .mapgrid import FORM_BY_KEY, grain_words
from .plots import PALETTE, Plot, gp_str, gp_tic
from .config import UsageError, warn

MARGIN_FULL = 1.5        # a margin this large or more is drawn in the winner's full colour
MARK = {FRAGILE: "~", UNDECIDED: "?"}
AXES = {"grain": "task grain", "form": "form of imbalance", "workers": "workers"}


def variant_colours(cells):
    """{variant: colour}, stable: the order of the variants (pools and reference rows
    among them) by name, each the next colour of the driver's palette."""
    names = sorted({c.winner for c in cells} | {c.runner for c in cells})
    colours = [c for c in PALETTE if c != "#666666"]   # grey, shaded, reads as "missing"
    return {v: colours[i % len(colours)] for i, v in enumerate(names)}


def shade(colour, margin):
    """(the winner's colour blended towards white by how small the margin is, as an
    integer 0xRRGGBB for gnuplot's `rgb variable`; the strength of the colour)."""
    strength = 0.2 + 0.8 * min(1.0, max(0.0, (margin - 1) / (MARGIN_FULL - 1)))
    rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    mixed = [round(255 - (255 - c) * strength) for c in rgb]
    return (mixed[0] << 16) | (mixed[1] << 8) | mixed[2], strength


def cell_text(cell):
    m = cell.margin
    text = f"{(m - 1) * 100:+.0f}%" if m < 10 else f"x{m:.0f}"
    return text + MARK.get(cell.verdict, "")


def row_key(cell):
    """A cell's place on the workers axis: (workers, machine)."""
    return (cell.workers, cell.machine)


def row_label(key, simulated):
    w, machine = key
    return f"{w} ({machine})" if simulated else f"{w} worker" + ("" if w == 1 else "s")


def axis_values(cells, axis):
    """The values an axis takes over the cells, in order, and their labels."""
    if axis == "grain":
        values = sorted({c.grain for c in cells}, key=lambda g: (g is None, g or 0))
        return values, [grain_words(g) for g in values]
    if axis == "form":
        order = list(FORM_BY_KEY)
        values = sorted({c.form.key for c in cells}, key=order.index)
        return values, values
    values = sorted({row_key(c) for c in cells})
    return values, [row_label(v, any(c.simulated for c in cells)) for v in values]


def value_of(cell, axis):
    return cell.grain if axis == "grain" else cell.form.key if axis == "form" else row_key(cell)


class MapFigure:
    """One figure: x and y two of the map's axes, a panel per (value of the third,
    measured or SIMULATED)."""

    def __init__(self, name, x, y, panel, cells, colours, title):
        self.name, self.x, self.y, self.panel_axis = name, x, y, panel
        self.cells, self.colours, self.title = cells, colours, title

    def panels(self):
        """[(title, cells)]: per value of the panel axis, measured first, then SIMULATED."""
        out = []
        for simulated in (False, True):
            cells = [c for c in self.cells if c.simulated == simulated]
            values, labels = axis_values(cells, self.panel_axis)
            for v, label in zip(values, labels):
                chosen = [c for c in cells if value_of(c, self.panel_axis) == v]
                if self.panel_axis == "grain":
                    label = "their own grain (trees, arrival)" if v is None else f"grain {label}"
                elif self.panel_axis == "workers":
                    label = f"{v[0]} workers" if simulated else label
                where = "SIMULATED " + ", ".join(sorted({c.machine for c in chosen})) \
                    if simulated else "measured"
                out.append((f"{label}: {where}", chosen))
        return out

    def plot(self):
        panels = [(t, c) for t, c in self.panels() if c]
        cols = 2 if len(panels) > 1 else 1
        rows = -(-len(panels) // cols)
        blocks, body = [], ["reset", "set datafile missing NaN", "set tics scale 0",
                            "set style fill solid 1.0 border lc rgb \"#ffffff\"", "unset key"]
        heights = []
        for _, cells in panels:
            heights.append(len(axis_values(cells, self.y)[0]))
        width = max(160 + cols * (140 + 80 * max(len(axis_values(c, self.x)[0]) for _, c in panels)),
                    7.5 * max(len(line) for line in self.title.splitlines()),
                    cols * 7 * max(len(t) for t, _ in panels))
        height = 150 + rows * (90 + 34 * max(heights))
        body.append(f"set multiplot layout {rows},{cols} title {gp_str(self.title)} "
                    "font \",11\"")
        for i, (title, cells) in enumerate(panels):
            xs, xl = axis_values(cells, self.x)
            ys, yl = axis_values(cells, self.y)
            lines = [f"# {title}: x y dx dy rgb text ink"]
            for c in cells:
                rgb, strength = shade(self.colours[c.winner], c.margin)
                ink = "#ffffff" if strength > 0.7 else "#000000"
                lines.append(f"{xs.index(value_of(c, self.x))} {ys.index(value_of(c, self.y))} "
                             f"0.47 0.45 {rgb} {gp_str(c.winner + chr(10) + cell_text(c))} "
                             f"{int(ink[1:], 16)}")
            blocks.append("\n".join(lines) + "\n")
            body += [f"set title {gp_str(title)} font \",10\"",
                     f"set xrange [-0.5:{len(xs) - 0.5}]", f"set yrange [-0.5:{len(ys) - 0.5}]",
                     f"set xtics ({', '.join(gp_tic(t, j) for j, t in enumerate(xl))}) "
                     "font \",9\"",
                     f"set ytics ({', '.join(gp_tic(t, j) for j, t in enumerate(yl))}) "
                     "font \",9\"",
                     f"set xlabel {gp_str(AXES[self.x])}", f"set ylabel {gp_str(AXES[self.y])}",
                     f"plot datafile index {i} using 1:2:3:4:5 with boxxyerror lc rgb variable "
                     f"notitle, datafile index {i} using 1:2:6:7 with labels tc rgb variable "
                     "font \",8\" notitle"]
        body.append("unset multiplot")
        return Plot(name=self.name, kind="map", title=self.title, body=body,
                    data="\n\n".join(blocks), width=int(width), height=int(height))

    def table(self):
        """The figure's CSV: its panel, then every column of cells.csv."""
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["panel"] + CELL_HEADERS)
        for title, cells in self.panels():
            for c in cells:
                w.writerow([title] + cell_row(c))
        return out.getvalue()


def figures(data):
    """The map's figures: grain x workers per form, grain x form per worker count, form x
    workers per grain."""
    grained = [c for c in data.cells if c.grain is not None]
    colours = variant_colours(data.cells)
    how = ("colour = winner, shade = margin over the runner-up (full at "
           f"+{(MARGIN_FULL - 1) * 100:.0f}% or more); ~ fragile, ? undecided")
    out = []
    if grained:
        out.append(MapFigure("map_grain_workers", "grain", "workers", "form", grained, colours,
                             f"Which policy wins, by task grain and worker count?\n{how}"))
        out.append(MapFigure("map_grain_form", "grain", "form", "workers", grained, colours,
                             f"Which policy wins, by task grain and form of imbalance?\n{how}"))
    if data.cells:
        out.append(MapFigure("map_form_workers", "form", "workers", "grain", data.cells, colours,
                             f"Which policy wins, by form of imbalance and worker count?\n{how}"))
    return out


def write_figures(data, out_dir):
    """Render the figures into out_dir with their .gp, .dat and .csv, and plots.json;
    returns [{name, title, files, table, error}] (gnuplot missing: no files, said once)."""
    ensure_dir(out_dir, "plot directory")
    figs = figures(data)
    entries = []
    try:
        gnuplot = Gnuplot()
    except UsageError as e:
        warn(f"map figures not drawn: {e}")
        gnuplot = None
    plots = [f.plot() for f in figs]
    for f in figs:
        atomic_write_text(os.path.join(out_dir, f.name + ".csv"), f.table())
    failures = [None] * len(plots)
    if gnuplot:
        write_scripts(out_dir, plots, gnuplot)
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            failures = list(pool.map(lambda p: gnuplot.render(out_dir, p), plots))
    for f, p, failure in zip(figs, plots, failures):
        if failure:
            warn(f"gnuplot failed on {os.path.join(out_dir, p.name + '.gp')}: {failure}")
        files = [f"{p.name}.{ext}" for ext in ("svg", "png")
                 if os.path.exists(os.path.join(out_dir, f"{p.name}.{ext}"))]
        entries.append(dict(name=p.name, kind=p.kind, title=p.title, script=p.name + ".gp",
                            data=p.name + ".dat", table=p.name + ".csv", files=files,
                            error=failure, dir=out_dir))
    atomic_write_json(os.path.join(out_dir, "plots.json"),
                      dict(run_id=data.map_id, written=now_iso(), plots=entries))
    return entries
