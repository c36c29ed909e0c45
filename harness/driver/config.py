"""The driver's settings and the values of its command line: exit codes, the sweep
presets, the claim under test, the environment variables the bench binaries read, the
one-line error (UsageError) and the parsers of name and worker-count lists."""

import os
import re
import sys


# The repository root: where run.py, the Makefile, build/, results/ and plots/ are.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROG = "run.py"
EXIT_FAILED = 1   # the sweep ran, but some points failed or gave wrong answers
EXIT_USAGE = 2    # bad input or a missing tool
# interrupted: 128 + the signal (130 SIGINT, 143 SIGTERM, 129 SIGHUP; proc.Interrupted)

# The baselines of the 30-50% claim ("work stealing beats a thread pool by 30-50%") are
# the variants that never steal, read from their policy, never from their names
# (roles.py: the global-queue pool, the round-robin split, the per-thread-queue pool);
# speedups are drawn over each of them when the run has it.
CLAIM_BAND = (1.3, 1.5)
# The article's experiment (workloads/article.c, harness/driver/article.py): its pool is
# the one whose threads keep queues of their own; one stealing variant is drawn plainly
# and the others as an envelope.
ARTICLE_WORKLOAD = "article"
# The article, cited by its title (shared/seeds/003): "Work-stealing schedulers: the key
# technique for multithreaded performance".
ARTICLE_TITLE = ("“任务窃取调度器：提升多线程性能的关键技术” "
                 "(Work-stealing schedulers: the key technique for multithreaded performance)")
REPRESENTATIVE = "chaselev"

# Sweep presets: (repetitions, --benchmark_min_time seconds, per-invocation timeout
# seconds).  Ten repetitions a side is the fewest with which a comparison can be decided
# in a family of a few hundred (compare.py: the exact two-sided U test reaches 1.1e-5
# with 10 against 10, 0.0079 with 5); the repetitions run in rounds, each a bench
# invocation of its own (sweep.py), so min_time is short: most workloads' iterations are
# longer than it anyway, and the rounds give the precision.
QUICK = dict(repetitions=10, min_time=0.02, timeout=300)
FULL = dict(repetitions=10, min_time=0.5, timeout=1800)
# The claim's points run at least this many repetitions (unless --repetitions is given)
# at the run's largest worker count, where the article's answer is read.
CLAIM_REPETITIONS = {"article": 20}
# The A/A row: this variant runs a second time in every interleaved round of the sweep
# under its own label (<variant> + AA_SUFFIX); families.py compares the two, which
# should never differ (0 decided comparisons expected).
AA_VARIANT = "chaselev"
AA_SUFFIX = "-aa"
# Section 4.2's batching experiment (workloads/spawn_batch.c; families.py's `batching`,
# answers.py's row).  Batch submission (a spawn_batch set with `batch` k over the same
# set with batch 0) is asked of BATCH_SUBMIT_ROWS; batch stealing of the rows whose policy
# is one of those rows' in every word but steal_batch (roles.batch_steal_rows: the row and
# its k), over that row (k = 1), on the sets with batch 0 from a worker.
BATCH_WORKLOAD = "spawn_batch"
BATCH_SUBMIT_ROWS = (REPRESENTATIVE, "ws")
# The article's own scheduler (harness/ref/ws.c): its stealing row over its no-steal row
# is section 5 in the article's design (families.py's `article, its design`).
ARTICLE_DESIGN_POOL, ARTICLE_DESIGN_STEALING = "ws-nosteal", "ws"

# The scenario sweeps whose question needs two workers or more (the imbalance factor, the
# article's delay, the batching experiment's stealing and late waves): at one worker
# there is nothing to balance or steal, and the quick sweep runs only their first set
# there.
SCENARIO_WORKLOADS = ("imbalance", "article", BATCH_WORKLOAD)
# Environment variable set for the bench binary (listing and runs) under --full: the
# harness then also registers each workload's extra argument sets (workload_t.full).
FULL_ENV = "SCHEDBENCH_FULL"
# The busy-loop kernel of imbalance, dag and granularity turns microseconds into
# iterations with a rate each process calibrates for itself; a sweep measures it once
# and pins it for every point, so every variant runs exactly the same work.
ITERS_ENV = "SCHEDBENCH_ITERS_PER_US"
CALIBRATION_FILTER = "^imbalance/imbalance:0/"
# Where a bench keeps each argument set's sequential answer once computed
# (harness/bench/driver.c): a sweep runs every repetition as a process of its own, and
# would otherwise compute the same answers once a repetition.
ANSWER_ENV = "SCHEDBENCH_ANSWER_DIR"
# The workloads that use that rate: those whose source includes workloads/wl_kernel.h.
# Kept here because the bench can say it only after running them; tests/py/test_docs.py
# checks the list against the sources.
KERNEL_WORKLOADS = ("article", "imbalance", "dag", "granularity", "spawn_batch")
# The quick sweep runs each workload's first listed argument set, plus the sets that
# differ from it only in this parameter: the imbalance factor of the 30-50% claim; and
# every set of the claim's workloads (WHOLE_WORKLOADS: their scenarios are the point).
CLAIM_PARAM = "imbalance"
CLAIM_WORKLOAD = "imbalance"
# The workloads whose every listed set the quick sweep runs (the claims' scenarios; the
# batching experiment's on its rows, plan.batch_selection), and those the simulated
# companions simulate.
WHOLE_WORKLOADS = (CLAIM_WORKLOAD, ARTICLE_WORKLOAD)
# The parameter each scenario workload sweeps: the quick sweep takes its every value
# (for the article, the full listing's d = 0.25, 0.75 and 2 beside the default 0, 0.5, 1:
# its figure draws every swept d), the other parameters at the first set's.
SWEPT_PARAM = {CLAIM_WORKLOAD: CLAIM_PARAM, ARTICLE_WORKLOAD: "delay_pct"}
COMPANION_WORKLOADS = (CLAIM_WORKLOAD, ARTICLE_WORKLOAD)


# The code a run measures, as git pathspecs: what is compiled into the benches and the
# reference rows (and, for a simulated run, the simulator's C).  Not the Python (driver,
# plots, report), the documentation or the machine models (a simulated run records the
# model it used).  A run is publishable only when this code had no uncommitted change
# when it started (meta.json git.code_dirty); tests/py/test_published.py checks that the
# runs the documents present were measured at the code now in it; harness/bench/rules.mk
# stamps a bench "-dirty" by the same paths.
def measured_code(simulated=False):
    """The pathspecs of the code a real (or simulated) run measures."""
    paths = ["asm", "common", "variants", "workloads", "harness", "Makefile",
             ":(exclude)*.py", ":(exclude)*.md"]
    if not simulated:  # the engine and the machine models make only simulated results
        paths += [":(exclude)harness/sim", ":(exclude)harness/machines"]
    return paths

# `./run.py publish`: raw files at least this large are kept gzip-compressed.
GZIP_MIN_BYTES = 4 * 1024
# A published tree built by `make bundle` holds this file at its root: run.py then uses
# the shipped binaries and never calls make (harness/driver/build.py).
BUNDLE_MARKER = "BUNDLE"


class UsageError(Exception):
    """Bad input or a missing tool: reported as one line on stderr, exit code 2."""


def warn(message):
    """One warning line on stderr."""
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def parse_name_list(text, option):
    """'a,b, c' -> ['a', 'b', 'c'] (order kept, duplicates dropped)."""
    names = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if part not in names:
            names.append(part)
    if not names:
        raise UsageError(f"{option} needs at least one name")
    return names


def parse_workers(text):
    """'1,2,4' or '1-4' or '1-4,8' -> sorted list of distinct positive ints."""
    counts = set()
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise UsageError(f"--workers: '{part}' is not a count or a range like 1-4")
        lo = int(m.group(1))
        hi = int(m.group(2) or lo)
        if lo < 1 or hi < lo:
            raise UsageError(f"--workers: '{part}' is not a range of counts >= 1")
        counts.update(range(lo, hi + 1))
    return sorted(counts)


def default_workers(ncpu):
    """1..ncpu on small machines; powers of two plus ncpu beyond 8 CPUs."""
    if ncpu <= 8:
        return list(range(1, ncpu + 1))
    counts = {ncpu}
    p = 1
    while p < ncpu:
        counts.add(p)
        p *= 2
    return sorted(counts)


def check_unknown(names, known, what):
    """UsageError naming the first of `names` that is not in `known`."""
    for name in names:
        if name not in known:
            listing = ", ".join(str(k) for k in sorted(known)) or "none"
            raise UsageError(f"unknown {what} '{name}' (known: {listing})")
