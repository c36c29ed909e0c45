"""The policy map's cells, read from its runs (policymap.py): per cell the winner, its
margin over the runner-up with its bracket, the verdict, and the counters that explain
it; the held-out check of the simulator against the measured cells; the A/A row.

A cell's margin is a compare.Comparison (the one comparison of the driver): the
runner-up's time over the winner's (higher: a clearer win).  Measured: the
Hodges-Lehmann ratio of the two variants' repetitions with the family's simultaneous
95% interval (family MEASURED_FAMILY: every measured cell, Bonferroni).  SIMULATED: the
ratio of the nominal simulations, its range the sensitivity band (at each end of each
uncertain cost group, the best other candidate's time over the nominal winner's, below
1 where another variant wins there), widened by the here model's held-out error for the
form (compare.simulated).  The verdict is read off that range, against TIE (a margin
smaller than that is a tie, not a win: a winner by 0.1% is no finding):

    robust     the whole range lies above TIE: the winner wins, by more than a tie, at
               every end of the band or the interval
    fragile    the range reaches below TIE: the winner changes within the band or the
               interval, or it is tied with its runner-up somewhere in it
    undecided  no range can be made: too few repetitions for the family's level, or no
               band and no held-out error (a SIMULATED cell whose ends all failed)."""

import csv
import dataclasses
import io
import math
import os
import statistics

from . import compare as cmp
from .files import atomic_write_text, read_json
from .mapgrid import FORM_BY_KEY, form_of, grain_words
from .rundata import WHY_COUNTERS, load_bands, load_run, why_counters

MEASURED_FAMILY = "map: winner vs runner-up, measured"
TIE = 1.02          # a margin (runner-up / winner) below this is a tie
AA_FAMILY = "map: A/A"
ROBUST, FRAGILE, UNDECIDED = "robust", "fragile", "undecided"


def sim_family(model):
    return f"map: winner vs runner-up, SIMULATED {model}"


# the counters that explain a cell (rundata.WHY_COUNTERS)
COUNTERS, counters_of = WHY_COUNTERS, why_counters


def ranked(results, metric):
    """[(variant, median)] of {variant: Result} in the metric, fastest first."""
    out = [(v, r.median(metric)) for v, r in results.items() if r.values(metric)]
    return sorted(out, key=lambda x: (x[1], x[0]))


def form_metrics(benchmark, forms):
    return [f.metric for f, _ in form_of(benchmark, forms)]


@dataclasses.dataclass
class Cell:
    """One cell of the map and what decides it."""
    form: object
    grain: object               # ns, or None: the workload's own (a tree)
    workers: int
    machine: str                # "here" (measured) or the model
    simulated: bool
    benchmark: str
    metric: str
    medians: dict               # variant -> median in the metric
    references: set
    winner: str
    runner: str
    comparison: object          # compare.Comparison: runner-up / winner
    counters: dict              # variant -> COUNTERS
    flips: list = dataclasses.field(default_factory=list)   # [(end, its winner)]
    ends: int = 0               # band ends with both sides simulated

    @property
    def id(self):
        return f"{self.form.key}/{grain_words(self.grain).replace(' ', '')}/{self.workers}w/{self.machine}"

    @property
    def verdict(self):
        c = self.comparison
        if not c.decidable:
            return UNDECIDED
        return ROBUST if c.verdict == cmp.BETTER else FRAGILE

    @property
    def margin(self):
        return self.comparison.ratio

    def where(self):
        """'16 workers, SIMULATED epyc16' / '2 workers, measured'."""
        w = f"{self.workers} worker" + ("" if self.workers == 1 else "s")
        return f"{w}, SIMULATED {self.machine}" if self.simulated else f"{w}, measured"


def make_cell(form, grain, workers, machine, bench, results, metric, family, simulated):
    order = ranked(results, metric)
    if len(order) < 2:
        return None
    (winner, _), (runner, _) = order[0], order[1]
    labels = dict(benchmark=bench, workers=workers, base=runner, variant=winner, metric=metric)
    if simulated:
        c = cmp.simulated(family, order[1][1] / order[0][1], threshold=TIE, **labels)
    else:
        c = cmp.compare(family, results[runner].values(metric), results[winner].values(metric),
                        threshold=TIE, **labels)
    if c is None:
        return None
    return Cell(form, grain, workers, machine, simulated, bench, metric, dict(order),
                {v for v, r in results.items() if r.reference}, winner, runner, c,
                {v: counters_of(r) for v, r in results.items()})


def cells_of(data, forms, grains, machine, family, simulated, exclude=()):
    """The cells of one run (rundata.RunData): one per benchmark of a form and worker
    count, among the variants (and reference rows) that ran it, the A/A twin left out."""
    out = []
    twins = data.twins()
    for bench, table in sorted(data.index().items()):
        for form, grain in form_of(bench, forms):
            if grain is not None and grain not in grains:
                continue
            for w in sorted({w for _, w in table}):
                results = {v: r for (v, ww), r in table.items()
                           if ww == w and v not in twins and v not in exclude}
                cell = make_cell(form, grain, w, machine, bench, results, form.metric, family,
                                 simulated)
                if cell:
                    out.append(cell)
    return out


def band_cells(cells, run_dir, errors):
    """Give each SIMULATED cell of run_dir its band (bands.json) and the held-out error of
    its form (errors: {form key: fraction}), and the ends where another variant wins."""
    doc = read_json(os.path.join(run_dir, "bands.json")) or {}
    labels = [e for e in doc.get("ends") or [] if isinstance(e, str)]
    by_metric = {}
    out = []
    for cell in cells:
        if cell.metric not in by_metric:
            by_metric[cell.metric] = load_bands(run_dir, cell.metric)
        bands = by_metric[cell.metric]
        margins, flips = [cell.margin], []
        for label in labels:
            at = {v: bands.get((v, cell.workers, cell.benchmark), {}).get(label)
                  for v in cell.medians}
            at = {v: t for v, t in at.items() if t is not None and t > 0}
            if cell.winner not in at or len(at) < 2:
                continue
            best = min((t, v) for v, t in at.items() if v != cell.winner)
            margins.append(best[0] / at[cell.winner])
            if best[0] < at[cell.winner]:
                flips.append((label, best[1]))
        c = cell.comparison
        band = (min(margins), max(margins)) if len(margins) > 1 else None
        cell.comparison = cmp.simulated(c.family, c.ratio, band, errors.get(cell.form.key),
                                        threshold=c.threshold, note=band_note(len(margins) - 1, errors.get(cell.form.key)),
                                        **c.labels)
        cell.flips, cell.ends = flips, len(margins) - 1
        out.append(cell)
    return out


def band_note(ends, error):
    bits = [f"sensitivity band over {ends} ends" if ends else "no band"]
    bits.append(f"widened by the held-out error of the ratios {error:.1%}" if error is not None
                else "no held-out error for the form")
    return "; ".join(bits)


# --- the held-out check ----------------------------------------------------------------

@dataclasses.dataclass
class Heldout:
    cell: object                # the measured Cell
    errors: dict                # variant -> predicted / measured - 1
    predicted: dict             # variant -> the here model's median
    in_sample: bool             # a point of the cell fitted the here model's code costs

    @property
    def measured_winner(self):
        return min(self.errors, key=lambda v: (self.cell.medians[v], v))

    @property
    def predicted_winner(self):
        return min(self.predicted, key=lambda v: (self.predicted[v], v))

    @property
    def agree(self):
        return self.measured_winner == self.predicted_winner

    @property
    def median_abs(self):
        return statistics.median(abs(e) for e in self.errors.values())

    @property
    def worst(self):
        return max(self.errors.values(), key=abs)

    @property
    def ratio_errors(self):
        """Each other variant's time over the measured winner's, predicted against
        measured, - 1: the error of the ratios a margin is made of."""
        w = self.measured_winner
        return {v: (self.predicted[v] / self.predicted[w]) / (self.cell.medians[v] /
                                                              self.cell.medians[w]) - 1
                for v in self.errors if v != w}


def fitted_points(run_dir):
    """{(variant, workers, benchmark)} the here model's code costs were fitted to
    (machine.json's code_fit, calibrate.py): in-sample, never held out."""
    fit = (read_json(os.path.join(run_dir, "machine.json")) or {}).get("code_fit") or {}
    return {(fit.get("variant"), fit.get("workers"), b) for b in fit.get("measured_s") or {}}


def heldout_rows(measured_cells, sim):
    """The measured cells against their simulation on the here model (a RunData)."""
    fitted = fitted_points(sim.run_dir)
    table = sim.index()
    rows = []
    for cell in measured_cells:
        sims = {v: r for (v, w), r in table.get(cell.benchmark, {}).items()
                if w == cell.workers and r.values(cell.metric)}
        errors, predicted = {}, {}
        for v, r in sims.items():
            if v in cell.medians and v not in cell.references:
                predicted[v] = r.median(cell.metric)
                errors[v] = predicted[v] / cell.medians[v] - 1
        if len(errors) < 2:
            continue
        in_sample = any((v, cell.workers, cell.benchmark) in fitted for v in errors)
        rows.append(Heldout(cell, errors, predicted, in_sample))
    return rows


def form_errors(rows):
    """{form key: median |error| of the ratios} over the held-out (not in-sample) cells:
    how far the here model's time of a variant over the winner's is from the measured
    one.  A margin is such a ratio, so this, not the error of a time alone (which a
    ratio partly cancels), is what widens a SIMULATED range."""
    per = {}
    for row in rows:
        if not row.in_sample:
            per.setdefault(row.cell.form.key, []).extend(abs(e) for e in row.ratio_errors.values())
    return {k: statistics.median(v) for k, v in per.items() if v}


def aa_comparisons(data, cells):
    """The A/A twin over its original at every measured cell: none should be decided."""
    out = []
    for twin, original in data.twins().items():
        table = data.index()
        for cell in cells:
            a = table.get(cell.benchmark, {}).get((original, cell.workers))
            b = table.get(cell.benchmark, {}).get((twin, cell.workers))
            if a and b:
                c = cmp.compare(AA_FAMILY, a.values(cell.metric), b.values(cell.metric),
                                benchmark=cell.benchmark, workers=cell.workers, base=original,
                                variant=twin, metric=cell.metric)
                if c:
                    out.append(c)
    return cmp.close(out)


# --- the map -----------------------------------------------------------------------------

@dataclasses.dataclass
class MapData:
    map_dir: str
    settings: dict
    cells: list
    heldout: list
    errors: dict
    aa: list
    policies: dict              # variant -> the policy words its bench recorded
    hosts: dict                 # run name -> the hosts that ran its points
    runs: dict                  # run name -> its directory

    @property
    def map_id(self):
        return os.path.basename(os.path.normpath(self.map_dir))


def run_hosts(run_dir):
    hosts = set()
    for st in (read_json(os.path.join(run_dir, "status.json")) or {}).values():
        if isinstance(st, dict):
            hosts.update(h for h in [st.get("host")] + list(st.get("hosts") or []) if h)
    return sorted(hosts)


def load_map(map_dir, settings):
    """Every cell of a map directory (policymap.py's layout) as it stands."""
    from .policymap import HELDOUT, MEASURED, sim_dir
    forms = [FORM_BY_KEY[k] for k in settings["forms"]]
    sim_forms = [FORM_BY_KEY[k] for k in settings["sim_forms"]]
    runs, cells, heldout, aa, policies = {}, [], [], [], {}
    measured_dir = os.path.join(map_dir, MEASURED)
    measured = []
    if os.path.isdir(os.path.join(measured_dir, "raw")):
        data = load_run(measured_dir)
        runs[MEASURED] = measured_dir
        measured = cells_of(data, forms, settings["grains"], "here", MEASURED_FAMILY, False)
        cmp.close([c.comparison for c in measured])
        aa = aa_comparisons(data, measured)
        policies = {v: ctx.get("policy") for v, ctx in data.contexts.items() if ctx.get("policy")}
        held_dir = os.path.join(map_dir, HELDOUT)
        if os.path.isdir(os.path.join(held_dir, "raw")):
            runs[HELDOUT] = held_dir
            heldout = heldout_rows(measured, load_run(held_dir))
    errors = form_errors(heldout)
    cells += measured
    for model, _ in settings["models"]:
        sub = os.path.join(map_dir, sim_dir(model))
        if not os.path.isdir(os.path.join(sub, "raw")):
            continue
        runs[sim_dir(model)] = sub
        found = cells_of(load_run(sub), sim_forms, settings["sim_grains"], model,
                         sim_family(model), True)
        cells += band_cells(found, sub, errors)
    hosts = {name: run_hosts(d) for name, d in runs.items()}
    return MapData(map_dir, settings, cells, heldout, errors, aa, policies, hosts, runs)


CELL_HEADERS = ["cell", "form", "grain_us", "workers", "machine", "simulated", "benchmark",
                "metric", "winner", "runner_up", "margin", "low", "high", "verdict", "range",
                "flips", "ends", "variants"] + \
    [f"{side}_{name.replace(' ', '_').replace('-', '_')}" for side in ("winner", "runner_up")
     for name, _, _ in COUNTERS]


def cell_row(cell):
    c = cell.comparison
    num = lambda v: "" if v is None or not math.isfinite(v) else f"{v:.6g}"
    counters = [num(cell.counters.get(v, {}).get(name)) for v in (cell.winner, cell.runner)
                for name, _, _ in COUNTERS]
    return [cell.id, cell.form.key, "" if cell.grain is None else f"{cell.grain / 1000:g}",
            cell.workers, cell.machine, int(cell.simulated), cell.benchmark, cell.metric,
            cell.winner, cell.runner, num(c.ratio), num(c.low), num(c.high), cell.verdict,
            c.note if cell.simulated else cmp.BRACKET,
            "; ".join(f"{end}: {v}" for end, v in cell.flips), cell.ends,
            len(cell.medians)] + counters


def cells_csv(cells):
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CELL_HEADERS)
    for cell in cells:
        w.writerow(cell_row(cell))
    return out.getvalue()


def write_cells_csv(path, cells):
    atomic_write_text(path, cells_csv(cells))
