"""What run.py's commands do once their arguments are read (cli.py reads them): a run's
stages after its plan (the sweep, its SIMULATED companions, the targets, the report,
publishing), publishing under the run's lock, measuring the targets into a run, starting
a simulated sweep from a command line's selection, and saying where an interrupted
command stopped."""

import contextlib
import os
import sys

from . import simmodel, targetfile
from .companion import missing_models, record_models, simulate_companion
from .config import (ARTICLE_WORKLOAD, BATCH_WORKLOAD, COMPANION_WORKLOADS, EXIT_FAILED, PROG,
                     UsageError, parse_name_list, parse_workers, warn)
from .gnuplot import plots_dir
from .files import atomic_write_json, read_json
from .machine import git_info
from .proc import Interrupted
from .publish import cmd_publish as publish_command
from .publish import run_publishable, update_readme
from .report import make_plots_and_report
from .rundata import (TARGETS_KEY, companion_dirs, medians, read_meta, record_meta,
                      recorded_models, recorded_target_rounds)
from .rundir import resolve_run
from .simulate import make_sim, start_sim, variants_built
from .sweep import BenchBackend, command_line, execute_plan, finalize_run, run_spec
from .targets import KNOWN, PARTIAL, write_into_run
from .targets import measure as measure_target_record


def stopped(interrupt, during, run_dir, root, command="run"):
    """Say where an interrupted run stopped and how to go on (`command --resume`); its
    exit status."""
    stop = Interrupted.of(interrupt)
    print(f"\n{PROG}: {stop.describe()}{during}; continue with: {sys.argv[0]} {command} "
          f"--resume {run_spec(run_dir, root)}", file=sys.stderr)
    return stop.exit_status


def sweep_locked(args, build, run_dir, plan, models):
    """cmd_run once its run directory is locked: the sweep, the simulated companions, the
    merge, the report, publishing."""
    run_id = os.path.basename(run_dir)
    if models:
        record_models(run_dir, models)  # a --resume finishes the companions too
    if args.targets:
        record_meta(run_dir, TARGETS_KEY, args.targets)   # and measures the targets
    rounds = recorded_target_rounds(read_meta(run_dir))
    models = models or recorded_models(read_meta(run_dir))
    reps = sorted({p.get("repetitions", plan["repetitions"]) for p in plan["points"]})
    reps = f"{reps[0]}" if len(reps) == 1 else f"{reps[0]}-{reps[-1]}"
    print(f"{PROG}: run {run_id}: {len(plan['points'])} points, {reps} "
          f"repetitions each -> {os.path.relpath(run_dir)}", file=sys.stderr)
    try:
        status = execute_plan(BenchBackend(build.root), run_dir, plan, args.quiet)
    except KeyboardInterrupt as e:
        return stopped(e, "", run_dir, build.root)
    sim_ok = targets_ok = True
    claims = {p["workload"] for p in plan["points"]} & {*COMPANION_WORKLOADS, BATCH_WORKLOAD}
    if models and claims:
        echo = (lambda *a, **k: None) if args.quiet else \
            (lambda text, **k: print(text, file=sys.stderr))
        # a resumed run's companions may be there already
        todo = missing_models(run_dir, models)
        try:
            for model in todo:
                first = model == models[0]
                if not first and ARTICLE_WORKLOAD not in claims:
                    continue
                sim_ok &= simulate_companion(run_dir, model, first, command_line(), echo,
                                             args.quiet)
        except KeyboardInterrupt as e:
            return stopped(e, " during the simulated companions; the measured run is complete",
                           run_dir, build.root)
    elif models:
        warn(f"--sim {','.join(models)}: the sweep has no "
             f"{' or '.join(COMPANION_WORKLOADS + (BATCH_WORKLOAD,))} "
             "scenario; nothing simulated")
    if rounds and not os.path.exists(os.path.join(run_dir, targetfile.FILE)):
        try:
            measure_targets(run_dir, build, list(KNOWN), rounds, args.no_build)
        except UsageError as e:
            warn(f"the targets were not measured: {e}")
            targets_ok = False
        except KeyboardInterrupt as e:
            return stopped(e, " during the targets; the measured run is complete", run_dir,
                           build.root)
    data = finalize_run(run_dir)
    failed = [p["id"] for p in plan["points"] if not status.get(p["id"], {}).get("ok")]
    logs = {p["id"]: p["log"] for p in plan["points"]}
    wrong = [r for r in data.results if r.errors]
    print(f"{PROG}: {len(plan['points']) - len(failed)} of {len(plan['points'])} points ok, "
          f"{len(wrong)} benchmark(s) with errors; {os.path.relpath(run_dir)}/results.csv",
          file=sys.stderr)
    for pid in failed:
        print(f"{PROG}: failed: {pid}: {status.get(pid, {}).get('message', '?')} "
              f"(log: {os.path.join(os.path.relpath(run_dir), logs[pid])})",
              file=sys.stderr)
    if not args.no_plot:
        path = make_plots_and_report(data, build.root)
        print(f"{PROG}: report: {os.path.relpath(path)}", file=sys.stderr)
    if args.publish:
        if failed or wrong or not sim_ok or not targets_ok:
            print(f"{PROG}: not published: {len(failed)} point(s) failed, {len(wrong)} "
                  f"benchmark(s) with errors{'' if sim_ok else ', the simulated companion failed'}"
                  f"{'' if targets_ok else ', the targets were not measured'}",
                  file=sys.stderr)
            return EXIT_FAILED
        args.run, args.prune_only = run_dir, False
        publish_locked(args)
    return EXIT_FAILED if failed or wrong or not sim_ok or not targets_ok else 0


def publish_locked(args):
    """Publish RUN, its lock held: README's answer block, the run, its companions."""
    run_dir = resolve_run(args.run, args.root)
    meta = read_meta(run_dir)
    # README's answer block first: publishing keeps the figures README embeds
    if not meta.get("simulated") and not args.prune_only and run_publishable(run_dir)[0] \
            and update_readme(args.root, run_dir):
        print(f"{PROG}: README.md: the answer block rewritten from {os.path.basename(run_dir)}")
    publish_command(args, resolve_run, plots_dir)
    for sim_dir in companion_dirs(run_dir, meta):
        if os.path.isdir(sim_dir):  # the simulated companions go with it
            args.run = sim_dir
            publish_command(args, resolve_run, plots_dir)
    return 0


def measure_targets(run_dir, build, only, rounds, no_build):
    """RUN/targets.json from the tree's binaries, which must be those the run measured
    (its lock held)."""
    meta = read_meta(run_dir)
    if meta.get("simulated"):
        raise UsageError(f"{run_dir} is a simulated run: targets are measured beside a real one")
    run_rev = (meta.get("git") or {}).get("rev")
    if not run_rev:
        raise UsageError(f"{os.path.basename(run_dir)} was not measured in a git checkout: "
                         "targets are tied to the run's code by its revision")
    # the record's own rule (targetfile.stale), applied to the tree before measuring
    why = targetfile.stale(dict(git=git_info(build.root)), meta.get("git"))
    if why:
        raise UsageError(f"{os.path.basename(run_dir)} is not of the tree's code ({why}): "
                         "targets measure the tree's binaries, beside a run of the same code")
    if not no_build:
        build.make(["all", "refs"] + (["sim"] if "flush-sim" in only else []))
    print(f"{PROG}: targets: {', '.join(only)}, {rounds} alternating round(s) each -> "
          f"{os.path.relpath(os.path.join(run_dir, targetfile.FILE))}", file=sys.stderr)
    # a stopped measurement left its comparisons in PARTIAL: this one keeps them (when of
    # the same code and rounds) and saves its own there as it goes
    partial = os.path.join(run_dir, PARTIAL)
    doc = measure_target_record(only, rounds, log_dir=os.path.join(run_dir, "logs", "targets"),
                                partial=read_json(partial),
                                save=lambda d: atomic_write_json(partial, d, sort_keys=False))
    write_into_run(run_dir, doc)
    with contextlib.suppress(FileNotFoundError):
        os.remove(partial)
    why = targetfile.stale(doc, meta.get("git"))
    if why:
        warn(f"{targetfile.FILE}: {why}: the run cannot be published with it")


def start_simulation(args):
    """simulate.start_sim with the command line's selection: (run_dir, plan, model, lock)."""
    if not args.machine:
        raise UsageError("simulate: --machine is required (or --resume RUN)")
    like = None
    variants = parse_name_list(args.variants, "--variants") if args.variants else None
    workloads = parse_name_list(args.workloads, "--workloads") if args.workloads else None
    workers = parse_workers(args.workers) if args.workers else None
    build = None if args.no_build else make_sim
    if args.like:
        simmodel.load(args.machine)  # a bad model is refused before any build
        if build:
            build()
            build = None
        real = medians(args.like)
        if not real:
            raise UsageError("%s holds no real run" % args.like)
        like = {k[2] for k in real}
        workers = workers or sorted({k[1] for k in real})
        variants = variants or sorted({k[0] for k in real} & set(variants_built()))
        workloads = workloads or sorted({b.split("/")[0] for b in like})
    reps = 3 if args.reps is None else args.reps
    if reps < 1:
        raise UsageError("--reps must be >= 1")
    return start_sim(args.machine, variants, workloads, workers or [1, 2, 4, 8, 16], reps,
                     1 if args.seed is None else args.seed, args.out, args.all_sets, like,
                     " ".join(sys.argv), match=args.filter, build=build)
