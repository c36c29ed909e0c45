"""Which part each variant plays in a run's report, read from what its policy does, never
from its name (the variants folder is the only list of variants).

Every bench prints its policy (`bench --policy`, bthread_get_policy in bthread.h) and
records it in each JSON context as "policy": "steals=0 keeps_tasks=1 ...".  From it:

  the pools       the variants that never steal: the baselines of the article's claim
                  (a traditional thread pool), each named by how it places a task
                  (POOL_KINDS): one shared queue, a round-robin split, per-thread queues
  the article's   the pool whose threads keep queues of their own (the article's
  pool            traditional pool, seed 003)
  deactivating    the variants that park workers for good when work is scarce (their
                  own comparison in families.py)
  batch stealing  section 4.2's rows: those whose policy is a batch-submission row's
                  (config.BATCH_SUBMIT_ROWS) in every word but steal_batch (batching.py);
                  the ones that exist for that experiment alone run its workload alone

A reference row (a runtime of harness/ref/, its context's "runtime") is never a pool:
the pools are variants.  It states only the words it has (the article's scheduler,
harness/ref/ws.c: steals and steal_batch).

A run records its variants' policies (the raw files' contexts; a simulated run's
meta.json "policies", written by simulate.start_sim from the tree's benches); a run that
recorded none falls back to the tree's build (Build.policy), and a variant whose policy is
known nowhere plays no part."""

from .config import BATCH_SUBMIT_ROWS, UsageError

# (the policy property that makes a pool of this kind, its name in sentences, in table
# headers, what it does): a pool takes the first kind whose property it has, in this order, which is
# also the reports' order of the pools
POOL_KINDS = (("one_queue", "the global-queue pool", "global queue",
               "one locked FIFO for every worker"),
              ("spreads_tasks", "the round-robin pool", "round-robin",
               "new tasks dealt to the workers in turn, never moved"),
              ("keeps_tasks", "the per-thread-queue pool", "per-thread queues",
               "each submitter's tasks stay on its own worker's queue, never moved"))
ARTICLE_POOL_KIND = "keeps_tasks"


def parse_policy(words):
    """{"steals": 1, ...} of `bench --policy`'s words ("steals=1 steal_batch=4 ..."); {}
    of anything else."""
    if not isinstance(words, str):
        return {}
    out = {}
    for field in words.split():
        key, sep, value = field.partition("=")
        if sep and value.lstrip("-").isdigit():
            out[key] = int(value)
    return out


def pool_kind(policy):
    """The POOL_KINDS entry of a variant that never steals, or None (a variant that
    steals, or whose policy is not known)."""
    if not policy or policy.get("steals", 1):
        return None
    return next((k for k in POOL_KINDS if policy.get(k[0])), None)


class Roles:
    """The parts the variants of one run play: {variant: policy dict} in, questions out."""

    def __init__(self, policies, references=()):
        self.policies = {v: p for v, p in policies.items() if p}
        self.references = set(references)

    @classmethod
    def of(cls, contexts, meta=None, build=None, variants=()):
        """From a run's raw contexts ({variant: context}), else its meta.json "policies",
        else, for `variants`, the build's benches (`build`: a Build, or None)."""
        policies = {v: parse_policy(c.get("policy")) for v, c in (contexts or {}).items()}
        references = {v for v, c in (contexts or {}).items() if c.get("runtime")}
        recorded = (meta or {}).get("policies")
        for v, words in (recorded.items() if isinstance(recorded, dict) else ()):
            policies[v] = policies.get(v) or parse_policy(words)
        for v in (variants if build is not None else ()):
            if not policies.get(v):
                try:
                    policies[v] = build.policy(v)      # {} where its bench is not built
                except UsageError:
                    policies[v] = {}
        return cls(policies, references)

    @classmethod
    def merged(cls, many):
        """The roles of several runs drawn together (a measured run and its SIMULATED
        companion): each variant's policy from the first run that knows it."""
        policies, references = {}, set()
        for r in many:
            for v, p in r.policies.items():
                policies.setdefault(v, p)
            references |= r.references
        return cls(policies, references)

    def kind(self, variant):
        return None if variant in self.references else pool_kind(self.policies.get(variant))

    def is_pool(self, variant):
        return self.kind(variant) is not None

    def pools(self, variants=None):
        """The pools among `variants` (default: every variant known), in POOL_KINDS order."""
        order = {k[0]: i for i, k in enumerate(POOL_KINDS)}
        chosen = [v for v in (self.policies if variants is None else variants) if self.is_pool(v)]
        return sorted(chosen, key=lambda v: (order[self.kind(v)[0]], v))

    def article_pool(self, variants=None):
        """The article's traditional pool (per-thread queues, never stealing), or None."""
        return next((v for v in self.pools(variants) if self.kind(v)[0] == ARTICLE_POOL_KIND),
                    None)

    def deactivating(self, variants=None):
        """The variants that deactivate workers when work is scarce."""
        return [v for v in (self.policies if variants is None else variants)
                if (self.policies.get(v) or {}).get("deactivates")]

    def batch_steal_rows(self):
        """{base: [(row, k)]}: for each row of config.BATCH_SUBMIT_ROWS whose policy is
        known, the rows whose policy is the base's in every word but steal_batch, with k
        their steal_batch ("half": half the victim's queue), by k."""
        out = {}
        for base in BATCH_SUBMIT_ROWS:
            mine = self.policies.get(base)
            if not mine or "steal_batch" not in mine:
                continue
            rows = []
            for row, p in self.policies.items():
                k = p.get("steal_batch")
                if row != base and k is not None and k != mine["steal_batch"] and \
                        {w: v for w, v in p.items() if w != "steal_batch"} == \
                        {w: v for w, v in mine.items() if w != "steal_batch"}:
                    rows.append((k if k > 0 else float("inf"), row, "half" if k < 0 else str(k)))
            out[base] = [(row, k) for _, row, k in sorted(rows)]
        return out

    def batch_part(self, variant):
        """A row's part in the batching experiment's quick sweep: "submit" (a row of
        config.BATCH_SUBMIT_ROWS), "steal" (a batch-stealing row), or None."""
        if variant in BATCH_SUBMIT_ROWS:
            return "submit"
        steal = {row for rows in self.batch_steal_rows().values() for row, _ in rows}
        return "steal" if variant in steal else None

    def batch_only(self):
        """The rows that exist for the batching experiment alone, whose other measurements
        would repeat their base's: the batch-stealing rows that take a fixed k > 1, and
        those of a reference row (the article's scheduler, whose rows serve its
        experiments).  A sweep that names no variants runs them on its workload alone;
        half (a policy of its own standing) runs everything."""
        return {row for base, rows in self.batch_steal_rows().items() for row, k in rows
                if k != "half" or base in self.references}

    def words(self, variant):
        """'the per-thread-queue pool', or the variant id for any other variant."""
        kind = self.kind(variant)
        return kind[1] if kind else variant

    def short(self, variant):
        """'per-thread queues' (a table's header), or the variant id."""
        kind = self.kind(variant)
        return kind[2] if kind else variant

    def does(self, variant):
        """What a pool does with a task, in words ('' for any other variant)."""
        kind = self.kind(variant)
        return kind[3] if kind else ""

    def pool_name(self, variant):
        """'the per-thread-queue pool (`affinity`)', or '`variant`'."""
        return f"{self.words(variant)} (`{variant}`)" if self.is_pool(variant) else f"`{variant}`"

    def column_name(self, variant, reference=False):
        """A variant as a table's column or row names it: a pool with what it is, a
        reference row marked as one."""
        if self.is_pool(variant):
            return f"{variant} ({self.short(variant)})"
        return f"{variant} (ref)" if reference else variant
