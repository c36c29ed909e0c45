"""Files the driver writes and reads: atomic writes that respect the umask, the checks
of an output path the user names (--out), tolerant JSON reads, and the walk over a
run's raw JSON files."""

import contextlib
import json
import os
import secrets

from .config import UsageError, warn


NAME_MAX = 255   # bytes in one file name (Linux)


def temp_name(name):
    """A temporary name beside `name` that no loader picks up: `.<name>.<8 hex>.tmp`,
    the name cut (at a character) so that the whole fits NAME_MAX bytes: a legal
    250-byte name must not fail for its temporary's 14 more."""
    tag = f".{secrets.token_hex(4)}.tmp"
    room = NAME_MAX - 1 - len(tag)
    raw = os.fsencode(name)
    if len(raw) > room:
        name = os.fsdecode(raw[:room].decode("utf-8", "ignore").encode("utf-8")) \
            if isinstance(name, str) else raw[:room]
    return f".{name}{tag}"


def atomic_write_text(path, text):
    """Write text to path so that readers see the old file or the new one, never half.

    The data goes to a temporary file in the same directory (a dot-name ending in .tmp,
    which no loader picks up), is fsync'ed, then renamed over path with os.replace.  The
    temporary file is created with mode 0666 less the umask, as open() would create
    path itself (tempfile.mkstemp would make it 0600).
    """
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    while True:
        tmp = os.path.join(directory, temp_name(os.path.basename(path)))
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def out_path_problem(path, directory):
    """Why path cannot become the output directory (directory=True) or file, without
    creating anything: None when it looks possible (the write itself may still fail)."""
    if os.path.exists(path):
        if directory and not os.path.isdir(path):
            return "is not a directory"
        if not directory and os.path.isdir(path):
            return "is a directory"
        where = path if directory else os.path.dirname(os.path.abspath(path))
    else:
        where = os.path.dirname(os.path.abspath(path))
        while not os.path.exists(where):
            where = os.path.dirname(where)
        if not os.path.isdir(where):
            return f"cannot be created: {where} is not a directory"
    if not os.access(where, os.W_OK | os.X_OK):
        return f"is not writable ({where})"
    return None


def check_out_path(path, option, directory):
    """UsageError naming the option when out_path_problem finds one."""
    problem = out_path_problem(path, directory)
    if problem:
        raise UsageError(f"{option} {path} {problem}")


def ensure_dir(path, what):
    """os.makedirs(path), with a UsageError naming `what` when it cannot be made."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create the {what} {path}: {e.strerror}") from None


def write_output(path, text):
    """atomic_write_text of a file the user asked for, with a UsageError when it cannot
    be written."""
    try:
        atomic_write_text(path, text)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror or e}") from None


def atomic_write_json(path, obj, sort_keys=True):
    """atomic_write_text of obj as indented JSON, its keys sorted unless sort_keys is
    False (then in the order the document has them: a bench's own JSON, a model)."""
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=sort_keys) + "\n")


def read_json(path):
    """The parsed JSON file, or None when it is absent or unreadable (with a warning)."""
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        warn(f"skipping {path}: {e}")
        return None
    except RecursionError:
        warn(f"skipping {path}: not JSON a reader can take (nested too deeply)")
        return None


def glob_json(directory):
    """Every *.json and *.json.gz file under directory (temporary dot-files excluded)."""
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith((".json", ".json.gz")) and not name.startswith("."):
                yield os.path.join(dirpath, name)


def existing_raw(path):
    """path, or path + '.gz' when only the compressed form exists (a published run);
    path itself when neither does."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        return path + ".gz"
    return path
