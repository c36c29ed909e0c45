"""Machine models for the simulator (harness/sim): read, check, flatten.

A model is a JSON file, harness/machines/<name>.json:

    {"name": "epyc16", "description": "...", "measured": false,
     "topology": {"synthetic": "pack:1 numa:1 l3:8 core:2 pu:1", "source": "..."},
     "costs_ns": {"load_hit": {"value": 0.3, "source": "..."}, ...},
     "kernel_iters_per_us": {"value": 600, "source": "..."}}

Every cost the engine charges (COSTS) must be there, each a number >= 0 with a source
(a non-empty string).  The topology is hwloc's synthetic form with the levels the
engine knows (pack, numa, l3, l2, core, pu; top down).  flatten() writes the engine's
`key value` form (harness/sim/sim_model.c).  Any problem raises ModelError with a
message that names the file and the field.
"""
import json
import math
import os
import re

from .config import ROOT

MACHINES = os.path.join(ROOT, "harness", "machines")

# The engine's cost names (sim_model.c: sim_cost_names and the transfer levels).
COSTS = ("load_hit", "store_hit", "rmw", "fence", "switch", "syscall", "futex_wake",
         "wakeup_latency", "sched_yield", "pause", "clock_read", "thread_create",
         "sleep_slack", "sha1_block", "code_access", "code_switch", "stack_map", "stack_unmap",
         "uts_node", "resume_16", "resume_128", "resume_1k", "resume_4k", "resume_16k",
         "resume_32k", "futex_wake_short", "wakeup_latency_short", "short_sleep_max",
         "xfer_core", "xfer_l3", "xfer_numa", "xfer_package", "xfer_remote")
LEVELS = ("pack", "numa", "l3", "l2", "core", "pu")

# The uncertain costs, in groups that move together: a simulated point's band is the
# point re-simulated with one group at a time at each end of its range (low and high
# factors).  A model states each group's range and why ("uncertainty"); a group it does
# not state gets DEFAULT_RANGE.
UNCERTAIN = {
    "xfer": ("xfer_core", "xfer_l3", "xfer_numa", "xfer_package", "xfer_remote"),
    "wake": ("futex_wake", "wakeup_latency", "futex_wake_short", "wakeup_latency_short"),
    "code": ("code_access", "code_switch"),
}
DEFAULT_RANGE = (0.5, 2.0)
DEFAULT_RANGE_SOURCE = ("no stated range: x0.5 to x2, the spread of published figures for "
                        "one cost across machines of a class")
MAX_PUS = 256
# The most a cost may be, in ns per charged operation, also at the high end of its
# uncertainty range (a band re-simulates it there).  The engine's clock is a uint64 of
# picoseconds: it wraps after 2^64 ps, about 1.8e7 s.  A run charges millions of
# operations (fib(25) about 5e6), so at 1e9 ns (one second) per operation it stays
# near 5e6 s, inside the clock; at 1e10 it wraps, and a wrapped clock reads as a
# faster run, not as an error.  No real machine's cost comes within six orders of
# magnitude of this bound.
MAX_COST_NS = 1e9


class ModelError(Exception):
    pass


def model_path(name_or_path):
    """A model's file: a path as given, or harness/machines/<name>.json."""
    if os.sep in name_or_path or name_or_path.endswith(".json"):
        return name_or_path
    return os.path.join(MACHINES, name_or_path + ".json")


def available():
    """The names of the shipped models."""
    if not os.path.isdir(MACHINES):
        return []
    return sorted(f[:-5] for f in os.listdir(MACHINES) if f.endswith(".json"))


def parse_topology(desc):
    """hwloc synthetic description -> number of PUs; ModelError if not understood."""
    if not isinstance(desc, str) or not desc.strip():
        raise ModelError("topology.synthetic must be a non-empty string")
    last, npus = -1, 1
    for tok in desc.split():
        m = re.fullmatch(r"([a-z0-9]+):(\d+)", tok)
        if not m or m.group(1) not in LEVELS:
            raise ModelError("topology %r: %r is not one of %s as kind:count"
                             % (desc, tok, "/".join(LEVELS)))
        lv = LEVELS.index(m.group(1))
        if lv <= last:
            raise ModelError("topology %r: levels must go top down (%s)" % (desc, " ".join(LEVELS)))
        last = lv
        n = int(m.group(2))
        if n < 1:
            raise ModelError("topology %r: a count must be >= 1" % desc)
        npus *= n
    if npus > MAX_PUS:
        raise ModelError("topology %r has %d PUs; the simulator takes at most %d"
                         % (desc, npus, MAX_PUS))
    return npus


def _number(doc, where, what):
    if not isinstance(doc, dict):
        raise ModelError("%s: %s must be {\"value\": number, \"source\": text}" % (where, what))
    v, src = doc.get("value"), doc.get("source")
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0 or \
            not math.isfinite(v):
        raise ModelError("%s: %s.value must be a number >= 0, got %r" % (where, what, v))
    if not isinstance(src, str) or not src.strip():
        raise ModelError("%s: %s has no source" % (where, what))
    return float(v)


def check(doc, where="model"):
    """Check a parsed model; returns it with 'npus' added."""
    if not isinstance(doc, dict):
        raise ModelError("%s: a model is a JSON object" % where)
    name = doc.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name or ""):
        raise ModelError("%s: name must be a word of letters, digits, _ . -" % where)
    topo = doc.get("topology")
    if not isinstance(topo, dict) or not isinstance(topo.get("source"), str):
        raise ModelError("%s: topology must be {\"synthetic\": ..., \"source\": ...}" % where)
    try:
        npus = parse_topology(topo.get("synthetic"))
    except ModelError as e:
        raise ModelError("%s: %s" % (where, e))
    costs = doc.get("costs_ns")
    if not isinstance(costs, dict):
        raise ModelError("%s: costs_ns must be an object" % where)
    for c in COSTS:
        if c not in costs:
            raise ModelError("%s: costs_ns.%s is missing" % (where, c))
        if _number(costs[c], where, "costs_ns." + c) > MAX_COST_NS:
            raise ModelError("%s: costs_ns.%s.value %r is more than %g ns: the simulated "
                             "clock (uint64 picoseconds) cannot hold a run at that cost"
                             % (where, c, costs[c]["value"], MAX_COST_NS))
    unknown = sorted(set(costs) - set(COSTS))
    if unknown:
        raise ModelError("%s: unknown costs_ns keys %s" % (where, ", ".join(unknown)))
    rate = _number(doc.get("kernel_iters_per_us"), where, "kernel_iters_per_us")
    if rate <= 0:
        raise ModelError("%s: kernel_iters_per_us must be > 0" % where)
    out = dict(doc)
    out["npus"] = npus
    out["ranges"] = ranges(doc, where)
    for g, (_, hi, _) in out["ranges"].items():
        for c in UNCERTAIN[g]:
            if float(costs[c]["value"]) * hi > MAX_COST_NS:
                raise ModelError("%s: costs_ns.%s x%g (the high end of uncertainty.%s) is "
                                 "more than %g ns: the simulated clock cannot hold its band"
                                 % (where, c, hi, g, MAX_COST_NS))
    return out


def ranges(doc, where="model"):
    """{group: (low, high, source)} of a model: its "uncertainty" entries, the default
    for a group it does not state.  A factor is a number in (0, 100]; low <= 1 <= high."""
    unc = doc.get("uncertainty", {})
    if not isinstance(unc, dict):
        raise ModelError("%s: uncertainty must be an object" % where)
    unknown = sorted(set(unc) - set(UNCERTAIN))
    if unknown:
        raise ModelError("%s: unknown uncertainty groups %s (known: %s)"
                         % (where, ", ".join(unknown), ", ".join(UNCERTAIN)))
    out = {}
    for g in UNCERTAIN:
        e = unc.get(g)
        if e is None:
            out[g] = DEFAULT_RANGE + (DEFAULT_RANGE_SOURCE,)
            continue
        if not isinstance(e, dict):
            raise ModelError("%s: uncertainty.%s must be {\"low\", \"high\", \"source\"}"
                             % (where, g))
        lo, hi, src = e.get("low"), e.get("high"), e.get("source")
        for k, v in (("low", lo), ("high", hi)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 100:
                raise ModelError("%s: uncertainty.%s.%s must be a factor in (0, 100], got %r"
                                 % (where, g, k, v))
        if not lo <= 1 <= hi:
            raise ModelError("%s: uncertainty.%s: low <= 1 <= high, got %r .. %r"
                             % (where, g, lo, hi))
        if not isinstance(src, str) or not src.strip():
            raise ModelError("%s: uncertainty.%s has no source" % (where, g))
        out[g] = (float(lo), float(hi), src)
    return out


def band_ends(m):
    """[(label, group, factor)]: the band's re-simulations, one group at a time at each
    end of its range (an end of 1 is the point itself and is left out)."""
    out = []
    for g, (lo, hi, _) in m["ranges"].items():
        for f in (lo, hi):
            if f != 1:
                out.append(("%s x%g" % (g, f), g, f))
    return out


def scaled(m, group, factor):
    """A copy of checked model m with the costs of `group` multiplied by factor."""
    out = dict(m)
    out["costs_ns"] = {k: dict(v) for k, v in m["costs_ns"].items()}
    for c in UNCERTAIN[group]:
        out["costs_ns"][c]["value"] = float(m["costs_ns"][c]["value"]) * factor
    return out


def load(name_or_path):
    """Read and check a model by name (harness/machines/) or path."""
    path = model_path(name_or_path)
    if not os.path.exists(path):
        have = ", ".join(available()) or "none"
        raise ModelError("unknown machine model %r (no %s; shipped models: %s)"
                         % (name_or_path, path, have))
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise ModelError("%s: not a readable JSON model: %s" % (path, e))
    except RecursionError:
        raise ModelError("%s: not a readable JSON model: nested too deeply" % path) from None
    m = check(doc, path)
    m["path"] = path
    return m


def flatten(m):
    """The engine's flat `key value` form of a checked model."""
    lines = ["# flattened from %s by harness/driver/simmodel.py" % m.get("path", m["name"]),
             "name %s" % m["name"], "topology %s" % m["topology"]["synthetic"]]
    for c in COSTS:
        lines.append("%s %r" % (c, float(m["costs_ns"][c]["value"])))
    lines.append("kernel_iters_per_us %r" % float(m["kernel_iters_per_us"]["value"]))
    return "\n".join(lines) + "\n"
