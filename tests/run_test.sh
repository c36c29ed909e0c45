#!/bin/sh
# run_test.sh BINARY [ARGS...] -- run one test binary for tests/rules.mk.
#
# With SANLOG_DIR set (SANITIZE= builds), ThreadSanitizer and AddressSanitizer write their
# reports to $SANLOG_DIR/<name>.<pid> (log_path), under the build directory, never into
# the source tree; <name> is the binary's path below the build directory with / as -
# (chaselev-test_sched).  Every report it wrote is printed after it ends (a failing
# binary's, and also one a passing binary left, such as a LeakSanitizer report at a test
# process's exit), so the CI output still shows them.  TSAN_OPTIONS / ASAN_OPTIONS
# already in the environment come after log_path, so a log_path of the caller's still
# wins.  With EMU set (the aarch64 cross build: qemu-aarch64 and its flags), the binary
# runs under it.  Exit status: the binary's.
set -u
bin=$1
shift
dir=${SANLOG_DIR:-}
if [ -n "$dir" ]; then
    name=$(printf '%s\n' "$bin" | sed -e 's|^.*build[^/]*/||' -e 's|/tests/|-|' -e 's|/|-|g')
    mkdir -p "$dir"
    rm -f "$dir/$name".*
    TSAN_OPTIONS="log_path=$dir/$name ${TSAN_OPTIONS:-}"
    ASAN_OPTIONS="log_path=$dir/$name ${ASAN_OPTIONS:-}"
    export TSAN_OPTIONS ASAN_OPTIONS
fi
# shellcheck disable=SC2086 # EMU is a command and its flags
${EMU:-} "$bin" "$@"
st=$?
if [ -n "$dir" ]; then
    for f in "$dir/$name".*; do
        [ -f "$f" ] || continue
        echo "== sanitizer report $f"
        cat "$f"
    done
fi
exit "$st"
