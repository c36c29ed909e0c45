"""ideal.py -- what a perfect balancer gains over a pool that keeps tasks where it placed
them: the imbalance rows' targets (targets.py's `imbalance`).

The workload's task sizes and submitters are computed here as workloads/wl_kernel.h makes
them (wl_uniform, the shares, the late start), in units of the grain, and scheduled three
ways: by a perfect balancer, round-robin, and on each submitter's home worker.  A
scenario's target is the gain its placement allows (plus slack for the scheduler's own
costs): a balanced scenario asks for parity, one submitter on the per-thread-queue pool
for 2x.  Standard library only."""
import re

IMBALANCE_SEED = 0x1B873593
IMBALANCE_SLACK = 1.10   # a target is the ideal ratio plus 10% for the scheduler's costs
M64 = (1 << 64) - 1


def _mix64(x):
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def imbalance_sizes(imbalance, tasks, skew):
    """Task i's size in grains (wl_imbalance_task_iters, before rounding to iterations)."""
    seed = _mix64(IMBALANCE_SEED)
    sizes = []
    for i in range(tasks):
        u = (i + 0.5) / tasks if skew else (_mix64((i * 0x9E3779B97F4A7C15 + seed) & M64) >> 11) / 2.0**53
        sizes.append(max(0.0, 1 + (u - 0.5) * imbalance))
    return sizes


def imbalance_schedule(set_name, workers):
    """{placement: makespan in grains} for an imbalance set on `workers`: 'balancer' a
    perfect one (each task, in release order, to the worker free first); 'round-robin' each
    submitter's tasks round-robin from worker 0 (place_static.h); 'home' each
    submitter's tasks on its home, homes round-robin (place_affinity.h)."""
    p = {k: float(v) for k, v in re.findall(r"(\w+):(\d+)", set_name)}
    tasks, subs = int(p["tasks"]), int(p["submitters"])
    sizes = imbalance_sizes(p["imbalance"], tasks, bool(p.get("skew")))
    late = bool(p.get("late")) and subs > 1
    delay = 0.5 * (tasks * (subs // 2) / subs) / workers if late else 0.0   # wl_late_delay_us
    jobs = []   # (release, size, round-robin worker, home worker), in release order
    for s in range(subs):
        first, last = tasks * s // subs, tasks * (s + 1) // subs
        release = delay if late and s >= subs // 2 else 0.0
        jobs += [(release, sizes[i], k % workers, s % workers) for k, i in enumerate(range(first, last))]
    jobs.sort(key=lambda j: j[0])
    free = [0.0] * workers
    for release, size, _, _ in jobs:
        w = min(range(workers), key=free.__getitem__)
        free[w] = max(free[w], release) + size
    out = {"balancer": max(free)}
    for name, col in (("round-robin", 2), ("home", 3)):
        free = [0.0] * workers
        for job in jobs:
            free[job[col]] = max(free[job[col]], job[0]) + job[1]
        out[name] = max(free)
    return out


def imbalance_target(set_name, place, workers=2):
    """The target ratio (ours / theirs, time) against a reference: par with one that
    balances too (place None: oneTBB); against a pool without stealing that places by
    `place` (placement()), the ideal ratio plus the slack."""
    if place is None:
        return 1.0
    times = imbalance_schedule(set_name, workers)
    return round(times["balancer"] / times[place] * IMBALANCE_SLACK, 3)


def placement(policy):
    """How a pool without stealing places a task, for imbalance_schedule: 'round-robin'
    (it spreads each submitter's tasks over the workers), 'home' (it keeps them on the
    submitter's worker), None (one shared queue: a balancer, or a variant that steals)."""
    if policy.get("steals") or not policy.get("keeps_tasks"):
        return None
    return "round-robin" if policy.get("spreads_tasks") else "home"
