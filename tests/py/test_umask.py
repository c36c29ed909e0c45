"""Result files get the mode a plain open() would give them: 0666 less the umask (they
were 0600, mkstemp's mode, whatever the umask said)."""
import os
import stat


def test_atomic_write_respects_the_umask(run, tmp_path):
    old = os.umask(0o022)
    try:
        path = tmp_path / "r.json"
        run.atomic_write_json(str(path), {"a": 1})
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
        os.umask(0o077)
        run.atomic_write_text(str(path), "x\n")
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    finally:
        os.umask(old)
