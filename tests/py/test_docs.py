"""Every list of names in the documentation and in the driver agrees with the build: the
variants (`make list-variants`), workloads (`make list-workloads`) and reference rows
(`make list-references`) that README.md, variants/README.md, harness/ref/README.md and
plots/README.md name, and the few names the Python side keeps (the baselines, the
workloads that use the calibrated kernel, the reference rows' workloads).  A variant,
workload or reference added or removed without its documentation fails here."""
import glob
import os
import re

import pytest

from harness.driver import build, config
from harness.driver import refcheck
from harness.driver.roles import POOL_KINDS, Roles

from conftest import ROOT


@pytest.fixture(scope="module")
def tree():
    return build.Build(ROOT)


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def section(rel, pattern):
    """The first group of pattern (multi-line, dot matches newlines) in the file."""
    m = re.search(pattern, read(rel), flags=re.S | re.M)
    assert m, f"{rel}: no text matching {pattern!r} (was the list moved or reworded?)"
    return m.group(1)


def names(text, filler=()):
    """The names of a prose list: 'a, b and c; the baselines d' -> {a, b, c, d}."""
    return {w for w in re.split(r"[\s,;`/]+", text) if w and w not in filler}


def same_names(documented, built, where, what):
    """documented == built, or a message naming the file and what to add or remove."""
    missing, extra = sorted(set(built) - documented), sorted(documented - set(built))
    assert not missing and not extra, (
        f"{where}: " + "; ".join(
            ([f"add the {what} {', '.join(missing)}"] if missing else []) +
            ([f"remove {', '.join(extra)} (no such {what} is built)"] if extra else [])))


def test_readme_layout_names_every_variant_and_workload(tree):
    listed = section("README.md", r"^variants/ +one variant\.h per policy \(see "
                                  r"variants/README\.md\): (.*?)\n\S")
    same_names(names(listed, {"the", "baselines"}), tree.variants,
               "README.md, the layout's variants/ line", "variant")
    listed = section("README.md", r"^workloads/ +(.*?): plain C")
    same_names(names(listed), tree.workloads, "README.md, the layout's workloads/ line",
               "workload")


def policy_hooks():
    """The hooks common/policy.h knows: those it gives a default or requires (#ifndef,
    defined()), and the optional ones sched.c tests with #ifdef."""
    header, core = read("common/policy.h"), read("common/sched.c")
    hooks = set(re.findall(r"^#ifndef (\w+)$", header, re.M))
    hooks |= set(re.findall(r"defined\((\w+)\)", header))
    hooks |= set(re.findall(r"^#ifdef ([A-Z]\w+)$", core, re.M)) - {"SB_TSAN", "SB_ASAN"}
    return hooks - {"SCHEDBENCH_POLICY_H"}


def test_variants_readme_hook_table_matches_the_policy_header():
    table = section("variants/README.md", r"^\| hook \| meaning \| default \|\n(.*?)\n\n")
    listed = set()
    for row in table.splitlines()[1:]:
        first = row.split("|")[1]
        listed |= set(re.findall(r"`([A-Z_]+)", first))
    hooks = policy_hooks()
    assert {"RQ_PUSH", "IDLE_WAIT", "REMOTE_SUBMIT", "WORKER_ON_START"} <= hooks
    missing, extra = sorted(hooks - listed), sorted(listed - hooks)
    assert not missing and not extra, (
        "variants/README.md, the hook table: " + "; ".join(
            ([f"add a row for {', '.join(missing)} (common/policy.h has it)"] if missing
             else []) +
            ([f"remove {', '.join(extra)} (common/policy.h has no such hook)"] if extra
             else [])))


def test_every_default_a_component_header_gives_is_a_hook_of_the_policy_header():
    """A component that reads a name it lets a variant.h define (#ifndef NAME) is a hook:
    policy.h, the one contract, must list it (a sizing knob only a test overrides is
    named there as such)."""
    contract = read("common/policy.h")
    unlisted = []
    for path in sorted(glob.glob(os.path.join(ROOT, "common", "*.h"))):
        text = open(path, encoding="utf-8").read()
        for name in re.findall(r"^#ifndef (\w+)$", text, re.M):
            if name.startswith(("SCHEDBENCH_", "SB_")):  # header guards, build detection
                continue
            if not re.search(rf"\b{name}\b", contract):
                unlisted.append(f"{os.path.basename(path)}: {name}")
    assert not unlisted, "common/policy.h does not list: " + ", ".join(unlisted)


def test_variants_readme_has_a_paragraph_per_variant(tree):
    text = section("variants/README.md", r"^## The variants\n(.*?)^## ")
    same_names(set(re.findall(r"^\*\*(\w+)\*\*", text, flags=re.M)), tree.variants,
               "variants/README.md, '## The variants' (a paragraph starting **name**)",
               "variant")


def test_reference_rows_are_named_where_they_are_listed(tree):
    refs = set(tree.references)
    assert refs, "make list-references lists nothing"
    assert names(section("README.md", r"^  ref/ +reference rows (.*?) \("), {"and"}) == refs
    table = section("harness/ref/README.md", r"^(\| row \|.*?)\n\n")
    assert set(re.findall(r"^\| `([\w-]+)` \|", table, flags=re.M)) == refs
    assert names(section("harness/ref/README.md", r"make list-references +# (.*?)$")) == refs
    assert names(section("harness/ref/README.md", r"`variant` \((.*?)\)")) == refs


def test_reference_workloads(tree):
    """refcheck's list = the workloads harness/ref/ref.h declares a ref_<workload> for
    = what README.md and harness/ref/README.md say the rows run."""
    expected = set(refcheck.WORKLOADS)
    declared = set(re.findall(r"\bref_(\w+?)(?:_step)?\(", read("harness/ref/ref.h")))
    assert declared & set(tree.workloads) == expected
    assert names(section("README.md", r"own scheduler\)\n +running (.*?)\n")) == expected
    assert names(section("harness/ref/README.md", r"^Workloads: (.*?) \(")) == expected
    without = re.findall(r"^REF_WITHOUT_\w+ *:= *(.*)$", read("harness/ref/rules.mk"), re.M)
    assert without and set(" ".join(without).split()) <= expected


def test_every_variants_option_in_the_docs_names_real_variants(tree):
    known = set(tree.variants) | set(tree.references)
    for path in glob.glob(os.path.join(ROOT, "**", "*.md"), recursive=True):
        rel = os.path.relpath(path, ROOT)
        if rel.startswith(("results/2", "plots/2", "build")):
            continue                      # reports of past runs say what they ran
        for listed in re.findall(r"--variants[ =]([\w,]+)", read(rel)):
            assert set(listed.split(",")) <= known, (rel, listed)


def test_the_docs_name_the_pools_the_policies_make(tree):
    # the baselines are the variants whose policy never steals (roles.py), and
    # plots/README.md names exactly those
    policies = {v: tree.policy(v) for v in tree.variants}
    if not all(policies.values()):
        pytest.skip("the benches are not built (make all): their policies are unknown")
    pools = Roles(policies).pools()
    assert len(pools) >= 3, pools      # a global queue, a round-robin split, per-thread queues
    assert {Roles(policies).kind(v)[0] for v in pools} == {k[0] for k in POOL_KINDS}
    listed = section("plots/README.md", r"; baselines (.*?) when the run has them")
    assert names(listed, {"and"}) == set(pools)


def test_the_claim_workload_exists(tree):
    assert config.CLAIM_WORKLOAD in tree.workloads
    assert config.CALIBRATION_FILTER.startswith(f"^{config.CLAIM_WORKLOAD}/")


def test_kernel_workloads_are_those_that_use_the_kernel(tree):
    """KERNEL_WORKLOADS (the sweep pins the busy-loop rate when it runs one of them) is
    kept in config.py: the bench binary cannot say which workloads use the rate before
    they run.  It must be exactly the workloads whose source calls a function of
    wl_kernel.h (directly, or through wl_defs.h, which includes it)."""
    kernel = set(re.findall(r"^static inline [^(]*?\b(wl_\w+)\(",
                            read(os.path.join("workloads", "wl_kernel.h")), re.M))
    assert "wl_kernel" in kernel
    users = {w for w in tree.workloads
             if kernel & set(re.findall(r"\b(wl_\w+)\(",
                                        read(os.path.join("workloads", w + ".c"))))}
    assert set(config.KERNEL_WORKLOADS) == users


def readme_prose():
    """README.md without the block `./run.py publish` writes (it links the published run
    by its id, which is a time stamp)."""
    from harness.driver.publish import ANSWERS_BEGIN, ANSWERS_END
    text = read("README.md")
    head, rest = text.split(ANSWERS_BEGIN, 1)
    return head + rest.split(ANSWERS_END, 1)[1]


# what a manual does not hold: dates, boots, sessions, commits, issue numbers
HISTORY = [r"\b20\d\d-\d\d-\d\d\b", r"\b(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\b", r"\b20\d{6}\b",
           r"\bthis (boot|session|stop|morning)\b", r"\bthe morning\b", r"\bengine before\b",
           r"\bissue \d+", r"#\d+\b", r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b",
           r"\b(yesterday|today|last (week|run|session))\b"]


# ... nor stories of how it got here: the run or engine "before", a boot, a revision
HISTORY_STORIES = [r"\b(validation|run|engine|model|boot|host|version)s? before\b",
                   r"\bpublished before\b", r"\bearlier (validation|run|boot|model|engine|"
                   r"version|stop)s?\b", r"\b(at|since|of) [0-9a-f]{7}\b",
                   r"\b(was|were) (tried|reverted|taken out)\b", r"\breverted\b",
                   r"\bnot published\b", r"\b(first|second) try\b",
                   r"\bon (one|another|the slower|the \w+'s) (boot|host)\b",
                   r"\b(morning|afternoon|evening)'s\b", r"\bnot committed\b",
                   r"\bno longer\b", r"\bused to\b"]

# the documents a user reads (reports of runs, under results/<id>/, are records, not manuals)
USER_DOCS = ["README.md", "harness/sim/README.md", "results/validation/README.md",
             "common/README.md", "asm/README.md", "workloads/README.md", "variants/README.md",
             "harness/README.md", "harness/bench/README.md", "harness/ref/README.md",
             "results/README.md",
             "plots/README.md"]
LINE_LIMITS = {"README.md": 180, "harness/sim/README.md": 250,
               "results/validation/README.md": 160}

# a run id names a run only as a path, results/<id>/ (its figures plots/<id>/) or
# results/validation/<sim-run>.md; a list under "## Published runs" may name them bare
RUN_PATH = r"\b(?:results|plots)/(?:[\w.-]+/)*[\w.-]*\b20\d{6}-\d{6}\b[\w.-]*/?"
RUN_ID = r"\b(?:sim-[\w]+-)?20\d{6}-\d{6}\b"


def manual_text(rel):
    """rel's prose as the history check reads it: README.md without its answer block, run
    ids only where a run is named (a results/ path, the Published runs list) taken out."""
    text = readme_prose() if rel == "README.md" else read(rel)
    text = re.sub(r"^## Published runs\n.*?(?=^## |\Z)",
                  lambda m: re.sub(RUN_ID, "RUN", m.group(0)), text, flags=re.S | re.M)
    return re.sub(RUN_PATH, "results/RUN", text)


@pytest.mark.parametrize("rel", USER_DOCS)
def test_docs_are_manuals_not_diaries(rel):
    """Dates, boots, revisions, issue numbers and before/after stories belong in git log."""
    text = manual_text(rel)
    found = [(m.group(0), p, text.count("\n", 0, m.start()) + 1)
             for p in HISTORY + HISTORY_STORIES
             for m in re.finditer(p, text, flags=re.I)]
    assert not found, f"{rel} names history (git log's): " + "; ".join(
        f"{w!r} (line ~{n}, {p})" for w, p, n in found[:12])
    if rel in LINE_LIMITS:
        assert len(text.splitlines()) <= LINE_LIMITS[rel], f"{rel}: a manual, not a log"


def test_readme_answer_block_is_there_for_publish_to_fill():
    from harness.driver.publish import ANSWERS_BEGIN, ANSWERS_END
    text = read("README.md")
    assert text.count(ANSWERS_BEGIN) == 1 and text.count(ANSWERS_END) == 1
    assert text.index(ANSWERS_BEGIN) < text.index(ANSWERS_END)


def test_readme_layout_names_every_folder():
    layout = section("README.md", r"^## Layout\n\n```\n(.*?)```")
    named = set(re.findall(r"^ *([\w.]+)/", layout, flags=re.M))
    tops = {d for d in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, d))
            and not d.startswith(("build", ".git", ".pytest")) and d != "__pycache__"}
    under = {d for d in os.listdir(os.path.join(ROOT, "harness"))
             if os.path.isdir(os.path.join(ROOT, "harness", d)) and d != "__pycache__"}
    assert tops <= named, f"README's layout misses {sorted(tops - named)}"
    assert under <= named, f"README's layout misses harness/{sorted(under - named)}"


def test_every_workload_parameter_is_documented(tree):
    """workloads/README.md names every workload the build has and every parameter of
    each, as the bench lists them."""
    doc = read(os.path.join("workloads", "README.md"))
    binary = tree.binary(tree.variants[0], False)
    if not os.access(binary, os.X_OK):
        pytest.skip(f"{binary} is not built")
    params = {}
    for name in tree.list_benchmarks(binary, True):
        wl = name.split("/", 1)[0]
        if wl in tree.workloads:
            params.setdefault(wl, set()).update(re.findall(r"/(\w+):", name))
    assert set(params) == set(tree.workloads)
    for wl, names in params.items():
        para = re.search(rf"^\*\*{wl}\*\* —(.*?)(?=^\*\*\w+\*\* —|^## )", doc, flags=re.S | re.M)
        assert para, f"workloads/README.md has no paragraph for {wl}"
        missing = [p for p in names if f"`{p}`" not in para.group(1)]
        assert not missing, f"workloads/README.md: {wl} does not document {missing}"
