"""targetfile.py -- a run's targets.json: the issues' performance targets, measured side
by side against what users would pick (`./run.py targets RUN`, harness/driver/targets.py),
read back for the report, the README's table and publishing.

    {"format": "schedbench-targets/1", "rounds": 5, "started": ISO, "finished": ISO,
     "git": {machine.git_info}, "revisions": {binary: [git_rev, ...]},
     "comparisons": [{"comparison", "what", "unit", "ours": [...], "ref": [...],
                      "median_ours", "median_ref", "ratio", "target", "lower_is_better",
                      "met"}, ...],
     "not_measured": [{"comparison", "why"}, ...]}

`ours` and `ref` are the samples of alternating rounds (ours, theirs, ours, ...): the i-th
of each were measured next to each other, so their quotient is one round's ratio.
Standard library only; imports nothing that imports it back.
"""
import math
import os

from .files import read_json
from .machine import code_changes

FILE = "targets.json"
FORMAT = "schedbench-targets/1"
_NUMBER = (int, float)


def _comparison_problem(c):
    if not isinstance(c, dict):
        return "a comparison is not an object"
    for key in ("comparison", "what", "unit"):
        if not isinstance(c.get(key), str):
            return f"a comparison has no text {key!r}"
    for key in ("ours", "ref"):
        if not isinstance(c.get(key), list) or not c[key] or \
                not all(isinstance(x, _NUMBER) and not isinstance(x, bool) for x in c[key]):
            return f"{c['comparison']}: {key!r} is not a list of numbers"
    for key in ("median_ours", "median_ref", "ratio", "target"):
        if not isinstance(c.get(key), _NUMBER) or isinstance(c.get(key), bool):
            return f"{c['comparison']}: {key!r} is not a number"
    for key in ("lower_is_better", "met"):
        if not isinstance(c.get(key), bool):
            return f"{c['comparison']}: {key!r} is not true or false"
    return None


def problem(doc):
    """Why doc is not a usable targets record, or None."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return f"not a {FORMAT} record"
    if not isinstance(doc.get("comparisons"), list) or not isinstance(doc.get("not_measured"), list):
        return "no comparisons / not_measured lists"
    if not doc.get("finished"):
        return "the measurement did not finish"
    for c in doc["comparisons"]:
        why = _comparison_problem(c)
        if why:
            return why
    for n in doc["not_measured"]:
        if not isinstance(n, dict) or not isinstance(n.get("comparison"), str) or \
                not isinstance(n.get("why"), str):
            return "a not_measured entry is not {comparison, why}"
    return None


def read(run_dir):
    """(the run's targets record or None, why it could not be used or None).  A missing
    file is (None, None): a run need not have one."""
    path = os.path.join(run_dir, FILE)
    if not os.path.exists(path):
        return None, None
    doc = read_json(path)
    why = "unreadable JSON (half-written?)" if doc is None else problem(doc)
    return (None, f"{path}: {why}") if why else (doc, None)


def stale(doc, run_git):
    """Why doc does not measure the code the run measured, or None.  The targets' tree
    and every binary they ran must hold the run's measured code (machine.code_changes:
    the same revision, or one that changed only Python and prose), committed."""
    git = doc.get("git") if isinstance(doc.get("git"), dict) else {}
    run_rev = (run_git or {}).get("rev")
    if git.get("code_dirty") is None or git["code_dirty"]:
        return "measured with uncommitted (or unknown) changes to the measured code"
    revisions = doc.get("revisions") if isinstance(doc.get("revisions"), dict) else {}
    # a binary that records no revision ("unknown": Boost's switch bench, not built with
    # the driver) cannot be checked; `make all refs` built it from the tree
    built = {("the tree", git.get("rev"))} | {(b, r) for b, revs in revisions.items()
                                              if isinstance(revs, list) for r in revs
                                              if r != "unknown"}
    for what, rev in sorted(built, key=str):
        if not run_rev or not isinstance(rev, str) or rev.endswith("-dirty"):
            return f"{what} at {rev}, the run at {run_rev}"
        changed = code_changes(rev, run_rev)
        if changed is None:
            return f"cannot compare {what} at {rev} with the run at {run_rev} (git)"
        if changed:
            return (f"{what} at {rev[:7]}, whose measured code differs from the run's at "
                    f"{run_rev[:7]} ({', '.join(changed[:3])})")
    return None


def _num(x, unit):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "?"
    digits = 0 if abs(x) >= 100 else 1 if abs(x) >= 10 else 2
    return f"{x:,.{digits}f} {unit}"


def round_ratios(c):
    """Each round's ratio (ours / theirs of the same round)."""
    return [a / b for a, b in zip(c["ours"], c["ref"]) if b]


TABLE_HEADERS = ["what", "ours", "theirs", "ratio (rounds' range)", "target", ""]


def table_rows(doc):
    """One row per comparison, then one per comparison that could not be measured."""
    rows = []
    for c in doc["comparisons"]:
        rr = round_ratios(c)
        spread = f" [{min(rr):.2f}-{max(rr):.2f}]" if len(rr) > 1 else ""
        rows.append([c["what"], _num(c["median_ours"], c["unit"]), _num(c["median_ref"], c["unit"]),
                     f"{c['ratio']:.2f}x{spread}",
                     f"{'<=' if c['lower_is_better'] else '>='} {c['target']:.2f}x",
                     "met" if c["met"] else "**not met**"])
    for n in doc["not_measured"]:
        rows.append([n["comparison"], "not measured", "", n["why"], "", ""])
    return rows


def summary(doc):
    """One sentence: how many targets were met, in how many rounds."""
    met = sum(1 for c in doc["comparisons"] if c["met"])
    return (f"{met} of {len(doc['comparisons'])} targets met, medians of {doc.get('rounds', '?')} "
            f"alternating rounds (ours, theirs, ours, ...); ratio = ours / theirs"
            + (f"; {len(doc['not_measured'])} not measured" if doc["not_measured"] else ""))
