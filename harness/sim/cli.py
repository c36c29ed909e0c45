"""cli.py -- the command line of harness.sim (what run.py's `calibrate` and `simulate`
subcommands call):

  python3 -m harness.sim calibrate [--name here] [--out harness/machines]
  python3 -m harness.sim simulate --machine epyc16 --workers 1,2,4,8,16
        [--variants a,b] [--workloads a,b] [--reps 3] [--seed 1] [--jobs 1] [--all-sets]
        [--filter REGEX]
        [--like REAL_RUN_DIR] [--out DIR] [--no-build] [--bands none|top|all]
  python3 -m harness.sim validate --real REAL_RUN_DIR --sim SIM_RUN_DIR [--out FILE.md]
  python3 -m harness.sim flatten MODEL        the engine's flat form, to stdout
  python3 -m harness.sim models               the shipped models

Exit status: 0 ok; 1 a point failed; 2 bad input (unknown model, malformed model file,
more workers than the model has PUs, unknown variant or workload).
"""
import argparse
import os
import sys

from harness.sim import model as modelmod
from harness.sim import simulate as simmod


def _list(s):
    return [x for x in s.split(",") if x] if s else None


def _ints(s):
    try:
        return [int(x) for x in s.split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError("expected a list like 1,2,4, got %r" % s)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m harness.sim", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("calibrate", help="measure this machine into a model JSON")
    c.add_argument("--name", default="here", help="the model's name (default: here)")
    c.add_argument("--out", default=modelmod.MACHINES,
                   help="the folder the model JSON goes to (default: harness/machines)")
    c.add_argument("--tool", default=os.path.join(simmod.ROOT, "build", "sim-calibrate"),
                   help="the measuring program (default: build/sim-calibrate)")
    c.add_argument("--no-build", action="store_true",
                   help="do not run `make sim` first (it builds the tool and the benches the "
                        "code fit runs)")
    s = sub.add_parser("simulate", help="a sweep in simulated time on a machine model")
    s.add_argument("--machine", required=True,
                   help="a model: a name in harness/machines (see `models`) or a JSON path")
    s.add_argument("--workers", type=_ints,
                   help="worker counts (default: the --like run's, else 1,2,4,8,16)")
    s.add_argument("--variants", help="comma-separated (default: every simulation build)")
    s.add_argument("--workloads", help="comma-separated (default: every workload)")
    s.add_argument("--reps", type=int, default=3,
                   help="repetitions per point, each with its own seed (default 3)")
    s.add_argument("--seed", type=int, default=1,
                   help="the first repetition's seed: the same seed, the same result")
    s.add_argument("--jobs", type=int, default=1,
                   help="simulations run at once (default 1; each uses one core)")
    s.add_argument("--all-sets", action="store_true",
                   help="every argument set of --full, not only the default ones")
    s.add_argument("--filter", help="only the argument sets whose benchmark name matches")
    s.add_argument("--like", help="take the benchmarks (and variants) of this real run")
    s.add_argument("--bands", choices=("none", "top", "all"), default="none",
                   help="also re-simulate points with each uncertain cost group at the ends "
                        "of its stated range (bands.json): at the largest worker count "
                        "(top) or everywhere (all)")
    s.add_argument("--out", help="the run directory (default: results/sim-<model>-<time>)")
    s.add_argument("--no-build", action="store_true",
                   help="do not run `make sim` first (it is incremental, and by default "
                        "brings the simulation build up to date)")
    v = sub.add_parser("validate", help="simulated vs measured: the error table")
    v.add_argument("--real", required=True, help="a measured run directory")
    v.add_argument("--sim", required=True, help="a simulated run directory (of the here model)")
    v.add_argument("--out", help="the table's file (default: results/validation/<sim run>.md)")
    f = sub.add_parser("flatten", help="print a model's flat form (for simbench --model)")
    f.add_argument("machine")
    sub.add_parser("models", help="list the shipped models")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "calibrate":
            from harness.sim import calibrate
            if not a.no_build:
                simmod.make_sim()
            calibrate.run(a.tool, a.name, a.out)
            return 0
        if a.cmd == "models":
            for name in modelmod.available():
                m = modelmod.load(name)
                print("%-12s %3d PUs  %s" % (name, m["npus"], m.get("description", "")))
            return 0
        if a.cmd == "flatten":
            sys.stdout.write(modelmod.flatten(modelmod.load(a.machine)))
            return 0
        if a.cmd == "validate":
            from harness.sim import validate
            out = a.out or os.path.join(simmod.ROOT, "results", "validation",
                                        "%s.md" % os.path.basename(os.path.normpath(a.sim)))
            try:
                st = validate.write(a.real, a.sim, out)
            except (ValueError, OSError) as e:
                raise simmod.SimError(str(e)) from None
            except KeyError as e:
                raise simmod.SimError("%s or %s is not the run it should be (no %s in its "
                                      "records): --real takes a measured run, --sim a "
                                      "simulated one" % (a.real, a.sim, e)) from None
            moved = "".join(", host drift since calibrate %+.1f %% (%s)" % (100 * d, name)
                            for name, d in st["drift"])
            print("validate: %d points, median |error| %.1f %%, worst %.1f %%%s -> %s"
                  % (st["n"], 100 * st["median_abs_error"], 100 * st["worst_abs_error"],
                     moved, out))
            return 0
        like = None
        variants = _list(a.variants)
        workloads = _list(a.workloads)
        workers = a.workers or [1, 2, 4, 8, 16]
        build = None if a.no_build else simmod.make_sim
        if a.like:
            modelmod.load(a.machine)  # a bad model is refused before any build
            if build:
                build()
                build = None
            real = simmod.medians(a.like)
            if not real:
                raise simmod.SimError("%s holds no real run" % a.like)
            like = {k[2] for k in real}
            workers = a.workers or sorted({k[1] for k in real})
            variants = variants or sorted({k[0] for k in real} & set(simmod.variants_built()))
            workloads = workloads or sorted({b.split("/")[0] for b in like})
        if a.reps < 1:
            raise simmod.SimError("--reps must be >= 1")
        run_dir, failed = simmod.simulate(a.machine, variants, workloads, workers, a.reps, a.seed,
                                          a.out, a.jobs, a.all_sets, like, " ".join(sys.argv),
                                          match=a.filter, build=build,
                                          bands=None if a.bands == "none" else a.bands)
        from harness.sim import plots
        plots.plot(run_dir)
        print("simulate: wrote %s (SIMULATED.md)%s" % (run_dir, "; FAILED: " + ", ".join(failed) if failed else ""))
        return 1 if failed else 0
    except (modelmod.ModelError, simmod.SimError) as e:
        print("%s: error: %s" % (a.cmd, e), file=sys.stderr)
        return 2
