"""./run.py publish: the lean form of a run (raw JSON, compressed when large, meta, plan,
status, REPORT.md, the embedded figures), no absolute path of the measuring machine in
any file, and the publishable flag (a dirty tree or an old run is refused)."""
import glob
import gzip
import json
import os

from harness.driver import publish, rundata

from conftest import cli


def sweep(root):
    p = cli("run", "--root", root, "--workers", "1,2", "--workloads", "fib", "--no-plot",
            "--quiet", "--variants", "chaselev,threadpool", "--repetitions", "2")
    assert p.returncode == 0, p.stderr
    (run_dir,) = glob.glob(os.path.join(root, "results", "*"))
    return run_dir, p.stderr


def all_text(directory):
    for path in publish.text_files(directory):
        yield path, publish.read_text(path)


FAKE_REV = "0123abc" + "0" * 33  # the revision fake_bench.py's binaries say they were built from


def mark_clean(run_dir):
    """meta.json as a run from a clean checkout records it."""
    path = os.path.join(run_dir, "meta.json")
    meta = json.load(open(path))
    meta["git"] = dict(rev=FAKE_REV, dirty=False, code_dirty=[], code_paths=["asm"])
    json.dump(meta, open(path, "w"))


def test_a_run_outside_git_is_not_publishable_and_publish_refuses_it(fake_root):
    run_dir, err = sweep(fake_root)
    assert "will not be publishable" in err
    meta = json.load(open(os.path.join(run_dir, "meta.json")))
    assert meta["publishable"] is False and meta["git"]["code_dirty"] is None
    p = cli("publish", "--root", fake_root, os.path.basename(run_dir))
    assert p.returncode == 2 and "not publishable" in p.stderr
    assert os.path.isdir(os.path.join(run_dir, "logs"))      # refused: nothing pruned


def test_publish_prunes_compresses_and_leaves_no_absolute_path(fake_root, monkeypatch):
    run_dir, _ = sweep(fake_root)
    mark_clean(run_dir)
    # the bench ran as ./build/<v>/bench: no absolute path even before publishing
    assert not any(fake_root in text for path, text in all_text(os.path.join(run_dir, "raw")))
    # a raw file written by an older driver names the binary by its absolute path
    (raw,) = glob.glob(os.path.join(run_dir, "raw", "chaselev", "workers-1", "fib.json"))
    doc = json.load(open(raw))
    doc["context"]["executable"] = os.path.join(fake_root, "build", "chaselev", "bench")
    json.dump(doc, open(raw, "w"))
    plots = os.path.join(fake_root, "plots", os.path.basename(run_dir))
    os.makedirs(plots)
    for name in ("kept.png", "kept.svg", "dropped.png", "dropped.svg", "kept.dat",
                 "why_fib_n-25.png", "why_fib_n-25.svg"):
        open(os.path.join(plots, name), "w").write(f"figure in {fake_root}\n" * (name == "kept.dat"))
    with open(os.path.join(run_dir, "REPORT.md"), "w") as f:
        f.write(f"# run in {fake_root}/results\n![a](../../plots/{os.path.basename(run_dir)}/kept.png)"
                f" [b](../../plots/{os.path.basename(run_dir)}/dropped.png)\n")
    before = rundata.load_run(run_dir)
    monkeypatch.setattr(publish, "GZIP_MIN_BYTES", 600)
    summary = publish.publish_run(run_dir, plots, fake_root)
    assert summary["publishable"] and summary["compressed"] > 0
    assert sorted(os.listdir(run_dir)) == ["REPORT.md", "meta.json", "plan.json", "raw",
                                           "status.json"]
    # the embedded figure and every why-figure (steals, parks, CPU), each with its SVG
    assert sorted(os.listdir(plots)) == ["kept.png", "kept.svg", "why_fib_n-25.png",
                                         "why_fib_n-25.svg"]
    assert glob.glob(os.path.join(run_dir, "raw", "**", "*.json.gz"), recursive=True)
    for path, text in all_text(run_dir):
        assert fake_root not in text, path
    assert json.loads(gzip.open(raw + ".gz", "rt").read() if os.path.exists(raw + ".gz")
                      else open(raw).read())["context"]["executable"] == "build/chaselev/bench"
    meta = json.load(open(os.path.join(run_dir, "meta.json")))
    assert meta["publishable"] is True and meta["published"]
    # every reader takes the compressed files: the same results, and resume reruns nothing
    after = rundata.load_run(run_dir)
    assert [(r.variant, r.workers, r.benchmark, r.summary()) for r in after.results] == \
        [(r.variant, r.workers, r.benchmark, r.summary()) for r in before.results]
    p = cli("run", "--root", fake_root, "--resume", run_dir, "--no-plot", "--quiet")
    assert p.returncode == 0 and "already done" in p.stderr, p.stderr
    p = cli("report", "--root", fake_root, "--no-plot", "--csv", run_dir)
    assert p.returncode == 0, p.stderr
    assert os.path.exists(os.path.join(run_dir, "results.csv"))


def test_prune_only_keeps_the_run_marked_not_publishable(fake_root):
    run_dir, _ = sweep(fake_root)
    p = cli("publish", "--root", fake_root, "--prune-only", os.path.basename(run_dir))
    assert p.returncode == 0, p.stderr
    assert "NOT publishable" in p.stdout
    assert not os.path.exists(os.path.join(run_dir, "logs"))
    assert json.load(open(os.path.join(run_dir, "meta.json")))["publishable"] is False


def test_a_dirty_code_tree_is_named_in_the_refusal():
    ok, why = publish.publishable(dict(rev="abc", code_dirty=[" M common/sched.c"]))
    assert not ok and "common/sched.c" in why
    ok, why = publish.publishable(dict(rev="abc", dirty=True))
    assert not ok and "predates" in why
    assert publish.publishable(dict(rev="abc", code_dirty=[]))[0]


def test_binaries_built_from_another_revision_are_named_in_the_refusal(fake_root):
    """The tree's revision is not enough: each bench records the revision it was built
    from, and a run whose binaries predate the tree's last commit did not measure it."""
    run_dir, _ = sweep(fake_root)
    mark_clean(run_dir)
    meta = json.load(open(os.path.join(run_dir, "meta.json")))
    meta["git"]["rev"] = "fedcba9" + "0" * 33
    json.dump(meta, open(os.path.join(run_dir, "meta.json"), "w"))
    p = cli("publish", "--root", fake_root, os.path.basename(run_dir))
    assert p.returncode == 2, p.stderr
    assert "another revision" in p.stderr and "chaselev: 0123abc" in p.stderr, p.stderr
    assert os.path.isdir(os.path.join(run_dir, "logs"))      # refused: nothing pruned
    git = dict(rev="0123abc" + "0" * 33, code_dirty=[])
    assert publish.publishable(git, {"chaselev": {"git_rev": "0123abc"}})[0]
    for built in ("0123abc-dirty", "0123ab", "unknown", None):
        ok, why = publish.publishable(git, {"chaselev": {"git_rev": built}})
        assert not ok and f"chaselev: {built or 'unknown'}" in why, built
    # a rebuild between two points of one run: its later raw files name the other revision
    ok, why = publish.publishable(git, {"chaselev": {"git_rev": "0123abc"}},
                                  {"chaselev": ["0123abc", "fedcba9"]})
    assert not ok and "chaselev: fedcba9" in why
    # a run that never finished records no binary at all: not publishable either
    ok, why = publish.publishable(git, {})
    assert not ok and "did not finish" in why
    assert publish.publishable(git)[0]            # a run's start: not known yet


def test_a_raw_file_from_another_build_is_caught_at_publish(fake_root):
    run_dir, _ = sweep(fake_root)
    mark_clean(run_dir)
    (raw,) = glob.glob(os.path.join(run_dir, "raw", "threadpool", "workers-2", "fib.json"))
    doc = json.load(open(raw))
    doc["context"]["git_rev"] = "fedcba9"
    json.dump(doc, open(raw, "w"))
    p = cli("publish", "--root", fake_root, os.path.basename(run_dir))
    assert p.returncode == 2 and "threadpool: fedcba9" in p.stderr, p.stderr


def test_run_publish_refuses_a_run_outside_git_after_measuring(fake_root):
    p = cli("run", "--root", fake_root, "--workers", "1", "--workloads", "fib", "--no-plot",
            "--quiet", "--variants", "chaselev", "--publish")
    assert p.returncode == 2 and "not publishable" in p.stderr, p.stderr
    (run_dir,) = glob.glob(os.path.join(fake_root, "results", "*"))
    assert os.path.isdir(os.path.join(run_dir, "logs"))     # measured, kept whole


def test_a_simulated_run_keeps_its_report_its_model_and_the_figures_it_embeds(tmp_path):
    root = str(tmp_path)
    run_dir = os.path.join(root, "results", "sim-x")
    plots = os.path.join(root, "plots", "sim-x")
    os.makedirs(os.path.join(run_dir, "raw"))
    os.makedirs(os.path.join(run_dir, "logs"))
    os.makedirs(plots)
    json.dump(dict(simulated=True, git=dict(rev="0" * 40, dirty=False, code_dirty=[]),
                   bench_context={"chaselev": {"git_rev": "0000000"}}),
              open(os.path.join(run_dir, "meta.json"), "w"))
    for name in ("plan.json", "status.json", "machine.json"):
        json.dump({}, open(os.path.join(run_dir, name), "w"))
    open(os.path.join(run_dir, "model.flat"), "w").write("pus 16\n")
    open(os.path.join(run_dir, "logs", "a.log"), "w").write("log\n")
    open(os.path.join(run_dir, "SIMULATED.md"), "w").write("![s](../../plots/sim-x/sim.png)\n")
    for name in ("sim.png", "other.png"):
        open(os.path.join(plots, name), "w").write("")
    publish.publish_run(run_dir, plots, root)
    assert sorted(os.listdir(run_dir)) == ["SIMULATED.md", "machine.json", "meta.json",
                                           "model.flat", "plan.json", "raw", "status.json"]
    assert os.listdir(plots) == ["sim.png"]
