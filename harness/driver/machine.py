"""The machine record of a run (meta.json): CPU, topology, kernel, compiler, git
revision, and the parts of the bench binaries' JSON contexts worth keeping."""

import os
import platform
import shutil
import socket
import sys

from .config import ROOT, measured_code
from .proc import run_capture, usable_cpus


def cpu_model():
    """The CPU's model name from /proc/cpuinfo (or what platform knows)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware", "cpu model"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def topology_summary():
    """hwloc's console view of the machine (without I/O devices), or None."""
    for tool in ("hwloc-ls", "lstopo-no-graphics"):
        if shutil.which(tool):
            rc, out, _ = run_capture([tool, "--of", "console", "--no-io"], timeout=30)
            if rc == 0 and out.strip():
                return out[:20000]
    return None


def compiler_version():
    cc = os.environ.get("CC", "cc")
    rc, out, _ = run_capture([cc, "--version"], timeout=30)
    return out.splitlines()[0].strip() if rc == 0 and out.strip() else None


def git_info(root, simulated=False):
    """rev (HEAD), dirty (any uncommitted change), code_dirty (the uncommitted changes to
    the measured code, config.measured_code, a list of `git status --porcelain` lines;
    None without git)."""
    rc, out, _ = run_capture(["git", "-C", root, "rev-parse", "HEAD"], timeout=30)
    rev = out.strip() if rc == 0 else None
    rc, out, _ = run_capture(["git", "-C", root, "status", "--porcelain"], timeout=30)
    dirty = bool(out.strip()) if rc == 0 else None
    paths = measured_code(simulated)
    rc, out, _ = run_capture(["git", "-C", root, "status", "--porcelain", "--"] + paths,
                             timeout=30)
    code_dirty = [line for line in out.splitlines() if line.strip()] if rc == 0 and rev else None
    return dict(rev=rev, dirty=dirty, code_dirty=code_dirty, code_paths=paths)


def code_changes(rev, head="HEAD", simulated=False, root=None):
    """Files of the measured code (config.measured_code: what the benches, the reference
    rows and, for a simulated run, the simulator compile, and its machine models) that
    differ between revisions rev and head; None when git cannot tell (no checkout, or a
    revision this clone lacks).  Python and documentation change nothing a run
    measured."""
    rc, out, _ = run_capture(["git", "-C", root or ROOT, "diff", "--name-only", str(rev), head,
                              "--"] + measured_code(simulated), timeout=60)
    return out.split() if rc == 0 else None


def stale_binaries(rev, contexts, revisions=None):
    """The binaries that record another revision than `rev` (the tree's, in full), or one
    with uncommitted changes: ["chaselev: 7f4ac87-dirty", ...].  Each bench compiles in
    the revision it was built from (harness/bench/rules.mk); `contexts` holds one JSON context
    per binary, `revisions` every git_rev its raw files record (a rebuild between two
    points of one run shows there)."""
    seen = {}
    for name, context in (contexts or {}).items():
        seen.setdefault(name, set()).add(str((context or {}).get("git_rev") or "unknown"))
    for name, revs in (revisions or {}).items():
        seen.setdefault(name, set()).update(str(r) for r in revs)
    return [f"{name}: {built}" for name in sorted(seen) for built in sorted(seen[name])
            if built.endswith("-dirty") or len(built) < 7 or not rev.startswith(built)]


def publishable(git, contexts=None, revisions=None):
    """(True, '') when a run with this meta.json `git` record may be published, else
    (False, why).  With `contexts` (meta.json bench_context; {} when no bench recorded
    one) and `revisions` (every git_rev of its raw files), also that every binary was
    built from the tree's revision; contexts=None: not known yet (a run's start)."""
    if not isinstance(git, dict) or "code_dirty" not in git:
        return False, "it predates the recording of the code's state (meta.json git.code_dirty)"
    if not git.get("rev") or git.get("code_dirty") is None:
        return False, "it was not measured in a git checkout (no revision recorded)"
    if git["code_dirty"]:
        shown = "; ".join(git["code_dirty"][:5]) + (" ..." if len(git["code_dirty"]) > 5 else "")
        return False, (f"it was measured with uncommitted changes in "
                       f"the measured code: {shown}")
    if contexts is None:
        return True, ""
    if not contexts and not revisions:
        return False, ("no bench recorded the revision it was built from (meta.json "
                       "bench_context is empty: a run that did not finish? ./run.py run "
                       "--resume finishes it)")
    stale = stale_binaries(git["rev"], contexts, revisions)
    if stale:
        shown = "; ".join(stale[:5]) + (" ..." if len(stale) > 5 else "")
        return False, (f"its binaries were built from another revision than the tree's "
                       f"{git['rev'][:7]} ({shown}): rebuild (make all refs) and measure again")
    return True, ""


def machine_meta(root, bundle=None):
    """What the run was measured on and with.  In a bundle (its marker's dict), the git
    record and compiler are those of the build that made it."""
    uname = os.uname()
    return dict(
        host=socket.gethostname(),
        cpu_model=cpu_model(),
        cpus_online=os.cpu_count(),
        cpus_usable=usable_cpus(),
        topology=topology_summary(),
        kernel=f"{uname.sysname} {uname.release} {uname.version} {uname.machine}",
        compiler=bundle.get("compiler") if bundle else compiler_version(),
        build_env={k: os.environ[k] for k in ("CC", "CXX", "OPT", "EXTRA_CFLAGS", "CFLAGS")
                   if k in os.environ},
        git=dict(bundle.get("git") or {}, bundle=True) if bundle else git_info(root),
        python=sys.version.split()[0],
    )


def bench_context_summary(contexts):
    """The per-variant parts of the bench JSON contexts worth keeping in meta.json."""
    drop = {"date", "executable", "load_avg", "workers"}
    return {v: {k: c[k] for k in sorted(c) if k not in drop} for v, c in contexts.items()}
