"""REPORT.md of fixtures/run_small."""
import csv
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
    # the imbalance scenarios over each pool at 2 workers: chaselev over threadpool on
    # imbalance 2, the Hodges-Lehmann estimate of 11.8 / 10.9 (3 repetitions each side)
    # with its bracket, the header naming it
    assert "## The imbalance scenarios" in text
    assert "| imbalance 2, grain_us 100, submitters 2 | 1.08x [" in text
    assert "| scenario | chaselev [95% family-wise interval] |" in text
    # the pools are explained before any table names them
    assert text.index("`threadpool` the global-queue pool") < text.index("| scenario |")
    # the times at the largest worker count, one row per benchmark; the pools' columns
    # say what each pool is
    assert "| fib/n:20 | 5.3 ms | 7 ms | 8.9 ms |" in text
    header = next(l for l in text.splitlines() if l.startswith("| benchmark |"))
    assert "| static (round-robin) |" in header and "| threadpool (global queue) |" in header
    # 3 repetitions cannot decide anything: the report says so, and claims nothing
    assert "smallest p the exact test can give is 0.1" in text and "Bonferroni" in text
    cells = [l for l in text.split("## Answers")[1].splitlines() if l.startswith("| ")]
    assert not any("**better**" in l or "**worse**" in l for l in cells)
    # the run predates interleaving: the report says its repetitions ran in blocks
    assert "ran in one block per variant" in text
    # every comparison in differences.csv, linked
    assert "[differences.csv](differences.csv)" in text
    with open(os.path.join(run_dir, "differences.csv"), newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0][:8] == ["family", "family_size", "base", "variant", "benchmark", "workers",
                           "metric", "ratio"]
    assert all(len(r) == len(rows[0]) for r in rows)
    assert any(r[0] == "imbalance vs threadpool" and r[2:6] == [
        "threadpool", "chaselev", "imbalance/imbalance:2/grain_us:100/submitters:2", "2"]
        for r in rows)
    # a family name with a comma is quoted, not a column more
    assert any(r[0] == "all vs threadpool, 2 workers" for r in rows)


def test_a_nan_time_is_reported_not_a_crash(nan_run):
    root, run_dir = nan_run
    p = cli("report", "run_small", "--root", root, "--no-plot")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    text = open(os.path.join(run_dir, "REPORT.md")).read()
    assert "error: `fib/n:20/real_time` on chaselev with 2 workers: no valid measurement: " \
        "real_time = nan (1 of 3 repetitions; not plotted)" in text
    assert "| fib/n:20 |  | 7 ms | 8.9 ms |" in text


def test_report_leads_with_the_answer_table_from_the_data(small_run):
    root, run_dir = small_run
    p = cli("report", "run_small", "--root", root, "--no-plot")
    assert p.returncode == 0, p.stderr
    text = open(os.path.join(run_dir, "REPORT.md")).read()
    assert text.index("## Answers") < text.index("## The imbalance scenarios") \
        < text.index("## The run")
    answers = text.split("## Answers")[1].split("##")[0]
    assert "| the article's claim | how the article set it up | measured here [95% " \
        "family-wise interval] |" in answers
    # run_small has neither the article's experiment nor spawn_batch nor elastic: it says
    # so in each row rather than answering
    assert answers.count("not in this run") == 3 and answers.count("not measured") == 3


def test_against_names_the_variant_every_benchmark_is_compared_with(small_run):
    root, run_dir = small_run
    p = cli("report", "run_small", "--root", root, "--no-plot", "--against", "chaselev")
    assert p.returncode == 0, p.stderr
    text = open(os.path.join(run_dir, "REPORT.md")).read()
    assert "## Every benchmark against `chaselev`" in text
    rows = open(os.path.join(run_dir, "differences.csv")).read()
    assert '"all vs chaselev, 2 workers",7,chaselev,static,' in rows
    p = cli("report", "run_small", "--root", root, "--no-plot", "--against", "nope")
    assert p.returncode == 2 and "--against nope: not a variant of run_small" in p.stderr


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


def test_the_simulated_companion_is_named_labelled(small_run):
    root, run_dir = small_run
    p = cli("report", "run_small", "--root", root, "--no-plot")
    assert "SIMULATED" not in open(os.path.join(run_dir, "REPORT.md")).read()
    with_companion(root, run_dir)
    p = cli("report", "run_small", "--root", root, "--no-plot")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    head = open(os.path.join(run_dir, "REPORT.md")).read().split("## Answers")[0]
    assert "SIMULATED companions on `box8` ([sim-box8-1](../sim-box8-1))" in head


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


def test_every_csv_a_run_writes_has_rows_of_its_header_width(fake_root):
    # results.csv, samples.csv and differences.csv of a sweep with its report, read by
    # the csv module: every row as wide as its header (a family "all vs threadpool,
    # 2 workers" is one quoted field)
    p = cli("run", "--root", fake_root, "--workers", "1,2", "--workloads", "fib,imbalance",
            "--repetitions", "3", "--quiet", "--no-build")
    assert p.returncode == 0, p.stderr
    run_dir = next(os.path.join(fake_root, "results", d)
                   for d in os.listdir(os.path.join(fake_root, "results")))
    p = cli("report", run_dir, "--root", fake_root, "--no-plot", "--csv")
    assert p.returncode == 0, p.stderr
    found = sorted(n for n in os.listdir(run_dir) if n.endswith(".csv"))
    assert found == ["differences.csv", "results.csv", "samples.csv"]
    for name in found:
        with open(os.path.join(run_dir, name), newline="") as f:
            rows = list(csv.reader(f))
        assert len(rows) > 1, name
        bad = [r for r in rows if len(r) != len(rows[0])]
        assert not bad, (name, bad[:2])

