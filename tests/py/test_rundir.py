"""The run directory's lock and its creation whole (harness/driver/rundir.py); the
sweeps that rely on them are in test_sweep.py."""
import errno
import os

import pytest

from harness.driver import rundir
from harness.driver.config import UsageError


def test_run_lock_names_its_holder_and_goes_with_it(tmp_path):
    run_dir = str(tmp_path)
    assert rundir.lock_holder(run_dir) is None
    with rundir.RunLock(run_dir):
        assert rundir.lock_holder(run_dir) == os.getpid()
        with pytest.raises(UsageError, match=f"in use by another run.py \\(pid {os.getpid()}\\)"):
            rundir.RunLock(run_dir)                           # another open file: refused
    assert os.listdir(run_dir) == [] and rundir.lock_holder(run_dir) is None
    # a file opened before its holder removed it is not a lock: it is opened again
    stale = os.open(os.path.join(run_dir, rundir.LOCK_NAME), os.O_RDWR | os.O_CREAT)
    os.unlink(os.path.join(run_dir, rundir.LOCK_NAME))
    real_open = os.open
    opened = []

    def open_stale_first(path, *args):
        opened.append(path)
        return os.dup(stale) if len(opened) == 1 else real_open(path, *args)
    try:
        os.open = open_stale_first
        lock = rundir.RunLock(run_dir)
    finally:
        os.open = real_open
        os.close(stale)
    assert len(opened) == 2 and rundir.lock_holder(run_dir) == os.getpid()
    lock.release()
    assert os.listdir(run_dir) == []


def test_a_taken_directory_is_refused_and_an_empty_one_filled_in_place(tmp_path):
    path = str(tmp_path / "run")
    made, lock = rundir.create_run_dir(path, {"plan.json": {}, "meta.json": {}})
    lock.release()
    assert made == path and sorted(os.listdir(path)) == ["meta.json", "plan.json"]
    with pytest.raises(FileExistsError) as e:
        rundir.create_run_dir(path, {"meta.json": {"other": 1}})
    assert e.value.errno == errno.ENOTEMPTY
    assert os.listdir(tmp_path) == ["run"]                 # no temporary directory left
    empty = tmp_path / "empty"                             # e.g. a mount point
    empty.mkdir()
    made, lock = rundir.create_run_dir(str(empty), {"meta.json": {}})
    assert made == str(empty) and rundir.lock_holder(made) == os.getpid()
    lock.release()
    assert os.listdir(empty) == ["meta.json"]
