"""A run directory as a unit: created whole or not at all (create_run_dir), locked while a
sweep writes into it (RunLock), so that two sweeps never share one, and named by a RUN
argument (resolve_run: an id, 'latest', a path; split_run_spec: RUN:VARIANT).

Creation: the first files (plan.json, meta.json) are written into a temporary directory
beside the run's (a dot-name ending in .tmp), which is then renamed to the run's name.
A failure on the way (a full disk) removes it: the run directory is absent, never a
meta.json without its plan.json, which --out refuses as taken and --resume as having no
usable plan.

The lock: an advisory flock(2) on the file LOCK_NAME inside the directory, which holds the
pid of its holder.  A second sweep into the directory, a --resume of it or a publish
fails at once with that pid; the kernel drops the lock with its process whatever ends it,
so a file left by a killed sweep is just locked again.  The holder unlinks the file while
it still has the lock: whoever opened it meanwhile finds, once it gets the lock, that the
name points elsewhere or nowhere, and opens it again."""

import contextlib
import errno
import fcntl
import os
import shutil

from .config import UsageError
from .files import atomic_write_json, atomic_write_text, read_json, temp_name

LOCK_NAME = ".lock"


def _holder_pid(fd):
    """The pid written in an open lock file (None before its holder has written it)."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def in_use(run_dir, pid):
    """The one-line error for a run directory that another process has locked."""
    who = f"pid {pid}" if pid else "pid not known yet"
    return (f"{run_dir} is in use by another run.py ({who}): wait for it to end, or stop "
            "it (a sweep keeps every point it finished)")


class RunLock:
    """The exclusive lock of run_dir, held from construction to release() (or the end of
    a with block); UsageError naming the holder's pid when another process has it.  The
    descriptor is not inherited by children (a bench never holds the lock)."""

    def __init__(self, run_dir):
        self.path = os.path.join(run_dir, LOCK_NAME)
        self.fd = None
        while self.fd is None:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
            except OSError as e:
                raise UsageError(f"cannot lock {run_dir}: {e.strerror}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held, named = os.fstat(fd), os.stat(self.path)
                if (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino):
                    self.fd, fd = fd, None
            except BlockingIOError:
                raise UsageError(in_use(run_dir, _holder_pid(fd))) from None
            except FileNotFoundError:
                pass                    # unlinked by the holder before: open it again
            except OSError as e:
                raise UsageError(f"cannot lock {run_dir}: {e.strerror}") from None
            finally:
                if fd is not None:
                    os.close(fd)
        with contextlib.suppress(OSError):   # a full disk: the lock holds all the same
            os.ftruncate(self.fd, 0)
            os.write(self.fd, f"{os.getpid()}\n".encode())

    def release(self):
        if self.fd is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)    # still locked: see the module's comment
            os.close(self.fd)
            self.fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


def lock_holder(run_dir):
    """The pid of the process that holds run_dir's lock (0 when it has not written it
    yet); None when nobody does.  Reads only: no file is created."""
    try:
        fd = os.open(os.path.join(run_dir, LOCK_NAME), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return None                     # closing the file drops the shared lock
    except BlockingIOError:
        return _holder_pid(fd) or 0
    except OSError:
        return None
    finally:
        os.close(fd)


def write_first_file(path, doc):
    """One of a new run's first files: a JSON document, or a str written as it is."""
    if isinstance(doc, str):
        atomic_write_text(path, doc)
    else:
        atomic_write_json(path, doc)


def create_run_dir(path, files):
    """Create the run directory path holding files ({name: JSON document or text},
    meta.json last: it makes the directory a run), whole or not at all, and lock it;
    returns (its absolute path, its RunLock).  A new directory is built beside path and
    renamed (the module's comment); an empty directory that is there already (one the
    user made, perhaps a mount point) is locked, then filled, and emptied again on
    failure.  FileExistsError when path has files, UsageError for any other failure."""
    path = os.path.abspath(path)
    if os.path.isdir(path):
        return path, _fill_empty_dir(path, files)
    parent, name = os.path.split(path)
    try:
        os.makedirs(parent, exist_ok=True)
        while True:
            tmp = os.path.join(parent, temp_name(name))
            try:
                os.mkdir(tmp, 0o777)    # as makedirs would make path: the umask applies
                break
            except FileExistsError:
                continue
    except OSError as e:
        raise UsageError(f"cannot create the run directory {path}: {e.strerror}") from None
    try:
        for filename, doc in files.items():
            write_first_file(os.path.join(tmp, filename), doc)
        os.rename(tmp, path)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        if e.errno in (errno.EEXIST, errno.ENOTEMPTY):
            raise FileExistsError(errno.ENOTEMPTY, "exists and is not empty", path) from None
        raise UsageError(f"cannot create the run directory {path}: {e.strerror}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path, RunLock(path)  # whoever locks it first runs it; the other gets UsageError


def _fill_empty_dir(path, files):
    """create_run_dir in an existing directory; returns the RunLock."""
    lock = RunLock(path)
    written = []
    try:
        if set(os.listdir(path)) - {LOCK_NAME}:
            raise FileExistsError(errno.ENOTEMPTY, "exists and is not empty", path)
        for filename, doc in files.items():
            write_first_file(os.path.join(path, filename), doc)
            written.append(os.path.join(path, filename))
    except BaseException as e:
        for done in reversed(written):
            with contextlib.suppress(OSError):
                os.unlink(done)
        lock.release()
        if isinstance(e, OSError) and not isinstance(e, FileExistsError):
            raise UsageError(f"cannot create the run directory {path}: {e.strerror}") from None
        raise
    return lock


# ---- naming a run: how a RUN argument (an id, 'latest', a path, RUN:VARIANT) names its
# directory

def runs_base(root):
    return os.path.join(root, "results")


def resolve_run(spec, root):
    """A run directory from a run id, 'latest', or a path."""
    base = runs_base(root)
    if spec == "latest":
        return latest_run(base)
    for candidate in (spec, os.path.join(base, spec)):
        if os.path.isdir(candidate) and (os.path.exists(os.path.join(candidate, "meta.json"))
                                         or os.path.isdir(os.path.join(candidate, "raw"))):
            return os.path.abspath(candidate)
    raise UsageError(f"no run '{spec}' (not a run directory, nor an id under {base})")


def latest_run(base):
    """The run under base whose meta.json says it started last."""
    best = None
    if os.path.isdir(base):
        for name in os.listdir(base):
            if name.startswith("."):   # a run being created (create_run_dir)
                continue
            meta_path = os.path.join(base, name, "meta.json")
            if os.path.isfile(meta_path):
                meta = read_json(meta_path)
                started = meta.get("started", "") if isinstance(meta, dict) else ""
                started = started if isinstance(started, str) else ""
                key = (started, os.path.getmtime(meta_path))
                if best is None or key > best[0]:
                    best = (key, os.path.join(base, name))
    if best is None:
        raise UsageError(f"no runs under {base} yet ('latest' has nothing to name)")
    return os.path.abspath(best[1])


def split_run_spec(spec, root):
    """'RUN' or 'RUN:VARIANT' -> (run_dir, variant or None)."""
    head, sep, tail = spec.rpartition(":")
    if sep and head and tail:
        try:
            return resolve_run(head, root), tail
        except UsageError:
            pass
    return resolve_run(spec, root), None
