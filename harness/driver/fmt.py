"""Text for people: durations, times with their unit, CSV numbers, p-values, the current
time, and aligned or Markdown tables."""

import datetime
import math


def fmt_duration(seconds):
    """12 -> '0:12', 3725 -> '1:02:05'."""
    seconds = int(round(max(0.0, seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


TIME_UNITS = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9))


def time_unit_for(seconds):
    """The (name, scale) of the largest unit in which `seconds` is at least 1."""
    for name, scale in TIME_UNITS:
        if seconds >= scale:
            return name, scale
    return TIME_UNITS[-1]


def fmt_seconds(seconds):
    """0.0123 -> '12.3 ms'."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    name, scale = time_unit_for(abs(seconds))
    return f"{seconds / scale:.3g} {name}"


def fmt_num(value):
    """A CSV number: '' for missing, 12 significant digits otherwise."""
    if value is None:
        return ""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return f"{value:.12g}"


def now_iso():
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


def format_table(headers, rows, markdown=False):
    """An aligned text table, or a Markdown one."""
    rows = [[str(c) for c in row] for row in rows]
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        return "\n".join(lines) + "\n"
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines) + "\n"


def fmt_p(p):
    return "-" if p is None else f"{p:.3g}"
