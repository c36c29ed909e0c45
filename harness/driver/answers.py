"""The answers to the article's claims, one table row each (REPORT.md's "Answers" and
README's answer block): every number is a compare.Comparison of the run (families.py)
with its bracket, every verdict read off a bracket, every SIMULATED number with its
sensitivity band and the simulator's validation error for the same workload."""

from . import batching
from . import compare as cmp
from . import families
from .article import Panel, first_setting, panels
from .config import ARTICLE_DESIGN_POOL, ARTICLE_DESIGN_STEALING, ARTICLE_TITLE, REPRESENTATIVE
from .plots import workers_label
from .rundata import band_description

ANSWER_HEADERS = ["the article's claim", "how the article set it up", "measured here "
                  + cmp.BRACKET_SHORT, "simulated", "verdict"]
PLACEMENT_SHARE = 0.02     # a gain with at most this share of the tasks stolen is placement


def fmt_x(value):
    return "-" if value is None else f"{value:.2f}x"


def fmt_range(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return fmt_x(lo) if abs(hi - lo) < 0.005 else f"{lo:.2f}-{hi:.2f}x"


def claim_text(section, text):
    return f"{text} ({ARTICLE_TITLE}, {section})"


def other_pools(p: Panel):
    """The run's pools other than the article's own (a shared queue, a round-robin split)."""
    return [v for v in p.roles.pools(p.data.variants()) if v != p.pool]


def measured_cell(p: Panel, d):
    """The measured article cell at d: the representative with its bracket, the stealing
    variants, the pools, the stolen share."""
    rep = p.representative()
    c = p.comparison(rep, d) if rep else None
    steal = {v: p.comparison(v, d) for v in p.stealing}
    steal = {v: x for v, x in steal.items() if x}
    worst = max((abs(x.ratio / p.ideal(dd) - 1) for v in p.stealing for dd in p.benches
                 for x in [p.comparison(v, dd)] if x), default=0.0)
    text = (f"{p.label}, {int(p.setting.late_fraction * 100)}% of the submitters late by "
            f"d = {d:g} x W/P: `{rep}` {c.text() if c else '-'} over "
            f"{p.roles.words(p.pool)} (ideal {fmt_x(p.ideal(d))}); ")
    text += (f"the {len(steal)} stealing variants {fmt_range(x.ratio for x in steal.values())}, "
             f"{sum(x.verdict == cmp.BETTER for x in steal.values())} of them decided faster; "
             f"every one within {worst * 100:.0f}% of the ideal at every swept d") if steal else \
        "no stealing variant measured"
    stolen = p.stolen_share(rep, d) if rep else None
    least = min((s for s in (p.stolen_share(v, d) for v in p.stealing) if s is not None),
                default=None)
    if stolen is not None:
        text += (f"; {stolen * 100:.0f}% of the tasks stolen (`{rep}`; at least "
                 f"{least * 100:.0f}% for every stealing variant)")
    pools = [(b, p.comparison(b, d)) for b in other_pools(p)]
    pools = [f"{p.roles.words(b)} {x.text()}" for b, x in pools if x]
    if pools:
        text += (f". The other pools balance this case too: {', '.join(pools)} over "
                 f"{p.roles.words(p.pool)} (a shared queue, or a round-robin split of "
                 "each submitter's tasks, moves the late work as well)")
    colocated = sorted({v for v in p.stealing + p.roles.pools() for dd in p.benches
                        if (p.colocated(v, dd) or 0) > 0})
    if colocated:
        text += (f". Submitters shared a worker on {', '.join(colocated)}: those points are "
                 "not the article's experiment")
    return text, c


def design_note(p: Panel, d):
    """The article's own design at d: its stealing row over its no-steal row (family
    `article, its design`); '' when the run has not both."""
    c = families.of(p.data).get(families.ARTICLE_DESIGN, p.benches.get(d), ARTICLE_DESIGN_POOL,
                                ARTICLE_DESIGN_STEALING, p.workers)
    if c is None:
        return ""
    stolen = p.cell(ARTICLE_DESIGN_STEALING, d)
    stolen = stolen.summary("stolen_tasks")["median"] if stolen else None
    return (f". In the article's own design (function-pointer tasks on per-worker deques, "
            f"harness/ref/): stealing (`{ARTICLE_DESIGN_STEALING}`) {c.text()} over its "
            f"no-steal mode (`{ARTICLE_DESIGN_POOL}`, the traditional pool)"
            + (f", {stolen / p.setting.tasks * 100:.0f}% of the tasks stolen"
               if stolen is not None else "") + f", {c.verdict_words()} at 1.0x")


def placement_note(data):
    """The foreign-submitter form of the article's case, where the gain comes without
    steals: it is placement (a pthread's tasks go to the workers round-robin), not
    stealing.  '' when the run has no such form."""
    from .article import settings
    for s, benches in settings(data.index()).items():
        if not s.foreign:
            continue
        ps = panels(data, [], s)
        if not ps:
            continue
        p = ps[0]
        d = p.peak_d()
        rep = p.representative()
        c = p.comparison(rep, d) if rep else None
        stolen = [x for x in (p.stolen_share(v, d) for v in p.stealing) if x is not None]
        if c and stolen and max(stolen) <= PLACEMENT_SHARE:
            return (f". With pthread submitters (the same tasks submitted from outside the "
                    f"workers) `{rep}` gets {c.text()} with {min(stolen) * 100:.0f}-"
                    f"{max(stolen) * 100:.0f}% of the tasks stolen: that gain is placement "
                    "(a foreign submitter's tasks are spread over the workers as they "
                    "arrive), not stealing")
    return ""


def simulated_cell(p: Panel):
    d = p.peak_d()
    rep = p.representative()
    c = p.comparison(rep, d) if rep else None
    steal = {v: p.comparison(v, d) for v in p.stealing}
    err = p.validation_error()
    what = band_description(p.data.run_dir) or "no sensitivity band simulated"
    text = (f"SIMULATED {p.label.split(': ', 1)[1]}: `{rep}` {fmt_x(c.ratio if c else None)}"
            + (f" ({c.low:.2f}-{c.high:.2f}: {what}, widened by the validation error of "
               f"`article` on this machine's model, "
               + (f"{err * 100:.1f}%" if err is not None else "not measured") + ")"
               if c else "")
            + f", ideal {fmt_x(p.ideal(d))}; stealing variants "
            f"{fmt_range(x.ratio for x in steal.values() if x)}; pools "
            + ", ".join(f"{b} {fmt_x(x.ratio)}" for b in other_pools(p)
                        for x in [p.comparison(b, d)] if x))
    better = [v for v, x in steal.items() if x and x.verdict == cmp.BETTER]
    text += (f"; faster than {p.roles.words(p.pool)} over the whole of that range: "
             f"{len(better)} of {len(steal)} stealing variants")
    if err is None:
        text += " (no validation error for `article`: the range is the band alone)"
    return text


def imbalance_row(data, sims):
    setting = first_setting(data)
    claim = claim_text("sections 1, 5", "Work stealing is 30-50% faster than a traditional "
                       "thread pool under load imbalance")
    setup = ("16-core EPYC; every task the same work; the imbalance made by delaying some "
             "threads' submission; the pool's threads keep queues of their own")
    if setting is None:
        return [claim, setup, "not in this run (workload `article`)", "-", "not measured"]
    ps = panels(data, sims, setting)
    here = [p for p in ps if not p.simulated]
    cell, verdict = "-", "not measured here"
    if here:
        p = here[0]
        d = p.peak_d()
        cell, c = measured_cell(p, d)
        cell += design_note(p, d) + placement_note(data)
        ideal = p.ideal(d)
        if c is None:
            verdict = "**Not measured**"
        elif c.verdict == cmp.BETTER and c.low >= 0.9 * ideal and ideal >= 1.3:
            verdict = (f"**Reproduced**: stealing recovers {c.text()} of the ideal "
                       f"{fmt_x(ideal)} at {workers_label(p.workers)}; the 30-50% is the "
                       "geometry of a late wave (at most 2 - f for a late share f: 1.5x for "
                       "half), not a matter of core count")
            pools = [p.comparison(b, d) for b in other_pools(p)]
            if any(x and x.verdict == cmp.BETTER and x.ratio >= 1.3 for x in pools):
                verdict += ("; but only against the per-thread-queue pool: a global queue or "
                            "a round-robin split balances this experiment as well")
        elif c.verdict == cmp.UNDECIDED:
            verdict = f"**Undecided**: {c.text()}, {c.verdict_words()}"
        else:
            verdict = (f"**Not reproduced here**: {c.text()} against the ideal "
                       f"{fmt_x(ideal)}")
    simulated = [simulated_cell(p) for p in ps if p.simulated]
    return [claim, setup, cell, "; ".join(simulated) or "not simulated", verdict]


def batching_row(data, sims=()):
    """Section 4.2, both halves, in both designs (batching.py)."""
    claim = claim_text("section 4.2", "Batching 16-32 tasks under 1 us gives 20%+ more "
                       "throughput")
    return batching.row(data, sims, claim, workers_label)


def elastic_row(data, sims):
    claim = claim_text("section 4.3", "A dynamic worker count: fewer active threads when "
                       "steals fail, more when queues grow")
    setup = "a design recommendation; no figure given"
    comps = families.of(data).family("elastic")
    if not comps:
        return [claim, setup, "not in this run (no variant deactivates workers, as `elastic` "
                "does)", "-", "not measured"]
    v = comps[0].variant                 # the first variant that deactivates workers
    comps = [c for c in comps if c.variant == v]
    wall = next((c for c in comps if c.metric != "proc_cpu_s"), None)
    cpu = next((c for c in comps if c.metric == "proc_cpu_s"), None)
    _, d = families.of(data).article_case()

    def said(c, what):
        return (f"{what} {c.text()}: " + ("less" if c.verdict == cmp.BETTER else "more"
                                          if c.verdict == cmp.WORSE else c.verdict_words()))

    here = (f"measured here, {workers_label(wall.workers)}, the article scenario at d = "
            f"{d:g}: `{v}` / `{REPRESENTATIVE}`: " + "; ".join(
                said(c, w) for c, w in ((wall, "wall time"), (cpu, "CPU time")) if c))
    sim = []
    setting = first_setting(data)
    for p in (q for q in panels(data, sims, setting) if q.simulated) if setting else ():
        dd = p.peak_d()
        e, r = p.cell(v, dd), p.cell(REPRESENTATIVE, dd)
        if e and r:
            err = p.validation_error()
            sim.append(f"SIMULATED {p.label.split(': ', 1)[-1]}: `{v}` takes "
                       f"{e.median() / r.median():.2f}x the wall time of `{REPRESENTATIVE}` "
                       "(validation error of `article` on this machine's model: "
                       + (f"{err * 100:.1f}%" if err is not None else "not measured") + ")")
    parts = [f"{what}: {c.verdict_words()}" for c, what in ((wall, "wall"), (cpu, "CPU")) if c]
    verdict = ("**No cost in time**: " if wall and wall.verdict != cmp.WORSE else
               "**A trade, not a gain**: ") + "; ".join(parts)
    return [claim, setup, here, "; ".join(sim) or "not simulated", verdict]


def answer_rows(data, sims):
    return [imbalance_row(data, sims), batching_row(data, sims), elastic_row(data, sims)]
