"""The simulated companions of a measured run: `./run.py run --sim MODEL[,MODEL...]` (and
`make run`, which passes `--sim epyc16,twosocket64`) ends a sweep by simulating its
claim scenarios on machine models (harness/sim: the same variants' code in simulated
time).  The first model simulates the run's imbalance and article scenarios at 1, 2, 4,
... up to its PUs; each further model only the article scenarios, with as many workers
as it has PUs (the article figure's panel for that machine).  A companion is an ordinary
simulated run beside the measured one (results/sim-<model>-<time>/); the measured run's
meta.json names them ("simulated_companion": a path relative to the run, or a list of
them; rundata.companion_dirs and load_companions read them back), its claim figures
draw the first dashed and the article figure each in a panel of its own, and its report
answers the claim for them too, labelled SIMULATED.  The first model also simulates the
batching experiment (section 4.2) at its PUs, on the rows of that question the run
measured, each row's sets as the quick sweep chooses them (plan.batch_selection), with
their bands: a companion of its own, after the first."""

import datetime
import os

from . import simmodel
from .config import (ARTICLE_WORKLOAD, BATCH_SUBMIT_ROWS, BATCH_WORKLOAD,
                     COMPANION_WORKLOADS, UsageError, parse_name_list, warn)
from .gnuplot import write_simulated_plots
from .proc import usable_cpus
from .rundata import (COMPANION_KEY, MODEL_KEY, companion_dirs, load_run, medians, read_meta,
                      record_meta, string_list)
from .simulate import SimError, make_sim, simulate, variants_built


def check_model(name):
    """The machine model `name` (a shipped model or a model file), or UsageError."""
    try:
        return simmodel.load(name)
    except simmodel.ModelError as e:
        raise UsageError(f"--sim {name}: {e}") from None


def check_models(text):
    """The model names of a --sim list, each checked (UsageError for a bad one)."""
    models = parse_name_list(text, "--sim")
    for m in models:
        check_model(m)
    return models


def record_models(run_dir, models):
    record_meta(run_dir, MODEL_KEY, list(models))


def missing_models(run_dir, models):
    """The models among `models` that have no companion yet (a resumed run may have
    some already)."""
    done = set()
    for path in companion_dirs(run_dir, read_meta(run_dir)):
        if os.path.isdir(path):
            done.add(read_meta(path).get("model"))
    return [m for m in models if simmodel.load(m)["name"] not in done]


def companion_workers(npus):
    """1, 2, 4, ... up to a model's PUs (and the PU count itself when it is no power of 2)."""
    out, n = [], 1
    while n <= npus:
        out.append(n)
        n *= 2
    return out if out[-1] == npus else out + [npus]


def companion(real_run, machine, jobs=1, command="", echo=print, workloads=None,
              all_workers=True, bands=(ARTICLE_WORKLOAD,), quiet=False):
    """A simulated companion of a measured run: the run's claim scenarios (its
    benchmarks of `workloads`, default config.COMPANION_WORKLOADS) on every variant it
    measured that has a simulation build, on the machine model at companion_workers(its
    PUs), or at its PUs alone without all_workers, 3 repetitions; the points of the
    `bands` workloads at the largest worker count get their band.  It is an ordinary
    simulated run (results/sim-<model>-<time>/, with its figures; quiet: no progress
    line); returns (its directory, failed points)."""
    m = simmodel.load(machine)
    real = medians(real_run)
    workloads = list(workloads or COMPANION_WORKLOADS)
    like = {k[2] for k in real if k[2].split("/")[0] in workloads}
    if not like:
        raise SimError("%s has no %s scenario: nothing to simulate"
                       % (real_run, " or ".join(workloads)))
    make_sim()
    variants = sorted({k[0] for k in real} & set(variants_built()))
    if not variants:
        raise SimError("no variant of %s has a simulation build (`make sim`)" % real_run)
    out = out_dir(real_run, m["name"])   # beside the measured run
    workers = companion_workers(m["npus"]) if all_workers else [m["npus"]]
    present = sorted({name.split("/")[0] for name in like})
    run_dir, failed = simulate(machine, variants, present, workers,
                               3, 1, out, jobs, False, like, command, echo=echo,
                               bands=set(bands) if bands else None, quiet=quiet)
    write_simulated_plots(run_dir, echo=echo)
    return run_dir, failed


def out_dir(real_run, model_name):
    """results/sim-<model>-<time>/ beside the measured run, a name not taken yet."""
    base = os.path.dirname(os.path.abspath(real_run))
    now = datetime.datetime.now()
    while True:
        path = os.path.join(base, "sim-%s-%s" % (model_name, now.strftime("%Y%m%d-%H%M%S")))
        if not os.path.exists(path):
            return path
        now += datetime.timedelta(seconds=1)


def batching_companion(real_run, machine, jobs=1, command="", echo=print, quiet=False):
    """Section 4.2 SIMULATED: spawn_batch at the model's PUs on every row of the
    batching question that the run measured and that has a simulation build, each with
    its quick sweep's sets, 3 repetitions and the band of every point.  (its directory,
    failed points), or (None, []) when the run has no such row."""
    m = simmodel.load(machine)
    roles = load_run(real_run).roles()
    rows = set(BATCH_SUBMIT_ROWS) | {r for steals in roles.batch_steal_rows().values()
                                     for r, _ in steals}
    measured = {k[0] for k in medians(real_run) if k[2].split("/")[0] == BATCH_WORKLOAD}
    make_sim()
    variants = sorted(measured & rows & set(variants_built()))
    if not variants:
        return None, []
    run_dir, failed = simulate(machine, variants, [BATCH_WORKLOAD], [m["npus"]], 3, 1,
                               out_dir(real_run, m["name"]), jobs, False, None, command,
                               echo=echo, bands={BATCH_WORKLOAD}, quiet=quiet)
    write_simulated_plots(run_dir, echo=echo)
    return run_dir, failed


def simulate_companion(run_dir, model, first, command, echo, quiet=False):
    """Simulate one companion on `model` (first: the one with every claim scenario and
    worker count, and the batching companion) and add it to the run's meta.json, for
    the scenarios the run has.  Returns True when each was written with every point ok;
    a failure is a warning (the measured run stands)."""
    ok = True
    has = {k[2].split("/")[0] for k in medians(run_dir)}
    kinds = [False] if has & set(COMPANION_WORKLOADS) else []
    for batch in kinds + ([True] if first and BATCH_WORKLOAD in has else []):
        try:
            if batch:
                sim_dir, failed = batching_companion(run_dir, model, usable_cpus(), command,
                                                     echo, quiet)
            else:
                sim_dir, failed = companion(
                    run_dir, model, jobs=usable_cpus(), command=command, echo=echo,
                    workloads=None if first else [ARTICLE_WORKLOAD], all_workers=first,
                    quiet=quiet)
        except (simmodel.ModelError, SimError) as e:
            warn(f"no simulated {'batching ' if batch else ''}companion on {model}: {e}")
            ok = False
            continue
        if sim_dir is None:
            continue
        record_meta(run_dir, COMPANION_KEY, string_list(read_meta(run_dir).get(COMPANION_KEY))
                    + [os.path.relpath(sim_dir, run_dir)])
        if failed:
            warn(f"simulated companion {os.path.basename(sim_dir)}: {len(failed)} point(s) "
                 "failed: " + ", ".join(failed[:5]))
        ok = ok and not failed
    return ok
