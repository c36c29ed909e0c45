"""The simulated companions of a measured run: `./run.py run --sim MODEL[,MODEL...]` (and
`make run`, which passes `--sim epyc16,twosocket64`) ends a sweep by simulating its
claim scenarios on machine models (harness/sim: the same variants' code in simulated
time).  The first model simulates the run's imbalance and article scenarios at 1, 2, 4,
... up to its PUs; each further model only the article scenarios, with as many workers
as it has PUs (the article figure's panel for that machine).  A companion is an ordinary
simulated run beside the measured one (results/sim-<model>-<time>/); the measured run's
meta.json names them ("simulated_companion": a path relative to the run, or a list of
them), its claim figures draw the first dashed and the article figure each in a panel
of its own, and its report answers the claim for them too, labelled SIMULATED."""

import os

from .config import ARTICLE_WORKLOAD, UsageError, parse_name_list, warn
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


def check_models(text):
    """The model names of a --sim list, each checked (UsageError for a bad one)."""
    models = parse_name_list(text, "--sim")
    for m in models:
        check_model(m)
    return models


def sim_models():
    """The names of the shipped machine models (harness/machines/*.json)."""
    from harness.sim import model as modelmod
    return modelmod.available()


def _as_list(value):
    if isinstance(value, str) and value:
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v]
    return []


def companion_dirs(run_dir, meta):
    """The companions' directories as meta.json names them, in order."""
    return [os.path.normpath(os.path.join(run_dir, rel)) for rel in _as_list(meta.get(KEY))]


def recorded_models(meta):
    """The models the run asked for (`--sim`), in order."""
    return _as_list(meta.get(MODEL_KEY))


def load_companions(data):
    """The companions of a loaded run as RunData (a missing or unsimulated one is skipped
    with a warning)."""
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


def record_models(run_dir, models):
    meta = read_meta(run_dir)
    meta[MODEL_KEY] = list(models)
    atomic_write_json(os.path.join(run_dir, "meta.json"), meta)


def missing_models(run_dir, models):
    """The models among `models` that have no companion yet (a resumed run may have
    some already)."""
    done = set()
    for path in companion_dirs(run_dir, read_meta(run_dir)):
        if os.path.isdir(path):
            done.add(read_meta(path).get("model"))
    from harness.sim import model as modelmod
    return [m for m in models if modelmod.load(m)["name"] not in done]


def simulate_companion(run_dir, model, first, command, echo):
    """Simulate one companion on `model` (first: the one with every claim scenario and
    worker count) and add it to the run's meta.json.  Returns True when it was written
    with every point ok; a failure is a warning (the measured run stands)."""
    from harness.sim import model as modelmod
    from harness.sim import simulate as simmod
    try:
        sim_dir, failed = simmod.companion(
            run_dir, model, jobs=usable_cpus(), command=command, echo=echo,
            workloads=None if first else [ARTICLE_WORKLOAD], all_workers=first)
    except (modelmod.ModelError, simmod.SimError) as e:
        warn(f"no simulated companion on {model}: {e}")
        return False
    meta = read_meta(run_dir)
    meta[KEY] = _as_list(meta.get(KEY)) + [os.path.relpath(sim_dir, run_dir)]
    atomic_write_json(os.path.join(run_dir, "meta.json"), meta)
    if failed:
        warn(f"simulated companion {os.path.basename(sim_dir)}: {len(failed)} point(s) failed: "
             + ", ".join(failed[:5]))
    return not failed
