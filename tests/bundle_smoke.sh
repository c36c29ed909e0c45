#!/bin/sh
# tests/bundle_smoke.sh ARCHIVE -- `make bundle`'s archive works away from the source tree:
# unpacked into a fresh temporary directory, with LD_LIBRARY_PATH unset and no make on
# PATH, its run.py sweeps one variant on one workload at 1 and 2 workers (2 repetitions)
# and writes the raw results.  Part of .ci/run (`make bundle-smoke`).
#
# SB_EMU (the aarch64 flavour, `make bundle-smoke ARCH=aarch64`): the benches are foreign
# to this host and run.py would start them directly, so instead each variant's bench of
# the unpacked bundle runs its smoke sizes under the emulator from there (finding its
# libraries through its $ORIGIN rpath), and its JSON must name the variant.  That shows
# the archive is complete and runs under qemu-user; not that it runs on aarch64 hardware.
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
if [ -n "${SB_EMU:-}" ]; then
    for v in $(/usr/bin/python3 -c 'import json; print(" ".join(json.load(open("BUNDLE"))["variants"]))'); do
        # shellcheck disable=SC2086 # SB_EMU is a command and its flags
        env -u LD_LIBRARY_PATH $SB_EMU "build/$v/bench" --smoke --workers 2 --benchmark_min_time=0.001 \
            --benchmark_filter='^fib/' --benchmark_out="$tmp/$v.json" --benchmark_out_format=json >/dev/null
        grep -q "\"variant\": \"$v\"" "$tmp/$v.json" || { echo "bundle_smoke: $v: no run record" >&2; exit 1; }
    done
    echo "bundle_smoke: ok (every variant's bench under ${SB_EMU%% *}, from $(basename "$archive"))"
    exit 0
fi
variant=$(/usr/bin/python3 -c 'import json; print(json.load(open("BUNDLE"))["variants"][0])')
env -u LD_LIBRARY_PATH PATH="$tmp/bin" /usr/bin/python3 run.py run --variants "$variant" \
    --workloads fib --workers 1,2 --repetitions 2 --min-time 0.01 --quiet --out results/smoke
n=$(find results/smoke/raw -name '*.json' | wc -l)
if [ "$n" -ne 2 ]; then
    echo "bundle_smoke: expected 2 raw files, found $n" >&2
    exit 1
fi
echo "bundle_smoke: ok ($variant, fib, workers 1,2 from $(basename "$archive"))"
