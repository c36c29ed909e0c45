#!/bin/sh
# selftest.sh BINARY [tsan] -- run check_compat's selftest binary and check that every
# test ended as its name says (see selftest.c), with the right message, and that the
# closing lines count them right.  "tsan": the binary is a TSan build, so the
# deliberate data race must be there and must fail.  Exit status 0 iff all as expected.
# SB_EMU, when set, is the emulator command that runs the binary (qemu-aarch64 -L /).
set -u
bin=$1
tsan=${2:-}
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# Only Check's per-test log lines and the runner's own lines: no summary repeats.
# shellcheck disable=SC2086 # SB_EMU is a command and its arguments
CK_VERBOSITY=silent ${SB_EMU:-} "$bin" >"$out" 2>"$err"
rc=$?

bad=0 npass=0 nfail=0 nskip=0
complain() { echo "check_compat selftest: $*"; bad=1; }

# expect NAME LETTERS COUNT [TEXT]: COUNT log lines for test NAME whose result letter
# (P passed, F failure, E error) is one of LETTERS, each containing TEXT.
expect() {
    n=$(grep -cE "^[^:]+:[0-9]+:[$2]:[a-z_0-9]+:$1:[0-9]+:" "$out")
    [ "$n" -eq "$3" ] || complain "$1: $n results in [$2], expected $3"
    if [ $# -ge 4 ]; then
        m=$(grep -E "^[^:]+:[0-9]+:[$2]:[a-z_0-9]+:$1:" "$out" | grep -cF -- "$4")
        [ "$m" -eq "$3" ] || complain "$1: message lacks \"$4\""
    fi
    case $2 in P) npass=$((npass + $3)) ;; *) nfail=$((nfail + $3)) ;; esac
}
# skipped NAME TEXT: a SKIP line with TEXT, and the test not counted as passed.
skipped() {
    grep -qF "SKIP selftest/$1: $2" "$out" "$err" || complain "$1: no SKIP line with \"$2\""
    nskip=$((nskip + 1))
}

expect pass_assertions P 1
expect fail_assert F 1 "custom message 3"
expect fail_assert_eq F 1 "one == 2 is false: left 1, right 2"
expect fail_assert_str_eq F 1 '"abc" == "abd" is false'
expect fail_assert_arr_eq F 1 "(x)[0..2] == (y)[0..2] is false"
expect fail_expect F 1 "2 expectations failed; first: first"
expect pass_expect_is_not_fatal P 1
expect fail_assert_in_thread F 1 "from a thread"
expect fail_expect_in_thread F 1 "1 expectation failed; first: from a thread"
expect pass_signal P 1
expect fail_signal_missing FE 1
expect fail_unexpected_signal FE 1 "signal 11"
expect pass_exit_code P 1
expect fail_exit_code_missing FE 1 "return value 0"
expect fail_early_exit FE 1 "return value 2"
expect fail_timeout FE 1 "timeout"
expect skip_by_call P 1
expect skip_by_call_in_a_signal_test P 1
expect skip_disabled PFE 0
expect pass_suite_init_then_test_init P 1
expect pass_fini_runs_last P 1
expect pass_two_fail_one P 2
expect pass_two_fail_one F 1 "parameter 11 fails on purpose"
expect pass_stderr_captured P 1
expect fail_stderr_differs F 1 'left "hello\n", right "bye\n"'
if [ "$tsan" = tsan ]; then
    expect fail_data_race FE 1 "return value 66"
    grep -q "WARNING: ThreadSanitizer: data race" "$err" || complain "no race report on stderr"
fi
skipped skip_by_call "skipped on purpose (1)"
skipped skip_by_call_in_a_signal_test "skipped on purpose"
skipped skip_disabled "disabled"
# Skips that Check saw pass are not passes.
npass=$((npass - 2))

grep -qF "[info] a log line from pass_assertions" "$err" || complain "cr_log_info line missing"
want_skip="$nskip skipped"
want_last="$npass passed, $nfail failed"
[ "$(tail -n 2 "$out" | head -n 1)" = "$want_skip" ] || complain "expected \"$want_skip\""
[ "$(tail -n 1 "$out")" = "$want_last" ] || complain "last line not \"$want_last\""
[ "$rc" -eq 1 ] || complain "exit status $rc, expected 1 (there are failures)"

if [ $bad -ne 0 ]; then
    echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"
    exit 1
fi
# (worded so that no CI parser mistakes the deliberate failures for real ones)
echo "check_compat selftest: all $((npass + nfail + nskip)) outcomes as expected" \
     "(of them $nfail fail and $nskip skip on purpose)"
