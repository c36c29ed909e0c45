"""Every run README.md presents (each results/<id> it, harness/sim/README.md or
results/validation/README.md names) was measured at the measured code now in the tree
(config.measured_code: the C the benches compile, not Python or prose; for a simulated
run also the engine and the machine models): none of it differs between its recorded git revision and HEAD, and it was
measured from a clean tree
(meta.json "publishable").  A run that predates
that record is skipped with the reason, until it is republished (issue 14)."""
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


def readme_runs():
    text = ""
    for doc in PRESENTING:
        with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
            text += f.read()
    ids = []
    # every mention of results/<id>: a link "(results/<id>/...)", a name in backticks
    # (README presents the simulated runs by name), plain text; <id> without a meta.json
    # (validation/, an example like sim-bigbox-...) is no run
    for run_id in re.findall(r"(?<![\w/.-])(?:\./)?results/([A-Za-z0-9][\w.-]*)", text):
        if run_id not in ids and os.path.exists(os.path.join(ROOT, "results", run_id, "meta.json")):
            ids.append(run_id)
    return ids


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
