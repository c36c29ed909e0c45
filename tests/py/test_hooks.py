"""make hooks V=<variant> (harness/driver/hooks.py): every hook of the table, resolved by
the preprocessor for every variant the build finds."""

from harness.driver import build, hooks
from harness.driver.config import ROOT


def test_every_variant_resolves_every_hook_of_the_table():
    for v in build.Build(ROOT).variants:
        rows = dict(hooks.resolve(v))
        assert "RQ_PUSH(w, t)" in rows and "IDLE_WAIT(w)" in rows, v
        assert rows["STEALING"] in ("0", "1"), (v, rows["STEALING"])


def test_the_resolved_table_names_the_components_bound():
    rows = dict(hooks.resolve("chaselev"))
    assert rows["RQ_PUSH(w, t)"].startswith("wsq_push"), rows["RQ_PUSH(w, t)"]
    assert rows["IDLE_WAIT(w)"] == "park_search_wait(w)"
    assert rows["REMOTE_SUBMIT(t)"] == "(not defined)"
