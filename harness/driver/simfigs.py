"""A simulated run's figures (plots/README.md, sim_speedup_<benchmark>), drawn by the
rules and helpers of the measured figures (plots.py)."""

import re

from .gbjson import display_name
from .plots import (bench_words, envelope_label, envelope_rows, gp_num, lines_plot,
                    split_variants)
from .stats import brent_time


def simulated_speedup_plots(med, model, roles):
    """A simulated run's figures (plots/README.md, sim_speedup_<benchmark>): per benchmark
    with at least two worker counts, the SIMULATED speedup over the same variant's
    1-worker time against the worker count, drawn by the rules of the measured figures
    (the representative variant and the pools as lines, the other stealing variants as
    the shaded range of their medians), with the representative's bound from Brent's
    lower bound on the time, T1 / max(work / P, span) (dashed; work = the run's charged
    task bodies, span = the workload's critical path, or the work term alone where the
    workload does not state its span).  Titles say SIMULATED and the model.
    med: rundata.medians() of the run; model: the machine model's name; roles: its
    roles.Roles (which variants are the pools)."""
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
        pools = set(roles.pools(variants))
        drawn, others = split_variants(variants, pools)
        rep = next((v for v in drawn if v not in pools), None)
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
