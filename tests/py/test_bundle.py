"""A bundle (`make bundle`, harness/driver/bundle.py): with the BUNDLE marker at its root,
run.py takes the lists from the marker, uses the shipped binaries and never calls make;
its runs carry the build's git record.  (tests/bundle_smoke.sh runs the real archive.)"""
import json
import os

from harness.driver import build, bundle

from conftest import cli


def make_bundle_root(fake_root, code_dirty):
    os.unlink(os.path.join(fake_root, "Makefile"))       # any make call would now fail
    marker = dict(variants=["chaselev", "threadpool"], references=["tbb"], workloads=["fib"],
                  git=dict(rev="1" * 40, dirty=bool(code_dirty), code_dirty=code_dirty),
                  compiler="gcc (fake) 1.0")
    with open(os.path.join(fake_root, "BUNDLE"), "w") as f:
        json.dump(marker, f)
    return fake_root


def test_a_bundle_sweeps_without_make_and_records_its_build(fake_root):
    root = make_bundle_root(fake_root, [])
    b = build.Build(root)
    assert (b.variants, b.references, b.workloads) == (["chaselev", "threadpool"], ["tbb"], ["fib"])
    assert b.make(["all"]) is False
    p = cli("run", "--root", root, "--workers", "1", "--no-plot", "--quiet",
            env=dict(FAKE_BENCH_GIT_REV="1" * 7))
    assert p.returncode == 0, p.stderr
    (run_id,) = os.listdir(os.path.join(root, "results"))
    meta = json.load(open(os.path.join(root, "results", run_id, "meta.json")))
    assert meta["git"]["rev"] == "1" * 40 and meta["git"]["bundle"] is True
    assert meta["publishable"] is True and meta["compiler"] == "gcc (fake) 1.0"
    assert sorted(meta["variants"]) == ["chaselev", "threadpool"]


def test_a_bundle_built_from_a_dirty_tree_gives_unpublishable_runs(fake_root):
    root = make_bundle_root(fake_root, [" M common/sched.c"])
    p = cli("run", "--root", root, "--workers", "1", "--no-plot", "--quiet", "--variants", "chaselev")
    assert p.returncode == 0, p.stderr
    assert "will not be publishable" in p.stderr and "common/sched.c" in p.stderr


def test_a_missing_binary_is_an_error_not_a_build(fake_root):
    root = make_bundle_root(fake_root, [])
    os.unlink(os.path.join(root, "build", "chaselev", "bench"))
    p = cli("run", "--root", root, "--workers", "1", "--no-plot", "--variants", "chaselev")
    assert p.returncode == 2 and "is not built" in p.stderr, p.stderr


def test_the_c_library_is_not_shipped():
    assert bundle.SYSTEM_LIBS.match("libc.so.6") and not bundle.SYSTEM_LIBS.match("libhwloc.so.15")


def test_an_unreadable_marker_is_a_clear_error(tmp_path):
    (tmp_path / "BUNDLE").write_text("{not json")
    p = cli("list", "--root", tmp_path)
    assert p.returncode == 2 and "bundle marker" in p.stderr
