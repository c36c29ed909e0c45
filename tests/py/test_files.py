"""Atomic writes: whole files or none, no temporary left behind, the umask respected."""
import json
import os

import pytest

from harness.driver import files


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
