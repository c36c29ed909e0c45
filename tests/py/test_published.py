"""Every run README.md presents (each results/<id> it, harness/sim/README.md or
results/validation/README.md names) was measured at the measured code now in the tree
(config.measured_code: the C the benches compile, not Python or prose; for a simulated
run also the engine and the machine models): none of it differs between its recorded git revision and HEAD, and it was
measured from a clean tree
(meta.json "publishable").  A run that predates
that record is skipped with the reason, until it is republished."""
import glob
import json
import os
import re
import subprocess

import pytest

from harness.driver.machine import code_changes as machine_code_changes
from harness.driver.machine import publishable
from harness.driver.publish import absolute_paths, measuring_roots
from harness.driver.rundata import load_run

from conftest import ROOT


# the documents that present runs: README.md and the two that read the simulated ones
PRESENTING = ("README.md", "harness/sim/README.md", "results/validation/README.md")


def presented(marker, docs=PRESENTING, pattern=r"[A-Za-z0-9][\w.-]*"):
    """The ids of results/<id> the documents mention, in order, that hold `marker`: a link
    "(results/<id>/...)", a name in backticks (README presents the simulated runs by
    name), plain text; an <id> without it (validation/, an example like
    sim-bigbox-...) is no run."""
    text = ""
    for doc in docs:
        with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
            text += f.read()
    ids = []
    for run_id in re.findall(r"(?<![\w/.-])(?:\./)?results/(" + pattern + ")", text):
        if run_id not in ids and os.path.exists(os.path.join(ROOT, "results", run_id, marker)):
            ids.append(run_id)
    return ids


def readme_runs():
    return presented("meta.json")


def tree(rev, path):
    p = subprocess.run(["git", "-C", ROOT, "rev-parse", f"{rev}:{path}"], capture_output=True,
                       text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def test_readme_links_a_run():
    assert readme_runs(), "README.md links no results/<run-id>/ with a meta.json"


def test_every_figure_readme_embeds_is_in_the_tree():
    # `./run.py publish` keeps only the figures that README.md (or the run's report) embeds
    # at the time it runs: README linking a new run's figure after that run was
    # published leaves the link broken (it happened to a SIMULATED plot)
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text)
    assert images, "README.md embeds no figure"
    missing = [p for p in images
               if not p.startswith(("http://", "https://"))
               and not os.path.isfile(os.path.join(ROOT, p))]
    assert not missing, f"README.md embeds missing files: {missing}"


@pytest.mark.parametrize("run_id", readme_runs())
def test_the_presented_run_measured_the_current_code(run_id):
    if tree("HEAD", "common") is None:
        pytest.skip("not a git checkout: cannot compare the code")
    with open(os.path.join(ROOT, "results", run_id, "meta.json"), encoding="utf-8") as f:
        meta = json.load(f)
    git = meta.get("git") or {}
    if "code_dirty" not in git:
        pytest.skip(f"results/{run_id} predates the record of the code's state (meta.json "
                    "git.code_dirty): NOT CHECKED; republish it (./run.py run, then "
                    "./run.py publish) and this test checks it")
    run_dir = os.path.join(ROOT, "results", run_id)
    left = absolute_paths([run_dir, os.path.join(ROOT, "plots", run_id)],
                          measuring_roots(run_dir, [ROOT]))
    assert not left, f"{left[0][0]} names the absolute path {left[0][1]}: ./run.py publish {run_id}"
    ok, why = publishable(git, meta.get("bench_context") or {}, load_run(run_dir).revisions)
    assert ok and meta.get("publishable"), f"results/{run_id}: {why or 'not marked publishable'}"
    rev = git["rev"]
    if tree(rev, "common") is None:
        pytest.skip(f"revision {rev} of results/{run_id} is not in this clone (shallow?)")
    changed = code_changes(rev, simulated=bool(meta.get("simulated")))
    assert not changed, (f"results/{run_id} was measured at {rev[:12]}; the code has changed "
                         f"since ({', '.join(changed[:5])}): republish")


def readme_maps():
    """Every policy map README.md presents (results/map-<id>/ with a map.json)."""
    return presented("map.json", ("README.md",), r"map-[\w.-]+")


STALE_MAP = "made with earlier code"  # README's words beside a map older than the code


@pytest.mark.parametrize("map_id", readme_maps())
def test_a_presented_map_says_whether_it_is_of_the_current_code(map_id):
    # a map costs hours to remeasure, so it may stay behind the code for a while, but
    # never silently: its runs were all made at one revision, and README says "made with
    # earlier code" beside it exactly when the measured code (or the simulator) has
    # changed since (revisions themselves belong in git, not in README)
    if tree("HEAD", "common") is None:
        pytest.skip("not a git checkout: cannot compare the code")
    revs = set()
    for meta_path in glob.glob(os.path.join(ROOT, "results", map_id, "*", "meta.json")):
        with open(meta_path, encoding="utf-8") as f:
            revs.add(((json.load(f).get("git") or {}).get("rev")))
    assert len(revs) == 1 and None not in revs, f"results/{map_id}: runs of {sorted(map(str, revs))}"
    rev = revs.pop()
    if tree(rev, "common") is None:
        pytest.skip(f"revision {rev} of results/{map_id} is not in this clone (shallow?)")
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        says_stale = STALE_MAP in " ".join(f.read().split())
    stale = bool(code_changes(rev, simulated=True))
    assert says_stale == stale, (
        f"results/{map_id} was made at {rev[:12]}, " +
        ("before the code changed: README must say" if stale else "at the current code: README "
         "must no longer say") + f" {STALE_MAP!r} beside it")


def code_changes(rev, head="HEAD", simulated=False):
    changed = machine_code_changes(rev, head, simulated)
    assert changed is not None, f"git diff {rev} {head} failed"
    return changed


def last_change_to(path):
    """The last commit that changed `path`, for a test that needs its parent too (skips
    outside git or in a clone without that history)."""
    if tree("HEAD", "common") is None:
        pytest.skip("not a git checkout")
    last = subprocess.run(["git", "-C", ROOT, "log", "--format=%H", "-n", "1", "--", path],
                          capture_output=True, text=True, check=True).stdout.strip()
    if not last or tree(last + "~1", "common") is None:
        pytest.skip("not enough history in this clone")
    return last


def test_code_changes_sees_a_change_to_the_core():
    # the last commit that changed sched.c: from its parent on, sched.c has changed
    last = last_change_to("common/sched.c")
    assert "common/sched.c" in code_changes(last + "~1")
    assert code_changes("HEAD") == []


def test_code_changes_ignores_a_recalibrated_machine_model():
    last = last_change_to("harness/machines")
    touched = subprocess.run(["git", "-C", ROOT, "diff", "--name-only", last + "~1", last],
                             capture_output=True, text=True, check=True).stdout.split()
    assert any(f.startswith("harness/machines/") for f in touched)
    assert not any(f.startswith("harness/machines/") for f in code_changes(last + "~1", last))
    # a simulated run's numbers come from the models: for it the change counts
    assert any(f.startswith("harness/machines/")
               for f in code_changes(last + "~1", last, simulated=True))


def test_code_changes_sees_the_simulator_only_for_simulated_runs():
    last = last_change_to("harness/sim/sim_engine.c")
    assert "harness/sim/sim_engine.c" in code_changes(last + "~1", last, simulated=True)
    assert "harness/sim/sim_engine.c" not in code_changes(last + "~1", last)


def test_code_changes_ignores_python_and_prose():
    # the report and the plots are Python: changing them changes nothing a run measured
    last = last_change_to("harness/driver/report.py")
    touched = subprocess.run(["git", "-C", ROOT, "diff", "--name-only", last + "~1", last],
                             capture_output=True, text=True, check=True).stdout.split()
    assert "harness/driver/report.py" in touched
    changed = code_changes(last + "~1", last, simulated=True)
    assert not any(f.endswith((".py", ".md")) for f in changed)


# --- the numbers of a run published by the interleaving driver (plan.json version 2):
# checked on every measured run README presents; an older run is skipped with the reason
# until the integrator republishes

def measured_runs():
    return [r for r in readme_runs()
            if not (json.load(open(os.path.join(ROOT, "results", r, "meta.json")))
                    .get("simulated"))]


def interleaved(run_id):
    plan = json.load(open(os.path.join(ROOT, "results", run_id, "plan.json")))
    if plan.get("version", 1) < 2:
        pytest.skip(f"results/{run_id} predates interleaved rounds (plan.json version "
                    f"{plan.get('version', 1)}): NOT CHECKED until it is republished")
    return plan


@pytest.mark.parametrize("run_id", measured_runs())
def test_the_published_run_interleaved_ten_repetitions_or_more(run_id):
    plan = interleaved(run_id)
    assert isinstance(plan.get("interleave"), dict) and plan["interleave"].get("order")
    data = load_run(os.path.join(ROOT, "results", run_id))
    few = [(r.variant, r.workers, r.benchmark, len(r.valid)) for r in data.results
           if len(r.valid) < 10]
    assert not few, f"points with fewer than 10 repetitions: {few[:5]}"
    assert data.twins(), "no A/A twin in the sweep"


@pytest.mark.parametrize("run_id", measured_runs())
def test_the_published_a_a_row_decides_nothing(run_id):
    from harness.driver import families
    interleaved(run_id)
    aa = families.of(load_run(os.path.join(ROOT, "results", run_id))).family(families.AA)
    assert aa and not [c for c in aa if c.decided], \
        [f"{c.benchmark} {c.workers} {c.text()}" for c in aa if c.decided]


@pytest.mark.parametrize("run_id", measured_runs())
def test_the_published_csvs_and_figures_are_whole(run_id):
    import csv
    interleaved(run_id)
    for path in glob.glob(os.path.join(ROOT, "results", run_id, "*.csv")):
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        assert all(len(r) == len(rows[0]) for r in rows), path
    pngs = glob.glob(os.path.join(ROOT, "plots", run_id, "*.png"))
    assert pngs and all(os.path.exists(p[:-4] + ".svg") for p in pngs), \
        [p for p in pngs if not os.path.exists(p[:-4] + ".svg")]


def test_readme_answers_carry_brackets_that_agree_with_the_report():
    from harness.driver.publish import ANSWERS_BEGIN, ANSWERS_END
    runs = measured_runs()
    if not runs:
        pytest.skip("README presents no measured run")
    interleaved(runs[0])
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    block = text.split(ANSWERS_BEGIN)[1].split(ANSWERS_END)[0]
    assert "[95% family-wise interval]" in block
    rows = [line.split(" | ") for line in block.splitlines() if line.startswith("| ")][2:]
    bare = [m for row in rows if len(row) > 2
            for m in re.findall(r"`[\w-]+` \d+\.\d\dx(?! \[)", row[2])]
    assert not bare, f"measured ratios without a bracket in README's answers: {bare[:5]}"
    claim = re.search(r"`chaselev` (\d+\.\d\dx \[\d+\.\d\d-\d+\.\d\d\])", block)
    assert claim
    report = open(os.path.join(ROOT, "results", runs[0], "REPORT.md"), encoding="utf-8").read()
    assert claim.group(1) in report
