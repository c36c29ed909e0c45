#!/bin/sh
# selftest.sh BINARY [tsan] -- run the framework's selftest binary (selftest.c) and check
# that every test ended as its name says, with the right line, and that the closing
# line counts them right; then that --filter picks tests, SBTEST_TIMEOUT_FACTOR scales a
# timeout, and a run without failures exits 0.  "tsan": the binary is a TSan build, so
# the deliberate data race must be there and must fail.  SB_EMU, when set, is the
# emulator command that runs the binary (qemu-aarch64 -L /).  Exit status 0 iff all is
# as expected.
set -u
bin=$1
tsan=${2:-}
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
bad=0
complain() { echo "sbtest selftest: $*"; bad=1; }
# has FILE TEXT: a line of FILE contains TEXT
has() { grep -qF -- "$2" "$1" || complain "no line with: $2"; }

# shellcheck disable=SC2086 # SB_EMU is a command and its arguments
${SB_EMU:-} "$bin" >"$out" 2>"$err"
rc=$?
has "$out" "PASS selftest/pass_assertions ("
has "$err" "[info] a log line from pass_assertions"
has "$out" "FAIL selftest/fail_assert: exit status 1 ("
has "$err" "selftest.c:41: selftest/fail_assert: assertion failed: 0 -- custom message 3"
has "$err" "selftest/fail_assert_eq: assertion failed: one == 2: left 1, right 2"
has "$err" 'selftest/fail_assert_str_eq: assertion failed: "abc" == "abd": left "abc", right "abd"'
has "$err" "selftest/fail_assert_arr_eq: assertion failed: (x)[0..2] == (y)[0..2]"
has "$err" "selftest/fail_expect: expectation failed: 1 == 2: left 1, right 2 -- first"
has "$err" "selftest/fail_expect: expectation failed: 0 -- second"
has "$err" "[info] after the expectations"
has "$out" "FAIL selftest/fail_expect: exit status 1 ("
has "$err" "selftest/fail_assert_in_thread: assertion failed: cr_assert_fail -- from a thread"
has "$out" "FAIL selftest/fail_assert_in_thread: exit status 1 ("
has "$out" "PASS selftest/pass_signal ("
has "$out" "FAIL selftest/fail_signal_missing: exit status 0, expected signal 11"
has "$out" "FAIL selftest/fail_unexpected_signal: killed by signal 11"
has "$out" "PASS selftest/pass_exit_code ("
has "$out" "FAIL selftest/fail_early_exit: exit status 2 ("
has "$out" "FAIL selftest/fail_timeout: timed out after"
has "$out" "SKIP selftest/skip_by_call: skipped on purpose (1)"
has "$out" "SKIP selftest/skip_in_a_signal_test: skipped on purpose"
has "$out" "PASS fixtures/pass_suite_init_then_test_init ("
has "$out" "PASS fixtures/pass_fini_runs_last ("
has "$out" "PASS params/pass_two_fail_one[0] ("
has "$err" "params/pass_two_fail_one[1]: assertion failed: *v != 11: left 11, right 11 -- parameter 11 fails on purpose"
has "$out" "FAIL params/pass_two_fail_one[1]: exit status 1 ("
has "$out" "PASS params/pass_two_fail_one[2] ("
has "$out" "PASS redirect/pass_stderr_captured ("
has "$err" 'redirect/fail_stderr_differs: assertion failed: stderr == "bye\n": left "hello\n", right "bye\n"'
total=22 passed=8 failed=12
if [ "$tsan" = tsan ]; then
    has "$out" "FAIL tsan/fail_data_race: exit status 66 (a ThreadSanitizer report)"
    has "$err" "WARNING: ThreadSanitizer: data race"
    total=23 failed=13
fi
# every test has exactly one result line, and the last line counts them
[ "$(grep -cE '^(PASS|FAIL|SKIP) ' "$out")" -eq "$total" ] || complain "not $total result lines"
has "$out" "$bin: $total tests: $passed passed, $failed failed, 2 skipped"
[ "$rc" -eq 1 ] || complain "exit status $rc, expected 1 (there are failures)"

# --filter runs one test; the factor scales its 0.5 s
# shellcheck disable=SC2086
SBTEST_TIMEOUT_FACTOR=4 ${SB_EMU:-} "$bin" --filter 'selftest/fail_t*' >>"$out" 2>>"$err"
has "$out" "FAIL selftest/fail_timeout: timed out after 2.0 s"
has "$out" "$bin: 1 tests: 0 passed, 1 failed, 0 skipped"
# and a run where all pass exits 0
# shellcheck disable=SC2086
${SB_EMU:-} "$bin" --filter 'fixtures/*' >>"$out" 2>>"$err"
rc=$?
has "$out" "$bin: 2 tests: 2 passed, 0 failed, 0 skipped"
[ "$rc" -eq 0 ] || complain "exit status $rc when all passed, expected 0"

if [ $bad -ne 0 ]; then
    echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"
    exit 1
fi
# (worded so that no CI parser mistakes the deliberate failures for real ones)
echo "sbtest selftest: all $total outcomes as expected (of them $failed fail and 2 skip on purpose)"
