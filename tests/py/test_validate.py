"""`validate` (harness/driver/validate.py): the article workload is validated in the
experiment's window, and the record beside the table gives each SIMULATED answer the
validation error of its workload."""
import json
import os

import pytest

from harness.driver import validate

from test_article import write_run


def test_the_article_is_validated_in_its_window_and_recorded(tmp_path):
    root = str(tmp_path)
    real = write_run(root)
    sim = write_run(root, simulated=True, model="here")
    rows = validate.compare(real.run_dir, sim.run_dir)
    assert rows and all(r["benchmark"].startswith("article/") for r in rows)
    # the window (75 ms for the pool at d = 0.5), not the wall time (75.5 ms)
    pool = next(r for r in rows if r["variant"] == "affinity" and "delay_pct:50/" in r["benchmark"])
    assert pool["measured_s"] == pytest.approx(0.075)
    out = os.path.join(root, "results", "validation", "sim-here-1.md")
    validate.write(real.run_dir, sim.run_dir, out)
    record = json.load(open(out[:-3] + ".json"))
    assert record["format"] == validate.RECORD_FORMAT and "article" in record["workloads"]
    assert validate.errors_beside(real.run_dir) == record["workloads"]
    # the newest record wins; an unreadable one is passed over
    with open(os.path.join(root, "results", "validation", "sim-here-2.json"), "w") as f:
        json.dump(dict(record, sim="sim-here-2", workloads={"article": 0.5}), f)
    with open(os.path.join(root, "results", "validation", "sim-here-3.json"), "w") as f:
        f.write("[" * 100000)
    assert validate.errors_beside(real.run_dir) == {"article": 0.5}
