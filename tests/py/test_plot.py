"""Plot scripts and data from fixtures/run_small, and real rendering when gnuplot is there."""
import json
import os

import pytest

from conftest import FIXTURES, cli, has_gnuplot

TERMINALS = [("svg", "set terminal svg size {w},{h}"), ("png", "set terminal png size {w},{h}")]


@pytest.fixture
def plots(run):
    data = run.load_run(os.path.join(FIXTURES, "run_small"))
    return {p.name: p for p in run.PlotBuilder(data).build()}


def rows(block):
    return [line.split() for line in block.splitlines() if line and not line.startswith("#")]


def blocks(plot):
    return plot.data.split("\n\n\n")


def test_every_kind_of_plot_is_made(plots):
    expected = {
        "time_fib_n-20", "time_granularity_tasks-1000",
        "time_imbalance_imbalance-2_grain_us-100_submitters-2",
        "speedup_vs_static_w1", "speedup_vs_static_w2",
        "speedup_vs_threadpool_w1", "speedup_vs_threadpool_w2",
        "imbalance_vs_static_w1_imbalance_grain_us-100_submitters-2",
        "imbalance_vs_threadpool_w2_imbalance_grain_us-100_submitters-2",
        "metg_granularity_tasks-1000", "why_fib_n-20"}
    assert expected <= set(plots)
    assert {p.kind for p in plots.values()} == {"time", "speedup", "imbalance", "metg", "why"}


def test_time_plot_data(plots):
    p = plots["time_fib_n-20"]
    assert 'time per iteration (ms)' in "\n".join(p.body)
    chaselev = rows(blocks(p)[0])
    # workers, median, min, max in ms: 10.2 [10.0-10.4] and 5.3 [5.1-5.6]
    assert [[float(v) for v in r] for r in chaselev] == [[1, 10.2, 10.0, 10.4], [2, 5.3, 5.1, 5.6]]
    assert 'title "chaselev"' in p.body[-1] and 'title "threadpool"' in p.body[-1]


def test_errors_are_never_plotted(plots):
    # static with 2 workers got a wrong answer on imbalance:2: it has no point there
    p = plots["time_imbalance_imbalance-2_grain_us-100_submitters-2"]
    static = rows(blocks(p)[1])
    assert [r[0] for r in static] == ["1"]
    p = plots["imbalance_vs_threadpool_w2_imbalance_grain_us-100_submitters-2"]
    assert "# static" in p.data
    static_block = next(b for b in blocks(p) if b.startswith("# static"))
    assert [r[0] for r in rows(static_block)] == ["0"]
    # and no speedup over static exists at 2 workers for imbalance:2: no sweep to draw
    assert "imbalance_vs_static_w2_imbalance_grain_us-100_submitters-2" not in plots
    assert "imbalance_vs_static_w1_imbalance_grain_us-100_submitters-2" in plots


def test_speedup_values(plots):
    p = plots["speedup_vs_static_w2"]
    table = {r[0].strip('"'): r[1:] for r in rows(p.data)}
    chaselev = [float(v) for v in table["fib/n:20"][:3]]
    # 7.0 / 5.3 with the spread 6.9 / 5.6 .. 7.2 / 5.1
    assert chaselev == pytest.approx([7.0 / 5.3, 6.9 / 5.6, 7.2 / 5.1], rel=1e-5)


def test_imbalance_plot_marks_the_claim_band(plots):
    p = plots["imbalance_vs_threadpool_w2_imbalance_grain_us-100_submitters-2"]
    body = "\n".join(p.body)
    assert "first 1.3 to graph 1, first 1.5" in body and "30-50% claim" in body
    chaselev = rows(blocks(p)[0])
    # imbalance 0: 11.1 / 10.4; imbalance 2: 11.8 / 10.9
    assert [float(r[0]) for r in chaselev] == [0, 2]
    assert float(chaselev[1][1]) == pytest.approx(11.8 / 10.9, rel=1e-5)


def test_metg_and_why_plots(plots):
    table = {r[0].strip('"'): r[1:] for r in rows(plots["metg_granularity_tasks-1000"].data)}
    assert [float(v) for v in table["threadpool"]] == [2.6, 2.5, 2.7, 6.1, 6.0, 6.3]
    why = plots["why_fib_n-20"]
    steals, parks, cpu = blocks(why)
    steals = {r[0].strip('"'): r[1:] for r in rows(steals)}
    assert [float(v) for v in steals["chaselev"]] == [0, 0, 0, 41, 38, 45]
    cpu = {r[0].strip('"'): r[1:] for r in rows(cpu)}
    assert float(cpu["static"][3]) == pytest.approx(1.8)
    assert "set multiplot layout 1,3" in "\n".join(why.body)


def test_script_renders_each_format(plots):
    script = plots["time_fib_n-20"].script(TERMINALS)
    assert 'datafile = "time_fib_n-20.dat"' in script
    assert "set terminal svg size 900,520" in script and 'set output "time_fib_n-20.svg"' in script
    assert "set terminal png size 900,520" in script and 'set output "time_fib_n-20.png"' in script
    assert script.count("plot datafile index 0") == 2


def test_gnuplot_strings_are_escaped(run):
    assert run.gp_str('a"b\\c') == '"a\\"b\\\\c"'


@pytest.mark.skipif(not has_gnuplot(), reason="gnuplot is not installed")
def test_gnuplot_renders_svg_and_png(small_run, tmp_path):
    root, _ = small_run
    out = tmp_path / "plots"
    p = cli("plot", "run_small", "--root", root, "--out", out, "--workloads", "fib")
    assert p.returncode == 0, p.stderr
    manifest = json.loads((out / "plots.json").read_text())
    assert manifest["plots"] and not [e for e in manifest["plots"] if e["error"]]
    for entry in manifest["plots"]:
        assert sorted(f.rsplit(".", 1)[1] for f in entry["files"]) == ["png", "svg"]
        assert (out / entry["script"]).exists() and (out / entry["data"]).exists()
    png = (out / "time_fib_n-20.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    svg = (out / "time_fib_n-20.svg").read_text()
    assert "<svg" in svg and "chaselev" in svg
