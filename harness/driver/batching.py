"""Section 4.2 of the work-stealing article, batch submission and batch stealing
(workloads/spawn_batch.c): its comparisons (families.py's `batching`), their SIMULATED
counterparts from a run's companions, the report's section that lists them all, and the
answer row (answers.py).

Two halves, each a throughput ratio over one task at a time (k = 1), against the
article's "20%+" (threshold 1.2):
  submission  a spawn_batch set with `batch` k (4 .. 64) over the same set with batch 0,
              on each row of config.BATCH_SUBMIT_ROWS;
  stealing    a row whose thief takes up to k tasks over the row that takes one (a row
              whose policy is that one's but for steal_batch: roles.batch_steal_rows),
              on the sets with batch 0 from a worker.
Both at the run's largest worker count, per grain, submitter setting and scenario (one
submitter, or the late wave).  Why a gain can or cannot reach 1.2x is read off the k = 1
run: its throughput against the ideal n x grain / P (no batch can beat P workers that
compute all the time: where k = 1 reaches 1 / 1.2 = 83% of it, 20% is out of reach), and
its counters (wake-ups per task: what batch submission saves; steal attempts per task:
what batch stealing saves; tasks per steal: how much the batch took)."""

import re

from . import compare as cmp
from .config import BATCH_SUBMIT_ROWS, BATCH_WORKLOAD, REPRESENTATIVE
from .fmt import format_table
from .gbjson import params_of, workload_of
from .rundata import band_description, load_bands
from .validate import errors_beside

FAMILY = "batching"
TARGET = 1.2                  # the article's "20%+ more throughput"
HALVES = ("submission", "stealing")
DESIGNS = {"ws": "the article's scheduler", REPRESENTATIVE: "bthread"}
ROWS = sorted(BATCH_SUBMIT_ROWS, key=lambda r: r != "ws")   # the article's design first
COUNTERS = (("wakeups_per_task", "wake-ups per task"),
            ("steal_attempts_per_task", "steal attempts per task"),
            ("tasks_per_steal", "tasks per steal"))


def with_param(bench, key, value):
    return re.sub(rf"/{key}:[^/]+", f"/{key}:{value}", bench)


def where(p):
    if p.get("from") == "1":
        return "from a worker"
    return "from a spinning pthread" if p.get("spin") == "1" else "from a pthread"


def scenario(p):
    return "late submitters" if p.get("late") == "1" else "one submitter"


def grain_us(c):
    return c.grain_ns / 1000


def pairs(table, workers, steal_rows):
    """(half, row, k, k = 1 result, batched result, params) of every comparison the
    index `table` can make at `workers` (a side may be None); steal_rows: the run's
    roles.batch_steal_rows()."""
    for bench, cells in sorted(table.items()):
        if workload_of(bench) != BATCH_WORKLOAD:
            continue
        p = params_of(bench)
        if p.get("batch") == "0":
            if p.get("from") != "1" or p.get("spin") != "0":
                continue
            for row, steals in steal_rows.items():
                for other, k in steals:
                    yield "stealing", row, k, cells.get((row, workers)), cells.get((other, workers)), p
        elif p.get("batch") != "1":            # 1: NOSIGNAL + a flush each, --full only
            plain = table.get(with_param(bench, "batch", "0"), {})
            for row in BATCH_SUBMIT_ROWS:
                yield "submission", row, p["batch"], plain.get((row, workers)), cells.get((row, workers)), p


def labels(half, row, k, one, batched, p, workers):
    return dict(benchmark=batched.benchmark, workers=workers, half=half, row=row, k=k,
                base=f"{one.variant} {'batch 0' if half == 'submission' else 'k = 1'}",
                variant=f"{batched.variant}{f' batch {k}' if half == 'submission' else ''}",
                grain_ns=int(p.get("grain_ns", 0)), where=where(p), scenario=scenario(p),
                one=one, batched=batched, params=p)


def metric_of(*results):
    from .families import metric_of as shared   # families.py imports this module
    return shared(*results)


def measured(data):
    """The run's batching comparisons (uncorrected: families.py closes the family)."""
    table, workers = data.index(), max(data.workers(), default=None)
    out = []
    for half, row, k, one, batched, p in pairs(table, workers, data.roles().batch_steal_rows()):
        if one is None or batched is None:
            continue
        metric = metric_of(one, batched)
        c = cmp.compare(FAMILY, one.values(metric), batched.values(metric), TARGET,
                        metric=metric, **labels(half, row, k, one, batched, p, workers))
        if c:
            out.append(c)
    return out


def simulated(sims):
    """SIMULATED batching comparisons of each simulated companion at its largest worker
    count: the ratio of medians, its band (bands.json), widened by the simulator's
    validation error for spawn_batch where one was measured."""
    out = []
    for sim in sims:
        workers = max(sim.workers(), default=None)
        err = errors_beside(sim.run_dir).get(BATCH_WORKLOAD)
        steal_rows = sim.roles().batch_steal_rows()
        for half, row, k, one, batched, p in pairs(sim.index(), workers, steal_rows):
            if one is None or batched is None:
                continue
            metric = metric_of(one, batched)
            ratio = one.median(metric) / batched.median(metric)
            bands = load_bands(sim.run_dir, metric)
            eo = bands.get((one.variant, workers, one.benchmark), {})
            eb = bands.get((batched.variant, workers, batched.benchmark), {})
            ends = [eo[e] / eb[e] for e in sorted(set(eo) & set(eb)) if eb[e] > 0]
            band = (min(ends + [ratio]), max(ends + [ratio])) if ends else None
            out.append(cmp.simulated(f"SIMULATED {FAMILY}", ratio, band, err, TARGET,
                                     model=sim.meta.get("model", "?"), run_dir=sim.run_dir,
                                     **labels(half, row, k, one, batched, p, workers)))
    return out


def efficiency(c):
    """The k = 1 run's throughput over the ideal n x grain / P (in the comparison's
    metric: the late wave's window, or the wall time)."""
    p, t = c.params, c.one.median(c.labels.get("metric", "real_time_s"))
    ideal = int(p.get("n", 0)) * c.grain_ns * 1e-9 / c.workers
    return ideal / t if t else None


def counter(result, name):
    return result.median(name) if result.summary(name)["n"] else None


def best(comps, row, half, grain_ns):
    """The comparison with the highest estimate for a row, half and grain, or None."""
    mine = [c for c in comps if c.row == row and c.half == half and c.grain_ns == grain_ns]
    return max(mine, key=lambda c: c.ratio) if mine else None


def grains(comps):
    return sorted({c.grain_ns for c in comps})


def best_text(c):
    k = "half" if c.k == "half" else f"k = {c.k}"
    return f"{grain_us(c):g} us {k} {c.text()} ({c.scenario}, {c.where})"


def design_cell(comps, row):
    """One design's part of a cell: per half, the best k per grain with its bracket."""
    parts = []
    for half in HALVES:
        bests = [best(comps, row, half, g) for g in grains(comps)]
        bests = [b for b in bests if b]
        if bests:
            parts.append(f"{half.capitalize()}, the best k per grain: "
                         + "; ".join(best_text(b) for b in bests))
    if not parts:
        return None
    return f"{DESIGNS.get(row, row)} (`{row}`): " + "; ".join(parts)


def spread(values, fmt="{:.3g}"):
    values = [v for v in values if v is not None]
    if not values:
        return None
    lo, hi = min(values), max(values)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else f"{fmt.format(lo)}-{fmt.format(hi)}"


def why_text(comps):
    """Where the 20% is out of reach (k = 1 already at 83%+ of the ideal) and what the
    counters say at the finest grain, per design, from the measured comparisons."""
    out = []
    for row in ROWS:
        mine = [c for c in comps if c.row == row]
        if not mine:
            continue
        ones = {c.one.benchmark: c for c in mine}          # one k = 1 run per set
        eff = {b: efficiency(c) for b, c in ones.items()}
        out_of_reach = sum(1 for e in eff.values() if e and 1 / e < TARGET)
        fine = min(grains(mine))
        at_fine = [c for c in mine if c.grain_ns == fine]
        text = (f"`{row}` at k = 1 reaches "
                + (spread([efficiency(c) * 100 for c in at_fine if efficiency(c)], "{:.0f}") or "-")
                + f"% of the ideal throughput (n x grain / P) at {fine / 1000:g} us, and more "
                f"than 83% (where no batch can gain 20%) in {out_of_reach} of its {len(eff)} "
                "settings")
        sub = [c for c in at_fine if c.half == "submission"]
        steal = [c for c in at_fine if c.half == "stealing"]
        facts = []
        wake_one = spread(counter(c.one, "wakeups_per_task") for c in sub)
        wake_k = spread(counter(c.batched, "wakeups_per_task") for c in sub)
        if wake_one:
            facts.append(f"wake-ups per task {wake_one} at k = 1, {wake_k or '-'} in batches")
        tries = spread(counter(c.one, "steal_attempts_per_task") for c in steal)
        taken = spread(counter(c.batched, "tasks_per_steal") for c in steal)
        if tries:
            facts.append(f"steal attempts per task {tries} at k = 1, tasks per steal "
                         f"{taken or '-'} when a thief takes more")
        if facts:
            text += f"; at {fine / 1000:g} us: " + "; ".join(facts)
        out.append(text)
    return ". ".join(out)


def verdict_text(comps):
    if not comps:
        return "not measured"
    better = [c for c in comps if c.verdict == cmp.BETTER]
    undecided = [c for c in comps if c.verdict == cmp.UNDECIDED]
    top = max(comps, key=lambda c: c.ratio)
    if better:
        where_ = sorted({(DESIGNS.get(c.row, c.row), c.half, grain_us(c)) for c in better})
        head = (f"**Holds in {len(better)} of {len(comps)} comparisons**: "
                + "; ".join(f"{d}, {h}, {g:g} us" for d, h, g in where_)
                + f" (best {best_text(top)}); not shown above 1.2x in the others")
    else:
        head = (f"**Not here**: no bracket above 1.2x in {len(comps)} comparisons (both halves, "
                f"both designs, every grain, {len(undecided)} undecided); the best "
                f"{best_text(top)} in {DESIGNS.get(top.row, top.row)}")
    return head + ". Why: " + why_text(comps)


def simulated_cell(sims):
    comps = simulated(sims)
    if not comps:
        return "not simulated in this run"
    out = []
    for model in sorted({c.model for c in comps}):
        mine = [c for c in comps if c.model == model]
        run = mine[0].run_dir
        what = band_description(run) or "no sensitivity band"
        cells = [design_cell(mine, row) for row in ROWS]
        out.append(f"SIMULATED {model}, {mine[0].workers} workers ({what}): "
                   + ". ".join(x for x in cells if x)
                   + f"; above 1.2x over the whole band: {sum(c.verdict == cmp.BETTER for c in mine)}"
                   f" of {len(mine)}")
    rows = {c.row for c in comps}
    missing = [r for r in BATCH_SUBMIT_ROWS if r not in rows]
    if missing:
        out.append(", ".join(f"`{r}`" for r in missing) + " not simulated (the simulator runs "
                   "the bthread core; the article's scheduler is a program of its own)")
    return "; ".join(out)


def row(data, sims, claim, workers_label):
    """The answer row: [claim, setup, measured here, simulated, verdict]."""
    from . import families
    setup = ("tasks under 1 us, submitted and stolen in batches of 16-32, on the article's "
             "own scheduler (section 3: function-pointer tasks on per-worker deques); the "
             "submitting thread's setting not stated")
    comps = families.of(data).family(FAMILY)
    if not comps:
        return [claim, setup, f"not in this run (workload `{BATCH_WORKLOAD}`)", "-",
                "not measured"]
    cells = [design_cell(comps, r) for r in ROWS]
    ks = {h: sorted({c.k for c in comps if c.half == h}, key=lambda k: (k == "half", k.zfill(4)))
          for h in HALVES}
    here = (f"{workers_label(comps[0].workers)}, throughput over one task at a time (k = 1); "
            "grains " + ", ".join(f"{g / 1000:g}" for g in grains(comps)) + " us; "
            + "; ".join(f"{h} of k = {', '.join(ks[h])}" for h in HALVES if ks[h]) + ": "
            + ". ".join(x for x in cells if x))
    return [claim, setup, here, simulated_cell(sims), verdict_text(comps)]


def report_lines(data, sims):
    """REPORT.md's section: every batching comparison, measured and SIMULATED."""
    from . import families
    comps = families.of(data).family(FAMILY) + simulated(sims)
    if not comps:
        return []
    out = ["## Batching (section 4.2)", "",
           f"Throughput over one task at a time (k = 1), each ratio with its bracket "
           f"({cmp.BRACKET}; {cmp.SIM_BRACKET}); threshold 1.2x, the article's 20%; "
           "`efficiency` is the k = 1 run's throughput over the ideal n x grain / P; the sets "
           "are workloads/README.md's (spawn_batch), the measured ones also in "
           "differences.csv (family `batching`).", ""]
    headers = ["run", "row", "half", "grain", "scenario", "submitter", "k", "ratio", "verdict",
               "efficiency at k = 1"] + [w for _, w in COUNTERS]
    rows = []
    for c in sorted(comps, key=lambda c: (c.simulated, c.row, c.half, c.grain_ns, c.scenario,
                                          c.where, c.k)):
        eff = efficiency(c)
        rows.append(["SIMULATED " + c.model if c.simulated else "measured",
                     c.row, c.half, f"{grain_us(c):g} us", c.scenario, c.where,
                     c.k, c.text(), c.verdict_words(), f"{eff * 100:.0f}%" if eff else "-"]
                    + [f"{v:.3g}" if v is not None else "-" for v in
                       (counter(c.one, "wakeups_per_task"), counter(c.one, "steal_attempts_per_task"),
                        counter(c.batched, "tasks_per_steal"))])
    return out + [format_table(headers, rows, markdown=True), ""]
