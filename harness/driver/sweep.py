"""Running a sweep: start or resume a run directory, run its plan's points in interleaved
rounds (rounds.py: resumable, atomic, with a timeout), show progress, and merge the
results at the end."""

import atexit
import contextlib
import datetime
import itertools
import math
import os
import random
import shlex
import shutil
import sys
import tempfile
import threading
import time

from .commands import bench_argv
from .config import (ANSWER_ENV, CLAIM_REPETITIONS, FULL, FULL_ENV, ITERS_ENV,
                     KERNEL_WORKLOADS, PROG, QUICK, UsageError,
                     default_workers, parse_name_list, parse_workers, warn)
from .files import (atomic_write_json, atomic_write_text, check_out_path,
                    read_json)
from .fmt import fmt_duration, now_iso
from .machine import bench_context_summary, machine_meta, publishable
from .plan import calibrate_kernel, plan_points, select_targets
from .engine import LocalEngine
from .rounds import PLAN_VERSION, interleave, record_round, rounds_done, rounds_of, schedule
from .proc import last_line, run_with_timeout, signal_death, usable_cpus
from .rundata import load_run, plan_problem, read_meta, read_status, results_csv, samples_csv
from .rundir import (LOCK_NAME, RunLock, create_run_dir, in_use, lock_holder, resolve_run,
                     runs_base)


_ANSWERS = []   # this process's directory of the benches' sequential answers


def answer_dir():
    """A directory of this process for the benches' sequential answers (ANSWER_ENV), made
    on first use and removed when the process ends: one per process, so that a backend
    sent to another process (engine.py) computes each answer once there too."""
    if not _ANSWERS:
        _ANSWERS.append(tempfile.mkdtemp(prefix="schedbench-answers-"))
        atexit.register(shutil.rmtree, _ANSWERS[0], ignore_errors=True)
    return _ANSWERS[0]


class BenchBackend:
    """How a real sweep runs a point: its bench binary once (bench_command), in `root`,
    with the plan's timeout, its busy-loop rate and preset in the environment, its
    console output in the log."""

    def __init__(self, root):
        self.root = root

    def answer_dir(self):
        return answer_dir()

    def run(self, plan, point, out_path, log):
        """Run the point, the bench writing its JSON to out_path and its output to the
        open file log.  Returns (exit status, why it failed): the status is None when the
        bench did not end by itself (it could not start, or timed out)."""
        cmd = bench_command(plan, point, out_path)
        env = dict(os.environ)
        env[ANSWER_ENV] = self.answer_dir()
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


def bench_command(plan, point, out_path):
    """The bench invocation of one point.  It runs in the source tree (BenchBackend's
    root) and names its binary relative to it, so the JSON context it records
    ("executable") carries no absolute path of this machine."""
    return bench_argv(os.path.join(".", point["binary"]), out_path, point["filter"],
                      point["workers"], plan["min_time"],
                      point.get("repetitions", plan["repetitions"]))


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
        model = f"{point['model']}{' ' + point['band_end'] if point.get('band_end') else ''}: " \
            if point.get("model") else ""
        return f"{model}{point['variant']} workers={point['workers']} {point['workload']}{rounds}"

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


class PlanExecution:
    """The bookkeeping of one plan run by an engine (engine.py): the rounds that the raw
    files do not hold yet, in schedule()'s order (units), and the recording of each
    round's output into the run as it comes back (record), status.json rewritten each
    time.  A point whose round fails runs no further round in this sweep (a --resume
    tries again from there): skip() says so before a round starts, and a round of it
    that comes back anyway is not recorded.  `measured`: its rounds are timings, which
    an engine runs one per machine at a time, alone (execute_plans)."""

    def __init__(self, backend, run_dir, plan, measured=True):
        self.backend, self.run_dir, self.plan, self.measured = backend, run_dir, plan, measured
        remove_stale_temporaries(run_dir)
        self.status_path = os.path.join(run_dir, "status.json")
        self.status = read_status(run_dir)
        done = {p["id"]: rounds_done(run_dir, plan, p) for p in plan["points"]}
        self.todo = [(p, r) for p, r in schedule(plan) if r >= done[p["id"]]]
        for p in plan["points"]:
            if done[p["id"]] >= rounds_of(plan, p) and not self.status.get(p["id"], {}).get("ok"):
                # killed between the raw file's rename and the status write
                self.status[p["id"]] = dict(ok=True, rc=0, errors=0, message="recovered on resume",
                                            rounds=done[p["id"]], of=rounds_of(plan, p))
        self.units_total = len(schedule(plan))
        self.failed = set()
        self.lock = threading.Lock()

    def already_done(self):
        """'N of M rounds ... already done', or None when nothing is."""
        units = self.units_total
        if len(self.todo) == units:
            return None
        what = (f"rounds of the {len(self.plan['points'])} points" if self.plan.get("interleave")
                else "points")
        return f"{units - len(self.todo)} of {units} {what} already done"

    def durations(self):
        return [s["seconds"] / max(1, s.get("rounds") or 1) for s in self.status.values()
                if isinstance(s.get("seconds"), (int, float)) and s["seconds"] > 0]

    def skip(self, point):
        return point["id"] in self.failed

    def record(self, point, r, output):
        """Record one round's output; returns the point's record (None when the point had
        failed already and the round is dropped)."""
        with self.lock:
            if point["id"] in self.failed:
                return None
            record = record_round(self.run_dir, self.plan, point, r, output,
                                  self.status.get(point["id"]))
            if not record["ok"] and record["rounds"] <= r:
                self.failed.add(point["id"])
            self.status[point["id"]] = record
            atomic_write_json(self.status_path, self.status)
            return record


def execute_plans(executions, engine, quiet=False):
    """Run the rounds of several plans (PlanExecution each) with one engine (engine.py;
    the local one runs them here, `jobs` at once), recording each as it comes back, with
    one progress line.  The measured plans run first and alone, one round at a time per
    machine, in their order; the simulated ones after them, side by side.  Returns the
    executions (each holds its status)."""
    for ex in executions:
        note = ex.already_done()
        if note:
            print(f"{PROG}: {os.path.relpath(ex.run_dir)}: {note}", file=sys.stderr)
    durations = [d for ex in executions for d in ex.durations()]
    total = sum(ex.units_total for ex in executions)
    progress = Progress(total, total - sum(len(ex.todo) for ex in executions), durations, quiet)
    bookkeeping = threading.Lock()
    try:
        for measured in (True, False):
            units = [(ex, p, r) for ex in executions if ex.measured == measured
                     for p, r in ex.todo]
            if not units:
                continue
            def started(unit):
                ex, point, r = unit
                with bookkeeping:
                    progress.start(dict(point, _round=r, _of=rounds_of(ex.plan, point)))

            for (ex, point, r), output in engine.run(units, measured, started):
                record = ex.record(point, r, output)
                if record is None:
                    continue
                with bookkeeping:
                    shown = dict(point, _round=r, _of=rounds_of(ex.plan, point))
                    progress.finish(shown, dict(record, ok=record["ok"] or record["rounds"] > r))
    finally:
        progress.close()
    return executions


def execute_plan(backend, run_dir, plan, quiet=False, jobs=1, engine=None):
    """Run every round of the plan's points that the raw files do not hold yet with the
    backend, in schedule()'s order, recording each point in status.json.  jobs > 1 runs
    that many points at once (a simulated sweep's: simulated time does not depend on the
    host's load, and its points have one round each); a real sweep runs one at a time.
    engine: where the rounds run (engine.py; default: here, `jobs` at once).  A point
    whose round fails runs no further round in this sweep (a --resume tries again from
    there).  Returns the status dict."""
    ex = PlanExecution(backend, run_dir, plan, measured=not plan.get("simulated"))
    execute_plans([ex], engine or LocalEngine(jobs), quiet)
    return ex.status


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
                         args.all_sets, named=variants is not None)
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
