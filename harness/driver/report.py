"""REPORT.md of a run, written to be read to the end: what the pools are and what a
bracket is, the answers to the article's claims as a table, then one short section per
question with its figure, the A/A row, the statistics they rest on, the times, the run
and its problems.  Every comparison is the run's compare.Comparison (families.py: one
estimate, one bracket, one verdict each); they all go to differences.csv beside the
report.

A simulated run (./run.py simulate) gets SIMULATED.md instead (write_simulated): its
medians beside Brent's bound on each speedup."""

import os

from . import compare as cmp
from . import batching, families, targetfile
from .answers import ANSWER_HEADERS, answer_rows
from .article import METRIC as ARTICLE_METRIC, first_setting, panels, settings
from .claimfigs import scenario_label
from .config import (AA_VARIANT, ARTICLE_TITLE, CLAIM_BAND, CLAIM_PARAM, CLAIM_WORKLOAD,
                     UsageError, warn)
from .files import atomic_write_text, write_output
from .fmt import fmt_seconds, format_table
from .gbjson import display_name
from .gnuplot import Gnuplot, plots_dir, read_manifest, write_plots
from .plots import workers_label
from .rundata import (CPU_PER_WALL, WHY_COUNTERS, load_companions, load_run, medians, read_meta,
                      why_counters)
from .stats import brent_time
from .validate import errors_beside


class Report:
    """The Markdown report of one run (and its simulated companions, `sims`)."""

    def __init__(self, data, manifest, path, root, sims=(), against=None):
        self.data, self.path = data, path
        self.sims = list(sims)
        self.manifest = manifest or {}
        self.plot_dir = plots_dir(root, data.run_id)
        self.variants = data.variants()
        self.workers = data.workers()
        self.top = max(self.workers) if self.workers else None
        self.table = data.index()
        self.reference = {r.variant for r in data.results if r.reference}
        self.roles = data.roles()
        self.pools = self.roles.pools(self.variants)
        self.article_pool = self.roles.article_pool(self.variants)
        if against and against not in self.variants:
            raise UsageError(f"--against {against}: not a variant of {data.run_id} "
                             f"(it has {', '.join(self.variants)})")
        self.comparisons = families.of(data, against)
        self.against = self.comparisons.against
        self.diffs = self.comparisons.all

    # --- helpers -----------------------------------------------------------------------

    def plots(self, kind=None, workload=None, name=None):
        return [p for p in self.manifest.get("plots", [])
                if p.get("files") and (kind is None or p.get("kind") == kind)
                and (workload is None or p.get("workload") == workload)
                and (name is None or p.get("name") == name)]

    def plot_link(self, entry, embed=True):
        """Markdown for one plot: its PNG embedded (the published form keeps exactly the
        embedded figures, harness/driver/publish.py), or its name."""
        files = entry["files"]
        png = next((f for f in files if f.endswith(".png")), files[0])
        if not embed:
            return f"`{png}`"
        rel = os.path.relpath(os.path.join(self.plot_dir, png),
                              os.path.dirname(os.path.abspath(self.path)))
        return f"![{entry['title']}]({rel})"

    def pool(self, variant):
        return self.roles.pool_name(variant)

    def columns(self, variants):
        return [self.roles.column_name(v, v in self.reference) for v in variants]

    def others(self, base):
        return [v for v in self.variants if v != base]

    def family(self, name):
        return {(c.benchmark, c.variant, c.workers): c for c in self.comparisons.family(name)}

    # --- sections ----------------------------------------------------------------------

    def header(self):
        m = self.data.meta
        sims = ", ".join(f"`{s.meta.get('model', '?')}` ([{s.run_id}]("
                         f"{os.path.relpath(s.run_dir, os.path.dirname(os.path.abspath(self.path)))}))"
                         for s in self.sims)
        lines = [f"# schedbench run {self.data.run_id}", "",
                 f"{len(self.variants)} rows ({', '.join(self.variants)}) at "
                 f"{', '.join(workers_label(w) for w in self.workers)}, measured by "
                 f"`{m.get('command', '?')}` on {m.get('cpu_model', '?')} "
                 f"({m.get('cpus_usable', '?')} usable CPUs)"
                 + (f"; SIMULATED companions on {sims}" if sims else "") + ".", ""]
        return lines

    def intro(self):
        """What the pools are and what the numbers mean, before any table names them."""
        pools = [f"`{b}` {self.roles.words(b)} ({self.roles.does(b)})" for b in self.pools]
        out = ["The article is " + ARTICLE_TITLE + " (seed 003). Its \"traditional thread "
               "pool\" is one whose threads keep queues of their own; "
               + (f"{len(pools)} {'pools' if len(pools) > 1 else 'pool'} without work "
                  f"stealing stand{'' if len(pools) > 1 else 's'} in for what a thread-pool "
                  f"user has, each named for what it is: {', '.join(pools)}"
                  if pools else "no pool without work stealing is in this run") + ".", "",
               f"Every ratio is printed as `estimate [low-high]`: the bracket is the "
               f"{cmp.BRACKET}: within a family of m comparisons each bracket is at the "
               f"level 1 - 0.05/m, so that all of them hold together with 95% "
               "probability. A verdict is read off the bracket: **better** or **worse** "
               "when the whole bracket lies on one side of the threshold (1 unless a "
               "target says otherwise), else undecided (\"no measurable difference\" at "
               "1). " + self.order_sentence(), ""]
        return out

    def order_sentence(self):
        plan = self.data.plan
        il = plan.get("interleave") if isinstance(plan.get("interleave"), dict) else None
        if il:
            return (f"The repetitions were interleaved: {il.get('order', 'in rounds')}; "
                    f"seed {plan.get('seed', '?')}.")
        return ("The repetitions of each point ran in one block per variant (a run from "
                "before interleaving): a drift of the machine between blocks shows as a "
                "difference.")

    def answers(self):
        out = ["## Answers", "",
               format_table(ANSWER_HEADERS, answer_rows(self.data, self.sims), markdown=True)]
        for p in self.plots("article", name="article"):
            out += [self.plot_link(p), ""]
        return out

    def targets(self):
        """The issues' performance targets against what users would pick, when the run
        has them (./run.py targets)."""
        doc, why = targetfile.read(self.data.run_dir)
        if doc is None:
            return []
        stale = targetfile.stale(doc, self.data.meta.get("git"))
        return ["## Against what users would pick", "",
                "The project's performance targets, each measured side by side against the "
                "library or textbook code a user would pick instead (harness/ref/README.md): "
                + targetfile.summary(doc, errors_beside(self.data.run_dir))
                + f"; measured by `./run.py targets` "
                f"({doc.get('started', '?')} to {doc.get('finished', '?')})"
                + (f". **Not of this run's code: {stale}.**" if stale else ".") + "", "",
                format_table(targetfile.TABLE_HEADERS,
                             targetfile.table_rows(doc, errors_beside(self.data.run_dir)),
                             markdown=True)] + self.tbb_note() + [""]

    def article(self):
        """The article's experiment in full at the largest worker count: per delay d, the
        ideal and every variant's speedup over the article's pool."""
        setting = first_setting(self.data)
        fam = self.family("article")
        if setting is None or not fam:
            return []
        out = ["## The article's experiment", "",
               f"Equal tasks, one submitter per worker, {setting.late_pct}% of them late by "
               "d x W/P (workloads/README.md, `article`); speedup = "
               f"{self.pool(self.article_pool)} time / variant time over the experiment's window "
               f"(`{ARTICLE_METRIC}`), at {workers_label(self.top)}, with its bracket "
               f"(family `article`, {len(fam)} comparisons). Ideal: a perfect "
               "balancer, (1 + d) / max(1, d + f). Stolen: the share of the tasks that "
               "moved by stealing (the mechanism; 0 for the pools). A setting measured at "
               "one d is a row here, not a curve.", ""]
        for s, benches in settings(self.table).items():
            cols = [v for v in self.others(self.article_pool)
                    if any((b, v, self.top) in fam for b in benches.values())]
            rows = []
            p = next((q for q in panels(self.data, [], s)), None)
            for d in sorted(benches):
                row = [f"{d:g}", f"{p.ideal(d):.2f}x" if p else "-"]
                for v in cols:
                    diff = fam.get((benches[d], v, self.top))
                    stolen = p.stolen_share(v, d) if p else None
                    row.append((diff.cell() if diff else "-")
                               + (f", {stolen * 100:.0f}% stolen" if stolen else ""))
                rows.append(row)
            out += [f"**{s.label()}**", "",
                    format_table(["d", "ideal"] + [f"{c} {cmp.BRACKET_SHORT}"
                                                   for c in self.columns(cols)], rows,
                                 markdown=True)]
        for p in self.plots("article"):
            if p["name"] != "article":
                out += [self.plot_link(p), ""]
        return out

    def imbalance(self):
        """The imbalance workload's scenarios (uneven tasks from foreign submitters):
        every variant over each pool at the largest worker count."""
        scen = claim_scenarios(self.data.usable())
        out = []
        for base in self.pools:
            fam = self.family(families.imbalance_family(base))
            top = {k: c for k, c in fam.items() if k[2] == self.top}
            if not top:
                continue
            cols = self.others(base)
            rows = []
            for bench in sorted({k[0] for k in top}):
                rows.append([scenario_label(display_name(bench))]
                            + [top[(bench, v, self.top)].cell()
                               if (bench, v, self.top) in top else "-" for v in cols])
            lo, _ = CLAIM_BAND
            stealing = [c for c in top.values() if c.variant not in self.pools
                        and c.variant not in self.reference]
            reach = [c for c in stealing if c.verdict == cmp.BETTER and c.low >= lo]
            faster = [c for c in stealing if c.verdict == cmp.BETTER]
            out += [f"Over {self.pool(base)}: of {len(stealing)} stealing-variant x scenario "
                    f"cells, {len(faster)} are decided faster, {len(reach)} of them with the "
                    f"whole bracket at {lo:.1f}x or more (family "
                    f"`{families.imbalance_family(base)}`, {len(fam)} comparisons at every "
                    "worker count).", "",
                    format_table(["scenario"] + [f"{c} {cmp.BRACKET_SHORT}"
                                                 for c in self.columns(cols)], rows,
                                 markdown=True)]
        if not out:
            return []
        head = ["## The imbalance scenarios", "",
                f"Task Bench's load imbalance: uneven tasks ({CLAIM_PARAM} = the spread of "
                "their sizes) from foreign pthread submitters (workloads/README.md, "
                f"`imbalance`); speedup = pool time / variant time at {workers_label(self.top)} "
                f"with its bracket, {len(scen)} imbalanced scenarios; **better**/**worse**: "
                "decided."] + self.tbb_note() + [""]
        for p in self.plots("claim", name="claim_summary"):
            head += [self.plot_link(p), ""]
        return head + out

    def tbb_note(self):
        """The oneTBB row at one worker is not one thread: say so with what it kept busy."""
        busy = [r.summary(CPU_PER_WALL)["median"] for r in self.data.usable()
                if r.variant == "tbb" and r.workers == 1 and r.summary(CPU_PER_WALL)["n"]]
        busy = [b for b in busy if b is not None]
        if not busy or max(busy) < 1.2:
            return []
        return ["", f"oneTBB's row at 1 worker is not one thread: it kept up to {max(busy):.2f} "
                "cores busy (process CPU / wall time): harness/ref/tbb.cc lets global_control "
                "allow N + 1 threads and every submitter thread enter the arena (task_arena::"
                "execute), so the external threads run or wait actively beside the worker. "
                "Comparisons with it at 1 worker are unequal; at 2 workers and above they are "
                "not."]

    def aa(self):
        """The A/A row: one variant twice, under two labels, in the same rounds."""
        comps = self.comparisons.family(families.AA)
        if not comps:
            return []
        decided = [c for c in comps if c.decided]
        worst = max(comps, key=lambda c: abs(c.ratio - 1))
        return ["## The A/A row", "",
                f"`{AA_VARIANT}` ran twice in every interleaved round, the second time under "
                f"the label `{comps[0].variant}`: the same binary, so every difference between "
                f"the two is the method's. **{len(decided)} of {len(comps)}** A/A comparisons "
                "are decided (family `A/A`; expected 0); the largest estimate "
                f"{worst.text()} ({display_name(worst.benchmark)}, "
                f"{workers_label(worst.workers)})."
                + ("" if not decided else " Decided: " + ", ".join(
                    f"{display_name(c.benchmark)} at {workers_label(c.workers)} {c.text()}"
                    for c in decided[:5])), ""]

    def why(self):
        """Why a variant wins, on the article's case: steals, parks, CPU per wall time."""
        setting = first_setting(self.data)
        if setting is None:
            return []
        ps = panels(self.data, [], setting)
        if not ps:
            return []
        p = ps[0]
        d = p.peak_d()
        bench = p.benches[d]
        rows = []
        for v in self.variants:
            r = self.table.get(bench, {}).get((v, self.top))
            if r is None:
                continue
            cells = []
            for metric in ("stolen_tasks", "steals", "parks", CPU_PER_WALL):
                m = r.summary(metric)["median"]
                cells.append("-" if m is None else f"{m:.3g}" if metric != CPU_PER_WALL
                             else f"{m:.2f}")
            rows.append(self.columns([v]) + cells)
        out = ["## Why a variant wins", "",
               f"The article's case at d = {d:g}, {workers_label(self.top)}: tasks stolen, "
               "successful steals and parks per iteration, and the cores kept busy (process "
               "CPU time / wall time): a stealing variant keeps both cores busy while the "
               "late submitter sleeps; the per-thread-queue pool leaves one idle.", "",
               format_table(["variant", "tasks stolen", "steals", "parks", "CPU / wall"], rows,
                            markdown=True)]
        fig = [f for f in self.plots("why") if f.get("benchmark") == bench]
        if fig:
            out += [self.plot_link(fig[0]), ""]
        return out

    def overview(self):
        if not self.against:
            return []
        name = families.all_family(self.against, self.top)
        tested = self.comparisons.family(name)
        dec = [c for c in tested if c.decided]
        out = ["## Every benchmark against " + self.pool(self.against), "",
               f"{len(dec)} of {len(tested)} variant x benchmark comparisons with "
               f"{self.pool(self.against)} at {workers_label(self.top)} are decided (family "
               f"`{name}`: the heat map's stars); every comparison at every worker count, "
               "with its bracket, p and verdict, is in [differences.csv](differences.csv). "
               "To compare against a variant of your own: "
               f"`./run.py report {self.data.run_id} --against VARIANT`.", ""]
        maps = self.plots("heatmap", name=f"heatmap_vs_{self.against}")
        if maps:
            out += [self.plot_link(maps[0]), ""]
        return out

    def statistics(self):
        reps = sorted({len(r.valid) for r in self.data.usable()})
        rows = []
        for name, (n, dec, level) in cmp.families_summary(self.diffs).items():
            rows.append([f"`{name}`", n, dec, f"{level:.5g}", f"{cmp.ALPHA / n:.2g}"])
        floor = cmp.smallest_p(reps[0]) if reps else None
        return ["## How the numbers are made", "",
                "Times are medians over the repetitions "
                f"({', '.join(map(str, reps)) or '-'} per point). A ratio is the "
                "Hodges-Lehmann estimate on log times (the median of the pairwise ratios of "
                f"the repetitions); its bracket the {cmp.BRACKET}: the interval that inverts "
                "the two-sided Mann-Whitney U test, at 1 - 0.05/m in a family of m "
                "(harness/driver/compare.py says why). " + self.order_sentence()
                + (f" With {reps[0]} repetitions a side the smallest p the exact test can "
                   f"give is {floor:.2g}; a comparison is decidable in a family of m when "
                   "that is below 0.05/m." if floor else ""), "",
                format_table(["family", "comparisons", "decided", "level of each bracket",
                              "p needed"], rows, markdown=True)]

    def times(self):
        """Median time of every benchmark at the largest worker count, per row."""
        if not self.top:
            return []
        cols = [v for v in self.variants if any((v, self.top) in c for c in self.table.values())]
        rows = []
        for bench, cells in sorted(self.table.items()):
            row = [display_name(bench)]
            for v in cols:
                r = cells.get((v, self.top))
                row.append(fmt_seconds(r.median()) if r else "")
            rows.append(row)
        return [f"## Times at {workers_label(self.top)}", "",
                "Median wall time per iteration (`./run.py plot` draws every worker count; "
                f"`./run.py report --csv {self.data.run_id}` writes results.csv).", "",
                format_table(["benchmark"] + self.columns(cols), rows, markdown=True)]

    def run_table(self):
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
                          f"{plan.get('repetitions', '?')} repetitions"
                          + (f" ({', '.join(sorted({str(p.get('repetitions')) for p in points if p.get('repetitions')}))} per point)"
                             if any(p.get('repetitions') for p in points) else "")
                          + f", min time {plan.get('min_time', '?')} s per repetition, seed "
                          f"{plan.get('seed', '?')}, {ok} of {len(points)} points done"),
                ("order", self.order_sentence())]
        out = ["## The run", "", format_table(["", ""], rows, markdown=True)]
        if m.get("topology") and isinstance(m["topology"], str):
            out += ["<details><summary>topology (hwloc)</summary>", "", "```",
                    m["topology"].rstrip(), "```", "", "</details>", ""]
        return out

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
        why = targetfile.read(self.data.run_dir)[1]
        if why:
            out.append(f"- targets record skipped: {why}")
        done = {pid for pid, st in self.data.status.items() if st.get("ok")}
        missing = [p["id"] for p in self.data.plan.get("points", []) if p["id"] not in done
                   and p["id"] not in self.data.status]
        if missing:
            out.append(f"- {len(missing)} point(s) not run yet (resume with "
                       f"`./run.py run --resume {self.data.run_id}`)")
        if len(out) == 2:
            out.append("None: every point ran, no wrong answers, no unreadable files.")
        return out + [""]

    def render(self):
        parts = (self.header() + self.intro() + self.answers() + self.targets()
                 + self.article() + batching.report_lines(self.data, self.sims)
                 + self.imbalance() + self.aa() + self.why()
                 + self.overview() + self.statistics() + self.times() + self.run_table()
                 + self.problems())
        if not self.manifest.get("plots"):
            parts += [f"(No plots: run `./run.py plot {self.data.run_id}`.)"]
        return "\n".join(parts).rstrip() + "\n"


def claim_scenarios(results):
    """The imbalanced scenarios of the claim workload among `results`, sorted."""
    return sorted({r.benchmark for r in results if r.workload == CLAIM_WORKLOAD
                   and r.params.get(CLAIM_PARAM) not in (None, "0")})


def make_plots_and_report(data, root, plots=True, report_path=None, against=None):
    """Plots (when gnuplot is there; otherwise a warning), REPORT.md and differences.csv
    beside it; returns the report's path."""
    manifest = None
    sims = load_companions(data)
    if plots:
        try:
            manifest = write_plots(data, plots_dir(root, data.run_id), Gnuplot(), sims,
                                   against=against)
        except UsageError as e:
            warn(f"{e}; the report has no plots")
    else:
        manifest = read_manifest(plots_dir(root, data.run_id))
    path = report_path or os.path.join(data.run_dir, "REPORT.md")
    report = Report(data, manifest, path, root, sims, against)
    write_output(path, report.render())
    atomic_write_text(os.path.join(os.path.dirname(os.path.abspath(path)), "differences.csv"),
                      cmp.differences_csv(report.diffs))
    return path


def write_simulated(run_dir):
    """A simulated run's SIMULATED.md: per benchmark, each variant's simulated median per
    worker count, its speedup over its own 1-worker time, and Brent's bound
    (max(work_s / P, span_s)) beside it."""
    meta = read_meta(run_dir)
    data = load_run(run_dir)
    med = medians(run_dir, data)
    workers = sorted({k[1] for k in med})
    benches = sorted({k[2] for k in med})
    variants = sorted({k[0] for k in med})
    L = ["# SIMULATED run %s on machine model `%s`" % (meta["run_id"], meta["model"]), "",
         "Every number below is **simulated** (harness/sim, model `%s`: %s; %s), not measured. "
         "Its error against real runs on the machine where one is possible is in "
         "`results/validation/` (validate)." % (meta["model"], meta.get("model_description", ""),
                                                meta["topology"]), "",
         "Cell: simulated median time; in brackets the speedup over the same variant at 1 "
         "worker, then the bound on that speedup from Brent's lower bound on the time, "
         "T_P >= max(work / P, span): work = the task bodies' charged time in the same run, "
         "span = the workload's critical path at the model's costs (from its structure; "
         "where a workload does not state it, the bound is the work term alone and marked "
         "'work'). A variant far below its bound loses to scheduling, not to the workload. "
         "Under each table, why: the counters at the most workers simulated (medians over "
         "the repetitions).", ""]
    why = {(r.variant, r.benchmark): (r.workers, why_counters(r)) for r in
           sorted((r for r in data.results if not r.reference and r.valid), key=lambda r: r.workers)}
    for b in benches:
        L.append("## %s (simulated)" % b)
        L.append("")
        L.append("| variant | " + " | ".join("%d workers" % n for n in workers) + " |")
        L.append("|---|" + "---|" * len(workers))
        for v in variants:
            cells = []
            base = med.get((v, 1, b))
            for n in workers:
                r = med.get((v, n, b))
                if not r:
                    cells.append("-")
                    continue
                c = "%.3f ms" % (r["time_s"] * 1e3)
                if base:
                    sp = base["time_s"] / r["time_s"]
                    bound = ""
                    lb = brent_time(r.get("work_s"), r.get("span_s"), n)
                    if lb:
                        bound = ", bound %.2fx%s" % (base["time_s"] / lb,
                                                     "" if "span_s" in r else " work")
                    c += " (%.2fx%s)" % (sp, bound)
                cells.append(c)
            L.append("| %s | %s |" % (v, " | ".join(cells)))
        L.append("")
        rows = [(v,) + why[(v, b)] for v in variants if (v, b) in why]
        if rows:
            L.append("| why (simulated) | workers | " + " | ".join(n for n, _, _ in WHY_COUNTERS) + " |")
            L.append("|---|---|" + "---|" * len(WHY_COUNTERS))
            for v, n, c in rows:
                L.append("| %s | %d | %s |" % (v, n, " | ".join(
                    "-" if c[name] is None else "%.3g" % c[name] for name, _, _ in WHY_COUNTERS)))
            L.append("")
    atomic_write_text(os.path.join(run_dir, "SIMULATED.md"), "\n".join(L))
