"""Planning a sweep: which binaries (variants and references) and which of their listed
benchmarks make up the points, and the busy-loop rate pinned for every point.  A
simulated sweep's points (simulated_points) are chosen by the same rules from a
simbench's listing."""

import dataclasses
import json
import math
import os
import re
import subprocess
import tempfile

from .commands import bench_argv
from .build import binary_policy
from .config import (AA_SUFFIX, AA_VARIANT, ARTICLE_WORKLOAD, BATCH_WORKLOAD,
                     CALIBRATION_FILTER, CLAIM_PARAM, ITERS_ENV, SCENARIO_WORKLOADS,
                     SWEPT_PARAM, WHOLE_WORKLOADS, UsageError, check_unknown, warn)
from .gbjson import params_of, set_name, workload_of
from .roles import Roles


@dataclasses.dataclass
class Target:
    """One benchmark binary: a variant, or a reference implementation (tbb, omp)."""
    name: str
    reference: bool
    binary: str


def select_targets(build, names, no_build):
    """The binaries to measure: the named variants/references (all when names is None),
    brought up to date with make unless no_build (or in a bundle, which builds nothing).
    make is incremental, so an up-to-date tree costs a second; and a commit since the last
    build rebuilds the revision stamp each bench records (harness/bench/rules.mk), so the run
    never measures binaries whose record names an older revision.  A reference that was
    not asked for by name and cannot be built is skipped with a warning."""
    variants, references = build.variants, build.references
    if names:
        check_unknown(names, set(variants) | set(references), "variant")
    chosen = names or variants + [r for r in references if r not in variants]
    targets = [Target(n, n not in variants, build.binary(n, n not in variants)) for n in chosen]

    def missing():
        return [t for t in targets if not os.access(t.binary, os.X_OK)]

    if not no_build and build.bundle is None:
        # announced when something is missing; else silent unless it fails
        show = "always" if missing() else "failure"
        paths = [os.path.relpath(t.binary, build.root) for t in targets if not t.reference]
        if paths and not build.make(paths, show=show):
            raise UsageError(f"make {' '.join(paths)} failed: not measuring binaries that "
                             "may predate the tree (--no-build measures what is there)")
        # one at a time: a reference whose library is missing must not stop the others
        for t in [t for t in targets if t.reference]:
            rel = os.path.relpath(t.binary, build.root)
            if build.make([rel], show=show if names else "never"):
                continue
            if names:
                raise UsageError(f"make {rel} failed")
            warn(f"reference '{t.name}' does not build ({rel}); skipped")
            targets.remove(t)
    for t in missing():
        rel = os.path.relpath(t.binary, build.root)
        if t.reference and not names:
            warn(f"reference '{t.name}' is not built ({rel}); skipped")
            targets.remove(t)
        else:
            raise UsageError(f"{rel} is not built (try `make {'refs' if t.reference else 'all'}`)")
    return targets


def gb_regex_escape(text):
    """Escape a literal for Google Benchmark's (POSIX extended) filter regex."""
    return re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", text)


def gb_filter(workload, chosen, listed):
    """The --benchmark_filter selecting `chosen` among the workload's `listed` names."""
    if list(chosen) == list(listed):
        return f"^{gb_regex_escape(workload)}(/.*)?$"
    return "^(" + "|".join(gb_regex_escape(n) for n in chosen) + ")$"


def group_by_workload(names):
    """{workload: [names]} keeping the listing's order."""
    groups = {}
    for name in names:
        groups.setdefault(workload_of(name), []).append(name)
    return groups


def batch_selection(listed, part):
    """The batching experiment's sets for one row by its part (roles.batch_part): every
    one for a row whose batch submission is asked ("submit"); for a row that differs
    from one only in how many tasks a thief takes ("steal"), the sets with batch 0 from
    a worker (one task per publication: the stealing half); for any other row the first
    set."""
    if part == "submit":
        return list(listed)
    if part == "steal":
        return [n for n in listed if params_of(n).get("batch") == "0"
                and params_of(n).get("from") == "1" and params_of(n).get("spin") == "0"]
    return listed[:1]


def quick_selection(listed, more=(), workers=None, part=None):
    """The quick sweep's share of one workload's listed argument sets: the first, and
    those that differ from it only in CLAIM_PARAM (so the imbalance sweep stays whole);
    every set of WHOLE_WORKLOADS, and of `more` (the full listing's further sets, for the
    workloads of SWEPT_PARAM) those that differ from the first only in the swept
    parameter (the article's every d); the batching experiment's by the row's part
    (batch_selection); at one worker only the first set of SCENARIO_WORKLOADS (config.py:
    one worker has nothing to balance)."""
    if not listed:
        return []
    workload = listed[0].split("/", 1)[0]
    if workers == 1 and workload in SCENARIO_WORKLOADS:
        return [listed[0]]
    if workload == BATCH_WORKLOAD:
        return batch_selection(listed, part)
    first = params_of(listed[0])
    swept = {SWEPT_PARAM.get(workload, CLAIM_PARAM)}

    def differs_only_in_swept(name):
        params = params_of(name)
        return {k for k in set(params) | set(first) if params.get(k) != first.get(k)} <= swept

    chosen = list(listed) if workload in WHOLE_WORKLOADS else \
        [n for n in listed if differs_only_in_swept(n)]
    return chosen + [n for n in more if n not in chosen and differs_only_in_swept(n)]


def select_sets(listed, all_sets=False, regex=None, like=None, more=(), workers=None,
                part=None):
    """One workload's argument sets (benchmark names, in the listing's order) in a sweep:
    those named in `like` (a real run's benchmarks, which a simulated sweep can take),
    else those the regular expression matches, else all of them with all_sets, else
    quick_selection's (with `more`, `workers` and the row's batching `part`)."""
    if like is not None:
        return [n for n in listed if n in like]
    if regex:
        return [n for n in listed if regex.search(n)]
    return list(listed) if all_sets else quick_selection(listed, more, workers, part)


def name_regex(text, option="--filter"):
    """The compiled --filter (None when there is none)."""
    try:
        return re.compile(text) if text else None
    except re.error as e:
        raise UsageError(f"{option}: bad regular expression: {e}") from None


def make_point(target, binary, workers, workload, benchmarks, **fields):
    """One point of a plan: `binary` (as the plan names it) run with `workers` on the
    chosen `benchmarks` of `workload`, and its raw and log files; `fields` go between
    the benchmarks and the files (plan.json keeps this order where it is not sorted)."""
    where = f"{'ref/' if target.reference else ''}{target.name}/workers-{workers}/{workload}"
    return dict(id=where, variant=target.name, reference=target.reference, workers=workers,
                workload=workload, binary=binary, benchmarks=benchmarks, **fields,
                raw=f"raw/{where}.json", log=f"logs/{where}.log")


def plan_points(build, targets, workloads, workers, name_filter, full, all_sets=False,
                named=False):
    """The sweep's points: one per (binary, workload, workers), each run in rounds of
    bench invocations (sweep.py) whose filter comes from the binary's own listing.
    Unknown workloads raise; no workloads means those of `make list-workloads`.  The
    argument sets: all listed ones with full, all_sets or a name filter, else
    quick_selection's (the article's every swept d comes from the full listing: a set
    only that listing has makes its point `full`, run with the full sets registered).
    Unless the variants were named, the rows that exist for the batching experiment
    alone (roles.batch_only, from the policies the benches print) run BATCH_WORKLOAD
    alone.  A run of config.AA_VARIANT gets its A/A twin: the same points under the
    label <variant> + AA_SUFFIX."""
    listings, full_listings = {}, {}
    quick = not (full or all_sets or name_filter)
    for t in list(targets):
        try:
            listings[t.name] = build.list_benchmarks(t.binary, full)
            if quick and any(workload_of(n) == ARTICLE_WORKLOAD for n in listings[t.name]):
                full_listings[t.name] = build.list_benchmarks(t.binary, True)
        except UsageError as e:
            if not t.reference:
                raise
            warn(f"reference '{t.name}' skipped: {e}")
            targets.remove(t)
    # The default is the build's workloads; other benchmark families a binary lists
    # (the harness's switch/stack micro-benchmarks) run when named.
    known = set(build.workloads) | {workload_of(n) for ns in listings.values() for n in ns}
    if workloads:
        check_unknown(workloads, known, "workload")
    else:
        workloads = build.workloads
    regex = name_regex(name_filter)
    roles = Roles({t.name: build.policy(t.name, t.reference) for t in targets},
                  {t.name for t in targets if t.reference})
    batch_only = roles.batch_only()
    points = []
    for t in targets:
        more_of = group_by_workload(full_listings.get(t.name, []))
        for workload, listed in group_by_workload(listings[t.name]).items():
            if workloads and workload not in workloads:
                continue
            if not named and t.name in batch_only and workload != BATCH_WORKLOAD:
                continue
            more = [n for n in more_of.get(workload, []) if n not in listed] \
                if workload == ARTICLE_WORKLOAD else []
            for w in workers:
                chosen = select_sets(listed, full or all_sets, regex, more=more, workers=w,
                                     part=roles.batch_part(t.name))
                if not chosen:
                    continue
                extra = [n for n in chosen if n not in listed]
                names = more_of[workload] if extra else listed
                fields = dict(filter=gb_filter(workload, chosen, names))
                if extra:
                    fields["full"] = True
                points.append(make_point(t, os.path.relpath(t.binary, build.root), w,
                                         workload, chosen, **fields))
    if not points:
        raise UsageError("nothing to run: the selection matches no benchmark")
    return points + twin_points(points)


def twin_points(points):
    """The A/A twin's points: config.AA_VARIANT's, under its twin label (none when the
    sweep does not run that variant)."""
    label = AA_VARIANT + AA_SUFFIX
    out = []
    for p in points:
        if p["variant"] == AA_VARIANT and not p["reference"]:
            twin = make_point(Target(label, False, p["binary"]), p["binary"], p["workers"],
                              p["workload"], p["benchmarks"],
                              **{k: v for k, v in p.items() if k in ("filter", "full")})
            twin["twin_of"] = AA_VARIANT
            out.append(twin)
    return out


def simulated_listing(binary):
    """{workload: [benchmark name, ...]} of simbench's listing (the driver's:
    --benchmark_list_tests), each named as results key it (gbjson.set_name)."""
    out = subprocess.run([binary, "--benchmark_list_tests"], check=True, capture_output=True,
                         text=True).stdout
    return group_by_workload(set_name(line.strip()) for line in out.splitlines()
                             if line.strip())


def simulated_points(targets, listing, workloads, workers, model, all_sets=False,
                     name_filter=None, like=None):
    """A simulated sweep's points (simulate.py): one per (variant, workers, workload), in
    that order, each running the variant's simbench (the target's binary) once per chosen
    argument set of `listing` (simulated_listing's).  No workloads means every listed
    one; unknown ones raise.  The sets are select_sets': `like`'s benchmark names, else
    the filter's, else all with all_sets, else the quick sweep's; a workload with none is
    left out."""
    workloads = workloads or sorted(listing)
    check_unknown(workloads, listing, "workload")
    regex = name_regex(name_filter)
    roles = Roles({t.name: binary_policy(t.binary) for t in targets})
    points = []
    for t in targets:   # the sets may depend on the row (quick_selection)
        chosen = {}
        for workload in sorted(workloads):
            names = select_sets(listing[workload], all_sets, regex, like,
                                part=roles.batch_part(t.name))
            if names:
                chosen[workload] = names
        points += [make_point(t, t.binary, w, workload, names, filter=None, simulated=True,
                              model=model)
                   for w in workers for workload, names in sorted(chosen.items())]
    return points


def calibrate_kernel(root, targets):
    """The kernel rate (iterations per microsecond) to pin for the whole sweep: the
    user's SCHEDBENCH_ITERS_PER_US, else what one short run of the first variant's bench
    reports (counter iters_per_us); None when no bench reports it."""
    if os.environ.get(ITERS_ENV):
        try:
            value = float(os.environ[ITERS_ENV])
        except ValueError:
            raise UsageError(f"{ITERS_ENV}={os.environ[ITERS_ENV]!r} is not a number")
        if not (value > 0 and math.isfinite(value)):
            raise UsageError(f"{ITERS_ENV} must be a positive number")
        return value
    target = next((t for t in targets if not t.reference), None)
    if target is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "calibrate.json")
        cmd = bench_argv(os.path.join(root, target.binary), out, CALIBRATION_FILTER, 1, 0.01)
        try:
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=120, check=False)
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError, subprocess.SubprocessError):
            return None
    rates = [b.get("iters_per_us") for b in doc.get("benchmarks", [])]
    rates = [r for r in rates if isinstance(r, (int, float)) and r > 0]
    return float(rates[0]) if rates else None
