"""Plot scripts and data from fixtures/run_small, and real rendering when gnuplot is there."""
import math
import os

import pytest

from harness.driver import claimfigs, families, plots, rundata

from conftest import FIXTURES

TERMINALS = [("svg", "set terminal svg size {w},{h}"), ("png", "set terminal png size {w},{h}")]


@pytest.fixture
def figures():
    data = rundata.load_run(os.path.join(FIXTURES, "run_small"))
    return {p.name: p for p in plots.PlotBuilder(data).build()}


def rows(block):
    return [line.split() for line in block.splitlines() if line and not line.startswith("#")]


def blocks(plot):
    return plot.data.split("\n\n\n")


def test_every_kind_of_plot_is_made(figures):
    expected = {
        "time_fib_n-20", "time_granularity_tasks-1000",
        "time_imbalance_imbalance-2_grain_us-100_submitters-2",
        "imbalance_vs_static_w1_imbalance_grain_us-100_submitters-2",
        "imbalance_vs_threadpool_w2_imbalance_grain_us-100_submitters-2",
        "metg_granularity_tasks-1000", "why_fib_n-20"}
    assert expected <= set(figures)
    assert {p.kind for p in figures.values()} == {"time", "imbalance", "metg", "why"}


def test_time_plot_data(figures):
    p = figures["time_fib_n-20"]
    assert 'time per iteration (ms)' in "\n".join(p.body)
    chaselev = rows(blocks(p)[0])
    # workers, median, min, max in ms: 10.2 [10.0-10.4] and 5.3 [5.1-5.6]
    assert [[float(v) for v in r] for r in chaselev] == [[1, 10.2, 10.0, 10.4], [2, 5.3, 5.1, 5.6]]
    assert 'title "chaselev"' in p.body[-1] and 'title "threadpool"' in p.body[-1]


def test_errors_are_never_plotted(figures):
    # static with 2 workers got a wrong answer on imbalance:2: it has no point there
    p = figures["time_imbalance_imbalance-2_grain_us-100_submitters-2"]
    static = rows(blocks(p)[1])
    assert [r[0] for r in static] == ["1"]
    p = figures["imbalance_vs_threadpool_w2_imbalance_grain_us-100_submitters-2"]
    assert "# static" in p.data
    static_block = next(b for b in blocks(p) if b.startswith("# static"))
    assert [r[0] for r in rows(static_block)] == ["0"]
    # and no speedup over static exists at 2 workers for imbalance:2: no sweep to draw
    assert "imbalance_vs_static_w2_imbalance_grain_us-100_submitters-2" not in figures
    assert "imbalance_vs_static_w1_imbalance_grain_us-100_submitters-2" in figures


def test_speedup_values():
    p = claim_figures()["heatmap_vs_static"]
    # rows: fib, granularity, imbalance 1, imbalance 2; columns: chaselev, threadpool
    chaselev_fib = float(p.data.splitlines()[0].split()[0])
    # 7.0 / 5.3 at 2 workers, as log2
    assert 2 ** chaselev_fib == pytest.approx(7.0 / 5.3, rel=1e-5)
    assert '"1.32"' in "\n".join(p.body)


def test_imbalance_plot_marks_the_claim_band(figures):
    p = figures["imbalance_vs_threadpool_w2_imbalance_grain_us-100_submitters-2"]
    body = "\n".join(p.body)
    assert "first 1.3 to graph 1, first 1.5" in body and "30-50% claim" in body
    chaselev = rows(blocks(p)[0])
    # imbalance 0 and 2, each the run's comparison (its estimate and bracket); about
    # 11.8 / 10.9 at imbalance 2
    assert [float(r[0]) for r in chaselev] == [0, 2]
    data = rundata.load_run(os.path.join(FIXTURES, "run_small"))
    bench = next(b for b in data.index() if "imbalance:2" in b)
    c = families.of(data).get("imbalance vs threadpool", bench, "threadpool", "chaselev", 2)
    assert [float(x) for x in chaselev[1][1:4]] == pytest.approx([c.ratio, c.low, c.high], rel=1e-5)
    assert c.ratio == pytest.approx(11.8 / 10.9, rel=0.02)


def test_metg_and_why_plots(figures):
    table = {r[0].strip('"'): r[1:] for r in rows(figures["metg_granularity_tasks-1000"].data)}
    assert [float(v) for v in table["threadpool"]] == [2.6, 2.5, 2.7, 6.1, 6.0, 6.3]
    why = figures["why_fib_n-20"]
    steals, parks, cpu = blocks(why)
    steals = {r[0].strip('"'): r[1:] for r in rows(steals)}
    assert [float(v) for v in steals["chaselev"]] == [0, 0, 0, 41, 38, 45]
    cpu = {r[0].strip('"'): r[1:] for r in rows(cpu)}
    assert float(cpu["static"][3]) == pytest.approx(1.8)
    assert "set multiplot layout 1,3" in "\n".join(why.body)


def test_script_renders_each_format(figures):
    script = figures["time_fib_n-20"].script(TERMINALS)
    assert 'datafile = "time_fib_n-20.dat"' in script
    assert "set terminal svg size 900,520" in script and 'set output "time_fib_n-20.svg"' in script
    assert "set terminal png size 900,520" in script and 'set output "time_fib_n-20.png"' in script
    assert script.count("plot datafile index 0") == 2


def test_file_names_are_safe():
    assert plots.safe_name("fib/n:30") == "fib_n-30"


def test_gnuplot_strings_are_escaped():
    assert plots.gp_str('a"b\\c') == '"a\\"b\\\\c"'


def test_a_nan_time_is_not_plotted(nan_run):
    _, run_dir = nan_run
    figures = {p.name: p for p in plots.PlotBuilder(rundata.load_run(run_dir)).build()}
    chaselev = rows(blocks(figures["time_fib_n-20"])[0])
    assert [r[0] for r in chaselev] == ["1"]          # the 2-worker point is gone


def claim_figures(sim=None):
    data = rundata.load_run(os.path.join(FIXTURES, "run_small"))
    return {p.name: p for p in claimfigs.ClaimPlots(data, sim).build()}


def test_claim_figures_one_per_scenario_and_a_heat_map_per_baseline():
    figs = claim_figures()
    names = sorted(figs)
    assert names == ["claim_1_imbalance_imbalance-0_grain_us-100_submitters-2",
                     "claim_2_imbalance_imbalance-2_grain_us-100_submitters-2",
                     "claim_summary", "heatmap_vs_static", "heatmap_vs_threadpool"], names
    claim = figs["claim_2_imbalance_imbalance-2_grain_us-100_submitters-2"]
    script = claim.script(TERMINALS)
    assert "over threadpool" in script and "over static" in script
    # the summary: every scenario side by side at 2 workers, one point each, no mean
    summary = figs["claim_summary"]
    assert "no mean across scenarios" in summary.title and "geometric" not in summary.title
    assert "\\n1: imbalance 0\\n2: imbalance 2" in "\n".join(summary.body)
    assert "set xtics (1, 2)" in summary.body
    assert "1.3 to graph 1, first 1.5" in script              # the claim's band
    assert "no Brent bound: this run records no work_s" in script
    # chaselev over threadpool: measured, solid, with a significance column
    first = rows(claim.data.split("\n\n")[0])
    assert claim.data.startswith("# chaselev over threadpool")
    assert all(len(r) == 6 for r in first) and {r[0] for r in first} <= {"1", "2"}


def test_a_simulated_run_is_dashed_and_named_with_its_model():
    data = rundata.load_run(os.path.join(FIXTURES, "run_small"))
    sim = rundata.load_run(os.path.join(FIXTURES, "run_small"))
    sim.meta = dict(sim.meta, simulated=True, model="box8")
    for r in sim.results:                  # a simulated run reports the work
        for e in r.entries:
            e.counters["work_s"] = 0.001
    figs = {p.name: p for p in claimfigs.ClaimPlots(data, sim).build()}
    script = figs["claim_2_imbalance_imbalance-2_grain_us-100_submitters-2"].script(TERMINALS)
    # measured and simulated in panels of their own, the simulated one titled so
    fig = figs["claim_2_imbalance_imbalance-2_grain_us-100_submitters-2"]
    titles = [line for line in fig.body if line.startswith("set title")]
    assert 'set title "over threadpool"' in titles
    assert 'set title "SIMULATED (box8): over threadpool"' in titles
    panels = [line for line in fig.body if line.startswith("plot datafile")]
    sim_blocks = {i for i, b in enumerate(blocks(fig)) if "simulated (box8)" in b.splitlines()[0]}
    assert sim_blocks
    for cmd in panels:                  # no panel draws both
        used = {int(i) for i in __import__("re").findall(r"index (\d+)", cmd)}
        assert used <= sim_blocks or not used & sim_blocks, cmd
    assert "dt 2" in script and "Brent bound" in script


def test_the_bound_is_brents_max_of_work_over_p_and_span():
    data = rundata.load_run(os.path.join(FIXTURES, "run_small"))
    sim = rundata.load_run(os.path.join(FIXTURES, "run_small"))
    sim.meta = dict(sim.meta, simulated=True, model="box8")
    for r in sim.results:                  # a span far above work / P: the span decides
        for e in r.entries:
            e.counters["work_s"] = 0.001
            e.counters["span_s"] = 0.5
    figs = {p.name: p for p in claimfigs.ClaimPlots(data, sim).build()}
    fig = figs["claim_2_imbalance_imbalance-2_grain_us-100_submitters-2"]
    bounds = [b for b in blocks(fig) if b.startswith("# work bound")]
    assert bounds
    bench = next(b for b in sim.index() if "imbalance:2" in b)
    cells = sim.index()[bench]
    for block in bounds:               # each panel's: its baseline's time / span
        for w, bound in rows(block):
            expect = [cells[k].median() / 0.5 for k in cells
                      if k[1] == int(w) and k[0] in ("static", "threadpool")]
            assert any(abs(float(bound) - e) <= 1e-4 * e for e in expect), (w, bound, expect)


def test_heat_map_cells_are_log2_speedups_with_row_labels_and_missing_cells_marked():
    fig = claim_figures()["heatmap_vs_threadpool"]
    script = fig.script(TERMINALS)
    # rows labelled by their parameters, no separate key
    assert '"imbalance: imbalance 2, grain 100 us, submitters 2" 3' in script
    assert "with image" in script and "matrix" in script
    assert "Which variant is faster than threadpool" in fig.title
    # static's imbalance:2 at 2 workers is an error: its cell is marked, not white
    assert '"n/a" at 1,3' in script and "fs pattern 4" in script
    # the colours: log2, centred at 1, clipped at 1/2 and 2 (marked on the scale)
    assert "set cbrange [-1.0:1.0]" in script and '0.0000 "#f7f7f7"' in script
    assert '"<= 1/2" -1.0000' in script and '">= 2" 1.0000' in script
    assert '"0.9" -0.1520' in script and '"1.1" 0.1375' in script
    rows = [line.split() for line in fig.data.splitlines()]
    assert float(rows[3][0]) == pytest.approx(math.log2(11.8 / 10.9), abs=0.01)
    assert rows[3][1] == "NaN"


def test_the_heat_map_clips_far_speedups_and_keeps_their_numbers(monkeypatch):
    # fib's 216x must not wash 0.9-1.1 out: the colour stops at 2x, the cell says 216,
    # in white on the dark end
    from harness.driver.compare import Comparison
    data = rundata.load_run(os.path.join(FIXTURES, "run_small"))
    cp = claimfigs.ClaimPlots(data)
    real = cp.comparisons.get

    def get(family, bench, base, variant, workers):
        c = real(family, bench, base, variant, workers)
        if c and bench.startswith("fib/") and variant == "chaselev":
            c = Comparison(c.family, c.x, c.y, labels=c.labels, ratio=216.0, low=200.0,
                           high=230.0, achieved=1.0)
        return c
    monkeypatch.setattr(cp.comparisons, "get", get)
    heat = {p.name: p for p in cp.heatmaps()}["heatmap_vs_threadpool"]
    assert heat.data.splitlines()[0].split()[0] == "1"       # clipped at log2(2)
    assert 'set label 1 "216*" at 0,0 center font ",9" tc rgb "#ffffff" front' in heat.body
    palette = claimfigs.heat_palette(1.0)
    assert palette.startswith('set palette defined (-1.0000 "#053061"')
    assert claimfigs.tick_label(256.0) == "256" and claimfigs.tick_label(0.25) == "1/4"
    assert claimfigs.tick_label(2.0, clipped=True) == ">= 2"


def test_claim_figures_render(tmp_path):
    from harness.driver import gnuplot
    data = rundata.load_run(os.path.join(FIXTURES, "run_small"))
    manifest = gnuplot.write_plots(data, str(tmp_path), gnuplot.Gnuplot())
    claim = [e for e in manifest["plots"] if e["kind"] in ("claim", "heatmap")]
    assert claim and all(e["files"] and not e["error"] for e in claim), claim
