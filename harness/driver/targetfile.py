"""targetfile.py -- a run's targets.json: the issues' performance targets, measured side
by side against what users would pick (`./run.py targets RUN`, harness/driver/targets.py),
read back for the report, the README's table and publishing.

    {"format": "schedbench-targets/1", "rounds": 5, "started": ISO, "finished": ISO,
     "git": {machine.git_info}, "revisions": {binary: [git_rev, ...]},
     "comparisons": [{"comparison", "what", "unit", "ours": [...], "ref": [...],
                      "median_ours", "median_ref", "ratio", "target", "lower_is_better"},
                     ...],
     "not_measured": [{"comparison", "why"}, ...]}

`ours` and `ref` are the samples of alternating rounds (ours, theirs, ours, ...): the i-th
of each were measured next to each other, so their quotient is one round's ratio.  The
record's medians and ratio are what the measuring run printed (an older record's `met`
too); nothing here trusts them: every table row recomputes its comparison from the samples
(compare.Comparison, family `targets`: ours / theirs with its bracket, the verdict
against the target), and a record whose samples or target are not finite positive
numbers is refused as damaged.  Standard library only; imports nothing that imports it
back.
"""
import math
import os

from . import compare as cmp
from .files import read_json
from .machine import code_changes

FILE = "targets.json"
FORMAT = "schedbench-targets/1"
_NUMBER = (int, float)


def _positive(x):
    return isinstance(x, _NUMBER) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def comparison_problem(c):
    if not isinstance(c, dict):
        return "a comparison is not an object"
    for key in ("comparison", "what", "unit"):
        if not isinstance(c.get(key), str):
            return f"a comparison has no text {key!r}"
    for key in ("ours", "ref"):
        if not isinstance(c.get(key), list) or not c[key] or \
                not all(_positive(x) for x in c[key]):
            return f"{c['comparison']}: {key!r} is not a list of finite positive numbers"
    if not _positive(c.get("target")):
        return f"{c['comparison']}: 'target' is not a finite positive number"
    if not isinstance(c.get("lower_is_better"), bool):
        return f"{c['comparison']}: 'lower_is_better' is not true or false"
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
        why = comparison_problem(c)
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


SIMULATED_PREFIX = "SIMULATED"
FAMILY = "targets"


def comparisons(doc, errors=None):
    """One compare.Comparison per comparison of the record (family `targets`), from its
    samples: ours / theirs against the target, better on the target's side.  A SIMULATED
    row (one deterministic run a side) is a SIMULATED comparison whose range is the
    simulator's validation error for the workload (`errors`: {workload: error}, from
    validate.recorded_errors); without one it is undecided.  In the record's order, each
    comparison's rows together (a resumed measurement's record may have them apart)."""
    first = {}
    for i, c in enumerate(doc["comparisons"]):
        first.setdefault(c["comparison"], i)
    out = []
    for c in sorted(doc["comparisons"], key=lambda c: first[c["comparison"]]):
        labels = dict(what=c["what"], unit=c["unit"], name=c["comparison"],
                      ours_median=_median(c["ours"]), ref_median=_median(c["ref"]))
        if c["what"].startswith(SIMULATED_PREFIX):
            err = (errors or {}).get("spawn_batch" if c["comparison"].startswith("flush")
                                     else c["comparison"])
            out.append(cmp.simulated(FAMILY, _median(c["ours"]) / _median(c["ref"]),
                                     error=err, threshold=c["target"],
                                     higher_is_better=not c["lower_is_better"], **labels))
        else:
            out.append(cmp.compare(FAMILY, c["ours"], c["ref"], c["target"],
                                   not c["lower_is_better"], **labels))
    return cmp.close(out)


def _median(values):
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


TABLE_HEADERS = ["what", "ours (median)", "theirs (median)",
                 "ours / theirs " + cmp.BRACKET_SHORT, "target", "verdict"]


def table_rows(doc, errors=None):
    """One row per comparison, then one per comparison that could not be measured."""
    rows = []
    for c in comparisons(doc, errors):
        rows.append([c.what, _num(c.ours_median, c.unit), _num(c.ref_median, c.unit),
                     c.text() + ("" if c.simulated or len(c.x) > 1 else " (1 round a side)"),
                     f"{'>=' if c.higher_is_better else '<='} {c.threshold:.2f}x",
                     {cmp.BETTER: "**better**", cmp.WORSE: "**worse**"}.get(
                         c.verdict, c.verdict_words())])
    for n in doc["not_measured"]:
        rows.append([n["comparison"], "not measured", "", n["why"], "", ""])
    return rows


def summary(doc, errors=None):
    """One sentence: how many targets are better, worse, undecided, in how many rounds."""
    comps = comparisons(doc, errors)
    count = {v: sum(c.verdict == v for c in comps) for v in (cmp.BETTER, cmp.WORSE, cmp.UNDECIDED)}
    return (f"of {len(comps)} targets {count[cmp.BETTER]} decided better, {count[cmp.WORSE]} "
            f"worse, {count[cmp.UNDECIDED]} undecided ({cmp.BRACKET} over the {len(comps)}), "
            f"from {doc.get('rounds', '?')} alternating rounds (ours, theirs, ours, ...); "
            "ratio = ours / theirs"
            + (f"; {len(doc['not_measured'])} not measured" if doc["not_measured"] else ""))
