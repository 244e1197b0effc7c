"""Messages read as sentences: lists joined with "and", each item once."""

from __future__ import annotations

import pytest

from meshlint.wording import counted, listing


@pytest.mark.parametrize(
    "items, text",
    [([], ""), (["'a'"], "'a'"), (["'a'", "'b'"], "'a' and 'b'"), (["'a'", "'b'", "'c'"], "'a', 'b' and 'c'"), (["x", "y", "x"], "x and y")],
)
def test_listing(items, text):
    assert listing(items) == text


def test_counted():
    assert (counted(1, "container"), counted(2, "container"), counted(2, "proxy", "proxies")) == ("1 container", "2 containers", "2 proxies")
