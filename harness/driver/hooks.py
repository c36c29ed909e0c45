"""The hook table of one variant as the compiler resolves it: every hook of
variants/README.md's table (the same hooks as common/policy.h, tests/py/test_docs.py
checks), expanded by the C preprocessor over common/policy.h with that variant's
variant.h, so a newcomer sees what each hook becomes without following the includes.

    make hooks V=elastic         (python3 -m harness.driver.hooks elastic)
"""

import os
import re
import subprocess
import sys
import tempfile

from .config import ROOT


def hook_calls(readme):
    """The hooks of the table as written there, e.g. 'RQ_PUSH(w, t)', 'STEALING'."""
    table = re.search(r"^\| hook \| meaning \| default \|\n\|[-|]+\|\n(.*?)\n\n", readme,
                      re.M | re.S)
    if not table:
        raise SystemExit("variants/README.md has no hook table")
    calls = []
    for row in table.group(1).splitlines():
        calls += re.findall(r"`([A-Z_]+(?:\([^`]*\))?)`", row.split("|")[1])
    return calls


def resolve(variant, cc="cc"):
    """[(hook as written, what it expands to)] for one variant."""
    vdir = os.path.join(ROOT, "variants", variant)
    if not os.path.isfile(os.path.join(vdir, "variant.h")):
        raise SystemExit(f"no variant {variant!r} (variants/*/variant.h; make list-variants)")
    with open(os.path.join(ROOT, "variants", "README.md"), encoding="utf-8") as f:
        calls = hook_calls(f.read())
    # one line per hook: its name as a string (never expanded), then the hook itself;
    # &moved and the like stay as written, as the core passes them
    body = '#include "policy.h"\n' + "".join(
        f'SBHOOK "{c}" :: {c.replace("&", "")}\n' for c in calls)
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as f:
        f.write(body)
    try:
        out = subprocess.run(
            [cc, "-E", "-P", "-D_GNU_SOURCE", f'-DVARIANT_NAME="{variant}"',
             "-I" + os.path.join(ROOT, "asm"), "-I" + os.path.join(ROOT, "common"),
             "-I" + vdir, f.name], capture_output=True, text=True, check=False)
    finally:
        os.unlink(f.name)
    if out.returncode != 0:
        raise SystemExit(f"{cc} -E failed for {variant}:\n{out.stderr}")
    rows = []
    for line in out.stdout.splitlines():
        m = re.match(r'^SBHOOK "(.*)" :: (.*)$', line)
        if m:
            value = " ".join(m.group(2).split())
            rows.append((m.group(1), "(not defined)" if value == m.group(1) else value))
    return rows


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        raise SystemExit("usage: make hooks V=<variant>   (python3 -m harness.driver.hooks V)")
    rows = resolve(argv[0], os.environ.get("CC", "cc"))
    width = max(len(h) for h, _ in rows)
    print(f"variant {argv[0]}: each hook of common/policy.h as it resolves")
    for hook, value in rows:
        print(f"  {hook:<{width}}  ->  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
