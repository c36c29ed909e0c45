"""The policy guide: 5 to 10 rules a runtime engineer can act on, each generated from the
map's cells (mapcells.py) with its numbers and the cells that are its evidence.  No
rule is written by hand: each kind below looks for a pattern in the cells, states it
with the margins of their compare.Comparison objects and the counters that explain it,
and scores itself by the robust cells behind it; the report keeps the best MAX_RULES.

    form       one variant wins most of a form's SIMULATED cells robustly
    threshold  along the grain axis of one form and worker count, the robust winner
               changes from one variant (fine grains) to another (coarse)
    scale      what wins measured at 2 workers is not what wins SIMULATED at many
    pool       a pool or a reference row wins robustly: stealing buys nothing there
    cpu        a winner that keeps many more cores busy than its runner-up
    fragile    cells whose winner flips within the band, and the cost group that flips them
    measured   measured cells without a decided winner
    heldout    how often the here model picked the measured winner"""

import collections
import dataclasses
import math
import statistics

from .config import REPRESENTATIVE
from .mapcells import COUNTERS, FRAGILE, ROBUST, TIE, UNDECIDED
from .mapgrid import grain_words
from .roles import Roles, parse_policy

MIN_RULES, MAX_RULES = 5, 10


@dataclasses.dataclass
class Rule:
    kind: str
    title: str
    text: str
    evidence: list          # cell ids
    score: float


def num(v):
    if v is None or not math.isfinite(v):
        return "n/a"
    return f"{v:.3g}"


def span(values, words=str):
    """'1 us-100 us' over the values (sorted, distinct), or the one value."""
    vals = sorted(set(values), key=lambda v: (v is None, v or 0))
    if not vals:
        return ""
    return words(vals[0]) if len(vals) == 1 else f"{words(vals[0])}-{words(vals[-1])}"


def workers_words(cells):
    keys = sorted({(c.workers, c.machine) for c in cells})
    return ", ".join(f"{w} ({m})" if c_sim else f"{w}"
                     for (w, m), c_sim in ((k, any(c.simulated for c in cells)) for k in keys))


def margins(cells):
    """'margin over the runner-up 1.05x-1.31x (median 1.12x)'."""
    ms = [c.margin for c in cells]
    if len(ms) == 1:
        return f"margin over the runner-up: {cells[0].comparison.text()}"
    return (f"margin over the runner-up {min(ms):.2f}x-{max(ms):.2f}x (median "
            f"{statistics.median(ms):.2f}x)")


def why(cells):
    """The counters that set the winners apart from their runner-ups, in words: the two
    whose medians differ the most (by ratio), each as 'winner a vs runner-up b'."""
    found = []
    for name, _, _ in COUNTERS:
        w = [c.counters.get(c.winner, {}).get(name) for c in cells]
        r = [c.counters.get(c.runner, {}).get(name) for c in cells]
        pairs = [(a, b) for a, b in zip(w, r) if a is not None and b is not None]
        if not pairs:
            continue
        a = statistics.median(p[0] for p in pairs)
        b = statistics.median(p[1] for p in pairs)
        if a > 0 and b > 0:
            found.append((abs(math.log(a / b)), name, a, b))
        elif a != b:
            found.append((math.inf, name, a, b))
    found.sort(reverse=True)
    parts = [f"{name} {num(a)} against {num(b)}" for d, name, a, b in found[:2] if d > 0.05]
    return ("the cause, winner against runner-up (medians): " + "; ".join(parts)) if parts \
        else "no counter sets them apart"


def policy(data, v):
    words = data.policies.get(v)
    return f"`{v}` ({words})" if words else f"`{v}`"


def rule_form(data):
    sim = [c for c in data.cells if c.simulated]
    out = []
    for key in dict.fromkeys(c.form.key for c in sim):
        cells = [c for c in sim if c.form.key == key]
        wins = collections.Counter(c.winner for c in cells if c.verdict == ROBUST)
        if not wins:
            continue
        v, k = wins.most_common(1)[0]
        won = [c for c in cells if c.winner == v and c.verdict == ROBUST]
        if k < 2 or k * 3 < len(cells):
            continue
        runners = collections.Counter(c.runner for c in won).most_common(2)
        out.append(Rule(
            "form", f"For {key}: use `{v}`",
            f"{cells[0].form.words}: {policy(data, v)} wins {k} of the {len(cells)} SIMULATED "
            f"cells robustly (grain {span([c.grain for c in won], grain_words)}, workers "
            f"{workers_words(won)}); {margins(won)}; runner-up mostly "
            f"{', '.join('`%s`' % r for r, _ in runners)}; {why(won)}.",
            [c.id for c in won], k + k / len(cells)))
    return out


def rule_threshold(data):
    out = []
    rows = collections.defaultdict(list)
    for c in data.cells:
        if c.grain is not None:
            rows[(c.form.key, c.workers, c.machine, c.simulated)].append(c)
    for (key, w, machine, simulated), cells in rows.items():
        cells.sort(key=lambda c: c.grain)
        robust = [c for c in cells if c.verdict == ROBUST]
        for i in range(1, len(robust)):
            fine, coarse = robust[:i], robust[i:]
            a, b = {c.winner for c in fine}, {c.winner for c in coarse}
            if len(a) == 1 and len(b) == 1 and a != b:
                va, vb = a.pop(), b.pop()
                where = f"{w} workers, SIMULATED {machine}" if simulated else f"{w} workers, measured"
                out.append(Rule(
                    "threshold", f"For {key} at {where}: `{va}` below {grain_words(coarse[0].grain)}, "
                    f"`{vb}` from there",
                    f"Up to {grain_words(fine[-1].grain)} grain `{va}` wins ({margins(fine)}; "
                    f"{why(fine)}); from {grain_words(coarse[0].grain)} `{vb}` ({margins(coarse)}; "
                    f"{why(coarse)}).", [c.id for c in robust], len(robust) + 0.5))
                break
    return out


def rule_scale(data):
    measured = {(c.form.key, c.grain): c for c in data.cells
                if not c.simulated and c.verdict == ROBUST and c.workers == max(
                    [x.workers for x in data.cells if not x.simulated] or [0])}
    pairs = []
    for c in data.cells:
        m = measured.get((c.form.key, c.grain))
        if c.simulated and m and c.verdict == ROBUST and c.winner != m.winner:
            pairs.append((m, c))
    if not pairs:
        return []
    best = {}
    for m, c in pairs:                       # the largest SIMULATED worker count per cell
        if (m.id not in best) or c.workers > best[m.id][1].workers:
            best[m.id] = (m, c)
    parts = [f"{m.form.key} at {grain_words(m.grain)}: `{m.winner}` measured at {m.workers} "
             f"workers ({m.comparison.text()}), `{c.winner}` at {c.workers} on {c.machine} "
             f"({c.comparison.text()})" for m, c in best.values()]
    return [Rule("scale", "Do not choose at 2 workers for a big machine",
                 f"In {len(best)} place(s) the robust winner measured here is not the robust "
                 f"SIMULATED winner at scale: " + "; ".join(parts) + ".",
                 [x.id for pair in best.values() for x in pair], 1.5 * len(best))]


def rule_pool(data):
    out = []
    roles = Roles({v: parse_policy(w) for v, w in data.policies.items()})
    pools = [c for c in data.cells if c.verdict == ROBUST and
             (roles.is_pool(c.winner) or c.winner in c.references)]
    for v in dict.fromkeys(c.winner for c in pools):
        cells = [c for c in pools if c.winner == v]
        forms = ", ".join(dict.fromkeys(c.form.key for c in cells))
        out.append(Rule("pool", f"Where `{v}` is enough",
                        f"{policy(data, v)}, a pool without work stealing or a reference row, "
                        f"wins {len(cells)} cell(s) robustly ({forms}; grain "
                        f"{span([c.grain for c in cells], grain_words)}; workers "
                        f"{workers_words(cells)}): {margins(cells)}; {why(cells)}.",
                        [c.id for c in cells], len(cells)))
    return out


def rule_cpu(data):
    out = []
    name = COUNTERS[-1][0]
    costly = collections.defaultdict(list)
    for c in data.cells:
        a = c.counters.get(c.winner, {}).get(name)
        b = c.counters.get(c.runner, {}).get(name)
        if c.verdict == ROBUST and a and b and a >= 1.25 * b:
            costly[c.winner].append((c, a, b))
    for v, items in costly.items():
        cells = [c for c, _, _ in items]
        a = statistics.median(x[1] for x in items)
        b = statistics.median(x[2] for x in items)
        out.append(Rule("cpu", f"`{v}` wins by burning cores",
                        f"Where {policy(data, v)} wins robustly ({len(cells)} cells: "
                        f"{', '.join(dict.fromkeys(c.form.key for c in cells))}) it keeps "
                        f"{num(a)} cores busy per wall second against the runner-up's {num(b)} "
                        f"(medians), for {margins(cells)}: take it where idle cores cost nothing.",
                        [c.id for c in cells], 0.8 * len(cells)))
    return out


def rule_fragile(data):
    sim = [c for c in data.cells if c.simulated]
    fragile = [c for c in sim if c.verdict == FRAGILE]
    if not fragile:
        return []
    ends = collections.Counter(end for c in fragile for end, _ in c.flips)
    flipping = [c for c in fragile if c.flips]
    text = (f"{len(fragile)} of the {len(sim)} SIMULATED cells are fragile: within its band "
            "(widened by the held-out error) the winner changes, or wins by less than "
            f"{(TIE - 1) * 100:g}%.")
    if ends:
        end, k = ends.most_common(1)[0]
        text += (f" In {len(flipping)} another variant wins at an end of the band; the end "
                 f"that flips the most is `{end}` ({k} cell{'' if k == 1 else 's'}): on such a "
                 "cell that cost decides, "
                 "so measure it on the target machine before choosing.")
    return [Rule("fragile", "Where the model cannot decide, measure", text,
                 [c.id for c in fragile], 0.4 * len(fragile))]


def rule_measured(data):
    measured = [c for c in data.cells if not c.simulated]
    open_ = [c for c in measured if c.verdict in (FRAGILE, UNDECIDED)]
    if not measured or not open_:
        return []
    forms = ", ".join(dict.fromkeys(c.form.key for c in open_))
    counts = sorted({c.workers for c in measured})
    workers = " and ".join(str(w) for w in counts) + (" workers" if counts != [1] else " worker")
    return [Rule("measured", f"Measured at {workers}, {len(open_)} of {len(measured)} cells "
                 "have no decided winner",
                 f"In {len(open_)} of the {len(measured)} measured cells the winner's interval "
                 f"over the runner-up reaches below a {(TIE - 1) * 100:g}% margin, or the "
                 f"repetitions cannot decide ({forms}): there the choice of policy makes no "
                 "measurable difference on this machine.",
                 [c.id for c in open_], 0.3 * len(open_))]


def rule_heldout(data):
    rows = [r for r in data.heldout if not r.in_sample]
    if not rows:
        return []
    agree = [r for r in rows if r.agree]
    errs = [abs(e) for r in rows for e in r.errors.values()]
    bad = [r.cell.id for r in rows if not r.agree]
    ratios = [abs(e) for r in rows for e in r.ratio_errors.values()]
    text = (f"The here model picked the measured winner in {len(agree)} of {len(rows)} "
            f"held-out cells; its times are off by {statistics.median(errs):.1%} (median), "
            f"its ratios between variants by {statistics.median(ratios):.1%}")
    text += (f"; it disagreed at {', '.join(bad)}." if bad else ".")
    text += (" A SIMULATED margin within its form's ratio error is read as fragile "
             "(the widening of every SIMULATED range).")
    return [Rule("heldout", "Trust a SIMULATED winner only beyond the simulator's error", text,
                 [r.cell.id for r in rows], 0.5 * len(rows))]


KINDS = (rule_form, rule_threshold, rule_scale, rule_pool, rule_cpu, rule_fragile,
         rule_measured, rule_heldout)


def rules(data):
    """The guide: the best-scoring rules of every kind, at most MAX_RULES, at most two of a
    kind unless fewer than MIN_RULES would remain."""
    found = sorted((r for kind in KINDS for r in kind(data)), key=lambda r: -r.score)
    chosen, per = [], collections.Counter()
    for r in found:
        if per[r.kind] < 2 and len(chosen) < MAX_RULES:
            chosen.append(r)
            per[r.kind] += 1
    for r in found:
        if len(chosen) >= MIN_RULES:
            break
        if r not in chosen:
            chosen.append(r)
    return chosen


def not_representative(data):
    """The robust cells whose winner is not config.REPRESENTATIVE, widest margin first."""
    return sorted((c for c in data.cells if c.verdict == ROBUST and c.winner != REPRESENTATIVE),
                  key=lambda c: -c.margin)
