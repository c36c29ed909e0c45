"""A sweep in simulated time, written like a real run (`./run.py simulate`).

For every variant x worker count x workload it runs build-sim/<v>/simbench on a machine
model and writes results/<run-id>/ in run.py's layout (results/README.md):

  meta.json      "simulated": true, "model", the model's description and topology
  plan.json      the points, as run.py's (plus "simulated", "model", "args")
  status.json    per point: ok, rc, message, seconds
  machine.json   the model the run used (a copy, sources included); model.flat its flat form
  raw/<v>/workers-<N>/<workload>.json   Google Benchmark JSON, context "simulated": true
  logs/<v>/workers-<N>/<workload>.log   simbench's stderr, line 1 = its command
  SIMULATED.md   every median beside its Brent bound (report.write_simulated)
  bands.json     where asked: points re-simulated with each uncertain cost group at the
                 ends of its range (simmodel.band_ends), model.<end>.flat the models used

The run is read back like any other (rundata.load_run, rundata.medians); its figures are
gnuplot.write_simulated_plots'.

The argument sets are the workloads' default ones that a quick real sweep takes: the
first of each workload, and every set of `imbalance` and `article` (the claim's
scenarios, config.WHOLE_WORKLOADS); or
every set (`all_sets`), those whose benchmark name matches a regular expression
(`match`), or the benchmark names of a real run (`like`), for validation.
"""
import concurrent.futures
import datetime
import json
import os
import re
import shlex
import subprocess
import sys
import time

from . import simmodel as modelmod
from .config import ROOT, WHOLE_WORKLOADS
from .files import atomic_write_json, atomic_write_text
from .gbjson import BadResultFile, load_gb_file, parse_gb_doc
from .machine import git_info
from .report import write_simulated
from .rundata import BANDS


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


def list_sets(bin_path):
    """{workload: [(index, benchmark name, args string), ...]} from simbench --list."""
    out = subprocess.run([bin_path, "--list"], check=True, capture_output=True, text=True).stdout
    sets = {}
    for line in out.splitlines():
        wl, idx, name, args = line.split()
        sets.setdefault(wl, []).append((int(idx), name, args))
    return sets


def choose(sets, workloads, all_sets=False, like=None, match=None):
    chosen = {}
    for wl in workloads:
        if wl not in sets:
            raise SimError("unknown workload %r (have: %s)" % (wl, ", ".join(sorted(sets))))
        s = sets[wl]
        if like is not None:
            s = [x for x in s if x[1] in like]
        elif match is not None:
            s = [x for x in s if re.search(match, x[1])]
        elif not all_sets and wl not in WHOLE_WORKLOADS:
            s = s[:1]
        if s:
            chosen[wl] = s
    return chosen


def _write_json(path, doc):
    """A JSON file of the run, its keys in the order the document has them."""
    atomic_write_json(path, doc, sort_keys=False)


def run_point(point, run_dir, flat, reps, seed):
    """All argument sets of one (variant, workers, workload): one merged raw file."""
    doc, msgs, rc_all = None, [], 0
    log_path = os.path.join(run_dir, point["log"])
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    t0 = time.time()
    with open(log_path, "w") as log:
        for name, args in zip(point["benchmarks"], point["args"]):
            cmd = [point["binary"], "--model", flat, "--workers", str(point["workers"]),
                   "--workload", point["workload"], "--args", args, "--reps", str(reps),
                   "--seed", str(seed)]
            log.write(" ".join(shlex.quote(c) for c in cmd) + "\n")
            log.flush()
            p = subprocess.run(cmd, capture_output=True, text=True)
            log.write(p.stderr)
            if p.returncode != 0:
                rc_all = p.returncode
                msgs.append("%s: exit %d: %s" % (name, p.returncode,
                                                 (p.stderr.strip().splitlines() or [""])[-1]))
            try:
                one = json.loads(p.stdout)
            except ValueError:
                continue
            if doc is None:
                doc = one
            else:
                doc["benchmarks"].extend(one["benchmarks"])
    if doc is not None:
        _write_json(os.path.join(run_dir, point["raw"]), doc)
    return {"ok": rc_all == 0 and doc is not None, "rc": rc_all, "message": "; ".join(msgs),
            "seconds": round(time.time() - t0, 3),
            "finished": datetime.datetime.now().isoformat(timespec="seconds")}


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
             bands=None):
    """build: called once the model and the worker counts are known good, before the
    binaries are looked for (the command line passes make_sim).  bands: which points
    also get their band (bands.json): None, "top" (at the largest worker count), "all",
    or a set of workload names (at the largest worker count)."""
    m = modelmod.load(machine)
    bad = [n for n in workers if n < 1 or n > m["npus"]]
    if bad:
        raise modelmod.ModelError("--workers %s: the model %s has %d PUs (1..%d workers)"
                                  % (",".join(map(str, bad)), m["name"], m["npus"], m["npus"]))
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
    sets = list_sets(binary(variants[0]))
    workloads = workloads or sorted(sets)
    chosen = choose(sets, workloads, all_sets, like, match)
    started = datetime.datetime.now()
    # the tree as the binaries were built from it (build() above), not as it is at the end
    git = git_info(ROOT, simulated=True)
    run_id = (os.path.basename(os.path.normpath(out)) if out
              else "sim-%s-%s" % (m["name"], started.strftime("%Y%m%d-%H%M%S")))
    run_dir = out or os.path.join(ROOT, "results", run_id)
    os.makedirs(run_dir, exist_ok=True)
    flat = os.path.join(run_dir, "model.flat")
    atomic_write_text(flat, modelmod.flatten(m))
    with open(m["path"]) as f:
        machine_doc = json.load(f)
    _write_json(os.path.join(run_dir, "machine.json"), machine_doc)
    points = []
    for v in variants:
        for n in workers:
            for wl, s in sorted(chosen.items()):
                pid = "%s/workers-%d/%s" % (v, n, wl)
                points.append({"id": pid, "variant": v, "reference": False, "workers": n,
                               "workload": wl, "binary": binary(v),
                               "benchmarks": [x[1] for x in s], "args": [x[2] for x in s],
                               "filter": None, "simulated": True, "model": m["name"],
                               "raw": "raw/%s.json" % pid, "log": "logs/%s.log" % pid})
    plan = {"version": 1, "simulated": True, "model": m["name"], "seed": seed,
            "repetitions": reps, "workers": workers, "full": False, "all_sets": all_sets,
            "filter": None, "min_time": None, "timeout": None, "points": points}
    _write_json(os.path.join(run_dir, "plan.json"), plan)
    status = {}
    echo("simulate: %d points on %s (%s), %d workers max -> %s"
         % (len(points), m["name"], m["topology"]["synthetic"], max(workers), run_dir))
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        futs = {ex.submit(run_point, p, run_dir, flat, reps, seed): p for p in points}
        for fu in concurrent.futures.as_completed(futs):
            p = futs[fu]
            st = fu.result()
            status[p["id"]] = st
            echo("  %-40s %s %6.1f s%s" % (p["id"], "ok " if st["ok"] else "FAIL", st["seconds"],
                                           "" if st["ok"] else "  " + st["message"]))
    _write_json(os.path.join(run_dir, "status.json"), dict(sorted(status.items())))
    if bands:
        chosen_pts = [p for p in points if status[p["id"]]["ok"] and (
            bands == "all" or p["workers"] == max(workers) and (
                bands == "top" or p["workload"] in bands))]
        simulate_bands(m, run_dir, chosen_pts, seed, jobs, echo)
    ctx = {}
    for p in points:
        path = os.path.join(run_dir, p["raw"])
        if p["variant"] not in ctx and os.path.exists(path):
            ctx[p["variant"]] = load_gb_file(path)[0]
    meta = {"run_id": run_id, "simulated": True, "model": m["name"],
            "model_description": m.get("description", ""), "model_measured": bool(m.get("measured")),
            "topology": "simulated: synthetic " + m["topology"]["synthetic"],
            "cpu_model": "simulated " + m["name"], "started": started.isoformat(timespec="seconds"),
            "finished": datetime.datetime.now().isoformat(timespec="seconds"),
            "command": command, "git": git, "variants": variants,
            "references": [], "workloads": sorted(chosen), "bench_context": ctx}
    _write_json(os.path.join(run_dir, "meta.json"), meta)
    write_simulated(run_dir)
    failed = [k for k, v in status.items() if not v["ok"]]
    return run_dir, failed


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
    jobs_list = [(p, name, args, label) for p in points
                 for name, args in zip(p["benchmarks"], p["args"]) for label, _, _ in ends]
    echo("simulate: the band of %d points: %d re-simulations (%s)"
         % (len(points), len(jobs_list), ", ".join(e[0] for e in ends)))
    out, failed = {}, []

    def one(job):
        p, name, args, label = job
        cmd = [p["binary"], "--model", flats[label], "--workers", str(p["workers"]),
               "--workload", p["workload"], "--args", args, "--reps", "1", "--seed", str(seed)]
        r = subprocess.run(cmd, capture_output=True, text=True)
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
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        for (p, name, _, label), got in ex.map(one, jobs_list):
            key = "%s/%d/%s" % (p["variant"], p["workers"], name)
            if got is None:
                failed.append("%s (%s)" % (key, label))
                continue
            out.setdefault(key, {})[label] = got[0]
            for c, value in got[1].items():
                metrics.setdefault(c, {}).setdefault(key, {})[label] = value
    _write_json(os.path.join(run_dir, BANDS), {
        "ranges": {g: list(r) for g, r in m["ranges"].items()},
        "ends": [e[0] for e in ends], "points": out, "metrics": metrics, "failed": failed})
    return out

