"""REPORT.md of fixtures/run_small."""
import json
import os
import shutil

from conftest import cli


def test_report(small_run):
    root, run_dir = small_run
    p = cli("report", "run_small", "--root", root, "--no-plot")
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    text = open(os.path.join(run_dir, "REPORT.md")).read()
    assert text.startswith("# schedbench run run_small")
    assert "| CPU | AMD EPYC 7B13 (2 usable of 2 online) |" in text
    # problems: the wrong answer and both unusable files, by name
    assert "wrong answer / error: `imbalance/imbalance:2/grain_us:100/submitters:2/real_time`" \
        " on static with 2 workers" in text
    assert "workers-2-killed.json" in text and "workers-1-crashed.json" in text
    # the claim table: chaselev over threadpool at 2 workers, imbalance 2: 11.8 / 10.9
    assert "## The 30-50% claim (imbalance workload)" in text
    assert "| imbalance/imbalance:2/grain_us:100/submitters:2 | 2 | 1.08x |" in text
    # per-workload table with median [min-max]
    assert "| fib/n:20 | chaselev | 10.2 ms [10 ms-10.4 ms] | 5.3 ms [5.1 ms-5.6 ms] |" in text
    assert "| imbalance/imbalance:2/grain_us:100/submitters:2 | static | 20.4 ms " \
        "[20.2 ms-20.6 ms] | ERROR |" in text
    # 3 repetitions cannot reach p < 0.05: the report says so instead of claiming anything
    assert "too few repetitions to reach p < 0.05" in text
    assert "0 of " in text and "differences are significant" in text


def test_a_nan_time_is_reported_not_a_crash(nan_run):
    root, run_dir = nan_run
    p = cli("report", "run_small", "--root", root, "--no-plot")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    text = open(os.path.join(run_dir, "REPORT.md")).read()
    assert "error: `fib/n:20/real_time` on chaselev with 2 workers: no valid measurement: " \
        "real_time = nan (1 of 3 repetitions; not plotted)" in text
    assert "| fib/n:20 | chaselev | 10.2 ms [10 ms-10.4 ms] | ERROR |" in text


def test_report_leads_with_answers_from_the_data(small_run):
    root, run_dir = small_run
    p = cli("report", "run_small", "--root", root, "--no-plot")
    assert p.returncode == 0, p.stderr
    text = open(os.path.join(run_dir, "REPORT.md")).read()
    head = text.split("## The run")[0]
    assert head.index("## Answers") < head.index("## Overview") if "## Overview" in head else True
    answers = head.split("## Answers")[1]
    # one imbalanced scenario (imbalance:2); at 2 workers chaselev is 11.8/10.9 = 1.08x over
    # threadpool, not significant with 3 repetitions
    assert "Over `threadpool` at 2 workers, 0 of 1 variant x scenario cells reach 1.3x" in answers
    assert "the best is chaselev with 1.08x on imbalance=2, grain_us 100, submitters 2 " \
        "(not significant)" in answers
    assert "holds on none of the 1 imbalanced scenarios" in answers
    assert "This run went up to 2 workers (2 usable CPUs)" in answers
    # the counters of the best variant and of the baseline, from the raw files
    assert "Why, on imbalance=2" in answers and "chaselev:" in answers and "threadpool:" in answers


def with_companion(root, run_dir, name="sim-box8-1"):
    """A copy of run_small beside it, marked simulated, named as run_small's companion."""
    sim_dir = os.path.join(root, "results", name)
    shutil.copytree(run_dir, sim_dir)
    meta_path = os.path.join(sim_dir, "meta.json")
    meta = json.load(open(meta_path))
    meta.update(simulated=True, model="box8", model_description="an 8-core box")
    json.dump(meta, open(meta_path, "w"))
    meta_path = os.path.join(run_dir, "meta.json")
    meta = json.load(open(meta_path))
    meta["simulated_companion"] = "../" + name
    json.dump(meta, open(meta_path, "w"))
    return sim_dir


def test_the_simulated_companion_answers_the_claim_labelled(small_run):
    root, run_dir = small_run
    p = cli("report", "run_small", "--root", root, "--no-plot")
    assert "SIMULATED" not in open(os.path.join(run_dir, "REPORT.md")).read()
    with_companion(root, run_dir)
    p = cli("report", "run_small", "--root", root, "--no-plot")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    answers = open(os.path.join(run_dir, "REPORT.md")).read().split("## The run")[0]
    # the same data as the measured run: chaselev 1.08x over threadpool at 2 workers,
    # as a ratio of medians with no significance claimed
    assert "**SIMULATED** on the machine model `box8` (an 8-core box) at 2 workers: over " \
        "`threadpool`, 0 of 1 variant x scenario cells are 1.3x or faster (0 in the 1.3-1.5x " \
        "band; best chaselev 1.08x on imbalance=2, grain_us 100, submitters 2)" in answers
    assert "[`sim-box8-1`](../sim-box8-1)" in answers
    assert "the SIMULATED answer below" in answers


def test_a_missing_companion_is_a_warning_not_a_failure(small_run):
    root, run_dir = small_run
    shutil.rmtree(with_companion(root, run_dir))
    p = cli("report", "run_small", "--root", root, "--no-plot")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "its simulated companion ../sim-box8-1 is missing" in p.stderr
    assert "SIMULATED" not in open(os.path.join(run_dir, "REPORT.md")).read()


def test_publish_takes_the_companion_along(small_run):
    root, run_dir = small_run
    sim_dir = with_companion(root, run_dir)
    os.makedirs(os.path.join(sim_dir, "logs"))
    p = cli("publish", "--root", root, "--prune-only", "run_small")
    assert p.returncode == 0, p.stderr
    assert "sim-box8-1: pruned" in p.stdout and "run_small: pruned" in p.stdout
    assert not os.path.exists(os.path.join(sim_dir, "logs"))
