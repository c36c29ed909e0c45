"""A sweep in simulated time, written like a real run (`./run.py simulate`).

It is the driver's sweep with another backend.  plan.simulated_points chooses the points,
one per variant x worker count x workload, by the real sweep's rules; sweep.execute_plan
runs them (resumable, --jobs points at once, the progress line, status.json); SimBackend
runs a point: build-sim/<v>/simbench on the machine model, once per argument set, their
JSON documents merged into the point's raw file.  The run is results/<run-id>/ in
run.py's layout (results/README.md):

  meta.json      "simulated": true, "model", the model's description and topology
  plan.json      the points, as run.py's (plus "simulated" and "model")
  status.json    per point: ok, rc, errors, message, seconds, finished, as run.py's
  machine.json   the model the run used (a copy, sources included); model.flat its flat form
  raw/<v>/workers-<N>/<workload>.json   Google Benchmark JSON, context "simulated": true
  logs/<v>/workers-<N>/<workload>.log   simbench's stderr, each run's command line before it
  SIMULATED.md   every median beside its Brent bound (report.write_simulated)
  bands.json     where asked: points re-simulated with each uncertain cost group at the
                 ends of its range (simmodel.band_ends), model.<end>.flat the models used

The run is read back like any other (rundata.load_run, rundata.medians); its figures are
gnuplot.write_simulated_plots'.  A sweep that was stopped is finished by `./run.py
simulate --resume RUN` (reopen_sim, then finish_sim): the points done are kept, the others run
on the simulation build as it is (no `make sim`); bands are simulated when that command
asks for them.

The argument sets are the workloads' default ones that a quick real sweep takes: the
first of each workload, and every set of `imbalance` and `article` (the claim's
scenarios, config.WHOLE_WORKLOADS); or
every set (`all_sets`), those whose benchmark name matches a regular expression
(`match`), or the benchmark names of a real run (`like`), for validation.
"""
import datetime
import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile

from . import simmodel as modelmod
from .commands import simbench_argv
from .config import ROOT, UsageError
from .files import atomic_write_text
from .gbjson import BadResultFile, load_gb_file, parse_gb_doc
from .machine import git_info
from .plan import Target, simulated_listing, simulated_points
from .proc import last_line, map_jobs
from .report import write_simulated
from .rundata import BANDS, read_meta
from .sweep import check_new_out, execute_plan, new_run_dir, reopen_run


class SimError(Exception):
    pass


# The simulation build's folder: build-sim, or build-sim-clang (`make CC=clang sim`),
# which `make test-sim` passes down as SB_SIM_BUILD.
SIM_BUILD = os.environ.get("SB_SIM_BUILD", "build-sim")


def binary(variant, build=SIM_BUILD):
    return os.path.join(ROOT, build, variant, "simbench")


def variants_built(build=SIM_BUILD):
    d = os.path.join(ROOT, build)
    if not os.path.isdir(d):
        return []
    return sorted(v for v in os.listdir(d) if os.path.exists(binary(v, build)) and not v.startswith("_"))


def variant_policies(variants):
    """{variant: its policy in `--policy`'s words} for a simulated run's meta.json (as
    each raw file's context records it, for roles.py before any point has run), from the
    variants' simbench; a variant whose simbench is not built is left out."""
    from .build import binary_policy
    out = {}
    for v in variants:
        try:
            policy = binary_policy(binary(v))
        except UsageError:
            continue
        if policy:
            out[v] = " ".join(f"{k}={x}" for k, x in policy.items())
    return out


def json_text(doc):
    """A JSON file of the run, its keys in the order the document has them."""
    return json.dumps(doc, indent=2) + "\n"


def simbench_command(point, flat, benchmark, reps, seed):
    """One simbench run: the point's variant and worker count on the model file `flat`,
    one of its argument sets (`benchmark`, by name), to run in the source tree (cwd
    ROOT): a binary of the tree is named relative to it, so that the JSON context's
    "executable" carries no absolute path of this machine."""
    binary = point["binary"]
    if os.path.isabs(binary) and os.path.commonpath([binary, ROOT]) == ROOT:
        binary = os.path.join(".", os.path.relpath(binary, ROOT))
    return simbench_argv(binary, os.path.abspath(flat), point["workers"], benchmark, reps,
                         seed)


class SimBackend:
    """How a simulated sweep runs a point (sweep.run_point): the variant's simbench on the
    run's model.flat once per argument set, with the plan's repetitions and seed.  It
    carries the model's text, so that a machine without the run's directory (an engine's
    worker, engine.py) runs the same model: model_file() writes it there once."""

    def __init__(self, flat):
        self.flat = flat
        with open(flat, encoding="utf-8") as f:
            self.text = f.read()

    def model_file(self):
        """The model file to pass simbench here: the run's, or this process's copy of
        its text where the run's is not (or holds another text)."""
        try:
            with open(self.flat, encoding="utf-8") as f:
                if f.read() == self.text:
                    return self.flat
        except OSError:
            pass
        digest = hashlib.sha1(self.text.encode()).hexdigest()[:16]
        path = os.path.join(tempfile.gettempdir(), "schedbench-model-%s.flat" % digest)
        if not os.path.exists(path):
            tmp = "%s.%d.tmp" % (path, os.getpid())
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(self.text)
            os.replace(tmp, path)
        return path

    def run(self, plan, point, out_path, log):
        """The runs' JSON documents merged into one at out_path, each run's command line
        and stderr in the open file log.  Returns (exit status, why it failed): the last
        failed run's status (None when no run printed JSON), each failure named."""
        doc, failures, rc = None, [], 0
        flat = self.model_file()
        for name in point["benchmarks"]:
            cmd = simbench_command(point, flat, name,
                                   point.get("repetitions", plan["repetitions"]), plan["seed"])
            log.write(shlex.join(cmd) + "\n")
            log.flush()
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
            log.write(p.stderr)
            if p.returncode != 0:
                rc = p.returncode
                failures.append("%s: exit %d: %s" % (name, p.returncode, last_line(p.stderr, "")))
            try:
                one = json.loads(p.stdout)
            except ValueError:
                continue
            if doc is None:
                doc = one
            else:
                doc["benchmarks"].extend(one["benchmarks"])
        if doc is None:
            return rc or None, "; ".join(failures) or "simbench printed no JSON"
        with open(out_path, "w", encoding="utf-8") as f:
            f.write(json_text(doc))
        return rc, "; ".join(failures)


def make_sim(root=ROOT):
    """Bring the simulation build up to date (`make sim`; incremental, so a second when
    nothing changed): a commit since the last build rebuilds the revision each simbench
    records, so a simulated run never names an older revision than the one it ran.
    Silent unless make fails (SimError with its output).  Not in a tree without a
    Makefile, nor for another build folder (SB_SIM_BUILD: the tests' clang build)."""
    if SIM_BUILD != "build-sim" or not os.path.exists(os.path.join(root, "Makefile")):
        return
    env = dict(os.environ)
    env.pop("MAKEFLAGS", None)
    if not os.path.isdir(os.path.join(root, SIM_BUILD)):
        print("building the simulator (make sim: about a minute, once)", file=sys.stderr,
              flush=True)
    p = subprocess.run(["make", "-s", "--no-print-directory", "-C", root, "sim"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise SimError("`make sim` failed:\n" + p.stdout.strip())


def simulate(machine, variants, workloads, workers, reps=3, seed=1, out=None, jobs=1,
             all_sets=False, like=None, command="", echo=print, match=None, build=None,
             bands=None, quiet=False):
    """A simulated sweep from start to end (start_sim, then finish_sim): returns (its
    directory, the ids of the points that failed)."""
    run_dir, plan, m, lock = start_sim(machine, variants, workloads, workers, reps, seed, out,
                                   all_sets, like, command, match, build)
    with lock:
        return run_dir, finish_sim(run_dir, plan, m, jobs, bands, echo, quiet)


def start_sim(machine, variants, workloads, workers, reps=3, seed=1, out=None, all_sets=False,
          like=None, command="", match=None, build=None, choose=None, meta_extra=None):
    """Plan a simulated sweep and create its directory (--out, else
    results/sim-<model>-<time>) with model.flat, machine.json, plan.json and meta.json;
    returns (run_dir, plan, the model, the RunLock held on run_dir).  build: called once
    the model, the worker counts and --out are known good, before the binaries are
    looked for (the command line passes make_sim).  choose(targets, listing, model): the
    points, where another sweep (the policy map, policymap.py) chooses its own argument
    sets; meta_extra: more keys for meta.json."""
    m = modelmod.load(machine)
    bad = [n for n in workers if n < 1 or n > m["npus"]]
    if bad:
        raise modelmod.ModelError("--workers %s: the model %s has %d PUs (1..%d workers)"
                                  % (",".join(map(str, bad)), m["name"], m["npus"], m["npus"]))
    check_new_out(out)
    if build:
        build()
    have = variants_built()
    if not have:
        raise SimError("no simulation build: run `make sim` first")
    variants = variants or have
    unknown = [v for v in variants
               if not os.path.exists(os.path.join(ROOT, "variants", v, "variant.h"))]
    if unknown:
        raise SimError("unknown variant %s (variants: %s)"
                       % (", ".join(unknown), ", ".join(have)))
    missing = [v for v in variants if v not in have]
    if missing:
        raise SimError("not built for simulation: %s (have: %s; `make sim`)"
                       % (", ".join(missing), ", ".join(have)))
    targets = [Target(v, False, binary(v)) for v in variants]
    listing = simulated_listing(binary(variants[0]))
    points = choose(targets, listing, m) if choose else \
        simulated_points(targets, listing, workloads, workers, m["name"], all_sets, match, like)
    plan = {"version": 1, "simulated": True, "model": m["name"], "seed": seed,
            "repetitions": reps, "workers": workers, "full": False, "all_sets": all_sets,
            "filter": None, "min_time": None, "timeout": None, "points": points}
    started = datetime.datetime.now().isoformat(timespec="seconds")
    # the tree as the binaries were built from it (build() above), not as it is at the end
    git = git_info(ROOT, simulated=True)
    with open(m["path"]) as f:
        machine_doc = json.load(f)
    policies = variant_policies(variants)

    def files(run_id):
        meta = {"run_id": run_id, "simulated": True, "model": m["name"],
                "model_description": m.get("description", ""),
                "model_measured": bool(m.get("measured")),
                "topology": "simulated: synthetic " + m["topology"]["synthetic"],
                "cpu_model": "simulated " + m["name"], "started": started,
                "command": command, "git": git, "variants": variants, "references": [],
                "workloads": sorted({p["workload"] for p in points}), "policies": policies}
        meta.update(meta_extra or {})
        return {"model.flat": modelmod.flatten(m), "machine.json": json_text(machine_doc),
                "plan.json": json_text(plan), "meta.json": json_text(meta)}

    run_dir, lock = new_run_dir(out, ROOT, files, prefix="sim-%s-" % m["name"])
    return run_dir, plan, m, lock


def reopen_sim(spec):
    """A simulated sweep to finish (`--resume RUN`): (run_dir, plan, its model as
    machine.json has it, the RunLock held on run_dir)."""
    run_dir, plan, lock = reopen_run(spec, ROOT, simulated=True)
    try:
        return run_dir, plan, modelmod.load(os.path.join(run_dir, "machine.json")), lock
    except BaseException:
        lock.release()
        raise


def finish_sim(run_dir, plan, m, jobs=1, bands=None, echo=print, quiet=False, engine=None):
    """Run the plan's points that are not done yet, `jobs` at once (sweep.execute_plan),
    simulate the bands asked for, and end the run: meta.json's "finished" and the
    variants' benchmark contexts, SIMULATED.md.  bands: which points also get their band
    (bands.json): None, "top" (at the largest worker count), "all", or a set of workload
    names (at the largest worker count).  Returns the ids of the points that failed."""
    points, top = plan["points"], max(plan["workers"])
    echo("simulate: %d points on %s (%s), %d workers max -> %s"
         % (len(points), m["name"], m["topology"]["synthetic"], top, run_dir))
    status = execute_plan(SimBackend(os.path.join(run_dir, "model.flat")), run_dir, plan,
                          quiet, jobs, engine)
    ok = {p["id"] for p in points if status.get(p["id"], {}).get("ok")}
    if bands:
        simulate_bands(m, run_dir, [p for p in points if p["id"] in ok and (
            bands == "all" or p["workers"] == top and (bands == "top" or p["workload"] in bands))],
                       plan["seed"], jobs, echo)
    end_sim(run_dir, plan)
    return [p["id"] for p in points if p["id"] not in ok]


def end_sim(run_dir, plan):
    """End a simulated run whose points have run: meta.json's "finished" and the
    variants' benchmark contexts, SIMULATED.md."""
    ctx = {}
    for p in plan["points"]:
        path = os.path.join(run_dir, p["raw"])
        if p["variant"] not in ctx and os.path.exists(path):
            ctx[p["variant"]] = load_gb_file(path)[0]
    meta = {}
    for key, value in read_meta(run_dir).items():   # "finished" after "started"
        if key not in ("finished", "bench_context"):
            meta[key] = value
        if key == "started":
            meta["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
    meta["bench_context"] = ctx
    atomic_write_text(os.path.join(run_dir, "meta.json"), json_text(meta))
    write_simulated(run_dir)


BAND_COUNTERS = ("window_s",)  # time counters a band keeps beside the wall time


def simulate_bands(m, run_dir, points, seed, jobs, echo=print):
    """Each point re-simulated (one repetition: the simulation is deterministic) with one
    uncertain cost group at a time at each end of its range (model.band_ends), into
    bands.json: {"ranges": {group: [low, high, source]}, "points": {"<variant>/<workers>/
    <benchmark>": {"<group> x<factor>": time_s}}, "metrics": {counter: {the same keys:
    {the same ends: value}}}}: the wall time, and each time counter of BAND_COUNTERS the
    benchmark reports (article's window_s), so that a ratio's band is in the ratio's own
    metric.  A point whose end fails is left out of that end, and the failure named in
    "failed"."""
    ends = modelmod.band_ends(m)
    flats = {}
    for label, group, factor in ends:
        path = os.path.join(run_dir, "model.%s.flat" % label.replace(" ", "_"))
        atomic_write_text(path, modelmod.flatten(modelmod.scaled(m, group, factor)))
        flats[label] = path
    jobs_list = [(p, name, label) for p in points for name in p["benchmarks"]
                 for label, _, _ in ends]
    echo("simulate: the band of %d points: %d re-simulations (%s)"
         % (len(points), len(jobs_list), ", ".join(e[0] for e in ends)))
    out, failed = {}, []

    def one(job):
        p, name, label = job
        cmd = simbench_command(p, flats[label], name, 1, seed)
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        try:
            _, entries = parse_gb_doc(json.loads(r.stdout), cmd[0]) if r.returncode == 0 \
                else (None, [])
        except (ValueError, BadResultFile):
            entries = []
        found = [e for e in entries if e.error is None]
        if not found:
            return job, None
        e = found[0]
        counters = {c: e.counters[c] for c in BAND_COUNTERS if e.counters.get(c, 0) > 0}
        return job, (e.real_s, counters)

    metrics = {}
    for (p, name, label), got in map_jobs(one, jobs_list, jobs):
        key = "%s/%d/%s" % (p["variant"], p["workers"], name)
        if got is None:
            failed.append("%s (%s)" % (key, label))
            continue
        out.setdefault(key, {})[label] = got[0]
        for c, value in got[1].items():
            metrics.setdefault(c, {}).setdefault(key, {})[label] = value
    atomic_write_text(os.path.join(run_dir, BANDS), json_text({
        "ranges": {g: list(r) for g, r in m["ranges"].items()},
        "ends": [e[0] for e in ends], "points": out, "metrics": metrics, "failed": failed}))
    return out

