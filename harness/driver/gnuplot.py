"""Rendering the figures: the gnuplot executable and its terminals, and plots/<run-id>/
with every figure's .gp, .dat, SVG, PNG and the plots.json manifest; a simulated run's
own figures (write_simulated_plots)."""

import concurrent.futures
import contextlib
import os
import shutil

from .config import ROOT, UsageError, warn
from .files import atomic_write_json, atomic_write_text, ensure_dir, read_json
from .fmt import now_iso
from .article import figures as article_figures
from .claimfigs import ClaimPlots
from .plots import PlotBuilder
from .simfigs import simulated_speedup_plots
from .proc import last_line, run_capture, usable_cpus
from .rundata import load_run, medians, read_meta


class Gnuplot:
    """The gnuplot executable and the output terminals it has (svg, pngcairo or png)."""

    def __init__(self):
        exe = os.environ.get("GNUPLOT") or "gnuplot"
        self.exe = shutil.which(exe)
        if not self.exe:
            raise UsageError(f"gnuplot not found ('{exe}'): install gnuplot-nox "
                             "(apt-get install gnuplot-nox) or set GNUPLOT")
        rc, out, err = run_capture([self.exe, "-e", 'set print "-"; print GPVAL_TERMINALS'])
        available = set(out.split()) if rc == 0 else set()
        self.terminals = []
        if "svg" in available:
            self.terminals.append(("svg", "set terminal svg size {w},{h} dynamic noenhanced"
                                          " background \"#ffffff\""))
        if "pngcairo" in available:
            self.terminals.append(("png", "set terminal pngcairo size {w},{h} noenhanced"
                                          " background \"#ffffff\""))
        elif "png" in available:
            self.terminals.append(("png", "set terminal png size {w},{h} noenhanced truecolor"
                                          " background \"#ffffff\""))
        if not self.terminals:
            raise UsageError(f"{self.exe} has neither the svg nor the png terminal"
                             f" ({last_line(err, 'no terminal list')})")

    def render(self, directory, plot):
        """Run the plot's script in directory; None on success, else the error line."""
        rc, _, err = run_capture([self.exe, plot.name + ".gp"], timeout=120, cwd=directory)
        if rc != 0:
            return last_line(err, f"gnuplot exit status {rc}")
        return None


def plots_dir(root, run_id):
    return os.path.join(root, "plots", run_id)


def read_manifest(out_dir):
    """plots.json of a plot directory, keeping only entries of the shape the report and
    write_plots use; None when there is none."""
    manifest = read_json(os.path.join(out_dir, "plots.json"))
    if not isinstance(manifest, dict):
        return None
    entries = manifest.get("plots")
    text = ("name", "kind", "title", "script", "data")
    manifest["plots"] = [
        e for e in (entries if isinstance(entries, list) else [])
        if isinstance(e, dict) and all(isinstance(e.get(k), str) for k in text)
        and isinstance(e.get("workload", ""), str)
        and isinstance(e.get("files"), list) and all(isinstance(f, str) for f in e["files"])]
    return manifest


def write_scripts(out_dir, plots, gnuplot):
    """Each figure's .dat and its .gp (one block per output format) into out_dir."""
    for p in plots:
        atomic_write_text(os.path.join(out_dir, p.name + ".dat"), p.data)
        atomic_write_text(os.path.join(out_dir, p.name + ".gp"), p.script(gnuplot.terminals))


def write_plots(data, out_dir, gnuplot, sims=(), against=None):
    """Write every plot's .dat and .gp into out_dir, render them, and write plots.json
    (the manifest the report reads).  sims: simulated runs beside the measured one (the
    first drawn dashed in the claim figures; each a panel of the article figure);
    against: a variant to draw a heat map over besides the baselines.  Returns the
    manifest."""
    ensure_dir(out_dir, "plot directory")
    manifest_path = os.path.join(out_dir, "plots.json")
    old = read_manifest(out_dir) or {}
    for entry in old.get("plots", []):
        for f in entry["files"] + [entry["script"], entry["data"]]:
            if f and os.path.basename(f) == f:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(out_dir, f))
    sims = list(sims or ())
    plots = (article_figures(data, sims) + ClaimPlots(data, sims[0] if sims else None,
                                                      against).build()
             + PlotBuilder(data).build())
    write_scripts(out_dir, plots, gnuplot)
    workers = min(4, usable_cpus())
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        failures = list(pool.map(lambda p: gnuplot.render(out_dir, p), plots))
    entries = []
    for p, failure in zip(plots, failures):
        if failure:
            warn(f"gnuplot failed on {os.path.join(out_dir, p.name + '.gp')}: {failure}")
        files = [f"{p.name}.{ext}" for ext, _ in gnuplot.terminals
                 if os.path.exists(os.path.join(out_dir, f"{p.name}.{ext}"))]
        entries.append(dict(name=p.name, kind=p.kind, title=p.title, benchmark=p.benchmark,
                            workload=p.workload, script=p.name + ".gp", data=p.name + ".dat",
                            files=files, error=failure))
    manifest = dict(run_id=data.run_id, run_dir=os.path.basename(os.path.normpath(data.run_dir)),
                    written=now_iso(), plots=entries)
    atomic_write_json(manifest_path, manifest)
    return manifest


def write_simulated_plots(run_dir, out_root=None, echo=print):
    """Render a simulated run's figures (simfigs.simulated_speedup_plots) with their .gp and
    .dat into plots/<run-id>/, or into the run's own plots/ when it lies outside
    results/.  Without gnuplot they are skipped with a message (the numbers are in
    SIMULATED.md).  Returns the files rendered."""
    try:
        gnuplot = Gnuplot()
    except UsageError:
        echo("plots: gnuplot not found; skipped")
        return []
    meta = read_meta(run_dir)
    # a run under results/ gets plots/<run-id>/; one written elsewhere (--out) keeps its
    # plots beside it
    results = os.path.join(ROOT, "results")
    if out_root is None:
        inside = os.path.abspath(run_dir).startswith(results + os.sep)
        out_root = os.path.join(ROOT, "plots") if inside else os.path.join(run_dir, "plots")
    out_dir = os.path.join(out_root, meta["run_id"])
    os.makedirs(out_dir, exist_ok=True)
    made = []
    data = load_run(run_dir)
    plots = simulated_speedup_plots(medians(run_dir, data), meta["model"], data.roles())
    write_scripts(out_dir, plots, gnuplot)
    for p in plots:
        failure = gnuplot.render(out_dir, p)
        if failure:
            echo("plots: gnuplot failed for %s: %s" % (p.benchmark, failure))
            continue
        made += [os.path.join(out_dir, f"{p.name}.{ext}") for ext, _ in gnuplot.terminals]
    return made
