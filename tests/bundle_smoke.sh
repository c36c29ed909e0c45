#!/bin/sh
# tests/bundle_smoke.sh ARCHIVE -- `make bundle`'s archive works away from the source tree:
# unpacked into a fresh temporary directory, with LD_LIBRARY_PATH unset and no make on
# PATH, its run.py sweeps one variant on one workload at 1 and 2 workers (2 repetitions)
# and writes the raw results.  Part of .ci/run (`make bundle-smoke`).
set -eu
archive=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar xf "$archive" -C "$tmp"
cd "$tmp/schedbench-bundle"
test -f BUNDLE
# PATH without make: a bundle must not build (a tool dir holding only python3 and sh)
mkdir "$tmp/bin"
for tool in python3 sh gnuplot; do
    p=$(command -v "$tool" 2>/dev/null) && ln -s "$p" "$tmp/bin/$tool"
done
variant=$(/usr/bin/python3 -c 'import json; print(json.load(open("BUNDLE"))["variants"][0])')
env -u LD_LIBRARY_PATH PATH="$tmp/bin" /usr/bin/python3 run.py run --variants "$variant" \
    --workloads fib --workers 1,2 --repetitions 2 --min-time 0.01 --quiet --out results/smoke
n=$(find results/smoke/raw -name '*.json' | wc -l)
if [ "$n" -ne 2 ]; then
    echo "bundle_smoke: expected 2 raw files, found $n" >&2
    exit 1
fi
echo "bundle_smoke: ok ($variant, fib, workers 1,2 from $(basename "$archive"))"
