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
from harness.ref import refcheck

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


def test_readme_layout_names_every_variant_and_workload(tree):
    listed = section("README.md", r"^variants/ +one variant\.h per policy \(see "
                                  r"variants/README\.md\): (.*?)\n\S")
    assert names(listed, {"the", "baselines"}) == set(tree.variants)
    listed = section("README.md", r"^workloads/ +(.*?): plain C")
    assert names(listed) == set(tree.workloads)


def test_variants_readme_has_a_paragraph_per_variant(tree):
    text = section("variants/README.md", r"^## The variants\n(.*?)^## ")
    assert set(re.findall(r"^\*\*(\w+)\*\*", text, flags=re.M)) == set(tree.variants)


def test_reference_rows_are_named_where_they_are_listed(tree):
    refs = set(tree.references)
    assert refs, "make list-references lists nothing"
    assert names(section("README.md", r"^  ref/ +reference rows (.*?) \("), {"and"}) == refs
    table = section("harness/ref/README.md", r"^(\| row \|.*?)\n\n")
    assert set(re.findall(r"^\| `(\w+)` \|", table, flags=re.M)) == refs
    assert names(section("harness/ref/README.md", r"make list-references +# (.*?)$")) == refs
    assert names(section("harness/ref/README.md", r"`variant` \((.*?)\)")) == refs


def test_reference_workloads(tree):
    """refcheck's list = the workloads harness/ref/ref.h declares a ref_<workload> for
    = what README.md and harness/ref/README.md say the rows run."""
    expected = set(refcheck.WORKLOADS)
    declared = set(re.findall(r"\bref_(\w+?)(?:_step)?\(", read("harness/ref/ref.h")))
    assert declared & set(tree.workloads) == expected
    assert names(section("README.md", r"pthread pool\)\n +running (.*?)\n")) == expected
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


def test_baselines_and_claim_workload_exist(tree):
    assert set(config.BASELINES) <= set(tree.variants)
    listed = section("plots/README.md", r"; baselines (.*?) when the run has them")
    assert names(listed, {"and"}) == set(config.BASELINES)
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
