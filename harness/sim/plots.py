"""plots.py -- speedup plots of a simulated run, each beside its Brent bound (gnuplot).

plots/<run-id>/sim_speedup_<benchmark>.png: for every variant, the simulated speedup
over its own 1-worker time against the worker count (solid), and the bound on that
speedup from Brent's lower bound on the time, T1 / max(work / P, span) (dashed, same
colour; work = the same run's charged task bodies, span = the workload's critical path,
or the work term alone where the workload does not state its span).  Titles and legends say SIMULATED and the model.  Needs gnuplot; without it
the plots are skipped with a message (the numbers are in SIMULATED.md).
"""
import json
import os
import re
import shutil
import subprocess

from harness.driver.stats import brent_time
from harness.sim.simulate import ROOT, medians


def _safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name.replace("/real_time", ""))


def plot(run_dir, out_root=None, echo=print):
    if not shutil.which("gnuplot"):
        echo("plots: gnuplot not found; skipped")
        return []
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
    med = medians(run_dir)
    made = []
    for b in sorted({k[2] for k in med}):
        variants = sorted({k[0] for k in med if k[2] == b and (k[0], 1, b) in med})
        workers = sorted({k[1] for k in med if k[2] == b})
        if len(workers) < 2 or not variants:
            continue
        data = os.path.join(out_dir, "sim_speedup_%s.dat" % _safe(b))
        with open(data, "w") as f:
            for v in variants:
                f.write("# %s\n" % v)
                t1 = med[(v, 1, b)]["time_s"]
                for n in workers:
                    r = med.get((v, n, b))
                    if not r:
                        continue
                    lb = brent_time(r.get("work_s"), r.get("span_s"), n)
                    bound = t1 / lb if lb else float("nan")
                    f.write("%d %.6g %.6g\n" % (n, t1 / r["time_s"], bound))
                f.write("\n\n")
        png = os.path.join(out_dir, "sim_speedup_%s.png" % _safe(b))
        plots = []
        what = "Brent bound" if all("span_s" in r for k, r in med.items() if k[2] == b) else "work bound"
        for i, v in enumerate(variants):
            plots.append("'%s' index %d using 1:2 with linespoints lc %d lw 2 title '%s (simulated)'"
                         % (data, i, i + 1, v))
            plots.append("'%s' index %d using 1:3 with lines lc %d dt 2 title '%s %s'"
                         % (data, i, i + 1, v, what))
        script = "\n".join([
            "set terminal pngcairo size 1100,700 noenhanced",
            "set output '%s'" % png,
            'set title "SIMULATED on model %s: %s\\nspeedup over the same variant at 1 worker; dashed: the %s, T1 / %s" noenhanced'
            % (meta["model"], b, what, "max(work/P, span)" if what == "Brent bound" else "(work/P)"),
            "set xlabel 'workers'", "set ylabel 'speedup (simulated)'",
            "set logscale x 2", "set key outside right", "set grid",
            "plot " + ", \\\n  ".join(plots), ""])
        p = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True)
        if p.returncode != 0:
            echo("plots: gnuplot failed for %s: %s" % (b, p.stderr.strip()))
            continue
        os.remove(data)
        made.append(png)
    return made
