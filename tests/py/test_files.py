"""Atomic writes: whole files or none, no temporary left behind, the umask respected."""
import json
import os

import pytest

from harness.driver import config, files


def test_atomic_write_replaces_whole_files(tmp_path):
    path = tmp_path / "f.json"
    files.atomic_write_json(str(path), {"a": 1})
    assert json.loads(path.read_text()) == {"a": 1}
    files.atomic_write_text(str(path), "new\n")
    assert path.read_text() == "new\n"
    assert os.listdir(tmp_path) == ["f.json"]


def test_atomic_write_failure_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "f.txt"
    path.write_text("old\n")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", broken_replace)
    with pytest.raises(OSError):
        files.atomic_write_text(str(path), "new\n")
    assert path.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["f.txt"]          # no temporary left behind


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_write_respects_the_umask(tmp_path, umask, mode):
    """A new file gets 0666 less the umask, as open() would give it (not mkstemp's 0600)."""
    old = os.umask(umask)
    try:
        files.atomic_write_text(str(tmp_path / "new.txt"), "x\n")
        files.atomic_write_json(str(tmp_path / "new.json"), {})
    finally:
        os.umask(old)
    for name in ("new.txt", "new.json"):
        assert os.stat(tmp_path / name).st_mode & 0o777 == mode, name


def test_out_path_problems(tmp_path):
    regular = tmp_path / "file"
    regular.write_text("x")
    assert files.out_path_problem(str(regular), directory=True) == "is not a directory"
    assert files.out_path_problem(str(tmp_path), directory=False) == "is a directory"
    assert "is not a directory" in files.out_path_problem(str(regular / "sub" / "run"), True)
    assert files.out_path_problem(str(tmp_path / "a" / "b"), directory=True) is None
    assert files.out_path_problem(str(tmp_path / "a.md"), directory=False) is None
    assert not (tmp_path / "a").exists()                 # nothing was created
    with pytest.raises(config.UsageError, match="--out .*file is not a directory"):
        files.check_out_path(str(regular), "--out", directory=True)
