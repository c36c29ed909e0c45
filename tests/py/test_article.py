"""The article's experiment read back (harness/driver/article.py): the ideal curve against
hand-computed values, and the answer table and figure built from a small run written
here with known times."""
import json
import os
import re
import sys

import pytest

from harness.driver import answers, article, families
from harness.driver.rundata import load_run

from conftest import policy_words


# ---- the ideal ----------------------------------------------------------------------

@pytest.mark.parametrize("late, workers, count", [
    (0.5, 2, 1), (0.5, 1, 0),          # half of one submitter: none (ties round down)
    (0.25, 2, 0), (0.75, 2, 1),        # 0.5 -> 0, 1.5 -> 1
    (0.25, 16, 4), (0.5, 16, 8), (0.75, 16, 12), (0.5, 64, 32),
    (0.3, 4, 1), (0.4, 4, 2), (1.0, 3, 3), (0.0, 8, 0)])
def test_late_count_is_the_nearest_count_ties_down(late, workers, count):
    assert article.late_count(late, workers) == count


# (1 + d) / max(1, d + f), worked by hand
@pytest.mark.parametrize("d, late, workers, speedup", [
    (0.0, 0.5, 2, 1.0),
    (0.25, 0.5, 2, 1.25),              # 1.25 / max(1, 0.75)
    (0.5, 0.5, 2, 1.5),                # the peak: 1.5 / 1
    (0.75, 0.5, 2, 1.75 / 1.25),       # 1.4
    (1.0, 0.5, 2, 2.0 / 1.5),
    (2.0, 0.5, 2, 3.0 / 2.5),          # 1.2
    (0.75, 0.25, 16, 1.75),            # f = 1/4 peaks at d = 3/4 with 2 - f
    (0.5, 0.25, 16, 1.5),
    (1.0, 0.25, 16, 2.0 / 1.25),
    (0.25, 0.75, 16, 1.25),            # f = 3/4 peaks at d = 1/4
    (0.5, 0.75, 16, 1.5 / 1.25),
    (0.5, 0.5, 1, 1.0),                # nobody late at 1 worker
    (0.5, 0.25, 2, 1.0),               # nobody late: a quarter of two rounds to none
    (0.5, 1.0, 4, 1.0),                # everybody late: the pool loses nothing
])
def test_ideal_speedup_matches_hand_computed_values(d, late, workers, speedup):
    assert article.ideal_speedup(d, late, workers) == pytest.approx(speedup, abs=1e-12)


def test_ideal_times_are_in_units_of_w_over_p():
    assert article.ideal_times(0.5, 0.5, 2) == (1.5, 1.0)
    assert article.ideal_times(1.0, 0.5, 2) == (2.0, 1.5)
    assert article.ideal_times(0.0, 0.5, 2) == (1.0, 1.0)


# ---- a run with known times ----------------------------------------------------------

ARGS = "late_pct:50/grain_us:100/tasks:1000/foreign:0"
# window_s in ms at 2 workers: the pool (affinity) at the ideal (1 + d) x 50 ms; chaselev
# at 1.04x the balancer's ideal; half at 1.2x; the global-queue and round-robin pools
TIMES = {
    "affinity": {0: 50.0, 50: 75.0, 100: 100.0},
    "chaselev": {0: 52.0, 50: 52.0, 100: 78.0},
    "half": {0: 60.0, 50: 60.0, 100: 90.0},
    "elastic": {0: 52.0, 50: 54.6, 100: 78.0},
    "threadpool": {0: 51.0, 50: 51.0, 100: 76.5},
    "static": {0: 51.0, 50: 53.0, 100: 77.0},
}
STOLEN = {"chaselev": 450, "half": 420, "elastic": 400}
# ten repetitions a side, 0.99 .. 1.01 of each time (in a different order per variant)
JITTER = (0.99, 1.0, 1.01, 0.995, 1.005, 0.9925, 1.0025, 1.0075, 0.9975, 1.0)


def gb_entry(name, rep, window_ms, counters):
    e = {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 10,
         "repetition_index": rep, "threads": 1, "iterations": 1, "real_time": window_ms + 0.5,
         "cpu_time": 0.1, "time_unit": "ms", "window_s": window_ms / 1e3}
    e.update(counters)
    return e


def write_run(root, workers=2, simulated=False, model=None):
    run_id = f"sim-{model}-1" if simulated else "art"
    run_dir = os.path.join(root, "results", run_id)
    for v, times in TIMES.items():
        benches = []
        for d, ms in times.items():
            name = f"article/delay_pct:{d}/{ARGS}/real_time"
            for rep, jitter in enumerate(JITTER):
                counters = {"stolen_tasks": STOLEN.get(v, 0) if d else 3, "colocated": 0,
                            "proc_cpu_s": ms * (0.08 if v == "elastic" else 0.1) / 1e3 * 10}
                benches.append(gb_entry(name, rep, ms * jitter, counters))
        path = os.path.join(run_dir, "raw", v, f"workers-{workers}", "article.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump({"context": {"variant": v, "workers": str(workers), "git_rev": "abc",
                                   "policy": policy_words(v)},
                       "benchmarks": benches}, f)
    meta = {"run_id": run_id, "git": {"rev": "abc", "dirty": False}}
    if simulated:
        meta.update(simulated=True, model=model)
    with open(os.path.join(run_dir, "meta.json"), "w") as f:
        json.dump(meta, f)
    with open(os.path.join(run_dir, "plan.json"), "w") as f:
        json.dump({"version": 1, "seed": 1, "full": False, "repetitions": 10, "min_time": 0.05,
                   "timeout": 300, "workers": [workers], "filter": None, "points": []}, f)
    return load_run(run_dir)


@pytest.fixture
def runs(tmp_path):
    data = write_run(str(tmp_path))
    sim = write_run(str(tmp_path), workers=16, simulated=True, model="epyc16")
    return data, sim


def test_the_setting_and_its_delays_are_read_from_the_names(runs):
    data, _ = runs
    found = article.settings(data.index())
    assert list(found) == [article.Setting(50, 100, 1000, False)]
    assert sorted(found[article.Setting(50, 100, 1000, False)]) == [0.0, 0.5, 1.0]


def test_speedups_use_the_experiment_window(runs):
    data, _ = runs
    p = article.panels(data, [], article.first_setting(data))[0]
    assert p.workers == 2 and not p.simulated
    median, low, high = p.speedup("chaselev", 0.5)
    assert median == pytest.approx(75.0 / 52.0)
    # the bracket is the run's one comparison (families.py, family `article`), in the
    # window's metric, inside the extreme ratios of the repetitions
    c = families.of(data).get("article", p.benches[0.5], "affinity", "chaselev", 2)
    assert (median, low, high) == (c.ratio, c.low, c.high) and c.metric == "window_s"
    assert 75.0 * 0.99 / (52.0 * 1.01) <= low < median < high <= 75.0 * 1.01 / (52.0 * 0.99)
    assert p.peak_d() == 0.5 and p.ideal(0.5) == 1.5
    assert p.stolen_share("chaselev", 0.5) == pytest.approx(0.45)
    assert p.stealing == ["chaselev", "elastic", "half"]


def test_the_answer_table_is_built_from_the_run(runs):
    data, sim = runs
    rows = answers.answer_rows(data, [sim])
    assert len(rows) == 3 and all(len(r) == len(answers.ANSWER_HEADERS) for r in rows)
    claim, setup, here, simulated, verdict = rows[0]
    assert "30-50%" in claim and "delaying" in setup
    assert f"`chaselev` {75 / 52:.2f}x" in here and "(ideal 1.50x)" in here
    # the 3 stealing variants at d = 0.5: half 1.25x .. chaselev 1.44x; the worst distance
    # to the ideal over every d: half at d = 0.5, 1 - 1.25 / 1.5
    assert f"{75 / 60:.2f}-{75 / 52:.2f}x" in here
    assert f"within {(1 - (75 / 60) / 1.5) * 100:.0f}%" in here
    assert "45% of the tasks stolen" in here and "at least 40%" in here
    assert "the global-queue pool 1.47x" in here and "the round-robin pool 1.42x" in here
    assert simulated.startswith("SIMULATED epyc16, 16 workers") and "ideal 1.50x" in simulated
    assert verdict.startswith("**Reproduced**") and "global queue" in verdict
    # no spawn_batch in this run: said so, not invented
    assert rows[1][2].startswith("not in this run") and rows[1][4] == "not measured"
    # elastic at d = 0.5: 54.6 / 52 of the wall time (window + 0.5 ms), 0.8x the CPU
    assert "wall time 1.05x [" in rows[2][2] and "]: more" in rows[2][2]
    assert "CPU time 0.84x [" in rows[2][2] and rows[2][2].endswith(": less")
    assert rows[2][4].startswith("**A trade, not a gain**: wall: worse; CPU: better")


def test_a_variant_far_from_the_ideal_is_not_called_reproduced(tmp_path, monkeypatch):
    monkeypatch.setitem(TIMES, "chaselev", {0: 52.0, 50: 70.0, 100: 95.0})
    data = write_run(str(tmp_path))
    verdict = answers.answer_rows(data, [])[0][4]
    assert verdict.startswith("**Not reproduced here**")


def test_a_run_without_the_experiment_says_so(small_run):
    _, run_dir = small_run
    rows = answers.answer_rows(load_run(run_dir), [])
    assert rows[0][2].startswith("not in this run") and rows[0][4] == "not measured"


def test_the_figure_has_a_panel_per_run_and_the_ideal(runs):
    data, sim = runs
    figs = article.figures(data, [sim])
    assert [f.name for f in figs] == ["article"]
    fig = figs[0]
    assert sum(l.startswith("set origin") for l in fig.body) == 3  # two panels, the key
    assert "SIMULATED: epyc16, 16 workers" in "\n".join(fig.body)
    assert "ideal: a perfect balancer" in "\n".join(fig.body)
    # every series of a panel is one plotted element; at most eight per panel
    for line in fig.body:
        if line.startswith("plot "):
            assert line.count("datafile index") <= 8 or "NaN" in line
    # nothing clipped: the y range holds every median and envelope value
    lo, hi = [float(x) for x in next(l for l in fig.body if l.startswith("set yrange"))
              .split("[")[1].rstrip("]").split(":")]
    for v, times in TIMES.items():
        for d, ms in times.items():
            assert lo <= TIMES["affinity"][d] / ms <= hi


def test_the_batching_row_reads_a_run_of_the_earlier_names(tmp_path):
    # spawn_batch names without `late` (one submitter) still read; times in ms per
    # (batch, from, spin) at 1 and 2 workers: only the spinning pthread beside 2 workers
    # on 2 cores gains from batches (tests/py/test_batching.py has the rest of the row)
    times = {("0", "0", "1"): {1: 40.0, 2: 36.0}, ("32", "0", "1"): {1: 40.0, 2: 18.0},
             ("0", "0", "0"): {1: 28.0, 2: 19.0}, ("32", "0", "0"): {1: 28.0, 2: 19.0},
             ("0", "1", "0"): {1: 20.0, 2: 12.0}, ("32", "1", "0"): {1: 20.0, 2: 12.0}}
    run_dir = os.path.join(str(tmp_path), "results", "batch")
    for w in (1, 2):
        benches = []
        for (batch, frm, spin), ms in times.items():
            name = f"spawn_batch/n:20000/batch:{batch}/from:{frm}/grain_ns:500/spin:{spin}/real_time"
            for rep, jitter in enumerate(JITTER):
                benches.append(gb_entry(name, rep, ms[w] * jitter - 0.5, {}))
        path = os.path.join(run_dir, "raw", "chaselev", f"workers-{w}", "spawn_batch.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump({"context": {"variant": "chaselev", "workers": str(w)},
                       "benchmarks": benches}, f)
    with open(os.path.join(run_dir, "meta.json"), "w") as f:
        json.dump({"run_id": "batch", "cpus_usable": 2}, f)
    row = answers.batching_row(load_run(run_dir))
    assert re.search(r"bthread \(`chaselev`\): Submission, the best k per grain: 0\.5 us "
                     r"k = 32 2\.0\dx \[\S+\] \(one submitter, from a spinning "
                     r"pthread\)", row[2]), row[2]
    assert row[4].startswith("**Holds in 1 of 3 comparisons**: bthread, submission, 0.5 us")


def test_publish_writes_the_readme_answer_block_from_the_run(tmp_path):
    from harness.driver import publish
    root = str(tmp_path)
    data = write_run(root)
    readme = os.path.join(root, "README.md")
    with open(readme, "w") as f:
        f.write(f"# x\n\nbefore\n\n{publish.ANSWERS_BEGIN}\nstale text\n"
                f"{publish.ANSWERS_END}\n\nafter\n")
    assert publish.update_readme(root, data.run_dir)
    text = open(readme).read()
    assert text.startswith("# x\n\nbefore\n\n" + publish.ANSWERS_BEGIN + "\n")
    assert text.endswith(publish.ANSWERS_END + "\n\nafter\n") and "stale text" not in text
    block = text.split(publish.ANSWERS_BEGIN)[1].split(publish.ANSWERS_END)[0]
    assert "| the article's claim | how the article set it up |" in block
    assert f"`chaselev` {75 / 52:.2f}x" in block
    assert "[results/art/REPORT.md](results/art/REPORT.md)" in block
    # rewriting is idempotent, and a README without the markers is left alone
    assert publish.update_readme(root, data.run_dir) and open(readme).read() == text
    with open(readme, "w") as f:
        f.write("# no block\n")
    assert not publish.update_readme(root, data.run_dir)
    assert open(readme).read() == "# no block\n"


def write_bands(run_dir, ends, window=True):
    """bands.json for the fixture's SIMULATED run: {(variant, d): {end: window_ms}}; the
    wall time 0.5 ms longer, as in gb_entry (the window too unless window=False)."""
    points, windows = {}, {}
    for (v, d), times in ends.items():
        key = f"{v}/16/article/delay_pct:{d}/{ARGS}/real_time"
        points[key] = {e: (ms + 0.5) / 1e3 for e, ms in times.items()}
        windows[key] = {e: ms / 1e3 for e, ms in times.items()}
    with open(os.path.join(run_dir, "bands.json"), "w") as f:
        json.dump({"ranges": {"wake": [0.5, 2.0, "a source"]}, "ends": ["wake x0.5", "wake x2"],
                   "points": points,
                   "metrics": {"window_s": windows} if window else {}, "failed": []}, f)


def test_a_comparison_that_flips_inside_its_band_is_undecided(runs):
    data, sim = runs
    # at d = 0.5 the pool takes 75 ms (window + 0.5 of wall time); chaselev's speedup holds
    # at both ends, half's falls below 1x when wake-ups cost twice as much
    write_bands(sim.run_dir, {
        ("affinity", 50): {"wake x0.5": 74.0, "wake x2": 80.0},
        ("chaselev", 50): {"wake x0.5": 51.0, "wake x2": 56.0},
        ("half", 50): {"wake x0.5": 58.0, "wake x2": 82.0},
        ("elastic", 50): {"wake x0.5": 54.0, "wake x2": 57.0}})
    p = [q for q in article.panels(data, [sim], article.first_setting(data)) if q.simulated][0]
    assert p.comparison("chaselev", 0.5).verdict == "better"
    assert p.comparison("half", 0.5).verdict == "undecided"
    # the band: the ends' ratios and the point's own, in the speedup's metric (the
    # window: 75 / 52, inside), never the wall time's (80.5 / 56.5 ... 74.5 / 51.5)
    lo, hi = p.band("chaselev", 0.5)
    assert lo == pytest.approx(80 / 56) and hi == pytest.approx(74 / 51)
    assert lo <= p.speedup("chaselev", 0.5)[0] <= hi
    cell = answers.answer_rows(data, [sim])[0][3]
    assert "over the whole of that range: 2 of 3 stealing variants" in cell
    assert f"({80 / 56:.2f}-{74 / 51:.2f}: sensitivity: 1 cost group at the ends of its " \
        "range, one at a time (wake x0.5/x2)" in cell
    assert "validation error of `article` on this machine's model, not measured" in cell
    # with a validation record beside the run, the range widens by its article error
    vdir = os.path.join(os.path.dirname(sim.run_dir), "validation")
    os.makedirs(vdir)
    with open(os.path.join(vdir, "sim-here-1.json"), "w") as f:
        json.dump({"format": "schedbench-validation/1", "model": "here", "sim": "sim-here-1",
                   "workloads": {"article": 0.05}}, f)
    p = [q for q in article.panels(data, [sim], article.first_setting(data)) if q.simulated][0]
    c = p.comparison("chaselev", 0.5)
    assert c.low == pytest.approx(80 / 56 * 0.95) and c.high == pytest.approx(74 / 51 * 1.05)
    # a band in another metric than the speedup's is no band (bands.json from before
    # the window was kept), nor is none: a SIMULATED point alone decides nothing
    os.unlink(os.path.join(vdir, "sim-here-1.json"))
    write_bands(sim.run_dir, {("affinity", 50): {"wake x0.5": 74.0},
                              ("chaselev", 50): {"wake x0.5": 51.0}}, window=False)
    p = [q for q in article.panels(data, [sim], article.first_setting(data)) if q.simulated][0]
    assert p.band("chaselev", 0.5) is None
    assert p.comparison("chaselev", 0.5).verdict == "undecided"
    os.unlink(os.path.join(sim.run_dir, "bands.json"))
    p = [q for q in article.panels(data, [sim], article.first_setting(data)) if q.simulated][0]
    assert p.comparison("chaselev", 0.5).verdict == "undecided"


@pytest.mark.skipif(not __import__("shutil").which("gnuplot"), reason="gnuplot not installed")
def test_every_figure_of_an_article_run_renders(tmp_path, monkeypatch, capsys):
    # the article figure with a SIMULATED panel on a log axis (a pool 4x slower there:
    # its key panel must not inherit the log scale), and the heat maps, whose tic labels
    # carry the benchmarks' "delay 50%" (a tic label is a gnuplot format: % doubled)
    from harness.driver import gnuplot
    data = write_run(str(tmp_path))
    slow = {v: dict(t) for v, t in TIMES.items()}
    slow["static"] = {d: ms * 6 for d, ms in slow["static"].items()}
    monkeypatch.setattr(sys.modules[__name__], "TIMES", slow)
    sim = write_run(str(tmp_path), workers=16, simulated=True, model="epyc16")
    out = tmp_path / "plots"
    manifest = gnuplot.write_plots(data, str(out), gnuplot.Gnuplot(), sims=[sim])
    assert "gnuplot failed" not in capsys.readouterr().err
    names = {e["name"]: e["files"] for e in manifest["plots"]}
    assert "article" in names and any(n.startswith("heatmap_vs_") for n in names)
    assert all(f"{n}.png" in files for n, files in names.items()), names
    assert "set logscale y" in (out / "article.gp").read_text()
