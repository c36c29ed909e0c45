"""The parsers of the command line's lists and the default worker counts."""
import pytest

from harness.driver import config


def test_name_lists_keep_order_and_drop_repeats():
    assert config.parse_name_list(" b, a,,b ,c", "--variants") == ["b", "a", "c"]
    with pytest.raises(config.UsageError, match="--variants needs at least one name"):
        config.parse_name_list(" , ", "--variants")


@pytest.mark.parametrize("text, counts", [("2", [2]), ("1-4", [1, 2, 3, 4]),
                                          ("8,1-2,2", [1, 2, 8])])
def test_worker_lists(text, counts):
    assert config.parse_workers(text) == counts


@pytest.mark.parametrize("text", ["0", "3-1", "two", "1-", "-1", ""])
def test_bad_worker_lists(text):
    with pytest.raises(config.UsageError, match="--workers"):
        config.parse_workers(text)


def test_default_workers():
    assert config.default_workers(1) == [1]
    assert config.default_workers(8) == list(range(1, 9))
    assert config.default_workers(12) == [1, 2, 4, 8, 12]
    assert config.default_workers(16) == [1, 2, 4, 8, 16]


def test_unknown_names_are_listed():
    config.check_unknown(["a"], {"a", "b"}, "variant")
    with pytest.raises(config.UsageError, match=r"unknown variant 'c' \(known: a, b\)"):
        config.check_unknown(["a", "c"], {"b", "a"}, "variant")
    with pytest.raises(config.UsageError, match=r"'3' \(known: 1, 2\)"):
        config.check_unknown([3], {2, 1}, "worker count")
