"""Simulated vs measured, the error table (`./run.py validate`).

Compares a simulated run on this machine's model with a real run of the same
benchmarks, worker counts and variants, and writes a markdown table: for each
benchmark, variant and worker count the measured median, the simulated (predicted)
median and the error (predicted / measured - 1); then the median |error|, the worst
case, and per benchmark and worker count Kendall's tau between the measured and the
predicted order of the variants (1 = the same order).  The simulator's targets: median
|error| <= 10 %, worst <= 25 %, order preserved.

Beside the error against the median, each point's error beyond the measured range
(the fastest to the slowest repetition): 0 when the prediction falls inside it.  Where
the repetitions of one point spread over 2x or more (spawn here), no single predicted
number can be within 25 % of the median every time, and this column tells a model error
from the measurement's own spread.

Each workload is compared in the time its answers use: the article's experiment in its
window (window_s, the time from every submitter in place to the last task done, which
its speedups are of), every other workload in wall time.  Beside the table, a record
(`<table>.json`: the per-workload errors) is written, which the report reads to put the
validation error of the same workload beside each SIMULATED answer (recorded_errors).
"""
import glob
import json
import os
import statistics

from .config import ARTICLE_WORKLOAD, ROOT
from .files import atomic_write_json, atomic_write_text, read_json
from .rundata import medians, read_meta

# the time each workload is validated in: its answers' (families.ARTICLE_METRIC)
METRIC_OF = {ARTICLE_WORKLOAD: "window_s"}
VALIDATION_DIR = os.path.join(ROOT, "results", "validation")

TARGET_MEDIAN, TARGET_WORST = 0.10, 0.25


def kendall_tau(xs, ys):
    """Kendall's tau-b of two equally long sequences (ties counted as neither)."""
    n = len(xs)
    conc = disc = tx = ty = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx = (xs[i] > xs[j]) - (xs[i] < xs[j])
            dy = (ys[i] > ys[j]) - (ys[i] < ys[j])
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tx += 1
            elif dy == 0:
                ty += 1
            elif dx == dy:
                conc += 1
            else:
                disc += 1
    den = ((conc + disc + tx) * (conc + disc + ty)) ** 0.5
    return (conc - disc) / den if den else float("nan")


def beyond_range(predicted, lo, hi):
    """The prediction's relative error beyond the measured range [lo, hi]: 0 inside it,
    predicted / hi - 1 above it, predicted / lo - 1 below it."""
    if predicted > hi:
        return predicted / hi - 1
    if predicted < lo:
        return predicted / lo - 1
    return 0.0


def point_times(rec, benchmark):
    """(median, min, max) of one point's time in its workload's metric (METRIC_OF)."""
    metric = METRIC_OF.get(benchmark.split("/", 1)[0])
    if metric and rec.get(metric + "_median"):
        return rec[metric + "_median"], rec[metric + "_min"], rec[metric + "_max"]
    return rec["time_s"], rec.get("min_s", rec["time_s"]), rec.get("max_s", rec["time_s"])


def compare(real_dir, sim_dir):
    real, sim = medians(real_dir), medians(sim_dir)
    rows = []
    for key in sorted(set(real) & set(sim)):
        r, lo, hi = point_times(real[key], key[2])
        s = point_times(sim[key], key[2])[0]
        rows.append({"variant": key[0], "workers": key[1], "benchmark": key[2],
                     "measured_s": r, "predicted_s": s, "error": s / r - 1,
                     "measured_min_s": lo, "measured_max_s": hi,
                     "beyond_range": beyond_range(s, lo, hi)})
    return rows


SIGNIFICANT = 0.10  # measured medians this far apart count as a real order


def pair_agreement(rows):
    """Of the pairs of variants (same benchmark and workers) whose measured medians
    differ by more than SIGNIFICANT, how many the prediction orders the same way."""
    groups = {}
    for r in rows:
        groups.setdefault((r["benchmark"], r["workers"]), []).append(r)
    agree = total = 0
    for g in groups.values():
        for i in range(len(g)):
            for j in range(i + 1, len(g)):
                a, b = g[i], g[j]
                if abs(a["measured_s"] / b["measured_s"] - 1) <= SIGNIFICANT:
                    continue
                total += 1
                agree += (a["measured_s"] < b["measured_s"]) == (a["predicted_s"] < b["predicted_s"])
    return agree, total


def summarize(rows):
    errs = [abs(r["error"]) for r in rows]
    taus = {}
    groups = {}
    for r in rows:
        groups.setdefault((r["benchmark"], r["workers"]), []).append(r)
    for k, g in sorted(groups.items()):
        if len(g) >= 2:
            taus[k] = kendall_tau([x["measured_s"] for x in g], [x["predicted_s"] for x in g])
    per_wl = {}
    for r in rows:
        per_wl.setdefault(r["benchmark"].split("/")[0], []).append(r)
    beyond = [abs(r["beyond_range"]) for r in rows]
    spread = lambda r: r["measured_max_s"] / r["measured_min_s"] - 1
    nan = float("nan")
    return {"n": len(rows), "median_abs_error": statistics.median(errs) if errs else nan,
            "worst_abs_error": max(errs) if errs else nan, "taus": taus,
            "pairs": pair_agreement(rows),
            "within_range": sum(1 for b in beyond if b == 0),
            "worst_beyond_range": max(beyond) if beyond else nan,
            "median_spread": statistics.median(spread(r) for r in rows) if rows else nan,
            "per_workload": {k: {"n": len(v),
                                 "median": statistics.median(abs(r["error"]) for r in v),
                                 "worst": max(abs(r["error"]) for r in v),
                                 "spread": statistics.median(spread(r) for r in v),
                                 "within": sum(1 for r in v if r["beyond_range"] == 0),
                                 "worst_beyond": max(abs(r["beyond_range"]) for r in v)}
                             for k, v in sorted(per_wl.items())}}


def drift(rows, machine):
    """The in-sample points of the model's code-cost fit (calibrate's "code_fit": the
    same benchmark, variant and worker count measured when the model was calibrated):
    [(benchmark, seconds at calibration, the row of this validation)].  Their measured
    time in the run over the one at calibration is how far the host moved in between."""
    fit = machine.get("code_fit") or {}
    at = {(r["variant"], r["workers"], r["benchmark"]): r for r in rows}
    out = []
    for name, seconds in sorted((fit.get("measured_s") or {}).items()):
        r = at.get((fit.get("variant"), fit.get("workers"), name))
        if r is not None and isinstance(seconds, (int, float)) and seconds > 0:
            out.append((name, seconds, r))
    return out


def drift_section(points, machine):
    fit = machine.get("code_fit") or {}
    L = ["## The host between `calibrate` and the real run", ""]
    if not points:
        L += ["The model records no measurement of its code-cost fit (\"code_fit\", written "
              "by `calibrate` since this check exists), or the real run lacks those points: "
              "the host's drift since the calibration is unknown.", ""]
        return L
    L += ["The scheduler's code costs were fitted to these points (`%s` at %d worker) when "
          "the model was calibrated, so the model reproduced them then.  Their measured time "
          "in the real run against the one at calibration is how far the host moved in "
          "between: every compute-bound prediction moves with it." % (
              fit.get("variant"), fit.get("workers")), "",
          "| benchmark | measured at calibrate | measured in the run | host drift | "
          "prediction error |", "|---|---|---|---|---|"]
    for name, seconds, r in points:
        L.append("| %s | %.3f ms | %.3f ms | %+.1f %% | %+.1f %% |" % (
            name, seconds * 1e3, r["measured_s"] * 1e3, 100 * (r["measured_s"] / seconds - 1),
            100 * r["error"]))
    return L + [""]


def write(real_dir, sim_dir, out_path):
    rows = compare(real_dir, sim_dir)
    if not rows:
        raise ValueError("no benchmark in common between %s and %s" % (real_dir, sim_dir))
    s = summarize(rows)
    meta = read_meta(sim_dir)
    machine = read_json(os.path.join(sim_dir, "machine.json"))
    if not isinstance(machine, dict):
        machine = {}
    fit_points = drift(rows, machine)
    s["drift"] = [(name, r["measured_s"] / seconds - 1) for name, seconds, r in fit_points]
    ok = lambda c: "met" if c else "**missed**"
    taus = [t for t in s["taus"].values() if t == t]
    L = ["# Validation: simulated (model `%s`) vs measured" % meta["model"], "",
         "Generated by `./run.py validate --real %s --sim %s`."
         % (os.path.relpath(real_dir), os.path.relpath(sim_dir)), "",
         "| | value | target |", "|---|---|---|",
         "| points compared | %d | |" % s["n"],
         "| median abs(error) | %.1f %% | <= 10 %% (%s) |" % (100 * s["median_abs_error"], ok(s["median_abs_error"] <= TARGET_MEDIAN)),
         "| worst abs(error) | %.1f %% | <= 25 %% (%s) |" % (100 * s["worst_abs_error"], ok(s["worst_abs_error"] <= TARGET_WORST)),
         "| Kendall's tau of the variant order, median over benchmarks | %.2f | 1.00 (%s) |"
         % (statistics.median(taus) if taus else float("nan"), ok(taus and min(taus) >= 0.999)),
         "| pairs of variants measured > %d %% apart, ordered the same by the prediction | %d of %d | all |"
         % (100 * SIGNIFICANT, s["pairs"][0], s["pairs"][1]),
         "| predictions inside the measured range (fastest..slowest repetition) | %d of %d | |"
         % (s["within_range"], s["n"]),
         "| worst abs(error) beyond the measured range | %.1f %% | |"
         % (100 * s["worst_beyond_range"]),
         "| median spread of a point's repetitions (slowest / fastest - 1) | %.1f %% | |"
         % (100 * s["median_spread"]), "",
         "Kendall's tau counts every pair, also those whose measured medians differ by "
         "less than the run-to-run noise (at 1 worker most variants are within 2 %); the "
         "pairs row counts only the pairs that a measurement can order.  The last three "
         "rows set the error against the measurement's own spread: a point whose "
         "repetitions spread over 2x cannot be predicted within 25 % of its median "
         "every time.", ""]
    L += drift_section(fit_points, machine)
    L += ["## Error per workload", "",
         "| workload | points | median abs(error) | worst | spread of the repetitions (median) "
         "| inside the range | worst beyond the range |",
         "|---|---|---|---|---|---|---|"]
    for wl, w in s["per_workload"].items():
        L.append("| %s | %d | %.1f %% | %.1f %% | %.1f %% | %d | %.1f %% |"
                 % (wl, w["n"], 100 * w["median"], 100 * w["worst"], 100 * w["spread"],
                    w["within"], 100 * w["worst_beyond"]))
    L.append("")
    L += ["## Order of the variants per benchmark (Kendall's tau, measured vs predicted)", "",
          "| benchmark | workers | tau |", "|---|---|---|"]
    for (b, n), t in sorted(s["taus"].items()):
        L.append("| %s | %d | %.2f |" % (b, n, t))
    L += ["", "## Every point", "",
          "| benchmark | workers | variant | measured | measured range | predicted | error "
          "| beyond the range |", "|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["benchmark"], r["workers"], r["variant"])):
        L.append("| %s | %d | %s | %.3f ms | %.3f-%.3f ms | %.3f ms | %+.1f %% | %+.1f %% |"
                 % (r["benchmark"], r["workers"], r["variant"], r["measured_s"] * 1e3,
                    r["measured_min_s"] * 1e3, r["measured_max_s"] * 1e3,
                    r["predicted_s"] * 1e3, 100 * r["error"], 100 * r["beyond_range"]))
    atomic_write_text(out_path, "\n".join(L) + "\n")
    atomic_write_json(os.path.splitext(out_path)[0] + ".json", dict(
        format=RECORD_FORMAT, model=meta.get("model"), real=os.path.basename(os.path.normpath(real_dir)),
        sim=os.path.basename(os.path.normpath(sim_dir)), median_abs_error=s["median_abs_error"],
        workloads={k: w["median"] for k, w in s["per_workload"].items()}))
    return s


RECORD_FORMAT = "schedbench-validation/1"


def recorded_errors(directory=None):
    """The newest validation record of this machine's model under results/validation/
    (by its sim run's name, which holds its time): {"model", "sim", "workloads":
    {workload: median |error|}, "path"}; {} when there is none or it is unreadable."""
    best = {}
    for path in sorted(glob.glob(os.path.join(directory or VALIDATION_DIR, "*.json"))):
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError, RecursionError):
            continue
        if not isinstance(doc, dict) or doc.get("format") != RECORD_FORMAT \
                or not isinstance(doc.get("workloads"), dict):
            continue
        errors = {k: float(v) for k, v in doc["workloads"].items()
                  if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v}
        if str(doc.get("sim")) >= str(best.get("sim", "")):
            best = dict(model=doc.get("model"), sim=doc.get("sim"), workloads=errors, path=path)
    return best


def errors_beside(run_dir):
    """{workload: median |error|} of the newest validation record beside a run
    (<results>/validation/, where the run's results/ is); {} without one."""
    where = os.path.join(os.path.dirname(os.path.abspath(run_dir)), "validation")
    return recorded_errors(where).get("workloads", {})

