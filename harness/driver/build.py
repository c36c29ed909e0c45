"""The build: the names of variants, references and workloads asked from make, and the
benchmark binaries under build/ with their own listings."""

import json
import os
import subprocess
import sys

from .config import BUNDLE_MARKER, FULL_ENV, PROG, UsageError
from .proc import last_line, run_capture
from .roles import parse_policy


def read_bundle_marker(root):
    """The BUNDLE marker of a bundle's root as a dict, or None outside a bundle;
    UsageError when it is there but unreadable."""
    path = os.path.join(root, BUNDLE_MARKER)
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            marker = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: unreadable bundle marker ({e})") from None
    if not isinstance(marker, dict) or not isinstance(marker.get("variants"), list):
        raise UsageError(f"{path}: not a bundle marker (no list of variants)")
    return marker


def binary_policy(binary, cwd=None):
    """The policy words a bench or simbench prints (`--policy`), parsed; {} when the
    binary is not there or states none (a reference row without words)."""
    if not os.path.exists(binary):
        return {}
    rc, out, err = run_capture([binary, "--policy"], timeout=60, cwd=cwd)
    if rc != 0:
        raise UsageError(f"{os.path.relpath(binary, cwd or os.getcwd())} --policy failed: "
                         f"{last_line(err or out)}")
    return parse_policy(out)


class Build:
    """The source tree at `root`: asks make for names, finds the benchmark binaries."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self._lists = {}
        # A bundle (`make bundle`) names its lists in its marker and has no Makefile.
        self.bundle = read_bundle_marker(self.root)
        if self.bundle is not None:
            for target, key in (("list-variants", "variants"), ("list-references", "references"),
                                ("list-workloads", "workloads")):
                self._lists[target] = list(self.bundle.get(key) or [])

    def _make_env(self):
        # A parent make (`make run`) passes its flags and jobserver down; the listing
        # targets want neither.
        env = dict(os.environ)
        for key in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
            env.pop(key, None)
        return env

    def make_list(self, target, optional=False):
        """The lines `make -s <target>` prints.  An optional target that fails (an older
        build without it) gives an empty list; a required one raises UsageError."""
        if target not in self._lists and self.bundle is not None:
            raise UsageError(f"a bundle ({BUNDLE_MARKER}) cannot answer `make {target}`")
        if target not in self._lists:
            cmd = ["make", "-s", "--no-print-directory", "-C", self.root, target]
            rc, out, err = run_capture(cmd, timeout=120, env=self._make_env())
            if rc != 0:
                if not optional:
                    raise UsageError(f"`make {target}` in {self.root} failed: {last_line(err)}")
                out = ""
            self._lists[target] = [line.strip() for line in out.splitlines() if line.strip()]
        return self._lists[target]

    @property
    def variants(self):
        return self.make_list("list-variants")

    @property
    def references(self):
        return self.make_list("list-references", optional=True)

    @property
    def workloads(self):
        return self.make_list("list-workloads")

    def binary(self, name, reference):
        """build/<variant>/bench, or build/ref/<name>/bench for a reference."""
        if reference:
            return os.path.join(self.root, "build", "ref", name, "bench")
        return os.path.join(self.root, "build", name, "bench")

    def make(self, targets, show="always"):
        """Run `make <targets>`; True on success.  show: "always" (announced, its output
        on the terminal), "failure" (silent unless it fails: bringing built binaries up
        to date), "never" (a build that may fail and is then skipped with a warning).
        A bundle has nothing to build: False."""
        if self.bundle is not None:
            print(f"{PROG}: a bundle builds nothing (missing: {' '.join(targets)})", file=sys.stderr)
            return False
        cmd = ["make", "-s", "--no-print-directory", "-C", self.root] + list(targets)
        if show == "always":
            print(f"{PROG}: building: make {' '.join(targets)}", file=sys.stderr)
        try:
            p = subprocess.run(cmd, env=self._make_env(), text=True,
                               stdout=None if show == "always" else subprocess.PIPE,
                               stderr=None if show == "always" else subprocess.STDOUT)
        except OSError as e:
            raise UsageError(f"cannot run make: {e}") from e
        if p.returncode != 0 and show == "failure":
            print(f"{PROG}: make {' '.join(targets)} failed:\n{p.stdout}", file=sys.stderr, end="")
        return p.returncode == 0

    def policy(self, variant, reference=False):
        """What the variant's policy does, as its bench prints it (`bench --policy`,
        bthread_get_policy): {"steals": 1, "steal_batch": 4, ...}; {} when the bench is
        not built.  The driver selects by these properties, never by a variant's name."""
        return binary_policy(self.binary(variant, reference), self.root)

    def list_benchmarks(self, binary, full):
        """The benchmark names the binary lists (`--benchmark_list_tests`), in its order."""
        env = dict(os.environ)
        if full:
            env[FULL_ENV] = "1"
        cmd = [binary, "--workers", "1", "--benchmark_list_tests=true"]
        rc, out, err = run_capture(cmd, timeout=120, env=env, cwd=self.root)
        if rc != 0:
            raise UsageError(f"{os.path.relpath(binary, self.root)} --benchmark_list_tests "
                             f"failed: {last_line(err or out)}")
        return [line.strip() for line in out.splitlines() if line.strip()]
