"""Running a sweep: start or resume a run directory, run its plan's points in interleaved
rounds (resumable, atomic, with a timeout), show progress, and merge the results at the
end.

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
deterministic: nothing to interleave)."""

import contextlib
import datetime
import itertools
import json
import math
import os
import random
import shlex
import sys
import threading
import time

from .config import (CLAIM_REPETITIONS, FULL, FULL_ENV, ITERS_ENV, KERNEL_WORKLOADS, PROG, QUICK,
                     UsageError,
                     default_workers, parse_name_list, parse_workers, warn)
from .files import (atomic_write_json, atomic_write_text, check_out_path, existing_raw,
                    read_json)
from .fmt import fmt_duration, now_iso
from .gbjson import BadResultFile, load_gb_doc, load_gb_file, parse_gb_doc
from .machine import bench_context_summary, machine_meta, publishable
from .plan import calibrate_kernel, plan_points, select_targets
from .proc import last_line, map_jobs, run_with_timeout, signal_death, usable_cpus
from .rundata import (load_run, plan_problem, read_meta, read_status, resolve_run, results_csv,
                      runs_base, samples_csv)
from .rundir import LOCK_NAME, RunLock, create_run_dir, in_use, lock_holder


class BenchBackend:
    """How a real sweep runs a point: its bench binary once (bench_command), in `root`,
    with the plan's timeout, its busy-loop rate and preset in the environment, its
    console output in the log."""

    def __init__(self, root):
        self.root = root

    def run(self, plan, point, out_path, log):
        """Run the point, the bench writing its JSON to out_path and its output to the
        open file log.  Returns (exit status, why it failed): the status is None when the
        bench did not end by itself (it could not start, or timed out)."""
        cmd = bench_command(self.root, plan, point, out_path)
        env = dict(os.environ)
        if plan.get("full") or point.get("full"):
            env[FULL_ENV] = "1"
        if plan.get("iters_per_us"):
            env[ITERS_ENV] = repr(plan["iters_per_us"])
        log.write("$ " + shlex.join(cmd) + "\n")
        log.flush()
        try:
            rc, timed_out = run_with_timeout(cmd, log, env, self.root, plan.get("timeout"))
        except OSError as e:
            return None, f"cannot run {point['binary']}: {e.strerror}"
        if timed_out:
            return None, f"timed out after {plan.get('timeout')} s"
        if rc == 0:
            return rc, ""
        if signal_death(rc):   # its output's last line is no reason
            return rc, signal_death(rc)
        with open(log.name, encoding="utf-8", errors="replace") as f:
            return rc, f"exit status {rc}: {last_line(f.read())}"


def bench_command(root, plan, point, out_path):
    """The bench invocation of one point.  It runs in `root` and names its binary
    relative to it, so the JSON context it records ("executable") carries no absolute
    path of this machine."""
    del root
    return [os.path.join(".", point["binary"]),
            "--workers", str(point["workers"]),
            f"--benchmark_filter={point['filter']}",
            f"--benchmark_repetitions={point.get('repetitions', plan['repetitions'])}",
            f"--benchmark_out={out_path}",
            "--benchmark_out_format=json",
            f"--benchmark_min_time={plan['min_time']!r}"]


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


def point_done(run_dir, point, plan=None):
    """True when the point's raw file holds all its rounds (a plan-less caller: when it
    is in place and parses)."""
    plan = plan or {"repetitions": point.get("repetitions", 1)}
    return rounds_done(run_dir, plan, point) >= rounds_of(plan, point)


def run_round(backend, run_dir, plan, point, r, record=None):
    """Run round r of one point with the backend (BenchBackend, simulate.SimBackend): its
    JSON goes to a temporary file that is checked and merged into the point's raw file
    (merge_round), its console output appended to the point's log (the first round
    starts it afresh).  Returns the point's status record, updated from `record` (the
    previous rounds')."""
    raw = os.path.join(run_dir, point["raw"])
    log = os.path.join(run_dir, point["log"])
    for d in (os.path.dirname(raw), os.path.dirname(log)):
        os.makedirs(d, exist_ok=True)
    tmp = os.path.join(os.path.dirname(raw), f".{os.path.basename(raw)}.{os.getpid()}.tmp")
    log_tmp = os.path.join(os.path.dirname(log), f".{os.path.basename(log)}.{os.getpid()}.tmp")
    n = per_round(plan, point)
    reps = point.get("repetitions", plan["repetitions"])
    status = dict(ok=False, rc=None, errors=0, message="", rounds=r, of=rounds_of(plan, point))
    started = time.monotonic()
    try:
        with open(log_tmp, "w", encoding="utf-8") as logf:
            status["rc"], status["message"] = backend.run(
                plan, dict(point, repetitions=min(n, reps - r * n)), tmp, logf)
        with open(log_tmp, encoding="utf-8", errors="replace") as src, \
                open(log, "w" if r == 0 else "a", encoding="utf-8") as dst:
            dst.write(src.read())
        if status["rc"] == 0:
            merge_round(tmp, raw, r * n, status)
    finally:
        for path in (tmp, log_tmp):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
    if status["ok"]:
        status["rounds"] = r + 1
        status["ok"] = status["rounds"] >= status["of"]
    earlier = (record or {}).get("seconds") if r else 0
    status["seconds"] = round((earlier if isinstance(earlier, (int, float)) else 0)
                              + time.monotonic() - started, 3)
    status["finished"] = now_iso()
    return status


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


class Progress:
    """'point k of n, elapsed, ETA' on a terminal (one rewritten line), one line per
    finished point otherwise; failures are always printed."""

    def __init__(self, total, done, durations, quiet=False, stream=None):
        self.total, self.done = total, done
        self.durations = list(durations)
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.quiet = quiet
        self.started = time.monotonic()

    def _eta(self):
        if not self.durations:
            return "?"
        mean = sum(self.durations) / len(self.durations)
        return fmt_duration(mean * (self.total - self.done))

    def _label(self, point):
        rounds = f" round {point['_round'] + 1}/{point['_of']}" if point.get("_of", 1) > 1 else ""
        return f"{point['variant']} workers={point['workers']} {point['workload']}{rounds}"

    def start(self, point):
        if self.tty and not self.quiet:
            elapsed = fmt_duration(time.monotonic() - self.started)
            self.stream.write(f"\r\x1b[K[{self.done + 1}/{self.total}] {self._label(point)}"
                              f"  elapsed {elapsed}  ETA {self._eta()}")
            self.stream.flush()

    def finish(self, point, status):
        self.done += 1
        self.durations.append(status["seconds"])
        problem = status["message"] if (not status["ok"] or status["errors"]) else ""
        if problem or (not self.tty and not self.quiet):
            what = "FAILED" if not status["ok"] else ("WRONG ANSWER" if status["errors"] else "ok")
            line = (f"[{self.done}/{self.total}] {self._label(point)}: {what}"
                    f" ({status['seconds']:.1f} s){': ' + problem if problem else ''}")
            self.stream.write(("\r\x1b[K" if self.tty else "") + line + "\n")
            self.stream.flush()

    def close(self):
        if self.tty and not self.quiet:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def remove_stale_temporaries(run_dir):
    """Temporary files left by a sweep that was killed (dot-names ending in .tmp)."""
    for sub in ("raw", "logs"):
        for dirpath, _, filenames in os.walk(os.path.join(run_dir, sub)):
            for name in filenames:
                if name.startswith(".") and name.endswith(".tmp"):
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.join(dirpath, name))


def execute_plan(backend, run_dir, plan, quiet=False, jobs=1):
    """Run every round of the plan's points that the raw files do not hold yet with the
    backend, in schedule()'s order, recording each point in status.json.  jobs > 1 runs
    that many points at once (a simulated sweep's: simulated time does not depend on the
    host's load, and its points have one round each); a real sweep runs one at a time.
    A point whose round fails runs no further round in this sweep (a --resume tries
    again from there).  Returns the status dict."""
    remove_stale_temporaries(run_dir)
    status_path = os.path.join(run_dir, "status.json")
    status = read_status(run_dir)
    done = {p["id"]: rounds_done(run_dir, plan, p) for p in plan["points"]}
    todo = [(p, r) for p, r in schedule(plan) if r >= done[p["id"]]]
    for p in plan["points"]:
        if done[p["id"]] >= rounds_of(plan, p) and not status.get(p["id"], {}).get("ok"):
            # killed between the raw file's rename and the status write
            status[p["id"]] = dict(ok=True, rc=0, errors=0, message="recovered on resume",
                                   rounds=done[p["id"]], of=rounds_of(plan, p))
    units = len(schedule(plan))
    if len(todo) < units:
        what = (f"rounds of the {len(plan['points'])} points" if plan.get("interleave")
                else "points")
        print(f"{PROG}: {units - len(todo)} of {units} {what} already done", file=sys.stderr)
    durations = [s["seconds"] / max(1, s.get("rounds") or 1) for s in status.values()
                 if isinstance(s.get("seconds"), (int, float)) and s["seconds"] > 0]
    progress = Progress(units, units - len(todo), durations, quiet)
    bookkeeping = threading.Lock()
    failed = set()

    def run(unit):
        point, r = unit
        if point["id"] in failed:
            return
        shown = dict(point, _round=r, _of=rounds_of(plan, point))
        with bookkeeping:
            progress.start(shown)
        record = run_round(backend, run_dir, plan, point, r, status.get(point["id"]))
        with bookkeeping:
            if not record["ok"] and record["rounds"] <= r:
                failed.add(point["id"])
            status[point["id"]] = record
            atomic_write_json(status_path, status)
            progress.finish(shown, dict(record, ok=record["ok"] or record["rounds"] > r))

    try:
        for _ in map_jobs(run, todo, jobs):
            pass
    finally:
        progress.close()
    return status


def finalize_run(run_dir):
    """Merge the raw files into results.csv and samples.csv, note the end in meta.json."""
    data = load_run(run_dir)
    atomic_write_text(os.path.join(run_dir, "results.csv"), results_csv(data.results))
    atomic_write_text(os.path.join(run_dir, "samples.csv"), samples_csv(data.results))
    meta = dict(data.meta)
    meta["finished"] = now_iso()
    meta["bench_context"] = bench_context_summary(data.contexts)
    was = meta.get("publishable")
    meta["publishable"], why = publishable(meta.get("git"), meta["bench_context"],
                                           data.revisions)
    if was and not meta["publishable"]:
        warn(f"this run is not publishable: {why}")
    atomic_write_json(os.path.join(run_dir, "meta.json"), meta)
    data.meta = meta
    return data


def out_taken(out):
    """The error for an --out directory that is not empty: in use, or a run to resume."""
    holder = lock_holder(out)
    if holder is not None:
        return UsageError(f"--out {in_use(out, holder)}")
    return UsageError(f"{out} exists and is not empty (use --resume {out} to continue it)")


def check_new_out(out):
    """UsageError when --out cannot be a new run's directory (before anything is built)."""
    if out:
        check_out_path(out, "--out", directory=True)
    if out and os.path.isdir(out) and set(os.listdir(out)) - {LOCK_NAME}:
        raise out_taken(out)


def new_run_dir(out, root, files, prefix=""):
    """Create and lock the directory of a new run (rundir.create_run_dir): --out, or
    results/<prefix><date-time> (-2, -3, ... when that is taken).  files(run_id) gives
    its first files ({name: JSON document or text}).  Returns (its absolute path, its
    RunLock)."""
    if out:
        try:
            return create_run_dir(out, files(os.path.basename(os.path.abspath(out))))
        except FileExistsError:
            raise out_taken(out) from None
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    for n in itertools.count(1):
        path = os.path.join(runs_base(root), prefix + (stamp if n == 1 else f"{stamp}-{n}"))
        if not os.path.exists(path):
            with contextlib.suppress(FileExistsError):   # another sweep took it first
                return create_run_dir(path, files(os.path.basename(path)))


def run_spec(run_dir, root):
    """How to name run_dir on the command line: its id when it is under results/."""
    if os.path.dirname(os.path.abspath(run_dir)) == os.path.abspath(runs_base(root)):
        return os.path.basename(run_dir)
    return run_dir


def command_line():
    return shlex.join([sys.argv[0]] + sys.argv[1:]) if sys.argv else PROG


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


def start_run(args, build):
    """Plan a new sweep and record it (meta.json, plan.json); returns (run_dir, plan,
    the RunLock held on run_dir for the sweep)."""
    preset = FULL if args.full else QUICK
    reps = args.repetitions if args.repetitions is not None else preset["repetitions"]
    min_time = args.min_time if args.min_time is not None else preset["min_time"]
    timeout = args.timeout if args.timeout is not None else preset["timeout"]
    if reps < 1:
        raise UsageError("--repetitions must be at least 1")
    if not (min_time > 0 and math.isfinite(min_time)):
        raise UsageError("--min-time must be a positive number of seconds")
    if not (timeout > 0 and math.isfinite(timeout)):
        raise UsageError("--timeout must be a positive number of seconds")
    variants = parse_name_list(args.variants, "--variants") if args.variants else None
    workloads = parse_name_list(args.workloads, "--workloads") if args.workloads else None
    workers = parse_workers(args.workers) if args.workers else default_workers(usable_cpus())
    check_new_out(args.out)
    targets = select_targets(build, variants, args.no_build)
    points = plan_points(build, targets, workloads, workers, args.filter, args.full,
                         args.all_sets)
    top = max(workers)
    for p in points:
        p["repetitions"] = reps
        if args.repetitions is None and p["workers"] == top:   # the claim's points get more
            p["repetitions"] = max(reps, CLAIM_REPETITIONS.get(p["workload"], reps))
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 32)
    random.Random(seed).shuffle(points)
    rate = (calibrate_kernel(build.root, targets)
            if any(p["workload"] in KERNEL_WORKLOADS for p in points) else None)
    per_round = getattr(args, "per_round", None) or 1
    if per_round < 1:
        raise UsageError("--per-round must be at least 1")
    plan = dict(version=PLAN_VERSION, seed=seed, full=args.full,
                all_sets=args.all_sets or args.full, repetitions=reps, min_time=min_time,
                timeout=timeout, workers=workers, filter=args.filter, points=points,
                iters_per_us=rate, interleave=interleave(per_round))
    meta = machine_meta(build.root, build.bundle)
    meta["publishable"], why = publishable(meta["git"])
    if not meta["publishable"]:
        warn(f"this run will not be publishable: {why}")
    meta.update(started=now_iso(), command=command_line(),
                variants=[t.name for t in targets if not t.reference],
                references=[t.name for t in targets if t.reference],
                workloads=sorted({p["workload"] for p in points}))
    run_dir, lock = new_run_dir(args.out, build.root, lambda run_id: {
        "plan.json": plan, "meta.json": dict(meta, run_id=run_id)})
    return run_dir, plan, lock


SELECTION_OPTIONS = ("variants", "workloads", "workers", "repetitions", "min_time", "full",
                     "all_sets", "filter", "out", "seed", "timeout", "per_round")


def resume_run(args, build):
    """The run directory and stored plan of a sweep to continue, and the RunLock held on
    it: (run_dir, plan, lock)."""
    warn_ignored(args, SELECTION_OPTIONS)
    return reopen_run(args.resume, build.root)


def warn_ignored(args, options):
    """The warning for the selection options given with --resume."""
    given = [o for o in options if getattr(args, o) not in (None, False)]
    if given:
        warn("ignored with --resume (the sweep keeps its plan): "
             + ", ".join("--" + o.replace("_", "-") for o in given))


def reopen_run(spec, root, simulated=False):
    """The run directory of a sweep to continue (a run id, 'latest' or a path), its
    stored plan, and the RunLock held on it: (run_dir, plan, lock).  A measured run is
    resumed by `./run.py run --resume`, a simulated one (simulated) by `./run.py simulate
    --resume`; meta.json notes the resumption."""
    run_dir = resolve_run(spec, root)
    plan = read_json(os.path.join(run_dir, "plan.json"))
    problem = "missing or not JSON" if plan is None else plan_problem(plan)
    if problem:
        raise UsageError(f"{run_dir} cannot be resumed: its plan.json is unusable ({problem})")
    if (plan.get("simulated") is True) != simulated:
        kind, command = ("a simulated", "simulate") if not simulated else ("a measured", "run")
        raise UsageError(f"{run_dir} cannot be resumed: it is {kind} run "
                         f"(./run.py {command} --resume {spec})")
    lock = RunLock(run_dir)
    try:
        meta = read_meta(run_dir)
        if not isinstance(meta.get("resumed"), list):
            meta["resumed"] = []
        meta["resumed"].append(dict(at=now_iso(), command=command_line()))
        # a simulated run's meta.json keeps its own order (simulate.py)
        atomic_write_json(os.path.join(run_dir, "meta.json"), meta, sort_keys=not simulated)
    except BaseException:
        lock.release()
        raise
    return run_dir, plan, lock
