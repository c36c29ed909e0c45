"""Where a sweep's rounds run: here (LocalEngine, the default), or on a Dask distributed
cluster (DaskEngine: `--engine dask --scheduler ADDRESS`, or `--engine dask-local` for a
LocalCluster on this machine).

An engine is one more backend of the same sweep, not a second pipeline: sweep.py's
PlanExecution says which rounds are left, rounds.round_output runs one (the bench or the
simulator, into a private temporary directory) wherever the engine puts it, and
rounds.record_round merges what it returned into the run, on the machine that holds the
run; resuming, status.json, the raw layout and every reader stay what they are.

The rules an engine keeps (harness/README.md says why Dask):
- Measured rounds are timings: one per machine at a time, and nothing else beside them.
  The measured plans run first (sweep.execute_plans), before any simulated round.  On
  Dask each measured round asks for the resource "machine": 1, which each machine's
  worker offers once (`dask worker ADDRESS --resources machine=1`); every round of one
  group (a workload at one worker count: the variants a comparison sets side by side)
  is pinned to one such worker, and the rounds of one worker run in the schedule's order
  (each waits for the one before: a chain of futures), so the interleaving is the local
  sweep's.
- Simulated rounds need no machine of their own (simulated time does not depend on the
  host's load): they go to any worker thread, as many at once as the cluster has.
- Every round records where it ran: status.json's "host" (the host name) and, on Dask,
  "worker" (the worker's address)."""

import os
import socket

from .config import ROOT, UsageError
from .proc import map_jobs, usable_cpus
from .rounds import round_output

ENGINES = ("local", "dask", "dask-local")
MACHINE = "machine"            # the Dask resource a machine's worker offers once


class LocalEngine:
    """Every round here: the measured ones one at a time, the simulated ones `jobs` at
    once (threads, each waiting for its own process)."""

    name = "local"

    def __init__(self, jobs=1):
        self.jobs = max(1, jobs)

    def describe(self):
        return dict(engine=self.name, jobs=self.jobs, host=socket.gethostname())

    def run(self, units, measured, started=None):
        """Yield ((execution, point, round), output) for each unit (execution, point,
        round), in their order; a unit whose point has failed already is left out."""
        def one(unit):
            ex, point, r = unit
            if ex.skip(point):
                return unit, None
            if started:
                started(unit)
            return unit, round_output(ex.backend, ex.plan, point, r, ex.run_dir)

        for unit, output in map_jobs(one, units, 1 if measured else self.jobs):
            if output is not None:
                yield unit, output

    def close(self):
        pass


def plan_view(plan):
    """What a backend reads of a plan (everything but its points): sent with each round."""
    return {k: v for k, v in plan.items() if k != "points"}


def localized(point, origin_root):
    """The point with its binary found in this machine's tree: a simulated point names
    its simbench by an absolute path of the machine that planned it."""
    binary = point.get("binary") or ""
    if os.path.isabs(binary) and not os.path.exists(binary):
        rel = os.path.relpath(binary, origin_root)
        if not rel.startswith(".."):
            return dict(point, binary=os.path.join(ROOT, rel))
    return point


def remote_round(backend, plan, point, r, origin_root, after=None):
    """One round on a Dask worker (round_output): the backend moved to this machine's
    tree (relocated), the output with the worker's address.  `after`: the round before it
    on the same worker (a measured chain); its result is not used.  Never raises: a
    failure is the round's message."""
    del after
    from distributed import get_worker
    try:
        worker = get_worker().address
    except ValueError:
        worker = None
    try:
        out = round_output(relocated(backend, origin_root), plan, localized(point, origin_root), r)
    except Exception as e:      # a round that cannot run is a failed round, not a lost one
        out = dict(rc=None, message=f"{type(e).__name__}: {e}", json=None, log="",
                   seconds=0.0, host=socket.gethostname())
    out["worker"] = worker
    return out


def relocated(backend, origin_root):
    """The backend as this machine runs it: a bench backend's root is this machine's
    tree when the planning machine's is not here (a simulated one carries its model's
    text: simulate.SimBackend)."""
    root = getattr(backend, "root", None)
    if root is not None and root == origin_root and not os.path.isdir(root):
        backend.root = ROOT
    return backend


class DaskEngine:
    """The rounds on a Dask distributed cluster: a running scheduler (address), or a
    LocalCluster started here (local=True: one worker, this machine, with `jobs` threads
    and the machine resource)."""

    name = "dask"

    def __init__(self, address=None, local=False, jobs=None):
        try:
            from distributed import Client, LocalCluster
        except ImportError as e:
            raise UsageError(f"--engine dask needs Dask distributed (Debian: apt-get install "
                             f"python3-distributed): {e}") from None
        self.cluster = None
        if local:
            self.name = "dask-local"
            self.cluster = LocalCluster(n_workers=1, threads_per_worker=jobs or usable_cpus(),
                                        processes=True, resources={MACHINE: 1},
                                        dashboard_address=":0")
            address = self.cluster
        elif not address:
            raise UsageError("--engine dask needs --scheduler ADDRESS (or --engine dask-local)")
        try:
            self.client = Client(address, timeout=30)
        except OSError as e:
            if self.cluster:
                self.cluster.close()
            raise UsageError(f"cannot reach the Dask scheduler {address}: {e}") from None

    def workers(self):
        """{address: its resources} of the cluster's workers."""
        return {a: dict(w.get("resources") or {})
                for a, w in self.client.scheduler_info()["workers"].items()}

    def describe(self):
        info = self.workers()
        return dict(engine=self.name, scheduler=self.client.scheduler.address,
                    workers=sorted(info), machines=sorted(a for a, r in info.items()
                                                          if r.get(MACHINE)))

    def machines(self):
        found = sorted(a for a, r in self.workers().items() if r.get(MACHINE, 0) >= 1)
        if not found:
            raise UsageError(f"no Dask worker offers the resource '{MACHINE}': start one worker "
                             f"per machine with `dask worker ADDRESS --resources {MACHINE}=1`, "
                             "or run the measured part with --engine local")
        return found

    def run(self, units, measured, started=None):
        """Submit every unit, yield ((execution, point, round), output) as they finish.
        Measured units: each group (workload, workers) pinned to one machine's worker,
        each worker's units a chain in their order, each asking for the machine resource."""
        from distributed import as_completed
        futures = {}
        if measured:
            machines = self.machines()
            group_of, last = {}, {}
            for unit in units:
                ex, point, r = unit
                key = (id(ex), point["workload"], point["workers"])
                where = group_of.setdefault(key, machines[len(group_of) % len(machines)])
                f = self.client.submit(remote_round, ex.backend, plan_view(ex.plan), point, r,
                                       ROOT, last.get(where), resources={MACHINE: 1},
                                       workers=[where], allow_other_workers=False, pure=False)
                last[where] = f
                futures[f] = unit
        else:
            for unit in units:
                ex, point, r = unit
                f = self.client.submit(remote_round, ex.backend, plan_view(ex.plan), point, r,
                                       ROOT, pure=False)
                futures[f] = unit
        try:
            for f in as_completed(list(futures)):
                unit = futures.pop(f)
                if started:
                    started(unit)
                yield unit, f.result()
        finally:
            if futures:
                self.client.cancel(list(futures))

    def close(self):
        self.client.close()
        if self.cluster:
            self.cluster.close()


def make_engine(name="local", scheduler=None, jobs=1):
    """The engine the command line asks for (--engine, --scheduler, --jobs)."""
    if name not in ENGINES:
        raise UsageError(f"--engine {name}: one of {', '.join(ENGINES)}")
    if name == "local":
        if scheduler:
            raise UsageError("--scheduler goes with --engine dask")
        return LocalEngine(jobs)
    return DaskEngine(scheduler, local=name == "dask-local", jobs=jobs)
