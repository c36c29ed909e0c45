"""A run's data: one Result per (variant, workers, benchmark), a RunData per
results/<run-id>/ (loaded and checked), the CSV files merged from it, and what a simulated
run adds (its medians, its bands, the companions a measured run names).  Which directory a
RUN argument names is rundir.py's."""

import csv
import dataclasses
import io
import math
import os

from .config import UsageError, check_unknown, warn
from .files import atomic_write_json, glob_json, read_json
from .fmt import fmt_num
from .gbjson import BadResultFile, load_gb_file, params_of, workload_of
from .stats import summarize


# The derived metric: process CPU seconds per wall second (how many cores a variant kept
# busy), from the proc_cpu_s counter and real_time of the same repetition.
CPU_PER_WALL = "proc_cpu_per_wall"


@dataclasses.dataclass
class Result:
    """All repetitions of one benchmark at one (variant, workers) point."""
    variant: str
    reference: bool
    workers: int
    benchmark: str
    source: str                    # the raw file it came from (relative to the run)
    entries: list = dataclasses.field(default_factory=list)

    @property
    def workload(self):
        return workload_of(self.benchmark)

    @property
    def params(self):
        return params_of(self.benchmark)

    @property
    def valid(self):
        """The repetitions without an error."""
        return [e for e in self.entries if e.error is None]

    @property
    def errors(self):
        return [e.error for e in self.entries if e.error is not None]

    @property
    def usable(self):
        """True when it may be plotted or compared: no error, at least one repetition."""
        return not self.errors and bool(self.valid)

    def metrics(self):
        """The metric names this result has, in CSV order."""
        counters = sorted({k for e in self.valid for k in e.counters})
        names = ["real_time_s", "cpu_time_s"] + counters
        if "proc_cpu_s" in counters:
            names.append(CPU_PER_WALL)
        return names

    def values(self, metric="real_time_s"):
        """The metric's value in each valid repetition that has it."""
        out = []
        for e in self.valid:
            if metric == "real_time_s":
                v = e.real_s
            elif metric == "cpu_time_s":
                v = e.cpu_s
            elif metric == CPU_PER_WALL:
                c = e.counters.get("proc_cpu_s")
                v = c / e.real_s if c is not None and e.real_s > 0 else None
            else:
                v = e.counters.get(metric)
            if v is not None and math.isfinite(v):
                out.append(v)
        return out

    def summary(self, metric="real_time_s"):
        return summarize(self.values(metric))

    def median(self, metric="real_time_s"):
        return self.summary(metric)["median"]


@dataclasses.dataclass
class RunData:
    """What one run directory holds, loaded and checked."""
    run_dir: str
    meta: dict
    plan: dict
    status: dict
    results: list                  # [Result], sorted
    skipped: list                  # [(path, reason)]: files that could not be used
    contexts: dict                 # variant -> the JSON context of its first raw file
    revisions: dict = None         # variant -> every git_rev its raw files record
    _roles: object = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def run_id(self):
        return os.path.basename(os.path.normpath(self.run_dir))

    def usable(self):
        return [r for r in self.results if r.usable]

    def failed_points(self):
        return {pid: st for pid, st in self.status.items() if not st.get("ok")}

    def variants(self):
        """Variant names in display order: variants, then references (the A/A twin, a
        second label of one variant, left out: families.py compares it alone)."""
        seen = {}
        twins = self.twins()
        for r in self.results:
            if r.variant not in twins:
                seen.setdefault(r.variant, r.reference)
        return sorted(seen, key=lambda v: (seen[v], v))

    def twins(self):
        """{A/A twin label: the variant it runs} from the plan (plan.py, config.AA_VARIANT)."""
        return {p["variant"]: p["twin_of"] for p in self.plan.get("points", [])
                if isinstance(p, dict) and isinstance(p.get("twin_of"), str)}

    def workers(self):
        return sorted({r.workers for r in self.results})

    def roles(self, beside=None):
        """The parts its variants play (roles.Roles: the pools, the article's pool, ...),
        from the policies the run recorded, else those of the run `beside` it (a
        simulated companion's measured run), else the tree's build."""
        from .roles import Roles
        if beside is None and self._roles is not None:
            return self._roles
        recorded = Roles.of(self.contexts, self.meta)
        refs = {r.variant for r in self.results if r.reference}
        missing = [v for v in self.variants() if v not in recorded.policies and v not in refs]
        if not missing:
            roles = recorded
        elif beside is not None:
            roles = Roles.merged([recorded, beside.roles()])
        else:
            from .build import Build     # the fallback only: build imports this module's peers
            root = os.path.dirname(os.path.dirname(os.path.abspath(self.run_dir)))
            roles = Roles.of(self.contexts, self.meta, Build(root), missing)
        if beside is None:
            self._roles = roles
        return roles

    def index(self):
        """{benchmark: {(variant, workers): Result}} over usable results."""
        table = {}
        for r in self.usable():
            table.setdefault(r.benchmark, {})[(r.variant, r.workers)] = r
        return table


def result_sort_key(r):
    return (r.workload, r.benchmark, r.reference, r.variant, r.workers)


def context_revisions(context):
    """Every git revision a raw file's context records: the bench's `git_rev`, and for a
    file merged from several rounds (sweep.py) each round's (`git_revs`)."""
    revs = {str(context.get("git_rev") or "unknown")}
    extra = context.get("git_revs")
    if isinstance(extra, list):
        revs |= {str(r) for r in extra}
    return revs


def context_flag(value):
    return str(value).strip().lower() in ("1", "true", "yes")


# The fields of a point of plan.json, and their types: what the sweep and the report use.
POINT_FIELDS = dict(id=str, variant=str, reference=bool, workers=int, workload=str,
                    binary=str, benchmarks=list, filter=str, raw=str, log=str)


def _is(value, kind):
    """isinstance, except that a bool is not a number."""
    return isinstance(value, kind) and not (isinstance(value, bool) and kind is not bool)


def plan_problem(plan):
    """What makes a plan.json document unusable (None when it is usable): the fields
    the sweep and the report rely on, with their types."""
    if not isinstance(plan, dict):
        return "not a JSON object"
    # a simulated run (harness/sim) times one iteration per repetition and runs each
    # benchmark by its arguments: no min_time, no benchmark filter
    unused = ("min_time", "filter") if plan.get("simulated") is True else ()
    for key, kind in (("repetitions", int), ("min_time", (int, float)), ("points", list)):
        if not (key in unused and plan.get(key) is None) and not _is(plan.get(key), kind):
            return f"no {key}"
    for key in ("timeout", "iters_per_us"):
        value = plan.get(key)
        if value is not None and not (_is(value, (int, float)) and value > 0):
            return f"{key} is not a positive number"
    ids = set()
    for i, point in enumerate(plan["points"]):
        if not isinstance(point, dict):
            return f"point {i} is not an object"
        for key, kind in POINT_FIELDS.items():
            if not (key in unused and point.get(key) is None) and not _is(point.get(key), kind):
                return f"point {i} has no {key}"
        if point["id"] in ids:
            return f"point {point['id']} is there twice"
        ids.add(point["id"])
    return None


def read_plan(run_dir):
    """plan.json of a run, or None (with a warning) when it is missing or unusable."""
    path = os.path.join(run_dir, "plan.json")
    plan = read_json(path)
    problem = plan_problem(plan) if plan is not None else None
    if problem:
        warn(f"ignoring {path}: {problem}")
        return None
    return plan


def read_status(run_dir):
    """status.json of a run: point id -> its record (records of the wrong shape are
    dropped with a warning; a missing or unreadable file is an empty record)."""
    path = os.path.join(run_dir, "status.json")
    status = read_json(path)
    if status is None:
        return {}
    good = {k: v for k, v in status.items() if isinstance(v, dict)} \
        if isinstance(status, dict) else {}
    if not isinstance(status, dict) or len(good) < len(status):
        warn(f"{path}: ignoring records that are not objects")
    return good


def read_meta(run_dir):
    """meta.json of a run as a dict ({} when it is missing or not an object)."""
    meta = read_json(os.path.join(run_dir, "meta.json"))
    return meta if isinstance(meta, dict) else {}


def record_meta(run_dir, key, value):
    """Set one key of the run's meta.json (atomically)."""
    meta = read_meta(run_dir)
    meta[key] = value
    atomic_write_json(os.path.join(run_dir, "meta.json"), meta)


# meta.json: the alternating rounds of the targets `run --targets` asked for, so that a
# --resume measures them too
TARGETS_KEY = "targets_rounds"


def recorded_target_rounds(meta):
    rounds = meta.get(TARGETS_KEY)
    return rounds if isinstance(rounds, int) and not isinstance(rounds, bool) and rounds > 0 else None


def load_run(run_dir):
    """Load results/<run-id>/: meta.json, plan.json, status.json and every raw/**/*.json.
    A file that cannot be used is named in a warning and skipped, never fatal."""
    if not os.path.isdir(run_dir):
        raise UsageError(f"{run_dir} is not a run directory")
    meta = read_meta(run_dir)
    plan = read_plan(run_dir) or {}
    status = read_status(run_dir)
    by_raw = {p["raw"]: p for p in plan.get("points", [])}
    refs = meta.get("references")
    references = {r for r in refs if isinstance(r, str)} if isinstance(refs, list) else set()
    results, skipped, contexts, revs = {}, [], {}, {}
    raw_dir = os.path.join(run_dir, "raw")
    for path in sorted(glob_json(raw_dir)):
        rel = os.path.relpath(path, run_dir)
        if rel.endswith(".gz"):
            rel = rel[:-3]      # a published run's compressed raw file: the plan's name
        try:
            context, entries = load_gb_file(path)
            point = by_raw.get(rel, {})
            # the A/A twin's bench names the variant it runs: the plan names its label
            variant = point.get("variant") if point.get("twin_of") else \
                (context.get("variant") or point.get("variant"))
            workers = int(context.get("workers") or point.get("workers") or 0)
            if not variant or not isinstance(variant, str) or workers < 1:
                raise BadResultFile(f"{path}: no variant/workers in its context")
        except (BadResultFile, ValueError, TypeError) as e:
            reason = str(e) if isinstance(e, BadResultFile) else f"{path}: {e}"
            warn(f"skipping {reason}")
            skipped.append((rel, reason))
            continue
        reference = (bool(point.get("reference")) or context_flag(context.get("reference", ""))
                     or variant in references)
        contexts.setdefault(variant, context)
        revs.setdefault(variant, set()).update(context_revisions(context))
        for entry in entries:
            key = (variant, workers, entry.benchmark)
            if key not in results:
                results[key] = Result(variant, reference, workers, entry.benchmark, rel)
            results[key].entries.append(entry)
    return RunData(run_dir=run_dir, meta=meta, plan=plan, status=status,
                   results=sorted(results.values(), key=result_sort_key),
                   skipped=skipped, contexts=contexts,
                   revisions={v: sorted(r) for v, r in revs.items()})


def filter_results(data, variants=None, workloads=None, workers=None):
    """The run's results restricted to the given names/counts (each None = all).
    Names the run does not have are an error (exit 2)."""
    if variants:
        check_unknown(variants, set(data.variants()), "variant in this run")
    if workloads:
        check_unknown(workloads, {r.workload for r in data.results}, "workload in this run")
    if workers:
        check_unknown(workers, set(data.workers()), "worker count in this run")
    data.results = [r for r in data.results
                    if (not variants or r.variant in variants)
                    and (not workloads or r.workload in workloads)
                    and (not workers or r.workers in workers)]
    return data


RESULT_COLUMNS = ["variant", "reference", "workers", "workload", "benchmark", "metric", "n",
                  "median", "min", "max", "q1", "q3", "errors", "error_message"]
SAMPLE_COLUMNS = ["variant", "reference", "workers", "workload", "benchmark", "repetition",
                  "metric", "value", "error"]


def results_csv(results):
    """results.csv: one row per (variant, workers, benchmark, metric), median and spread
    over the repetitions without error; `errors` counts the repetitions that failed."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(RESULT_COLUMNS)
    for r in results:
        errors = r.errors
        for metric in r.metrics():
            s = r.summary(metric)
            w.writerow([r.variant, int(r.reference), r.workers, r.workload, r.benchmark, metric,
                        s["n"], fmt_num(s["median"]), fmt_num(s["min"]), fmt_num(s["max"]),
                        fmt_num(s["q1"]), fmt_num(s["q3"]), len(errors),
                        errors[0] if errors else ""])
    return out.getvalue()


def samples_csv(results):
    """samples.csv: every repetition's value of every metric (errored ones flagged)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(SAMPLE_COLUMNS)
    for r in results:
        for e in sorted(r.entries, key=lambda e: e.repetition):
            values = [("real_time_s", e.real_s), ("cpu_time_s", e.cpu_s)]
            values += sorted(e.counters.items())
            for metric, value in values:
                w.writerow([r.variant, int(r.reference), r.workers, r.workload, r.benchmark,
                            e.repetition, metric, fmt_num(value), e.error or ""])
    return out.getvalue()


# ---- simulated runs: the medians a simulated run's tables and figures use, its bands,
# and the simulated companions a measured run names

MEDIAN_COUNTERS = ("work_s", "span_s", "proc_cpu_s", "steals", "parks", "tasks_run")

# The counters that explain why a variant wins or loses, as (name, numerator,
# denominator): medians over the repetitions; None where a variant does not report them
# (the reference rows).  The policy map's cells and SIMULATED.md show them.
WHY_COUNTERS = (("steal attempts per steal", "steal_attempts", "steals"),
                ("parks per task", "parks", "tasks_run"),
                ("wake-ups per task", "woken", "tasks_run"),
                ("CPU per wall", "proc_cpu_per_wall", None))


def why_counters(result):
    """{name: value or None} of WHY_COUNTERS for one Result."""
    out = {}
    for name, num, den in WHY_COUNTERS:
        a = result.median(num) if result.values(num) else None
        b = (result.median(den) if result.values(den) else None) if den else 1.0
        out[name] = a / b if a is not None and b else None
    return out


def medians(run_dir, data=None):
    """{(variant, workers, benchmark): {"n", "time_s", "min_s", "max_s", and each counter
    of MEDIAN_COUNTERS that every repetition has}} of a run's variants (references left
    out), the median over the repetitions without an error (`data`: the run, when already
    loaded): what SIMULATED.md, the
    simulated speedup figures and `validate` read."""
    out = {}
    for r in (data or load_run(run_dir)).results:
        if r.reference or not r.valid:
            continue
        times = r.summary()
        rec = {"n": len(r.valid), "time_s": times["median"], "min_s": times["min"],
               "max_s": times["max"]}
        for k in MEDIAN_COUNTERS:
            values = r.values(k)
            if len(values) == len(r.valid):
                rec[k] = summarize(values)["median"]
        window = summarize(r.values("window_s"))   # the article's time (validate.py)
        if window["n"] == len(r.valid):
            rec.update(window_s_median=window["median"], window_s_min=window["min"],
                       window_s_max=window["max"])
        out[(r.variant, r.workers, r.benchmark)] = rec
    return out


BANDS = "bands.json"


def load_bands(run_dir, metric="real_time_s"):
    """{(variant, workers, benchmark): {end label: value}} of a simulated run's bands.json
    in one metric: the wall time ("real_time_s") or a time counter the band kept
    ({} when the run has no band, or none in that metric)."""
    doc = read_json(os.path.join(run_dir, BANDS))
    if not isinstance(doc, dict):
        return {}
    points = doc.get("points") if metric == "real_time_s" else \
        (doc.get("metrics") or {}).get(metric)
    out = {}
    for key, ends in (points if isinstance(points, dict) else {}).items():
        try:
            v, w, bench = key.split("/", 2)
            out[(v, int(w), bench)] = {k: float(t) for k, t in ends.items()}
        except (ValueError, TypeError, AttributeError):
            continue
    return out


def band_description(run_dir):
    """What a simulated run's band is, in words, from its bands.json: 'sensitivity: 3
    cost groups at the ends of their ranges, one at a time (xfer x0.7/x2, wake x0.4/x3,
    code x0.25/x1.5)'; None without one."""
    doc = read_json(os.path.join(run_dir, BANDS))
    ranges = doc.get("ranges") if isinstance(doc, dict) else None
    if not isinstance(ranges, dict) or not ranges:
        return None
    ends = []
    for group, r in ranges.items():
        if isinstance(r, list) and len(r) >= 2 and all(isinstance(x, (int, float)) for x in r[:2]):
            ends.append(f"{group} x{float(r[0]):g}/x{float(r[1]):g}")
    n = len(ranges)
    return (f"sensitivity: {n} cost group{'' if n == 1 else 's'} at the ends of "
            f"{'its range' if n == 1 else 'their ranges'}, one at a time ({', '.join(ends)})")


COMPANION_KEY = "simulated_companion"
MODEL_KEY = "sim_model"


def string_list(value):
    """A meta.json value that names one thing or several, as a list of names."""
    if isinstance(value, str) and value:
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v]
    return []


def companion_dirs(run_dir, meta):
    """The simulated companions' directories as meta.json names them, in order."""
    return [os.path.normpath(os.path.join(run_dir, rel))
            for rel in string_list(meta.get(COMPANION_KEY))]


def recorded_models(meta):
    """The models the run asked for (`--sim`), in order."""
    return string_list(meta.get(MODEL_KEY))


def load_companions(data):
    """The simulated companions of a loaded run as RunData (a missing or unsimulated one
    is skipped with a warning)."""
    out = []
    for path in companion_dirs(data.run_dir, data.meta):
        rel = os.path.relpath(path, data.run_dir)
        if not os.path.isdir(path):
            warn(f"{data.run_id}: its simulated companion {rel} is missing; drawn without it")
            continue
        sim = load_run(path)
        if not sim.meta.get("simulated"):
            warn(f"{data.run_id}: {rel} is not a simulated run; ignored")
            continue
        out.append(sim)
    return out
