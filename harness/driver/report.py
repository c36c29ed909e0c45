"""REPORT.md of a run: the machine, the problems, the 30-50% claim, a table per workload
with its plots, and the significant differences against the baselines."""

import os

from .compare import compare_pair, compare_sides, significance_notes
from .article import ANSWER_HEADERS, answer_rows
from .companion import load_companions
from .config import BASELINES, CLAIM_BAND, CLAIM_PARAM, CLAIM_WORKLOAD, UsageError, warn
from .files import write_output
from .fmt import fmt_p, fmt_seconds, format_table
from .gbjson import display_name
from .gnuplot import Gnuplot, plots_dir, read_manifest, write_plots
from .plots import scenario_label, workers_label
from .rundata import CPU_PER_WALL


class Report:
    """The Markdown report of one run: machine, problems, the 30-50% claim, per-workload
    tables with their plots, significant differences against the baselines."""

    def __init__(self, data, manifest, alpha, path, root, sim=None, sims=()):
        self.data, self.alpha, self.path, self.sim = data, alpha, path, sim
        self.sims = list(sims) or ([sim] if sim else [])
        self.manifest = manifest or {}
        self.plot_dir = plots_dir(root, data.run_id)
        self.variants = data.variants()
        self.workers = data.workers()

    # --- helpers -----------------------------------------------------------------------

    def plots(self, kind=None, workload=None):
        return [p for p in self.manifest.get("plots", [])
                if p.get("files") and (kind is None or p.get("kind") == kind)
                and (workload is None or p.get("workload") == workload)]

    def plot_link(self, entry, embed=True):
        """Markdown for one plot: its PNG embedded (the published form keeps exactly the
        embedded figures, harness/driver/publish.py); embed=False names the figure
        without a link (it is in plots/<run-id>/ after `./run.py plot`)."""
        files = entry["files"]
        png = next((f for f in files if f.endswith(".png")), files[0])
        if not embed:
            return f"`{png}`"
        rel = os.path.relpath(os.path.join(self.plot_dir, png),
                              os.path.dirname(os.path.abspath(self.path)))
        return f"![{entry['title']}]({rel})"

    def cell(self, r):
        if r is None:
            return ""
        if r.errors:
            return "ERROR"
        s = r.summary()
        if not s["n"]:
            return ""
        return f"{fmt_seconds(s['median'])} [{fmt_seconds(s['min'])}-{fmt_seconds(s['max'])}]"

    def baseline_comparisons(self, base):
        """Every variant against one baseline of the same run."""
        out = []
        for v in self.variants:
            if v != base:
                cs, _ = compare_sides(self.data.results, base, self.data.results, v, self.alpha)
                out += cs
        return out

    # --- sections ----------------------------------------------------------------------

    def header(self):
        m, plan, d = self.data.meta, self.data.plan, self.data
        git = m.get("git") if isinstance(m.get("git"), dict) else {}
        rev = f"{git.get('rev') or 'unknown'}{' (with uncommitted changes)' if git.get('dirty') else ''}"
        points = plan.get("points", [])
        ok = sum(1 for p in points if d.status.get(p["id"], {}).get("ok"))
        rows = [("started", m.get("started", "?")), ("finished", m.get("finished", "not finished")),
                ("command", f"`{m.get('command', '?')}`"),
                ("CPU", f"{m.get('cpu_model', '?')} ({m.get('cpus_usable', '?')} usable of "
                        f"{m.get('cpus_online', '?')} online)"),
                ("kernel", m.get("kernel", "?")), ("compiler", m.get("compiler", "?")),
                ("git revision", rev),
                ("sweep", f"{'full' if plan.get('full') else 'quick'}: "
                          f"{plan.get('repetitions', '?')} repetitions, min time "
                          f"{plan.get('min_time', '?')} s per repetition, seed {plan.get('seed', '?')}, "
                          f"{ok} of {len(points)} points done"),
                ("variants", ", ".join(self.variants)), ("workers", ", ".join(map(str, self.workers)))]
        out = [f"# schedbench run {d.run_id}", ""] + self.article() + self.answers() + self.overview() + [
               "## The run", "",
               "Times are wall time per iteration: the median over the repetitions, "
               "[min-max] beside it.  Raw data: `raw/` (`./run.py report --csv "
               f"{d.run_id}` writes `results.csv` and `samples.csv` from it; formats in "
               "results/README.md).", "",
               format_table(["", ""], rows, markdown=True)]
        if m.get("topology") and isinstance(m["topology"], str):
            out += ["<details><summary>topology (hwloc)</summary>", "", "```",
                    m["topology"].rstrip(), "```", "", "</details>", ""]
        return out

    def article(self):
        """The article's claims answered (harness/driver/article.py), with its figures."""
        rows = answer_rows(self.data, self.sims)
        out = ["## The article's claims, answered", "",
               format_table(ANSWER_HEADERS, rows, markdown=True)]
        for p in self.plots("article"):
            out += [self.plot_link(p), ""]
        return out

    def answers(self):
        """Three to six sentences on what the run shows, every number from the run: the
        claim over each baseline at the largest worker count (best variant, how many
        variant x scenario cells reach the band), where it holds and where not, and why
        (steals, parks, CPU per wall of the best and the baseline)."""
        usable = self.data.usable()
        scen = claim_scenarios(usable)
        bases = [b for b in BASELINES if b in self.variants]
        if not scen or not bases:
            return ["## Answers", "", "This run has no imbalance scenario measured against a "
                    "baseline, so it says nothing about the 30-50% claim.", ""]
        lo, hi = CLAIM_BAND
        table = self.data.index()
        w = max(self.workers)
        lines = []
        cand = [v for v in self.variants if v not in bases
                and not any(r.reference for r in usable if r.variant == v)]
        short = lambda b: scenario_label(b).replace(f"{CLAIM_PARAM} ", f"{CLAIM_PARAM}=")
        best_over, holds = {}, set()
        for base in bases:
            cells = []                       # (speedup, significant, variant, bench)
            for bench in scen:
                row = table.get(bench, {})
                if (base, w) not in row:
                    continue
                for v in cand:
                    if (v, w) in row:
                        c = compare_pair(row[(base, w)], row[(v, w)], self.alpha, v)
                        if c is not None:
                            cells.append((1.0 / c.ratio, c.significant, v, bench))
            if not cells:
                continue
            reach = [c for c in cells if c[0] >= lo and c[1]]
            holds |= {c[3] for c in reach}
            best = max(cells)
            best_over[base] = best
            lines.append(
                f"Over `{base}` at {workers_label(w)}, {len(reach)} of {len(cells)} variant x "
                f"scenario cells reach {lo:.1f}x or more with a significant difference; the "
                f"best is {best[2]} with {best[0]:.2f}x on {short(best[3])}"
                f"{'' if best[1] else ' (not significant)'}.")
        if best_over:
            base, best = next(iter(best_over.items()))
            row = table[best[3]]
            why = []
            for who in (best[2], base):
                r = row[(who, w)]
                parts = []
                for metric, what in (("steals", "steals"), ("parks", "parks")):
                    m = r.summary(metric)["median"]
                    if m is not None:
                        parts.append(f"{m:.3g} {what}")
                cpu = r.summary(CPU_PER_WALL)["median"]
                if cpu is not None:
                    parts.append(f"{cpu:.2f} cores busy (CPU/wall)")
                if parts:
                    why.append(f"{who}: {', '.join(parts)} per iteration")
            if why:
                lines.append(f"Why, on {short(best[3])} at {workers_label(w)}: "
                             + "; ".join(why) + ".")
        claim = (f"A speedup of {lo:.1f}x or more (significant, over at least one baseline, "
                 f"at {workers_label(w)})")
        if holds:
            rest = [b for b in scen if b not in holds]
            lines.append(f"{claim} holds on {len(holds)} of {len(scen)} imbalanced scenarios "
                         f"({'; '.join(short(b) for b in sorted(holds))})"
                         + (f", not on {'; '.join(short(b) for b in rest)}." if rest else "."))
        else:
            lines.append(f"{claim} holds on none of the {len(scen)} imbalanced scenarios.")
        usable_cpus = self.data.meta.get("cpus_usable")
        if w < 4:
            lines.append(f"This run went up to {workers_label(w)} ({usable_cpus} usable CPUs): "
                         "measure more workers on a bigger machine (`make bundle`) or in "
                         "simulated time (`./run.py simulate`"
                         f"{'; the SIMULATED answer below' if self.sim else ''}).")
        return ["## Answers", "", " ".join(lines[:6]), ""] + self.simulated_answer(short)

    def simulated_answer(self, short):
        """The claim on the simulated companion at its largest worker count: per baseline,
        how many variant x scenario cells reach the band, and the best.  Ratios of
        simulated medians, no significance test (the simulation is deterministic: its
        repetitions differ only by the state the one before left)."""
        sim = self.sim
        if sim is None:
            return []
        scen = claim_scenarios(sim.usable())
        if not scen or not sim.workers():
            return []
        lo, hi = CLAIM_BAND
        w, table = max(sim.workers()), sim.index()
        bases = [b for b in BASELINES if b in sim.variants()]
        cand = [v for v in sim.variants() if v not in bases]
        parts = []
        for base in bases:
            cells = []
            for bench in scen:
                row = table.get(bench, {})
                tb = median_time(row.get((base, w)))
                for v in cand:
                    tv = median_time(row.get((v, w)))
                    if tb and tv:
                        cells.append((tb / tv, v, bench))
            if not cells:
                continue
            best = max(cells)
            parts.append(f"over `{base}`, {sum(c[0] >= lo for c in cells)} of {len(cells)} "
                         f"variant x scenario cells are {lo:.1f}x or faster "
                         f"({sum(lo <= c[0] <= hi for c in cells)} in the {lo:.1f}-{hi:.1f}x band; "
                         f"best {best[1]} {best[0]:.2f}x on {short(best[2])})")
        if not parts:
            return []
        model = sim.meta.get("model", "?")
        where = os.path.relpath(sim.run_dir, os.path.dirname(os.path.abspath(self.path)))
        return ["**SIMULATED** on the machine model `%s` (%s) at %s: %s. From [`%s`](%s), "
                "the simulated companion of this run (ratios of simulated medians; its error "
                "against measured runs is known only where both exist: `results/validation/`); "
                "the claim figures draw it dashed." % (
                    model, sim.meta.get("model_description", ""), workers_label(w),
                    "; ".join(parts), os.path.basename(sim.run_dir), where), ""]

    def overview(self):
        """The one-look heat map (over the first baseline), the others named."""
        maps = self.plots("heatmap")
        if not maps:
            return []
        return (["## Overview", "", self.plot_link(maps[0]), ""]
                + (["Over the other baselines: " + ", ".join(self.plot_link(p, embed=False)
                                                             for p in maps[1:]), ""]
                   if maps[1:] else []))

    def problems(self):
        out = ["## Problems", ""]
        for pid, st in sorted(self.data.failed_points().items()):
            out.append(f"- point `{pid}` failed: {st.get('message', '?')}")
        for r in self.data.results:
            if r.errors:
                out.append(f"- wrong answer / error: `{r.benchmark}` on {r.variant} with "
                           f"{r.workers} workers: {r.errors[0]} ({len(r.errors)} of "
                           f"{len(r.entries)} repetitions; not plotted)")
        for path, reason in self.data.skipped:
            out.append(f"- unreadable result file skipped: {reason}")
        done = {pid for pid, st in self.data.status.items() if st.get("ok")}
        missing = [p["id"] for p in self.data.plan.get("points", []) if p["id"] not in done
                   and p["id"] not in self.data.status]
        if missing:
            out.append(f"- {len(missing)} point(s) not run yet (resume with "
                       f"`./run.py run --resume {self.data.run_id}`)")
        if len(out) == 2:
            out.append("None: every point ran, no wrong answers, no unreadable files.")
        return out + [""]

    def claim(self):
        """The imbalance workload's speedups over the baselines against the 30-50% band."""
        benches = sorted({r.benchmark for r in self.data.usable() if CLAIM_PARAM in r.params})
        bases = [b for b in BASELINES if b in self.variants]
        if not benches or not bases:
            return []
        lo, hi = CLAIM_BAND
        out = ["## The 30-50% claim (imbalance workload)", "",
               f"Speedup = baseline median time / variant median time; `*` = significant at "
               f"alpha={self.alpha:g}.  The claim is a speedup of {lo:.2f}-{hi:.2f}x over a "
               "traditional thread pool.", ""]
        for base in bases:
            comps = {(c.benchmark, c.workers, c.variant.split(" -> ")[1]): c
                     for c in self.baseline_comparisons(base) if c.benchmark in benches}
            cols = [v for v in self.variants if v != base]
            rows, counts = [], dict(below=0, band=0, above=0)
            for bench in benches:
                for w in self.workers:
                    cells = []
                    for v in cols:
                        c = comps.get((bench, w, v))
                        if c is None:
                            cells.append("")
                            continue
                        speedup = 1.0 / c.ratio
                        if w > 1:
                            counts["below" if speedup < lo else "band" if speedup <= hi
                                   else "above"] += 1
                        cells.append(f"{speedup:.2f}x{'*' if c.significant else ''}")
                    if any(cells):
                        rows.append([display_name(bench), w] + cells)
            if not rows:
                continue
            out += [f"Over `{base}`, with 2 or more workers: {counts['band']} in the band, "
                    f"{counts['above']} above {hi:.2f}x, {counts['below']} below {lo:.2f}x "
                    "(variant x benchmark cells).", "",
                    format_table(["benchmark", "workers"] + cols, rows, markdown=True)]
        for p in self.plots("claim"):
            out += [self.plot_link(p), ""]
        figures = self.plots("imbalance")
        if figures:
            out += ["Against the imbalance factor: "
                    + ", ".join(self.plot_link(p, embed=False) for p in figures), ""]
        return out

    def workloads(self):
        out = []
        for workload in sorted({r.workload for r in self.data.results}):
            results = [r for r in self.data.results if r.workload == workload]
            cells = {(r.benchmark, r.variant, r.workers): r for r in results}
            rows = []
            for bench in sorted({r.benchmark for r in results}):
                for v in self.variants:
                    row = [self.cell(cells.get((bench, v, w))) for w in self.workers]
                    if any(row):
                        rows.append([display_name(bench), v + (" (reference)" if any(
                            r.reference for r in results if r.variant == v) else "")] + row)
            out += [f"## {workload}", "",
                    format_table(["benchmark", "variant"] + [workers_label(w) for w in self.workers],
                                 rows, markdown=True)]
            figures = [p for kind in ("time", "metg", "why") for p in self.plots(kind, workload)]
            if figures:
                out += [f"Figures (`./run.py plot {self.data.run_id}` draws them into "
                        f"plots/{self.data.run_id}/): "
                        + ", ".join(self.plot_link(p, embed=False) for p in figures), ""]
        return out

    def significance(self):
        out = []
        for base in [b for b in BASELINES if b in self.variants]:
            comps = self.baseline_comparisons(base)
            if not comps:
                continue
            sig = [c for c in comps if c.significant]
            rows = [[display_name(c.benchmark), c.workers, c.variant.split(" -> ")[1],
                     f"{1.0 / c.ratio:.3f}x",
                     fmt_p(c.p)] for c in sig]
            out += [f"## Significant differences against `{base}`", ""]
            out += [" ".join(significance_notes(comps, self.alpha)), ""]
            if rows:
                out.append(format_table(["benchmark", "workers", "variant", f"speedup over {base}",
                                         "p"], rows, markdown=True))
            figures = [p for p in self.plots("speedup") if f"_vs_{base}_" in p["name"]]
            if figures:
                out += ["Figures: " + ", ".join(self.plot_link(p, embed=False) for p in figures), ""]
        return out

    def render(self):
        parts = self.header() + self.problems() + self.claim() + self.workloads() + self.significance()
        if not self.manifest.get("plots"):
            parts += ["", f"(No plots: run `./run.py plot {self.data.run_id}`.)"]
        return "\n".join(parts).rstrip() + "\n"


def claim_scenarios(results):
    """The imbalanced scenarios of the claim workload among `results`, sorted."""
    return sorted({r.benchmark for r in results if r.workload == CLAIM_WORKLOAD
                   and r.params.get(CLAIM_PARAM) not in (None, "0")})


def median_time(result):
    """The median time of one result, or None for a missing one."""
    return result.summary()["median"] if result is not None else None


def make_plots_and_report(data, root, alpha, plots=True, report_path=None):
    """Plots (when gnuplot is there; otherwise a warning) and REPORT.md; returns the
    report's path."""
    manifest = None
    sims = load_companions(data)
    sim = sims[0] if sims else None
    if plots:
        try:
            manifest = write_plots(data, plots_dir(root, data.run_id), Gnuplot(), sims)
        except UsageError as e:
            warn(f"{e}; the report has no plots")
    else:
        manifest = read_manifest(plots_dir(root, data.run_id))
    path = report_path or os.path.join(data.run_dir, "REPORT.md")
    write_output(path, Report(data, manifest, alpha, path, root, sim, sims).render())
    return path
