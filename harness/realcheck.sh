#!/bin/sh
# harness/realcheck.sh -- check the simulator's predictions on a machine with more cores
# than ours, in one go: about 5-8 minutes on 16 cores.
#
#   sh harness/realcheck.sh OUT [WORKERS]        WORKERS: default 1,2,4,8,16
#
# On the bigger machine, from a source tree (built here or there):
#   1. `make all sim` (incremental; skipped with SB_NO_BUILD=1 when the build was carried
#      over from a machine with the same OS and libraries)
#   2. calibrate that machine: OUT/<name>.json, the model the simulator predicts it with
#      (SB_MODEL_NAME, default "bigbox"; its topology from hwloc)
#   3. the real sweep of imbalance and uts at WORKERS (capped at the usable CPUs): every
#      variant, 3 repetitions, into OUT/run (no plots: they are drawn with the rest)
# It writes OUT/realcheck.log (each stage's start and end) and nothing outside OUT and
# the build folders.  Then, on any machine (the simulation is deterministic and needs no
# cores; it takes minutes):
#   python3 -m harness.sim simulate --machine OUT/<name>.json --like OUT/run --reps 3 --jobs 2
#   ./run.py validate --real OUT/run --sim results/sim-<name>-<date>
# and publish the pair as results/ (./run.py publish) beside the validation on this VM.
set -eu
out=${1:?usage: sh harness/realcheck.sh OUT [WORKERS]}
workers=${2:-1,2,4,8,16}
name=${SB_MODEL_NAME:-bigbox}
mkdir -p "$out"
out=$(cd "$out" && pwd) # OUT is relative to where it was called from
cd "$(dirname "$0")/.."
if [ -e "$out/run" ] && [ -n "$(ls -A "$out/run")" ]; then
    echo "realcheck: $out/run exists and is not empty: give a fresh OUT" >&2
    exit 2
fi
log="$out/realcheck.log"
: >"$log"
stage() {
    echo "realcheck: $(date -u +%H:%M:%S) $*" | tee -a "$log" >&2
}
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3

# the worker counts this machine can run (the usable CPUs, not the online ones)
cpus=$($py -c 'import os; print(len(os.sched_getaffinity(0)))')
keep=
for w in $(echo "$workers" | tr ',' ' '); do
    if [ "$w" -le "$cpus" ]; then keep="${keep:+$keep,}$w"; fi
done
[ -n "$keep" ] || { echo "realcheck: none of the worker counts $workers fits $cpus CPUs" >&2; exit 2; }
stage "on $(hostname), $cpus usable CPUs; workers $keep; output in $out"

if [ "${SB_NO_BUILD:-0}" != 1 ]; then
    stage "build: make all sim"
    make -s -j"$cpus" all sim >>"$log" 2>&1 || { stage "build failed (see $log)"; exit 1; }
fi
variants=$(make -s --no-print-directory list-variants | tr '\n' ',' | sed 's/,$//')

stage "calibrate: $out/$name.json"
$py -m harness.sim calibrate --name "$name" --out "$out" >>"$log" 2>&1 \
    || { stage "calibrate failed (see $log)"; exit 1; }

stage "real sweep: imbalance, uts; variants $variants"
./run.py run --workloads imbalance,uts --workers "$keep" --variants "$variants" \
    --repetitions 3 --out "$out/run" --no-plot --no-build >>"$log" 2>&1 \
    || { stage "the sweep failed (see $log and $out/run/status.json)"; exit 1; }
stage "done: $out/$name.json and $out/run"
