"""The SIMULATED band of a policy map (policymap.py): the models with one uncertain cost
group at one end of its range, the variants worth re-simulating there (those that could
win the cell), and bands.json assembled from the runs of the ends, in the format
simulate.simulate_bands writes and rundata.load_bands reads."""

import json
import os

from . import simmodel
from .files import atomic_write_json
from .mapcells import form_metrics, ranked
from .mapgrid import FORM_BY_KEY
from .rundata import BANDS, load_run


def scaled_model(map_dir, model, label, group, factor):
    """A model JSON with one uncertain cost group at one end of its range, in models/."""
    m = simmodel.load(model)
    with open(m["path"], encoding="utf-8") as f:
        doc = json.load(f)
    end = "low" if factor < 1 else "high"
    for c in simmodel.UNCERTAIN[group]:
        cost = doc["costs_ns"][c]
        cost["value"] = float(cost["value"]) * factor
        cost["source"] = f"x{factor:g} (the {end} end of uncertainty.{group}) of: {cost['source']}"
    doc["description"] = f"{doc.get('description', model)} [band end: {label}]"
    path = os.path.join(map_dir, "models", f"{model}.{label.replace(' ', '')}.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write_json(path, doc, sort_keys=False)
    return path


def candidates(sub, settings, within):
    """{(variant, workers, benchmark)} that could win their cell at a band's end: the
    cell's winner, its runner-up, and every variant within `within` of the winner (None:
    every variant), in each metric of the cell's forms."""
    data = load_run(sub)
    out = set()
    for bench, cells in data.index().items():
        for workers in sorted({w for _, w in cells}):
            for metric in form_metrics(bench, [FORM_BY_KEY[k] for k in settings["sim_forms"]]):
                order = ranked({v: r for (v, w), r in cells.items() if w == workers}, metric)
                if not order:
                    continue
                best = order[0][1]
                for i, (v, t) in enumerate(order):
                    if i < 2 or within is None or t <= best * (1 + within):
                        out.add((v, workers, bench))
    return out


def with_end(choose, label):
    return lambda targets, listing, m: [dict(p, band_end=label)
                                        for p in choose(targets, listing, m)]


BAND_METRICS = ("window_s", "p50_us", "p99_us")


def write_bands(nominal, ends):
    """bands.json of a nominal run (simulate.simulate_bands' format, which
    rundata.load_bands reads) from the runs of its ends."""
    m = simmodel.load(os.path.join(nominal, "machine.json"))
    doc = dict(ranges={g: list(r) for g, r in m["ranges"].items()},
               ends=[label for label, _ in ends], points={}, metrics={}, failed=[])
    for label, sub in ends:
        data = load_run(sub)
        for pid, st in data.status.items():
            if not st.get("ok"):
                doc["failed"].append(f"{pid} ({label})")
        for r in data.usable():
            key = f"{r.variant}/{r.workers}/{r.benchmark}"
            doc["points"].setdefault(key, {})[label] = r.median()
            for metric in BAND_METRICS:
                if r.values(metric):
                    doc["metrics"].setdefault(metric, {}).setdefault(key, {})[label] = \
                        r.median(metric)
    atomic_write_json(os.path.join(nominal, BANDS), doc, sort_keys=False)
