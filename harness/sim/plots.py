"""plots.py -- speedup figures of a simulated run, beside Brent's bound (gnuplot).

plots/<run-id>/sim_speedup_<benchmark>.{svg,png} (with its .gp and .dat, as the
driver's figures, plots/README.md): the simulated speedup over the same variant's
1-worker time against the worker count, drawn by the driver's rules
(harness/driver/plots.py): the representative variant and the pools as lines, each
with a colour and a marker of its own, the other stealing variants as the shaded range
of their medians, and the representative's bound from Brent's lower bound on the time,
T1 / max(work / P, span) (dashed; work = the same run's charged task bodies, span = the
workload's critical path, or the work term alone where the workload does not state its
span); a log y axis where the speedups span more than 4x.  Titles say SIMULATED and the
model.  Needs gnuplot; without it the plots are skipped with a message (the numbers are
in SIMULATED.md).
"""
import os
import re
import shutil

from harness.driver.config import BASELINES
from harness.driver.gbjson import display_name
from harness.driver.plots import (bench_words, envelope_label, envelope_rows, gp_num,
                                  lines_plot, split_variants)
from harness.driver.stats import brent_time
from harness.sim.simulate import ROOT, medians


def figures(med, model):
    """The Plot of every benchmark with at least two worker counts.
    med: simulate.medians(); model: the machine model's name."""
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


def plot(run_dir, out_root=None, echo=print):
    if not shutil.which(os.environ.get("GNUPLOT") or "gnuplot"):
        echo("plots: gnuplot not found; skipped")
        return []
    from harness.driver.files import atomic_write_text
    from harness.driver.gnuplot import Gnuplot
    import json
    with open(os.path.join(run_dir, "meta.json")) as f:
        meta = json.load(f)
    # a run under results/ gets plots/<run-id>/; one written elsewhere (--out) keeps its
    # plots beside it
    results = os.path.join(ROOT, "results")
    if out_root is None:
        inside = os.path.abspath(run_dir).startswith(results + os.sep)
        out_root = os.path.join(ROOT, "plots") if inside else os.path.join(run_dir, "plots")
    out_dir = os.path.join(out_root, meta["run_id"])
    os.makedirs(out_dir, exist_ok=True)
    gnuplot = Gnuplot()
    made = []
    for p in figures(medians(run_dir), meta["model"]):
        atomic_write_text(os.path.join(out_dir, p.name + ".dat"), p.data)
        atomic_write_text(os.path.join(out_dir, p.name + ".gp"), p.script(gnuplot.terminals))
        failure = gnuplot.render(out_dir, p)
        if failure:
            echo("plots: gnuplot failed for %s: %s" % (p.benchmark, failure))
            continue
        made += [os.path.join(out_dir, f"{p.name}.{ext}") for ext, _ in gnuplot.terminals]
    return made
