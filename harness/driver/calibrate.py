"""Measure this machine into a model JSON (`./run.py calibrate`).

Runs build/sim-calibrate (harness/sim/calibrate.c): `costs` for the per-PU costs, and
`pair A B` for one pair of PUs at each topology distance this machine has (same core,
same L3, same NUMA node, same package, other package), and writes
harness/machines/<name>.json (default name "here") with the hwloc topology
(`lstopo --of synthetic`, reduced to the levels the engine knows).  Every number's
source names the tool, the host, the date and the load average at the time: the
machine may be shared, so the tool takes the fastest of repeated loops.  A line
transfer is the mean of PAIR_RUNS runs spread over a few seconds, each the fastest of
its own loops: a VM's two vCPUs may sit on near and on far cores in turn (this one: 26
or 147 ns, changing within a second), and a benchmark run sees the mixture.
Transfer levels the machine does not have are filled with the nearest measured level
and say so (no pair of workers is ever charged at that level on this topology).

Last, the scheduler's own plain code (code_access per charged atomic access, code_switch
per switch): the only costs not measured by a loop of one operation.  They are fitted
from two real benchmarks of the representative variant (config.REPRESENTATIVE, `chaselev`)
at 1 worker (its build/<variant>/bench: yield with two
bthreads, where every item is a switch, and fib(25), where almost none is): the measured
time per item minus the simulated one without these two costs, divided between the
accesses and the switches the simulation counts per item (two equations, two unknowns).
Those two benchmarks are therefore in-sample when the model is validated; the model
keeps their measured times ("code_fit"), so that `validate` can tell how far the host
moved between the calibration and the real run it validates against.
"""
import datetime
import os
import re
import socket
import statistics
import subprocess
import tempfile
import time

from . import simmodel as modelmod
from .commands import bench_argv, simbench_argv
from .config import REPRESENTATIVE, ROOT
from .files import atomic_write_json, atomic_write_text
from .gbjson import load_gb_file
ROUNDS = 3
PAIR_RUNS, PAIR_GAP_S = 15, 0.4
XFER = ("xfer_core", "xfer_l3", "xfer_numa", "xfer_package", "xfer_remote")


def synthetic_here():
    """This machine's topology as the engine's synthetic form, and hwloc's own."""
    raw = subprocess.run(["lstopo", "--of", "synthetic", "--no-io"], check=True,
                         capture_output=True, text=True).stdout.strip()
    names = {"package": "pack", "numanode": "numa", "l3cache": "l3", "l2cache": "l2",
             "core": "core", "pu": "pu"}
    out, numa_done = [], False
    for tok in re.findall(r"\[[^\]]*\]|\S+", raw):
        if tok.startswith("["):
            if tok.lower().startswith("[numanode") and not numa_done:
                out.append("numa:1")  # memory attached at the level above: one node each
                numa_done = True
            continue
        m = re.match(r"([A-Za-z0-9]+):(\d+)", tok)
        if not m:
            continue
        kind = names.get(m.group(1).lower())
        if kind == "numa":
            numa_done = True
        if kind:
            out.append("%s:%s" % (kind, m.group(2)))
    return " ".join(out), raw


def pu_ids(desc):
    """Per PU: (core, l3, numa, pack) ids, as sim_model.c computes them."""
    levels = [(t.split(":")[0], int(t.split(":")[1])) for t in desc.split()]
    npus = 1
    for _, n in levels:
        npus *= n
    span, below = {}, 1
    for kind, n in reversed(levels):
        span[kind] = below
        below *= n
    ids = []
    for p in range(npus):
        g = {k: p // s for k, s in span.items()}
        pack = g.get("pack", 0)
        numa = g.get("numa", pack)
        l3 = g.get("l3", numa)
        core = g.get("l2", g.get("core", p))
        ids.append((core, l3, numa, pack))
    return ids


def distance(a, b):
    if a == b:
        return None
    for k in range(4):
        if a[k] == b[k]:
            return XFER[k]
    return XFER[4]


def run(tool, name, out_dir, echo=print):
    if not os.path.exists(tool):
        raise modelmod.ModelError("%s is missing: run `make sim` first" % tool)
    synth, raw = synthetic_here()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    load = os.getloadavg()[0]
    host = socket.gethostname()
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    where = "on %s (%s), %s, load average %.2f" % (host, cpu, when, load)
    src = "measured by build/sim-calibrate (harness/sim/calibrate.c), best of %d rounds, %s" % (ROUNDS, where)
    echo("calibrate: per-PU costs, %d rounds (about 15 s each)" % ROUNDS)
    rounds = {}
    for _ in range(ROUNDS):
        res = subprocess.run([tool, "costs"], check=True, capture_output=True, text=True).stdout
        for line in res.splitlines():
            k, v = line.split()
            rounds.setdefault(k, []).append(float(v))
    # interference only adds time: keep each cost's best round (a rate's highest); the
    # short-sleep limit is no cost but where a step lies (its median round)
    vals = {k: max(v) if k == "kernel_iters_per_us" else
            statistics.median(v) if k == "short_sleep_max" else min(v)
            for k, v in rounds.items()}
    # A uts node's work but its SHA-1 block: the difference of the two best rounds (each
    # an undisturbed estimate; the best round of a difference would be biased low)
    missing = [k for k in ("uts_visit", "sha1_block", "short_sleep_max") if k not in vals]
    if missing:
        raise modelmod.ModelError("%s printed no %s: it is older than this calibrate.py "
                                  "(make sim)" % (tool, ", ".join(missing)))
    vals["uts_node"] = max(0.0, vals.pop("uts_visit") - vals["sha1_block"])
    ids = pu_ids(synth)
    pairs = {}
    for j in range(1, len(ids)):
        d = distance(ids[0], ids[j])
        if d and d not in pairs:
            pairs[d] = j
    xfer, spread = {}, {}
    for d, j in sorted(pairs.items()):
        echo("calibrate: cache-line transfer PU 0 <-> PU %d (%s), %d runs %.1f s apart"
             % (j, d, PAIR_RUNS, PAIR_GAP_S))
        runs = []
        for k in range(PAIR_RUNS):
            if k:
                time.sleep(PAIR_GAP_S)
            out = subprocess.run([tool, "pair", "0", str(j)], check=True, capture_output=True,
                                 text=True).stdout.split()
            runs.append(float(out[3]))
        xfer[d] = statistics.mean(runs)
        spread[d] = (min(runs), max(runs))
    costs = {k: {"value": round(v, 3), "source": src}
             for k, v in vals.items() if k != "kernel_iters_per_us"}
    costs["uts_node"]["source"] = (
        "measured by build/sim-calibrate (harness/sim/calibrate.c): the best of %d rounds of "
        "uts_visit (uts_tree.h's sequential count, per node) minus the best of sha1_block, "
        "%s" % (ROUNDS, where))
    if "short_sleep_max" in costs:
        costs["short_sleep_max"]["source"] = (
            "measured by build/sim-calibrate (harness/sim/calibrate.c): the longest sleep of "
            "the ladder 10 us ... 1 ms after which a futex wake still cost nearer "
            "futex_wake_short than futex_wake (41 wakes a step), the median of %d rounds, "
            "%s" % (ROUNDS, where))
    for i, d in enumerate(XFER):
        if d in xfer:
            costs[d] = {"value": round(xfer[d], 3),
                        "source": "measured by build/sim-calibrate pair (harness/sim/calibrate.c): "
                        "ping-pong between PU 0 and PU %d, the mean of %d runs %.1f s apart "
                        "(each the fastest of its loops), %.1f-%.1f ns, %s"
                        % (pairs[d], PAIR_RUNS, PAIR_GAP_S, spread[d][0], spread[d][1], where)}
            continue
        near = [x for x in XFER if x in xfer]
        if not near:
            near_v, near_n = vals["rmw"], "rmw"
        else:
            near_n = min(near, key=lambda x: abs(XFER.index(x) - i))
            near_v = xfer[near_n]
        costs[d] = {"value": round(near_v, 3),
                    "source": "not present on this machine (no two PUs at this distance): "
                              "copy of %s, never charged on this topology" % near_n}
    doc = {
        "name": name,
        "description": "This machine, measured: %s, %d PUs" % (cpu, len(ids)),
        "measured": True,
        "topology": {"synthetic": synth,
                     "source": "lstopo --of synthetic --no-io on %s: %s" % (host, raw)},
        "costs_ns": costs,
        "kernel_iters_per_us": {"value": round(vals["kernel_iters_per_us"], 3), "source": src},
    }
    code_costs(doc, src, echo)
    modelmod.check(doc, "calibration")
    path = os.path.join(out_dir, name + ".json")
    atomic_write_json(path, doc, sort_keys=False)
    echo("calibrate: wrote %s" % path)
    return path


# the two fitting benchmarks, by name (bench and simbench run the same set)
CODE_BENCH = ("yield/threads:2/rounds:100000/real_time", "fib/n:25/real_time")


def _measured_ns_per_item(bench, name, tmp):
    """(ns per item, seconds per iteration): the medians of 5 repetitions."""
    out = os.path.join(tmp, "real.json")
    subprocess.run(bench_argv(bench, out, "^%s$" % re.escape(name), 1, 0.1, 5),
                   check=True, capture_output=True, timeout=600)
    runs = [e for e in load_gb_file(out)[1]
            if e.error is None and e.counters.get("items_per_second")]
    if not runs:
        raise modelmod.ModelError("%s: no items_per_second for %s" % (bench, name))
    return (1e9 / statistics.median(e.counters["items_per_second"] for e in runs),
            statistics.median(e.real_s for e in runs))


def _simulated_per_item(simbench, flat, name, tmp):
    out = os.path.join(tmp, "sim.json")
    subprocess.run(simbench_argv(simbench, flat, 1, name, 1, out=out),
                   check=True, capture_output=True, timeout=600)
    e = load_gb_file(out)[1][0]
    items = e.counters["items"]
    return (e.real_s * 1e9 / items, e.counters["sim_accesses"] / items,
            e.counters["sim_jumps"] / items)


def code_costs(doc, src, echo=print):
    """Fill doc's costs_ns.code_access and code_switch (see the top of this file)."""
    bench = os.path.join(ROOT, "build", REPRESENTATIVE, "bench")
    simbench = os.path.join(ROOT, "build-sim", REPRESENTATIVE, "simbench")
    for need, how in ((bench, "make"), (simbench, "make sim")):
        if not os.path.exists(need):
            raise modelmod.ModelError("%s is missing: run `%s` first" % (need, how))
    for c in ("code_access", "code_switch"):
        doc["costs_ns"][c] = {"value": 0.0, "source": "placeholder while fitting"}
    m = modelmod.check(doc, "calibration")
    rows, measured = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        flat = os.path.join(tmp, "model.flat")
        atomic_write_text(flat, modelmod.flatten(m))
        for name in CODE_BENCH:
            echo("calibrate: scheduler code: %s, measured and simulated at 1 worker" % name)
            real, seconds = _measured_ns_per_item(bench, name, tmp)
            sim, acc, jumps = _simulated_per_item(simbench, flat, name, tmp)
            rows.append((real - sim, acc, jumps, real, sim))
            measured[name] = seconds
    (d1, a1, j1, _, _), (d2, a2, j2, _, _) = rows
    det = a1 * j2 - a2 * j1
    if abs(det) < 1e-9:
        raise modelmod.ModelError("calibrate: the two fitting benchmarks do not separate "
                                  "accesses from switches")
    ca = max(0.0, (d1 * j2 - d2 * j1) / det)
    cs = max(0.0, (d1 - a1 * ca) / j1) if j1 > 0 else 0.0
    how = "; ".join("%s: measured %.1f ns/item, simulated without code %.1f ns/item, %.1f "
                    "accesses and %.3f switches per item" % (name, real, sim, acc, jumps)
                    for (_, acc, jumps, real, sim), name in zip(rows, CODE_BENCH))
    fit = ("fitted by ./run.py calibrate from build/%s/bench at 1 worker (median of 5) "
           "and the simulation without the two code costs: " % REPRESENTATIVE + how +
           " (these two benchmarks are in-sample in validation); " + src)
    doc["costs_ns"]["code_access"] = {"value": round(ca, 3), "source": fit}
    doc["costs_ns"]["code_switch"] = {"value": round(cs, 3), "source": fit}
    # the fit's two measurements, for validate's drift check: the same benchmarks in a
    # later real run measure how far the host moved since this calibration
    doc["code_fit"] = {"variant": REPRESENTATIVE, "workers": 1, "measured_s": measured,
                       "source": "median seconds per iteration of 5 repetitions; " + src}
    echo("calibrate: scheduler code: %.2f ns per access, %.2f ns per switch" % (ca, cs))
