"""The figures' rules (plots/README.md), checked on every figure drawn from the
fixture run, and from a richer run made of it (ten stealing variants, speedups that span
more than 4x), and on the simulator's figures."""
import dataclasses
import math
import os
import re

import pytest

from harness.driver import article, claimfigs, plots, rundata, simfigs

from conftest import FIXTURES

TERMINALS = [("svg", "set terminal svg size {w},{h}"), ("png", "set terminal png size {w},{h}")]
RAW_NAME = re.compile(r"/[A-Za-z_]\w*:[^\s/]+")      # 'dag/n:100': a benchmark's raw name
MORE = ["adaptive", "elastic", "fair", "half", "numa", "spin"]


def richer_run():
    """run_small with six more stealing variants (chaselev's results, slower and
    faster), so that panels hold many variants and speedups span more than 4x."""
    data = rundata.load_run(os.path.join(FIXTURES, "run_small"))
    extra = []
    for i, v in enumerate(MORE):
        for r in data.results:
            if r.variant == "chaselev":
                f = 0.15 * (i + 1) if r.workers == 2 else 1 + 0.1 * i
                extra.append(dataclasses.replace(r, variant=v, entries=[
                    dataclasses.replace(e, real_s=e.real_s * f) for e in r.entries]))
    data.results = sorted(data.results + extra, key=rundata.result_sort_key)
    return data


def all_figures(data, sim=None):
    return (plots.PlotBuilder(data).build() + claimfigs.ClaimPlots(data, sim).build()
            + article.figures(data, [sim] if sim else []))


@pytest.fixture(scope="module")
def figures():
    small = rundata.load_run(os.path.join(FIXTURES, "run_small"))
    rich = richer_run()
    sim = richer_run()
    sim.meta = dict(sim.meta, simulated=True, model="box8")
    med = {}
    for r in rich.results:                 # the simulator's figures from the same numbers
        if r.usable:
            med[(r.variant, r.workers, r.benchmark)] = dict(
                time_s=r.median(), work_s=r.median() * 0.9, span_s=r.median() * 0.01)
    figs = all_figures(small) + all_figures(rich, sim) + simfigs.simulated_speedup_plots(
        med, "box8", rich.roles())
    assert {"time", "imbalance", "why", "claim", "heatmap", "sim_speedup"} <= \
        {p.kind for p in figs}
    return figs


def plot_items(command):
    """The items of one gnuplot `plot` command."""
    return [i.strip() for i in re.split(r",\s*\\\n", command[len("plot "):])]


def panels(p):
    """[(yrange line or None, logscale y?, [items])]: every `plot` command of a figure
    with the y settings in force for it."""
    out, yrange, log = [], None, False
    for line in p.body:
        if line.startswith("set yrange"):
            yrange = line
        elif line == "set logscale y":
            log = True
        elif line in ("unset logscale y", "reset"):
            log = False
        elif line.startswith("plot "):
            out.append((yrange, log, plot_items(line)))
    return out


def drawn(items):
    """The items that are a series of their own (not an overlay drawn without a title)."""
    return [i for i in items if "notitle" not in i]


def test_no_panel_has_more_than_eight_series(figures):
    for p in figures:
        for _, _, items in panels(p):
            assert len(drawn(items)) <= plots.MAX_SERIES, (p.name, items)


def test_many_variants_are_one_line_and_a_shaded_range():
    figs = {p.name: p for p in all_figures(richer_run())}
    for name in ("time_fib_n-20", "claim_2_imbalance_imbalance-2_grain_us-100_submitters-2"):
        script = "\n".join(figs[name].body)
        assert 'title "chaselev"' in script and "filledcurves" in script, name
        for v in MORE:
            assert f'title "{v}"' not in script, (name, v)


def test_every_series_of_a_panel_has_its_own_colour_and_marker(figures):
    for p in figures:
        for _, _, items in panels(p):
            items = drawn(items)
            colours = [re.search(r'(?:lc|fc) rgb "([^"]+)"', i) for i in items]
            colours = [c.group(1) for c in colours if c]
            assert len(colours) == len(set(colours)), (p.name, items)
            marked = [re.search(r"\bpt (\d+)", i) for i in items
                      if "points" in i or "errorlines" in i]
            marked = [m.group(1) for m in marked if m]
            assert len(marked) == len(set(marked)), (p.name, items)


def test_a_panel_that_spans_more_than_4x_has_a_log_axis(figures):
    spans = 0
    for p in figures:
        blocks = p.data.split("\n\n\n")
        for yrange, log, items in panels(p):
            values = []
            for i in items:
                m = re.search(r"datafile index (\d+) using [^ ]*?:(\d+)(?::(\d+):(\d+))?", i)
                if not m or "matrix" in i:
                    continue
                cols = [int(c) for c in m.groups()[1:] if c]
                for row in plots.rows_of(blocks[int(m.group(1))]):
                    values += [float(row[c - 1]) for c in cols
                               if c - 1 < len(row) and not row[c - 1].startswith('"')]
            pos = [v for v in values if math.isfinite(v) and v > 0]
            if pos and max(pos) / min(pos) > plots.LOG_SPAN and len(pos) == len(
                    [v for v in values if math.isfinite(v)]):
                spans += 1
                assert log, (p.name, yrange)
    assert spans                # the richer run has such panels


def test_nothing_is_clipped_without_a_mark(figures):
    # every fixed y range holds every value its panel draws (or the panel marks those
    # beyond it: a 'clipped' label)
    for p in figures:
        blocks = p.data.split("\n\n\n")
        for yrange, _, items in panels(p):
            m = yrange and re.match(r"set yrange \[([-\d.e+]+):([-\d.e+]+)\]", yrange)
            if not m:
                continue
            lo, hi = float(m.group(1)), float(m.group(2))
            if lo == 0 and hi == 1:
                continue                    # the key panel: nothing drawn
            for i in items:
                idx = re.search(r"datafile index (\d+) using [^ ]*?:([^ ]+)", i)
                if not idx:
                    continue
                cols = [int(c) for c in re.findall(r"(?<![$\d])(\d+)", idx.group(2))]
                cols = [c for c in cols if c != 5 or "errorlines" not in i] or [2]
                for row in plots.rows_of(blocks[int(idx.group(1))]):
                    for c in cols:
                        if c - 1 < len(row) and not row[c - 1].startswith('"'):
                            v = float(row[c - 1])
                            assert not math.isfinite(v) or lo <= v <= hi or \
                                "clipped" in "\n".join(p.body), (p.name, yrange, row)


def test_titles_are_words_not_benchmark_names(figures):
    for p in figures:
        assert not RAW_NAME.search(p.title), (p.name, p.title)
        for line in p.body:
            if line.startswith(("set title", "set multiplot")):
                assert not RAW_NAME.search(line), (p.name, line)


def test_bench_words():
    assert plots.bench_words("dag/n:100/grain_us:10/real_time") == "dag, n 100, grain 10 us"
    assert plots.bench_words("article/late_pct:50/delay_pct:100") == \
        "article, late 50%, delay 100%"
    assert plots.bench_words("fib/30") == "fib, 30"


def test_the_simulator_draws_one_legend_entry_per_line(figures):
    sims = [p for p in figures if p.kind == "sim_speedup"]
    assert sims
    for p in sims:
        assert "SIMULATED on model box8" in p.title
        (_, _, items), = panels(p)
        titles = [re.search(r'title "([^"]*)"', i).group(1) for i in drawn(items)]
        assert len(titles) == len(set(titles)) == len(drawn(items))
        assert any("Brent bound" in t for t in titles)


@pytest.mark.skipif(not __import__("shutil").which("gnuplot"), reason="gnuplot not installed")
def test_an_svg_beside_every_png(tmp_path):
    from harness.driver import gnuplot
    g = gnuplot.Gnuplot()
    assert [ext for ext, _ in g.terminals] == ["svg", "png"]
    manifest = gnuplot.write_plots(rundata.load_run(os.path.join(FIXTURES, "run_small")),
                                   str(tmp_path), g)
    pngs = {f[:-4] for e in manifest["plots"] for f in e["files"] if f.endswith(".png")}
    svgs = {f[:-4] for e in manifest["plots"] for f in e["files"] if f.endswith(".svg")}
    assert pngs and pngs == svgs
    for name in pngs:
        assert os.path.getsize(tmp_path / f"{name}.svg") > 0


def test_styles_never_repeat_a_colour_or_a_marker_in_a_panel():
    order = [f"v{i}" for i in range(40)]
    keys = ["v0", "v9", "v12", "v36", "v18", "v24", "v27", "v3"]   # stable pairs collide
    style = plots.styles(keys, order)
    assert len({s[0] for s in style.values()}) == len({s[1] for s in style.values()}) == 8
    assert style["v0"] == (plots.PALETTE[0],) + plots.MARKERS[0]
