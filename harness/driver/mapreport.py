"""REPORT.md of a policy map (results/map-<id>/REPORT.md): the policy guide first, then
the robust cells not won by the representative variant, the figures with their tables,
the held-out check, the grid and what it cannot express, the A/A row, every cell and the
runs behind them.  Every margin is its cell's compare.Comparison (mapcells.py); every
rule is mapguide.py's, generated from the cells."""

import os
import statistics

from . import compare as cmp
from .config import REPRESENTATIVE
from .files import atomic_write_text
from .mapcells import FRAGILE, ROBUST, TIE, UNDECIDED
from .mapgrid import FORM_BY_KEY, MISSING, SIM_GRAINS_NS, GRAINS_NS, grain_words
from .mapguide import not_representative, rules


def cell_words(c):
    """'late, 10 us, 16 workers, SIMULATED epyc16'."""
    return f"{c.form.key}, {grain_words(c.grain)}, {c.where()}"


def intro(data):
    s = data.settings
    engines = s.get("engines") or []
    hosts = "; ".join(f"`{name}`: {', '.join(h) or 'none recorded'}"
                      for name, h in data.hosts.items())
    L = [f"# The policy map `{data.map_id}`: which policy wins where, by how much, and why", "",
         f"Made by `{s.get('command', './run.py map')}`"
         + (f"; engines: {', '.join(e.get('engine', '?') for e in engines)}" if engines else "")
         + f".  Hosts that ran the points: {hosts or 'none'}.", "",
         "A **cell** is a form of imbalance at one task grain and one worker count, on this "
         "machine (measured) or on a machine model (**SIMULATED**).  Its **winner** is the "
         "variant (or reference row) with the lowest median in the cell's metric (the "
         "window of the article's experiment, the wall time, or a latency percentile); its "
         "**margin** is the runner-up's median over the winner's: measured, the "
         f"Hodges-Lehmann ratio with its {cmp.BRACKET} (family `map: winner vs runner-up, "
         "measured`); SIMULATED, the ratio of the simulated times with its range: the "
         "sensitivity band (each uncertain cost group of the model at each end of its "
         "range, one at a time, the best other candidate against the winner there) widened "
         "by the here model's held-out error for the form.", "",
         f"**Verdict**: *{ROBUST}*: the whole range lies above {TIE:g}, the winner wins by more "
         f"than a tie ({(TIE - 1) * 100:g}%) at every end and across the interval; "
         f"*{FRAGILE}*: the range reaches below {TIE:g}, the winner changes within the band or "
         "the interval, or is tied with its runner-up somewhere in it; "
         f"*{UNDECIDED}*: no range can be made (too few repetitions, or a SIMULATED cell "
         "without a band or a held-out error).  The counters that explain a cell: steal "
         "attempts per steal, parks and wake-ups per task, CPU time per wall time.", ""]
    return L


def guide(data):
    found = rules(data)
    L = ["## The policy guide", "",
         f"{len(found)} rules, each found in the cells below by mapguide.py (the cells "
         "named after each are its evidence; cells.csv has their every number).", ""]
    for i, r in enumerate(found, 1):
        ev = ", ".join(f"`{e}`" for e in r.evidence[:8]) + \
            (f" and {len(r.evidence) - 8} more" if len(r.evidence) > 8 else "")
        L += [f"{i}. **{r.title}.** {r.text}  ", f"   Evidence: {ev}.", ""]
    if len(found) < 5:
        L += [f"Only {len(found)} rules: the cells show no more patterns of the kinds "
              "mapguide.py looks for.", ""]
    return L


def not_chaselev(data):
    cells = not_representative(data)
    robust = [c for c in data.cells if c.verdict == ROBUST]
    L = [f"## Robust cells not won by `{REPRESENTATIVE}`", ""]
    if not cells:
        found = (f"every one of the {len(robust)} robust cells is won by `{REPRESENTATIVE}`"
                 if robust else "no cell is robust")
        L += [f"None: of the {len(data.cells)} cells, {found}.  The map looked at the forms "
              f"{', '.join(data.settings['forms'])} (SIMULATED: "
              f"{', '.join(data.settings['sim_forms'])}), at the grains and worker counts of "
              "the grid below.", ""]
        return L
    L += [f"{len(cells)} of the {len(robust)} robust cells are won by another variant:", "",
          "| cell | winner | runner-up | margin | why (winner / runner-up) |",
          "|---|---|---|---|---|"]
    for c in cells[:25]:
        w, r = c.counters.get(c.winner, {}), c.counters.get(c.runner, {})
        why = "; ".join(f"{k}: {fmt(w.get(k))} / {fmt(r.get(k))}" for k in w
                        if w.get(k) is not None and r.get(k) is not None)
        L.append(f"| {cell_words(c)} | `{c.winner}` | `{c.runner}` | {c.comparison.text()} | "
                 f"{why or 'no counters'} |")
    if len(cells) > 25:
        L.append(f"\n... and {len(cells) - 25} more in cells.csv.")
    return L + [""]


def fmt(v):
    return "n/a" if v is None else f"{v:.3g}"


def figures(data, entries):
    L = ["## The figures", ""]
    if not entries:
        return L + ["None drawn (`--no-plot`, or no gnuplot).", ""]
    for e in entries:
        link = lambda f: os.path.relpath(os.path.join(e["dir"], f), data.map_dir)
        png = next((f for f in e["files"] if f.endswith(".png")), None)
        svg = next((f for f in e["files"] if f.endswith(".svg")), None)
        L.append(f"**{e['title'].splitlines()[0]}** (table: [{e['table']}]({link(e['table'])})"
                 + (f", [SVG]({link(svg)})" if svg else "") + ")")
        L += ["", f"![{e['name']}]({link(png)})" if png else f"(not drawn: {e.get('error')})", ""]
    return L


def heldout(data):
    rows = data.heldout
    L = ["## Held-out check: the simulator (model `here`) against the measured cells", ""]
    if not rows:
        return L + ["No held-out simulation (the map has no measured part, or it has not "
                    "run yet).", ""]
    out = [r for r in rows if not r.in_sample]
    inside = [r for r in rows if r.in_sample]
    bad = [r for r in out if not r.agree]
    errs = [abs(e) for r in out for e in r.errors.values()]
    L += [f"Each measured cell simulated on the `here` model (`heldout-here/`), its variants "
          "only (the reference rows have no simulation).  Error = predicted / measured - 1 "
          f"in the cell's metric.  {len(out)} cells are held out"
          + (f" (median |error| {statistics.median(errs):.1%} over their points)" if errs else "")
          + (f"; {len(inside)} hold a point the model's code costs were fitted to "
             "(machine.json's code_fit) and are left out: "
             + ", ".join(f"`{r.cell.id}`" for r in inside) if inside else "") + ".", ""]
    if bad:
        L += ["Simulator and measurement disagree on the winner at: "
              + ", ".join(f"`{r.cell.id}` (measured `{r.measured_winner}`, predicted "
                          f"`{r.predicted_winner}`)" for r in bad) + ".", ""]
    else:
        L += ["Simulator and measurement agree on every held-out cell's winner.", ""]
    L += ["| cell | variants | median abs(error) | worst error | median abs(error) of "
          "the ratios to the winner | measured winner | predicted winner | agree |",
          "|---|---|---|---|---|---|---|---|"]
    for r in out:
        ratios = [abs(e) for e in r.ratio_errors.values()]
        L.append(f"| {cell_words(r.cell)} | {len(r.errors)} | {r.median_abs:.1%} | "
                 f"{r.worst:+.1%} | {statistics.median(ratios):.1%} | `{r.measured_winner}` | "
                 f"`{r.predicted_winner}` | {'yes' if r.agree else '**no**'} |")
    if data.errors:
        L += ["", "A margin is a ratio of two variants' times, so the error that widens a "
              "form's SIMULATED ranges is that of the ratios (each variant's time over the "
              "measured winner's, predicted against measured), per form: "
              + ", ".join(f"{k} {v:.1%}" for k, v in data.errors.items()) + "."]
    return L + [""]


def grid(data):
    s = data.settings
    L = ["## The grid", "", "| form | what it is | workload and fixed parameters | grain | metric |",
         "|---|---|---|---|---|"]
    for key in s["forms"]:
        f = FORM_BY_KEY[key]
        fixed = ", ".join(f"{k} {v}" for k, v in f.fixed)
        sim = "; not SIMULATED" if key not in s["sim_forms"] else \
            f"; SIMULATED with {', '.join(f'{k} {v}' for k, v in f.sim_fixed)}" if f.sim_fixed else ""
        L.append(f"| {key} | {f.words} | `{f.workload}`: {fixed}{sim} | "
                 f"{'`' + f.grain + '`, ' + f.size + ' for about ' + grain_words(int(f.work_ns)) + ' of work' if f.grain else 'its own'} | "
                 f"{f.metric} |")
    measured = ", ".join(grain_words(g) for g in s["grains"])
    simulated = ", ".join(grain_words(g) for g in s["sim_grains"])
    thinner = len(s["sim_grains"]) < len(GRAINS_NS)
    L += ["", f"Grains: measured where a registered argument set falls on {measured}; "
          f"SIMULATED at {simulated}"
          + (f" (a thinner grid than the map's {len(GRAINS_NS)} half-decade grains, to keep "
             "the SIMULATED part near an hour with --jobs 2 on a 2-core machine; `--sim-grains "
             "all` takes them all)" if thinner and list(s["sim_grains"]) == list(SIM_GRAINS_NS)
             else "") + ".",
          f"Workers: measured at {', '.join(map(str, s['workers'])) or 'none'}; SIMULATED "
          + ("; ".join(f"{m} at {', '.join(map(str, w))}" for m, w in s["models"]) or "nowhere")
          + ".  Every variant the build lists (and the reference rows where they run the "
          "workload) in every measured cell; every variant in every SIMULATED one, the band's "
          "ends simulated for the variants within "
          + ("any distance" if s.get("band_within") is None else f"{s['band_within']:.0%}")
          + " of the cell's winner and its runner-up.", ""]
    L += ["## What the map cannot express with the workloads as they are", ""]
    L += [f"- **{what}**: {why}" for what, why in MISSING]
    return L + [""]


def aa(data):
    n, dec = len(data.aa), sum(c.decided for c in data.aa)
    if not n:
        return []
    return ["## The A/A row", "", f"The A/A twin against its original in every measured cell "
            f"(family `map: A/A`): {dec} of {n} comparisons decided (0 expected).", ""]


def every_cell(data):
    L = ["## Every cell", "", "Also in `cells.csv` (with each side's counters).", "",
         "| cell | winner | runner-up | margin | verdict | flips at |", "|---|---|---|---|---|---|"]
    for c in data.cells:
        flips = ", ".join(f"{e}: `{v}`" for e, v in c.flips)
        L.append(f"| {cell_words(c)} | `{c.winner}` | `{c.runner}` | {c.comparison.text()} | "
                 f"{c.verdict} | {flips} |")
    return L + [""]


def runs(data):
    L = ["## The runs", ""]
    for name, path in data.runs.items():
        L.append(f"- `{name}/`: {os.path.relpath(path, data.map_dir)}")
    return L + [""]


def write_report(map_dir, data, entries):
    text = "\n".join(intro(data) + guide(data) + not_chaselev(data) + figures(data, entries)
                     + heldout(data) + grid(data) + aa(data) + every_cell(data) + runs(data))
    path = os.path.join(map_dir, "REPORT.md")
    atomic_write_text(path, text)
    return path
