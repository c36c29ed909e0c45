"""harness/driver/targets.py reads the bench JSON through harness.driver.gbjson: one invocation of
a (fake) bench binary gives each benchmark's wall time in ns and its counters."""
import os
import stat
import shutil

import pytest

from harness.driver import targets

from conftest import FIXTURES


@pytest.fixture
def bench(tmp_path):
    path = tmp_path / "build" / "chaselev" / "bench"
    path.parent.mkdir(parents=True)
    shutil.copy(os.path.join(FIXTURES, "fake_bench.py"), path)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return str(path)


def test_bench_gives_wall_time_and_counters(bench):
    got = targets.bench(bench, 2, "^fib/n:20/", min_time="0.01")
    (name,) = got
    ns, counters = got[name]
    assert name == "fib/n:20/real_time"
    assert ns == pytest.approx(0.5 / 2 ** 0.9 * 1e6, rel=0.05)   # fake_bench's model, in ns
    assert counters["steals"] == 40.0 and "real_time" not in counters


def test_a_wrong_answer_is_an_error(bench, monkeypatch):
    monkeypatch.setenv("FAKE_BENCH_ERROR", "fib")
    monkeypatch.setenv("FAKE_BENCH_ERROR_REP", "0")
    with pytest.raises(RuntimeError, match="wrong answer"):
        targets.bench(bench, 1, "^fib/n:20/")
