"""`./run.py publish RUN`: prune a run to its lean, published form.

A published run keeps what cannot be regenerated: raw/ (the benchmarks' JSON, files of
GZIP_MIN_BYTES or more gzip-compressed; every reader accepts `.json.gz`), meta.json,
plan.json, status.json and REPORT.md (a simulated run: SIMULATED.md, its report, and
machine.json and model.flat, the model it ran on); in plots/<run-id>/ it keeps the
figures that README.md or the run's report embed (`![...](...)`) and every why_* figure,
each PNG with its SVG.  Everything else (logs/, results.csv, samples.csv, the
other figures, each figure's .dat/.gp) is dropped: `./run.py plot RUN` and `./run.py report RUN`
regenerate it.  No file keeps an absolute path of the machine that measured (the roots
found in the raw files' "executable" and the given root are made relative).

A run measured with uncommitted changes to the measured code (config.measured_code,
meta.json `git.code_dirty`), or
one that predates that record, is refused; `--prune-only` prunes it anyway and leaves
it marked `"publishable": false`."""

import gzip
import json
import os
import re
import shutil

from . import targetfile
from .answers import ANSWER_HEADERS, answer_rows
from .config import GZIP_MIN_BYTES, PROG, UsageError
from .files import atomic_write_json, atomic_write_text, existing_raw, glob_json
from .fmt import format_table, now_iso
from .gbjson import BadResultFile, read_text_maybe_gz
from .machine import publishable
from .rundata import load_companions, load_run, read_meta
from .rundir import LOCK_NAME
from .validate import errors_beside

# What a run directory may keep (besides raw/): the rest is removed.
KEPT_FILES = ("meta.json", "plan.json", "status.json", "REPORT.md", "differences.csv",
              "targets.json",
              "SIMULATED.md", "machine.json", "model.flat", "bands.json")  # these: simulated runs
# Files that hold text and are scanned and scrubbed of absolute paths.
TEXT_SUFFIXES = (".json", ".md", ".csv", ".txt", ".gp", ".dat", ".log", ".svg")
EMBED = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


def measuring_roots(run_dir, extra=()):
    """The absolute source roots that appear in the raw files: the part of each context's
    "executable" before /build/ (plus `extra`), longest first."""
    roots = {os.path.abspath(r) for r in extra if r}
    for path in glob_json(os.path.join(run_dir, "raw")):
        try:
            doc = json.loads(read_text(path) or "null")
        except (ValueError, RecursionError):
            continue
        exe = (doc.get("context") or {}).get("executable") if isinstance(doc, dict) else None
        if isinstance(exe, str) and exe.startswith("/") and "/build" in exe:
            roots.add(exe[:exe.index("/build")])
    return sorted((r for r in roots if r not in ("", "/")), key=len, reverse=True)


def read_text(path):
    """A file's text (gunzipped for .gz); None for one that cannot be read (a damaged
    raw file: run_publishable refuses such a run, --prune-only leaves it as it is)."""
    try:
        return read_text_maybe_gz(path)
    except BadResultFile:
        return None


def scrub(text, roots):
    """text with every `<root>/` made relative and a bare `<root>` replaced by '.'."""
    for root in roots:
        text = text.replace(root + "/", "").replace(root, ".")
    return text


def text_files(directory):
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(TEXT_SUFFIXES) or name.endswith(".json.gz"):
                yield os.path.join(dirpath, name)


def absolute_paths(directories, roots):
    """[(file, root)] for every file under the directories that still names a root."""
    found = []
    for directory in directories:
        if not os.path.isdir(directory):
            continue
        for path in text_files(directory):
            text = read_text(path) or ""
            found += [(path, r) for r in roots if r in text]
    return found


def write_gz(path, text):
    """gzip-compress text to path atomically (mtime 0: the same text gives the same bytes)."""
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0,
                                               filename="") as f:
        f.write(text.encode("utf-8"))
    os.replace(tmp, path)


def linked_files(doc_path, plots):
    """The files under `plots` that the Markdown file doc_path embeds as images (`![..](..)`;
    absolute paths)."""
    if not os.path.exists(doc_path):
        return set()
    with open(doc_path, encoding="utf-8") as f:
        text = f.read()
    base = os.path.dirname(os.path.abspath(doc_path))
    plots = os.path.abspath(plots)
    out = set()
    for target in EMBED.findall(text):
        path = os.path.normpath(os.path.join(base, target))
        if path.startswith(plots + os.sep):
            out.add(path)
    return out


def dir_size(directories):
    total = 0
    for directory in directories:
        for dirpath, _, filenames in os.walk(directory):
            total += sum(os.path.getsize(os.path.join(dirpath, n)) for n in filenames)
    return total


def publish_run(run_dir, plots, root, prune_only=False):
    """Prune run_dir (and its plots directory) to the published form; returns a summary
    dict.  UsageError when the run may not be published and prune_only is False."""
    meta = read_meta(run_dir)
    ok, why = run_publishable(run_dir)
    if not ok and not prune_only:
        raise UsageError(f"{os.path.basename(run_dir)} is not publishable: {why}; measure "
                         "again from a clean checkout (or prune it with --prune-only)")
    roots = measuring_roots(run_dir, [root])
    removed = 0
    # 1. what the raw files regenerate, and the logs
    for name in sorted(os.listdir(run_dir)):
        path = os.path.join(run_dir, name)
        if name == "raw" or name in KEPT_FILES or name == LOCK_NAME:  # its holder removes it
            continue
        removed += 1
        shutil.rmtree(path) if os.path.isdir(path) else os.unlink(path)
    # 2. raw files: relative paths, large ones compressed
    compressed = 0
    for path in list(glob_json(os.path.join(run_dir, "raw"))):
        text = read_text(path)
        if text is None:
            continue            # damaged: kept as it is (the run is not publishable)
        clean = scrub(text, roots)
        if path.endswith(".gz"):
            if clean != text:
                write_gz(path, clean)
        elif len(clean.encode("utf-8")) >= GZIP_MIN_BYTES:
            write_gz(path + ".gz", clean)
            os.unlink(path)
            compressed += 1
        elif clean != text:
            atomic_write_text(path, clean)
    # 3. the figures: those the README or the report link to, and every why_* figure
    #    (steals, parks, CPU: why a variant wins, the third question), each PNG with its SVG
    keep = set()
    for doc in (os.path.join(root, "README.md"), os.path.join(run_dir, "REPORT.md"),
                os.path.join(run_dir, "SIMULATED.md")):
        keep |= linked_files(doc, plots)
    keep |= {os.path.splitext(p)[0] + ".svg" for p in keep if p.endswith(".png")}
    if os.path.isdir(plots):
        keep |= {os.path.abspath(os.path.join(plots, n)) for n in os.listdir(plots)
                 if n.startswith("why_") and n.endswith((".png", ".svg"))}
    if os.path.isdir(plots):
        for dirpath, _, filenames in os.walk(plots):
            for name in filenames:
                path = os.path.join(dirpath, name)
                if os.path.abspath(path) not in keep:
                    os.unlink(path)
                    removed += 1
    # 4. the records: no absolute path; the publishable flag and when
    for name in KEPT_FILES:
        path = os.path.join(run_dir, name)
        if os.path.exists(path) and name != "meta.json":
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if scrub(text, roots) != text:
                atomic_write_text(path, scrub(text, roots))
    meta = json.loads(scrub(json.dumps(meta), roots))
    meta["publishable"] = ok
    meta["published"] = now_iso() if ok else None
    atomic_write_json(os.path.join(run_dir, "meta.json"), meta)
    left = absolute_paths([run_dir, plots], roots)
    if left:
        raise UsageError(f"{left[0][0]} still names {left[0][1]}")
    return dict(publishable=ok, why=why, compressed=compressed, removed=removed,
                bytes=dir_size([run_dir, plots]), roots=len(roots))


def run_publishable(run_dir):
    """(True, '') when the run may be published, else (False, why); UsageError when it
    is no run directory."""
    meta = read_meta(run_dir)
    if not meta:
        raise UsageError(f"{run_dir} has no meta.json: not a run directory")
    data = load_run(run_dir)
    ok, why = publishable(meta.get("git"), meta.get("bench_context") or {}, data.revisions)
    if ok:
        why = data_problem(data)
        ok = why is None
    return targets_publishable(run_dir, meta) if ok else (ok, why)


def data_problem(data):
    """Why a run's measurements cannot be published, naming the file, or None: a raw file
    that is missing, unreadable or truncated, a repetition with an error (a wrong answer,
    a time that is NaN, zero or negative), or a repetition recorded twice."""
    if data.skipped:
        return f"its raw file {data.skipped[0][1]}"
    for point in data.plan.get("points", []):
        path = existing_raw(os.path.join(data.run_dir, point["raw"]))
        if not os.path.exists(path):
            return f"its raw file {point['raw']} is missing (point {point['id']} not run)"
    for r in data.results:
        if r.errors:
            return (f"{r.source}: {r.benchmark} at {r.workers} workers has a repetition with "
                    f"an error ({r.errors[0]})")
        seen = set()
        for e in r.entries:
            if e.repetition in seen:
                return (f"{r.source}: {r.benchmark} at {r.workers} workers has repetition "
                        f"{e.repetition} twice")
            seen.add(e.repetition)
    return None


def targets_publishable(run_dir, meta):
    """(True, '') unless the run has a targets record that is unusable or measured other
    code than the run."""
    doc, why = targetfile.read(run_dir)
    if why:
        return False, f"{why}: measure them again (./run.py targets) or remove the file"
    why = doc and targetfile.stale(doc, meta.get("git"))
    if why:
        return False, f"its {targetfile.FILE} was {why}: measure them again (./run.py targets)"
    return True, ""


def cmd_publish(args, resolve_run, plots_dir):
    run_dir = resolve_run(args.run, args.root)
    plots = plots_dir(args.root, os.path.basename(os.path.normpath(run_dir)))
    summary = publish_run(run_dir, plots, args.root, args.prune_only)
    state = "published" if summary["publishable"] else f"pruned, NOT publishable ({summary['why']})"
    print(f"{PROG}: {os.path.relpath(run_dir)}: {state}; {summary['compressed']} raw file(s) "
          f"compressed, {summary['removed']} file(s) removed; run + plots now "
          f"{summary['bytes'] / 1e6:.2f} MB")
    return 0


# README.md's answer block: between these two lines, `./run.py publish` writes the
# published run's answer table (harness/driver/article.py), so a republish never
# hand-edits README.
ANSWERS_BEGIN = "<!-- answers: written by ./run.py publish from the published run -->"
ANSWERS_END = "<!-- answers: end -->"


# targets.json comparisons README's table leaves to the report
README_LEFT_TO_REPORT = ("imbalance",)


def answers_block(data, sims, root):
    """The lines between the markers: where the numbers come from, the table, the
    article figure."""
    rel = os.path.relpath(data.run_dir, root)
    m = data.meta
    where = (f"Measured by `{m.get('command', '?')}` on {m.get('cpu_model', '?')} "
             f"({m.get('cpus_usable', '?')} usable CPUs); SIMULATED columns from "
             + (", ".join(f"`{os.path.relpath(s.run_dir, root)}`" for s in sims) or "no model")
             + f". The whole report: [{rel}/REPORT.md]({rel}/REPORT.md).")
    lines = [where, "", format_table(ANSWER_HEADERS, answer_rows(data, sims), markdown=True)]
    figure = os.path.join(root, "plots", data.run_id, "article.png")
    if os.path.exists(figure):
        lines += [f"![the article's experiment: speedup over the per-thread-queue pool against "
                  f"the late submitters' delay, measured and SIMULATED]"
                  f"({os.path.relpath(figure, root)})", ""]
    doc = targetfile.read(data.run_dir)[0]
    if doc:
        # the imbalance rows repeat, per scenario and pool, what the table above answers:
        # README names them, the report lists them
        shown = dict(doc, comparisons=[c for c in doc["comparisons"]
                                       if c["comparison"] not in README_LEFT_TO_REPORT])
        left = [c for c in doc["comparisons"] if c["comparison"] in README_LEFT_TO_REPORT]
        # whom they compare against: the end of each row's "<scenario> vs <row>"
        against = list(dict.fromkeys(c["what"].rsplit(" vs ", 1)[-1] for c in left))
        against = [f"`{a}`" if a != "tbb" else "oneTBB" for a in against]
        lines += ["Against what users would pick (oneTBB, Go, Boost.Context, the textbook "
                  "mutex+condvar pool; harness/ref/README.md says how each is built): "
                  + targetfile.summary(doc, errors_beside(data.run_dir))
                  + (f"; the {len(left)} imbalance comparisons (per scenario, against "
                     f"{', '.join(against[:-1])}{' and ' if len(against) > 1 else ''}"
                     f"{against[-1]}) are in the report's \"Against what users would "
                     f"pick\"" if left else "") + ".", "",
                  format_table(targetfile.TABLE_HEADERS,
                               targetfile.table_rows(shown, errors_beside(data.run_dir)),
                               markdown=True)]
    return lines


def update_readme(root, run_dir):
    """Rewrite README.md's answer block from the run (and its companions); False when
    README has no block."""
    path = os.path.join(root, "README.md")
    if not os.path.exists(path):
        return False
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if ANSWERS_BEGIN not in text or ANSWERS_END not in text:
        return False
    head, rest = text.split(ANSWERS_BEGIN, 1)
    _, tail = rest.split(ANSWERS_END, 1)
    data = load_run(run_dir)
    block = "\n".join(answers_block(data, load_companions(data), root)).rstrip("\n")
    atomic_write_text(path, f"{head}{ANSWERS_BEGIN}\n{block}\n{ANSWERS_END}{tail}")
    return True
