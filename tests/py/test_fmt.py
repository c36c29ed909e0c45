"""Text for people: durations, times with units, CSV numbers, tables."""
import math

from harness.driver import fmt


def test_durations():
    assert [fmt.fmt_duration(s) for s in (0, 12, 59.6, 3725, -3)] == \
        ["0:00", "0:12", "1:00", "1:02:05", "0:00"]


def test_seconds_take_the_largest_unit_above_one():
    assert fmt.fmt_seconds(0.0123) == "12.3 ms"
    assert fmt.fmt_seconds(2.5) == "2.5 s"
    assert fmt.fmt_seconds(4.2e-7) == "420 ns"
    assert fmt.fmt_seconds(1e-12) == "0.001 ns"
    assert fmt.fmt_seconds(None) == fmt.fmt_seconds(math.nan) == "-"


def test_csv_numbers():
    assert fmt.fmt_num(None) == ""
    assert fmt.fmt_num(1 / 3) == "0.333333333333"
    assert fmt.fmt_num(math.inf) == "inf" and fmt.fmt_num(7) == "7"


def test_tables():
    assert fmt.format_table(["a", "bb"], [[1, "x|y"]], markdown=True) == \
        "| a | bb |\n|---|---|\n| 1 | x\\|y |\n"
    assert fmt.format_table(["name", "n"], [["fib", 10], ["x", 2]]) == \
        "name  n\nfib   10\nx     2\n"
    assert fmt.format_table(["a"], []) == "a\n"
