"""The one reader of Google Benchmark JSON (run.py, harness/benchjson.py,
harness/targets.py and harness/ref/refcheck.py all read through it): per-repetition
entries in seconds with their user counters, the context, and benchmark names."""

import dataclasses
import json
import math


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


def parse_entry(raw):
    """An Entry from one element of "benchmarks", or None for aggregates.
    Raises ValueError when the element does not have the expected fields."""
    if not isinstance(raw, dict):
        raise ValueError("an entry is not an object")
    if raw.get("run_type", "iteration") != "iteration":
        return None
    name = raw.get("run_name") or raw.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("an entry has no name")
    scale = GB_TIME_UNITS.get(raw.get("time_unit", "ns"))
    real, cpu = _number(raw.get("real_time")), _number(raw.get("cpu_time"))
    error = None
    if raw.get("error_occurred"):
        error = str(raw.get("error_message") or "error_occurred")
    elif scale is None or real is None or cpu is None:
        raise ValueError(f"entry {name} lacks real_time/cpu_time/time_unit")
    counters = {}
    for key, value in raw.items():
        number = _number(value)
        if key not in GB_FIELDS and number is not None:
            counters[key] = number
    return Entry(benchmark=name,
                 repetition=int(_number(raw.get("repetition_index")) or 0),
                 real_s=real * scale if real is not None and scale else math.nan,
                 cpu_s=cpu * scale if cpu is not None and scale else math.nan,
                 iterations=int(_number(raw.get("iterations")) or 0),
                 counters=counters, error=error)


def parse_gb_json(text, source):
    """(context dict, [Entry]) of a Google Benchmark JSON output.
    Raises BadResultFile naming `source` for anything unusable."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        what = "truncated" if text.strip() and e.pos >= len(text.rstrip()) else "not JSON"
        raise BadResultFile(f"{source}: {what} ({e})") from None
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


def load_gb_file(path):
    """parse_gb_json of a file; BadResultFile also for unreadable files."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise BadResultFile(f"{path}: {e.strerror}") from None
    return parse_gb_json(text, path)
