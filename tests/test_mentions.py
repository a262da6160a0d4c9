"""Where a text names a tool (`optimizer.text.mentions`): identifiers wherever they stand alone, plain words only where
the text uses them as a name; and the same text with the names replaced."""

from __future__ import annotations

import pytest

from optimizer.text.mentions import mentioned, renamed

NAMES = ["pay", "pay_fines", "list_loans", "getUser", "files.read"]


@pytest.mark.parametrize(("text", "expected"), [
    ("Not for paying; use pay_fines instead.", ["pay_fines"]),
    ("(list_loans shows them); getUser gives the profile", ["list_loans", "getUser"]),
    ("Reads a file, like files.read.", ["files.read"]),
    ("To pay a fine, see the desk.", []),  # a plain word in prose is English, not a tool
    ("Not for loans; use pay instead. Call pay. See `pay`. The pay tool.", ["pay"]),
    ("pay_fines_v2, a/pay_fines, pay_fines.x, x_list_loans and @getUser name nothing here.", []),
])
def test_what_counts_as_a_mention(text: str, expected: list[str]) -> None:
    assert mentioned(text, NAMES) == expected


def test_renamed_replaces_mentions_only_and_marks_a_plain_new_name_when_asked() -> None:
    text = "Use pay_fines instead; pay_fines_v2 stays. To pay, list_loans first."
    assert renamed(text, {"pay_fines": "settle", "list_loans": "loans_x"}) == (
        "Use settle instead; pay_fines_v2 stays. To pay, loans_x first.")
    assert renamed(text, {"pay_fines": "pay"}, mark_plain=True) == (
        "Use `pay` instead; pay_fines_v2 stays. To pay, list_loans first.")
    assert renamed("See `pay_fines`.", {"pay_fines": "pay"}, mark_plain=True) == "See `pay`."
    assert renamed(text, {}) == text
