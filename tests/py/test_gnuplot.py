"""Rendering with the real gnuplot, when it is installed."""
import json

import pytest

from conftest import cli, has_gnuplot


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


@pytest.mark.skipif(not has_gnuplot(), reason="gnuplot is not installed")
def test_plot_of_a_run_with_a_nan_time(nan_run, tmp_path):
    root, _ = nan_run
    p = cli("plot", "run_small", "--root", root, "--out", tmp_path / "plots",
            "--workloads", "fib")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    p = cli("report", "run_small", "--root", root, "--workloads", "fib")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
