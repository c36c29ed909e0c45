"""The simulated companion of a measured run: `./run.py run --sim MODEL` (and `make run`,
which passes `--sim epyc16`) ends a sweep by simulating its imbalance scenarios on a
machine model with as many workers as the model has PUs (harness/sim: the same
variants' code in simulated time).  The companion is an ordinary simulated run beside
the measured one (results/sim-<model>-<time>/); the measured run's meta.json names it
("simulated_companion", a path relative to the run), its claim figures draw it dashed,
and its report answers the claim for the model too, labelled SIMULATED."""

import os

from .config import UsageError, warn
from .files import atomic_write_json
from .proc import usable_cpus
from .rundata import load_run, read_meta

KEY = "simulated_companion"
MODEL_KEY = "sim_model"


def check_model(name):
    """The machine model `name` (a shipped model or a model file), or UsageError."""
    from harness.sim import model as modelmod
    try:
        return modelmod.load(name)
    except modelmod.ModelError as e:
        raise UsageError(f"--sim {name}: {e}") from None


def sim_models():
    """The names of the shipped machine models (harness/machines/*.json)."""
    from harness.sim import model as modelmod
    return modelmod.available()


def companion_dir(run_dir, meta):
    """The companion's directory as meta.json names it (None when it names none)."""
    rel = meta.get(KEY)
    if not isinstance(rel, str) or not rel:
        return None
    return os.path.normpath(os.path.join(run_dir, rel))


def load_companion(data):
    """The companion of a loaded run as RunData, or None (with a warning when it is named
    but missing or not simulated)."""
    path = companion_dir(data.run_dir, data.meta)
    if path is None:
        return None
    if not os.path.isdir(path):
        warn(f"{data.run_id}: its simulated companion {data.meta[KEY]} is missing; "
             "drawn without it")
        return None
    sim = load_run(path)
    if not sim.meta.get("simulated"):
        warn(f"{data.run_id}: {data.meta[KEY]} is not a simulated run; ignored")
        return None
    return sim


def record_model(run_dir, model):
    meta = read_meta(run_dir)
    meta[MODEL_KEY] = model
    atomic_write_json(os.path.join(run_dir, "meta.json"), meta)


def simulate_companion(run_dir, model, command, echo):
    """Simulate the run's companion on `model` and name it in the run's meta.json.
    Returns True when it was written with every point ok; a failure is a warning (the
    measured run stands)."""
    from harness.sim import model as modelmod
    from harness.sim import simulate as simmod
    try:
        sim_dir, failed = simmod.companion(run_dir, model, jobs=usable_cpus(), command=command,
                                           echo=echo)
    except (modelmod.ModelError, simmod.SimError) as e:
        warn(f"no simulated companion on {model}: {e}")
        return False
    meta = read_meta(run_dir)
    meta[KEY] = os.path.relpath(sim_dir, run_dir)
    atomic_write_json(os.path.join(run_dir, "meta.json"), meta)
    if failed:
        warn(f"simulated companion {os.path.basename(sim_dir)}: {len(failed)} point(s) failed: "
             + ", ".join(failed[:5]))
    return not failed
