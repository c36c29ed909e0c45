"""`make bundle`: one archive that measures on another Linux machine without a compiler,
root or -dev packages.

    python3 -m harness.driver.bundle --build build-bundle --out build/schedbench-bundle-x86_64.tar.gz

The aarch64 flavour (`make bundle ARCH=aarch64`: --arch aarch64 --no-references, and
--ldd naming the aarch64 loader's --list under qemu-user, since the host's ldd cannot
read an aarch64 binary) holds the variants' benches only: the reference rows are not
built for aarch64.

The binaries come from a build whose links carry an rpath of $ORIGIN/../lib and
$ORIGIN/../../lib (`make BUNDLE=1`, as a DT_RPATH so that it also serves the libraries'
own dependencies), so every bench finds the shared libraries copied beside it in
build/lib/ with LD_LIBRARY_PATH unset.  The archive unpacks to schedbench-bundle/:

    BUNDLE                       the marker: variants, references, workloads, the git
                                 record and compiler of the build (JSON); with it run.py
                                 uses these binaries and never calls make
    run.py, harness/driver/, harness/sim/*.py, harness/machines/
    build/<variant>/bench, build/ref/<name>/bench
    build/lib/                   what `ldd` lists for them, except the C library itself
                                 (libc, libm, libpthread, libdl, librt, the loader): the
                                 target's glibc must be as new as the build machine's
    results/, plots/             empty: the runs go there

The libraries are found by `ldd` of each binary: the full closure, as the loader
resolved it here."""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

from .config import BUNDLE_MARKER, PROG, measured_code
from .files import atomic_write_json
from .machine import compiler_version, git_info

# The C library: always the target's own (a copied libc would not match its loader).
SYSTEM_LIBS = re.compile(r"^(libc|libm|libpthread|libdl|librt|libutil|libresolv|ld-linux[-\w]*"
                         r"|linux-vdso|linux-gate)\.so")
NAME = "schedbench-bundle"


def make_list(root, target):
    out = subprocess.run(["make", "-s", "--no-print-directory", "-C", root, target],
                         capture_output=True, text=True, check=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def shared_libraries(binary, ldd=("ldd",)):
    """The paths ldd (or the command given, which prints the same) resolves for binary,
    less the C library's own."""
    out = subprocess.run(list(ldd) + [binary], capture_output=True, text=True, check=True).stdout
    libs = []
    for line in out.splitlines():
        m = re.match(r"\s*(\S+)\s+=>\s+(/\S+)", line)
        if m and not SYSTEM_LIBS.match(m.group(1)):
            libs.append((m.group(1), m.group(2)))
        elif "not found" in line:
            raise SystemExit(f"{PROG}: bundle: {binary}: {line.strip()}")
    return libs


def has_origin_rpath(binary):
    out = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True).stdout
    return "$ORIGIN/../lib" in out


def stage(root, build, dest, arch="x86_64", ldd=("ldd",), references=True, compiler=None):
    """Lay the bundle out in dest (a new directory); returns the marker's record."""
    variants = make_list(root, "list-variants")
    references = make_list(root, "list-references") if references else []
    workloads = make_list(root, "list-workloads")
    binaries = [(os.path.join(build, v, "bench"), os.path.join("build", v, "bench"))
                for v in variants]
    binaries += [(os.path.join(build, "ref", r, "bench"), os.path.join("build", "ref", r, "bench"))
                 for r in references]
    libs = {}
    for src, rel in binaries:
        if not os.access(src, os.X_OK):
            raise SystemExit(f"{PROG}: bundle: {src} is not built (make BUNDLE=1 BUILD={build} all refs)")
        if not has_origin_rpath(src):
            raise SystemExit(f"{PROG}: bundle: {src} has no $ORIGIN rpath (build it with BUNDLE=1)")
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dest, rel))
        for name, path in shared_libraries(src, ldd):
            libs[name] = path
    os.makedirs(os.path.join(dest, "build", "lib"))
    for name, path in sorted(libs.items()):
        shutil.copy2(os.path.realpath(path), os.path.join(dest, "build", "lib", name))
    shutil.copy2(os.path.join(root, "run.py"), dest)
    py = shutil.ignore_patterns("__pycache__", "*.pyc")
    os.makedirs(os.path.join(dest, "harness"))
    shutil.copy2(os.path.join(root, "harness", "__init__.py"), os.path.join(dest, "harness"))
    shutil.copytree(os.path.join(root, "harness", "driver"), os.path.join(dest, "harness", "driver"),
                    ignore=py)
    os.makedirs(os.path.join(dest, "harness", "sim"))
    for name in os.listdir(os.path.join(root, "harness", "sim")):
        if name.endswith(".py") or name == "README.md":
            shutil.copy2(os.path.join(root, "harness", "sim", name), os.path.join(dest, "harness", "sim"))
    shutil.copytree(os.path.join(root, "harness", "machines"), os.path.join(dest, "harness", "machines"))
    for d in ("results", "plots"):
        os.makedirs(os.path.join(dest, d))
    marker = dict(arch=arch, variants=variants, references=references, workloads=workloads,
                  git=git_info(root), compiler=compiler or compiler_version(), libraries=sorted(libs),
                  code_paths=measured_code())
    atomic_write_json(os.path.join(dest, BUNDLE_MARKER), marker)
    return marker


def write_bundle(root, build, out, **how):
    with tempfile.TemporaryDirectory() as tmp:
        dest = os.path.join(tmp, NAME)
        os.makedirs(dest)
        marker = stage(root, build, dest, **how)
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        part = out + ".part"
        with tarfile.open(part, "w:gz") as tar:
            tar.add(dest, arcname=NAME)
        os.replace(part, out)
    return marker


def main(argv=None):
    p = argparse.ArgumentParser(prog="harness.driver.bundle", description=__doc__.split("\n")[0])
    p.add_argument("--root", default=os.getcwd())
    p.add_argument("--build", required=True, help="the BUNDLE=1 build directory")
    p.add_argument("--out", required=True, help="the archive (.tar.gz)")
    p.add_argument("--arch", default=os.uname().machine, help="what the binaries run on")
    p.add_argument("--ldd", default="ldd", help="the command that lists a binary's libraries")
    p.add_argument("--no-references", action="store_true", help="the variants' benches only")
    p.add_argument("--compiler", help="the compiler's version line (default: the host cc's)")
    args = p.parse_args(argv)
    marker = write_bundle(os.path.abspath(args.root), os.path.join(args.root, args.build), args.out,
                          arch=args.arch, ldd=args.ldd.split(), references=not args.no_references,
                          compiler=args.compiler)
    size = os.path.getsize(args.out)
    print(f"{PROG}: bundle {args.out}: {len(marker['variants'])} variants, "
          f"{len(marker['references'])} references, {len(marker['libraries'])} shared "
          f"libraries, {size / 1e6:.1f} MB; on the target: tar xf {os.path.basename(args.out)}; "
          f"cd {NAME}; ./run.py run --workers 1,2,4,8,16")
    if marker["git"].get("code_dirty"):
        print(f"{PROG}: warning: built with uncommitted changes: its runs will not be publishable",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
