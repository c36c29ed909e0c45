"""The command line of run.py: its parser, one function per command (run, list, plot,
compare, report) and main(), which turns bad input into one line and exit code 2.

    ./run.py run                      quick sweep: every variant x workload x workers 1..nproc,
                                      each workload's first argument set (and the imbalance
                                      sweep), 10 repetitions (20 at the claim's points)
    ./run.py run --full               the real sweep: every argument set (with the workloads'
                                      `full` sets), 10 repetitions, longer runs
    ./run.py run --resume latest      finish a sweep that was interrupted
    ./run.py list [--benchmarks]      the variants, references and workloads the build has
    ./run.py plot RUN                 gnuplot SVG + PNG into plots/<run-id>/
    ./run.py compare RUN_A RUN_B      per benchmark B/A with its 95% family-wise bracket and
                                      its verdict (harness/driver/compare.py)
    ./run.py report RUN               results/<run-id>/REPORT.md
    ./run.py publish RUN              prune a run to its lean published form (raw JSON,
                                      meta, plan, status, REPORT.md, embedded figures)
    ./run.py run --publish            a quick sweep, its plots and report, then publish
    ./run.py run --sim epyc16,twosocket64
                                      ... and its claim scenarios simulated on a 16-core EPYC
                                      model (and the article's on a 64-core one), drawn and
                                      reported beside (SIMULATED)

  Simulated time (harness/sim/README.md; `python3 -m harness.sim COMMAND` is the same):
    ./run.py simulate --machine epyc16 --workers 1,2,4,8,16
                                      a sweep in simulated time on a machine model, written
                                      like a real run (results/sim-<model>-<time>/,
                                      SIMULATED.md, its figures)
    ./run.py simulate --resume SIMRUN finish a simulated sweep that was interrupted
    ./run.py calibrate                measure this machine into harness/machines/here.json
    ./run.py validate --real RUN --sim SIMRUN
                                      simulated against measured: the error table
    ./run.py models | flatten MODEL   the shipped machine models; a model's flat form

  The policy map (harness/driver/policymap.py; `make map`):
    ./run.py map [--jobs N] [--engine local|dask|dask-local] [--scheduler ADDRESS]
                                      which policy wins where: forms of imbalance x task
                                      grains x workers, measured at 1-2 and SIMULATED to 128
                                      (results/map-<time>/REPORT.md, plots/map-<time>/)

RUN is a run id under results/, 'latest', or a path to a run directory; compare also
accepts RUN:VARIANT to compare two variants (of one run or of two).

The names of variants and workloads are asked from the build (`make list-variants`,
`make list-workloads`, `make list-references`) and from each benchmark binary's own
listing (`--benchmark_list_tests`); the driver keeps no list of them.  The formats of the
files written are described in results/README.md and plots/README.md.

Python 3 standard library only, plus gnuplot for the plots.  Exit codes: 0 success,
1 the sweep ran but some points failed or reported wrong answers, 2 bad input or a
missing tool (one line on stderr), 128 + the signal when interrupted (130 Ctrl-C, 143
SIGTERM, 129 SIGHUP: the bench running then is killed, every finished point is kept).
"""

import argparse
import contextlib
import os
import sys

from . import calibrate, policymap, simmodel, validate
from .build import Build
from .companion import check_models
from .compare import COMPARISON_HEADERS, compare_sides, comparison_rows, significance_notes
from .config import (EXIT_FAILED, EXIT_USAGE, FULL, PROG, QUICK, ROOT, UsageError,
                     check_unknown, parse_name_list, parse_workers)
from .files import atomic_write_text, check_out_path, write_output
from .flow import measure_targets, publish_locked, start_simulation, stopped, sweep_locked
from .fmt import format_table
from .gnuplot import Gnuplot, plots_dir, write_plots, write_simulated_plots
from .proc import Interrupted, stop_signals_interrupt
from .report import make_plots_and_report
from .rundata import filter_results, load_companions, load_run, results_csv, samples_csv
from .rundir import RunLock, resolve_run, split_run_spec
from .simulate import SimError, finish_sim, make_sim, reopen_sim
from .sweep import resume_run, start_run, warn_ignored
from .targets import KNOWN, TARGET_ROUNDS, check_only


DESCRIPTION = f"{PROG} -- measure every scheduler variant, keep the results, compare, plot, report."


def cmd_run(args):
    build = Build(args.root)
    models = check_models(args.sim) if args.sim else None  # refused before the sweep
    run_dir, plan, lock = resume_run(args, build) if args.resume else start_run(args, build)
    with lock:                         # until the run is done with, however that ends
        return sweep_locked(args, build, run_dir, plan, models)


def cmd_list(args):
    build = Build(args.root)
    sections = [("variants", build.variants, False), ("references", build.references, True),
                ("workloads", build.workloads, None)]
    for title, names, reference in sections:
        print(f"{title}:")
        for name in names:
            note = ""
            if reference is not None and not os.access(build.binary(name, reference), os.X_OK):
                note = "  (not built)"
            print(f"  {name}{note}")
            if args.benchmarks and reference is not None and not note:
                for bench in build.list_benchmarks(build.binary(name, reference), args.full):
                    print(f"    {bench}")
    return 0


def load_selected(args, spec):
    """load_run of a RUN argument with the --variants/--workloads/--workers filters."""
    data = load_run(resolve_run(spec, args.root))
    return filter_results(
        data,
        variants=parse_name_list(args.variants, "--variants") if args.variants else None,
        workloads=parse_name_list(args.workloads, "--workloads") if args.workloads else None,
        workers=parse_workers(args.workers) if args.workers else None)


def cmd_plot(args):
    if args.out:
        check_out_path(args.out, "--out", directory=True)
    gnuplot = Gnuplot()
    data = load_selected(args, args.run)
    if not data.usable():
        raise UsageError(f"{data.run_dir} has no usable results to plot")
    out = args.out or plots_dir(args.root, data.run_id)
    sims = ([load_run(resolve_run(s, args.root)) for s in parse_name_list(args.with_sim, "--with-sim")]
            if args.with_sim else load_companions(data))
    for sim in sims:
        if not sim.meta.get("simulated"):
            raise UsageError(f"--with-sim {sim.run_id}: not a simulated run (meta.json has no "
                             "\"simulated\": true)")
    manifest = write_plots(data, out, gnuplot, sims)
    bad = [p for p in manifest["plots"] if p.get("error")]
    print(f"{PROG}: {len(manifest['plots']) - len(bad)} plots "
          f"({', '.join(ext for ext, _ in gnuplot.terminals)}) in {os.path.relpath(out)}")
    return EXIT_FAILED if bad else 0


def cmd_compare(args):
    if args.out:
        check_out_path(args.out, "--out", directory=False)
    sides = []
    for spec in (args.run_a, args.run_b):
        run_dir, variant = split_run_spec(spec, args.root)
        data = load_selected(args, run_dir)
        if variant:
            check_unknown([variant], set(data.variants()), f"variant in {data.run_id}")
        sides.append((data, variant))
    (da, va), (db, vb) = sides
    if bool(va) != bool(vb):
        va, vb = va or vb, vb or va
    comparisons, problems = compare_sides(da.results, va, db.results, vb)
    if not comparisons and not problems:
        raise UsageError("the two sides have no benchmark in common")
    sim = [d.plan.get("simulated") is True for d in (da, db)]
    lines = [f"{side} = {d.run_dir}{f' ({v})' if v else ''}{' (SIMULATED)' if s else ''}"
             for side, d, v, s in (("A", da, va, sim[0]), ("B", db, vb, sim[1]))] + [""]
    text = "\n".join(lines) + format_table(COMPARISON_HEADERS, comparison_rows(comparisons))
    notes = significance_notes(comparisons, simulated=any(sim)) + \
        [f"not compared: {p}" for p in problems]
    if comparisons and max(c.workers for c in comparisons) <= 2:
        notes.append("Note: at 1-2 workers a thief has at most one victim, so policies that "
                     "differ only in the order of victims make the same choices here; "
                     "compare them at more workers (./run.py simulate, SIMULATED).")
    print(text + "\n" + "\n".join(notes))
    if args.out:
        md = ("\n".join(f"- {line}" for line in lines if line) + "\n\n"
              + format_table(COMPARISON_HEADERS, comparison_rows(comparisons), markdown=True)
              + "\n" + "\n\n".join(notes) + "\n")
        write_output(args.out, md)
    return 0


def cmd_report(args):
    if args.out:
        check_out_path(args.out, "--out", directory=False)
    data = load_selected(args, args.run)
    if args.csv:
        atomic_write_text(os.path.join(data.run_dir, "results.csv"), results_csv(data.results))
        atomic_write_text(os.path.join(data.run_dir, "samples.csv"), samples_csv(data.results))
    path = make_plots_and_report(data, args.root, plots=not args.no_plot,
                                 report_path=args.out, against=args.against)
    print(f"{PROG}: report: {os.path.relpath(path)}")
    return 0


def cmd_publish(args):
    with RunLock(resolve_run(args.run, args.root)):    # never while a sweep writes it
        return publish_locked(args)


def cmd_targets(args):
    run_dir = resolve_run(args.run, args.root)
    only = check_only(parse_name_list(args.only, "--only") if args.only else list(KNOWN))
    if args.rounds < 1:
        raise UsageError("--rounds must be at least 1")
    with RunLock(run_dir):
        measure_targets(run_dir, Build(args.root), only, args.rounds, args.no_build)
        data = load_run(run_dir)
        path = make_plots_and_report(data, args.root, plots=False)
        print(f"{PROG}: report: {os.path.relpath(path)}", file=sys.stderr)
    return 0


def cmd_calibrate(args):
    if not args.no_build:
        make_sim()
    calibrate.run(args.tool, args.name, args.out)
    return 0


def cmd_models(args):
    for name in simmodel.available():
        m = simmodel.load(name)
        print("%-12s %3d PUs  %s" % (name, m["npus"], m.get("description", "")))
    return 0


def cmd_flatten(args):
    sys.stdout.write(simmodel.flatten(simmodel.load(args.machine)))
    return 0


def cmd_validate(args):
    out = args.out or os.path.join(ROOT, "results", "validation",
                                   "%s.md" % os.path.basename(os.path.normpath(args.sim)))
    try:
        st = validate.write(args.real, args.sim, out)
    except ValueError as e:
        raise UsageError(str(e)) from None
    except KeyError as e:
        raise UsageError("%s or %s is not the run it should be (no %s in its records): "
                         "--real takes a measured run, --sim a simulated one"
                         % (args.real, args.sim, e)) from None
    moved = "".join(", host drift since calibrate %+.1f %% (%s)" % (100 * d, name)
                    for name, d in st["drift"])
    print("validate: %d points, median |error| %.1f %%, worst %.1f %%%s -> %s"
          % (st["n"], 100 * st["median_abs_error"], 100 * st["worst_abs_error"], moved, out))
    return 0


SIM_SELECTION_OPTIONS = ("machine", "variants", "workloads", "workers", "reps", "seed",
                         "all_sets", "filter", "like", "out")


def cmd_simulate(args):
    if args.resume:
        warn_ignored(args, SIM_SELECTION_OPTIONS)
        run_dir, plan, model, lock = reopen_sim(args.resume)
    else:
        run_dir, plan, model, lock = start_simulation(args)
    with lock:
        try:
            failed = finish_sim(run_dir, plan, model, args.jobs,
                                None if args.bands == "none" else args.bands)
        except KeyboardInterrupt as e:
            return stopped(e, "", run_dir, ROOT, "simulate")
    write_simulated_plots(run_dir)
    print("simulate: wrote %s (SIMULATED.md)%s"
          % (run_dir, "; FAILED: " + ", ".join(failed) if failed else ""))
    return EXIT_FAILED if failed else 0


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit code 2 through UsageError)."""

    def error(self, message):
        raise UsageError(f"{message} (see {self.prog} --help)")


def add_filters(p):
    p.add_argument("--variants", metavar="LIST", help="only these variants (comma-separated)")
    p.add_argument("--workloads", metavar="LIST", help="only these workloads (comma-separated)")
    p.add_argument("--workers", metavar="LIST", help="only these worker counts, e.g. 1,2 or 1-4")




def build_parser():
    common = Parser(add_help=False)
    common.add_argument("--root", default=ROOT,
                        help="the source tree with the Makefile, build/, results/, plots/ "
                             "(default: run.py's directory)")
    parser = Parser(prog=PROG, description=DESCRIPTION, allow_abbrev=False,
                    formatter_class=argparse.RawDescriptionHelpFormatter,
                    epilog="Run `%(prog)s COMMAND --help` for a command's options.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("run", parents=[common], allow_abbrev=False,
                       help="sweep variants x workloads x workers into results/<run-id>/")
    add_filters(p)
    p.add_argument("--repetitions", type=int, metavar="N",
                   help=f"repetitions per benchmark (quick {QUICK['repetitions']}, full {FULL['repetitions']})")
    p.add_argument("--min-time", type=float, metavar="S",
                   help=f"--benchmark_min_time per repetition (quick {QUICK['min_time']}, full {FULL['min_time']})")
    p.add_argument("--per-round", type=int, metavar="N",
                   help="repetitions per bench invocation in the interleaved rounds (default 1: "
                        "every variant of a point once per round; more: fewer invocations, "
                        "each paying its start and answer check once)")
    p.add_argument("--full", action="store_true",
                   help="the full sweep: the workloads' extra argument sets, more repetitions and time")
    p.add_argument("--all-sets", action="store_true",
                   help="every default argument set, not only the quick sweep's share")
    p.add_argument("--filter", metavar="REGEX",
                   help="the listed benchmarks whose name matches (Python re)")
    p.add_argument("--out", metavar="DIR", help="the run directory (default results/<date-time>)")
    p.add_argument("--resume", metavar="RUN", help="continue run RUN (an id, 'latest' or a path)")
    p.add_argument("--seed", type=int, help="seed of the point order (default: random, recorded)")
    p.add_argument("--timeout", type=float, metavar="S", help="limit per point in seconds")
    p.add_argument("--no-build", action="store_true",
                   help="do not run make (by default it brings the chosen binaries up to "
                        "date: incremental, a second when nothing changed)")
    p.add_argument("--no-plot", action="store_true", help="skip the plots and REPORT.md at the end")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.add_argument("--publish", action="store_true",
                   help="at the end, prune the run to its published form (./run.py publish); "
                        "refused for a run from a tree with uncommitted code changes")
    p.add_argument("--sim", metavar="MODEL[,MODEL...]",
                   help="at the end, simulate the run's imbalance and article scenarios on "
                        f"the first machine model ({', '.join(simmodel.available())} or a model "
                        "file) at 1, 2, 4, ... up to its PUs, and the article scenarios on "
                        "each further model at its PUs; drawn and reported beside the "
                        "measured ones, labelled SIMULATED (`make run` passes --sim "
                        "epyc16,twosocket64)")
    p.add_argument("--targets", type=int, nargs="?", const=TARGET_ROUNDS, metavar="ROUNDS",
                   help="at the end, measure the issues' performance targets side by side "
                        "against what users would pick (./run.py targets) in ROUNDS "
                        f"alternating rounds (default {TARGET_ROUNDS}); `make run` passes it")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("list", parents=[common], allow_abbrev=False,
                       help="the variants, references and workloads of the build")
    p.add_argument("--benchmarks", action="store_true", help="also each binary's benchmarks")
    p.add_argument("--full", action="store_true", help="with --benchmarks: the full sweep's set")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("plot", parents=[common], allow_abbrev=False,
                       help="gnuplot SVG and PNG figures into plots/<run-id>/")
    p.add_argument("run", metavar="RUN", help="run id, 'latest' or a run directory")
    add_filters(p)
    p.add_argument("--out", metavar="DIR", help="output directory (default plots/<run-id>)")
    p.add_argument("--with-sim", metavar="SIMRUN[,SIMRUN...]",
                   help="simulated runs (./run.py simulate) drawn beside the measured one: "
                        "the first dashed in the claim figures, each in a panel of the "
                        "article figure (default: the run's companions)")
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser("compare", parents=[common], allow_abbrev=False,
                       help="B against A per benchmark: the ratio with its bracket and verdict "
                            "(harness/driver/compare.py)")
    p.add_argument("run_a", metavar="RUN_A", help="RUN or RUN:VARIANT")
    p.add_argument("run_b", metavar="RUN_B", help="RUN or RUN:VARIANT")
    add_filters(p)
    p.add_argument("--out", metavar="FILE", help="also write the comparison as Markdown")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("report", parents=[common], allow_abbrev=False,
                       help="write results/<run-id>/REPORT.md (and its plots)")
    p.add_argument("run", metavar="RUN", help="run id, 'latest' or a run directory")
    add_filters(p)
    p.add_argument("--out", metavar="FILE", help="report path (default results/<run-id>/REPORT.md)")
    p.add_argument("--no-plot", action="store_true", help="use existing plots, do not redraw")
    p.add_argument("--csv", action="store_true",
                   help="also write results.csv and samples.csv from raw/ (a published run has none)")
    p.add_argument("--against", metavar="VARIANT",
                   help="compare every benchmark against this variant (default: the "
                        "global-queue pool, threadpool): the report's section 4, its heat "
                        "map and differences.csv")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("publish", parents=[common], allow_abbrev=False,
                       help="prune a run to what cannot be regenerated (results/README.md)")
    p.add_argument("run", metavar="RUN", help="run id, 'latest' or a run directory")
    p.add_argument("--prune-only", action="store_true",
                   help="prune a run that may not be published (dirty tree, or older than "
                        "the record); it stays marked not publishable")
    p.set_defaults(func=cmd_publish)

    p = sub.add_parser("targets", parents=[common], allow_abbrev=False,
                       help="the issues' performance targets, measured side by side against "
                            "what users would pick, into RUN/targets.json (the report and "
                            "README show them)")
    p.add_argument("run", metavar="RUN", help="run id, 'latest' or a run directory: a real "
                   "run of the tree's code")
    p.add_argument("--rounds", type=int, default=TARGET_ROUNDS, metavar="N",
                   help=f"alternating rounds per comparison (default {TARGET_ROUNDS})")
    p.add_argument("--only", metavar="LIST", help=f"only these comparisons ({', '.join(KNOWN)})")
    p.add_argument("--no-build", action="store_true", help="do not run `make all refs` first")
    p.set_defaults(func=cmd_targets)

    policymap.add_parser(sub, common)
    add_sim_commands(sub)
    return parser


# The commands in simulated time (harness/sim/README.md), with what each does; also
# reached as `python3 -m harness.sim COMMAND`.
SIM_COMMANDS = {
    "calibrate": "measure this machine's costs into a machine model (harness/machines/)",
    "simulate": "a sweep in simulated time on a machine model, written like a real run",
    "validate": "simulated against measured medians: the error table",
    "flatten": "print a machine model's flat form (simbench --model)",
    "models": "list the shipped machine models",
}


def add_sim_commands(sub):
    def command(name, func):
        p = sub.add_parser(name, allow_abbrev=False,
                           help=SIM_COMMANDS[name] + " (SIMULATED; see harness/sim/README.md)")
        p.set_defaults(func=func)
        return p

    p = command("calibrate", cmd_calibrate)
    p.add_argument("--name", default="here", help="the model's name (default: here)")
    p.add_argument("--out", default=simmodel.MACHINES,
                   help="the folder the model JSON goes to (default: harness/machines)")
    p.add_argument("--tool", default=os.path.join(ROOT, "build", "sim-calibrate"),
                   help="the measuring program (default: build/sim-calibrate)")
    p.add_argument("--no-build", action="store_true",
                   help="do not run `make sim` first (it builds the tool and the benches the "
                        "code fit runs)")

    p = command("simulate", cmd_simulate)
    p.add_argument("--machine",
                   help="a model: a name in harness/machines (see `models`) or a JSON path "
                        "(required but with --resume)")
    p.description = ("Without --variants, --workloads and --workers: the --like run's, "
                     "else every simulation build and workload at 1,2,4,8,16 workers.")
    add_filters(p)
    p.add_argument("--reps", type=int,
                   help="repetitions per point, each with its own seed (default 3)")
    p.add_argument("--seed", type=int,
                   help="the first repetition's seed: the same seed, the same result "
                        "(default 1)")
    p.add_argument("--jobs", type=int, default=1,
                   help="simulations run at once (default 1; each uses one core)")
    p.add_argument("--all-sets", action="store_true",
                   help="every argument set of --full, not only the default ones")
    p.add_argument("--filter", metavar="REGEX",
                   help="only the argument sets whose benchmark name matches")
    p.add_argument("--like", metavar="RUN_DIR",
                   help="take the benchmarks (and variants) of this real run")
    p.add_argument("--bands", choices=("none", "top", "all"), default="none",
                   help="also re-simulate points with each uncertain cost group at the ends "
                        "of its stated range (bands.json): at the largest worker count "
                        "(top) or everywhere (all)")
    p.add_argument("--out", metavar="DIR",
                   help="the run directory (default: results/sim-<model>-<time>)")
    p.add_argument("--no-build", action="store_true",
                   help="do not run `make sim` first (it is incremental, and by default "
                        "brings the simulation build up to date)")
    p.add_argument("--resume", metavar="RUN",
                   help="finish the simulated sweep RUN (an id, 'latest' or a path) that was "
                        "stopped: the points done are kept, the others run on the simulation "
                        "build as it is; its plan gives the selection, --jobs and --bands "
                        "(not recorded: give it again) apply")

    p = command("validate", cmd_validate)
    p.add_argument("--real", required=True, help="a measured run directory")
    p.add_argument("--sim", required=True, help="a simulated run directory (of the here model)")
    p.add_argument("--out", help="the table's file (default: results/validation/<sim run>.md)")

    p = command("flatten", cmd_flatten)
    p.add_argument("machine", help="a model: a name in harness/machines or a JSON path")
    command("models", cmd_models)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        with stop_signals_interrupt():
            return args.func(args)
    except (UsageError, simmodel.ModelError, SimError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as e:
        stop = Interrupted.of(e)
        print(f"\n{PROG}: {stop.describe()}", file=sys.stderr)
        return stop.exit_status
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")
        return 0
    except OSError as e:       # a file or directory the checks above did not foresee
        where = f"{e.filename}: " if e.filename else ""
        print(f"{PROG}: error: {where}{e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
