"""Shared helpers for the tests of run.py and its package (harness/driver): the fixtures,
a fake build tree whose bench binaries are tests/py/fixtures/fake_bench.py, and a CLI
runner.  The tests import the package as harness.driver (run them from the repository
root: `/usr/bin/python3 -m pytest -q tests/py`, or `make test-py`)."""
import json
import math
import os
import shutil
import stat
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(HERE, "fixtures")
RUN_PY = os.path.join(ROOT, "run.py")



def _fake_bench_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("fake_bench", os.path.join(FIXTURES, "fake_bench.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_FAKE_BENCH = _fake_bench_module()


def policy_words(variant):
    """What `bench --policy` prints for a variant of this name (fixtures/fake_bench.py's
    table, as the real variants do: the pools never steal), for the contexts of runs a
    test writes by hand: the report reads the pools from them (roles.py)."""
    return _FAKE_BENCH.POLICIES.get(variant, _FAKE_BENCH.STEALING)


FAKE_MAKEFILE = """\
list-variants:
\t@printf '%s\\n' chaselev static threadpool
list-workloads:
\t@printf '%s\\n' fib granularity imbalance
"""
FAKE_REFERENCES = """\
list-references:
\t@echo tbb
"""


def make_fake_root(path, references=True):
    """A source tree with a Makefile answering the list targets and fake bench binaries
    under build/<variant>/bench and build/ref/tbb/bench."""
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "Makefile"), "w") as f:
        f.write(FAKE_MAKEFILE + (FAKE_REFERENCES if references else ""))
    binaries = ["chaselev", "static", "threadpool"] + (["ref/tbb"] if references else [])
    for sub in binaries:
        dest = os.path.join(path, "build", sub, "bench")
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy(os.path.join(FIXTURES, "fake_bench.py"), dest)
        os.chmod(dest, os.stat(dest).st_mode | stat.S_IXUSR)
    return str(path)


@pytest.fixture
def fake_root(tmp_path):
    return make_fake_root(tmp_path / "tree")


@pytest.fixture
def small_run(tmp_path):
    """A copy of fixtures/run_small as results/run_small of a tree with no build."""
    root = tmp_path / "tree"
    dest = root / "results" / "run_small"
    shutil.copytree(os.path.join(FIXTURES, "run_small"), dest)
    return str(root), str(dest)


def cli(*args, env=None, cwd=None, timeout=120):
    """Run ./run.py with args; returns the CompletedProcess (text)."""
    full_env = dict(os.environ)
    full_env.pop("MAKEFLAGS", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, RUN_PY] + [str(a) for a in args],
                          capture_output=True, text=True, env=full_env, cwd=cwd,
                          timeout=timeout)


def has_gnuplot():
    return shutil.which("gnuplot") is not None


@pytest.fixture(autouse=True)
def pinned_kernel_rate(monkeypatch):
    """Sweeps pin the kernel rate by calibrating once; a given rate skips that extra
    bench call, so tests that count bench invocations see only the points."""
    monkeypatch.setenv("SCHEDBENCH_ITERS_PER_US", "100")


@pytest.fixture
def nan_run(small_run):
    """small_run where chaselev's fib/n:20 at 2 workers has "real_time": NaN in its second
    repetition, as Google Benchmark can write it."""
    root, run_dir = small_run
    path = os.path.join(run_dir, "raw", "chaselev", "workers-2.json")
    with open(path) as f:
        doc = json.load(f)
    for entry in doc["benchmarks"]:
        if entry["run_name"] == "fib/n:20/real_time" and entry.get("repetition_index") == 1 \
                and entry["run_type"] == "iteration":
            entry["real_time"] = math.nan
    with open(path, "w") as f:
        json.dump(doc, f)          # writes the bare NaN that Google Benchmark writes
    return root, run_dir
