"""The interleaved rounds of a sweep (sweep.execute_plan runs them).

Interleaving.  A point's repetitions run in rounds, each a bench invocation of its own
with `per_round` repetitions (1 in a measured sweep): the points of one workload at one
worker count (every variant, reference and the A/A twin) form a group, and the group
runs round by round, every member once per round in an order shuffled for that round
(A C B, B A C, ...), so that a drift of the machine hits every variant alike instead of
one variant's block.  The groups run in the plan's (shuffled) order.  The order is a
function of plan.json alone (schedule(): its seed and its points), so a --resume runs
exactly the rounds that are missing, in the same order.  Each round's JSON is merged
into the point's one raw file (merge_round: its repetitions renumbered by round), which
is rewritten atomically: a sweep killed at any moment keeps every finished repetition.
A simulated sweep (simulate.py) is the same code with one round per point (its runs are
deterministic: nothing to interleave).  A round is run in two parts: round_output, the
backend's run into a private temporary directory (wherever an engine runs it,
engine.py), and record_round, which merges what it left into the run, on the machine
that holds the run."""

import contextlib
import json
import os
import random
import socket
import tempfile
import time

from .files import atomic_write_text, existing_raw
from .fmt import now_iso
from .config import warn
from .gbjson import BadResultFile, load_gb_doc, load_gb_file, parse_gb_doc


# plan.json's version: 2 runs the points in interleaved rounds (the "interleave" record)
PLAN_VERSION = 2


def interleave(per_round=1):
    """plan.json's "interleave" record: the repetitions of one invocation, the order in
    words."""
    each = "one repetition" if per_round == 1 else f"{per_round} repetitions"
    return dict(per_round=per_round, order=(
        f"rounds: the points of one workload at one worker count (every variant, reference "
        f"and the A/A twin) run {each} each per round, in an order shuffled per round from "
        "the plan's seed (harness/driver/sweep.py, schedule)"))


def per_round(plan, point):
    """The repetitions of one bench invocation of a point: 1 in an interleaved plan
    (plan.json "interleave"), every repetition in one invocation otherwise (a simulated
    plan, or one written before interleaving)."""
    reps = point.get("repetitions", plan["repetitions"])
    return max(1, min(reps, (plan.get("interleave") or {}).get("per_round") or reps))


def rounds_of(plan, point):
    reps = point.get("repetitions", plan["repetitions"])
    return -(-reps // per_round(plan, point))


INTERLEAVE_SALT = 0x5EED   # the round orders' generator: the plan's seed plus this


def schedule(plan):
    """[(point, round)] in the order the sweep runs them (the module's comment): the
    groups of points with the same workload and worker count in the order of their
    first point in the plan, each group round by round, its members in an order
    shuffled per round by a generator seeded from plan.json's seed.  A plan without
    interleaving runs each point whole (one round), in the plan's order."""
    points = plan["points"]
    if not plan.get("interleave"):
        return [(p, 0) for p in points]
    groups = {}
    for p in points:
        groups.setdefault((p["workload"], p["workers"]), []).append(p)
    rng = random.Random((plan.get("seed") or 0) + INTERLEAVE_SALT)
    out = []
    for members in groups.values():
        for r in range(max(rounds_of(plan, p) for p in members)):
            this = [p for p in members if r < rounds_of(plan, p)]
            rng.shuffle(this)
            out += [(p, r) for p in this]
    return out


def rounds_done(run_dir, plan, point):
    """How many of the point's rounds its raw file holds (they are done in order, so a
    prefix); 0 for no file, or a damaged one (it is rerun from its first round)."""
    path = existing_raw(os.path.join(run_dir, point["raw"]))
    if not os.path.exists(path):
        return 0
    try:
        _, entries = load_gb_file(path)
    except BadResultFile as e:
        warn(f"{e}: the point will be rerun")
        return 0
    n = per_round(plan, point)
    return len({e.repetition // n for e in entries})


def round_output(backend, plan, point, r, run_dir=None):
    """Run round r of one point with the backend (BenchBackend, simulate.SimBackend) and
    return what it left: {"rc", "message", "json" (the round's JSON text; None when the
    backend wrote none), "log" (its console output), "seconds", "host"}.  Its files are
    temporaries: beside the point's raw and log files when run_dir is given (a sweep
    killed meanwhile leaves them for the next one to remove), else in a private temporary
    directory.  Nothing of the run is changed: record_round does that, on the machine
    that holds the run, so that an engine (engine.py) can run this part on another one."""
    n = per_round(plan, point)
    reps = point.get("repetitions", plan["repetitions"])
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        if run_dir is None:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="schedbench-round-"))
            out, log = os.path.join(tmp, "round.json"), os.path.join(tmp, "round.log")
        else:
            out, log = (temporary(os.path.join(run_dir, point[k])) for k in ("raw", "log"))
            for path in (out, log):
                os.makedirs(os.path.dirname(path), exist_ok=True)
                stack.callback(_unlink, path)
        with open(log, "w", encoding="utf-8") as logf:
            try:
                rc, message = backend.run(plan, dict(point, repetitions=min(n, reps - r * n)),
                                          out, logf)
            except OSError as e:       # a binary that cannot start: the point fails
                rc, message = None, f"cannot run {point['binary']}: {e.strerror or e}"
        with open(log, encoding="utf-8", errors="replace") as f:
            text = f.read()
        doc = None
        if rc == 0 and os.path.exists(out):
            with open(out, encoding="utf-8", errors="replace") as f:
                doc = f.read()
    return dict(rc=rc, message=message, json=doc, log=text,
                seconds=round(time.monotonic() - started, 3), host=socket.gethostname())


def temporary(path):
    """The temporary name of a run's file while a round writes it: '.<name>.<pid>.tmp'
    beside it (sweep.remove_stale_temporaries removes those a kill left)."""
    return os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")


def _unlink(path):
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def record_round(run_dir, plan, point, r, output, record=None):
    """Record round r of one point (round_output's `output`) in the run: its log appended
    to the point's log (the first round starts it afresh), its JSON checked and merged
    into the point's raw file (merge_round).  Returns the point's status record, updated
    from `record` (the previous rounds'), with the host that ran the round ("host"; and
    "hosts" when its rounds ran on several)."""
    raw = os.path.join(run_dir, point["raw"])
    log = os.path.join(run_dir, point["log"])
    for d in (os.path.dirname(raw), os.path.dirname(log)):
        os.makedirs(d, exist_ok=True)
    n = per_round(plan, point)
    status = dict(ok=False, rc=output["rc"], errors=0, message=output["message"], rounds=r,
                  of=rounds_of(plan, point))
    with open(log, "w" if r == 0 else "a", encoding="utf-8") as dst:
        dst.write(output["log"])
    if status["rc"] == 0 and output.get("json") is not None:
        tmp = temporary(raw)
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(output["json"])
            merge_round(tmp, raw, r * n, status)
        finally:
            _unlink(tmp)
    if status["ok"]:
        status["rounds"] = r + 1
        status["ok"] = status["rounds"] >= status["of"]
    earlier = (record or {}).get("seconds") if r else 0
    status["seconds"] = round((earlier if isinstance(earlier, (int, float)) else 0)
                              + output["seconds"], 3)
    status["finished"] = now_iso()
    status["host"] = output.get("host")
    if output.get("worker"):
        status["worker"] = output["worker"]
    hosts = set((record or {}).get("hosts") or [(record or {}).get("host")]) if r else set()
    hosts = sorted(h for h in hosts | {status["host"]} if h)
    if len(hosts) > 1:
        status["hosts"] = hosts
    return status


def run_round(backend, run_dir, plan, point, r, record=None):
    """Run round r of one point with the backend here and record it (round_output, then
    record_round).  Returns the point's status record."""
    return record_round(run_dir, plan, point, r,
                        round_output(backend, plan, point, r, run_dir), record)


def merge_round(tmp, raw, offset, status):
    """Check one round's JSON and merge it into the raw file (fills in status; "ok":
    the round is in).  Its repetitions are renumbered from `offset`; the first round's
    document is kept whole (its context, Google Benchmark's aggregates), later rounds add
    their repetitions and their context's git_rev to the context's `git_revs`, so a
    rebuild between rounds shows (machine.publishable).  Written to a temporary file,
    fsync'ed and renamed over the raw file: a kill leaves the previous rounds."""
    try:
        doc = load_gb_doc(tmp)
        context, entries = parse_gb_doc(doc, tmp)
    except BadResultFile as e:
        status["message"] = str(e)
        return
    if not entries:
        status["message"] = "no benchmark ran (the filter matched nothing)"
        return
    for e in doc["benchmarks"]:
        if isinstance(e, dict) and e.get("run_type", "iteration") == "iteration":
            e["repetition_index"] = offset + int(e.get("repetition_index") or 0)
    if offset and os.path.exists(raw):
        try:
            merged = load_gb_doc(raw)
            parse_gb_doc(merged, raw)
        except BadResultFile as e:
            status["message"] = f"{e}: its earlier rounds are lost; the point will be rerun"
            os.unlink(raw)
            return
        revs = set(merged["context"].get("git_revs") or []) | {
            str(merged["context"].get("git_rev") or "unknown"),
            str(context.get("git_rev") or "unknown")}
        merged["context"]["git_revs"] = sorted(revs)
        merged["benchmarks"] += [e for e in doc["benchmarks"] if isinstance(e, dict)
                                 and e.get("run_type", "iteration") == "iteration"]
        doc = merged
    atomic_write_text(raw, json.dumps(doc, indent=2) + "\n")
    _, entries = parse_gb_doc(doc, raw)
    status["ok"] = True
    status["errors"] = sum(1 for e in entries if e.error is not None)
    if status["errors"]:
        first = next(e for e in entries if e.error is not None)
        status["message"] = f"{status['errors']} repetition(s) failed: {first.benchmark}: {first.error}"
