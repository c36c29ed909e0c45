"""Every comparison a run states, computed once (compare.Comparison), in named families:
the report's tables, README's answers, the figures and differences.csv read them here.

The families (each corrected on its own, compare.py: its m brackets hold together at 95%):

    article              every variant over the per-thread-queue pool (roles.py)
                         on each of the article workload's settings, at the run's largest
                         worker count, on the experiment's window (window_s)
    imbalance vs B       every variant over B (each pool and reference row) on each
                         scenario of the imbalance workload, at every worker count
    all vs B, N workers  every variant over B on every benchmark at N workers: B = the
                         report's --against (default the global-queue pool) at every N,
                         and each pool and reference row at the largest N (the heat maps)
    A/A                  the A/A twin (config.AA_VARIANT run a second time under another
                         label, interleaved with the rest) over its original, on every
                         benchmark at every worker count: every one should be undecided
    article, its design  the article's own scheduler stealing (`ws`) over its no-steal
                         mode (`ws-nosteal`) on each of the article workload's settings,
                         at the run's largest worker count, on the window (section 5)
    batching             section 4.2 at the largest worker count (batching.py): batch
                         submission over one task at a time on config.BATCH_SUBMIT_ROWS,
                         and each batch-stealing row over its k = 1 row, against the
                         article's 20% (threshold 1.2)
    elastic              each variant that deactivates workers (roles.py: `elastic`) /
                         config.REPRESENTATIVE, wall (window) and CPU time, on the
                         article's case at the largest worker count

A speedup is base time / variant time (higher: the variant is faster); elastic's is
elastic's time / the representative's (lower: elastic takes less)."""

from . import compare as cmp
from .config import (ARTICLE_DESIGN_POOL, ARTICLE_DESIGN_STEALING, ARTICLE_WORKLOAD,
                     CLAIM_WORKLOAD, REPRESENTATIVE)

ARTICLE_METRIC = "window_s"
AA = "A/A"
ARTICLE_DESIGN = "article, its design"


def all_family(base, workers):
    return f"all vs {base}, {workers} worker" + ("" if workers == 1 else "s")


def imbalance_family(base):
    return f"imbalance vs {base}"


def metric_of(*results, metric=ARTICLE_METRIC):
    """`metric` where every result reports it, else the wall time."""
    return metric if all(r.summary(metric)["n"] for r in results) else "real_time_s"


class RunComparisons:
    """The comparisons of one run (rundata.RunData), every family closed."""

    def __init__(self, data, against=None):
        self.data = data
        self.table = data.index()
        self.workers = data.workers()
        self.top = max(self.workers) if self.workers else None
        self.twins = data.twins()
        self.variants = data.variants()          # without the A/A twin
        self.roles = data.roles()
        # the rows of the batching experiment alone are no base (roles.batch_only)
        refs = {r.variant for r in data.results if r.reference} - self.roles.batch_only()
        self.pools = self.roles.pools(self.variants)
        self.article_pool = self.roles.article_pool(self.variants)
        self.bases = self.pools + sorted(refs)
        self.against = against or next(iter(self.pools), None)
        self.all = []
        self._article()
        self._imbalance()
        self._all_vs()
        self._aa()
        self._batching()
        self._elastic()
        cmp.close(self.all)
        self.by = {}
        for c in self.all:
            self.by[(c.family, c.benchmark, c.base, c.variant, c.workers)] = c

    def _add(self, family, base_r, var_r, metric="real_time_s", **kw):
        if base_r is None or var_r is None:
            return
        c = cmp.compare(family, base_r.values(metric), var_r.values(metric),
                        benchmark=base_r.benchmark, workers=base_r.workers,
                        base=base_r.variant, variant=var_r.variant, metric=metric, **kw)
        if c:
            self.all.append(c)

    def get(self, family, benchmark, base, variant, workers):
        return self.by.get((family, benchmark, base, variant, workers))

    def family(self, name):
        return [c for c in self.all if c.family == name]

    def others(self, base):
        return [v for v in self.variants if v != base]

    def _article(self):
        for bench, cells in sorted(self.table.items()):
            if bench.split("/", 1)[0] != ARTICLE_WORKLOAD:
                continue
            base = cells.get((self.article_pool, self.top))
            for v in self.others(self.article_pool) if base else ():
                r = cells.get((v, self.top))
                if r is not None and not r.reference:   # the bthread designs
                    self._add("article", base, r, metric_of(base, r))
            base = cells.get((ARTICLE_DESIGN_POOL, self.top))
            r = cells.get((ARTICLE_DESIGN_STEALING, self.top))
            if base and r:                              # the article's own design
                self._add(ARTICLE_DESIGN, base, r, metric_of(base, r))

    def _imbalance(self):
        for base in self.bases:
            for bench, cells in sorted(self.table.items()):
                if bench.split("/", 1)[0] != CLAIM_WORKLOAD:
                    continue
                for w in self.workers:
                    for v in self.others(base):
                        self._add(imbalance_family(base), cells.get((base, w)), cells.get((v, w)))

    def _all_vs(self):
        plan = [(self.against, w) for w in self.workers] if self.against else []
        plan += [(b, self.top) for b in self.bases if (b, self.top) not in plan]
        for base, w in plan:
            for bench, cells in sorted(self.table.items()):
                for v in self.others(base):
                    self._add(all_family(base, w), cells.get((base, w)), cells.get((v, w)))

    def _aa(self):
        for twin, original in self.twins.items():
            for bench, cells in sorted(self.table.items()):
                for w in self.workers:
                    self._add(AA, cells.get((original, w)), cells.get((twin, w)))

    def _batching(self):
        from . import batching   # it imports this module
        self.all += batching.measured(self.data)

    def article_case(self):
        """(benchmark, d) of the article's case: its first setting's swept d nearest the
        ideal's peak (article.py), at the largest worker count."""
        from .article import first_setting, panels   # article imports this module
        setting = first_setting(self.data)
        if setting is None:
            return None, None
        ps = [p for p in panels(self.data, [], setting)]
        if not ps:
            return None, None
        d = ps[0].peak_d()
        return ps[0].benches.get(d), d

    def _elastic(self):
        deactivating = self.roles.deactivating(self.variants)
        if not deactivating:
            return
        bench, _ = self.article_case()
        cells = self.table.get(bench, {})
        c = cells.get((REPRESENTATIVE, self.top))
        for v in deactivating:
            e = cells.get((v, self.top))
            if e is None or c is None:
                continue
            for metric in (metric_of(e, c), "proc_cpu_s"):
                if e.summary(metric)["n"] and c.summary(metric)["n"]:
                    x = cmp.compare("elastic", e.values(metric), c.values(metric),
                                    higher_is_better=False, benchmark=bench, workers=self.top,
                                    base=REPRESENTATIVE, variant=v, metric=metric)
                    if x:
                        self.all.append(x)


def of(data, against=None):
    """The run's comparisons, computed once per RunData (and --against)."""
    cache = data.__dict__.setdefault("_comparisons", {})
    if against not in cache:
        cache[against] = RunComparisons(data, against)
    return cache[against]
