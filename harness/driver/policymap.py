"""`./run.py map` (and `make map`): which policy wins where, by how much, and why.

The map is the sweep with more points, not a second pipeline.  Its grid (mapgrid.py:
forms of imbalance x task grains x worker counts) becomes ordinary runs inside one
directory, results/map-<time>/, each planned by the sweep's planners and run through
sweep.execute_plans on one engine (engine.py: here, or a Dask cluster):

  map.json             the settings, and each invocation's engine and hosts
  measured/            a measured run (sweep.start_run: every variant and reference row,
                       the A/A twin, interleaved rounds) of the registered argument sets
                       that fall on the grid, at 1 and 2 workers
  sim-<model>/         a simulated run (simulate.start_sim) of every variant on each
                       model at its worker counts, one repetition a point; its bands.json
                       is assembled from the ends below
  sim-<model>.<end>/   the same points re-simulated with one uncertain cost group at one
                       end of its range (simmodel.band_ends), for the variants that could
                       win the cell there: within --band-within of the cell's winner, and
                       its runner-up; models/ holds the scaled models
  heldout-here/        the measured cells simulated on the `here` model: the held-out check
  cells.csv, REPORT.md the cells (mapcells.py), the policy guide and the held-out table
                       (mapguide.py); the figures and their tables in plots/map-<time>/
                       (mapfigs.py)

Phases: the measured run first (alone on its machine), then every nominal simulation and
the held-out one, then the band's ends, then the cells, the report and the figures.  A
stopped map is finished by `./run.py map --resume MAP`: every run inside keeps what it
finished; `--report MAP` redraws the report and figures alone."""

import argparse
import os
import re
import sys

from . import mapgrid, simmodel
from .build import Build
from .config import PROG, QUICK, UsageError, parse_name_list, parse_workers, warn
from .engine import ENGINES, make_engine
from .files import atomic_write_json, read_json
from .fmt import fmt_duration, now_iso
from .gbjson import params_of
from .plan import make_point, plan_points, select_targets
from .proc import usable_cpus
from .mapbands import candidates, scaled_model, with_end, write_bands
from .rundata import read_plan
from .rundir import RunLock
from .simulate import SimBackend, end_sim, make_sim, start_sim, variants_built
from .sweep import (BenchBackend, PlanExecution, command_line, execute_plans, finalize_run,
                    new_run_dir, start_run)

MAP_FILE = "map.json"
MEASURED = "measured"
HELDOUT = "heldout-here"
MEASURED_REPETITIONS = 20    # a measured cell's winner against its runner-up: 20 a side
BAND_WITHIN = 0.10


def sim_dir(model, end=None):
    return f"sim-{model}" + ("" if end is None else "." + end.replace(" ", ""))


def forms_of(keys):
    if not keys:
        return list(mapgrid.FORMS)
    try:
        return [mapgrid.FORM_BY_KEY[k] for k in keys]
    except KeyError as e:
        raise UsageError(f"unknown form {e} (forms: {', '.join(mapgrid.FORM_BY_KEY)})") from None


def settings_from(args):
    """map.json's settings from the command line."""
    try:
        grains = mapgrid.parse_grains(args.grains or "all")
        sim_grains = mapgrid.parse_grains(args.sim_grains)
        models = mapgrid.parse_models(args.model)
    except ValueError as e:
        raise UsageError(f"bad grain or model: {e} (grains in us: 0.1,1,10; models: "
                         "NAME:W,W)") from None
    forms = [f.key for f in forms_of(parse_name_list(args.forms, "--forms") if args.forms else None)]
    sim_forms = parse_name_list(args.sim_forms, "--sim-forms") if args.sim_forms else \
        [k for k in forms if mapgrid.FORM_BY_KEY[k].simulate]
    forms_of(sim_forms)
    for name, workers in models:
        m = simmodel.load(name)
        if max(workers) > m["npus"]:
            raise UsageError(f"--model {name}: {max(workers)} workers, the model has {m['npus']} PUs")
    try:
        within = float("inf") if args.band_within == "all" else \
            float(args.band_within or BAND_WITHIN)
    except ValueError:
        raise UsageError(f"--band-within {args.band_within}: a fraction, or all") from None
    return dict(version=1, created=now_iso(), command=command_line(),
                variants=parse_name_list(args.variants, "--variants") if args.variants else None,
                forms=forms, sim_forms=sim_forms, grains=grains, sim_grains=sim_grains,
                workers=[] if args.no_measured else parse_workers(args.workers or "1,2"),
                models=[] if args.no_sim else [[n, list(w)] for n, w in models],
                repetitions=args.repetitions or MEASURED_REPETITIONS,
                min_time=args.min_time or QUICK["min_time"],
                timeout=args.timeout or QUICK["timeout"], seed=args.seed or 1,
                band_within=None if within == float("inf") else within, engines=[])


# --- the points ----------------------------------------------------------------------

def measured_names(listed, settings):
    """The listed benchmark names that are cells of the map: {name: [(form, grain)]}
    (two forms share a name where they differ in their metric alone)."""
    forms = forms_of(settings["forms"])
    out = {}
    for name in listed:
        for f, g in mapgrid.form_of(name, forms):
            if (g is None or g in settings["grains"]) and any(
                    f.params(g, w, False) == {k: _num(v) for k, v in params_of(name).items()}
                    for w in settings["workers"]):
                out.setdefault(name, []).append((f, g))
    return out


def _num(v):
    try:
        return int(v)
    except ValueError:
        return v


def sim_choose(settings, workers, names_at):
    """start_sim's `choose`: one point per (variant, workers, workload) holding the
    cells' argument sets; names_at(listing, workers, variant) -> [benchmark name]."""
    def choose(targets, listing, m):
        points = []
        for t in targets:
            for w in workers:
                by = {}
                for name in names_at(listing, w, t.name):
                    by.setdefault(name.split("/", 1)[0], []).append(name)
                for workload, names in sorted(by.items()):
                    points.append(make_point(t, t.binary, w, workload, names, filter=None,
                                             simulated=True, model=m["name"]))
        return points
    return choose


def grid_sets(settings, listing, workers):
    """The benchmark names of the SIMULATED cells at one worker count."""
    order = lambda wl: mapgrid.arg_order(listing, wl)
    return list(mapgrid.cell_names(forms_of(settings["sim_forms"]), settings["sim_grains"],
                                   workers, order, True))


# --- the phases ----------------------------------------------------------------------

def open_or_start(sub, start):
    """(plan, lock) of the run `sub`: reopened where it exists, else start() -> (run_dir,
    plan, lock[, ...]) makes it."""
    if os.path.isdir(sub):
        plan = read_plan(sub)
        if plan is None:
            raise UsageError(f"{sub} has no usable plan.json: remove it to plan it again")
        return plan, RunLock(sub)
    got = start()
    return got[1], got[-1]


def measured_plan_args(settings, build, no_build):
    """sweep.start_run's arguments for the measured run: every variant and reference row
    (or --variants), the workloads of the forms, the measured worker counts, the full
    listing (the registered sets of --full: the map's grains are among them) narrowed by a
    filter to the cells' names; None when no listed set is a cell."""
    variants = settings["variants"]
    targets = select_targets(build, variants, no_build)
    first = next(t for t in targets if not t.reference)
    names = measured_names(build.list_benchmarks(first.binary, True), settings)
    if not names:
        return None
    return argparse.Namespace(
        variants=",".join(variants) if variants else None,
        workloads=",".join(sorted({f.workload for cells in names.values() for f, _ in cells})),
        workers=",".join(map(str, settings["workers"])), repetitions=settings["repetitions"],
        min_time=settings["min_time"], timeout=settings["timeout"], full=True, all_sets=False,
        filter="^(" + "|".join(re.escape(n) for n in sorted(names)) + ")$", out=None,
        seed=settings["seed"], per_round=1, no_build=True)


def run_measured(map_dir, settings, build, engine, args):
    sub = os.path.join(map_dir, MEASURED)
    if not os.path.isdir(sub):
        ns = measured_plan_args(settings, build, args.no_build)
        if ns is None:
            warn("no registered argument set falls on the map's grid: nothing measured")
            return None
        ns.out = sub
    plan, lock = open_or_start(sub, lambda: start_run(ns, build))
    with lock:
        ex = PlanExecution(BenchBackend(build.root), sub, plan, measured=True)
        execute_plans([ex], engine, args.quiet)
        finalize_run(sub)
    return sub


def sim_variants(settings, build):
    """The variants SIMULATED: --variants, else every one `make list-variants` names
    (never a list kept here), each built for simulation."""
    have = variants_built()
    want = settings["variants"] or build.variants
    missing = [v for v in want if v not in have]
    if missing:
        raise UsageError(f"not built for simulation: {', '.join(missing)} (`make sim`)")
    return want


def run_simulated(map_dir, settings, build, engine, args):
    """The nominal simulations of every model and the held-out one on `here`."""
    variants = sim_variants(settings, build)
    jobs = []
    for model, workers in settings["models"]:
        sub = os.path.join(map_dir, sim_dir(model))
        choose = sim_choose(settings, workers, lambda listing, w, v: grid_sets(settings, listing, w))
        jobs.append((sub, lambda sub=sub, model=model, workers=workers, choose=choose: start_sim(
            model, variants, None, list(workers), 1, settings["seed"], sub, command=command_line(),
            choose=choose)))
    measured = read_plan(os.path.join(map_dir, MEASURED)) if settings["workers"] else None
    if measured:
        names = {}
        for p in measured["points"]:
            if not p["reference"] and not p.get("twin_of"):
                names.setdefault(p["workers"], []).extend(p["benchmarks"])
        sub = os.path.join(map_dir, HELDOUT)
        choose = sim_choose(settings, sorted(names), lambda listing, w, v: names.get(w, []))
        jobs.append((sub, lambda sub=sub, choose=choose: start_sim(
            "here", variants, None, sorted(names), 1, settings["seed"], sub,
            command=command_line(), choose=choose)))
    return run_sims(jobs, engine, args)


def run_sims(jobs, engine, args):
    """Open or start each simulated run, run them all with the engine, end each."""
    opened = []
    try:
        for sub, start in jobs:
            plan, lock = open_or_start(sub, start)
            opened.append((sub, plan, lock))
        execute_plans([PlanExecution(SimBackend(os.path.join(sub, "model.flat")), sub, plan,
                                     measured=False) for sub, plan, _ in opened],
                      engine, args.quiet)
        for sub, plan, _ in opened:
            end_sim(sub, plan)
    finally:
        for _, _, lock in opened:
            lock.release()
    return [sub for sub, _, _ in opened]


def run_ends(map_dir, settings, engine, args):
    """The band: every model's candidates re-simulated at each end; bands.json."""
    jobs, ends_of = [], {}
    for model, workers in settings["models"]:
        nominal = os.path.join(map_dir, sim_dir(model))
        cand = candidates(nominal, settings, settings["band_within"])
        plan = read_plan(nominal)
        planned = [(p["variant"], p["workers"], b) for p in plan["points"]
                   for b in p["benchmarks"]]
        variants = sorted({v for v, _, _ in cand})
        m = simmodel.load(model)
        for label, group, factor in simmodel.band_ends(m):
            sub = os.path.join(map_dir, sim_dir(model, label))
            ends_of.setdefault(nominal, []).append((label, sub))

            def names_at(listing, w, v, cand=cand, planned=planned):
                # in the nominal plan's order: the same plan wherever it is made
                return [b for (cv, cw, b) in planned
                        if cv == v and cw == w and (cv, cw, b) in cand]

            def start(sub=sub, model=model, label=label, group=group, factor=factor,
                      workers=workers, variants=variants, names_at=names_at):
                path = scaled_model(map_dir, model, label, group, factor)
                return start_sim(path, variants, None, list(workers), 1, settings["seed"], sub,
                                 command=command_line(),
                                 choose=with_end(sim_choose(settings, workers, names_at), label),
                                 meta_extra={"band_end": label, "band_of": sim_dir(model)})
            jobs.append((sub, start))
    run_sims(jobs, engine, args)
    for nominal, ends in ends_of.items():
        write_bands(nominal, ends)


# --- the command ---------------------------------------------------------------------

def map_dir_of(spec, root):
    for candidate in (spec, os.path.join(root, "results", spec)):
        if os.path.isfile(os.path.join(candidate, MAP_FILE)):
            return os.path.abspath(candidate)
    raise UsageError(f"no map '{spec}' (a directory with {MAP_FILE}, or an id under "
                     f"{os.path.join(root, 'results')})")


def sim_cells(settings):
    """[(form, grain, workers)] of the SIMULATED part (one per model and worker count)."""
    forms = forms_of(settings["sim_forms"])
    return [(f, g, w) for _, workers in settings["models"] for w in workers for f in forms
            for g in ([None] if f.grain is None else settings["sim_grains"])
            if f.params(g, w, True) is not None]


def estimate(settings, build, args):
    """Lines that state what the map will run and about how long it takes."""
    lines = []
    jobs = args.jobs if args.engine == "local" else max(args.jobs, usable_cpus())
    if settings["workers"]:
        ns = measured_plan_args(settings, build, args.no_build)
        if ns is not None:
            targets = select_targets(build, settings["variants"], True)
            points = plan_points(build, targets, parse_name_list(ns.workloads, "forms"),
                                 settings["workers"], ns.filter, True)
            seen = mapgrid.earlier_iterations(os.path.join(args.root, "results"))
            sec = mapgrid.estimate_measured(
                points, settings["repetitions"], settings["min_time"],
                lambda p, b: seen.get((p["workers"], b)) or mapgrid.nominal_iteration_s(p, b))
            cells = {(p["workers"], b) for p in points for b in p["benchmarks"]}
            lines.append(f"measured: {len(cells)} cells, {len(points)} points x "
                         f"{settings['repetitions']} repetitions (interleaved rounds, "
                         f"min_time {settings['min_time']:g} s): about {fmt_duration(sec)} "
                         "(iterations timed in earlier runs under results/, else from "
                         "their work)")
            held = [(mapgrid.form_of(b)[0][0], None, w) for w, b in cells if mapgrid.form_of(b)]
            variants = len(settings["variants"] or build.variants)
            lines.append(f"held-out: the {len(cells)} measured cells on the here model, "
                         f"{variants} variants: about "
                         f"{fmt_duration(mapgrid.estimate_sim(held, variants, 0, 0, jobs))}")
    if settings["models"]:
        variants = len(settings["variants"] or build.variants)
        cells = sim_cells(settings)
        ends = max(len(simmodel.band_ends(simmodel.load(m))) for m, _ in settings["models"])
        within = settings["band_within"]
        share = mapgrid.band_share(within)
        sec = mapgrid.estimate_sim(cells, variants, ends, share, jobs)
        who = "every variant" if within is None else \
            f"the variants within {within:.0%} of the winner, about {share:.0%} of them"
        lines.append(
            f"SIMULATED: {len(cells)} cells x {variants} variants, each nominal and at {ends} "
            f"band ends ({who}): about {fmt_duration(sec)} with {jobs} at once on free "
            "cores (simbench's CPU time per run as timed here, mapgrid.SIM_RUN_S)")
    return lines


def write_outputs(map_dir, settings, args):
    """The cells, the report and the figures of a map (its runs as they are)."""
    from . import mapcells, mapfigs, mapreport
    from .gnuplot import plots_dir
    data = mapcells.load_map(map_dir, settings)
    mapcells.write_cells_csv(os.path.join(map_dir, "cells.csv"), data.cells)
    figures = []
    if not args.no_plot:
        # a map under results/ draws into plots/<map-id>/, one elsewhere (--out) beside it
        inside = os.path.dirname(map_dir) == os.path.abspath(os.path.join(args.root, "results"))
        where = plots_dir(args.root, os.path.basename(map_dir)) if inside else \
            os.path.join(map_dir, "plots")
        figures = mapfigs.write_figures(data, where)
    path = mapreport.write_report(map_dir, data, figures)
    print(f"{PROG}: map report: {os.path.relpath(path)}", file=sys.stderr)
    if getattr(args, "publish", False):
        publish_map(map_dir, args.root)
    return 0


def publish_map(map_dir, root):
    """Prune every run of the map to its published form (publish.publish_run: no logs,
    large raw files gzip-compressed, no absolute path); refused, before anything is
    pruned, when one of them may not be published (measured with uncommitted code)."""
    from .publish import publish_run, run_publishable
    subs = sorted(os.path.join(map_dir, d) for d in os.listdir(map_dir)
                  if os.path.isfile(os.path.join(map_dir, d, "plan.json")))
    for sub in subs:
        ok, why = run_publishable(sub)
        if not ok:
            raise UsageError(f"the map cannot be published: {os.path.basename(sub)}: {why}")
    for sub in subs:
        publish_run(sub, os.path.join(sub, "plots"), root)
    settings = read_json(os.path.join(map_dir, MAP_FILE))
    settings["published"] = now_iso()
    atomic_write_json(os.path.join(map_dir, MAP_FILE), settings, sort_keys=False)
    print(f"{PROG}: {os.path.relpath(map_dir)}: published ({len(subs)} runs pruned)",
          file=sys.stderr)


def cmd_map(args):
    if args.report:
        map_dir = map_dir_of(args.report, args.root)
        return write_outputs(map_dir, read_json(os.path.join(map_dir, MAP_FILE)), args)
    build = Build(args.root)
    if args.resume:
        map_dir = map_dir_of(args.resume, args.root)
        settings = read_json(os.path.join(map_dir, MAP_FILE))
        lock = RunLock(map_dir)
    else:
        settings = settings_from(args)
        if settings["models"] and not args.no_build:
            make_sim()
        if args.estimate:
            print("\n".join(f"{PROG}: map: {line}" for line in estimate(settings, build, args)))
            return 0
        map_dir, lock = new_run_dir(args.out, args.root, lambda run_id: {
            MAP_FILE: dict(settings, map_id=run_id)}, prefix="map-")
    with lock:
        if settings["models"] and not args.no_build:
            make_sim()
        for line in estimate(settings, build, args):
            print(f"{PROG}: map: {line}", file=sys.stderr)
        engine = make_engine(args.engine, args.scheduler, args.jobs)
        try:
            settings = read_json(os.path.join(map_dir, MAP_FILE))
            settings["engines"].append(dict(engine.describe(), at=now_iso(),
                                            command=command_line()))
            atomic_write_json(os.path.join(map_dir, MAP_FILE), settings, sort_keys=False)
            if settings["workers"]:
                run_measured(map_dir, settings, build, engine, args)
            run_simulated(map_dir, settings, build, engine, args)
            if settings["models"]:
                run_ends(map_dir, settings, engine, args)
        except KeyboardInterrupt:
            print(f"\n{PROG}: map stopped; continue with: {sys.argv[0]} map --resume "
                  f"{os.path.relpath(map_dir)}", file=sys.stderr)
            raise
        finally:
            engine.close()
        return write_outputs(map_dir, settings, args)


# The map's options: (flag, metavar, help) of those that take a value ...
OPTIONS = (
    ("--variants", "LIST", "only these variants (default: every variant the build lists, "
     "and the reference rows where they apply)"),
    ("--forms", "LIST", f"the forms of imbalance (default all: {', '.join(mapgrid.FORM_BY_KEY)})"),
    ("--sim-forms", "LIST", "the forms SIMULATED (default: all but uts, whose trees cost "
     "more than the rest)"),
    ("--grains", "US,US|all", "the grain axis in microseconds (default all: 0.1 to 1000 in "
     "half decades); a measured cell is a registered set on it"),
    ("--sim-grains", "US,US|decades|all", "the grains SIMULATED (default decades: 0.1, 1, "
     "10, 100, 1000 us)"),
    ("--workers", "LIST", "measured worker counts (default 1,2)"),
    ("--band-within", "FRACTION|all", "re-simulate at the band's ends the variants within "
     f"this share of a cell's winner, and its runner-up (default {BAND_WITHIN}; all: every "
     "variant)"),
    ("--scheduler", "ADDRESS", "the Dask scheduler of --engine dask (tcp://host:8786)"),
    ("--out", "DIR", "the map's directory (default results/map-<time>)"),
    ("--resume", "MAP", "finish a stopped map"),
    ("--report", "MAP", "only write a map's cells, report and figures"),
)
# ... and of the switches
SWITCHES = (
    ("--no-measured", "the SIMULATED part alone"),
    ("--no-sim", "the measured part alone"),
    ("--publish", "at the end, prune every run of the map to its published form (refused "
     "for code with uncommitted changes)"),
    ("--estimate", "say what the map would run and about how long, and stop"),
    ("--no-build", "do not run make first"),
    ("--no-plot", "no figures"),
    ("--quiet", "no progress output"),
)


def add_parser(sub, common):
    p = sub.add_parser("map", parents=[common], allow_abbrev=False,
                       help="the policy map: which policy wins where, measured at 1-2 workers "
                            "and SIMULATED on the machine models (results/map-<time>/)")
    for flag, metavar, text in OPTIONS:
        p.add_argument(flag, metavar=metavar, help=text)
    for flag, text in SWITCHES:
        p.add_argument(flag, action="store_true", help=text)
    p.add_argument("--model", action="append", metavar="MODEL:W,W",
                   help="a machine model and its SIMULATED worker counts, repeatable "
                        "(default: epyc16:4,16 twosocket64:64 numa128:128)")
    p.add_argument("--repetitions", type=int, metavar="N",
                   help=f"measured repetitions a point (default {MEASURED_REPETITIONS})")
    p.add_argument("--min-time", type=float, metavar="S", help="--benchmark_min_time a repetition")
    p.add_argument("--timeout", type=float, metavar="S", help="limit a bench invocation")
    p.add_argument("--seed", type=int, help="the measured rounds' order and the simulations' seed")
    p.add_argument("--jobs", type=int, default=1,
                   help="simulations at once on the local engine (default 1), threads of "
                        "the dask-local worker")
    p.add_argument("--engine", choices=ENGINES, default="local",
                   help="where the points run: here (local, the default), a Dask cluster "
                        "(dask, with --scheduler) or a Dask LocalCluster (dask-local)")
    p.set_defaults(func=cmd_map)
    return p
