"""The one reader of Google Benchmark JSON (run.py, simulated runs, calibrate, benchjson,
refcheck and targets all read through it): per-repetition entries in seconds with their
user counters, the context, and benchmark names."""

import dataclasses
import gzip
import json
import math
import zlib


# Keys of a Google Benchmark entry that are not user counters.
GB_FIELDS = frozenset("""
    name family_index per_family_instance_index run_name run_type repetitions
    repetition_index threads iterations real_time cpu_time time_unit aggregate_name
    aggregate_unit error_occurred error_message label big_o rms complexity_n
""".split())
GB_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


class BadResultFile(Exception):
    """A result file that cannot be used (not JSON, truncated, wrong shape)."""


@dataclasses.dataclass
class Entry:
    """One per-repetition measurement of one benchmark (a Google Benchmark "iteration"
    entry); aggregates (mean, median, ...) are recomputed from these, not read."""
    benchmark: str        # run_name, e.g. "fib/n:30/real_time"
    repetition: int
    real_s: float         # wall time per iteration, seconds
    cpu_s: float          # CPU time per iteration, seconds (as Google Benchmark measured)
    iterations: int
    counters: dict        # user counters: name -> float
    error: str = None     # error_message when error_occurred (a wrong answer)


def workload_of(benchmark):
    """'imbalance/imbalance:2/grain_us:100' -> 'imbalance'."""
    return benchmark.split("/", 1)[0]


GB_NAME_SUFFIXES = ("real_time", "manual_time", "process_time")


def display_name(benchmark):
    """The name without the suffixes Google Benchmark appends for the timing mode:
    'fib/n:30/real_time' -> 'fib/n:30' (for titles, tables and file names)."""
    parts = benchmark.split("/")
    while len(parts) > 1 and parts[-1] in GB_NAME_SUFFIXES:
        parts.pop()
    return "/".join(parts)


def set_name(benchmark):
    """The name a run's results key a benchmark by.  Google Benchmark ends the name of a
    benchmark timed on the wall clock in "/real_time" and of one timed on its own clock
    (manual time: simbench's simulated clock) in "/manual_time"; both report the
    elapsed time of the same argument set, so a simulated set keys as the measured one:
    'fib/n:30/manual_time' -> 'fib/n:30/real_time'."""
    head, sep, last = benchmark.rpartition("/")
    return f"{head}/real_time" if sep and last == "manual_time" else benchmark


def params_of(benchmark):
    """The 'key:value' parts of a benchmark name after the workload, as a dict."""
    params = {}
    for part in benchmark.split("/")[1:]:
        key, sep, value = part.partition(":")
        if sep:
            params[key] = value
    return params


def _number(value):
    """value as a float if it is a JSON number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _count(value):
    """value as an int if it is a finite JSON number, else 0."""
    number = _number(value)
    return int(number) if number is not None and math.isfinite(number) else 0


def parse_entry(raw):
    """An Entry from one element of "benchmarks", or None for aggregates.
    Raises ValueError when the element does not have the expected fields.  A repetition
    whose time is not a number (Google Benchmark can write NaN) or not positive is kept
    as an error ("no valid measurement"), so that it is reported and never plotted."""
    if not isinstance(raw, dict):
        raise ValueError("an entry is not an object")
    if raw.get("run_type", "iteration") != "iteration":
        return None
    name = raw.get("run_name") or raw.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("an entry has no name")
    unit = raw.get("time_unit", "ns")
    scale = GB_TIME_UNITS.get(unit) if isinstance(unit, str) else None
    real, cpu = _number(raw.get("real_time")), _number(raw.get("cpu_time"))
    error = None
    if raw.get("error_occurred"):
        error = str(raw.get("error_message") or "error_occurred")
    elif scale is None or real is None or cpu is None:
        raise ValueError(f"entry {name} lacks real_time/cpu_time/time_unit")
    else:
        bad = [f"{key} = {value}" for key, value, ok in (
            ("real_time", real, math.isfinite(real) and real > 0),
            ("cpu_time", cpu, math.isfinite(cpu) and cpu >= 0)) if not ok]
        if bad:
            error = f"no valid measurement: {', '.join(bad)}"
    counters = {}
    for key, value in raw.items():
        number = _number(value)
        if key not in GB_FIELDS and number is not None:
            counters[key] = number
    return Entry(benchmark=set_name(name),
                 repetition=_count(raw.get("repetition_index")),
                 real_s=real * scale if real is not None and scale else math.nan,
                 cpu_s=cpu * scale if cpu is not None and scale else math.nan,
                 iterations=_count(raw.get("iterations")),
                 counters=counters, error=error)


def parse_gb_doc(doc, source):
    """(context dict, [Entry]) of a parsed Google Benchmark JSON document.
    Raises BadResultFile naming `source` when it does not have that shape."""
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise BadResultFile(f"{source}: no \"benchmarks\" list (not Google Benchmark JSON)")
    context = doc.get("context") if isinstance(doc.get("context"), dict) else {}
    entries = []
    for raw in doc["benchmarks"]:
        try:
            entry = parse_entry(raw)
        except ValueError as e:
            raise BadResultFile(f"{source}: {e}") from None
        if entry is not None:
            entries.append(entry)
    return context, entries


def parse_gb_text(text, source):
    """The JSON document in text; BadResultFile (truncated / not JSON) otherwise."""
    try:
        return json.loads(text)
    except RecursionError:
        raise BadResultFile(f"{source}: not JSON a reader can take (nested too deeply)") from None
    except ValueError as e:
        # the text ends inside a value: the writer stopped halfway
        ends = getattr(e, "pos", 0) >= len(text.rstrip()) or \
            getattr(e, "msg", "").startswith("Unterminated string")
        what = "truncated" if text.strip() and ends else "not JSON"
        raise BadResultFile(f"{source}: {what} ({e})") from None


def load_gb_doc(path):
    """The parsed JSON document of a file (for checks of its raw fields);
    BadResultFile for unreadable, truncated or non-JSON files."""
    return parse_gb_text(read_text_maybe_gz(path), path)


def read_text_maybe_gz(path):
    """The text of a file; a name ending in .gz is gunzipped (a published run keeps its
    large raw files compressed, results/README.md).  BadResultFile naming the file for
    one that cannot be read: missing, or a damaged gzip stream (bad header, invalid
    deflate data, cut short)."""
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                return f.read()
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except EOFError:
        raise BadResultFile(f"{path}: truncated (gzip stream ends early)") from None
    except zlib.error as e:
        raise BadResultFile(f"{path}: damaged gzip data ({e})") from None
    except OSError as e:       # gzip.BadGzipFile is one
        raise BadResultFile(f"{path}: {e.strerror or e}") from None


def load_gb_file(path):
    """(context dict, [Entry]) of a file; BadResultFile for anything unusable."""
    return parse_gb_doc(load_gb_doc(path), path)
